//! Table simulator: synthetic overhead-camera data to train and test recognition on.
pub mod cli;
pub mod contact;
pub mod crops;
pub mod detections;
pub mod faces;
pub mod observe;
pub mod render;
pub mod script;
pub mod session;
pub mod timeline;
