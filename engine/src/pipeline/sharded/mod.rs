//! The analysis split over threads by host-pair partition ([`crate::analyze::partition`]).
//!
//! Each analysing thread owns some partitions (given in turn as they first appear) and
//! decodes, verifies and analyses the frames of its partitions that the `-Y` selection keeps, in
//! capture order, in a shard of its own; the frames no partition holds (PFC, PAUSE, other frames
//! without a RoCE host pair) are analysed in one more shard. At the end
//! [`crate::analyze::combine::merge`] joins the shards. Who reads the records:
//!
//! - one memory-mapped capture file (pcap or pcapng): every thread, each walking chunks of
//!   the file of its own and analysing as well ([`ranges`]);
//! - anything else (several files merged by time, a pcapng file that describes interfaces
//!   after its first packet, timestamps that go back): this
//!   thread walks the records and places each frame in its partition, from its plain RoCEv2
//!   headers (or by decoding it), and hands each of the `N` analysis threads where its frames
//!   lie in the mapping (a few dozen bytes per frame, in batches); it analyses the frames no
//!   partition holds itself.
//!
//! Before the split, the capture's first frames are analysed once for what every shard starts
//! from: the doubled-mirror decision, the start of the timeline, and the time of the first frame
//! (the selection's `frame.time_relative`). When timestamps go backwards, or the join declines
//! (a bound of the whole analysis may have been reached), [`analyse`]
//! gives `None` and the caller analyses another way: the report never depends on the thread
//! count.

mod ranges;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};

use memmap2::Mmap;

use super::{Analyse, PROGRESS_EVERY, Ran};
use crate::analyze::frame::FrameSummary;
use crate::analyze::identity::known::KnownQps;
use crate::analyze::roce::congestion::incast::{Incast, Timed};
use crate::analyze::{Analyzer, Config, ShardStart, combine::merge, partition};
use crate::capture::mapped::{self, Location};
use crate::capture::{Inputs, Record};
use crate::decode::{DecodedFrame, Decoder};
use crate::display_filter::Selection;
use ranges::Split;

/// Frames the first-frames analysis reads at most before giving up on a split (a capture whose
/// first RoCE frame comes later is analysed without one).
const FIRST_FRAMES_READ: u64 = 1 << 18;

/// Frames read between two hand-overs to every analysis thread, at most.
const BATCH: u64 = 2048;

/// Bytes of a file read between two hand-overs, at most: with [`WAITING`], this bounds how far
/// the reading runs ahead of the analysis, and so the mapped pages not yet released.
const BATCH_BYTES: usize = 1 << 20;

/// Batches waiting for each analysis thread, at most.
const WAITING: usize = 16;

/// How many frames ahead of its decoding an analysis thread prefetches a frame's bytes.
const PREFETCH_AHEAD: usize = 4;

/// A frame handed to an analysis thread: its number, and where it lies in its file's mapping.
#[derive(Clone, Copy)]
struct Located {
    number: u64,
    location: Location,
}

/// Frames for one analysis thread, and how far the reading had come in every file when they
/// were handed over (the thread's frames before that point are all in this batch or earlier).
struct Batch {
    frames: Vec<Located>,
    read_to: Vec<usize>,
    /// The frames read when it was handed over: the thread's frames up to this number are in
    /// it or earlier.
    through: u64,
}

/// What an analysis thread's incast events after a batch say: the thread, the events, and
/// the frame number through which it has given every event.
type IncastPart = (usize, Vec<Timed>, u64);

/// The mappings of the inputs, how far each analysis thread has finished in each, and how far
/// their pages are released.
struct Shared {
    mappings: Vec<Arc<Mmap>>,
    /// `finished[thread * files + file]`: the thread's frames before this offset are analysed.
    finished: Vec<AtomicUsize>,
    released: Vec<AtomicUsize>,
}

impl Shared {
    /// The offset in `file` every analysis thread has finished.
    fn finished_by_all(&self, file: usize) -> usize {
        let files = self.mappings.len();
        let threads = self.finished.len() / files.max(1);
        let finished = (0..threads).filter_map(|t| self.finished.get(t * files + file));
        finished.map(|f| f.load(Ordering::Acquire)).min().unwrap_or(0)
    }

