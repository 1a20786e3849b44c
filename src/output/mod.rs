//! The writers: of decoded frames ([`packet`]), of the analysis's report ([`report`]), the
//! Parquet dataset that holds both ([`dataset`]), and the files they write whole or not at all
//! ([`atomic`]).

pub mod atomic;
#[cfg(feature = "tables")]
pub mod dataset;
pub mod packet;
pub mod report;
pub mod wireshark;
