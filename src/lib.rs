//! rocescope: a RoCE / RoCEv2 capture analyzer.
//!
//! Data flows one way: [`capture`] reads records, [`decode`] turns each into a [`decode::DecodedFrame`]
//! view, and [`output`] writes packet lists and decode trees.

pub use rocescope_engine::{analyze, capture, decode, display_filter, fields, filter, ordered, pipeline};

#[cfg(feature = "browse")]
pub mod browse;
pub mod cli;
pub mod commands;
pub mod generate;
pub mod output;
pub mod progress;
