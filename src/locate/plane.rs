//! Card finding on a calibrated table without a learned model.
//!
//! A calibrated camera knows the table plane and the card size in millimetres, which turns
//! localization into a measurement: rectify the frame to the table plane (one `remap` with a
//! map computed once per calibration, lens included), separate everything that is not felt
//! (colour distance from the empty table, else from the felt's local median colour), and keep
//! the connected shapes that are card rectangles (size and fill within tolerance of the
//! calibration's card size). Cards laid side by side that merge into one shape are split by
//! their known width. The face is judged by the share of card-stock white inside the card; the
//! classifier has the last word. Given the empty table, only the parts of the plane whose view
//! differs from it are rectified and measured (an eighth-size comparison first).
//!
//! What it does not do (documented in docs/recognition.md): fanned hands whose cards overlap by
//! more than a few millimetres, cards on a felt of the same colour as their back *and* without
//! a light border, and uncalibrated photos; the learned locator covers those.
use opencv::core::{self, Mat, Point as CvPoint, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

use super::geometry::{order_quad, Quad};
use super::LocateError;
use crate::calib::{layout, Point, TableGeometry, ZoneKind};

/// Plane pixels per millimetre are capped here: finer than the camera sees is wasted work.
const MAX_PX_PER_MM: f64 = 1.0;
/// …and never coarser than this (a card must stay ~30 px wide to be measured).
const MIN_PX_PER_MM: f64 = 0.45;
/// Relative tolerance on a card's measured width and height.
const SIZE_TOLERANCE: f64 = 0.22;
/// Minimum share of its minimum-area rectangle a card's shape fills.
const MIN_FILL: f64 = 0.82;
/// Colour distance (Lab, 8-bit units) above which a pixel is not felt.
const FELT_DISTANCE: f64 = 22.0;
/// Share of card-stock white inside a card above which it is taken as face up.
const FACE_WHITE_SHARE: f64 = 0.30;
/// Share of card-stock white inside a row of cards below which it is taken as backs only.
const ROW_BACKS_WHITE: f64 = 0.10;
/// Side of the plane's tiles, plane pixels: with an empty table, only tiles whose view of the
/// frame changed are rectified and measured.
const TILE: i32 = 16;
/// The frame is compared with the empty table at 1/COARSE of its size (box-averaged).
const COARSE: i32 = 8;
const _: () = assert!((COARSE as u32).is_power_of_two());
/// A coarse pixel has changed when its colour distance from the empty table's (as
/// FELT_DISTANCE's) exceeds this share of FELT_DISTANCE, or its lightness this step: half of
/// what makes a plane pixel not felt, so that a card's thin light border, diluted by the
/// averaging, still marks its tile, while the frame-to-frame drift of the light does not.
const CHANGE_SHARE: f64 = 0.5;
const CHANGE_LIGHTNESS: i32 = 30;
/// Changed coarse pixels a tile needs (a lone one is noise; a card at 1080p is ~50 of them).
const CHANGE_PIXELS: u32 = 3;

/// A card cut out of a shape, in plane pixels: centre, long side, short side, long-axis direction.
type Piece = ((f64, f64), f64, f64, (f64, f64));

/// A card found on the table plane.
#[derive(Debug, Clone, PartialEq)]
pub struct PlaneCard {
    /// Corners in frame pixels (the [quadrilateral convention](super::geometry)).
    pub quad: Quad,
    /// Centre on the table, millimetres.
    pub center_mm: Point,
    /// Whether its interior is mostly card-stock white (a face; court cards included).
    pub face_up: bool,
    /// Share of white in its interior, 0..1.
    pub white_share: f64,
    /// How well the shape matches a card: 1 for an exact rectangle of the card's size.
    pub score: f32,
}

/// The finder of one calibration (build once, call [`PlaneFinder::find`] per frame).
pub struct PlaneFinder {
    map_x: Mat,
    map_y: Mat,
    /// Plane pixels per millimetre.
    scale: f64,
    /// Table millimetres of plane pixel (0, 0).
    origin: Point,
    /// Pixels of the plane that see the table (the felt statistics come from them).
    table_mask: Mat,
    card_mm: [f64; 2],
    geometry: TableGeometry,
    /// `TABLECAM_PLANE_DEBUG`, read once: where each frame's plane and mask go, and whether
    /// shapes and row fits are printed (for tuning on a new table).
    debug_dir: Option<String>,
    /// Cards the calibration's ruleset deals a seat's or the dealer's hand, and the community
    /// cards (0: none), for [`PlaneFinder::hand_size_at`]: read once, not per row.
    hand_sizes: (u8, u8),
    /// The empty table, when the camera has one ([`PlaneFinder::set_reference`]).
    reference: Option<Reference>,
    /// The plane cut into TILE × TILE tiles, row by row: for each, the box of coarse frame
    /// pixels its rectification reads (none where it sees no part of the frame).
    tiles: Vec<Option<core::Rect>>,
    /// Tiles per row and per column.
    tiles_wide: i32,
    tiles_high: i32,
}

/// The empty table, as the finder compares frames with it.
struct Reference {
    /// On the plane (Lab, lightly blurred): the felt each pixel shows without cards.
    felt: Mat,
    /// The frame at 1/COARSE of its size (Lab, box-averaged): what each tile sees without cards.
    coarse: Mat,
}

impl std::fmt::Debug for PlaneFinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlaneFinder").field("scale", &self.scale).field("origin", &self.origin).finish()
    }
}

fn cv(context: &'static str) -> impl FnOnce(opencv::Error) -> LocateError {
    move |source| LocateError::Plane { context, source }
}

