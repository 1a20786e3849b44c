//! The capture record's own fields: frame, Linux cooked capture, ERF records.

use super::declare::*;
use crate::decode::Link;
use crate::fields::FieldType::{self, Protocol};
use crate::fields::names::meaning;
use crate::fields::{Composed, Field, Frame, Value, hidden, named, protocols};

/// The ERF record header, when the frame is an ERF record.
fn erf<'a>(f: &Frame<'_, 'a>) -> Option<rocescope_parsers::erf::ErfHeader<'a>> {
    match f.packet.link {
        Link::Erf(h) => Some(h),
        _ => None,
    }
}

/// The Linux cooked-capture header, when the frame has one.
fn sll<'a>(f: &Frame<'_, 'a>) -> Option<rocescope_parsers::sll::SllHeader<'a>> {
    match f.packet.link {
        Link::Sll(h) => Some(h),
        _ => None,
    }
}

/// ARPHRD_IPGRE: a cooked capture of a GRE tunnel device.
const ARPHRD_IPGRE: u16 = 778;

pub static FIELDS: &[Field] = &[
    // frame
    ws!("frame", Protocol, None, 0, "Frame", |_, out| out(ITEM)),
    ws!("frame.number", U32, Dec, 0, "Frame Number", |f, out| out(uint(f.number))),
    ws!("frame.len", U32, Dec, 0, "Frame length on the wire", |f, out| out(uint(f.packet.orig_len))),
    ws!("frame.cap_len", U32, Dec, 0, "Frame length stored into the capture file", |f, out| out(uint(
        f.packet.data.len() as u64
    ))),
    // the decode tree's heading shows it
    hidden(ws!("frame.time", FieldType::AbsoluteTime, None, 0, "Arrival Time", |f, out| out(Value::Time(
        f.packet.ts_ns
    )))),
    ws!("frame.time_delta", FieldType::RelativeTime, None, 0, "Time delta from previous captured frame", |f, out| {
        out(Value::Time(f.packet.ts_ns.saturating_sub(f.previous_ts_ns.unwrap_or(f.packet.ts_ns))))
    }),
    ws!(
        "frame.time_delta_displayed",
        FieldType::RelativeTime,
        None,
        0,
        "Time delta from previous displayed frame",
        |f, out| { out(Value::Time(f.packet.ts_ns.saturating_sub(f.previous_shown_ts_ns.unwrap_or(f.packet.ts_ns)))) }
    ),
    ws!("frame.time_epoch", FieldType::RelativeTime, None, 0, "Epoch Time", |f, out| out(Value::Time(f.packet.ts_ns))),
    ws!("frame.time_relative", FieldType::RelativeTime, None, 0, "Time since reference or first frame", |f, out| {
        out(Value::Time(f.packet.ts_ns.saturating_sub(f.first_ts_ns)))
    }),
    ws!("frame.protocols", FieldType::String, None, 0, "Protocols in frame", |f, out| {
        let mut chain = String::with_capacity(64);
        protocols::write_chain(f, &mut chain);
        out(Value::Str(protocols::interned(&chain)))
    }),
    // columns, not lines of the decode tree
    hidden(ws!("_ws.col.Protocol", FieldType::String, None, 0, "Protocol", |f, out| out(Value::Str(
        protocols::column(f)
    )))),
    hidden(ws!("_ws.col.Info", FieldType::String, None, 0, "Information", |_, out| out(Value::Composed(
        Composed::Info
    )))),
    own!(
        "rocescope.frame.hardware_time",
        FieldType::AbsoluteTime,
        None,
        "Hardware time",
        "the time a device on the way stamped the frame with (UTC): Arista's timestamp header, ERSPAN III's IEEE 1588 time, or a Metamako trailer; --time-source hardware makes it the frame's time",
        |f, out| if let Some(t) = f.packet.hardware_time_ns(f.packet.ts_ns) {
            out(Value::Time(t))
        }
    ),
    // Linux cooked capture
    named(
        ws!("sll.pkttype", U16, Dec, 0, "Packet type", |f, out| if let Some(h) = sll(f) {
            out(uint(h.packet_type()))
        }),
        meaning::sll_packet_type,
    ),
    ws!("sll.hatype", U16, Dec, 0, "Link-layer address type", |f, out| if let Some(h) = sll(f) {
        out(uint(h.arphrd_type()))
    }),
    // Wireshark names the protocol `sll.ltype` below 0x0600 and `sll.gretype` on ARPHRD_IPGRE
    named(
        ws!("sll.etype", U16, Hex, 0, "Protocol", |f, out| if let Some(h) = sll(f)
            && h.protocol() >= 0x0600
            && h.arphrd_type() != ARPHRD_IPGRE
        {
            out(uint(h.protocol()))
        }),
        meaning::ethertype,
    ),
    ws!("sll.ifindex", U32, Dec, 0, "Interface index", |f, out| if let Some(i) =
        sll(f).and_then(|h| h.interface_index())
    {
        out(uint(i))
    }),
    // ERF records (Endace cards, ibdump)
    ws!("erf", Protocol, None, 0, "Extensible Record Format", |f, out| if erf(f).is_some() {
        out(ITEM)
    }),
    ws!("erf.ts", U64, Hex, 0, "Timestamp", |f, out| if let Some(h) = erf(f) {
        out(uint(h.timestamp))
    }),
    ws!("erf.types", U8, Hex, 0, "Record type", |f, out| if let Some(h) = erf(f) {
        out(uint(h.record_type | if h.extensions.is_empty() { 0 } else { 0x80 }))
    }),
    named(
        ws!("erf.types.type", U8, Dec, 0x7f, "Type", |f, out| if let Some(h) = erf(f) {
            out(uint(h.record_type))
        }),
        meaning::erf_type,
    ),
    ws!("erf.types.ext_header", U8, Dec, 0x80, "Extension header present", |f, out| if let Some(h) = erf(f) {
        out(uint(u8::from(!h.extensions.is_empty())))
    }),
    ws!("erf.flags", U8, Hex, 0, "Flags", |f, out| if let Some(h) = erf(f) {
        out(uint(h.flags))
    }),
    ws!("erf.flags.cap", U8, Dec, 0x3, "Capture interface", |f, out| if let Some(h) = erf(f) {
        out(uint(h.interface()))
    }),
    ws!("erf.flags.vlen", U8, Dec, 0x4, "Varying record length", |f, out| if let Some(h) = erf(f) {
        out(uint((h.flags >> 2) & 1))
    }),
    ws!("erf.flags.trunc", U8, Dec, 0x8, "Truncated", |f, out| if let Some(h) = erf(f) {
        out(uint(u8::from(h.truncated())))
    }),
    ws!("erf.flags.rxe", U8, Dec, 0x10, "RX error", |f, out| if let Some(h) = erf(f) {
        out(uint(u8::from(h.rx_error())))
    }),
    ws!("erf.flags.dse", U8, Dec, 0x20, "DS error", |f, out| if let Some(h) = erf(f) {
        out(uint((h.flags >> 5) & 1))
    }),
    ws!("erf.rlen", U16, Dec, 0, "Record length", |f, out| if let Some(h) = erf(f) {
        out(uint(h.rlen))
    }),
    ws!("erf.lctr", U16, Dec, 0, "Loss counter", |f, out| if let Some(h) = erf(f) {
        out(uint(h.loss_counter))
    }),
    ws!("erf.wlen", U16, Dec, 0, "Wire length", |f, out| if let Some(h) = erf(f) {
        out(uint(h.wlen))
    }),
];
