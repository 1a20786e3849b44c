//! The names an analysis's state holds as `&'static str` (encapsulations, layers), read back
//! from a saved state as the same texts, kept once ([`intern`]).

use rocescope_parsers::error::intern;
use serde::{Deserialize, Deserializer};

use crate::decode::MAX_ENCAP_DEPTH;

/// A name the state holds, read back ([`name`]); spelt so, serde would otherwise borrow it
/// from the saved bytes.
pub type Name = &'static str;

/// A name, read back.
pub fn name<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    String::deserialize(d).map(intern)
}

/// A frame's encapsulations' names, read back.
pub fn encapsulations<'de, D: Deserializer<'de>>(d: D) -> Result<[Option<&'static str>; MAX_ENCAP_DEPTH], D::Error> {
    let saved: [Option<String>; MAX_ENCAP_DEPTH] = Deserialize::deserialize(d)?;
    Ok(saved.map(|name| name.map(intern)))
}
