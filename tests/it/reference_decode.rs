//! Every per-frame decode field of every reference capture's answer key
//! (`../shared/reference-captures/*.truth.json`, `packets` lists) must equal what
//! `rocescope packets --format jsonl` writes. The analysis fields of the key (`seq_class`,
//! `gap_missing`, `mirror_duplicate`) belong to `analyze` and are checked with it.

use crate::common;

use serde_json::{Value, json};

/// Fields compared one to one (the key and the JSON lines use the same name and encoding).
const SAME_FIELDS: &[&str] = &[
    "frame",
    "ts_ns",
    "len",
    "caplen",
    "kind",
    "roce",
    "src_mac",
    "dst_mac",
    "src_ip",
    "dst_ip",
    "ttl",
    "dscp",
    "ecn",
    "udp_sport",
    "opcode_name",
    "dst_qp",
    "psn",
    "ack_req",
    "se",
    "m",
    "pad",
    "pkey",
    "fecn",
    "becn",
    "tver",
    "src_qp",
    "qkey",
    "reth",
    "aeth",
    "imm",
    "ieth_rkey",
    "atomic",
    "atomic_ack",
    "payload_len",
    "icrc",
];

/// The key's `encap` string as rocescope's list of layers.
fn encap_list(truth: &str) -> Value {
    match truth {
        "none" => json!([]),
        layers => Value::Array(layers.split('+').map(|l| json!(l)).collect()),
    }
}

fn check_frame(file: &str, truth: &Value, got: &Value) {
    let frame = &truth["frame"];
    let ctx = |field: &str| format!("{file} frame {frame} field {field}");
    for &field in SAME_FIELDS {
        if let Some(expected) = truth.get(field) {
            assert_eq!(got.get(field), Some(expected), "{}", ctx(field));
        }
    }
    if let Some(op) = truth.get("opcode").and_then(Value::as_str) {
        let expected = u64::from_str_radix(op.trim_start_matches("0x"), 16).expect("hex opcode");
        assert_eq!(got["opcode"], json!(expected), "{}", ctx("opcode"));
    } else if truth.get("opcode").is_some() {
        assert_eq!(got["opcode"], Value::Null, "{}", ctx("opcode"));
    }
    if let Some(encap) = truth.get("encap").and_then(Value::as_str) {
        assert_eq!(got["encap"], encap_list(encap), "{}", ctx("encap"));
    }
    if let (Some(ids), Some(pcps)) =
        (truth.get("vlan").and_then(Value::as_array), truth.get("vlan_pcp").and_then(Value::as_array))
    {
        let got_ids: Vec<&Value> = got["vlan"].as_array().expect("vlan list").iter().map(|t| &t["id"]).collect();
        let got_pcps: Vec<&Value> = got["vlan"].as_array().expect("vlan list").iter().map(|t| &t["pcp"]).collect();
        assert_eq!(got_ids, ids.iter().collect::<Vec<_>>(), "{}", ctx("vlan"));
        assert_eq!(got_pcps, pcps.iter().collect::<Vec<_>>(), "{}", ctx("vlan_pcp"));
    }
    // The key records the ICRC bytes even where the capture cut them off; rocescope can only
    // report bytes it has, so the wire value is compared wherever it was captured.
    if let Some(wire) = truth.get("icrc_wire").filter(|_| got["icrc"] != json!("unverifiable")) {
        assert_eq!(&got["icrc_wire"], wire, "{}", ctx("icrc_wire"));
    }
    if let Some(pfc) = truth.get("pfc").filter(|v| !v.is_null()) {
        assert_eq!(got["pfc"]["class_enable"], pfc["enable_vector"], "{}", ctx("pfc.class_enable"));
        assert_eq!(got["pfc"]["quanta"], pfc["quanta"], "{}", ctx("pfc.quanta"));
        assert_eq!(got["src_mac"], pfc["src_mac"], "{}", ctx("pfc.src_mac"));
    }
}

fn bump(counts: &mut serde_json::Map<String, Value>, key: String) {
    let n = counts.get(&key).and_then(Value::as_u64).unwrap_or(0);
    counts.insert(key, json!(n + 1));
}