impl PlaneFinder {
    /// Prepares the rectification of `geometry`'s camera onto its table.
    pub fn new(geometry: &TableGeometry) -> Result<PlaneFinder, LocateError> {
        let r = layout::TABLE_RADIUS_MM;
        let centre = crate::recognize::table_centre(geometry).unwrap_or(Point::new(0.0, r / 2.0));
        let native = crate::recognize::px_per_mm(geometry, centre).unwrap_or(0.5);
        let scale = native.clamp(MIN_PX_PER_MM, MAX_PX_PER_MM);
        let origin = Point::new(-r - 20.0, -20.0);
        let (w, h) = (((2.0 * r + 40.0) * scale).ceil() as i32, ((r + 40.0) * scale).ceil() as i32);
        let mut map_x = Mat::new_rows_cols_with_default(h, w, core::CV_32FC1, Scalar::all(-1.0)).map_err(cv("map"))?;
        let mut map_y = Mat::new_rows_cols_with_default(h, w, core::CV_32FC1, Scalar::all(-1.0)).map_err(cv("map"))?;
        let mut table_mask =
            Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, Scalar::all(0.0)).map_err(cv("map"))?;
        let (iw, ih) = (f64::from(geometry.calibration.image_width), f64::from(geometry.calibration.image_height));
        let (tiles_wide, tiles_high) = ((w + TILE - 1) / TILE, (h + TILE - 1) / TILE);
        // each tile's box of frame pixels (min x, min y, max x, max y), gathered with the map
        let mut bounds = vec![(f32::MAX, f32::MAX, f32::MIN, f32::MIN); (tiles_wide * tiles_high) as usize];
        for v in 0..h {
            for u in 0..w {
                let p = Point::new(origin.x + (f64::from(u) + 0.5) / scale, origin.y + (f64::from(v) + 0.5) / scale);
                if let Some(q) = geometry.table_to_image(p) {
                    if q.x >= 0.0 && q.y >= 0.0 && q.x < iw && q.y < ih {
                        let (x, y) = (q.x as f32, q.y as f32);
                        *map_x.at_2d_mut::<f32>(v, u).map_err(cv("map"))? = x;
                        *map_y.at_2d_mut::<f32>(v, u).map_err(cv("map"))? = y;
                        if p.y >= 0.0 && p.x.hypot(p.y) <= r {
                            *table_mask.at_2d_mut::<u8>(v, u).map_err(cv("map"))? = 255;
                        }
                        let b = &mut bounds[((v / TILE) * tiles_wide + u / TILE) as usize];
                        *b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
                    }
                }
            }
        }
        let coarse = (iw as i32 / COARSE, ih as i32 / COARSE);
        let tiles = bounds
            .into_iter()
            .map(|(x0, y0, x1, y1)| {
                (x0 <= x1).then(|| {
                    // bilinear sampling reads the next pixel too
                    let to_coarse = |v: f32, n: i32| ((v / COARSE as f32).floor() as i32).clamp(0, n - 1);
                    let (x0, y0) = (to_coarse(x0 - 1.0, coarse.0), to_coarse(y0 - 1.0, coarse.1));
                    let (x1, y1) = (to_coarse(x1 + 1.0, coarse.0), to_coarse(y1 + 1.0, coarse.1));
                    core::Rect::new(x0, y0, x1 - x0 + 1, y1 - y0 + 1)
                })
            })
            .collect();
        Ok(PlaneFinder {
            map_x,
            map_y,
            scale,
            origin,
            table_mask,
            card_mm: geometry.calibration.card_size_mm,
            geometry: geometry.clone(),
            debug_dir: std::env::var("TABLECAM_PLANE_DEBUG").ok(),
            hand_sizes: {
                let rs = crate::rules::Ruleset::new(geometry.calibration.ruleset);
                (rs.cards_per_hand, rs.community_cards)
            },
            reference: None,
            tiles,
            tiles_wide,
            tiles_high,
        })
    }

    /// Plane pixels per millimetre.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    fn plane_to_table(&self, x: f64, y: f64) -> Point {
        Point::new(self.origin.x + x / self.scale, self.origin.y + y / self.scale)
    }

    /// The frame rectified onto the table plane (8-bit BGR; black where the camera does not see).
    pub fn rectify(&self, image: &Mat) -> Result<Mat, LocateError> {
        let mut plane = Mat::default();
        imgproc::remap(
            image,
            &mut plane,
            &self.map_x,
            &self.map_y,
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            Scalar::all(0.0),
        )
        .map_err(cv("rectify"))?;
        Ok(plane)
    }

    /// Gives the finder the camera's empty table (a BGR frame of the calibrated size, the same
    /// image as bet presence's reference): each plane pixel is then compared with what it shows
    /// without cards instead of with the felt's local median. Glare, lighting gradients, the
    /// printed layout, the rail and the fixtures (shoe, chip rack, discard holder) are all in the
    /// reference, so only what was put on the table stands out.
    pub fn set_reference(&mut self, empty_table: &Mat) -> Result<(), LocateError> {
        let c = &self.geometry.calibration;
        if i64::from(empty_table.cols()) != i64::from(c.image_width)
            || i64::from(empty_table.rows()) != i64::from(c.image_height)
            || empty_table.typ() != core::CV_8UC3
        {
            return Err(LocateError::Reference {
                got: format!("{}×{} (type {})", empty_table.cols(), empty_table.rows(), empty_table.typ()),
                expected: format!("{}×{} BGR", c.image_width, c.image_height),
            });
        }
        let plane = self.rectify(empty_table)?;
        let mut lab = Mat::default();
        imgproc::cvt_color_def(&plane, &mut lab, imgproc::COLOR_BGR2Lab).map_err(cv("reference"))?;
        // a pixel or two of camera shake or rectification error must not outline every print
        let mut felt = Mat::default();
        imgproc::gaussian_blur_def(&lab, &mut felt, Size::new(5, 5), 0.0).map_err(cv("reference"))?;
        let coarse = coarse_frame(empty_table, "reference")?;
        self.reference = Some(Reference { felt, coarse });
        Ok(())
    }

    /// Whether [`PlaneFinder::set_reference`] gave the finder an empty table.
    pub fn has_reference(&self) -> bool {
        self.reference.is_some()
    }

    /// The cards in a BGR frame of the calibrated camera.
    pub fn find(&self, image: &Mat) -> Result<Vec<PlaneCard>, LocateError> {
        let (h, w) = (self.map_x.rows(), self.map_x.cols());
        let mut fg = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, Scalar::all(0.0)).map_err(cv("mask"))?;
        let mut white = Mat::new_rows_cols_with_default(h, w, core::CV_8UC1, Scalar::all(0.0)).map_err(cv("mask"))?;
        let (lab, local);
        let felt = match &self.reference {
            Some(r) => {
                // Only where the frame differs from the empty table can a card lie: the rest of
                // the plane keeps the empty table's colours and no mask (rectifying, converting
                // and testing the whole plane took ~11 of the ~17 ms a 1080p frame took on one
                // core; a hand-filled table changes a third of it).
                let mut l = r.felt.try_clone().map_err(cv("lab"))?;
                let mut bgr = Mat::default();
                for run in self.changed_runs(image, &r.coarse)? {
                    imgproc::remap(
                        image,
                        &mut bgr,
                        &Mat::roi(&self.map_x, run).map_err(cv("rectify"))?,
                        &Mat::roi(&self.map_y, run).map_err(cv("rectify"))?,
                        imgproc::INTER_LINEAR,
                        core::BORDER_CONSTANT,
                        Scalar::all(0.0),
                    )
                    .map_err(cv("rectify"))?;
                    let mut lab_run = Mat::roi_mut(&mut l, run).map_err(cv("lab"))?;
                    imgproc::cvt_color_def(&bgr, &mut lab_run, imgproc::COLOR_BGR2Lab).map_err(cv("lab"))?;
                    self.mark_not_felt(&l, &r.felt, run, &mut fg, &mut white)?;
                }
                lab = l;
                &r.felt
            }
            None => {
                let plane = self.rectify(image)?;
                let mut l = Mat::default();
                imgproc::cvt_color_def(&plane, &mut l, imgproc::COLOR_BGR2Lab).map_err(cv("lab"))?;
                lab = l;
                local = self.local_felt(&lab)?;
                self.mark_not_felt(&lab, &local, core::Rect::new(0, 0, w, h), &mut fg, &mut white)?;
                &local
            }
        };
        if self.reference.is_some() {
            // A back of the felt's own colour differs from the empty table only by its light
            // border: fill what such a ring encloses, or the opening below erases the thin ring
            // and the card with it. (Without a reference the printed layout's closed lines are
            // foreground too, and filling them would make cards of the betting boxes.)
            fill_holes(&mut fg)?;
        }
        // Printed layout lines are thinner than this; cards are far wider.
        let mut opened = open_disc(&fg, 0.09 * self.card_mm[0] * self.scale, "open")?;
        self.drop_rail(&mut opened)?;
        if let Some(dir) = &self.debug_dir {
            // For tuning on a new table: the rectified plane and what was taken as not felt.
            let _ = opencv::imgcodecs::imwrite_def(format!("{dir}/plane.png"), &self.rectify(image)?);
            let _ = opencv::imgcodecs::imwrite_def(format!("{dir}/not_felt.png"), &opened);
        }
        let mut contours: Vector<Vector<CvPoint>> = Vector::new();
        imgproc::find_contours_def(&opened, &mut contours, imgproc::RETR_EXTERNAL, imgproc::CHAIN_APPROX_SIMPLE)
            .map_err(cv("contours"))?;
        let (cw, ch) = (self.card_mm[0] * self.scale, self.card_mm[1] * self.scale);
        let mut out = Vec::new();
        let mut shapes: Vec<Vec<Piece>> = Vec::new();
        for c in contours.iter() {
            let pieces = self.shape_pieces(&lab, felt, &white, &c)?;
            if pieces.is_empty() && imgproc::contour_area_def(&c).map_err(cv("area"))? > 1.5 * cw * ch {
                // A card touching a chip stack, the table's rim or a shadow makes one shape that
                // is no rectangle: cut it at its necks (narrower than half a card, then than
                // 0.8 of a card: a hand can touch the rail along a whole edge) and keep the
                // parts that are one card, or a row of cards inside a zone where hands lie
                // (elsewhere a row would be read into the columns of a chip rack).
                let mut parts: Vec<(Vector<CvPoint>, bool)> =
                    self.cut_necks(&c, 0.5 * cw)?.into_iter().map(|p| (p, false)).collect();
                while let Some((part, finest)) = parts.pop() {
                    let pieces = self.shape_pieces(&lab, felt, &white, &part)?;
                    if pieces.len() == 1 || (!pieces.is_empty() && pieces.iter().all(|p| self.in_hand_zone(p.0))) {
                        shapes.push(pieces);
                    } else if pieces.is_empty()
                        && !finest
                        && imgproc::contour_area_def(&part).map_err(cv("area"))? > 1.5 * cw * ch
                    {
                        parts.extend(self.cut_necks(&part, 0.8 * cw)?.into_iter().map(|p| (p, true)));
                    }
                }
            } else {
                shapes.push(pieces);
            }
        }
        for pieces in shapes {
            for (c, l, s, u) in pieces {
                let (ux, uy) = u;
                let (vx, vy) = (-uy, ux);
                let corner = |sl: f64, ss: f64| {
                    let (x, y) =
                        (c.0 + ux * sl * l / 2.0 + vx * ss * s / 2.0, c.1 + uy * sl * l / 2.0 + vy * ss * s / 2.0);
                    self.plane_to_table(x, y)
                };
                let table = [corner(-1.0, -1.0), corner(-1.0, 1.0), corner(1.0, 1.0), corner(1.0, -1.0)];
                let mut img = [Point::new(0.0, 0.0); 4];
                let mut ok = true;
                for (d, t) in img.iter_mut().zip(table) {
                    match self.geometry.table_to_image(t) {
                        Some(p) => *d = p,
                        None => ok = false,
                    }
                }
                // By the rail, outside every zone (shoe and discard rack included), lie the chip
                // rack's columns and the dealer's fixtures, not cards: a card passes there only
                // in flight, and the tracker follows it across a few missed frames.
                let at = self.plane_to_table(c.0, c.1);
                if !ok || (at.y < RAIL_BAND_MM && !self.in_zone(at)) {
                    continue;
                }
                let white_share = self.white_share(&white, c, l, s, (ux, uy))?;
                let size_err = ((l - ch).abs() / ch).max((s - cw).abs() / cw);
                out.push(PlaneCard {
                    quad: order_quad(img),
                    center_mm: self.plane_to_table(c.0, c.1),
                    face_up: white_share >= FACE_WHITE_SHARE,
                    white_share,
                    score: (1.0 - size_err / SIZE_TOLERANCE).clamp(0.05, 1.0) as f32,
                });
            }
        }
        // Deterministic order whatever the contour order: by table position.
        out.sort_by(|a, b| a.center_mm.x.total_cmp(&b.center_mm.x).then(a.center_mm.y.total_cmp(&b.center_mm.y)));
        Ok(out)
    }

    /// The cards one not-felt shape is made of: one card, a row of overlapping cards (a hand) or
    /// cards end to end; none when the shape is no card-sized rectangle.
    fn shape_pieces(&self, lab: &Mat, felt: &Mat, white: &Mat, c: &Vector<CvPoint>) -> Result<Vec<Piece>, LocateError> {
        let (cw, ch) = (self.card_mm[0] * self.scale, self.card_mm[1] * self.scale);
        let area = imgproc::contour_area_def(&c).map_err(cv("area"))?;
        if area < 0.5 * cw * ch {
            return Ok(Vec::new());
        }
        let r = imgproc::min_area_rect(&c).map_err(cv("rect"))?;
        let (a, b) = (f64::from(r.size.width), f64::from(r.size.height));
        let (long, short) = (a.max(b), a.min(b));
        if self.debug_dir.is_some() {
            eprintln!("shape at {:?}: {long:.0} x {short:.0}, fill {:.2}", r.center, area / (long * short).max(1.0));
        }
        if long * short <= 0.0 || area / (long * short) < MIN_FILL {
            return Ok(Vec::new());
        }
        // the rectangle's long axis, in plane pixels
        let ang = f64::from(r.angle).to_radians();
        let (ux, uy) = if a >= b { (ang.cos(), ang.sin()) } else { (-ang.sin(), ang.cos()) };
        let centre = (f64::from(r.center.x), f64::from(r.center.y));
        // How many cards make this shape: one, or k side by side (across their width) or end
        // to end (along their height).
        let close = |v: f64, want: f64| (v - want).abs() <= SIZE_TOLERANCE * want;
        let mut pieces: Vec<Piece> = Vec::new();
        if close(long, ch) && close(short, cw) {
            pieces.push((centre, long, short, (ux, uy)));
        } else if close(short, ch) && long > cw * (1.0 + SIZE_TOLERANCE) && long < 7.0 * cw {
            // Cards side by side or overlapping (a hand): the row runs across the cards' width,
            // and each card's edge shows as a step in lightness along it. Dealers lay a hand's
            // cards at a regular spacing, so the hand is fitted as a comb of k cards rather
            // than from the strongest steps alone: a back's printed frame or a court card's
            // picture frame is a step as strong as a card's edge, but it does not repeat at the
            // hand's spacing.
            //
            // Two cards overlapping by about half a width make a nearly square shape, and the
            // rectangle's longer side is then as likely the cards' height as the row. Where
            // both sides could be the row, the hand zone's own box says which (the calibration
            // draws it along the row, as the dealer lays the cards); in no such zone, each is
            // fitted and the better comb wins.
            let mut axes = vec![(long, short, (ux, uy))];
            if close(long, ch) && short > cw * (1.0 + SIZE_TOLERANCE) {
                let across = (long, short, (ux, uy));
                let along = (short, long, (-uy, ux));
                let hint = self.row_axis_hint(centre);
                let zone_cos = |u: (f64, f64)| hint.map(|z| (z.0 * u.0 + z.1 * u.1).abs());
                axes = match (zone_cos(across.2), zone_cos(along.2)) {
                    (Some(a), Some(b)) if a >= ZONE_AXIS_COS && b < ZONE_AXIS_COS => vec![across],
                    (Some(a), Some(b)) if b >= ZONE_AXIS_COS && a < ZONE_AXIS_COS => vec![along],
                    _ => vec![across, along],
                };
            }
            // (score, left sides, row length, card height, row direction) of the best fit
            type Fit = (f64, Vec<f64>, f64, f64, (f64, f64));
            let mut best: Option<Fit> = None;
            for (along, across, u) in axes {
                let stock = self.white_share(white, centre, along, across, u)?;
                let backs = stock < ROW_BACKS_WHITE;
                // edges read askew where no face shows: a back printed with white too (under
                // ROW_BACKS_WHITE's strict limit)
                let profile = self.edge_profile(lab, centre, u, along, across, stock < FACE_WHITE_SHARE)?;
                let gaps = self.felt_gaps(lab, felt, centre, u, along, across)?;
                let (score, lefts) = fit_row_with_gaps(&profile, &gaps, cw, backs, self.hand_size_at(centre));
                if self.debug_dir.is_some() {
                    // for tuning: each row's fit and the profile it came from
                    let p: Vec<i32> = profile.iter().map(|v| *v as i32).collect();
                    // where the row starts and ends in the camera's image, to find it in a frame
                    let end = |t: f64| {
                        let at = self.plane_to_table(centre.0 + u.0 * t, centre.1 + u.1 * t);
                        self.geometry.table_to_image(at).map(|q| (q.x.round(), q.y.round()))
                    };
                    eprintln!(
                        "row at {centre:?} (image {:?} to {:?}) long {along:.0} cw {cw:.1} white {stock:.2}: {lefts:.0?} score {score:.1} gaps {gaps:?}\n  {p:?}",
                        end(-along / 2.0),
                        end(along / 2.0)
                    );
                }
                if best.as_ref().map_or(true, |b| score > b.0) {
                    best = Some((score, lefts, along, across, u));
                }
            }
            if let Some((_, lefts, along, across, (ux, uy))) = best {
                let lo = -along / 2.0;
                for l0 in lefts {
                    let t = lo + l0 + cw / 2.0;
                    pieces.push(((centre.0 + ux * t, centre.1 + uy * t), across, cw, (-uy, ux)));
                }
            }
        } else if close(short, cw) {
            let k = (long / ch).round();
            if (2.0..=4.0).contains(&k) && close(long / k, ch * 1.03) {
                let step = long / k;
                for i in 0..k as i32 {
                    let t = (f64::from(i) + 0.5) * step - long / 2.0;
                    pieces.push(((centre.0 + ux * t, centre.1 + uy * t), step.min(ch), short, (ux, uy)));
                }
            }
        }
        Ok(pieces)
    }

    /// The plane's rectangles (runs of tiles along a tile row) whose view of `image` differs
    /// from the empty table's `coarse` frame, and the tiles next to them: a card's shape is
    /// measured a little beyond its outline.
    fn changed_runs(&self, image: &Mat, coarse: &Mat) -> Result<Vec<core::Rect>, LocateError> {
        let now = coarse_frame(image, "changes")?;
        let (cw, ch) = (coarse.cols(), coarse.rows());
        if now.cols() != cw || now.rows() != ch || image.typ() != core::CV_8UC3 {
            return Err(LocateError::Reference {
                got: format!("a frame of {}×{} (type {})", image.cols(), image.rows(), image.typ()),
                expected: format!("{}×{} BGR, the empty table's size", cw * COARSE, ch * COARSE),
            });
        }
        // changed coarse pixels, summed (an integral image: each tile's box is then 4 reads)
        let limit = (4.0 * CHANGE_SHARE * FELT_DISTANCE) as i32;
        let stride = (cw + 1) as usize;
        let mut sums = vec![0u32; stride * (ch + 1) as usize];
        {
            let a = now.data_bytes().map_err(cv("changes"))?;
            let b = coarse.data_bytes().map_err(cv("changes"))?;
            for y in 0..ch as usize {
                let mut row = 0u32;
                for x in 0..cw as usize {
                    let i = 3 * (y * cw as usize + x);
                    let dl = (i32::from(a[i]) - i32::from(b[i])).abs();
                    let d = dl
                        + 4 * (i32::from(a[i + 1]) - i32::from(b[i + 1])).abs()
                        + 4 * (i32::from(a[i + 2]) - i32::from(b[i + 2])).abs();
                    row += u32::from(d > limit || dl > CHANGE_LIGHTNESS);
                    sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row;
                }
            }
        }
        let count = |r: &core::Rect| {
            let (x0, y0, x1, y1) = (r.x as usize, r.y as usize, (r.x + r.width) as usize, (r.y + r.height) as usize);
            sums[y1 * stride + x1] + sums[y0 * stride + x0] - sums[y0 * stride + x1] - sums[y1 * stride + x0]
        };
        let (tw, th) = (self.tiles_wide, self.tiles_high);
        let changed: Vec<bool> =
            self.tiles.iter().map(|t| t.as_ref().is_some_and(|r| count(r) >= CHANGE_PIXELS)).collect();
        let active = |tx: i32, ty: i32| {
            (ty - 1..=ty + 1).any(|y| {
                (tx - 1..=tx + 1).any(|x| x >= 0 && y >= 0 && x < tw && y < th && changed[(y * tw + x) as usize])
            })
        };
        let (w, h) = (self.map_x.cols(), self.map_x.rows());
        let mut runs = Vec::new();
        for ty in 0..th {
            let mut tx = 0;
            while tx < tw {
                if !active(tx, ty) {
                    tx += 1;
                    continue;
                }
                let start = tx;
                while tx < tw && active(tx, ty) {
                    tx += 1;
                }
                let (x0, y0) = (start * TILE, ty * TILE);
                runs.push(core::Rect::new(x0, y0, (tx * TILE).min(w) - x0, ((ty + 1) * TILE).min(h) - y0));
            }
        }
        Ok(runs)
    }

    /// Marks, inside `rect` of the plane, the pixels that are not felt (`fg`: far in colour from
    /// `felt`, or card stock far lighter than it; inside the table) and those of card stock
    /// (`white`: light and nearly grey).
    fn mark_not_felt(
        &self,
        lab: &Mat,
        felt: &Mat,
        rect: core::Rect,
        fg: &mut Mat,
        white: &mut Mat,
    ) -> Result<(), LocateError> {
        let w = lab.cols() as usize;
        let src = lab.data_bytes().map_err(cv("lab"))?;
        let bg = felt.data_bytes().map_err(cv("felt"))?;
        let mask = self.table_mask.data_bytes().map_err(cv("mask"))?;
        let out = fg.data_bytes_mut().map_err(cv("mask"))?;
        let wout = white.data_bytes_mut().map_err(cv("mask"))?;
        // Lightness weighs a quarter (shadows, glare and lighting gradients change it most):
        // 0.25·|ΔL| + |Δa| + |Δb| > FELT_DISTANCE, in integers.
        let limit = (4.0 * FELT_DISTANCE) as i32;
        for y in rect.y as usize..(rect.y + rect.height) as usize {
            let (a, b) = (y * w + rect.x as usize, y * w + (rect.x + rect.width) as usize);
            let rows = src[3 * a..3 * b].chunks_exact(3).zip(bg[3 * a..3 * b].chunks_exact(3));
            for (i, (px, f)) in (a..b).zip(rows) {
                let (l, pa, pb) = (i32::from(px[0]), i32::from(px[1]) - 128, i32::from(px[2]) - 128);
                if l > 170 && pa.abs() < 18 && pb.abs() < 22 {
                    wout[i] = 255;
                }
                if mask[i] == 0 {
                    continue;
                }
                let (fl, fa, fb) = (i32::from(f[0]), i32::from(f[1]) - 128, i32::from(f[2]) - 128);
                let d = (l - fl).abs() + 4 * (pa - fa).abs() + 4 * (pb - fb).abs();
                // card stock is light and grey: unlike glare, it is also far lighter than the felt
                let stock = l > 170 && l - fl > 60 && pa.abs() < 10 && pb.abs() < 12;
                if d > limit || stock {
                    out[i] = 255;
                }
            }
        }
        Ok(())
    }

    /// Clears the dealer's rail from a not-felt mask: the long horizontal band along the table's
    /// straight edge (table y near 0), which a hand laid near it touches along a whole edge. What
    /// runs on unbroken for several card widths there is rail; cards are at most a few wide.
    fn drop_rail(&self, mask: &mut Mat) -> Result<(), LocateError> {
        let run = (RAIL_RUN_CARDS * self.card_mm[0] * self.scale).round() as i32;
        let band = ((RAIL_BAND_MM - self.origin.y) * self.scale).round() as i32;
        let band = band.clamp(0, mask.rows());
        if band == 0 || run < 3 {
            return Ok(());
        }
        let top = Mat::roi(mask, core::Rect::new(0, 0, mask.cols(), band))
            .map_err(cv("rail"))?
            .try_clone()
            .map_err(cv("rail"))?;
        let rail = open_with(&top, imgproc::MORPH_RECT, Size::new(run, 1), "rail")?;
        let mut cleared = Mat::default();
        core::subtract_def(&top, &rail, &mut cleared).map_err(cv("rail"))?;
        let mut dst = Mat::roi_mut(mask, core::Rect::new(0, 0, mask.cols(), band)).map_err(cv("rail"))?;
        cleared.copy_to(&mut dst).map_err(cv("rail"))?;
        Ok(())
    }

    /// The zones holding plane pixel `c` where cards are laid out in rows (a seat's hand, the
    /// dealer's hand, the community cards).
    fn hand_zones_at(&self, c: (f64, f64)) -> impl Iterator<Item = &crate::calib::Zone> + '_ {
        let p = self.plane_to_table(c.0, c.1);
        self.geometry.calibration.zones.iter().filter(move |z| {
            matches!(z.kind, ZoneKind::Hand { .. } | ZoneKind::DealerHand | ZoneKind::Community)
                && z.polygon_mm.contains(p)
        })
    }

    /// How many cards the game deals the hand zone at plane pixel `c` (a seat's or the dealer's
    /// hand, or the community cards), from the calibration's ruleset; `None` outside them.
    fn hand_size_at(&self, c: (f64, f64)) -> Option<usize> {
        let n = match self.hand_zones_at(c).next()?.kind {
            ZoneKind::Hand { .. } | ZoneKind::DealerHand => self.hand_sizes.0,
            ZoneKind::Community => self.hand_sizes.1,
            _ => return None,
        };
        (n > 0).then_some(usize::from(n))
    }

    /// Whether plane pixel `c` lies in a zone where cards are laid out in rows.
    fn in_hand_zone(&self, c: (f64, f64)) -> bool {
        self.hand_zones_at(c).next().is_some()
    }

    /// The direction (plane pixels) along which the cards of the hand zone holding plane pixel
    /// `c` are laid: the long axis of the zone's box, when it is clearly elongated.
    fn row_axis_hint(&self, c: (f64, f64)) -> Option<(f64, f64)> {
        self.hand_zones_at(c).find_map(|z| z.polygon_mm.long_axis(1.2))
    }

    /// Whether table point `p` lies in any zone.
    fn in_zone(&self, p: Point) -> bool {
        self.geometry.calibration.zones.iter().any(|z| z.polygon_mm.contains(p))
    }

    /// The parts of shape (outline) `c` once necks narrower than `neck` plane pixels are opened.
    fn cut_necks(&self, c: &Vector<CvPoint>, neck: f64) -> Result<Vec<Vector<CvPoint>>, LocateError> {
        let r = imgproc::bounding_rect(c).map_err(cv("necks"))?;
        // the shape alone, in its bounding box
        let mut only =
            Mat::new_rows_cols_with_default(r.height, r.width, core::CV_8UC1, Scalar::all(0.0)).map_err(cv("necks"))?;
        fill_contours(&mut only, &Vector::from_iter([c.clone()]), CvPoint::new(-r.x, -r.y), "necks")?;
        let opened = open_disc(&only, neck, "necks")?;
        let mut parts: Vector<Vector<CvPoint>> = Vector::new();
        imgproc::find_contours(
            &opened,
            &mut parts,
            imgproc::RETR_EXTERNAL,
            imgproc::CHAIN_APPROX_SIMPLE,
            CvPoint::new(r.x, r.y),
        )
        .map_err(cv("necks"))?;
        Ok(parts.iter().collect())
    }

    /// The felt's colour around every plane pixel (Lab): a median over ~16 card widths, so
    /// that lighting gradients and glare are part of the felt while cards, which cover far less
    /// than half of such a window, are not.
    fn local_felt(&self, lab: &Mat) -> Result<Mat, LocateError> {
        let f = 8;
        let small_size = Size::new((lab.cols() / f).max(1), (lab.rows() / f).max(1));
        let mut small = Mat::default();
        imgproc::resize(lab, &mut small, small_size, 0.0, 0.0, imgproc::INTER_AREA).map_err(cv("felt"))?;
        let k = (((2.0 * self.card_mm[0] * self.scale) / f64::from(f)).round() as i32 * 2 + 1).clamp(5, 31);
        let mut med = Mat::default();
        imgproc::median_blur(&small, &mut med, k).map_err(cv("felt"))?;
        let mut felt = Mat::default();
        imgproc::resize(&med, &mut felt, lab.size().map_err(cv("felt"))?, 0.0, 0.0, imgproc::INTER_LINEAR)
            .map_err(cv("felt"))?;
        Ok(felt)
    }

    /// Lightness steps across a shape, one value per plane pixel along `u` from the shape's
    /// start: a card's edge runs across the whole shape, a pip or a court figure does not, so
    /// each value is the step that 7 of 9 samples spread across the shape make; `askew` (a row
    /// with no face up), read along lines a little askew where they step more.
    fn edge_profile(
        &self,
        lab: &Mat,
        c: (f64, f64),
        u: (f64, f64),
        long: f64,
        short: f64,
        askew: bool,
    ) -> Result<Vec<f64>, LocateError> {
        let v = (-u.1, u.0);
        let n = long.floor().max(0.0) as usize;
        let lab = Pixels::new(lab, "lab")?;
        let l_at = |x: f64, y: f64| -> Result<f64, LocateError> {
            Ok(lab.at(x.round() as i32, y.round() as i32).map_or(0.0, |p| f64::from(p[0])))
        };
        // Lightness along each of 9 lines spread across the shape, TEXTURE_MAX_PERIOD + 1
        // positions beyond both ends so that a step can be taken between windows at any place.
        let spread = 0.7 * short;
        let max_shear = if askew { (EDGE_TILT * spread).round().max(0.0) as i32 } else { 0 };
        let pad = TEXTURE_MAX_PERIOD + 1 + (max_shear / 2 + 1) as usize;
        let mut lines = [(); 9].map(|_| Vec::with_capacity(n + 2 * pad));
        for (j, line) in lines.iter_mut().enumerate() {
            let sv = (j as f64 / 8.0 - 0.5) * spread;
            for m in 0..n + 2 * pad {
                let t = m as f64 - pad as f64 - long / 2.0;
                line.push(l_at(c.0 + u.0 * t + v.0 * sv, c.1 + u.1 * t + v.1 * sv)?);
            }
        }
        // Per position: the step 7 of 9 samples make between the `k` positions after it and the
        // `k` before it, of any sign and the same way, along a line through the position tilted
        // by up to EDGE_TILT against the shape's axis (each line read `shear` × its place across
        // the spread further on), the tilt that steps most. A card's edge is a thin straight
        // line, a pixel or two of white border, and it seldom runs square to the shape's
        // rectangle: a dealer's cards lie a few degrees apart, and a hand staggered along the
        // cards' height tilts the rectangle itself. Read square, such an edge steps at a
        // different place on each line and no 7 of 9 agree (Fortune 2025 seed 9: three backs
        // whose inner edges ran 3.5 px askew across the spread measured steps of 5 and 19
        // where, read along the edge, they step 77 and 79). Only `askew` on a row with no face
        // up: a face's edge on another white card is no such line, and the tilt that steps
        // most found pips' and indexes' strokes instead (stud seed 9: three more rounds with a
        // face-up card never read).
        let profiles = |k: usize, shears: std::ops::RangeInclusive<i32>| {
            let (mut any_way, mut same_way) = (vec![0.0f64; n], vec![0.0f64; n]);
            for shear in shears {
                let offsets: [isize; 9] =
                    std::array::from_fn(|j| (f64::from(shear) * (j as f64 / 8.0 - 0.5)).round() as isize);
                for i in 0..n {
                    let mut steps = [0.0f64; 9];
                    for ((st, line), off) in steps.iter_mut().zip(&lines).zip(offsets) {
                        let m = (i + pad).saturating_add_signed(off);
                        let after: f64 = line[m + 1..=m + k].iter().sum();
                        let before: f64 = line[m - k..m].iter().sum();
                        *st = (after - before) / k as f64;
                    }
                    let mut size = steps.map(f64::abs);
                    size.sort_by(f64::total_cmp);
                    any_way[i] = any_way[i].max(size[2]);
                    steps.sort_by(f64::total_cmp);
                    same_way[i] = same_way[i].max(steps[2].max(-steps[6]).max(0.0));
                }
            }
            (any_way, same_way)
        };
        let tilts = -max_shear..=max_shear;
        // A back printed with a fine pattern (a checker, a lattice, rows of dots) steps at nearly
        // every position, its lines as straight across the shape as a card's edge: there only
        // steps that go the same way all across count (a card's edge steps onto its border or
        // into its shadow all along), each taken between windows one period of the pattern
        // long, whose means the pattern does not change (a dotted back's rows step as strongly
        // as a card's edge from pixel to pixel). Elsewhere any step does: a white edge on white
        // stock is faint, and pips and indexes under it flip a few samples' sign.
        // (Whether a back is so printed is read square: the best of several tilts at every
        // position would make a plain face busy.)
        let square = profiles(1, 0..=0);
        let mut sorted = square.0.clone();
        sorted.sort_by(f64::total_cmp);
        let textured = sorted.get(n / 2).is_some_and(|m| *m >= MIN_EDGE_STEP);
        // read square, the tilted profile is the square one: not computed again
        let (any_way, steps) = if max_shear == 0 { square } else { profiles(1, tilts.clone()) };
        if !textured {
            return Ok(any_way);
        }
        let period = texture_period(&lines, pad, n);
        if self.debug_dir.is_some() {
            eprintln!("textured row at {c:?}: pattern period {period}");
        }
        if period == 1 {
            return Ok(steps);
        }
        // Steps between windows a period long miss a card's edge that is a thin white line
        // between two cards of the same print (the windows' means differ by the line alone:
        // Fortune 2025 seed 9's blue backs stepped 10 there, and three cards were fitted as
        // four). A pixel's step that the pattern does not repeat one or two periods (± 1)
        // either way is the edge too: a row of dots steps again a period on (or two: read
        // across fine dots, the nine lines agree on every other row), an edge does not.
        let windowed = profiles(period, tilts).1;
        Ok((0..n)
            .map(|i| {
                let repeated = [period - 1, period, period + 1]
                    .into_iter()
                    .flat_map(|d| [d, d + period])
                    .flat_map(|d| [i.checked_sub(d), Some(i + d).filter(|&j| j < n)])
                    .flatten()
                    .map(|j| steps[j])
                    .fold(0.0, f64::max);
                windowed[i].max(steps[i] - repeated)
            })
            .collect())
    }

    /// Where the felt shows through a row (plane pixels from its start, end exclusive): runs of
    /// positions where 6 of 9 samples across the shape have the felt's own colour (the empty
    /// table's, else the local felt's; its hue, and no lighter: a card's shadow on the felt is
    /// felt too), and the felt shows across 3/4 of the shape's height there. A card taken out
    /// of a spread hand leaves such a gap, which a shadow can bridge in the not-felt mask. Runs
    /// at the row's ends, wider than half a card, or in a row that is felt-coloured over a
    /// quarter of its length (a back printed in the felt's colour) are no gaps.
    fn felt_gaps(
        &self,
        lab: &Mat,
        felt: &Mat,
        c: (f64, f64),
        u: (f64, f64),
        long: f64,
        short: f64,
    ) -> Result<Vec<(usize, usize)>, LocateError> {
        let v = (-u.1, u.0);
        let n = long.floor().max(0.0) as usize;
        let (lab, felt) = (Pixels::new(lab, "gaps")?, Pixels::new(felt, "gaps")?);
        // whether the point `i` along the row and `sv` across it shows the felt's colour
        let felt_at = |i: usize, sv: f64| -> Result<bool, LocateError> {
            let t = i as f64 - long / 2.0;
            let (xi, yi) = ((c.0 + u.0 * t + v.0 * sv).round() as i32, (c.1 + u.1 * t + v.1 * sv).round() as i32);
            let (Some(px), Some(fe)) = (lab.at(xi, yi), felt.at(xi, yi)) else {
                return Ok(false);
            };
            let hue = (i32::from(px[1]) - i32::from(fe[1])).abs() + (i32::from(px[2]) - i32::from(fe[2])).abs();
            let chroma = (i32::from(fe[1]) - 128).abs() + (i32::from(fe[2]) - 128).abs();
            let limit = (chroma / 2).clamp(GAP_HUE_MIN, GAP_HUE);
            Ok(hue <= limit && i32::from(px[0]) <= i32::from(fe[0]) + GAP_LIGHTER)
        };
        // felt-coloured samples: 9 across the shape at each position along it
        let mut sample = vec![[false; 9]; n];
        for (i, row) in sample.iter_mut().enumerate() {
            for (j, hit) in row.iter_mut().enumerate() {
                *hit = felt_at(i, (j as f64 / 8.0 - 0.5) * 0.7 * short)?;
            }
        }
        // A gap a few pixels wide runs a pixel or two off the shape's axis from one end to the
        // other (the cards beside it lie a little askew): a sample counts within a pixel of it.
        let is_felt: Vec<bool> = (0..n)
            .map(|i| {
                let near = |j: usize| (i.saturating_sub(1)..=(i + 1).min(n - 1)).any(|k| sample[k][j]);
                (0..9).filter(|&j| near(j)).count() >= 6
            })
            .collect();
        if is_felt.iter().filter(|f| **f).count() as f64 > 0.25 * n as f64 {
            return Ok(Vec::new());
        }
        let cw = self.card_mm[0] * self.scale;
        let mut gaps = Vec::new();
        let mut i = 0;
        while i < n {
            if !is_felt[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < n && is_felt[i] {
                i += 1;
            }
            let inside = start as f64 >= GAP_MARGIN * cw && (i as f64) <= long - GAP_MARGIN * cw;
            if !inside || ((i - start) as f64) > 0.5 * cw {
                continue;
            }
            // The felt between two cards runs across the whole shape, but where a shadow joins
            // them; a face's red pips on a red felt lie inside the card's white margin.
            let (lo, hi) = (start.saturating_sub(1), i.min(n - 1));
            let steps = short.floor().max(1.0) as usize;
            let mut across = 0;
            for k in 0..=steps {
                let sv = k as f64 - short / 2.0;
                let mut hit = false;
                for at in lo..=hi {
                    if felt_at(at, sv)? {
                        hit = true;
                        break;
                    }
                }
                across += usize::from(hit);
            }
            if across as f64 >= GAP_ACROSS * (steps + 1) as f64 {
                gaps.push((start, i));
            }
        }
        Ok(gaps)
    }

    /// Share of white pixels in the card's interior (inset by 15 %, away from a back's border).
    fn white_share(&self, white: &Mat, c: (f64, f64), l: f64, s: f64, u: (f64, f64)) -> Result<f64, LocateError> {
        let (mut n, mut wsum) = (0u32, 0u32);
        let v = (-u.1, u.0);
        for i in 0..9 {
            for j in 0..7 {
                let tl = (f64::from(i) / 8.0 - 0.5) * 0.7 * l;
                let ts = (f64::from(j) / 6.0 - 0.5) * 0.7 * s;
                let (x, y) = (c.0 + u.0 * tl + v.0 * ts, c.1 + u.1 * tl + v.1 * ts);
                let (xi, yi) = (x.round() as i32, y.round() as i32);
                if xi < 0 || yi < 0 || xi >= white.cols() || yi >= white.rows() {
                    continue;
                }
                n += 1;
                if *white.at_2d::<u8>(yi, xi).map_err(cv("white"))? != 0 {
                    wsum += 1;
                }
            }
        }
        Ok(if n == 0 { 0.0 } else { f64::from(wsum) / f64::from(n) })
    }
}

