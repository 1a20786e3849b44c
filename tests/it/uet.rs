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
    assert_eq!(info[0], "166 RUD_REQ PSN=1000 Start_PSN=1000 SPDCID=7 [AR] [SYN] | UET_WRITE");
    assert_eq!(info[1], "70 ACK CACK_PSN=1000 ACK_PSN=1000 SPDCID=9 DPDCID=7 | UET_DEFAULT_RESPONSE RC_OK");
    assert_eq!(info[5], "62 NACK TRIMMED NACK_PSN=1001 SPDCID=9 DPDCID=7");
    assert_eq!(info[6], "78 ACK_CC CACK_PSN=1000 ACK_PSN=1000 SACK_BASE=1002 SPDCID=9 DPDCID=7 [M]");
    assert_eq!(info[7], "1126 RUD_REQ PSN=1001 SPDCID=7 DPDCID=9 [RETX] [AR] | UET_SEND");
    assert_eq!(info[11], "62 CONTROL CLOSE PSN=1005 SPDCID=7 DPDCID=9 [AR]");
    assert_eq!(info[15], "202 RUDI_REQ PKT_ID=77 | UET_WRITE");
    assert_eq!(info[19], "118 TSS SDI=258 (encrypted)");
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
    assert_eq!(codes(&report), ["UET_CRC_BAD"], "and no NO_ROCE: the capture has UET");
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
    assert_eq!(
        fields(&path, "rocescope.uet.crc.status == \"no_variant\"", &["frame.number", "uet.pds.psn"]),
        ["21\t1006"]
    );
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
        let mut frame =
            uet::udp_frame(&l2, ips, rocescope_parsers::uet::UDP_PORT, 2, &write_request(psn), Some(Variant::Le));
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
        uet::udp_frame(&l2, ips, rocescope_parsers::uet::UDP_PORT, 2, &write_request(1), Some(Variant::Be)),
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
            rocescope_parsers::uet::REFERENCE_PROVIDER_PORT,
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
    let whole = uet::udp_frame(&l2, ips, rocescope_parsers::uet::UDP_PORT, 2, &write_request(9), Some(Variant::Le));
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
