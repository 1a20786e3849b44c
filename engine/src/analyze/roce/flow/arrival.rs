//! A sequenced packet as a PSN space sees it: the one fact the sequencing
//! ([`crate::analyze::roce::flow::sequence`]) and the holes a NAK named ([`crate::analyze::roce::flow::naked`]) share.

use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;

/// A sequenced packet as the PSN space sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Arrival {
    pub frame: FrameNumber,
    pub ts_ns: i64,
    pub psn: u32,
}