/// The pixels of a continuous 8-bit, 3-channel Mat, read without OpenCV's checks per call
/// (row fitting samples the plane a few thousand times per hand).
struct Pixels<'a> {
    data: &'a [u8],
    cols: i32,
    rows: i32,
}

impl<'a> Pixels<'a> {
    fn new(mat: &'a Mat, context: &'static str) -> Result<Pixels<'a>, LocateError> {
        if mat.typ() != core::CV_8UC3 {
            return Err(LocateError::Plane {
                context,
                source: opencv::Error::new(core::StsBadArg, format!("8-bit BGR/Lab expected, got type {}", mat.typ())),
            });
        }
        Ok(Pixels { data: mat.data_bytes().map_err(cv(context))?, cols: mat.cols(), rows: mat.rows() })
    }

    /// The pixel at column `x`, row `y`; none outside the image.
    fn at(&self, x: i32, y: i32) -> Option<[u8; 3]> {
        if x < 0 || y < 0 || x >= self.cols || y >= self.rows {
            return None;
        }
        let i = 3 * (y as usize * self.cols as usize + x as usize);
        Some([self.data[i], self.data[i + 1], self.data[i + 2]])
    }
}

/// `frame` box-averaged to 1/COARSE of its size, in Lab.
fn coarse_frame(frame: &Mat, context: &'static str) -> Result<Mat, LocateError> {
    // halvings: two took a third of the time of one quartering (OpenCV 4.6, one core), same boxes
    let halve = |m: &Mat| {
        let mut half = Mat::default();
        let size = Size::new((m.cols() / 2).max(1), (m.rows() / 2).max(1));
        imgproc::resize(m, &mut half, size, 0.0, 0.0, imgproc::INTER_AREA).map(|_| half).map_err(cv(context))
    };
    let mut small = halve(frame)?;
    for _ in 1..COARSE.trailing_zeros() {
        small = halve(&small)?;
    }
    let mut lab = Mat::default();
    imgproc::cvt_color_def(&small, &mut lab, imgproc::COLOR_BGR2Lab).map_err(cv(context))?;
    Ok(lab)
}

