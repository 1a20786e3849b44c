//! Ultra Ethernet Transport packets (docs/decoding.md, "Ultra Ethernet Transport"): headers
//! built field by field, in UDP (port 4793) or native IP (protocol 253, with the entropy
//! header), ending in the CRC32C trailer as the reference provider writes it (least
//! significant byte first), and the `uet.pcap` sample (docs/samples.md).

use rocescope_parsers::udp::UdpRepr;
use rocescope_parsers::uet::{self, crc::Variant};

use super::encode::{self, L2};
use super::scenarios::{Scenario, T0, US};

/// PDS types.
pub const RUD: u8 = 2;
pub const ROD: u8 = 3;
pub const RUDI_REQ: u8 = 4;
pub const RUDI_RESP: u8 = 5;
pub const UUD: u8 = 6;
pub const ACK: u8 = 7;
pub const ACK_CC: u8 = 8;
pub const NACK: u8 = 10;
pub const CONTROL: u8 = 11;

/// Request flags.
pub const RETX: u8 = 0x10;
pub const AR: u8 = 0x08;
pub const SYN: u8 = 0x04;
/// ACK and NACK flag: the packet acknowledged arrived CE-marked.
pub const M: u8 = 0x20;

/// SES request flags.
const SOM: u8 = 0x01;
const EOM: u8 = 0x02;
const HD: u8 = 0x04;

/// The PDS prologue: type, next header (or control type) and flags.
fn prologue(kind: u8, next: u8, flags: u8) -> [u8; 2] {
    (u16::from(kind) << 11 | u16::from(next & 0x0F) << 7 | u16::from(flags & 0x7F)).to_be_bytes()
}

/// A RUD or ROD request (12 bytes): with SYN, the DPDCID's place holds the PSN offset from
/// the start PSN.
pub fn request(kind: u8, next: u8, flags: u8, psn: u32, spdcid: u16, dpdcid_or_offset: u16) -> Vec<u8> {
    let mut b = prologue(kind, next, flags).to_vec();
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&psn.to_be_bytes());
    b.extend_from_slice(&spdcid.to_be_bytes());
    b.extend_from_slice(&dpdcid_or_offset.to_be_bytes());
    b
}

/// An ACK (12 bytes) of every PSN up to `cack_psn`.
pub fn ack(next: u8, flags: u8, cack_psn: u32, spdcid: u16, dpdcid: u16) -> Vec<u8> {
    let mut b = prologue(ACK, next, flags).to_vec();
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&cack_psn.to_be_bytes());
    b.extend_from_slice(&spdcid.to_be_bytes());
    b.extend_from_slice(&dpdcid.to_be_bytes());
    b
}

/// `ack` (an ACK, ACK_CC or ACK_CCX) acknowledging the packet `offset` after its CACK_PSN
/// (ACK_PSN = CACK_PSN + offset: the packet that triggered it, whose CE mark its M echoes).
pub fn acking(mut ack: Vec<u8>, offset: i16) -> Vec<u8> {
    if let Some(field) = ack.get_mut(2..4) {
        field.copy_from_slice(&offset.to_be_bytes());
    }
    ack
}

/// An ACK_CC (32 bytes) with NSCC state: the SACK bitmap starts `sack_offset` after
/// `cack_psn`.
pub fn ack_cc(flags: u8, cack_psn: u32, ids: (u16, u16), sack_offset: i16, bitmap: u64) -> Vec<u8> {
    let mut b = ack(0, flags, cack_psn, ids.0, ids.1);
    b[0..2].copy_from_slice(&prologue(ACK_CC, 0, flags));
    b.extend_from_slice(&[0x00, 4]); // NSCC, MPR 4
    b.extend_from_slice(&sack_offset.to_be_bytes());
    b.extend_from_slice(&bitmap.to_be_bytes());
    // service time 20, restore cwnd, penalty 0, 4096 bytes received, 1 out of order
    b.extend_from_slice(&[0, 20, 0x80, 0, 0x10, 0, 0, 1]);
    b
}

/// A NACK (16 bytes) with `code` for `psn`.
pub fn nack(flags: u8, code: u8, psn: u32, ids: (u16, u16), payload: u32) -> Vec<u8> {
    let mut b = prologue(NACK, 0, flags).to_vec();
    b.extend_from_slice(&[code, 0]);
    b.extend_from_slice(&psn.to_be_bytes());
    b.extend_from_slice(&ids.0.to_be_bytes());
    b.extend_from_slice(&ids.1.to_be_bytes());
    b.extend_from_slice(&payload.to_be_bytes());
    b
}

