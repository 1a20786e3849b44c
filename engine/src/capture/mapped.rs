//! A regular capture file read through a memory mapping: records are parsed where the kernel's
//! page cache holds them, with no copy at all. Consumed pages are released from the mapping as
//! the reader advances (they stay in the page cache), so the resident set stays bounded by
//! [`RELEASE_EVERY`] however large the file.
//!
//! A mapping is only as stable as the file under it: if another process truncates the file
//! while it is read, the kernel stops the process with SIGBUS, as for any reader of a mapped
//! file. Captures read through standard input (`-`) are never mapped.

use std::fs::File;
use std::io;
use std::sync::Arc;

use memmap2::{Advice, Mmap, MmapOptions, UncheckedAdvice};

use super::{Frame, LinkType, Record};

/// Consumed bytes released from the mapping at a time.
pub const RELEASE_EVERY: usize = 4 << 20;

/// Where `bytes`, which lie in `map`, start in it.
pub fn offset_in(map: &Mmap, bytes: &[u8]) -> usize {
    (bytes.as_ptr() as usize).saturating_sub(map.as_ptr() as usize)
}

/// Where a frame of a memory-mapped input lies in its file's mapping, with its record's facts:
/// what a thread needs to read the frame again later, from the mapping.
#[derive(Debug, Clone, Copy)]
pub struct Location {
    pub file: u16,
    pub at: u64,
    pub caplen: u32,
    pub orig_len: u32,
    pub ts_ns: i64,
    pub link_type: LinkType,
}

impl Location {
    /// Where `frame`, read from one of `mappings`, lies.
    pub fn of(frame: &Frame<'_>, mappings: &[Arc<Mmap>]) -> Location {
        let r = &frame.record;
        let at = mappings.get(frame.file).map_or(0, |map| offset_in(map, r.data));
        Location {
            file: frame.file as u16,
            at: at as u64,
            caplen: r.data.len() as u32,
            orig_len: r.orig_len,
            ts_ns: r.ts_ns,
            link_type: r.link_type,
        }
    }

    /// The frame's captured bytes (none when they are not in `mappings`).
    pub fn bytes<'m>(&self, mappings: &'m [Arc<Mmap>]) -> &'m [u8] {
        let map = mappings.get(usize::from(self.file)).map_or(&[][..], |m| &m[..]);
        let at = usize::try_from(self.at).unwrap_or(usize::MAX);
        map.get(at..at.saturating_add(self.caplen as usize)).unwrap_or_default()
    }

    /// The frame's record, read from `mappings`.
    pub fn record<'m>(&self, mappings: &'m [Arc<Mmap>]) -> Record<'m> {
        let data = self.bytes(mappings);
        Record { ts_ns: self.ts_ns, orig_len: self.orig_len, data, link_type: self.link_type, offset: self.at }
    }
}

pub struct MappedFile {
    /// The file, for another mapping of it ([`MappedFile::reopen`]).
    file: File,
    map: Arc<Mmap>,
    start: usize,
    /// Bytes before this offset have been released.
    released: usize,
    /// Whether this reader releases the pages it consumed (not when another thread still
    /// reads them: see [`MappedFile::share`]).
    releases: bool,
}

/// Releases `map[from..to]` (rounded to whole pages) from the process's page tables.
pub fn release(map: &Mmap, from: usize, to: usize) -> usize {
    let page = page_size();
    let (from, end) = (from / page * page, to / page * page);
    if end > from {
        // SAFETY: MADV_DONTNEED on a read-only file mapping drops the pages from this
        // process's page tables only; a later access would fault them in again from the page
        // cache with the same content.
        let _ = unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, from, end - from) };
    }
    end.max(from)
}

impl MappedFile {
    pub fn new(file: &File) -> io::Result<MappedFile> {
        // SAFETY: the mapping is read-only and private to this reader. The file is not modified
        // by rocescope; a concurrent truncation by another process is the documented SIGBUS
        // caveat of the module.
        let map = unsafe { MmapOptions::new().map(file)? };
        // Sequential access: the kernel reads ahead and may drop pages behind.
        let _ = map.advise(Advice::Sequential);
        Ok(MappedFile { file: file.try_clone()?, map: Arc::new(map), start: 0, released: 0, releases: true })
    }

    /// A mapping of the same file of its own, read from the start: for another thread that
    /// walks the file too, releasing its pages behind it as it goes.
    pub fn reopen(&self) -> io::Result<MappedFile> {
        MappedFile::new(&self.file)
    }

    /// The mapping, for a thread that reads the records' bytes after this reader has moved
    /// on; that thread then releases the pages (this reader stops doing so).
    pub fn share(&mut self) -> Arc<Mmap> {
        self.releases = false;
        Arc::clone(&self.map)
    }

    /// The mapping, for a reader that walks it apart from this one.
    pub fn mapping(&self) -> Arc<Mmap> {
        Arc::clone(&self.map)
    }

    /// The size of the mapped file.
    pub fn size(&self) -> usize {
        self.map.len()
    }

    pub fn available(&self) -> &[u8] {
        self.map.get(self.start..).unwrap_or_default()
    }

    pub fn offset(&self) -> u64 {
        self.start as u64
    }

    pub fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.map.len());
        if self.start - self.released >= RELEASE_EVERY {
            let page = page_size();
            let end = self.start / page * page;
            // SAFETY: MADV_DONTNEED on a read-only file mapping drops the pages from this
            // process's page tables only; a later access (there is none: the range is behind
            // the reader) would fault them in again from the page cache with the same content.
            let _ = unsafe {
                self.map.unchecked_advise_range(UncheckedAdvice::DontNeed, self.released, end - self.released)
            };
            self.released = end;
        }
    }
}

fn page_size() -> usize {
    4096
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_consumes_and_releases() {
        let mut file = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..(3 * RELEASE_EVERY)).map(|i| (i % 253) as u8).collect();
        file.write_all(&data).unwrap();
        let mut m = MappedFile::new(&file).unwrap();
        let mut at = 0;
        while !m.available().is_empty() {
            let n = m.available().len().min(100_000);
            assert_eq!(&m.available()[..n], &data[at..at + n]);
            assert_eq!(m.offset(), at as u64);
            m.consume(n);
            at += n;
        }
        assert_eq!(at, data.len());
        assert!(m.released >= 2 * RELEASE_EVERY);
    }
}
