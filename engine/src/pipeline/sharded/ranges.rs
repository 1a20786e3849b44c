//! The split analysis of one memory-mapped capture file (pcap or pcapng) where every thread
//! reads: no thread only places frames for the others.
//!
//! The file is cut into chunks (of [`CHUNK`] bytes in a run of the command line). A thread
//! takes the next chunk nobody has walked, finds its first record boundary by itself ([`FileWalk::resync`]), and walks its
//! records to the first one that starts at or past the chunk's end, noting each frame's
//! offset and host-pair partition. Walked chunks are committed in file order, one at a time:
//! a chunk whose walk did not start where the one before ended (a resynchronisation fooled by
//! payload, or none found) is walked again from there, so the frames are exactly those one
//! reader finds. Committing numbers the chunk's frames (the frames before it, plus one) and
//! gives each partition first seen in it an analysing thread, in turn.
//!
//! Every thread then analyses, chunk after chunk in file order, the frames of the partitions
//! it was given (decoded, with their ICRCs, in a shard of its own); the first thread also
//! analyses the frames no partition holds. Threads walk at most [`AHEAD`] chunks each ahead of
//! the slowest thread's analysis, which bounds the mapped pages held and the chunks kept.
//!
//! A walk that meets bytes that are not a whole record ends the file there: the frames before
//! are analysed, and the caller asks the file's reader what is there (damage, reported where
//! it lies, or a pcapng block the walk does not read, and then the caller reads the file with
//! one reader). Timestamps that go back stop the run.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::{Config, IncastMerge, Job, Kept, Owners, PREFETCH_AHEAD, Shared, Start, join, partition_of, read_ahead};
use crate::analyze::Analyzer;
use crate::analyze::identity::known::KnownQps;
use crate::analyze::partition::PARTITIONS;
use crate::capture::walk::{FileWalk, Walked};
use crate::decode::{DecodedFrame, Decoder};

/// Bytes of the file per chunk.
pub(super) const CHUNK: usize = 1 << 20;

/// Chunks per thread walked ahead of the slowest thread's analysis, at most.
const AHEAD: usize = 2;

/// The partition of a frame no partition holds (analysed by the first thread).
const NO_PARTITION: u16 = u16::MAX;

/// A frame of a walked chunk: where its record starts, its captured length and its partition.
#[derive(Clone, Copy)]
struct Entry {
    at: u64,
    caplen: u32,
    partition: u16,
}

/// What a walk of a chunk found.
struct WalkedChunk {
    /// Where the walk started (`None`: no record boundary was found in the chunk).
    from: Option<usize>,
    /// Where the first record at or past the chunk's end starts (or the file ends, or the
    /// walk stopped).
    to: usize,
    entries: Vec<Entry>,
    /// The partitions of its frames, in the order of their first frames.
    partitions: Vec<u16>,
    first_ts_ns: Option<i64>,
    last_ts_ns: Option<i64>,
    ending: Ending,
}

/// How a walk of a chunk ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// At or past the chunk's end, or at the end of the file.
    Whole,
    /// At bytes that are not a whole record (damage, or a block the walk does not read), at
    /// the chunk's `to`.
    Irregular,
    /// At a timestamp before the one of the frame before.
    Backwards,
}

/// A committed chunk: its frames, numbered from `base + 1`, and which thread analyses each
/// partition seen so far.
struct Committed {
    base: u64,
    entries: Vec<Entry>,
    owners: Vec<u16>,
    to: usize,
}

/// What the threads share under one lock.
struct Board {
    /// Chunks handed to walkers so far.
    claimed: usize,
    walked: Vec<Option<WalkedChunk>>,
    committed: Vec<Option<Arc<Committed>>>,
    next_commit: usize,
    /// Where the next chunk to commit must start.
    boundary: usize,
    last_ts_ns: i64,
    frames: u64,
    /// Chunks each thread has analysed.
    analysed: Vec<usize>,
    owners: Owners,
    /// The chunks of the run: all of them, or those up to the one a walk stopped in.
    chunks: usize,
    /// Where a committed chunk's walk stopped at bytes that are not a whole record.
    irregular_at: Option<usize>,
    /// Timestamps went back: every thread stops, and the run declines.
    stopped: bool,
}

