//! An analysis saved unfinished (`--state`), to go on from or to merge: the state file, the
//! first frames it keeps for a merge, and the serde switch between a state and the report.

pub mod head;
pub(crate) mod state;
pub(crate) mod names;
