//! A capture file read through a memory mapping, walked from any byte: the record at an
//! offset, and the first offset of a byte range where a record plausibly starts. This is what
//! lets several threads read one file, each from a range of its own ([`crate::pipeline`]).
//!
//! Neither pcap nor pcapng has sync marks: a record boundary inside the file can only be told
//! by the chain of records it starts. In a pcap file (libpcap's `sf-pcap.c`) a record header
//! holds seconds, a fraction, the captured length and the length on the wire; a pcapng block
//! (draft-ietf-opsawg-pcapng §3.1) starts with its type and length and ends with the length
//! again, and every block starts on a 4-byte boundary of the file. [`FileWalk::resync`] takes
//! the first offset where a chain of [`CHAIN`] plausible records or blocks starts; it can be
//! fooled by payload that looks like them, so a caller that needs the true boundary checks it
//! against where the walk of the range before ended.
//!
//! A pcapng walk knows the interfaces the blocks before the first packet describe, and no
//! others: a section header, an interface description or a simple packet block (whose time is
//! the packet's before) met later is [`Walked::Irregular`], for the caller to read the file
//! from its start instead.

use std::sync::Arc;

use memmap2::Mmap;

use pcap_parser::pcapng::{Block, parse_block_be, parse_block_le};

use super::{
    ENHANCED_PACKET_BLOCK, EPB_OVERHEAD, Interface, Located, MAX_PCAP_RECORD, MAX_PCAPNG_BLOCK, PcapLayout, Record,
    Step, bad_lengths, block_word, enhanced_packet, pcap_step,
};

/// Records or blocks in a row that must be plausible before an offset counts as a boundary.
pub const CHAIN: usize = 8;

/// The most the seconds of two records in a row may differ by in a resynchronising chain.
const MAX_STEP_SECONDS: u64 = 86_400;

/// pcapng block types (draft-ietf-opsawg-pcapng §10.1) that change how later blocks are read.
const SECTION_HEADER_BLOCK: u32 = 0x0a0d_0d0a;
const INTERFACE_DESCRIPTION_BLOCK: u32 = 1;
const SIMPLE_PACKET_BLOCK: u32 = 3;

/// pcapng block types a resynchronising chain accepts: those of §10.1 in use (the obsolete
/// packet block, name resolution, interface statistics, systemd journal export, decryption
/// secrets, custom ones) and the three above.
const KNOWN_BLOCKS: [u32; 11] = [
    SECTION_HEADER_BLOCK,
    INTERFACE_DESCRIPTION_BLOCK,
    2,
    SIMPLE_PACKET_BLOCK,
    4,
    5,
    ENHANCED_PACKET_BLOCK,
    9,
    0x0a,
    0x0bad,
    0x4000_0bad,
];

/// How a file's records are laid out.
#[derive(Debug, Clone)]
pub(super) enum Layout {
    Pcap(PcapLayout),
    /// The byte order of the section and the interfaces described before its first packet.
    Pcapng {
        big_endian: bool,
        interfaces: Vec<Interface>,
    },
}

impl PcapLayout {
    /// The end of the record whose header starts at `at` in `file`, if the header is
    /// plausible: its fraction below one second, its captured length within the snap length
    /// (libpcap's limit when the file declares none), the length on the wire and the file,
    /// and its seconds within a day of the record before.
    fn plausible(self, file: &[u8], at: usize, previous_seconds: &mut Option<u64>) -> Option<usize> {
        let [seconds, fraction, caplen, orig_len] = self.header(file.get(at..)?)?;
        let one_second = if self.nanos { 1_000_000_000 } else { 1_000_000 };
        let limit = if self.snaplen == 0 { MAX_PCAP_RECORD } else { self.snaplen };
        let seconds = u64::from(seconds);
        let in_step = previous_seconds.is_none_or(|p| p.abs_diff(seconds) <= MAX_STEP_SECONDS);
        let end = at.checked_add(self.header_len())?.checked_add(caplen as usize)?;
        let plausible = fraction < one_second && caplen <= limit && caplen <= orig_len && in_step;
        *previous_seconds = Some(seconds);
        (plausible && end <= file.len()).then_some(end)
    }
}

/// What is at an offset of the file.
pub enum Walked<'m> {
    /// A record, and the offset just past it.
    Record(Record<'m>, usize),
    /// A pcapng block that holds no packet, and the offset just past it.
    Other(usize),
    /// The end of the file.
    End,
    /// Bytes that are not a whole record, or a block that changes how later ones are read:
    /// damage or (from a wrong boundary) anything.
    Irregular,
}

/// A memory-mapped capture file, walked from any offset.
#[derive(Clone)]
pub struct FileWalk {
    map: Arc<Mmap>,
    layout: Layout,
    /// Where the first record starts (past the file header, or the blocks before the first
    /// packet).
    first: usize,
}

