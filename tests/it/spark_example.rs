//! The Spark example (`examples/spark/`) in local mode, on two executors: a capture cut into
//! three rotated files, a second capture, and a third cut just after a loss into files longer
//! than a state keeps, each file analysed by a task of its own and the states merged in a tree
//! (the third's merge refused, its report the export's). Its reports equal `analyze` of each capture's files in one run,
//! key by key; its Spark SQL over the dataset's frames finds the reports' headline numbers (it
//! exits with status 1 otherwise); the states it leaves go on. Skipped without pyspark or a
//! Java runtime.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn spark_available() -> bool {
    let pyspark = Command::new("python3").args(["-c", "import pyspark"]).output().is_ok_and(|o| o.status.success());
    let java = Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    if !(pyspark && java) {
        eprintln!("SKIPPED: the Spark example needs pyspark and a Java runtime");
    }
    pyspark && java
}

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn report(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&common::run_ok(args)).expect("a JSON report")
}

fn read_report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the report")).expect("a JSON report")
}

#[test]
fn the_spark_example_reports_each_capture_as_one_run_of_its_files() {
    if !spark_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples");
    let rotated = common::split::split(&samples.join("loss_go_back_n.pcap"), dir.path(), |n| vec![n / 3, 2 * n / 3]);
    assert_eq!(rotated.len(), 3);
    let other = samples.join("congestion_ecn_cnp.pcap");
    // a capture cut just after its first loss, its second file longer than a state keeps:
    // the lossy flow remembers the loss differently in each file's analysis, and the merge is
    // refused
    let long = dir.path().join("long.pcap");
    common::run_ok(&["generate", "--benchmark", "mixed", "--size", "400M", text(&long)]);
    let first_resend = common::frames_selected(&long, "rocescope.analysis.retransmission")[0] as usize;
    let long_files = common::split::split(&long, dir.path(), |n| {
        assert!(n > first_resend + 20 + 65_536, "a second file longer than a state keeps: {n} frames");
        vec![first_resend + 20]
    });
    let (dataset, reports) = (dir.path().join("dataset"), dir.path().join("reports"));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/spark/analyse_captures.py");
    let mut args: Vec<String> = [
        text(&script),
        "--master",
        "local[2]",
        "--rocescope",
        env!("CARGO_BIN_EXE_rocescope"),
        "--dataset",
        text(&dataset),
        "--reports",
        text(&reports),
    ]
    .map(String::from)
    .to_vec();
    args.extend(rotated.iter().map(|p| format!("rotated={}", p.display())));
    args.push(format!("other={}", other.display()));
    args.extend(long_files.iter().map(|p| format!("long={}", p.display())));
    // Spark's local mode on the loopback address, whatever the host's name resolves to
    let out = Command::new("python3").args(&args).env("SPARK_LOCAL_IP", "127.0.0.1").output().expect("python3 runs");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}\n{}", String::from_utf8_lossy(&out.stderr));
    // every headline number of both captures, as Spark SQL computed it and as reported
    assert_eq!(printed.lines().filter(|l| l.starts_with("  ")).count(), 21, "{printed}");
    assert!(!printed.contains("differs"), "{printed}");
    assert!(printed.contains("long: reported from the export's analysis"), "{printed}");
    assert!(!printed.contains("rotated: reported from"), "{printed}");

    let rotated_args: Vec<&str> = rotated.iter().map(|p| text(p)).collect();
    let one_run = report(&[&["analyze", "--json"], &rotated_args[..]].concat());
    assert_eq!(read_report(&reports.join("rotated.json")), one_run, "the rotated capture's report");
    assert_eq!(read_report(&reports.join("other.json")), report(&["analyze", "--json", text(&other)]));
    assert!(reports.join("rotated/merge-0-00000.state").is_file(), "the first two files' states merged first");
    for state in ["rotated.state", "rotated.dataset.state"] {
        let state = reports.join(state);
        assert_eq!(report(&["analyze", "--json", "--resume", text(&state)]), one_run, "{}", state.display());
    }
    let long_args: Vec<&str> = long_files.iter().map(|p| text(p)).collect();
    let long_run = report(&[&["analyze", "--json"], &long_args[..]].concat());
    assert_eq!(read_report(&reports.join("long.json")), long_run, "the long capture's report");
    for capture in ["rotated", "other", "long"] {
        assert!(dataset.join("frames").join(format!("capture={capture}")).is_dir(), "{capture}'s frames");
    }
}