    /// Says that `thread` has finished its frames before `read_to` in each file, and releases
    /// the mapped pages every thread has finished with (the thread that finds them first).
    fn finish(&self, thread: usize, read_to: &[usize]) {
        let files = self.mappings.len();
        for (file, &to) in read_to.iter().enumerate() {
            if let Some(finished) = self.finished.get(thread * files + file) {
                finished.store(to, Ordering::Release);
            }
            let (Some(map), Some(released)) = (self.mappings.get(file), self.released.get(file)) else { continue };
            let done = self.finished_by_all(file);
            let from = released.load(Ordering::Acquire);
            let claimed = done.saturating_sub(from) >= mapped::RELEASE_EVERY
                && released.compare_exchange(from, done, Ordering::AcqRel, Ordering::Acquire).is_ok();
            if claimed {
                mapped::release(map, from, done);
            }
        }
    }
}

/// Analyses every frame of `inputs` on `threads` threads, and leaves `inputs` as one thread's
/// run does (read to their end, what a pcapng file's interfaces said included); `None`, with
/// `analysis` and `inputs` untouched, when the inputs are not all memory-mapped files, or when
/// the shards cannot be joined into what one thread would give. One capture file is read by
/// every thread ([`ranges`]); anything else (several files, a file whose timestamps go back or
/// that describes interfaces after its first packet) by this thread, which hands the
/// frames to `threads` analysis threads.
pub fn analyse(
    inputs: &mut Inputs,
    decoder: &Decoder,
    selection: &Selection,
    analysis: &mut dyn Analyse,
    threads: usize,
    progress: &dyn Fn(u64),
) -> Option<Ran<()>> {
    let job = Job::of(inputs, decoder, selection, analysis, progress)?;
    read_by_all(inputs, analysis, &job, Split { threads, chunk: ranges::CHUNK })
        .or_else(|| read_by_one(inputs, analysis, &job, threads))
}

/// [`analyse`] of one memory-mapped capture file read by every thread, in chunks of `chunk`
/// bytes (the command line's are of a megabyte): for tests that cut a file at many offsets.
/// `None`, with `analysis` untouched, for any other input, or where a run declines (damage,
/// timestamps that go back, shards that do not join).
pub fn analyse_in_chunks(
    inputs: &mut Inputs,
    decoder: &Decoder,
    selection: &Selection,
    analysis: &mut dyn Analyse,
    threads: usize,
    chunk: usize,
) -> Option<Ran<()>> {
    let job = Job::of(inputs, decoder, selection, analysis, &|_| {})?;
    read_by_all(inputs, analysis, &job, Split { threads, chunk })
}

/// What a split analysis is given, whoever reads the inputs.
struct Job<'a> {
    decoder: &'a Decoder,
    selection: &'a Selection,
    config: Config,
    /// The hosts' QP tables every shard pairs by.
    known_qps: KnownQps,
    start: Start,
    progress: &'a dyn Fn(u64),
}

impl<'a> Job<'a> {
    /// The analysis of `inputs` into `analysis`, once the first frames say where every shard
    /// starts ([`start`]).
    fn of(
        inputs: &Inputs,
        decoder: &'a Decoder,
        selection: &'a Selection,
        analysis: &mut dyn Analyse,
        progress: &'a dyn Fn(u64),
    ) -> Option<Job<'a>> {
        let config = analysis.analyzer().config();
        let known_qps = analysis.analyzer().known_qps().clone();
        let start = start(inputs.reopen()?, decoder, selection, config)?;
        Some(Job { decoder, selection, config, known_qps, start, progress })
    }

    /// A shard of the analysis, as every thread starts it.
    fn shard(&self) -> Analyzer {
        Analyzer::shard(self.config, self.start.shard).with_known_qps(self.known_qps.clone())
    }
}

