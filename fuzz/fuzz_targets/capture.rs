//! Arbitrary bytes as a capture file: the pcap, pcapng, gzip and zstd readers, both from a
//! stream and from a memory-mapped file. A reader must report damage, never panic, and never
//! allocate more than its documented bounds. The walk from any offset (what several threads
//! read one file with) must find from the first record what the sequential reader finds, up
//! to where it declines, and resynchronise from any offset without panicking.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use rocescope::capture::CaptureReader;
use rocescope::capture::walk::Walked;

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

fn walk_agrees(path: &std::path::Path) {
    let (Ok(mut sequential), Ok(mut walked)) = (CaptureReader::open(path, false), CaptureReader::open(path, false))
    else {
        return;
    };
    let Some(walk) = walked.walk_from_first() else { return };
    let mut at = walk.first_record();
    loop {
        match walk.record_at(at) {
            Walked::Record(record, next) => {
                assert!(matches!(sequential.advance(), Ok(true)), "the walk found a record the reader does not");
                let read = sequential.current().expect("the record advanced to");
                assert_eq!((read.data, read.ts_ns, read.orig_len), (record.data, record.ts_ns, record.orig_len));
                assert_eq!((read.link_type, read.offset), (record.link_type, record.offset));
                at = next;
            }
            Walked::Other(next) => at = next,
            Walked::End => {
                assert!(matches!(sequential.advance(), Ok(false)), "the walk ended before the reader");
                break;
            }
            Walked::Irregular => break,
        }
    }
    for from in (0..walk.size()).step_by(7) {
        let _ = walk.resync(from, walk.size().min(from + 64));
    }
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
        walk_agrees(file.path());
    }
});
