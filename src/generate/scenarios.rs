//! The sample scenarios. Each is a deterministic function of its fixed parameters and of a
//! seeded splitmix64 sequence, so every run writes the same bytes.

use rocescope_parsers::ext::{Aeth, AtomicAckEth, AtomicEth, Deth, ExtHeaders, Ieth, Reth, Xrceth};
use rocescope_parsers::opcode::CNP;
use rocescope_parsers::psn::psn_add;

use super::encode::{self, Addresses, BthRepr, L2, L3, Mac, RoceFrame, u24};
use crate::output::packet::capture_file::Interface;

/// Base time of every scenario: 2023-11-14T22:13:20Z.
pub const T0: i64 = 1_700_000_000_000_000_000;
pub(super) const US: i64 = 1_000;
pub(super) const MS: i64 = 1_000_000;

/// A deterministic pseudo-random sequence (splitmix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// How a scenario is stored.
#[derive(Debug, Clone)]
pub enum Container {
    Pcap { snaplen: u32, link_type: u32 },
    Pcapng { interfaces: Vec<Interface> },
}

/// A frame of a scenario: when, on which pcapng interface, and its bytes.
#[derive(Debug, Clone)]
pub struct Timed {
    pub ts_ns: i64,
    pub interface: usize,
    pub bytes: Vec<u8>,
    /// Write as a pcapng simple packet block.
    pub simple: bool,
}

/// A finished scenario.
pub struct Scenario {
    pub file: &'static str,
    pub container: Container,
    pub frames: Vec<Timed>,
}

impl Scenario {
    pub(super) fn pcap(file: &'static str) -> Self {
        Scenario::pcap_of(file, 1)
    }

    /// A classic pcap file of another link type.
    pub(super) fn pcap_of(file: &'static str, link_type: u32) -> Self {
        Scenario { file, container: Container::Pcap { snaplen: 65535, link_type }, frames: Vec::new() }
    }

    pub(super) fn push(&mut self, ts_ns: i64, bytes: Vec<u8>) {
        self.frames.push(Timed { ts_ns, interface: 0, bytes, simple: false });
    }

    pub(super) fn sorted(mut self) -> Self {
        self.frames.sort_by_key(|f| f.ts_ns);
        self
    }
}

/// One side of an RC connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Endpoint {
    pub(super) mac: Mac,
    pub(super) ip: [u8; 4],
    pub(super) qpn: u32,
    pub(super) sport: u16,
}

pub(super) fn endpoint(n: u8, qpn: u32) -> Endpoint {
    Endpoint { mac: [0x02, 0, 0, 0, 0, n], ip: [10, 0, 0, n], qpn, sport: 0xC000 | (qpn as u16 & 0x3FFF) }
}

/// Both sides of a connection and how their packets are marked.
#[derive(Debug, Clone, Copy)]
pub(super) struct Conn {
    pub(super) a: Endpoint,
    pub(super) b: Endpoint,
    /// (PCP, VID) when VLAN-tagged.
    pub(super) vlan: Option<(u8, u16)>,
}

impl Conn {
    /// A RoCEv2 frame from A (or B) to the other side's QP: DSCP 26, ECT(0), payload bytes
    /// derived from the PSN.
    pub(super) fn frame(&self, from_a: bool, opcode: u8, psn: u32, ext: ExtHeaders, payload_len: usize) -> RoceFrame {
        let (src, dst) = if from_a { (self.a, self.b) } else { (self.b, self.a) };
        let mut l2 = L2::new(src.mac, dst.mac);
        if let Some((pcp, vid)) = self.vlan {
            l2 = l2.tagged(pcp, vid);
        }
        RoceFrame {
            l2,
            l3: L3::v4(src.ip, dst.ip),
            udp_sport: src.sport,
            udp_dport: 4791,
            bth: BthRepr::new(opcode, dst.qpn, psn),
            ext,
            payload: (0..payload_len).map(|i| (i as u32).wrapping_add(psn) as u8).collect(),
        }
    }

    pub(super) fn ack(&self, from_a: bool, psn: u32, msn: u32, syndrome: u8) -> RoceFrame {
        self.frame(from_a, 0x11, psn, ExtHeaders { aeth: Some(Aeth { syndrome, msn }), ..ExtHeaders::default() }, 0)
    }

    pub(super) fn cnp(&self, from_a: bool) -> RoceFrame {
        let mut f = self.frame(from_a, CNP, 0, ExtHeaders::default(), 0);
        f.bth.becn = true;
        f.l3 = f.l3.with_qos(48, 0);
        if let Some((_, vid)) = self.vlan {
            f.l2.vlans = vec![(0x8100, 6, vid)];
        }
        f
    }
}

