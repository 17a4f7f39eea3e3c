//! Table simulator: synthetic overhead-camera data to train and test recognition on.
pub mod faces;
