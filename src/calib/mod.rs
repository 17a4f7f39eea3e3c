//! Table geometry: the versioned, validated calibration file of one table camera
//! (image ↔ table homography, lens, named zones in table millimetres), and the
//! standard layout of each ruleset's table.
//!
//! Table coordinates: millimetres on the felt, origin at the middle of the
//! dealer's straight edge, +y towards the players, +x to the dealer's right.
//! Seat 1 ("first base", GAMES.md) is at the dealer's left (−x); seats follow
//! clockwise seen from above.
pub mod build;
pub mod camera;
pub mod cli;
pub mod geometry;
pub mod layout;
pub mod overlay;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use camera::{CameraPose, LensDistortion};
pub use geometry::{Homography, Point, Polygon};

use crate::rules::{BetKind, Ruleset, RulesetId};

/// The calibration file format version this build reads and writes.
pub const CALIBRATION_VERSION: u32 = 1;

/// Errors of calibration files.
#[derive(Debug, thiserror::Error)]
pub enum CalibError {
    /// The file cannot be read.
    #[error("{path}: cannot read the calibration file: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not valid JSON or not the calibration schema.
    #[error("{path}: not a valid calibration file: {message} (see calibration/README.md for the format)")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A version this build does not read.
    #[error("{path}: calibration version {found}, but this build reads version {expected}; re-export it with `tablecam calibrate` of a matching version")]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version expected.
        expected: u32,
    },
    /// A field with an invalid value.
    #[error("{path}: field `{field}`: {message}")]
    Invalid {
        /// The file (or `<memory>`).
        path: PathBuf,
        /// The JSON path of the field, e.g. `zones[3].polygon_mm`.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// What a zone is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum ZoneKind {
    /// Where a seat's cards are dealt.
    Hand {
        /// The seat (1 = dealer's left).
        seat: u8,
    },
    /// The dealer's cards.
    DealerHand,
    /// The community-card spot (fortune3cp-2025 Art. 11(3)).
    Community,
    /// A printed bet spot.
    BetSpot {
        /// The seat it belongs to.
        seat: u8,
        /// The bet.
        bet: BetKind,
    },
    /// The discard rack.
    Discard,
    /// The dealing shoe or shuffler outlet.
    Shoe,
}

/// A named zone of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    /// A name for people ("seat 3 ante").
    pub name: String,
    /// What it is, e.g. `{"kind": "bet_spot", "seat": 3, "bet": "ante"}`.
    #[serde(rename = "role")]
    pub kind: ZoneKind,
    /// Its outline in table millimetres.
    pub polygon_mm: Polygon,
}

/// A calibration file (JSON) as written on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Format version ([`CALIBRATION_VERSION`]).
    pub version: u32,
    /// The table.
    pub table_id: String,
    /// The camera watching it.
    pub camera_id: String,
    /// The ruleset played at the table.
    pub ruleset: RulesetId,
    /// Image width in pixels.
    pub image_width: u32,
    /// Image height in pixels.
    pub image_height: u32,
    /// Table millimetres → undistorted image pixels.
    pub table_to_image: Homography,
    /// The lens, when known (otherwise the image is taken as undistorted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lens: Option<LensDistortion>,
    /// Card size in millimetres, width × height (poker 63.5 × 88.9; bridge 57 × 89).
    pub card_size_mm: [f64; 2],
    /// The pose the camera was simulated from (simulator tables only; informative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_pose: Option<CameraPose>,
    /// Zones.
    pub zones: Vec<Zone>,
}

/// A calibration that passed validation, with its derived transforms.
#[derive(Debug, Clone)]
pub struct TableGeometry {
    /// The file's contents.
    pub calibration: Calibration,
    image_to_table: Homography,
}