/// Credit code 0x0A (32 credits) in an ACK syndrome.
pub(super) const ACK_32_CREDITS: u8 = 0x0A;

/// The packets of one RDMA WRITE of `len` bytes at `mtu`, starting at `psn`: FIRST (with
/// RETH) / MIDDLE / LAST, or ONLY; AckReq on the last.
pub(super) fn write_message(conn: &Conn, psn: u32, len: usize, mtu: usize, va: u64) -> Vec<RoceFrame> {
    let count = len.div_ceil(mtu).max(1);
    let reth = ExtHeaders { reth: Some(Reth { va, rkey: 0x1234_5678, dma_len: len as u32 }), ..ExtHeaders::default() };
    (0..count)
        .map(|i| {
            let size = if i + 1 == count { len - mtu * i } else { mtu };
            let (opcode, ext) = match (i, count) {
                (_, 1) => (0x0A, reth),
                (0, _) => (0x06, reth),
                (i, n) if i + 1 == n => (0x08, ExtHeaders::default()),
                _ => (0x07, ExtHeaders::default()),
            };
            let mut f = conn.frame(true, opcode, psn_add(psn, i as u32), ext, size);
            f.bth.ack_req = i + 1 == count;
            f
        })
        .collect()
}

/// The connection seen from B: B's frames are "from A" of the reversed connection.
pub(super) fn reversed(conn: &Conn) -> Conn {
    Conn { a: conn.b, b: conn.a, vlan: conn.vlan }
}

/// The READ responses from B to A for a READ at `psn` of `packets` packets of `mtu` bytes:
/// FIRST / MIDDLE / LAST (AETH on the first and last), or ONLY.
pub(super) fn read_responses(conn: &Conn, psn: u32, packets: u32, mtu: usize, msn: u32) -> Vec<RoceFrame> {
    let aeth = ExtHeaders { aeth: Some(Aeth { syndrome: ACK_32_CREDITS, msn }), ..ExtHeaders::default() };
    (0..packets)
        .map(|i| {
            let (opcode, ext) = match (i, packets) {
                (_, 1) => (0x10, aeth),
                (0, _) => (0x0D, aeth),
                (i, n) if i + 1 == n => (0x0F, aeth),
                _ => (0x0E, ExtHeaders::default()),
            };
            conn.frame(false, opcode, psn_add(psn, i), ext, mtu)
        })
        .collect()
}

pub(super) fn read_request(conn: &Conn, from_a: bool, psn: u32, len: u32) -> RoceFrame {
    let reth =
        ExtHeaders { reth: Some(Reth { va: 0x7f00_2000_0000, rkey: 0x77, dma_len: len }), ..ExtHeaders::default() };
    let mut f = conn.frame(from_a, 0x0C, psn, reth, 0);
    f.bth.ack_req = true;
    f
}

/// CM REQ / REP / RTU between A (active) and B, then nothing else.
pub(super) fn cm_setup(conn: &Conn, a_psn: u32, b_psn: u32, mtu_code: u8) -> [RoceFrame; 3] {
    // Each side's QP1 numbers its MADs with its own PSNs.
    let gsi = |from_a: bool, attribute: u16, tid: u64, fields: &[(usize, &[u8])]| {
        let psn = if from_a { 0x40 + u32::from(attribute == 0x0014) } else { 0x90 };
        let deth = ExtHeaders { deth: Some(Deth { qkey: 0x8001_0000, src_qp: 1 }), ..ExtHeaders::default() };
        let mut f = conn.frame(from_a, 0x64, psn, deth, 0);
        f.bth.dest_qp = 1;
        // NICs send CM MADs with their management traffic class
        f.l3 = f.l3.with_qos(0, 0);
        f.payload = encode::cm_mad(attribute, tid, fields);
        f
    };
    let (a_id, b_id) = (0x1111_0001u32, 0x2222_0002u32);
    let req = gsi(
        true,
        0x0010,
        1,
        &[
            (0, &a_id.to_be_bytes()),
            (8, &0x0000_0000_0106_4A91u64.to_be_bytes()),
            (32, &u24(conn.a.qpn)),
            (44, &u24(a_psn)),
            (47, &[(22 << 3) | 7]),
            (48, &[0xFF, 0xFF]),
            (50, &[(mtu_code << 4) | 7]),
            (95, &[14 << 3]),
        ],
    );
    let rep = gsi(
        false,
        0x0013,
        1,
        &[
            (0, &b_id.to_be_bytes()),
            (4, &a_id.to_be_bytes()),
            (12, &u24(conn.b.qpn)),
            (20, &u24(b_psn)),
            (27, &[7 << 5]),
        ],
    );
    let rtu = gsi(true, 0x0014, 1, &[(0, &a_id.to_be_bytes()), (4, &b_id.to_be_bytes())]);
    [req, rep, rtu]
}

