//! Building a calibration from marked table points (and printed ArUco markers),
//! and measuring how well a calibration fits them.
//!
//! A points file is JSON: a list of correspondences between a table point in
//! millimetres (table frame of [`crate::calib`]) and where it is in the frame,
//! either marked by hand (`image_px`) or found as the centre of a printed
//! ArUco marker of OpenCV's `DICT_4X4_50` (`aruco_id`):
//!
//! ```json
//! [
//!   {"name": "dealer edge left", "table_mm": [-1000, 0], "image_px": [212.5, 640.0]},
//!   {"aruco_id": 3, "table_mm": [0, 900]}
//! ]
//! ```
use std::path::{Path, PathBuf};

use opencv::core::{Mat, Point2d, Point2f, Vector};
use opencv::prelude::*;
use opencv::{aruco, calib3d};
use serde::{Deserialize, Serialize};

use super::geometry::{Homography, Point};
use super::{layout, CalibError, Calibration, LensDistortion, TableGeometry, CALIBRATION_VERSION};
use crate::rules::RulesetId;

/// Reprojection error (px) above which `build` refuses a calibration by default.
pub const DEFAULT_MAX_ERROR_PX: f64 = 3.0;
/// RANSAC inlier threshold of `find_homography`, px.
pub const RANSAC_THRESHOLD_PX: f64 = 3.0;
/// The plausible size in pixels of a card's long side (88.9 mm) at the table's centre.
pub const PLAUSIBLE_CARD_PX: std::ops::RangeInclusive<f64> = 20.0..=600.0;
/// Points whose distance from the line through them all is below this fraction
/// of their extent along it are collinear.
const COLLINEAR_FRACTION: f64 = 0.03;

/// Errors of building or checking a calibration.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The points file cannot be read or parsed.
    #[error("{path}: {message}")]
    Points {
        /// The file.
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The correspondences cannot determine a homography.
    #[error("{0}")]
    Geometry(String),
    /// The fit is worse than allowed.
    #[error("reprojection error {max_px:.2} px (point \"{worst}\") exceeds {limit_px:.2} px; check the marked points (a swapped or mistyped point shows as the worst one) or raise --max-error-px")]
    TooLarge {
        /// Largest error, px.
        max_px: f64,
        /// The limit.
        limit_px: f64,
        /// The worst point.
        worst: String,
    },
    /// OpenCV failed.
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done.
        context: String,
        /// OpenCV's error.
        source: opencv::Error,
    },
    /// The result does not validate.
    #[error(transparent)]
    Calib(#[from] CalibError),
}

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> BuildError + '_ {
    move |source| BuildError::OpenCv { context: context.to_string(), source }
}

/// One entry of a points file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkedPoint {
    /// A name for people (reported with its error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where the point is on the table, mm.
    pub table_mm: [f64; 2],
    /// Where it is in the frame, pixels (as seen: lens distortion included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_px: Option<[f64; 2]>,
    /// Or: the id of a printed ArUco marker (DICT_4X4_50) centred on `table_mm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aruco_id: Option<i32>,
}

impl MarkedPoint {
    /// The name used in reports.
    pub fn label(&self, index: usize) -> String {
        match (&self.name, self.aruco_id) {
            (Some(n), _) => n.clone(),
            (None, Some(id)) => format!("aruco {id}"),
            (None, None) => format!("point {index}"),
        }
    }
}

/// Reads a points file.
pub fn read_points(path: &Path) -> Result<Vec<MarkedPoint>, BuildError> {
    let bad = |message: String| BuildError::Points { path: path.to_path_buf(), message };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    let points: Vec<MarkedPoint> = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "not a points file: {e} (expected [{{\"table_mm\": [x, y], \"image_px\": [u, v]}} or {{\"table_mm\": [x, y], \"aruco_id\": N}}, …]; see calibration/README.md)"
        ))
    })?;
    for (i, p) in points.iter().enumerate() {
        match (p.image_px, p.aruco_id) {
            (Some(_), Some(_)) => return Err(bad(format!("[{i}]: give either image_px or aruco_id, not both"))),
            (None, None) => {
                return Err(bad(format!("[{i}]: needs image_px (marked by hand) or aruco_id (printed marker)")))
            }
            _ => {}
        }
        if !p.table_mm.iter().chain(p.image_px.iter().flatten()).all(|v| v.is_finite()) {
            return Err(bad(format!("[{i}]: coordinates must be finite numbers")));
        }
    }
    Ok(points)
}

