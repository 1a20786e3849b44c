//! The analysis's state saved mid-capture and read back goes on exactly as if it had never
//! stopped: for every sample and every reference and real capture, cut at several frames
//! (inside retransmit episodes, pause storms and CM exchanges among them), the report of the
//! first part's analysis saved, loaded and given the rest equals the report of one run, key by
//! key; and a saved state read back and saved again is the same bytes.

mod common;

use std::path::{Path, PathBuf};

use rocescope::analyze::frame::FrameSummary;
use rocescope::analyze::{Analyzer, Config, SavedRun, assemble};
use rocescope::capture::Inputs;
use rocescope::decode::Decoder;

/// Every frame of `path`, summarised as the analysis takes them.
fn summaries(path: &Path) -> Vec<FrameSummary> {
    let (mut inputs, errors) = Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty(), "{errors:?}");
    let decoder = Decoder::new(&[]);
    let mut frames = Vec::new();
    while let Some(frame) = inputs.next_frame() {
        frames.push(FrameSummary::of(frame.number, &decoder.decode(&frame.record)));
    }
    frames
}

/// `analyzer` saved, as a run that read no files.
fn saved(analyzer: Analyzer) -> Vec<u8> {
    let run = SavedRun {
        analyzer,
        frames_read: 0,
        first_ts_ns: None,
        display_filter: None,
        inputs: Vec::new(),
        output: Vec::new(),
    };
    let mut bytes = Vec::new();
    run.save(&mut bytes).expect("saved");
    bytes
}

fn read_back(bytes: &[u8]) -> SavedRun {
    SavedRun::load(bytes).expect("read back")
}

/// The report, as JSON, of an analysis given `frames`, saved and read back after each frame
/// whose index is in `cuts`.
fn report(frames: &[FrameSummary], cuts: &[usize]) -> serde_json::Value {
    let mut analyzer = Analyzer::new(Config::default());
    for (i, frame) in frames.iter().enumerate() {
        if cuts.contains(&i) {
            analyzer = read_back(&saved(analyzer)).analyzer;
        }
        analyzer.observe(frame);
    }
    analyzer.finish();
    let mut report = serde_json::to_value(assemble::report(&analyzer, Vec::new(), None)).expect("JSON");
    // the tool's version is the same either way; nothing else is left out
    report.as_object_mut().expect("an object").remove("tool");
    report
}

#[test]
fn a_state_saved_and_read_back_goes_on_as_one_run() {
    for path in common::samples_and_shared_captures() {
        let frames = summaries(&path);
        let whole = report(&frames, &[]);
        let n = frames.len();
        // a cut after the first frame, at every tenth, and before the last
        let cuts: Vec<usize> = [1, n / 10, n / 4, n / 3, n / 2, 2 * n / 3, 9 * n / 10, n.saturating_sub(1)]
            .into_iter()
            .filter(|&c| c > 0 && c < n)
            .collect();
        for &cut in &cuts {
            assert_eq!(report(&frames, &[cut]), whole, "{} cut before frame {}", path.display(), cut + 1);
        }
        assert_eq!(report(&frames, &cuts), whole, "{} cut at {cuts:?}", path.display());
    }
}

#[test]
fn a_state_read_back_saves_again_and_bad_ones_are_refused() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/congestion_ecn_cnp.pcap");
    let frames = summaries(&path);
    let half = frames.len() / 2;
    let mut analyzer = Analyzer::new(Config::default());
    frames[..half].iter().for_each(|f| analyzer.observe(f));
    let saved = saved(analyzer);
    let again = self::saved(read_back(&saved).analyzer);
    assert_eq!(again, saved, "a state read back and saved again is the same bytes");
    let mut twice = read_back(&again).analyzer;
    frames[half..].iter().for_each(|f| twice.observe(f));
    twice.finish();
    let mut report = serde_json::to_value(assemble::report(&twice, Vec::new(), None)).expect("JSON");
    report.as_object_mut().expect("an object").remove("tool");
    assert_eq!(report, self::report(&frames, &[]));
    let refused = |bytes: &[u8]| SavedRun::load(bytes).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused(b"RSC").contains("too short"));
    assert!(refused(b"PCAPSTATE\x01\x00\x00\x00").contains("not a saved analysis"));
    let mut other_version = saved.clone();
    other_version[8] = 99;
    assert!(refused(&other_version).contains("format 99"));
    assert!(refused(&saved[..saved.len() / 2]).contains("damaged"));
    let mut wrong_sum = saved.clone();
    wrong_sum[12] ^= 1;
    assert!(refused(&wrong_sum).contains("checksum does not match"));
    let limited = SavedRun::load_at_most(&saved[..], 64).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(limited.contains("larger than 64 bytes once decompressed"), "{limited}");
}
