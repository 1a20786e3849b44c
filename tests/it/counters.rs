//! `analyze --counters HOST=BEFORE,AFTER`: a host's NIC counter snapshots, in the forms
//! engineers print them, reconciled with what the capture saw; verdicts and findings exact.
//! The capture is samples/congestion_ecn_cnp.pcap: 10.0.0.3 receives from 10.0.0.1 and
//! 10.0.0.2, CE marks on 28 of their packets, and sends them 24 CNPs.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

const SAMPLE: &str = "samples/congestion_ecn_cnp.pcap";
const RECEIVER: &str = "10.0.0.3";

/// `ethtool -S`'s layout (indented, `name: value`) and the hw_counters loop (`name value`, and
/// `grep . …/*`'s `PATH:value`), with a time line.
fn snapshot(time: &str, ethtool: &[(&str, u64)], hw: &[(&str, u64)]) -> String {
    let mut text = format!("time: {time}\nNIC statistics:\n");
    for (name, value) in ethtool {
        text.push_str(&format!("     {name}: {value}\n"));
    }
    for (i, (name, value)) in hw.iter().enumerate() {
        if i % 2 == 0 {
            text.push_str(&format!("{name} {value}\n"));
        } else {
            text.push_str(&format!("/sys/class/infiniband/mlx5_0/ports/1/hw_counters/{name}:{value}\n"));
        }
    }
    text
}

/// The healthy receiver's counters: every paired one grew by what the capture shows.
const HEALTHY_HW: [(&str, u64); 6] = [
    ("np_cnp_sent", 24),
    ("np_ecn_marked_roce_packets", 28),
    ("out_of_sequence", 0),
    ("packet_seq_err", 0),
    ("duplicate_request", 0),
    ("local_ack_timeout_err", 0),
];

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a snapshot");
    path
}

/// The report with `after`'s deltas over a before of 1000 for every counter.
fn reconcile(ethtool: &[(&str, u64)], hw: &[(&str, u64)]) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    fn base<'a>(list: &[(&'a str, u64)]) -> Vec<(&'a str, u64)> {
        list.iter().map(|&(n, _)| (n, 1000)).collect()
    }
    fn plus<'a>(list: &[(&'a str, u64)]) -> Vec<(&'a str, u64)> {
        list.iter().map(|&(n, d)| (n, 1000 + d)).collect()
    }
    let before = write(dir.path(), "before.txt", &snapshot("2026-12-05T10:00:00Z", &base(ethtool), &base(hw)));
    let after = write(dir.path(), "after.txt", &snapshot("2026-12-05T11:00:30+01:00", &plus(ethtool), &plus(hw)));
    let arg = format!("{RECEIVER}={},{}", before.display(), after.display());
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(SAMPLE);
    let out = common::run_ok(&["analyze", "--json", "--counters", &arg, sample.to_str().expect("UTF-8")]);
    serde_json::from_str(&out).expect("the JSON report")
}

fn row<'a>(report: &'a Value, counter: &str) -> &'a Value {
    let rows = report["counters"][0]["rows"].as_array().expect("rows");
    rows.iter().find(|r| r["counter"] == counter).unwrap_or_else(|| panic!("no row {counter}"))
}

fn codes(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str().map(str::to_string))
        .collect()
}

fn finding<'a>(report: &'a Value, code: &str) -> &'a Value {
    report["findings"].as_array().expect("findings").iter().find(|f| f["code"] == code).expect("the finding")
}

#[test]
fn a_healthy_run_agrees_on_every_paired_counter() {
    let report = reconcile(&[("rx_packets_phy", 5_000), ("rx_out_of_buffer", 0)], &HEALTHY_HW);
    let host = &report["counters"][0];
    assert_eq!(host["host"], RECEIVER);
    assert_eq!(host["window"]["seconds"], 30.0);
    assert_eq!(host["window"]["before"], "2026-12-05T10:00:00Z");
    assert_eq!(host["rows"].as_array().expect("rows").len(), 8, "every counter a row");
    for (counter, delta) in HEALTHY_HW {
        let r = row(&report, counter);
        assert_eq!((r["delta"].as_u64(), r["capture"].as_u64()), (Some(delta), Some(delta)), "{counter}");
        assert_eq!(r["verdict"], "agrees", "{counter}");
    }
    let unpaired = row(&report, "rx_packets_phy");
    assert_eq!((unpaired["verdict"].as_str(), unpaired["delta"].as_u64()), (Some("not_visible"), Some(5_000)));
    assert!(unpaired["capture"].is_null(), "a counter of all traffic is never paired");
    for code in ["NIC_RX_DROPS", "LINK_ERRORS", "COUNTERS_DISAGREE"] {
        assert!(!codes(&report).contains(&code.to_string()), "{code}");
    }
}

