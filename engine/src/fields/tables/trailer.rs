//! A Metamako (Arista 7130) tap's trailer.

use super::declare::*;
use crate::fields::FieldType::{self, Protocol};
use crate::fields::{Field, Value};

pub static FIELDS: &[Field] = &[
    // a Metamako (Arista 7130) tap's trailer
    ws!("metamako", Protocol, None, 0, "Metamako ethernet trailer", |f, out| if f.metamako().is_some() {
        out(ITEM)
    }),
    ws!("metamako.orig_fcs", U32, Hex, 0, "Original FCS", |f, out| if let Some(m) = f.metamako() {
        out(uint(m.original_fcs()))
    }),
    ws!("metamako.seqnum", U16, Dec, 0, "Sequence Number", |f, out| if let Some(n) =
        f.metamako().and_then(|m| m.sequence_number())
    {
        out(uint(n))
    }),
    ws!("metamako.time", FieldType::AbsoluteTime, None, 0, "Time Stamp", |f, out| if let Some(m) = f.metamako() {
        out(Value::Time(m.time_ns()))
    }),
    ws!("metamako.flags", U8, Hex, 0, "Flags", |f, out| if let Some(m) = f.metamako() {
        out(uint(m.flags()))
    }),
    ws!("metamako.flags.orig_fcs_vld", BOOL, None, 0x1, "Original FCS Valid", |f, out| if let Some(m) = f.metamako() {
        out(Value::Bool(m.flags() & 0x1 != 0))
    }),
    ws!("metamako.flags.has_extensions", BOOL, None, 0x2, "Has Trailer Extensions", |f, out| if let Some(m) =
        f.metamako()
    {
        out(Value::Bool(m.flags() & 0x2 != 0))
    }),
    ws!("metamako.reserved", U8, Hex, 0xfc, "Reserved", |f, out| if let Some(m) = f.metamako() {
        out(uint(m.flags() >> 2))
    }),
    ws!("metamako.srcdevice", U16, Dec, 0, "Source Device ID", |f, out| if let Some(m) = f.metamako() {
        out(uint(m.device_id()))
    }),
    ws!("metamako.srcport", U16, Dec, 0, "Source Port", |f, out| if let Some(m) = f.metamako() {
        out(uint(m.port()))
    }),
];
