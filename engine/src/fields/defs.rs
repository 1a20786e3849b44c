//! The declarations of every field. Wireshark's name, type, base and bitmask where Wireshark
//! has the field (`../shared/wireshark-field-names.md`, tshark 4.0's `-G fields`), with its
//! quirks: the AtomicETH's address and key are `infiniband.reth.va` / `.r_key`, masked fields
//! hold their shifted value. Fields of rocescope's own are under `rocescope.*`.

use rocescope_parsers::cm::{CmMessage, CmRep, CmReq};
use rocescope_parsers::mac_control::MacControl;
use rocescope_parsers::opcode::{CNP, ExtHeader};
use rocescope_parsers::port_tag::PortTagKind;

use super::FieldType::{self, Bytes, Ether, Ipv4, Ipv6, Protocol, Uint};
use super::names::meaning;
use super::{Base, Field, Frame, Shown, Value, hidden, named};
use crate::analyze::flow::sequence::SeqClass;
use crate::decode::{Body, EncapKind, Link, Network};

const U8: FieldType = Uint(8);
const U16: FieldType = Uint(16);
const U24: FieldType = Uint(24);
const U32: FieldType = Uint(32);
const U64: FieldType = Uint(64);
/// A boolean, in a container of 8 or 16 bits (what Wireshark's `-G fields` shows as its base).
const BOOL: FieldType = FieldType::Bool(8);
const BOOL16: FieldType = FieldType::Bool(16);
const BOOL32: FieldType = FieldType::Bool(32);

/// A Wireshark field.
macro_rules! ws {
    ($name:literal, $ty:expr, $base:ident, $mask:expr, $label:literal, $get:expr) => {
        Field {
            name: $name,
            ty: $ty,
            base: Base::$base,
            mask: $mask,
            label: $label,
            blurb: "",
            shown: Shown::Line,
            get: $get,
        }
    };
}

/// A field of rocescope's own, with what it means.
macro_rules! own {
    ($name:literal, $ty:expr, $base:ident, $label:literal, $blurb:literal, $get:expr) => {
        Field {
            name: $name,
            ty: $ty,
            base: Base::$base,
            mask: 0,
            label: $label,
            blurb: $blurb,
            shown: Shown::Line,
            get: $get,
        }
    };
}

fn uint(v: impl Into<u64>) -> Value<'static> {
    Value::Uint(v.into())
}

/// The PFC frame, when the frame is one.
fn pfc(f: &Frame<'_, '_>) -> Option<rocescope_parsers::mac_control::Pfc> {
    match &f.packet.body {
        Body::MacControl(MacControl::Pfc(pfc)) => Some(*pfc),
        _ => None,
    }
}

fn mac_control(f: &Frame<'_, '_>) -> Option<MacControl> {
    match &f.packet.body {
        Body::MacControl(m) => Some(*m),
        _ => None,
    }
}

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

/// The AETH syndrome's 5-bit value, when its class (bits 6:5) is `class`.
fn aeth_value<'a>(f: &Frame<'_, 'a>, class: u8, out: &mut dyn FnMut(Value<'a>)) {
    if let Some(a) = f.aeth()
        && (a.syndrome >> 5) & 3 == class
    {
        out(uint(a.syndrome & 0x1f))
    }
}

fn req<'a>(f: &Frame<'_, 'a>) -> Option<CmReq<'a>> {
    match f.cm()?.message {
        CmMessage::Req(r) => Some(r),
        _ => None,
    }
}

fn rep<'a>(f: &Frame<'_, 'a>) -> Option<CmRep<'a>> {
    match f.cm()?.message {
        CmMessage::Rep(r) => Some(r),
        _ => None,
    }
}

/// A ConnectRequest carried by RoCEv2 over IPv4.
fn req_over_ipv4<'a>(f: &Frame<'_, 'a>) -> Option<CmReq<'a>> {
    req(f).filter(|_| matches!(f.packet.net, Some(Network::Ipv4(_))))
}

/// A ConnectRequest carried over IPv6 or a GRH.
fn req_over_ipv6<'a>(f: &Frame<'_, 'a>) -> Option<CmReq<'a>> {
    req(f).filter(|_| !matches!(f.packet.net, Some(Network::Ipv4(_))))
}

/// The IPv4 address of an IPv4-mapped GID: its last four bytes.
fn gid_ipv4(gid: [u8; 16]) -> [u8; 4] {
    let [.., a, b, c, d] = gid;
    [a, b, c, d]
}

/// The CM messages that carry only communication IDs, or begin with them.
#[derive(PartialEq)]
enum Cm {
    Rtu,
    Rej,
    Dreq,
    Drep,
}

/// The local (or remote) communication ID of a CM message of kind `kind`.
fn cm_ids<'a>(f: &Frame<'_, 'a>, kind: Cm, local: bool, out: &mut dyn FnMut(Value<'a>)) {
    let ids = match (f.cm().map(|m| &m.message), kind) {
        (Some(CmMessage::Rtu(r)), Cm::Rtu) | (Some(CmMessage::Drep(r)), Cm::Drep) => {
            (r.local_comm_id(), r.remote_comm_id())
        }
        (Some(CmMessage::Rej(r)), Cm::Rej) => (r.local_comm_id(), r.remote_comm_id()),
        (Some(CmMessage::Dreq(r)), Cm::Dreq) => (r.local_comm_id(), r.remote_comm_id()),
        _ => return,
    };
    out(uint(if local { ids.0 } else { ids.1 }))
}

