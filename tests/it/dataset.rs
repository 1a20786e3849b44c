//! `export --dataset`: a Hive-partitioned Parquet dataset whose counts, computed in SQL by
//! DuckDB (its Python package; the test is skipped with a message where it is missing), equal
//! the report's, on every sample and every reference and real capture; its layout, columns,
//! time order and partitions.

use crate::common;

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

#[test]
fn the_dataset_is_byte_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = |dataset: &Path| {
        let mut all: Vec<PathBuf> = walk(dataset);
        all.sort();
        all.iter()
            .map(|f| (f.strip_prefix(dataset).unwrap().to_path_buf(), std::fs::read(f).unwrap()))
            .collect::<Vec<_>>()
    };
    for name in ["congestion_ecn_cnp", "encapsulations", "loss_go_back_n"] {
        let sample = common::samples().into_iter().find(|p| name_of(p) == name).expect("the sample");
        let exported = |threads: &str| {
            let dataset = dir.path().join(format!("{name}-{threads}"));
            export(&dataset, &sample, &["--threads", threads]);
            files(&dataset)
        };
        let one = exported("1");
        assert!(one.len() > 5, "{name}: {} files", one.len());
        for threads in ["2", "3", "4", "8"] {
            assert!(exported(threads) == one, "{name}: the dataset of --threads {threads} differs from one thread's");
        }
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("a directory")
        .map(|e| e.expect("an entry").path())
        .flat_map(|p| if p.is_dir() { walk(&p) } else { vec![p] })
        .collect()
}

/// Every frame of `capture` in `dataset`, in frame order.
fn all_frames(dataset: &Path, capture: &str) -> DataFrame {
    let mut files = frame_files(dataset, capture).into_iter().map(|f| read(&f));
    let first = files.next().expect("a frames file");
    let all = files.fold(first, |all, df| all.vstack(&df).expect("same columns"));
    all.sort(["frame_number"], Default::default()).expect("sorted")
}

/// The per-run table `table` of `capture` in `dataset`.
fn table(dataset: &Path, table: &str, capture: &str) -> DataFrame {
    read(&dataset.join(table).join(format!("capture={capture}")).join("part-00000.parquet"))
}

/// `export -q --capture-name x --dataset DATASET` with `args` then `files`.
fn export_x(dataset: &Path, args: &[&str], files: &[PathBuf]) {
    let dataset = dataset.to_str().expect("UTF-8");
    let files: Vec<&str> = files.iter().map(|f| f.to_str().expect("UTF-8")).collect();
    common::run_ok(&[&["export", "-q", "--capture-name", "x", "--dataset", dataset], args, &files[..]].concat());
}

/// A capture long enough for the doubled-mirror decision to be taken early (10,000 RoCE frames
/// of the generator's benchmark traffic), so that the analysis settles most frames as it goes,
/// then the go-back-N sample's frames: the capture and the index of the frame after its gap.
fn long_capture_with_a_gap(dir: &Path) -> (PathBuf, usize) {
    let benchmark = dir.join("benchmark.pcap");
    common::run_ok(&["generate", "--benchmark", "mixed", "--size", "12M", benchmark.to_str().expect("UTF-8")]);
    let sample = common::samples().into_iter().find(|p| name_of(p) == "loss_go_back_n").expect("the sample");
    let records = |path: &Path| {
        let (mut inputs, errors) = rocescope::capture::Inputs::open(&[path.to_path_buf()], false);
        assert!(errors.is_empty(), "{errors:?}");
        std::iter::from_fn(move || inputs.next_frame().map(|f| (f.record.ts_ns, f.record.data.to_vec())))
            .collect::<Vec<_>>()
    };
    let (first, second) = (records(&benchmark), records(&sample));
    let shift = first.last().expect("frames").0 + 1_000_000 - second.first().expect("frames").0;
    let path = dir.join("long.pcap");
    let file = std::fs::File::create(&path).expect("created");
    let mut out =
        rocescope::output::packet::capture_file::CaptureWriter::pcap(file, 1, 65_535, true, false).expect("header");
    let shifted = second.iter().map(|(ts, data)| (ts + shift, data));
    for (ts, data) in first.iter().map(|(ts, data)| (*ts, data)).chain(shifted) {
        out.packet(0, ts, data).expect("written");
    }
    out.finish().expect("flushed");
    // the sample's gap is its 12th frame
    (path, first.len() + 12)
}

