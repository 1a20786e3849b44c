//! Native InfiniBand: on the real capture (`../shared/captures/real/native_ib_erf_cm_rc.pcap`,
//! `ibdump` ERF records) the wire parsers read every record's ERF header and LRH as tshark
//! does, and both CRCs verify on every packet with the rules of
//! `../shared/protocol-facts.md` §15; hand-checked packets for both CRCs and PktLen; ERF and
//! LINKTYPE_INFINIBAND in pcap and pcapng; undecoded link types; and the analysis of the
//! InfiniBand samples.

use crate::common;

use common::capture::{Capture, Side, T0, US, ack, analyze_file, flow, write_only};
use rocescope::generate::encode::{self, BthRepr, L2, L3, Lrh, RoceFrame};
use rocescope_engine::capture::{Inputs, LinkType, Record};
use rocescope_engine::decode::{Body, DecodedFrame, Decoder, Endpoint, IcrcStatus};
use rocescope_parsers::erf::{ErfHeader, TYPE_INFINIBAND};
use rocescope_parsers::ext::{Deth, ExtHeaders};
use rocescope_parsers::icrc;
use rocescope_parsers::lrh::{LrhHeader, NextHeader};
use rocescope_parsers::vcrc;
use serde_json::{Value, json};

/// Per packet: VL, LNH, DLID, PktLen, SLID, opcode, and whether ICRC and VCRC verify.
fn decoded(path: &std::path::Path) -> Vec<(String, bool, bool)> {
    let (mut inputs, errors) = Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty());
    let mut packets = Vec::new();
    while let Some(frame) = inputs.next_frame() {
        let (erf, payload) = ErfHeader::parse(frame.record.data).expect("an ERF record");
        assert_eq!((erf.record_type, erf.loss_counter), (TYPE_INFINIBAND, 0));
        let (lrh, _) = LrhHeader::parse(payload).expect("an LRH");
        // the record is padded past the packet: PktLen bounds it
        let len = lrh.packet_len();
        let packet = payload.get(..len + 2).expect("the packet and its VCRC are captured");
        let bth_at = if lrh.next_header() == NextHeader::IbaGlobal { 48 } else { 8 };
        // VL and LNH in hex, as tshark prints them
        let fields = format!(
            "0x{:02x}\t0x{:02x}\t{}\t{}\t{}\t{}",
            lrh.vl(),
            lrh.lnh(),
            lrh.dlid(),
            lrh.packet_words(),
            lrh.slid(),
            packet[bth_at]
        );
        let icrc_ok = icrc::native(&packet[..len - 4]).map(icrc::to_wire) == packet[len - 4..len].try_into().ok();
        let vcrc_ok = vcrc::to_wire(vcrc::vcrc(&packet[..len])) == packet[len..len + 2];
        packets.push((fields, icrc_ok, vcrc_ok));
    }
    packets
}

#[test]
fn every_packet_of_the_real_capture_parses_as_tshark_shows_it_and_both_crcs_verify() {
    let Some(real) = common::shared_subdir("captures/real") else { return };
    let path = real.join("native_ib_erf_cm_rc.pcap");
    let packets = decoded(&path);
    assert_eq!(packets.len(), 43);
    assert!(packets.iter().all(|(_, icrc, vcrc)| *icrc && *vcrc), "{packets:#?}");
    let global = packets.iter().filter(|(f, ..)| f.split('\t').nth(1) == Some("0x03")).count();
    assert_eq!((packets.len() - global, global), (37, 6));
    if !common::tshark_available() {
        eprintln!("SKIPPED the comparison with tshark: tshark is not installed");
        return;
    }
    let fields = ["vl", "lnh", "dlid", "pktlen", "slid"].map(|f| format!("infiniband.lrh.{f}"));
    let mut tshark = std::process::Command::new("tshark");
    tshark.arg("-r").arg(&path).args(["-T", "fields"]);
    for f in fields.iter().map(String::as_str).chain(["infiniband.bth.opcode"]) {
        tshark.args(["-e", f]);
    }
    let out = tshark.output().expect("tshark runs");
    let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    let ours: Vec<String> = packets.into_iter().map(|(f, ..)| f).collect();
    assert_eq!(ours, theirs);
}

