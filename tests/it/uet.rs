//! Ultra Ethernet Transport: samples/uet.pcap decoded (packet list, fields, filters, the
//! decode tree), its CRC32C trailers checked against the capture's reading, and UET on other
//! ports, over native IP, cut by the snap length and inside a mirror encapsulation.

use crate::common::{self, capture::Capture, capture::T0, capture::analyze_file};

use rocescope::generate::encode::{self, L2};
use rocescope::generate::uet::{self, AR, RUD, UUD};
use rocescope_parsers::uet::crc::Variant;
use serde_json::Value;

const SAMPLE: &str = "samples/uet.pcap";

fn sample() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(SAMPLE)
}

fn codes(report: &Value) -> Vec<&str> {
    report["findings"].as_array().expect("findings").iter().filter_map(|f| f["code"].as_str()).collect()
}

/// `-T fields` of `fields` for the frames `filter` selects.
fn fields(path: &std::path::Path, filter: &str, fields: &[&str]) -> Vec<String> {
    let mut args = vec!["packets", "-Y", filter, "-T", "fields"];
    for f in fields {
        args.extend(["-e", f]);
    }
    args.push(path.to_str().expect("UTF-8"));
    common::run_ok(&args).lines().map(str::to_string).collect()
}

#[test]
fn uet_sample_decodes_and_reports_its_crcs() {
    let list = common::run_ok(&["packets", sample().to_str().expect("UTF-8")]);
    let info: Vec<&str> = list.lines().map(|l| l.split_once("UET").map_or("", |(_, rest)| rest.trim())).collect();
    assert_eq!(info.len(), 21);
    assert_eq!(info[0], "166 RUD_REQ PSN=1000 Start_PSN=1000 SPDCID=7 [AR] [SYN] CRC ok | UET_WRITE");
    assert_eq!(info[1], "70 ACK CACK_PSN=1000 ACK_PSN=1000 SPDCID=9 DPDCID=7 CRC ok | UET_DEFAULT_RESPONSE RC_OK");
    assert_eq!(info[5], "62 NACK TRIMMED NACK_PSN=1001 SPDCID=9 DPDCID=7 CRC ok");
    assert_eq!(info[6], "78 ACK_CC CACK_PSN=1000 ACK_PSN=1002 SACK_BASE=1002 SPDCID=9 DPDCID=7 [M] CRC ok");
    assert_eq!(info[7], "1126 RUD_REQ PSN=1001 SPDCID=7 DPDCID=9 [RETX] [AR] CRC ok | UET_SEND [retransmission]");
    assert_eq!(info[11], "62 CONTROL CLOSE PSN=1005 SPDCID=7 DPDCID=9 [AR] CRC ok");
    assert_eq!(info[15], "202 RUDI_REQ PKT_ID=77 CRC ok | UET_WRITE");
    assert_eq!(info[19], "118 TSS SDI=258 (encrypted)");
    assert_eq!(info[20], "166 RUD_REQ PSN=1006 SPDCID=7 DPDCID=9 CRC bad | UET_WRITE");
    let kinds = common::jsonl(&sample(), &[]);
    assert!(kinds.len() == 21 && kinds.iter().all(|f| f["kind"] == "uet"), "every frame is UET");
    let report = analyze_file(&sample(), &[]);
    assert_eq!(
        (report["totals"]["uet_packets"].as_u64(), report["totals"]["roce_packets"].as_u64()),
        (Some(21), Some(0))
    );
    let crc = &report["uet"]["crc"];
    assert_eq!(
        (crc["variant"].as_str(), crc["ok"].as_u64(), crc["bad"].as_u64(), crc["unchecked"].as_u64()),
        (Some("crc32c_le"), Some(19), Some(1), Some(1))
    );
    assert_eq!(codes(&report), ["UET_CRC_BAD", "UET_TRIMMING"], "and no NO_ROCE: the capture has UET");
    // the RUD PDC from its SYN to its close: 1003 before 1002, 1001 trimmed and resent, the
    // CLOSE's PSN (1005) in the same sequence
    let p = &report["uet"]["pdcs"][0];
    let got = |k: &str| p[k].as_u64();
    assert_eq!(
        (p["spdcid"].as_u64(), p["dpdcid"].as_u64(), p["closed"].as_bool(), p["mode"].as_str()),
        (Some(7), Some(9), Some(true), Some("RUD"))
    );
    assert_eq!(
        [
            got("requests"),
            got("acks"),
            got("out_of_order"),
            got("retransmitted"),
            got("missing"),
            got("trimmed"),
            got("psn_last")
        ],
        [Some(7), Some(5), Some(1), Some(1), Some(0), Some(1), Some(1006)]
    );
    assert_eq!((got("ecn_ce"), got("ecn_echoed"), p["ecn_echo_agrees"].as_bool()), (Some(1), Some(1), Some(true)));
    let modes: Vec<&str> =
        report["uet"]["pdcs"].as_array().expect("pdcs").iter().filter_map(|p| p["mode"].as_str()).collect();
    assert_eq!(modes, ["RUD", "ROD", "RUDI", "UUD"]);
    let uud = &report["uet"]["pdcs"][3];
    assert_eq!((uud["requests"].as_u64(), uud["spdcid"].is_null(), uud["unanswered"].is_null()), (Some(2), true, true));
    assert_eq!(report["uet"]["encrypted"], 1);
}

