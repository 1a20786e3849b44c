//! UET layouts from ../shared/uet-facts.md, each packet written here byte by byte from the
//! file's tables (not by rocescope's generator), and every CONFLICT the file marks pinned to
//! the choice docs/decoding.md states.

use rocescope_parsers::uet::pds::{Nscc, Pds, PdsType};
use rocescope_parsers::uet::ses::{Extension, RequestFormat, ResponseFormat, Ses, SesRequest, SesResponse};
use rocescope_parsers::uet::{Uet, names};

/// §2.2: RUD_CC_REQ, 16 bytes: the request's 12 and `ccc_id` u8 + `credit_target` u24.
#[test]
fn rud_cc_request_carries_its_cc_state() {
    // type 13 (0x68 = 13 << 3), next_hdr 3 (bits 10..7: 0b011 -> byte0 low bit 1, byte1 0x80),
    // flags AR (0x08)
    let b = [0x69, 0x88, 0x00, 0x02, 0x00, 0x00, 0x10, 0x00, 0x00, 0x21, 0x00, 0x22, 0x05, 0x01, 0x02, 0x03];
    let (p, rest) = Pds::parse(&b).expect("a RUD_CC_REQ");
    assert!(rest.is_empty());
    assert_eq!((p.pds_type(), p.next_header(), p.ar(), p.syn()), (PdsType::RudCcRequest, 3, true, false));
    assert_eq!((p.clear_psn_offset(), p.psn(), p.clear_psn()), (Some(2), Some(0x1000), Some(0x1002)));
    assert_eq!(
        (p.spdcid(), p.dpdcid(), p.ccc_id(), p.credit_target()),
        (Some(0x21), Some(0x22), Some(5), Some(0x010203))
    );
}

/// §2.2: ACK, 12 bytes; with P, the ACK PSN offset's place is the probe's opaque value.
#[test]
fn acks_and_probe_acks() {
    // type 7 (0x38), next_hdr 0, flags M (0x20) RETX (0x10) REQ=1 (0x02)
    let ack = [0x38, 0x32, 0xFF, 0xFE, 0x00, 0x00, 0x01, 0x00, 0x00, 0x09, 0x00, 0x07];
    let (p, _) = Pds::parse(&ack).expect("an ACK");
    assert_eq!((p.ecn_marked(), p.retx(), p.probe(), p.ack_request()), (true, true, false, Some(1)));
    assert_eq!((p.cack_psn(), p.ack_psn_offset(), p.ack_psn()), (Some(256), Some(-2), Some(254)));
    assert_eq!((p.spdcid(), p.dpdcid(), p.psn()), (Some(9), Some(7), None));
    // P set (0x08): probe opaque 0xABCD
    let probe = [0x38, 0x08, 0xAB, 0xCD, 0x00, 0x00, 0x01, 0x00, 0x00, 0x09, 0x00, 0x07];
    let (p, _) = Pds::parse(&probe).expect("a probe's ACK");
    assert_eq!((p.probe(), p.probe_opaque(), p.ack_psn()), (true, Some(0xABCD), None));
}

/// §2.2 and §4: ACK_CC with credit state (cc_type 1): credit u24 at 24, out-of-order count at 30.
#[test]
fn ack_cc_with_credit_state() {
    let mut b = vec![0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x09, 0x00, 0x07];
    b.extend_from_slice(&[0x1A, 0x08, 0xFF, 0xFF]); // cc_type 1, flags 0xA; MPR 8; SACK offset -1
    b.extend_from_slice(&0x8000_0000_0000_0001u64.to_be_bytes());
    b.extend_from_slice(&[0x00, 0x40, 0x00, 0, 0, 0, 0x00, 0x03]);
    let (p, _) = Pds::parse(&b).expect("an ACK_CC");
    assert_eq!(
        (p.cc_type(), p.cc_flags(), p.mpr(), p.sack_psn_offset(), p.sack_base()),
        (Some(1), Some(0xA), Some(8), Some(-1), Some(15))
    );
    assert!(p.sacks(15) && p.sacks(15 + 63) && !p.sacks(16));
    assert_eq!((p.credit(), p.nscc()), (Some((0x4000, 3)), None));
}