/// PFC class `c`: is it enabled?
fn pfc_enabled<'a>(f: &Frame<'_, 'a>, c: u8, out: &mut dyn FnMut(Value<'a>)) {
    if let Some(p) = pfc(f) {
        out(Value::Bool(p.enabled(c)))
    }
}

/// PFC class `c`: its pause time in quanta.
fn pfc_time<'a>(f: &Frame<'_, 'a>, c: usize, out: &mut dyn FnMut(Value<'a>)) {
    if let Some(p) = pfc(f) {
        out(uint(p.quanta.get(c).copied().unwrap_or(0)))
    }
}

/// The sequence class the analysis gave the frame.
fn seq_class(f: &Frame<'_, '_>) -> Option<SeqClass> {
    f.verdict.and_then(|v| v.seq)
}

pub static FIELDS: &[Field] = &[
    // frame
    ws!("frame.number", U32, Dec, 0, "Frame Number", |f, out| out(uint(f.number))),
    ws!("frame.len", U32, Dec, 0, "Frame length on the wire", |f, out| out(uint(f.packet.orig_len))),
    ws!("frame.cap_len", U32, Dec, 0, "Frame length stored into the capture file", |f, out| out(uint(
        f.packet.data.len() as u64
    ))),
    ws!("frame.time_epoch", FieldType::RelativeTime, None, 0, "Epoch Time", |f, out| out(Value::Time(f.packet.ts_ns))),
    ws!("frame.time_relative", FieldType::RelativeTime, None, 0, "Time since reference or first frame", |f, out| {
        out(Value::Time(f.packet.ts_ns.saturating_sub(f.first_ts_ns)))
    }),
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
        out(Value::Present)
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
    // port-extender tags: Cisco's VN-Tag, 802.1BR's E-tag
    ws!("vntag", Protocol, None, 0, "VN-Tag", |f, out| if f.port_tag(PortTagKind::VnTag).is_some() {
        out(Value::Present)
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
        out(Value::Present)
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
        out(Value::Present)
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
    ws!("mpls", Protocol, None, 0, "MultiProtocol Label Switching Header", |f, out| mpls_labels(f, &mut |_| {
        out(Value::Present)
    })),
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
        out(Value::Present)
    }),
    ws!("pweth.cw.sequence_number", U16, Dec, 0, "PW sequence number (ethernet)", |f, out| if let Some(n) =
        f.mpls().and_then(|m| m.sequence_number())
    {
        out(uint(n))
    }),
    // Ethernet
    ws!("eth", Protocol, None, 0, "Ethernet", |f, out| f.ethernets(&mut |_| out(Value::Present))),
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
    ws!("vlan", Protocol, None, 0, "802.1Q Virtual LAN", |f, out| f.vlan_tags(&mut |_, _| out(Value::Present))),
    ws!("vlan.priority", U16, Dec, 0xe000, "Priority", |f, out| f.vlan_tags(&mut |t, _| out(uint(t.pcp())))),
    ws!("vlan.dei", BOOL16, None, 0x1000, "DEI", |f, out| f.vlan_tags(&mut |t, _| out(Value::Bool(t.dei())))),
    ws!("vlan.id", U16, Dec, 0xfff, "ID", |f, out| f.vlan_tags(&mut |t, _| out(uint(t.vid())))),
    named(
        ws!("vlan.etype", U16, Hex, 0, "Type", |f, out| f.vlan_tags(&mut |_, etype| out(uint(etype)))),
        meaning::ethertype,
    ),
    // IPv4
    ws!("ip", Protocol, None, 0, "Internet Protocol Version 4", |f, out| f.ipv4s(&mut |_| out(Value::Present))),
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
    ws!("ipv6", Protocol, None, 0, "Internet Protocol Version 6", |f, out| f.ipv6s(&mut |_| out(Value::Present))),
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
    ws!("udp", Protocol, None, 0, "User Datagram Protocol", |f, out| f.udps(&mut |_| out(Value::Present))),
    ws!("udp.srcport", U16, PtUdp, 0, "Source Port", |f, out| f.udps(&mut |u| out(uint(u.source_port())))),
    ws!("udp.dstport", U16, PtUdp, 0, "Destination Port", |f, out| f.udps(&mut |u| out(uint(u.destination_port())))),
    hidden(ws!("udp.port", U16, PtUdp, 0, "Source or Destination Port", |f, out| f.udps(&mut |u| {
        out(uint(u.source_port()));
        out(uint(u.destination_port()));
    }))),
    ws!("udp.length", U16, Dec, 0, "Length", |f, out| f.udps(&mut |u| out(uint(u.length())))),
    ws!("udp.checksum", U16, Hex, 0, "Checksum", |f, out| f.udps(&mut |u| out(uint(u.checksum())))),
    // mirror encapsulations
    ws!("gre", Protocol, None, 0, "Generic Routing Encapsulation", |f, out| f.encaps(&mut |k| {
        if !matches!(k, EncapKind::Vxlan { .. }) {
            out(Value::Present)
        }
    })),
    named(
        ws!("gre.proto", U16, Hex, 0, "Protocol Type", |f, out| f.gre_headers(&mut |h| out(uint(h.protocol)))),
        meaning::gre_protocol,
    ),
    ws!("gre.key", U32, Hex, 0, "Key", |f, out| f.encaps(&mut |k| if let EncapKind::Gre { key: Some(key), .. } = k {
        out(uint(*key))
    })),
    ws!("erspan", Protocol, None, 0, "Encapsulated Remote Switch Packet ANalysis", |f, out| f.encaps(&mut |k| {
        if matches!(k, EncapKind::Erspan2(_) | EncapKind::Erspan3(_)) {
            out(Value::Present)
        }
    })),
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
    ws!("vxlan", Protocol, None, 0, "Virtual eXtensible Local Area Network", |f, out| f.encaps(&mut |k| {
        if matches!(k, EncapKind::Vxlan { .. }) {
            out(Value::Present)
        }
    })),
    ws!("vxlan.vni", U24, Dec, 0, "VXLAN Network Identifier (VNI)", |f, out| f.encaps(&mut |k| {
        if let EncapKind::Vxlan { vni } = k {
            out(uint(*vni))
        }
    })),
    // InfiniBand transport
    ws!("infiniband", Protocol, None, 0, "InfiniBand", |f, out| if f.bth().is_some() || f.packet.lrh.is_some() {
        out(Value::Present)
    }),
    ws!("infiniband.bth", Bytes, None, 0, "Base Transport Header", |f, out| if let Some(b) = f.bth() {
        out(Value::Bytes(b.as_bytes()))
    }),
    named(
        ws!("infiniband.bth.opcode", U8, Dec, 0, "Opcode", |f, out| if let Some(b) = f.bth() {
            out(uint(b.opcode()))
        }),
        meaning::opcode,
    ),
    ws!("infiniband.bth.se", BOOL, None, 0x80, "Solicited Event", |f, out| if let Some(b) = f.bth() {
        out(Value::Bool(b.solicited()))
    }),
    ws!("infiniband.bth.m", BOOL, None, 0x40, "MigReq", |f, out| if let Some(b) = f.bth() {
        out(Value::Bool(b.mig_req()))
    }),
    ws!("infiniband.bth.padcnt", U8, Dec, 0x30, "Pad Count", |f, out| if let Some(b) = f.bth() {
        out(uint(b.pad_count()))
    }),
    ws!("infiniband.bth.tver", U8, Dec, 0xf, "Header Version", |f, out| if let Some(b) = f.bth() {
        out(uint(b.tver()))
    }),
    ws!("infiniband.bth.p_key", U16, Dec, 0, "Partition Key", |f, out| if let Some(b) = f.bth() {
        out(uint(b.pkey()))
    }),
    ws!("infiniband.bth.destqp", U24, Hex, 0, "Destination Queue Pair", |f, out| if let Some(b) = f.bth() {
        out(uint(b.dest_qp()))
    }),
    ws!("infiniband.bth.a", BOOL, None, 0x80, "Acknowledge Request", |f, out| if let Some(b) = f.bth() {
        out(Value::Bool(b.ack_req()))
    }),
    ws!("infiniband.bth.reserved7", U8, Dec, 0x7f, "Reserved (7 bits)", |f, out| if let Some(b) = f.bth() {
        out(uint(b.resv7()))
    }),
    ws!("infiniband.bth.psn", U24, Dec, 0, "Packet Sequence Number", |f, out| if let Some(b) = f.bth() {
        out(uint(b.psn()))
    }),
    ws!("infiniband.rdeth", Bytes, None, 0, "Reliable Datagram Extended Transport Header", |f, out| if let Some(b) =
        f.ext_bytes(ExtHeader::Rdeth)
    {
        out(Value::Bytes(b))
    }),
    ws!("infiniband.deth", Bytes, None, 0, "Datagram Extended Transport Header", |f, out| if let Some(b) =
        f.ext_bytes(ExtHeader::Deth)
    {
        out(Value::Bytes(b))
    }),
    ws!("infiniband.reth", Bytes, None, 0, "RDMA Extended Transport Header", |f, out| if let Some(b) =
        f.ext_bytes(ExtHeader::Reth)
    {
        out(Value::Bytes(b))
    }),
    ws!("infiniband.atomiceth", Bytes, None, 0, "Atomic Extended Transport Header", |f, out| if let Some(b) =
        f.ext_bytes(ExtHeader::AtomicEth)
    {
        out(Value::Bytes(b))
    }),
    ws!("infiniband.aeth", Bytes, None, 0, "ACK Extended Transport Header", |f, out| if let Some(b) =
        f.ext_bytes(ExtHeader::Aeth)
    {
        out(Value::Bytes(b))
    }),
    ws!("infiniband.atomicacketh", Bytes, None, 0, "Atomic ACK Extended Transport Header", |f, out| if let Some(b) =
        f.ext_bytes(ExtHeader::AtomicAckEth)
    {
        out(Value::Bytes(b))
    }),
    // Wireshark adds the ImmDt and IETH items twice (the header, then its value): so do we
    ws!(
        "infiniband.immdt",
        Bytes,
        None,
        0,
        "Immediate Data",
        |f, out| if let Some(b) = f.ext_bytes(ExtHeader::ImmDt) {
            out(Value::Bytes(b));
            out(Value::Bytes(b));
        }
    ),
    ws!("infiniband.ieth", Bytes, None, 0, "RKey", |f, out| if let Some(b) = f.ext_bytes(ExtHeader::Ieth) {
        out(Value::Bytes(b));
        out(Value::Bytes(b));
    }),
    ws!(
        "infiniband.rdeth.eecnxt",
        U24,
        Dec,
        0,
        "E2E Context",
        |f, out| if let Some(r) = f.ext().and_then(|e| e.rdeth) {
            out(uint(r.ee_context))
        }
    ),
    ws!("infiniband.deth.q_key", U64, Hex, 0, "Queue Key", |f, out| if let Some(d) = f.deth() {
        out(uint(d.qkey))
    }),
    ws!("infiniband.deth.srcqp", U32, Hex, 0, "Source Queue Pair", |f, out| if let Some(d) = f.deth() {
        out(uint(d.src_qp))
    }),
    own!(
        "rocescope.feth.plt",
        U8,
        Dec,
        "Placement Type",
        "FLUSH placement type: bit 0 global visibility, bit 1 persistence (FETH; Wireshark 4.0 does not decode it)",
        |f, out| if let Some(h) = f.ext().and_then(|e| e.feth) {
            out(uint(h.placement_type()))
        }
    ),
    own!(
        "rocescope.feth.sel",
        U8,
        Dec,
        "Selectivity Level",
        "FLUSH selectivity: 0 the range in the RETH, 1 the whole memory region",
        |f, out| if let Some(h) = f.ext().and_then(|e| e.feth) {
            out(uint(h.selectivity()))
        }
    ),
    own!(
        "rocescope.xrceth.xrc_srq",
        U24,
        Hex,
        "XRC SRQ",
        "the XRC shared receive queue an XRC request is for (XRCETH; Wireshark does not decode it)",
        |f, out| if let Some(x) = f.ext().and_then(|e| e.xrceth) {
            out(uint(x.xrc_srq))
        }
    ),
    // the AtomicETH's address and key are registered under the RETH's names
    ws!("infiniband.reth.va", U64, Hex, 0, "Virtual Address", |f, out| if let Some(e) = f.ext() {
        if let Some(r) = e.reth {
            out(uint(r.va))
        }
        if let Some(a) = e.atomic_eth {
            out(uint(a.va))
        }
    }),
    ws!("infiniband.reth.r_key", U32, Hex, 0, "Remote Key", |f, out| if let Some(e) = f.ext() {
        if let Some(r) = e.reth {
            out(uint(r.rkey))
        }
        if let Some(a) = e.atomic_eth {
            out(uint(a.rkey))
        }
    }),
    ws!("infiniband.reth.dmalen", U32, DecHex, 0, "DMA Length", |f, out| if let Some(r) = f.reth() {
        out(uint(r.dma_len))
    }),
    ws!("infiniband.atomiceth.swapdt", U64, Dec, 0, "Swap (Or Add) Data", |f, out| if let Some(a) =
        f.ext().and_then(|e| e.atomic_eth)
    {
        out(uint(a.swap_add))
    }),
    ws!("infiniband.atomiceth.cmpdt", U64, Dec, 0, "Compare Data", |f, out| if let Some(a) =
        f.ext().and_then(|e| e.atomic_eth)
    {
        out(uint(a.compare))
    }),
    named(
        ws!("infiniband.aeth.syndrome", U8, Dec, 0, "Syndrome", |f, out| if let Some(a) = f.aeth() {
            out(uint(a.syndrome))
        }),
        meaning::aeth_syndrome,
    ),
    ws!("infiniband.aeth.syndrome.reserved", U8, Dec, 0x80, "Reserved", |f, out| if let Some(a) = f.aeth() {
        out(uint(a.syndrome >> 7))
    }),
    named(
        ws!("infiniband.aeth.syndrome.opcode", U8, Dec, 0x60, "OpCode", |f, out| if let Some(a) = f.aeth() {
            out(uint((a.syndrome >> 5) & 3))
        }),
        meaning::aeth_class,
    ),
    // one of the four 5-bit values, as the class says (IBA 9.7.5.2.1)
    named(
        ws!("infiniband.aeth.syndrome.credit_count", U8, Dec, 0x1f, "Credit Count", |f, out| aeth_value(f, 0, out)),
        meaning::credit_code,
    ),
    named(
        ws!("infiniband.aeth.syndrome.timer", U8, Dec, 0x1f, "Timer", |f, out| aeth_value(f, 1, out)),
        meaning::rnr_timer,
    ),
    ws!("infiniband.aeth.syndrome.reserved_value", U8, Dec, 0x1f, "Reserved", |f, out| aeth_value(f, 2, out)),
    named(
        ws!("infiniband.aeth.syndrome.error_code", U8, Dec, 0x1f, "Error Code", |f, out| aeth_value(f, 3, out)),
        meaning::nak_code,
    ),
    ws!("infiniband.aeth.msn", U24, Dec, 0, "Message Sequence Number", |f, out| if let Some(a) = f.aeth() {
        out(uint(a.msn))
    }),
    ws!("infiniband.atomicacketh.origremdt", U64, Dec, 0, "Original Remote Data", |f, out| if let Some(a) =
        f.ext().and_then(|e| e.atomic_ack_eth)
    {
        out(uint(a.orig))
    }),
    // tshark 4.0 adds the ICRC item where exactly its 4 bytes follow the headers it parsed:
    // not on CNPs (their body is "vendor" data), nor where the capture cut the packet
    ws!("infiniband.invariant.crc", U32, Hex, 0, "Invariant CRC", |f, out| if let Some(r) = f.roce()
        && r.ib.bth.opcode() != CNP
        && let Some(icrc) = r.ib.icrc()
    {
        out(uint(u32::from_be_bytes(icrc)))
    }),
    own!(
        "rocescope.payload.len",
        U32,
        Dec,
        "Payload length",
        "the payload's length on the wire, pad and ICRC excluded",
        |f, out| if let Some(r) = f.roce() {
            out(uint(r.ib.payload_len as u64))
        }
    ),
    own!(
        "rocescope.payload.cap_len",
        U32,
        Dec,
        "Payload bytes captured",
        "how much of the payload the capture kept",
        |f, out| if let Some(r) = f.roce() {
            out(uint(r.ib.payload.len() as u64))
        }
    ),
    ws!("infiniband.lrh", Bytes, None, 0, "Local Route Header", |f, out| if let Some(l) = f.packet.lrh {
        out(Value::Bytes(l.as_bytes()))
    }),
    ws!("infiniband.lrh.vl", U8, Hex, 0xf0, "Virtual Lane", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.vl()))
    }),
    ws!("infiniband.lrh.lver", U8, Dec, 0xf, "Link Version", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.lver()))
    }),
    ws!("infiniband.lrh.sl", U8, Dec, 0xf0, "Service Level", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.sl()))
    }),
    ws!("infiniband.lrh.reserved2", U8, Dec, 0xc, "Reserved (2 bits)", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.reserved2()))
    }),
    named(
        ws!("infiniband.lrh.lnh", U8, Hex, 0x3, "Link Next Header", |f, out| if let Some(l) = f.packet.lrh {
            out(uint(l.lnh()))
        }),
        meaning::lnh,
    ),
    ws!("infiniband.lrh.dlid", U16, Dec, 0, "Destination Local ID", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.dlid()))
    }),
    ws!("infiniband.lrh.reserved5", U16, Dec, 0xf800, "Reserved (5 bits)", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.reserved5()))
    }),
    ws!("infiniband.lrh.pktlen", U16, Dec, 0x7ff, "Packet Length", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.packet_words()))
    }),
    ws!("infiniband.lrh.slid", U16, Dec, 0, "Source Local ID", |f, out| if let Some(l) = f.packet.lrh {
        out(uint(l.slid()))
    }),
    ws!("infiniband.grh", Bytes, None, 0, "Global Route Header", |f, out| if let Some(g) = f.grh() {
        out(Value::Bytes(g.as_bytes()))
    }),
    ws!("infiniband.grh.ipver", U8, Dec, 0xf0, "IP Version", |f, out| if let Some(g) = f.grh() {
        out(uint(g.as_bytes()[0] >> 4))
    }),
    ws!("infiniband.grh.tclass", U16, Dec, 0xff0, "Traffic Class", |f, out| if let Some(g) = f.grh() {
        out(uint(g.traffic_class()))
    }),
    ws!("infiniband.grh.flowlabel", U32, Dec, 0xfffff, "Flow Label", |f, out| if let Some(g) = f.grh() {
        out(uint(g.flow_label()))
    }),
    ws!("infiniband.grh.paylen", U16, Dec, 0, "Payload Length", |f, out| if let Some(g) = f.grh() {
        out(uint(g.payload_length()))
    }),
    ws!("infiniband.grh.nxthdr", U8, Dec, 0, "Next Header", |f, out| if let Some(g) = f.grh() {
        out(uint(g.next_header()))
    }),
    ws!("infiniband.grh.hoplmt", U8, Dec, 0, "Hop Limit", |f, out| if let Some(g) = f.grh() {
        out(uint(g.hop_limit()))
    }),
    ws!("infiniband.grh.sgid", Ipv6, None, 0, "Source GID", |f, out| if let Some(g) = f.grh() {
        out(Value::Ipv6(g.source()))
    }),
    ws!("infiniband.grh.dgid", Ipv6, None, 0, "Destination GID", |f, out| if let Some(g) = f.grh() {
        out(Value::Ipv6(g.destination()))
    }),
    // management datagrams and RDMA CM
    ws!("infiniband.mad.baseversion", U8, Hex, 0, "Base Version", |f, out| if let Some(m) = f.mad() {
        out(uint(m.base_version()))
    }),
    ws!("infiniband.mad.mgmtclass", U8, Hex, 0, "Management Class", |f, out| if let Some(m) = f.mad() {
        out(uint(m.mgmt_class()))
    }),
    ws!("infiniband.mad.classversion", U8, Hex, 0, "Class Version", |f, out| if let Some(m) = f.mad() {
        out(uint(m.class_version()))
    }),
    // the whole byte, the response bit (0x80) included, as Wireshark shows it
    ws!("infiniband.mad.method", U8, Hex, 0, "Method", |f, out| if let Some(m) = f.mad() {
        out(uint(m.method() | (u8::from(m.is_response()) << 7)))
    }),
    ws!("infiniband.mad.status", U16, Hex, 0, "Status", |f, out| if let Some(m) = f.mad() {
        out(uint(m.status()))
    }),
    ws!("infiniband.mad.transactionid", U64, Hex, 0, "Transaction ID", |f, out| if let Some(m) = f.mad() {
        out(uint(m.transaction_id()))
    }),
    ws!("infiniband.mad.attributeid", U16, Hex, 0, "Attribute ID", |f, out| if let Some(m) = f.mad() {
        out(uint(m.attribute_id()))
    }),
    ws!("infiniband.mad.attributemodifier", U32, Hex, 0, "Attribute Modifier", |f, out| if let Some(m) = f.mad() {
        out(uint(m.attribute_modifier()))
    }),
    // ConnectRequest; Wireshark names its local communication ID `infiniband.cm.req`
    ws!("infiniband.cm.req", U32, Hex, 0, "Local Communication ID", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_comm_id()))
    }),
    ws!("infiniband.cm.req.serviceid", U64, Hex, 0, "ServiceID", |f, out| if let Some(r) = req(f) {
        out(uint(r.service_id()))
    }),
    ws!("infiniband.cm.req.localcaguid", U64, Hex, 0, "Local CA GUID", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_ca_guid()))
    }),
    ws!("infiniband.cm.req.localqkey", U32, Hex, 0, "Local Q_Key", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_qkey()))
    }),
    ws!("infiniband.cm.req.localqpn", U24, Hex, 0, "Local QPN", |f, out| if let Some(r) = req(f) {
        out(uint(r.local_qpn()))
    }),
    ws!("infiniband.cm.req.responderres", U8, Hex, 0, "Responder Resources", |f, out| if let Some(r) = req(f) {
        out(uint(r.responder_resources()))
    }),
    ws!("infiniband.cm.req.initdepth", U8, Hex, 0, "Initiator Depth", |f, out| if let Some(r) = req(f) {
        out(uint(r.initiator_depth()))
    }),
    named(
        ws!(
            "infiniband.cm.req.transpsvctype",
            U8,
            Hex,
            0x6,
            "Transport Service Type",
            |f, out| if let Some(r) = req(f) {
                out(uint(r.transport_service_type()))
            }
        ),
        meaning::transport_service,
    ),
    ws!("infiniband.cm.req.startpsn", U24, Hex, 0, "Starting PSN", |f, out| if let Some(r) = req(f) {
        out(uint(r.starting_psn()))
    }),
    ws!("infiniband.cm.req.retrcount", U8, Hex, 0x7, "Retry Count", |f, out| if let Some(r) = req(f) {
        out(uint(r.retry_count()))
    }),
    ws!("infiniband.cm.req.pkey", U16, Hex, 0, "Partition Key", |f, out| if let Some(r) = req(f) {
        out(uint(r.pkey()))
    }),
    named(
        ws!("infiniband.cm.req.pppmtu", U8, Hex, 0xf0, "Path Packet Payload MTU", |f, out| if let Some(r) = req(f) {
            out(uint(r.path_mtu_code()))
        }),
        meaning::path_mtu,
    ),
    ws!("infiniband.cm.req.rnrretrcount", U8, Hex, 0x7, "RNR Retry Count", |f, out| if let Some(r) = req(f) {
        out(uint(r.rnr_retry_count()))
    }),
    ws!("infiniband.cm.req.maxcmretr", U8, Hex, 0xf0, "Max CM Retries", |f, out| if let Some(r) = req(f) {
        out(uint(r.max_cm_retries()))
    }),
    ws!("infiniband.cm.req.srq", U8, Hex, 0x8, "SRQ", |f, out| if let Some(r) = req(f) {
        out(uint(r.srq()))
    }),
    // tshark 4.0 shows the GIDs of a request carried over IPv4 as IPv4 addresses (their last
    // four bytes), and those carried over IPv6 as IPv6 addresses
    ws!("infiniband.cm.req.prim_localgid", Ipv6, None, 0, "Primary Local Port GID", |f, out| if let Some(r) =
        req_over_ipv6(f)
    {
        out(Value::Ipv6(r.primary_local_gid()))
    }),
    ws!("infiniband.cm.req.prim_remotegid", Ipv6, None, 0, "Primary Remote Port GID", |f, out| if let Some(r) =
        req_over_ipv6(f)
    {
        out(Value::Ipv6(r.primary_remote_gid()))
    }),
    ws!("infiniband.cm.req.prim_localgid_ipv4", Ipv4, None, 0, "Primary Local Port GID", |f, out| if let Some(r) =
        req_over_ipv4(f)
    {
        out(Value::Ipv4(gid_ipv4(r.primary_local_gid())))
    }),
    ws!("infiniband.cm.req.prim_remotegid_ipv4", Ipv4, None, 0, "Primary Remote Port GID", |f, out| if let Some(r) =
        req_over_ipv4(f)
    {
        out(Value::Ipv4(gid_ipv4(r.primary_remote_gid())))
    }),
    ws!("infiniband.cm.req.prim_flowlabel", U32, Hex, 0xffff_f000, "Primary Flow Label", |f, out| if let Some(r) =
        req(f)
    {
        out(uint(r.primary_flow_label()))
    }),
    ws!("infiniband.cm.req.prim_tfcclass", U8, Hex, 0, "Primary Traffic Class", |f, out| if let Some(r) = req(f) {
        out(uint(r.primary_traffic_class()))
    }),
    ws!("infiniband.cm.req.prim_hoplim", U8, Hex, 0, "Primary Hop Limit", |f, out| if let Some(r) = req(f) {
        out(uint(r.primary_hop_limit()))
    }),
    ws!("infiniband.cm.req.prim_sl", U8, Hex, 0xf0, "Primary SL", |f, out| if let Some(r) = req(f) {
        out(uint(r.primary_sl()))
    }),
    named(
        ws!(
            "infiniband.cm.req.prim_localacktout",
            U8,
            Hex,
            0xf8,
            "Primary Local ACK Timeout",
            |f, out| if let Some(r) = req(f) {
                out(uint(r.local_ack_timeout()))
            }
        ),
        meaning::ack_timeout,
    ),
    // ConnectReply
    ws!("infiniband.cm.rep", U32, Hex, 0, "Local Communication ID", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_comm_id()))
    }),
    ws!("infiniband.cm.rep.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| if let Some(r) = rep(f) {
        out(uint(r.remote_comm_id()))
    }),
    ws!("infiniband.cm.rep.localqkey", U32, Hex, 0, "Local Q_Key", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_qkey()))
    }),
    ws!("infiniband.cm.rep.localqpn", U24, Hex, 0, "Local QPN", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_qpn()))
    }),
    ws!("infiniband.cm.rep.startpsn", U24, Hex, 0, "Starting PSN", |f, out| if let Some(r) = rep(f) {
        out(uint(r.starting_psn()))
    }),
    ws!("infiniband.cm.rep.respres", U8, Hex, 0, "Responder Resources", |f, out| if let Some(r) = rep(f) {
        out(uint(r.responder_resources()))
    }),
    ws!("infiniband.cm.rep.initdepth", U8, Hex, 0, "Initiator Depth", |f, out| if let Some(r) = rep(f) {
        out(uint(r.initiator_depth()))
    }),
    ws!("infiniband.cm.rep.tgtackdelay", U8, Hex, 0xf8, "Target ACK Delay", |f, out| if let Some(r) = rep(f) {
        out(uint(r.target_ack_delay()))
    }),
    ws!("infiniband.cm.rep.rnrretrcount", U8, Hex, 0xe0, "RNR Retry Count", |f, out| if let Some(r) = rep(f) {
        out(uint(r.rnr_retry_count()))
    }),
    ws!("infiniband.cm.rep.srq", U8, Hex, 0x10, "SRQ", |f, out| if let Some(r) = rep(f) {
        out(uint(r.srq()))
    }),
    ws!("infiniband.cm.rep.localcaguid", U64, Hex, 0, "Local CA GUID", |f, out| if let Some(r) = rep(f) {
        out(uint(r.local_ca_guid()))
    }),
    // ReadyToUse, ConnectReject, DisconnectRequest, DisconnectReply
    ws!("infiniband.cm.rtu.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(f, Cm::Rtu, true, out)),
    ws!("infiniband.cm.rtu.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Rtu,
        false,
        out
    )),
    ws!("infiniband.cm.rej.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(f, Cm::Rej, true, out)),
    ws!("infiniband.cm.rej.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Rej,
        false,
        out
    )),
    ws!("infiniband.cm.rej.msgrej", U8, Hex, 0xc0, "Message REJected", |f, out| if let Some(CmMessage::Rej(r)) =
        f.cm().map(|m| &m.message)
    {
        out(uint(r.message_rejected()))
    }),
    ws!("infiniband.cm.rej.reason", U16, Hex, 0, "Reason", |f, out| if let Some(CmMessage::Rej(r)) =
        f.cm().map(|m| &m.message)
    {
        out(uint(r.reason()))
    }),
    ws!("infiniband.cm.dreq.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(
        f,
        Cm::Dreq,
        true,
        out
    )),
    ws!("infiniband.cm.dreq.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Dreq,
        false,
        out
    )),
    // Wireshark registers the DisconnectRequest's remote QPN under the request's name
    ws!("infiniband.cm.req.remoteqpneecn", U24, Hex, 0, "Remote QPN/EECN", |f, out| if let Some(CmMessage::Dreq(r)) =
        f.cm().map(|m| &m.message)
    {
        out(uint(r.remote_qpn()))
    }),
    ws!("infiniband.cm.drsp.localcommid", U32, Hex, 0, "Local Communication ID", |f, out| cm_ids(
        f,
        Cm::Drep,
        true,
        out
    )),
    ws!("infiniband.cm.drsp.remotecommid", U32, Hex, 0, "Remote Communication ID", |f, out| cm_ids(
        f,
        Cm::Drep,
        false,
        out
    )),
    // MAC control: PAUSE and PFC
    ws!("macc", Protocol, None, 0, "MAC Control", |f, out| if mac_control(f).is_some() {
        out(Value::Present)
    }),
    named(
        ws!("macc.opcode", U16, Hex, 0, "Opcode", |f, out| match mac_control(f) {
            Some(MacControl::Pause { .. }) => out(uint(1u8)),
            Some(MacControl::Pfc(_)) => out(uint(0x0101u16)),
            Some(MacControl::Other { opcode }) => out(uint(opcode)),
            None => {}
        }),
        meaning::mac_control_opcode,
    ),
    ws!("macc.pause_time", U16, Dec, 0, "pause_time", |f, out| if let Some(MacControl::Pause { quanta }) =
        mac_control(f)
    {
        out(uint(quanta))
    }),
    ws!("macc.cbfc.enbv", U16, Hex, 0, "CBFC Class Enable Vector", |f, out| if let Some(p) = pfc(f) {
        out(uint(p.class_enable))
    }),
    ws!("macc.cbfc.enbv.c0", BOOL16, None, 0x1, "C0", |f, out| pfc_enabled(f, 0, out)),
    ws!("macc.cbfc.enbv.c1", BOOL16, None, 0x2, "C1", |f, out| pfc_enabled(f, 1, out)),
    ws!("macc.cbfc.enbv.c2", BOOL16, None, 0x4, "C2", |f, out| pfc_enabled(f, 2, out)),
    ws!("macc.cbfc.enbv.c3", BOOL16, None, 0x8, "C3", |f, out| pfc_enabled(f, 3, out)),
    ws!("macc.cbfc.enbv.c4", BOOL16, None, 0x10, "C4", |f, out| pfc_enabled(f, 4, out)),
    ws!("macc.cbfc.enbv.c5", BOOL16, None, 0x20, "C5", |f, out| pfc_enabled(f, 5, out)),
    ws!("macc.cbfc.enbv.c6", BOOL16, None, 0x40, "C6", |f, out| pfc_enabled(f, 6, out)),
    ws!("macc.cbfc.enbv.c7", BOOL16, None, 0x80, "C7", |f, out| pfc_enabled(f, 7, out)),
    ws!("macc.cbfc.pause_time.c0", U16, Dec, 0, "C0", |f, out| pfc_time(f, 0, out)),
    ws!("macc.cbfc.pause_time.c1", U16, Dec, 0, "C1", |f, out| pfc_time(f, 1, out)),
    ws!("macc.cbfc.pause_time.c2", U16, Dec, 0, "C2", |f, out| pfc_time(f, 2, out)),
    ws!("macc.cbfc.pause_time.c3", U16, Dec, 0, "C3", |f, out| pfc_time(f, 3, out)),
    ws!("macc.cbfc.pause_time.c4", U16, Dec, 0, "C4", |f, out| pfc_time(f, 4, out)),
    ws!("macc.cbfc.pause_time.c5", U16, Dec, 0, "C5", |f, out| pfc_time(f, 5, out)),
    ws!("macc.cbfc.pause_time.c6", U16, Dec, 0, "C6", |f, out| pfc_time(f, 6, out)),
    ws!("macc.cbfc.pause_time.c7", U16, Dec, 0, "C7", |f, out| pfc_time(f, 7, out)),
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
    // a Metamako (Arista 7130) tap's trailer
    ws!("metamako", Protocol, None, 0, "Metamako ethernet trailer", |f, out| if f.metamako().is_some() {
        out(Value::Present)
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
    own!(
        "rocescope.malformed",
        FieldType::String,
        None,
        "Malformed",
        "present on malformed frames: the layer whose decoding failed and why (\"bth: truncated, needs 12 bytes, 7 available\")",
        |f, out| if let Body::Malformed(m) = &f.packet.body {
            out(Value::Error(m.error))
        }
    ),
    own!(
        "rocescope.malformed.layer",
        FieldType::String,
        None,
        "Malformed at layer",
        "the layer whose decoding failed (bth, ipv4, udp, ext_header, …)",
        |f, out| if let Body::Malformed(m) = &f.packet.body {
            out(Value::Str(m.error.layer.name()))
        }
    ),
    own!("rocescope.analysis.flow", U32, Dec, "Flow", "the flow id of the analysis report", |f, out| if let Some(id) =
        f.verdict.and_then(|v| v.flow)
    {
        out(uint(id))
    }),
    own!(
        "rocescope.analysis.seq_class",
        FieldType::String,
        None,
        "Sequence class",
        "first, in_order, gap, ahead, late_arrival or retransmission",
        |f, out| if let Some(c) = seq_class(f) {
            out(Value::Str(c.name()))
        }
    ),
    own!("rocescope.analysis.gap", BOOL, None, "Gap", "the first packet after PSNs that never arrived", |f, out| {
        if let Some(SeqClass::Gap { .. }) = seq_class(f) {
            out(Value::Bool(true))
        }
    }),
    own!(
        "rocescope.analysis.missing_psns",
        U32,
        Dec,
        "Missing PSNs",
        "PSNs missing before this packet (late arrivals excluded; those only the capture missed included)",
        |f, out| if let Some(SeqClass::Gap { missing }) = seq_class(f) {
            out(uint(missing))
        }
    ),
    own!(
        "rocescope.analysis.capture_missed",
        U32,
        Dec,
        "PSNs the capture missed",
        "of the PSNs missing before this packet, those a later ACK shows the responder received (known when the gap settles)",
        |f, out| if let Some(n) = f.verdict.map(|v| v.capture_missed).filter(|&n| n > 0) {
            out(uint(n))
        }
    ),
    own!(
        "rocescope.analysis.retransmission",
        BOOL,
        None,
        "Retransmission",
        "a PSN seen before, sent again",
        |f, out| if seq_class(f) == Some(SeqClass::Retransmission) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.late_arrival",
        BOOL,
        None,
        "Late arrival",
        "a skipped PSN that arrived late (reordering), not a resend",
        |f, out| if seq_class(f) == Some(SeqClass::LateArrival) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.ahead",
        BOOL,
        None,
        "Ahead of late arrivals",
        "the packet skipped PSNs that all arrived late: a reorder event",
        |f, out| if seq_class(f) == Some(SeqClass::Ahead) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.lost_before_tap",
        BOOL,
        None,
        "Lost before the tap",
        "a UET PSN whose first appearance is a resend (RETX): the original never reached the tap",
        |f, out| if f.verdict.is_some_and(|v| v.lost_before_tap) {
            out(Value::Bool(true))
        }
    ),
    own!(
        "rocescope.analysis.mirror_duplicate",
        BOOL,
        None,
        "Mirror duplicate",
        "a second copy of a packet seen at another tap or by a doubled mirror",
        |f, out| if f.verdict.is_some_and(|v| v.mirror_duplicate) {
            out(Value::Bool(true))
        }
    ),
];
