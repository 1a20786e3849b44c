//! The analysis split over threads by host-pair partition joins into the report one thread
//! gives, and declines (the caller then analyses on one thread) where a join could differ: a
//! bound of the whole analysis reached, or timestamps that go backwards.

use crate::common;

use std::path::{Path, PathBuf};

use rocescope_engine::analyze::{Analyzer, Config, assemble};
use rocescope_engine::capture::Inputs;
use rocescope_engine::decode::Decoder;
use rocescope_engine::display_filter::Selection;
use rocescope_engine::pipeline::{self, Analyse, sharded};

struct Whole(Analyzer);

impl Analyse for Whole {
    fn analyzer(&mut self) -> &mut Analyzer {
        &mut self.0
    }
}

/// The benchmark capture of 64 RC connections between 64 host pairs, about `size` long.
fn generated(dir: &Path, size: &str) -> PathBuf {
    let path = dir.join(format!("mixed_{size}.pcap"));
    common::run_ok(&["generate", "--benchmark", "mixed", "--size", size, path.to_str().unwrap()]);
    path
}

fn report_json(analyzer: &Analyzer, inputs: &Inputs) -> String {
    serde_json::to_string_pretty(&assemble::report_of_files(analyzer, inputs.readers(), &[])).unwrap()
}

/// The report of one thread's analysis.
fn one_thread(paths: &[PathBuf], config: Config) -> String {
    one_thread_of(paths, config, None)
}

/// The report of one thread's analysis of the frames `filter` keeps.
fn one_thread_of(paths: &[PathBuf], config: Config, filter: Option<&str>) -> String {
    let (mut inputs, errors) = Inputs::open(paths, false);
    assert!(errors.is_empty());
    let mut whole = Whole(Analyzer::new(config));
    let mut selection = Selection::new(filter).unwrap();
    let ran = pipeline::analyse(&mut inputs, &Decoder::default(), &mut selection, &mut whole, 1, &|_| {});
    ran.result.unwrap();
    whole.0.finish();
    report_json(&whole.0, &inputs)
}

/// The report of the analysis split over `threads` threads, if the shards join.
fn split(paths: &[PathBuf], config: Config, threads: usize) -> Option<String> {
    split_of(paths, config, threads, None)
}

/// The report of the split analysis of the frames `filter` keeps, if the shards join.
fn split_of(paths: &[PathBuf], config: Config, threads: usize, filter: Option<&str>) -> Option<String> {
    let (mut inputs, _) = Inputs::open(paths, false);
    let mut whole = Whole(Analyzer::new(config));
    let selection = Selection::new(filter).unwrap();
    let ran = sharded::analyse(&mut inputs, &Decoder::default(), &selection, &mut whole, threads, &|_| {})?;
    assert!(ran.damage.is_empty() && ran.frames > 0);
    Some(report_json(&whole.0, &inputs))
}

#[test]
fn a_capture_of_many_host_pairs_splits_and_joins_into_one_threads_report() {
    let dir = tempfile::tempdir().unwrap();
    // with every sample beside it: episodes, CM, mirrors, malformed frames, several inputs
    let mut paths = samples();
    paths.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/malformed/bth_reserved_opcode.pcap"));
    paths.push(generated(dir.path(), "24M"));
    let one = one_thread(&paths, Config::default());
    for threads in [2, 3, 8] {
        let joined = split(&paths, Config::default(), threads).expect("the shards join");
        assert!(joined == one, "the report of {threads} shards differs from one thread's");
    }
    let report: serde_json::Value = serde_json::from_str(&one).unwrap();
    let count = |key: &str| report[key].as_array().map_or(0, Vec::len);
    assert!(count("flows") > 128 && count("retransmit_episodes") > 1 && count("connections") > 0);
    assert!(count("pfc") > 0 && report["cnps"].as_u64() > Some(0));
    assert!(report["capture"]["malformed_by_layer"].as_array().is_some_and(|m| !m.is_empty()));
}

#[test]
fn a_selection_keeps_the_same_frames_on_every_thread() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = samples();
    paths.push(generated(dir.path(), "8M"));
    let filters = [
        "ip.addr == 10.1.0.0/26 || macc",
        "frame.time_relative >= 0.002 && !(infiniband.bth.opcode == 17)",
        "rocescope.icrc.status != \"ok\" || erspan",
    ];
    for filter in filters {
        let one = one_thread_of(&paths, Config::default(), Some(filter));
        let joined = split_of(&paths, Config::default(), 3, Some(filter)).expect("the shards join");
        assert!(joined == one, "-Y {filter:?}: the split report differs from one thread's");
        let report: serde_json::Value = serde_json::from_str(&one).unwrap();
        let frames = report["totals"]["frames"].as_u64().unwrap_or(0);
        assert!(frames > 0 && Some(frames) < split(&paths, Config::default(), 2).and_then(total_frames), "{filter}");
    }
}