/// A healthy RC connection: CM setup, four 3000-byte RDMA WRITEs at MTU 1024 with coalesced
/// ACKs, a 2048-byte RDMA READ, a SEND with immediate data, CM teardown.
pub fn rc_write_healthy() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000101), b: endpoint(2, 0x000202), vlan: None };
    let mut s = Scenario::pcap("rc_write_healthy.pcap");
    let mut t = T0;
    let a_psn = 0x00_1000;
    for (i, f) in cm_setup(&conn, a_psn, 0x00_8000, 3).into_iter().enumerate() {
        s.push(t + i as i64 * 50 * US, f.encode());
    }
    t += 200 * US;
    let mut psn = a_psn;
    let mut msn = 0;
    for m in 0..4u64 {
        let packets = write_message(&conn, psn, 3000, 1024, 0x7f00_0000_0000 + m * 4096);
        let count = packets.len() as u32;
        for f in packets {
            s.push(t, f.encode());
            t += 4 * US;
        }
        psn = psn_add(psn, count);
        msn += 1;
        s.push(t + 2 * US, conn.ack(false, psn_add(psn, 0xFF_FFFF), msn, ACK_32_CREDITS).encode());
        t += 10 * US;
    }
    let mut read = conn.frame(
        true,
        0x0C,
        psn,
        ExtHeaders { reth: Some(Reth { va: 0x7f00_1000_0000, rkey: 0x99, dma_len: 2048 }), ..ExtHeaders::default() },
        0,
    );
    read.bth.ack_req = true;
    s.push(t, read.encode());
    msn += 1;
    let aeth = ExtHeaders { aeth: Some(Aeth { syndrome: ACK_32_CREDITS, msn }), ..ExtHeaders::default() };
    s.push(t + 5 * US, conn.frame(false, 0x0D, psn, aeth, 1024).encode());
    s.push(t + 9 * US, conn.frame(false, 0x0F, psn_add(psn, 1), aeth, 1024).encode());
    psn = psn_add(psn, 2);
    t += 20 * US;
    let mut send = conn.frame(true, 0x05, psn, ExtHeaders { imm: Some(0xC0FF_EE00), ..ExtHeaders::default() }, 100);
    send.bth.ack_req = true;
    send.bth.solicited = true;
    s.push(t, send.encode());
    msn += 1;
    s.push(t + 3 * US, conn.ack(false, psn, msn, ACK_32_CREDITS).encode());
    s
}

/// Two senders into one receiver on VLAN 100 (data PCP 3): the switch marks about one data
/// packet in ten CE, the receiver answers with CNPs (DSCP 48, PCP 6, BECN) rate-limited to one
/// per 50 µs per QP. Two CNPs leave with DSCP 0, three data packets with DSCP 0, two Not-ECT.
pub fn congestion_ecn_cnp() -> Scenario {
    let receiver = endpoint(3, 0x000303);
    let conns = [
        Conn { a: endpoint(1, 0x000111), b: Endpoint { qpn: 0x000301, ..receiver }, vlan: Some((3, 100)) },
        Conn { a: endpoint(2, 0x000122), b: Endpoint { qpn: 0x000302, ..receiver }, vlan: Some((3, 100)) },
    ];
    let mut s = Scenario::pcap("congestion_ecn_cnp.pcap");
    let mut rng = Rng::new(0xC0_4E57);
    let mut psn = [0x10_0000u32, 0x20_0000];
    let mut last_cnp: [Option<i64>; 2] = [None; 2];
    let mut msn = [0u32; 2];
    let mut wrong_cnp_dscp = 2;
    let mut data_index = 0;
    for round in 0..20 {
        for (c, conn) in conns.iter().enumerate() {
            let t = T0 + (round * 2 + c as i64) * 40 * US;
            for (i, mut f) in write_message(conn, psn[c], 2048, 256, 0x1000 * round as u64).into_iter().enumerate() {
                let ts = t + i as i64 * 2 * US;
                data_index += 1;
                let ce = rng.chance(10);
                f.l3 = match data_index {
                    17 | 211 | 233 => f.l3.with_qos(0, 2),
                    101 | 250 => f.l3.with_qos(26, 0),
                    _ if ce => f.l3.with_qos(26, 3),
                    _ => f.l3,
                };
                s.push(ts, f.encode());
                if ce && last_cnp[c].is_none_or(|last| ts - last >= 50 * US) {
                    last_cnp[c] = Some(ts);
                    let mut cnp = conn.cnp(false);
                    if wrong_cnp_dscp > 0 && round >= 10 {
                        wrong_cnp_dscp -= 1;
                        cnp.l3 = cnp.l3.with_qos(0, 0);
                    }
                    s.push(ts + 3 * US, cnp.encode());
                }
            }
            psn[c] = psn_add(psn[c], 8);
            msn[c] += 1;
            s.push(t + 20 * US, conn.ack(false, psn_add(psn[c], 0xFF_FFFF), msn[c], ACK_32_CREDITS).encode());
        }
    }
    s.sorted()
}

