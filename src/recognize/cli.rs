//! `tablecam detect`: recognise the cards in image files.
use std::io::Write;
use std::path::{Path, PathBuf};

use opencv::core::{self, Mat, Point as CvPoint, Scalar};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;

use super::workers::{in_order, workers};
use super::{
    cv, resolve_model, CardIdentity, DetectedCard, ReadStepTimes, RecognizeError, Recognizer, RecognizerOptions,
    Source, StageTimes,
};
use crate::calib::{Calibration, TableGeometry};
use crate::onnx::SessionOptions;

/// Arguments of `tablecam detect`.
#[derive(Debug, Clone, clap::Args)]
pub struct DetectArgs {
    /// Images (JPEG with EXIF orientation applied, or PNG).
    #[arg(required = true)]
    pub images: Vec<PathBuf>,
    /// The camera's calibration: scales cards to the locator's size, drops what is off the table
    /// and refines card outlines on the table plane.
    #[arg(long)]
    pub calibration: Option<PathBuf>,
    /// With --calibration: the camera's empty table (an image of it with no cards, chips or
    /// hands; the run config's `presence_reference`), against which cards are told from the felt.
    #[arg(long, value_name = "IMAGE", requires = "calibration")]
    pub reference: Option<PathBuf>,
    /// One JSON object per image per line: {"image", "cards": [{"card", "confidence", "face_up",
    /// "quad"}], "error"}.
    #[arg(long)]
    pub json: bool,
    /// Write each image with its detections drawn as DIR/<stem>.jpg.
    #[arg(long, value_name = "DIR")]
    pub annotate: Option<PathBuf>,
    /// The locator model.
    #[arg(long, default_value = crate::locate::DEFAULT_PATH)]
    pub locator: PathBuf,
    /// The classifier model.
    #[arg(long, default_value = crate::classify::DEFAULT_PATH)]
    pub classifier: PathBuf,
    /// The whole-card classifier, read with the index corners (`RecognizerOptions::face_classifier`).
    #[arg(long, default_value = crate::classify::DEFAULT_FACE_PATH)]
    pub face_classifier: PathBuf,
    /// Read the index corners alone (no whole-card classifier).
    #[arg(long)]
    pub no_face_classifier: bool,
    /// The glyph classifier, which reads the indexes found as glyph pairs in photos without a
    /// calibration, and on a calibrated table those in the corners of the cards the card
    /// classifiers leave unnamed (`RecognizerOptions::glyph_classifier`).
    #[arg(long, default_value = crate::classify::DEFAULT_GLYPH_PATH)]
    pub glyph_classifier: PathBuf,
    /// No glyph classifier: photos' indexes are read by the card classifier at guessed card
    /// sizes (as before the glyph classifier), a table's cards by the card classifiers alone.
    #[arg(long)]
    pub no_glyph_classifier: bool,
    /// ONNX Runtime intra-op threads per model.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Recognize this many images at a time, each worker with its own copy of the models; the
    /// output keeps the images' order (with --timing each image's time then shares the machine).
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Find cards with the locator network instead of measuring them on the rectified table
    /// plane (with a calibration) or outlining them in the photo (without; see
    /// docs/recognition.md).
    #[arg(long)]
    pub network_locator: bool,
    /// Do not read printed indexes smaller than this many pixels (their larger side): such cards
    /// are reported `unknown` (see docs/recognition.md).
    #[arg(long, default_value_t = crate::recognize::MIN_INDEX_PX)]
    pub min_index_px: f64,
    /// Read the index corners in which the classifier saw nothing again, cut this many times
    /// wider (docs/recognition.md, "Wider corners"); 0 turns it off.
    #[arg(long, default_value_t = crate::recognize::WIDE_CORNER_SCALE)]
    pub wide_corner_scale: f64,
    /// Read a face-up card left unnamed where it overlaps another card again from its outline
    /// moved ±1 and ±2 times this share of its short side toward its neighbours
    /// (docs/recognition.md, "Nudged outlines"); 0 turns it off.
    #[arg(long, default_value_t = crate::recognize::NUDGE)]
    pub nudge: f64,
    /// Print the time of each stage per image to stderr.
    #[arg(long)]
    pub timing: bool,
    /// Read a square photo only at its own aspect, not also as a 16:9 or 4:3 photo squeezed
    /// square by an export (docs/recognition.md, "Square photos").
    #[arg(long)]
    pub own_aspect: bool,
}