/// A table point and where it is in the image (as seen, lens included).
#[derive(Debug, Clone, PartialEq)]
pub struct Correspondence {
    /// Name for reports.
    pub name: String,
    /// Table, mm.
    pub table: Point,
    /// Image, px (distorted).
    pub image: Point,
}

/// ArUco markers of `DICT_4X4_50` found in a BGR or grey frame: id → centre
/// (the intersection of the marker's diagonals, exact under perspective).
pub fn detect_aruco(frame: &Mat) -> Result<Vec<(i32, Point)>, BuildError> {
    let dict = aruco::get_predefined_dictionary(aruco::PREDEFINED_DICTIONARY_NAME::DICT_4X4_50)
        .map_err(cv("loading the ArUco dictionary"))?;
    let mut corners: Vector<Vector<Point2f>> = Vector::new();
    let mut ids: Vector<i32> = Vector::new();
    aruco::detect_markers_def(frame, &dict, &mut corners, &mut ids).map_err(cv("detecting ArUco markers"))?;
    let mut out = Vec::new();
    for (id, c) in ids.iter().zip(corners.iter()) {
        let q: Vec<Point> = c.iter().map(|p| Point::new(p.x as f64, p.y as f64)).collect();
        if q.len() == 4 {
            out.push((id, diagonal_intersection(q[0], q[2], q[1], q[3])));
        }
    }
    Ok(out)
}

fn diagonal_intersection(a: Point, c: Point, b: Point, d: Point) -> Point {
    // a + t (c − a) = b + s (d − b)
    let (r, s) = ((c.x - a.x, c.y - a.y), (d.x - b.x, d.y - b.y));
    let den = r.0 * s.1 - r.1 * s.0;
    if den.abs() < 1e-12 {
        return Point::new((a.x + b.x + c.x + d.x) / 4.0, (a.y + b.y + c.y + d.y) / 4.0);
    }
    let t = ((b.x - a.x) * s.1 - (b.y - a.y) * s.0) / den;
    Point::new(a.x + t * r.0, a.y + t * r.1)
}

/// Resolves a points file against a frame: hand-marked points as given,
/// markers where they are detected (`frame` is needed only for markers).
pub fn correspondences(points: &[MarkedPoint], frame: Option<&Mat>) -> Result<Vec<Correspondence>, BuildError> {
    let markers = if points.iter().any(|p| p.aruco_id.is_some()) {
        let f =
            frame.ok_or_else(|| BuildError::Geometry("the points file names ArUco markers: give --frame".into()))?;
        detect_aruco(f)?
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let image = match (p.image_px, p.aruco_id) {
            (Some([u, v]), _) => Point::new(u, v),
            (None, Some(id)) => match markers.iter().find(|(m, _)| *m == id) {
                Some((_, c)) => *c,
                None => {
                    let seen: Vec<String> = markers.iter().map(|(m, _)| m.to_string()).collect();
                    return Err(BuildError::Geometry(format!(
                        "ArUco marker {id} (\"{}\") is not in the frame (found: {}); is it covered, too small (needs ~20 px a side) or from another dictionary than DICT_4X4_50?",
                        p.label(i),
                        if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
                    )));
                }
            },
            (None, None) => continue,
        };
        out.push(Correspondence { name: p.label(i), table: Point::new(p.table_mm[0], p.table_mm[1]), image });
    }
    Ok(out)
}