/// An RC WRITE stream (MTU 256) in which three packets never reach the tap; the responder
/// NAKs (PSN sequence error, carrying the expected PSN) and the requester goes back N.
pub fn loss_go_back_n() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000411), b: endpoint(2, 0x000422), vlan: None };
    let mut s = Scenario::pcap("loss_go_back_n.pcap");
    let first = 0xFF_FFF0; // the stream wraps through PSN 0
    let lost = [10u32, 11, 12];
    let mut t = T0;
    let mut sent = 0u32;
    let send = |s: &mut Scenario, t: &mut i64, n: u32| {
        let mut f = conn.frame(true, 0x07, psn_add(first, n), ExtHeaders::default(), 256);
        f.bth.ack_req = n % 8 == 7;
        s.push(*t, f.encode());
        *t += 3 * US;
    };
    while sent < 16 {
        if !lost.contains(&sent) {
            send(&mut s, &mut t, sent);
        } else {
            t += 3 * US;
        }
        if sent == 7 {
            s.push(t, conn.ack(false, psn_add(first, 7), 1, ACK_32_CREDITS).encode());
        }
        sent += 1;
    }
    // The responder saw PSN 13 while expecting 10: one NAK with the expected PSN.
    s.push(T0 + 13 * 3 * US + 4 * US, conn.ack(false, psn_add(first, 10), 1, 0x60).encode());
    t += 20 * US;
    for n in 10..32 {
        send(&mut s, &mut t, n);
        if n % 8 == 7 {
            s.push(t, conn.ack(false, psn_add(first, n), 1 + n / 8, ACK_32_CREDITS).encode());
        }
    }
    s.sorted()
}

/// A PFC storm: one switch port sends XOFF for priority 3 (0xFFFF quanta) every 300 µs for
/// 120 ms, then XON; another MAC sends two isolated XOFFs on priority 3 and one on priority 5;
/// two 802.3x PAUSE frames; RoCE traffic without any ECN marking goes on between them.
pub fn pfc_storm() -> Scenario {
    let storm_mac = [0x02, 0, 0, 0, 0xFF, 0x01];
    let other_mac = [0x02, 0, 0, 0, 0xFF, 0x02];
    let mut s = Scenario::pcap("pfc_storm.pcap");
    let mut quanta = [0u16; 8];
    quanta[3] = 0xFFFF;
    let mut t = T0;
    while t < T0 + 120 * MS {
        s.push(t, encode::pfc_frame(storm_mac, 1 << 3, quanta));
        t += 300 * US;
    }
    s.push(t, encode::pfc_frame(storm_mac, 1 << 3, [0; 8]));
    s.push(T0 + 10 * MS + 7 * US, encode::pfc_frame(other_mac, 1 << 3, quanta));
    s.push(T0 + 70 * MS + 7 * US, encode::pfc_frame(other_mac, 1 << 3, quanta));
    let mut p5 = [0u16; 8];
    p5[5] = 0x1000;
    s.push(T0 + 40 * MS + 9 * US, encode::pfc_frame(other_mac, 1 << 5, p5));
    s.push(T0 + 90 * MS + 11 * US, encode::pause_frame(other_mac, 0x0100));
    s.push(T0 + 90 * MS + 111 * US, encode::pause_frame(other_mac, 0));
    let conn = Conn { a: endpoint(1, 0x000511), b: endpoint(2, 0x000522), vlan: Some((3, 100)) };
    let mut psn = 0x05_0000;
    for m in 0..10u64 {
        let t = T0 + m as i64 * 12 * MS + 150 * US;
        for (i, f) in write_message(&conn, psn, 1024, 256, 0x2000 * m).into_iter().enumerate() {
            s.push(t + i as i64 * 2 * US, f.encode());
        }
        psn = psn_add(psn, 4);
        s.push(t + 12 * US, conn.ack(false, psn_add(psn, 0xFF_FFFF), m as u32 + 1, ACK_32_CREDITS).encode());
    }
    s.sorted()
}

