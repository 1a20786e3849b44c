//! The pipeline: frames from a source, decoded, handed to what the command chose. It owns the
//! reading loop, the thread layout and the batching, so that every command runs the same one:
//!
//! - [`run`]: one thread reads, decodes and hands every frame to a [`Stage`] in capture order
//!   (`packets`, `annotate`, `capture`);
//! - [`analyse`]: the frames a [`Selection`] keeps, summarised for an [`Analyse`]r (`analyze`).
//!   On one thread; or split by host-pair partition over N analysis threads, when every input
//!   is memory-mapped and nothing is written per frame ([`sharded`]); or
//!   else on two, one reading and decoding, the other analysing and, with memory-mapped
//!   inputs, computing the ICRCs ([`parallel`]).
//!
//! A source is capture files ([`Inputs`]) or, in the command line's live capture, an interface.
//! What a command must know before its main pass (the time source, the path over several
//! taps) is read in passes of their own, which a [`plan`] declares.

mod parallel;
pub mod plan;
pub mod sharded;

use std::io;

use crate::analyze::Analyzer;
use crate::analyze::frame::FrameSummary;
use crate::capture::{CaptureError, Frame, Inputs, Record};
use crate::decode::{DecodedFrame, Decoder};
use crate::display_filter::Selection;

/// Frames between two progress reports (a report reads an atomic clock; this keeps it off the
/// per-frame path).
pub const PROGRESS_EVERY: u64 = 1 << 14;

/// What a source has next.
pub enum Next<'a> {
    Frame(Frame<'a>),
    /// No frame is waiting now (a live interface); ask again.
    Idle,
    End,
}

/// Where frames come from, numbered from 1 in the order they are handed on.
pub trait FrameSource {
    fn next(&mut self) -> Next<'_>;
    /// Where inputs were found damaged since the last call (each ends its file early).
    fn take_damage(&mut self) -> Vec<CaptureError> {
        Vec::new()
    }
    /// Bytes read so far, for a progress bar.
    fn position(&self) -> u64 {
        0
    }
}

impl FrameSource for Inputs {
    fn next(&mut self) -> Next<'_> {
        self.next_frame().map_or(Next::End, Next::Frame)
    }

    fn take_damage(&mut self) -> Vec<CaptureError> {
        Inputs::take_damage(self)
    }

    fn position(&self) -> u64 {
        Inputs::position(self)
    }
}

/// Whether a run goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Continue,
    Stop,
}

/// What [`run`] does with each frame.
pub trait Stage {
    /// Takes one decoded frame; [`Step::Stop`] ends the run (`-c N` reached, Ctrl-C).
    fn frame(&mut self, frame: &Frame<'_>, packet: &DecodedFrame<'_>, decoder: &Decoder) -> io::Result<Step>;
    /// Takes one frame as read: decoded whole and handed to [`Stage::frame`], unless the stage
    /// needs less of it.
    fn record(&mut self, frame: &Frame<'_>, decoder: &Decoder) -> io::Result<Step> {
        self.frame(frame, &decoder.decode(&frame.record), decoder)
    }
    /// The source has no frame waiting (a live interface): time for periodic work.
    fn idle(&mut self) -> io::Result<Step> {
        Ok(Step::Continue)
    }
    /// The run ended: hand on what is still held.
    fn finish(&mut self, decoder: &Decoder) -> io::Result<()>;
}

/// How a run went: the frames read, where the inputs were damaged, and the stages' result.
pub struct Ran<T> {
    pub frames: u64,
    pub damage: Vec<CaptureError>,
    pub result: io::Result<T>,
}

/// Reads `source` to its end (or until `stage` stops or fails), decoding every frame with
/// `decoder` and handing it to `stage` on this thread; `progress` gets the bytes read now and
/// then. Trait objects, so that the loop is compiled here, with the decoder it calls.
pub fn run(source: &mut dyn FrameSource, decoder: &Decoder, stage: &mut dyn Stage, progress: &dyn Fn(u64)) -> Ran<()> {
    let mut frames = 0;
    let mut damage = Vec::new();
    let result = loop {
        let (step, number) = match source.next() {
            Next::Frame(frame) => {
                frames += 1;
                (stage.record(&frame, decoder), frame.number)
            }
            Next::Idle => (stage.idle(), 0),
            Next::End => break stage.finish(decoder),
        };
        if number > 0 && number.is_multiple_of(PROGRESS_EVERY) {
            progress(source.position());
        }
        damage.append(&mut source.take_damage());
        match step {
            Ok(Step::Continue) => {}
            Ok(Step::Stop) => break stage.finish(decoder),
            Err(e) => break Err(e),
        }
    };
    damage.append(&mut source.take_damage());
    Ran { frames, damage, result }
}

/// A frame's record and the input it came from, for analysers that want the bytes.
pub struct Raw<'a> {
    pub file: usize,
    pub record: Record<'a>,
}

