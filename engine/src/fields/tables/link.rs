//! Link-layer tags and headers: port-extender tags, Arista's timestamp header, MPLS and pseudowires, Ethernet, 802.1Q.

use rocescope_parsers::port_tag::PortTagKind;

use super::declare::*;
use crate::fields::FieldType::{Ether, Protocol};
use crate::fields::names::meaning;
use crate::fields::{Field, Frame, Value, hidden, named};

/// A VN-Tag's 32 bits of fields.
fn vntag(f: &Frame<'_, '_>) -> Option<u32> {
    f.port_tag(PortTagKind::VnTag).map(|t| t.word())
}

/// An E-tag's two 16-bit words and two extension bytes.
fn etag(f: &Frame<'_, '_>) -> Option<(u16, u16, u8, u8)> {
    f.port_tag(PortTagKind::ETag).map(|t| t.etag_words())
}

/// Every entry of the frame's MPLS label stack, outermost first.
fn mpls_labels(f: &Frame<'_, '_>, sink: &mut dyn FnMut(rocescope_parsers::mpls::MplsLabel)) {
    if let Some(m) = f.mpls() {
        m.labels().for_each(sink)
    }
}

pub static FIELDS: &[Field] = &[
    // port-extender tags: Cisco's VN-Tag, 802.1BR's E-tag
    ws!("vntag", Protocol, None, 0, "VN-Tag", |f, out| if f.port_tag(PortTagKind::VnTag).is_some() {
        out(ITEM)
    }),
    ws!("vntag.dir", BOOL32, None, 0x8000_0000, "Direction", |f, out| if let Some(w) = vntag(f) {
        out(Value::Bool(w & 0x8000_0000 != 0))
    }),
    ws!("vntag.ptr", BOOL32, None, 0x4000_0000, "Pointer", |f, out| if let Some(w) = vntag(f) {
        out(Value::Bool(w & 0x4000_0000 != 0))
    }),
    ws!("vntag.dst", U32, Dec, 0x3fff_0000, "Destination", |f, out| if let Some(w) = vntag(f) {
        out(uint((w >> 16) & 0x3FFF))
    }),
    ws!("vntag.looped", BOOL32, None, 0x8000, "Looped", |f, out| if let Some(w) = vntag(f) {
        out(Value::Bool(w & 0x8000 != 0))
    }),
    ws!("vntag.r", U32, Dec, 0x4000, "Reserved", |f, out| if let Some(w) = vntag(f) {
        out(uint((w >> 14) & 1))
    }),
    ws!("vntag.version", U32, Dec, 0x3000, "Version", |f, out| if let Some(w) = vntag(f) {
        out(uint((w >> 12) & 3))
    }),
    ws!("vntag.src", U32, Dec, 0xfff, "Source", |f, out| if let Some(w) = vntag(f) {
        out(uint(w & 0xFFF))
    }),
    named(
        ws!("vntag.etype", U16, Hex, 0, "Type", |f, out| if let Some(t) = f.port_tag(PortTagKind::VnTag) {
            out(uint(t.ethertype()))
        }),
        meaning::ethertype,
    ),
    ws!("etag", Protocol, None, 0, "802.1BR E-Tag", |f, out| if f.port_tag(PortTagKind::ETag).is_some() {
        out(ITEM)
    }),
    ws!("etag.pcp", U16, Dec, 0xe000, "E-PCP", |f, out| if let Some((a, ..)) = etag(f) {
        out(uint(a >> 13))
    }),
    ws!("etag.dei", U16, Dec, 0x1000, "E-DEI", |f, out| if let Some((a, ..)) = etag(f) {
        out(uint((a >> 12) & 1))
    }),
    ws!("etag.iecid_base", U16, Hex, 0xfff, "Ingress_E-CID_base", |f, out| if let Some((a, ..)) = etag(f) {
        out(uint(a & 0xFFF))
    }),
    ws!("etag.resv", U16, Dec, 0xc000, "Reserved", |f, out| if let Some((_, b, ..)) = etag(f) {
        out(uint(b >> 14))
    }),
    ws!("etag.group", U16, Dec, 0x3000, "GRP", |f, out| if let Some((_, b, ..)) = etag(f) {
        out(uint((b >> 12) & 3))
    }),
    ws!("etag.ecid_base", U16, Hex, 0xfff, "E-CID_base", |f, out| if let Some((_, b, ..)) = etag(f) {
        out(uint(b & 0xFFF))
    }),
    ws!("etag.iecid_ext", U8, Hex, 0, "Ingress_E-CID_ext", |f, out| if let Some((_, _, c, _)) = etag(f) {
        out(uint(c))
    }),
    ws!("etag.ecid_ext", U8, Hex, 0, "E-CID_ext", |f, out| if let Some((.., d)) = etag(f) {
        out(uint(d))
    }),
    named(
        ws!("etag.etype", U16, Hex, 0, "Type", |f, out| if let Some(t) = f.port_tag(PortTagKind::ETag) {
            out(uint(t.ethertype()))
        }),
        meaning::ethertype,
    ),
    // Arista's timestamp header (Wireshark's AVSP)
    ws!("avsp", Protocol, None, 0, "Arista Vendor Specific Protocol", |f, out| if f.arista().is_some() {
        out(ITEM)
    }),
    ws!("avsp.sub_type", U16, Dec, 0, "Sub Type", |f, out| if let Some(a) = f.arista() {
        out(uint(a.subtype()))
    }),
    ws!("avsp.ver", U16, Hex, 0, "Version", |f, out| if let Some(a) = f.arista() {
        out(uint(a.version()))
    }),
    ws!("avsp.64sec", U32, Dec, 0, "Seconds", |f, out| if let Some(a) = f.arista().filter(|a| a.is_64_bit()) {
        out(uint(a.seconds()))
    }),
    ws!("avsp.64ns", U32, Dec, 0, "Nanoseconds", |f, out| if let Some(a) = f.arista().filter(|a| a.is_64_bit()) {
        out(uint(a.nanoseconds()))
    }),
    ws!("avsp.48sec", U16, Dec, 0, "Seconds", |f, out| if let Some(a) = f.arista().filter(|a| !a.is_64_bit()) {
        out(uint(a.seconds()))
    }),
    ws!("avsp.48ns", U32, Dec, 0, "Nanoseconds", |f, out| if let Some(a) = f.arista().filter(|a| !a.is_64_bit()) {
        out(uint(a.nanoseconds()))
    }),
    named(
        ws!("avsp.etype", U16, Hex, 0, "Type", |f, out| if let Some(a) = f.arista() {
            out(uint(a.ethertype()))
        }),
        meaning::ethertype,
    ),
    // MPLS label stacks and Ethernet pseudowires' control words
    // an item for each label, as in Wireshark
    ws!("mpls", Protocol, None, 0, "MultiProtocol Label Switching Header", |f, out| {
        let mut item = items(out);
        mpls_labels(f, &mut |_| item())
    }),
    ws!("mpls.label", U32, DecHex, 0xffff_f000, "MPLS Label", |f, out| mpls_labels(f, &mut |l| out(uint(l.label)))),
    ws!("mpls.exp", U32, Dec, 0xe00, "MPLS Experimental Bits", |f, out| mpls_labels(f, &mut |l| out(uint(l.tc)))),
    ws!("mpls.bottom", U32, Dec, 0x100, "MPLS Bottom Of Label Stack", |f, out| mpls_labels(f, &mut |l| {
        out(uint(l.bottom))
    })),
    ws!("mpls.ttl", U32, Dec, 0xff, "MPLS TTL", |f, out| mpls_labels(f, &mut |l| out(uint(l.ttl)))),
    ws!("pwethcw", Protocol, None, 0, "PW Ethernet Control Word", |f, out| if f
        .mpls()
        .is_some_and(|m| m.control_word().is_some())
    {
        out(ITEM)
    }),
    ws!("pweth.cw.sequence_number", U16, Dec, 0, "PW sequence number (ethernet)", |f, out| if let Some(n) =
        f.mpls().and_then(|m| m.sequence_number())
    {
        out(uint(n))
    }),
    // Ethernet
    ws!("eth", Protocol, None, 0, "Ethernet", |f, out| {
        let mut item = items(out);
        f.ethernets(&mut |_| item())
    }),
    ws!("eth.dst", Ether, None, 0, "Destination", |f, out| f
        .ethernets(&mut |e| out(Value::Ether(e.header.destination().0)))),
    ws!("eth.src", Ether, None, 0, "Source", |f, out| f.ethernets(&mut |e| out(Value::Ether(e.header.source().0)))),
    hidden(ws!("eth.addr", Ether, None, 0, "Address", |f, out| f.ethernets(&mut |e| {
        out(Value::Ether(e.header.destination().0));
        out(Value::Ether(e.header.source().0));
    }))),
    named(
        ws!("eth.type", U16, Hex, 0, "Type", |f, out| f.ethernets(&mut |e| out(uint(e.header.ethertype())))),
        meaning::ethertype,
    ),
    // 802.1Q
    ws!("vlan", Protocol, None, 0, "802.1Q Virtual LAN", |f, out| {
        let mut item = items(out);
        f.vlan_tags(&mut |_, _| item())
    }),
    ws!("vlan.priority", U16, Dec, 0xe000, "Priority", |f, out| f.vlan_tags(&mut |t, _| out(uint(t.pcp())))),
    ws!("vlan.dei", BOOL16, None, 0x1000, "DEI", |f, out| f.vlan_tags(&mut |t, _| out(Value::Bool(t.dei())))),
    ws!("vlan.id", U16, Dec, 0xfff, "ID", |f, out| f.vlan_tags(&mut |t, _| out(uint(t.vid())))),
    named(
        ws!("vlan.etype", U16, Hex, 0, "Type", |f, out| f.vlan_tags(&mut |_, etype| out(uint(etype)))),
        meaning::ethertype,
    ),
];