/// CONFLICT §2.2, pinned: ACK_CCX is 40 bytes (Wireshark and the reference provider; xdp2 32),
/// its 16 bytes of state at 24..40; NACK_CCX is 32 bytes (the reference provider; xdp2 24).
#[test]
fn ccx_sizes_follow_the_two_agreeing_sources() {
    let mut ccx = vec![0x48, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x09, 0x00, 0x07];
    ccx.extend_from_slice(&[0xE0, 0x01, 0x00, 0x00]);
    ccx.extend_from_slice(&[0; 8]);
    ccx.extend_from_slice(&[0xCC; 16]);
    let (p, rest) = Pds::parse(&ccx).expect("an ACK_CCX");
    assert_eq!((p.pds_type(), p.as_bytes().len(), rest.len(), p.cc_type()), (PdsType::AckCcx, 40, 0, Some(0xE)));
    assert_eq!(p.ccx_state(), Some(&[0xCC; 16][..]));
    assert!(Pds::parse(&ccx[..32]).is_err(), "32 bytes are not an ACK_CCX");
    let mut nccx = vec![0x60, 0x20, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x09, 0x00, 0x07, 0x00, 0x00, 0x00, 0x06];
    nccx.extend_from_slice(&[0xDD; 16]);
    let (p, rest) = Pds::parse(&nccx).expect("a NACK_CCX");
    assert_eq!(
        (p.pds_type(), p.nack_code().and_then(names::nack_code), rest.len()),
        (PdsType::NackCcx, Some("PSN_OOR_WINDOW"), 0)
    );
    assert_eq!(p.ccx_state(), Some(&[0xDD; 16][..]));
}

/// §2.2: RUDI request and response, 8 bytes: a packet id, no PDC ids; a RUDI NACK (NT) names a
/// packet id.
#[test]
fn rudi_packets_and_their_nacks() {
    let req = [0x20, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4D];
    let (p, _) = Pds::parse(&req).expect("a RUDI request");
    assert_eq!(
        (p.pds_type(), p.next_header(), p.packet_id(), p.spdcid(), p.psn()),
        (PdsType::RudiRequest, 1, Some(77), None, None)
    );
    let resp = [0x2A, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4D];
    let (p, _) = Pds::parse(&resp).expect("a RUDI response");
    assert_eq!(
        (p.pds_type(), p.next_header(), p.ecn_marked(), p.packet_id()),
        (PdsType::RudiResponse, 4, true, Some(77))
    );
    let nack = [0x50, 0x08, 0x07, 0x00, 0x00, 0x00, 0x00, 0x4D, 0, 0, 0, 0, 0, 0, 0, 0];
    let (p, _) = Pds::parse(&nack).expect("a RUDI NACK");
    assert_eq!(
        (p.nack_rudi(), p.nack_psn(), p.spdcid(), p.nack_code().and_then(names::nack_code)),
        (true, Some(77), None, Some("NO_PKT_BUFFER"))
    );
}

/// §2.2: control types by name, and the ROD flag of a control packet (the reference provider and
/// xdp2; Wireshark shows the bit reserved).
#[test]
fn control_packets() {
    // type 11 (0x58), ctl_type 9 (NEGOTIATION: byte0 low bits 0b100, byte1 0x80), ISROD 0x20
    let b = [0x5C, 0xA0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x07, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00];
    let (p, _) = Pds::parse(&b).expect("a control packet");
    assert_eq!(
        (p.ctl_type(), p.ctl_type().and_then(names::control_type), p.control_rod()),
        (Some(9), Some("NEGOTIATION"), true)
    );
    assert_eq!(names::control_type(2), Some("CLEAR"));
}

/// CONFLICT §2.2, pinned: a SYN packet's PDC info is the whole nibble (the use-reserved-PDC bit
/// is bit 15 in Wireshark and xdp2, bit 12 in the reference provider).
#[test]
fn syn_pdc_info_is_shown_whole() {
    let b = [0x10, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x00, 0x07, 0x9F, 0xFF];
    let (p, _) = Pds::parse(&b).expect("a SYN request");
    assert_eq!(
        (p.pdc_info(), p.psn_offset(), p.start_psn(), p.dpdcid()),
        (Some(0x9), Some(0xFFF), Some(100u32.wrapping_sub(0xFFF)), None)
    );
}