/// The table→undistorted-image homography from correspondences (OpenCV's
/// `find_homography` with RANSAC), undistorting the image points with `lens`.
pub fn fit_homography(corr: &[Correspondence], lens: Option<&LensDistortion>) -> Result<Homography, BuildError> {
    if corr.len() < 4 {
        return Err(BuildError::Geometry(format!(
            "{} point(s) given; a homography needs at least 4 table points, no three on a line (e.g. the dealer edge's ends and two points near the players' edge)",
            corr.len()
        )));
    }
    if let Some(spread) = collinear_spread(corr) {
        return Err(BuildError::Geometry(format!(
            "the table points lie on one line (within {spread:.1} mm); mark points spread over the table, e.g. two on the dealer edge and two near the players' edge"
        )));
    }
    let src: Vector<Point2d> = corr.iter().map(|c| Point2d::new(c.table.x, c.table.y)).collect();
    let dst: Vector<Point2d> = corr
        .iter()
        .map(|c| {
            let u = lens.map_or(c.image, |l| l.undistort(c.image));
            Point2d::new(u.x, u.y)
        })
        .collect();
    let mut mask = Mat::default();
    let h = calib3d::find_homography(&src, &dst, &mut mask, calib3d::RANSAC, RANSAC_THRESHOLD_PX)
        .map_err(cv("find_homography"))?;
    if h.empty() || h.rows() != 3 || h.cols() != 3 {
        return Err(BuildError::Geometry(
            "OpenCV found no homography for these points (are several of them swapped or on one line?)".into(),
        ));
    }
    let mut m = [[0.0; 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = *h.at_2d::<f64>(i as i32, j as i32).map_err(cv("reading the homography"))?;
        }
    }
    Ok(Homography(m).normalized())
}

/// The largest distance to the best-fit line when it is below
/// [`COLLINEAR_FRACTION`] of the points' extent (i.e. collinear), else `None`.
fn collinear_spread(corr: &[Correspondence]) -> Option<f64> {
    let n = corr.len() as f64;
    let (mx, my) = (corr.iter().map(|c| c.table.x).sum::<f64>() / n, corr.iter().map(|c| c.table.y).sum::<f64>() / n);
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for c in corr {
        let (dx, dy) = (c.table.x - mx, c.table.y - my);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    // Direction of the principal axis.
    let a = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    let (s, co) = a.sin_cos();
    let spread = corr.iter().map(|c| ((c.table.x - mx) * -s + (c.table.y - my) * co).abs()).fold(0.0, f64::max);
    let along: Vec<f64> = corr.iter().map(|c| (c.table.x - mx) * co + (c.table.y - my) * s).collect();
    let extent = along.iter().fold(f64::MIN, |a, &b| a.max(b)) - along.iter().fold(f64::MAX, |a, &b| a.min(b));
    (spread < COLLINEAR_FRACTION * extent).then_some(spread)
}

/// The error of one correspondence under a calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointError {
    /// Its name.
    pub name: String,
    /// Marked (or detected) pixel.
    pub image_px: [f64; 2],
    /// Where the calibration puts the table point.
    pub projected_px: [f64; 2],
    /// Distance, px.
    pub error_px: f64,
}

/// Reprojection errors of correspondences.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reprojection {
    /// Per point.
    pub points: Vec<PointError>,
    /// Root mean square, px.
    pub rms_px: f64,
    /// Largest, px.
    pub max_px: f64,
}

/// Reprojects the table points of `corr` with `geometry` (lens included).
pub fn reprojection(geometry: &TableGeometry, corr: &[Correspondence]) -> Reprojection {
    let points: Vec<PointError> = corr
        .iter()
        .map(|c| {
            let p = geometry.table_to_image(c.table).unwrap_or(Point::new(f64::INFINITY, f64::INFINITY));
            PointError {
                name: c.name.clone(),
                image_px: [c.image.x, c.image.y],
                projected_px: [p.x, p.y],
                error_px: p.dist(c.image),
            }
        })
        .collect();
    let n = points.len().max(1) as f64;
    let rms_px = (points.iter().map(|p| p.error_px * p.error_px).sum::<f64>() / n).sqrt();
    let max_px = points.iter().map(|p| p.error_px).fold(0.0, f64::max);
    Reprojection { points, rms_px, max_px }
}