#[test]
fn a_receiver_dropping_for_lack_of_buffers_is_named() {
    let report = reconcile(&[("rx_out_of_buffer", 57), ("rx_discards_phy", 3)], &HEALTHY_HW);
    assert_eq!(row(&report, "rx_out_of_buffer")["verdict"], "not_visible");
    let f = finding(&report, "NIC_RX_DROPS");
    assert_eq!(f["evidence"]["host"], RECEIVER);
    assert_eq!(f["evidence"]["count"], 60);
    assert!(f["action"].as_str().is_some_and(|a| a.contains("receive rings")), "{f}");
}

#[test]
fn counts_the_capture_missed_disagree_past_the_tolerance() {
    // the mirror dropped a few CE-marked copies: 2 more counted agree (the tolerance is 2),
    // 3 more do not; CNPs sent on a priority the mirror does not copy: 100 more counted
    for (marked, verdict) in [(30, "agrees"), (31, "capture_saw_fewer")] {
        let mut hw = HEALTHY_HW;
        hw[1] = ("np_ecn_marked_roce_packets", marked);
        hw[0] = ("np_cnp_sent", 124);
        let report = reconcile(&[], &hw);
        let ecn = row(&report, "np_ecn_marked_roce_packets");
        assert_eq!(ecn["verdict"], verdict, "{marked}");
        assert_eq!(ecn["difference"], marked as i64 - 28);
        let cnps = row(&report, "np_cnp_sent");
        assert_eq!((cnps["verdict"].as_str(), cnps["difference"].as_i64()), (Some("capture_saw_fewer"), Some(100)));
        let disagreements: Vec<&Value> = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["code"] == "COUNTERS_DISAGREE")
            .collect();
        assert_eq!(disagreements.len(), if verdict == "agrees" { 1 } else { 2 }, "one finding per family");
        assert!(disagreements[0]["message"].as_str().is_some_and(|m| m.contains("CNPs")), "{}", disagreements[0]);
        assert!(disagreements.iter().all(|f| f["evidence"]["host"] == RECEIVER));
    }
}

#[test]
fn link_errors_grow_a_finding_and_corrected_bits_alone_do_not() {
    let report = reconcile(&[("rx_corrected_bits_phy", 800)], &HEALTHY_HW);
    assert!(!codes(&report).contains(&"LINK_ERRORS".to_string()));
    let report =
        reconcile(&[("rx_corrected_bits_phy", 800), ("rx_symbol_err_phy", 4), ("rx_crc_errors_phy", 1)], &HEALTHY_HW);
    let f = finding(&report, "LINK_ERRORS");
    assert_eq!(f["evidence"]["count"], 5);
    assert!(f["message"].as_str().is_some_and(|m| m.contains("rx_symbol_err_phy +4")), "{f}");
}

#[test]
fn a_counter_reset_between_the_snapshots_gives_no_delta() {
    let dir = tempfile::tempdir().expect("temp dir");
    let before = write(dir.path(), "b.txt", "np_cnp_sent 500\nout_of_sequence 3\n");
    let after = write(dir.path(), "a.txt", "np_cnp_sent 20\n");
    let arg = format!("{RECEIVER}={},{}", before.display(), after.display());
    let out = common::run_ok(&["analyze", "--json", "--counters", &arg, SAMPLE]);
    let report: Value = serde_json::from_str(&out).expect("JSON");
    let reset = row(&report, "np_cnp_sent");
    assert_eq!((reset["verdict"].as_str(), reset["delta"].is_null()), (Some("reset"), true));
    assert_eq!(row(&report, "out_of_sequence")["verdict"], "missing");
    assert!(report["counters"][0]["window"]["seconds"].is_null(), "no time lines, no window");
    assert!(!codes(&report).contains(&"COUNTERS_DISAGREE".to_string()));
}

