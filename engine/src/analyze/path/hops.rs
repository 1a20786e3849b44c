//! What each hop did to the packets of one direction: from their journeys, the copies seen at
//! both ends, those lost on the hop, the marks and rewrites added, the delays and reordering.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use rocescope_parsers::opcode::{is_read_response, is_unsequenced};

use crate::analyze::path::report::{DelayBins, Direction, HopReport, LOSSES_KEPT, LossReport};

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
/// again later by a resend that starts a resend run ([`resends`]): lost after the last tap, or
/// arrived and their acknowledgement was lost; the union's PSN analysis tells which. A packet
/// sent again by a later resend of a run is not listed: the run's first resend is the hole's,
/// and the receiver discarded the packet behind that hole (go-back-N).
fn resent_after_the_last_tap(way: &Way<'_>, journeys: &Journeys, hosts: &Hosts) -> Vec<LossReport> {
    let end = way.stops.len().saturating_sub(1);
    let Some(last_stop) = way.stops.get(end) else { return Vec::new() };
    // each packet's journey and its first copy, in the order they were sent
    let mut firsts: Vec<(i64, &Sighting, Journey<'_>)> = journeys
        .iter()
        .filter_map(|j| {
            let k = j.first();
            let (s, at) = way.stops.get(k)?.sighting(j.at(k)?)?;
            Some((at, s, j))
        })
        .filter(|(_, s, _)| !is_unsequenced(s.opcode))
        .collect();
    firsts.sort_by_key(|&(at, _, _)| at);
    let sent: Vec<Sent> = firsts
        .iter()
        .map(|(_, s, _)| Sent {
            flow: (s.pair, s.dest_qp, is_read_response(s.opcode)),
            psn: s.psn,
            signature: s.signature,
        })
        .collect();
    let resent = resends(&sent);
    let mut losses = Vec::new();
    for ((_, s, journey), resent) in firsts.iter().zip(resent) {
        if journey.last() == end && resent == Some(Resend::StartsRun) {
            losses.push(loss(s, hosts, last_stop.name, format!("after:{}", last_stop.name)));
        }
    }
    losses
}

/// A packet sent, as [`resends`] reads it: its flow (host pair, destination QP, and whether its
/// PSN is a READ response's), PSN and signature.
#[derive(Debug, Clone, Copy)]
struct Sent {
    flow: (u32, u32, bool),
    psn: u32,
    signature: u32,
}

/// How a packet was sent again: by the resend that starts a resend run, or by a later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resend {
    StartsRun,
    InRun,
}

/// For each packet (in the order sent), how it was sent again, if it was: the next packet with
/// its signature is its resend. A flow's resends make runs: a resend continues the run of the
/// packet its flow sent just before it when that one is a resend too and its PSN comes next, a
/// later PSN (by less than 2²³) with none of the flow's packets' PSNs between the two: a
/// go-back-N pass, which resends the PSNs from the hole on, one after the other. A new packet,
/// a PSN not after the previous, or one that skips a PSN the flow sent (a selective resend of
/// another hole) starts a run.
fn resends(sent: &[Sent]) -> Vec<Option<Resend>> {
    let mut psns: FxHashMap<(u32, u32, bool), Vec<u32>> = FxHashMap::default();
    for p in sent {
        psns.entry(p.flow).or_default().push(p.psn);
    }
    for flow in psns.values_mut() {
        flow.sort_unstable();
        flow.dedup();
    }
    let mut latest: FxHashMap<u32, usize> = FxHashMap::default();
    let mut previous: FxHashMap<(u32, u32, bool), (u32, bool)> = FxHashMap::default();
    let mut resent = vec![None; sent.len()];
    for (i, p) in sent.iter().enumerate() {
        let again = latest.insert(p.signature, i);
        let follows = previous.insert(p.flow, (p.psn, again.is_some())).is_some_and(|(psn, resend)| {
            resend && psn_after(psn, p.psn) && !psns.get(&p.flow).is_some_and(|f| any_between(f, psn, p.psn))
        });
        if let Some(slot) = again.and_then(|a| resent.get_mut(a)) {
            *slot = Some(if follows { Resend::InRun } else { Resend::StartsRun });
        }
    }
    resent
}

/// PSN arithmetic wraps at 2²⁴.
const PSN_SPACE: u32 = 1 << 24;

/// Is `b` after `a`, by less than half the PSN space?
fn psn_after(a: u32, b: u32) -> bool {
    (1..PSN_SPACE / 2).contains(&(b.wrapping_sub(a) % PSN_SPACE))
}

