//! `analyze --out DIR`: the JSON report and the CSV/Parquet tables agree with each other and
//! with `--json`; the per-packet table has one row per frame; inputs are never overwritten
//! and unwritable destinations are clear errors.

use crate::common;

use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde_json::Value;

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name).to_str().expect("UTF-8").to_string()
}

fn parquet(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).expect("parquet file")).finish().expect("readable Parquet")
}

fn csv_rows(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).expect("CSV file").lines().map(str::to_string).collect()
}

#[test]
fn tables_agree_with_the_json_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("report");
    let file = sample("loss_go_back_n.pcap");
    common::run_ok(&["analyze", "--out", out.to_str().unwrap(), "--packets", &file]);
    let json: Value = serde_json::from_str(&common::run_ok(&["analyze", "--json", &file])).unwrap();
    let written: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(written, json, "report.json equals --json");

    let flows = parquet(&out.join("flows.parquet"));
    assert_eq!(flows.height(), json["flows"].as_array().unwrap().len());
    let missing = flows.column("missing_psns").unwrap().u64().unwrap().get(0);
    assert_eq!(missing, json["flows"][0]["missing_psns"].as_u64());
    let pairing = flows.column("pairing").unwrap().str().unwrap().get(0).map(str::to_string);
    assert_eq!(pairing.as_deref(), json["flows"][0]["pairing"].as_str());
    assert_eq!(csv_rows(&out.join("flows.csv")).len(), flows.height() + 1);

    let episodes = parquet(&out.join("retransmit_episodes.parquet"));
    assert_eq!(episodes.height(), 1);
    assert_eq!(episodes.column("trigger").unwrap().str().unwrap().get(0), Some("nak_psn_seq_err"));
    assert_eq!(episodes.column("pattern").unwrap().str().unwrap().get(0), Some("go_back_n"));

    let findings = parquet(&out.join("findings.parquet"));
    assert_eq!(findings.height(), json["findings"].as_array().unwrap().len());

    let packets = parquet(&out.join("packets.parquet"));
    assert_eq!(packets.height() as u64, json["totals"]["frames"].as_u64().unwrap());
    let classes = packets.column("rocescope.analysis.seq_class").unwrap().str().unwrap();
    assert_eq!((0..classes.len()).filter(|&i| classes.get(i) == Some("retransmission")).count(), 6);
    assert_eq!(csv_rows(&out.join("packets.csv")).len(), packets.height() + 1);

    // final verdicts: a reordered capture's late arrivals and the frames they filled gaps for
    let reordered = dir.path().join("reordered");
    common::run_ok(&["analyze", "--out", reordered.to_str().unwrap(), "--packets", &sample("reordering.pcap")]);
    let packets = parquet(&reordered.join("packets.parquet"));
    let frames = packets.column("frame.number").unwrap().u64().unwrap();
    assert!((1..frames.len()).all(|i| frames.get(i) > frames.get(i - 1)), "rows in frame order");
    let classes = packets.column("rocescope.analysis.seq_class").unwrap().str().unwrap();
    let count = |class: &str| (0..classes.len()).filter(|&i| classes.get(i) == Some(class)).count();
    assert_eq!((count("late_arrival"), count("ahead"), count("gap"), count("retransmission")), (8, 8, 0, 5));
    // the columns are registry fields: each holds what `-T fields -E occurrence=l` prints
    for (column, field) in [
        ("infiniband.bth.psn", "infiniband.bth.psn"),
        ("ip.src", "ip.src"),
        ("rocescope.icrc.status", "rocescope.icrc.status"),
    ] {
        let exported =
            common::run_ok(&["packets", "-T", "fields", "-E", "occurrence=l", "-e", field, &sample("reordering.pcap")]);
        let values = packets.column(column).unwrap().cast(&DataType::String).unwrap();
        let values = values.str().unwrap();
        let table: Vec<String> = (0..values.len()).map(|i| values.get(i).unwrap_or("").to_string()).collect();
        let exported: Vec<String> = exported.lines().map(str::to_string).collect();
        assert_eq!(table, exported, "{column}");
    }

    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn the_packet_table_is_written_in_batches() {
    // more frames than one batch (65,536): the PFC storm sample merged with itself 150 times
    let dir = tempfile::tempdir().expect("temp dir");
    let file = sample("pfc_storm.pcap");
    let mut args =
        vec!["analyze".to_string(), "--out".into(), dir.path().join("o").to_str().unwrap().into(), "--packets".into()];
    args.extend(std::iter::repeat_n(file, 150));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run_ok(&args);
    let packets = parquet(&dir.path().join("o/packets.parquet"));
    assert_eq!(packets.height(), 456 * 150);
    let frames = packets.column("frame.number").unwrap().u64().unwrap();
    assert_eq!((frames.get(0), frames.get(456 * 150 - 1)), (Some(1), Some(456 * 150)));
}

