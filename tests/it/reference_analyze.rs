//! `analyze --json` of every reference capture equals its answer key on every key the key
//! defines: totals, ICRC, opcodes, ECN, DSCP, CNPs, flows, PFC and policy.

use crate::common;

use serde_json::{Value, json};

const FLOW_FIELDS: &[&str] = &[
    "version",
    "packets",
    "sequenced",
    "ce",
    "cnps",
    "gaps",
    "missing_psns",
    "retransmitted",
    "retransmit_episodes",
    "mirror_duplicates",
    "naks_psn_seq_err",
    "naks_other",
    "rnr_naks",
    "acks",
    "atomic_acks",
];

const PFC_FIELDS: &[&str] = &["xoff", "xon", "storm", "longest_pause_ns"];

const POLICY_FIELDS: &[&str] =
    &["expected_data_dscp", "expected_cnp_dscp", "data_dscp_violations", "cnp_dscp_violations", "not_ect_data"];

fn analyze(path: &std::path::Path) -> Value {
    let out = common::run_ok(&["analyze", "--json", path.to_str().expect("UTF-8")]);
    serde_json::from_str(&out).expect("a JSON report")
}

fn check(name: &str, truth: &Value, got: &Value) {
    for key in ["totals", "icrc", "ecn"] {
        for (field, expected) in truth[key].as_object().expect("an object") {
            assert_eq!(&got[key][field], expected, "{name}: {key}.{field}");
        }
    }
    for key in ["opcodes", "dscp", "cnps", "cnp_dscp"] {
        assert_eq!(&got[key], &truth[key], "{name}: {key}");
    }
    if let Some(pcp) = truth.get("cnp_vlan_pcp") {
        assert_eq!(&got["cnp_vlan_pcp"], pcp, "{name}: cnp_vlan_pcp");
    }
    let got_flows = got["flows"].as_array().expect("flows");
    let truth_flows = truth["flows"].as_array().expect("flows");
    assert_eq!(got_flows.len(), truth_flows.len(), "{name}: number of flows");
    for (g, t) in got_flows.iter().zip(truth_flows) {
        for key in ["src_ip", "dst_ip", "dst_qp"] {
            assert_eq!(g[key], t[key], "{name}: flows in order of first appearance, {key}");
        }
        for &field in FLOW_FIELDS {
            if field == "sequenced" && g["transport"] == json!("UD") {
                // rocescope sequences no UD datagram (docs/analysis.md, "PSN sequence"); the
                // keys count them, and find no loss on them either (checked with the rest)
                assert_eq!(g[field], json!(0), "{name}: a UD flow is not sequenced");
                continue;
            }
            assert_eq!(
                g[field], t[field],
                "{name}: flow {} → {} QP {}: {field}",
                t["src_ip"], t["dst_ip"], t["dst_qp"]
            );
        }
    }
    let got_pfc = got["pfc"].as_array().expect("pfc");
    let truth_pfc = truth["pfc"].as_array().expect("pfc");
    assert_eq!(got_pfc.len(), truth_pfc.len(), "{name}: PFC entries");
    for t in truth_pfc {
        let g = got_pfc
            .iter()
            .find(|g| g["src_mac"] == t["src_mac"] && g["priority"] == t["priority"])
            .unwrap_or_else(|| panic!("{name}: no PFC entry for {} priority {}", t["src_mac"], t["priority"]));
        for &field in PFC_FIELDS {
            assert_eq!(g[field], t[field], "{name}: PFC {} priority {}: {field}", t["src_mac"], t["priority"]);
        }
    }
    for &field in POLICY_FIELDS {
        assert_eq!(got["policy"][field], truth["policy"][field], "{name}: policy.{field}");
    }
}

#[test]
fn every_reference_capture_analyses_like_its_answer_key() {
    let Some(dir) = common::shared_subdir("reference-captures") else { return };
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("readable folder") {
        let path = entry.expect("entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".truth.json")) else {
            continue;
        };
        let truth: Value = serde_json::from_slice(&std::fs::read(&path).expect("key")).expect("key is JSON");
        let got = analyze(&dir.join(truth["file"].as_str().expect("file")));
        check(name, &truth, &got);
        checked += 1;
    }
    assert!(checked >= 17, "only {checked} answer keys");
}

/// The per-frame analysis fields of the keys (`seq_class`, `gap_missing`, `mirror_duplicate`)
/// as `packets --format jsonl` reports them.
#[test]
fn per_frame_sequence_classes_match_the_answer_keys() {
    let Some(dir) = common::shared_subdir("reference-captures") else { return };
    let mut frames = 0;
    for entry in std::fs::read_dir(&dir).expect("readable folder") {
        let path = entry.expect("entry").path();
        if !path.to_string_lossy().ends_with(".truth.json") {
            continue;
        }
        let truth: Value = serde_json::from_slice(&std::fs::read(&path).expect("key")).expect("key is JSON");
        let Some(packets) = truth.get("packets").and_then(Value::as_array) else { continue };
        let got = common::jsonl(&dir.join(truth["file"].as_str().expect("file")), &[]);
        for t in packets.iter().filter(|t| t["kind"] == json!("roce")) {
            let g = &got[t["frame"].as_u64().expect("frame") as usize - 1];
            if is_datagram(t) && g["mirror_duplicate"] == json!(false) {
                // not sequenced here; the key's class is one that tells of no loss
                let no_loss = [json!("first"), json!("in_order")];
                assert!(
                    no_loss.contains(&t["seq_class"]),
                    "{} frame {}: {}",
                    truth["file"],
                    t["frame"],
                    t["seq_class"]
                );
                assert_eq!(g["seq_class"], Value::Null, "{} frame {}: a UD datagram", truth["file"], t["frame"]);
                frames += 1;
                continue;
            }
            for field in ["seq_class", "gap_missing", "mirror_duplicate"] {
                assert_eq!(g[field], t[field], "{} frame {}: {field}", truth["file"], t["frame"]);
            }
            frames += 1;
        }
    }
    assert!(frames > 500);
}

/// Is the key's packet a UD datagram (opcodes 0x60 to 0x7F)?
fn is_datagram(packet: &Value) -> bool {
    let opcode = packet["opcode"].as_str().and_then(|o| u8::from_str_radix(o.trim_start_matches("0x"), 16).ok());
    opcode.is_some_and(|o| (0x60..=0x7F).contains(&o))
}
