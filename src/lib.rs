//! rocescope: a RoCE / RoCEv2 capture analyzer.
//!
//! Data flows one way: [`capture`] reads records, [`decode`] turns each into a [`decode::Packet`]
//! view, and [`output`] writes packet lists and decode trees.

pub mod analyze;
pub mod capture;
pub mod cli;
pub mod commands;
pub mod decode;
pub mod display_filter;
pub mod fields;
pub mod filter;
pub mod generate;
pub mod ordered;
pub mod output;
pub mod progress;
