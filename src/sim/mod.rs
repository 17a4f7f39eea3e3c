//! Table simulator: synthetic overhead-camera data to train and test recognition on.
pub mod faces;
pub mod render;
pub mod script;
pub mod timeline;
pub mod session;
pub mod cli;
pub mod crops;
pub mod contact;
