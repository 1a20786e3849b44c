//! The two-thread analysis: this thread reads and decodes, a second analyses. When every input
//! is memory-mapped, the ICRCs (the work that reads every byte of every packet) are computed
//! on the analysis thread too, which balances the two threads, and that thread releases the
//! mapped pages behind it.

use std::io;
use std::sync::{Arc, mpsc};

use memmap2::Mmap;

use super::{Analyse, Beside, PROGRESS_EVERY, Ran, Raw, feed};
use crate::analyze::frame::FrameSummary;
use crate::capture::{Frame, Inputs, LinkType, Record, mapped};
use crate::decode::{DecodedFrame, Decoder, IcrcStatus};
use crate::display_filter::Selection;

/// Frames handed to the analysis thread at a time.
const BATCH: usize = 1024;

/// A frame summary on its way to the analysis thread, with where its bytes lie in its file's
/// memory mapping when the ICRC is left to that thread.
struct Work {
    summary: FrameSummary,
    file: usize,
    at: usize,
    /// The frame's record, for an analysis that wants the bytes.
    copy: Option<Copied>,
}

/// A frame's record: its bytes copied, unless its file is memory-mapped (they are read from
/// the mapping then).
struct Copied {
    ts_ns: i64,
    orig_len: u32,
    link_type: LinkType,
    offset: u64,
    /// The record's length (an ERF record's header included).
    len: usize,
    /// The bytes of a frame of a file that is not mapped.
    data: Option<Vec<u8>>,
}

impl Copied {
    /// The record, its bytes from the copy or from the mapping of `file` at `at`.
    fn raw<'a>(&'a self, mappings: &'a [Option<Arc<Mmap>>], file: usize, at: usize) -> Raw<'a> {
        let mapped = || mappings.get(file)?.as_ref()?.get(at..at + self.len);
        let data = self.data.as_deref().or_else(mapped).unwrap_or_default();
        let record =
            Record { ts_ns: self.ts_ns, orig_len: self.orig_len, data, link_type: self.link_type, offset: self.offset };
        Raw { file, record }
    }
}

/// Decodes on this thread and analyses on another, which receives the frame summaries in
/// order, in batches; the result is the same as one thread's. When every input is
/// memory-mapped, the ICRCs (the work that reads every byte of every packet) are computed on
/// the analysis thread too, which balances the two threads, and that thread releases the
/// mapped pages behind it.
pub fn analyse(
    inputs: &mut Inputs,
    decoder: &Decoder,
    selection: &mut Selection,
    analysis: &mut dyn Analyse,
    mut beside: Option<&mut dyn Beside>,
    progress: &dyn Fn(u64),
) -> Ran<()> {
    let mappings: Vec<_> = inputs.share_mappings();
    // what works beside the analysis sees every frame's ICRC: it is computed here then
    let defer = mappings.iter().all(Option::is_some) && !selection.reads_icrc() && beside.is_none();
    let copying = analysis.wants_bytes();
    let decoder = if defer { decoder.clone().deferring_icrc() } else { decoder.clone() };
    let mut damage = Vec::new();
    let mut frames = 0;
    let result = std::thread::scope(|scope| {
        let (batches, received) = mpsc::sync_channel::<Vec<Work>>(4);
        let (recycle, recycled) = mpsc::channel::<Vec<Work>>();
        let mappings = &mappings;
        let worker = scope.spawn(move || analyse_batches(received, &recycle, mappings, analysis));
        let mut batch = Vec::with_capacity(BATCH);
        let mut beside_result = Ok(());
        while let Some(frame) = inputs.next_frame() {
            frames += 1;
            let packet = decoder.decode(&frame.record);
            if selection.keeps(frame.number, &packet) {
                let first_ts_ns = selection.first_ts_ns().unwrap_or(packet.ts_ns);
                if let Some(beside) = &mut beside
                    && let Err(e) = beside.frame(frame.number, &packet, first_ts_ns, selection.previous_times())
                {
                    beside_result = Err(e);
                    break;
                }
                batch.push(work(&frame, &packet, mappings, copying));
            }
            if frame.number.is_multiple_of(PROGRESS_EVERY) {
                progress(inputs.position());
            }
            if batch.len() == BATCH {
                let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                if batches.send(std::mem::replace(&mut batch, next)).is_err() {
                    break; // the analysis stopped on an error, which join reports
                }
            }
            if inputs.has_damage() {
                damage.append(&mut inputs.take_damage());
            }
        }
        let _ = batches.send(batch);
        drop(batches);
        let analysed = worker.join().unwrap_or_else(|_| Err(io::Error::other("the analysis thread failed")));
        beside_result.and(analysed)
    });
    damage.append(&mut inputs.take_damage());
    Ran { frames, damage, result }
}

