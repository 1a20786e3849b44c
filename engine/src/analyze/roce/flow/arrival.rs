//! A sequenced packet as a PSN space sees it: the one fact the sequencing
//! ([`crate::analyze::roce::flow::sequence`]) and the holes a NAK named ([`crate::analyze::roce::flow::naked`]) share.

/// A sequenced packet as the PSN space sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Arrival {
    pub frame: u64,
    pub ts_ns: i64,
    pub psn: u32,
}