/// The analysis of one capture file read by every thread.
fn read_by_all(inputs: &mut Inputs, analysis: &mut dyn Analyse, job: &Job<'_>, split: Split) -> Option<Ran<()>> {
    let (mut again, walk) = inputs.walk_again()?;
    let read = ranges::analyse(&walk, job, split)?;
    // where the walk stopped, the reader finds damage, or a block only it reads on from
    let damage = match read.irregular_at {
        Some(at) => vec![again.damage_at(at as u64)?],
        None => Vec::new(),
    };
    *analysis.analyzer() = read.analysis;
    again.number_from(read.frames + 1);
    *inputs = again;
    Some(Ran { frames: read.frames, damage, result: Ok(()) })
}

/// The analysis of inputs read by this thread, which hands each frame to one of `threads`
/// analysis threads by its partition.
fn read_by_one(inputs: &mut Inputs, analysis: &mut dyn Analyse, job: &Job<'_>, threads: usize) -> Option<Ran<()>> {
    let &Job { decoder, selection, config, start, progress, .. } = job;
    let mut reading = inputs.reopen()?;
    let mappings: Vec<Arc<Mmap>> = reading.share_mappings().into_iter().collect::<Option<_>>()?;
    let files = mappings.len();
    let finished = (0..threads * files).map(|_| AtomicUsize::new(0)).collect();
    let released = (0..files).map(|_| AtomicUsize::new(0)).collect();
    let shared = Shared { mappings, finished, released };
    let mut reader = Reader {
        shard: job.shard(),
        router: decoder.clone().deferring_icrc(),
        kept: Kept { selection, first_ts_ns: start.first_ts_ns },
        last_ts_ns: i64::MIN,
        backwards: false,
    };
    let mut merging = IncastMerge::new(threads + 1);
    let (frames, shards) = std::thread::scope(|scope| {
        let (parts, incast_parts) = mpsc::channel::<IncastPart>();
        let (senders, workers): (Vec<_>, Vec<_>) = (0..threads)
            .map(|t| {
                let (send, receive) = mpsc::sync_channel::<Batch>(WAITING);
                let (shared, parts) = (&shared, parts.clone());
                let kept = Kept { selection, first_ts_ns: start.first_ts_ns };
                let worker = Worker { thread: t, shared, decoder, kept, parts };
                let shard = job.shard();
                (send, scope.spawn(move || worker.analyse_batches(receive, shard)))
            })
            .unzip();
        let handed = Handed { senders: &senders, incast_parts: &incast_parts };
        let frames = reader.read(&mut reading, decoder, &handed, &shared, &mut merging, progress);
        drop(senders);
        let shards: Option<Vec<Analyzer>> = workers.into_iter().map(|w| w.join().ok()).collect();
        merging.take(incast_parts.try_iter());
        (frames, shards)
    });
    if reader.backwards {
        return None;
    }
    *analysis.analyzer() = join(reader.shard, shards?, merging, &config)?;
    let damage = reading.take_damage();
    *inputs = reading;
    Some(Ran { frames, damage, result: Ok(()) })
}

/// The shards joined into one analysis: `whole` (the frames no partition holds) and the
/// partitions' shards, with the incast events they still hold merged in frame order; `None`
/// when the join declines.
fn join(mut whole: Analyzer, mut shards: Vec<Analyzer>, mut merging: IncastMerge, config: &Config) -> Option<Analyzer> {
    whole.finish();
    merging.add(0, whole.congestion.take_incast_events(), u64::MAX);
    for (t, shard) in shards.iter_mut().enumerate() {
        merging.add(t + 1, shard.congestion.take_incast_events(), u64::MAX);
    }
    let mut joined = merge::shards(std::iter::once(whole).chain(shards).collect())?;
    joined.congestion.set_incast(merging.finish(&config.congestion));
    Some(joined)
}

/// What every shard starts from.
#[derive(Clone, Copy)]
struct Start {
    shard: ShardStart,
    /// When the capture's first frame was captured.
    first_ts_ns: i64,
}

