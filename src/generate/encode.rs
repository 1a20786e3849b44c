//! Frames for the sample generator, built from the headers each parser's `emit` writes (the
//! layouts are written once, in parsers/): captures whose every byte is known. Lengths, pad
//! counts, checksums and the ICRC are computed, so a built frame is valid unless a scenario
//! damages it on purpose.

use rocescope_parsers::arista::{AristaRepr, ETHERTYPE_ARISTA};
use rocescope_parsers::erf::ErfHeader;
use rocescope_parsers::erspan::ErspanHeader;
use rocescope_parsers::ethernet::{EthernetRepr, MacAddr, VlanTag};
use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::gre::{GreHeader, PROTO_ERSPAN_II, PROTO_ERSPAN_III, PROTO_TRANSPARENT_ETHERNET};
use rocescope_parsers::ipv4::Ipv4Repr;
use rocescope_parsers::ipv6::Ipv6Repr;
use rocescope_parsers::lrh::{LrhRepr, NextHeader};
use rocescope_parsers::mac_control::{MacControl, Pfc};
use rocescope_parsers::metamako::MetamakoRepr;
use rocescope_parsers::mpls::MplsLabel;
use rocescope_parsers::opcode;
use rocescope_parsers::udp::UdpRepr;
use rocescope_parsers::{icrc, vcrc, vxlan};

pub use rocescope_parsers::bth::BthRepr;

pub type Mac = [u8; 6];

/// Ethernet addressing and VLAN tags (TPID, PCP, VID), outermost first.
#[derive(Debug, Clone, Default)]
pub struct L2 {
    pub src: Mac,
    pub dst: Mac,
    pub vlans: Vec<(u16, u8, u16)>,
}

impl L2 {
    pub fn new(src: Mac, dst: Mac) -> Self {
        L2 { src, dst, vlans: Vec::new() }
    }

    pub fn tagged(mut self, pcp: u8, vid: u16) -> Self {
        self.vlans.push((0x8100, pcp, vid));
        self
    }

    /// The Ethernet header and tags, ending with `ethertype`.
    pub fn header(&self, ethertype: u16) -> Vec<u8> {
        let ethernet = EthernetRepr { destination: MacAddr(self.dst), source: MacAddr(self.src), ethertype };
        let mut b = ethernet.emit_addresses().to_vec();
        for &(tpid, pcp, vid) in &self.vlans {
            b.extend_from_slice(&VlanTag::new(tpid, pcp, vid).emit());
        }
        b.extend_from_slice(&ethertype.to_be_bytes());
        b
    }
}

/// Addresses of the network layer of a RoCE packet.
#[derive(Debug, Clone, Copy)]
pub enum Addresses {
    V4 {
        src: [u8; 4],
        dst: [u8; 4],
    },
    V6 {
        src: [u8; 16],
        dst: [u8; 16],
    },
    /// RoCEv1: the GRH's GIDs.
    Grh {
        sgid: [u8; 16],
        dgid: [u8; 16],
    },
}

/// The network layer of a RoCE packet: IPv4, IPv6 or (RoCEv1) the GRH, with the fields a
/// path may change.
#[derive(Debug, Clone, Copy)]
pub struct L3 {
    pub addresses: Addresses,
    pub dscp: u8,
    pub ecn: u8,
    /// TTL, hop limit or HopLmt.
    pub ttl: u8,
    /// IPv6 / GRH flow label (unused for IPv4).
    pub flow_label: u32,
}

impl L3 {
    /// IPv4 with DSCP 26, ECT(0), TTL 64.
    pub fn v4(src: [u8; 4], dst: [u8; 4]) -> Self {
        L3 { addresses: Addresses::V4 { src, dst }, dscp: 26, ecn: 2, ttl: 64, flow_label: 0 }
    }

    /// The same header with other DSCP and ECN values.
    pub fn with_qos(self, dscp: u8, ecn: u8) -> Self {
        L3 { dscp, ecn, ..self }
    }