/// Reads a JPEG or PNG file into a BGR `Mat`, applying the EXIF orientation (phone photos are
/// often stored sideways with a rotation tag).
pub fn load_image(path: &Path) -> Result<Mat, RecognizeError> {
    use image::ImageDecoder;
    let err = |message: String| RecognizeError::Image { path: path.to_path_buf(), message };
    let reader = image::ImageReader::open(path)
        .map_err(|e| err(format!("cannot open: {e}")))?
        .with_guessed_format()
        .map_err(|e| err(format!("cannot read: {e}")))?;
    let mut decoder = reader.into_decoder().map_err(|e| err(format!("not a readable JPEG or PNG image: {e}")))?;
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut img = image::DynamicImage::from_decoder(decoder).map_err(|e| err(format!("cannot decode: {e}")))?;
    img.apply_orientation(orientation);
    rgb_to_bgr_mat(&img.to_rgb8()).map_err(|e| err(e.to_string()))
}

/// An RGB image as a BGR `Mat`.
pub fn rgb_to_bgr_mat(img: &image::RgbImage) -> Result<Mat, RecognizeError> {
    let (w, h) = img.dimensions();
    let mut bgr: Vec<u8> = Vec::with_capacity(img.as_raw().len());
    for p in img.pixels() {
        bgr.extend_from_slice(&[p[2], p[1], p[0]]);
    }
    let flat = Mat::from_slice(&bgr).map_err(cv("frame buffer"))?;
    let m = flat.reshape(3, h.max(1) as i32).map_err(cv("frame reshape"))?;
    if m.cols() != w as i32 {
        return Err(RecognizeError::OpenCv {
            context: "frame reshape".into(),
            source: opencv::Error::new(core::StsBadSize, "unexpected width"),
        });
    }
    m.try_clone().map_err(cv("frame copy"))
}

#[derive(Serialize)]
struct JsonCard {
    card: String,
    confidence: f64,
    face_up: bool,
    quad: [[f64; 2]; 4],
}

#[derive(Serialize)]
struct JsonLine<'a> {
    image: &'a str,
    cards: Vec<JsonCard>,
    error: Option<String>,
}

fn round(v: f64, places: i32) -> f64 {
    let m = 10f64.powi(places);
    (v * m).round() / m
}

fn json_line(image: &Path, result: &Result<Vec<DetectedCard>, RecognizeError>) -> String {
    let image = image.to_string_lossy();
    let line = match result {
        Ok(cards) => JsonLine {
            image: &image,
            cards: cards
                .iter()
                .map(|c| JsonCard {
                    card: c.card.code(),
                    confidence: round(f64::from(c.confidence), 4),
                    face_up: c.face_up,
                    quad: c.quad.map(|p| [round(p.x, 1), round(p.y, 1)]),
                })
                .collect(),
            error: None,
        },
        Err(e) => JsonLine { image: &image, cards: vec![], error: Some(e.to_string()) },
    };
    serde_json::to_string(&line).expect("JSON of plain data")
}

fn text_block(image: &Path, cards: &[DetectedCard]) -> String {
    let mut s = format!("{}: {} card{}\n", image.display(), cards.len(), if cards.len() == 1 { "" } else { "s" });
    for c in cards {
        let quad: Vec<String> = c.quad.iter().map(|p| format!("({:.0},{:.0})", p.x, p.y)).collect();
        s.push_str(&format!(
            "  {:<8} {:.3}  {:<4}  {:<10} {}\n",
            c.card.code(),
            c.confidence,
            if c.face_up { "up" } else { "down" },
            match c.source {
                Source::Card => "card",
                Source::IndexOnly => "index-only",
            },
            quad.join(" ")
        ));
    }
    s
}

/// BGR colour of a detection's status: green a card, blue a back, red unknown.
fn colour(card: &CardIdentity) -> Scalar {
    match card {
        CardIdentity::Card(_) => Scalar::new(40.0, 200.0, 40.0, 0.0),
        CardIdentity::Back => Scalar::new(255.0, 140.0, 0.0, 0.0),
        CardIdentity::Unknown => Scalar::new(0.0, 0.0, 255.0, 0.0),
    }
}