/// An RC WRITE stream in which two packets have a payload byte flipped after the ICRC was
/// computed (corruption in flight) and one has a damaged ICRC field.
pub fn bad_icrc() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000611), b: endpoint(2, 0x000622), vlan: None };
    let mut s = Scenario::pcap("bad_icrc.pcap");
    let mut psn = 0x06_0000;
    let mut t = T0;
    let mut n = 0;
    for m in 0..6u64 {
        for f in write_message(&conn, psn, 1024, 256, 0x3000 * m) {
            let mut bytes = f.encode();
            let len = bytes.len();
            match n {
                5 | 17 => bytes[len - 100] ^= 0x01,
                11 => bytes[len - 1] ^= 0xFF,
                _ => {}
            }
            s.push(t, bytes);
            t += 3 * US;
            n += 1;
        }
        psn = psn_add(psn, 4);
        s.push(t, conn.ack(false, psn_add(psn, 0xFF_FFFF), m as u32 + 1, ACK_32_CREDITS).encode());
        t += 5 * US;
    }
    s
}

/// A mirror-port capture: two switches mirror the same RC traffic over ERSPAN type II, so
/// every packet appears twice, the second copy 1.5 µs later from the next hop (TTL − 1, other
/// MAC addresses).
pub fn mirror_erspan() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000711), b: endpoint(2, 0x000722), vlan: None };
    let collector = L2::new([0x02, 0, 0, 0, 0xEE, 0x01], [0x02, 0, 0, 0, 0xEE, 0xFF]);
    let mut s = Scenario::pcap("mirror_erspan.pcap");
    let mut t = T0;
    let mut psn = 0x07_0000;
    let mut sequence = [0u32; 2];
    let mut mirror = |s: &mut Scenario, t: i64, f: RoceFrame| {
        sequence[0] += 1;
        s.push(t, encode::erspan2(&collector, [192, 0, 2, 1], [192, 0, 2, 100], 1, Some(sequence[0]), &f.encode()));
        let mut hop = f.clone();
        hop.l3.ttl = 63;
        hop.l2 = L2::new([0x02, 0, 0, 0, 0xAA, 0x01], [0x02, 0, 0, 0, 0xAA, 0x02]);
        sequence[1] += 1;
        s.push(
            t + 1_500,
            encode::erspan2(&collector, [192, 0, 2, 2], [192, 0, 2, 100], 2, Some(sequence[1]), &hop.encode()),
        );
    };
    for m in 0..5u64 {
        for f in write_message(&conn, psn, 1024, 256, 0x4000 * m) {
            mirror(&mut s, t, f);
            t += 4 * US;
        }
        psn = psn_add(psn, 4);
        mirror(&mut s, t, conn.ack(false, psn_add(psn, 0xFF_FFFF), m as u32 + 1, ACK_32_CREDITS));
        t += 6 * US;
    }
    s.sorted()
}

/// One frame per opcode the decoder knows (RC, UC, RD, UD, CNP, XRC), with the extended
/// headers each calls for; payload-bearing opcodes carry 8 bytes. Requests take consecutive
/// PSNs; responses (READ responses, ACKs, ATOMIC ACKs) and the CNP take theirs from a second
/// counter, as they would in the other side's PSN space.
pub fn opcodes() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000AAA), b: endpoint(2, 0x000BBB), vlan: None };
    let mut s = Scenario::pcap("opcodes.pcap");
    let ext = ExtHeaders {
        rdeth: Some(rocescope_parsers::ext::Rdeth { ee_context: 0x42 }),
        deth: Some(Deth { qkey: 0x1111_1111, src_qp: 0x000AAA }),
        xrceth: Some(Xrceth { xrc_srq: 0x77 }),
        feth: Some(rocescope_parsers::ext::Feth { raw: 0x11 }),
        reth: Some(Reth { va: 0xDEAD_0000, rkey: 0xBEEF, dma_len: 8 }),
        atomic_eth: Some(AtomicEth { va: 0xA000, rkey: 0xA1, swap_add: 5, compare: 6 }),
        aeth: Some(Aeth { syndrome: ACK_32_CREDITS, msn: 9 }),
        atomic_ack_eth: Some(AtomicAckEth { orig: 0x77 }),
        imm: Some(0x1234_5678),
        ieth: Some(Ieth { rkey: 0x4321 }),
    };
    // UD datagrams are not sequenced: they number from a counter of their own, as a UD QP
    // numbering across its destinations would
    let (mut psn, mut reply_psn, mut datagram_psn) = (100, 5000, 7000);
    for opcode in 0u8..0xC0 {
        let Some(info) = rocescope_parsers::opcode::info(opcode) else { continue };
        let mut own = ExtHeaders::default();
        for kind in info.ext.iter() {
            use rocescope_parsers::opcode::ExtHeader::*;
            match kind {
                Rdeth => own.rdeth = ext.rdeth,
                Deth => own.deth = ext.deth,
                Xrceth => own.xrceth = ext.xrceth,
                Feth => own.feth = ext.feth,
                Reth => own.reth = ext.reth,
                AtomicEth => own.atomic_eth = ext.atomic_eth,
                Aeth => own.aeth = ext.aeth,
                AtomicAckEth => own.atomic_ack_eth = ext.atomic_ack_eth,
                ImmDt => own.imm = ext.imm,
                Ieth => own.ieth = ext.ieth,
                CnpReserved => {}
            }
        }
        let reply =
            rocescope_parsers::opcode::is_unsequenced(opcode) || rocescope_parsers::opcode::is_read_response(opcode);
        let datagram = rocescope_parsers::opcode::Transport::of(opcode) == rocescope_parsers::opcode::Transport::Ud;
        let counter = if reply {
            &mut reply_psn
        } else if datagram {
            &mut datagram_psn
        } else {
            &mut psn
        };
        let f = conn.frame(true, opcode, *counter, own, if info.payload { 8 } else { 0 });
        s.push(T0 + i64::from(opcode) * US, f.encode());
        *counter += 1;
    }
    s
}