#[test]
fn fields_and_filters_read_every_layer() {
    let path = sample();
    assert_eq!(
        fields(
            &path,
            "uet.pds.nack.code == 1 || uet.pds.flags.retx == 1",
            &["frame.number", "uet.pds.type", "uet.pds.nack.code", "uet.pds.psn", "uet.pds.nack.psn"]
        ),
        ["6\t10\t1\t\t1001", "8\t2\t\t1001\t"]
    );
    assert_eq!(
        fields(
            &path,
            "uet.pds.ack.sack_bitmap",
            &[
                "uet.pds.ack.sack_offset",
                "uet.pds.ack.sack_bitmap",
                "uet.pds.ack.cc_state.service_time",
                "uet.pds.ack.cc_state.rc",
                "uet.pds.flags.m"
            ]
        ),
        ["2\t0x0000000000000003\t20\t1\t1"]
    );
    assert_eq!(fields(&path, "uet && !udp", &["frame.number", "uet.pds.entropy", "ip.proto"]), ["19\t4660\t253"]);
    assert_eq!(
        fields(
            &path,
            "uet.ses.comp_swap_ext_hdr",
            &[
                "uet.ses.std.opcode",
                "uet.ses.comp_swap_ext_hdr.atomic_opcode",
                "uet.ses.comp_swap_ext_hdr.atomic_data_type",
                "uet.ses.comp_swap_ext_hdr.swap_value"
            ]
        ),
        ["3\t13\t7\t22222222222222222222222222222222"]
    );
    assert_eq!(
        fields(
            &path,
            "uet.pds.type == 3",
            &[
                "uet.pds.start_psn",
                "uet.ses.med_req.header_data",
                "uet.ses.med_req.req_length",
                "uet.ses.med_req.flags.hd"
            ]
        ),
        ["5000\t65261\t512\t1"]
    );
    assert_eq!(fields(&path, "uet.ses.rsp.return_code == 1", &["frame.number"]), ["2", "11", "17"]);
    assert_eq!(
        fields(&path, "uet.tss", &["uet.tss.sdi", "uet.tss.sp", "uet.tss.tsc", "rocescope.uet.crc.status"]),
        ["258\t0\t0x0000000000000005\tunchecked"]
    );
    assert_eq!(fields(&path, "rocescope.uet.crc.status == \"bad\"", &["frame.number", "uet.pds.psn"]), ["21\t1006"]);
    let tree = common::run_ok(&["packets", "-V", "-c", "7", path.to_str().expect("UTF-8")]);
    for line in [
        "UET Packet Delivery Sublayer, PSN: 1000",
        "Type: ACK_CC (8) [uet.pds.type]",
        "NACK Code: TRIMMED (1) [uet.pds.nack.code]",
        "Opcode: UET_WRITE (1) [uet.ses.std.opcode]",
        "CRC32C reading: crc32c_le [rocescope.uet.crc.variant]",
    ] {
        assert!(tree.contains(line), "{line}");
    }
}

/// The frames of the finding `code` names.
fn finding_frames(report: &Value, code: &str) -> Vec<u64> {
    let findings = report["findings"].as_array().expect("findings");
    let finding = findings.iter().find(|f| f["code"] == code).unwrap_or_else(|| panic!("no {code}"));
    finding["evidence"]["frames"].as_array().expect("frames").iter().filter_map(Value::as_u64).collect()
}

/// Issue 53, item 2: the packet with a bad CRC is found frame by frame (its status, the
/// packet line, `--only errors`, the finding's frames), and the trimming finding names the
/// NACKs of the trimmed packets, not the PDC's SYN.
#[test]
fn a_bad_crc_and_trimmed_packets_are_found_frame_by_frame() {
    let path = sample();
    let path = path.to_str().expect("UTF-8");
    let errors = common::run_ok(&["packets", "--only", "errors", path]);
    let lines: Vec<&str> = errors.lines().collect();
    assert!(lines.len() == 1 && lines[0].trim_start().starts_with("21 "), "{errors}");
    assert!(lines[0].contains("RUD_REQ PSN=1006 SPDCID=7 DPDCID=9 CRC bad"), "{errors}");
    assert_eq!(
        fields(&sample(), "rocescope.uet.crc.status", &["rocescope.uet.crc.status"])
            .iter()
            .filter(|s| *s != "ok")
            .collect::<Vec<_>>(),
        ["unchecked", "bad"]
    );
    let report = analyze_file(&sample(), &[]);
    assert_eq!(finding_frames(&report, "UET_CRC_BAD"), [21]);
    assert_eq!(finding_frames(&report, "UET_TRIMMING"), [6], "the NACK TRIMMED, not the SYN (frame 1)");
    let trimmed = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/uet_trimmed.pcap");
    let nacks = fields(&trimmed, "uet.pds.nack.code == 1", &["frame.number"]);
    let report = analyze_file(&trimmed, &[]);
    let named: Vec<String> = finding_frames(&report, "UET_TRIMMING").iter().map(u64::to_string).collect();
    assert!(nacks.len() == 2 && named == nacks, "{named:?} are the NACKs {nacks:?}");
}

/// Issue 53, item 3: a UET capture's summaries count its packets as UET, say where its PDCs
/// are, title the page by what the capture holds and keep the PDC table within the page.
#[test]
fn a_uet_capture_s_summaries_show_uet_not_an_empty_roce_capture() {
    let path = sample();
    let path = path.to_str().expect("UTF-8");
    let text = common::run_ok(&["analyze", path]);
    assert!(text.contains("  RoCE 0 (v2 0, v1 0), UET 21, other 0 (PFC 0, PAUSE 0)"), "{text}");
    assert!(text.contains("Flows: no RoCE flow; UET PDCs (2), RUDI/UUD streams (2): listed under UET above"), "{text}");
    assert!(!text.contains("Flows (0") && !text.contains("ICRC:") && !text.contains("ECN:"), "{text}");
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("uet.html");
    common::run_ok(&["analyze", "--html", page.to_str().expect("UTF-8"), path]);
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.contains("<h1>UET capture report</h1>"));
    assert!(html.contains("<dt>UET</dt><dd>21 packets (100.0 %); 2 PDCs; CRC32C 19 ok, <strong>1 bad</strong>"));
    assert!(
        !html.contains("RoCE capture report") && !html.contains("<dt>RoCE</dt>") && !html.contains("<dt>ICRC</dt>")
    );
    // nine columns, their headers wrapped, in a container that scrolls on a narrow screen
    let table = &html[html.find("<table class=\"pdcs\">").expect("the PDC table")..];
    let header = &table[..table.find("</tr>").expect("a header row")];
    assert_eq!(header.matches("<th").count(), 9, "{header}");
    assert!(html.contains("<div class=\"wide\"><table class=\"pdcs\">"));
    assert!(html.contains(".wide { overflow-x: auto; }") && !html.contains("<script"));
    // a capture of both says so
    let both = dir.path().join("both.html");
    let roce = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/loss_go_back_n.pcap");
    common::run_ok(&["analyze", "--html", both.to_str().expect("UTF-8"), roce.to_str().expect("UTF-8"), path]);
    assert!(std::fs::read_to_string(&both).expect("the page").contains("<h1>RoCE and UET capture report</h1>"));
}