/// What [`analyse`] feeds: the analyzer observes every kept frame's summary, in capture order;
/// when [`Analyse::wants_bytes`], [`Analyse::bytes`] then gets the frame's bytes too (a
/// per-packet table fed in order); [`Analyse::observed`] follows every frame the analyzer took
/// (to take the verdicts it made final). A trait object, so that the per-frame loop is compiled
/// here, with the analysis it calls.
pub trait Analyse: Send {
    fn analyzer(&mut self) -> &mut Analyzer;
    fn wants_bytes(&self) -> bool {
        false
    }
    fn bytes(&mut self, _summary: &FrameSummary, _raw: Raw<'_>) -> io::Result<()> {
        Ok(())
    }
    /// The analysis is saved unfinished once the input ends, to go on later: it cannot be
    /// split by host pair, whose shards are joined finished.
    fn goes_on(&self) -> bool {
        false
    }
    /// The analyzer took another frame, on the analysis's thread. Not called when the analysis
    /// is split by host pair, which only analyses that give no verdicts are.
    fn observed(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One kept frame into `analysis`.
fn feed(analysis: &mut dyn Analyse, summary: &FrameSummary, raw: Option<Raw<'_>>) -> io::Result<()> {
    analysis.analyzer().observe(summary);
    if let Some(raw) = raw {
        analysis.bytes(summary, raw)?;
    }
    analysis.observed()
}

/// Analyses the frames of `inputs` that `selection` keeps, on `threads` threads (see the
/// module's summary of the layouts); the result is the same for any number.
pub fn analyse(
    inputs: &mut Inputs,
    decoder: &Decoder,
    selection: &mut Selection,
    analysis: &mut dyn Analyse,
    threads: usize,
    progress: &dyn Fn(u64),
) -> Ran<()> {
    let fresh = !analysis.analyzer().has_observed();
    // a selection that reads the frame before is asked about every frame, in order
    let shardable = fresh
        && !analysis.goes_on()
        && !analysis.wants_bytes()
        && !analysis.analyzer().gives_verdicts()
        && !selection.reads_previous_frame();
    if threads > 1
        && shardable
        && let Some(ran) = sharded::analyse(inputs, decoder, selection, analysis, threads, progress)
    {
        return ran;
    }
    analyse_beside(inputs, decoder, selection, analysis, None, threads, progress)
}

/// Work done on every frame the analysis keeps, where the frame is decoded, before the
/// analysis gets it: on the reading thread when the analysis has a thread of its own, so that
/// the two share the work. Frames come in order, their ICRCs computed, with the time of the
/// capture's first frame (kept or not: `frame.time_relative` counts from it) and `previous`, the
/// times of the frame before (kept or not) and of the last kept ([`Selection::previous_times`]).
pub trait Beside: Send {
    fn frame(
        &mut self,
        number: u64,
        packet: &DecodedFrame<'_>,
        first_ts_ns: i64,
        previous: (Option<i64>, Option<i64>),
    ) -> io::Result<()>;
}

/// [`analyse`] on one thread, or on two (one reading and decoding, the other analysing),
/// with `beside` given every kept frame where it is decoded.
pub fn analyse_beside(
    inputs: &mut Inputs,
    decoder: &Decoder,
    selection: &mut Selection,
    analysis: &mut dyn Analyse,
    mut beside: Option<&mut dyn Beside>,
    threads: usize,
    progress: &dyn Fn(u64),
) -> Ran<()> {
    if threads > 1 {
        return parallel::analyse(inputs, decoder, selection, analysis, beside, progress);
    }
    let mut stage = Analysing { selection, analysis, beside: beside.take() };
    run(inputs, decoder, &mut stage, progress)
}

/// The one-thread analysis as a [`Stage`].
struct Analysing<'s, 'a, 'b> {
    selection: &'s mut Selection,
    analysis: &'a mut dyn Analyse,
    beside: Option<&'b mut dyn Beside>,
}

impl Stage for Analysing<'_, '_, '_> {
    fn frame(&mut self, frame: &Frame<'_>, packet: &DecodedFrame<'_>, _: &Decoder) -> io::Result<Step> {
        if !self.selection.keeps(frame.number, packet) {
            return Ok(Step::Continue);
        }
        if let Some(beside) = &mut self.beside {
            let first_ts_ns = self.selection.first_ts_ns().unwrap_or(packet.ts_ns);
            beside.frame(frame.number, packet, first_ts_ns, self.selection.previous_times())?;
        }
        self.analyse(frame, &FrameSummary::of(frame.number, packet))
    }

    /// A selection that keeps every frame, with nothing beside, needs only the frame's summary:
    /// a plain RoCEv2 frame's comes from the fast path ([`FrameSummary::of_record`]).
    fn record(&mut self, frame: &Frame<'_>, decoder: &Decoder) -> io::Result<Step> {
        if self.beside.is_some() || !self.selection.keeps_all() {
            return self.frame(frame, &decoder.decode(&frame.record), decoder);
        }
        let summary = FrameSummary::of_record(frame.number, &frame.record, decoder);
        self.selection.keep_at(summary.ts_ns);
        self.analyse(frame, &summary)
    }

    fn finish(&mut self, _: &Decoder) -> io::Result<()> {
        Ok(())
    }
}

impl Analysing<'_, '_, '_> {
    /// Feeds a kept frame's summary to the analysis (with its bytes, when it wants them).
    fn analyse(&mut self, frame: &Frame<'_>, summary: &FrameSummary) -> io::Result<Step> {
        let raw = self.analysis.wants_bytes().then_some(Raw { file: frame.file, record: frame.record });
        feed(self.analysis, summary, raw)?;
        Ok(Step::Continue)
    }
}
