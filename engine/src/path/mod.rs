//! Where on the path (`analyze --tap`): the same packets captured at several taps along one
//! path, from the requester's side to the responder's. Each packet is recognised at every tap by
//! its content signature (the ICRC covers every byte no hop changes); the taps' clocks are
//! aligned from the packets neighbouring taps share ([`clocks`]); each packet's copies make a
//! journey ([`journeys`]); each hop's losses, marks, rewrites and delays are read from the
//! journeys ([`hops`]). The union of the taps, each packet once (its copy at the first tap it
//! passed), on the first tap's clock, is what the rest of the analysis reads ([`Traced::union`]).

pub mod clocks;
pub mod hops;
pub mod journeys;
pub mod sightings;

use rustc_hash::FxHashMap;
use std::path::PathBuf;

use crate::analyze::report::path::{Direction, OffsetMethod, PathReport, TapReport};
use crate::capture::{Alignment, CaptureError};
use crate::decode::Decoder;
use clocks::Clock;
use hops::{Stop, Way};
use journeys::{Copy, Journeys, Reach};
pub use sightings::Tap;
use sightings::{Hosts, Sighting, TapSightings};

/// The path's options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// How much later a copy may be at the next tap (`--path-window-us`).
    pub window_ns: u64,
    /// Clock offsets given (`--tap-offset NAME=NS`), by tap name.
    pub offsets: Vec<(String, i64)>,
    /// Taps read at once.
    pub threads: usize,
}

/// The default of `--path-window-us`.
pub const DEFAULT_WINDOW_US: u64 = 10_000;

/// The path traced.
#[derive(Debug)]
pub struct Traced {
    pub report: PathReport,
    /// Every tap's files, in tap order, and each one's alignment to the first tap's clock with
    /// the records left out: copies of a packet an earlier tap on its way holds too.
    pub files: Vec<PathBuf>,
    pub union: Vec<Alignment>,
}

/// Traces the packets of `taps` along the path.
pub fn trace(taps: &[Tap], decoder: &Decoder, options: &Options) -> Result<Traced, CaptureError> {
    let (seen, hosts) = sightings::read(taps, decoder, options.threads)?;
    let reference_ns = seen.first().and_then(|t| t.first_ts_ns).unwrap_or(0);
    let clocks = align(taps, &seen, &hosts, options, reference_ns);
    let alignments: Vec<Alignment> = clocks.iter().map(|c| c.alignment(reference_ns)).collect();
    let at: Vec<Vec<i64>> = seen
        .iter()
        .zip(&alignments)
        .map(|(tap, a)| tap.sightings.iter().map(|s| a.aligned(s.ts_ns)).collect())
        .collect();
    let window_ns = i64::try_from(options.window_ns).unwrap_or(i64::MAX);
    let mut report = PathReport { window_ns: options.window_ns, ..PathReport::default() };
    let mut missed = vec![0u64; taps.len()];
    let mut skip: Vec<Vec<u64>> = taps.iter().flat_map(|t| t.files.iter().map(|_| Vec::new())).collect();
    let timed = Timed { taps, seen: &seen, at: &at, alignments: &alignments, clocks: &clocks };
    for direction in [Direction::Forward, Direction::Reverse] {
        let Some(stops) = timed.stops(direction) else { continue };
        let way = Way { direction, stops, window_ns };
        let journeys = follow(&way, &hosts);
        let walked = hops::walk(&way, &journeys, &hosts);
        report.hops.extend(walked.hops);
        report.losses.extend(walked.losses);
        for (tap, n) in walked.missed {
            if let Some(m) = missed.get_mut(tap) {
                *m += n;
            }
        }
        leave_out_later_copies(&way, &journeys, &mut skip);
    }
    report.losses.truncate(crate::analyze::report::path::LOSSES_KEPT);
    report.taps = tap_reports(taps, &seen, &clocks, &missed);
    Ok(Traced {
        report,
        files: taps.iter().flat_map(|t| t.files.iter().cloned()).collect(),
        union: union(taps, &alignments, skip),
    })
}

