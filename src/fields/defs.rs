//! The declarations of every field. Wireshark's name, type, base and bitmask where Wireshark
//! has the field (`../shared/wireshark-field-names.md`, tshark 4.0's `-G fields`), with its
//! quirks: the AtomicETH's address and key are `infiniband.reth.va` / `.r_key`, masked fields
//! hold their shifted value. Fields of rocescope's own are under `rocescope.*`.

use rocescope_parsers::mac_control::MacControl;
use rocescope_parsers::opcode::ExtHeader;

use super::FieldType::{self, Bytes, Ether, Ipv4, Ipv6, Protocol, Uint};
use super::{Base, Field, Frame, Value};
use crate::analyze::sequence::SeqClass;
use crate::decode::{Body, EncapKind};

const U8: FieldType = Uint(8);
const U16: FieldType = Uint(16);
const U24: FieldType = Uint(24);
const U32: FieldType = Uint(32);
const U64: FieldType = Uint(64);
/// A boolean, in a container of 8 or 16 bits (what Wireshark's `-G fields` shows as its base).
const BOOL: FieldType = FieldType::Bool(8);
const BOOL16: FieldType = FieldType::Bool(16);

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
            wireshark: true,
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
            wireshark: false,
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
    // Ethernet
    ws!("eth", Protocol, None, 0, "Ethernet", |f, out| f.ethernets(&mut |_| out(Value::Present))),
    ws!("eth.dst", Ether, None, 0, "Destination", |f, out| f
        .ethernets(&mut |e| out(Value::Ether(e.header.destination().0)))),
    ws!("eth.src", Ether, None, 0, "Source", |f, out| f.ethernets(&mut |e| out(Value::Ether(e.header.source().0)))),
    ws!("eth.addr", Ether, None, 0, "Address", |f, out| f.ethernets(&mut |e| {
        out(Value::Ether(e.header.destination().0));
        out(Value::Ether(e.header.source().0));
    })),
    ws!("eth.type", U16, Hex, 0, "Type", |f, out| f.ethernets(&mut |e| out(uint(e.header.ethertype())))),
    // 802.1Q
    ws!("vlan", Protocol, None, 0, "802.1Q Virtual LAN", |f, out| f.vlan_tags(&mut |_, _| out(Value::Present))),
    ws!("vlan.priority", U16, Dec, 0xe000, "Priority", |f, out| f.vlan_tags(&mut |t, _| out(uint(t.pcp())))),
    ws!("vlan.dei", BOOL16, None, 0x1000, "DEI", |f, out| f.vlan_tags(&mut |t, _| out(Value::Bool(t.dei())))),
    ws!("vlan.id", U16, Dec, 0xfff, "ID", |f, out| f.vlan_tags(&mut |t, _| out(uint(t.vid())))),
    ws!("vlan.etype", U16, Hex, 0, "Type", |f, out| f.vlan_tags(&mut |_, etype| out(uint(etype)))),
    // IPv4
    ws!("ip", Protocol, None, 0, "Internet Protocol Version 4", |f, out| f.ipv4s(&mut |_| out(Value::Present))),
    ws!("ip.version", U8, Dec, 0, "Version", |f, out| f.ip_versions(&mut |v| out(uint(v)))),
    ws!("ip.hdr_len", U8, Dec, 0, "Header Length", |f, out| f.ipv4s(&mut |h| out(uint(h.header_len() as u64)))),
    ws!("ip.dsfield", U8, Hex, 0, "Differentiated Services Field", |f, out| f.ipv4s(&mut |h| out(uint(h.tos())))),
    ws!("ip.dsfield.dscp", U8, Dec, 0xfc, "Differentiated Services Codepoint", |f, out| f
        .ipv4s(&mut |h| out(uint(h.dscp())))),
    ws!("ip.dsfield.ecn", U8, Dec, 0x3, "Explicit Congestion Notification", |f, out| f
        .ipv4s(&mut |h| out(uint(h.ecn())))),
    ws!("ip.len", U16, Dec, 0, "Total Length", |f, out| f.ipv4s(&mut |h| out(uint(h.total_length())))),
    ws!("ip.id", U16, HexDec, 0, "Identification", |f, out| f.ipv4s(&mut |h| out(uint(h.identification())))),
    ws!("ip.flags", U8, Hex, 0xe0, "Flags", |f, out| f
        .ipv4s(&mut |h| out(uint(h.as_bytes().get(6).map_or(0, |b| b >> 5))))),
    ws!("ip.flags.df", BOOL, None, 0x40, "Don't fragment", |f, out| f
        .ipv4s(&mut |h| out(Value::Bool(h.dont_fragment())))),
    ws!("ip.flags.mf", BOOL, None, 0x20, "More fragments", |f, out| f
        .ipv4s(&mut |h| out(Value::Bool(h.more_fragments())))),
    ws!("ip.ttl", U8, Dec, 0, "Time to Live", |f, out| f.ipv4s(&mut |h| out(uint(h.ttl())))),
    ws!("ip.proto", U8, Dec, 0, "Protocol", |f, out| f.ipv4s(&mut |h| out(uint(h.protocol())))),
    ws!("ip.checksum", U16, Hex, 0, "Header Checksum", |f, out| f.ipv4s(&mut |h| out(uint(h.checksum())))),
    ws!("ip.src", Ipv4, None, 0, "Source Address", |f, out| f.ipv4s(&mut |h| out(Value::Ipv4(h.source())))),
    ws!("ip.dst", Ipv4, None, 0, "Destination Address", |f, out| f.ipv4s(&mut |h| out(Value::Ipv4(h.destination())))),
    ws!("ip.addr", Ipv4, None, 0, "Source or Destination Address", |f, out| f.ipv4s(&mut |h| {
        out(Value::Ipv4(h.source()));
        out(Value::Ipv4(h.destination()));
    })),
    // IPv6
    ws!("ipv6", Protocol, None, 0, "Internet Protocol Version 6", |f, out| f.ipv6s(&mut |_| out(Value::Present))),
    ws!("ipv6.version", U8, Dec, 0, "Version", |f, out| f.ipv6s(&mut |_| out(uint(6u8)))),
    ws!("ipv6.tclass", U32, Hex, 0x0ff0_0000, "Traffic Class", |f, out| f.ipv6s(&mut |h| out(uint(h.traffic_class())))),
    ws!("ipv6.tclass.dscp", U32, Dec, 0x0fc0_0000, "Differentiated Services Codepoint", |f, out| f
        .ipv6s(&mut |h| { out(uint(h.dscp())) })),
    ws!("ipv6.tclass.ecn", U32, Dec, 0x0030_0000, "Explicit Congestion Notification", |f, out| f
        .ipv6s(&mut |h| { out(uint(h.ecn())) })),
    ws!("ipv6.flow", U24, Hex, 0xfffff, "Flow Label", |f, out| f.ipv6s(&mut |h| out(uint(h.flow_label())))),
    ws!("ipv6.plen", U16, Dec, 0, "Payload Length", |f, out| f.ipv6s(&mut |h| out(uint(h.payload_length())))),
    ws!("ipv6.nxt", U8, Dec, 0, "Next Header", |f, out| f.ipv6s(&mut |h| out(uint(h.next_header())))),
    ws!("ipv6.hlim", U8, Dec, 0, "Hop Limit", |f, out| f.ipv6s(&mut |h| out(uint(h.hop_limit())))),
    ws!("ipv6.src", Ipv6, None, 0, "Source Address", |f, out| f.ipv6s(&mut |h| out(Value::Ipv6(h.source())))),
    ws!("ipv6.dst", Ipv6, None, 0, "Destination Address", |f, out| f.ipv6s(&mut |h| out(Value::Ipv6(h.destination())))),
    ws!("ipv6.addr", Ipv6, None, 0, "Source or Destination Address", |f, out| f.ipv6s(&mut |h| {
        out(Value::Ipv6(h.source()));
        out(Value::Ipv6(h.destination()));
    })),
    // UDP
    ws!("udp", Protocol, None, 0, "User Datagram Protocol", |f, out| f.udps(&mut |_| out(Value::Present))),
    ws!("udp.srcport", U16, PtUdp, 0, "Source Port", |f, out| f.udps(&mut |u| out(uint(u.source_port())))),
    ws!("udp.dstport", U16, PtUdp, 0, "Destination Port", |f, out| f.udps(&mut |u| out(uint(u.destination_port())))),
    ws!("udp.port", U16, PtUdp, 0, "Source or Destination Port", |f, out| f.udps(&mut |u| {
        out(uint(u.source_port()));
        out(uint(u.destination_port()));
    })),
    ws!("udp.length", U16, Dec, 0, "Length", |f, out| f.udps(&mut |u| out(uint(u.length())))),
    ws!("udp.checksum", U16, Hex, 0, "Checksum", |f, out| f.udps(&mut |u| out(uint(u.checksum())))),
    // mirror encapsulations
    ws!("gre", Protocol, None, 0, "Generic Routing Encapsulation", |f, out| f.encaps(&mut |k| {
        if !matches!(k, EncapKind::Vxlan { .. }) {
            out(Value::Present)
        }
    })),
    ws!("erspan", Protocol, None, 0, "Encapsulated Remote Switch Packet ANalysis", |f, out| f.encaps(&mut |k| {
        if matches!(k, EncapKind::Erspan2(_) | EncapKind::Erspan3(_)) {
            out(Value::Present)
        }
    })),
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
    ws!("infiniband", Protocol, None, 0, "InfiniBand", |f, out| if f.bth().is_some() {
        out(Value::Present)
    }),
    ws!("infiniband.bth", Bytes, None, 0, "Base Transport Header", |f, out| if let Some(b) = f.bth() {
        out(Value::Bytes(b.as_bytes()))
    }),
    ws!("infiniband.bth.opcode", U8, Dec, 0, "Opcode", |f, out| if let Some(b) = f.bth() {
        out(uint(b.opcode()))
    }),
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
    ws!("infiniband.deth.q_key", U64, Hex, 0, "Queue Key", |f, out| if let Some(d) = f.ext().and_then(|e| e.deth) {
        out(uint(d.qkey))
    }),
    ws!("infiniband.deth.srcqp", U32, Hex, 0, "Source Queue Pair", |f, out| if let Some(d) =
        f.ext().and_then(|e| e.deth)
    {
        out(uint(d.src_qp))
    }),
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
    ws!(
        "infiniband.reth.dmalen",
        U32,
        DecHex,
        0,
        "DMA Length",
        |f, out| if let Some(r) = f.ext().and_then(|e| e.reth) {
            out(uint(r.dma_len))
        }
    ),
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
    ws!("infiniband.aeth.syndrome", U8, Dec, 0, "Syndrome", |f, out| if let Some(a) = f.ext().and_then(|e| e.aeth) {
        out(uint(a.syndrome))
    }),
    ws!("infiniband.aeth.msn", U24, Dec, 0, "Message Sequence Number", |f, out| if let Some(a) =
        f.ext().and_then(|e| e.aeth)
    {
        out(uint(a.msn))
    }),
    ws!("infiniband.atomicacketh.origremdt", U64, Dec, 0, "Original Remote Data", |f, out| if let Some(a) =
        f.ext().and_then(|e| e.atomic_ack_eth)
    {
        out(uint(a.orig))
    }),
    ws!("infiniband.grh.sgid", Ipv6, None, 0, "Source GID", |f, out| if let Some(g) = f.grh() {
        out(Value::Ipv6(g.source()))
    }),
    ws!("infiniband.grh.dgid", Ipv6, None, 0, "Destination GID", |f, out| if let Some(g) = f.grh() {
        out(Value::Ipv6(g.destination()))
    }),
    ws!("infiniband.grh.hoplmt", U8, Dec, 0, "Hop Limit", |f, out| if let Some(g) = f.grh() {
        out(uint(g.hop_limit()))
    }),
    // management datagrams and RDMA CM
    ws!("infiniband.mad.mgmtclass", U8, Hex, 0, "Management Class", |f, out| if let Some(m) = f.cm() {
        out(uint(m.header.mgmt_class()))
    }),
    ws!("infiniband.mad.method", U8, Hex, 0, "Method", |f, out| if let Some(m) = f.cm() {
        out(uint(m.header.method()))
    }),
    ws!("infiniband.mad.transactionid", U64, Hex, 0, "Transaction ID", |f, out| if let Some(m) = f.cm() {
        out(uint(m.header.transaction_id()))
    }),
    ws!("infiniband.mad.attributeid", U16, Hex, 0, "Attribute ID", |f, out| if let Some(m) = f.cm() {
        out(uint(m.header.attribute_id()))
    }),
    ws!("infiniband.cm.req.localqpn", U24, Hex, 0, "Local QPN", |f, out| if let Some((qpn, _)) = f.cm_qpn_psn(false) {
        out(uint(qpn))
    }),
    ws!(
        "infiniband.cm.req.startpsn",
        U24,
        Hex,
        0,
        "Starting PSN",
        |f, out| if let Some((_, psn)) = f.cm_qpn_psn(false) {
            out(uint(psn))
        }
    ),
    ws!("infiniband.cm.rep.localqpn", U24, Hex, 0, "Local QPN", |f, out| if let Some((qpn, _)) = f.cm_qpn_psn(true) {
        out(uint(qpn))
    }),
    ws!(
        "infiniband.cm.rep.startpsn",
        U24,
        Hex,
        0,
        "Starting PSN",
        |f, out| if let Some((_, psn)) = f.cm_qpn_psn(true) {
            out(uint(psn))
        }
    ),
    // MAC control: PAUSE and PFC
    ws!("macc", Protocol, None, 0, "MAC Control", |f, out| if mac_control(f).is_some() {
        out(Value::Present)
    }),
    ws!("macc.opcode", U16, Hex, 0, "Opcode", |f, out| match mac_control(f) {
        Some(MacControl::Pause { .. }) => out(uint(1u8)),
        Some(MacControl::Pfc(_)) => out(uint(0x0101u16)),
        Some(MacControl::Other { opcode }) => out(uint(opcode)),
        None => {}
    }),
    ws!("macc.pause_time", U16, Dec, 0, "pause_time", |f, out| if let Some(MacControl::Pause { quanta }) =
        mac_control(f)
    {
        out(uint(quanta))
    }),
    ws!("macc.cbfc.enbv", U16, Hex, 0, "CBFC Class Enable Vector", |f, out| if let Some(p) = pfc(f) {
        out(uint(p.class_enable))
    }),
    ws!("macc.cbfc.enbv.c3", BOOL16, None, 0x8, "C3", |f, out| if let Some(p) = pfc(f) {
        out(Value::Bool(p.enabled(3)))
    }),
    ws!("macc.cbfc.pause_time.c3", U16, Dec, 0, "C3", |f, out| if let Some(p) = pfc(f) {
        out(uint(p.quanta[3]))
    }),
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
        "rocescope.cnp",
        BOOL,
        None,
        "CNP",
        "present on RoCEv2 congestion notification packets (opcode 0x81)",
        |f, out| if f.bth().is_some_and(|b| b.opcode() == 0x81) {
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
        "the ICRC rocescope computed, as the 32-bit value whose little-endian bytes go on the wire",
        |f, out| if let Some(c) = f.roce().and_then(|r| r.icrc_computed) {
            out(uint(c))
        }
    ),
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
        "PSNs missing before this packet (late arrivals excluded)",
        |f, out| if let Some(SeqClass::Gap { missing }) = seq_class(f) {
            out(uint(missing))
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
