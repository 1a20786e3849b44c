//! Every RoCE packet each tap saw, with what the path can change in it and its content
//! signature, which no hop changes.

use rustc_hash::FxHashMap;
use std::path::PathBuf;

use rocescope_parsers::opcode::{is_acknowledge, is_atomic_acknowledge, is_read_response};

use crate::analyze::frame::{Content, FrameSummary};
use crate::capture::{Alignment, CaptureError, Inputs};
use crate::decode::{Decoder, Endpoint};

/// A tap: its name and its files (rotated files of one capture, merged by time), and where
/// several taps share a pcapng file, the interface that is this one's (its name or index).
#[derive(Debug, Clone)]
pub struct Tap {
    pub name: String,
    pub files: Vec<PathBuf>,
    pub interface: Option<String>,
}

impl Tap {
    /// How each of the tap's files is read: only its interface's records.
    pub fn reading(&self) -> Vec<Alignment> {
        self.files.iter().map(|_| Alignment { interface: self.interface.clone(), ..Alignment::default() }).collect()
    }
}

/// One copy of a RoCE packet at one tap.
#[derive(Debug, Clone, Copy)]
pub struct Sighting {
    /// On the tap's own clock.
    pub ts_ns: i64,
    /// The computed ICRC, or the CRC of the captured transport bytes (see
    /// [`crate::analyze::frame::RoceFacts::signature`]).
    pub signature: u32,
    /// The ordered host pair (an index of [`Hosts`]).
    pub pair: u32,
    pub dest_qp: u32,
    pub psn: u32,
    pub opcode: u8,
    pub dscp: Option<u8>,
    pub ecn: Option<u8>,
    pub pcp: Option<u8>,
    pub ttl: u8,
    /// The file among every tap's files, in tap order, and the record's index in it.
    pub file: u32,
    pub record: u64,
}

/// What one tap saw.
#[derive(Debug, Default)]
pub struct TapSightings {
    pub frames: u64,
    pub sightings: Vec<Sighting>,
    /// Its first and last frame's times, on its own clock.
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: i64,
}

/// The ordered host pairs the taps saw, and which way each crosses the path.
#[derive(Debug, Default)]
pub struct Hosts {
    pairs: Vec<(Endpoint, Endpoint)>,
    index: FxHashMap<(Endpoint, Endpoint), u32>,
    /// Per pair: from the first tap's side towards the last's; `None` until a request or a
    /// response between the two hosts says which host requests.
    forward: Vec<Option<bool>>,
}

impl Hosts {
    fn pair(&mut self, src: Endpoint, dst: Endpoint) -> u32 {
        if let Some(&i) = self.index.get(&(src, dst)) {
            return i;
        }
        let i = self.pairs.len() as u32;
        self.pairs.push((src, dst));
        self.forward.push(None);
        self.index.insert((src, dst), i);
        i
    }

    /// The hosts of pair `i`, source first.
    pub fn endpoints(&self, i: u32) -> (Endpoint, Endpoint) {
        self.pairs.get(i as usize).copied().unwrap_or((Endpoint::Lid(0), Endpoint::Lid(0)))
    }

    /// Does pair `i` go from the first tap's side towards the last's? A host pair's requester
    /// (the source of its first request, the destination of its first response) is taken to be
    /// on the first tap's side, as `--tap`'s order says; a pair with neither goes forward.
    pub fn is_forward(&self, i: u32) -> bool {
        self.forward.get(i as usize).copied().flatten().unwrap_or(true)
    }

    /// Is the way of pair `i`, or of its reverse, known?
    fn decided(&self, i: u32) -> bool {
        let (src, dst) = self.endpoints(i);
        let reverse = self.index.get(&(dst, src)).copied();
        [Some(i), reverse].into_iter().flatten().any(|p| self.forward.get(p as usize).copied().flatten().is_some())
    }

    /// Learns the way of the pair `i` from its packet with `opcode`, if it is the first request
    /// or response between the two hosts.
    fn learn(&mut self, i: u32, opcode: u8) {
        if opcode == rocescope_parsers::opcode::CNP {
            return;
        }
        if self.decided(i) {
            return;
        }
        let (src, dst) = self.endpoints(i);
        let reverse = self.index.get(&(dst, src)).copied();
        let response = is_acknowledge(opcode) || is_atomic_acknowledge(opcode) || is_read_response(opcode);
        if let Some(way) = self.forward.get_mut(i as usize) {
            *way = Some(!response);
        }
        if let Some(way) = reverse.and_then(|r| self.forward.get_mut(r as usize)) {
            *way = Some(response);
        }
    }