fn hosts() -> (L2, ([u8; 4], [u8; 4])) {
    (L2::new([2, 0, 0, 0, 0x10, 1], [2, 0, 0, 0, 0x10, 2]), ([10, 0, 1, 1], [10, 0, 1, 2]))
}

fn write_request(psn: u32) -> Vec<u8> {
    [uet::request(RUD, 3, AR, psn, 7, 9), uet::standard(0x01, 1, 42, 64), vec![0x5A; 64]].concat()
}

#[test]
fn a_capture_without_a_matching_reading_calls_nothing_bad() {
    let (l2, ips) = hosts();
    let mut c = Capture::new();
    for psn in 0..3 {
        // a trailer that is no reading of the CRC
        let mut frame = uet::udp_frame(
            &l2,
            ips,
            (0xD000, rocescope_parsers::uet::UDP_PORT),
            2,
            &write_request(psn),
            Some(Variant::Le),
        );
        let at = frame.len() - 4;
        frame[at..].copy_from_slice(&[0, 0, 0, 0]);
        c.add_bytes(T0 + i64::from(psn) * 1_000, frame);
    }
    let report = c.analyze(&[]);
    let crc = &report["uet"]["crc"];
    assert_eq!((crc["variant"].is_null(), crc["bad"].as_u64(), crc["unchecked"].as_u64()), (true, Some(0), Some(3)));
    assert_eq!(crc["readings"]["no_variant"], 3);
    assert!(!codes(&report).contains(&"UET_CRC_BAD"));
    // the readings of a big-endian writer are found as well
    let mut be = Capture::new();
    be.add_bytes(
        T0,
        uet::udp_frame(&l2, ips, (0xD000, rocescope_parsers::uet::UDP_PORT), 2, &write_request(1), Some(Variant::Be)),
    );
    assert_eq!(be.analyze(&[])["uet"]["crc"]["variant"], "crc32c_be");
}

#[test]
fn other_ports_and_protocols_by_option() {
    let (l2, ips) = hosts();
    let mut c = Capture::new();
    c.add_bytes(
        T0,
        uet::udp_frame(
            &l2,
            ips,
            (0xD000, rocescope_parsers::uet::REFERENCE_PROVIDER_PORT),
            2,
            &write_request(5),
            Some(Variant::Le),
        ),
    );
    let datagram = [uet::unreliable(UUD, 0, 0, None), vec![1; 32]].concat();
    c.add_bytes(T0 + 1_000, uet::native_frame(&l2, ips, 254, 0x0101, &datagram));
    let path = c.write();
    let path_str = path.to_str().expect("UTF-8");
    // the packet list's protocol column
    let protocols = |extra: &[&str]| {
        let mut args = vec!["packets"];
        args.extend_from_slice(extra);
        args.push(path_str);
        let list = common::run_ok(&args);
        list.lines().map(|l| l.split_whitespace().nth(5).unwrap_or("").to_string()).collect::<Vec<_>>()
    };
    assert_eq!(protocols(&[]), ["UDP", "IPv4"]);
    assert_eq!(protocols(&["--uet-port", "49150", "--uet-ip-protocol", "254"]), ["UET", "UET"]);
    let report = analyze_file(&path, &["--uet-port", "49150", "--uet-ip-protocol", "254"]);
    assert_eq!(report["uet"]["crc"]["ok"], 2);
}

#[test]
fn a_cut_packet_is_unchecked_and_a_mirrored_one_is_checked_inside() {
    let (l2, ips) = hosts();
    let whole =
        uet::udp_frame(&l2, ips, (0xD000, rocescope_parsers::uet::UDP_PORT), 2, &write_request(9), Some(Variant::Le));
    let mut c = Capture::new();
    c.add_bytes(T0, whole[..100].to_vec());
    let collector = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    c.add_bytes(T0 + 1_000, encode::erspan2(&collector, [192, 0, 2, 1], [192, 0, 2, 9], 5, Some(1), &whole));
    let path = c.write();
    assert_eq!(
        fields(&path, "uet", &["frame.number", "rocescope.uet.crc.status", "uet.pds.psn", "erspan.spanid"]),
        ["1\tunchecked\t9\t", "2\tok\t9\t5"]
    );
}

/// A capture of `packets` (initiator to target when `forth`), each with ECN `ecn`, 1 µs apart,
/// analysed.
fn exchange(packets: &[(bool, u8, Vec<u8>)]) -> Value {
    exchange_capture(packets).analyze(&[])
}

fn exchange_capture(packets: &[(bool, u8, Vec<u8>)]) -> Capture {
    exchange_capture_from(0, packets)
}

/// [`exchange_capture`], its packets placed as if `before` packets came first.
fn exchange_capture_from(before: usize, packets: &[(bool, u8, Vec<u8>)]) -> Capture {
    let (l2, (a, b)) = hosts();
    let back = L2::new(l2.dst, l2.src);
    let mut c = Capture::new();
    for (i, (forth, ecn, body)) in packets.iter().enumerate() {
        let (link, ips) = if *forth { (&l2, (a, b)) } else { (&back, (b, a)) };
        let frame =
            uet::udp_frame(link, ips, (0xD000, rocescope_parsers::uet::UDP_PORT), *ecn, body, Some(Variant::Le));
        c.add_bytes(T0 + (before + i) as i64 * 1_000, frame);
    }
    c
}

