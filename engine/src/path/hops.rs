//! What each hop did to the packets of one direction: from their journeys, the copies seen at
//! both ends, those lost on the hop, the marks and rewrites added, the delays and reordering.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use rocescope_parsers::opcode::{CNP, is_acknowledge, is_atomic_acknowledge};

use crate::analyze::report::path::{DelayBins, Direction, HopReport, LOSSES_KEPT, LossReport};

use super::journeys::{Journey, Journeys};
use super::sightings::{Hosts, Sighting};

/// The taps one direction passes, in its order.
pub struct Way<'a> {
    pub direction: Direction,
    /// Per position: the tap's name, its sightings, their times on the first tap's clock, the
    /// span it captured (on that clock), and how well delays to it from the position before
    /// are known.
    pub stops: Vec<Stop<'a>>,
    pub window_ns: i64,
}

pub struct Stop<'a> {
    pub tap: usize,
    pub name: &'a str,
    pub sightings: &'a [Sighting],
    pub at: &'a [i64],
    pub span: (i64, i64),
    /// How well the clocks of this tap and the one before are aligned, when delays between
    /// them can be measured (see [`super::clocks::Clock::to_neighbour_ns`]).
    pub delay_uncertainty_ns: Option<u64>,
}

impl Stop<'_> {
    fn sighting(&self, i: u32) -> Option<(&Sighting, i64)> {
        self.sightings.get(i as usize).zip(self.at.get(i as usize).copied())
    }

    /// Was the tap capturing when a copy that left the tap before it at `at` would pass?
    fn was_capturing(&self, at: i64, window_ns: i64) -> bool {
        self.span.0 <= at && at.saturating_add(window_ns) <= self.span.1
    }
}

/// What the hops of one direction did.
pub struct Walked {
    pub hops: Vec<HopReport>,
    pub losses: Vec<LossReport>,
    /// Per tap (by its index among all taps): copies it missed.
    pub missed: Vec<(usize, u64)>,
}

pub fn walk(way: &Way<'_>, journeys: &Journeys, hosts: &Hosts) -> Walked {
    let mut hops: Vec<HopReport> = Vec::new();
    for (k, pair) in way.stops.windows(2).enumerate() {
        if let [from, to] = pair {
            hops.push(hop(way, journeys, k, from, to));
        }
    }
    let mut losses = Vec::new();
    let mut missed = vec![0u64; way.stops.len()];
    for journey in journeys.iter() {
        let (first, last) = (journey.first(), journey.last());
        for (m, slot) in missed.iter_mut().enumerate().take(last).skip(first + 1) {
            *slot += u64::from(journey.at(m).is_none());
        }
        if let Some(loss) = lost(way, journey, hosts) {
            if let Some(hop) = hops.get_mut(last) {
                hop.lost += 1;
            }
            if losses.len() < LOSSES_KEPT {
                losses.push(loss);
            }
        }
    }
    for loss in resent_after_the_last_tap(way, journeys, hosts) {
        if losses.len() < LOSSES_KEPT {
            losses.push(loss);
        }
    }
    let missed = way.stops.iter().zip(missed).map(|(stop, n)| (stop.tap, n)).collect();
    Walked { hops, losses, missed }
}

