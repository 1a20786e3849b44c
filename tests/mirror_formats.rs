//! What real switches' mirror sessions put on the wire (`../shared/mirror-formats.md`),
//! decoded to the inner RoCE packet and analysed as the plain packet would be.

mod common;

use serde_json::json;

fn sample(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

#[test]
fn truncated_mirror_copies_are_analysed_and_counted() {
    let path = sample("mirror_truncated.pcap");
    let r = common::capture::analyze_file(&path, &[]);
    assert_eq!((&r["capture"]["truncated_copies"], &r["capture"]["snaplen_cut"]), (&json!(13), &json!(0)));
    assert_eq!((&r["icrc"]["unverifiable"], &r["icrc"]["ok"]), (&json!(13), &json!(4)));
    let f = common::capture::flow(&r, 1, 0x000922);
    let sequence = (&f["gaps"], &f["missing_psns"], &f["retransmitted"], &f["messages"]);
    assert_eq!(sequence, (&json!(1), &json!(1), &json!(2), &json!(3)));
    // a header-only copy's payload length is the UDP length's, not the captured bytes'
    let frames = common::jsonl(&path, &[]);
    assert_eq!((&frames[0]["payload_len"], &frames[0]["encap"]), (&json!(1024), &json!(["erspan1"])));
    let finding = r["findings"].as_array().unwrap().iter().find(|f| f["code"] == json!("TRUNCATED_FRAMES")).unwrap();
    assert!(finding["message"].as_str().unwrap().contains("13 of them mirror copies cut with no mark"));
}
