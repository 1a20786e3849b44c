//! An analysis saved unfinished (`--state`), to go on from or to merge: the state file, the
//! first frames it keeps for a merge, and the names a state reads back.

pub mod head;
pub(crate) mod names;
pub(crate) mod state;