/// Frame 11 of the real capture, as tshark shows its bytes: an RC ACK without a GRH. LRH (VL 0,
/// LNH 2, DLID 4, PktLen 7 words, SLID 1), BTH (ACK, P_Key 0xFFFF, QP 0x870408, PSN
/// 0xD40A55), AETH (syndrome 0x1F, MSN 1), ICRC, VCRC.
const ACK_WITHOUT_GRH: [u8; 30] = [
    0x00, 0x02, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01, 0x11, 0x40, 0xff, 0xff, 0x00, 0x87, 0x04, 0x08, 0x00, 0xd4, 0x0a,
    0x55, 0x1f, 0x00, 0x00, 0x01, 0xa8, 0x03, 0x55, 0x50, 0x30, 0x81,
];

/// Frame 5 of the real capture: an IPoIB ARP request to a multicast GID, with a GRH. LRH (LNH 3,
/// DLID 0xC000, PktLen 33 words, SLID 4), GRH (SGID fe80::2:c902:24:f636), BTH (UD SEND Only,
/// QP 0xFFFFFF), DETH, 60 bytes of payload, ICRC, VCRC.
const ARP_WITH_GRH: &str = "\
    00 03 c0 00 00 21 00 04 60 00 00 00 00 54 1b 00 fe 80 00 00 00 00 00 00 00 02 c9 02 00 24 f6 36 \
    ff 12 40 1b ff ff 00 00 00 00 00 00 ff ff ff ff 64 40 ff ff 00 ff ff ff 00 00 20 af 00 00 0b 1b \
    00 00 04 05 08 06 00 00 00 20 08 00 14 04 00 01 80 00 04 05 fe 80 00 00 00 00 00 00 00 02 c9 02 \
    00 24 f6 36 0a 00 01 22 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 0a 00 00 3a \
    bd 6b d6 a8 88 83";

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits.chunks(2).map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap()).collect()
}

