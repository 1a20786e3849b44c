//! `analyze` chooses its frames as `packets` does: `--qp`, `--ip` and `--opcode` analyse the
//! frames `packets` lists with them, `-c N` the first N frames; `packets --json` is its JSON
//! lines.

use crate::common;

use serde_json::Value;

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn analyze(args: &[&str]) -> Value {
    let mut all = vec!["analyze", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&common::run_ok(&all)).expect("a JSON report")
}

/// The parts of a report that say what was analysed: flows, findings, the capture's counts.
fn analysed(report: &Value) -> Value {
    serde_json::json!({
        "flows": report["flows"],
        "findings": report["findings"],
        "totals": report["totals"],
        "pfc": report["pfc"],
    })
}

#[test]
fn qp_ip_and_opcode_analyse_the_frames_packets_lists() {
    for (file, choice) in [
        ("rc_write_healthy.pcap", vec!["--qp", "0x202"]),
        ("bidirectional_read_write.pcap", vec!["--opcode", "read"]),
        ("loss_go_back_n.pcap", vec!["--ip", "10.0.0.2", "--opcode", "ack"]),
        ("mirror_erspan.pcap", vec!["--ip", "10.0.0.1", "--opcode", "0x07"]),
    ] {
        let file = sample(file);
        let mut listing = vec!["packets", "-T", "fields", "-e", "frame.number"];
        listing.extend_from_slice(&choice);
        listing.push(&file);
        let numbers: Vec<String> = common::run_ok(&listing).lines().map(String::from).collect();
        assert!(!numbers.is_empty(), "{file} {choice:?} lists frames");
        let filter = format!("frame.number in {{{}}}", numbers.join(", "));
        let mut chosen = choice.clone();
        chosen.push(&file);
        let by_choice = analyze(&chosen);
        let by_filter = analyze(&["-Y", &filter, &file]);
        assert!(analysed(&by_choice) == analysed(&by_filter), "{file} {choice:?}");
        assert!(analysed(&by_choice) != analysed(&analyze(&[&file])), "{file} {choice:?} chooses frames");
    }
}

#[test]
fn count_analyses_the_first_frames() {
    let file = sample("loss_go_back_n.pcap");
    let first = analyze(&["-c", "12", &file]);
    let filtered = analyze(&["-Y", "frame.number <= 12", &file]);
    assert!(analysed(&first) == analysed(&filtered));
    let frames =
        |r: &Value| r["flows"].as_array().map(|f| f.iter().map(|f| f["packets"].as_u64().unwrap()).sum::<u64>());
    assert_eq!(frames(&first), Some(12));
}

#[test]
fn a_saved_analysis_takes_its_choice_as_a_display_filter() {
    let file = sample("rc_write_healthy.pcap");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("a.state");
    let out = common::run(&["analyze", "--qp", "0x202", "--state", state.to_str().unwrap(), &file]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("say it with -Y"), "{stderr}");
    let out = common::run(&["analyze", "-c", "3", "--state", state.to_str().unwrap(), &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!state.exists());
}

#[test]
fn packets_json_is_its_json_lines() {
    let file = sample("rc_write_healthy.pcap");
    assert_eq!(common::run_ok(&["packets", "--json", &file]), common::run_ok(&["packets", "--format", "jsonl", &file]));
    assert_eq!(common::run(&["packets", "--json", "--format", "text", &file]).status.code(), Some(2));
}