/// Analyses the capture's first frames (those `selection` keeps) for where the shards start;
/// `None` when that takes more than [`FIRST_FRAMES_READ`] frames.
fn start(mut inputs: Inputs, decoder: &Decoder, selection: &Selection, config: Config) -> Option<Start> {
    let mut first = Analyzer::new(config);
    let mut first_ts_ns = None;
    while let Some(frame) = inputs.next_frame() {
        let packet = decoder.decode(&frame.record);
        let kept = Kept { selection, first_ts_ns: *first_ts_ns.get_or_insert(frame.record.ts_ns) };
        if kept.keeps(frame.number, &packet) {
            first.observe(&FrameSummary::of(frame.number, &packet));
        }
        if let (Some(shard), Some(first_ts_ns)) = (first.shard_start(false), first_ts_ns) {
            return Some(Start { shard, first_ts_ns });
        }
        if frame.number >= FIRST_FRAMES_READ {
            return None;
        }
    }
    first.decide_doubling();
    Some(Start { shard: first.shard_start(true)?, first_ts_ns: first_ts_ns.unwrap_or(0) })
}

/// The selection, as one thread that sees some frames only asks it.
#[derive(Clone, Copy)]
struct Kept<'s> {
    selection: &'s Selection,
    first_ts_ns: i64,
}

impl Kept<'_> {
    fn keeps(&self, number: u64, packet: &DecodedFrame<'_>) -> bool {
        self.selection.keeps_after(self.first_ts_ns, number, packet)
    }

    /// The summary of frame `number` of `record` when the selection keeps it: from the fast
    /// path ([`FrameSummary::of_record`]) when the selection keeps every frame, else from its
    /// whole decoding into `packet`.
    fn summary<'a>(
        &self,
        number: u64,
        record: &Record<'a>,
        decoder: &Decoder,
        packet: &mut DecodedFrame<'a>,
    ) -> Option<FrameSummary> {
        if self.selection.keeps_all() {
            return Some(FrameSummary::of_record(number, record, decoder));
        }
        decoder.decode_into(record, packet);
        self.keeps(number, packet).then(|| FrameSummary::of(number, packet))
    }
}

/// The reading thread's part: every record, and the frames no partition holds.
struct Reader<'s> {
    shard: Analyzer,
    /// Decodes the frames the plain headers cannot place, without their ICRCs.
    router: Decoder,
    kept: Kept<'s>,
    last_ts_ns: i64,
    /// Did a frame's timestamp come before the one of the frame before?
    backwards: bool,
}

impl Reader<'_> {
    /// Reads `inputs` to their end, handing each analysis thread its frames and merging the
    /// incast events the threads give back; the frames read.
    fn read(
        &mut self,
        inputs: &mut Inputs,
        decoder: &Decoder,
        handed: &Handed<'_>,
        shared: &Shared,
        merging: &mut IncastMerge,
        progress: &dyn Fn(u64),
    ) -> u64 {
        let senders = handed.senders;
        let threads = senders.len();
        let congestion = self.shard.config().congestion;
        let mut owners = Owners::new(threads);
        let mut pending: Vec<Vec<Located>> = (0..threads).map(|_| Vec::new()).collect();
        let mut read_at = vec![0; shared.mappings.len()];
        let mut prefetched = vec![0; shared.mappings.len()];
        let mut frames = 0;
        // the frame and offset of the last hand-over
        let mut handed_at = (0, 0);
        while let Some(frame) = inputs.next_frame() {
            frames = frame.number;
            let r = &frame.record;
            if r.ts_ns < self.last_ts_ns {
                // the join would decline: stop here, and the caller analyses another way
                self.backwards = true;
                break;
            }
            self.last_ts_ns = r.ts_ns;
            let at = shared.mappings.get(frame.file).map_or(0, |map| mapped::offset_in(map, r.data));
            prefetch_ahead(shared, frame.file, at, &mut prefetched);
            match partition_of(&self.router, r) {
                Some(p) => {
                    if let Some(batch) = pending.get_mut(owners.of(p)) {
                        batch.push(Located { number: frame.number, location: Location::of(&frame, &shared.mappings) });
                    }
                }
                None => {
                    let packet = decoder.decode(r);
                    if self.kept.keeps(frame.number, &packet) {
                        self.shard.observe(&FrameSummary::of(frame.number, &packet));
                    }
                }
            }
            if let Some(position) = read_at.get_mut(frame.file) {
                *position = at;
            }
            if frames - handed_at.0 >= BATCH || at.abs_diff(handed_at.1) >= BATCH_BYTES {
                handed_at = (frames, at);
                hand_over(senders, &mut pending, &read_at, frames);
                merging.take(handed.incast_parts.try_iter());
                merging.add(0, self.shard.congestion.take_incast_events(), frames);
                merging.drain(&congestion);
            }
            if frames.is_multiple_of(PROGRESS_EVERY) {
                progress(inputs.position());
            }
        }
        let ends: Vec<usize> = shared.mappings.iter().map(|m| m.len()).collect();
        hand_over(senders, &mut pending, &ends, u64::MAX);
        frames
    }
}

