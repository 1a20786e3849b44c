//! The fabric's QoS configuration (`rocescope fabric`, `analyze --config`; docs/fabric.md): the
//! sample fabrics read whole and consistent, the policy they give with its sources, mismatches
//! the capture proves with their first frames, the marking findings citing the configuration's
//! lines, and bad files refused with their file and line.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common::{run, run_ok};

const NVIDIA: &str = "samples/fabric/nvidia";
const SONIC_DEFAULT: &str = "samples/fabric/sonic-default";
/// CNPs from 10.0.0.3 on DSCP 48 (first frame 5) and 0 (198); data from 10.0.0.1 on DSCP 26
/// (frame 1) and 0 (21).
const CONGESTION: &str = "samples/congestion_ecn_cnp.pcap";

/// The NVIDIA-style fabric's files, NAME=FILE.
fn nvidia() -> Vec<String> {
    [
        ("10.0.0.1", "10.0.0.1.txt"),
        ("10.0.0.2", "10.0.0.2-qos.txt"),
        ("10.0.0.2", "10.0.0.2-nccl.env"),
        ("10.0.0.2", "10.0.0.2-gids.txt"),
        ("leaf1", "leaf1-nv.yaml"),
        ("spine1", "spine1-eos.cfg"),
    ]
    .iter()
    .map(|(name, file)| format!("{name}={NVIDIA}/{file}"))
    .collect()
}

fn sonic_default() -> Vec<String> {
    [
        ("10.1.0.1", "10.1.0.1.txt"),
        ("10.1.0.2", "10.1.0.2.txt"),
        ("leaf1", "leaf1-config_db.json"),
        ("leaf2", "leaf2-config_db.json"),
    ]
    .iter()
    .map(|(name, file)| format!("{name}={SONIC_DEFAULT}/{file}"))
    .collect()
}

fn fabric_json(files: &[String]) -> Value {
    let mut args = vec!["fabric", "--json"];
    args.extend(files.iter().map(String::as_str));
    serde_json::from_str(&run_ok(&args)).expect("JSON")
}

/// `analyze --json` of `capture` with each file given as `--config`.
fn analyze_with(files: &[String], extra: &[&str], capture: &str) -> Value {
    let mut args = vec!["analyze", "--json"];
    for file in files {
        args.extend(["--config", file.as_str()]);
    }
    args.extend_from_slice(extra);
    args.push(capture);
    serde_json::from_str(&run_ok(&args)).expect("JSON")
}

/// `FILE:LINE` of the first line of `file` holding `needle`.
fn line_of(file: &str, needle: &str) -> String {
    let text = std::fs::read_to_string(file).expect("a sample");
    let line = text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle} in {file}"));
    format!("{file}:{}", line + 1)
}

fn codes(findings: &Value) -> Vec<&str> {
    findings.as_array().expect("findings").iter().map(|f| f["code"].as_str().expect("a code")).collect()
}

fn finding<'r>(report: &'r Value, code: &str) -> &'r Value {
    let found = report["findings"].as_array().expect("findings").iter().find(|f| f["code"] == code);
    found.unwrap_or_else(|| panic!("no {code} in {:#}", report["findings"]))
}

#[test]
fn both_sample_fabrics_are_consistent() {
    for files in [nvidia(), sonic_default()] {
        let report = fabric_json(&files);
        assert_eq!(codes(&report["findings"]), Vec::<&str>::new(), "{files:?}");
        assert_eq!(report["fabric"]["checks"], Value::Array(Vec::new()));
    }
    let nvidia = fabric_json(&nvidia());
    let names: Vec<&str> =
        nvidia["fabric"]["devices"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["10.0.0.1", "10.0.0.2", "leaf1", "spine1"]);
    let leaf = &nvidia["fabric"]["devices"][2];
    assert_eq!((leaf["kind"].as_str(), leaf["dscp_to_priority"]["26"].as_u64()), (Some("switch"), Some(3)));
    assert_eq!(leaf["pfc_priorities"], serde_json::json!([3]));
}