#[test]
fn the_pfc_table_holds_pfc_and_pause_sources() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::run_ok(&["analyze", "--out", dir.path().to_str().unwrap(), &sample("pfc_storm.pcap")]);
    let pfc = parquet(&dir.path().join("pfc.parquet"));
    assert_eq!(pfc.height(), 4);
    let storms = pfc.column("storm").unwrap().bool().unwrap();
    assert_eq!((0..storms.len()).filter(|&i| storms.get(i) == Some(true)).count(), 1);
    let kind = pfc.column("kind").unwrap().str().unwrap();
    let kinds: Vec<Option<&str>> = (0..kind.len()).map(|i| kind.get(i)).collect();
    assert_eq!(kinds, [Some("pfc"), Some("pfc"), Some("pfc"), Some("pause")]);
}

#[test]
fn the_congestion_tables_hold_the_reports_bursts_and_incast_periods() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_str().unwrap();
    common::run_ok(&["analyze", "--out", out, &sample("dcqcn_reaction.pcap")]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    let bursts = parquet(&dir.path().join("cnp_bursts.parquet"));
    let listed = report["congestion"]["cnp_bursts"].as_array().unwrap();
    assert_eq!(bursts.height(), listed.len());
    let outcome = bursts.column("outcome").unwrap().str().unwrap();
    let outcomes: Vec<&str> = (0..outcome.len()).filter_map(|i| outcome.get(i)).collect();
    let expected: Vec<&str> = listed.iter().map(|b| b["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, expected);
    let flows = parquet(&dir.path().join("flows.parquet"));
    let ratio = flows.column("reaction_ratio_p50").unwrap().f64().unwrap();
    assert_eq!((ratio.get(0), ratio.get(1)), (Some(0.5), Some(1.0)));
    common::run_ok(&["analyze", "--out", out, &sample("incast.pcap")]);
    let incast = parquet(&dir.path().join("incast.parquet"));
    assert_eq!(incast.height(), 1);
    assert_eq!(incast.column("peak_fan_in").unwrap().u64().unwrap().get(0), Some(8));
    assert_eq!(incast.column("pauses").unwrap().u64().unwrap().get(0), Some(1));
}

#[test]
fn inputs_are_never_overwritten_and_bad_destinations_are_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    // an input that happens to be named like a report file in the output directory
    let input = dir.path().join("flows.csv");
    std::fs::copy(sample("bad_icrc.pcap"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = common::run(&["analyze", "--out", dir.path().to_str().unwrap(), input.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to overwrite the input"));
    assert_eq!(std::fs::read(&input).unwrap(), before);

    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = common::run(&["analyze", "--out", file.join("sub").to_str().unwrap(), &sample("bad_icrc.pcap")]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("rocescope: cannot create"));
    let out = common::run(&["analyze", "--out", file.to_str().unwrap(), &sample("bad_icrc.pcap")]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("rocescope: --out {}: a file is there; --out names a directory (created if missing)\n", file.display())
    );

    let out = common::run(&["analyze", "--packets", &sample("bad_icrc.pcap")]);
    assert_eq!(out.status.code(), Some(2), "--packets needs --out");
}

#[test]
fn the_temporary_files_of_a_killed_run_are_removed_by_the_next_and_a_running_one_s_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let at = |name: &str| dir.path().join(name);
    // a run killed while it wrote (process ids stop at 4,194,304), an earlier release's name,
    // and a run still writing (this test's own process)
    let running = format!(".flows.csv.{}.partial", std::process::id());
    for (name, size) in [(".packets.parquet.999999999.partial", 1000), (".report.json.partial", 24), (&running, 10)] {
        std::fs::write(at(name), vec![0u8; size]).expect("write");
    }
    let out = common::run(&["analyze", "--out", dir.path().to_str().unwrap(), &sample("bad_icrc.pcap")]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("rocescope: removed the temporary files (1024 bytes) a killed run left in {}\n", dir.path().display())
    );
    assert!(!at(".packets.parquet.999999999.partial").exists() && !at(".report.json.partial").exists());
    assert!(at(&running).exists(), "a run still writing keeps its file");
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial") && *n != running)
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Runs rocescope with its standard output on /dev/full (every write fails with ENOSPC).
fn run_into_full_device(args: &[&str]) -> std::process::Output {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    common::rocescope().args(args).stdout(full).output().expect("run")
}

/// A 192 KiB tmpfs, unmounted when dropped; `None` where mounting is not permitted.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount() -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=192k", "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(SmallDisk(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_full_disk_is_a_clear_error_and_leaves_no_report() {
    let big = sample("congestion_ecn_cnp.pcap");
    for (args, message) in [
        (vec!["analyze", "--json", big.as_str()], "rocescope: cannot write the report: No space left on device"),
        (
            vec!["packets", "--format", "jsonl", big.as_str()],
            "rocescope: cannot write the output: No space left on device",
        ),
    ] {
        let out = run_into_full_device(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with(message),
            "{:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let Some(disk) = SmallDisk::mount() else {
        eprintln!("skipped the --out part: mounting a small tmpfs is not permitted here");
        return;
    };
    // the report fits, the per-packet tables do not: nothing of the run may stay behind
    let dir = disk.0.path().join("out");
    let out = common::run(&["analyze", "--packets", "--out", dir.to_str().unwrap(), &big]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0), 0, "files left in {}", dir.display());
    // a run that fits writes every file
    let out = common::run(&["analyze", "--out", dir.to_str().unwrap(), &sample("bad_icrc.pcap")]);
    assert_eq!(out.status.code(), Some(0));
    // report.json, index.html, and six tables as CSV and Parquet
    assert_eq!(std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0), 14);
}

#[test]
fn the_packet_table_is_the_same_for_any_thread_count_and_from_standard_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = sample("reordering.pcap");
    let table = |threads: &str, stdin: bool| {
        let out = dir.path().join(format!("t{threads}{stdin}"));
        let out_arg = out.to_str().unwrap().to_string();
        let mut cmd = common::rocescope();
        cmd.args(["analyze", "--out", &out_arg, "--packets", "--threads", threads]);
        if stdin {
            cmd.arg("-").stdin(std::fs::File::open(&file).unwrap());
        } else {
            cmd.arg(&file);
        }
        assert!(cmd.output().unwrap().status.success());
        std::fs::read(out.join("packets.csv")).unwrap()
    };
    let one = table("1", false);
    for (threads, stdin) in [("2", false), ("3", false), ("2", true)] {
        assert!(table(threads, stdin) == one, "--threads {threads}, standard input {stdin}");
    }
}

/// Each report table's record: where its rows are in the JSON report.
fn json_rows(report: &Value, table: &str) -> Vec<Value> {
    let array = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let with = |rows: Vec<Value>, extra: &[(&str, Value)]| -> Vec<Value> {
        rows.into_iter()
            .map(|mut r| {
                for (k, v) in extra {
                    r[*k] = v.clone();
                }
                r
            })
            .collect()
    };
    match table {
        "flows" => array(&report["flows"]),
        "retransmit_episodes" => array(&report["retransmit_episodes"]),
        "findings" => array(&report["findings"]),
        "pfc" => {
            let mut rows = with(array(&report["pfc"]), &[("kind", "pfc".into())]);
            rows.extend(with(array(&report["pause"]), &[("kind", "pause".into())]));
            rows
        }
        "cnp_bursts" => array(&report["congestion"]["cnp_bursts"]),
        "incast" => array(&report["congestion"]["incast"]["periods"]),
        "hops" => array(&report["path"]["hops"]),
        "counters" => array(&report["counters"])
            .iter()
            .flat_map(|h| {
                let extra =
                    [("host", h["host"].clone()), ("source", h["source"].clone()), ("window", h["window"].clone())];
                with(array(&h["rows"]), &extra)
            })
            .collect(),
        "uet_pdcs" => array(&report["uet"]["pdcs"]),
        other => panic!("no table {other}"),
    }
}

/// A JSON record's leaves, its objects' keys joined by `_`; an object that is a table's text
/// column (a tally) is a leaf.
fn leaves(value: &Value, path: &str, text_columns: &[String], out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) if !text_columns.iter().any(|c| c == path) => {
            for (key, v) in map {
                let path = if path.is_empty() { key.clone() } else { format!("{path}_{key}") };
                leaves(v, &path, text_columns, out);
            }
        }
        _ => out.push((path.to_string(), value.clone())),
    }
}