/// Decodes `bytes` as a LINKTYPE_INFINIBAND record of which only `captured` bytes were kept.
fn with_decoded(bytes: &[u8], captured: usize, sink: impl FnOnce(&DecodedFrame<'_>)) {
    let data = &bytes[..captured.min(bytes.len())];
    let record = Record { ts_ns: 0, orig_len: bytes.len() as u32, data, link_type: LinkType::INFINIBAND, offset: 0 };
    sink(&Decoder::default().decode(&record));
}

/// The ICRC and VCRC verdicts of a native packet.
fn crcs(bytes: &[u8], captured: usize) -> (IcrcStatus, IcrcStatus) {
    let mut verdicts = None;
    with_decoded(bytes, captured, |p| {
        let r = p.roce().expect("an InfiniBand transport packet");
        verdicts = Some((r.icrc, r.vcrc.expect("a VCRC").status));
    });
    verdicts.expect("decoded")
}

fn flipped(bytes: &[u8], at: usize, mask: u8) -> Vec<u8> {
    let mut copy = bytes.to_vec();
    copy[at] ^= mask;
    copy
}

#[test]
fn both_crcs_of_hand_checked_packets_with_and_without_a_grh() {
    use IcrcStatus::{Bad, Ok};
    let ack = ACK_WITHOUT_GRH;
    let arp = hex(ARP_WITH_GRH);
    assert_eq!(arp.len(), 134);
    assert_eq!((crcs(&ack, 30), crcs(&arp, 134)), ((Ok, Ok), (Ok, Ok)));
    with_decoded(&ack, 30, |p| {
        assert_eq!((p.source(), p.destination()), (Some(Endpoint::Lid(1)), Some(Endpoint::Lid(4))));
        assert_eq!(p.bth().map(|b| (b.opcode(), b.dest_qp(), b.psn())), Some((0x11, 0x870408, 0xD40A55)));
    });
    with_decoded(&arp, 134, |p| {
        assert_eq!(p.source().map(|e| e.to_string()).as_deref(), Some("fe80::2:c902:24:f636"));
        assert_eq!(p.lrh.map(|l| (l.slid(), l.dlid(), l.packet_len())), Some((4, 0xC000, 132)));
    });
    // a bit error in the AETH: both CRCs fail; in the VCRC itself: only the VCRC
    assert_eq!(crcs(&flipped(&ack, 21, 0x04), 30), (Bad, Bad));
    assert_eq!(crcs(&flipped(&ack, 29, 0x01), 30), (Ok, Bad));
    // another VL (a hop's SL-to-VL mapping): the ICRC masks it, the VCRC covers it
    assert_eq!(crcs(&flipped(&ack, 0, 0x10), 30), (Ok, Bad));
    // without a GRH the ICRC covers the DLID; with one, the whole LRH is masked, and the
    // GRH's hop limit too
    assert_eq!(crcs(&flipped(&ack, 3, 0x01), 30), (Bad, Bad));
    assert_eq!(crcs(&flipped(&arp, 3, 0x01), 134), (Ok, Bad));
    assert_eq!(crcs(&flipped(&arp, 8 + 7, 0x01), 134), (Ok, Bad));
    assert_eq!(crcs(&flipped(&arp, 8 + 8, 0x01), 134), (Bad, Bad), "the SGID is covered");
}

#[test]
fn pktlen_bounds_the_packet_not_the_captured_bytes() {
    use IcrcStatus::{Ok, Unverifiable};
    // padding after the VCRC (an ERF record's, or a card's) stays out of the packet
    let mut padded = ACK_WITHOUT_GRH.to_vec();
    padded.extend_from_slice(&[0; 10]);
    assert_eq!(crcs(&padded, padded.len()), (Ok, Ok));
    with_decoded(&padded, padded.len(), |p| {
        let r = p.roce().unwrap();
        assert_eq!((r.ib.bytes.len(), r.ib.payload_len), (20, 0), "BTH through ICRC, as PktLen says");
    });
    // a capture cut inside the VCRC verifies the ICRC only; one cut inside the ICRC neither
    assert_eq!(crcs(&ACK_WITHOUT_GRH, 29), (Ok, Unverifiable));
    assert_eq!(crcs(&ACK_WITHOUT_GRH, 26), (Unverifiable, Unverifiable));
    // a cut payload: its length still comes from PktLen
    let arp = hex(ARP_WITH_GRH);
    with_decoded(&arp, 80, |p| {
        let r = p.roce().unwrap();
        assert_eq!((r.ib.payload_len, r.ib.payload.len(), r.icrc), (60, 12, Unverifiable));
    });
    // a PktLen too short for the LRH, BTH, AETH and ICRC is malformed
    let mut short = ACK_WITHOUT_GRH;
    short[5] = 0x05;
    with_decoded(&short, 30, |p| assert!(matches!(p.body, Body::Malformed(_)), "{:?}", p.body));
}

/// A RoCEv2 frame of the shared test capture helpers' kind, from host `from` to QP `qp`.
fn ud_send(from: u8, qp: u32, psn: u32) -> RoceFrame {
    RoceFrame {
        l2: L2::new([2, 0, 0, 0, 0, from], [2, 0, 0, 0, 0, 9]),
        l3: L3::v4([10, 0, 0, from], [10, 0, 0, 9]),
        udp_sport: 0xC000,
        udp_dport: 4791,
        bth: BthRepr::new(0x64, qp, psn),
        ext: ExtHeaders { deth: Some(Deth { qkey: 0x8001_0000, src_qp: 1 }), ..ExtHeaders::default() },
        payload: vec![0; 256],
    }
}

#[test]
fn datagrams_are_not_sequenced() {
    // host 1's QP 1 numbers its MADs across every destination: to host 9 they jump; so does
    // any UD QP of its own
    let mut c = Capture::new();
    for (i, psn) in [5, 9, 20].into_iter().enumerate() {
        c.add(T0 + i as i64 * US, &ud_send(1, 1, psn));
        c.add(T0 + i as i64 * US + 1, &ud_send(1, 0xFF_FFFF, psn + 100));
        c.add(T0 + i as i64 * US + 2, &ud_send(1, 0x300, psn + 200));
    }
    let r = c.analyze(&[]);
    for qp in [1, 0xFF_FFFF, 0x300] {
        let f = flow(&r, 1, qp);
        assert_eq!((&f["sequenced"], &f["gaps"], &f["packets"]), (&json!(0), &json!(0), &json!(3)), "QP {qp:#x}");
        assert_eq!(f["messages"], json!(3), "QP {qp:#x}: each datagram is a message all the same");
        assert_eq!(f["src_qps"], json!({"0x000001": 3}), "QP {qp:#x}");
    }
}

fn sample(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

fn flow_from<'a>(report: &'a Value, src: &str, dst_qp: u64) -> &'a Value {
    let flows = report["flows"].as_array().expect("flows");
    flows.iter().find(|f| f["src_ip"] == json!(src) && f["dst_qp"] == json!(dst_qp)).expect("the flow")
}