#[test]
fn the_policy_comes_from_the_configurations_with_the_line_of_each_value() {
    let policy = &fabric_json(&nvidia())["fabric"]["policy"];
    let host = format!("{NVIDIA}/10.0.0.1.txt");
    assert_eq!(policy["data_dscp"], 26);
    assert_eq!(policy["data_dscp_source"], line_of(&host, "NCCL_IB_TC=106"));
    assert_eq!((policy["cnp_dscp"].as_u64(), policy["cnp_priority"].as_u64()), (Some(48), Some(6)));
    assert_eq!(policy["cnp_dscp_source"], line_of(&host, "roce_np/cnp_dscp:48"));
    assert_eq!(policy["lossless_priorities"], serde_json::json!([3]));
    let sonic = &fabric_json(&sonic_default())["fabric"]["policy"];
    assert_eq!(
        (sonic["data_dscp"].as_u64(), sonic["lossless_priorities"].clone()),
        (Some(3), serde_json::json!([3, 4]))
    );
}

#[test]
fn the_dscps_seen_are_tsharks_first_frames_per_sender_class_and_dscp() {
    let report = analyze_with(&[], &[], CONGESTION);
    let Ok(out) = Command::new("tshark")
        .args(["-r", CONGESTION, "-T", "fields", "-e", "frame.number", "-e", "ip.src", "-e", "ip.dsfield.dscp"])
        .args(["-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-Y", "infiniband.bth"])
        .output()
    else {
        eprintln!("skipped: tshark is not installed");
        return;
    };
    let mut expected: Vec<(String, u64, String, u64)> = Vec::new();
    for line in String::from_utf8(out.stdout).expect("UTF-8").lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        let number = |i: usize| cells[i].parse::<u64>().expect("a number");
        let number_in_its_base = |i: usize| match cells[i].strip_prefix("0x") {
            Some(digits) => u64::from_str_radix(digits, 16).expect("hex"),
            None => number(i),
        };
        let class = match (number_in_its_base(3), number_in_its_base(4)) {
            (0x81, _) => "cnp",
            (_, 0 | 1) => continue,
            _ => "data",
        };
        let key = (class.to_string(), number(2), cells[1].to_string());
        if !expected.iter().any(|(c, d, s, _)| (c, d, s) == (&key.0, &key.1, &key.2)) {
            expected.push((key.0, key.1, key.2, number(0)));
        }
    }
    expected.sort_by(|a, b| (a.0 == "cnp", a.1, &a.2).cmp(&(b.0 == "cnp", b.1, &b.2)));
    let seen: Vec<(String, u64, String, u64)> = report["policy"]["dscps_seen"]
        .as_array()
        .expect("dscps_seen")
        .iter()
        .map(|s| {
            let text = |k: &str| s[k].as_str().expect("text").to_string();
            (text("class"), s["dscp"].as_u64().unwrap(), text("sender"), s["first_frame"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(seen, expected);
    assert!(seen.contains(&("cnp".into(), 0, "10.0.0.3".into(), 198)), "{seen:?}");
}

#[test]
fn data_on_a_lossy_dscp_is_reported_with_the_config_lines_and_the_first_frame() {
    let report = analyze_with(&nvidia(), &[], CONGESTION);
    let lossy = finding(&report, "QOS_LOSSY_ROCE");
    assert_eq!(lossy["severity"], "error");
    assert_eq!(lossy["evidence"]["frames"], serde_json::json!([21]));
    assert_eq!(lossy["evidence"]["devices"], serde_json::json!(["10.0.0.1", "10.0.0.2"]));
    let lines = lossy["evidence"]["config_lines"].as_array().expect("lines");
    assert!(lines.iter().all(|l| l.as_str().unwrap().starts_with(NVIDIA)), "{lines:?}");
    assert_eq!(codes(&report["fabric"]["checks"]), ["QOS_LOSSY_ROCE"]);
    // the marking findings judged by the configurations' values cite their lines
    let data = finding(&report, "DATA_DSCP");
    let source = line_of(&format!("{NVIDIA}/10.0.0.1.txt"), "NCCL_IB_TC=106");
    assert_eq!(data["evidence"]["config_lines"], serde_json::json!([source]));
    assert!(data["message"].as_str().unwrap().ends_with(&format!("(expected by {source})")), "{data}");
}

#[test]
fn cnps_on_another_dscp_than_their_nic_is_set_to_carry_the_first_frame() {
    // 10.0.0.3 configured as 10.0.0.1 is: its NIC sends CNPs on DSCP 48
    let files: Vec<String> = nvidia().into_iter().chain([format!("10.0.0.3={NVIDIA}/10.0.0.1.txt")]).collect();
    let report = analyze_with(&files, &[], CONGESTION);
    let cnp = finding(&report, "QOS_CNP_CLASS");
    assert_eq!(cnp["evidence"]["devices"], serde_json::json!(["10.0.0.3"]));
    assert_eq!(cnp["evidence"]["frames"], serde_json::json!([198]));
    assert_eq!(
        cnp["evidence"]["config_lines"],
        serde_json::json!([line_of(&format!("{NVIDIA}/10.0.0.1.txt"), "roce_np/cnp_dscp:48")])
    );
}

#[test]
fn a_flag_overrides_the_configurations_and_its_findings_cite_no_line() {
    let report = analyze_with(&nvidia(), &["--data-dscp", "0"], CONGESTION);
    assert_eq!(report["policy"]["expected_data_dscp"], 0);
    let data = finding(&report, "DATA_DSCP");
    assert!(data["evidence"].get("config_lines").is_none(), "{data}");
}

#[test]
fn without_a_capture_fail_on_exits_4_and_a_consistent_fabric_0() {
    let mut files = sonic_default();
    let broken = std::env::temp_dir().join(format!("rocescope-fabric-{}.json", std::process::id()));
    let leaf = std::fs::read_to_string(format!("{SONIC_DEFAULT}/leaf2-config_db.json")).unwrap();
    std::fs::write(&broken, leaf.replacen("\"3,4\"", "\"4\"", 1)).unwrap();
    files[3] = format!("leaf2={}", broken.display());
    let mut args = vec!["fabric", "--fail-on", "warning"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(text.contains("Fabric configuration (4 devices)") && text.contains("QOS_"), "{text}");
    let mut ok = vec!["fabric", "--fail-on", "info"];
    let consistent = sonic_default();
    ok.extend(consistent.iter().map(String::as_str));
    assert_eq!(run(&ok).status.code(), Some(0));
    std::fs::remove_file(broken).ok();
}

#[test]
fn bad_files_exit_2_naming_the_file_and_the_line() {
    let dir = std::env::temp_dir().join(format!("rocescope-fabric-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let unrecognised = write("notes.txt", "hello\nworld\n");
    let broken_json =
        write("config_db.json", "{\n  \"DSCP_TO_TC_MAP\": {\n    \"AZURE\": { \"3\": \"3\",, }\n  }\n}\n");
    for (path, wanted) in [(&unrecognised, "line 1:"), (&broken_json, "line 3:")] {
        let out = run(&["fabric", &format!("leaf1={}", path.display())]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&format!("{}", path.display())) && stderr.contains(wanted), "{stderr}");
    }
    let out = run(&["analyze", "--config", "leaf1=/nonexistent/config_db.json", CONGESTION]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--config: /nonexistent/config_db.json"));
    std::fs::remove_dir_all(dir).ok();
}

/// `reports/fabric.json`, `.txt` and `.html`: samples/congestion_ecn_cnp.pcap judged by the
/// NVIDIA-style sample fabric (regenerate with UPDATE_REPORTS=1, as the other reports).
#[test]
fn the_fabric_samples_report_is_up_to_date() {
    let files = nvidia();
    let mut args: Vec<&str> = files.iter().flat_map(|f| ["--config", f.as_str()]).collect();
    args.push(CONGESTION);
    crate::common::reports_kept_up_to_date("fabric", &args);
}
