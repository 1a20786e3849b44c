//! Decoder tests on hand-built frames: each layer's failure is reported as malformed with its
//! layer and reason, and the edge cases of link types, trailers and truncation.

use rocescope_parsers::ext::{Aeth, ExtHeaders, Reth};
use rocescope_parsers::{ErrorKind, Layer};

use rocescope::capture::{LinkType, Record};
use rocescope::decode::*;
use rocescope::generate::encode::{self, Addresses, BthRepr, L2, L3, RoceFrame};

fn write_only(payload: usize) -> RoceFrame {
    RoceFrame {
        l2: L2::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]),
        l3: L3::v4([10, 0, 0, 1], [10, 0, 0, 2]),
        udp_sport: 0xC001,
        udp_dport: 4791,
        bth: BthRepr::new(0x0A, 0x12A, 4660),
        ext: ExtHeaders { reth: Some(Reth { va: 1, rkey: 2, dma_len: payload as u32 }), ..ExtHeaders::default() },
        payload: vec![0x5A; payload],
    }
}

fn decode_as(link_type: LinkType, data: &[u8]) -> DecodedFrame<'_> {
    let record = Record { ts_ns: 0, orig_len: data.len() as u32, data, link_type, offset: 0 };
    Decoder::default().decode(&record)
}

fn decode(data: &[u8]) -> DecodedFrame<'_> {
    decode_as(LinkType::ETHERNET, data)
}

fn malformed_error(p: &DecodedFrame<'_>) -> rocescope_parsers::Error {
    match &p.body {
        Body::Malformed(m) => m.error,
        other => panic!("expected a malformed frame, got {other:?}"),
    }
}

fn icrc(p: &DecodedFrame<'_>) -> IcrcStatus {
    p.roce().expect("a RoCE packet").icrc
}

#[test]
fn a_valid_frame_decodes_with_a_good_icrc() {
    let bytes = write_only(37).encode();
    let p = decode(&bytes);
    assert_eq!(p.kind(), FrameKind::Roce);
    let roce = p.roce().unwrap();
    assert_eq!((roce.version, roce.ib.payload_len, roce.ib.bth.pad_count()), (2, 37, 3));
    assert_eq!(roce.icrc, IcrcStatus::Ok);
    assert_eq!(p.src_ip().unwrap().to_string(), "10.0.0.1");
}

#[test]
fn re_marking_on_the_path_keeps_the_icrc_valid() {
    let mut f = write_only(64);
    f.l3 = f.l3.with_qos(26, 2);
    let mut bytes = f.encode();
    bytes[15] = (26 << 2) | 3; // a switch marks CE
    bytes[22] -= 1; // and decrements the TTL
    bytes[14 + 20 + 8 + 4] = 0x80; // FECN
    assert_eq!(icrc(&decode(&bytes)), IcrcStatus::Ok);
    bytes[60] ^= 1; // a payload bit flips
    assert_eq!(icrc(&decode(&bytes)), IcrcStatus::Bad);
}

#[test]
fn snap_length_cut_keeps_the_headers() {
    let bytes = write_only(1024).encode();
    let p = decode(&bytes[..128]);
    let roce = p.roce().unwrap();
    assert_eq!(roce.icrc, IcrcStatus::Unverifiable);
    assert_eq!(roce.ib.payload_len, 1024);
    assert_eq!(roce.ib.ext().unwrap().reth.unwrap().dma_len, 1024);
    // cut inside the RETH: still RoCE, extended headers unknown
    let p = decode(&bytes[..14 + 20 + 8 + 12 + 5]);
    assert!(p.roce().unwrap().ib.ext().is_none());
}

#[test]
fn an_fcs_after_the_packet_is_a_trailer_not_payload() {
    let mut bytes = write_only(32).encode();
    let fcs = crc32fast::hash(&bytes).to_le_bytes();
    bytes.extend_from_slice(&fcs);
    let p = decode(&bytes);
    assert_eq!(icrc(&p), IcrcStatus::Ok);
    assert_eq!(p.trailer.bytes.len(), 4);
    assert!(p.trailer.is_fcs());
}

