//! The InfiniBand transport headers: BTH, its extended headers, AETH, ICRC.

use rocescope_parsers::opcode::{CNP, ExtHeader};

use super::declare::*;
use crate::fields::FieldType::{Bytes, Ipv6, Protocol};
use crate::fields::names::meaning;
use crate::fields::{Field, Frame, Value, named};

/// The AETH syndrome's 5-bit value, when its class (bits 6:5) is `class`.
fn aeth_value<'a>(f: &Frame<'_, 'a>, class: u8, out: &mut dyn FnMut(Value<'a>)) {
    if let Some(a) = f.aeth()
        && (a.syndrome >> 5) & 3 == class
    {
        out(uint(a.syndrome & 0x1f))
    }
}

pub static FIELDS: &[Field] = &[
    // InfiniBand transport
    ws!("infiniband", Protocol, None, 0, "InfiniBand", |f, out| if f.bth().is_some() || f.packet.lrh.is_some() {
        out(ITEM)
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
];
