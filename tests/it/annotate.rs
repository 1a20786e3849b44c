//! `annotate` writes every frame unchanged into a pcapng file with the analysis as comments:
//! read back with tshark, `frame.comment contains "rocescope.analysis.retransmission"` selects
//! exactly the frames the analysis calls retransmissions (and likewise for every analysis
//! field); the frames themselves decode as before.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn annotated(input: &Path, dir: &Path) -> PathBuf {
    let out = dir.join(format!("{}.pcapng", input.file_stem().expect("a name").to_string_lossy()));
    common::run_ok(&["annotate", input.to_str().expect("UTF-8"), "-o", out.to_str().expect("UTF-8")]);
    out
}

fn frames(file: &Path, tool: &str, filter: &str) -> Vec<String> {
    let text = match tool {
        "tshark" => {
            let out = Command::new("tshark")
                .arg("-r")
                .arg(file)
                .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
                .output()
                .expect("tshark runs");
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
        _ => return common::frames_selected(file, filter).iter().map(u64::to_string).collect(),
    };
    text.lines().map(str::to_string).collect()
}

fn inputs() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/reordering.pcap")];
    if let Some(dir) = common::shared_subdir("reference-captures") {
        for name in [
            "loss_gbn.pcap",
            "loss_after_tap_timeout.pcap",
            "mirror_duplicates.pcap",
            "bad_icrc.pcap",
            "truncated_snaplen.pcap",
            "formats_pcapng.pcapng",
        ] {
            files.push(dir.join(name));
        }
    }
    files
}

#[test]
fn comments_select_exactly_what_the_analysis_found() {
    if !common::tshark_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for input in inputs() {
        let out = annotated(&input, dir.path());
        for field in [
            "rocescope.analysis.retransmission",
            "rocescope.analysis.gap",
            "rocescope.analysis.late_arrival",
            "rocescope.analysis.mirror_duplicate",
        ] {
            let theirs = frames(&out, "tshark", &format!("frame.comment contains \"{field}\""));
            let ours = frames(&input, "rocescope", field);
            assert_eq!(theirs, ours, "{}: {field}", input.display());
        }
        let bad = frames(&out, "tshark", "frame.comment contains \"rocescope.icrc.status=bad\"");
        assert_eq!(bad, frames(&input, "rocescope", "rocescope.icrc.status == \"bad\""), "{}", input.display());
    }
}

#[test]
fn the_frames_are_unchanged_and_the_findings_are_the_section_comment() {
    let dir = tempfile::tempdir().expect("temp dir");
    for input in inputs() {
        let out = annotated(&input, dir.path());
        let fields = [
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "frame.time_epoch",
            "-e",
            "frame.len",
            "-e",
            "frame.cap_len",
            "-e",
            "eth.addr",
            "-e",
            "ip.addr",
            "-e",
            "infiniband.bth",
            "-e",
            "rocescope.icrc.status",
        ];
        let decode = |file: &Path| {
            let mut args = vec!["packets"];
            args.extend_from_slice(&fields);
            args.push(file.to_str().expect("UTF-8"));
            common::run_ok(&args)
        };
        assert_eq!(decode(&out), decode(&input), "{}", input.display());
        if Command::new("capinfos").arg("-h").output().is_ok_and(|o| o.status.success()) {
            let info = Command::new("capinfos").arg("-k").arg(&out).output().expect("capinfos runs");
            let info = String::from_utf8_lossy(&info.stdout);
            assert!(info.contains("rocescope") && info.contains("findings"), "{info}");
        }
    }
}

#[test]
fn annotate_refuses_to_overwrite_its_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("in.pcap");
    std::fs::copy(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/bad_icrc.pcap"), &input).expect("copy");
    let out = common::run(&["annotate", input.to_str().expect("UTF-8"), "-o", input.to_str().expect("UTF-8")]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to overwrite"));
}

#[test]
fn the_section_comment_counts_the_frames_with_records_and_those_the_findings_name() {
    let capinfos = Command::new("capinfos").arg("-h").output().is_ok_and(|o| o.status.success());
    if !common::tshark_available() || !capinfos {
        eprintln!("SKIPPED: tshark or capinfos is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    // its findings name PFC and PAUSE frames, which have no record of their own
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/pfc_storm.pcap");
    let out = annotated(&input, dir.path());
    let own = frames(&out, "tshark", "frame.comment && !(frame.comment matches \"^rocescope/1 finding=\")").len();
    let report: serde_json::Value =
        serde_json::from_str(&common::run_ok(&["analyze", "-q", "--json", input.to_str().expect("UTF-8")]))
            .expect("JSON");
    let mut named: Vec<u64> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .flat_map(|f| f["evidence"]["frames"].as_array().into_iter().flatten().filter_map(|n| n.as_u64()))
        .collect();
    named.sort_unstable();
    named.dedup();
    assert!(!named.is_empty() && own > 0);
    let info = Command::new("capinfos").arg("-k").arg(&out).output().expect("capinfos runs");
    let info = String::from_utf8_lossy(&info.stdout);
    let said = format!("{own} with analysis records, {} named by findings", named.len());
    assert!(info.contains(&said), "{said:?} not in {info}");
}
