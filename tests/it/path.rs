//! `analyze --tap`: several taps of one path generated with known clocks and faults
//! (`rocescope::generate::path`); the report's `path` must say exactly what each hop did, and
//! the rest of the report must read each packet once.

use crate::common;

use std::path::{Path, PathBuf};

use rocescope::generate::path::{PATH_SAMPLE_FILES, Plan, Truth, path_set};
use rocescope::generate::write_scenario;
use serde_json::Value;

/// Writes the plan's captures into `dir`; their paths and the truth.
fn write(plan: &Plan, dir: &Path) -> (Vec<PathBuf>, Truth) {
    let names: Vec<&'static str> =
        plan.taps.iter().map(|t| &*Box::leak(format!("{t}.pcapng").into_boxed_str())).collect();
    let set = path_set(plan, &names);
    for capture in &set.captures {
        write_scenario(dir, capture).expect("write a tap");
    }
    (names.iter().map(|n| dir.join(n)).collect(), set.truth)
}

fn tap_args(names: &[&str], files: &[PathBuf]) -> Vec<String> {
    names.iter().zip(files).flat_map(|(t, f)| ["--tap".to_string(), format!("{t}={}", f.display())]).collect()
}

fn analyze(args: &[String]) -> Value {
    let mut all = vec!["analyze".to_string(), "--json".to_string()];
    all.extend_from_slice(args);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    serde_json::from_str(&common::run_ok(&all)).expect("the JSON report")
}

fn check_hops(path: &Value, truth: &Truth) {
    let hops = path["hops"].as_array().expect("hops");
    assert_eq!(hops.len(), truth.hops.len());
    for (hop, want) in hops.iter().zip(&truth.hops) {
        let name = format!("{}->{}", want.from, want.to);
        assert_eq!((hop["from"].as_str(), hop["to"].as_str()), (Some(want.from), Some(want.to)), "{name}");
        assert_eq!(hop["matched"], want.matched, "{name}: matched");
        assert_eq!(hop["lost"], want.lost, "{name}: lost");
        assert_eq!(hop["ce_added"], want.ce_added, "{name}: CE added");
        let rewritten: u64 = hop["dscp_rewritten"].as_object().expect("map").values().filter_map(Value::as_u64).sum();
        assert_eq!(rewritten, want.dscp_rewritten, "{name}: DSCP rewritten");
        if want.dscp_rewritten > 0 {
            assert_eq!(hop["dscp_rewritten"]["26->0"], want.dscp_rewritten, "{name}");
        }
        assert_eq!(hop["ttl_decrement"], 1, "{name}: one router a hop");
        assert_eq!(hop["reordered"], 0, "{name}: nothing overtakes on the generated hops");
    }
    let listed = path["losses"].as_array().expect("losses");
    let after = |l: &&Value| l["lost_on"].as_str().is_some_and(|on| on.starts_with("after:"));
    let lost: u64 = truth.hops.iter().map(|h| h.lost).sum();
    assert_eq!(listed.iter().filter(|l| !after(l)).count() as u64, lost, "every loss on a hop listed");
    assert_eq!(listed.iter().filter(after).count() as u64, truth.lost_after, "every loss after the last tap listed");
    assert!(truth.lost_after > 0, "the plan loses packets after the last tap");
    assert!(listed.iter().all(|l| l["flow"].is_u64()), "each loss names its flow");
}

fn check(plan: &Plan) -> (Value, Truth) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (files, truth) = write(plan, dir.path());
    let report = analyze(&tap_args(&plan.taps, &files));
    let path = &report["path"];
    check_hops(path, &truth);
    assert!(path.get("tap_order").is_none(), "taps in the path's order: no tap_order");
    for (i, tap) in path["taps"].as_array().expect("taps").iter().enumerate() {
        let name = plan.taps[i];
        assert_eq!(tap["missed"], truth.missed[i], "{name}: missed");
        let offset = tap["clock_offset_ns"].as_i64().expect("offset");
        assert!(
            offset.abs_diff(plan.offsets_ns[i]) <= plan.jitter_ns,
            "{name}: offset {offset}, truly {}",
            plan.offsets_ns[i]
        );
        let drift = tap["drift_ppm"].as_f64().expect("drift");
        assert!((drift - plan.drift_ppm[i]).abs() < 0.5, "{name}: drift {drift}, truly {}", plan.drift_ppm[i]);
        let method = if i == 0 { "reference" } else { "two_way" };
        assert_eq!(tap["offset_method"], method, "{name}");
    }
    // the rest of the report reads each packet once, on the first tap's clock
    assert_eq!(report["totals"]["roce_packets"], truth.sent, "the union holds every packet once");
    assert_eq!(report["totals"]["mirror_duplicates"], 0);
    let codes: Vec<&str> =
        report["findings"].as_array().expect("findings").iter().filter_map(|f| f["code"].as_str()).collect();
    for code in ["LOSS_ON_HOP", "ECN_MARKED_ON_HOP", "DSCP_REWRITTEN", "TAP_MISSED"] {
        assert!(codes.contains(&code), "{code} in {codes:?}");
    }
    let on_hop = |code: &str| {
        let f = report["findings"].as_array().expect("findings").iter().find(|f| f["code"] == code).expect("finding");
        f["evidence"]["hop"].as_str().expect("the hop named").to_string()
    };
    let hop_name = |h: usize| format!("{}->{} forward", plan.taps[h], plan.taps[h + 1]);
    assert_eq!(on_hop("LOSS_ON_HOP"), hop_name(plan.drop_hop));
    assert_eq!(on_hop("ECN_MARKED_ON_HOP"), hop_name(plan.mark_hop));
    assert_eq!(on_hop("DSCP_REWRITTEN"), hop_name(plan.rewrite_hop));
    (report, truth)
}

