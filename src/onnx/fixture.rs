//! The tiny committed test model `models/fixtures/affine_softmax.onnx`.
//!
//! `probs = softmax(input · W + b)` with `input` float32 `[N, 4]` and `probs` float32 `[N, 3]`.
//! `scripts/make_fixture_model.py` (`make fixtures`) writes it with the same [`W`] and [`B`] as
//! below; the tests and `tablecam doctor` run it and compare with [`reference`].

use std::path::PathBuf;

use super::{Dim, ModelContract, OnnxError, TensorSpec};

/// Path of the fixture model relative to the project root.
pub const PATH: &str = "models/fixtures/affine_softmax.onnx";

/// The fixture's weight matrix (4 inputs × 3 outputs); must equal `W` in the Python script.
pub const W: [[f32; 3]; 4] = [[0.5, -0.25, 0.1], [-0.3, 0.8, 0.05], [0.2, 0.1, -0.6], [0.0, -0.45, 0.35]];

/// The fixture's bias; must equal `B` in the Python script.
pub const B: [f32; 3] = [0.1, -0.2, 0.05];

/// The fixture's contract: input `"input"` f32 `[?, 4]`, output `"probs"` f32 `[?, 3]`.
pub fn contract() -> ModelContract {
    ModelContract {
        input: TensorSpec::f32("input", [Dim::Any, Dim::Fixed(4)]),
        output: TensorSpec::f32("probs", [Dim::Any, Dim::Fixed(3)]),
    }
}

/// Finds the fixture model file (see [`super::find_project_file`]).
pub fn path() -> Option<PathBuf> {
    super::find_project_file(PATH)
}

/// `softmax(x · W + b)` for one row, computed in f64 in plain Rust.
pub fn reference(x: &[f32; 4]) -> [f32; 3] {
    let mut logits = [0f64; 3];
    for (j, logit) in logits.iter_mut().enumerate() {
        *logit = f64::from(B[j]) + (0..4).map(|i| f64::from(x[i]) * f64::from(W[i][j])).sum::<f64>();
    }
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps = logits.map(|l| (l - max).exp());
    let sum: f64 = exps.iter().sum();
    exps.map(|e| (e / sum) as f32)
}

/// Loads the fixture model, runs a batch of three rows and returns the largest absolute
/// difference from [`reference`]. Used by `tablecam doctor`.
pub fn self_test() -> Result<f32, OnnxError> {
    let path = path().ok_or_else(|| OnnxError::ModelNotFound { path: PathBuf::from(PATH) })?;
    let mut model = super::load_model(&path, contract())?;
    let rows: [[f32; 4]; 3] = [[1.0, 2.0, 3.0, 4.0], [-1.5, 0.25, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]];
    let input = ndarray::Array2::from_shape_fn((3, 4), |(r, c)| rows[r][c]);
    let probs = model.run(input.view())?;
    if probs.shape() != [3, 3] {
        return Err(OnnxError::Contract {
            path,
            problem: format!("output \"probs\" came back with shape {:?}, expected [3, 3]", probs.shape()),
        });
    }
    let mut max_diff = 0f32;
    for (r, row) in rows.iter().enumerate() {
        for (c, want) in reference(row).iter().enumerate() {
            max_diff = max_diff.max((probs[[r, c]] - want).abs());
        }
    }
    Ok(max_diff)
}
