//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

pub mod capture;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The `shared/` folder that sits beside the checkout, if present.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    dir.is_dir().then_some(dir)
}

/// A folder under `shared/`, or `None` with a message saying the test is skipped.
pub fn shared_subdir(name: &str) -> Option<PathBuf> {
    match shared_dir().map(|d| d.join(name)).filter(|d| d.is_dir()) {
        Some(dir) => Some(dir),
        None => {
            eprintln!("SKIPPED: ../shared/{name} is not beside the checkout");
            None
        }
    }
}

pub fn rocescope() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

/// Runs rocescope with `args`, asserting success, and returns stdout.
pub fn run_ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "rocescope {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

pub fn run(args: &[&str]) -> Output {
    rocescope().args(args).output().expect("rocescope runs")
}

/// `packets --format jsonl` of a file, parsed.
pub fn jsonl(path: &std::path::Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let path = path.to_str().expect("UTF-8 path");
    let mut args = vec!["packets", "--format", "jsonl"];
    args.extend_from_slice(extra);
    args.push(path);
    run_ok(&args).lines().map(|l| serde_json::from_str(l).expect("valid JSON line")).collect()
}

/// tshark's opcode, PSN and destination QP per frame, one tab-separated line each (empty
/// fields where it decoded no BTH); `None` when tshark is not installed.
pub fn tshark_bth_fields(path: &std::path::Path) -> Option<String> {
    let out = Command::new("tshark")
        .args(["--disable-protocol", "tftp", "-r"])
        .arg(path)
        .args([
            "-T",
            "fields",
            "-e",
            "infiniband.bth.opcode",
            "-e",
            "infiniband.bth.psn",
            "-e",
            "infiniband.bth.destqp",
        ])
        .output()
        .ok()?;
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).expect("UTF-8"))
}

/// rocescope's opcode, PSN and destination QP per frame, in tshark's field format.
pub fn rocescope_bth_fields(path: &std::path::Path) -> String {
    jsonl(path, &[])
        .iter()
        .map(|f| {
            let n = |k: &str| f[k].as_u64().map(|v| v.to_string()).unwrap_or_default();
            let qp = f["dst_qp"].as_u64().map(|q| format!("0x{q:06x}")).unwrap_or_default();
            format!("{}\t{}\t{}\n", n("opcode"), n("psn"), qp)
        })
        .collect()
}

/// Is tshark installed? Says the test is skipped when it is not.
pub fn tshark_available() -> bool {
    let found = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: tshark is not installed");
    }
    found
}

/// The reference and real RoCE captures under `shared/` (not the native InfiniBand one, which
/// rocescope does not decode yet), sorted.
pub fn roce_captures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["reference-captures", "captures/real"] {
        let Some(dir) = shared_subdir(dir) else { continue };
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("listing")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
            .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("native_ib")))
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

/// The numbers of the frames of `file` that `packets -Y filter` shows.
pub fn frames_selected(file: &std::path::Path, filter: &str) -> Vec<u64> {
    let file = file.to_str().expect("UTF-8 path");
    run_ok(&["packets", "-Y", filter, "-T", "fields", "-e", "frame.number", file])
        .lines()
        .map(|l| l.trim().parse().expect("a frame number"))
        .collect()
}