#[test]
fn exports_that_go_on_from_saved_states_make_the_dataset_one_export_makes() {
    let work = tempfile::tempdir().expect("temp dir");
    let (chained, whole) = (work.path().join("chained"), work.path().join("whole"));
    let state = work.path().join("x.state");
    let state = state.to_str().expect("UTF-8");
    let (long, gap_at) = long_capture_with_a_gap(work.path());
    for capture in common::samples_and_shared_captures().into_iter().chain([long.clone()]) {
        // the long capture is cut just after a gap, whose frame's verdict waits on later frames
        let cuts = |n: usize| if capture == long { vec![gap_at, gap_at + 10] } else { vec![n / 3, 2 * n / 3] };
        let parts = common::split::split(&capture, work.path(), cuts);
        for i in 0..parts.len() {
            // each run goes on from the state the one before saved; after it, the capture's
            // frames and tables are what one export of the files so far writes (the frames the
            // saved analysis had not settled carry the verdicts the files' end gives them)
            let resume: &[&str] = if i > 0 { &["--resume", state] } else { &[] };
            export_x(&chained, &[&["--state", state], resume].concat(), &parts[i..=i]);
            export_x(&whole, &[], &parts[..=i]);
            let place = format!("{} after part {i}", capture.display());
            if capture == long && i == 0 {
                // the settled rows in one file, the provisional ones in another
                assert_eq!(frame_files(&chained, "x").len(), frame_files(&whole, "x").len() + 1, "{place}");
            }
            assert!(all_frames(&chained, "x").equals_missing(&all_frames(&whole, "x")), "{place}: frames");
            for t in ["flows", "retransmit_episodes", "findings", "pfc", "cnp_bursts", "incast", "captures"] {
                assert!(table(&chained, t, "x").equals_missing(&table(&whole, t, "x")), "{place}: {t}");
            }
        }
    }
}

#[test]
fn an_export_goes_on_only_from_an_exports_state_of_its_capture_and_columns() {
    let work = tempfile::tempdir().expect("temp dir");
    let sample = common::samples().into_iter().find(|p| name_of(p) == "reordering").expect("the sample");
    let (dataset, state) = (work.path().join("d"), work.path().join("s.state"));
    let [dataset, state, sample] = [&dataset, &state, &sample].map(|p| p.to_str().expect("UTF-8").to_string());
    common::run_ok(&["analyze", "-q", &sample, "--state", &state]);
    // the files a state goes on with are others than those it read
    let next = work.path().join("next.pcap");
    std::fs::copy(&sample, &next).expect("copied");
    let next = next.to_str().expect("UTF-8").to_string();
    let refused = |extra: &[&str]| {
        let args = [&["export", "-q", "--dataset", &dataset, "--resume", &state], extra, &[&next]].concat();
        let out = common::run(&args);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, message) = refused(&[]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("not saved by export"), "{message}");
    common::run_ok(&["export", "-q", "--dataset", &dataset, "--capture-name", "a", "--state", &state, &sample]);
    let (code, message) = refused(&["--capture-name", "b"]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("the capture a") && message.contains("not b"), "{message}");
    let (code, message) = refused(&["-e", "infiniband.bth.psn"]);
    assert_eq!(code, Some(2), "{message}");
    assert!(message.contains("other columns"), "{message}");
    // another dataset does not hold the rows the saved export left unsettled
    let elsewhere = work.path().join("elsewhere");
    let out = common::run(&["export", "-q", "--dataset", elsewhere.to_str().unwrap(), "--resume", &state, &next]);
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{message}");
    assert!(message.contains("rows the saved export left unsettled"), "{message}");
    assert_eq!(refused(&["--capture-name", "a"]).0, Some(0));
    // an export's state goes on in analyze too
    common::run_ok(&["analyze", "-q", "--resume", &state, &next]);
    // and is not saved over an input
    let copy = work.path().join("copy.pcap");
    std::fs::copy(&sample, &copy).expect("copied");
    let copy = copy.to_str().expect("UTF-8");
    let out = common::run(&["export", "-q", "--dataset", &dataset, "--state", copy, copy]);
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{message}");
    assert!(message.contains("refusing to overwrite the input"), "{message}");
    assert_eq!(std::fs::read(copy).unwrap(), std::fs::read(&sample).unwrap());
}