    /// Takes in the pairs another tap's reading found, its taps after ours: the ways it decided
    /// for pairs not decided yet. Returns the index here of each of its pairs.
    fn adopt(&mut self, other: &Hosts) -> Vec<u32> {
        let mut here = Vec::with_capacity(other.pairs.len());
        for (i, &(src, dst)) in other.pairs.iter().enumerate() {
            let g = self.pair(src, dst);
            here.push(g);
            if self.decided(g) {
                continue;
            }
            if let (Some(way), Some(theirs)) =
                (self.forward.get_mut(g as usize), other.forward.get(i).copied().flatten())
            {
                *way = Some(theirs);
            }
        }
        here
    }

    /// Gives the reverse pair, once seen, the other way of a pair already decided.
    fn settle(&mut self) {
        for i in 0..self.pairs.len() {
            let (src, dst) = self.pairs[i];
            if self.forward[i].is_none()
                && let Some(&r) = self.index.get(&(dst, src))
            {
                self.forward[i] = self.forward[r as usize].map(|f| !f);
            }
        }
    }
}

/// Reads every tap's files, the taps on up to `threads` threads at once; `Err` for a file that
/// cannot be opened. A file damaged part of the way is read up to the damage (the analysis of
/// the union reports it).
pub fn read(taps: &[Tap], decoder: &Decoder, threads: usize) -> Result<(Vec<TapSightings>, Hosts), CaptureError> {
    let files_before: Vec<u32> = taps
        .iter()
        .scan(0u32, |before, tap| {
            let first = *before;
            *before += tap.files.len() as u32;
            Some(first)
        })
        .collect();
    let read_one = |i: usize, tap: &Tap| -> Result<(TapSightings, Hosts), CaptureError> {
        let (inputs, mut unreadable) = Inputs::open(&tap.files, false);
        if !unreadable.is_empty() {
            return Err(unreadable.remove(0));
        }
        let mut inputs = inputs.aligned(tap.reading());
        let mut hosts = Hosts::default();
        let seen = read_tap(&mut inputs, decoder, files_before.get(i).copied().unwrap_or(0), &mut hosts);
        inputs.take_damage();
        Ok((seen, hosts))
    };
    let read = each_on_threads(taps, threads, read_one);
    let mut hosts = Hosts::default();
    let mut seen = Vec::with_capacity(taps.len());
    for tap in read {
        let (mut tap, local) = tap?;
        let global = hosts.adopt(&local);
        for s in &mut tap.sightings {
            s.pair = global.get(s.pair as usize).copied().unwrap_or(s.pair);
        }
        seen.push(tap);
    }
    hosts.settle();
    Ok((seen, hosts))
}

/// `work` done for every item, on up to `threads` threads at once; the results in the items'
/// order.
fn each_on_threads<T: Sync, R: Send>(items: &[T], threads: usize, work: impl Fn(usize, &T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, items.len().max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return mine };
                        mine.push((i, work(i, item)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

fn read_tap(inputs: &mut Inputs, decoder: &Decoder, files_before: u32, hosts: &mut Hosts) -> TapSightings {
    let mut tap = TapSightings::default();
    let mut records = vec![0u64; inputs.readers().len()];
    while let Some(frame) = inputs.next_frame() {
        let record = records.get(frame.file).copied().unwrap_or(0);
        if let Some(r) = records.get_mut(frame.file) {
            *r += 1;
        }
        tap.frames += 1;
        tap.first_ts_ns.get_or_insert(frame.record.ts_ns);
        tap.last_ts_ns = frame.record.ts_ns;
        let summary = FrameSummary::of(frame.number, &decoder.decode(&frame.record));
        let Content::Roce(roce) = summary.content else { continue };
        let (src, dst) = summary.endpoints();
        let pair = hosts.pair(src, dst);
        hosts.learn(pair, roce.opcode);
        tap.sightings.push(Sighting {
            ts_ns: summary.ts_ns,
            signature: roce.signature,
            pair,
            dest_qp: roce.dest_qp,
            psn: roce.psn,
            opcode: roce.opcode,
            dscp: summary.dscp,
            ecn: summary.ecn,
            pcp: roce.pcp,
            ttl: roce.ttl,
            file: files_before + frame.file as u32,
            record,
        });
    }
    tap
}
