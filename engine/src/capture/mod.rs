//! Capture input: pcap (µs and ns, both byte orders, the "modified" variant) and pcapng (any
//! number of sections and interfaces, per-interface link type and time resolution, enhanced
//! and simple packet blocks), chosen by magic number; gzip and zstd compression are removed
//! transparently. No libpcap: records are parsed with `pcap-parser` over a streaming buffer.
//!
//! Damage inside a file ends that file at the damaged record with a [`CaptureError`] that
//! names the file and the byte offset; the records before it are delivered.

mod inputs;
pub mod interfaces;
pub mod mapped;
mod source;
pub mod walk;

pub use inputs::{Alignment, Frame, Inputs};

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use pcap_parser::nom;
use pcap_parser::pcapng::{Block, parse_block_be, parse_block_le};
use pcap_parser::{Linktype, PcapError, parse_pcap_header};

use source::{ByteSource, StreamSource};

/// The largest captured length libpcap accepts for a pcap record whatever the file's snap
/// length says (libpcap `MAXIMUM_SNAPLEN`).
pub const MAX_PCAP_RECORD: u32 = 262_144;
/// The largest pcapng block read; a longer one is treated as damage.
pub const MAX_PCAPNG_BLOCK: usize = 16 << 20;

/// Link-layer header types (tcpdump.org/linktypes.html) the decoder understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkType(pub u32);

impl LinkType {
    pub const ETHERNET: LinkType = LinkType(1);
    pub const RAW: LinkType = LinkType(101);
    pub const LINUX_SLL: LinkType = LinkType(113);
    pub const IPV4: LinkType = LinkType(228);
    pub const IPV6: LinkType = LinkType(229);
    pub const LINUX_SLL2: LinkType = LinkType(276);
    /// ERF records (Endace cards, `ibdump`).
    pub const ERF: LinkType = LinkType(197);
    /// An InfiniBand packet from its LRH through its VCRC.
    pub const INFINIBAND: LinkType = LinkType(247);
    /// DLT_RAW as some systems write it in pcap files.
    pub const RAW_BSD: LinkType = LinkType(12);
    pub const RAW_OPENBSD: LinkType = LinkType(14);
}

/// One captured frame.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Timestamp in nanoseconds since the Unix epoch.
    pub ts_ns: i64,
    /// Length of the frame on the wire.
    pub orig_len: u32,
    /// The captured bytes (`data.len()` is the captured length).
    pub data: &'a [u8],
    pub link_type: LinkType,
    /// Byte offset of the record in the (decompressed) file.
    pub offset: u64,
}

#[cfg(test)]
impl<'a> Record<'a> {
    /// An Ethernet frame of these bytes at time 0, whole, at the file's start: a record for
    /// the engine's own tests.
    pub(crate) fn ethernet(data: &'a [u8]) -> Record<'a> {
        let orig_len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        Record { ts_ns: 0, orig_len, data, link_type: LinkType::ETHERNET, offset: 0 }
    }
}

/// Container formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    Pcap,
    Pcapng,
}

impl Container {
    pub fn name(self) -> &'static str {
        match self {
            Container::Pcap => "pcap",
            Container::Pcapng => "pcapng",
        }
    }
}

/// Compression wrapped around the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// The time resolution of a pcapng file: each interface declares its own.
pub const PER_INTERFACE: &str = "per-interface";

/// Facts about an opened capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureInfo {
    pub container: Container,
    pub compression: Compression,
    /// pcap: "us" or "ns"; pcapng: per interface, so "per-interface".
    pub ts_resolution: &'static str,
    pub big_endian: bool,
    /// pcap: the file's snap length; pcapng: that of the first interface that declares one,
    /// once its description is read (0 = unlimited, or not read yet).
    pub snaplen: u32,
    /// pcapng: the names of the interfaces described so far (`if_name`, empty for one with
    /// none), in order, the first [`MAX_INTERFACE_NAMES`]; a classic pcap file names none.
    pub interfaces: Vec<String>,
}

/// Interface names kept per capture, and the characters kept of each.
pub const MAX_INTERFACE_NAMES: usize = 64;
pub const MAX_INTERFACE_NAME_CHARS: usize = 64;

