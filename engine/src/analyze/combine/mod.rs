//! Combining analyses into the analysis of them all: shards of one capture split by host pair
//! (`merge`, over the host-pair partition), parts of a capture cut in time (`parts`, `graft`),
//! and the options two analyses differ in (`differences`).

pub mod differences;
pub mod graft;
pub mod merge;
pub mod parts;
