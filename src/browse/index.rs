//! The browser's index of frames: where each frame lies in its file's memory mapping, its
//! record's facts and the analysis's verdict on it, built on a thread of its own while the
//! interface shows what is indexed so far; at the end, the analysis's report. Frames are decoded again from the mapping when they
//! are shown; only the index (some 50 bytes per frame) is held.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::spool::FrameStore;
use crate::analyze::frame::FrameSummary;
use crate::analyze::report::Report;
use crate::analyze::{Analyzer, Config, Verdict, assemble};
use crate::capture::mapped::Location;
use crate::capture::{CaptureError, Inputs};
use crate::decode::Decoder;

/// One indexed frame.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub location: Location,
    /// The analysis's final verdict (the default until it is final).
    pub verdict: Verdict,
}

/// Frames indexed between two hand-overs to the interface.
const CHUNK: usize = 4096;

/// The index, shared between the thread that builds it and the interface.
pub struct Index {
    entries: RwLock<Vec<Entry>>,
    done: AtomicBool,
    /// Bytes of the inputs read so far, and their size (unknown for compressed or piped input).
    read: AtomicU64,
    size: Option<u64>,
    damage: Mutex<Vec<String>>,
    /// Set by the interface when it quits: the building stops.
    stop: AtomicBool,
    /// The analysis's report, once every frame is indexed.
    report: Mutex<Option<Arc<Report>>>,
}

impl Index {
    pub fn new(size: Option<u64>) -> Self {
        Index {
            entries: RwLock::new(Vec::new()),
            done: AtomicBool::new(false),
            read: AtomicU64::new(0),
            size,
            damage: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            report: Mutex::new(None),
        }
    }

    /// The analysis's report (flows, findings), once every frame is indexed.
    pub fn report(&self) -> Option<Arc<Report>> {
        self.report.lock().ok()?.clone()
    }

    /// Frames indexed so far.
    pub fn len(&self) -> usize {
        self.entries.read().map_or(0, |e| e.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame at `position` (0-based).
    pub fn entry(&self, position: usize) -> Option<Entry> {
        self.entries.read().ok()?.get(position).copied()
    }

    /// The entries from `from` on, as they are now.
    pub fn entries_from(&self, from: usize, at_most: usize) -> Vec<Entry> {
        let Ok(entries) = self.entries.read() else { return Vec::new() };
        entries.get(from..).unwrap_or_default().iter().take(at_most).copied().collect()
    }

    /// The positions of the frames indexed so far that `keep` keeps.
    pub fn positions_where(&self, keep: impl Fn(&Entry) -> bool) -> Vec<u32> {
        let Ok(entries) = self.entries.read() else { return Vec::new() };
        entries.iter().enumerate().filter(|(_, e)| keep(e)).map(|(p, _)| p as u32).collect()
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// How much of the inputs is indexed, 0 to 1, when their size is known.
    pub fn progress(&self) -> Option<f64> {
        if self.is_done() {
            return Some(1.0);
        }
        let size = self.size?;
        Some((self.read.load(Ordering::Relaxed) as f64 / size.max(1) as f64).min(1.0))
    }

    /// Where the inputs were found damaged, one line each.
    pub fn damage(&self) -> Vec<String> {
        self.damage.lock().map(|d| d.clone()).unwrap_or_default()
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Indexes `inputs` to their end (or until [`Index::stop`]), analysing every frame for its
    /// verdict; `store` places each frame where the interface reads it again.
    pub fn build(&self, mut inputs: Inputs, mut store: FrameStore, decoder: &Decoder, config: Config) {
        let mut analyzer = Analyzer::with_verdicts(config);
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut verdicts = Vec::new();
        let mut spool_failure = None;
        while let Some(frame) = inputs.next_frame() {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let location = match store.locate(&frame) {
                Ok(location) => location,
                Err(e) => {
                    spool_failure = Some(format!("frames from {} on not shown: {e}", frame.number));
                    break;
                }
            };
            analyzer.observe(&FrameSummary::of(frame.number, &decoder.decode(&frame.record)));
            chunk.push(Entry { location, verdict: Verdict::default() });
            verdicts.extend(std::iter::from_fn(|| analyzer.next_verdict()));
            if chunk.len() == CHUNK {
                self.hand_over(&mut chunk, &mut verdicts);
                self.read.store(inputs.position(), Ordering::Relaxed);
            }
        }
        analyzer.finish();
        verdicts.extend(std::iter::from_fn(|| analyzer.next_verdict()));
        self.hand_over(&mut chunk, &mut verdicts);
        let damage = inputs.take_damage();
        if let Ok(mut report) = self.report.lock() {
            *report = Some(Arc::new(assemble::report_of_files(&analyzer, inputs.readers(), &damage)));
        }
        if let Ok(mut shown) = self.damage.lock() {
            shown.extend(damage.iter().map(CaptureError::to_string).chain(spool_failure));
        }
        self.done.store(true, Ordering::Release);
    }

    /// Adds the frames of `chunk`, and the verdicts decided since the last hand-over.
    fn hand_over(&self, chunk: &mut Vec<Entry>, verdicts: &mut Vec<(u64, Verdict)>) {
        let Ok(mut entries) = self.entries.write() else { return };
        entries.append(chunk);
        for (number, verdict) in verdicts.drain(..) {
            if let Some(e) = (number as usize).checked_sub(1).and_then(|i| entries.get_mut(i)) {
                e.verdict = verdict;
            }
        }
    }
}