/// Pixels spanned by a card's long side (`card_mm`) at table point `at`, along
/// the table's x and y: the camera's scale there.
pub fn card_span_px(geometry: &TableGeometry, at: Point, card_mm: f64) -> Option<[f64; 2]> {
    let c = geometry.table_to_image(at)?;
    let x = geometry.table_to_image(Point::new(at.x + card_mm, at.y))?;
    let y = geometry.table_to_image(Point::new(at.x, at.y + card_mm))?;
    Some([c.dist(x), c.dist(y)])
}

/// A warning when the scale at the image centre is implausible for a table
/// camera (a card's long side should span [`PLAUSIBLE_CARD_PX`]): usually
/// centimetres or inches typed for millimetres.
pub fn scale_warning(geometry: &TableGeometry) -> Option<String> {
    let cal = &geometry.calibration;
    let card = cal.card_size_mm[1];
    // The table point at the image centre: in view whatever the scale.
    let centre = Point::new(cal.image_width as f64 / 2.0, cal.image_height as f64 / 2.0);
    let Some(at) = geometry.image_to_table(centre) else {
        return Some("the image centre does not look at the table under this homography".into());
    };
    match card_span_px(geometry, at, card) {
        Some(s) if s.iter().all(|v| PLAUSIBLE_CARD_PX.contains(v)) => None,
        Some([sx, sy]) => Some(format!(
            "a {card} mm card at the image centre would span {sx:.0} × {sy:.0} px, outside the plausible {:.0}–{:.0} px: are table_mm in millimetres?",
            PLAUSIBLE_CARD_PX.start(),
            PLAUSIBLE_CARD_PX.end()
        )),
        None => Some("the table around the image centre is not in front of the camera under this homography".into()),
    }
}

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildSpec {
    /// Ruleset (its standard zones are filled in).
    pub ruleset: RulesetId,
    /// Table id.
    pub table_id: String,
    /// Camera id.
    pub camera_id: String,
    /// Image size.
    pub image_width: u32,
    /// Image size.
    pub image_height: u32,
    /// Known lens (image points are undistorted with it first).
    pub lens: Option<LensDistortion>,
    /// Card size, mm.
    pub card_size_mm: [f64; 2],
    /// Refuse above this reprojection error, px.
    pub max_error_px: f64,
}

/// A built calibration and how well it fits.
#[derive(Debug, Clone)]
pub struct Built {
    /// The validated calibration.
    pub geometry: TableGeometry,
    /// Its errors at the points.
    pub reprojection: Reprojection,
    /// A scale warning, if any.
    pub warning: Option<String>,
}

