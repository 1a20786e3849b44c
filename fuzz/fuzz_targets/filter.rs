//! Arbitrary text as a display filter (`-Y`, the browser's filter bar): compiled, and where it
//! compiles, matched against every frame of a sample of many layers, as `packets -Y` and
//! `analyze -Y` match it. A filter must compile or be refused with a message, never panic or
//! overflow the stack, however long or deeply nested.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::capture::{CaptureReader, Inputs};
use rocescope::decode::Decoder;
use rocescope::display_filter::{DisplayFilter, Selection};
use rocescope::fields::Frame;

/// Frames of every encapsulation the decoder knows, and of RoCE.
const FRAMES: &[u8] = include_bytes!("../../samples/encapsulations.pcapng");

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(filter) = DisplayFilter::compile(&text) else {
        let _ = Selection::new(Some(&text));
        return;
    };
    let (_, _, _) = (filter.uses_analysis(), filter.uses_icrc(), filter.uses_position());
    let Ok(mut selection) = Selection::new(Some(&text)) else { return };
    let sample = Box::new(std::io::Cursor::new(FRAMES.to_vec()));
    let Ok(reader) = CaptureReader::from_reader("sample".into(), sample, false) else { return };
    let mut inputs = Inputs::new(vec![reader]);
    let decoder = Decoder::new(&[]);
    while let Some(frame) = inputs.next_frame() {
        let packet = decoder.decode(&frame.record);
        let _ = filter.matches(&Frame {
            number: frame.number,
            packet: &packet,
            first_ts_ns: 0,
            previous_ts_ns: None,
            previous_shown_ts_ns: None,
            verdict: None,
        });
        let _ = selection.keeps(frame.number, &packet);
    }
});