/// The partition of a frame with a RoCE host pair, from its plain headers or, for anything
/// else, by decoding it with `router` (which computes no ICRC).
fn partition_of(router: &Decoder, record: &Record<'_>) -> Option<usize> {
    let hosts = router.plain_hosts(record).map(|(a, b)| (a.into(), b.into())).or_else(|| {
        let packet = router.decode(record);
        packet.roce().and(packet.source().zip(packet.destination()))
    });
    hosts.map(|(a, b)| partition::of_hosts(a, b))
}

/// Which analysis thread analyses each partition: the threads in turn, in the order the
/// partitions' first frames come (which thread analyses a partition changes nothing in the
/// result; taking turns spreads the host pairs evenly).
struct Owners {
    of: Vec<Option<usize>>,
    threads: usize,
    next: usize,
}

impl Owners {
    fn new(threads: usize) -> Self {
        Owners { of: vec![None; partition::PARTITIONS], threads: threads.max(1), next: 0 }
    }

    /// The thread of every partition given one so far, `none` for the others: a copy for
    /// threads that read it while more are given.
    fn table(&self, none: u16) -> Vec<u16> {
        self.of.iter().map(|o| o.map_or(none, |t| t as u16)).collect()
    }

    fn of(&mut self, partition: usize) -> usize {
        let Some(owner) = self.of.get_mut(partition) else { return 0 };
        *owner.get_or_insert_with(|| {
            let thread = self.next;
            self.next = (self.next + 1) % self.threads;
            thread
        })
    }
}

/// How far ahead of a frame the reading thread starts loading its file's bytes.
const READ_AHEAD: usize = 16 << 10;

/// Starts loading the bytes of `frame`'s file up to [`READ_AHEAD`] after it, from where the
/// last call stopped: the records' headers the reading thread walks next are in the cache when
/// it comes to them (the hardware prefetcher does not follow a walk that skips most of every
/// frame).
fn prefetch_ahead(shared: &Shared, file: usize, at: usize, prefetched: &mut [usize]) {
    if let (Some(map), Some(from)) = (shared.mappings.get(file), prefetched.get_mut(file)) {
        read_ahead(map, at, from);
    }
}

/// Starts loading `map` up to [`READ_AHEAD`] bytes after `at`, from `from` (where the last call
/// stopped), and moves `from` on.
fn read_ahead(map: &Mmap, at: usize, from: &mut usize) {
    let to = at.saturating_add(READ_AHEAD).min(map.len());
    if let Some(bytes) = map.get((*from).max(to.saturating_sub(READ_AHEAD))..to) {
        crate::prefetch::bytes(bytes);
    }
    *from = to.max(*from);
}

/// Hands every analysis thread its pending frames (an empty batch too: it says how far the
/// reading has come), those up to frame `through`.
fn hand_over(senders: &[mpsc::SyncSender<Batch>], pending: &mut [Vec<Located>], read_to: &[usize], through: u64) {
    for (send, frames) in senders.iter().zip(pending.iter_mut()) {
        let frames = std::mem::replace(frames, Vec::with_capacity(BATCH as usize));
        // a thread that stopped has failed; joining it says so
        let _ = send.send(Batch { frames, read_to: read_to.to_vec(), through });
    }
}