/// A control packet (16 bytes) of `ctl_type`.
pub fn control(ctl_type: u8, flags: u8, psn: u32, ids: (u16, u16), payload: u32) -> Vec<u8> {
    let mut b = prologue(CONTROL, ctl_type, flags).to_vec();
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&psn.to_be_bytes());
    b.extend_from_slice(&ids.0.to_be_bytes());
    b.extend_from_slice(&ids.1.to_be_bytes());
    b.extend_from_slice(&payload.to_be_bytes());
    b
}

/// A RUDI request or response (8 bytes), or a UUD request (4 bytes, no id).
pub fn unreliable(kind: u8, next: u8, flags: u8, packet_id: Option<u32>) -> Vec<u8> {
    let mut b = prologue(kind, next, flags).to_vec();
    b.extend_from_slice(&[0, 0]);
    if let Some(id) = packet_id {
        b.extend_from_slice(&id.to_be_bytes());
    }
    b
}

/// The 12 bytes every request starts with: opcode, flags, message id (or a small or medium
/// request's length), resource-index generation, job, PID on FEP, resource index.
fn ses_common(opcode: u8, flags: u8, id_or_length: u16, job: u32) -> Vec<u8> {
    let mut b = vec![opcode & 0x3F, flags & 0x3F];
    b.extend_from_slice(&id_or_length.to_be_bytes());
    b.push(1);
    b.extend_from_slice(&job.to_be_bytes()[1..]);
    b.extend_from_slice(&[0x00, 0x05, 0x00, 0x09]);
    b
}

/// A standard request (44 bytes) of a whole message of `length` bytes.
pub fn standard(opcode: u8, message_id: u16, job: u32, length: u32) -> Vec<u8> {
    let mut b = ses_common(opcode, SOM | EOM, message_id, job);
    b.extend_from_slice(&0x1000u64.to_be_bytes()); // buffer offset
    b.extend_from_slice(&0x0000_AB01u32.to_be_bytes()); // initiator
    b.extend_from_slice(&0x5500u64.to_be_bytes()); // memory key
    b.extend_from_slice(&0u64.to_be_bytes()); // header data (HD not set)
    b.extend_from_slice(&length.to_be_bytes());
    b
}

/// A medium request (32 bytes) with header data.
pub fn medium(opcode: u8, length: u16, job: u32, header_data: u64) -> Vec<u8> {
    let mut b = ses_common(opcode, SOM | EOM | HD, length & 0x3FFF, job);
    b.extend_from_slice(&header_data.to_be_bytes());
    b.extend_from_slice(&0x0000_AB01u32.to_be_bytes());
    b.extend_from_slice(&0x5500u64.to_be_bytes());
    b
}

/// A small request (20 bytes).
pub fn small(opcode: u8, length: u16, job: u32) -> Vec<u8> {
    let mut b = ses_common(opcode, SOM | EOM, length & 0x3FFF, job);
    b.extend_from_slice(&0x2000u64.to_be_bytes());
    b
}

/// A plain response (12 bytes) to `message_id`.
pub fn response(opcode: u8, return_code: u8, message_id: u16, job: u32, modified: u32) -> Vec<u8> {
    let mut b = vec![opcode & 0x3F, return_code & 0x3F];
    b.extend_from_slice(&message_id.to_be_bytes());
    b.push(1);
    b.extend_from_slice(&job.to_be_bytes()[1..]);
    b.extend_from_slice(&modified.to_be_bytes());
    b
}

/// Two hosts of the sample and their Ethernet link.
struct Hosts {
    l2: L2,
    back: L2,
    initiator: [u8; 4],
    target: [u8; 4],
}

/// `body` (the UET headers and payload) in IPv4 and UDP from port `sport` (the entropy) to port
/// `dport` with ECN `ecn`, its CRC32C trailer written as `crc` (none: an encrypted packet, whose
/// body ends in its tag).
pub fn udp_frame(
    l2: &L2,
    (src, dst): ([u8; 4], [u8; 4]),
    (sport, dport): (u16, u16),
    ecn: u8,
    body: &[u8],
    crc: Option<Variant>,
) -> Vec<u8> {
    let udp_len = 8 + body.len() + crc.map_or(0, |_| uet::CRC_LEN);
    let ip = encode::ipv4_header(src, dst, (26 << 2) | ecn, 64, 0, 17, udp_len);
    let udp = UdpRepr { source_port: sport, destination_port: dport, length: udp_len as u16, checksum: 0 };
    finish(l2, ip, &udp.emit(), body, crc)
}

