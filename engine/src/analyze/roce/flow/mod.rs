//! One flow (one direction of one QP) through the analysis: its table entry and counters, its
//! PSN sequencing (gaps, late arrivals, holes a NAK named, READ responses), its retransmit
//! episodes, the pairing with its peer, each frame's verdict and the charts' trace.

pub mod arrival;
mod between_packets;
pub mod counting;
pub mod episodes;
pub mod gaps;
pub mod naked;
pub mod pairing;
pub mod responses;
pub mod runtime;
pub mod sequence;
pub mod table;
pub mod verdicts;