/// Every link layer and encapsulation in one pcapng file with three interfaces: Ethernet
/// (µs), Linux cooked v2 (ns) and raw IP (µs). Ethernet frames: QinQ, RoCEv2 over IPv6,
/// RoCEv1, VXLAN, ERSPAN III (one truncated by the mirror), port-extender tags, ERSPAN II
/// without GRE's sequence bit, GRE-bridged Ethernet, MPLS over Ethernet and inside GRE, an
/// Ethernet pseudowire, a Metamako trailer, a frame with its FCS, a UD SEND, an XRC SEND, a
/// CNP, a PAUSE frame and a simple packet block.
pub fn encapsulations() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000811), b: endpoint(2, 0x000822), vlan: None };
    let mut s = Scenario {
        file: "encapsulations.pcapng",
        container: Container::Pcapng {
            interfaces: vec![
                Interface { link_type: 1, snaplen: 65535, tsresol: 6, name: None },
                Interface { link_type: 276, snaplen: 65535, tsresol: 9, name: None },
                Interface { link_type: 101, snaplen: 65535, tsresol: 6, name: None },
            ],
        },
        frames: Vec::new(),
    };
    let mut t = T0;
    let psn = std::cell::Cell::new(0x08_0000u32);
    let mut next = |s: &mut Scenario, interface: usize, bytes: Vec<u8>| {
        s.frames.push(Timed { ts_ns: t, interface, bytes, simple: false });
        t += 10 * US + 1;
    };
    let write_only = |len: usize| {
        let ext = ExtHeaders { reth: Some(Reth { va: 0x1000, rkey: 7, dma_len: len as u32 }), ..ExtHeaders::default() };
        psn.set(psn.get() + 1);
        conn.frame(true, 0x0A, psn.get(), ext, len)
    };
    let mut qinq = write_only(64);
    qinq.l2.vlans = vec![(0x88A8, 5, 200), (0x8100, 3, 100)];
    next(&mut s, 0, qinq.encode());
    let mut v6 = write_only(37);
    let six = |n: u8| [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n];
    v6.l3 = L3 { addresses: Addresses::V6 { src: six(1), dst: six(2) }, flow_label: 0xBEEF, ..v6.l3 };
    next(&mut s, 0, v6.encode());
    let mut v1 = write_only(48);
    let gid = |n: u8| [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFE, 0, 0, n];
    v1.l3 = L3 { addresses: Addresses::Grh { sgid: gid(1), dgid: gid(2) }, ..v1.l3 };
    next(&mut s, 0, v1.encode());
    let outer = L2::new([0x02, 0, 0, 0, 0xEE, 0x01], [0x02, 0, 0, 0, 0xEE, 0xFF]);
    let ack = conn.ack(false, psn.get(), 1, ACK_32_CREDITS);
    next(&mut s, 0, encode::vxlan(&outer, [192, 0, 2, 1], [192, 0, 2, 100], 5001, &ack.encode()));
    let inner = write_only(128).encode();
    next(&mut s, 0, encode::erspan3(&outer, [192, 0, 2, 1], [192, 0, 2, 100], 3, 12345, false, &inner));
    let cut = write_only(512).encode();
    next(&mut s, 0, encode::erspan3(&outer, [192, 0, 2, 1], [192, 0, 2, 100], 3, 12346, true, &cut[..160]));
    // port-extender tags from a fabric extender: a VN-Tag (direction 1, destination VIF 0x123,
    // source VIF 0x45) and an E-tag (E-PCP 3, ingress E-CID 0x012, GRP 1, E-CID 0x345)
    next(&mut s, 0, encode::with_header_after_macs(&write_only(20).encode(), 0x8926, &[0x81, 0x23, 0x00, 0x45]));
    next(&mut s, 0, encode::with_header_after_macs(&write_only(20).encode(), 0x893F, &[0x60, 0x12, 0x13, 0x45, 0, 0]));
    // ERSPAN II with GRE's sequence bit clear, as a Nexus 9000 sends it
    next(&mut s, 0, encode::erspan2(&outer, [192, 0, 2, 1], [192, 0, 2, 100], 4, None, &write_only(24).encode()));
    next(&mut s, 0, encode::gre_ethernet(&outer, [192, 0, 2, 1], [192, 0, 2, 100], 0xABCD, &write_only(16).encode()));
    // MPLS: two labels over Ethernet (a DCI link), one inside GRE (MPLS-over-GRE mirroring),
    // and an Ethernet pseudowire with a control word
    next(&mut s, 0, encode::with_mpls(&write_only(28).encode(), &[(1001, 3, 64), (2002, 3, 63)]));
    let ip_packet = write_only(36).encode()[14..].to_vec();
    next(&mut s, 0, encode::gre_mpls(&outer, [192, 0, 2, 1], [192, 0, 2, 100], &[(3003, 0, 255)], &ip_packet));
    next(&mut s, 0, encode::mpls_pseudowire(&outer, &[(4004, 5, 64)], Some(17), &write_only(44).encode()));
    // a Metamako tap's trailer: the original FCS, an ingress sequence number, the time
    next(
        &mut s,
        0,
        encode::with_metamako_trailer(&write_only(52).encode(), T0 + 123_456_789, 0x0A0B, 3, Some(258), false),
    );
    let mut with_fcs = write_only(32).encode();
    let fcs = crc32fast::hash(&with_fcs).to_le_bytes();
    with_fcs.extend_from_slice(&fcs);
    next(&mut s, 0, with_fcs);
    let ud =
        ExtHeaders { deth: Some(Deth { qkey: 0x1111_1111, src_qp: 0x000811 }), imm: Some(7), ..ExtHeaders::default() };
    next(&mut s, 0, conn.frame(true, 0x65, 3, ud, 20).encode());
    let xrc = ExtHeaders { xrceth: Some(Xrceth { xrc_srq: 0x42 }), ..ExtHeaders::default() };
    psn.set(psn.get() + 1);
    next(&mut s, 0, conn.frame(true, 0xA4, psn.get(), xrc, 24).encode());
    next(&mut s, 0, conn.cnp(false).encode());
    next(&mut s, 0, encode::pause_frame([0x02, 0, 0, 0, 0xFF, 0x03], 0x0200));
    // Linux cooked v2: protocol, reserved, ifindex, ARPHRD_ETHER, packet type, address.
    let roce = write_only(40).encode();
    let mut sll2 = vec![0x08, 0x00, 0, 0, 0, 0, 0, 3, 0x00, 0x01, 4, 6];
    sll2.extend_from_slice(&conn.a.mac);
    sll2.extend_from_slice(&[0, 0]);
    sll2.extend_from_slice(&roce[14..]);
    next(&mut s, 1, sll2);
    let raw = write_only(44).encode();
    next(&mut s, 2, raw[14..].to_vec());
    let last = write_only(8).encode();
    s.frames.push(Timed { ts_ns: 0, interface: 0, bytes: last, simple: true });
    s
}