impl Calibration {
    /// Reads and validates a calibration file.
    pub fn load(path: &Path) -> Result<TableGeometry, CalibError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| CalibError::Io { path: path.to_path_buf(), source })?;
        Calibration::parse(&text, path)
    }

    /// Parses and validates calibration JSON; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<TableGeometry, CalibError> {
        // Read the version first so that an old or new file gets the version
        // error rather than a confusing field error.
        #[derive(Deserialize)]
        struct VersionOnly {
            version: Option<u32>,
        }
        let parse_err = |e: serde_json::Error| CalibError::Parse { path: path.to_path_buf(), message: e.to_string() };
        let v: VersionOnly = serde_json::from_str(text).map_err(parse_err)?;
        match v.version {
            Some(CALIBRATION_VERSION) => {}
            Some(found) => {
                return Err(CalibError::Version { path: path.to_path_buf(), found, expected: CALIBRATION_VERSION })
            }
            None => {
                return Err(CalibError::Invalid {
                    path: path.to_path_buf(),
                    field: "version".into(),
                    message: format!("missing; add \"version\": {CALIBRATION_VERSION}"),
                })
            }
        }
        let c: Calibration = serde_json::from_str(text).map_err(parse_err)?;
        c.validate(path)
    }

    /// Writes the calibration as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("calibration serialises")
    }

    /// Checks the calibration and derives its transforms.
    pub fn validate(self, path: &Path) -> Result<TableGeometry, CalibError> {
        let invalid = |field: String, message: String| CalibError::Invalid { path: path.to_path_buf(), field, message };
        if self.table_id.trim().is_empty() {
            return Err(invalid("table_id".into(), "empty; name the table (e.g. \"T12\")".into()));
        }
        if self.image_width == 0 || self.image_height == 0 {
            return Err(invalid("image_width".into(), "image size must be positive".into()));
        }
        let [w, h] = self.card_size_mm;
        if !(40.0..=120.0).contains(&w) || !(60.0..=150.0).contains(&h) || w >= h {
            return Err(invalid(
                "card_size_mm".into(),
                format!("{w} × {h} mm is not a playing card (width < height, e.g. [63.5, 88.9])"),
            ));
        }
        let image_to_table = match (self.table_to_image.is_finite(), self.table_to_image.inverse()) {
            (true, Some(inv)) => inv,
            _ => {
                return Err(invalid(
                    "table_to_image".into(),
                    "the homography is not invertible; recompute it from four or more marked table points (`tablecam calibrate`)".into(),
                ))
            }
        };
        if let Some(l) = &self.lens {
            if !(l.fx > 0.0 && l.fy > 0.0 && l.fx.is_finite() && l.fy.is_finite()) {
                return Err(invalid("lens.fx".into(), "focal lengths must be positive pixels".into()));
            }
        }
        let rs = Ruleset::new(self.ruleset);
        for (i, z) in self.zones.iter().enumerate() {
            let field = format!("zones[{i}].polygon_mm");
            if z.polygon_mm.0.len() < 3 {
                return Err(invalid(field, format!("zone \"{}\" needs at least 3 vertices", z.name)));
            }
            if z.polygon_mm.signed_area().abs() < 1.0 {
                return Err(invalid(field, format!("zone \"{}\" has no area", z.name)));
            }
            if z.polygon_mm.self_intersects() {
                return Err(invalid(
                    field,
                    format!("zone \"{}\" crosses itself; list its vertices in order around it", z.name),
                ));
            }
            for p in &z.polygon_mm.0 {
                if self.table_to_image.apply(*p).is_none() {
                    return Err(invalid(
                        field,
                        format!("zone \"{}\" is behind the camera under this homography", z.name),
                    ));
                }
            }
            let seat = match z.kind {
                ZoneKind::Hand { seat } | ZoneKind::BetSpot { seat, .. } => Some(seat),
                _ => None,
            };
            if let Some(seat) = seat {
                let max = rs.player_hands.1 + u8::from(rs.id == RulesetId::Sangong1996);
                if seat == 0 || seat > max {
                    return Err(invalid(
                        format!("zones[{i}].seat"),
                        format!("seat {seat} does not exist at a {} table (1..={max})", rs.id),
                    ));
                }
            }
            if let ZoneKind::BetSpot { bet, .. } = z.kind {
                if !rs.bet_spots.iter().any(|(b, _)| *b == bet) {
                    return Err(invalid(format!("zones[{i}].bet"), format!("{} has no `{bet}` bet spot", rs.id)));
                }
            }
            for (j, other) in self.zones.iter().enumerate().take(i) {
                if z.polygon_mm.overlaps(&other.polygon_mm) {
                    return Err(invalid(
                        field,
                        format!("zone \"{}\" overlaps zone {j} \"{}\"; zones must not overlap", z.name, other.name),
                    ));
                }
            }
        }
        for (i, z) in self.zones.iter().enumerate() {
            if let ZoneKind::BetSpot { seat, .. } = z.kind {
                if !self.zones.iter().any(|o| o.kind == ZoneKind::Hand { seat }) {
                    return Err(invalid(format!("zones[{i}]"), format!("seat {seat} has a bet spot but no hand zone; add a zone {{\"kind\": \"hand\", \"seat\": {seat}}}")));
                }
            }
        }
        let needs_dealer = rs.id != RulesetId::Sangong1996;
        if needs_dealer && !self.zones.iter().any(|z| z.kind == ZoneKind::DealerHand) {
            return Err(invalid(
                "zones".into(),
                "no dealer_hand zone; add one where the dealer's cards are placed".into(),
            ));
        }
        if rs.community_cards > 0 && !self.zones.iter().any(|z| z.kind == ZoneKind::Community) {
            return Err(invalid(
                "zones".into(),
                format!("{} deals community cards but there is no community zone", rs.id),
            ));
        }
        Ok(TableGeometry { calibration: self, image_to_table })
    }
}