/// `body` as native UET: IPv4 protocol `protocol` (253 by default), the entropy header first.
pub fn native_frame(l2: &L2, (src, dst): ([u8; 4], [u8; 4]), protocol: u8, entropy: u16, body: &[u8]) -> Vec<u8> {
    let ip = encode::ipv4_header(src, dst, (26 << 2) | 2, 64, 0, protocol, 4 + body.len() + uet::CRC_LEN);
    let mut header = entropy.to_be_bytes().to_vec();
    header.extend_from_slice(&[0, 0]);
    finish(l2, ip, &header, body, Some(Variant::Le))
}

/// The frame of `ip`, `header` (UDP or the entropy header) and `body`, with the CRC32C over
/// the IP addresses through the body written as `crc`.
fn finish(l2: &L2, ip: Vec<u8>, header: &[u8], body: &[u8], crc: Option<Variant>) -> Vec<u8> {
    let mut covered = ip[12..20].to_vec();
    covered.extend_from_slice(header);
    covered.extend_from_slice(body);
    let mut frame = l2.header(0x0800);
    frame.extend_from_slice(&ip);
    frame.extend_from_slice(header);
    frame.extend_from_slice(body);
    if let Some(crc) = crc {
        frame.extend_from_slice(&crc.trailer(uet::crc::crc32c(&covered)));
    }
    frame
}

