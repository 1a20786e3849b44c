//! Exemplars of the report's table records: the schema of the flows, episodes, findings and
//! the other tables that `--out`, the dataset and the Python module's DataFrames hold.
//!
//! A table's columns are its record's JSON keys, flattened; a row's optional values and lists
//! vary, so the schema comes from one exemplar row in which every optional value is present
//! (its type is the column's) and every list and tally is empty (one text column). A record
//! that gains a field does not build until its exemplar has it.

use std::net::{IpAddr, Ipv4Addr};

use crate::decode::Endpoint;

/// A table record's exemplar: every optional value present, every list and tally empty.
pub trait Exemplar {
    fn exemplar() -> Self;
}

/// The address of an exemplar's endpoints.
pub const ENDPOINT: Endpoint = Endpoint::Ip(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