fn pdc(report: &Value, pdcid: u64) -> &Value {
    let pdcs = report["uet"]["pdcs"].as_array().expect("pdcs");
    pdcs.iter().find(|p| p["spdcid"] == pdcid).unwrap_or_else(|| panic!("no PDC {pdcid}"))
}

fn finding<'a>(report: &'a Value, code: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code}"))
}

/// A PDC's requests and an ACK_CC: 102 after 103; 104 first seen as a resend; 106 and 108
/// never seen nor acknowledged; 107 never seen but selectively acknowledged; 101 sent again.
fn accounted_pdc() -> Vec<(bool, u8, Vec<u8>)> {
    use uet::{RETX, SYN};
    let req =
        |psn: u32, flags: u8| (true, 2, uet::request(RUD, 0, flags, psn, 7, if flags & SYN != 0 { 0 } else { 9 }));
    let mut packets =
        vec![req(100, SYN | AR), req(101, 0), req(103, 0), req(102, 0), req(104, RETX), req(105, 0), req(109, 0)];
    packets.push((false, 0, uet::ack_cc(0, 105, (9, 7), 2, 0b1)));
    packets
}

#[test]
fn a_pdc_s_psns_are_accounted_exactly() {
    let report = exchange(&accounted_pdc());
    let p = pdc(&report, 7);
    let got = |k: &str| p[k].as_u64();
    assert_eq!(
        (p["mode"].as_str(), p["syn_seen"].as_bool(), p["start_psn"].as_u64(), p["dpdcid"].as_u64()),
        (Some("RUD"), Some(true), Some(100), Some(9))
    );
    assert_eq!(
        [
            got("requests"),
            got("out_of_order"),
            got("retransmitted"),
            got("lost_before_tap"),
            got("capture_missed"),
            got("missing")
        ],
        [Some(7), Some(1), Some(1), Some(1), Some(1), Some(2)]
    );
    assert_eq!((got("ack_psns_p50"), got("ack_psns_max")), (Some(7), Some(7)), "100..=105 and 107");
    assert_eq!(
        (got("psn_first"), got("psn_last"), p["cc"].as_bool()),
        (Some(100), Some(109), Some(true)),
        "ACK_CC carries CC state"
    );
    let loss = finding(&report, "UET_LOSS");
    assert_eq!(loss["evidence"]["count"], 3);
    assert!(loss["message"].as_str().is_some_and(|m| m.contains("PDC 7: 2 missing, 1 lost before the tap")), "{loss}");
}