#[test]
fn a_malformed_or_missing_snapshot_is_a_usage_error_naming_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = write(dir.path(), "good.txt", "np_cnp_sent 1\n");
    let bad = write(dir.path(), "bad.txt", "NIC statistics:\n     rx_packets: 12\n     rx_bytes: lots\n");
    for (after, wanted) in [
        (bad.display().to_string(), format!("{}: line 3: the value of rx_bytes is not a count", bad.display())),
        (dir.path().join("none.txt").display().to_string(), "none.txt".to_string()),
    ] {
        let arg = format!("{RECEIVER}={},{after}", good.display());
        let out = common::run(&["analyze", "--counters", &arg, SAMPLE]);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&wanted), "{stderr}");
    }
    let out = common::run(&["analyze", "--counters", "host=a,b", SAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an IP address"));
}

#[test]
fn a_malformed_switch_table_row_is_a_usage_error_naming_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = write(dir.path(), "good.txt", "  Port Tx    PFC0    PFC1\n---  ---  ---\n  Ethernet0   1   2\n");
    let bad = write(dir.path(), "bad.txt", "  Port Tx    PFC0    PFC1\n---  ---  ---\n  Ethernet0   1\n");
    let arg = format!("leaf1={},{}", good.display(), bad.display());
    let out = common::run(&["analyze", "--switch-counters", &arg, SAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let wanted = format!("--switch-counters: {}: line 3: 1 values under 2 priorities", bad.display());
    assert!(stderr.contains(&wanted), "{stderr}");
    let out = common::run(&["analyze", "--switch-counters", "=a,b", SAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("say NAME=BEFORE,AFTER"));
}

#[test]
fn without_counters_the_report_has_no_counters_section() {
    let out = common::run_ok(&["analyze", "--json", SAMPLE]);
    let report: Value = serde_json::from_str(&out).expect("JSON");
    assert!(report.get("counters").is_none());
}

/// `reports/counters.json`, `.txt` and `.html`: samples/congestion_ecn_cnp.pcap with the receiver's
/// snapshots in samples/counters/ (regenerate with UPDATE_REPORTS=1, as the other reports).
#[test]
fn the_counters_samples_report_is_up_to_date() {
    let arg = "10.0.0.3=samples/counters/10.0.0.3.before.txt,samples/counters/10.0.0.3.after.txt";
    let switch = "leaf1=samples/counters/leaf1.before.txt,samples/counters/leaf1.after.txt";
    common::reports_kept_up_to_date("counters", &["--counters", arg, "--switch-counters", switch, SAMPLE]);
}

#[cfg(feature = "tables")]
#[test]
fn out_writes_a_counters_table_and_the_page_shows_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let arg = "10.0.0.3=samples/counters/10.0.0.3.before.txt,samples/counters/10.0.0.3.after.txt";
    let switch = "leaf1=samples/counters/leaf1.before.txt,samples/counters/leaf1.after.txt";
    let out_dir = out.to_str().expect("UTF-8");
    let run = common::rocescope()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["analyze", "-q", "--counters", arg, "--switch-counters", switch, "--out", out_dir, SAMPLE])
        .output()
        .expect("rocescope runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let csv = std::fs::read_to_string(out.join("counters.csv")).expect("counters.csv");
    let header =
        "host,source,window_before,window_after,window_seconds,counter,before,after,delta,capture,verdict,difference";
    assert!(csv.starts_with(header), "{csv}");
    let window = "2026-12-05T10:00:00Z,2026-12-05T10:00:02.5Z,2.5";
    assert!(csv.lines().any(|l| l == format!("10.0.0.3,nic,{window},np_cnp_sent,80311,80335,24,24,agrees,0")), "{csv}");
    let switch_row = format!("leaf1,switch,{window},Ethernet0 UC6 packets,80311,80335,24,,not_visible,");
    assert!(csv.lines().any(|l| l == switch_row), "{csv}");
    let (nic, switch) = (26, 2 * 8 + 2 * 7 + 4 * 4);
    assert_eq!(
        csv.lines().count(),
        1 + nic + switch,
        "a line per counter: 16 of ethtool, 10 of hw_counters, the switch's"
    );
    let page = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert!(page.contains("Counters beside the capture") && page.contains("np_ecn_marked_roce_packets"));
}

/// The report of `sample` with `host`'s counters growing by `deltas` (over 1000 each).
fn reconcile_on(sample: &str, host: &str, deltas: &[(&str, u64)]) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines = |add: bool| {
        deltas.iter().map(|&(n, d)| format!("     {n}: {}\n", 1000 + if add { d } else { 0 })).collect::<String>()
    };
    let before = write(dir.path(), "b.txt", &format!("NIC statistics:\n{}", lines(false)));
    let after = write(dir.path(), "a.txt", &format!("NIC statistics:\n{}", lines(true)));
    let arg = format!("{host}={},{}", before.display(), after.display());
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(sample);
    serde_json::from_str(&common::run_ok(&["analyze", "--json", "--counters", &arg, sample.to_str().expect("UTF-8")]))
        .expect("the JSON report")
}

#[test]
fn pause_counters_pair_with_the_pfc_frames_of_the_hosts_mac() {
    // samples/incast.pcap: the receiver 10.0.0.20 (MAC 02:00:00:00:00:14, that of its RoCE
    // frames) sends one XOFF for priority 3
    let healthy = reconcile_on("samples/incast.pcap", "10.0.0.20", &[("tx_prio3_pause", 1), ("tx_prio4_pause", 0)]);
    assert_eq!(row(&healthy, "tx_prio3_pause")["capture"], 1);
    assert_eq!(row(&healthy, "tx_prio3_pause")["verdict"], "agrees");
    assert_eq!(
        (row(&healthy, "tx_prio4_pause")["capture"].as_u64(), row(&healthy, "tx_prio4_pause")["verdict"].as_str()),
        (Some(0), Some("agrees"))
    );
    let more = reconcile_on("samples/incast.pcap", "10.0.0.20", &[("tx_prio3_pause", 9)]);
    assert_eq!(
        (row(&more, "tx_prio3_pause")["verdict"].as_str(), row(&more, "tx_prio3_pause")["difference"].as_i64()),
        (Some("capture_saw_fewer"), Some(8))
    );
    let f = finding(&more, "COUNTERS_DISAGREE");
    assert!(f["message"].as_str().is_some_and(|m| m.contains("PFC pauses")), "{f}");
    assert!(!codes(&more).contains(&"PAUSE_NOT_IN_CAPTURE".to_string()), "the capture has pause frames");
    // another host sends no PFC frame: its counter is paired with none
    let sender = reconcile_on("samples/incast.pcap", "10.0.0.11", &[("tx_prio3_pause", 0)]);
    assert_eq!(
        (row(&sender, "tx_prio3_pause")["capture"].as_u64(), row(&sender, "tx_prio3_pause")["verdict"].as_str()),
        (Some(0), Some("agrees"))
    );
}

/// A host's MACs are found by the analysis's own pass: a capture read once only (standard
/// input) pairs its pause counters too, and so does one analysed in two parts (`--state`,
/// `--resume`), whose first part alone holds the host's first frame.
#[test]
fn pause_counters_pair_from_standard_input_and_across_a_resumed_analysis() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write_counter =
        |name: &str, n: u64| write(dir.path(), name, &format!("NIC statistics:\n     tx_prio3_pause: {n}\n"));
    let arg =
        format!("10.0.0.20={},{}", write_counter("b.txt", 1000).display(), write_counter("a.txt", 1001).display());
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/incast.pcap");
    let out = common::rocescope()
        .args(["analyze", "--json", "--counters", &arg, "-"])
        .stdin(std::fs::File::open(&sample).expect("the sample"))
        .output()
        .expect("rocescope runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("the JSON report");
    let pauses = row(&report, "tx_prio3_pause");
    assert_eq!((pauses["capture"].as_u64(), pauses["verdict"].as_str()), (Some(1), Some("agrees")), "{pauses}");
    // cut after the host's first frame (frame 9, an ACK): the second part, resumed, holds its
    // pause frame
    let parts = common::split::split(&sample, dir.path(), |_| vec![9]);
    let state = dir.path().join("part.state");
    let (state, [first, second]) =
        (state.to_str().expect("UTF-8"), [&parts[0], &parts[1]].map(|p| p.to_str().expect("UTF-8")));
    common::run_ok(&["analyze", "-q", "--state", state, first]);
    let resumed: Value =
        serde_json::from_str(&common::run_ok(&["analyze", "--json", "--resume", state, "--counters", &arg, second]))
            .expect("the JSON report");
    assert_eq!(row(&resumed, "tx_prio3_pause")["verdict"], "agrees", "{resumed}");
}

#[test]
fn pauses_counted_with_none_in_the_capture_are_pause_not_in_capture() {
    // samples/congestion_ecn_cnp.pcap has no pause frame at all
    let report = reconcile_on(
        SAMPLE,
        RECEIVER,
        &[("tx_prio3_pause", 12), ("rx_pause_ctrl_phy", 4), ("rx_prio3_pause_duration", 0)],
    );
    let f = finding(&report, "PAUSE_NOT_IN_CAPTURE");
    assert_eq!((f["evidence"]["host"].as_str(), f["evidence"]["count"].as_u64()), (Some(RECEIVER), Some(16)));
    assert_eq!(row(&report, "tx_prio3_pause")["verdict"], "capture_saw_fewer");
    assert!(!codes(&report).contains(&"COUNTERS_DISAGREE".to_string()), "not also a disagreement");
    let quiet = reconcile_on(SAMPLE, RECEIVER, &[("tx_prio3_pause", 0)]);
    assert!(!codes(&quiet).contains(&"PAUSE_NOT_IN_CAPTURE".to_string()));
}

/// `analyze --json` of the sample with `args` beside it: the report and standard error.
fn analyze_with(args: &[&str]) -> (Value, String) {
    let out = common::run(&[&["analyze", "--json"], args, &[SAMPLE]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("the JSON report"), stderr)
}

/// `--counters HOST=BEFORE,AFTER` (or `--switch-counters`) of the two texts, written in `dir`.
fn pair(dir: &Path, who: &str, before: &str, after: &str) -> String {
    let (b, a) = (write(dir, &format!("{who}.before.txt"), before), write(dir, &format!("{who}.after.txt"), after));
    format!("{who}={},{}", b.display(), a.display())
}

#[test]
fn snapshot_files_past_the_limit_or_not_text_are_refused_naming_the_file() {
    for option in ["--counters", "--switch-counters"] {
        let who = if option == "--counters" { RECEIVER } else { "leaf1" };
        let out = common::run(&["analyze", option, &format!("{who}=/dev/zero,/dev/zero"), SAMPLE]);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("{option}: /dev/zero: larger than 16 MiB")), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let latin1 = dir.path().join("latin1.txt");
    std::fs::write(&latin1, b"rx_packets 1\ncaf\xe9 2\n").expect("write");
    let arg = format!("{RECEIVER}={},{}", latin1.display(), latin1.display());
    let out = common::run(&["analyze", "--counters", &arg, SAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}: not UTF-8 text (byte offset 16 is not UTF-8)", latin1.display())),
        "{stderr}"
    );
}

#[test]
fn a_bad_line_of_megabytes_is_quoted_by_its_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let huge = format!("NIC statistics:\n     rx_packets: {}\n", "9x".repeat(2 << 20));
    let arg = pair(dir.path(), RECEIVER, "rx_packets 1\n", &huge);
    let out = common::run(&["analyze", "--counters", &arg, SAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.len() < 400, "{} bytes: {stderr}", stderr.len());
    assert!(
        stderr.contains(&format!("{RECEIVER}.after.txt: line 2: the value of rx_packets is not a count")),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("… ({} bytes)", 4 << 20)), "{stderr}");
    let table = format!("Port Tx PFC0\n---\nEthernet0 {}\n", "7".repeat(4 << 20));
    let arg = pair(dir.path(), "leaf1", "Port Tx PFC0\n---\nEthernet0 1\n", &table);
    let out = common::run(&["analyze", "--switch-counters", &arg, SAMPLE]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.len() < 400 && stderr.contains("leaf1.after.txt: line 3: a value that is not a count"), "{stderr}");
}

#[test]
fn forty_thousand_host_counters_reconcile() {
    // a search per counter took 15–28 s for these; the snapshot's index makes it linear
    let dir = tempfile::tempdir().expect("temp dir");
    let many = |grown: u64| -> String {
        let mut text: String = (0..40_000).map(|i| format!("     rx_queue{i}_packets: {}\n", 1000 + grown)).collect();
        text.push_str(&format!("np_cnp_sent {}\n", 1000 + grown * 24));
        text
    };
    let arg = pair(dir.path(), RECEIVER, &many(0), &many(1));
    let (report, _) = analyze_with(&["--counters", &arg]);
    assert_eq!(report["counters"][0]["rows"].as_array().expect("rows").len(), 40_001);
    assert_eq!(row(&report, "rx_queue39999_packets")["delta"], 1);
    assert_eq!(row(&report, "np_cnp_sent")["verdict"], "agrees");
}

#[test]
fn swapped_snapshots_are_named_and_read_in_their_order_when_their_times_say_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let before = snapshot("2026-12-05T10:00:00Z", &[], &[("np_cnp_sent", 1000), ("out_of_sequence", 3)]);
    let after = snapshot("2026-12-05T10:00:30Z", &[], &[("np_cnp_sent", 1024), ("out_of_sequence", 3)]);
    let (report, stderr) = analyze_with(&["--counters", &pair(dir.path(), RECEIVER, &after, &before)]);
    let wanted = format!(
        "rocescope: warning: --counters {RECEIVER}: AFTER was taken at 2026-12-05T10:00:00Z, before BEFORE at 2026-12-05T10:00:30Z: the files look swapped and are read the other way round; give BEFORE first"
    );
    assert_eq!(stderr.matches("look swapped").count(), 1, "{stderr}");
    assert!(stderr.lines().any(|l| l == wanted), "{stderr}");
    assert_eq!(
        (row(&report, "np_cnp_sent")["delta"].as_u64(), row(&report, "np_cnp_sent")["verdict"].as_str()),
        (Some(24), Some("agrees"))
    );
    assert_eq!(report["counters"][0]["window"]["seconds"], 30.0);
    // without times the counters tell, and the files are read as given
    let table = |pfc3: &str| format!("  Port Tx    PFC3\n---  ---\n  Ethernet0   {pfc3}\n  Ethernet4   7\n");
    let (before, after) = (&table("1,000"), &table("1,024"));
    let (report, stderr) = analyze_with(&["--switch-counters", &pair(dir.path(), "leaf1", after, before)]);
    assert!(stderr.contains("rocescope: warning: --switch-counters leaf1: 1 of the 1 counters that changed went down from BEFORE to AFTER: the files look swapped (give BEFORE first)"), "{stderr}");
    assert_eq!(row(&report, "Ethernet0 tx_pfc3")["verdict"], "reset");
    let (_, stderr) = analyze_with(&["--switch-counters", &pair(dir.path(), "leaf1", before, after)]);
    assert!(!stderr.contains("swapped"), "{stderr}");
}