impl TableGeometry {
    /// Table millimetres → image pixels (lens distortion applied when known).
    pub fn table_to_image(&self, p: Point) -> Option<Point> {
        let u = self.calibration.table_to_image.apply(p)?;
        Some(match &self.calibration.lens {
            Some(l) => l.distort(u),
            None => u,
        })
    }

    /// Image pixels → table millimetres.
    pub fn image_to_table(&self, p: Point) -> Option<Point> {
        let u = match &self.calibration.lens {
            Some(l) => l.undistort(p),
            None => p,
        };
        self.image_to_table.apply(u)
    }

    /// The zone containing a table point, if any.
    pub fn zone_at(&self, p: Point) -> Option<&Zone> {
        self.calibration.zones.iter().find(|z| z.polygon_mm.contains(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(ruleset: RulesetId) -> Calibration {
        layout::simulated_calibration(ruleset, "T1", 1920, 1080, &layout::default_pose(), None)
    }

    #[test]
    fn every_standard_layout_validates_and_round_trips_within_half_a_pixel() {
        for id in RulesetId::ALL {
            let c = example(id);
            let json = c.to_json();
            let g = Calibration::parse(&json, Path::new("mem.json")).unwrap_or_else(|e| panic!("{id}: {e}"));
            for z in &g.calibration.zones {
                for &p in &z.polygon_mm.0 {
                    let img = g.table_to_image(p).unwrap();
                    let back = g.table_to_image(g.image_to_table(img).unwrap()).unwrap();
                    assert!(img.dist(back) < 0.5, "{id} {}: {img:?} vs {back:?}", z.name);
                }
            }
        }
    }

    fn err(c: Calibration) -> String {
        match c.validate(Path::new("t.json")) {
            Ok(_) => panic!("an invalid calibration validated"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn broken_files_name_the_field() {
        let path = Path::new("t.json");
        let mut c = example(RulesetId::Fortune3cp2025);
        c.table_to_image = Homography([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]);
        let e = err(c);
        assert!(e.contains("table_to_image") && e.contains("not invertible"), "{e}");

        let mut c = example(RulesetId::Fortune3cp2025);
        let first = c.zones[0].polygon_mm.clone();
        c.zones[1].polygon_mm = first;
        let e = err(c);
        assert!(e.contains("zones[1].polygon_mm") && e.contains("overlaps"), "{e}");

        let mut c = example(RulesetId::Stud2004);
        c.zones.retain(|z| z.kind != ZoneKind::Hand { seat: 2 });
        let e = err(c);
        assert!(e.contains("seat 2 has a bet spot but no hand zone"), "{e}");

        let mut c = example(RulesetId::Qpoker2004);
        // A bow tie, asymmetric so that its signed area is not zero.
        c.zones[0].polygon_mm =
            Polygon(vec![Point::new(0.0, 0.0), Point::new(20.0, 10.0), Point::new(20.0, 0.0), Point::new(0.0, 14.0)]);
        let e = err(c);
        assert!(e.contains("crosses itself"), "{e}");

        let json = example(RulesetId::Qpoker2004).to_json().replace("\"version\": 1", "\"version\": 7");
        let e = match Calibration::parse(&json, path) {
            Ok(_) => panic!("parsed"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("version 7"), "{e}");
        let json = example(RulesetId::Qpoker2004).to_json().replace("qpoker-2004", "poker-1999");
        let e = match Calibration::parse(&json, path) {
            Ok(_) => panic!("parsed"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("poker-1999"), "{e}");
    }
}
