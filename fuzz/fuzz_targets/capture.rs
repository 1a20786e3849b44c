//! Arbitrary bytes as a capture file: the pcap, pcapng, gzip and zstd readers, both from a
//! stream and from a memory-mapped file. A reader must report damage, never panic, and never
//! allocate more than its documented bounds.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use rocescope::capture::CaptureReader;

fn read_all(mut reader: CaptureReader) {
    let mut records = 0u32;
    while let Ok(true) = reader.advance() {
        if let Some(record) = reader.current() {
            let _ = (record.data.len(), record.ts_ns, record.orig_len, record.link_type, record.offset);
        }
        records += 1;
        if records > 100_000 {
            break;
        }
    }
    let _ = reader.info();
}

fuzz_target!(|data: &[u8]| {
    if let Ok(reader) = CaptureReader::from_reader("fuzz".into(), Box::new(std::io::Cursor::new(data.to_vec())), false)
    {
        read_all(reader);
    }
    let Ok(mut file) = tempfile::NamedTempFile::new() else { return };
    if file.write_all(data).is_ok()
        && let Ok(reader) = CaptureReader::open(file.path(), false)
    {
        read_all(reader);
    }
});