    /// The header for a payload of `payload_len` bytes carrying IP protocol `protocol` (a GRH
    /// always announces a BTH).
    pub fn header(&self, protocol: u8, payload_len: usize) -> Vec<u8> {
        let tclass = (self.dscp << 2) | self.ecn;
        match self.addresses {
            Addresses::V4 { src, dst } => ipv4_header(src, dst, tclass, self.ttl, 0, protocol, payload_len),
            Addresses::V6 { src, dst } => {
                six_header(tclass, self.flow_label, payload_len, protocol, self.ttl, src, dst)
            }
            Addresses::Grh { sgid, dgid } => {
                six_header(tclass, self.flow_label, payload_len, 0x1B, self.ttl, sgid, dgid)
            }
        }
    }
}

/// An IPv4 header (no options, don't-fragment set) with a correct header checksum; a payload
/// longer than IPv4 allows is given its largest length.
pub fn ipv4_header(src: [u8; 4], dst: [u8; 4], tos: u8, ttl: u8, id: u16, protocol: u8, payload_len: usize) -> Vec<u8> {
    const MAX_PAYLOAD: usize = u16::MAX as usize - rocescope_parsers::ipv4::MIN_HEADER_LEN;
    let header = Ipv4Repr {
        dscp: tos >> 2,
        ecn: tos & 3,
        identification: id,
        dont_fragment: true,
        ttl,
        protocol,
        source: src,
        destination: dst,
        payload_len: payload_len.min(MAX_PAYLOAD) as u16,
    };
    header.emit().to_vec()
}

/// An IPv6 header or a GRH (same shape).
fn six_header(tclass: u8, flow: u32, payload_len: usize, next: u8, hop: u8, src: [u8; 16], dst: [u8; 16]) -> Vec<u8> {
    let header = Ipv6Repr {
        traffic_class: tclass,
        flow_label: flow,
        payload_length: payload_len as u16,
        next_header: next,
        hop_limit: hop,
        source: src,
        destination: dst,
    };
    header.emit().to_vec()
}

/// The LRH fields an InfiniBand link gives a packet (LVer 0; LNH and PktLen are computed).
#[derive(Debug, Clone, Copy)]
pub struct Lrh {
    pub vl: u8,
    pub sl: u8,
    pub slid: u16,
    pub dlid: u16,
}

/// An ERF record (type 21 InfiniBand, 25 InfiniBand link, or 2 Ethernet with its 2 bytes of
/// padding before the frame) around `packet`, captured whole: a 16-byte header with the
/// timestamp as a binary fraction, the varying-length flag, the loss counter, the wire length,
/// and a record length rounded up to 8 bytes, as `ibdump` writes them (the padding itself is
/// not captured).
pub fn erf_record(ts_ns: i64, record_type: u8, loss_counter: u16, packet: &[u8]) -> Vec<u8> {
    let pad =
        if record_type == rocescope_parsers::erf::TYPE_ETHERNET { rocescope_parsers::erf::ETHERNET_PAD } else { 0 };
    let rlen = (16 + pad + packet.len()).div_ceil(8) * 8;
    let header = ErfHeader {
        timestamp: ErfHeader::timestamp_of(ts_ns),
        record_type,
        flags: 0x04, // varying length
        rlen: rlen as u16,
        loss_counter,
        wlen: packet.len() as u16,
        extensions: &[],
    };
    let mut r = header.emit().to_vec();
    r.extend(std::iter::repeat_n(0u8, pad));
    r.extend_from_slice(packet);
    r
}

/// An InfiniBand link packet (IBA §7.9.4): a normal flow-control packet for `vl` with its
/// FCTBS and FCCL, and its LPCRC (the VCRC's CRC-16 over the first 4 bytes).
pub fn flow_control_packet(vl: u8, fctbs: u16, fccl: u16) -> Vec<u8> {
    let mut p = (fctbs & 0x0FFF).to_be_bytes().to_vec();
    p.extend_from_slice(&((u16::from(vl & 0x0F) << 12) | (fccl & 0x0FFF)).to_be_bytes());
    let lpcrc = vcrc::vcrc(&p);
    p.extend_from_slice(&vcrc::to_wire(lpcrc));
    p
}

/// A whole RoCE frame.
#[derive(Debug, Clone)]
pub struct RoceFrame {
    pub l2: L2,
    pub l3: L3,
    pub udp_sport: u16,
    pub udp_dport: u16,
    /// Its BTH; the pad count is computed from the payload.
    pub bth: BthRepr,
    /// Values for the extended headers the opcode calls for (missing ones are written as 0).
    pub ext: ExtHeaders,
    pub payload: Vec<u8>,
}

