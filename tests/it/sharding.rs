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

/// The report of the analysis of one capture file read by every thread in chunks of `chunk`
/// bytes, or `None` where that declines.
fn in_chunks(path: &Path, threads: usize, chunk: usize, filter: Option<&str>) -> Option<String> {
    let (report, damage) = damaged_in_chunks(path, threads, chunk, filter)?;
    assert!(damage.is_empty());
    Some(report)
}

/// [`in_chunks`], with the byte offsets of the damage the run met.
fn damaged_in_chunks(
    path: &Path,
    threads: usize,
    chunk: usize,
    filter: Option<&str>,
) -> Option<(String, Vec<Option<u64>>)> {
    let (mut inputs, _) = Inputs::open(&[path.to_path_buf()], false);
    let mut whole = Whole(Analyzer::new(Config::default()));
    let selection = Selection::new(filter).unwrap();
    let ran = sharded::analyse_in_chunks(&mut inputs, &Decoder::default(), &selection, &mut whole, threads, chunk)?;
    assert_eq!(inputs.last_number(), ran.frames, "the inputs are numbered as one reader leaves them");
    Some((report_json(&whole.0, &inputs), ran.damage.iter().map(|d| d.offset).collect()))
}

/// Chunk sizes that cut `len` bytes into at most 20,000 chunks: every size to 40 bytes (record
/// headers are 16 or 24), then a few larger, with the thread counts taken in turn.
fn cuts(len: usize) -> impl Iterator<Item = (usize, usize)> {
    let sizes = (1..=40).chain([63, 64, 100, 333, 1000, 4096, 65536, 1 << 20]);
    let threads = [2, 3, 4, 8, 1].into_iter().cycle();
    sizes.filter(move |&chunk| len / chunk <= 20_000).zip(threads)
}

/// How many files share out the cuts: the `k`th file is cut at every `SHARES`th size of
/// [`cuts`], from the `k % SHARES`th. One size already cuts a file of many records at
/// almost every offset within them; every size runs on some files, each file at small and
/// large sizes, and the test takes a quarter of the time of every size on every file.
const SHARES: usize = 4;

fn pcap_files() -> Vec<PathBuf> {
    let mut files = samples();
    if let Some(dir) = common::shared_subdir("reference-captures") {
        files.extend(std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()));
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "pcap"));
    files
}

#[test]
fn a_pcap_file_cut_at_any_offset_gives_one_threads_report() {
    for (k, file) in pcap_files().into_iter().enumerate() {
        let one = one_thread(std::slice::from_ref(&file), Config::default());
        let len = std::fs::metadata(&file).unwrap().len() as usize;
        for (chunk, threads) in cuts(len).skip(k % SHARES).step_by(SHARES) {
            let cut = in_chunks(&file, threads, chunk, None).expect("a pcap file is read by every thread");
            assert!(cut == one, "{}: {threads} threads, {chunk}-byte chunks: not one thread's report", file.display());
        }
    }
}

#[test]
fn frames_are_numbered_across_chunks_as_one_reader_numbers_them() {
    let file = samples().into_iter().find(|f| f.ends_with("congestion_ecn_cnp.pcap")).unwrap();
    let filters = ["frame.number >= 100 && frame.number <= 400", "frame.time_relative >= 0.0005 || macc"];
    for filter in filters {
        let one = one_thread_of(std::slice::from_ref(&file), Config::default(), Some(filter));
        for (chunk, threads) in [(17, 3), (1000, 2), (4096, 8)] {
            let cut = in_chunks(&file, threads, chunk, Some(filter)).unwrap();
            assert!(cut == one, "-Y {filter:?}, {chunk}-byte chunks on {threads} threads");
        }
    }
}

/// The records of a little-endian microsecond pcap file: each header and its data.
fn records(pcap: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let caplen = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        out.push((&pcap[at..at + 16], &pcap[at + 16..at + 16 + caplen]));
        at += 16 + caplen;
    }
    out
}