/// Counts that follow from decoding alone (the key's conventions 2, 3, 6: RoCE, non-RoCE and
/// malformed frames; ICRC, opcode, ECN and DSCP counts; CNPs and their DSCP).
fn check_totals(file: &str, truth: &Value, got: &[Value]) {
    let count = |pred: &dyn Fn(&Value) -> bool| json!(got.iter().filter(|f| pred(f)).count());
    let totals = &truth["totals"];
    let kind = |k: &'static str| move |f: &Value| f["kind"] == json!(k);
    assert_eq!(totals["roce_packets"], count(&kind("roce")), "{file}: roce_packets");
    assert_eq!(totals["roce_v1"], count(&|f| f["roce"] == json!(1)), "{file}: roce_v1");
    assert_eq!(totals["roce_v2"], count(&|f| f["roce"] == json!(2)), "{file}: roce_v2");
    assert_eq!(totals["malformed"], count(&kind("malformed")), "{file}: malformed");
    assert_eq!(totals["pfc_frames"], count(&kind("pfc")), "{file}: pfc_frames");
    assert_eq!(totals["pause_frames"], count(&kind("pause")), "{file}: pause_frames");
    assert_eq!(
        totals["non_roce"],
        count(&|f| f["kind"] != json!("roce") && f["kind"] != json!("malformed")),
        "{file}: non_roce"
    );
    for verdict in ["ok", "bad", "unverifiable"] {
        assert_eq!(truth["icrc"][verdict], count(&|f| f["icrc"] == json!(verdict)), "{file}: icrc.{verdict}");
    }
    let mut opcodes = serde_json::Map::new();
    let mut dscp = serde_json::Map::new();
    let mut cnp_dscp = serde_json::Map::new();
    let mut cnp_pcp = serde_json::Map::new();
    let mut ecn = [0u64; 4];
    for f in got.iter().filter(|f| f["kind"] == json!("roce")) {
        let op = f["opcode"].as_u64().expect("opcode");
        bump(&mut opcodes, format!("0x{op:02x}"));
        if f["roce"] == json!(2) {
            bump(&mut dscp, f["dscp"].to_string());
            ecn[f["ecn"].as_u64().expect("ecn") as usize] += 1;
            if op == 0x81 {
                bump(&mut cnp_dscp, f["dscp"].to_string());
            }
        }
        if let (0x81, Some(tag)) = (op, f["vlan"].get(0)) {
            bump(&mut cnp_pcp, tag["pcp"].to_string());
        }
    }
    if let Some(expected) = truth.get("cnp_vlan_pcp") {
        assert_eq!(expected, &Value::Object(cnp_pcp), "{file}: cnp_vlan_pcp");
    }
    assert_eq!(truth["opcodes"], Value::Object(opcodes), "{file}: opcodes");
    assert_eq!(truth["dscp"], Value::Object(dscp), "{file}: dscp");
    assert_eq!(truth["cnp_dscp"], Value::Object(cnp_dscp), "{file}: cnp_dscp");
    assert_eq!(truth["ecn"], json!({"not_ect": ecn[0], "ect1": ecn[1], "ect0": ecn[2], "ce": ecn[3]}), "{file}: ecn");
    assert_eq!(truth["cnps"], count(&|f| f["opcode"] == json!(0x81)), "{file}: cnps");
}

#[test]
fn every_reference_capture_decodes_like_its_answer_key() {
    let Some(dir) = common::shared_subdir("reference-captures") else { return };
    let mut checked_files = 0;
    let mut checked_frames = 0;
    for entry in std::fs::read_dir(&dir).expect("readable folder") {
        let path = entry.expect("entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".truth.json")) else {
            continue;
        };
        let truth: Value = serde_json::from_slice(&std::fs::read(&path).expect("key")).expect("key is JSON");
        let capture = dir.join(truth["file"].as_str().expect("file name"));
        let got = common::jsonl(&capture, &[]);
        assert_eq!(got.len() as u64, truth["totals"]["frames"].as_u64().expect("frames"), "{name}: frame count");
        check_totals(name, &truth, &got);
        let packets = truth.get("packets").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for expected in packets {
            let n = expected["frame"].as_u64().expect("frame number") as usize;
            check_frame(name, expected, &got[n - 1]);
            checked_frames += 1;
        }
        checked_files += 1;
    }
    assert!(checked_files >= 17, "only {checked_files} answer keys found");
    assert!(checked_frames > 500, "only {checked_frames} frames compared");
}