/// Sets every pixel that an outer contour of `mask` encloses.
fn fill_holes(mask: &mut Mat) -> Result<(), LocateError> {
    let mut contours: Vector<Vector<CvPoint>> = Vector::new();
    imgproc::find_contours_def(mask, &mut contours, imgproc::RETR_EXTERNAL, imgproc::CHAIN_APPROX_SIMPLE)
        .map_err(cv("fill"))?;
    fill_contours(mask, &contours, CvPoint::new(0, 0), "fill")
}

/// Sets every pixel of `mask` inside any of `contours`, each point shifted by `offset`.
fn fill_contours(
    mask: &mut Mat,
    contours: &Vector<Vector<CvPoint>>,
    offset: CvPoint,
    context: &'static str,
) -> Result<(), LocateError> {
    imgproc::draw_contours(
        mask,
        contours,
        -1,
        Scalar::all(255.0),
        imgproc::FILLED,
        imgproc::LINE_8,
        &core::no_array(),
        i32::MAX,
        offset,
    )
    .map_err(cv(context))
}

/// `mask` opened with a disc `diameter` plane pixels wide (odd, at least 3): what is narrower
/// goes.
fn open_disc(mask: &impl core::ToInputArray, diameter: f64, context: &'static str) -> Result<Mat, LocateError> {
    let k = (diameter.round() as i32).max(3) | 1;
    open_with(mask, imgproc::MORPH_ELLIPSE, Size::new(k, k), context)
}