#[test]
fn four_taps_put_each_loss_mark_and_rewrite_on_its_hop() {
    check(&Plan::four_taps());
}

#[test]
fn three_taps_put_each_loss_mark_and_rewrite_on_its_hop() {
    check(&Plan::three_taps());
}

/// Go-back-N recovery (IBA §9.7.5.1.3): after each hole (a packet dropped on the leaf-to-spine
/// hop, or lost in host B's NIC after its capture saw it) B discards its connection's next four
/// packets and A resends from the hole on. Every packet dropped on the hop is lost there, none
/// matched to its resend (the leaf misses one copy in twenty, resends among them); none of the
/// discarded packets, which reached host B and were sent again, is listed as lost after it; the
/// packets B's NIC lost, each the first of its go-back-N resend, are.
#[test]
fn go_back_n_discards_are_not_losses() {
    let plan = Plan::go_back_n();
    let (report, truth) = check(&plan);
    let holes = (truth.dropped_packets.len() + truth.lost_after_packets.len()) as u64;
    assert!(truth.discarded >= 2 * holes, "{} discarded behind {holes} holes", truth.discarded);
    let listed = |after: bool| {
        let mut listed: Vec<(u32, u32)> = report["path"]["losses"]
            .as_array()
            .expect("losses")
            .iter()
            .filter(|l| l["lost_on"].as_str().is_some_and(|on| on.starts_with("after:")) == after)
            .map(|l| (l["dest_qp"].as_u64().expect("QP") as u32, l["psn"].as_u64().expect("PSN") as u32))
            .collect();
        listed.sort_unstable();
        listed
    };
    let sorted = |packets: &[(u32, u32)]| {
        let mut packets = packets.to_vec();
        packets.sort_unstable();
        packets
    };
    assert_eq!(listed(false), sorted(&truth.dropped_packets), "the packets dropped on the hop, each once");
    assert_eq!(listed(true), sorted(&truth.lost_after_packets), "the packets lost after host B, no discard");
    for loss in report["path"]["losses"].as_array().expect("losses") {
        let on_hop = loss["lost_on"] == "leaf->spine" && loss["last_tap"] == "leaf";
        assert!(on_hop || loss["lost_on"] == "after:host_b", "{loss}");
    }
}

#[test]
fn a_given_offset_is_used_as_given() {
    let plan = Plan::sample();
    let dir = tempfile::tempdir().expect("temp dir");
    let (files, truth) = write(&plan, dir.path());
    let mut args = tap_args(&plan.taps, &files);
    args.extend(["--tap-offset".to_string(), "spine=-50000000".to_string()]);
    let report = analyze(&args);
    let spine = &report["path"]["taps"][2];
    assert_eq!(spine["offset_method"], "given");
    assert_eq!(spine["clock_offset_ns"], -50_000_000);
    check_hops(&report["path"], &truth);
}

#[test]
fn the_same_files_without_taps_give_the_report_without_a_path() {
    let plan = Plan::sample();
    let dir = tempfile::tempdir().expect("temp dir");
    let (files, _) = write(&plan, dir.path());
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let report = analyze(&files);
    assert!(report.get("path").is_none(), "no path section without --tap");
    let evidence_keys = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .flat_map(|f| f["evidence"].as_object().expect("evidence").keys().cloned().collect::<Vec<_>>());
    assert!(evidence_keys.into_iter().all(|k| ["count", "flows", "frames"].contains(&k.as_str())));
}