fn total_frames(report: String) -> Option<u64> {
    serde_json::from_str::<serde_json::Value>(&report).ok()?["totals"]["frames"].as_u64()
}

#[test]
fn a_join_declines_where_a_bound_of_the_whole_analysis_may_have_been_reached() {
    let dir = tempfile::tempdir().unwrap();
    let path = [generated(dir.path(), "4M")];
    let at_the_bound = Config { max_flows: 128, ..Config::default() };
    assert_eq!(split(&path, at_the_bound, 2).as_deref(), Some(one_thread(&path, at_the_bound).as_str()));
    let below = Config { max_flows: 100, ..Config::default() };
    assert_eq!(split(&path, below, 2), None, "128 flows in shards of at most 100 each");
    let out = |threads: &str| {
        common::run_ok(&["analyze", "--json", "--max-flows", "100", "--threads", threads, path[0].to_str().unwrap()])
    };
    assert_eq!(out("2"), out("1"));
}

#[test]
fn timestamps_that_go_backwards_decline_the_join() {
    let dir = tempfile::tempdir().unwrap();
    let path = generated(dir.path(), "4M");
    let mut bytes = std::fs::read(&path).unwrap();
    swap_timestamps_of_records(&mut bytes, 500, 501);
    let swapped = dir.path().join("swapped.pcap");
    std::fs::write(&swapped, bytes).unwrap();
    assert!(split(&[path], Config::default(), 2).is_some());
    assert_eq!(split(std::slice::from_ref(&swapped), Config::default(), 2), None);
    let out = |threads: &str| common::run_ok(&["analyze", "--json", "--threads", threads, swapped.to_str().unwrap()]);
    let one = out("1");
    assert!(one.contains("\"non_monotonic_timestamps\": 1"));
    assert_eq!(out("2"), one);
}

#[test]
fn a_capture_cut_short_is_analysed_up_to_the_damage_on_every_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = generated(dir.path(), "4M");
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3 + 7]).unwrap();
    let out = |threads: &str| common::run(&["analyze", "--json", "--threads", threads, cut.to_str().unwrap()]);
    let (one, two) = (out("1"), out("2"));
    assert_eq!(one.stdout, two.stdout);
    assert_eq!(one.stderr, two.stderr);
    let report: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert!(report["inputs"][0]["damage"]["offset"].as_u64().is_some(), "{report:#}");
    let (mut inputs, _) = Inputs::open(std::slice::from_ref(&cut), false);
    let mut whole = Whole(Analyzer::new(Config::default()));
    let selection = Selection::new(None).unwrap();
    let ran = sharded::analyse(&mut inputs, &Decoder::default(), &selection, &mut whole, 2, &|_| {});
    assert!(ran.is_some_and(|r| r.damage.len() == 1), "the split run itself reports the damage");
}

/// Swaps the timestamps of records `a` and `b` (0-based) of a pcap file.
fn swap_timestamps_of_records(pcap: &mut [u8], a: usize, b: usize) {
    let mut offsets = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        offsets.push(at);
        let caplen = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + caplen;
    }
    let (x, y) = (offsets[a], offsets[b]);
    let (tx, ty) = (pcap[x..x + 8].to_vec(), pcap[y..y + 8].to_vec());
    pcap[x..x + 8].copy_from_slice(&ty);
    pcap[y..y + 8].copy_from_slice(&tx);
}

fn samples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|f| f.extension().is_some_and(|e| e == "pcap" || e == "pcapng"));
    files.sort();
    files
}

#[test]
fn plain_headers_place_a_frame_where_its_decoding_does() {
    let mut files = samples();
    for dir in ["reference-captures", "captures/real"].iter().filter_map(|d| common::shared_subdir(d)) {
        files.extend(std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()));
    }
    let decoder = Decoder::default();
    let mut placed = 0;
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "pcap" || e == "pcapng")) {
        let (mut inputs, _) = Inputs::open(std::slice::from_ref(file), false);
        while let Some(frame) = inputs.next_frame() {
            let Some(hosts) = decoder.plain_hosts(&frame.record) else { continue };
            let packet = decoder.decode(&frame.record);
            if packet.roce().is_some() {
                assert_eq!(
                    Some(hosts),
                    packet.src_ip().zip(packet.dst_ip()),
                    "{} frame {}",
                    file.display(),
                    frame.number
                );
                placed += 1;
            }
        }
    }
    assert!(placed > 1000, "{placed}");
}
