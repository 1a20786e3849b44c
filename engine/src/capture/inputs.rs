//! Several captures read as one stream of numbered frames, merged by timestamp (rotated files,
//! two taps). Within one file the file's own order is kept.

use super::{CaptureError, CaptureReader, Record};

/// One frame of the merged stream.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based position in the merged stream.
    pub number: u64,
    /// Index of the file it came from.
    pub file: usize,
    pub record: Record<'a>,
}

pub struct Inputs {
    readers: Vec<CaptureReader>,
    /// The reader whose record was handed out last; it advances at the next call.
    last: Option<usize>,
    started: bool,
    next_number: u64,
    /// How many frames are read at most (`-c`), and how many were.
    limit: Option<u64>,
    read: u64,
    damage: Vec<CaptureError>,
}

impl Inputs {
    /// Opens every file, each read ahead on a thread of its own when `read_ahead`; the files
    /// that cannot be opened are returned as errors.
    pub fn open(paths: &[std::path::PathBuf], read_ahead: bool) -> (Inputs, Vec<CaptureError>) {
        let mut readers = Vec::new();
        let mut errors = Vec::new();
        for path in paths {
            match CaptureReader::open(path, read_ahead) {
                Ok(reader) => readers.push(reader),
                Err(e) => errors.push(e),
            }
        }
        (Inputs::new(readers), errors)
    }

    pub fn new(readers: Vec<CaptureReader>) -> Self {
        Inputs { readers, last: None, started: false, next_number: 1, limit: None, read: 0, damage: Vec::new() }
    }

    /// The memory mapping of each file that is mapped (see [`CaptureReader::share_mapping`]).
    pub fn share_mappings(&mut self) -> Vec<Option<std::sync::Arc<memmap2::Mmap>>> {
        self.readers.iter_mut().map(CaptureReader::share_mapping).collect()
    }

    /// The same inputs read again from their start, each with a mapping of its own: `None`
    /// unless every input is a memory-mapped file that opens again.
    pub fn reopen(&self) -> Option<Inputs> {
        let readers: Option<Vec<CaptureReader>> =
            self.readers.iter().map(|r| r.reopen().and_then(Result::ok)).collect();
        readers.map(|readers| Inputs { limit: self.limit, ..Inputs::new(readers) })
    }

    /// The one input read again from its start, with its file walked from any offset (see
    /// [`CaptureReader::walk_from_first`]), for a reading split over threads: `None` for several
    /// inputs, an input read as a stream, a limit on the frames read, or inputs already read
    /// from.
    pub fn walk_again(&self) -> Option<(Inputs, super::walk::FileWalk)> {
        let fresh = self.readers.len() == 1 && !self.started && self.limit.is_none() && self.next_number == 1;
        let mut again = self.reopen().filter(|_| fresh)?;
        let walk = again.readers.first_mut()?.walk_from_first()?;
        Some((again, walk))
    }

    /// The damage the one input's reader finds at `offset` (see [`CaptureReader::damage_at`]).
    pub fn damage_at(&mut self, offset: u64) -> Option<CaptureError> {
        self.readers.first_mut()?.damage_at(offset)
    }

    /// Reads at most `frames` frames (tshark's `-c`): the first of every file in time order.
    pub fn stop_after(&mut self, frames: u64) {
        self.limit = Some(frames);
    }

    /// Numbers the next frame `number`: the files continue a capture whose earlier files
    /// gave the frames before it.
    pub fn number_from(&mut self, number: u64) {
        self.next_number = number;
    }

    /// The number of the last frame read (0 before the first).
    pub fn last_number(&self) -> u64 {
        self.next_number.saturating_sub(1)
    }

    pub fn readers(&self) -> &[CaptureReader] {
        &self.readers
    }

    /// Bytes consumed so far over every file.
    pub fn position(&self) -> u64 {
        self.readers.iter().map(CaptureReader::position).sum()
    }

    /// The total size of the files, when every one is known before reading.
    pub fn size(&self) -> Option<u64> {
        self.readers.iter().map(CaptureReader::size).sum()
    }

    fn advance(&mut self, index: usize) {
        if let Some(Err(e)) = self.readers.get_mut(index).map(CaptureReader::advance) {
            self.damage.push(e);
        }
    }

    /// The next frame in timestamp order, or `None` when every file has ended.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        if self.limit.is_some_and(|limit| self.read >= limit) {
            return None;
        }
        if !self.started {
            self.started = true;
            for i in 0..self.readers.len() {
                self.advance(i);
            }
        } else if let Some(i) = self.last.take() {
            self.advance(i);
        }
        let (file, _) = self
            .readers
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.current().map(|rec| (i, rec.ts_ns)))
            .min_by_key(|&(i, ts)| (ts, i))?;
        self.last = Some(file);
        self.read += 1;
        let number = self.next_number;
        self.next_number = self.next_number.saturating_add(1);
        let record = self.readers.get(file)?.current()?;
        Some(Frame { number, file, record })
    }

    /// Damage met since the last call (each ends its file early).
    pub fn take_damage(&mut self) -> Vec<CaptureError> {
        std::mem::take(&mut self.damage)
    }

    pub fn has_damage(&self) -> bool {
        !self.damage.is_empty()
    }
}
