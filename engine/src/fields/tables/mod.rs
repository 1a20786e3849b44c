//! The declarations of every field, one table per protocol. Wireshark's name, type, base and
//! bitmask where Wireshark has the field (`../shared/wireshark-field-names.md`, tshark 4.0's
//! `-G fields`), with its quirks: the AtomicETH's address and key are `infiniband.reth.va` /
//! `.r_key`, masked fields hold their shifted value. Fields of rocescope's own are under
//! `rocescope.*`.

mod capture;
mod cm;
mod declare;
mod infiniband;
mod link;
mod mac_control;
mod network;
mod rocescope;
mod trailer;
mod uet;
mod verdicts;

use super::Field;

/// The tables in the order `rocescope fields` lists them: from the capture record inwards,
/// rocescope's own, then UET's.
pub(super) const TABLES: [&[Field]; 10] = [
    capture::FIELDS,
    link::FIELDS,
    network::FIELDS,
    infiniband::FIELDS,
    cm::FIELDS,
    mac_control::FIELDS,
    rocescope::FIELDS,
    trailer::FIELDS,
    verdicts::FIELDS,
    uet::FIELDS,
];
