//! The card locator: one network run per frame finds card centres (face up or down) with their
//! rotated rectangles, and the printed index corners (rank + suit) with their boxes.
//!
//! The model (`models/locator.onnx`) follows this contract, checked at load ([`Locator::load`]):
//! - input `image`: float32 `[1, 3, H, W]`, H and W multiples of 32, RGB, pixel / 255;
//! - output `heat`: float32 `[1, 3, H/4, W/4]`, probabilities: card face up, card face down,
//!   index corner (centres);
//! - output `geom`: float32 `[1, 8, H/4, W/4]`: sub-cell centre offset (dx, dy), (cos 2θ, sin 2θ)
//!   of the card's long axis, ln(long / 4), ln(short / 4) of the card, ln(w / 4), ln(h / 4) of the
//!   index corner's axis-aligned box;
//! - metadata `tablecam.kind` = `locator`, `tablecam.version` = `1`, `tablecam.stride` = `4`,
//!   `tablecam.heat_channels` = `card_up,card_down,index`, optional `tablecam.card_threshold` and
//!   `tablecam.index_threshold` (default 0.35).
//!
//! [`decode`] turns the maps into [`CardCandidate`]s and [`IndexCandidate`]s; [`geometry`] holds
//! the quadrilateral convention ([`order_quad`]) and the polygon helpers.
pub mod decode;
pub mod geometry;
pub mod glyphs;
pub mod photo;
pub mod plane;
pub mod refine;

use std::path::{Path, PathBuf};

use ndarray::{ArrayView4, Ix4};

pub use decode::{decode, find_peaks, CardCandidate, DecodeParams, Decoded, IndexCandidate};
pub use geometry::{order_quad, polygon_iou, Quad, RotatedRect};

use crate::onnx::{self, Dim, Model, ModelContract, OnnxError, SessionOptions, TensorSpec};

/// Where the trained locator lives, relative to the project root.
pub const DEFAULT_PATH: &str = "models/locator.onnx";
/// The `tablecam.version` of the contract this build reads.
pub const CONTRACT_VERSION: &str = "1";
/// The only stride this build decodes.
pub const STRIDE: usize = 4;
/// Input sides must be multiples of this.
pub const INPUT_MULTIPLE: usize = 32;
/// The `tablecam.heat_channels` value of the contract.
pub const HEAT_CHANNELS: &str = "card_up,card_down,index";

const FIX: &str = "retrain with `make train` or restore the committed models/locator.onnx";

/// Errors of the locator.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// The model cannot be loaded, does not have the contract's inputs and outputs, or failed to
    /// run.
    #[error("locator: {0}; {FIX}")]
    Model(#[from] OnnxError),
    /// The model's metadata is not the contract's.
    #[error("{}: {problem}; {FIX}", path.display())]
    Metadata {
        /// The model file.
        path: PathBuf,
        /// What differs, with the expected and found values.
        problem: String,
    },
    /// An OpenCV call of the table-plane finder ([`plane`]) failed.
    #[error("table-plane card finder: {context}: {source}")]
    Plane {
        /// What was being done.
        context: &'static str,
        /// OpenCV's error.
        source: opencv::Error,
    },
    /// The empty-table reference given to the table-plane finder is not a frame of the
    /// calibrated camera.
    #[error("empty-table reference is {got}, the calibrated camera delivers {expected}: capture the reference from this camera with `tablecam presence reference`")]
    Reference {
        /// What was given.
        got: String,
        /// What the calibration says.
        expected: String,
    },
    /// An OpenCV call of the photo outline finder ([`photo`]) failed.
    #[error("photo card finder: {context}: {source}")]
    Photo {
        /// What was being done.
        context: &'static str,
        /// OpenCV's error.
        source: opencv::Error,
    },
    /// The input array is not `[1, 3, H, W]` with H and W multiples of 32.
    #[error("locator input has shape {shape:?}; it must be [1, 3, H, W] with H and W multiples of {INPUT_MULTIPLE}")]
    InputShape {
        /// The shape given.
        shape: Vec<usize>,
    },
    /// The model's outputs have shapes that do not follow from the input's.
    #[error("{}: for an input of {input:?} the model returned {output} of shape {got:?}, expected {expected:?}; {FIX}", path.display())]
    OutputShape {
        /// The model file.
        path: PathBuf,
        /// The input shape.
        input: Vec<usize>,
        /// The output's name.
        output: &'static str,
        /// The shape returned.
        got: Vec<usize>,
        /// The shape the contract implies.
        expected: Vec<usize>,
    },
}

/// The input and output specs of the locator contract.
pub fn contract() -> (ModelContract, TensorSpec) {
    let input = TensorSpec::f32("image", [Dim::Any, Dim::Fixed(3), Dim::Any, Dim::Any]);
    let heat = TensorSpec::f32("heat", [Dim::Any, Dim::Fixed(3), Dim::Any, Dim::Any]);
    let geom = TensorSpec::f32("geom", [Dim::Any, Dim::Fixed(8), Dim::Any, Dim::Any]);
    (ModelContract { input, output: heat }, geom)
}

