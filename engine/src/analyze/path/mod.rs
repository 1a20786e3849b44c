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
pub mod report;
pub mod rules;
pub mod sightings;

use rustc_hash::FxHashMap;
use std::path::PathBuf;

use crate::capture::{Alignment, CaptureError};
use crate::decode::Decoder;
use clocks::Clock;
use hops::{Stop, Way};
use journeys::{Copy, Journeys, Reach};
use report::{Direction, OffsetMethod, PathReport, TapOrder, TapReport};
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
    let mut neighbours = vec![Arrivals::default(); taps.len().saturating_sub(1)];
    for direction in [Direction::Forward, Direction::Reverse] {
        let Some(stops) = timed.stops(direction) else { continue };
        let way = Way { direction, stops, window_ns };
        let (journeys, seen_once) = follow(&way, &hosts);
        for (hop, once) in way.stops.windows(2).zip(seen_once) {
            if let Some(pair) = hop.iter().map(|stop| stop.tap).min().and_then(|a| neighbours.get_mut(a)) {
                pair.add(once.arrivals);
            }
        }
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
    report.losses.truncate(crate::analyze::path::report::LOSSES_KEPT);
    report.taps = tap_reports(taps, &seen, &clocks, &missed);
    report.tap_order = tap_order(taps, &neighbours);
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

/// The journeys of one direction's packets, and for each hop of its way the packets its two taps
/// each saw once.
fn follow(way: &Way<'_>, hosts: &Hosts) -> (Journeys, Vec<SeenOnce>) {
    let copies: Vec<Vec<Copy>> = way
        .stops
        .iter()
        .map(|stop| {
            let mine = stop.sightings.iter().zip(stop.at).enumerate();
            let mine = mine.filter(|(_, (s, _))| (hosts.is_forward(s.pair)) == (way.direction == Direction::Forward));
            mine.map(|(i, (s, &at))| Copy { sighting: i as u32, signature: s.signature, at }).collect()
        })
        .collect();
    let seen_once: Vec<SeenOnce> = copies
        .windows(2)
        .zip(way.stops.iter().skip(1))
        .map(|(hop, to)| match hop {
            [before, after] => seen_once(before, after, measured_slack(to)),
            _ => SeenOnce::default(),
        })
        .collect();
    let reach: Vec<Reach> = way
        .stops
        .iter()
        .enumerate()
        .map(|(k, stop)| {
            let slack_ns = measured_slack(stop).unwrap_or(way.window_ns);
            let behind = k.checked_sub(1).and_then(|h| seen_once.get(h));
            let delay_ns = behind.and_then(|once| once.smallest_delay).unwrap_or(0);
            Reach { window_ns: way.window_ns, slack_ns, delay_ns }
        })
        .collect();
    (journeys::follow(&copies, &reach), seen_once)
}

/// How much earlier than its copy at the tap before a copy at `stop` may seem: the clocks'
/// uncertainty and the taps' timestamp resolution; `None` when the hop's delays cannot be
/// measured.
fn measured_slack(stop: &Stop<'_>) -> Option<i64> {
    let uncertainty = stop.delay_uncertainty_ns?;
    Some(i64::try_from(uncertainty).unwrap_or(i64::MAX).saturating_add(SLACK_NS))
}

/// The packets a hop's two taps each saw once (the copies known to be one packet's before the
/// journeys are followed): when they arrived, and their smallest delay.
#[derive(Debug, Clone, Copy, Default)]
struct SeenOnce {
    arrivals: Arrivals,
    smallest_delay: Option<i64>,
}

/// How many packets two taps whose delays are measured each saw once, and how many of them
/// reached the second tap before they left the first (earlier than the clocks' slack allows).
#[derive(Debug, Clone, Copy, Default)]
struct Arrivals {
    count: u64,
    before_leaving: u64,
}

impl Arrivals {
    fn add(&mut self, other: Arrivals) {
        self.count += other.count;
        self.before_leaving += other.before_leaving;
    }

    /// Did most arrive before they left: do the two taps seem to be the other way round?
    fn backwards(&self) -> bool {
        self.before_leaving.saturating_mul(2) > self.count
    }
}

/// The packets seen once at one position (`before`) and once at the next (`after`); their
/// arrivals are counted only where the delays are measured, with `slack_ns`.
fn seen_once(before: &[Copy], after: &[Copy], slack_ns: Option<i64>) -> SeenOnce {
    let once = |copies: &[Copy]| {
        let mut by_signature: FxHashMap<u32, Option<i64>> =
            FxHashMap::with_capacity_and_hasher(copies.len(), Default::default());
        for c in copies {
            by_signature.entry(c.signature).and_modify(|at| *at = None).or_insert(Some(c.at));
        }
        by_signature
    };
    let (before, after) = (once(before), once(after));
    let delays = before.iter().filter_map(|(sig, at)| Some(after.get(sig).copied().flatten()?.saturating_sub((*at)?)));
    let mut seen = SeenOnce::default();
    for delay in delays {
        if let Some(slack) = slack_ns {
            seen.arrivals.count += 1;
            seen.arrivals.before_leaving += u64::from(delay < slack.saturating_neg());
        }
        seen.smallest_delay = Some(seen.smallest_delay.map_or(delay, |d| d.min(delay)));
    }
    seen
}

/// The taps' order as the packets that neighbouring taps each saw once tell it (`neighbours[a]`:
/// taps `a` and `a + 1`, both ways): see [`TapOrder`].
fn tap_order(taps: &[Tap], neighbours: &[Arrivals]) -> TapOrder {
    let told = neighbours.iter().filter(|pair| pair.count > 0).count();
    let backwards: Vec<[String; 2]> = neighbours
        .iter()
        .enumerate()
        .filter(|(_, pair)| pair.backwards())
        .filter_map(|(a, _)| Some([taps.get(a)?.name.clone(), taps.get(a + 1)?.name.clone()]))
        .collect();
    match backwards.len() {
        0 => TapOrder::AsGiven,
        n if n == told => TapOrder::Reversed,
        _ => TapOrder::OutOfOrder(backwards),
    }
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
