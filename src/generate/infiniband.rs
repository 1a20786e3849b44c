//! The native InfiniBand scenarios (docs/samples.md): the generator's RC connections carried
//! on an InfiniBand link instead of Ethernet, in ERF records (as `ibdump` writes them) and as
//! LINKTYPE_INFINIBAND packets. Each side's LID is the last byte of its scenario address, its
//! GID the link-local `fe80::2:c903:0:<LID>`.

use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::psn::psn_add;
use rocescope_parsers::vcrc;

use super::encode::{self, Addresses, L3, Lrh, RoceFrame};
use super::scenarios::{
    ACK_32_CREDITS, Conn, Scenario, T0, US, cm_setup, endpoint, read_request, read_responses, write_message,
};

/// Link types and ERF record types the scenarios write.
const LINKTYPE_ERF: u32 = 197;
const LINKTYPE_INFINIBAND: u32 = 247;
const ERF_INFINIBAND: u8 = 21;
const ERF_INFINIBAND_LINK: u8 = 25;

/// An AETH syndrome: NAK, PSN sequence error.
const NAK_PSN_SEQUENCE: u8 = 0x60;

/// A generator frame as a native packet: LIDs from its addresses, and a GRH with their GIDs
/// when `global`.
fn native(frame: &RoceFrame, global: bool) -> Vec<u8> {
    let Addresses::V4 { src, dst } = frame.l3.addresses else { unreachable!("the scenarios' connections are IPv4") };
    let gid = |ip: [u8; 4]| {
        let mut g = [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x02, 0xC9, 0x03, 0, 0, 0, 0];
        g[15] = ip[3];
        g
    };
    let mut f = frame.clone();
    if global {
        f.l3 = L3 {
            addresses: Addresses::Grh { sgid: gid(src), dgid: gid(dst) },
            dscp: 0,
            ecn: 0,
            ttl: 64,
            flow_label: 0,
        };
    }
    f.encode_native(&Lrh { vl: 0, sl: 0, slid: u16::from(src[3]), dlid: u16::from(dst[3]) })
}

/// A scenario's frames one after another, `step` apart, in ERF records or bare.
struct Writer {
    scenario: Scenario,
    t: i64,
    erf: bool,
    /// The next record's loss counter.
    lost: u16,
}

impl Writer {
    fn new(file: &'static str, erf: bool) -> Self {
        let link_type = if erf { LINKTYPE_ERF } else { LINKTYPE_INFINIBAND };
        Writer { scenario: Scenario::pcap_of(file, link_type), t: T0, erf, lost: 0 }
    }

    fn put(&mut self, packet: &[u8]) {
        self.put_record(ERF_INFINIBAND, packet);
    }

    fn put_record(&mut self, record_type: u8, packet: &[u8]) {
        let bytes = if self.erf {
            encode::erf_record(self.t, record_type, std::mem::take(&mut self.lost), packet)
        } else {
            packet.to_vec()
        };
        self.scenario.push(self.t, bytes);
        self.t += 2 * US;
    }
}

/// A clean RC connection on an InfiniBand link, every packet with a GRH, in ERF records: the
/// CM exchange on QP 1, two 4096-byte RDMA WRITEs at MTU 2048 each acknowledged, a link
/// (flow control) packet, a 4096-byte RDMA READ and a SEND; no finding.
pub fn rc_with_grh() -> Scenario {
    let conn = Conn { a: endpoint(0x11, 0x000A11), b: endpoint(0x22, 0x000B22), vlan: None };
    let mut w = Writer::new("ib_rc_grh.pcap", true);
    let (a_psn, b_psn) = (0x000100, 0x000800);
    for f in cm_setup(&conn, a_psn, b_psn, 4) {
        w.put(&native(&f, true));
    }
    let mut psn = a_psn;
    for message in 0..2u32 {
        for f in write_message(&conn, psn, 4096, 2048, 0x7f00_0000_0000 + u64::from(message) * 4096) {
            w.put(&native(&f, true));
        }
        psn = psn_add(psn, 2);
        w.put(&native(&conn.ack(false, psn_add(psn, 0xFF_FFFF), message + 1, ACK_32_CREDITS), true));
    }
    w.put_record(ERF_INFINIBAND_LINK, &encode::flow_control_packet(0, 0x123, 0x456));
    w.put(&native(&read_request(&conn, true, psn, 4096), true));
    for f in read_responses(&conn, psn, 2, 2048, 3) {
        w.put(&native(&f, true));
    }
    psn = psn_add(psn, 2);
    let mut send = conn.frame(true, 0x04, psn, ExtHeaders::default(), 100);
    send.bth.ack_req = true;
    w.put(&native(&send, true));
    w.put(&native(&conn.ack(false, psn, 4, ACK_32_CREDITS), true));
    w.scenario
}

