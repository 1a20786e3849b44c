//! The real captures in `../shared/captures/real/` (hardware NIC and soft-RoCE) decode without
//! a malformed frame, with every ICRC ok, and agree with tshark's opcode, PSN and destination QP
//! for every frame (the tshark comparison is skipped where tshark is not installed).

mod common;

use serde_json::{Value, json};

/// (file, RoCE frames, total frames), from the captures' README.
const CAPTURES: &[(&str, usize, usize)] = &[
    ("hwnic_rc_send_imm.pcap", 105, 123),
    ("softroce_cm_write_read.pcap", 12, 12),
    ("softroce_cm_write_read_distinct_qpns.pcap", 12, 16),
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