/// Where the reading thread hands batches to, and takes incast events back from.
struct Handed<'a> {
    senders: &'a [mpsc::SyncSender<Batch>],
    incast_parts: &'a mpsc::Receiver<IncastPart>,
}

/// The incast events of every shard (0: the frames no partition holds, then the analysis
/// threads') merged in frame order into one incast analysis: an event goes in once every shard
/// has given its events up to that frame.
struct IncastMerge {
    incast: Incast,
    waiting: Vec<VecDeque<Timed>>,
    /// The frame of the first event waiting from each shard that has one, and the shard: the
    /// smallest is the next event in frame order (the shard breaks ties, as one thread's order
    /// does not: no frame is in two shards).
    fronts: BinaryHeap<Reverse<(u64, usize)>>,
    /// The frame through which each shard has given every event.
    through: Vec<u64>,
}

impl IncastMerge {
    fn new(shards: usize) -> Self {
        IncastMerge {
            incast: Incast::default(),
            waiting: vec![VecDeque::new(); shards],
            fronts: BinaryHeap::new(),
            through: vec![0; shards],
        }
    }

    fn add(&mut self, shard: usize, events: Vec<Timed>, through: u64) {
        let (Some(waiting), Some(t)) = (self.waiting.get_mut(shard), self.through.get_mut(shard)) else { return };
        if let (true, Some(first)) = (waiting.is_empty(), events.first()) {
            self.fronts.push(Reverse((first.frame.get(), shard)));
        }
        waiting.extend(events);
        *t = (*t).max(through);
    }

    /// Takes what the analysis threads sent.
    fn take(&mut self, parts: impl Iterator<Item = IncastPart>) {
        for (thread, events, through) in parts {
            self.add(thread + 1, events, through);
        }
    }

    /// Hands the incast analysis every event no shard can still precede.
    fn drain(&mut self, config: &crate::analyze::roce::congestion::CongestionConfig) {
        let bound = self.through.iter().copied().min().unwrap_or(0);
        while let Some(&Reverse((frame, shard))) = self.fronts.peek().filter(|Reverse((frame, _))| *frame <= bound) {
            self.fronts.pop();
            let Some(waiting) = self.waiting.get_mut(shard) else { continue };
            if let Some(event) = waiting.pop_front() {
                debug_assert_eq!(event.frame.get(), frame);
                self.incast.observe(event, config);
            }
            if let Some(next) = waiting.front() {
                self.fronts.push(Reverse((next.frame.get(), shard)));
            }
        }
    }

    /// The incast analysis of every event, once every shard has given all of them.
    fn finish(mut self, config: &crate::analyze::roce::congestion::CongestionConfig) -> Incast {
        self.through.iter_mut().for_each(|t| *t = u64::MAX);
        self.drain(config);
        self.incast.finish();
        self.incast
    }
}

/// An analysis thread.
struct Worker<'a> {
    thread: usize,
    shared: &'a Shared,
    decoder: &'a Decoder,
    kept: Kept<'a>,
    /// Where its incast events go after each batch.
    parts: mpsc::Sender<IncastPart>,
}

impl Worker<'_> {
    /// The frames of its partitions, decoded, verified and analysed in order.
    fn analyse_batches(self, batches: mpsc::Receiver<Batch>, mut shard: Analyzer) -> Analyzer {
        let mappings = &self.shared.mappings;
        let mut packet = DecodedFrame::scratch();
        for batch in batches {
            for (i, frame) in batch.frames.iter().enumerate() {
                if let Some(next) = batch.frames.get(i + PREFETCH_AHEAD) {
                    crate::prefetch::bytes(next.location.bytes(mappings));
                }
                let record = frame.location.record(mappings);
                if let Some(summary) = self.kept.summary(frame.number, &record, self.decoder, &mut packet) {
                    shard.observe(&summary);
                }
            }
            self.shared.finish(self.thread, &batch.read_to);
            // every frame of this thread up to `through` is analysed
            let _ = self.parts.send((self.thread, shard.congestion.take_incast_events(), batch.through));
        }
        shard.finish();
        shard
    }
}
