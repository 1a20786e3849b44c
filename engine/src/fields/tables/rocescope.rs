//! rocescope's own fields of the decode: the RoCE version, ICRC and VCRC status, CNPs, payloads.

use rocescope_parsers::opcode::CNP;

use super::declare::*;
use crate::fields::FieldType::{self, Bytes};
use crate::fields::{Field, Value};

pub static FIELDS: &[Field] = &[
    // rocescope's own
    own!(
        "rocescope.frame.kind",
        FieldType::String,
        None,
        "Frame kind",
        "roce, pfc, pause, other or malformed, as reports count frames",
        |f, out| out(Value::Str(f.packet.kind().name()))
    ),
    own!("rocescope.roce.version", U8, Dec, "RoCE version", "1 (EtherType 0x8915 and a GRH) or 2 (UDP)", |f, out| {
        if let Some(r) = f.roce() {
            out(uint(r.version))
        }
    }),
    own!(
        "rocescope.bth.fecn",
        BOOL,
        None,
        "FECN",
        "BTH forward explicit congestion notification (byte 4, bit 7)",
        |f, out| if let Some(b) = f.bth() {
            out(Value::Bool(b.fecn()))
        }
    ),
    own!(
        "rocescope.bth.becn",
        BOOL,
        None,
        "BECN",
        "BTH backward explicit congestion notification (byte 4, bit 6), set on CNPs",
        |f, out| if let Some(b) = f.bth() {
            out(Value::Bool(b.becn()))
        }
    ),
    own!(
        "rocescope.bth.reserved6",
        U8,
        Dec,
        "Reserved (6 bits)",
        "the BTH's 6 reserved bits after FECN and BECN (byte 4)",
        |f, out| if let Some(b) = f.bth() {
            out(uint(b.resv6()))
        }
    ),
    own!(
        "rocescope.cnp",
        BOOL,
        None,
        "CNP",
        "present on RoCEv2 congestion notification packets (opcode 0x81)",
        |f, out| if f.bth().is_some_and(|b| b.opcode() == CNP) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.icrc.status",
        FieldType::String,
        None,
        "ICRC status",
        "ok, bad, or unverifiable (the capture does not hold the whole packet)",
        |f, out| if let Some(r) = f.roce() {
            out(Value::Str(r.icrc.name()))
        }
    ),
    own!(
        "rocescope.icrc.computed",
        U32,
        Hex,
        "Computed ICRC",
        "the ICRC rocescope computed, its wire bytes read as infiniband.invariant.crc reads them (big-endian)",
        |f, out| if let Some(c) = f.roce().and_then(|r| r.icrc_computed) {
            out(uint(u32::from_be_bytes(c.to_le_bytes())))
        }
    ),
    ws!("infiniband.variant.crc", U16, Hex, 0, "Variant CRC", |f, out| if let Some(w) =
        f.roce().and_then(|r| r.vcrc).and_then(|v| v.wire)
    {
        out(uint(u16::from_be_bytes(w)))
    }),
    own!(
        "rocescope.vcrc.status",
        FieldType::String,
        None,
        "VCRC status",
        "a native InfiniBand packet's variant CRC: ok, bad, or unverifiable (the capture does not hold it)",
        |f, out| if let Some(v) = f.roce().and_then(|r| r.vcrc) {
            out(Value::Str(v.status.name()))
        }
    ),
    own!(
        "rocescope.vcrc.computed",
        U16,
        Hex,
        "Computed VCRC",
        "the VCRC rocescope computed, its wire bytes read as infiniband.variant.crc reads them (big-endian)",
        |f, out| if let Some(c) = f.roce().and_then(|r| r.vcrc).and_then(|v| v.computed) {
            out(uint(u16::from_be_bytes(c.to_le_bytes())))
        }
    ),
    own!(
        "rocescope.trailer",
        Bytes,
        None,
        "Trailer",
        "bytes after the innermost packet in its Ethernet frame: padding, an FCS, a mirror's trailer",
        |f, out| if !f.packet.trailer.bytes.is_empty() {
            out(Value::Bytes(f.packet.trailer.bytes))
        }
    ),
    own!(
        "rocescope.trailer.fcs",
        BOOL,
        None,
        "Ethernet FCS",
        "the trailer is the frame's valid Ethernet FCS",
        |f, out| if !f.packet.trailer.bytes.is_empty() {
            out(Value::Bool(f.packet.trailer.is_fcs()))
        }
    ),
];