/// Checks the locator's metadata (`get` looks a key up) and returns the decoding parameters it
/// sets; the error names `path` and what differs.
pub fn params_from_metadata(path: &Path, get: impl Fn(&str) -> Option<String>) -> Result<DecodeParams, LocateError> {
    let bad = |problem: String| LocateError::Metadata { path: path.to_path_buf(), problem };
    let expect = |key: &str, want: &str| -> Result<(), LocateError> {
        match get(key) {
            Some(v) if v.trim() == want => Ok(()),
            Some(v) => Err(bad(format!("metadata {key} is {v:?}, expected {want:?}"))),
            None => Err(bad(format!("metadata {key} is missing, expected {want:?}"))),
        }
    };
    expect("tablecam.kind", "locator")?;
    expect("tablecam.version", CONTRACT_VERSION)?;
    expect("tablecam.stride", &STRIDE.to_string())?;
    let channels = get("tablecam.heat_channels").map(|v| v.split(',').map(str::trim).collect::<Vec<_>>().join(","));
    if channels.as_deref() != Some(HEAT_CHANNELS) {
        return Err(bad(format!("metadata tablecam.heat_channels is {channels:?}, expected {HEAT_CHANNELS:?}")));
    }
    let threshold = |key: &str| -> Result<f32, LocateError> {
        match get(key) {
            None => Ok(0.35),
            Some(v) => match v.trim().parse::<f32>() {
                Ok(t) if t > 0.0 && t < 1.0 => Ok(t),
                _ => Err(bad(format!("metadata {key} is {v:?}, expected a number between 0 and 1"))),
            },
        }
    };
    Ok(DecodeParams {
        stride: STRIDE as f64,
        card_threshold: threshold("tablecam.card_threshold")?,
        index_threshold: threshold("tablecam.index_threshold")?,
        ..DecodeParams::default()
    })
}

/// The locator model, checked against its contract, with its decoding parameters.
#[derive(Debug)]
pub struct Locator {
    model: Model,
    params: DecodeParams,
}

impl Locator {
    /// Loads and checks `path` (inputs, outputs, metadata); every error names the file.
    pub fn load(path: impl AsRef<Path>, options: &SessionOptions) -> Result<Locator, LocateError> {
        let (contract, geom) = contract();
        let model = onnx::load_model_with(path.as_ref(), contract, options)?;
        model.check_output(&geom)?;
        let params = params_from_metadata(model.path(), |k| model.metadata(k))?;
        Ok(Locator { model, params })
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        self.model.path()
    }

    /// The decoding parameters (thresholds from the model's metadata).
    pub fn params(&self) -> &DecodeParams {
        &self.params
    }

    /// Changes the decoding parameters (e.g. for a threshold sweep).
    pub fn set_params(&mut self, params: DecodeParams) {
        self.params = params;
    }

    /// Runs the network on `input` (`[1, 3, H, W]`, RGB / 255) and returns `heat` and `geom`.
    pub fn run_maps(
        &mut self,
        input: ArrayView4<'_, f32>,
    ) -> Result<(ndarray::Array4<f32>, ndarray::Array4<f32>), LocateError> {
        let shape = input.shape().to_vec();
        if shape[0] != 1 || shape[1] != 3 || shape[2] % INPUT_MULTIPLE != 0 || shape[3] % INPUT_MULTIPLE != 0 {
            return Err(LocateError::InputShape { shape });
        }
        let mut out = self.model.run_outputs(input, &["heat", "geom"])?;
        let geom = out.pop().unwrap_or_default();
        let heat = out.pop().unwrap_or_default();
        let (h, w) = (shape[2] / STRIDE, shape[3] / STRIDE);
        let path = self.model.path().to_path_buf();
        let to4 = |a: ndarray::ArrayD<f32>, name: &'static str, channels: usize| {
            let expected = vec![1, channels, h, w];
            if a.shape() != expected.as_slice() {
                return Err(LocateError::OutputShape {
                    path: path.clone(),
                    input: shape.clone(),
                    output: name,
                    got: a.shape().to_vec(),
                    expected,
                });
            }
            Ok(a.into_dimensionality::<Ix4>().expect("rank checked"))
        };
        Ok((to4(heat, "heat", 3)?, to4(geom, "geom", 8)?))
    }

    /// Runs the network and decodes its maps (coordinates in input pixels).
    pub fn run(&mut self, input: ArrayView4<'_, f32>) -> Result<Decoded, LocateError> {
        let (heat, geom) = self.run_maps(input)?;
        Ok(decode(heat.view(), geom.view(), &self.params))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn good() -> BTreeMap<&'static str, &'static str> {
        BTreeMap::from([
            ("tablecam.kind", "locator"),
            ("tablecam.version", "1"),
            ("tablecam.stride", "4"),
            ("tablecam.heat_channels", "card_up,card_down,index"),
            ("tablecam.card_threshold", "0.4"),
        ])
    }

    fn check(m: &BTreeMap<&'static str, &'static str>) -> Result<DecodeParams, LocateError> {
        params_from_metadata(Path::new("models/locator.onnx"), |k| m.get(k).map(|v| v.to_string()))
    }

    #[test]
    fn metadata_sets_thresholds_and_rejects_other_contracts() {
        let p = check(&good()).unwrap();
        assert_eq!((p.card_threshold, p.index_threshold, p.stride), (0.4, 0.35, 4.0));
        for (key, value, needle) in [
            ("tablecam.kind", "classifier", "tablecam.kind is \"classifier\", expected \"locator\""),
            ("tablecam.stride", "8", "tablecam.stride"),
            ("tablecam.heat_channels", "card,index", "heat_channels"),
            ("tablecam.index_threshold", "1.5", "between 0 and 1"),
        ] {
            let mut m = good();
            m.insert(key, value);
            let e = check(&m).unwrap_err().to_string();
            assert!(e.starts_with("models/locator.onnx: ") && e.contains(needle) && e.contains("make train"), "{e}");
        }
        let mut m = good();
        m.remove("tablecam.version");
        let e = check(&m).unwrap_err().to_string();
        assert!(e.contains("tablecam.version is missing"), "{e}");
    }
}