/// An NVMe-oF-style connection on which both sides issue requests (MTU 1024): the host (A)
/// SENDs a 64-byte command; the target (B) RDMA-READs 4 KiB from the host (even rounds) or
/// RDMA-WRITEs 4 KiB to it (odd rounds), then SENDs a 16-byte response; each side ACKs the
/// other's requests. Nothing is lost: no flow has a gap.
pub fn bidirectional_read_write() -> Scenario {
    let conn = Conn { a: endpoint(1, 0x000511), b: endpoint(2, 0x000522), vlan: None };
    let target = reversed(&conn);
    let mut s = Scenario::pcap("bidirectional_read_write.pcap");
    let (mut a_psn, mut b_psn) = (0x00_2000u32, 0x00_9000u32);
    let mut t = T0;
    for (i, f) in cm_setup(&conn, a_psn, b_psn, 3).into_iter().enumerate() {
        s.push(t + i as i64 * 50 * US, f.encode());
    }
    t += 200 * US;
    let (mut a_msn, mut b_msn) = (0u32, 0u32);
    let send = |s: &mut Scenario, conn: &Conn, t: i64, psn: u32, len: usize| {
        let mut f = conn.frame(true, 0x04, psn, ExtHeaders::default(), len);
        f.bth.ack_req = true;
        s.push(t, f.encode());
    };
    for round in 0..12u64 {
        send(&mut s, &conn, t, a_psn, 64);
        b_msn += 1;
        s.push(t + 2 * US, conn.ack(false, a_psn, b_msn, ACK_32_CREDITS).encode());
        a_psn = psn_add(a_psn, 1);
        t += 4 * US;
        if round % 2 == 0 {
            s.push(t, read_request(&conn, false, b_psn, 4096).encode());
            a_msn += 1;
            for (i, f) in read_responses(&target, b_psn, 4, 1024, a_msn).into_iter().enumerate() {
                s.push(t + (3 + i as i64) * US, f.encode());
            }
            t += 8 * US;
        } else {
            for (i, f) in
                write_message(&target, b_psn, 4096, 1024, 0x7f00_3000_0000 + round * 4096).into_iter().enumerate()
            {
                s.push(t + i as i64 * US, f.encode());
            }
            a_msn += 1;
            s.push(t + 6 * US, conn.ack(true, psn_add(b_psn, 3), a_msn, ACK_32_CREDITS).encode());
            t += 8 * US;
        }
        b_psn = psn_add(b_psn, 4);
        send(&mut s, &target, t, b_psn, 16);
        a_msn += 1;
        s.push(t + 2 * US, conn.ack(true, b_psn, a_msn, ACK_32_CREDITS).encode());
        b_psn = psn_add(b_psn, 1);
        t += 10 * US;
    }
    s
}

