//! `rocescope merge`: the parts of a capture, each analysed on its own with `analyze --state`,
//! merge into the report one run over every part gives, key by key, whatever the order the
//! states are named in and however the merges are grouped (merge(merge(a, b), c) =
//! merge(a, merge(b, c))). Every sample and every reference and real capture is cut into three
//! parts at several places, and into two where a cut leaves the most to carry across (inside a
//! retransmit episode, inside a pause, between a CM exchange and its data, between a request
//! and its ACK); the benchmark's traffic is cut in its first 200,000 frames and inside its
//! first retransmit episode. A part longer than its state keeps can only come first; states
//! that cannot make one analysis are refused with a message that names them.

use crate::common;

use std::path::{Path, PathBuf};

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn report(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&common::run_ok(args)).expect("a JSON report")
}

/// Each part analysed on its own, its state saved beside it: the states' paths.
fn analysed_apart(parts: &[PathBuf]) -> Vec<PathBuf> {
    analysed_keeping(parts, "65536")
}

/// [`analysed_apart`], each state keeping `frames` of its part's first frames.
fn analysed_keeping(parts: &[PathBuf], frames: &str) -> Vec<PathBuf> {
    parts
        .iter()
        .map(|part| {
            let state = part.with_extension("state");
            common::run_ok(&["analyze", "-q", text(part), "--state", text(&state), "--keep-frames", frames]);
            state
        })
        .collect()
}

/// The report `merge` gives of `states`, saving the merged state into `saved` if given.
fn merged(states: &[&PathBuf], saved: Option<&Path>) -> serde_json::Value {
    let mut args = vec!["merge", "--json"];
    args.extend(states.iter().map(|s| text(s)));
    if let Some(path) = saved {
        args.extend(["--state", text(path)]);
    }
    report(&args)
}

/// The report of one run over `parts`.
fn one_run(parts: &[PathBuf]) -> serde_json::Value {
    let mut args = vec!["analyze", "--json"];
    args.extend(parts.iter().map(|p| text(p)));
    report(&args)
}

#[test]
fn parts_analysed_apart_merge_into_one_runs_report_in_any_order_and_grouping() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::split::in_three(dir.path(), |parts, place| {
        let whole = one_run(parts);
        let [a, b, c] = &analysed_apart(parts)[..] else { unreachable!("three parts") };
        assert_eq!(merged(&[c, a, b], None), whole, "{place}: merged in the order c, a, b");
        let (ab, bc) = (dir.path().join("ab.state"), dir.path().join("bc.state"));
        merged(&[a, b], Some(&ab));
        merged(&[b, c], Some(&bc));
        assert_eq!(merged(&[&ab, c], None), whole, "{place}: merge(merge(a, b), c)");
        assert_eq!(merged(&[a, &bc], None), whole, "{place}: merge(a, merge(b, c))");
    });
}

#[test]
fn cuts_where_the_most_crosses_merge_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::split::at_boundaries(dir.path(), |path, kind, after, parts| {
        let whole = one_run(parts);
        let [a, b] = &analysed_apart(parts)[..] else { unreachable!("two parts") };
        let place = format!("{} cut inside {kind}, after frame {after}", path.display());
        assert_eq!(merged(&[a, b], None), whole, "{place}");
        assert_eq!(merged(&[b, a], None), whole, "{place}, named the other way round");
    });
}

#[test]
fn the_benchmark_traffic_cut_in_six_parts_merges_as_one_run() {
    // four parts of the first 200,000 frames, then a part up to just after the first resend
    // of the first retransmit episode and one inside that episode; the rest is left out
    let dir = tempfile::tempdir().expect("temp dir");
    let (capture, first) = common::split::benchmark_with_episode(dir.path());
    let cuts = vec![50_000, 100_000, 150_000, 200_000, first, first + 10_000];
    let mut parts = common::split::split(&capture, dir.path(), |_| cuts);
    parts.pop();
    assert_eq!(parts.len(), 6);
    let whole = one_run(&parts);
    let states = analysed_apart(&parts);
    let shuffled: Vec<&PathBuf> = [3, 0, 5, 1, 4, 2].iter().map(|&i| &states[i]).collect();
    assert_eq!(merged(&shuffled, None), whole);
    // a merge of the last two parts (fewer frames than a state keeps) merged after the rest
    let (first_four, last_two) = (dir.path().join("first.state"), dir.path().join("last.state"));
    merged(&[&states[2], &states[0], &states[3], &states[1]], Some(&first_four));
    merged(&[&states[5], &states[4]], Some(&last_two));
    assert_eq!(merged(&[&last_two, &first_four], None), whole, "two merges merged");
}