/// CONFLICT §3.1, pinned: bytes 2–3 of small and medium requests are reserved 2 bits and the
/// request length 14 bits (Wireshark and the reference provider; xdp2 a message id).
/// CONFLICT (Wireshark's medium request): header data at byte 12, initiator at 20, memory key
/// at 24.
#[test]
fn small_and_medium_requests_follow_the_reference_provider() {
    let mut medium = vec![0x05, 0x07, 0xC0, 0x40, 0x01, 0x00, 0x00, 0x2A, 0x00, 0x05, 0x00, 0x09];
    medium.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0xBE, 0xEF]);
    medium.extend_from_slice(&[0x00, 0x00, 0xAB, 0x01]);
    medium.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x55, 0x00]);
    let (r, rest) = SesRequest::parse(RequestFormat::Medium, &medium).expect("a medium request");
    assert!(rest.is_empty());
    assert_eq!(
        (r.request_length(), r.message_id(), r.hd(), r.header_data(), r.buffer_offset()),
        (0x40, None, true, Some(0xBEEF), None)
    );
    assert_eq!(
        (r.initiator(), r.memory_key(), r.job_id(), r.pid_on_fep(), r.resource_index()),
        (Some(0xAB01), Some(0x5500), 42, 5, 9)
    );
}

/// §3.2: a standard request after its first packet: payload length (14 bits at 34–35) and
/// message offset (36) in place of the header data; a deferrable send's restart tokens in the
/// buffer offset's place.
#[test]
fn standard_continuation_and_deferrable_sends() {
    let mut b = vec![0x08, 0x02, 0x00, 0x03, 0x01, 0x00, 0x00, 0x2A, 0x00, 0x05, 0x00, 0x09];
    b.extend_from_slice(&[0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x22]); // restart tokens
    b.extend_from_slice(&[0, 0, 0, 1]);
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&[0x00, 0x00, 0xC4, 0x00]); // reserved bits set: only 14 bits count
    b.extend_from_slice(&[0x00, 0x00, 0x10, 0x00]);
    b.extend_from_slice(&[0x00, 0x00, 0x20, 0x00]);
    let (r, _) = SesRequest::parse(RequestFormat::Standard, &b).expect("a standard request");
    assert_eq!(
        (r.opcode(), r.som(), r.eom(), r.continuation(), r.header_data()),
        (0x08, false, true, Some((0x0400, 0x1000)), None)
    );
    assert_eq!((r.buffer_offset(), r.request_length(), r.message_id()), (Some(0x0000_0011_0000_0022), 0x2000, Some(3)));
    assert_eq!(names::request_opcode(r.opcode()), Some("UET_DEFERRABLE_SEND"));
}

/// CONFLICT §3.2, pinned: the rendezvous extension's second word is generation 8 bits, PID on
/// FEP 12, resource index 12 (the reference provider).
#[test]
fn rendezvous_extension_words() {
    let mut b = vec![0x0A, 0x01, 0x00, 0x01, 0x01, 0x00, 0x00, 0x2A, 0x00, 0x05, 0x00, 0x09];
    b.extend_from_slice(&[0; 32]);
    b.extend_from_slice(&[0x00, 0x00, 0x08, 0x00]); // eager length 2048
    b.extend_from_slice(&[0x07, 0xABC0_u32.to_be_bytes()[2], 0xC1, 0x23]); // gen 7, PID 0xABC, RI 0x123
    b.extend_from_slice(&0x1000u64.to_be_bytes());
    b.extend_from_slice(&0x9999u64.to_be_bytes());
    let (r, rest) = SesRequest::parse(RequestFormat::Standard, &b).expect("a rendezvous tagged send");
    assert!(rest.is_empty());
    let e = r.extension().expect("its extension");
    assert!(matches!(e, Extension::Rendezvous(_)));
    assert_eq!(
        (e.eager_length(), e.read_resource(), e.read_offset(), e.read_memory_key()),
        (Some(2048), Some((7, 0xABC, 0x123)), Some(0x1000), Some(0x9999))
    );
}

