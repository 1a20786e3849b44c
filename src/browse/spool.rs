//! Where the browser keeps the frames of inputs it cannot map in place (compressed files, pipes):
//! an unlinked temporary file the indexing thread appends each frame's captured bytes to, as
//! it reads them. The file is sized once to [`RESERVED`] bytes (sparse: only what is written
//! takes disk space) and mapped once, so the interface reads spooled frames from a mapping like
//! those of plain files, and the spooled bytes are in the page cache, not the heap. The
//! operating system removes the file when the browser exits.

use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use memmap2::Mmap;

use crate::capture::Frame;
use crate::capture::mapped::Location;

/// The most bytes of frames a spool takes: far beyond what a browser session reads.
pub const RESERVED: u64 = 1 << 38;

pub struct Spool {
    file: File,
    map: Arc<Mmap>,
    written: u64,
}

impl Spool {
    /// A new, empty spool in the system's temporary directory (`TMPDIR`).
    pub fn new() -> io::Result<Spool> {
        let file = tempfile::tempfile()?;
        file.set_len(RESERVED)?;
        // SAFETY: the file is unlinked and private to this process; only `append` writes it,
        // and only past the bytes an index entry refers to.
        let map = Arc::new(unsafe { Mmap::map(&file)? });
        Ok(Spool { file, map, written: 0 })
    }

    /// The spool's mapping: where the interface reads the spooled frames.
    pub fn mapping(&self) -> Arc<Mmap> {
        Arc::clone(&self.map)
    }

    /// Appends `bytes`; where they start in the spool.
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<u64> {
        let at = self.written;
        if at + bytes.len() as u64 > RESERVED {
            return Err(io::Error::other(format!("the spool of compressed or piped input is full ({RESERVED} bytes)")));
        }
        self.file.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(at)
    }
}

/// Where the browser finds its inputs' frames again: each input's mapping, or the spool for
/// inputs that have none.
pub struct FrameStore {
    /// One mapping per input (the spool's for spooled inputs).
    mappings: Vec<Arc<Mmap>>,
    /// Which inputs are spooled, and the spool when any is.
    spooled: Vec<bool>,
    spool: Option<Spool>,
}

impl FrameStore {
    /// The store for inputs with these mappings (`None`: not mapped, to be spooled).
    pub fn new(mapped: Vec<Option<Arc<Mmap>>>) -> io::Result<FrameStore> {
        let spooled: Vec<bool> = mapped.iter().map(Option::is_none).collect();
        let spool = if spooled.contains(&true) { Some(Spool::new()?) } else { None };
        let mappings = mapped.into_iter().filter_map(|m| m.or_else(|| spool.as_ref().map(Spool::mapping))).collect();
        Ok(FrameStore { mappings, spooled, spool })
    }

    /// The mappings the interface reads frames from, by input.
    pub fn mappings(&self) -> Vec<Arc<Mmap>> {
        self.mappings.clone()
    }

    /// Where `frame` can be read again: in its input's mapping, or (for a spooled input)
    /// appended to the spool now.
    pub fn locate(&mut self, frame: &Frame<'_>) -> io::Result<Location> {
        match (&mut self.spool, self.spooled.get(frame.file)) {
            (Some(spool), Some(true)) => {
                Ok(Location { at: spool.append(frame.record.data)?, ..Location::of(frame, &[]) })
            }
            _ => Ok(Location::of(frame, &self.mappings)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_bytes_are_read_back_from_the_mapping_at_their_offset() {
        let mut spool = Spool::new().unwrap();
        let map = spool.mapping();
        assert_eq!(spool.append(b"first").unwrap(), 0);
        assert_eq!(spool.append(b"second").unwrap(), 5);
        assert_eq!(&map[0..5], b"first");
        assert_eq!(&map[5..11], b"second");
        assert_eq!(map.len() as u64, RESERVED);
    }
}
