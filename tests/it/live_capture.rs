//! `rocescope capture` end to end (needs `--features live`): inside a network namespace this
//! test makes itself, sample captures are replayed into one end of a veth pair (raw packet
//! socket, tests/live/replay.py) and captured on the other. The final report must equal
//! `analyze` of the file the capture wrote, and agree with `analyze` of the sample in every
//! count that does not depend on timing. No traffic leaves the namespace. Skips with a message
//! where namespaces cannot be made (not root, no iproute2) or python3 is missing.
#![cfg(feature = "live")]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

/// A network namespace with a veth pair `va`–`vb`, removed when dropped.
struct Namespace(String);

impl Namespace {
    /// `tag` keeps the namespaces of tests running at the same time apart.
    fn create(tag: &str) -> Option<Namespace> {
        let name = format!("rocescope-{tag}-{}", std::process::id());
        let ip =
            |args: &[&str]| Command::new("ip").args(args).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
        if !ip(&["netns", "add", &name]) {
            return None;
        }
        let ns = Namespace(name);
        let ok = ns
            .run_ok(&["ip", "link", "add", "va", "mtu", "9000", "type", "veth", "peer", "name", "vb", "mtu", "9000"])
            && ns.run_ok(&["ip", "link", "set", "va", "up"])
            && ns.run_ok(&["ip", "link", "set", "vb", "up"])
            && ns.run_ok(&["ip", "link", "set", "lo", "up"]);
        ok.then_some(ns)
    }

    /// A namespace to replay frames into, or `None` (saying why the test is skipped) where one
    /// cannot be made or python3 is missing.
    fn for_replay(tag: &str) -> Option<Namespace> {
        let Some(ns) = Namespace::create(tag) else {
            eprintln!("skipped: cannot create a network namespace with a veth pair here (needs root and iproute2)");
            return None;
        };
        if Command::new("python3").arg("--version").output().is_err() {
            eprintln!("skipped: python3 is needed to replay frames");
            return None;
        }
        Some(ns)
    }