impl RoceFrame {
    /// Encodes the frame: Ethernet, IP/GRH, UDP (RoCEv2), BTH, extended headers, payload, pad
    /// and the ICRC.
    pub fn encode(&self) -> Vec<u8> {
        let ib = self.transport_without_icrc();
        match self.l3.addresses {
            Addresses::Grh { .. } => {
                let grh = self.l3.header(0x1B, ib.len() + 4);
                let grh_array: [u8; 40] = grh.as_slice().try_into().expect("a GRH is 40 bytes");
                let crc = icrc::rocev1(&grh_array, &ib);
                let mut f = self.l2.header(0x8915);
                f.extend_from_slice(&grh);
                f.extend_from_slice(&ib);
                f.extend_from_slice(&icrc::to_wire(crc));
                f
            }
            Addresses::V4 { .. } | Addresses::V6 { .. } => {
                let udp_len = 8 + ib.len() + 4;
                let ip = self.l3.header(17, udp_len);
                let udp = UdpRepr {
                    source_port: self.udp_sport,
                    destination_port: self.udp_dport,
                    length: udp_len as u16,
                    checksum: 0,
                }
                .emit();
                let (crc, ethertype) = match self.l3.addresses {
                    Addresses::V6 { .. } => {
                        (icrc::rocev2_ipv6(ip.as_slice().try_into().expect("40-byte IPv6 header"), &udp, &ib), 0x86DD)
                    }
                    _ => (icrc::rocev2_ipv4(&ip, &udp, &ib), 0x0800),
                };
                let mut f = self.l2.header(ethertype);
                f.extend_from_slice(&ip);
                f.extend_from_slice(&udp);
                f.extend_from_slice(&ib);
                f.extend_from_slice(&icrc::to_wire(crc));
                f
            }
        }
    }

    /// The same transport packet on an InfiniBand link: the LRH, a GRH when `self.l3` is one
    /// (its GIDs and hop limit; the traffic class from DSCP and ECN), the BTH onwards, the
    /// native ICRC and the VCRC (`../shared/protocol-facts.md` §15). Ethernet, IP and UDP are
    /// not used.
    pub fn encode_native(&self, lrh: &Lrh) -> Vec<u8> {
        let ib = self.transport_without_icrc();
        let grh = match self.l3.addresses {
            Addresses::Grh { .. } => self.l3.header(0x1B, ib.len() + 4),
            Addresses::V4 { .. } | Addresses::V6 { .. } => Vec::new(),
        };
        let next_header = if grh.is_empty() { NextHeader::IbaLocal } else { NextHeader::IbaGlobal };
        let packet_words = ((8 + grh.len() + ib.len() + 4) / 4) as u16;
        let header =
            LrhRepr { vl: lrh.vl, lver: 0, sl: lrh.sl, next_header, dlid: lrh.dlid, packet_words, slid: lrh.slid };
        let mut packet = header.emit().to_vec();
        packet.extend_from_slice(&grh);
        packet.extend_from_slice(&ib);
        let crc = icrc::native(&packet).expect("an LRH with a BTH after it");
        packet.extend_from_slice(&icrc::to_wire(crc));
        let variant = vcrc::vcrc(&packet);
        packet.extend_from_slice(&vcrc::to_wire(variant));
        packet
    }

    /// BTH, extended headers, payload and pad.
    fn transport_without_icrc(&self) -> Vec<u8> {
        let pad = ((4 - self.payload.len() % 4) % 4) as u8;
        let mut ib = BthRepr { pad_count: pad, ..self.bth }.emit().to_vec();
        let set = opcode::info(self.bth.opcode).map(|i| i.ext).unwrap_or_default();
        self.ext.emit(set, |header| ib.extend_from_slice(header));
        ib.extend_from_slice(&self.payload);
        ib.extend(std::iter::repeat_n(0u8, usize::from(pad)));
        ib
    }
}

/// `frame` (an Ethernet frame) with a header announced by `ethertype` after its source MAC:
/// the EtherType, the header's `fields`, then the frame's own EtherType and payload.
pub fn with_header_after_macs(frame: &[u8], ethertype: u16, fields: &[u8]) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(fields);
    f.extend_from_slice(&frame[12..]);
    f
}