#[test]
fn each_frame_says_where_its_psn_stood_and_annotate_writes_it() {
    let mut packets = accounted_pdc();
    packets.push((true, 0, uet::request(RUD, 0, 0, 101, 7, 9)));
    let capture = exchange_capture(&packets);
    let path = capture.write();
    let analysis = ["frame.number", "rocescope.analysis.seq_class", "rocescope.analysis.lost_before_tap"];
    assert_eq!(
        fields(&path, "uet", &analysis),
        [
            "1\tfirst\t",
            "2\tin_order\t",
            "3\tin_order\t",
            "4\tlate_arrival\t",
            "5\tretransmission\t1",
            "6\tin_order\t",
            "7\tin_order\t",
            "8\t\t",
            "9\tretransmission\t",
        ]
    );
    let report = capture.analyze(&[]);
    let p = pdc(&report, 7);
    assert_eq!(
        [p["retransmitted"].as_u64(), p["out_of_order"].as_u64(), p["lost_before_tap"].as_u64()],
        [Some(2), Some(1), Some(1)],
        "the frames number the PDC's counts"
    );
    if !common::tshark_available() {
        return;
    }
    let out = path.with_extension("pcapng");
    common::run_ok(&["annotate", path.to_str().expect("UTF-8"), "-o", out.to_str().expect("UTF-8")]);
    let commented = |field: &str| {
        let filter = format!("frame.comment contains \"{field}\"");
        let out = std::process::Command::new("tshark")
            .arg("-r")
            .arg(&out)
            .args(["-Y", &filter, "-T", "fields", "-e", "frame.number"])
            .output()
            .expect("tshark runs");
        String::from_utf8_lossy(&out.stdout).split_whitespace().map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(commented("rocescope.analysis.lost_before_tap"), ["5"]);
    assert_eq!(commented("rocescope.analysis.retransmission"), ["5", "9"]);
    assert_eq!(commented("rocescope.analysis.late_arrival"), ["4"]);
    // and the Wireshark plugin reads them as the fields themselves
    let dir = tempfile::tempdir().expect("temp dir");
    let plugin = common::wireshark_plugin(dir.path());
    let shown = std::process::Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", plugin.display()))
        .arg("-r")
        .arg(&out)
        .args(["-Y", "rocescope.analysis.lost_before_tap", "-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark runs");
    assert_eq!(String::from_utf8_lossy(&shown.stdout).split_whitespace().collect::<Vec<_>>(), ["5"]);
}

#[test]
fn ordered_pdcs_nack_codes_pdc_errors_and_ecn_echoes() {
    use uet::{ROD, SYN};
    let rod = |psn: u32, ecn: u8| {
        (true, ecn, uet::request(ROD, 0, if psn == 200 { SYN } else { 0 }, psn, 11, if psn == 200 { 0 } else { 12 }))
    };
    let packets = vec![
        rod(200, 2),
        rod(202, 3),
        rod(201, 2),
        (false, 0, uet::nack(0, 0x0D, 201, (12, 11), 0)),
        (false, 0, uet::ack(0, 0, 202, 12, 11)),
        // another PDC the target does not know
        (true, 2, uet::request(RUD, 0, 0, 5, 21, 22)),
        (false, 0, uet::nack(0, 0x0E, 5, (22, 21), 0)),
    ];
    let report = exchange(&packets);
    let ordered = pdc(&report, 11);
    assert_eq!(
        (ordered["mode"].as_str(), ordered["out_of_order"].as_u64(), ordered["ecn_echo_agrees"].as_bool()),
        (Some("ROD"), Some(1), Some(false))
    );
    assert_eq!(ordered["nacks"]["ROD_OOO"], 1);
    assert_eq!(finding(&report, "UET_ROD_OUT_OF_ORDER")["evidence"]["count"], 1);
    assert_eq!(finding(&report, "UET_ECN_ECHO_MISMATCH")["evidence"]["count"], 1);
    let nacks = finding(&report, "UET_NACKS");
    assert_eq!(nacks["evidence"]["count"], 2);
    assert!(
        nacks["message"].as_str().is_some_and(|m| m.contains("ROD_OOO 1") && m.contains("INV_DPDCID 1")),
        "{nacks}"
    );
    let errors = finding(&report, "UET_PDC_ERRORS");
    assert!(errors["message"].as_str().is_some_and(|m| m.contains("PDC 21: INV_DPDCID 1")), "{errors}");
}

#[test]
fn rudi_requests_pair_with_their_responses_and_the_thread_count_changes_nothing() {
    use uet::{RUDI_REQ, RUDI_RESP};
    let packets = vec![
        (true, 2, uet::unreliable(RUDI_REQ, 0, 0, Some(1))),
        (true, 2, uet::unreliable(RUDI_REQ, 0, 0, Some(2))),
        (false, 0, uet::unreliable(RUDI_RESP, 0, 0, Some(1))),
    ];
    let report = exchange(&packets);
    let rudi = &report["uet"]["pdcs"][0];
    assert_eq!(
        (rudi["mode"].as_str(), rudi["requests"].as_u64(), rudi["unanswered"].as_u64()),
        (Some("RUDI"), Some(2), Some(1))
    );
    assert_eq!((rudi["initiator"].as_str(), rudi["spdcid"].is_null()), (Some("10.0.1.1"), true));
    assert!(codes(&report).is_empty(), "no finding from an unanswered RUDI request");
    let one = analyze_file(&sample(), &["--threads", "1"]);
    let two = analyze_file(&sample(), &["--threads", "2"]);
    assert_eq!(one["uet"], two["uet"]);
    assert_eq!(one["uet"]["pdcs"].as_array().map(Vec::len), Some(4));
}

/// samples/uet_sprayed.pcap and uet_trimmed.pcap (src/generate/uet.rs, `sprayed`).
fn sprayed(trimmed: bool) -> Value {
    let name = if trimmed { "samples/uet_trimmed.pcap" } else { "samples/uet_sprayed.pcap" };
    analyze_file(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name), &[])
}

#[test]
fn a_sprayed_transfer_is_reordering_not_loss_and_trimming_counts_exactly() {
    let healthy = sprayed(false);
    let p = pdc(&healthy, 7);
    let got = |p: &Value, k: &str| p[k].as_u64();
    assert_eq!(
        [
            got(p, "requests"),
            got(p, "out_of_order"),
            got(p, "retransmitted"),
            got(p, "missing"),
            got(p, "capture_missed"),
            got(p, "acks")
        ],
        [Some(300), Some(100), Some(0), Some(0), Some(0), Some(100)]
    );
    assert_eq!((p["mode"].as_str(), got(p, "ack_psns_p50"), got(p, "ack_psns_max")), (Some("RUD"), Some(3), Some(3)));
    assert!(codes(&healthy).is_empty(), "{:?}", codes(&healthy));
    let trimmed = sprayed(true);
    let p = pdc(&trimmed, 7);
    assert_eq!(
        [got(p, "requests"), got(p, "retransmitted"), got(p, "lost_before_tap"), got(p, "trimmed"), got(p, "missing")],
        [Some(302), Some(2), Some(0), Some(2), Some(0)]
    );
    assert_eq!(p["nacks"]["TRIMMED"], 2);
    assert_eq!(codes(&trimmed), ["UET_TRIMMING"]);
}

#[test]
fn psns_and_opcodes_export_as_wireshark_names_them() {
    let path = sample();
    assert_eq!(
        fields(&path, "uet.pds.type == 2", &["uet.pds.psn", "uet.ses.std.opcode"]),
        ["1000\t1", "1001\t5", "1003\t5", "1002\t5", "1001\t5", "1004\t3", "1006\t1"]
    );
}

#[cfg(feature = "tables")]
#[test]
fn out_writes_the_pdc_table_and_the_page_shows_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let file = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/uet_trimmed.pcap");
    common::run_ok(&["analyze", "-q", "--out", out.to_str().expect("UTF-8"), file.to_str().expect("UTF-8")]);
    let csv = std::fs::read_to_string(out.join("uet_pdcs.csv")).expect("uet_pdcs.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let row: Vec<&str> = lines.next().expect("the PDC").split(',').collect();
    assert!(lines.next().is_none(), "one PDC");
    let cell = |name: &str| header.iter().position(|h| *h == name).and_then(|i| row.get(i)).copied();
    let wanted = [
        ("spdcid", "7"),
        ("dpdcid", "9"),
        ("mode", "RUD"),
        ("requests", "302"),
        ("psn_first", "1000"),
        ("psn_last", "1299"),
        ("retransmitted", "2"),
        ("nacks", "TRIMMED=2"),
        ("missing", "0"),
    ];
    for (name, value) in wanted {
        assert_eq!(cell(name), Some(value), "{name}");
    }
    let page = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert!(page.contains("Ultra Ethernet Transport") && page.contains("TRIMMED 2"));
    // the PDC's sequence graph: its figure holds a chart, not the "nothing to draw" note
    let graph = page
        .split("id=\"chart-pdc-0\"")
        .nth(1)
        .and_then(|rest| rest.split("</figure>").next())
        .expect("the PDC's graph");
    assert!(graph.contains("<svg") && graph.contains("PSN over time"), "{graph}");
}

/// Each of `parts` (packets as [`exchange`] takes them) written and analysed on its own,
/// keeping its first `kept` frames: the merged report, or merge's error; and the report of one
/// run over the parts' files.
fn merged_apart(parts: &[Vec<(bool, u8, Vec<u8>)>], kept: &str) -> (Result<Value, String>, Value) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut states, mut files) = (Vec::new(), Vec::new());
    let mut before = 0;
    for (n, packets) in parts.iter().enumerate() {
        let path = dir.path().join(format!("part{n}.pcap"));
        std::fs::copy(exchange_capture_from(before, packets).write(), &path).expect("copy");
        before += packets.len();
        let state = dir.path().join(format!("part{n}.state"));
        let text = |p: &std::path::Path| p.to_str().expect("UTF-8").to_string();
        common::run_ok(&["analyze", "-q", &text(&path), "--state", &text(&state), "--keep-frames", kept]);
        states.push(text(&state));
        files.push(text(&path));
    }
    let mut args = vec!["merge", "--json"];
    args.extend(states.iter().map(String::as_str));
    let out = common::run(&args);
    let merged = match out.status.code() {
        Some(0) => Ok(serde_json::from_slice(&out.stdout).expect("a JSON report")),
        _ => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    };
    let mut args = vec!["analyze", "--json"];
    args.extend(files.iter().map(String::as_str));
    (merged, serde_json::from_str(&common::run_ok(&args)).expect("a JSON report"))
}

