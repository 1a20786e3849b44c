//! Several captures read as one stream of numbered frames, merged by timestamp (rotated files,
//! two taps). Within one file the file's own order is kept. Files taken on other clocks can be
//! read on one ([`Alignment`]), leaving out the records another file already holds, or taking
//! only one pcapng interface's records.

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

/// How one file's records join the stream when it was taken on a clock of its own, at a tap
/// that saw some packets another file also holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Alignment {
    /// The file's clock minus the stream's, at `reference_ns`.
    pub offset_ns: i64,
    /// How much faster the file's clock runs, in parts per million.
    pub drift_ppm: f64,
    pub reference_ns: i64,
    /// The records (0-based, in file order, among those of `interface`) left out, ascending.
    pub skip: Vec<u64>,
    /// Only the records of this pcapng interface: its name (`if_name`) or its index.
    pub interface: Option<String>,
}

impl Alignment {
    /// Does the file's record on `interface` (its index and name) join the stream?
    fn takes(&self, interface: Option<(u32, Option<&str>)>) -> bool {
        let Some(wanted) = &self.interface else { return true };
        interface.is_some_and(|(index, name)| super::interfaces::names_interface(wanted, index, name))
    }

    /// A time of the file's clock on the stream's: less the offset, and less the drift over
    /// the time since `reference_ns` (on the stream's clock, so the offset is not counted as
    /// time that drifted).
    pub fn aligned(&self, ts_ns: i64) -> i64 {
        let offset_out = ts_ns.saturating_sub(self.offset_ns);
        let drift = self.drift_ppm * 1e-6 * offset_out.saturating_sub(self.reference_ns) as f64;
        offset_out.saturating_sub(drift.round() as i64)
    }
}

/// Where a file stands in its [`Alignment`]: the record it is at and the next one left out.
#[derive(Debug, Clone, Default)]
struct Aligned {
    alignment: Alignment,
    /// The index of the reader's current record.
    record: u64,
    /// The position in `alignment.skip` of the next record left out.
    next_skip: usize,
}

impl Aligned {
    /// Moves to the next record; is it one left out?
    fn advance(&mut self, first: bool) -> bool {
        if !first {
            self.record += 1;
        }
        let skipped = self.alignment.skip.get(self.next_skip) == Some(&self.record);
        self.next_skip += usize::from(skipped);
        skipped
    }
}

pub struct Inputs {
    readers: Vec<CaptureReader>,
    /// One per reader when the files are aligned.
    aligned: Vec<Aligned>,
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
        Inputs {
            readers,
            aligned: Vec::new(),
            last: None,
            started: false,
            next_number: 1,
            limit: None,
            read: 0,
            damage: Vec::new(),
        }
    }

    /// Reads file `i` on the clock `alignments[i]` gives it, without the records it leaves out.
    pub fn aligned(mut self, alignments: Vec<Alignment>) -> Self {
        self.aligned = alignments.into_iter().map(|alignment| Aligned { alignment, ..Aligned::default() }).collect();
        self
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
        let alignments = self.aligned.iter().map(|a| a.alignment.clone()).collect();
        readers.map(|readers| Inputs { limit: self.limit, ..Inputs::new(readers).aligned(alignments) })
    }

    /// The one input read again from its start, with its file walked from any offset (see
    /// [`CaptureReader::walk_from_first`]), for a reading split over threads: `None` for several
    /// inputs, an input read as a stream, a limit on the frames read, or inputs already read
    /// from.
    pub fn walk_again(&self) -> Option<(Inputs, super::walk::FileWalk)> {
        let fresh = self.readers.len() == 1
            && !self.started
            && self.limit.is_none()
            && self.next_number == 1
            && self.aligned.is_empty();
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

    /// Moves file `index` to its next record of its interface that is not left out.
    fn advance(&mut self, index: usize, mut first: bool) {
        let Some(reader) = self.readers.get_mut(index) else { return };
        loop {
            match reader.advance() {
                Err(e) => return self.damage.push(e),
                Ok(false) => return,
                Ok(true) => {}
            }
            let Some(aligned) = self.aligned.get_mut(index) else { return };
            if !aligned.alignment.takes(reader.current_interface()) {
                continue;
            }
            if !aligned.advance(first) {
                return;
            }
            first = false;
        }
    }

    /// The time of file `index`'s current record on the stream's clock.
    fn time_of(&self, index: usize, record: &Record<'_>) -> i64 {
        self.aligned.get(index).map_or(record.ts_ns, |a| a.alignment.aligned(record.ts_ns))
    }

    /// The next frame in timestamp order, or `None` when every file has ended.
    pub fn next_frame(&mut self) -> Option<Frame<'_>> {
        if self.limit.is_some_and(|limit| self.read >= limit) {
            return None;
        }
        if !self.started {
            self.started = true;
            for i in 0..self.readers.len() {
                self.advance(i, true);
            }
        } else if let Some(i) = self.last.take() {
            self.advance(i, false);
        }
        let (file, ts_ns) = self
            .readers
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.current().map(|rec| (i, self.time_of(i, &rec))))
            .min_by_key(|&(i, ts)| (ts, i))?;
        self.last = Some(file);
        self.read += 1;
        let number = self.next_number;
        self.next_number = self.next_number.saturating_add(1);
        let record = Record { ts_ns, ..self.readers.get(file)?.current()? };
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