/// `mask` opened with a structuring element of OpenCV `shape` (`MORPH_*`) and `size`.
fn open_with(
    mask: &impl core::ToInputArray,
    shape: i32,
    size: Size,
    context: &'static str,
) -> Result<Mat, LocateError> {
    let kernel = imgproc::get_structuring_element(shape, size, CvPoint::new(-1, -1)).map_err(cv(context))?;
    let mut opened = Mat::default();
    imgproc::morphology_ex(
        mask,
        &mut opened,
        imgproc::MORPH_OPEN,
        &kernel,
        CvPoint::new(-1, -1),
        1,
        core::BORDER_CONSTANT,
        Scalar::all(0.0),
    )
    .map_err(cv(context))?;
    Ok(opened)
}

/// Foreground running unbroken this many card widths along the table's straight edge is the rail.
const RAIL_RUN_CARDS: f64 = 5.0;
/// How far from the table's straight edge (mm) the rail is looked for.
const RAIL_BAND_MM: f64 = 80.0;

/// |cos| of the angle between a shape's side and a hand zone's long axis above which that side
/// runs along the zone (within ~30°).
const ZONE_AXIS_COS: f64 = 0.87;
/// Largest |Δa| + |Δb| (Lab, 8-bit) from the felt of a position where the felt shows through a row,
/// at most half the felt's own |a| + |b| from grey but never under [`GAP_HUE_MIN`]: on a dull
/// teal felt (a 111, b 122: 23 from grey) a grey back's shadow is within 24 of the felt, and
/// the shadow under a packet's rotated middle card cut the packet at it.
const GAP_HUE: i32 = 24;
/// …the least of that limit (a grey felt: the video's own colour noise).
const GAP_HUE_MIN: i32 = 8;
/// …and how much lighter than the felt it may be.
const GAP_LIGHTER: i32 = 8;
/// Share of a gap's cross-section (the shape's whole height) the felt shows in.
const GAP_ACROSS: f64 = 0.75;
/// A gap lies at least this share of a card's width inside a row's ends.
const GAP_MARGIN: f64 = 0.5;

/// Smallest step (8-bit lightness) that counts as an edge in a row's profile.
const MIN_EDGE_STEP: f64 = 6.0;
/// Steepest tilt (tangent) of a card's edge against its row's rectangle that a row's profile
/// reads the edge along.
const EDGE_TILT: f64 = 0.1;
/// How far (share of a card's width) a card's edge may sit from the regular spacing.
const ROW_SNAP: f64 = 0.1;
/// A card's busy border after its edge, share of its width.
const ROW_BORDER: f64 = 0.3;
/// Closest spacing of a row's cards, share of a card's width: dealers spread a hand so that
/// every index shows, and a tighter comb fits any card's printed border.
const ROW_MIN_SPACING: f64 = 0.45;
/// What a face-up row's comb of as many cards as the game deals the row's zone earns, in the
/// row's inner noise levels ([`fit_row`]): as much as two edges stepping twice the noise.
const ROW_HAND_SIZE_PRIOR: f64 = 2.0;

/// Longest period (plane pixels) of a back's printed pattern that [`texture_period`] looks for.
const TEXTURE_MAX_PERIOD: usize = 12;
/// Least self-correlation of a back's printed pattern at its period (and least negative one
/// half a period on). The edges of the cards the pattern lies on weaken it: a dotted back
/// under two card edges measured 0.22.
const TEXTURE_MIN_CORRELATION: f64 = 0.15;

/// The period of the pattern printed along `lines` (positions `pad..pad + n`): the lag, from 3
/// to [`TEXTURE_MAX_PERIOD`], at which the mean line over the shape's middle (its ends are card
/// against felt), less its moving mean over 2 × [`TEXTURE_MAX_PERIOD`] + 1 positions, best
/// correlates with itself, at least [`TEXTURE_MIN_CORRELATION`], while half that lag
/// correlates at most its negative and no divisor of it correlates; 1 where no lag does (no
/// regular pattern).
fn texture_period(lines: &[Vec<f64>], pad: usize, n: usize) -> usize {
    let half = TEXTURE_MAX_PERIOD;
    if n < 6 * half {
        return 1;
    }
    let mean: Vec<f64> =
        (0..lines[0].len()).map(|m| lines.iter().map(|l| l[m]).sum::<f64>() / lines.len() as f64).collect();
    let middle = pad + n / 8..pad + n - n / 8;
    let detrended: Vec<f64> = middle
        .map(|m| {
            let (a, b) = (m.saturating_sub(half), (m + half + 1).min(mean.len()));
            mean[m] - mean[a..b].iter().sum::<f64>() / (b - a) as f64
        })
        .collect();
    let energy: f64 = detrended.iter().map(|x| x * x).sum();
    if energy <= 0.0 {
        return 1;
    }
    // the self-correlation at each lag (index), up to TEXTURE_MAX_PERIOD
    let correlation: Vec<f64> = (0..=TEXTURE_MAX_PERIOD)
        .map(|lag| {
            let c: f64 = detrended.iter().zip(&detrended[lag..]).map(|(a, b)| a * b).sum();
            c / energy * detrended.len() as f64 / (detrended.len() - lag) as f64
        })
        .collect();
    // A pattern correlates at its period and against itself half a period on; a smooth line
    // correlates at short lags too, but never negatively at half of them. A finer pattern
    // correlates at the multiples of its period as well: a lag is a period only if none of its
    // divisors is one (a two-pixel flicker is no pattern of 6).
    let repeats = |lag: usize| correlation[lag] >= TEXTURE_MIN_CORRELATION;
    (3..=TEXTURE_MAX_PERIOD)
        .filter(|&lag| repeats(lag) && correlation[lag.div_ceil(2)] <= -TEXTURE_MIN_CORRELATION)
        .filter(|&lag| (2..lag).all(|d| lag % d != 0 || !repeats(d)))
        .max_by(|&a, &b| correlation[a].total_cmp(&correlation[b]))
        .unwrap_or(1)
}

/// [`fit_row`] for a row the felt shows through at `gaps` (see [`PlaneFinder::felt_gaps`]):
/// each part between gaps is one card when it is about a card wide, else a row of its own
/// (a spread hand with a card taken out is no longer regular). Scores add up. The zone's
/// `hand_size` is the whole row's, so it counts only where no gap parts it.
fn fit_row_with_gaps(
    profile: &[f64],
    gaps: &[(usize, usize)],
    cw: f64,
    backs: bool,
    hand_size: Option<usize>,
) -> (f64, Vec<f64>) {
    if gaps.is_empty() {
        return fit_row(profile, profile.len() as f64, cw, backs, hand_size);
    }
    let mut bounds = vec![0usize];
    for &(a, b) in gaps {
        bounds.push(a);
        bounds.push(b);
    }
    bounds.push(profile.len());
    let (mut score, mut lefts) = (0.0, Vec::new());
    for part in bounds.chunks_exact(2) {
        let (a, b) = (part[0], part[1]);
        let len = (b - a) as f64;
        if (len - cw).abs() <= SIZE_TOLERANCE * cw {
            lefts.push(a as f64 + (len - cw) / 2.0);
        } else if len > cw * (1.0 + SIZE_TOLERANCE) {
            let (s, l) = fit_row(&profile[a..b], len, cw, backs, None);
            score += s;
            lefts.extend(l.into_iter().map(|x| x + a as f64));
        }
        // a part narrower than a card is the rest of a card's border or its shadow
    }
    (score, lefts)
}