#[test]
fn ipv4_header_errors_are_malformed() {
    let mut bytes = write_only(8).encode();
    bytes[14] = 0x44;
    assert_eq!(malformed_error(&decode(&bytes)), rocescope_parsers::Error::invalid(Layer::Ipv4, "IHL below 5"));
    let bytes = write_only(8).encode();
    let err = malformed_error(&decode(&bytes[..14 + 12]));
    assert_eq!((err.layer, err.kind), (Layer::Ipv4, ErrorKind::Truncated { needed: 20, available: 12 }));
}

#[test]
fn a_bth_not_fully_captured_is_malformed() {
    let bytes = write_only(8).encode();
    let err = malformed_error(&decode(&bytes[..14 + 20 + 8 + 7]));
    assert_eq!(err.layer, Layer::Bth);
}

#[test]
fn a_reserved_opcode_is_malformed_with_its_bth_kept() {
    let mut f = write_only(8);
    f.bth.opcode = 0x15;
    let bytes = f.encode();
    let p = decode(&bytes);
    assert_eq!(malformed_error(&p), rocescope_parsers::Error::invalid(Layer::Bth, "reserved opcode"));
    assert_eq!(p.bth().map(|b| b.psn()), Some(4660));
}

#[test]
fn lying_lengths_are_malformed() {
    let mut bytes = write_only(8).encode();
    let udp_len = u16::from_be_bytes([bytes[38], bytes[39]]);
    bytes[38..40].copy_from_slice(&(udp_len + 40).to_be_bytes());
    assert_eq!(
        malformed_error(&decode(&bytes)),
        rocescope_parsers::Error::invalid(Layer::Udp, "length larger than the IP payload")
    );
    // PadCnt 3 on a packet whose payload region is 0 bytes
    let mut ack = write_only(0);
    ack.bth.opcode = 0x11;
    ack.ext = ExtHeaders { aeth: Some(Aeth { syndrome: 0, msn: 1 }), ..ExtHeaders::default() };
    let mut bytes = ack.encode();
    bytes[14 + 20 + 8 + 1] |= 0x30;
    assert_eq!(
        malformed_error(&decode(&bytes)),
        rocescope_parsers::Error::invalid(Layer::Bth, "PadCnt larger than the payload")
    );
}

#[test]
fn only_the_destination_port_makes_rocev2() {
    let mut f = write_only(8);
    f.udp_sport = 4791;
    f.udp_dport = 50000;
    let bytes = f.encode();
    assert!(matches!(decode(&bytes).body, Body::Other(Other::Udp { sport: 4791, dport: 50000 })));
    let mut f = write_only(8);
    f.udp_sport = 69; // TFTP's port, as some NICs use the QPN
    assert_eq!(icrc(&decode(&f.encode())), IcrcStatus::Ok);
}

#[test]
fn fragments_are_not_decoded_further() {
    let mut bytes = write_only(8).encode();
    bytes[20] = 0x20; // MF
    assert!(matches!(decode(&bytes).body, Body::Other(Other::IpFragment)));
}

#[test]
fn cooked_and_raw_link_types() {
    let eth = write_only(16).encode();
    let mut sll = vec![0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00];
    sll.extend_from_slice(&eth[14..]);
    let p = decode_as(LinkType::LINUX_SLL, &sll);
    assert!(matches!(p.link, Link::Sll(_)));
    assert_eq!(icrc(&p), IcrcStatus::Ok);
    let mut v6 = write_only(16);
    v6.l3 = L3 { addresses: Addresses::V6 { src: [0xFD; 16], dst: [0xFE; 16] }, ttl: 3, flow_label: 0xABCDE, ..v6.l3 };
    let v6 = v6.encode();
    let p = decode_as(LinkType::RAW, &v6[14..]);
    assert!(matches!(p.link, Link::RawIp));
    assert_eq!(icrc(&p), IcrcStatus::Ok);
    assert!(matches!(decode_as(LinkType(147), &v6).body, Body::Other(Other::UnsupportedLink(147))));
}