/// §3.2: an atomic that is not compare-and-swap has the 4-byte extension only; the semantic
/// control is the byte (0x01 cacheable, 0x02 CPU coherent: the reference provider and
/// Wireshark; xdp2's bits 7 and 6 are the CONFLICT pinned here).
#[test]
fn atomic_extension_without_operands() {
    let mut b = vec![0x04, 0x03, 0x00, 0x01, 0x01, 0x00, 0x00, 0x2A, 0x00, 0x05, 0x00, 0x09];
    b.extend_from_slice(&[0; 32]);
    b.extend_from_slice(&[0x02, 0x07, 0x02, 0x00]); // SUM, UINT64, CPU coherent
    b.extend_from_slice(&[0xAA; 8]); // the operand, in the payload
    let (r, rest) = SesRequest::parse(RequestFormat::Standard, &b).expect("a fetching atomic");
    let e = r.extension().expect("its extension");
    assert_eq!(
        (e.atomic_opcode().and_then(names::amo_opcode), e.atomic_datatype().and_then(names::amo_datatype)),
        (Some("SUM"), Some("UINT64"))
    );
    assert_eq!((e.semantic_control(), e.compare_swap(), rest.len()), (Some(2), None, 8));
}

/// §3.4 and its CONFLICT, pinned: a response with data is 20 bytes, its payload length 14 bits
/// (xdp2 12); a small one's `original_request_psn` at byte 8 (Wireshark reads 4 bytes only).
#[test]
fn responses_with_data() {
    let data = [
        0x02, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x2A, 0x00, 0x04, 0xFF, 0xFF, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
        0x20, 0x00,
    ];
    let (r, _) = SesResponse::parse(ResponseFormat::Data, &data).expect("a data response");
    assert_eq!(
        (r.opcode(), r.return_code(), r.message_id(), r.payload_length(), r.read(), r.modified_length()),
        (2, 1, Some(5), Some(0x3FFF), Some((4, 0x2000)), Some(0x1000))
    );
    let small = [0x42, 0x24, 0x00, 0x80, 0x01, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x03, 0xE8];
    let Some((Ses::Response(r), _)) = Ses::parse(6, PdsType::Ack, &small).expect("a small data response") else {
        panic!("a response")
    };
    assert_eq!((r.list(), r.return_code(), names::return_code(r.return_code())), (1, 0x24, Some("RC_DROPPED")));
    assert_eq!((r.payload_length(), r.original_request_psn(), r.message_id()), (Some(128), Some(1000), None));
}

/// §1 and §6: the TSS header (12 bytes without SSI), then ciphertext; nothing after it is read.
#[test]
fn an_encrypted_packet_stops_at_its_tss_header() {
    let mut b = vec![0x09, 0x12, 0x34, 0x56]; // type 1, AN, SDI 0x123456
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9]);
    b.extend_from_slice(&[0x10; 20]); // ciphertext that would parse as a PDS header
    b.extend_from_slice(&[0xEE; 16]);
    let Uet::Secured { tss, ciphertext, tag } = Uet::parse(&b, true).expect("a TSS packet") else { panic!("secured") };
    assert_eq!((tss.sp(), tss.an(), tss.sdi(), tss.ssi(), tss.tsc()), (false, true, 0x123456, None, 9));
    assert_eq!((ciphertext.len(), tag.map(<[u8]>::len)), (20, Some(16)));
}

/// The NSCC state of ACK_CC at bytes 24–31, restore_cwnd and the penalty at byte 26 (the
/// CONFLICT with Wireshark, which shows them at byte 24), pinned with a value Wireshark's reading
/// would give differently.
#[test]
fn nscc_state_at_byte_26() {
    let mut b = vec![0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x09, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00];
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&[0x01, 0x00, 0x83, 0x00, 0x10, 0x00, 0x00, 0x02]);
    let (p, _) = Pds::parse(&b).expect("an ACK_CC");
    let nscc = Nscc { service_time: 256, restore_cwnd: true, rcv_cwnd_pend: 3, rcvd_bytes: 0x1000, ooo_count: 2 };
    assert_eq!(p.nscc(), Some(nscc));
}