/// Draws detections over a copy of `image`: quad outlines coloured by status (thinner for
/// index-only cards), index boxes thin yellow, and the label with its confidence.
pub fn annotate(image: &Mat, cards: &[DetectedCard]) -> Result<Mat, RecognizeError> {
    let mut out = image.try_clone().map_err(cv("copying the frame"))?;
    let unit = (f64::from(image.cols().min(image.rows())) / 400.0).max(1.0);
    let thick = unit.round() as i32;
    let pt = |p: &crate::calib::Point| CvPoint::new(p.x.round() as i32, p.y.round() as i32);
    for c in cards {
        let col = colour(&c.card);
        let pts: core::Vector<CvPoint> = c.quad.iter().map(pt).collect();
        let mut polys = core::Vector::<core::Vector<CvPoint>>::new();
        polys.push(pts);
        let t = if c.source == Source::Card { thick * 2 } else { thick };
        imgproc::polylines(&mut out, &polys, true, col, t, imgproc::LINE_AA, 0).map_err(cv("drawing a quad"))?;
        for b in &c.index_boxes {
            let r = core::Rect::new(
                b[0].round() as i32,
                b[1].round() as i32,
                (b[2] - b[0]).round() as i32,
                (b[3] - b[1]).round() as i32,
            );
            imgproc::rectangle(&mut out, r, Scalar::new(0.0, 230.0, 255.0, 0.0), 1, imgproc::LINE_8, 0)
                .map_err(cv("drawing an index box"))?;
        }
        let label = format!("{} {:.2}", c.card.code(), c.confidence);
        let scale = 0.45 * unit;
        let mut base = 0;
        let size = imgproc::get_text_size(&label, imgproc::FONT_HERSHEY_SIMPLEX, scale, thick, &mut base)
            .map_err(cv("measuring a label"))?;
        let origin = pt(&c.quad[0]);
        let org = CvPoint::new(origin.x, (origin.y - 4).max(size.height + 2));
        imgproc::rectangle(
            &mut out,
            core::Rect::new(org.x, org.y - size.height - 2, size.width + 2, size.height + base + 2),
            Scalar::all(0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .map_err(cv("drawing a label"))?;
        imgproc::put_text(
            &mut out,
            &label,
            CvPoint::new(org.x + 1, org.y),
            imgproc::FONT_HERSHEY_SIMPLEX,
            scale,
            col,
            thick,
            imgproc::LINE_AA,
            false,
        )
        .map_err(cv("drawing a label"))?;
    }
    Ok(out)
}

/// Writes `image` as JPEG (quality 90) to `path`.
pub fn write_jpeg(path: &Path, image: &Mat) -> Result<(), RecognizeError> {
    let mut buf = core::Vector::<u8>::new();
    let params = core::Vector::<i32>::from_slice(&[opencv::imgcodecs::IMWRITE_JPEG_QUALITY, 90]);
    opencv::imgcodecs::imencode(".jpg", image, &mut buf, &params).map_err(cv("JPEG encode"))?;
    std::fs::write(path, buf.as_slice()).map_err(|source| RecognizeError::Io { path: path.to_path_buf(), source })
}

fn detect_one(
    recognizer: &mut Recognizer,
    path: &Path,
    geometry: Option<&TableGeometry>,
    annotate_dir: Option<&Path>,
) -> Result<(Vec<DetectedCard>, StageTimes), RecognizeError> {
    let image = load_image(path)?;
    let (cards, times) = recognizer.recognize_timed(&image, geometry).map_err(|e| match e {
        RecognizeError::CalibrationSize { .. } => {
            RecognizeError::Image { path: path.to_path_buf(), message: e.to_string() }
        }
        other => other,
    })?;
    if let Some(dir) = annotate_dir {
        let stem = path.file_stem().map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
        write_jpeg(&dir.join(format!("{stem}.jpg")), &annotate(&image, &cards)?)?;
    }
    Ok((cards, times))
}

/// `--timing`'s line for one image, on stderr.
fn print_timing(path: &Path, t: &StageTimes) {
    // the reading steps are those of located cards: a photo's cards are read otherwise
    let p = &t.steps;
    let steps = if *p == ReadStepTimes::default() { String::new() } else { format!(" [{p}]") };
    eprintln!(
        "{}: prepare {:.1} ms, locator {:.1} ms, classifier {:.1} ms ({} patches), total {:.1} ms{steps}",
        path.display(),
        t.prepare_ms,
        t.locator_ms,
        t.classifier_ms,
        t.patches,
        t.total_ms,
    );
}

/// Runs `tablecam detect`. Models and calibration must load (else an error); each image then
/// succeeds or fails on its own. Returns whether every image succeeded.
pub fn run_detect(args: &DetectArgs) -> Result<bool, RecognizeError> {
    let options = RecognizerOptions {
        session: SessionOptions { intra_threads: args.threads.max(1) },
        network_locator: args.network_locator,
        min_index_px: args.min_index_px,
        wide_corner_scale: (args.wide_corner_scale > 0.0).then_some(args.wide_corner_scale),
        nudge: (args.nudge > 0.0).then_some(args.nudge),
        square_aspects: !args.own_aspect,
        face_classifier: (!args.no_face_classifier).then(|| args.face_classifier.clone()),
        glyph_classifier: (!args.no_glyph_classifier).then(|| args.glyph_classifier.clone()),
        ..RecognizerOptions::default()
    };
    let geometry = args.calibration.as_deref().map(Calibration::load).transpose()?;
    let reference = args.reference.as_deref().filter(|_| geometry.is_some()).map(load_image).transpose()?;
    let (locator, classifier) = (resolve_model(&args.locator), resolve_model(&args.classifier));
    let mut recognizers = workers(args.workers, || {
        let mut recognizer = Recognizer::with_options(&locator, &classifier, options.clone())?;
        if let (Some(empty), Some(g)) = (&reference, &geometry) {
            recognizer.set_table_reference(g, empty)?;
        }
        Ok(recognizer)
    })?;
    if let Some(dir) = &args.annotate {
        std::fs::create_dir_all(dir).map_err(|source| RecognizeError::Io { path: dir.clone(), source })?;
    }
    let mut all_ok = true;
    let stdout = std::io::stdout();
    // each image succeeds or fails on its own: its error is its result, not the run's
    let work = |recognizer: &mut Recognizer, i: usize| {
        Ok((i, detect_one(recognizer, &args.images[i], geometry.as_ref(), args.annotate.as_deref())))
    };
    in_order(&mut recognizers, (0..args.images.len()).map(Ok), work, |(i, result)| {
        let path = &args.images[i];
        if let (true, Ok((_, t))) = (args.timing, &result) {
            print_timing(path, t);
        }
        let result = result.map(|(cards, _)| cards);
        all_ok &= result.is_ok();
        let mut out = stdout.lock();
        // A closed stdout (e.g. `| head`) ends the output; there is nobody left to tell.
        let _ = if args.json {
            writeln!(out, "{}", json_line(path, &result))
        } else {
            match &result {
                Ok(cards) => write!(out, "{}", text_block(path, cards)),
                Err(e) => {
                    eprintln!("tablecam: error: {e}");
                    Ok(())
                }
            }
        };
        let _ = out.flush();
    })?;
    Ok(all_ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::Point;

    #[test]
    fn json_lines_carry_cards_or_the_error() {
        let card = DetectedCard {
            card: CardIdentity::Card("10H".parse().unwrap()),
            confidence: 0.98766,
            face_up: true,
            quad: [Point::new(1.04, 2.0), Point::new(3.0, 2.0), Point::new(3.0, 5.0), Point::new(1.0, 5.0)],
            index_boxes: vec![],
            source: Source::Card,
            reading: Some("10H".parse().unwrap()),
            rank: None,
            twin: crate::recognize::TwinPrint::Alone,
        };
        let line = json_line(Path::new("a.jpg"), &Ok(vec![card]));
        assert_eq!(
            line,
            r#"{"image":"a.jpg","cards":[{"card":"10H","confidence":0.9877,"face_up":true,"quad":[[1.0,2.0],[3.0,2.0],[3.0,5.0],[1.0,5.0]]}],"error":null}"#
        );
        let err = RecognizeError::Image { path: "b.jpg".into(), message: "cannot open".into() };
        let v: serde_json::Value = serde_json::from_str(&json_line(Path::new("b.jpg"), &Err(err))).unwrap();
        assert_eq!(v["error"], "b.jpg: cannot open");
        assert_eq!(v["cards"].as_array().map(Vec::len), Some(0));
    }

    #[test]
    fn exif_orientation_is_applied() {
        // A 4×2 JPEG tagged "rotate 90° clockwise" (orientation 6) must come out 2×4.
        let dir = std::env::temp_dir().join(format!("tablecam-exif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rotated.jpg");
        let img = image::RgbImage::from_pixel(4, 2, image::Rgb([200, 10, 10]));
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95).encode_image(&img).unwrap();
        // APP1 Exif segment, big-endian TIFF with one IFD entry: Orientation (0x0112) = 6.
        let tiff: Vec<u8> =
            [b"MM\0\x2a\0\0\0\x08\0\x01".as_slice(), &[0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0], &[0, 0, 0, 0]]
                .concat();
        let payload = [b"Exif\0\0".as_slice(), &tiff].concat();
        let len = (payload.len() + 2) as u16;
        let app1 = [&[0xFF, 0xE1][..], &len.to_be_bytes(), &payload].concat();
        let tagged = [&jpeg[..2], &app1[..], &jpeg[2..]].concat();
        std::fs::write(&path, tagged).unwrap();
        let m = load_image(&path).unwrap();
        assert_eq!((m.cols(), m.rows()), (2, 4));
        let e = load_image(&dir.join("missing.jpg")).unwrap_err().to_string();
        assert!(e.contains("missing.jpg") && e.contains("cannot open"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
