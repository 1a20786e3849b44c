//! A classic pcap file read through a memory mapping, walked from any byte: the record at an
//! offset, and the first offset of a byte range where a record plausibly starts. This is what
//! lets several threads read one file, each from a range of its own ([`crate::pipeline`]).
//!
//! A pcap file has no sync marks: a record boundary inside the file can only be told by the
//! chain of records it starts (libpcap's `sf-pcap.c` record header: seconds, fraction, captured
//! length, length on the wire). [`PcapWalk::resync`] takes the first offset where a chain of
//! [`CHAIN`] plausible headers starts; it can be fooled by payload that looks like headers,
//! so a caller that needs the true boundary checks it against where the walk of the range
//! before ended.

use std::sync::Arc;

use memmap2::Mmap;

use super::{LinkType, MAX_PCAP_RECORD, Record, Step, pcap_step};

/// Record headers in a row that must be plausible before an offset counts as a boundary.
pub const CHAIN: usize = 8;

/// The most the seconds of two records in a row may differ by in a resynchronising chain.
const MAX_STEP_SECONDS: u64 = 86_400;

/// How a classic pcap file's records are laid out (its file header's facts).
#[derive(Debug, Clone, Copy)]
pub(super) struct PcapLayout {
    pub big_endian: bool,
    /// The "modified" variant (Alexey Kuznetsov's): 8 more bytes per record header.
    pub modified: bool,
    pub nanos: bool,
    pub link_type: LinkType,
    pub snaplen: u32,
}

impl PcapLayout {
    fn header_len(self) -> usize {
        if self.modified { 24 } else { 16 }
    }

    /// The fields of the record header at the start of `bytes`: seconds, fraction, captured
    /// length, length on the wire.
    fn header(self, bytes: &[u8]) -> Option<[u32; 4]> {
        let word = |i: usize| {
            let b: [u8; 4] = bytes.get(i * 4..i * 4 + 4)?.try_into().ok()?;
            Some(if self.big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
        };
        Some([word(0)?, word(1)?, word(2)?, word(3)?])
    }
}

/// What is at an offset of the file.
pub enum Walked<'m> {
    /// A record, and the offset just past it.
    Record(Record<'m>, usize),
    /// The end of the file.
    End,
    /// Bytes that are not a whole record: damage (or, from a wrong boundary, anything).
    Irregular,
}

/// A memory-mapped classic pcap file, walked from any offset.
#[derive(Clone)]
pub struct PcapWalk {
    map: Arc<Mmap>,
    layout: PcapLayout,
    /// Where the first record starts (past the file header).
    first: usize,
}

impl PcapWalk {
    pub(super) fn new(map: Arc<Mmap>, layout: PcapLayout, first: usize) -> PcapWalk {
        PcapWalk { map, layout, first }
    }

    pub fn mapping(&self) -> &Arc<Mmap> {
        &self.map
    }

    /// Where the first record starts.
    pub fn first_record(&self) -> usize {
        self.first
    }

    /// The file's length.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first >= self.map.len()
    }

    /// The record starting at `at`, read as the sequential reader reads it.
    pub fn record_at(&self, at: usize) -> Walked<'_> {
        let Some(available) = self.map.get(at..).filter(|a| !a.is_empty()) else { return Walked::End };
        let l = self.layout;
        match pcap_step(available, l.big_endian, l.modified, l.nanos, l.link_type, l.snaplen) {
            Step::Packet(located, consumed) => {
                let data = available.get(located.start..located.start + located.len).unwrap_or_default();
                let record = Record {
                    ts_ns: located.ts_ns,
                    orig_len: located.orig_len,
                    data,
                    link_type: located.link_type,
                    offset: at as u64,
                };
                Walked::Record(record, at + consumed)
            }
            _ => Walked::Irregular,
        }
    }

    /// The first offset in `from..to` where [`CHAIN`] plausible record headers in a row start
    /// (or fewer that end exactly at the end of the file); `None` when there is none.
    pub fn resync(&self, from: usize, to: usize) -> Option<usize> {
        (from.max(self.first)..to.min(self.map.len())).find(|&at| self.chain_starts_at(at))
    }

    /// Does a chain of plausible record headers start at `at`?
    fn chain_starts_at(&self, mut at: usize) -> bool {
        let mut previous_seconds = None;
        for _ in 0..CHAIN {
            if at == self.map.len() {
                return true;
            }
            let Some(next) = self.plausible_record(at, &mut previous_seconds) else { return false };
            at = next;
        }
        true
    }

    /// The end of the record whose header starts at `at`, if the header is plausible: its
    /// fraction below one second, its captured length within the snap length (libpcap's
    /// limit when the file declares none), the length on the wire and the file, and its
    /// seconds within a day of the record before.
    fn plausible_record(&self, at: usize, previous_seconds: &mut Option<u64>) -> Option<usize> {
        let l = self.layout;
        let [seconds, fraction, caplen, orig_len] = l.header(self.map.get(at..)?)?;
        let one_second = if l.nanos { 1_000_000_000 } else { 1_000_000 };
        let limit = if l.snaplen == 0 { MAX_PCAP_RECORD } else { l.snaplen };
        let seconds = u64::from(seconds);
        let in_step = previous_seconds.is_none_or(|p| p.abs_diff(seconds) <= MAX_STEP_SECONDS);
        let end = at.checked_add(l.header_len())?.checked_add(caplen as usize)?;
        let plausible = fraction < one_second && caplen <= limit && caplen <= orig_len && in_step;
        *previous_seconds = Some(seconds);
        (plausible && end <= self.map.len()).then_some(end)
    }
}
