//! Ultra Ethernet Transport packets (docs/decoding.md, "Ultra Ethernet Transport"): headers
//! written by the parsers' `Repr`s, in UDP (port 4793) or native IP (protocol 253, with the entropy
//! header), ending in the CRC32C trailer as the reference provider writes it (least
//! significant byte first), and the `uet.pcap` sample (docs/samples.md).

use rocescope_parsers::udp::UdpRepr;
use rocescope_parsers::uet::pds::{
    ACK_REQUEST_CLOSE, AckExtension, AckRepr, Acked, CC_NSCC, ControlRepr, NackRepr, Nscc, PdcFields, PdcTarget,
    PdsBody, RequestRepr, Sack,
};
use rocescope_parsers::uet::ses::{
    EOM, ExtensionRepr, MessagePacket, NEXT_NONE, NEXT_REQUEST_MEDIUM, NEXT_REQUEST_SMALL, NEXT_REQUEST_STANDARD,
    NEXT_RESPONSE, Placed, RequestFields, ResponseFields, SOM, StandardFields,
};
use rocescope_parsers::uet::{
    self, EntropyRepr, Pds, PdsRepr, PdsType, SesRequestRepr, SesResponseRepr, TssRepr, crc::Variant,
};

use super::encode::{self, L2};
use super::scenarios::{Scenario, T0, US};

pub use rocescope_parsers::uet::PdsType::{
    RodRequest as ROD, RudRequest as RUD, RudiRequest as RUDI_REQ, RudiResponse as RUDI_RESP, UudRequest as UUD,
};
pub use rocescope_parsers::uet::pds::{AR, M, RETX, SYN};

/// The initiator and the memory key of every medium and standard request.
const INITIATOR: u32 = 0x0000_AB01;
const MEMORY_KEY: u64 = 0x5500;

/// The bytes `emit` writes through the writer it is given.
fn written(emit: impl FnOnce(&mut dyn FnMut(&[u8]))) -> Vec<u8> {
    let mut bytes = Vec::new();
    emit(&mut |part| bytes.extend_from_slice(part));
    bytes
}

/// A PDS header: `next` is the SES header that follows, or a control packet's type.
fn pds(next: u8, flags: u8, body: PdsBody) -> Vec<u8> {
    let repr = PdsRepr { next_header: next, flags, body };
    written(|put| repr.emit(put))
}

/// The PSN and PDC ids of a request or control packet: with SYN, the DPDCID's place holds
/// the PSN offset from the start PSN.
fn pdc(flags: u8, psn: u32, spdcid: u16, dpdcid_or_offset: u16) -> PdcFields {
    let target = if flags & SYN != 0 {
        PdcTarget::Syn { pdc_info: 0, psn_offset: dpdcid_or_offset }
    } else {
        PdcTarget::Dpdcid(dpdcid_or_offset)
    };
    PdcFields { psn, spdcid, target }
}

/// A RUD or ROD request (12 bytes); with SYN, `dpdcid_or_offset` is the PSN offset.
pub fn request(kind: PdsType, next: u8, flags: u8, psn: u32, spdcid: u16, dpdcid_or_offset: u16) -> Vec<u8> {
    let pdc = pdc(flags, psn, spdcid, dpdcid_or_offset);
    let request = RequestRepr { ordered: kind.is_ordered(), clear_psn_offset: 0, pdc, cc: None };
    pds(next, flags, PdsBody::Request(request))
}

/// An ACK of every PSN up to `cack_psn`, with `extension`.
fn ack_of(next: u8, flags: u8, cack_psn: u32, (spdcid, dpdcid): (u16, u16), extension: AckExtension) -> Vec<u8> {
    let ack = AckRepr { acked: Acked::Offset(0), cack_psn, spdcid, dpdcid, extension };
    pds(next, flags, PdsBody::Ack(ack))
}

/// An ACK (12 bytes) of every PSN up to `cack_psn`.
pub fn ack(next: u8, flags: u8, cack_psn: u32, spdcid: u16, dpdcid: u16) -> Vec<u8> {
    ack_of(next, flags, cack_psn, (spdcid, dpdcid), AckExtension::None)
}

/// `ack` (an ACK, ACK_CC or ACK_CCX) acknowledging the packet `offset` after its CACK_PSN
/// (ACK_PSN = CACK_PSN + offset: the packet that triggered it, whose CE mark its M echoes).
pub fn acking(ack: Vec<u8>, offset: i16) -> Vec<u8> {
    let Ok((view, rest)) = Pds::parse(&ack) else { return ack };
    let mut repr = PdsRepr::of(&view);
    if let PdsBody::Ack(fields) = &mut repr.body {
        fields.acked = Acked::Offset(offset);
    }
    [written(|put| repr.emit(put)), rest.to_vec()].concat()
}