/// Why a capture could not be opened or read on.
#[derive(Debug)]
pub struct CaptureError {
    pub file: String,
    /// Byte offset of the damage (in the decompressed stream when compressed).
    pub offset: Option<u64>,
    pub message: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{}: at byte offset {offset}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for CaptureError {}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link_type: LinkType,
    snaplen: u32,
    /// Timestamp units per second.
    units_per_second: u64,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset_seconds: i64,
}

enum Format {
    Pcap(PcapLayout),
    Pcapng { big_endian: bool, interfaces: Vec<Interface>, names: Vec<String> },
}

/// Where the next record's bytes sit in the buffer, with its metadata.
struct Located {
    start: usize,
    len: usize,
    ts_ns: i64,
    orig_len: u32,
    link_type: LinkType,
    /// The pcapng interface it was captured on (0 in a pcap file).
    interface: u32,
}

/// A pull reader of [`Record`]s from one capture.
pub struct CaptureReader {
    name: String,
    source: ByteSource,
    format: Format,
    info: CaptureInfo,
    /// The record moved to last and the bytes its block spans (consumed at the next advance).
    current: Option<(Located, usize)>,
    /// Set once the file has ended or is damaged.
    finished: bool,
    /// Timestamp of the last packet, given to simple packet blocks (which carry none).
    last_ts_ns: i64,
}

impl CaptureReader {
    /// Opens a capture file; `-` reads standard input. With `read_ahead`, the file is read
    /// (and decompressed) on a thread of its own while the caller parses.
    pub fn open(path: &Path, read_ahead: bool) -> Result<CaptureReader, CaptureError> {
        let name = path.display().to_string();
        let fail = |message: String| CaptureError { file: name.clone(), offset: None, message };
        if path.as_os_str() == "-" {
            return Self::from_stream(name.clone(), Box::new(io::stdin()), read_ahead, true);
        }
        let mut file = File::open(path).map_err(|e| fail(io_message(&e)))?;
        let metadata = file.metadata().map_err(|e| fail(io_message(&e)))?;
        if metadata.is_dir() {
            return Err(fail("is a directory".into()));
        }
        let mut magic = [0u8; 4];
        let sniffed = source::fill(&mut file, &mut magic).map_err(|e| fail(io_message(&e)))?;
        let compressed = matches!(magic, [0x1f, 0x8b, ..] | [0x28, 0xb5, 0x2f, 0xfd]);
        if metadata.is_file()
            && sniffed == 4
            && !compressed
            && let Ok(mapped) = mapped::MappedFile::new(&file)
        {
            return Self::from_source(name, ByteSource::Mapped(mapped), Compression::None);
        }
        let prefix = io::Cursor::new(magic.get(..sniffed).unwrap_or_default().to_vec());
        // a FIFO or a character device gives its bytes as they come
        let pipe = !metadata.is_file();
        Self::from_stream(name, Box::new(prefix.chain(file)), read_ahead, pipe)
    }

    /// Reads a capture from any byte stream; `name` is used in messages.
    pub fn from_reader(
        name: String,
        reader: Box<dyn Read + Send>,
        read_ahead: bool,
    ) -> Result<CaptureReader, CaptureError> {
        Self::from_stream(name, reader, read_ahead, false)
    }