/// `count` requests of PDC `id` from PSN 1000 (SYN on the first, RETX on `retx_at`, the 6th
/// never sent), the target's ACK after every 64th.
fn pdc_traffic(id: u16, count: u32, retx_at: u32) -> Vec<(bool, u8, Vec<u8>)> {
    use uet::{RETX, SYN};
    let mut packets = Vec::new();
    for i in (0..count).filter(|i| *i != 5) {
        let (flags, dpdcid) = match i {
            0 => (SYN | AR, 0),
            _ if i == retx_at => (RETX, 9),
            _ => (0, 9),
        };
        packets.push((true, 0, uet::request(RUD, 0, flags, 1000 + i, id, dpdcid)));
        if i % 64 == 63 {
            packets.push((false, 0, uet::ack_cc(0, 1000 + i, (9, id), 0, 0)));
        }
    }
    packets
}

#[test]
fn parts_merge_exactly_where_their_pdcs_begin_within_them_and_are_refused_where_one_runs_across() {
    // parts longer than the frames held for the doubled-mirror decision (a UET capture has no
    // RoCE frame to decide it sooner), keeping a few more
    let kept = "66000";
    // the second part: a PDC beginning within its kept frames, another after them
    let mut second = pdc_traffic(8, 66_500, 30);
    second.extend(pdc_traffic(10, 200, 50));
    let (merged, whole) = merged_apart(&[pdc_traffic(7, 100, 12), second], kept);
    assert_eq!(merged.expect("merged"), whole, "one run's report");
    for id in [8, 10] {
        assert_eq!([&pdc(&whole, id)["lost_before_tap"], &pdc(&whole, id)["capture_missed"]], [1, 1]);
    }
    // one PDC across the cut: the second part cannot know where it stood
    let mut first = pdc_traffic(7, 67_000, 12);
    let second = first.split_off(300);
    let (merged, _) = merged_apart(&[first, second], kept);
    let message = merged.expect_err("refused");
    assert!(message.contains("a UET PDC"), "{message}");
}

/// [`accounted_pdc`]'s packets, each seen twice: a second copy `apart_ns` after the first, as
/// `second` makes it from the first's bytes; the report, and the text report's UET line.
fn seen_twice(apart_ns: i64, second: impl Fn(&mut Vec<u8>)) -> (Value, String) {
    let once = exchange_capture(&accounted_pdc());
    let mut twice = Capture::new();
    for (ts, bytes) in &once.frames {
        let mut copy = bytes.clone();
        second(&mut copy);
        twice.add_bytes(*ts, bytes.clone());
        twice.add_bytes(ts + apart_ns, copy);
    }
    let text = common::run_ok(&["analyze", twice.write().to_str().expect("UTF-8")]);
    let uet_line = text.lines().find(|l| l.trim_start().starts_with("UET:")).unwrap_or_default().trim().to_string();
    (twice.analyze(&[]), uet_line)
}

#[test]
fn copies_from_a_second_tap_or_a_doubled_mirror_count_once() {
    let once = exchange(&accounted_pdc());
    let pdc_keys = |r: &Value| {
        let mut p = pdc(r, 7).clone();
        p.as_object_mut().expect("a PDC").retain(|k, _| !k.ends_with("_frame"));
        p
    };
    // a routed hop's copy: its source MAC rewritten, 500 ns later
    let (second_tap, _) = seen_twice(500, |frame| frame[6..12].copy_from_slice(&[2, 0, 0, 0, 0x77, 1]));
    // a doubled mirror's: byte for byte, 100 ns later
    let (doubled, uet_line) = seen_twice(100, |_| {});
    assert!(uet_line.starts_with("UET: 16 packets (8 mirror duplicates); CRC32C: 16 ok"), "{uet_line}");
    for (report, what) in [(&second_tap, "a second tap"), (&doubled, "a doubled mirror")] {
        assert_eq!(pdc_keys(report), pdc_keys(&once), "{what}: the PDC as seen once");
        assert_eq!(report["uet"]["mirror_duplicates"], 8, "{what}");
        assert_eq!(report["uet"]["packets"], 16, "{what}");
        assert_eq!(report["totals"]["mirror_duplicates"], 8, "{what}");
    }
    assert_eq!(doubled["capture"]["doubled_mirror"]["doubled"], true);

    assert_eq!(second_tap["capture"]["doubled_mirror"]["doubled"], false);
    assert_eq!(once["uet"]["mirror_duplicates"], 0);
}

