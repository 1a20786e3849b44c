//! `analyze --trace`: the Chrome trace (Trace Event Format) of the report, checked against the
//! JSON report of the same sample: well-formed events, times in µs from the first frame, the
//! retransmit episodes, each pause source's periods and CNP bursts as spans, the capture-wide counters.

use crate::common;

use serde_json::Value;

fn sample(name: &str) -> String {
    format!("{}/samples/{name}.pcap", env!("CARGO_MANIFEST_DIR"))
}

/// The JSON report and the Chrome trace of sample `name` (the trace written to a file).
fn report_and_trace(name: &str) -> (Value, Value) {
    let report: Value = serde_json::from_str(&common::run_ok(&["analyze", "--json", &sample(name)])).expect("report");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("trace.json");
    common::run_ok(&["analyze", "--trace", path.to_str().unwrap(), &sample(name)]);
    let trace = serde_json::from_str(&std::fs::read_to_string(&path).expect("the trace")).expect("the trace is JSON");
    (report, trace)
}

fn events(trace: &Value) -> &[Value] {
    trace["traceEvents"].as_array().expect("traceEvents")
}

/// µs since the first frame of `ts_ns`, as the report says the first frame's time.
fn us(report: &Value, ts_ns: &Value) -> f64 {
    let first = report["capture"]["first_ts_ns"].as_i64().expect("a first frame");
    (ts_ns.as_i64().expect("a time") - first) as f64 / 1e3
}

/// The `X` spans of category `cat`, as (ts, dur, the event), in time order.
fn spans<'a>(trace: &'a Value, cat: &str) -> Vec<(f64, f64, &'a Value)> {
    let mut found: Vec<_> = events(trace)
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == cat)
        .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap(), e))
        .collect();
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    found
}

/// The thread id named `name`.
fn thread(trace: &Value, name: &str) -> Option<u64> {
    events(trace).iter().find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == name)?["tid"]
        .as_u64()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * a.abs().max(1.0)
}

/// Every event has a known phase, integer pid and tid, a name, a time at or after the first
/// frame, and what its phase needs: a span a duration, an instant its scope, a counter numbers,
/// a name its name.
fn assert_well_formed(trace: &Value) {
    assert_eq!(trace["displayTimeUnit"], "ns");
    assert!(!events(trace).is_empty());
    for e in events(trace) {
        let ok = e["pid"].is_u64()
            && e["tid"].is_u64()
            && e["name"].as_str().is_some_and(|n| !n.is_empty())
            && e["ts"].as_f64().is_some_and(|ts| ts >= 0.0)
            && match e["ph"].as_str() {
                Some("X") => e["dur"].as_f64().is_some_and(|d| d >= 0.0),
                Some("i") => e["s"] == "t",
                Some("C") => e["args"].as_object().is_some_and(|a| !a.is_empty() && a.values().all(Value::is_number)),
                Some("M") => e["args"].as_object().is_some_and(|a| a.values().all(|v| !v.is_null())),
                _ => false,
            };
        assert!(ok, "a malformed event: {e}");
    }
}

#[test]
fn every_sample_trace_is_well_formed_json() {
    for name in ["loss_go_back_n", "pfc_storm", "congestion_ecn_cnp", "uet"] {
        let (_, trace) = report_and_trace(name);
        assert_well_formed(&trace);
    }
}

#[test]
fn the_first_frame_is_time_zero_and_its_absolute_time_is_in_other_data() {
    let (report, trace) = report_and_trace("loss_go_back_n");
    let first = report["capture"]["first_ts_ns"].as_i64().unwrap();
    let other = &trace["otherData"];
    assert_eq!(other["first_frame_epoch_ns"].as_i64(), Some(first));
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(first as u64);
    assert_eq!(other["first_frame_time"].as_str(), Some(humantime::format_rfc3339_nanos(time).to_string().as_str()));
    // each flow's traffic runs from its first frame to its last, on its own thread
    for f in report["flows"].as_array().unwrap() {
        let label = format!(
            "{} → {} QP 0x{:06x}",
            f["src_ip"].as_str().unwrap(),
            f["dst_ip"].as_str().unwrap(),
            f["dst_qp"].as_u64().unwrap()
        );
        let tid = thread(&trace, &label).unwrap_or_else(|| panic!("no thread {label}"));
        let traffic: Vec<_> = spans(&trace, "traffic").into_iter().filter(|s| s.2["tid"] == tid).collect();
        let (first_span, last_span) = (traffic.first().unwrap(), traffic.last().unwrap());
        assert!(close(first_span.0, us(&report, &f["first_ts_ns"])), "{label} starts at {}", first_span.0);
        assert!(close(last_span.0 + last_span.1, us(&report, &f["last_ts_ns"])), "{label} ends");
    }
}

#[test]
fn retransmit_spans_are_the_reports_episodes() {
    let (report, trace) = report_and_trace("loss_go_back_n");
    let episodes = report["retransmit_episodes"].as_array().unwrap();
    assert!(!episodes.is_empty());
    let found = spans(&trace, "retransmit");
    assert_eq!(found.len(), episodes.len());
    let mut expected: Vec<&Value> = episodes.iter().collect();
    expected.sort_by_key(|e| e["start_ts_ns"].as_i64());
    for ((ts, dur, span), e) in found.iter().zip(expected) {
        assert!(close(*ts, us(&report, &e["start_ts_ns"])), "{span} vs {e}");
        assert!(close(ts + dur, us(&report, &e["end_ts_ns"])), "{span} vs {e}");
        for key in ["trigger", "pattern", "first_psn", "last_psn"] {
            assert_eq!(span["args"][key], e[key], "{key}");
        }
    }
}