/// Loss on an InfiniBand link (LINKTYPE_INFINIBAND, LIDs only): 16 SENDs of 512 bytes, two of
/// them lost before the tap; the responder NAKs the first hole and the requester goes back
/// to it. A congested switch marked two packets with FECN; the last ACK carries BECN back.
pub fn go_back_n() -> Scenario {
    let conn = Conn { a: endpoint(4, 0x000408), b: endpoint(9, 0x000909), vlan: None };
    let mut w = Writer::new("ib_go_back_n.pcap", false);
    let first = 0x000010;
    let lost = [5u32, 6];
    let send = |n: u32| {
        let mut f = conn.frame(true, 0x04, psn_add(first, n), ExtHeaders::default(), 512);
        f.bth.ack_req = n % 4 == 3;
        f.bth.fecn = n == 3 || n == 4;
        native(&f, false)
    };
    for n in 0..10 {
        if lost.contains(&n) {
            w.t += 2 * US;
            continue;
        }
        w.put(&send(n));
        if n == 3 {
            w.put(&native(&conn.ack(false, psn_add(first, 3), 4, ACK_32_CREDITS), false));
        }
        if n == 7 {
            // the responder expected PSN 5: one NAK; 8 and 9 were already on their way
            w.put(&native(&conn.ack(false, psn_add(first, 5), 5, NAK_PSN_SEQUENCE), false));
        }
    }
    for n in 5..16 {
        w.put(&send(n));
    }
    let mut ack = conn.ack(false, psn_add(first, 15), 16, ACK_32_CREDITS);
    ack.bth.becn = true;
    w.put(&native(&ack, false));
    w.scenario
}

/// CRC errors and a capture card's drops, in ERF records (LIDs only): RDMA WRITEs of 1024
/// bytes, each acknowledged. PSN 2 arrives with a bad VCRC (bit errors on the link), PSN 5
/// with a bad ICRC and a good VCRC (corrupted inside a switch, which recomputed the VCRC);
/// the responder drops both and NAKs them, the requester resends. Then the card drops the
/// record of PSN 9 and its ACK: the next record's loss counter says 2.
pub fn crc_errors() -> Scenario {
    let conn = Conn { a: endpoint(7, 0x000707), b: endpoint(8, 0x000808), vlan: None };
    let mut w = Writer::new("ib_crc_errors.pcap", true);
    let write = |n: u32| {
        let mut f = write_message(&conn, n, 1024, 1024, 0x7f00_0000_0000 + u64::from(n) * 1024).remove(0);
        f.bth.ack_req = true;
        native(&f, false)
    };
    let ack = |n: u32, msn: u32| native(&conn.ack(false, n, msn, ACK_32_CREDITS), false);
    let damaged = |n: u32| {
        let mut packet = write(n);
        let end = packet.len() - 2;
        if n == 2 {
            packet[end + 1] ^= 0x01;
        } else {
            packet[60] ^= 0x10;
            let variant = vcrc::to_wire(vcrc::vcrc(&packet[..end]));
            packet[end..].copy_from_slice(&variant);
        }
        packet
    };
    let mut n = 0;
    while n < 12 {
        match n {
            2 | 5 => {
                // dropped by the responder, which NAKs the gap the next packet shows
                w.put(&damaged(n));
                w.put(&write(n + 1));
                w.put(&native(&conn.ack(false, n, n, NAK_PSN_SEQUENCE), false));
                w.put(&write(n));
                w.put(&write(n + 1));
                w.put(&ack(n + 1, n + 2));
                n += 2;
            }
            9 => {
                w.lost = 2;
                w.t += 4 * US;
                n += 1;
            }
            _ => {
                w.put(&write(n));
                w.put(&ack(n, n + 1));
                n += 1;
            }
        }
    }
    w.scenario
}