impl Board {
    fn slowest(&self) -> usize {
        self.analysed.iter().copied().min().unwrap_or(0)
    }
}

/// The next thing a thread does.
enum Task {
    Walk(usize),
    Analyse(Arc<Committed>),
}

/// A run over one file.
struct Run<'a> {
    walk: &'a FileWalk,
    known_qps: &'a KnownQps,
    decoder: &'a Decoder,
    router: Decoder,
    kept: Kept<'a>,
    config: Config,
    start: Start,
    /// Bytes per chunk.
    chunk: usize,
    threads: usize,
    board: Mutex<Board>,
    changed: Condvar,
    shared: Shared,
    merging: Mutex<IncastMerge>,
}

/// How a file is split: over how many threads (the calling one included), in chunks of how
/// many bytes.
#[derive(Clone, Copy)]
pub(super) struct Split {
    pub threads: usize,
    pub chunk: usize,
}

/// What a run read: its frames, their joined analysis, and where the walk stopped at bytes
/// that are not a whole record, if it did.
pub(super) struct Read {
    pub frames: u64,
    pub analysis: Analyzer,
    pub irregular_at: Option<usize>,
}

/// Analyses the frames of `walk`'s file that the job's selection keeps as `split` says; `None`
/// when timestamps go back or the shards do not join.
pub(super) fn analyse(walk: &FileWalk, job: &Job<'_>, split: Split) -> Option<Read> {
    let &Job { decoder, selection, config, start, progress, .. } = job;
    let threads = split.threads.clamp(1, usize::from(NO_PARTITION));
    let chunk = split.chunk.max(1);
    let chunks = walk.size().saturating_sub(walk.first_record()).div_ceil(chunk);
    let board = Board {
        claimed: 0,
        walked: (0..chunks).map(|_| None).collect(),
        committed: (0..chunks).map(|_| None).collect(),
        next_commit: 0,
        boundary: walk.first_record(),
        last_ts_ns: i64::MIN,
        frames: 0,
        analysed: vec![0; threads],
        owners: Owners::new(threads),
        chunks,
        irregular_at: None,
        stopped: false,
    };
    let shared = Shared {
        mappings: vec![Arc::clone(walk.mapping())],
        finished: (0..threads).map(|_| Default::default()).collect(),
        released: vec![Default::default()],
    };
    let run = Run {
        walk,
        decoder,
        router: decoder.clone().deferring_icrc(),
        kept: Kept { selection, first_ts_ns: start.first_ts_ns },
        known_qps: &job.known_qps,
        config,
        start,
        chunk,
        threads,
        board: Mutex::new(board),
        changed: Condvar::new(),
        shared,
        merging: Mutex::new(IncastMerge::new(threads + 1)),
    };
    let (first, whole, others) = std::thread::scope(|scope| {
        let run = &run;
        let others: Vec<_> = (1..threads).map(|t| scope.spawn(move || run.work(t, None))).collect();
        let mut whole = job.shard();
        let first = run.work(0, Some((&mut whole, progress)));
        let others: Option<Vec<Analyzer>> = others.into_iter().map(|t| t.join().ok()).collect();
        (first, whole, others)
    });
    let board = run.board.into_inner().ok()?;
    if board.stopped {
        return None;
    }
    let shards = std::iter::once(first).chain(others?).collect();
    let merging = run.merging.into_inner().ok()?;
    let analysis = join(whole, shards, merging, &config)?;
    Some(Read { frames: board.frames, analysis, irregular_at: board.irregular_at })
}