/// The left sides (plane pixels from the row's start) of the cards of a row `long` pixels long,
/// cards `cw` wide, from its edge `profile` ([`PlaneFinder::edge_profile`]), with the fit's score
/// (higher is better; rows fitted along different axes of one shape are compared by it).
///
/// Every row of k cards at spacing d = (long − cw)/(k − 1) is tried, read either way (each later
/// card on the previous one's right: the inner edges are left sides; or on its left: right
/// sides). A candidate earns each inner edge's step above the noise level (the edge may sit a
/// little off the regular spacing, where the dealer's hand put it) and pays for every strong step
/// it leaves unexplained. A card's border (a back's printed frame, a face's index column) is
/// busy with steps for a quarter of a card after the edge it lies on top with, so steps there
/// are explained by that edge; steps in the middle of a visible card are not.
///
/// A row of `backs` (no face up) shows every card's edge as a clear step: there an edge the
/// comb puts where the profile has no step at all costs the strong level, and the border is
/// measured from where the edge was found (a San Gong packet lands unevenly). On a face-up row
/// the inner edges are faint and a face's index column is the stronger step, so both would let
/// a comb of too few cards win (seen on stud reveals: a round split in two).
///
/// On a face-up row in a hand zone, the comb of as many cards as the game deals there
/// (`hand_size`, from the calibration's ruleset) earns [`ROW_HAND_SIZE_PRIOR`] times the noise
/// level. A white card's edge on a white card can be fainter than the print beside it, and a
/// comb of one card more then wins by putting each extra edge on a print step: Q Poker seed 13's
/// three-card hands of `kde-nicu-ornamental` faces, inner edges stepping 4–8 (under the noise
/// level of 8.4), were measured as four cards, each index column 8 px past its true edge taken
/// for an edge; the middle card's two pieces, each a fifth of a card off, were never read. The
/// prior decides only between combs that explain the profile about as well: a row whose edges
/// show one card more still wins, and the deal, where the tracker counts cards as they arrive,
/// is rows of backs, where it does not apply.
fn fit_row(profile: &[f64], long: f64, cw: f64, backs: bool, hand_size: Option<usize>) -> (f64, Vec<f64>) {
    let n = profile.len();
    if n < 3 {
        return (f64::NEG_INFINITY, vec![0.0]);
    }
    let peaks: Vec<(usize, f64)> = (1..n - 1)
        .filter(|&i| profile[i] >= profile[i - 1] && profile[i] >= profile[i + 1] && profile[i] > MIN_EDGE_STEP)
        .map(|i| (i, profile[i]))
        .collect();
    // Two levels. A predicted edge earns its step above the inner steps' level: the row's two
    // ends are card against felt, far stronger than a white card's edge on another white card,
    // and measured against them every inner edge of a face-up hand fell short, so the comb with
    // the fewest cards won. A step left unexplained costs only above the whole row's level: a
    // face's pips and index are many weak steps, and explaining them is no reason for a card.
    let end = ROW_SNAP * cw;
    let level = |inner_only: bool| {
        let strongest = peaks
            .iter()
            .filter(|p| !inner_only || (p.0 as f64 > end && (p.0 as f64) < long - end))
            .map(|p| p.1)
            .fold(0.0, f64::max);
        (0.35 * strongest).max(MIN_EDGE_STEP)
    };
    let (noise, strong) = (level(true), level(false));
    let border = ROW_BORDER * cw;
    let mut best: Option<(f64, Vec<f64>)> = None;
    for k in 2..=8usize {
        let d = (long - cw) / (k - 1) as f64;
        if !(ROW_MIN_SPACING * cw..=1.1 * cw).contains(&d) {
            continue;
        }
        let w = (ROW_SNAP * cw).min(0.25 * d);
        for right_sides in [false, true] {
            let predicted: Vec<f64> =
                (1..k).map(|i| if right_sides { cw + (i - 1) as f64 * d } else { i as f64 * d }).collect();
            let mut score = if !backs && hand_size == Some(k) { ROW_HAND_SIZE_PRIOR * noise } else { 0.0 };
            let mut snapped = Vec::with_capacity(predicted.len());
            for &p in &predicted {
                let (a, b) = (((p - w).max(0.0)) as usize, ((p + w).ceil() as usize).min(n - 1));
                let (mut at, mut v) = (p, 0.0);
                for (i, &x) in profile.iter().enumerate().take(b + 1).skip(a) {
                    if x > v {
                        (at, v) = (i as f64, x);
                    }
                }
                score += v - noise;
                if backs && v < MIN_EDGE_STEP {
                    // no edge at all where the comb puts one: evidence against this many cards
                    score -= strong;
                }
                // On a face-up row an edge stepping under the noise level was not seen: it lies
                // where the spacing puts it, not on the print step nearby (Q Poker seed 13's
                // 4♦ measured 4 plane px onto the K♣ under it, and its index never read).
                snapped.push(if backs || v >= noise { at } else { p });
            }
            // Where each visible card's border lies: after a left side, before a right side
            // (the row's two ends included), measured from where the edge was found.
            let explained = |x: f64| {
                let ends = [0.0, long];
                (if backs { &snapped } else { &predicted }).iter().chain(ends.iter()).any(|&e| {
                    let (lo, hi) =
                        if e == 0.0 || (!right_sides && e != long) { (e - w, e + border) } else { (e - border, e + w) };
                    (lo..=hi).contains(&x)
                })
            };
            for &(i, v) in &peaks {
                if v > strong && !explained(i as f64) {
                    score -= v - strong;
                }
            }
            // No card reaches beyond the row's ends (card against felt, the surest steps of the
            // row): a whole card's inner edge may snap to its face's printed frame line, a few
            // pixels inside the edge, and would push the card out past the end by as much.
            let lefts: Vec<f64> = if right_sides {
                snapped.iter().map(|r| r - cw).chain(std::iter::once(long - cw)).collect()
            } else {
                std::iter::once(0.0).chain(snapped.iter().copied()).collect()
            };
            let lefts: Vec<f64> = lefts.into_iter().map(|l| l.clamp(0.0, (long - cw).max(0.0))).collect();
            if best.as_ref().map_or(true, |(s, _)| score > *s) {
                best = Some((score, lefts));
            }
        }
    }
    best.unwrap_or_else(|| (f64::NEG_INFINITY, vec![0.0]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::Polygon;
    use crate::locate::polygon_iou;
    use crate::rules::RulesetId;
    use std::path::Path;

    fn geometry() -> TableGeometry {
        let c =
            layout::simulated_calibration(RulesetId::Fortune3cp2025, "T1", 1920, 1080, &layout::default_pose(), None);
        c.validate(Path::new("mem.json")).unwrap()
    }

    /// Draws a card (table mm, angle in radians) filled with `bgr`, with a 1 px grey outline.
    fn draw_card(img: &mut Mat, g: &TableGeometry, c: Point, angle: f64, bgr: [f64; 3]) -> [Point; 4] {
        draw_card_bordered(img, g, c, angle, bgr, 90.0, 1)
    }

    /// [`draw_card`] with a border of grey level `border` and `thickness` pixels.
    fn draw_card_bordered(
        img: &mut Mat,
        g: &TableGeometry,
        c: Point,
        angle: f64,
        bgr: [f64; 3],
        border: f64,
        thickness: i32,
    ) -> [Point; 4] {
        let [w, h] = g.calibration.card_size_mm;
        let outline = Polygon::rect(c, w, h, angle);
        let px: Vec<Point> = outline.0.iter().map(|&p| g.table_to_image(p).unwrap()).collect();
        let pts: Vector<CvPoint> = px.iter().map(|p| CvPoint::new(p.x.round() as i32, p.y.round() as i32)).collect();
        imgproc::fill_convex_poly_def(img, &pts, Scalar::new(bgr[0], bgr[1], bgr[2], 0.0)).unwrap();
        imgproc::polylines(
            img,
            &Vector::<Vector<CvPoint>>::from_iter([pts]),
            true,
            Scalar::all(border),
            thickness,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        [px[0], px[1], px[2], px[3]]
    }

    #[test]
    fn finds_single_and_overlapping_cards_with_their_faces() {
        let g = geometry();
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let mut img =
            Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(40.0, 110.0, 30.0, 0.0)).unwrap();
        let mut truth = vec![
            (draw_card(&mut img, &g, Point::new(-300.0, 500.0), 0.3, [245.0, 245.0, 245.0]), true),
            (draw_card(&mut img, &g, Point::new(250.0, 450.0), -0.5, [40.0, 40.0, 200.0]), false),
        ];
        // a hand: three face-up cards, each overlapping the previous by 40 %
        for i in 0..3 {
            let c = Point::new(-60.0 + f64::from(i) * 0.6 * 63.5, 650.0);
            truth.push((draw_card(&mut img, &g, c, 0.0, [240.0, 240.0, 240.0]), true));
        }
        let finder = PlaneFinder::new(&g).unwrap();
        let found = finder.find(&img).unwrap();
        assert_eq!(found.len(), truth.len(), "found {found:?}");
        for (quad, face_up) in &truth {
            let best =
                found.iter().max_by(|a, b| polygon_iou(&a.quad, quad).total_cmp(&polygon_iou(&b.quad, quad))).unwrap();
            let iou = polygon_iou(&best.quad, quad);
            // overlapped cards are measured from their visible edge: IoU ≥ 0.7 is the target
            assert!(iou >= 0.7, "IoU {iou:.2} for {quad:?}: best {best:?}");
            assert_eq!(best.face_up, *face_up, "{best:?}");
        }
    }

    /// A seat's hand zone: its row direction (unit), that direction's angle and its centre (mm).
    fn seat_row(g: &TableGeometry, seat: u8) -> ((f64, f64), f64, Point) {
        let zone = g.calibration.zones.iter().find(|z| z.kind == ZoneKind::Hand { seat }).unwrap();
        let (ax, ay) = zone.polygon_mm.long_axis(1.2).unwrap();
        ((ax, ay), ay.atan2(ax), zone.polygon_mm.centroid())
    }

    /// Asserts that exactly the `truth` cards were found, each with IoU ≥ 0.6 (`what` names the case).
    fn assert_found(found: &[PlaneCard], truth: &[[Point; 4]], what: &str) {
        assert_eq!(found.len(), truth.len(), "{what}: found {found:?}");
        for quad in truth {
            let iou = found.iter().map(|f| polygon_iou(&f.quad, quad)).fold(0.0, f64::max);
            assert!(iou >= 0.6, "{what}: IoU {iou:.2} for {quad:?}: found {found:?}");
        }
    }

    /// Two backs overlapping by half a width make a nearly square shape: the seat's hand zone
    /// says which way its row runs (seen on Fortune hands at 1080p, cut crosswise into two
    /// halves of both cards, which the tracker then counted as extra cards).
    #[test]
    fn two_cards_overlapping_by_half_are_cut_along_their_hand_zones_row() {
        let g = geometry();
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        for seat in [1u8, 2, 4] {
            let ((ax, ay), angle, centre) = seat_row(&g, seat);
            let mut img =
                Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(40.0, 110.0, 30.0, 0.0)).unwrap();
            let at = |i: f64| Point::new(centre.x + i * 0.25 * 63.5 * ax, centre.y + i * 0.25 * 63.5 * ay);
            // their shadow, cast along the cards' height, makes the shape as tall as it is wide
            for i in [-1.0, 1.0] {
                let c = at(i);
                draw_card(&mut img, &g, Point::new(c.x - 12.0 * ay, c.y + 12.0 * ax), angle, [10.0, 30.0, 8.0]);
            }
            let mut truth = Vec::new();
            for i in [-1.0, 1.0] {
                let c = at(i);
                // a back: dark red with a light printed frame inside its border
                truth.push(draw_card_bordered(&mut img, &g, c, angle, [40.0, 40.0, 170.0], 200.0, 3));
            }
            let found = PlaneFinder::new(&g).unwrap().find(&img).unwrap();
            assert_found(&found, &truth, &format!("seat {seat}"));
        }
    }

    /// A card taken out of a spread hand leaves a gap the felt shows through; the hand's shadow
    /// joins the two parts into one shape, which a regular comb read as the five cards that lay
    /// there before (seen on a stud `card_removed` session: the removal went unseen).
    #[test]
    fn a_hand_with_a_card_taken_out_is_cut_at_the_gap() {
        let g = geometry();
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let ((ax, ay), angle, centre) = seat_row(&g, 3);
        let at = |i: f64, down: f64| {
            let t = (i - 2.0) * 0.6 * 63.5;
            Point::new(centre.x + t * ax - down * ay, centre.y + t * ay + down * ax)
        };
        let mut img =
            Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(120.0, 60.0, 20.0, 0.0)).unwrap();
        // the hand's shadow along its lower edge, across the gap as well
        let shadow = Polygon::rect(at(2.0, 49.0), 4.0 * 0.6 * 63.5 + 63.5, 10.0, angle);
        let pts: Vector<CvPoint> = shadow
            .0
            .iter()
            .map(|&p| g.table_to_image(p).unwrap())
            .map(|p| CvPoint::new(p.x.round() as i32, p.y.round() as i32))
            .collect();
        imgproc::fill_convex_poly_def(&mut img, &pts, Scalar::new(60.0, 30.0, 10.0, 0.0)).unwrap();
        let mut truth = Vec::new();
        for i in [0.0, 2.0, 3.0, 4.0] {
            truth.push(draw_card_bordered(&mut img, &g, at(i, 0.0), angle, [40.0, 40.0, 170.0], 250.0, 3));
        }
        let mut finder = PlaneFinder::new(&g).unwrap();
        let empty = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(120.0, 60.0, 20.0, 0.0)).unwrap();
        finder.set_reference(&empty).unwrap();
        let found = finder.find(&img).unwrap();
        assert_found(&found, &truth, "a hand with its second card taken out");
    }

    /// San Gong's packet of three grey backs on a dull teal felt (the colours of a seed 7
    /// session): the shadow each card casts on the one below it is grey, within the felt's hue
    /// limit of a felt this dull unless the limit follows the felt's own colour, and the packet
    /// was cut at the shadows into one card.
    #[test]
    fn a_grey_backs_shadow_on_a_dull_felt_is_no_gap() {
        let g = geometry();
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let ((ax, ay), angle, centre) = seat_row(&g, 3);
        let at = |i: f64, along: f64| {
            let t = (i - 1.0) * 0.6 * 63.5 + along;
            Point::new(centre.x + t * ax, centre.y + t * ay)
        };
        let felt = Scalar::new(73.0, 72.0, 15.0, 0.0);
        let mut img = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, felt).unwrap();
        let mut truth = Vec::new();
        for i in [0.0, 1.0, 2.0] {
            if i > 0.0 {
                // the shadow: 8 mm of dark grey beside the card's left side, on the card below
                draw_card_bordered(&mut img, &g, at(i, -8.0), angle, [55.0, 55.0, 55.0], 55.0, 1);
            }
            truth.push(draw_card_bordered(&mut img, &g, at(i, 0.0), angle, [76.0, 76.0, 76.0], 250.0, 3));
        }
        let mut finder = PlaneFinder::new(&g).unwrap();
        finder.set_reference(&Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, felt).unwrap()).unwrap();
        let found = finder.find(&img).unwrap();
        assert_found(&found, &truth, "a packet of three grey backs on a teal felt");
    }

    #[test]
    fn with_the_empty_table_a_fixture_is_no_card_and_a_card_in_glare_is_found() {
        let g = geometry();
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let mut empty =
            Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(40.0, 110.0, 30.0, 0.0)).unwrap();
        // a soft glare spot and a card-sized, card-coloured fixture (a discard holder)
        let spot = g.table_to_image(Point::new(-300.0, 500.0)).unwrap();
        let centre = CvPoint::new(spot.x.round() as i32, spot.y.round() as i32);
        imgproc::circle(&mut empty, centre, 160, Scalar::new(150.0, 205.0, 150.0, 0.0), -1, imgproc::LINE_8, 0)
            .unwrap();
        let mut soft = Mat::default();
        imgproc::gaussian_blur_def(&empty, &mut soft, Size::new(0, 0), 40.0).unwrap();
        let fixture = draw_card(&mut soft, &g, Point::new(250.0, 450.0), -0.5, [40.0, 40.0, 200.0]);
        let mut frame = soft.try_clone().unwrap();
        let card = draw_card(&mut frame, &g, Point::new(-300.0, 500.0), 0.3, [40.0, 40.0, 200.0]);
        let near = |found: &[PlaneCard], quad: &[Point; 4]| found.iter().any(|c| polygon_iou(&c.quad, quad) >= 0.8);

        let mut finder = PlaneFinder::new(&g).unwrap();
        assert!(!finder.has_reference());
        let before = finder.find(&frame).unwrap();
        assert!(near(&before, &fixture), "without the empty table the fixture passes for a card: {before:?}");
        finder.set_reference(&soft).unwrap();
        let after = finder.find(&frame).unwrap();
        assert_eq!(after.len(), 1, "{after:?}");
        assert!(near(&after, &card), "{after:?}");

        // a reference from another camera (size) is refused, naming the fix
        let other = Mat::new_rows_cols_with_default(360, 640, core::CV_8UC3, Scalar::all(0.0)).unwrap();
        let e = finder.set_reference(&other).unwrap_err().to_string();
        assert!(e.contains("640×360") && e.contains("tablecam presence reference"), "{e}");
    }

    #[test]
    fn with_the_empty_table_only_what_changed_is_measured_and_a_table_lit_up_is_measured_whole() {
        let g = geometry();
        let felt = Scalar::new(40.0, 110.0, 30.0, 0.0);
        let (empty, finder) = empty_table(&g, felt);
        let coarse = &finder.reference.as_ref().unwrap().coarse;
        let plane_area = f64::from(finder.map_x.cols() * finder.map_x.rows());
        let area = |runs: &[core::Rect]| f64::from(runs.iter().map(|r| r.area()).sum::<i32>()) / plane_area;
        assert!(finder.changed_runs(&empty, coarse).unwrap().is_empty());
        assert!(finder.find(&empty).unwrap().is_empty());

        let mut frame = empty.try_clone().unwrap();
        let at = Point::new(150.0, 400.0);
        let card = draw_card(&mut frame, &g, at, 0.2, [230.0, 230.0, 230.0]);
        let runs = finder.changed_runs(&frame, coarse).unwrap();
        let share = area(&runs);
        assert!(share > 0.0 && share < 0.05, "one card should mark a few tiles, not {share:.3} of the plane");
        // every plane pixel of the card lies in a measured run
        let [w, h] = g.calibration.card_size_mm;
        for p in Polygon::rect(at, w, h, 0.2).0 {
            let (x, y) = ((p.x - finder.origin.x) * finder.scale, (p.y - finder.origin.y) * finder.scale);
            assert!(runs.iter().any(|r| r.contains(CvPoint::new(x as i32, y as i32))), "corner {p:?} not measured");
        }
        let found = finder.find(&frame).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(polygon_iou(&found[0].quad, &card) >= 0.8 && found[0].face_up, "{found:?}");

        // The light came up over the whole table: every tile differs from the empty table, all
        // are measured, and the felt is still felt.
        let mut lit = Mat::default();
        core::add_def(&frame, &Scalar::all(45.0), &mut lit).unwrap();
        assert_eq!(area(&finder.changed_runs(&lit, coarse).unwrap()), 1.0);
        let found = finder.find(&lit).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(polygon_iou(&found[0].quad, &card) >= 0.8, "{found:?}");
    }

    /// A table of felt colour `felt` (BGR) with nothing on it, and a finder that has it as its
    /// empty table.
    fn empty_table(g: &TableGeometry, felt: Scalar) -> (Mat, PlaneFinder) {
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let empty = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, felt).unwrap();
        let mut finder = PlaneFinder::new(g).unwrap();
        finder.set_reference(&empty).unwrap();
        (empty, finder)
    }

    #[test]
    fn a_back_of_the_felts_colour_is_found_by_its_light_border() {
        let g = geometry();
        let (empty, finder) = empty_table(&g, Scalar::new(40.0, 40.0, 150.0, 0.0));
        let mut frame = empty.try_clone().unwrap();
        // a red back on red felt: only its thin white border differs from the empty table
        let quad = draw_card_bordered(&mut frame, &g, Point::new(-150.0, 500.0), 0.4, [44.0, 42.0, 156.0], 235.0, 2);
        let found = finder.find(&frame).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(polygon_iou(&found[0].quad, &quad) >= 0.8, "{found:?}");
        assert!(!found[0].face_up, "{found:?}");
    }

    /// Three backs printed with rows of dots (a pitch of 8 mm, as kde and aisleriot decks print
    /// them), each on the previous one's shadow: every row of dots steps as strongly as a card's
    /// edge from one pixel to the next, and a comb of four cards fitted the dots (a Fortune
    /// hand without a bet, aisleriot-simplistic: four cards, then a false removal).
    #[test]
    fn a_row_of_dotted_backs_is_counted_by_its_card_edges_not_by_its_rows_of_dots() {
        let g = geometry();
        let (empty, finder) = empty_table(&g, Scalar::new(120.0, 50.0, 20.0, 0.0));
        let [cw, ch] = g.calibration.card_size_mm;
        for seat in [3u8, 7] {
            let ((ax, ay), angle, centre) = seat_row(&g, seat);
            let mut img = empty.try_clone().unwrap();
            let to_px = |p: Point| {
                let q = g.table_to_image(p).unwrap();
                CvPoint::new(q.x.round() as i32, q.y.round() as i32)
            };
            let mut truth = Vec::new();
            for i in 0..3 {
                let t = (f64::from(i) - 1.0) * 0.7 * cw;
                let c = Point::new(centre.x + t * ax, centre.y + t * ay);
                if i > 0 {
                    // the shadow this card casts on the previous one, just past its edge
                    let s = Point::new(c.x - 2.5 * ax, c.y - 2.5 * ay);
                    draw_card_bordered(&mut img, &g, s, angle, [150.0, 150.0, 150.0], 150.0, 1);
                }
                truth.push(draw_card_bordered(&mut img, &g, c, angle, [235.0, 235.0, 235.0], 250.0, 1));
                // rows of blue dots inside a 5 mm white border, across the card's width
                let (vx, vy) = (-ay, ax);
                let mut a = -cw / 2.0 + 5.0;
                while a <= cw / 2.0 - 5.0 {
                    let mut b = -ch / 2.0 + 5.0;
                    while b <= ch / 2.0 - 5.0 {
                        let p = Point::new(c.x + a * ax + b * vx, c.y + a * ay + b * vy);
                        imgproc::circle(
                            &mut img,
                            to_px(p),
                            2,
                            Scalar::new(200.0, 120.0, 90.0, 0.0),
                            -1,
                            imgproc::LINE_8,
                            0,
                        )
                        .unwrap();
                        b += 4.0;
                    }
                    a += 8.0;
                }
            }
            let found = finder.find(&img).unwrap();
            assert_found(&found, &truth, &format!("seat {seat}: three dotted backs"));
        }
    }

    /// Where the i-th card of a test hand lies: along the row, along the cards' height (mm), turned (rad).
    type Place<'a> = &'a dyn Fn(usize) -> (f64, f64, f64);
    /// Draws a card's printed back, given its centre, row axis and across axis (mm).
    type Print<'a> = &'a dyn Fn(&mut Mat, Point, (f64, f64), (f64, f64));

    /// Three blue backs edged by a thin white line, on a red felt (Fortune 2025 seed 9's
    /// `kde-gm-paris` backs, frames 760, 7770 and 13380, each hand measured as four cards).
    fn white_edged_backs(
        g: &TableGeometry,
        seat: u8,
        place: Place,
        print: Print,
    ) -> (Mat, PlaneFinder, Vec<[Point; 4]>) {
        let (empty, finder) = empty_table(g, Scalar::new(40.0, 30.0, 150.0, 0.0));
        let ((ax, ay), angle, centre) = seat_row(g, seat);
        let mut img = empty.try_clone().unwrap();
        let mut truth = Vec::new();
        for i in 0..3 {
            // along the row, along the cards' height, turned
            let (t, down, turn) = place(i);
            let c = Point::new(centre.x + t * ax - down * ay, centre.y + t * ay + down * ax);
            let a = angle + turn;
            truth.push(draw_card_bordered(&mut img, g, c, a, [150.0, 60.0, 40.0], 250.0, 1));
            print(&mut img, c, (a.cos(), a.sin()), (-a.sin(), a.cos()));
        }
        (img, finder, truth)
    }

    /// A light mark of `radius` px at `p` (table mm).
    fn mark(img: &mut Mat, g: &TableGeometry, p: Point, radius: i32) {
        let q = g.table_to_image(p).unwrap();
        let at = CvPoint::new(q.x.round() as i32, q.y.round() as i32);
        imgproc::circle(img, at, radius, Scalar::new(210.0, 150.0, 130.0, 0.0), -1, imgproc::LINE_8, 0).unwrap();
    }

    /// A hand's cards never lie quite parallel, and a hand staggered along the cards' height
    /// tilts its rectangle: the thin white edges then run askew across the row, and read square
    /// no 7 of 9 samples stepped at one place (a step of 5 where the edge steps 77 read along
    /// it). Where the print is regular, steps between windows a period long hardly see a line
    /// between two cards of the same print.
    #[test]
    fn white_edged_backs_are_counted_by_their_thin_edges_askew_or_on_a_regular_print() {
        let g = geometry();
        let [cw, ch] = g.calibration.card_size_mm;
        // an irregular print: light specks scattered over the card (a fixed pseudo-random walk)
        let specks = |img: &mut Mat, c: Point, u: (f64, f64), v: (f64, f64)| {
            let mut x = 12345u32;
            let mut next = || {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                f64::from((x >> 8) % 1000) / 1000.0 - 0.5
            };
            for _ in 0..260 {
                let (a, b) = (next() * (cw - 8.0), next() * (ch - 8.0));
                mark(img, &g, Point::new(c.x + a * u.0 + b * v.0, c.y + a * u.1 + b * v.1), 1);
            }
        };
        // a regular print: light dots 8 mm apart, across and along the card's height
        let lattice = |img: &mut Mat, c: Point, u: (f64, f64), v: (f64, f64)| {
            let mut a = -cw / 2.0 + 5.0;
            while a <= cw / 2.0 - 5.0 {
                let mut b = -ch / 2.0 + 5.0;
                while b <= ch / 2.0 - 5.0 {
                    mark(img, &g, Point::new(c.x + a * u.0 + b * v.0, c.y + a * u.1 + b * v.1), 2);
                    b += 8.0;
                }
                a += 8.0;
            }
        };
        // seat 2 of frame 760: strips of 0.72 and 0.6 of a width, each card 6 mm further down
        // the row's height than the last and turned 2–3° from it
        let askew = |i: usize| ([0.0, 0.72, 1.32][i] * cw, [0.0, -6.0, -10.0][i], [0.06, 0.01, -0.005][i]);
        let square = |i: usize| (i as f64 * 0.68 * cw, 0.0, 0.0);
        let cases: [(&str, Place, Print); 2] =
            [("askew, irregular print", &askew, &specks), ("square, regular print", &square, &lattice)];
        for (what, place, print) in cases {
            for seat in [2u8, 4] {
                let (img, finder, truth) = white_edged_backs(&g, seat, place, print);
                let found = finder.find(&img).unwrap();
                assert_found(&found, &truth, &format!("seat {seat}, {what}"));
            }
        }
    }

    /// A back's printed pattern has a period; a smooth line, a face's scattered pips and a
    /// two-pixel flicker (blur, compression) have none.
    #[test]
    fn a_printed_pattern_has_a_period_and_a_face_has_none() {
        let (n, pad) = (120usize, TEXTURE_MAX_PERIOD + 1);
        let lines_of = |f: &dyn Fn(usize) -> f64| -> Vec<Vec<f64>> {
            (0..9).map(|j| (0..n + 2 * pad).map(|m| f(m) + j as f64 * 0.1).collect()).collect()
        };
        // rows of dots every 6 px, under two card edges (a white band, then a shadow)
        let edge = |m: usize| match m % 40 {
            0..=2 => 40.0,
            3..=6 => -45.0,
            _ => 0.0,
        };
        let dots = lines_of(&|m| 200.0 + if m % 6 < 2 { -30.0 } else { 0.0 } + edge(m));
        assert_eq!(texture_period(&dots, pad, n), 6);
        let smooth = lines_of(&|m| 100.0 + m as f64 * 0.8 + edge(m));
        assert_eq!(texture_period(&smooth, pad, n), 1);
        let pips = lines_of(&|m| if [21, 22, 23, 57, 58, 90, 91, 92, 93].contains(&m) { 90.0 } else { 230.0 });
        assert_eq!(texture_period(&pips, pad, n), 1);
        let flicker = lines_of(&|m| 200.0 + if m % 2 == 0 { 8.0 } else { 0.0 });
        assert_eq!(texture_period(&flicker, pad, n), 1);
    }

    /// The profile of a row of backs: a step at each visible edge, then the back's busy printed
    /// border for 12 px after it (before it when the cards lie right to left), flat inside.
    fn row_profile(edges: &[usize], right_to_left: bool, long: usize) -> Vec<f64> {
        let mut p = vec![1.0; long];
        for &e in edges {
            for j in 0..12 {
                let i = if right_to_left { e.checked_sub(j) } else { Some(e + j) };
                if let Some(x) = i.filter(|&x| x < long) {
                    p[x] = if j == 0 {
                        60.0
                    } else if j % 2 == 0 {
                        45.0
                    } else {
                        20.0
                    };
                }
            }
        }
        p
    }

    #[test]
    fn a_row_of_backs_splits_at_the_card_edges_not_at_their_printed_borders() {
        // three cards 50 px wide, 31 px apart, each on the previous one's right
        let p = row_profile(&[0, 31, 62, 111], false, 112);
        let (_, lefts) = fit_row(&p, 112.0, 50.0, true, None);
        assert_eq!(lefts.len(), 3, "{lefts:?}");
        for (got, want) in lefts.iter().zip([0.0, 31.0, 62.0]) {
            assert!((got - want).abs() <= 2.0, "{lefts:?}");
        }
        // the same hand dealt right to left: the visible inner edges are right sides
        let p = row_profile(&[0, 50, 81, 111], true, 112);
        let (_, lefts) = fit_row(&p, 112.0, 50.0, true, None);
        assert_eq!(lefts.len(), 3, "{lefts:?}");
        for (got, want) in lefts.iter().zip([0.0, 31.0, 62.0]) {
            assert!((got - want).abs() <= 2.0, "{lefts:?}");
        }
    }

    /// A San Gong packet of three backs 41 px wide (seed 7, clean session, frame 50), measured:
    /// each card lies on the previous one's left, and the strips they show are 30 and 23 px
    /// where a regular comb puts 27 and 27. The comb of three found its edge at 71, and its
    /// strongest step (73) lay just beyond the border explained from where the comb put that
    /// edge; a comb of four, with an edge where the profile has no step, won.
    #[test]
    fn a_packet_laid_unevenly_is_fitted_at_its_edges() {
        let p = [
            0.0, 44., 48., 0., 41., 75., 12., 0., 0., 0., 2., 0., 0., 0., 1., 0., 1., 0., 0., 0., 0., 0., 0., 0., 0.,
            0., 3., 0., 2., 0., 5., 0., 0., 0., 5., 1., 3., 9., 0., 0., 55., 47., 0., 56., 37., 0., 0., 0., 0., 0., 0.,
            0., 0., 0., 0., 0., 0., 0., 0., 0., 2., 0., 0., 0., 0., 0., 0., 0., 5., 27., 47., 62., 0., 101., 32., 1.,
            0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 1., 0., 2., 0., 32., 81., 33., 57.,
        ];
        let (_, lefts) = fit_row(&p, p.len() as f64, 40.7, true, None);
        assert_eq!(lefts.len(), 3, "{lefts:?}");
        for (got, want) in lefts.iter().zip([2.0, 32.0, 55.0]) {
            assert!((got - want).abs() <= 2.0, "{lefts:?}");
        }
    }

    /// A San Gong hand of three face-up cards 56.9 px wide (seed 9, clean session, frame 890, as
    /// measured): the deck prints a frame line a few pixels inside each edge, and the first
    /// card's inner edge snapped to it, 5 px short of the card's edge, which put the card 5 px
    /// beyond the row's start. No card reaches beyond the row's ends.
    #[test]
    fn no_card_of_a_row_is_placed_beyond_the_rows_ends() {
        let p = [
            3., 8., 6., 15., 12., 6., 3., 2., 1., 1., 5., 6., 13., 13., 17., 19., 9., 1., 3., 3., 0., 2., 0., 2., 3.,
            1., 2., 2., 1., 1., 1., 1., 3., 3., 3., 5., 3., 3., 2., 1., 1., 0., 1., 1., 0., 0., 6., 3., 4., 24., 22.,
            14., 19., 11., 7., 4., 2., 4., 0., 3., 0., 2., 1., 1., 5., 2., 1., 1., 1., 2., 3., 4., 6., 5., 4., 3., 2.,
            0., 2., 3., 2., 4., 8., 1., 7., 11., 15., 5., 15., 21., 3., 2., 9., 25., 9., 3., 7., 14., 3., 8., 5., 1.,
            1., 0., 0., 1., 2., 2., 7., 8., 5., 7., 4., 5., 13., 8., 5., 4., 11., 30., 9., 22., 21., 3., 9., 9., 5.,
            4., 7., 7., 29., 100., 122.,
        ];
        let long = p.len() as f64;
        let (_, lefts) = fit_row(&p, long, 56.9, false, None);
        assert_eq!(lefts.len(), 3, "{lefts:?}");
        assert!(lefts.iter().all(|&l| (0.0..=long - 56.9).contains(&l)), "{lefts:?}");
        assert!(lefts[0].abs() < 0.5 && (lefts[2] - (long - 56.9)).abs() < 0.5, "{lefts:?}");
    }

    /// The profile of five face-up cards 55 px wide, 31 px apart, as measured on a stud reveal.
    fn five_faces_in_a_row() -> Vec<f64> {
        let long = 179usize;
        let mut p: Vec<f64> = (0..long).map(|i| 2.0 + (i % 3) as f64).collect();
        p[1] = 102.0;
        p[long - 2] = 96.0;
        for e in [31usize, 62, 93, 124] {
            p[e] = 10.0;
            p[e + 5] = 7.0;
        }
        p
    }

    /// Five face-up cards 55 px wide, 31 px apart, as measured on a stud reveal: the row's ends
    /// (card against felt) step by ~100, a white card's edge on another white card by ~10, each
    /// card's index column is a few weaker steps after its edge, the faces are flat (2–4).
    #[test]
    fn a_face_up_row_is_counted_by_its_faint_inner_edges_not_against_its_ends() {
        let p = five_faces_in_a_row();
        let long = p.len();
        let (_, lefts) = fit_row(&p, long as f64, 55.0, false, None);
        assert_eq!(lefts.len(), 5, "{lefts:?}");
        for (got, want) in lefts.iter().zip([0.0, 31.0, 62.0, 93.0, 124.0]) {
            assert!((got - want).abs() <= 2.0, "{lefts:?}");
        }
    }

    /// Q Poker seed 13, round 3, frame 1718: seat 1's face-up K♣ 4♦ 6♣ (`kde-nicu-ornamental`,
    /// never trained on), left sides at about 2, 29 and 58 plane px. The inner edges, white on
    /// white, step 4–8; each index column 8 px past its edge steps 18 and 24. Alone, the comb
    /// of four put an edge on each index column and another on the K♣'s print, and the 4♦ was
    /// measured as two pieces, never read; with the game's three cards a hand, three, placed
    /// where the spacing puts them.
    #[test]
    fn a_face_up_hand_is_counted_as_the_game_deals_it_where_its_edges_are_faint() {
        let p = [
            56., 101., 40., 21., 2., 6., 8., 3., 7., 15., 10., 7., 5., 3., 2., 10., 12., 5., 11., 3., 2., 4., 6., 8.,
            3., 8., 4., 3., 6., 5., 8., 6., 1., 3., 3., 5., 10., 18., 2., 4., 4., 3., 7., 2., 6., 2., 3., 4., 1., 2.,
            3., 4., 4., 1., 3., 2., 3., 2., 4., 1., 4., 6., 2., 4., 4., 10., 15., 24., 1., 7., 5., 2., 3., 2., 4., 1.,
            4., 9., 3., 6., 2., 4., 3., 2., 2., 2., 4., 3., 9., 6., 3., 10., 11., 12., 18., 8., 2., 4., 4., 13., 53.,
            57., 105., 22.,
        ];
        let (long, cw) = (p.len() as f64, 43.9);
        let (_, alone) = fit_row(&p, long, cw, false, None);
        assert_eq!(alone.len(), 4, "the measurement this guards against: {alone:?}");
        let (_, lefts) = fit_row(&p, long, cw, false, Some(3));
        assert_eq!(lefts.len(), 3, "{lefts:?}");
        // its faint inner edges where the spacing puts them, not on the print steps beside them
        // (snapped, the 4♦ lay at 25, its index corner cut over the K♣)
        for (got, want) in lefts.iter().zip([2.0, 29.0, 58.0]) {
            assert!((got - want).abs() <= 2.5, "{lefts:?}");
        }
        // backs show every edge: no prior there
        let (_, backs) = fit_row(&p, long, cw, true, Some(3));
        let (_, backs_alone) = fit_row(&p, long, cw, true, None);
        assert_eq!(backs, backs_alone);
    }

    /// A face-up row whose faint inner edges show one card more than the game deals the zone
    /// (a card too many, or a neighbour's card pushed into the hand) is still that many cards:
    /// the prior only settles combs that explain the row about as well.
    #[test]
    fn a_face_up_row_with_a_card_more_than_the_game_deals_still_counts_it() {
        let p = five_faces_in_a_row();
        let long = p.len();
        for hand_size in [None, Some(4), Some(3)] {
            let (_, lefts) = fit_row(&p, long as f64, 55.0, false, hand_size);
            assert_eq!(lefts.len(), 5, "{hand_size:?}: {lefts:?}");
        }
    }

    /// The demo's seat 7 hand touched the dealer's rail along its whole edge and was never found.
    #[test]
    fn a_card_touching_the_rail_is_found() {
        let g = geometry();
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let mut img =
            Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(40.0, 110.0, 30.0, 0.0)).unwrap();
        // the rail: a dark band along the table's straight edge, 40 mm deep
        let rail =
            [Point::new(-900.0, -10.0), Point::new(900.0, -10.0), Point::new(900.0, 40.0), Point::new(-900.0, 40.0)];
        let pts: Vector<CvPoint> = rail
            .iter()
            .filter_map(|&p| g.table_to_image(p))
            .map(|p| CvPoint::new(p.x.round() as i32, p.y.round() as i32))
            .collect();
        imgproc::fill_convex_poly_def(&mut img, &pts, Scalar::new(20.0, 30.0, 60.0, 0.0)).unwrap();
        let [_, ch] = g.calibration.card_size_mm;
        let quad = draw_card(&mut img, &g, Point::new(300.0, 40.0 + ch / 2.0), 0.0, [240.0, 240.0, 240.0]);
        let found = PlaneFinder::new(&g).unwrap().find(&img).unwrap();
        let best = found.iter().map(|c| polygon_iou(&c.quad, &quad)).fold(0.0, f64::max);
        assert!(best >= 0.7, "IoU {best:.2}: {found:?}");
        // and the rail itself is no card
        assert_eq!(found.len(), 1, "{found:?}");
    }

    #[test]
    fn an_empty_table_has_no_cards() {
        let g = geometry();
        let (w, h) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let img = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::new(40.0, 110.0, 30.0, 0.0)).unwrap();
        assert!(PlaneFinder::new(&g).unwrap().find(&img).unwrap().is_empty());
    }
}