impl FileWalk {
    pub(super) fn new(map: Arc<Mmap>, layout: Layout, first: usize) -> FileWalk {
        FileWalk { map, layout, first }
    }

    pub fn mapping(&self) -> &Arc<Mmap> {
        &self.map
    }

    /// Where the first record starts.
    pub fn first_record(&self) -> usize {
        self.first
    }

    /// The file's size in bytes.
    pub fn size(&self) -> usize {
        self.map.len()
    }

    /// The record or block starting at `at`, read as the sequential reader reads it.
    pub fn record_at(&self, at: usize) -> Walked<'_> {
        let Some(available) = self.map.get(at..).filter(|a| !a.is_empty()) else { return Walked::End };
        let (located, consumed) = match &self.layout {
            Layout::Pcap(l) => match pcap_step(available, *l) {
                Step::Packet(located, consumed) => (located, consumed),
                _ => return Walked::Irregular,
            },
            Layout::Pcapng { big_endian, interfaces } => match ng_packet(available, *big_endian, interfaces) {
                Ok((Some(located), consumed)) => (located, consumed),
                Ok((None, consumed)) => return Walked::Other(at + consumed),
                Err(()) => return Walked::Irregular,
            },
        };
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

    /// The first offset in `from..to` where [`CHAIN`] plausible records (or blocks) in a row
    /// start, or fewer that end exactly at the end of the file; `None` when there is none.
    pub fn resync(&self, from: usize, to: usize) -> Option<usize> {
        let candidates = from.max(self.first)..to.min(self.map.len());
        match &self.layout {
            Layout::Pcap(l) => {
                candidates.into_iter().find(|&at| self.chain_starts_at(at, |at, p| l.plausible(&self.map, at, p)))
            }
            Layout::Pcapng { big_endian, interfaces } => {
                let aligned = candidates.start.next_multiple_of(4)..candidates.end;
                aligned.step_by(4).find(|&at| {
                    self.chain_starts_at(at, |at, _| plausible_block(&self.map, at, *big_endian, interfaces.len()))
                })
            }
        }
    }

    /// Does a chain of plausible records start at `at`? `plausible` gives the end of the one
    /// at an offset if it is plausible, given the seconds of the one before.
    fn chain_starts_at(&self, mut at: usize, plausible: impl Fn(usize, &mut Option<u64>) -> Option<usize>) -> bool {
        let mut previous_seconds = None;
        for _ in 0..CHAIN {
            if at == self.map.len() {
                return true;
            }
            let Some(next) = plausible(at, &mut previous_seconds) else { return false };
            at = next;
        }
        true
    }
}

/// The end of the pcapng block at `at` in `file`, if it is plausible: a known type, a length
/// of at least 12 bytes, a multiple of 4, within the file and the reader's limit, repeated at
/// its end; an enhanced packet block's interface described and its captured length within it.
fn plausible_block(file: &[u8], at: usize, big_endian: bool, interfaces: usize) -> Option<usize> {
    let block = file.get(at..)?;
    let (kind, len) = (block_word(block, 0, big_endian)?, block_word(block, 4, big_endian)?);
    let len = usize::try_from(len).ok().filter(|l| (12..=MAX_PCAPNG_BLOCK).contains(l) && l % 4 == 0)?;
    let trailing = block_word(block, len.checked_sub(4)?, big_endian)?;
    let packet_fits = kind != ENHANCED_PACKET_BLOCK
        || (len >= EPB_OVERHEAD as usize
            && (block_word(block, 8, big_endian)? as usize) < interfaces
            && block_word(block, 20, big_endian)? as usize <= len - EPB_OVERHEAD as usize);
    (KNOWN_BLOCKS.contains(&kind) && trailing as usize == len && packet_fits).then_some(at + len)
}

/// The packet of the pcapng block at the start of `bytes` (`None` for a block that holds no
/// packet and changes nothing), and the block's length; `Err` for damage, or a block that
/// changes how later ones are read.
fn ng_packet(bytes: &[u8], big_endian: bool, interfaces: &[Interface]) -> Result<(Option<Located>, usize), ()> {
    let kind = block_word(bytes, 0, big_endian).ok_or(())?;
    if matches!(kind, SECTION_HEADER_BLOCK | INTERFACE_DESCRIPTION_BLOCK | SIMPLE_PACKET_BLOCK)
        || bad_lengths(bytes, big_endian).is_some()
    {
        return Err(());
    }
    let parse = if big_endian { parse_block_be } else { parse_block_le };
    let (rest, block) = parse(bytes).map_err(|_| ())?;
    let consumed = bytes.len() - rest.len();
    match block {
        Block::EnhancedPacket(epb) => {
            let located = enhanced_packet(&epb, bytes.as_ptr() as usize, interfaces).map_err(|_| ())?;
            Ok((Some(located), consumed))
        }
        _ => Ok((None, consumed)),
    }
}