impl Run<'_> {
    /// Thread `t`'s part: walking chunks and analysing its partitions' frames until every
    /// chunk is analysed; the first thread also analyses the frames no partition holds
    /// (`whole`) and reports progress. Its shard, finished.
    fn work(&self, t: usize, mut whole: Option<(&mut Analyzer, &dyn Fn(u64))>) -> Analyzer {
        let mut shard = Analyzer::shard(self.config, self.start.shard).with_known_qps(self.known_qps.clone());
        let mut next = 0;
        while let Some(task) = self.next_task(next) {
            match task {
                Task::Walk(k) => self.commit(k, self.walk_chunk(k)),
                Task::Analyse(chunk) => {
                    let whole = whole.as_mut().map(|(w, progress)| (&mut **w, *progress));
                    self.analyse_chunk(t, &chunk, &mut shard, whole);
                    next += 1;
                    self.analysed(t, next);
                }
            }
        }
        shard.finish();
        shard
    }

    fn lock(&self) -> MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What a thread that has analysed `next` chunks does next: analyse the next chunk once
    /// committed, else walk one, else wait; `None` once every chunk is analysed or the run
    /// stopped.
    fn next_task(&self, next: usize) -> Option<Task> {
        let mut board = self.lock();
        loop {
            if board.stopped || next >= board.chunks {
                return None;
            }
            if let Some(Some(chunk)) = board.committed.get(next) {
                return Some(Task::Analyse(Arc::clone(chunk)));
            }
            if board.claimed < board.chunks && board.claimed < board.slowest() + AHEAD * self.threads {
                board.claimed += 1;
                return Some(Task::Walk(board.claimed - 1));
            }
            board = self.changed.wait(board).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Where chunk `k` starts.
    fn start_of(&self, k: usize) -> usize {
        self.walk.first_record().saturating_add(self.chunk.saturating_mul(k)).min(self.walk.size())
    }

    /// Where chunk `k` ends.
    fn end_of(&self, k: usize) -> usize {
        self.start_of(k + 1)
    }

    /// Walks chunk `k` from the first record boundary found in it.
    fn walk_chunk(&self, k: usize) -> WalkedChunk {
        let (start, end) = (self.start_of(k), self.end_of(k));
        let from = if k == 0 { Some(self.walk.first_record()) } else { self.walk.resync(start, end) };
        match from {
            Some(from) => walk_range(self.walk, &self.router, from, end),
            None => WalkedChunk { from: None, ..walk_range(self.walk, &self.router, end, end) },
        }
    }

    /// Takes the walk of chunk `k`, and commits every walked chunk that follows the committed
    /// ones, in order (walking again a chunk that did not start where the one before ended).
    fn commit(&self, k: usize, walked: WalkedChunk) {
        let mut board = self.lock();
        if let Some(slot) = board.walked.get_mut(k) {
            *slot = Some(walked);
        }
        while board.next_commit < board.chunks {
            let k = board.next_commit;
            let Some(walked) = board.walked.get_mut(k).and_then(Option::take) else { break };
            let walked = if walked.from == Some(board.boundary) {
                walked
            } else {
                walk_range(self.walk, &self.router, board.boundary, self.end_of(k))
            };
            if walked.ending == Ending::Backwards || walked.first_ts_ns.is_some_and(|ts| ts < board.last_ts_ns) {
                board.stopped = true;
                break;
            }
            // each partition first seen here is given its thread
            for &p in &walked.partitions {
                board.owners.of(usize::from(p));
            }
            let chunk = Committed {
                base: board.frames,
                owners: board.owners.table(NO_PARTITION),
                to: walked.to,
                entries: walked.entries,
            };
            board.frames += chunk.entries.len() as u64;
            board.boundary = walked.to;
            board.last_ts_ns = walked.last_ts_ns.unwrap_or(board.last_ts_ns);
            board.committed[k] = Some(Arc::new(chunk));
            board.next_commit += 1;
            if walked.ending == Ending::Irregular {
                // the file is read no further: the caller asks the reader what is there
                board.irregular_at = Some(walked.to);
                board.chunks = k + 1;
            }
        }
        self.changed.notify_all();
    }

    /// Thread `t` has analysed `analysed` chunks: the chunks every thread has analysed are
    /// dropped, and walking may go on.
    fn analysed(&self, t: usize, analysed: usize) {
        let mut board = self.lock();
        let before = board.slowest();
        if let Some(a) = board.analysed.get_mut(t) {
            *a = analysed;
        }
        let after = board.slowest();
        for slot in board.committed.get_mut(before..after).into_iter().flatten() {
            *slot = None;
        }
        self.changed.notify_all();
    }

    /// Thread `t` analyses the frames of `chunk` it was given (and, with `whole`, those no
    /// partition holds), then hands on its incast events and releases the pages every thread
    /// is done with.
    fn analyse_chunk(
        &self,
        t: usize,
        chunk: &Committed,
        shard: &mut Analyzer,
        mut whole: Option<(&mut Analyzer, &dyn Fn(u64))>,
    ) {
        let analyses_whole = whole.is_some();
        let mine = |e: &Entry| match chunk.owners.get(usize::from(e.partition)) {
            Some(&owner) => usize::from(owner) == t,
            None => analyses_whole,
        };
        let mine: Vec<usize> = chunk.entries.iter().enumerate().filter(|(_, e)| mine(e)).map(|(i, _)| i).collect();
        let mut packet = DecodedFrame::scratch();
        for (n, &i) in mine.iter().enumerate() {
            if let Some(e) = mine.get(n + PREFETCH_AHEAD).and_then(|&j| chunk.entries.get(j)) {
                self.prefetch(e);
            }
            let (Some(e), number) = (chunk.entries.get(i), chunk.base + i as u64 + 1) else { continue };
            let Walked::Record(record, _) = self.walk.record_at(e.at as usize) else { continue };
            let Some(summary) = self.kept.summary(number, &record, self.decoder, &mut packet) else { continue };
            match (&mut whole, e.partition) {
                (Some((whole, _)), NO_PARTITION) => whole.observe(&summary),
                _ => shard.observe(&summary),
            }
        }
        let through = chunk.base + chunk.entries.len() as u64;
        let mut merging = self.merging.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        merging.add(t + 1, shard.congestion.take_incast_events(), through);
        if let Some((whole, progress)) = whole {
            merging.add(0, whole.congestion.take_incast_events(), through);
            progress(chunk.to as u64);
        }
        merging.drain(&self.config.congestion);
        drop(merging);
        self.shared.finish(t, &[chunk.to]);
    }

    /// Starts loading the bytes of the frame at `e`: its record header (24 bytes at most, a
    /// pcap "modified" one; a pcapng block's reach 28) and its captured bytes.
    fn prefetch(&self, e: &Entry) {
        let at = e.at as usize;
        let bytes = self.walk.mapping().get(at..at.saturating_add(e.caplen as usize + 28));
        crate::prefetch::bytes(bytes.unwrap_or_default());
    }
}

/// Walks the records of `walk` from `from` to the first one that starts at or past `end`.
fn walk_range(walk: &FileWalk, router: &Decoder, from: usize, end: usize) -> WalkedChunk {
    let mut chunk = WalkedChunk {
        from: Some(from),
        to: from,
        entries: Vec::new(),
        partitions: Vec::new(),
        first_ts_ns: None,
        last_ts_ns: None,
        ending: Ending::Whole,
    };
    let mut seen = [false; PARTITIONS];
    let mut prefetched = from;
    while chunk.to < end {
        read_ahead(walk.mapping(), chunk.to, &mut prefetched);
        let (record, next) = match walk.record_at(chunk.to) {
            Walked::Record(record, next) => (record, next),
            Walked::Other(next) => {
                chunk.to = next;
                continue;
            }
            Walked::End => break,
            Walked::Irregular => {
                chunk.ending = Ending::Irregular;
                break;
            }
        };
        if chunk.last_ts_ns.is_some_and(|last| record.ts_ns < last) {
            chunk.ending = Ending::Backwards;
            break;
        }
        chunk.first_ts_ns.get_or_insert(record.ts_ns);
        chunk.last_ts_ns = Some(record.ts_ns);
        let partition = partition_of(router, &record).map_or(NO_PARTITION, |p| p as u16);
        if let Some(seen) = seen.get_mut(usize::from(partition)).filter(|s| !**s) {
            *seen = true;
            chunk.partitions.push(partition);
        }
        chunk.entries.push(Entry { at: chunk.to as u64, caplen: record.data.len() as u32, partition });
        chunk.to = next;
    }
    chunk
}