    fn command(&self, argv: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).args(argv);
        c
    }

    /// Starts `rocescope capture -i vb ARGS` and returns once the interface is open.
    fn start_capture(&self, args: &[&str]) -> std::process::Child {
        let mut argv = vec![env!("CARGO_BIN_EXE_rocescope"), "capture", "-i", "vb"];
        argv.extend_from_slice(args);
        let mut capture =
            self.command(&argv).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("capture runs");
        let mut stderr = BufReader::new(capture.stderr.take().expect("stderr"));
        let mut line = String::new();
        stderr.read_line(&mut line).expect("the capture starts");
        assert!(line.contains("capturing on vb"), "{line}");
        capture
    }

    /// Sends the frames of `sample` into `va`, in order.
    fn replay(&self, sample: &str) {
        let script = format!("{}/tests/live/replay.py", root());
        let replay = self.command(&["python3", &script, "va", sample]).output().expect("replay");
        assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    }

    fn run_ok(&self, argv: &[&str]) -> bool {
        self.command(argv).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn root() -> String {
    env!("CARGO_MANIFEST_DIR").to_string()
}

/// The final report: the pretty JSON document after the one-line interval objects.
fn final_report(stdout: &str) -> Value {
    let start = stdout.find("\n{\n").map_or(0, |i| i + 1);
    serde_json::from_str(&stdout[start..]).expect("the final JSON report")
}

fn without(mut v: Value, keys: &[&str]) -> Value {
    if let Some(o) = v.as_object_mut() {
        keys.iter().for_each(|k| {
            o.remove(*k);
        });
    }
    v
}

/// Findings about durations and rates over time windows, which a replay at its own pace does
/// not reproduce.
const TIMING_FINDINGS: [&str; 6] =
    ["PFC_STORM", "RETRANSMIT_TIMEOUT", "DCQCN_NO_REACTION", "DCQCN_SLOW_RECOVERY", "HIGH_TAIL_LATENCY", "INCAST"];

/// What does not depend on when frames were seen.
fn timeless(r: &Value) -> Value {
    let flows: Vec<Value> = r["flows"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|f| {
                    serde_json::json!([
                        f["src_ip"],
                        f["dst_qp"],
                        f["packets"],
                        f["gaps"],
                        f["missing_psns"],
                        f["retransmitted"],
                        f["icrc_bad"],
                        f["ce"],
                        f["cnps"]
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    let findings: Vec<&Value> = r["findings"]
        .as_array()
        .map(|f| f.iter().map(|f| &f["code"]).filter(|c| !TIMING_FINDINGS.iter().any(|t| *c == t)).collect())
        .unwrap_or_default();
    serde_json::json!([r["totals"], r["icrc"], r["opcodes"], r["ecn"], r["dscp"], r["cnps"], flows, findings])
}

#[test]
fn a_live_capture_reports_what_analyze_reports_of_the_same_traffic() {
    let Some(ns) = Namespace::for_replay("report") else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["loss_go_back_n", "congestion_ecn_cnp", "bad_icrc", "pfc_storm"] {
        let sample = format!("{}/samples/{name}.pcap", root());
        let frames = common::jsonl(std::path::Path::new(&sample), &[]).len().to_string();
        // one written as pcapng: the report describes each file as analyze of it does
        let ext = if name == "pfc_storm" { "pcapng" } else { "pcap" };
        let written = dir.path().join(format!("{name}.{ext}"));
        let written = written.to_str().unwrap();
        // no rolling summary before the end: a live capture decides on doubled mirrors at its
        // first summary at the latest, and a file's analysis after its first RoCE frames
        let capture =
            ns.start_capture(&["-w", written, "--json", "-c", &frames, "--duration", "30s", "--interval", "1h"]);
        ns.replay(&sample);
        let out = capture.wait_with_output().expect("the capture ends");
        assert!(out.status.success(), "{name}: capture failed");
        let live = final_report(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(live["live"]["kernel_dropped"], serde_json::json!(0), "{name}: the capture lost frames");
        assert_eq!(live["totals"]["frames"].as_u64().map(|n| n.to_string()), Some(frames.clone()), "{name}");
        // the report equals analyze of the written file, but for the live statistics
        let of_file: Value = serde_json::from_str(&common::run_ok(&["analyze", "--json", written])).expect("JSON");
        assert_eq!(
            without(live.clone(), &["live"]),
            without(of_file, &["live"]),
            "{name}: report differs from analyze of the written file"
        );
        // and agrees with analyze of the sample in everything but timing
        let of_sample: Value = serde_json::from_str(&common::run_ok(&["analyze", "--json", &sample])).expect("JSON");
        assert_eq!(timeless(&live), timeless(&of_sample), "{name}: counts differ from analyze of the sample");
    }
}

#[test]
fn a_missing_interface_is_a_clear_error() {
    let out = common::run(&["capture", "-i", "rocescope-no-such-if0", "--duration", "1s"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rocescope-no-such-if0") && stderr.lines().count() == 1, "{stderr}");
}

#[test]
fn missing_permission_names_the_capabilities() {
    // an unprivileged user (nobody) through util-linux's setpriv
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let Ok(out) = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin, "capture", "-i", "lo", "--duration", "1s"])
        .output()
    else {
        eprintln!("skipped: setpriv (util-linux) is not installed");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("setpriv:") {
        eprintln!("skipped: cannot change user here ({})", stderr.trim());
        return;
    }
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("permission denied") && stderr.contains("CAP_NET_RAW"), "{stderr}");
}

#[test]
fn prometheus_reads_the_rolling_counters_and_ctrl_c_ends_with_the_report() {
    let Some(ns) = Namespace::for_replay("metrics") else { return };
    let sample = format!("{}/samples/loss_go_back_n.pcap", root());
    // an RDMA device's counters in a copy of sysfs's tree: its CNPs sent go from 5 to 12; the
    // series are labelled with its device and port, and the interface as netdev
    let dir = tempfile::tempdir().expect("temp dir");
    let cnps = dir.path().join("sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent");
    std::fs::create_dir_all(cnps.parent().expect("a parent")).expect("dirs");
    std::fs::write(&cnps, "5\n").expect("a counter");
    let written = dir.path().join("cap.pcap").display().to_string();
    let sysfs = dir.path().display().to_string();
    let capture = ns.start_capture(&[
        "--metrics",
        "127.0.0.1:9464",
        "--interval",
        "100ms",
        "--duration",
        "60s",
        "-w",
        &written,
        "--counters",
        "mlx5_0",
        "--sysfs-root",
        &sysfs,
    ]);
    std::fs::write(&cnps, "12\n").expect("the counter grows");
    ns.replay(&sample);
    std::thread::sleep(std::time::Duration::from_millis(600));
    // fetched inside the namespace, from its own loopback
    let fetch = "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9464/metrics').read().decode())";
    let metrics = ns.command(&["python3", "-c", fetch]).output().expect("fetch");
    // Ctrl-C: the capture stops and prints its report (`ip netns exec` runs it in its own place)
    let interrupted = Command::new("kill").args(["-INT", &capture.id().to_string()]).status();
    assert!(interrupted.is_ok_and(|s| s.success()));
    let out = capture.wait_with_output().expect("the capture ends");
    assert!(out.status.success(), "Ctrl-C is a normal end");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("Findings (3)") && summary.contains("PSN_GAP"), "{summary}");
    let text = String::from_utf8_lossy(&metrics.stdout);
    for expected in [
        "rocescope_frames_total{device=\"mlx5_0\",port=\"1\",netdev=\"vb\"} 40",
        "rocescope_out_of_sequence_total{device=\"mlx5_0\",port=\"1\",netdev=\"vb\"} 1",
        "rocescope_missing_psns_total{device=\"mlx5_0\",port=\"1\",netdev=\"vb\"} 3",
        "rocescope_resent_total{device=\"mlx5_0\",port=\"1\",netdev=\"vb\"} 6",
        "rocescope_packet_seq_err_total{device=\"mlx5_0\",port=\"1\",netdev=\"vb\"} 1",
        "# TYPE rocescope_np_cnp_sent_total counter",
        "rocescope_nic_np_cnp_sent_total{device=\"mlx5_0\",port=\"1\",netdev=\"vb\"} 7",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
}

#[test]
fn a_display_filter_chooses_the_frames_a_live_capture_analyses() {
    let Some(ns) = Namespace::for_replay("filter") else { return };
    let sample = format!("{}/samples/congestion_ecn_cnp.pcap", root());
    let frames = common::jsonl(std::path::Path::new(&sample), &[]).len().to_string();
    let filter = "ip.src == 10.0.0.1";
    let matching = common::frames_selected(std::path::Path::new(&sample), filter).len();
    let capture = ns.start_capture(&["--json", "-c", &frames, "--duration", "30s", "--interval", "1h", "-Y", filter]);
    ns.replay(&sample);
    let out = capture.wait_with_output().expect("the capture ends");
    assert!(out.status.success(), "capture failed");
    let live = final_report(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(live["totals"]["frames"], serde_json::json!(matching));
    assert!(live["flows"].as_array().expect("flows").iter().all(|f| f["src_ip"] == "10.0.0.1"));
}

#[test]
fn counters_are_snapshot_beside_the_capture_for_analyze_to_reconcile() {
    let Some(ns) = Namespace::for_replay("counters") else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    // a copy of sysfs's tree for one device, its receiver's CNPs sent already at 5
    let device = dir.path().join("sys/class/infiniband/mlx5_0");
    std::fs::create_dir_all(device.join("ports/1/hw_counters")).expect("dirs");
    std::fs::write(device.join("ports/1/hw_counters/np_cnp_sent"), "5\n").expect("a counter");
    let sample = format!("{}/samples/congestion_ecn_cnp.pcap", root());
    let frames = common::jsonl(std::path::Path::new(&sample), &[]).len().to_string();
    let written = dir.path().join("cap.pcap");
    let written = written.to_str().expect("UTF-8");
    let sysfs = dir.path().to_str().expect("UTF-8");
    let capture = ns.start_capture(&[
        "-w",
        written,
        "--json",
        "-c",
        &frames,
        "--duration",
        "30s",
        "--interval",
        "1h",
        "--counters",
        "mlx5_0",
        "--sysfs-root",
        sysfs,
    ]);
    ns.replay(&sample);
    let out = capture.wait_with_output().expect("the capture ends");
    assert!(out.status.success(), "the capture failed");
    let (before, after) = (format!("{written}.counters-before.txt"), format!("{written}.counters-after.txt"));
    for snapshot in [&before, &after] {
        let text = std::fs::read_to_string(snapshot).expect("a snapshot beside the capture");
        assert!(text.starts_with("time: ") && text.contains("np_cnp_sent 5"), "{text}");
    }
    let arg = format!("10.0.0.3={before},{after}");
    let report: Value =
        serde_json::from_str(&common::run_ok(&["analyze", "--json", "--counters", &arg, written])).expect("JSON");
    let row = &report["counters"][0]["rows"][0];
    assert_eq!((row["counter"].as_str(), row["delta"].as_u64()), (Some("np_cnp_sent"), Some(0)));
    assert_eq!((row["capture"].as_u64(), row["verdict"].as_str()), (Some(24), Some("capture_saw_more")));
}

#[test]
fn the_hosts_qp_table_is_taken_beside_the_capture_for_analyze_to_pair_by() {
    let Some(ns) = Namespace::for_replay("qps") else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    // what `rdma -j -d resource show qp` prints: host 10.0.0.3's QP, connected to QP 0x100
    let table = dir.path().join("rdma.json");
    let rows = r#"[{"ifindex":2,"ifname":"mlx5_0","port":1,"lqpn":512,"rqpn":256,"type":"RC","state":"RTS","sq-psn":0,"pid":77,"comm":"ib_write_bw"}]"#;
    std::fs::write(&table, rows).expect("a table");
    let sample = format!("{}/samples/congestion_ecn_cnp.pcap", root());
    let frames = common::jsonl(std::path::Path::new(&sample), &[]).len().to_string();
    let written = dir.path().join("cap.pcap");
    let written = written.to_str().expect("UTF-8");
    let command = format!("cat {}", table.display());
    let capture = ns.start_capture(&[
        "-w",
        written,
        "--json",
        "-c",
        &frames,
        "--duration",
        "30s",
        "--interval",
        "1h",
        "--qps",
        "--qps-cmd",
        &command,
    ]);
    ns.replay(&sample);
    let out = capture.wait_with_output().expect("the capture ends");
    assert!(out.status.success(), "the capture failed");
    for when in ["before", "after"] {
        let text = std::fs::read_to_string(format!("{written}.qps-{when}.txt")).expect("a table beside the capture");
        assert!(text.starts_with("time: ") && text.ends_with(rows), "{text}");
    }
    let arg = format!("10.0.0.3={written}.qps-after.txt");
    let report: Value =
        serde_json::from_str(&common::run_ok(&["analyze", "--json", "--qps", &arg, written])).expect("JSON");
    let table = &report["qp_tables"][0];
    assert_eq!((table["host"].as_str(), table["rows"].as_u64()), (Some("10.0.0.3"), Some(1)));
    // a command that fails ends the capture before it starts, naming it
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let argv = [bin, "capture", "-i", "vb", "-w", written, "-c", "1", "--qps", "--qps-cmd", "false"];
    let out = ns.command(&argv).output().expect("the capture runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("--qps-cmd \"false\": failed"), "{stderr}");
}