#[test]
fn taps_are_refused_with_a_clear_reason() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(PATH_SAMPLE_FILES[0]);
    let tap = |name: &str| format!("{name}={}", sample.display());
    for (args, wanted) in [
        (vec!["--tap".to_string(), tap("a")], "two taps or more"),
        (vec!["--tap".to_string(), tap("a"), "--tap".to_string(), tap("a")], "two taps are named \"a\""),
        (
            vec![
                "--tap".to_string(),
                tap("a"),
                "--tap".to_string(),
                tap("b"),
                "--tap-offset".to_string(),
                "c=5".to_string(),
            ],
            "--tap-offset c: no tap has that name",
        ),
        (vec!["--tap".to_string(), "nofile".to_string(), "--tap".to_string(), tap("b")], "say NAME=FILE"),
        (vec!["--tap".to_string(), tap("a"), sample.display().to_string()], "cannot be used with"),
    ] {
        let mut all = vec!["analyze".to_string()];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = common::run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(wanted), "{all:?}: {stderr}");
    }
}

/// Taps given from the responder's side: every hop reads as lost, and the report says the taps
/// seem to be in reverse order; two taps swapped are named.
#[test]
fn taps_given_out_of_the_paths_order_are_named_so() {
    let plan = Plan::sample();
    let dir = tempfile::tempdir().expect("temp dir");
    let (files, _) = write(&plan, dir.path());
    let reversed: Vec<usize> = (0..plan.taps.len()).rev().collect();
    let given = |order: &[usize]| {
        let names: Vec<&str> = order.iter().map(|&t| plan.taps[t]).collect();
        let files: Vec<PathBuf> = order.iter().map(|&t| files[t].clone()).collect();
        analyze(&tap_args(&names, &files))
    };
    let report = given(&reversed);
    assert_eq!(report["path"]["tap_order"], "reversed");
    let args: Vec<String> = reversed
        .iter()
        .flat_map(|&t| ["--tap".to_string(), format!("{}={}", plan.taps[t], files[t].display())])
        .chain(["--json".to_string()])
        .collect();
    let out = common::rocescope().arg("analyze").args(&args).output().expect("runs");
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(
        warned.contains("warning: --tap: the taps seem to be given in reverse order (host_b, spine, leaf, host_a)"),
        "{warned}"
    );
    let advice = warned.split("from the requester's side: ").nth(1).unwrap_or_default();
    let at: Vec<Option<usize>> = plan.taps.iter().map(|t| advice.find(&format!("--tap {t}="))).collect();
    assert!(at.iter().all(Option::is_some) && at.is_sorted(), "the taps in path order: {warned}");
    let quiet = common::rocescope().arg("analyze").args(tap_args(&plan.taps, &files)).output().expect("runs");
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("warning"), "taps in order: no warning");
    let hops = report["path"]["hops"].as_array().expect("hops");
    assert!(hops.iter().all(|h| h["lost"].as_u64() > h["matched"].as_u64()), "every hop reads as lost");
    let report = given(&[0, 2, 1, 3]);
    assert_eq!(report["path"]["tap_order"], serde_json::json!({ "out_of_order": [["spine", "leaf"]] }));
}

/// A sender stuck resending one packet: 60,000 copies alike in every byte, 1 µs apart, after
/// a hundred requests and their ACKs that align the clocks. Both taps see every packet, each
/// copy at the second tap continues the copy one hop's delay before it at the first, nothing is
/// lost, and the matching takes no longer than for packets that differ (it once scanned every
/// open journey of the signature for each copy: 20 s here).
#[test]
fn a_storm_of_packets_alike_is_matched_copy_by_copy_in_time_order() {
    use common::capture::{A, B, Capture, MS, T0, US, ack, write_only};
    const STORM: i64 = 60_000;
    const HOP_NS: i64 = 2 * US;
    const OFFSET_NS: i64 = 30 * MS;
    let (mut near, mut far) = (Capture::new(), Capture::new());
    for psn in 0..100u32 {
        let sent = T0 + i64::from(psn) * 10 * US;
        near.add(sent, &write_only(A, B, psn, true));
        far.add(sent + HOP_NS + OFFSET_NS, &write_only(A, B, psn, true));
        let acked = sent + 5 * US;
        far.add(acked + OFFSET_NS, &ack(B, A, psn, 0));
        near.add(acked + HOP_NS, &ack(B, A, psn, 0));
    }
    let stuck = write_only(A, B, 100, false);
    for i in 0..STORM {
        let sent = T0 + 2 * MS + i * US;
        near.add(sent, &stuck);
        far.add(sent + HOP_NS + OFFSET_NS, &stuck);
    }
    let (near, far) = (near.by_time().write(), far.by_time().write());
    let report = analyze(&tap_args(&["near", "far"], &[near, far]));
    let path = &report["path"];
    assert_eq!(path["taps"][1]["clock_offset_ns"], OFFSET_NS);
    assert_eq!(path["taps"][1]["offset_method"], "two_way");
    let (forward, reverse) = (&path["hops"][0], &path["hops"][1]);
    assert_eq!((forward["matched"].as_i64(), forward["lost"].as_i64()), (Some(STORM + 100), Some(0)));
    assert_eq!((reverse["matched"].as_i64(), reverse["lost"].as_i64()), (Some(100), Some(0)));
    // a copy paired with another than its own would be a spacing (1 µs) early or late
    assert_eq!((forward["delay_p50_ns"].as_i64(), forward["delay_max_ns"].as_i64()), (Some(HOP_NS), Some(HOP_NS)));
    assert_eq!(report["totals"]["roce_packets"], STORM + 200, "the union holds every packet once");
}

