//! The byte stream under a capture reader: the unread bytes held in memory, their absolute
//! offset (so damage can be reported by position), and the reading itself — either on the
//! caller's thread, or on a read-ahead thread that fills large blocks while the caller parses
//! the previous ones (and, for compressed captures, decompresses them).
//!
//! Blocks carry empty headroom in front of their data: a record cut by a block boundary is
//! completed by copying its start into the next block's headroom, so records are parsed in
//! place and bytes are copied only at block boundaries.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes read into one block.
const BLOCK: usize = 256 << 10;
/// Room in front of each block for the start of a record cut by the previous block boundary.
const HEADROOM: usize = 64 << 10;
/// Blocks filled ahead of the parser.
const BLOCKS_AHEAD: usize = 4;

/// A filled block: data at `buf[HEADROOM..HEADROOM + len]`, then the error that ended the
/// stream, if one did.
struct Block {
    buf: Vec<u8>,
    len: usize,
    failure: Option<io::Error>,
}

/// Reads until `buf` is full, the stream ends or a read fails; returns the bytes read and the
/// failure. A decompressor that meets damage (a gzip or zstd file cut short) fails after it
/// has given every byte it could decompress: those bytes are kept.
fn fill_until_failure(reader: &mut dyn Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(e)),
        }
    }
    (filled, None)
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
pub(super) fn fill(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    match fill_until_failure(reader, buf) {
        (_, Some(e)) => Err(e),
        (filled, None) => Ok(filled),
    }
}

/// A block read from `reader` into `buf`: full, or with `eager` whatever one read gives (a
/// pipe's bytes as they arrive, so that a slow writer's frames are not held back).
fn read_block(reader: &mut dyn Read, mut buf: Vec<u8>, eager: bool) -> Block {
    let space = buf.get_mut(HEADROOM..).unwrap_or_default();
    let (len, failure) = if eager { read_some(reader, space) } else { fill_until_failure(reader, space) };
    Block { buf, len, failure }
}