fn codes(report: &Value) -> Vec<&str> {
    report["findings"].as_array().expect("findings").iter().map(|f| f["code"].as_str().expect("code")).collect()
}

#[test]
fn a_clean_connection_with_a_grh_pairs_through_its_cm_exchange() {
    let r = analyze_file(&sample("ib_rc_grh.pcap"), &[]);
    let t = &r["totals"];
    assert_eq!((&t["infiniband"], &t["infiniband_link"], &t["roce_v2"]), (&json!(14), &json!(1), &json!(0)));
    assert_eq!(r["infiniband"]["vcrc_ok"], json!(14));
    let forward = flow_from(&r, "fe80::2:c903:0:11", 0x000B22);
    let reverse = flow_from(&r, "fe80::2:c903:0:22", 0x000A11);
    assert_eq!((&forward["peer"], &forward["pairing"]), (&reverse["id"], &json!("cm")));
    assert_eq!((&forward["version"], &forward["messages"], &forward["pmtu"]), (&json!(0), &json!(3), &json!(2048)));
    assert_eq!(codes(&r), Vec::<&str>::new());
}

#[test]
fn go_back_n_on_an_infiniband_link_with_its_congestion_marks() {
    let r = analyze_file(&sample("ib_go_back_n.pcap"), &[]);
    let data = flow_from(&r, "LID 4", 0x000909);
    let acks = flow_from(&r, "LID 9", 0x000408);
    assert_eq!((&data["gaps"], &data["missing_psns"], &data["retransmitted"]), (&json!(1), &json!(2), &json!(5)));
    assert_eq!((&data["fecn"], &data["becn"], &acks["becn"]), (&json!(2), &json!(0), &json!(1)));
    assert_eq!((&acks["naks_psn_seq_err"], &data["pairing"]), (&json!(1), &json!("psn")));
    let e = &r["retransmit_episodes"][0];
    assert_eq!(
        (&e["trigger"], &e["pattern"], &e["first_psn"]),
        (&json!("nak_psn_seq_err"), &json!("go_back_n"), &json!(0x15))
    );
    assert_eq!((&r["infiniband"]["fecn"], &r["infiniband"]["becn"]), (&json!(2), &json!(1)));
    // FECN is InfiniBand's mark, not ECN-CE
    assert_eq!((&r["ecn"]["ce"], &data["ce"]), (&json!(0), &json!(0)));
}

