//! What the analysis counts across the capture rather than per flow: PFC and PAUSE, the
//! marking policy, RDMA CM connections, mirror duplicates and the capture-wide timeline.

pub mod cm;
pub mod duplicates;
pub mod pfc;
pub mod policy;
pub mod timeline;
