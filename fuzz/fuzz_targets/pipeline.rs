//! Arbitrary bytes as a capture through the whole `analyze` path: reading, decoding, every
//! packet writer, the analysis, the JSON report and the HTML page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::analyze::Analyzer;
use rocescope::analyze::assemble;
use rocescope::capture::{CaptureReader, Inputs};
use rocescope::decode::Decoder;

fuzz_target!(|data: &[u8]| {
    let Ok(reader) = CaptureReader::from_reader("fuzz".into(), Box::new(std::io::Cursor::new(data.to_vec())), false)
    else {
        return;
    };
    let mut inputs = Inputs::new(vec![reader]);
    let decoder = Decoder::new(&[]);
    let mut analyzer = Analyzer::with_verdicts(Default::default());
    while let Some(frame) = inputs.next_frame() {
        rocescope_fuzz::decode_and_observe(&decoder, &mut analyzer, frame.number, &frame.record);
    }
    let damage = inputs.take_damage();
    analyzer.finish();
    let report = assemble::report_of_files(&analyzer, inputs.readers(), &damage);
    let _ = serde_json::to_vec(&report);
    let _ = rocescope::output::report::html::render(&report);
});
