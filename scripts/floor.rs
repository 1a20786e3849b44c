//! The floor of the benchmark: the least work any analyzer of a capture file must do. It maps
//! a classic pcap file, walks every record header and computes the CRC-32 (crc32fast) of every
//! frame's captured bytes, split over N threads (contiguous runs of records of about equal
//! size). `scripts/bench.py` times `rocescope analyze` against it, on the same thread count.
//!
//!     cargo run --release --example floor -- FILE [THREADS]

use std::fs::File;

use memmap2::Mmap;

/// The offsets of the records of a classic pcap file (after its 24-byte header), each with its
/// captured length; the byte order comes from the magic number.
fn records(file: &[u8]) -> Vec<(usize, usize)> {
    let big_endian = matches!(file.get(..4), Some([0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d]));
    let u32_at = |at: usize| {
        let b: [u8; 4] = file.get(at..at + 4).and_then(|b| b.try_into().ok()).unwrap_or([0; 4]);
        if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
    };
    let mut at = 24;
    let mut out = Vec::new();
    while at + 16 <= file.len() {
        let caplen = u32_at(at + 8) as usize;
        if at + 16 + caplen > file.len() {
            break;
        }
        out.push((at + 16, caplen));
        at += 16 + caplen;
    }
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: floor FILE [THREADS]");
    let threads: usize = args.next().map_or(1, |t| t.parse().expect("a thread count"));
    let map = unsafe { Mmap::map(&File::open(&path).expect("the capture opens")) }.expect("the capture maps");
    let records = records(&map);
    let chunk = records.len().div_ceil(threads.max(1)).max(1);
    let digest = std::thread::scope(|scope| {
        let workers: Vec<_> = records
            .chunks(chunk)
            .map(|run| {
                let map = &map;
                scope.spawn(move || run.iter().fold(0u32, |acc, &(at, len)| acc ^ crc32fast::hash(&map[at..at + len])))
            })
            .collect();
        workers.into_iter().fold(0u32, |acc, w| acc ^ w.join().expect("a worker"))
    });
    println!("{} records, digest {digest:08x}", records.len());
}
