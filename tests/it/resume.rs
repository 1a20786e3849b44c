//! `analyze --state` and `analyze --resume`: a capture cut into files, each analysed by a run
//! that goes on from the state the run before it saved, gets the report one run over every
//! file gives, key by key. Every sample and every reference and real capture is cut into three
//! files at several places (after its first frame, at thirds, before its last), with one and
//! two threads, and into two where a cut leaves the most to carry across (inside a retransmit
//! episode, inside a pause, between a CM exchange and its data, between a request and its
//! ACK); a long capture of the benchmark's traffic is cut after its first 200,000 frames and
//! inside its first retransmit episode. A saved state read back with no file gives the same
//! report; a state saved with other options or another display filter, or one that is not a
//! state, is refused.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

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
    common::split::in_three(dir.path(), |parts, place| {
        let one_run = report(&["analyze", "--json", text(&parts[0]), text(&parts[1]), text(&parts[2])]);
        for threads in ["1", "2"] {
            let (last, state) = chained(parts, dir.path(), threads);
            assert_eq!(last, one_run, "{place}, {threads} thread(s)");
            let saved = report(&["analyze", "--json", "--resume", text(&state)]);
            assert_eq!(saved, one_run, "{place}: the last state's own report");
        }
    });
}

#[test]
fn cuts_where_the_analysis_carries_most_across_change_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::split::at_boundaries(dir.path(), |path, kind, after, parts| {
        let one_run = report(&["analyze", "--json", text(&parts[0]), text(&parts[1])]);
        let (last, _) = chained(parts, dir.path(), "1");
        assert_eq!(last, one_run, "{} cut inside {kind}, after frame {after}", path.display());
    });
}

#[test]
fn a_long_capture_cut_inside_its_first_retransmit_episode_goes_on_as_one_run() {
    // the benchmark traffic's first 200,000 frames, then the rest cut just after the first
    // resend of its first retransmit episode (the doubled-mirror decision long taken)
    let dir = tempfile::tempdir().expect("temp dir");
    let (capture, first) = common::split::benchmark_with_episode(dir.path());
    let parts = common::split::split(&capture, dir.path(), |_| vec![200_000, first]);
    assert_eq!(parts.len(), 3);
    let one_run = report(&["analyze", "--json", text(&parts[0]), text(&parts[1]), text(&parts[2])]);
    let (last, _) = chained(&parts, dir.path(), "2");
    assert_eq!(last, one_run);
}

#[test]
fn a_state_goes_on_only_with_its_own_options_and_filter() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/congestion_ecn_cnp.pcap");
    let state = dir.path().join("a.state");
    common::run_ok(&["analyze", "-q", text(&sample), "-Y", "udp", "--state", text(&state)]);
    // the capture's next file (a copy: the state already holds the sample itself)
    let next = dir.path().join("next.pcap");
    fs::copy(&sample, &next).expect("copied");
    let go_on = |file: &Path, extra: &[&str]| {
        let mut args = vec!["analyze", "--resume", text(&state), text(file)];
        args.extend(extra);
        let out = common::run(&args);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let refused = |extra: &[&str]| go_on(&next, extra);
    let (code, message) = refused(&["-Y", "udp", "--link-speed", "400G", "--reorder-window-us", "50"]);
    assert_eq!(code, Some(2), "{message}");
    assert_eq!(
        message,
        format!(
            "rocescope: {} was saved with --link-speed 100G (this run: 400G), --reorder-window-us 20 (this run: 50): --resume takes the options it was saved with\n",
            text(&state)
        )
    );
    let (code, message) = go_on(&sample, &["-Y", "udp"]);
    assert_eq!(code, Some(2), "{message}");
    assert_eq!(
        message,
        format!(
            "rocescope: {} already holds {}: --resume goes on with the capture's next files, and would count its frames twice\n",
            text(&state),
            text(&sample)
        )
    );
    let (code, message) = refused(&[]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("display filter \"udp\"") && message.contains("not none"), "{message}");
    let (code, _) = refused(&["-Y", "udp"]);
    assert_eq!(code, Some(0));

    // a state is not saved over an input
    let copy = dir.path().join("copy.pcap");
    fs::copy(&sample, &copy).expect("copied");
    let out = common::run(&["analyze", "-q", text(&copy), "--state", text(&copy)]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to overwrite the input"));
    assert_eq!(fs::read(&copy).expect("read"), fs::read(&sample).expect("read"));

    let not_a_state = dir.path().join("not.state");
    fs::write(&not_a_state, b"PCAPSTATE\x01\x00\x00\x00").expect("written");
    let out = common::run(&["analyze", "--resume", text(&not_a_state)]);
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains(text(&not_a_state)) && message.contains("not a saved analysis"), "{message}");
}