/// Adaptive routing: two RC WRITE streams (8 KiB messages at MTU 1024, 1 µs apart) whose
/// packets take paths of different delay. On 10.0.0.1 → 10.0.0.2 every tenth packet swaps
/// places with the next and one packet arrives three places late; the receiver places them
/// out of order and nothing is resent. On 10.0.0.3 → 10.0.0.4 the receiver NAKs a packet that
/// was only 1 µs late, the late packet arrives just after the NAK, and the requester goes back
/// N from it though nothing was lost.
pub fn reordering() -> Scenario {
    let mut s = Scenario::pcap("reordering.pcap");
    let placed = Conn { a: endpoint(1, 0x000611), b: endpoint(2, 0x000622), vlan: None };
    let mut sent: Vec<RoceFrame> =
        (0..8).flat_map(|m| write_message(&placed, 0x30_0000 + m * 8, 8192, 1024, 0x7f00_4000_0000)).collect();
    for i in (9..sent.len() - 1).step_by(10) {
        sent.swap(i, i + 1);
    }
    let late = sent.remove(33);
    sent.insert(36, late);
    let count = sent.len();
    for (i, f) in sent.into_iter().enumerate() {
        s.push(T0 + i as i64 * US, f.encode());
    }
    s.push(T0 + count as i64 * US + 2 * US, placed.ack(false, 0x30_0000 + 63, 8, ACK_32_CREDITS).encode());
    let naked = Conn { a: endpoint(3, 0x000633), b: endpoint(4, 0x000644), vlan: None };
    let t0 = T0 + 200 * US;
    let stream: Vec<RoceFrame> =
        (0..3).flat_map(|m| write_message(&naked, 0x40_0000 + m * 8, 8192, 1024, 0x7f00_5000_0000)).collect();
    // arrival order: 0..9, 11, (NAK 10), 10, 12, 13, 14; then go-back-N 10..14 and 15..23
    let mut order: Vec<usize> = (0..10).chain([11, 10, 12, 13, 14]).collect();
    order.extend(10..stream.len());
    for (i, &k) in order.iter().enumerate() {
        let at = if i >= 15 { t0 + (i as i64 + 1) * US } else { t0 + i as i64 * US };
        s.push(at, stream[k].encode());
    }
    let nak = naked.ack(false, 0x40_0000 + 10, 1, 0x60);
    s.push(t0 + 10 * US + US / 2, nak.encode());
    s.push(t0 + (order.len() as i64 + 2) * US, naked.ack(false, 0x40_0000 + 23, 3, ACK_32_CREDITS).encode());
    s.sorted()
}