    /// Reads a capture from a byte stream, a `pipe` (each frame parsed as it arrives) or not.
    fn from_stream(
        name: String,
        mut reader: Box<dyn Read + Send>,
        read_ahead: bool,
        pipe: bool,
    ) -> Result<CaptureReader, CaptureError> {
        let fail = |offset: Option<u64>, message: String| CaptureError { file: name.clone(), offset, message };
        let mut magic = [0u8; 4];
        let sniffed = source::fill(reader.as_mut(), &mut magic).map_err(|e| fail(None, io_message(&e)))?;
        let prefix = magic.get(..sniffed).unwrap_or_default().to_vec();
        let compression = match prefix.as_slice() {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [0x28, 0xb5, 0x2f, 0xfd] => Compression::Zstd,
            _ => Compression::None,
        };
        let whole = io::Cursor::new(prefix).chain(reader);
        let stream: Box<dyn Read + Send> = match compression {
            Compression::None => Box::new(whole),
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(whole))),
            Compression::Zstd => {
                Box::new(zstd::stream::read::Decoder::new(whole).map_err(|e| fail(None, format!("zstd: {e}")))?)
            }
        };
        let source = if pipe { StreamSource::pipe(stream, read_ahead) } else { StreamSource::new(stream, read_ahead) };
        Self::from_source(name, ByteSource::Stream(source), compression)
    }

    /// Reads the capture header from `source` and sets up the record parser.
    fn from_source(
        name: String,
        mut source: ByteSource,
        compression: Compression,
    ) -> Result<CaptureReader, CaptureError> {
        let fail = |offset: Option<u64>, message: String| CaptureError { file: name.clone(), offset, message };
        source.fill_to(64);
        let (format, info) = match source.available() {
            [] => return Err(fail(None, stream_failure(compression, &source).unwrap_or_else(|| "empty file".into()))),
            [0x0a, 0x0d, 0x0d, 0x0a, ..] => {
                let big_endian = match source.available().get(8..12) {
                    Some([0x1a, 0x2b, 0x3c, 0x4d]) => true,
                    Some([0x4d, 0x3c, 0x2b, 0x1a]) => false,
                    _ => return Err(fail(Some(8), "pcapng section header with an unknown byte-order magic".into())),
                };
                let info = CaptureInfo {
                    container: Container::Pcapng,
                    compression,
                    ts_resolution: PER_INTERFACE,
                    big_endian,
                    snaplen: 0,
                    interfaces: Vec::new(),
                };
                (Format::Pcapng { big_endian, interfaces: Vec::new(), names: Vec::new() }, info)
            }
            bytes if known_other_format(bytes).is_some() => return Err(fail(None, not_a_capture(bytes))),
            bytes => match parse_pcap_header(bytes) {
                Ok((_, header)) => {
                    let big_endian = header.is_bigendian();
                    let nanos = header.is_nanosecond_precision();
                    let link_type = LinkType(u32::try_from(header.network.0).unwrap_or(u32::MAX));
                    let info = CaptureInfo {
                        container: Container::Pcap,
                        compression,
                        ts_resolution: if nanos { "ns" } else { "us" },
                        big_endian,
                        snaplen: header.snaplen,
                        interfaces: Vec::new(),
                    };
                    source.consume(header.size());
                    let modified = header.is_modified_format();
                    (Format::Pcap(PcapLayout { big_endian, modified, nanos, link_type, snaplen: header.snaplen }), info)
                }
                Err(nom::Err::Incomplete(_)) => {
                    let cause = stream_failure(compression, &source).map(|f| format!(": {f}")).unwrap_or_default();
                    return Err(fail(None, format!("file ends inside the pcap file header{cause}")));
                }
                Err(_) => return Err(fail(None, not_a_capture(bytes))),
            },
        };
        Ok(CaptureReader { name, source, format, info, current: None, finished: false, last_ts_ns: 0 })
    }

    /// The memory mapping the records are read from, when the file is mapped, for a thread
    /// that reads their bytes later (it takes over releasing consumed pages).
    pub fn share_mapping(&mut self) -> Option<std::sync::Arc<memmap2::Mmap>> {
        match &mut self.source {
            ByteSource::Mapped(m) => Some(m.share()),
            ByteSource::Stream(_) => None,
        }
    }

    /// The memory-mapped file walked from any offset ([`walk`]), its first packet located (the
    /// blocks before it read: a pcapng file's interfaces described); `None` for a file read as
    /// a stream or found damaged before its first packet.
    pub fn walk_from_first(&mut self) -> Option<walk::FileWalk> {
        if !matches!(self.source, ByteSource::Mapped(_)) {
            return None;
        }
        let (layout, first) = match &self.format {
            Format::Pcap(layout) => (walk::Layout::Pcap(*layout), self.source.offset()),
            Format::Pcapng { .. } => {
                let any = self.advance().ok()?;
                let Format::Pcapng { big_endian, interfaces, .. } = &self.format else { return None };
                let first = if any { self.source.offset() } else { self.size()? };
                (walk::Layout::Pcapng { big_endian: *big_endian, interfaces: interfaces.clone() }, first)
            }
        };
        let ByteSource::Mapped(mapped) = &self.source else { return None };
        Some(walk::FileWalk::new(mapped.mapping(), layout, usize::try_from(first).ok()?))
    }

    /// Moves on to `offset`, a record boundary at or past where this reader of a
    /// memory-mapped file stands, and reads the record there: the damage found there, as
    /// reading every record up to it would report it; `None` when the record there is whole
    /// (or `offset` lies behind).
    pub fn damage_at(&mut self, offset: u64) -> Option<CaptureError> {
        let skip = usize::try_from(offset.checked_sub(self.source.offset())?).ok()?;
        self.current = None;
        self.source.consume(skip);
        self.advance().err()
    }

    /// A reader of the same memory-mapped file from its start, with a mapping of its own;
    /// `None` for a file read as a stream.
    pub fn reopen(&self) -> Option<Result<CaptureReader, CaptureError>> {
        let ByteSource::Mapped(mapped) = &self.source else { return None };
        let source = mapped.reopen().map(ByteSource::Mapped).map_err(|e| CaptureError {
            file: self.name.clone(),
            offset: None,
            message: io_message(&e),
        });
        Some(source.and_then(|source| Self::from_source(self.name.clone(), source, Compression::None)))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of the (decompressed) file consumed so far.
    pub fn position(&self) -> u64 {
        self.source.offset()
    }

    /// The file's size, when it is known before reading (a memory-mapped file).
    pub fn size(&self) -> Option<u64> {
        match &self.source {
            ByteSource::Mapped(m) => Some(m.size() as u64),
            ByteSource::Stream(_) => None,
        }
    }

    pub fn info(&self) -> &CaptureInfo {
        &self.info
    }

    /// Moves to the next record. Returns `Ok(false)` at the end of the file. An error reports
    /// damage at a byte offset; the file yields nothing after it.
    pub fn advance(&mut self) -> Result<bool, CaptureError> {
        if let Some((_, consumed)) = self.current.take() {
            self.source.consume(consumed);
        }
        if self.finished {
            return Ok(false);
        }
        match self.locate_next() {
            Ok(Some(found)) => {
                self.current = Some(found);
                Ok(true)
            }
            Ok(None) => {
                self.finished = true;
                Ok(false)
            }
            Err(message) => {
                self.finished = true;
                Err(CaptureError { file: self.name.clone(), offset: Some(self.source.offset()), message })
            }
        }
    }

    /// The record [`CaptureReader::advance`] moved to, until the next call to it.
    pub fn current(&self) -> Option<Record<'_>> {
        let (located, _) = self.current.as_ref()?;
        let data = self.source.available().get(located.start..located.start + located.len).unwrap_or_default();
        Some(Record {
            ts_ns: located.ts_ns,
            orig_len: located.orig_len,
            data,
            link_type: located.link_type,
            offset: self.source.offset(),
        })
    }

    /// The interface of the current record: its index among the file's interface descriptions
    /// and its name (`if_name`) when it has one. A pcap file's records are all on interface 0.
    pub fn current_interface(&self) -> Option<(u32, Option<&str>)> {
        let (located, _) = self.current.as_ref()?;
        let name = self.info.interfaces.get(located.interface as usize).map(String::as_str).filter(|n| !n.is_empty());
        Some((located.interface, name))
    }

    /// A pcapng file's snap length is the first one an interface declares; its interfaces'
    /// names are noted as they are described.
    fn note_interfaces(&mut self) {
        let Format::Pcapng { interfaces, names, .. } = &self.format else { return };
        if let Some(first) = interfaces.first()
            && self.info.snaplen == 0
        {
            self.info.snaplen = first.snaplen;
        }
        if self.info.interfaces.len() != names.len() {
            self.info.interfaces.clone_from(names);
        }
    }

    /// Parses blocks until a packet is found; returns where its bytes are and how many bytes
    /// the block spans. Non-packet pcapng blocks update the interface table and are consumed.
    fn locate_next(&mut self) -> Result<Option<(Located, usize)>, String> {
        let mut want = 64usize;
        loop {
            self.source.fill_to(want);
            let available = self.source.available();
            if available.is_empty() && self.source.at_eof() {
                return match stream_failure(self.info.compression, &self.source) {
                    Some(failure) => Err(failure),
                    None => Ok(None),
                };
            }
            let step = match &mut self.format {
                Format::Pcap(layout) => pcap_step(available, *layout),
                Format::Pcapng { big_endian, interfaces, names } => {
                    pcapng_step(available, big_endian, interfaces, names, self.last_ts_ns)?
                }
            };
            match step {
                Step::Packet(located, consumed) => {
                    self.last_ts_ns = located.ts_ns;
                    return Ok(Some((located, consumed)));
                }
                Step::Skip(consumed) => {
                    self.source.consume(consumed);
                    self.note_interfaces();
                    want = 64;
                }
                Step::Incomplete(needed, limit) => {
                    if needed > limit {
                        return Err(format!(
                            "record claims {needed} bytes, more than the {limit}-byte limit; the file is damaged"
                        ));
                    }
                    if self.source.at_eof() {
                        let have = self.source.available().len();
                        let cause = stream_failure(self.info.compression, &self.source)
                            .map(|f| format!(": {f}"))
                            .unwrap_or_default();
                        return Err(format!("file ends inside a record ({have} of {needed} bytes present){cause}"));
                    }
                    want = needed;
                }
                Step::Damaged(message) => return Err(message),
            }
        }
    }
}