/// A perfect RUD sequence whose writer puts no CRC32C trailer: the parser reads each packet's
/// last payload bytes as one, alike in every packet, and no reading of the CRC matches them.
/// Their content signatures are computed from their bytes, so none is a copy of another: no
/// doubled mirror, no duplicate left out, no PSN missing.
#[test]
fn packets_whose_unmatched_trailers_are_alike_are_not_copies() {
    use uet::SYN;
    let (l2, ips) = hosts();
    let mut c = Capture::new();
    for psn in 1000..2000u32 {
        let (flags, dpdcid) = if psn == 1000 { (SYN | AR, 0) } else { (AR, 9) };
        let body = [uet::request(RUD, 3, flags, psn, 7, dpdcid), uet::standard(0x01, 1, 42, 64), vec![0x5A; 64]];
        let frame = uet::udp_frame(&l2, ips, (0xD000, rocescope_parsers::uet::UDP_PORT), 2, &body.concat(), None);
        c.add_bytes(T0 + i64::from(psn) * 1_000, frame);
    }
    let report = c.analyze(&[]);
    assert_eq!(report["uet"]["crc"]["readings"]["no_variant"], 1000, "no reading matches the trailers");
    assert_eq!(report["uet"]["mirror_duplicates"], 0);
    assert_eq!(report["totals"]["mirror_duplicates"], 0);
    assert_eq!(report["capture"]["doubled_mirror"]["doubled"], false);
    let p = pdc(&report, 7);
    assert_eq!((p["requests"].as_u64(), p["missing"].as_u64()), (Some(1000), Some(0)));
    assert!(!codes(&report).contains(&"UET_LOSS"), "{:?}", codes(&report));
}

/// PDC `id`'s `count` requests from PSN 100 (the first with SYN), CE-marked where `marked`
/// says, each acknowledged by an ACK of its own, with M where `echoed` says.
fn acked_one_by_one(
    id: u16,
    count: u32,
    marked: impl Fn(u32) -> bool,
    echoed: impl Fn(u32) -> bool,
) -> Vec<(bool, u8, Vec<u8>)> {
    use uet::{M, SYN};
    let mut packets = Vec::new();
    for psn in 100..100 + count {
        let (flags, dpdcid) = if psn == 100 { (SYN | AR, 0) } else { (0, 9) };
        packets.push((true, if marked(psn) { 3 } else { 2 }, uet::request(RUD, 0, flags, psn, id, dpdcid)));
        packets.push((false, 0, uet::ack(0, if echoed(psn) { M } else { 0 }, psn, 9, id)));
    }
    packets
}

/// A PDC's ECN echo counts: (ACKs checked, ACKs unchecked, marks not echoed, echoes without a
/// mark), and whether they agree.
fn echo_counts(p: &Value) -> ([Option<u64>; 4], Option<bool>) {
    let got = |k: &str| p[k].as_u64();
    (
        [
            got("ecn_acks_checked"),
            got("ecn_acks_unchecked"),
            got("ecn_marks_not_echoed"),
            got("ecn_echoes_without_mark"),
        ],
        p["ecn_echo_agrees"].as_bool(),
    )
}

#[test]
fn twenty_marks_and_fifteen_echoes_leave_five_marks_not_echoed() {
    // every even PSN of 100..=139 CE-marked (20); the ACKs of the first 15 of them echo it
    let marked = |psn: u32| psn.is_multiple_of(2);
    let packets = acked_one_by_one(7, 40, marked, |psn| marked(psn) && psn < 130);
    let capture = exchange_capture(&packets);
    let report = capture.analyze(&[]);
    let p = pdc(&report, 7);
    assert_eq!((p["ecn_ce"].as_u64(), p["ecn_echoed"].as_u64()), (Some(20), Some(15)));
    assert_eq!(echo_counts(p), ([Some(40), Some(0), Some(5), Some(0)], Some(false)), "130, 132 … 138 not echoed");
    assert_eq!(
        (report["uet"]["ecn_marks_not_echoed"].as_u64(), report["uet"]["ecn_echoes_without_mark"].as_u64()),
        (Some(5), Some(0))
    );
    let mismatch = finding(&report, "UET_ECN_ECHO_MISMATCH");
    assert_eq!(mismatch["evidence"]["count"], 5);
    assert!(
        mismatch["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("5 disagreements between ECN marks and their echoes")
                && m.contains("PDC 7: 5 ACKs without M naming a CE-marked packet, 0 ACKs with M")),
        "{mismatch}"
    );
    assert_eq!(capture.analyze(&["--threads", "1"])["uet"], capture.analyze(&["--threads", "2"])["uet"]);
    let text = common::run_ok(&["analyze", capture.write().to_str().expect("UTF-8")]);
    assert!(text.contains(", ECN: 5 marks not echoed, 0 echoes without a mark"), "{text}");
}

#[test]
fn echoes_without_a_mark_count_ack_by_ack_and_a_duplicate_ack_counts_neither_way() {
    use uet::M;
    // 105 alone CE-marked; the ACKs of 102, 103, 104 (unmarked) and 105 carry M
    let mut packets = acked_one_by_one(7, 10, |psn| psn == 105, |psn| (102..=105).contains(&psn));
    // the last ACK again, with M: it acknowledges nothing new
    packets.push((false, 0, uet::ack(0, M, 109, 9, 7)));
    let report = exchange(&packets);
    let p = pdc(&report, 7);
    assert_eq!((p["ecn_ce"].as_u64(), p["ecn_echoed"].as_u64()), (Some(1), Some(5)));
    assert_eq!(echo_counts(p), ([Some(10), Some(0), Some(0), Some(3)], Some(false)));
    let mismatch = finding(&report, "UET_ECN_ECHO_MISMATCH");
    assert_eq!(mismatch["evidence"]["count"], 3);
    assert!(
        mismatch["message"].as_str().is_some_and(
            |m| m.contains("0 ACKs without M naming a CE-marked packet, 3 ACKs with M naming an unmarked one")
        ),
        "{mismatch}"
    );
}