/// The taps with what they saw on the first tap's clock.
struct Timed<'a> {
    taps: &'a [Tap],
    seen: &'a [TapSightings],
    at: &'a [Vec<i64>],
    alignments: &'a [Alignment],
    clocks: &'a [Clock],
}

impl Timed<'_> {
    /// The taps in the order `direction`'s packets pass them; `None` if one saw nothing.
    fn stops(&self, direction: Direction) -> Option<Vec<Stop<'_>>> {
        let order: Vec<usize> = match direction {
            Direction::Forward => (0..self.taps.len()).collect(),
            Direction::Reverse => (0..self.taps.len()).rev().collect(),
        };
        let stop = |k: usize, t: usize| {
            let (tap, sightings, at, alignment) =
                (self.taps.get(t)?, self.seen.get(t)?, self.at.get(t)?, self.alignments.get(t)?);
            let span = (alignment.aligned(sightings.first_ts_ns?), alignment.aligned(sightings.last_ts_ns));
            let behind = k.checked_sub(1).and_then(|b| order.get(b));
            let delay_uncertainty_ns = behind.and_then(|&b| hop_uncertainty(self.clocks, b, t));
            Some(Stop { tap: t, name: &tap.name, sightings: &sightings.sightings, at, span, delay_uncertainty_ns })
        };
        order.iter().enumerate().map(|(k, &t)| stop(k, t)).collect()
    }
}

/// Every tap's files as the union reads them: on the first tap's clock, the tap's interface
/// only, the records in `skip` left out.
fn union(taps: &[Tap], alignments: &[Alignment], skip: Vec<Vec<u64>>) -> Vec<Alignment> {
    alignments
        .iter()
        .zip(taps)
        .flat_map(|(a, t)| t.files.iter().map(move |_| Alignment { interface: t.interface.clone(), ..a.clone() }))
        .zip(skip)
        .map(|(a, mut skip)| {
            skip.sort_unstable();
            Alignment { skip, ..a }
        })
        .collect()
}

/// How well the hop between taps `a` and `b` (neighbours) can time its packets: the
/// uncertainty of the later one's alignment to the other, when that was found from both
/// directions; a given offset is taken as exact. `None`: the delays cannot be measured.
fn hop_uncertainty(clocks: &[Clock], a: usize, b: usize) -> Option<u64> {
    let clock = clocks.get(a.max(b))?;
    match clock.method {
        OffsetMethod::Given => Some(0),
        OffsetMethod::Reference | OffsetMethod::TwoWay => clock.to_neighbour_ns,
        OffsetMethod::OneWayBound | OffsetMethod::Unknown => None,
    }
}

/// Each tap's clock: given, or estimated against its neighbour before it, whose clock is known.
fn align(taps: &[Tap], seen: &[TapSightings], hosts: &Hosts, options: &Options, reference_ns: i64) -> Vec<Clock> {
    let way = |s: &Sighting| if hosts.is_forward(s.pair) { Direction::Forward } else { Direction::Reverse };
    let mut clocks: Vec<Clock> = Vec::with_capacity(taps.len());
    for (b, tap) in taps.iter().enumerate() {
        let given = options.offsets.iter().find(|(name, _)| *name == tap.name).map(|&(_, ns)| ns);
        let clock = match (b, given, clocks.last(), seen.get(b.wrapping_sub(1)), seen.get(b)) {
            (0, None, ..) => Clock::REFERENCE,
            (_, Some(ns), ..) => Clock::given(ns),
            (_, None, Some(before), Some(known), Some(unknown)) => {
                let alignment = before.alignment(reference_ns);
                let aligned = |s: &Sighting| alignment.aligned(s.ts_ns);
                let mut clock = clocks::estimate(&known.sightings, &aligned, &unknown.sightings, &way, reference_ns);
                clock.uncertainty_ns =
                    clock.uncertainty_ns.map(|u| u.saturating_add(before.uncertainty_ns.unwrap_or(0)));
                clock
            }
            _ => Clock::REFERENCE,
        };
        clocks.push(clock);
    }
    clocks
}