/// How a classic pcap file's records are laid out (its file header's facts).
#[derive(Debug, Clone, Copy)]
struct PcapLayout {
    big_endian: bool,
    /// The "modified" variant (Alexey Kuznetsov's): 8 more bytes per record header, read
    /// little-endian whatever the file's byte order (as pcap-parser reads them).
    modified: bool,
    nanos: bool,
    link_type: LinkType,
    snaplen: u32,
}

impl PcapLayout {
    fn header_len(self) -> usize {
        if self.modified { 24 } else { 16 }
    }

    /// The fields of the record header at the start of `bytes` (libpcap's `pcap_sf_pkthdr`):
    /// seconds, fraction of a second, captured length, length on the wire.
    fn header(self, bytes: &[u8]) -> Option<[u32; 4]> {
        let big_endian = self.big_endian && !self.modified;
        let word = |i: usize| {
            let b: [u8; 4] = bytes.get(i * 4..i * 4 + 4)?.try_into().ok()?;
            Some(if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
        };
        Some([word(0)?, word(1)?, word(2)?, word(3)?])
    }
}

/// The next step through a classic pcap file: a record, or the bytes it needs in all.
fn pcap_step(available: &[u8], layout: PcapLayout) -> Step {
    let header_len = layout.header_len();
    let record_limit = layout.snaplen.max(MAX_PCAP_RECORD) as usize + 24;
    let Some([seconds, fraction, caplen, orig_len]) = layout.header(available) else {
        return Step::Incomplete(header_len, record_limit);
    };
    let end = header_len + caplen as usize;
    if available.len() < end {
        return Step::Incomplete(end, record_limit);
    }
    let fraction_ns = if layout.nanos { u64::from(fraction) } else { u64::from(fraction) * 1_000 };
    let ts_ns = i64::try_from(u64::from(seconds) * 1_000_000_000 + fraction_ns).unwrap_or(i64::MAX);
    let located =
        Located { start: header_len, len: caplen as usize, ts_ns, orig_len, link_type: layout.link_type, interface: 0 };
    Step::Packet(located, end)
}

/// The next step through a pcapng file: a packet, a block that only updates the interfaces
/// (or the byte order), or why there is none yet.
fn pcapng_step(
    available: &[u8],
    big_endian: &mut bool,
    interfaces: &mut Vec<Interface>,
    names: &mut Vec<String>,
    last_ts_ns: i64,
) -> Result<Step, String> {
    let base = available.as_ptr() as usize;
    let parse = if *big_endian { parse_block_be } else { parse_block_le };
    // pcap-parser subtracts 12 from a block's length before checking it for some block
    // types, so an impossible length is refused here first
    if let Some(reason) = bad_lengths(available, *big_endian) {
        return Err(format!("unreadable pcapng block: {reason}"));
    }
    Ok(match parse(available) {
        Ok((rest, block)) => {
            let consumed = available.len() - rest.len();
            // an unnamed interface keeps its place (an empty name), so that names stay by index
            if let Block::InterfaceDescription(idb) = &block
                && names.len() < MAX_INTERFACE_NAMES
            {
                let name = idb.if_name().and_then(Result::ok).unwrap_or_default();
                names.push(name.chars().take(MAX_INTERFACE_NAME_CHARS).collect());
            }
            match ng_block(block, base, big_endian, interfaces, last_ts_ns) {
                Ok(Some(located)) => Step::Packet(located, consumed),
                Ok(None) => Step::Skip(consumed),
                Err(message) => Step::Damaged(message),
            }
        }
        Err(nom::Err::Incomplete(needed)) => Step::Incomplete(available.len() + needed_bytes(needed), MAX_PCAPNG_BLOCK),
        Err(e) => Step::Damaged(format!(
            "unreadable pcapng block: {}",
            bad_block_reason(available, *big_endian).unwrap_or_else(|| pcap_error(&e))
        )),
    })
}

enum Step {
    Packet(Located, usize),
    Skip(usize),
    /// Bytes needed in all, and the most a record may take.
    Incomplete(usize, usize),
    Damaged(String),
}

/// Handles one pcapng block: updates section state, or locates a packet. A simple packet
/// block has no timestamp and is given `previous_ts_ns`, that of the packet before it.
fn ng_block(
    block: Block<'_>,
    base: usize,
    big_endian: &mut bool,
    interfaces: &mut Vec<Interface>,
    previous_ts_ns: i64,
) -> Result<Option<Located>, String> {
    match block {
        Block::SectionHeader(shb) => {
            *big_endian = shb.big_endian();
            interfaces.clear();
            Ok(None)
        }
        Block::InterfaceDescription(idb) => {
            let units_per_second = idb.ts_resolution().filter(|u| *u > 0).ok_or_else(|| {
                format!("interface {} has an unusable if_tsresol {}", interfaces.len(), idb.if_tsresol)
            })?;
            interfaces.push(Interface {
                link_type: LinkType(u32::try_from(idb.linktype.0).unwrap_or(u32::MAX)),
                snaplen: idb.snaplen,
                units_per_second,
                offset_seconds: idb.if_tsoffset,
            });
            Ok(None)
        }
        Block::EnhancedPacket(epb) => enhanced_packet(&epb, base, interfaces).map(Some),
        Block::SimplePacket(spb) => {
            let iface = interfaces.first().ok_or("simple packet block before any interface description")?;
            let mut len = (spb.origlen as usize).min(spb.data.len());
            if iface.snaplen > 0 {
                len = len.min(iface.snaplen as usize);
            }
            Ok(Some(Located {
                start: spb.data.as_ptr() as usize - base,
                len,
                ts_ns: previous_ts_ns,
                orig_len: spb.origlen,
                link_type: iface.link_type,
                interface: 0,
            }))
        }
        _ => Ok(None),
    }
}

/// Where an enhanced packet block's packet lies (from `base`), with its interface's facts.
fn enhanced_packet(
    epb: &pcap_parser::pcapng::EnhancedPacketBlock<'_>,
    base: usize,
    interfaces: &[Interface],
) -> Result<Located, String> {
    let iface = interfaces.get(epb.if_id as usize).ok_or_else(|| {
        format!("packet block names interface {} but only {} are described", epb.if_id, interfaces.len())
    })?;
    let units = (u128::from(epb.ts_high) << 32) | u128::from(epb.ts_low);
    let ns = units * 1_000_000_000 / u128::from(iface.units_per_second);
    let ts_ns =
        i64::try_from(ns).unwrap_or(i64::MAX).saturating_add(iface.offset_seconds.saturating_mul(1_000_000_000));
    let len = (epb.caplen as usize).min(epb.data.len());
    Ok(Located {
        start: epb.data.as_ptr() as usize - base,
        len,
        ts_ns,
        orig_len: epb.origlen,
        link_type: iface.link_type,
        interface: epb.if_id,
    })
}

fn needed_bytes(needed: nom::Needed) -> usize {
    match needed {
        nom::Needed::Size(n) => n.get(),
        nom::Needed::Unknown => 1,
    }
}

/// The 32-bit word at `at` of a pcapng block.
fn block_word(bytes: &[u8], at: usize, big_endian: bool) -> Option<u32> {
    let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
}

/// What is wrong with the lengths of the pcapng block at the start of `bytes` (pcapng §3.1: a
/// block is at least 12 bytes long and a multiple of 4; §4.3: an enhanced packet block's
/// captured length fits within it), told before the block is parsed.
fn bad_lengths(bytes: &[u8], big_endian: bool) -> Option<String> {
    let len = block_word(bytes, 4, big_endian)?;
    if len < 12 {
        return Some(format!("block length {len} is below the 12-byte minimum"));
    }
    if len % 4 != 0 {
        return Some(format!("block length {len} is not a multiple of 4"));
    }
    if block_word(bytes, 0, big_endian)? != ENHANCED_PACKET_BLOCK {
        return None;
    }
    let room = len.checked_sub(EPB_OVERHEAD)?;
    let caplen = block_word(bytes, 20, big_endian)?;
    (caplen > room).then(|| {
        format!("an enhanced packet block of {len} bytes claims a captured length of {caplen}, more than the {room} it holds")
    })
}

/// pcapng §4.3: the enhanced packet block's type, and the bytes it has besides its packet data
/// and options (type, length, interface, timestamp, captured and original length, length).
const ENHANCED_PACKET_BLOCK: u32 = 6;
const EPB_OVERHEAD: u32 = 32;

/// Why the pcapng block at the start of `bytes` is unreadable, when its lengths tell: a bad
/// leading length, or a trailing copy that differs from it.
fn bad_block_reason(bytes: &[u8], big_endian: bool) -> Option<String> {
    if let Some(reason) = bad_lengths(bytes, big_endian) {
        return Some(reason);
    }
    let len = block_word(bytes, 4, big_endian)?;
    let trailing = block_word(bytes, len as usize - 4, big_endian)?;
    (trailing != len).then(|| format!("block length {len} does not match the {trailing} at its end"))
}

fn pcap_error(e: &nom::Err<PcapError<&[u8]>>) -> String {
    match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => match e {
            PcapError::HeaderNotRecognized => "header not recognized".into(),
            PcapError::NomError(_, kind) => format!("{kind:?}"),
            other => format!("{other:?}"),
        },
        nom::Err::Incomplete(_) => "incomplete".into(),
    }
}

