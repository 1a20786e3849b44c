//! Zero-copy, panic-free wire parsers for RoCE captures.
//!
//! One module per protocol layer, in the style of smoltcp's `wire` module: each header is a small
//! `Copy` view over the captured bytes with named field accessors, produced by a nom parser that
//! checks the length first, so an accessor can never read out of bounds. Nothing here allocates,
//! performs I/O or panics, whatever the input. Errors name the layer and the reason ([`Error`]).
//! Beside each view is its writer, as smoltcp pairs `Packet` with `Repr`: a `Repr` (or the owned
//! value a parser returns) whose `emit` gives the header's bytes, as an array or through a
//! `put` callback for headers of varying length, with no allocation either.
//!
//! Layout facts follow the InfiniBand Architecture Specification Vol. 1 (IBA) and its RoCEv2
//! annex A17, IEEE 802.1Q / 802.3, RFC 791 / 8200 / 768 / 2784 / 7348 and the ERSPAN draft; each
//! module cites the sections it relies on.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod arista;
pub mod bth;
pub mod cm;
mod emit;
pub mod erf;
pub mod error;
pub mod erspan;
pub mod ethernet;
pub mod ext;
pub mod gre;
pub mod grh;
pub mod ib;
pub mod icrc;
pub mod ipv4;
pub mod ipv6;
pub mod lrh;
pub mod mac_control;
pub mod metamako;
pub mod mpls;
pub mod opcode;
pub mod port_tag;
pub mod psn;
pub mod sll;
pub mod spectrum;
pub mod udp;
pub mod uet;
pub mod vcrc;
pub mod vxlan;

pub use error::{Error, ErrorKind, Layer};