/// Builds, validates and measures a calibration from correspondences.
pub fn build(spec: &BuildSpec, corr: &[Correspondence]) -> Result<Built, BuildError> {
    let h = fit_homography(corr, spec.lens.as_ref())?;
    let cal = Calibration {
        version: CALIBRATION_VERSION,
        table_id: spec.table_id.clone(),
        camera_id: spec.camera_id.clone(),
        ruleset: spec.ruleset,
        image_width: spec.image_width,
        image_height: spec.image_height,
        table_to_image: h,
        lens: spec.lens,
        card_size_mm: spec.card_size_mm,
        simulated_pose: None,
        zones: layout::standard_zones(spec.ruleset),
    };
    let geometry = cal.validate(Path::new("<built>"))?;
    let reprojection = reprojection(&geometry, corr);
    if reprojection.max_px > spec.max_error_px {
        let worst = reprojection
            .points
            .iter()
            .max_by(|a, b| a.error_px.total_cmp(&b.error_px))
            .map(|p| p.name.clone())
            .unwrap_or_default();
        return Err(BuildError::TooLarge { max_px: reprojection.max_px, limit_px: spec.max_error_px, worst });
    }
    let warning = scale_warning(&geometry);
    Ok(Built { geometry, reprojection, warning })
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{self, Scalar, Size, CV_8UC1};
    use opencv::imgproc;

    fn sim(ruleset: RulesetId, lens: bool) -> TableGeometry {
        let c = layout::simulated_calibration(
            ruleset,
            "T1",
            1280,
            720,
            &layout::default_pose(),
            lens.then_some((-0.08, 0.01)),
        );
        c.validate(Path::new("t.json")).unwrap()
    }

    fn spec(g: &TableGeometry) -> BuildSpec {
        BuildSpec {
            ruleset: g.calibration.ruleset,
            table_id: "T1".into(),
            camera_id: "T1-cam1".into(),
            image_width: 1280,
            image_height: 720,
            lens: g.calibration.lens,
            card_size_mm: layout::CARD_SIZE_MM,
            max_error_px: 1.0,
        }
    }

    fn table_points() -> Vec<Point> {
        [(-900.0, 60.0), (900.0, 60.0), (-600.0, 750.0), (600.0, 750.0), (0.0, 950.0), (0.0, 300.0)]
            .iter()
            .map(|&(x, y)| Point::new(x, y))
            .collect()
    }

    #[test]
    fn marked_points_recover_the_simulated_homography() {
        for id in RulesetId::ALL {
            let g = sim(id, true);
            let corr: Vec<Correspondence> = table_points()
                .iter()
                .enumerate()
                .map(|(i, &p)| Correspondence { name: format!("p{i}"), table: p, image: g.table_to_image(p).unwrap() })
                .collect();
            let built = build(&spec(&g), &corr).unwrap();
            assert!(built.reprojection.max_px < 0.01, "{id}: {:?}", built.reprojection);
            assert!(built.warning.is_none(), "{:?}", built.warning);
            for z in &g.calibration.zones {
                for &p in &z.polygon_mm.0 {
                    let (a, b) = (g.table_to_image(p).unwrap(), built.geometry.table_to_image(p).unwrap());
                    assert!(a.dist(b) < 0.5, "{id} {}: {a:?} vs {b:?}", z.name);
                }
            }
        }
    }

    #[test]
    fn too_few_collinear_and_wrong_points_fail_clearly() {
        let g = sim(RulesetId::Qpoker2004, false);
        let corr = |pts: &[Point]| -> Vec<Correspondence> {
            pts.iter()
                .map(|&p| Correspondence { name: "p".into(), table: p, image: g.table_to_image(p).unwrap() })
                .collect()
        };
        let three = corr(&table_points()[..3]);
        let e = build(&spec(&g), &three).unwrap_err().to_string();
        assert!(e.contains("at least 4"), "{e}");
        let line: Vec<Point> = (0..5).map(|i| Point::new(-400.0 + 200.0 * i as f64, 500.0 + i as f64)).collect();
        let e = build(&spec(&g), &corr(&line)).unwrap_err().to_string();
        assert!(e.contains("one line"), "{e}");
        // A mistyped point: RANSAC leaves it out and the report names it.
        let mut c = corr(&table_points());
        c[4].name = "players edge".into();
        c[4].image.x += 40.0;
        let e = build(&spec(&g), &c).unwrap_err().to_string();
        assert!(e.contains("players edge") && e.contains("exceeds"), "{e}");
    }

    #[test]
    fn scale_check_warns_about_inches() {
        let g = sim(RulesetId::Stud2004, false);
        // Points typed in inches: the table looks 25 times bigger.
        let corr: Vec<Correspondence> = table_points()
            .iter()
            .map(|&p| Correspondence {
                name: "p".into(),
                table: Point::new(p.x / 25.4, p.y / 25.4),
                image: g.table_to_image(p).unwrap(),
            })
            .collect();
        let mut s = spec(&g);
        s.max_error_px = 1e9;
        match build(&s, &corr) {
            Ok(b) => assert!(b.warning.unwrap().contains("plausible")),
            // Or the standard zones land behind the camera: also refused.
            Err(e) => assert!(e.to_string().contains("table_to_image") || e.to_string().contains("zones"), "{e}"),
        }
    }

    /// Markers pasted on a table plane (1 px per mm), warped into the camera by
    /// a known homography, detected, and the homography recovered.
    #[test]
    fn aruco_markers_recover_a_known_homography() {
        let g = sim(RulesetId::Fortune3cp2025, false);
        let dict = aruco::get_predefined_dictionary(aruco::PREDEFINED_DICTIONARY_NAME::DICT_4X4_50).unwrap();
        // The plane image: x from −1200 mm, y from −100 mm, 1 px per mm.
        let (ox, oy) = (-1200.0, -100.0);
        let mut plane = Mat::new_rows_cols_with_default(1400, 2400, CV_8UC1, Scalar::all(90.0)).unwrap();
        let side = 90;
        let spots = [(-800.0, 150.0), (800.0, 150.0), (-450.0, 850.0), (450.0, 850.0), (0.0, 1000.0), (0.0, 450.0)];
        let mut points = Vec::new();
        let plane_to_table = Homography([[1.0, 0.0, ox], [0.0, 1.0, oy], [0.0, 0.0, 1.0]]);
        let h = g.calibration.table_to_image.compose(&plane_to_table);
        // Table coordinates are a mirror image of the camera's (y up on the
        // table, down in the image): print the markers so that the camera sees
        // them the right way round, as it does real printed markers.
        let jacobian = h.0[0][0] * h.0[1][1] - h.0[0][1] * h.0[1][0];
        for (id, &(x, y)) in spots.iter().enumerate() {
            let mut drawn = Mat::default();
            aruco::draw_marker(&dict, id as i32, side, &mut drawn, 1).unwrap();
            let mut m = Mat::default();
            if jacobian < 0.0 {
                core::flip(&drawn, &mut m, 0).unwrap();
            } else {
                m = drawn;
            }
            // A white quiet zone around each marker.
            let (px, py) = ((x - ox) as i32 - side / 2, (y - oy) as i32 - side / 2);
            let mut quiet = Mat::roi_mut(&mut plane, core::Rect::new(px - 15, py - 15, side + 30, side + 30)).unwrap();
            quiet.set_to(&Scalar::all(255.0), &core::no_array()).unwrap();
            let mut roi = Mat::roi_mut(&mut plane, core::Rect::new(px, py, side, side)).unwrap();
            m.copy_to(&mut roi).unwrap();
            // The marker's centre in plane pixel coordinates (pixel centres at integers).
            points.push(MarkedPoint {
                name: None,
                table_mm: [px as f64 + side as f64 / 2.0 + ox - 0.5, py as f64 + side as f64 / 2.0 + oy - 0.5],
                image_px: None,
                aruco_id: Some(id as i32),
            });
        }
        let hm = Mat::from_slice_2d(&h.0).unwrap();
        let mut frame = Mat::default();
        imgproc::warp_perspective(
            &plane,
            &mut frame,
            &hm,
            Size::new(1280, 720),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            Scalar::all(40.0),
        )
        .unwrap();
        let corr = correspondences(&points, Some(&frame)).unwrap();
        assert_eq!(corr.len(), spots.len());
        let built = build(&BuildSpec { max_error_px: 2.0, ..spec(&g) }, &corr).unwrap();
        for z in &g.calibration.zones {
            for &p in &z.polygon_mm.0 {
                let (a, b) = (g.table_to_image(p).unwrap(), built.geometry.table_to_image(p).unwrap());
                assert!(a.dist(b) < 2.0, "{}: {a:?} vs {b:?}", z.name);
            }
        }
        // A marker the frame does not show is named.
        let mut missing = points.clone();
        missing[0].aruco_id = Some(42);
        let e = correspondences(&missing, Some(&frame)).unwrap_err().to_string();
        assert!(e.contains("marker 42"), "{e}");
    }
}