#[test]
fn the_erf_loss_counter_is_capture_loss() {
    let r = analyze_file(&sample("ib_crc_errors.pcap"), &[]);
    assert_eq!(r["infiniband"]["erf_records_lost"], json!(2));
    let lost = r["findings"].as_array().unwrap().iter().find(|f| f["code"] == json!("CAPTURE_LOST_PACKETS")).unwrap();
    assert_eq!(lost["evidence"]["count"], json!(2));
    let data = flow_from(&r, "LID 7", 0x000808);
    assert_eq!(
        (&data["vcrc_bad"], &data["first_frames"]["vcrc_bad"], &data["icrc_bad"]),
        (&json!(1), &json!(5), &json!(1))
    );
    // the record the card dropped: a gap, which the next ACK shows the responder did not have
    let missed = (&data["gaps"], &data["missing_psns"], &data["capture_missed"]);
    assert_eq!(missed, (&json!(1), &json!(0), &json!(1)));
    for code in ["VCRC_BAD", "ICRC_BAD", "CAPTURE_LOST_PACKETS", "CAPTURE_LOSS"] {
        assert!(codes(&r).contains(&code), "{code} in {:?}", codes(&r));
    }
    assert!(!codes(&r).contains(&"PSN_GAP"), "{:?}", codes(&r));
}

#[test]
fn erf_headers_are_a_pseudo_header_with_their_own_time_and_extensions() {
    let packet = ACK_WITHOUT_GRH;
    // an extension header (type 0x05, no further one) after the 16-byte header
    let mut record = encode::erf_record(1_500_000_000_123, 21, 3, &packet);
    record[8] |= 0x80;
    record.splice(16..16, [0x05, 0, 0, 0, 0, 0, 0, 1]);
    let rlen = u16::from_be_bytes([record[10], record[11]]) + 8;
    record[10..12].copy_from_slice(&rlen.to_be_bytes());
    let r = Record { ts_ns: 7, orig_len: record.len() as u32, data: &record, link_type: LinkType::ERF, offset: 0 };
    let p = Decoder::default().decode(&r);
    assert_eq!((p.data, p.orig_len, p.ts_ns), (&packet[..], 30, 1_500_000_000_123));
    assert_eq!(p.roce().map(|r| (r.icrc, r.vcrc.map(|v| v.status))), Some((IcrcStatus::Ok, Some(IcrcStatus::Ok))));
    let mut c = Capture::of_link_type(197);
    c.add_bytes(T0, record.clone());
    let report = c.analyze(&[]);
    assert_eq!(report["infiniband"]["erf_records_lost"], json!(3));
}

#[test]
fn an_erf_ethernet_record_is_decoded_as_ethernet() {
    let roce = ud_send(1, 0x300, 5).encode();
    let mut c = Capture::of_link_type(197);
    c.add_bytes(T0, encode::erf_record(T0, 2, 0, &roce));
    let frames = common::jsonl(&c.write(), &[]);
    assert_eq!((&frames[0]["kind"], &frames[0]["roce"], &frames[0]["icrc"]), (&json!("roce"), &json!(2), &json!("ok")));
    assert_eq!((&frames[0]["len"], &frames[0]["src_ip"]), (&json!(roce.len()), &json!("10.0.0.1")));
    // a mirrored frame in an ERF Ethernet record has the mirror's Ethernet header and its own
    let collector = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    let mirrored = encode::erspan2(&collector, [192, 0, 2, 1], [192, 0, 2, 2], 7, Some(1), &roce);
    let mut c = Capture::of_link_type(197);
    c.add_bytes(T0, encode::erf_record(T0, 2, 0, &mirrored));
    let path = c.write();
    let sources = common::run_ok(&["packets", "-T", "fields", "-e", "eth.src", path.to_str().unwrap()]);
    assert_eq!(sources.trim(), "02:00:00:00:ee:01,02:00:00:00:00:01");
}

