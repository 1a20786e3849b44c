//! How the analysis's state is saved: the names it holds as `&'static str` (encapsulations,
//! layers) are read back as the same texts, kept once ([`intern`]); fields the report leaves
//! out are saved all the same ([`in_report`]).

use std::cell::Cell;

use rocescope_parsers::error::intern;
use serde::{Deserialize, Deserializer};

use crate::decode::MAX_ENCAP_DEPTH;

thread_local! {
    /// This thread is saving an analysis's state, not writing a report.
    static SAVING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `save` with the fields the report leaves out serialized.
pub fn saving<R>(save: impl FnOnce() -> R) -> R {
    SAVING.with(|s| s.set(true));
    let result = save();
    SAVING.with(|s| s.set(false));
    result
}

/// Is a report being written (so that a field of the state only is left out)?
pub fn in_report<T>(_: &T) -> bool {
    !SAVING.with(Cell::get)
}

/// A name the state holds, read back ([`name`]); spelt so, serde would otherwise borrow it
/// from the saved bytes.
pub type Name = &'static str;

/// A name, read back.
pub fn name<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    String::deserialize(d).map(intern)
}

/// `(name, …)` lists: the names read back.
pub fn named_counts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(&'static str, u64)>, D::Error> {
    let saved: Vec<(String, u64)> = Deserialize::deserialize(d)?;
    Ok(saved.into_iter().map(|(name, count)| (intern(name), count)).collect())
}

/// A frame's encapsulations' names, read back.
pub fn encapsulations<'de, D: Deserializer<'de>>(d: D) -> Result<[Option<&'static str>; MAX_ENCAP_DEPTH], D::Error> {
    let saved: [Option<String>; MAX_ENCAP_DEPTH] = Deserialize::deserialize(d)?;
    Ok(saved.map(|name| name.map(intern)))
}