#[test]
fn counters_of_a_host_the_capture_does_not_have_are_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (before, after) = ("np_cnp_sent 1000\n", "np_cnp_sent 1024\n");
    let absent = pair(dir.path(), "10.9.9.9", before, after);
    let present = pair(dir.path(), RECEIVER, before, after);
    let (report, stderr) = analyze_with(&["--counters", &absent, "--counters", &present]);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("rocescope: warning:")).collect();
    assert_eq!(
        warnings,
        [
            "rocescope: warning: --counters 10.9.9.9: no RoCE frame is from or to 10.9.9.9: its counters pair with nothing (HOST is the NIC's address in the capture)"
        ]
    );
    assert_eq!(report["counters"].as_array().map(Vec::len), Some(2), "its counters are still shown");
}

#[test]
fn a_switch_file_without_a_table_is_a_warning_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let table = "  Port Tx    PFC0\n---  ---\n  Ethernet0   1\n";
    let interfaces = "      IFACE    STATE    RX_OK    RX_BPS\n-----------  -------  -------  --------\n  Ethernet0        U    1,024  0.00 B/s\n";
    let arg = pair(dir.path(), "leaf1", table, interfaces);
    let (_, stderr) = analyze_with(&["--switch-counters", &arg]);
    let wanted = format!(
        "rocescope: warning: --switch-counters: {}: no table of `show pfc counters` (Port Rx, Port Tx) or `show queue counters` (Port TxQ) in it: no counter read",
        dir.path().join("leaf1.after.txt").display()
    );
    assert_eq!(stderr.lines().filter(|l| l.contains("no table")).collect::<Vec<_>>(), [wanted.as_str()], "{stderr}");
}

#[test]
fn link_names_a_host_whose_counters_are_given() {
    let dir = tempfile::tempdir().expect("temp dir");
    let arg = pair(dir.path(), RECEIVER, "rx_prio3_pause 0\n", "rx_prio3_pause 0\n");
    let out = common::run(&["analyze", "--counters", &arg, "--link", "10.0.0.9", SAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--link 10.0.0.9: no --counters 10.0.0.9=BEFORE,AFTER"), "{stderr}");
    let out = common::run(&["analyze", "--link", RECEIVER, SAMPLE]);
    assert_eq!(out.status.code(), Some(2), "--link without --counters");
    // samples/congestion_ecn_cnp.pcap has no pause frame: the receiver's received pauses are
    // not visible, unless the user says the capture is of its link
    let (unnamed, _) = analyze_with(&["--counters", &arg]);
    assert_eq!(row(&unnamed, "rx_prio3_pause")["verdict"], "not_visible");
    let (named, _) = analyze_with(&["--counters", &arg, "--link", RECEIVER]);
    assert_eq!(
        (row(&named, "rx_prio3_pause")["verdict"].as_str(), row(&named, "rx_prio3_pause")["capture"].as_u64()),
        (Some("agrees"), Some(0))
    );
}