#[test]
fn captures_of_taps_taken_at_the_same_time_merge_as_one_run_interleaving_them() {
    // the second of each pair starts later, or as early and ends sooner
    let dir = tempfile::tempdir().expect("temp dir");
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples");
    for (first, second) in [("congestion_ecn_cnp", "incast"), ("reordering", "rc_write_healthy")] {
        let taps: Vec<PathBuf> = [first, second].iter().map(|name| samples.join(format!("{name}.pcap"))).collect();
        let states: Vec<PathBuf> = taps
            .iter()
            .map(|tap| {
                let state = dir.path().join(tap.file_name().expect("a name")).with_extension("state");
                common::run_ok(&["analyze", "-q", text(tap), "--state", text(&state)]);
                state
            })
            .collect();
        let whole = one_run(&taps);
        assert_eq!(merged(&[&states[1], &states[0]], None), whole, "{first} and {second}");
        let both = dir.path().join("both.state");
        merged(&[&states[0], &states[1]], Some(&both));
        assert_eq!(merged(&[&both], None), whole, "{first} and {second}, saved merged");
    }

    // with -Y, the frames left out cannot be put among the others'
    let filtered: Vec<PathBuf> = ["congestion_ecn_cnp", "incast"]
        .iter()
        .map(|name| {
            let state = dir.path().join(format!("{name}-udp.state"));
            let tap = samples.join(format!("{name}.pcap"));
            common::run_ok(&["analyze", "-q", text(&tap), "-Y", "udp", "--state", text(&state)]);
            state
        })
        .collect();
    let (code, message) = refused(&["merge", text(&filtered[0]), text(&filtered[1])]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("saved with -Y"), "{message}");
}

#[test]
fn merge_writes_the_report_files_analyze_writes_and_fails_on_findings_as_it_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/loss_go_back_n.pcap");
    let parts = common::split::split(&sample, dir.path(), |n| vec![n / 2]);
    let states = analysed_apart(&parts);
    let (merged_dir, one_run_dir) = (dir.path().join("merged"), dir.path().join("one-run"));
    let (merged_page, one_run_page) = (dir.path().join("merged.html"), dir.path().join("one-run.html"));
    let mut args = vec!["merge", "--out", text(&merged_dir), "--html", text(&merged_page)];
    args.extend(states.iter().map(|s| text(s)));
    common::run_ok(&args);
    let mut args = vec!["analyze", "-q", "--out", text(&one_run_dir), "--html", text(&one_run_page)];
    args.extend(parts.iter().map(|p| text(p)));
    common::run_ok(&args);
    for name in ["report.json", "flows.csv", "retransmit_episodes.csv", "findings.csv", "pfc.csv", "index.html"] {
        let read = |dir: &Path| std::fs::read(dir.join(name)).expect("written");
        assert_eq!(read(&merged_dir), read(&one_run_dir), "{name}");
    }
    assert_eq!(std::fs::read(&merged_page).expect("written"), std::fs::read(&one_run_page).expect("written"));

    // the sample's go-back-N recovery is a warning
    let mut args = vec!["merge", "--fail-on", "warning"];
    args.extend(states.iter().map(|s| text(s)));
    let (code, message) = refused(&args);
    assert_eq!(code, Some(4), "{message}");
}