#[test]
fn coalesced_acks_echo_the_mark_of_the_packet_they_name_and_a_resend_s_marking_is_unknown() {
    use uet::{M, RETX, SYN};
    let req = |psn: u32, ecn: u8, flags: u8| {
        (
            true,
            ecn,
            uet::request(RUD, 0, flags | if psn == 100 { SYN | AR } else { 0 }, psn, 7, if psn == 100 { 0 } else { 9 }),
        )
    };
    let mut packets = Vec::new();
    // coalesced ACKs of four PSNs each, each naming its last packet: 101 CE-marked, not the
    // packet its ACK names (no M, and none owed); 107 CE-marked and named, with M
    for psn in 100..108 {
        packets.push(req(psn, if psn == 101 || psn == 107 { 3 } else { 2 }, 0));
        if psn % 4 == 3 {
            packets.push((false, 0, uet::ack(0, if psn == 107 { M } else { 0 }, psn, 9, 7)));
        }
    }
    // 109 CE-marked, lost past the tap and resent unmarked: the ACK naming it checks nothing;
    // the next names 111, unmarked, without M
    packets.extend([req(108, 2, 0), req(109, 3, 0), req(109, 2, RETX | AR)]);
    packets.push((false, 0, uet::ack(0, 0, 109, 9, 7)));
    packets.extend([req(110, 2, 0), req(111, 2, 0)]);
    packets.push((false, 0, uet::ack(0, 0, 111, 9, 7)));
    let report = exchange(&packets);
    let p = pdc(&report, 7);
    assert_eq!(
        (p["ecn_ce"].as_u64(), p["ecn_echoed"].as_u64(), p["retransmitted"].as_u64()),
        (Some(3), Some(1), Some(1))
    );
    assert_eq!(echo_counts(p), ([Some(3), Some(1), Some(0), Some(0)], Some(true)));
    assert_eq!(p["ack_psns_max"].as_u64(), Some(4));
    assert!(codes(&report).is_empty(), "{:?}", codes(&report));
}

#[test]
fn sack_covered_marked_psns_are_compared_with_the_ack_that_sacks_them() {
    use uet::{M, SYN};
    // 100..=107, 102 and 105 CE-marked
    let mut packets: Vec<(bool, u8, Vec<u8>)> = (100..108u32)
        .map(|psn| {
            let (flags, dpdcid) = if psn == 100 { (SYN | AR, 0) } else { (0, 9) };
            (true, if psn == 102 || psn == 105 { 3 } else { 2 }, uet::request(RUD, 0, flags, psn, 7, dpdcid))
        })
        .collect();
    packets.extend([
        // 100 and 101 cumulatively, 103..=107 by SACK, naming 105 with no M: not echoed
        (false, 0, uet::acking(uet::ack_cc(0, 101, (9, 7), 2, 0b11111), 4)),
        // 102, the rest SACKed before, named with M: echoed
        (false, 0, uet::acking(uet::ack_cc(M, 107, (9, 7), 1, 0), -5)),
        // the first again, with M: nothing new
        (false, 0, uet::ack_cc(M, 101, (9, 7), 2, 0b11111)),
    ]);
    let report = exchange(&packets);
    let p = pdc(&report, 7);
    assert_eq!(echo_counts(p), ([Some(2), Some(0), Some(1), Some(0)], Some(false)));
    assert_eq!((p["ack_psns_p50"].as_u64(), p["ack_psns_max"].as_u64()), (Some(1), Some(7)), "7, 1, then 0");
    assert_eq!(finding(&report, "UET_ECN_ECHO_MISMATCH")["evidence"]["count"], 1);
}

#[test]
fn an_ack_covering_only_psns_the_capture_missed_is_unchecked() {
    use uet::{M, SYN};
    let req = |psn: u32, id: u16, first: bool| {
        (true, 2, uet::request(RUD, 0, if first { SYN | AR } else { 0 }, psn, id, if first { 0 } else { 9 }))
    };
    let packets = vec![
        req(100, 7, true),
        req(101, 7, false),
        req(102, 7, false),
        req(103, 7, false),
        (false, 0, uet::ack(0, 0, 103, 9, 7)),
        // 104 and 105 never reach the tap; the target SACKs them, naming 105, with M
        (false, 0, uet::acking(uet::ack_cc(M, 103, (9, 7), 1, 0b11), 2)),
        req(106, 7, false),
        (false, 0, uet::ack(0, 0, 106, 9, 7)),
        // a capture that begins in the middle of PDC 21: its first ACK, with M, before any request
        (false, 0, uet::ack(0, M, 500, 9, 21)),
        req(501, 21, false),
        req(502, 21, false),
        (false, 0, uet::ack(0, 0, 502, 9, 21)),
    ];
    let report = exchange(&packets);
    let p = pdc(&report, 7);
    assert_eq!(echo_counts(p), ([Some(2), Some(1), Some(0), Some(0)], Some(true)));
    assert_eq!(p["capture_missed"], 2);
    assert_eq!(echo_counts(pdc(&report, 21)), ([Some(1), Some(1), Some(0), Some(0)], Some(true)));
    assert!(!codes(&report).contains(&"UET_ECN_ECHO_MISMATCH"), "{:?}", codes(&report));
}

#[test]
fn parts_merged_count_the_echoes_as_one_run() {
    let marked = |psn: u32| psn.is_multiple_of(3);
    let first = acked_one_by_one(7, 30, marked, |psn| marked(psn) && psn != 102);
    let second = acked_one_by_one(8, 30, |_| false, |psn| psn == 110);
    let (merged, whole) = merged_apart(&[first, second], "66000");
    let merged = merged.expect("merged");
    assert_eq!(merged, whole, "one run's report");
    assert_eq!(echo_counts(pdc(&whole, 7)).0, [Some(30), Some(0), Some(1), Some(0)]);
    assert_eq!(echo_counts(pdc(&whole, 8)).0, [Some(30), Some(0), Some(0), Some(1)]);
    assert_eq!(
        (whole["uet"]["ecn_marks_not_echoed"].as_u64(), whole["uet"]["ecn_echoes_without_mark"].as_u64()),
        (Some(1), Some(1))
    );
}
