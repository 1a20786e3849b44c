//! The real captures in `../shared/captures/real/` (hardware NIC, soft-RoCE, native InfiniBand) decode without
//! a malformed frame, with every ICRC ok, and agree with tshark's opcode, PSN and destination QP
//! for every frame (the tshark comparison is skipped where tshark is not installed).

use crate::common;

use serde_json::{Value, json};

/// (file, RoCE frames, total frames), from the captures' README.
const CAPTURES: &[(&str, usize, usize)] = &[
    ("hwnic_rc_send_imm.pcap", 105, 123),
    ("softroce_cm_write_read.pcap", 12, 12),
    ("softroce_cm_write_read_distinct_qpns.pcap", 12, 16),
    ("native_ib_erf_cm_rc.pcap", 43, 43),
];

#[test]
fn real_captures_decode_cleanly() {
    let Some(dir) = common::shared_subdir("captures/real") else { return };
    for &(file, roce, total) in CAPTURES {
        let frames = common::jsonl(&dir.join(file), &[]);
        assert_eq!(frames.len(), total, "{file}: frames");
        let roce_frames: Vec<&Value> = frames.iter().filter(|f| f["kind"] == json!("roce")).collect();
        assert_eq!(roce_frames.len(), roce, "{file}: RoCE frames");
        assert!(frames.iter().all(|f| f["kind"] != json!("malformed")), "{file}: a malformed frame");
        for f in &roce_frames {
            assert_eq!(f["icrc"], json!("ok"), "{file} frame {}: ICRC", f["frame"]);
            // native InfiniBand packets carry a VCRC too, RoCE packets none
            let vcrc = if f["roce"] == json!(0) { json!("ok") } else { json!(null) };
            assert_eq!(f["vcrc"], vcrc, "{file} frame {}: VCRC", f["frame"]);
        }
    }
}

#[test]
fn cm_exchange_of_the_soft_roce_capture() {
    let Some(dir) = common::shared_subdir("captures/real") else { return };
    let frames = common::jsonl(&dir.join("softroce_cm_write_read_distinct_qpns.pcap"), &["--only", "cm"]);
    let messages: Vec<&Value> = frames.iter().map(|f| &f["cm"]["message"]).collect();
    assert_eq!(
        messages,
        [
            &json!("ConnectRequest"),
            &json!("ConnectReply"),
            &json!("ReadyToUse"),
            &json!("DisconnectRequest"),
            &json!("DisconnectReply")
        ]
    );
    let req = &frames[0]["cm"];
    assert_eq!(
        (&req["local_qpn"], &req["starting_psn"], &req["path_mtu"]),
        (&json!(0x17), &json!(0x89bb0e), &json!(1024))
    );
    assert_eq!(frames[1]["cm"]["local_qpn"], json!(0x11));
    assert_eq!(frames[1]["cm"]["remote_comm_id"], req["local_comm_id"]);
}

#[test]
fn real_captures_agree_with_tshark() {
    let Some(dir) = common::shared_subdir("captures/real") else { return };
    for &(file, _, _) in CAPTURES {
        let path = dir.join(file);
        let Some(expected) = common::tshark_bth_fields(&path) else {
            eprintln!("SKIPPED: tshark is not installed");
            return;
        };
        assert_eq!(common::rocescope_bth_fields(&path), expected, "{file}");
    }
}

fn analyze(path: &std::path::Path) -> Value {
    serde_json::from_str(&common::run_ok(&["analyze", "--json", path.to_str().expect("UTF-8")])).expect("JSON report")
}

fn flow<'a>(report: &'a Value, src: &str, dst_qp: u64) -> &'a Value {
    report["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .find(|f| f["src_ip"] == json!(src) && f["dst_qp"] == json!(dst_qp))
        .unwrap_or_else(|| panic!("no flow from {src} to QP {dst_qp}"))
}

#[test]
fn real_captures_pair_their_connections_and_show_no_loss() {
    let Some(dir) = common::shared_subdir("captures/real") else { return };
    // (file, active IP, QPN the active side sends to, passive IP, QPN the passive side sends to, pairing)
    let cases = [
        ("hwnic_rc_send_imm.pcap", "192.168.70.4", 0x48, "192.168.70.6", 0x45, "psn"),
        ("softroce_cm_write_read.pcap", "192.168.65.5", 0x11, "192.168.65.4", 0x11, "cm"),
        ("softroce_cm_write_read_distinct_qpns.pcap", "192.168.2.25", 0x11, "192.168.2.24", 0x17, "cm"),
        ("native_ib_erf_cm_rc.pcap", "LID 4", 0xfc0407, "LID 1", 0x870408, "cm"),
    ];
    for (file, a, a_to_p_qp, p, p_to_a_qp, method) in cases {
        let report = analyze(&dir.join(file));
        let forward = flow(&report, a, a_to_p_qp);
        let reverse = flow(&report, p, p_to_a_qp);
        assert_eq!(forward["peer"], reverse["id"], "{file}: pairing");
        assert_eq!(reverse["peer"], forward["id"], "{file}: pairing");
        assert_eq!(forward["pairing"], json!(method), "{file}: pairing method");
        assert_eq!(
            forward["src_qp"],
            json!(p_to_a_qp),
            "{file}: the forward flow's source QP is the reverse flow's destination"
        );
        assert_eq!(reverse["src_qp"], json!(a_to_p_qp), "{file}: source QP of the reverse flow");
        for f in report["flows"].as_array().expect("flows") {
            for counter in
                ["gaps", "missing_psns", "retransmitted", "naks_psn_seq_err", "naks_other", "rnr_naks", "icrc_bad"]
            {
                assert_eq!(f[counter], json!(0), "{file}: flow {}: {counter}", f["id"]);
            }
        }
        assert_eq!(report["retransmit_episodes"], json!([]), "{file}");
        let codes: Vec<&Value> = report["findings"].as_array().expect("findings").iter().map(|f| &f["code"]).collect();
        for absent in ["PSN_GAP", "RETRANSMISSION", "ICRC_BAD", "MALFORMED_FRAMES"] {
            assert!(!codes.contains(&&json!(absent)), "{file}: {absent} in {codes:?}");
        }
    }
}

#[test]
fn the_cm_exchange_gives_the_connection_parameters() {
    let Some(dir) = common::shared_subdir("captures/real") else { return };
    let report = analyze(&dir.join("softroce_cm_write_read_distinct_qpns.pcap"));
    let c = &report["connections"][0];
    assert_eq!(
        (&c["active_ip"], &c["active_qpn"], &c["passive_qpn"]),
        (&json!("192.168.2.25"), &json!(0x17), &json!(0x11))
    );
    assert_eq!((&c["active_start_psn"], &c["path_mtu"]), (&json!(0x89bb0e), &json!(1024)));
    assert!(c["disconnect_frame"].is_u64());
    // the 4096-byte READ at MTU 1024 is answered by four responses and no PSN is missing
    let forward = flow(&report, "192.168.2.25", 0x11);
    assert_eq!((&forward["read_requests"], &forward["pmtu"]), (&json!(1), &json!(1024)));
    let reverse = flow(&report, "192.168.2.24", 0x17);
    assert_eq!(reverse["messages"], json!(1), "the READ response is one message");
    assert_eq!(reverse["message_bytes"]["max"], json!(4096));
}