/// Does sorted `psns` hold a PSN strictly between `a` and `b` (`b` after `a`, across the wrap)?
fn any_between(psns: &[u32], a: u32, b: u32) -> bool {
    let count =
        |from: u32, to: u32| psns.partition_point(|&p| p < to).saturating_sub(psns.partition_point(|&p| p < from));
    let (a, b) = (a % PSN_SPACE, b % PSN_SPACE);
    if a < b { count(a + 1, b) > 0 } else { count(a + 1, PSN_SPACE) + count(0, b) > 0 }
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

    /// Packets of one flow, (PSN, signature) in the order sent.
    fn flow(packets: &[(u32, u32)]) -> Vec<Sent> {
        packets.iter().map(|&(psn, signature)| Sent { flow: (0, 1, false), psn, signature }).collect()
    }

    const START: Option<Resend> = Some(Resend::StartsRun);
    const IN_RUN: Option<Resend> = Some(Resend::InRun);

    #[test]
    fn a_go_back_n_pass_is_one_run_that_starts_at_the_hole() {
        // 10 lost, 11 to 13 discarded, then resent from 10 on; 14 is new
        let sent = flow(&[(10, 10), (11, 11), (12, 12), (13, 13), (10, 10), (11, 11), (12, 12), (13, 13), (14, 14)]);
        assert_eq!(resends(&sent), [START, IN_RUN, IN_RUN, IN_RUN, None, None, None, None, None]);
    }

    #[test]
    fn a_new_packet_a_psn_not_after_or_a_skipped_psn_starts_a_run() {
        // 1 and 2 resent one by one, each after a new packet: two runs
        let one_by_one = flow(&[(1, 1), (2, 2), (1, 1), (3, 3), (2, 2)]);
        assert_eq!(resends(&one_by_one), [START, START, None, None, None]);
        // a pass from 6, then a second pass from an earlier PSN, 5, which starts its own run
        let again = flow(&[(5, 5), (6, 6), (7, 7), (6, 6), (7, 7), (5, 5), (6, 6), (7, 7)]);
        assert_eq!(resends(&again), [START, START, IN_RUN, IN_RUN, IN_RUN, None, None, None]);
        // selective repeat: 4 and 6 resent, 5 (which arrived) not
        let selective = flow(&[(4, 4), (5, 5), (6, 6), (4, 4), (6, 6)]);
        assert_eq!(resends(&selective), [START, None, START, None, None]);
        // a READ request of three PSNs, then the next at PSN 23: no PSN between, one run
        let reads = flow(&[(20, 20), (23, 23), (20, 20), (23, 23)]);
        assert_eq!(resends(&reads), [START, IN_RUN, None, None]);
        // another flow's resend between them does not break a run
        let mut two = flow(&[(1, 1), (2, 2), (1, 1)]);
        two.push(Sent { flow: (0, 2, false), psn: 9, signature: 99 });
        two.push(Sent { flow: (0, 2, false), psn: 9, signature: 99 });
        two.extend(flow(&[(2, 2)]));
        assert_eq!(resends(&two), [START, IN_RUN, None, START, None, None]);
    }

    #[test]
    fn psns_wrap_at_two_to_the_twenty_four() {
        assert!(psn_after(PSN_SPACE - 1, 0));
        assert!(!psn_after(0, PSN_SPACE - 1));
        assert!(!psn_after(7, 7));
        let psns = [0, 5, PSN_SPACE - 2, PSN_SPACE - 1];
        assert!(!any_between(&psns, PSN_SPACE - 1, 0));
        assert!(any_between(&psns, PSN_SPACE - 2, 0));
        assert!(any_between(&psns, PSN_SPACE - 1, 5) && !any_between(&psns, 0, 5));
        let wrapped = flow(&[(PSN_SPACE - 1, 1), (0, 2), (PSN_SPACE - 1, 1), (0, 2)]);
        assert_eq!(resends(&wrapped), [START, IN_RUN, None, None]);
    }

    #[test]
    fn a_copy_overtaken_on_the_hop_is_reordered_once() {
        let flow = (0, 1);
        // left in order 1, 2, 3, 4; arrived 2, 1, 3, 4: the first packet came late
        let crossed = vec![(flow, 10, 25), (flow, 20, 22), (flow, 30, 40), (flow, 40, 50), ((0, 2), 15, 5)];
        assert_eq!(reordered(crossed), 1);
    }
}