/// A kept frame on its way to the analysis thread: its summary, where its bytes lie in its
/// file's mapping, and a copy of them when the analysis wants the bytes.
fn work(frame: &Frame<'_>, packet: &DecodedFrame<'_>, mappings: &[Option<Arc<Mmap>>], copying: bool) -> Work {
    let r = &frame.record;
    let mapping = mappings.get(frame.file).and_then(Option::as_ref);
    let at = mapping.map_or(0, |map| mapped::offset_in(map, r.data));
    let copy = copying.then(|| Copied {
        ts_ns: r.ts_ns,
        orig_len: r.orig_len,
        link_type: r.link_type,
        offset: r.offset,
        len: r.data.len(),
        data: mapping.is_none().then(|| r.data.to_vec()),
    });
    Work { summary: FrameSummary::of(frame.number, packet), file: frame.file, at, copy }
}

/// The analysis thread: every batch's frames, their deferred ICRCs computed, into the
/// analysis in order; the batches go back to be filled again.
fn analyse_batches(
    received: mpsc::Receiver<Vec<Work>>,
    recycle: &mpsc::Sender<Vec<Work>>,
    mappings: &[Option<Arc<Mmap>>],
    analysis: &mut dyn Analyse,
) -> io::Result<()> {
    let mut released = vec![0usize; mappings.len()];
    for mut batch in received {
        for i in 0..batch.len() {
            if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
                prefetch_frame(mappings, ahead);
            }
            let Some(work) = batch.get_mut(i) else { continue };
            settle_deferred_icrc(mappings, work);
            let raw = work.copy.as_ref().map(|c| c.raw(mappings, work.file, work.at));
            feed(analysis, &work.summary, raw)?;
        }
        release_consumed(mappings, &batch, &mut released);
        batch.clear();
        let _ = recycle.send(batch);
    }
    Ok(())
}

/// How many frames ahead of its ICRC the analysis thread prefetches a frame's bytes.
const PREFETCH_AHEAD: usize = 4;

/// Starts loading the bytes of a frame whose ICRC is deferred into the cache.
fn prefetch_frame(mappings: &[Option<Arc<Mmap>>], work: &Work) {
    let deferred = work.summary.roce().is_some_and(|r| r.deferred_icrc.is_some());
    let frame = mappings
        .get(work.file)
        .and_then(Option::as_ref)
        .and_then(|map| map.get(work.at..work.at + work.summary.caplen as usize));
    if let (true, Some(bytes)) = (deferred, frame) {
        crate::prefetch::bytes(bytes);
    }
}

/// Computes a deferred ICRC from the frame's bytes in its file's mapping.
fn settle_deferred_icrc(mappings: &[Option<Arc<Mmap>>], work: &mut Work) {
    let (file, at, caplen) = (work.file, work.at, work.summary.caplen as usize);
    let Some(roce) = work.summary.roce_mut() else { return };
    let Some(job) = roce.deferred_icrc else { return };
    let frame = mappings.get(file).and_then(Option::as_ref).and_then(|map| map.get(at..at + caplen));
    match frame.and_then(|bytes| job.compute(bytes)) {
        Some((status, computed)) => roce.settle_icrc(status, computed),
        None => roce.settle_icrc(IcrcStatus::Unverifiable, 0),
    }
}

/// Releases the mapped pages every file's frames have been analysed past.
fn release_consumed(mappings: &[Option<Arc<Mmap>>], batch: &[Work], released: &mut [usize]) {
    for (file, map) in mappings.iter().enumerate() {
        let Some(map) = map else { continue };
        let Some(end) = batch.iter().filter(|w| w.file == file).map(|w| w.at).max() else { continue };
        if let Some(done) = released.get_mut(file).filter(|done| end.saturating_sub(**done) >= mapped::RELEASE_EVERY) {
            *done = mapped::release(map, *done, end);
        }
    }
}