/// The cell at `row` of `column` as JSON.
fn cell(column: &Column, row: usize) -> Value {
    match column.get(row).expect("row") {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => b.into(),
        AnyValue::String(s) => s.into(),
        AnyValue::StringOwned(s) => s.as_str().into(),
        AnyValue::UInt32(v) => v.into(),
        AnyValue::UInt64(v) => v.into(),
        AnyValue::Int64(v) => v.into(),
        AnyValue::Float64(v) => v.into(),
        other => panic!("a column of {other:?}"),
    }
}

/// The record is the schema: every key of every table record in the JSON report is a column
/// of its table in the Parquet and CSV files, each numeric value the same, and no column is a
/// key the JSON lacks (a key left out of one output fails here).
#[test]
fn every_key_of_a_table_record_is_a_column_of_its_table_with_its_value() {
    let dir = tempfile::tempdir().expect("temp dir");
    let taps: Vec<String> = ["host_a", "leaf", "spine", "host_b"]
        .iter()
        .flat_map(|t| ["--tap".to_string(), format!("{t}={}", sample(&format!("path/{t}.pcapng")))])
        .collect();
    let counters = [
        "--counters".to_string(),
        format!("10.0.0.3={},{}", sample("counters/10.0.0.3.before.txt"), sample("counters/10.0.0.3.after.txt")),
        "--switch-counters".to_string(),
        format!("leaf1={},{}", sample("counters/leaf1.before.txt"), sample("counters/leaf1.after.txt")),
        sample("congestion_ecn_cnp.pcap"),
    ];
    let runs: Vec<Vec<String>> = vec![
        vec![sample("loss_go_back_n.pcap")],
        vec![sample("reordering.pcap")],
        vec![sample("dcqcn_reaction.pcap")],
        vec![sample("incast.pcap")],
        vec![sample("pfc_storm.pcap")],
        vec![sample("bidirectional_read_write.pcap")],
        vec![sample("uet_trimmed.pcap")],
        taps,
        counters.to_vec(),
    ];
    let mut tables_seen = std::collections::BTreeSet::new();
    for (i, inputs) in runs.iter().enumerate() {
        let out = dir.path().join(i.to_string());
        let mut args = vec!["analyze", "-q", "--out", out.to_str().unwrap()];
        args.extend(inputs.iter().map(String::as_str));
        common::run_ok(&args);
        let report: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        for entry in std::fs::read_dir(&out).unwrap() {
            let path = entry.unwrap().path();
            let Some(table) = path.file_name().unwrap().to_str().unwrap().strip_suffix(".parquet") else { continue };
            let df = parquet(&path);
            let header = csv_rows(&path.with_extension("csv")).into_iter().next().unwrap_or_default();
            let names: Vec<String> = df.get_column_names().iter().map(|n| n.to_string()).collect();
            assert_eq!(header, names.join(","), "{table}: the CSV's columns are the Parquet's");
            let text_columns: Vec<String> =
                df.columns().iter().filter(|c| c.dtype() == &DataType::String).map(|c| c.name().to_string()).collect();
            let rows = json_rows(&report, table);
            assert_eq!(df.height(), rows.len(), "{table}: a row per record");
            for (r, record) in rows.iter().enumerate() {
                let mut keys = Vec::new();
                leaves(record, "", &text_columns, &mut keys);
                for (key, value) in &keys {
                    let object = |n: &String| n.starts_with(&format!("{key}_"));
                    if value.is_null() && names.iter().any(object) {
                        continue; // an absent object: its columns are empty
                    }
                    let column =
                        df.column(key).unwrap_or_else(|_| panic!("{table}: `{key}` is in the JSON, not the table"));
                    if value.is_number() || value.is_boolean() {
                        let cell = cell(column, r);
                        let same = cell == *value || cell.as_f64().zip(value.as_f64()).is_some_and(|(a, b)| a == b);
                        assert!(same, "{table} row {r} `{key}`: {cell} in the table, {value} in the JSON");
                    }
                }
                // a column the record lacks is empty: an absent object's, or a key the JSON
                // leaves out when it has no value (a finding's `hop`)
                for name in &names {
                    let present = keys.iter().any(|(k, _)| k == name);
                    assert!(
                        present || cell(df.column(name).unwrap(), r).is_null(),
                        "{table}: `{name}` is no key of the JSON"
                    );
                }
            }
            tables_seen.insert(table.to_string());
        }
    }
    let all =
        ["flows", "retransmit_episodes", "findings", "pfc", "cnp_bursts", "incast", "hops", "counters", "uet_pdcs"];
    assert_eq!(tables_seen, all.iter().map(|t| t.to_string()).collect(), "every table was checked");
}
