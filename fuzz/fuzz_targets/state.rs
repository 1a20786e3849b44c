//! Arbitrary bytes as a saved analysis (a state file), read back and, where it reads back,
//! merged after an empty analysis as `rocescope merge` merges a part (its kept frames analysed
//! again), then gone on with as `analyze --resume` goes on: a sample's frames after it, the
//! analysis's end, the JSON report and the HTML page. A damaged state must be refused with an
//! error, never a panic or a memory blow-up.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::analyze::combine::parts;
use rocescope::analyze::{Analyzer, SavedRun, assemble};
use rocescope::capture::{CaptureReader, Inputs};
use rocescope::decode::Decoder;
use rocescope::display_filter::DisplayFilter;

/// The frames that follow the saved analysis: a go-back-N recovery.
const FRAMES: &[u8] = include_bytes!("../../samples/loss_go_back_n.pcap");

/// What a state may decompress to here: far more than the seeds, far less than the RSS limit.
const DECOMPRESSED_AT_MOST: u64 = 64 << 20;

fuzz_target!(|data: &[u8]| {
    // the fuzzed state merged after a part with no frame: its kept frames analysed again
    let load = |fuzzed: &bool| match fuzzed {
        true => SavedRun::load_at_most(data, DECOMPRESSED_AT_MOST),
        false => SavedRun::load_at_most(data, DECOMPRESSED_AT_MOST).map(|part| before(&part)),
    };
    let parts = vec![("before".to_string(), false), ("fuzzed".to_string(), true)];
    let Ok(saved) = parts::merge(parts, load, DisplayFilter::is_positional) else { return };
    let sample = Box::new(std::io::Cursor::new(FRAMES.to_vec()));
    let Ok(reader) = CaptureReader::from_reader("sample".into(), sample, false) else { return };
    let mut inputs = Inputs::new(vec![reader]);
    inputs.number_from(saved.frames_read.saturating_add(1));
    let (decoder, mut analyzer) = (Decoder::new(&[]), saved.analyzer);
    while let Some(frame) = inputs.next_frame() {
        rocescope_fuzz::decode_and_observe(&decoder, &mut analyzer, frame.number, &frame.record);
    }
    analyzer.finish();
    let report = assemble::report(&analyzer, saved.inputs, None);
    let _ = serde_json::to_vec(&report);
    let _ = rocescope::output::report::html::render(&report);
});

/// A part with no frame that comes before `part`: merged, `part`'s kept frames are analysed
/// again after it.
fn before(part: &SavedRun) -> SavedRun {
    SavedRun {
        analyzer: Analyzer::new(part.analyzer.config()),
        frames_read: 0,
        first_ts_ns: Some(i64::MIN),
        display_filter: part.display_filter.clone(),
        inputs: Vec::new(),
        output: Vec::new(),
    }
}