/// `frame` with an Arista timestamp header: subtype 1, `version` (0x0010 64-bit TAI, 0x0120
/// 48-bit UTC, …), the UTC time `ts_ns` in that format (on TAI, 37 seconds ahead; the 48-bit
/// format keeps the low 16 bits of the seconds).
pub fn with_arista_timestamp(frame: &[u8], version: u16, ts_ns: i64) -> Vec<u8> {
    let tai = version & 0x0F00 == 0;
    let ts_ns = if tai { ts_ns + crate::decode::TAI_MINUS_UTC_NS } else { ts_ns };
    let (seconds, nanoseconds) = (ts_ns.div_euclid(1_000_000_000) as u32, ts_ns.rem_euclid(1_000_000_000) as u32);
    let mut fields = Vec::new();
    AristaRepr { version, seconds, nanoseconds }.emit(|b| fields.extend_from_slice(b));
    with_header_after_macs(frame, ETHERTYPE_ARISTA, &fields)
}

/// An Ethernet frame of `outer` carrying an IPv4 GRE packet from `src` to `dst`: a GRE header
/// of `protocol` with the optional `key` and `sequence` words, then `after` (an ERSPAN header,
/// a vendor header, a label stack, or nothing) and `inner`.
struct GrePacket<'a> {
    outer: &'a L2,
    src: [u8; 4],
    dst: [u8; 4],
    protocol: u16,
    key: Option<u32>,
    sequence: Option<u32>,
}

impl GrePacket<'_> {
    fn around(&self, after: &[u8], inner: &[u8]) -> Vec<u8> {
        let gre = GreHeader {
            flags_version: 0,
            protocol: self.protocol,
            checksum: None,
            key: self.key,
            sequence: self.sequence,
        };
        let mut payload = Vec::new();
        gre.emit(|b| payload.extend_from_slice(b));
        payload.extend_from_slice(after);
        payload.extend_from_slice(inner);
        let mut f = self.outer.header(0x0800);
        f.extend_from_slice(&ipv4_header(
            self.src,
            self.dst,
            0,
            64,
            0,
            rocescope_parsers::ipv4::PROTO_GRE,
            payload.len(),
        ));
        f.extend_from_slice(&payload);
        f
    }
}

fn gre<'a>(outer: &'a L2, src: [u8; 4], dst: [u8; 4], protocol: u16) -> GrePacket<'a> {
    GrePacket { outer, src, dst, protocol, key: None, sequence: None }
}

/// An ERSPAN type I mirror copy (GRE 0x88BE with no sequence number and no ERSPAN header, as
/// Broadcom-based switches send it) of `inner`.
pub fn erspan1(outer: &L2, src: [u8; 4], dst: [u8; 4], inner: &[u8]) -> Vec<u8> {
    gre(outer, src, dst, PROTO_ERSPAN_II).around(&[], inner)
}

fn emitted(header: &ErspanHeader) -> Vec<u8> {
    let mut bytes = Vec::new();
    header.emit(|b| bytes.extend_from_slice(b));
    bytes
}

/// An IPv4 GRE packet carrying `inner` behind an ERSPAN type II header (GRE with a sequence
/// number, or without one as some switches send it), as a switch's mirror session sends it.
pub fn erspan2(outer: &L2, src: [u8; 4], dst: [u8; 4], session: u16, sequence: Option<u32>, inner: &[u8]) -> Vec<u8> {
    let header = emitted(&ErspanHeader::new(1, session));
    GrePacket { sequence, ..gre(outer, src, dst, PROTO_ERSPAN_II) }.around(&header, inner)
}

/// An IPv4 GRE packet carrying `inner` behind an ERSPAN type III header with a timestamp
/// (100 ns granularity) and, when `truncated`, the T bit set.
pub fn erspan3(
    outer: &L2,
    src: [u8; 4],
    dst: [u8; 4],
    session: u16,
    timestamp: u32,
    truncated: bool,
    inner: &[u8],
) -> Vec<u8> {
    // frame type 0 (Ethernet), granularity 1 (100 ns), no platform sub-header
    let header =
        ErspanHeader { truncated, timestamp: Some(timestamp), granularity: Some(1), ..ErspanHeader::new(2, session) };
    GrePacket { sequence: Some(1), ..gre(outer, src, dst, PROTO_ERSPAN_III) }.around(&emitted(&header), inner)
}

