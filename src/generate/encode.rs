//! Frame encoders for the sample generator: the inverse of the decoders, used to build
//! captures whose every byte is known. Lengths, pad counts and the ICRC are computed, so a
//! built frame is valid unless a scenario damages it on purpose.

use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::opcode::{self, ExtHeader};
use rocescope_parsers::{icrc, vcrc};

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
        let mut b = Vec::with_capacity(14 + 4 * self.vlans.len());
        b.extend_from_slice(&self.dst);
        b.extend_from_slice(&self.src);
        for &(tpid, pcp, vid) in &self.vlans {
            b.extend_from_slice(&tpid.to_be_bytes());
            b.extend_from_slice(&((u16::from(pcp) << 13) | (vid & 0x0FFF)).to_be_bytes());
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

/// An IPv4 header (no options, don't-fragment set) with a correct header checksum, built by
/// etherparse; a payload longer than IPv4 allows is given its largest length.
pub fn ipv4_header(src: [u8; 4], dst: [u8; 4], tos: u8, ttl: u8, id: u16, protocol: u8, payload_len: usize) -> Vec<u8> {
    use etherparse::{IpDscp, IpEcn, IpNumber, Ipv4Header};
    const MAX_PAYLOAD: usize = u16::MAX as usize - Ipv4Header::MIN_LEN;
    let Ok(mut h) = Ipv4Header::new(payload_len.min(MAX_PAYLOAD) as u16, ttl, IpNumber(protocol), src, dst) else {
        return Vec::new(); // unreachable: the length is within the bound
    };
    h.identification = id;
    (h.dscp, h.ecn) = (IpDscp::try_new(tos >> 2).unwrap_or_default(), IpEcn::try_new(tos & 3).unwrap_or_default());
    h.header_checksum = h.calc_header_checksum();
    h.to_bytes().to_vec()
}

/// An IPv6 header or a GRH (same shape).
fn six_header(tclass: u8, flow: u32, payload_len: usize, next: u8, hop: u8, src: [u8; 16], dst: [u8; 16]) -> Vec<u8> {
    let word = (6u32 << 28) | (u32::from(tclass) << 20) | (flow & 0xF_FFFF);
    let mut h = word.to_be_bytes().to_vec();
    h.extend_from_slice(&(payload_len as u16).to_be_bytes());
    h.extend_from_slice(&[next, hop]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h
}

/// BTH fields a scenario sets; PadCnt is computed from the payload.
#[derive(Debug, Clone, Copy)]
pub struct BthFields {
    pub opcode: u8,
    pub solicited: bool,
    pub mig_req: bool,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: u32,
}

impl BthFields {
    pub fn new(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        BthFields {
            opcode,
            solicited: false,
            mig_req: false,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp,
            ack_req: false,
            psn,
        }
    }
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
    let pad = if record_type == 2 { 2 } else { 0 };
    let (seconds, nanos) = (ts_ns.div_euclid(1_000_000_000) as u64, ts_ns.rem_euclid(1_000_000_000) as u64);
    // the fraction rounded up, which rounds back to the same nanosecond
    let fraction = (nanos << 32).div_ceil(1_000_000_000);
    let mut r = ((seconds << 32) | fraction).to_le_bytes().to_vec();
    let rlen = (16 + pad + packet.len()).div_ceil(8) * 8;
    r.extend_from_slice(&[record_type, 0x04]);
    r.extend_from_slice(&(rlen as u16).to_be_bytes());
    r.extend_from_slice(&loss_counter.to_be_bytes());
    r.extend_from_slice(&(packet.len() as u16).to_be_bytes());
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
    pub bth: BthFields,
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
                let mut udp = [0u8; 8];
                udp[0..2].copy_from_slice(&self.udp_sport.to_be_bytes());
                udp[2..4].copy_from_slice(&self.udp_dport.to_be_bytes());
                udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
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
        let words = ((8 + grh.len() + ib.len() + 4) / 4) as u16;
        let lnh = if grh.is_empty() { 2 } else { 3 };
        let mut packet = vec![lrh.vl << 4, (lrh.sl << 4) | lnh];
        packet.extend_from_slice(&lrh.dlid.to_be_bytes());
        packet.extend_from_slice(&(words & 0x07FF).to_be_bytes());
        packet.extend_from_slice(&lrh.slid.to_be_bytes());
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
        let b = &self.bth;
        let pad = ((4 - self.payload.len() % 4) % 4) as u8;
        let mut ib = vec![b.opcode, (u8::from(b.solicited) << 7) | (u8::from(b.mig_req) << 6) | (pad << 4)];
        ib.extend_from_slice(&b.pkey.to_be_bytes());
        ib.push((u8::from(b.fecn) << 7) | (u8::from(b.becn) << 6));
        ib.extend_from_slice(&b.dest_qp.to_be_bytes()[1..]);
        ib.push(u8::from(b.ack_req) << 7);
        ib.extend_from_slice(&b.psn.to_be_bytes()[1..]);
        let set = opcode::info(b.opcode).map(|i| i.ext).unwrap_or_default();
        for kind in set.iter() {
            encode_ext(&mut ib, kind, &self.ext);
        }
        ib.extend_from_slice(&self.payload);
        ib.extend(std::iter::repeat_n(0u8, usize::from(pad)));
        ib
    }
}

fn encode_ext(out: &mut Vec<u8>, kind: ExtHeader, ext: &ExtHeaders) {
    match kind {
        ExtHeader::Rdeth => out.extend_from_slice(&ext.rdeth.map_or(0, |r| r.ee_context & 0xFF_FFFF).to_be_bytes()),
        ExtHeader::Deth => {
            let d = ext.deth.unwrap_or(rocescope_parsers::ext::Deth { qkey: 0, src_qp: 0 });
            out.extend_from_slice(&d.qkey.to_be_bytes());
            out.extend_from_slice(&(d.src_qp & 0xFF_FFFF).to_be_bytes());
        }
        ExtHeader::Xrceth => out.extend_from_slice(&ext.xrceth.map_or(0, |x| x.xrc_srq & 0xFF_FFFF).to_be_bytes()),
        ExtHeader::Feth => out.extend_from_slice(&ext.feth.map_or(0, |f| f.raw).to_be_bytes()),
        ExtHeader::Reth => {
            let r = ext.reth.unwrap_or(rocescope_parsers::ext::Reth { va: 0, rkey: 0, dma_len: 0 });
            out.extend_from_slice(&r.va.to_be_bytes());
            out.extend_from_slice(&r.rkey.to_be_bytes());
            out.extend_from_slice(&r.dma_len.to_be_bytes());
        }
        ExtHeader::AtomicEth => {
            let a =
                ext.atomic_eth.unwrap_or(rocescope_parsers::ext::AtomicEth { va: 0, rkey: 0, swap_add: 0, compare: 0 });
            out.extend_from_slice(&a.va.to_be_bytes());
            out.extend_from_slice(&a.rkey.to_be_bytes());
            out.extend_from_slice(&a.swap_add.to_be_bytes());
            out.extend_from_slice(&a.compare.to_be_bytes());
        }
        ExtHeader::Aeth => {
            let a = ext.aeth.unwrap_or(rocescope_parsers::ext::Aeth { syndrome: 0x1F, msn: 0 });
            out.push(a.syndrome);
            out.extend_from_slice(&a.msn.to_be_bytes()[1..]);
        }
        ExtHeader::AtomicAckEth => out.extend_from_slice(&ext.atomic_ack_eth.map_or(0, |a| a.orig).to_be_bytes()),
        ExtHeader::ImmDt => out.extend_from_slice(&ext.imm.unwrap_or(0).to_be_bytes()),
        ExtHeader::Ieth => out.extend_from_slice(&ext.ieth.map_or(0, |i| i.rkey).to_be_bytes()),
        ExtHeader::CnpReserved => out.extend_from_slice(&[0; 16]),
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
    let (seconds, nanos) = (ts_ns.div_euclid(1_000_000_000) as u64, ts_ns.rem_euclid(1_000_000_000) as u32);
    let mut fields = vec![0x00, 0x01];
    fields.extend_from_slice(&version.to_be_bytes());
    if version & 0x00F0 == 0x0010 {
        fields.extend_from_slice(&(seconds as u32).to_be_bytes());
    } else {
        fields.extend_from_slice(&(seconds as u16).to_be_bytes());
    }
    fields.extend_from_slice(&nanos.to_be_bytes());
    with_header_after_macs(frame, 0xD28B, &fields)
}

/// An Ethernet frame of `outer` carrying an IPv4 GRE packet from `src` to `dst`: `gre`, the
/// GRE header and what follows it.
fn gre_packet(outer: &L2, src: [u8; 4], dst: [u8; 4], gre: &[u8]) -> Vec<u8> {
    let mut f = outer.header(0x0800);
    f.extend_from_slice(&ipv4_header(src, dst, 0, 64, 0, 47, gre.len()));
    f.extend_from_slice(gre);
    f
}

/// An ERSPAN type I mirror copy (GRE 0x88BE with no sequence number and no ERSPAN header, as
/// Broadcom-based switches send it) of `inner`.
pub fn erspan1(outer: &L2, src: [u8; 4], dst: [u8; 4], inner: &[u8]) -> Vec<u8> {
    let mut gre = vec![0x00, 0x00, 0x88, 0xBE];
    gre.extend_from_slice(inner);
    gre_packet(outer, src, dst, &gre)
}

/// An IPv4 GRE packet carrying `inner` behind an ERSPAN type II header (GRE with a sequence
/// number, or without one as some switches send it), as a switch's mirror session sends it.
pub fn erspan2(outer: &L2, src: [u8; 4], dst: [u8; 4], session: u16, sequence: Option<u32>, inner: &[u8]) -> Vec<u8> {
    // GRE with its sequence number (S bit), or without it as some switches send ERSPAN II
    let mut gre = vec![if sequence.is_some() { 0x10 } else { 0x00 }, 0x00, 0x88, 0xBE];
    gre.extend(sequence.map(u32::to_be_bytes).into_iter().flatten());
    let word0 = (1u32 << 28) | u32::from(session & 0x3FF);
    gre.extend_from_slice(&word0.to_be_bytes());
    gre.extend_from_slice(&0u32.to_be_bytes());
    gre.extend_from_slice(inner);
    gre_packet(outer, src, dst, &gre)
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
    // FT 0 (Ethernet), granularity 01 (100 ns), no platform sub-header
    let header = erspan3_header(session, truncated, timestamp, 0b0000_0010, None);
    gre_packet(outer, src, dst, &[&header[..], inner].concat())
}

/// An IPv4 GRE packet carrying `inner` behind an ERSPAN type III header with an IEEE 1588
/// timestamp of the UTC time `ts_ns` (PTP's TAI: 37 seconds ahead): its nanoseconds in the
/// header, its seconds in a platform sub-header of ID 3 (port `port`).
pub fn erspan3_ieee1588(outer: &L2, src: [u8; 4], dst: [u8; 4], ts_ns: i64, port: u16, inner: &[u8]) -> Vec<u8> {
    let tai = ts_ns + crate::decode::TAI_MINUS_UTC_NS;
    let (seconds, nanos) = (tai.div_euclid(1_000_000_000) as u32, tai.rem_euclid(1_000_000_000) as u32);
    let platform = (3u64 << 58) | (u64::from(port & 0x3FFF) << 32) | u64::from(seconds);
    // FT 0, granularity 10 (IEEE 1588), O set
    let header = erspan3_header(1, false, nanos, 0b0000_0101, Some(platform));
    gre_packet(outer, src, dst, &[&header[..], inner].concat())
}

/// GRE (with a sequence number) and an ERSPAN type III header: session, T bit, timestamp,
/// the last byte of the third word (direction, granularity, O), and a platform sub-header.
fn erspan3_header(session: u16, truncated: bool, timestamp: u32, last: u8, platform: Option<u64>) -> Vec<u8> {
    let mut gre = vec![0x10, 0x00, 0x22, 0xEB, 0, 0, 0, 1];
    let word0 = (2u32 << 28) | (u32::from(truncated) << 10) | u32::from(session & 0x3FF);
    gre.extend_from_slice(&word0.to_be_bytes());
    gre.extend_from_slice(&timestamp.to_be_bytes());
    gre.extend_from_slice(&[0, 0, 0, last]);
    gre.extend(platform.map(u64::to_be_bytes).into_iter().flatten());
    gre
}

/// An IPv4 UDP packet to port 4789 carrying `inner` behind a VXLAN header.
pub fn vxlan(outer: &L2, src: [u8; 4], dst: [u8; 4], vni: u32, inner: &[u8]) -> Vec<u8> {
    let mut udp = vec![0u8; 8];
    udp[0..2].copy_from_slice(&49152u16.to_be_bytes());
    udp[2..4].copy_from_slice(&4789u16.to_be_bytes());
    udp[4..6].copy_from_slice(&((16 + inner.len()) as u16).to_be_bytes());
    udp.extend_from_slice(&[0x08, 0, 0, 0]);
    udp.extend_from_slice(&(vni << 8).to_be_bytes());
    udp.extend_from_slice(inner);
    let mut f = outer.header(0x0800);
    f.extend_from_slice(&ipv4_header(src, dst, 0, 64, 0, 17, udp.len()));
    f.extend_from_slice(&udp);
    f
}

/// An IPv4 GRE packet (protocol 0x6558, with a key) carrying an Ethernet frame.
pub fn gre_ethernet(outer: &L2, src: [u8; 4], dst: [u8; 4], key: u32, inner: &[u8]) -> Vec<u8> {
    let mut gre = vec![0x20, 0x00, 0x65, 0x58];
    gre.extend_from_slice(&key.to_be_bytes());
    gre.extend_from_slice(inner);
    gre_packet(outer, src, dst, &gre)
}

/// NVIDIA Spectrum's mirror copy of `inner` (SONiC everflow): GRE protocol 0x8949 without
/// options, then a vendor header of `header_len` bytes (22 on the parts SONiC tests; its
/// layout is not public, so these bytes are a fixed pattern that holds no Ethernet header).
pub fn spectrum_mirror(outer: &L2, src: [u8; 4], dst: [u8; 4], header_len: usize, inner: &[u8]) -> Vec<u8> {
    let mut gre = vec![0x00, 0x00, 0x89, 0x49];
    gre.extend((0..header_len).map(|i| 0xA0 | (i as u8 & 0x0F)));
    gre.extend_from_slice(inner);
    gre_packet(outer, src, dst, &gre)
}

/// An MPLS label stack: (label, traffic class, TTL) entries, outermost first, the bottom of
/// stack bit on the last.
pub fn mpls_labels(labels: &[(u32, u8, u8)]) -> Vec<u8> {
    let last = labels.len().saturating_sub(1);
    let entry = |(i, &(label, tc, ttl)): (usize, &(u32, u8, u8))| {
        ((label << 12) | (u32::from(tc & 7) << 9) | (u32::from(i == last) << 8) | u32::from(ttl)).to_be_bytes()
    };
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
    let mut gre = vec![0x00, 0x00, 0x88, 0x47];
    gre.extend(mpls_labels(labels));
    gre.extend_from_slice(ip_packet);
    gre_packet(outer, src, dst, &gre)
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
    let mut f = frame.to_vec();
    f.extend_from_slice(&crc32fast::hash(frame).to_le_bytes());
    if let Some(n) = sequence {
        // tag 0, marked last, no data words: the number in the header word's middle bytes
        f.extend_from_slice(&((u32::from(n) << 8) | 0x20).to_be_bytes());
    }
    f.extend_from_slice(&(ts_ns.div_euclid(1_000_000_000) as u32).to_be_bytes());
    f.extend_from_slice(&(ts_ns.rem_euclid(1_000_000_000) as u32).to_be_bytes());
    f.push(0x01 | if sequence.is_some() { 0x02 } else { 0 });
    f.extend_from_slice(&device.to_be_bytes());
    f.push(port);
    if new_fcs {
        let fcs = crc32fast::hash(&f).to_le_bytes();
        f.extend_from_slice(&fcs);
    }
    f
}

/// A 60-byte PFC frame (802.1Qbb): class-enable vector and per-priority pause quanta.
pub fn pfc_frame(src: Mac, class_enable: u8, quanta: [u16; 8]) -> Vec<u8> {
    let mut f = L2::new(src, [0x01, 0x80, 0xC2, 0, 0, 0x01]).header(0x8808);
    f.extend_from_slice(&[0x01, 0x01, 0x00, class_enable]);
    for q in quanta {
        f.extend_from_slice(&q.to_be_bytes());
    }
    f.resize(60, 0);
    f
}

/// A 60-byte 802.3x PAUSE frame.
pub fn pause_frame(src: Mac, quanta: u16) -> Vec<u8> {
    let mut f = L2::new(src, [0x01, 0x80, 0xC2, 0, 0, 0x01]).header(0x8808);
    f.extend_from_slice(&[0x00, 0x01]);
    f.extend_from_slice(&quanta.to_be_bytes());
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