/// An ACK_CC (32 bytes) with NSCC state: the SACK bitmap starts `sack_offset` after
/// `cack_psn`.
pub fn ack_cc(flags: u8, cack_psn: u32, ids: (u16, u16), sack_offset: i16, bitmap: u64) -> Vec<u8> {
    let sack = Sack { cc_type: CC_NSCC, cc_flags: 0, mpr: 4, sack_psn_offset: sack_offset, bitmap };
    let nscc = Nscc { service_time: 20, restore_cwnd: true, rcv_cwnd_pend: 0, rcvd_bytes: 4096, ooo_count: 1 };
    ack_of(NEXT_NONE, flags, cack_psn, ids, AckExtension::Cc { sack, state: nscc.state() })
}

/// A NACK (16 bytes) with `code` for `psn`.
pub fn nack(flags: u8, code: u8, psn: u32, (spdcid, dpdcid): (u16, u16), payload: u32) -> Vec<u8> {
    let nack = NackRepr { code, vendor_code: 0, psn, spdcid, dpdcid, payload, ccx_state: None };
    pds(NEXT_NONE, flags, PdsBody::Nack(nack))
}

/// A control packet (16 bytes) of `ctl_type`.
pub fn control(ctl_type: u8, flags: u8, psn: u32, (spdcid, dpdcid): (u16, u16), payload: u32) -> Vec<u8> {
    let control = ControlRepr { probe_opaque: 0, pdc: pdc(flags, psn, spdcid, dpdcid), payload };
    pds(ctl_type, flags, PdsBody::Control(control))
}

/// A RUDI request or response (8 bytes) with `packet_id`, or a UUD request (4 bytes, no id)
/// for any other `kind`.
pub fn unreliable(kind: PdsType, next: u8, flags: u8, packet_id: Option<u32>) -> Vec<u8> {
    let packet_id = packet_id.unwrap_or(0);
    let body = match kind {
        PdsType::RudiRequest => PdsBody::RudiRequest { packet_id },
        PdsType::RudiResponse => PdsBody::RudiResponse { packet_id },
        _ => PdsBody::Uud,
    };
    pds(next, flags, body)
}

/// A request of a whole message by `job` to PID 5, resource index 9 (generation 1).
fn ses_request(opcode: u8, job: u32, fields: RequestFields) -> Vec<u8> {
    let repr = SesRequestRepr {
        opcode,
        version: 0,
        flags: SOM | EOM,
        ri_generation: 1,
        job_id: job,
        pid_on_fep: 5,
        resource_index: 9,
        fields,
    };
    written(|put| repr.emit(put))
}

/// A standard request (44 bytes) of a whole message of `length` bytes, then `extension`.
fn standard_with(opcode: u8, message_id: u16, job: u32, length: u32, extension: Option<ExtensionRepr>) -> Vec<u8> {
    let fields = StandardFields {
        message_id,
        buffer_offset: 0x1000,
        initiator: INITIATOR,
        memory_key: MEMORY_KEY,
        packet: MessagePacket::First { header_data: 0 },
        request_length: length,
        extension,
    };
    ses_request(opcode, job, RequestFields::Standard(fields))
}

/// A standard request (44 bytes) of a whole message of `length` bytes.
pub fn standard(opcode: u8, message_id: u16, job: u32, length: u32) -> Vec<u8> {
    standard_with(opcode, message_id, job, length, None)
}

/// A medium request (32 bytes) with header data.
pub fn medium(opcode: u8, length: u16, job: u32, header_data: u64) -> Vec<u8> {
    let placed = Placed::HeaderData(header_data);
    let fields = RequestFields::Medium { request_length: length, placed, initiator: INITIATOR, memory_key: MEMORY_KEY };
    ses_request(opcode, job, fields)
}

/// A small request (20 bytes).
pub fn small(opcode: u8, length: u16, job: u32) -> Vec<u8> {
    ses_request(opcode, job, RequestFields::Small { request_length: length, buffer_offset: 0x2000 })
}