#[test]
fn undecoded_link_types_are_said_once_and_found() {
    let mut c = Capture::of_link_type(105);
    for i in 0..3 {
        c.add_bytes(T0 + i * US, vec![0x08, 0x02, 0, 0, 1, 2, 3, 4]);
    }
    let path = c.write();
    let out = common::run(&["packets", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().filter(|l| l.contains("warning")).collect::<Vec<_>>(),
        ["rocescope: warning: 3 frames of link type 105 not decoded (the first is frame 1)"]
    );
    let r = analyze_file(&path, &[]);
    assert_eq!(
        r["capture"]["undecoded_links"],
        json!([{"link_type": 105, "erf_type": null, "frames": 3, "first_frame": 1}])
    );
    assert_eq!((&r["totals"]["undecoded_link"], &r["totals"]["non_roce"]), (&json!(3), &json!(3)));
    let finding = &r["findings"][0];
    assert_eq!((&finding["code"], &finding["evidence"]["count"]), (&json!("UNDECODED_LINK_TYPE"), &json!(3)));
    let text = common::run_ok(&["analyze", path.to_str().unwrap()]);
    assert!(!text.contains("Findings: none") && text.contains("UNDECODED_LINK_TYPE"), "{text}");
    // an ERF record of a type not decoded says which
    let mut erf = Capture::of_link_type(197);
    erf.add_bytes(T0, encode::erf_record(T0, 7, 0, &[1, 2, 3, 4]));
    let r = analyze_file(&erf.write(), &[]);
    assert_eq!(r["findings"][0]["message"], json!("1 frame of ERF record type 7 were not decoded or analysed"));
}

#[test]
fn pcapng_interfaces_carry_infiniband_as_pcap_does() {
    use rocescope::output::packet::capture_file::{CaptureWriter, Interface};
    let dir = tempfile::tempdir().unwrap();
    for name in ["ib_rc_grh.pcap", "ib_go_back_n.pcap", "ib_crc_errors.pcap"] {
        let path = sample(name);
        let link_type = common::pcap_link_type(&path).expect("a pcap file") as u16;
        let copy = dir.path().join(name).with_extension("pcapng");
        let file = std::fs::File::create(&copy).unwrap();
        let mut w =
            CaptureWriter::pcapng(file, &[Interface { link_type, snaplen: 65535, tsresol: 9, name: None }]).unwrap();
        let (mut inputs, _) = Inputs::open(std::slice::from_ref(&path), false);
        while let Some(f) = inputs.next_frame() {
            w.packet(0, f.record.ts_ns, f.record.data).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(common::jsonl(&copy, &[]), common::jsonl(&path, &[]), "{name}");
    }
}

#[test]
fn the_generator_writes_what_the_decoder_reads() {
    let f = ud_send(3, 0x000123, 77);
    let lrh = Lrh { vl: 2, sl: 5, slid: 3, dlid: 9 };
    let packet = f.encode_native(&lrh);
    with_decoded(&packet, packet.len(), |p| {
        let l = p.lrh.expect("an LRH");
        assert_eq!((l.vl(), l.sl(), l.slid(), l.dlid(), l.packet_len() + 2), (2, 5, 3, 9, packet.len()));
        let r = p.roce().expect("a transport packet");
        assert_eq!((r.icrc, r.vcrc.map(|v| v.status), r.ib.payload_len), (IcrcStatus::Ok, Some(IcrcStatus::Ok), 256));
    });
}

/// A test frame carried natively, between the LIDs its sides are numbered with.
fn on_ib(f: &RoceFrame) -> Vec<u8> {
    let encode::Addresses::V4 { src, dst } = f.l3.addresses else { panic!("an IPv4 test frame") };
    f.encode_native(&Lrh { vl: 0, sl: 0, slid: u16::from(src[3]), dlid: u16::from(dst[3]) })
}

/// Six RDMA WRITEs from LID 1 to LID 2, the third FECN-marked, each acknowledged 3 µs later;
/// the ACK of the marked one carries BECN when `answered`.
fn marked_stream(answered: bool) -> Capture {
    let (a, b) = (Side { n: 1, qpn: 0x100 }, Side { n: 2, qpn: 0x200 });
    let mut c = Capture::of_link_type(247);
    for psn in 0..6u32 {
        let t = T0 + i64::from(psn) * 10 * US;
        let mut data = write_only(a, b, psn, true);
        data.bth.fecn = psn == 2;
        c.add_bytes(t, on_ib(&data));
        let mut reply = ack(b, a, psn, 0x0A);
        reply.bth.becn = answered && psn == 2;
        c.add_bytes(t + 3 * US, on_ib(&reply));
    }
    c
}

#[test]
fn fecn_plays_ce_and_becn_plays_the_cnp() {
    let r = marked_stream(true).analyze(&[]);
    let data = flow_from(&r, "LID 1", 0x200);
    assert_eq!((&data["fecn"], &data["first_frames"]["fecn"], &data["ce"]), (&json!(1), &json!(5), &json!(0)));
    // the mark's answer 3 µs later, as a CE mark's CNP would be
    assert_eq!((&data["ce_to_cnp_ns"]["count"], &data["ce_to_cnp_ns"]["max"]), (&json!(1), &json!(3 * US)));
    // the sender's reaction is measured from the BECN, as from a CNP burst
    let bursts = r["congestion"]["cnp_bursts"].as_array().expect("bursts");
    assert_eq!((bursts.len(), &bursts[0]["flow"], &bursts[0]["first_frame"]), (1, &data["id"], &json!(6)));
    // BECN is counted as itself, not as a CNP
    let acks = flow_from(&r, "LID 2", 0x100);
    assert_eq!((&acks["becn"], &acks["cnps"], &r["cnps"]), (&json!(1), &json!(0), &json!(0)));
    assert!(!codes(&r).contains(&"FECN_WITHOUT_BECN"), "{:?}", codes(&r));
}

#[test]
fn fecn_marks_no_receiver_answers_are_found() {
    let r = marked_stream(false).analyze(&[]);
    let finding = r["findings"].as_array().unwrap().iter().find(|f| f["code"] == json!("FECN_WITHOUT_BECN"));
    let finding = finding.expect("FECN_WITHOUT_BECN");
    assert_eq!((&finding["evidence"]["count"], &finding["evidence"]["frames"]), (&json!(1), &json!([5])));
    assert_eq!(r["congestion"]["cnp_bursts"], json!([]));
}

#[test]
fn incast_on_an_infiniband_link_keys_its_receiver_by_lid() {
    let receiver = Side { n: 20, qpn: 0x2000 };
    let mut c = Capture::of_link_type(247);
    for step in 0..10 {
        for n in 11..15u8 {
            let from = Side { n, qpn: 0x100 + u32::from(n) };
            let mut f = write_only(from, receiver, step as u32, false);
            f.bth.fecn = step == 5;
            c.add_bytes(T0 + (step * 10 + i64::from(n)) * US, on_ib(&f));
        }
    }
    let r = c.analyze(&["--incast-senders", "4"]);
    let incast = &r["congestion"]["incast"];
    assert_eq!(
        (&incast["receivers"][0]["receiver"], &incast["receivers"][0]["max_fan_in"]),
        (&json!("LID 20"), &json!(4))
    );
    let period = &incast["periods"][0];
    assert_eq!(period["senders"], json!(["LID 11", "LID 12", "LID 13", "LID 14"]));
    assert_eq!(
        (&period["ce_marks"], &period["pauses"]),
        (&json!(4), &json!(0)),
        "FECN marks count as the period's marks"
    );
}

#[test]
fn raw_and_ipv6_lnh_packets_are_shown_and_not_decoded_further() {
    for (lnh, info) in [(0u8, "Raw packet (LNH 0, no IBA transport)"), (1, "IPv6 over InfiniBand (LNH 1, not decoded)")]
    {
        let mut packet = ACK_WITHOUT_GRH;
        packet[1] = lnh;
        let mut c = Capture::of_link_type(247);
        c.add_bytes(T0, packet.to_vec());
        let path = c.write();
        let frames = common::jsonl(&path, &[]);
        assert_eq!(
            (&frames[0]["kind"], &frames[0]["slid"], &frames[0]["opcode"]),
            (&json!("other"), &json!(1), &json!(null))
        );
        let list = common::run_ok(&["packets", path.to_str().unwrap()]);
        assert!(list.contains("InfiniBand") && list.contains(info), "{list}");
        let tree = common::run_ok(&["packets", "-V", path.to_str().unwrap()]);
        assert!(
            tree.contains(&format!("Link Next Header: {} (0x0{lnh})", ["Raw", "IPv6 (non-IBA)"][lnh as usize])),
            "{tree}"
        );
    }
}