#[test]
fn a_payload_that_looks_like_records_does_not_move_a_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let sample = samples().into_iter().find(|f| f.ends_with("rc_write_healthy.pcap")).unwrap();
    let bytes = std::fs::read(&sample).unwrap();
    // after the tenth record, a frame whose payload is eight record headers in a row: each
    // plausible (fraction below a second, 0 bytes captured of 0), at the tenth's time
    let mut crafted = bytes[..24].to_vec();
    let mut decoy_at = 0;
    for (i, (header, data)) in records(&bytes).into_iter().enumerate() {
        crafted.extend_from_slice(header);
        crafted.extend_from_slice(data);
        if i == 9 {
            let mut payload = vec![0xff; 12];
            payload.extend_from_slice(&[0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x88, 0xb5]);
            for _ in 0..8 {
                payload.extend_from_slice(&header[..8]);
                payload.extend_from_slice(&[0; 8]);
            }
            crafted.extend_from_slice(&header[..8]);
            let len = (payload.len() as u32).to_le_bytes();
            crafted.extend_from_slice(&len);
            crafted.extend_from_slice(&len);
            decoy_at = crafted.len() + 20;
            crafted.extend_from_slice(&payload);
        }
    }
    let path = dir.path().join("decoy.pcap");
    std::fs::write(&path, &crafted).unwrap();
    let (inputs, _) = Inputs::open(std::slice::from_ref(&path), false);
    let (_, walk) = inputs.walk_again().unwrap();
    let found = walk.resync(decoy_at - 20, crafted.len());
    assert!(found.is_some_and(|at| (decoy_at - 20..=decoy_at).contains(&at)), "the decoy looks like records");
    let one = one_thread(std::slice::from_ref(&path), Config::default());
    for (chunk, threads) in cuts(crafted.len()) {
        let cut = in_chunks(&path, threads, chunk, None).unwrap();
        assert!(cut == one, "{chunk}-byte chunks on {threads} threads: not one thread's report");
    }
}

#[test]
fn a_capture_damaged_in_the_middle_is_reported_alike_on_every_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = generated(dir.path(), "4M");
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = {
        let mut at = 24;
        for _ in 0..records(&bytes).len() / 2 {
            at += 16 + u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        }
        at
    };
    // a captured length past libpcap's limit
    bytes[middle + 8..middle + 12].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    let damaged = dir.path().join("damaged.pcap");
    std::fs::write(&damaged, &bytes).unwrap();
    // every thread reads the frames before the damage, at any cut, and the reader names it
    let one_report = one_thread(std::slice::from_ref(&damaged), Config::default());
    for (chunk, threads) in [(17, 3), (4096, 2), (1 << 16, 8), (1 << 20, 2)] {
        let (report, damage) = damaged_in_chunks(&damaged, threads, chunk, None).expect("read up to the damage");
        assert_eq!(damage, [Some(middle as u64)], "{chunk}-byte chunks on {threads} threads");
        assert!(report == one_report, "{chunk}-byte chunks on {threads} threads: not one thread's report");
    }
    let out = |threads: &str| common::run(&["analyze", "--json", "--threads", threads, damaged.to_str().unwrap()]);
    let one = out("1");
    let report: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(report["inputs"][0]["damage"]["offset"].as_u64(), Some(middle as u64), "{report:#}");
    assert_eq!(report["totals"]["frames"].as_u64(), Some(records(&bytes[..middle]).len() as u64));
    for threads in ["2", "3", "8"] {
        let other = out(threads);
        assert!(other.stdout == one.stdout && other.stderr == one.stderr, "--threads {threads}");
    }
}

/// A pcapng block of `kind` around `body` (padded to 4 bytes), lengths little-endian.
fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let padded = body.len().next_multiple_of(4);
    let len = (12 + padded) as u32;
    let mut out = [kind.to_le_bytes(), len.to_le_bytes()].concat();
    out.extend_from_slice(body);
    out.resize(8 + padded, 0);
    out.extend_from_slice(&len.to_le_bytes());
    out
}

