//! `export --dataset`: a Hive-partitioned Parquet dataset whose counts, computed in SQL by
//! DuckDB (its Python package; the test is skipped with a message where it is missing), equal
//! the report's, on every sample and every reference and real capture; its layout, columns,
//! time order and partitions.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use polars::prelude::*;
use serde_json::{Value, json};

fn name_of(path: &Path) -> String {
    path.file_stem().expect("a file name").to_string_lossy().into_owned()
}

fn export(dataset: &Path, capture: &Path, extra: &[&str]) {
    let args =
        [&["export", "-q", "--dataset", dataset.to_str().unwrap()], extra, &[capture.to_str().unwrap()]].concat();
    common::run_ok(&args);
}

/// DuckDB's counts of the dataset at `dir` (tests/dataset/counts.py), or `None` without its
/// Python package.
fn duckdb_counts(dir: &Path) -> Option<Value> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/dataset/counts.py");
    let out = Command::new("python3").arg(script).arg(dir).output().expect("python3 runs");
    if out.status.code() == Some(3) {
        eprintln!("SKIPPED: the duckdb Python package is not installed (pip install duckdb)");
        return None;
    }
    assert!(out.status.success(), "counts.py: {}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("JSON"))
}

#[test]
fn counts_computed_in_sql_equal_the_reports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let captures = common::samples_and_shared_captures();
    let mut reports = Vec::new();
    for capture in &captures {
        // samples and reference captures share names: the folder tells them apart
        let folder = capture.parent().and_then(|d| d.file_name()).expect("a folder").to_string_lossy();
        let name = format!("{folder}-{}", name_of(capture));
        export(dir.path(), capture, &["--capture-name", &name]);
        reports.push((name, common::capture::analyze_file(capture, &[])));
    }
    let Some(sql) = duckdb_counts(dir.path()) else { return };
    let mut flows_compared = 0;
    for (name, r) in &reports {
        let c = &sql[name];
        let expected = json!({
            "frames": r["totals"]["frames"],
            "roce_packets": r["totals"]["roce_packets"],
            "cnps": r["cnps"],
            "ce_marks": r["ecn"]["ce"],
        });
        let got = json!({"frames": c["frames"], "roce_packets": c["roce_packets"], "cnps": c["cnps"], "ce_marks": c["ce_marks"]});
        assert_eq!(got, expected, "{name}");
        assert_eq!(c["first_ts_agrees"], json!(true), "{name}");
        for flow in r["flows"].as_array().expect("flows") {
            let in_sql = &c["flows"][flow["id"].to_string()];
            for key in ["gaps", "retransmitted"] {
                assert_eq!(
                    in_sql[key].as_u64().unwrap_or(0),
                    flow[key].as_u64().unwrap(),
                    "{name} flow {}: {key}",
                    flow["id"]
                );
            }
            flows_compared += 1;
        }
    }
    assert!(flows_compared > 50, "{flows_compared} flows compared");
    // the DuckDB example recomputes the headline numbers and finds them equal
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/duckdb/headline.py");
    let out = Command::new("python3").arg(example).arg(dir.path()).output().expect("python3 runs");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && !printed.contains("differs"), "{printed}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(printed.lines().filter(|l| !l.starts_with(' ')).count(), reports.len());
}

/// The frames files of `capture` in `dataset`, sorted by path.
fn frame_files(dataset: &Path, capture: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let capture_dir = dataset.join("frames").join(format!("capture={capture}"));
    for date in std::fs::read_dir(capture_dir).expect("the capture's partition") {
        for part in std::fs::read_dir(date.expect("entry").path()).expect("a date partition") {
            files.push(part.expect("entry").path());
        }
    }
    files.sort();
    files
}

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).expect("opens")).finish().expect("reads")
}

