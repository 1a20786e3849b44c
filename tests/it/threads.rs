//! The thread count changes how inputs are read and analysed, never what is reported: 1, 2, 3,
//! 4 and 8 threads (more than this machine's cores) give byte-identical output (the report,
//! the packet list, field export; tests/it/dataset.rs: the Parquet dataset) for every sample,
//! reference and real capture, for several inputs merged, and for compressed input.
//! (tests/it/sharding.rs holds the split analysis to one thread's on captures of many host pairs.)

use crate::common;

use std::io::Write;
use std::path::PathBuf;

fn samples() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples"))
        .expect("samples/")
        .map(|e| e.expect("entry").path().to_str().expect("UTF-8").to_string())
        .filter(|p| p.ends_with(".pcap") || p.ends_with(".pcapng"))
        .collect();
    files.sort();
    files
}

/// Runs `subcommand args…` with each thread count and compares the outputs with one thread's.
fn same_for_any_thread_count(command: &[&str]) {
    let (subcommand, args) = command.split_first().expect("a subcommand");
    let run = |threads: &str| {
        let mut all = vec![*subcommand, "--threads", threads];
        all.extend_from_slice(args);
        let out = common::run(&all);
        assert!(out.status.success(), "{all:?}");
        out.stdout
    };
    let one = run("1");
    for threads in ["2", "3", "4", "8"] {
        assert!(run(threads) == one, "output differs between --threads 1 and {threads} for {command:?}");
    }
}

#[test]
fn every_sample_analyses_and_lists_identically() {
    for file in samples() {
        same_for_any_thread_count(&["analyze", "--json", &file]);
        same_for_any_thread_count(&["packets", "--format", "jsonl", &file]);
    }
}

#[test]
fn every_sample_exports_the_same_fields() {
    for file in samples() {
        let fields = ["-e", "frame.number", "-e", "frame.time_relative", "-e", "infiniband.bth.psn"];
        let verdicts = ["-e", "rocescope.icrc.status", "-e", "rocescope.analysis.seq_class"];
        same_for_any_thread_count(&[&["packets", "-T", "fields"], &fields[..], &verdicts[..], &[&file]].concat());
    }
}

#[test]
fn reference_and_real_captures_too() {
    for dir in ["reference-captures", "captures/real"].iter().filter_map(|d| common::shared_subdir(d)) {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir).expect("dir").map(|e| e.expect("entry").path()).collect();
        files.retain(|f| f.extension().is_some_and(|e| e == "pcap" || e == "pcapng"));
        files.sort();
        for file in &files {
            same_for_any_thread_count(&["analyze", "--json", file.to_str().expect("UTF-8")]);
        }
    }
}

#[test]
fn merged_and_compressed_inputs_too() {
    let files = samples();
    let mut args = vec!["analyze", "--json"];
    args.extend(files.iter().map(String::as_str));
    same_for_any_thread_count(&args);
    let dir = tempfile::tempdir().expect("temp dir");
    let gz = dir.path().join("c.pcap.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    enc.write_all(&std::fs::read(&files[1]).unwrap()).unwrap();
    enc.finish().unwrap();
    same_for_any_thread_count(&["analyze", "--json", gz.to_str().unwrap()]);
}