/// An IPv4 GRE packet carrying `inner` behind an ERSPAN type III header with an IEEE 1588
/// timestamp of the UTC time `ts_ns` (PTP's TAI: 37 seconds ahead): its nanoseconds in the
/// header, its seconds in a platform sub-header of ID 3 (port `port`).
pub fn erspan3_ieee1588(outer: &L2, src: [u8; 4], dst: [u8; 4], ts_ns: i64, port: u16, inner: &[u8]) -> Vec<u8> {
    let tai = ts_ns + crate::decode::TAI_MINUS_UTC_NS;
    let (seconds, nanos) = (tai.div_euclid(1_000_000_000) as u32, tai.rem_euclid(1_000_000_000) as u32);
    let platform = (3u64 << 58) | (u64::from(port & 0x3FFF) << 32) | u64::from(seconds);
    let header = ErspanHeader {
        timestamp: Some(nanos),
        granularity: Some(2),
        platform: Some(platform),
        ..ErspanHeader::new(2, 1)
    };
    GrePacket { sequence: Some(1), ..gre(outer, src, dst, PROTO_ERSPAN_III) }.around(&emitted(&header), inner)
}

/// An IPv4 UDP packet to port 4789 carrying `inner` behind a VXLAN header.
pub fn vxlan(outer: &L2, src: [u8; 4], dst: [u8; 4], vni: u32, inner: &[u8]) -> Vec<u8> {
    let length = (16 + inner.len()) as u16;
    let udp = UdpRepr { source_port: 49152, destination_port: rocescope_parsers::udp::PORT_VXLAN, length, checksum: 0 };
    let mut f = outer.header(0x0800);
    f.extend_from_slice(&ipv4_header(src, dst, 0, 64, 0, 17, usize::from(length)));
    f.extend_from_slice(&udp.emit());
    f.extend_from_slice(&vxlan::emit(vni));
    f.extend_from_slice(inner);
    f
}

/// An IPv4 GRE packet (protocol 0x6558, with a key) carrying an Ethernet frame.
pub fn gre_ethernet(outer: &L2, src: [u8; 4], dst: [u8; 4], key: u32, inner: &[u8]) -> Vec<u8> {
    GrePacket { key: Some(key), ..gre(outer, src, dst, PROTO_TRANSPARENT_ETHERNET) }.around(&[], inner)
}

/// NVIDIA Spectrum's mirror copy of `inner` (SONiC everflow): GRE protocol 0x8949 without
/// options, then a vendor header of `header_len` bytes (22 on the parts SONiC tests; its
/// layout is not public, so these bytes are a fixed pattern that holds no Ethernet header).
pub fn spectrum_mirror(outer: &L2, src: [u8; 4], dst: [u8; 4], header_len: usize, inner: &[u8]) -> Vec<u8> {
    let vendor: Vec<u8> = (0..header_len).map(|i| 0xA0 | (i as u8 & 0x0F)).collect();
    gre(outer, src, dst, 0x8949).around(&vendor, inner)
}

/// An MPLS label stack: (label, traffic class, TTL) entries, outermost first, the bottom of
/// stack bit on the last.
pub fn mpls_labels(labels: &[(u32, u8, u8)]) -> Vec<u8> {
    let last = labels.len().saturating_sub(1);
    let entry =
        |(i, &(label, tc, ttl)): (usize, &(u32, u8, u8))| MplsLabel { label, tc, bottom: i == last, ttl }.emit();
    labels.iter().enumerate().flat_map(entry).collect()
}

/// `frame` (an Ethernet frame carrying IP) label-switched: an MPLS label stack between its
/// Ethernet header and its IP packet, the EtherType 0x8847.
pub fn with_mpls(frame: &[u8], labels: &[(u32, u8, u8)]) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend_from_slice(&0x8847u16.to_be_bytes());
    f.extend(mpls_labels(labels));
    f.extend_from_slice(&frame[14..]);
    f
}

