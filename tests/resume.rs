//! `analyze --state` and `analyze --resume`: a capture cut into files, each analysed by a run
//! that goes on from the state the run before it saved, gets the report one run over every
//! file gives, key by key. Every sample and every reference and real capture is cut into three
//! files at several places (after its first frame, at thirds, before its last), with one and
//! two threads; a saved state read back with no file gives the same report; a state saved with
//! other options or another display filter, or one that is not a state, is refused.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use rocescope::capture::{Inputs, LinkType};

/// A capture's frames: time, length on the wire and bytes, and the link type they all share
/// (`None` when the capture mixes link types, which one classic pcap file cannot hold).
struct Frames {
    link_type: Option<LinkType>,
    records: Vec<(i64, u32, Vec<u8>)>,
}

fn frames(path: &Path) -> Frames {
    let (mut inputs, errors) = Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty(), "{errors:?}");
    let (mut link_type, mut records) = (None, Vec::new());
    let mut mixed = false;
    while let Some(frame) = inputs.next_frame() {
        let r = frame.record;
        mixed |= link_type.is_some_and(|l| l != r.link_type);
        link_type.get_or_insert(r.link_type);
        records.push((r.ts_ns, r.orig_len, r.data.to_vec()));
    }
    Frames { link_type: link_type.filter(|_| !mixed), records }
}

/// Writes `records` as a classic pcap file of nanosecond times.
fn write_pcap(path: &Path, link_type: LinkType, records: &[(i64, u32, Vec<u8>)]) {
    let mut out = Vec::new();
    for word in [0xa1b2_3c4d_u32, 0x0004_0002, 0, 0, 262_144, link_type.0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for (ts_ns, orig_len, data) in records {
        let (seconds, nanos) = (ts_ns.div_euclid(1_000_000_000), ts_ns.rem_euclid(1_000_000_000));
        let caplen = data.len() as u32;
        for word in [seconds as u32, nanos as u32, caplen, *orig_len] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(data);
    }
    fs::write(path, out).expect("part written");
}

/// The report of `args`, as JSON.
fn report(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&common::run_ok(args)).expect("a JSON report")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// `parts` analysed one after another, each run going on from the state the one before saved,
/// on `threads` threads: the last run's report, and the last state's path.
fn chained(parts: &[PathBuf], dir: &Path, threads: &str) -> (serde_json::Value, PathBuf) {
    let mut previous: Option<PathBuf> = None;
    let mut last = serde_json::Value::Null;
    for (i, part) in parts.iter().enumerate() {
        let state = dir.join(format!("after-{i}.state"));
        let mut args = vec!["analyze", "--json", "--threads", threads, text(part), "--state", text(&state)];
        if let Some(p) = &previous {
            args.extend(["--resume", text(p)]);
        }
        last = report(&args);
        previous = Some(state);
    }
    (last, previous.expect("a part"))
}

#[test]
fn files_analysed_one_after_another_report_as_one_run_of_them_all() {
    let dir = tempfile::tempdir().expect("temp dir");
    for path in common::samples_and_shared_captures() {
        let frames = frames(&path);
        let Some(link_type) = frames.link_type else {
            eprintln!("SKIPPED: {} mixes link types, which one pcap file cannot hold", path.display());
            continue;
        };
        let n = frames.records.len();
        for (first, second) in [(1, n / 2), (n / 3, 2 * n / 3), (n / 2, n.saturating_sub(1))] {
            if !(0 < first && first < second && second < n) {
                continue;
            }
            let parts: Vec<PathBuf> = [0..first, first..second, second..n]
                .into_iter()
                .enumerate()
                .map(|(i, range)| {
                    let part = dir.path().join(format!("part-{i}.pcap"));
                    write_pcap(&part, link_type, &frames.records[range]);
                    part
                })
                .collect();
            let one_run = report(&["analyze", "--json", text(&parts[0]), text(&parts[1]), text(&parts[2])]);
            let place = format!("{} cut before frames {} and {}", path.display(), first + 1, second + 1);
            for threads in ["1", "2"] {
                let (last, state) = chained(&parts, dir.path(), threads);
                assert_eq!(last, one_run, "{place}, {threads} thread(s)");
                let saved = report(&["analyze", "--json", "--resume", text(&state)]);
                assert_eq!(saved, one_run, "{place}: the last state's own report");
            }
        }
    }
}

#[test]
fn a_state_goes_on_only_with_its_own_options_and_filter() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/congestion_ecn_cnp.pcap");
    let state = dir.path().join("a.state");
    common::run_ok(&["analyze", "-q", text(&sample), "-Y", "udp", "--state", text(&state)]);
    let refused = |extra: &[&str]| {
        let mut args = vec!["analyze", "--resume", text(&state), text(&sample)];
        args.extend(extra);
        let out = common::run(&args);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, message) = refused(&["-Y", "udp", "--link-speed", "400G"]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("other analysis options"), "{message}");
    let (code, message) = refused(&[]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("display filter \"udp\"") && message.contains("not none"), "{message}");
    let (code, _) = refused(&["-Y", "udp"]);
    assert_eq!(code, Some(0));

    let not_a_state = dir.path().join("not.state");
    fs::write(&not_a_state, b"PCAPSTATE\x01\x00\x00\x00").expect("written");
    let out = common::run(&["analyze", "--resume", text(&not_a_state)]);
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains(text(&not_a_state)) && message.contains("not a saved analysis"), "{message}");
}