/// `reports/path.json`, `.txt` and `.html`: the analysis of `samples/path/`'s four taps
/// (regenerate with UPDATE_REPORTS=1, as the other reports).
#[test]
fn the_path_samples_report_is_up_to_date() {
    let mut args = Vec::new();
    for (name, file) in Plan::sample().taps.iter().zip(PATH_SAMPLE_FILES) {
        args.extend(["--tap".to_string(), format!("{name}=samples/{file}")]);
    }
    common::reports_kept_up_to_date("path", &args.iter().map(String::as_str).collect::<Vec<_>>());
}

#[cfg(feature = "tables")]
#[test]
fn out_writes_a_hops_table() {
    let plan = Plan::sample();
    let dir = tempfile::tempdir().expect("temp dir");
    let (files, truth) = write(&plan, dir.path());
    let out = dir.path().join("out");
    let mut args = vec!["analyze".to_string(), "-q".to_string(), "--out".to_string(), out.display().to_string()];
    args.extend(tap_args(&plan.taps, &files));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run_ok(&args);
    let csv = std::fs::read_to_string(out.join("hops.csv")).expect("hops.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), truth.hops.len());
    let column = |name: &str| header.iter().position(|h| *h == name).expect("column");
    for (row, want) in rows.iter().zip(&truth.hops) {
        assert_eq!((row[column("from")], row[column("to")]), (want.from, want.to));
        assert_eq!(row[column("lost")], want.lost.to_string());
        assert_eq!(row[column("matched")], want.matched.to_string());
    }
    assert!(out.join("hops.parquet").is_file());
}

/// Two taps in one pcapng file, one interface each (`NAME=FILE#IFACE`, by name or by index),
/// trace the path as two files do.
#[test]
fn taps_that_share_a_pcapng_file_are_told_apart_by_interface() {
    use rocescope::generate::scenarios::{Container, Scenario};
    use rocescope::output::packet::capture_file::Interface;
    let plan = Plan::three_taps();
    let dir = tempfile::tempdir().expect("temp dir");
    let (files, _) = write(&plan, dir.path());
    let set = path_set(&plan, &["a.pcapng", "switch.pcapng", "b.pcapng"]);
    let interface = |name: &str| Interface { link_type: 1, snaplen: 65535, tsresol: 9, name: Some(name.to_string()) };
    let mut frames = Vec::new();
    for (i, capture) in set.captures.iter().take(2).enumerate() {
        frames.extend(capture.frames.iter().cloned().map(|mut f| {
            f.interface = i;
            f
        }));
    }
    frames.sort_by_key(|f| f.ts_ns);
    let both = Scenario {
        file: "both.pcapng",
        container: Container::Pcapng { interfaces: vec![interface("host_a"), interface("switch")] },
        frames,
    };
    write_scenario(dir.path(), &both).expect("write the shared file");
    let shared = dir.path().join("both.pcapng").display().to_string();
    let separate = analyze(&tap_args(&plan.taps, &files));
    for second in ["switch", "1"] {
        let report = analyze(&[
            "--tap".to_string(),
            format!("host_a={shared}#host_a"),
            "--tap".to_string(),
            format!("switch={shared}#{second}"),
            "--tap".to_string(),
            format!("host_b={}", files[2].display()),
        ]);
        assert_eq!(report["path"]["hops"], separate["path"]["hops"], "#{second}");
        assert_eq!(report["path"]["losses"], separate["path"]["losses"], "#{second}");
        for (tap, alone) in report["path"]["taps"]
            .as_array()
            .expect("taps")
            .iter()
            .zip(separate["path"]["taps"].as_array().expect("taps"))
        {
            for key in ["frames", "clock_offset_ns", "missed", "offset_method"] {
                assert_eq!(tap[key], alone[key], "{key} #{second}");
            }
        }
        assert_eq!(report["path"]["taps"][1]["interface"], second);
        assert_eq!(report["totals"]["roce_packets"], separate["totals"]["roce_packets"], "#{second}");
    }
}
