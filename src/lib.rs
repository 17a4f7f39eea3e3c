//! tablecam: card recognition and verified hand outcomes for casino table games
//! played under the Macau regulations (see `docs/rules.md`).
//!
//! The library is organised as one module per pipeline stage; the `tablecam`
//! binary only parses arguments, wires the stages together and reports errors.
#![deny(missing_docs)]

pub mod calib;
pub mod classify;
pub mod dashboard;
pub mod dispute;
pub mod doctor;
pub mod events;
pub mod locate;
pub mod odds;
pub mod onnx;
pub mod pipeline;
pub mod presence;
pub mod publish;
pub mod recognize;
pub mod record;
pub mod replay;
pub mod rng;
pub mod rules;
pub mod scenarios;
pub mod sim;
pub mod source;
pub mod track;
pub mod verify;
pub mod wallclock;