/// The exit status and standard error of `rocescope args`.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let out = common::run(args);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn parts_longer_than_their_kept_frames_merge_where_the_analyses_meet() {
    // the benchmark's traffic in three parts of 80,000 frames and more, merged in any order
    // and grouping: each part's analysis meets the one run's within its kept frames
    let dir = tempfile::tempdir().expect("temp dir");
    let (capture, first_resend) = common::split::benchmark_with_episode(dir.path());
    let parts = common::split::split(&capture, dir.path(), |n| {
        assert!(n > 180_000 + 65_536 + 10_000, "a last part longer than a state keeps: {n} frames");
        vec![100_000, 180_000]
    });
    let whole = one_run(&parts);
    let [a, b, c] = &analysed_apart(&parts)[..] else { unreachable!("three parts") };
    assert_eq!(merged(&[c, a, b], None), whole, "merged in the order c, a, b");
    let bc = dir.path().join("bc.state");
    merged(&[c, b], Some(&bc));
    assert_eq!(merged(&[&bc, a], None), whole, "merge(a, merge(b, c))");

    // a part cut after the first loss, keeping fewer frames than the loss is remembered for:
    // the lossy flow's memory of it differs, and the merge says so
    let parts = common::split::split(&capture, dir.path(), |_| vec![first_resend + 20]);
    let states = analysed_keeping(&parts, "30000");
    let (code, message) = refused(&["merge", text(&states[0]), text(&states[1])]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("cannot go on exactly") && message.contains("state differs"), "{message}");
}

#[test]
fn merges_of_parts_keeping_few_frames_are_exact_or_refused() {
    // every sample and reference and real capture in three parts that keep 5, 20 or 200
    // frames each: a merge gives one run's report, key by key, or is refused; never another
    let dir = tempfile::tempdir().expect("temp dir");
    for kept in ["5", "20", "200"] {
        let (mut exact, mut refusals) = (0, 0);
        common::split::in_three(dir.path(), |parts, place| {
            let [a, b, c] = &analysed_keeping(parts, kept)[..] else { unreachable!("three parts") };
            let out = common::run(&["merge", "--json", text(c), text(a), text(b)]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => {
                    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
                    assert_eq!(report, one_run(parts), "{place}, parts keeping {kept} frames");
                    exact += 1;
                }
                Some(2) if stderr.contains("cannot go on exactly") => refusals += 1,
                code => panic!("{place}: exit status {code:?}: {stderr}"),
            }
        });
        eprintln!("parts keeping {kept} frames: {exact} merges exact, {refusals} refused");
        assert!(exact > 0, "parts keeping {kept} frames: none merged");
    }
}