#[test]
fn relative_times_count_from_the_captures_first_frame_under_a_display_filter() {
    // as tshark's do: frame.time_relative counts from the capture's first frame, kept or not
    let sample = common::samples().into_iter().find(|p| name_of(p) == "reordering").expect("the sample");
    let dir = tempfile::tempdir().expect("temp dir");
    let filter = "frame.number >= 10 && frame.number != 12";
    let fields = ["-e", "frame.time_relative", "-e", "frame.time_delta", "-e", "frame.time_delta_displayed"];
    export(dir.path(), &sample, &[&["--capture-name", "r", "-Y", filter][..], &fields].concat());
    let frames = all_frames(dir.path(), "r");
    let column = |name: &str| -> Vec<i64> {
        let values = frames.column(name).unwrap().cast(&DataType::Int64).unwrap();
        values.i64().unwrap().into_no_null_iter().collect()
    };
    let (numbers, relative, times) =
        (column("frame_number"), column("frame_time_relative"), column("frame_time_epoch_ns"));
    let (mut inputs, _) = rocescope::capture::Inputs::open(std::slice::from_ref(&sample), false);
    let first = inputs.next_frame().expect("a first frame").record.ts_ns;
    assert_eq!(numbers.first(), Some(&10));
    assert!(relative[0] > 0, "the first kept frame is not the capture's first");
    let expected: Vec<i64> = times.iter().map(|t| t - first).collect();
    assert_eq!(relative, expected);
    if common::tshark_available() {
        // and the deltas from the frame captured before and the one kept before, as tshark's
        let out = Command::new("tshark")
            .args(["-r", sample.to_str().unwrap(), "-Y", filter, "-T", "fields"])
            .args(fields)
            .output()
            .expect("tshark runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let tshark = |n: usize| -> Vec<i64> {
            text.lines()
                .map(|l| l.split('\t').nth(n).expect("a column"))
                .map(|v| (v.trim().parse::<f64>().expect("seconds") * 1e9).round() as i64)
                .collect()
        };
        assert_eq!(relative, tshark(0));
        assert_eq!(column("frame_time_delta"), tshark(1));
        assert_eq!(column("frame_time_delta_displayed"), tshark(2));
    }
}

#[test]
fn the_dataset_has_the_uet_pdcs_and_the_uet_fields_asked_for() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/uet_trimmed.pcap");
    export(dir.path(), &sample, &["-e", "uet.pds.type", "-e", "uet.pds.psn"]);
    let pdcs = table(dir.path(), "uet_pdcs", &name_of(&sample));
    assert_eq!(pdcs.height(), 1);
    let requests = pdcs.column("requests").expect("requests").i64().expect("signed, as every dataset integer").get(0);
    assert_eq!(requests, Some(302));
    let frames = all_frames(dir.path(), &name_of(&sample));
    let types = frames.column("uet_pds_type").expect("the field's column");
    assert_eq!(types.len(), frames.height());
}

#[test]
fn the_captures_row_counts_frames_cut_inside_their_headers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let capture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/malformed/cut_at_every_header_boundary.pcap");
    export(dir.path(), &capture, &[]);
    let part = dir.path().join("captures/capture=cut_at_every_header_boundary/part-00000.parquet");
    let row = read(&part);
    let count =
        |name: &str| row.column(name).expect(name).get(0).expect("a row").try_extract::<i64>().expect("a count");
    // as the report counts them (tests/it/malformed.rs): cut by the snap length, not malformed
    assert_eq!((count("headers_cut"), count("malformed")), (11, 0));
}