#[test]
fn nested_mirror_encapsulations_are_bounded() {
    let outer = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    let mut frame = write_only(8).encode();
    for depth in 1..=MAX_ENCAP_DEPTH {
        frame = encode::erspan2(&outer, [192, 0, 2, 1], [192, 0, 2, 2], 1, Some(depth as u32), &frame);
    }
    let p = decode(&frame);
    assert_eq!(p.encaps.len(), MAX_ENCAP_DEPTH);
    assert_eq!(icrc(&p), IcrcStatus::Ok);
    let deeper = encode::erspan2(&outer, [192, 0, 2, 1], [192, 0, 2, 2], 1, Some(9), &frame);
    assert_eq!(
        malformed_error(&decode(&deeper)),
        rocescope_parsers::Error::invalid(Layer::Erspan, "encapsulations nested too deeply")
    );
}

#[test]
fn a_ud_send_to_qp1_that_is_not_a_cm_mad_is_plain_ud() {
    let mut f = write_only(256);
    f.bth = BthRepr::new(0x64, 1, 0);
    f.ext = ExtHeaders {
        deth: Some(rocescope_parsers::ext::Deth { qkey: 0x8001_0000, src_qp: 1 }),
        ..ExtHeaders::default()
    };
    let bytes = f.encode(); // payload is 0x5A..., MAD class 0x5A
    assert!(decode(&bytes).roce().unwrap().cm.is_none());
}

#[test]
fn mac_control_frames() {
    let mut quanta = [0u16; 8];
    quanta[3] = 0xFFFF;
    let pfc = encode::pfc_frame([2, 0, 0, 0, 0, 9], 0x08, quanta);
    assert_eq!(decode(&pfc).kind(), FrameKind::Pfc);
    assert_eq!(decode(&encode::pause_frame([2, 0, 0, 0, 0, 9], 5)).kind(), FrameKind::Pause);
    assert_eq!(malformed_error(&decode(&pfc[..20])).layer, Layer::MacControl);
}

/// Every prefix of every sample frame (so every header boundary), and each frame with random
/// bytes overwritten, decodes without a panic under every link type.
#[test]
fn cut_and_corrupted_frames_never_panic() {
    use rocescope::generate::all_scenarios;
    use rocescope::generate::scenarios::Rng;
    let mut rng = Rng::new(7);
    let link_types = [LinkType::ETHERNET, LinkType::LINUX_SLL, LinkType::LINUX_SLL2, LinkType::RAW, LinkType(999)];
    let mut decoded = 0usize;
    for scenario in all_scenarios() {
        for frame in scenario.frames.iter().take(40) {
            for cut in 0..=frame.bytes.len() {
                for link_type in link_types {
                    decode_as(link_type, &frame.bytes[..cut]);
                    decoded += 1;
                }
            }
            for _ in 0..50 {
                let mut bytes = frame.bytes.clone();
                for _ in 0..4 {
                    let at = (rng.next_u64() as usize) % bytes.len();
                    bytes[at] = rng.next_u64() as u8;
                }
                let p = decode(&bytes);
                let frame = rocescope::fields::Frame::alone(1, &p);
                let _ = rocescope::output::packet::tree::write_tree(&mut String::new(), &frame);
                decoded += 1;
            }
        }
    }
    assert!(decoded > 100_000, "{decoded} decodes");
}

#[test]
fn erspan_ii_is_read_by_its_header_when_gre_has_no_sequence_number() {
    let outer = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    let inner = write_only(24).encode();
    let frame = encode::erspan2(&outer, [192, 0, 2, 1], [192, 0, 2, 2], 4, None, &inner);
    let p = decode(&frame);
    let kinds: Vec<&str> = p.encaps.iter().map(|e| e.kind.name()).collect();
    assert_eq!(kinds, ["erspan2"]);
    assert_eq!(p.encaps.iter().next().and_then(|e| e.kind.erspan()).map(|h| h.session_id), Some(4));
    assert_eq!((icrc(&p), p.bth().map(|b| b.psn())), (IcrcStatus::Ok, Some(4660)));
    // a type I mirror (no ERSPAN header) of a frame whose first byte has the version nibble 1
    let mut unicast = inner.clone();
    unicast[0] = 0x12;
    let type1 = encode::erspan1(&outer, [192, 0, 2, 1], [192, 0, 2, 2], &unicast);
    let p = decode(&type1);
    let kinds: Vec<&str> = p.encaps.iter().map(|e| e.kind.name()).collect();
    assert_eq!((kinds, icrc(&p)), (vec!["erspan1"], IcrcStatus::Ok));
}