fn join(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// `uet.pcap`: a RUD PDC from 10.0.1.1 to 10.0.1.2 from its SYN (start PSN 1000, the
/// initiator's PDC 7, the target's 9) to its close: a WRITE answered by a response, a SEND of
/// three packets of which the target receives the third first (ACK_CC's SACK), one CE-marked
/// (the ACK's M flag) and one trimmed by a switch (NACK TRIMMED, resent with RETX); a ROD PDC
/// opened with a medium request; a RUDI request and its response; a UUD datagram; a native-IP
/// packet with its entropy header; an encrypted packet (TSS); a compare-and-swap atomic; and a
/// packet whose payload changed after its CRC was computed (a bad CRC).
pub fn sample() -> Scenario {
    let mac = |n: u8| [0x02, 0, 0, 0, 0x10, n];
    let h = Hosts {
        l2: L2::new(mac(1), mac(2)),
        back: L2::new(mac(2), mac(1)),
        initiator: [10, 0, 1, 1],
        target: [10, 0, 1, 2],
    };
    let mut s = Scenario::pcap("uet.pcap");
    let mut t = T0;
    let mut out = |s: &mut Scenario, bytes: Vec<u8>| {
        s.push(t, bytes);
        t += 2 * US;
    };
    let (there, here) = ((h.initiator, h.target), (h.target, h.initiator));
    let ports = (0xD000, uet::UDP_PORT);
    let forth = |body: &[u8], ecn: u8| udp_frame(&h.l2, there, ports, ecn, body, Some(Variant::Le));
    let back = |body: &[u8]| udp_frame(&h.back, here, ports, 0, body, Some(Variant::Le));
    let data = |n: usize| vec![0x5A; n];
    let (mine, theirs) = (7u16, 9u16);

    // the SYN: a WRITE of 64 bytes, answered with a response in the ACK
    out(&mut s, forth(&join(&[&request(RUD, 3, AR | SYN, 1000, mine, 0), &standard(0x01, 1, 42, 64), &data(64)]), 2));
    out(&mut s, back(&join(&[&ack(4, 0, 1000, theirs, mine), &response(0x00, 0x01, 1, 42, 64)])));
    // a SEND in three packets: 1003 arrives before 1002, 1002 is CE-marked, 1001 is trimmed
    let send = |psn: u32, flags: u8| {
        join(&[&request(RUD, 3, flags, psn, mine, theirs), &standard(0x05, 2, 42, 3072), &data(1024)])
    };
    out(&mut s, forth(&send(1001, 0), 2));
    out(&mut s, forth(&send(1003, AR), 2));
    out(&mut s, forth(&send(1002, 0), 3));
    out(&mut s, back(&nack(0, 0x01, 1001, (theirs, mine), 1004)));
    // 1002's arrival completes the SACK bitmap: the ACK names it and echoes its mark
    out(&mut s, back(&acking(ack_cc(M, 1000, (theirs, mine), 2, 0b11), 2)));
    out(&mut s, forth(&send(1001, RETX | AR), 2));
    out(&mut s, back(&ack(0, 0, 1003, theirs, mine)));
    // an atomic compare-and-swap of 8 bytes
    let mut cas = request(RUD, 3, AR, 1004, mine, theirs);
    cas.extend_from_slice(&standard(0x03, 3, 42, 8));
    cas.extend_from_slice(&[0x0D, 0x07, 0x01, 0]);
    cas.extend_from_slice(&[0x11; 16]);
    cas.extend_from_slice(&[0x22; 16]);
    out(&mut s, forth(&cas, 2));
    out(&mut s, back(&join(&[&ack(4, 0, 1004, theirs, mine), &response(0x01, 0x01, 3, 42, 8)])));
    // the initiator closes the PDC
    out(&mut s, forth(&control(4, AR, 1005, (mine, theirs), 0), 2));
    out(&mut s, back(&ack(0, 0x04, 1005, theirs, mine)));
    // a ROD PDC opened by a medium request
    out(
        &mut s,
        forth(&join(&[&request(ROD, 2, AR | SYN, 5000, 11, 0), &medium(0x05, 512, 42, 0xFEED), &data(512)]), 2),
    );
    out(&mut s, back(&ack(0, 0, 5000, 12, 11)));
    // a RUDI request and its response, a UUD datagram
    out(&mut s, forth(&join(&[&unreliable(RUDI_REQ, 1, 0, Some(77)), &small(0x01, 128, 42), &data(128)]), 2));
    out(&mut s, back(&join(&[&unreliable(RUDI_RESP, 4, 0, Some(77)), &response(0x01, 0x01, 0, 42, 128)])));
    out(&mut s, forth(&join(&[&unreliable(UUD, 3, 0, None), &standard(0x07, 4, 42, 256), &data(256)]), 2));
    // native IP, with the entropy header
    let datagram = join(&[&unreliable(UUD, 0, 0, None), &data(64)]);
    out(&mut s, native_frame(&h.l2, there, uet::IP_PROTOCOL, 0x1234, &datagram));
    // encrypted: a TSS header (SP clear, SDI 0x000102), ciphertext and the 16-byte tag
    let tss = join(&[&[0x08, 0x00, 0x01, 0x02], &5u64.to_be_bytes(), &data(48), &[0xEE; uet::TAG_LEN]]);
    out(&mut s, udp_frame(&h.l2, there, ports, 2, &tss, None));
    // the payload changed after the CRC was computed
    let mut damaged =
        forth(&join(&[&request(RUD, 3, 0, 1006, mine, theirs), &standard(0x01, 5, 42, 64), &data(64)]), 2);
    let last_payload_byte = damaged.len() - uet::CRC_LEN - 1;
    damaged[last_payload_byte] ^= 0x40;
    out(&mut s, damaged);
    s
}

/// A sprayed RUD transfer of 300 packets of 512 bytes from 10.0.1.1 to 10.0.1.2 (PDC 7, the
/// target's 9; start PSN 1000) over four entropy values (UDP source ports 0xD000–0xD003), every
/// third packet overtaken by the next one, every three acknowledged by an ACK_CC; the packets of
/// `trimmed` (offsets from the start PSN) cut by a switch past the tap, NACKed (TRIMMED) and
/// resent with RETX.
pub fn sprayed(file: &'static str, trimmed: &[u32]) -> Scenario {
    let l2 = L2::new([0x02, 0, 0, 0, 0x10, 1], [0x02, 0, 0, 0, 0x10, 2]);
    let back = L2::new(l2.dst, l2.src);
    let (a, b) = ([10, 0, 1, 1], [10, 0, 1, 2]);
    let mut order: Vec<u32> = (0..300).collect();
    for chunk in order.chunks_mut(3) {
        chunk.swap(1, 2);
    }
    let request = |offset: u32, flags: u8| {
        let syn = offset == 0 && flags & RETX == 0;
        let pds = request(RUD, 3, flags | if syn { SYN } else { 0 }, 1000 + offset, 7, if syn { 0 } else { 9 });
        let body = join(&[&pds, &standard(0x05, 1, 42, 300 * 512), &[0x5A; 512]]);
        udp_frame(&l2, (a, b), (0xD000 + (offset % 4) as u16, uet::UDP_PORT), 2, &body, Some(Variant::Le))
    };
    let reply = |body: &[u8]| udp_frame(&back, (b, a), (0xD000, uet::UDP_PORT), 0, body, Some(Variant::Le));
    let mut s = Scenario::pcap(file);
    let mut t = T0;
    let mut out = |s: &mut Scenario, bytes: Vec<u8>| {
        s.push(t, bytes);
        t += US;
    };
    for (i, &offset) in order.iter().enumerate() {
        out(&mut s, request(offset, 0));
        if trimmed.contains(&offset) {
            out(&mut s, reply(&nack(0, 0x01, 1000 + offset, (9, 7), 0)));
            out(&mut s, request(offset, RETX | AR));
        }
        // after every third packet, every one before it has arrived
        if i % 3 == 2 {
            let cack = 1000 + order.iter().take(i + 1).copied().max().unwrap_or(0);
            out(&mut s, reply(&ack_cc(0, cack, (9, 7), 1, 0)));
        }
    }
    s
}