/// One read that gives bytes (or the end, or a failure).
fn read_some(reader: &mut dyn Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    loop {
        match reader.read(buf) {
            Ok(n) => return (n, None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (0, Some(e)),
        }
    }
}

fn new_block_buffer() -> Vec<u8> {
    vec![0; HEADROOM + BLOCK]
}

/// Where blocks come from.
enum Feed {
    /// Read on the caller's thread (eagerly or not).
    Direct(Box<dyn Read + Send>, bool),
    /// Read ahead on a thread of their own.
    Ahead { blocks: Receiver<Block>, recycle: SyncSender<Vec<u8>>, _thread: JoinHandle<()> },
}

impl Feed {
    fn ahead(mut reader: Box<dyn Read + Send>, eager: bool) -> Feed {
        let (block_tx, blocks) = mpsc::sync_channel::<Block>(BLOCKS_AHEAD);
        let (recycle, recycled) = mpsc::sync_channel::<Vec<u8>>(BLOCKS_AHEAD + 2);
        let thread = std::thread::spawn(move || {
            loop {
                let buf = recycled.try_recv().unwrap_or_else(|_| new_block_buffer());
                let block = read_block(reader.as_mut(), buf, eager);
                let done = block.len == 0 || block.failure.is_some();
                if block_tx.send(block).is_err() || done {
                    return;
                }
            }
        });
        Feed::Ahead { blocks, recycle, _thread: thread }
    }

    /// The next block, reusing `spare` where possible; `len` 0 at the end of the stream.
    fn next(&mut self, spare: Vec<u8>) -> Block {
        match self {
            Feed::Direct(reader, eager) => {
                let buf = if spare.len() == HEADROOM + BLOCK { spare } else { new_block_buffer() };
                read_block(reader.as_mut(), buf, *eager)
            }
            Feed::Ahead { blocks, recycle, .. } => {
                if spare.len() == HEADROOM + BLOCK {
                    let _ = recycle.try_send(spare);
                }
                blocks.recv().unwrap_or(Block { buf: Vec::new(), len: 0, failure: None })
            }
        }
    }
}

/// A stream read in blocks (see the module documentation).
pub struct StreamSource {
    feed: Feed,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// The read error that ended the stream early, once met.
    failure: Option<io::Error>,
    /// Stream offset of `buf[start]`.
    offset: u64,
}

impl StreamSource {
    /// A source over `reader`; with `read_ahead`, reading happens on a thread of its own.
    pub fn new(reader: Box<dyn Read + Send>, read_ahead: bool) -> Self {
        Self::with_feed(if read_ahead { Feed::ahead(reader, false) } else { Feed::Direct(reader, false) })
    }

    /// A source over a pipe (standard input, a FIFO): each block is what one read gives, so
    /// frames are parsed as they arrive rather than once a block is full.
    pub fn pipe(reader: Box<dyn Read + Send>, read_ahead: bool) -> Self {
        Self::with_feed(if read_ahead { Feed::ahead(reader, true) } else { Feed::Direct(reader, true) })
    }

    fn with_feed(feed: Feed) -> Self {
        StreamSource { feed, buf: Vec::new(), start: 0, end: 0, eof: false, failure: None, offset: 0 }
    }

    /// The unread bytes held in memory.
    pub fn available(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    /// Stream offset of the first unread byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Has the stream ended (no more bytes beyond [`ByteSource::available`])?
    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// The read error that ended the stream, if it did not end cleanly.
    pub fn failure(&self) -> Option<&io::Error> {
        self.failure.as_ref()
    }

    /// Stream offset of the byte after the last one read.
    pub fn read_end(&self) -> u64 {
        self.offset + (self.end - self.start) as u64
    }

    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.offset += n as u64;
    }

    /// Reads until at least `want` unread bytes are held or the stream ends (cleanly, or with
    /// the [`StreamSource::failure`] it ended with). The caller bounds `want`.
    pub fn fill_to(&mut self, want: usize) {
        while self.end - self.start < want && !self.eof {
            let spare = std::mem::take(&mut self.buf);
            let tail_range = self.start..self.end;
            let tail_len = tail_range.len();
            // Keep the unread tail of the current block before asking for the next.
            let mut tail_copy = None;
            if tail_len > 0 {
                tail_copy = Some(spare.get(tail_range.clone()).unwrap_or_default().to_vec());
            }
            let block = self.feed.next(spare);
            if block.len == 0 || block.failure.is_some() {
                self.eof = true;
                self.failure = block.failure;
            }
            let tail = tail_copy.unwrap_or_default();
            if tail.len() <= HEADROOM && block.buf.len() == HEADROOM + BLOCK {
                let mut buf = block.buf;
                let at = HEADROOM - tail.len();
                buf.get_mut(at..HEADROOM).unwrap_or_default().copy_from_slice(&tail);
                self.buf = buf;
                self.start = at;
                self.end = HEADROOM + block.len;
            } else {
                // A record longer than the headroom (or the end of the stream): join the two.
                let mut joined = tail;
                joined.extend_from_slice(block.buf.get(HEADROOM..HEADROOM + block.len).unwrap_or_default());
                self.end = joined.len();
                self.start = 0;
                self.buf = joined;
            }
        }
    }
}

/// Where a capture reader's bytes come from: a mapped regular file, or a stream.
pub enum ByteSource {
    Mapped(super::mapped::MappedFile),
    Stream(StreamSource),
}

impl ByteSource {
    /// The unread bytes held in memory.
    pub fn available(&self) -> &[u8] {
        match self {
            ByteSource::Mapped(m) => m.available(),
            ByteSource::Stream(s) => s.available(),
        }
    }

    /// Stream offset of the first unread byte.
    pub fn offset(&self) -> u64 {
        match self {
            ByteSource::Mapped(m) => m.offset(),
            ByteSource::Stream(s) => s.offset(),
        }
    }

    /// Has the stream ended (no more bytes beyond [`ByteSource::available`])?
    pub fn at_eof(&self) -> bool {
        match self {
            ByteSource::Mapped(_) => true,
            ByteSource::Stream(s) => s.at_eof(),
        }
    }

    pub fn consume(&mut self, n: usize) {
        match self {
            ByteSource::Mapped(m) => m.consume(n),
            ByteSource::Stream(s) => s.consume(n),
        }
    }

    /// Makes at least `want` unread bytes available unless the stream ends first.
    pub fn fill_to(&mut self, want: usize) {
        if let ByteSource::Stream(s) = self {
            s.fill_to(want);
        }
    }

    /// The read error that ended the stream early, if one did, and the stream offset it
    /// ended at.
    pub fn failure(&self) -> Option<(&io::Error, u64)> {
        match self {
            ByteSource::Mapped(_) => None,
            ByteSource::Stream(s) => s.failure().map(|e| (e, s.read_end())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most 3 bytes per call.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(3).min(self.0.len() - self.1);
            out[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    fn check_stream(read_ahead: bool) {
        let data: Vec<u8> = (0..100).collect();
        let mut s = StreamSource::new(Box::new(Trickle(data, 0)), read_ahead);
        s.fill_to(10);
        assert!(s.available().len() >= 10);
        s.consume(7);
        assert_eq!(s.offset(), 7);
        assert_eq!(s.available()[0], 7);
        s.fill_to(1000);
        assert!(s.at_eof());
        assert_eq!(s.available().len(), 93);
        s.consume(93);
        assert_eq!(s.offset(), 100);
        assert!(s.available().is_empty());
    }

    #[test]
    fn fills_across_short_reads_and_tracks_offsets() {
        check_stream(false);
        check_stream(true);
    }

    /// A reader that gives `0..len` in 1000-byte reads, then fails.
    struct FailsAfter(usize, usize);

    impl Read for FailsAfter {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.1 == self.0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut short"));
            }
            let n = out.len().min(1000).min(self.0 - self.1);
            out.iter_mut().zip(self.1..).take(n).for_each(|(b, i)| *b = (i % 251) as u8);
            self.1 += n;
            Ok(n)
        }
    }

    #[test]
    fn the_bytes_before_a_failed_read_are_kept() {
        for read_ahead in [false, true] {
            let len = BLOCK + 12_345;
            let mut s = StreamSource::new(Box::new(FailsAfter(len, 0)), read_ahead);
            s.fill_to(BLOCK);
            assert!(s.failure().is_none(), "the first block is whole");
            s.consume(BLOCK - 10);
            s.fill_to(1 << 20);
            assert!(s.at_eof());
            assert_eq!(s.available().len(), 12_355);
            assert_eq!(s.available()[10], (BLOCK % 251) as u8);
            assert_eq!(s.read_end(), len as u64);
            assert_eq!(s.failure().map(|e| e.to_string()), Some("cut short".into()));
        }
    }

    fn check_records_across_blocks(read_ahead: bool) {
        // 3.5 blocks of bytes i % 251, read as 1000-byte records and one 300 KiB record
        // (longer than the headroom) straddling a block boundary.
        let data: Vec<u8> = (0..(BLOCK * 7 / 2)).map(|i| (i % 251) as u8).collect();
        let mut s = StreamSource::new(Box::new(io::Cursor::new(data.clone())), read_ahead);
        let mut at = 0usize;
        let mut sizes = std::iter::repeat_n(1000, BLOCK / 1000).chain([300 << 10]).chain(std::iter::repeat(1000));
        loop {
            let size = sizes.next().unwrap();
            s.fill_to(size);
            let available = s.available();
            if available.is_empty() {
                break;
            }
            let n = size.min(available.len());
            assert_eq!(&available[..n], &data[at..at + n], "at {at}");
            assert_eq!(s.offset(), at as u64);
            s.consume(n);
            at += n;
        }
        assert_eq!(at, data.len());
    }

    #[test]
    fn records_cut_by_block_boundaries_are_whole() {
        check_records_across_blocks(false);
        check_records_across_blocks(true);
    }
}
