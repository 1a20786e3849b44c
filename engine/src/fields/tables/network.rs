//! IPv4, IPv6, UDP and the mirror encapsulations (GRE, ERSPAN, VXLAN).

use super::declare::*;
use crate::decode::EncapKind;
use crate::fields::FieldType::{Bytes, Ipv4, Ipv6, Protocol};
use crate::fields::names::meaning;
use crate::fields::{Field, Frame, Value, hidden, named};

/// Every ERSPAN type II or III header, outermost first.
fn erspans(f: &Frame<'_, '_>, sink: &mut dyn FnMut(&rocescope_parsers::erspan::ErspanHeader)) {
    f.encaps(&mut |k| {
        if let Some(h) = k.erspan() {
            sink(&h)
        }
    })
}

/// The second word of every ERSPAN platform sub-header of ID `id` (3, 5 and 7 hold seconds
/// there).
fn platform_seconds<'a>(f: &Frame<'_, 'a>, id: u8, out: &mut dyn FnMut(Value<'a>)) {
    erspans(f, &mut |h| {
        if let Some(p) = h.platform.filter(|_| h.platform_id() == Some(id)) {
            out(uint(p as u32))
        }
    })
}

pub static FIELDS: &[Field] = &[
    // IPv4
    ws!("ip", Protocol, None, 0, "Internet Protocol Version 4", |f, out| {
        let mut item = items(out);
        f.ipv4s(&mut |_| item())
    }),
    // the section heading names the version; IPv6 headers have one too
    hidden(ws!("ip.version", U8, Dec, 0, "Version", |f, out| f.ip_versions(&mut |v| out(uint(v))))),
    ws!("ip.hdr_len", U8, Dec, 0, "Header Length", |f, out| f.ipv4s(&mut |h| out(uint(h.header_len() as u64)))),
    ws!("ip.dsfield", U8, Hex, 0, "Differentiated Services Field", |f, out| f.ipv4s(&mut |h| out(uint(h.tos())))),
    named(
        ws!("ip.dsfield.dscp", U8, Dec, 0xfc, "Differentiated Services Codepoint", |f, out| f
            .ipv4s(&mut |h| out(uint(h.dscp())))),
        meaning::dscp,
    ),
    named(
        ws!("ip.dsfield.ecn", U8, Dec, 0x3, "Explicit Congestion Notification", |f, out| f
            .ipv4s(&mut |h| out(uint(h.ecn())))),
        meaning::ecn,
    ),
    ws!("ip.len", U16, Dec, 0, "Total Length", |f, out| f.ipv4s(&mut |h| out(uint(h.total_length())))),
    ws!("ip.id", U16, HexDec, 0, "Identification", |f, out| f.ipv4s(&mut |h| out(uint(h.identification())))),
    ws!("ip.flags", U8, Hex, 0xe0, "Flags", |f, out| f
        .ipv4s(&mut |h| out(uint(h.as_bytes().get(6).map_or(0, |b| b >> 5))))),
    ws!("ip.flags.rb", BOOL, None, 0x80, "Reserved bit", |f, out| f
        .ipv4s(&mut |h| out(Value::Bool(h.as_bytes().get(6).is_some_and(|b| b & 0x80 != 0))))),
    ws!("ip.flags.df", BOOL, None, 0x40, "Don't fragment", |f, out| f
        .ipv4s(&mut |h| out(Value::Bool(h.dont_fragment())))),
    ws!("ip.flags.mf", BOOL, None, 0x20, "More fragments", |f, out| f
        .ipv4s(&mut |h| out(Value::Bool(h.more_fragments())))),
    ws!("ip.frag_offset", U16, Dec, 0x1fff, "Fragment Offset", |f, out| f
        .ipv4s(&mut |h| out(uint(h.fragment_offset())))),
    ws!("ip.ttl", U8, Dec, 0, "Time to Live", |f, out| f.ipv4s(&mut |h| out(uint(h.ttl())))),
    named(
        ws!("ip.proto", U8, Dec, 0, "Protocol", |f, out| f.ipv4s(&mut |h| out(uint(h.protocol())))),
        meaning::ip_protocol,
    ),
    ws!("ip.checksum", U16, Hex, 0, "Header Checksum", |f, out| f.ipv4s(&mut |h| out(uint(h.checksum())))),
    ws!("ip.src", Ipv4, None, 0, "Source Address", |f, out| f.ipv4s(&mut |h| out(Value::Ipv4(h.source())))),
    ws!("ip.dst", Ipv4, None, 0, "Destination Address", |f, out| f.ipv4s(&mut |h| out(Value::Ipv4(h.destination())))),
    hidden(ws!("ip.addr", Ipv4, None, 0, "Source or Destination Address", |f, out| f.ipv4s(&mut |h| {
        out(Value::Ipv4(h.source()));
        out(Value::Ipv4(h.destination()));
    }))),
    // IPv6
    ws!("ipv6", Protocol, None, 0, "Internet Protocol Version 6", |f, out| {
        let mut item = items(out);
        f.ipv6s(&mut |_| item())
    }),
    ws!("ipv6.version", U8, Dec, 0, "Version", |f, out| f.ipv6s(&mut |_| out(uint(6u8)))),
    ws!("ipv6.tclass", U32, Hex, 0x0ff0_0000, "Traffic Class", |f, out| f.ipv6s(&mut |h| out(uint(h.traffic_class())))),
    named(
        ws!("ipv6.tclass.dscp", U32, Dec, 0x0fc0_0000, "Differentiated Services Codepoint", |f, out| f
            .ipv6s(&mut |h| { out(uint(h.dscp())) })),
        meaning::dscp,
    ),
    named(
        ws!("ipv6.tclass.ecn", U32, Dec, 0x0030_0000, "Explicit Congestion Notification", |f, out| f
            .ipv6s(&mut |h| { out(uint(h.ecn())) })),
        meaning::ecn,
    ),
    ws!("ipv6.flow", U24, Hex, 0xfffff, "Flow Label", |f, out| f.ipv6s(&mut |h| out(uint(h.flow_label())))),
    ws!("ipv6.plen", U16, Dec, 0, "Payload Length", |f, out| f.ipv6s(&mut |h| out(uint(h.payload_length())))),
    named(
        ws!("ipv6.nxt", U8, Dec, 0, "Next Header", |f, out| f.ipv6s(&mut |h| out(uint(h.next_header())))),
        meaning::ip_protocol,
    ),
    ws!("ipv6.hlim", U8, Dec, 0, "Hop Limit", |f, out| f.ipv6s(&mut |h| out(uint(h.hop_limit())))),
    ws!("ipv6.src", Ipv6, None, 0, "Source Address", |f, out| f.ipv6s(&mut |h| out(Value::Ipv6(h.source())))),
    ws!("ipv6.dst", Ipv6, None, 0, "Destination Address", |f, out| f.ipv6s(&mut |h| out(Value::Ipv6(h.destination())))),
    hidden(ws!("ipv6.addr", Ipv6, None, 0, "Source or Destination Address", |f, out| f.ipv6s(&mut |h| {
        out(Value::Ipv6(h.source()));
        out(Value::Ipv6(h.destination()));
    }))),
    // UDP
    ws!("udp", Protocol, None, 0, "User Datagram Protocol", |f, out| {
        let mut item = items(out);
        f.udps(&mut |_| item())
    }),
    ws!("udp.srcport", U16, PtUdp, 0, "Source Port", |f, out| f.udps(&mut |u| out(uint(u.source_port())))),
    ws!("udp.dstport", U16, PtUdp, 0, "Destination Port", |f, out| f.udps(&mut |u| out(uint(u.destination_port())))),
    hidden(ws!("udp.port", U16, PtUdp, 0, "Source or Destination Port", |f, out| f.udps(&mut |u| {
        out(uint(u.source_port()));
        out(uint(u.destination_port()));
    }))),
    ws!("udp.length", U16, Dec, 0, "Length", |f, out| f.udps(&mut |u| out(uint(u.length())))),
    ws!("udp.checksum", U16, Hex, 0, "Checksum", |f, out| f.udps(&mut |u| out(uint(u.checksum())))),
    // mirror encapsulations
    ws!("gre", Protocol, None, 0, "Generic Routing Encapsulation", |f, out| {
        let mut item = items(out);
        f.gre_headers(&mut |_| item())
    }),
    named(
        ws!("gre.proto", U16, Hex, 0, "Protocol Type", |f, out| f.gre_headers(&mut |h| out(uint(h.protocol)))),
        meaning::gre_protocol,
    ),
    ws!("gre.key", U32, Hex, 0, "Key", |f, out| f.encaps(&mut |k| if let EncapKind::Gre { key: Some(key), .. } = k {
        out(uint(*key))
    })),
    // type I has no header of its own, but Wireshark shows its protocol
    ws!("erspan", Protocol, None, 0, "Encapsulated Remote Switch Packet ANalysis", |f, out| {
        let mut item = items(out);
        f.encaps(&mut |k| {
            if matches!(k, EncapKind::Erspan1 | EncapKind::Erspan2(_) | EncapKind::Erspan3(_)) {
                item()
            }
        })
    }),
    ws!("erspan.version", U16, Dec, 0xf000, "Version", |f, out| erspans(f, &mut |h| out(uint(h.version)))),
    ws!("erspan.vlan", U16, Dec, 0xfff, "Vlan", |f, out| erspans(f, &mut |h| out(uint(h.vlan)))),
    ws!("erspan.cos", U16, Dec, 0xe000, "COS", |f, out| erspans(f, &mut |h| out(uint(h.cos)))),
    ws!("erspan.encap", U16, Dec, 0x1800, "Encap", |f, out| erspans(f, &mut |h| if h.index.is_some() {
        out(uint(h.en_or_bso))
    })),
    ws!("erspan.bso", U16, Dec, 0x1800, "Bad/Short/Oversized", |f, out| erspans(f, &mut |h| if h.index.is_none() {
        out(uint(h.en_or_bso))
    })),
    ws!("erspan.truncated", U16, Dec, 0x400, "Truncated", |f, out| erspans(f, &mut |h| out(uint(h.truncated)))),
    ws!("erspan.spanid", U16, Dec, 0x3ff, "SpanID", |f, out| erspans(f, &mut |h| out(uint(h.session_id)))),
    ws!("erspan.index", U32, Dec, 0xfffff, "Index", |f, out| erspans(f, &mut |h| if let Some(i) = h.index {
        out(uint(i))
    })),
    ws!("erspan.timestamp", U32, Dec, 0xffff_ffff, "Timestamp", |f, out| erspans(f, &mut |h| if let Some(t) =
        h.timestamp
    {
        out(uint(t))
    })),
    ws!("erspan.ft", U16, Dec, 0x7c00, "Frame Type", |f, out| erspans(f, &mut |h| if let Some(t) = h.frame_type {
        out(uint(t))
    })),
    ws!("erspan.hw", U16, Dec, 0x3f0, "Hardware ID", |f, out| erspans(f, &mut |h| if let Some(hw) = h.hw_id {
        out(uint(hw))
    })),
    ws!("erspan.direction", BOOL16, None, 0x8, "Direction", |f, out| erspans(f, &mut |h| if let Some(e) = h.egress {
        out(Value::Bool(e))
    })),
    ws!("erspan.gra", U16, Dec, 0x6, "Timestamp granularity", |f, out| erspans(f, &mut |h| if let Some(g) =
        h.granularity
    {
        out(uint(g))
    })),
    ws!("erspan.o", U16, Dec, 0x1, "Optional Sub headers", |f, out| erspans(f, &mut |h| if h.timestamp.is_some() {
        out(uint(h.platform.is_some()))
    })),
    // the platform-specific sub-header: its ID, and the seconds of an IEEE 1588 time
    ws!("erspan.platid", U32, Dec, 0xfc00_0000, "Platform ID", |f, out| erspans(f, &mut |h| if let Some(id) =
        h.platform_id()
    {
        out(uint(id))
    })),
    ws!("erspan.pid3.timestamp", U32, Dec, 0xffff_ffff, "Upper 32-bit Timestamp", |f, out| platform_seconds(f, 3, out)),
    ws!("erspan.pid5.timestamp", U32, Dec, 0xffff_ffff, "Timestamp (seconds)", |f, out| platform_seconds(f, 5, out)),
    ws!("erspan.pid7.timestamp", U32, Dec, 0xffff_ffff, "Upper 32-bit Timestamp", |f, out| platform_seconds(f, 7, out)),
    own!(
        "rocescope.spectrum.header",
        Bytes,
        None,
        "Vendor header",
        "the bytes NVIDIA Spectrum puts between GRE (protocol 0x8949) and the mirrored frame; their layout is not public",
        |f, out| if let Some(h) = f.spectrum_header() {
            out(Value::Bytes(h))
        }
    ),
    own!(
        "rocescope.spectrum.header_len",
        U8,
        Dec,
        "Vendor header length",
        "where the mirrored frame was found: 22 bytes on the parts SONiC tests, 14 to 30 looked for",
        |f, out| if let Some(h) = f.spectrum_header() {
            out(uint(h.len() as u64))
        }
    ),
    ws!("vxlan", Protocol, None, 0, "Virtual eXtensible Local Area Network", |f, out| {
        let mut item = items(out);
        f.encaps(&mut |k| {
            if matches!(k, EncapKind::Vxlan { .. }) {
                item()
            }
        })
    }),
    ws!("vxlan.vni", U24, Dec, 0, "VXLAN Network Identifier (VNI)", |f, out| f.encaps(&mut |k| {
        if let EncapKind::Vxlan { vni } = k {
            out(uint(*vni))
        }
    })),
];