/// A plain response (12 bytes) to `message_id`.
pub fn response(opcode: u8, return_code: u8, message_id: u16, job: u32, modified: u32) -> Vec<u8> {
    let repr = SesResponseRepr {
        list: 0,
        opcode,
        version: 0,
        return_code,
        ri_generation: 1,
        job_id: job,
        fields: ResponseFields::Plain { message_id, modified_length: modified },
    };
    written(|put| repr.emit(put))
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
    let header = EntropyRepr { entropy }.emit();
    let ip = encode::ipv4_header(src, dst, (26 << 2) | 2, 64, 0, protocol, header.len() + body.len() + uet::CRC_LEN);
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
    out(
        &mut s,
        forth(
            &join(&[
                &request(RUD, NEXT_REQUEST_STANDARD, AR | SYN, 1000, mine, 0),
                &standard(0x01, 1, 42, 64),
                &data(64),
            ]),
            2,
        ),
    );
    out(&mut s, back(&join(&[&ack(NEXT_RESPONSE, 0, 1000, theirs, mine), &response(0x00, 0x01, 1, 42, 64)])));
    // a SEND in three packets: 1003 arrives before 1002, 1002 is CE-marked, 1001 is trimmed
    let send = |psn: u32, flags: u8| {
        join(&[
            &request(RUD, NEXT_REQUEST_STANDARD, flags, psn, mine, theirs),
            &standard(0x05, 2, 42, 3072),
            &data(1024),
        ])
    };
    out(&mut s, forth(&send(1001, 0), 2));
    out(&mut s, forth(&send(1003, AR), 2));
    out(&mut s, forth(&send(1002, 0), 3));
    out(&mut s, back(&nack(0, 0x01, 1001, (theirs, mine), 1004)));
    // 1002's arrival completes the SACK bitmap: the ACK names it and echoes its mark
    out(&mut s, back(&acking(ack_cc(M, 1000, (theirs, mine), 2, 0b11), 2)));
    out(&mut s, forth(&send(1001, RETX | AR), 2));
    out(&mut s, back(&ack(NEXT_NONE, 0, 1003, theirs, mine)));
    // an atomic compare-and-swap of 8 bytes
    let cswap_uint64 = ExtensionRepr::Atomic {
        opcode: 0x0D,
        datatype: 0x07,
        semantic_control: 0x01,
        compare_swap: Some(([0x11; 16], [0x22; 16])),
    };
    let cas = join(&[
        &request(RUD, NEXT_REQUEST_STANDARD, AR, 1004, mine, theirs),
        &standard_with(0x03, 3, 42, 8, Some(cswap_uint64)),
    ]);
    out(&mut s, forth(&cas, 2));
    out(&mut s, back(&join(&[&ack(NEXT_RESPONSE, 0, 1004, theirs, mine), &response(0x01, 0x01, 3, 42, 8)])));
    // the initiator closes the PDC
    out(&mut s, forth(&control(4, AR, 1005, (mine, theirs), 0), 2));
    out(&mut s, back(&ack(NEXT_NONE, ACK_REQUEST_CLOSE, 1005, theirs, mine)));
    // a ROD PDC opened by a medium request
    out(
        &mut s,
        forth(
            &join(&[
                &request(ROD, NEXT_REQUEST_MEDIUM, AR | SYN, 5000, 11, 0),
                &medium(0x05, 512, 42, 0xFEED),
                &data(512),
            ]),
            2,
        ),
    );
    out(&mut s, back(&ack(NEXT_NONE, 0, 5000, 12, 11)));
    // a RUDI request and its response, a UUD datagram
    out(
        &mut s,
        forth(&join(&[&unreliable(RUDI_REQ, NEXT_REQUEST_SMALL, 0, Some(77)), &small(0x01, 128, 42), &data(128)]), 2),
    );
    out(&mut s, back(&join(&[&unreliable(RUDI_RESP, NEXT_RESPONSE, 0, Some(77)), &response(0x01, 0x01, 0, 42, 128)])));
    out(
        &mut s,
        forth(&join(&[&unreliable(UUD, NEXT_REQUEST_STANDARD, 0, None), &standard(0x07, 4, 42, 256), &data(256)]), 2),
    );
    // native IP, with the entropy header
    let datagram = join(&[&unreliable(UUD, NEXT_NONE, 0, None), &data(64)]);
    out(&mut s, native_frame(&h.l2, there, uet::IP_PROTOCOL, 0x1234, &datagram));
    // encrypted: a TSS header (SP clear, SDI 0x000102), ciphertext and the 16-byte tag
    let header = written(|put| TssRepr { an: false, sdi: 0x0102, ssi: None, tsc: 5 }.emit(put));
    let tss = join(&[&header, &data(48), &[0xEE; uet::TAG_LEN]]);
    out(&mut s, udp_frame(&h.l2, there, ports, 2, &tss, None));
    // the payload changed after the CRC was computed
    let mut damaged = forth(
        &join(&[&request(RUD, NEXT_REQUEST_STANDARD, 0, 1006, mine, theirs), &standard(0x01, 5, 42, 64), &data(64)]),
        2,
    );
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
        let pds = request(
            RUD,
            NEXT_REQUEST_STANDARD,
            flags | if syn { SYN } else { 0 },
            1000 + offset,
            7,
            if syn { 0 } else { 9 },
        );
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