#[test]
fn the_layout_is_hive_partitioned_by_capture_and_date() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = common::samples().into_iter().find(|p| name_of(p) == "loss_go_back_n").expect("the sample");
    export(dir.path(), &sample, &[]);
    let files = frame_files(dir.path(), "loss_go_back_n");
    let relative: Vec<String> =
        files.iter().map(|f| f.strip_prefix(dir.path()).unwrap().display().to_string()).collect();
    assert_eq!(relative, ["frames/capture=loss_go_back_n/date=2023-11-14/part-00000.parquet"]);
    for table in ["flows", "retransmit_episodes", "findings", "pfc", "cnp_bursts", "incast", "captures"] {
        let part = dir.path().join(table).join("capture=loss_go_back_n").join("part-00000.parquet");
        let df = read(&part);
        for column in ["capture_first_ts", "capture_last_ts"] {
            assert!(df.column(column).is_ok(), "{table}: {column}");
        }
        // no unsigned integers: Spark reads no unsigned 64-bit integer
        assert!(df.dtypes().iter().all(|t| !t.is_unsigned_integer()), "{table}: {:?}", df.dtypes());
    }
    let frames = read(&files[0]);
    assert_eq!(frames.height(), 40);
    assert!(frames.dtypes().iter().all(|t| !t.is_unsigned_integer()), "{:?}", frames.dtypes());
    let names: Vec<String> = frames.get_column_names().iter().map(|n| n.to_string()).collect();
    assert_eq!(&names[..4], ["frame_number", "frame_time_epoch", "frame_time_epoch_ns", "frame_len"]);
    assert!(names.contains(&"infiniband_bth_psn".to_string()) && names.contains(&"rocescope_analysis_gap".to_string()));
    // microseconds: Spark reads no Parquet timestamp of nanoseconds
    assert!(matches!(
        frames.column("frame_time_epoch").unwrap().dtype(),
        DataType::Datetime(TimeUnit::Microseconds, _)
    ));
    // nothing of the staging directory is left
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().starts_with('.')), "{left:?}");
}

#[test]
fn frames_are_sorted_by_time_within_each_days_file() {
    // timestamps that go backwards, and frames past 2038: two days, each file in time order
    let capture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/malformed/timestamps_backwards_and_past_2038.pcap");
    let dir = tempfile::tempdir().expect("temp dir");
    export(dir.path(), &capture, &["--capture-name", "backwards"]);
    let files = frame_files(dir.path(), "backwards");
    assert!(files.len() >= 2, "{files:?}");
    let mut rows = 0;
    for file in &files {
        let df = read(file);
        rows += df.height();
        let integers = |column: &str| -> Vec<i64> {
            let values = df.column(column).unwrap().cast(&DataType::Int64).unwrap();
            values.i64().unwrap().into_no_null_iter().collect()
        };
        let times = integers("frame_time_epoch_ns");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{}: {times:?}", file.display());
        let micros: Vec<i64> = times.iter().map(|ns| ns.div_euclid(1000)).collect();
        assert_eq!(
            integers("frame_time_epoch"),
            micros,
            "{}: the timestamps are the exact times' microseconds",
            file.display()
        );
    }
    assert_eq!(rows, common::jsonl(&capture, &[]).len());
}

#[test]
fn exporting_a_capture_again_replaces_its_partitions_and_no_other() {
    let dir = tempfile::tempdir().expect("temp dir");
    let [first, second] =
        ["rc_write_healthy", "bad_icrc"].map(|n| common::samples().into_iter().find(|p| name_of(p) == n).unwrap());
    export(dir.path(), &first, &["--capture-name", "a"]);
    export(dir.path(), &second, &["--capture-name", "b"]);
    // the same name, another capture: its partitions hold the new one's frames only
    export(dir.path(), &second, &["--capture-name", "a", "-e", "infiniband.bth.psn"]);
    let a = read(&frame_files(dir.path(), "a")[0]);
    assert_eq!(a.height(), read(&frame_files(dir.path(), "b")[0]).height());
    let names: Vec<String> = a.get_column_names().iter().map(|n| n.to_string()).collect();
    assert_eq!(names, ["frame_number", "frame_time_epoch", "frame_time_epoch_ns", "infiniband_bth_psn"]);
    let out = common::run(&[
        "export",
        "--dataset",
        dir.path().to_str().unwrap(),
        "-e",
        "infiniband.bth.pns",
        first.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean infiniband.bth.psn?"));
}

#[test]
fn the_frames_are_the_same_for_any_thread_count_and_from_a_compressed_file() {
    let sample = common::samples().into_iter().find(|p| name_of(p) == "reordering").expect("the sample");
    let dir = tempfile::tempdir().expect("temp dir");
    let gzipped = dir.path().join("reordering.pcap.gz");
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&gzipped).unwrap(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &std::fs::read(&sample).unwrap()).unwrap();
    gz.finish().unwrap();
    let frames = |capture: &str, args: &[&str], file: &Path| {
        export(dir.path(), file, &[&["--capture-name", capture], args].concat());
        read(&frame_files(dir.path(), capture)[0])
    };
    let two = frames("two", &["--threads", "2"], &sample);
    assert_eq!(two.height(), 96);
    assert!(two.equals_missing(&frames("one", &["--threads", "1"], &sample)));
    assert!(two.equals_missing(&frames("gzip", &["--threads", "2"], &gzipped)));
}