/// A little-endian microsecond pcap file of Ethernet frames written as pcapng: a section
/// header, one interface, an enhanced packet block per record (every third with a comment of
/// 1 to 13 bytes in its options), and between them now and then a name resolution block and an
/// interface statistics block.
fn as_pcapng(pcap: &[u8]) -> Vec<u8> {
    let section = [0x1a2b_3c4du32.to_le_bytes().as_slice(), &[1, 0, 0, 0], &[0xff; 8]].concat();
    let mut out = block(0x0a0d_0d0a, &section);
    out.extend(block(1, &[1, 0, 0, 0, 0, 0, 0, 0]));
    for (i, (header, data)) in records(pcap).into_iter().enumerate() {
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap());
        let units = u64::from(word(0)) * 1_000_000 + u64::from(word(4));
        let time = [((units >> 32) as u32).to_le_bytes(), (units as u32).to_le_bytes()].concat();
        let mut body = [0u32.to_le_bytes().as_slice(), &time, &header[8..16], data].concat();
        body.resize(body.len().next_multiple_of(4), 0);
        if i % 3 == 0 {
            let comment = vec![b'c'; i % 13 + 1];
            body.extend_from_slice(&[1, 0, comment.len() as u8, 0]);
            body.extend_from_slice(&comment);
            body.resize(body.len().next_multiple_of(4), 0);
            body.extend_from_slice(&[0; 4]);
        }
        out.extend(block(6, &body));
        if i % 7 == 3 {
            out.extend(block(4, &[0; 4]));
            out.extend(block(5, &[[0; 4].as_slice(), &time].concat()));
        }
    }
    out
}

#[test]
fn a_pcapng_file_cut_at_any_offset_gives_one_threads_report() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["rc_write_healthy.pcap", "congestion_ecn_cnp.pcap"] {
        let sample = samples().into_iter().find(|f| f.ends_with(name)).unwrap();
        let pcapng = as_pcapng(&std::fs::read(&sample).unwrap());
        let path = dir.path().join(name).with_extension("pcapng");
        std::fs::write(&path, &pcapng).unwrap();
        let one = one_thread(std::slice::from_ref(&path), Config::default());
        let pcap = serde_json::from_str::<serde_json::Value>(&one_thread(&[sample], Config::default())).unwrap();
        assert_eq!(serde_json::from_str::<serde_json::Value>(&one).unwrap()["totals"], pcap["totals"]);
        for (chunk, threads) in cuts(pcapng.len()) {
            let cut = in_chunks(&path, threads, chunk, None).expect("a pcapng file is read by every thread");
            assert!(cut == one, "{name} as pcapng: {threads} threads, {chunk}-byte chunks: not one thread's report");
        }
        // cut inside its last block: the frames before, and the damage where one reader finds it
        let short = dir.path().join(name).with_extension("short.pcapng");
        std::fs::write(&short, &pcapng[..pcapng.len() - 10]).unwrap();
        let (mut inputs, _) = Inputs::open(std::slice::from_ref(&short), false);
        while inputs.next_frame().is_some() {}
        let expected: Vec<Option<u64>> = inputs.take_damage().iter().map(|d| d.offset).collect();
        assert_eq!(expected.len(), 1);
        let one = one_thread(std::slice::from_ref(&short), Config::default());
        for (chunk, threads) in [(13, 2), (4096, 3)] {
            let (cut, damage) = damaged_in_chunks(&short, threads, chunk, None).expect("read up to the damage");
            assert!(cut == one && damage == expected, "{name} cut short: {threads} threads, {chunk}-byte chunks");
        }
    }
}

#[test]
fn a_pcapng_file_that_describes_an_interface_late_is_read_by_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let sample = samples().into_iter().find(|f| f.ends_with("rc_write_healthy.pcap")).unwrap();
    let mut pcapng = as_pcapng(&std::fs::read(&sample).unwrap());
    pcapng.extend(block(1, &[1, 0, 0, 0, 0, 0, 0, 0]));
    let path = dir.path().join("late.pcapng");
    std::fs::write(&path, &pcapng).unwrap();
    assert!(in_chunks(&path, 2, 4096, None).is_none(), "a late interface description declines");
    let one = one_thread(std::slice::from_ref(&path), Config::default());
    assert_eq!(split(std::slice::from_ref(&path), Config::default(), 2).as_deref(), Some(one.as_str()));
}
