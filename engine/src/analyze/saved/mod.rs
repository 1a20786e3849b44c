//! An analysis saved unfinished (`--state`), to go on from or to merge: the state file.

pub(crate) mod state;