/// An Ethernet pseudowire (RFC 4448): `inner`, a whole Ethernet frame, behind an MPLS label
/// stack and, when `sequence` is given, a control word with that sequence number; carried in
/// an Ethernet frame of `outer`.
pub fn mpls_pseudowire(outer: &L2, labels: &[(u32, u8, u8)], sequence: Option<u16>, inner: &[u8]) -> Vec<u8> {
    let mut f = outer.header(0x8847);
    f.extend(mpls_labels(labels));
    f.extend(sequence.map(|n| u32::from(n).to_be_bytes()).into_iter().flatten());
    f.extend_from_slice(inner);
    f
}

/// An IPv4 GRE packet (protocol 0x8847) carrying `ip_packet` behind an MPLS label stack
/// (MPLS-over-GRE mirroring).
pub fn gre_mpls(outer: &L2, src: [u8; 4], dst: [u8; 4], labels: &[(u32, u8, u8)], ip_packet: &[u8]) -> Vec<u8> {
    gre(outer, src, dst, 0x8847).around(&mpls_labels(labels), ip_packet)
}

/// `frame` as a Metamako (Arista 7130) tap forwards it: its original FCS, an ingress sequence
/// number extension when `sequence` is given, the time `ts_ns`, flags (original FCS valid,
/// extensions), device `device` and port `port`; then a new FCS when `new_fcs`.
pub fn with_metamako_trailer(
    frame: &[u8],
    ts_ns: i64,
    device: u16,
    port: u8,
    sequence: Option<u16>,
    new_fcs: bool,
) -> Vec<u8> {
    let trailer = MetamakoRepr {
        // the FCS goes on the wire least significant byte first
        original_fcs: crc32fast::hash(frame).swap_bytes(),
        sequence_number: sequence,
        seconds: ts_ns.div_euclid(1_000_000_000) as u32,
        nanoseconds: ts_ns.rem_euclid(1_000_000_000) as u32,
        flags: 0x01, // the original FCS was valid
        device_id: device,
        port,
    };
    let mut f = frame.to_vec();
    trailer.emit(|b| f.extend_from_slice(b));
    if new_fcs {
        let fcs = crc32fast::hash(&f).to_le_bytes();
        f.extend_from_slice(&fcs);
    }
    f
}

/// A 60-byte PFC frame (802.1Qbb): class-enable vector and per-priority pause quanta.
pub fn pfc_frame(src: Mac, class_enable: u8, quanta: [u16; 8]) -> Vec<u8> {
    mac_control_frame(src, MacControl::Pfc(Pfc { class_enable: u16::from(class_enable), quanta }))
}

/// A 60-byte 802.3x PAUSE frame.
pub fn pause_frame(src: Mac, quanta: u16) -> Vec<u8> {
    mac_control_frame(src, MacControl::Pause { quanta })
}

/// A 60-byte MAC Control frame to the reserved multicast address.
fn mac_control_frame(src: Mac, control: MacControl) -> Vec<u8> {
    let mut f = L2::new(src, [0x01, 0x80, 0xC2, 0, 0, 0x01]).header(0x8808);
    control.emit(|b| f.extend_from_slice(b));
    f.resize(60, 0);
    f
}

/// A 60-byte ARP request (a non-RoCE decoy).
pub fn arp_request(src: Mac, sender: [u8; 4], target: [u8; 4]) -> Vec<u8> {
    let mut f = L2::new(src, [0xFF; 6]).header(0x0806);
    f.extend_from_slice(&[0, 1, 0x08, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&sender);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&target);
    f.resize(60, 0);
    f
}

/// A CM MAD (256 bytes): the MAD header for `attribute_id` and the message bytes.
pub fn cm_mad(attribute_id: u16, transaction_id: u64, message: &[(usize, &[u8])]) -> Vec<u8> {
    let mut m = vec![0u8; 256];
    m[..4].copy_from_slice(&[1, 0x07, 2, 0x03]);
    m[8..16].copy_from_slice(&transaction_id.to_be_bytes());
    m[16..18].copy_from_slice(&attribute_id.to_be_bytes());
    for &(offset, bytes) in message {
        m[24 + offset..24 + offset + bytes.len()].copy_from_slice(bytes);
    }
    m
}

/// The last three bytes of a 24-bit value, as written in BTH and CM fields.
pub fn u24(v: u32) -> [u8; 3] {
    let [_, a, b, c] = v.to_be_bytes();
    [a, b, c]
}