/// The journeys of one direction's packets.
fn follow(way: &Way<'_>, hosts: &Hosts) -> Journeys {
    let copies: Vec<Vec<Copy>> = way
        .stops
        .iter()
        .map(|stop| {
            let mine = stop.sightings.iter().zip(stop.at).enumerate();
            let mine = mine.filter(|(_, (s, _))| (hosts.is_forward(s.pair)) == (way.direction == Direction::Forward));
            mine.map(|(i, (s, &at))| Copy { sighting: i as u32, signature: s.signature, at }).collect()
        })
        .collect();
    let reach: Vec<Reach> = way
        .stops
        .iter()
        .enumerate()
        .map(|(k, stop)| {
            let slack_ns = match stop.delay_uncertainty_ns {
                Some(u) => i64::try_from(u).unwrap_or(i64::MAX).saturating_add(SLACK_NS),
                None => way.window_ns,
            };
            let behind = k.checked_sub(1).and_then(|b| copies.get(b));
            let delay_ns = behind.zip(copies.get(k)).and_then(|(a, b)| smallest_delay(a, b)).unwrap_or(0);
            Reach { window_ns: way.window_ns, slack_ns, delay_ns }
        })
        .collect();
    journeys::follow(&copies, &reach)
}

/// The smallest delay from one position to the next over the packets each saw exactly once.
fn smallest_delay(before: &[Copy], after: &[Copy]) -> Option<i64> {
    let once = |copies: &[Copy]| {
        let mut by_signature: FxHashMap<u32, Option<i64>> =
            FxHashMap::with_capacity_and_hasher(copies.len(), Default::default());
        for c in copies {
            by_signature.entry(c.signature).and_modify(|at| *at = None).or_insert(Some(c.at));
        }
        by_signature
    };
    let (before, after) = (once(before), once(after));
    before.iter().filter_map(|(sig, at)| Some(after.get(sig).copied().flatten()?.saturating_sub((*at)?))).min()
}

/// How much earlier than its copy at the tap before a copy may seem, beyond the clocks'
/// uncertainty: the taps' timestamp resolution.
const SLACK_NS: i64 = 1_000;

/// Leaves out of the union every copy but a journey's first: each packet as its sender sent
/// it, seen from the tap nearest the sender, so that a direction's packets keep the order they
/// were sent in (a lost packet's last copy, from a tap nearer the sender than its neighbours'
/// last copies, would seem to overtake them).
fn leave_out_later_copies(way: &Way<'_>, journeys: &Journeys, skip: &mut [Vec<u64>]) {
    for journey in journeys.iter() {
        let first = journey.first();
        for (k, i) in journey.copies().skip(first + 1) {
            let Some(s) = i.and_then(|i| way.stops.get(k)?.sightings.get(i as usize)) else { continue };
            if let Some(file) = skip.get_mut(s.file as usize) {
                file.push(s.record);
            }
        }
    }
}

fn tap_reports(taps: &[Tap], seen: &[TapSightings], clocks: &[Clock], missed: &[u64]) -> Vec<TapReport> {
    taps.iter()
        .zip(seen)
        .zip(clocks)
        .zip(missed)
        .map(|(((tap, seen), clock), &missed)| TapReport {
            name: tap.name.clone(),
            files: tap.files.iter().map(|f| f.display().to_string()).collect(),
            interface: tap.interface.clone(),
            frames: seen.frames,
            roce_packets: seen.sightings.len() as u64,
            clock_offset_ns: clock.offset_ns,
            offset_uncertainty_ns: clock.uncertainty_ns,
            offset_method: clock.method,
            drift_ppm: (clock.drift_ppm * 1000.0).round() / 1000.0,
            missed,
        })
        .collect()
}