/// The packets (not acknowledgements or CNPs) that reached the way's last tap and were sent
/// again later: lost after the last tap, or arrived and their acknowledgement was lost; the
/// union's PSN analysis tells which.
fn resent_after_the_last_tap(way: &Way<'_>, journeys: &Journeys, hosts: &Hosts) -> Vec<LossReport> {
    let end = way.stops.len().saturating_sub(1);
    let Some(last_stop) = way.stops.get(end) else { return Vec::new() };
    // each journey's first copy, in time order
    let mut firsts: Vec<(i64, &Sighting, Journey<'_>)> = journeys
        .iter()
        .filter_map(|j| {
            let k = j.first();
            let (s, at) = way.stops.get(k)?.sighting(j.at(k)?)?;
            Some((at, s, j))
        })
        .collect();
    firsts.sort_by_key(|&(at, _, _)| at);
    let mut copies_left: FxHashMap<u32, usize> = FxHashMap::default();
    for (_, s, _) in &firsts {
        *copies_left.entry(s.signature).or_default() += 1;
    }
    let mut losses = Vec::new();
    for (_, s, journey) in firsts {
        let copies_after = copies_left.get_mut(&s.signature).map_or(0, |n| {
            *n -= 1;
            *n
        });
        let answers = is_acknowledge(s.opcode) || is_atomic_acknowledge(s.opcode) || s.opcode == CNP;
        if journey.last() == end && copies_after > 0 && !answers {
            losses.push(loss(s, hosts, last_stop.name, format!("after:{}", last_stop.name)));
        }
    }
    losses
}

/// The journey's loss, when it ends before the last tap while the next tap was capturing.
fn lost(way: &Way<'_>, journey: Journey<'_>, hosts: &Hosts) -> Option<LossReport> {
    let last = journey.last();
    let (here, next) = (way.stops.get(last)?, way.stops.get(last + 1)?);
    let (s, at) = here.sighting(journey.at(last)?)?;
    if !next.was_capturing(at, way.window_ns) {
        return None;
    }
    Some(loss(s, hosts, here.name, format!("{}->{}", here.name, next.name)))
}

/// The packet of sighting `s`, last seen at `last_tap`, lost on `lost_on`.
fn loss(s: &Sighting, hosts: &Hosts, last_tap: &str, lost_on: String) -> LossReport {
    let (src, dst) = hosts.endpoints(s.pair);
    LossReport {
        flow: None,
        src,
        dst,
        dest_qp: s.dest_qp,
        psn: s.psn,
        opcode: s.opcode,
        last_tap: last_tap.to_string(),
        lost_on,
    }
}

/// The hop from position `k` (`from`) to `k + 1` (`to`).
fn hop(way: &Way<'_>, journeys: &Journeys, k: usize, from: &Stop<'_>, to: &Stop<'_>) -> HopReport {
    let mut report = HopReport {
        from: from.name.to_string(),
        to: to.name.to_string(),
        direction: way.direction,
        matched: 0,
        lost: 0,
        ce_added: 0,
        dscp_rewritten: BTreeMap::new(),
        pcp_rewritten: BTreeMap::new(),
        ttl_decrement: None,
        reordered: 0,
        delay_uncertainty_ns: to.delay_uncertainty_ns,
        delay_p50_ns: None,
        delay_p99_ns: None,
        delay_max_ns: None,
        delay_bins: None,
    };
    let mut delays = Vec::new();
    let mut decrements: FxHashMap<u8, u64> = FxHashMap::default();
    let mut crossed = Vec::new();
    for (a, b) in journeys.iter().filter_map(|j| j.at_hop(k)) {
        let (Some((sa, ta)), Some((sb, tb))) = (from.sighting(a), to.sighting(b)) else { continue };
        report.matched += 1;
        report.ce_added += u64::from(matches!(sa.ecn, Some(1 | 2)) && sb.ecn == Some(3));
        if let (Some(x), Some(y)) = (sa.dscp, sb.dscp)
            && x != y
        {
            *report.dscp_rewritten.entry(format!("{x}->{y}")).or_default() += 1;
        }
        if let (Some(x), Some(y)) = (sa.pcp, sb.pcp)
            && x != y
        {
            *report.pcp_rewritten.entry(format!("{x}->{y}")).or_default() += 1;
        }
        *decrements.entry(sa.ttl.wrapping_sub(sb.ttl)).or_default() += 1;
        delays.push(tb.saturating_sub(ta));
        crossed.push(((sa.pair, sa.dest_qp), ta, tb));
    }
    report.ttl_decrement = decrements.into_iter().max_by_key(|&(d, n)| (n, std::cmp::Reverse(d))).map(|(d, _)| d);
    report.reordered = reordered(crossed);
    if to.delay_uncertainty_ns.is_some() && !delays.is_empty() {
        delays.sort_unstable();
        report.delay_p50_ns = nearest_rank(&delays, 50);
        report.delay_p99_ns = nearest_rank(&delays, 99);
        report.delay_max_ns = delays.last().copied();
        report.delay_bins = DelayBins::of(&delays);
    }
    report
}

/// The copies that reached the hop's end after a copy of their flow that left its start after
/// them.
fn reordered(mut crossed: Vec<((u32, u32), i64, i64)>) -> u64 {
    crossed.sort_by_key(|&(flow, left, _)| (flow, left));
    let mut count = 0;
    for flow in crossed.chunk_by(|a, b| a.0 == b.0) {
        let mut arrivals: Vec<(i64, usize)> = flow.iter().enumerate().map(|(rank, c)| (c.2, rank)).collect();
        arrivals.sort();
        let mut latest_rank = None;
        for (_, rank) in arrivals {
            match latest_rank {
                Some(latest) if rank < latest => count += 1,
                _ => latest_rank = Some(rank),
            }
        }
    }
    count
}

/// The `percent`-th percentile of sorted `values`, by nearest rank.
fn nearest_rank(values: &[i64], percent: usize) -> Option<i64> {
    let rank = (values.len() * percent).div_ceil(100).max(1);
    values.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<i64> = (1..=200).collect();
        assert_eq!(nearest_rank(&values, 50), Some(100));
        assert_eq!(nearest_rank(&values, 99), Some(198));
        assert_eq!(nearest_rank(&[7], 99), Some(7));
        assert_eq!(nearest_rank(&[], 50), None);
    }

    #[test]
    fn delays_fall_into_twenty_bins_from_the_smallest_to_the_largest() {
        let delays: Vec<i64> = (1_000..=2_999).collect();
        let bins = DelayBins::of(&delays).expect("bins");
        assert_eq!((bins.first_ns, bins.width_ns), (1_000, 100));
        assert_eq!(bins.counts, vec![100; 20]);
        let one = DelayBins::of(&[5_000]).expect("bins");
        assert_eq!((one.counts[0], one.counts.iter().sum::<u64>()), (1, 1));
        assert!(DelayBins::of(&[]).is_none());
    }

    #[test]
    fn a_copy_overtaken_on_the_hop_is_reordered_once() {
        let flow = (0, 1);
        // left in order 1, 2, 3, 4; arrived 2, 1, 3, 4: the first packet came late
        let crossed = vec![(flow, 10, 25), (flow, 20, 22), (flow, 30, 40), (flow, 40, 50), ((0, 2), 15, 5)];
        assert_eq!(reordered(crossed), 1);
    }
}