fn io_message(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Why the stream under a capture ended before its end, if it did: a decompressor that met
/// damage (a `.gz` or `.zst` cut short), or a failed read. The records before it are read.
fn stream_failure(compression: Compression, source: &ByteSource) -> Option<String> {
    let (e, end) = source.failure()?;
    Some(match compression {
        Compression::None => format!("read failed after {end} bytes: {}", io_message(e)),
        Compression::Gzip => format!("gzip stream: {e} after {end} decompressed bytes"),
        Compression::Zstd => format!("zstd stream: {e} after {end} decompressed bytes"),
    })
}

impl From<Linktype> for LinkType {
    fn from(l: Linktype) -> Self {
        LinkType(u32::try_from(l.0).unwrap_or(u32::MAX))
    }
}

/// Why a file whose first bytes are `bytes` is not read: its magic, and what it is where known.
fn not_a_capture(bytes: &[u8]) -> String {
    let magic: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let known = known_other_format(bytes).map(|advice| format!(": {advice}")).unwrap_or_default();
    format!("not a pcap or pcapng capture (magic {}){known}", magic.join(" "))
}

/// What a file that is not a capture rocescope reads is, by its first bytes, and what to do
/// with it: a compression rocescope does not remove, or another capture format.
fn known_other_format(bytes: &[u8]) -> Option<&'static str> {
    const FORMATS: [(&[u8], &str); 5] = [
        (
            &[0xfd, b'7', b'z', b'X', b'Z', 0],
            "it is xz-compressed, which rocescope does not read: decompress it (`xz -dk FILE`) or pipe it (`xz -dc FILE | rocescope packets -`)",
        ),
        (
            b"BZh",
            "it is bzip2-compressed, which rocescope does not read: decompress it (`bzip2 -dk FILE`) or pipe it (`bzip2 -dc FILE | rocescope packets -`)",
        ),
        (
            &[0x04, 0x22, 0x4d, 0x18],
            "it is lz4-compressed, which rocescope does not read: decompress it (`lz4 -d FILE`) or pipe it (`lz4 -dc FILE | rocescope packets -`)",
        ),
        (
            b"snoop\0\0\0",
            "it is a snoop capture (Solaris), which rocescope does not read: convert it (`editcap -F pcapng FILE OUT.pcapng`)",
        ),
        (b"PK\x03\x04", "it is a zip archive: extract the capture from it (`unzip FILE`)"),
    ];
    FORMATS.iter().find(|(magic, _)| bytes.starts_with(magic)).map(|(_, advice)| *advice)
}