/// The report's pause sources, PFC's and 802.3x PAUSE's, each with the name of its thread.
fn pause_sources(report: &Value) -> Vec<(String, &Value)> {
    let sources = report["pfc"].as_array().unwrap().iter().chain(report["pause"].as_array().unwrap());
    let channel = |s: &Value| match s["priority"].as_u64() {
        Some(priority) => format!("PFC priority {priority}"),
        None => "PAUSE (802.3x)".to_string(),
    };
    sources.map(|s| (format!("{} from {}", channel(s), s["src_mac"].as_str().unwrap()), s)).collect()
}

#[test]
fn each_pause_sources_spans_are_its_own_paused_time() {
    let (report, trace) = report_and_trace("pfc_storm");
    let sources = pause_sources(&report);
    assert!(!sources.is_empty());
    assert_eq!(report["limits"]["pause_periods_not_kept"], 0);
    let found = spans(&trace, "pause");
    assert!(!found.is_empty());
    for (name, s) in &sources {
        let Some(tid) = thread(&trace, name) else {
            assert_eq!(s["paused_ns"], 0, "{name} paused");
            continue;
        };
        let own: Vec<_> = found.iter().filter(|f| f.2["tid"] == tid).collect();
        let paused_us: f64 = own.iter().map(|f| f.1).sum();
        assert!(close(paused_us, s["paused_ns"].as_f64().unwrap() / 1e3), "{name}: {paused_us} µs");
        let first = own.first().expect("a span");
        assert!(close(first.0, us(&report, &s["first_ts_ns"])), "{name} starts at its first XOFF");
        assert_eq!(own.iter().any(|f| f.2["args"]["storm"] == true), s["storm"] == true, "{name}'s storm");
    }
}

#[test]
fn a_priority_two_sources_paused_has_a_thread_of_their_union() {
    let (report, trace) = report_and_trace("pfc_storm");
    let sources = pause_sources(&report);
    let found = spans(&trace, "pause");
    for priority in 0..8u64 {
        let of_priority: Vec<_> =
            sources.iter().filter(|(_, s)| s["priority"] == priority && s["paused_ns"] != 0).collect();
        let union = thread(&trace, &format!("PFC priority {priority} paused"));
        assert_eq!(union.is_some(), of_priority.len() > 1, "priority {priority}'s union");
        let Some(tid) = union else { continue };
        let paused_us: f64 = found.iter().filter(|f| f.2["tid"] == tid).map(|f| f.1).sum();
        let own_us: Vec<f64> = of_priority.iter().map(|(_, s)| s["paused_ns"].as_f64().unwrap() / 1e3).collect();
        assert!(paused_us <= own_us.iter().sum::<f64>() + 1e-6, "priority {priority}: at most the sum");
        assert!(own_us.iter().all(|own| paused_us + 1e-6 >= *own), "priority {priority}: at least each source's");
    }
}

/// The integral over time of counter `name`'s series `series` (a rate per second).
fn counted(trace: &Value, name: &str, series: &str) -> f64 {
    let points: Vec<(f64, f64)> = events(trace)
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == name)
        .map(|e| (e["ts"].as_f64().unwrap(), e["args"][series].as_f64().unwrap()))
        .collect();
    points.windows(2).map(|w| w[0].1 * (w[1].0 - w[0].0) / 1e6).sum()
}

#[test]
fn cnps_and_ce_marks_are_counters_and_cnp_bursts_spans() {
    let (report, trace) = report_and_trace("congestion_ecn_cnp");
    let cnps = report["cnps"].as_f64().unwrap();
    assert!(cnps > 0.0);
    assert!(close(counted(&trace, "CNPs (/s)", "CNPs"), cnps), "{}", counted(&trace, "CNPs (/s)", "CNPs"));
    let ce = report["ecn"]["ce"].as_f64().unwrap();
    assert!(close(counted(&trace, "CE marks (/s)", "CE marks"), ce));
    let bursts = report["congestion"]["cnp_bursts"].as_array().unwrap();
    let found = spans(&trace, "cnp");
    assert_eq!(found.len(), bursts.len());
    for ((ts, _, span), b) in found.iter().zip(bursts) {
        assert!(close(*ts, us(&report, &b["start_ns"])) && span["args"]["cnps"] == b["cnps"], "{span} vs {b}");
    }
}

#[test]
fn a_dash_writes_the_trace_on_stdout_and_not_beside_json() {
    let out = common::run_ok(&["analyze", "--trace", "-", &sample("loss_go_back_n")]);
    let trace: Value = serde_json::from_str(&out).expect("stdout is the trace alone");
    assert_well_formed(&trace);
    let refused = common::run(&["analyze", "--json", "--trace", "-", &sample("loss_go_back_n")]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--trace"));
}

#[test]
fn a_device_is_written_through_not_replaced() {
    common::run_ok(&["analyze", "--trace", "/dev/null", &sample("loss_go_back_n")]);
    assert!(!std::fs::metadata("/dev/null").unwrap().file_type().is_file(), "/dev/null was replaced");
}