#[test]
fn states_that_cannot_make_one_analysis_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/congestion_ecn_cnp.pcap");
    let parts = common::split::split(&sample, dir.path(), |n| vec![n / 2]);
    let [a, b] = &analysed_apart(&parts)[..] else { unreachable!("two parts") };
    let saved = |name: &str, extra: &[&str]| {
        let state = dir.path().join(name);
        let mut args = vec!["analyze", "-q", text(&parts[1]), "--state", text(&state)];
        args.extend(extra);
        common::run_ok(&args);
        state
    };

    let other_options = saved("fast.state", &["--link-speed", "400G"]);
    let (code, message) = refused(&["merge", text(a), text(&other_options)]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("other analysis options (--link-speed 100G and 400G)"), "{message}");

    let no_acks = "infiniband.bth.opcode != 17";
    let filtered = saved("filtered.state", &["-Y", no_acks]);
    let (code, message) = refused(&["merge", text(a), text(&filtered)]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("other display filters"), "{message}");
    // parts saved with the same -Y merge into one run's report under it
    let filtered_first = dir.path().join("filtered-first.state");
    common::run_ok(&["analyze", "-q", text(&parts[0]), "-Y", no_acks, "--state", text(&filtered_first)]);
    let under_filter = report(&["analyze", "--json", "-Y", no_acks, text(&parts[0]), text(&parts[1])]);
    assert_eq!(merged(&[&filtered, &filtered_first], None), under_filter, "-Y {no_acks}");

    let numbered = saved("numbered.state", &["-Y", "frame.number > 3"]);
    let (code, message) = refused(&["merge", text(&numbered)]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("frame numbers or times relative to the first frame"), "{message}");

    // a state that went on from another holds that one's files too
    let went_on = dir.path().join("went-on.state");
    common::run_ok(&["analyze", "-q", text(&parts[1]), "--resume", text(a), "--state", text(&went_on)]);
    let (code, message) = refused(&["merge", text(a), text(&went_on)]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains(&format!("both analysed {}", text(&parts[0]))), "{message}");

    let dataset = dir.path().join("dataset");
    let exported = dir.path().join("export.state");
    common::run_ok(&["export", "-q", text(&parts[1]), "--dataset", text(&dataset), "--state", text(&exported)]);
    let (code, message) = refused(&["merge", text(a), text(&exported)]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("saved by export"), "{message}");

    // a state that went on from an export's keeps no frames: it can only come first
    let later = dir.path().join("later");
    std::fs::create_dir_all(&later).expect("a directory");
    let thirds = common::split::split(&sample, &later, |n| vec![n / 3, 2 * n / 3]);
    let (exported_first, went_on) = (later.join("export.state"), later.join("went-on.state"));
    common::run_ok(&["export", "-q", text(&thirds[1]), "--dataset", text(&dataset), "--state", text(&exported_first)]);
    common::run_ok(&["analyze", "-q", text(&thirds[2]), "--resume", text(&exported_first), "--state", text(&went_on)]);
    let before = &analysed_apart(&thirds[..1])[0];
    let (code, message) = refused(&["merge", text(before), text(&went_on)]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("does not keep its first frames"), "{message}");

    let (code, message) = refused(&["merge", text(a), text(&sample)]);
    assert_eq!(code, Some(1), "{message}");
    assert!(message.contains(text(&sample)) && message.contains("not a saved analysis"), "{message}");

    // the merged state is not written over one of the states merged
    let (code, message) = refused(&["merge", text(a), text(b), "--state", text(b)]);
    assert_eq!(code, Some(3), "{message}");
    assert!(message.contains("refusing to overwrite the input"), "{message}");
}

#[test]
fn a_copy_the_parts_before_would_have_waited_for_longer_refuses_the_merge() {
    // ACKs 40 µs after their WRITEs in the first part make the flow's NAKed copy wait 80 µs
    // in one run; the second part alone has measured ACKs 5 µs after their WRITEs (every
    // 100th, as many as both analyses remember) and waits one reorder window, deciding after
    // its kept frames that the late original was the resend
    use common::capture::*;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut c = Capture::new();
    let at = |psn: u32| T0 + i64::from(psn) * US;
    // past the 10,000 frames the doubled-mirror decision is taken within
    for psn in (1..=12_000).filter(|&p| p != 11_990) {
        let round_trip = match psn {
            2 | 4 => Some(40 * US),
            _ if psn % 100 == 0 && psn < 10_000 => Some(5 * US),
            _ => None,
        };
        c.add(at(psn), &write_only(A, B, psn, round_trip.is_some()));
        if let Some(after) = round_trip {
            c.add(at(psn) + after, &ack(B, A, psn, 0x1F));
        }
    }
    let nak_at = at(11_991) + US / 2;
    c.add(nak_at, &nak(B, A, 11_990));
    c.add(nak_at + US, &write_only(A, B, 11_990, false));
    stream(&mut c, A, B, &(11_990..=12_005).collect::<Vec<_>>(), nak_at + 28 * US);
    let capture = c.by_time().write();
    // the cut after the first part's ACKs (44 WRITEs and 2 ACKs)
    let parts = common::split::split(&capture, dir.path(), |_| vec![46]);
    let whole = one_run(&parts);
    assert_eq!(counts(flow(&whole, 1, 0x200)), [0, 0, 11, 1], "one run: 11,990 late, and resent to 12,000");
    let states = analysed_keeping(&parts, "10100");
    let (code, message) = refused(&["merge", text(&states[0]), text(&states[1])]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("decided by answer times the parts before change"), "{message}");
}
