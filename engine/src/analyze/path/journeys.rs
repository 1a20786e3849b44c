//! One packet's journey along the path: its copies at the taps it passed, in path order.
//! A copy at a tap continues a journey whose signature is the same and whose last copy, at an
//! earlier tap, is within the window before it; of several, the one whose delay to it is
//! nearest the hop's smallest delay: a resent packet's copy continues the resend, not its lost
//! original (which is a resend timeout older), and in a stream of packets alike in every byte
//! each copy continues the packet that left just one hop's delay before it.
//!
//! Copies are taken in the order they could continue one another (by time, each position's
//! clock slack added up), so a journey whose last copy is older than the window is finished
//! and forgotten. The open journeys of a signature are scanned while they are few; beyond
//! [`FEW`] (packets alike in every byte: a stream of CNPs between two QPs, a retransmit storm, a
//! looping mirror) they are kept per position in time order, and the one a copy continues is
//! found in a few ordered look-ups, not by a scan: matching costs O(log n) a copy however many
//! packets are alike.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

/// Where a journey has no copy.
const NONE: u32 = u32::MAX;

/// One copy at one position: its sighting, its signature and its time on the first tap's clock.
#[derive(Debug, Clone, Copy)]
pub struct Copy {
    pub sighting: u32,
    pub signature: u32,
    pub at: i64,
}

/// How far apart two copies of one journey may be: later by at most `window_ns`, earlier by at
/// most `slack_ns` (the clocks' uncertainty); `delay_ns` is the hop's smallest delay, what a
/// copy is expected to be later by.
#[derive(Debug, Clone, Copy)]
pub struct Reach {
    pub window_ns: i64,
    pub slack_ns: i64,
    pub delay_ns: i64,
}

/// Every journey's copies, by position on its way (0 the first tap it passes), each the index
/// of its sighting at that tap, in one array.
#[derive(Debug, Default)]
pub struct Journeys {
    positions: usize,
    seen: Vec<u32>,
}

/// One journey.
#[derive(Debug, Clone, Copy)]
pub struct Journey<'a> {
    seen: &'a [u32],
}

impl Journeys {
    pub fn len(&self) -> usize {
        self.seen.len() / self.positions.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Journey<'_>> {
        self.seen.chunks(self.positions.max(1)).map(|seen| Journey { seen })
    }

    pub fn get(&self, j: usize) -> Option<Journey<'_>> {
        let from = j.checked_mul(self.positions)?;
        self.seen.get(from..from + self.positions).map(|seen| Journey { seen })
    }

    fn start(&mut self) -> usize {
        self.seen.extend(std::iter::repeat_n(NONE, self.positions));
        self.len() - 1
    }

    fn set(&mut self, j: usize, k: usize, sighting: u32) {
        if let Some(slot) = self.seen.get_mut(j * self.positions + k) {
            *slot = sighting;
        }
    }
}

impl Journey<'_> {
    /// The sighting at position `k`, if the packet was seen there.
    pub fn at(&self, k: usize) -> Option<u32> {
        self.seen.get(k).copied().filter(|&s| s != NONE)
    }

    /// The first and the last position where the packet was seen.
    pub fn first(&self) -> usize {
        self.seen.iter().position(|&s| s != NONE).unwrap_or(0)
    }

    pub fn last(&self) -> usize {
        self.seen.iter().rposition(|&s| s != NONE).unwrap_or(0)
    }

    /// The sightings at positions `k` and `k + 1`, when the packet was seen at both.
    pub fn at_hop(&self, k: usize) -> Option<(u32, u32)> {
        self.at(k).zip(self.at(k + 1))
    }

    /// Each position and the sighting there, if any.
    pub fn copies(&self) -> impl Iterator<Item = (usize, Option<u32>)> + '_ {
        (0..self.seen.len()).map(|k| (k, self.at(k)))
    }
}

/// How often (in copies) the signatures whose journeys are all finished are forgotten.
const SWEEP_EVERY: usize = 1 << 16;

/// The open journeys of one signature that are scanned one by one; beyond this many (a stream
/// of packets alike in every byte), they are kept in time order.
const FEW: usize = 16;

/// A journey that can still be continued: its index, the time and position of its last copy.
#[derive(Debug, Clone, Copy)]
struct Open {
    journey: usize,
    last_at: i64,
    last_position: usize,
}

/// The copy being placed: its time and position, its reach from the positions before it, and
/// the smallest delays added up from the first position (what a copy is expected to be later by).
struct Wanted<'a> {
    at: i64,
    position: usize,
    reach: Reach,
    delay_before: &'a [i64],
}

impl Wanted<'_> {
    /// The smallest delay from position `from` to the copy's.
    fn expected(&self, from: usize) -> i64 {
        let before = |k: usize| self.delay_before.get(k).copied().unwrap_or(0);
        before(self.position).saturating_sub(before(from))
    }

    /// Can the copy continue the journey `open`?
    fn fits(&self, open: &Open) -> bool {
        open.last_position < self.position
            && open.last_at.saturating_sub(self.reach.slack_ns) <= self.at
            && self.at.saturating_sub(open.last_at) <= self.reach.window_ns
    }

    /// Of the journeys the copy fits, it continues the one of the smallest rank: whose delay to
    /// it is nearest the expected, of two as near the later, of two as late the older journey.
    fn rank(&self, open: &Open) -> (u64, std::cmp::Reverse<i64>, usize) {
        let off_expected = self.at.saturating_sub(open.last_at).abs_diff(self.expected(open.last_position));
        (off_expected, std::cmp::Reverse(open.last_at), open.journey)
    }

    /// The open journeys at `position`, kept in `by_time`, among which is the best the copy
    /// continues: the latest that fits at or before the time one expected delay before the copy,
    /// the earliest that fits after it, and the latest that fits (each the oldest journey of its
    /// time). Before that time a journey is the better the later; after it, the earlier.
    fn finalists(&self, by_time: &BTreeSet<(i64, usize)>, position: usize) -> [Option<Open>; 3] {
        let at = i128::from(self.at);
        let target = at - i128::from(self.expected(position));
        let (earliest, latest) = (at - i128::from(self.reach.window_ns), at + i128::from(self.reach.slack_ns));
        let latest_until =
            |t: i128| by_time.range(..=(saturate(t), usize::MAX)).next_back().map(|&(last_at, _)| last_at);
        let earliest_from = |t: i128| by_time.range((saturate(t), 0)..).next().map(|&(last_at, _)| last_at);
        let oldest_journey = |last_at: i64| {
            let (last_at, journey) = *by_time.range((last_at, 0)..).next()?;
            Some(Open { journey, last_at, last_position: position })
        };
        [latest_until(target.min(latest)), earliest_from((target + 1).max(earliest)), latest_until(latest)]
            .map(|last_at| last_at.and_then(oldest_journey))
    }
}

/// `t` within what an i64 holds.
fn saturate(t: i128) -> i64 {
    i64::try_from(t).unwrap_or(if t < 0 { i64::MIN } else { i64::MAX })
}

/// The open journeys of one signature: a few, scanned; or many, kept per position of their last
/// copy in the order of its time (then of their index), where the best is found in a few steps.
/// Either way the copy continues the same journey.
#[derive(Debug)]
enum Candidates {
    Few(Vec<Open>),
    Many(Vec<BTreeSet<(i64, usize)>>),
}

impl Default for Candidates {
    fn default() -> Self {
        Candidates::Few(Vec::new())
    }
}

impl Candidates {
    /// Forgets the journeys whose last copy is too old (`alive` false of its time) to be
    /// continued; whether any is left.
    fn forget_finished(&mut self, alive: impl Fn(i64) -> bool) -> bool {
        match self {
            Candidates::Few(open) => {
                open.retain(|c| alive(c.last_at));
                !open.is_empty()
            }
            Candidates::Many(by_position) => {
                for by_time in by_position.iter_mut() {
                    while by_time.first().is_some_and(|&(last_at, _)| !alive(last_at)) {
                        by_time.pop_first();
                    }
                }
                by_position.iter().any(|by_time| !by_time.is_empty())
            }
        }
    }

    /// Takes the journey the copy continues, if any, out of the open ones.
    fn take_best(&mut self, wanted: &Wanted<'_>) -> Option<usize> {
        match self {
            Candidates::Few(open) => {
                let (index, _) =
                    open.iter().enumerate().filter(|(_, c)| wanted.fits(c)).min_by_key(|(_, c)| wanted.rank(c))?;
                Some(open.swap_remove(index).journey)
            }
            Candidates::Many(by_position) => {
                let best = by_position
                    .iter()
                    .enumerate()
                    .take(wanted.position)
                    .flat_map(|(position, by_time)| wanted.finalists(by_time, position))
                    .flatten()
                    .filter(|c| wanted.fits(c))
                    .min_by_key(|c| wanted.rank(c))?;
                by_position.get_mut(best.last_position)?.remove(&(best.last_at, best.journey));
                Some(best.journey)
            }
        }
    }

    /// Adds `open` to the open journeys, of `positions` positions.
    fn insert(&mut self, open: Open, positions: usize) {
        match self {
            Candidates::Few(few) if few.len() < FEW => few.push(open),
            Candidates::Few(few) => {
                let mut by_position = vec![BTreeSet::new(); positions];
                for c in few.drain(..).chain([open]) {
                    if let Some(by_time) = by_position.get_mut(c.last_position) {
                        by_time.insert((c.last_at, c.journey));
                    }
                }
                *self = Candidates::Many(by_position);
            }
            Candidates::Many(by_position) => {
                if let Some(by_time) = by_position.get_mut(open.last_position) {
                    by_time.insert((open.last_at, open.journey));
                }
            }
        }
    }
}

/// Per position, the clock slacks and the smallest delays of the positions up to it, added up.
fn added_up(positions: usize, reach_at: impl Fn(usize) -> Reach) -> (Vec<i64>, Vec<i64>) {
    let (mut slack_before, mut delay_before) = (Vec::with_capacity(positions), Vec::with_capacity(positions));
    let (mut slack, mut delay) = (0i64, 0i64);
    for k in 0..positions {
        if k > 0 {
            slack = slack.saturating_add(reach_at(k).slack_ns.max(0));
            delay = delay.saturating_add(reach_at(k).delay_ns.max(0));
        }
        slack_before.push(slack);
        delay_before.push(delay);
    }
    (slack_before, delay_before)
}

/// Every copy as (its time plus the slacks up to its position, its position, its index there),
/// in the order they could continue one another: a copy at position k may come up to its
/// reach's slack before the copy it continues, so ordered so, it comes after that copy.
fn in_order(copies: &[Vec<Copy>], slack_before: &[i64]) -> Vec<(i64, u32, u32)> {
    let mut order: Vec<(i64, u32, u32)> = Vec::with_capacity(copies.iter().map(Vec::len).sum());
    for (k, at_k) in copies.iter().enumerate() {
        let slack = slack_before.get(k).copied().unwrap_or(0);
        order.extend(at_k.iter().enumerate().map(|(i, c)| (c.at.saturating_add(slack), k as u32, i as u32)));
    }
    order.sort_unstable();
    order
}

/// The journeys of the copies at each position (`copies[k]`, in time order), with `reach[k]`
/// the reach from position `k - 1` to `k`.
pub fn follow(copies: &[Vec<Copy>], reach: &[Reach]) -> Journeys {
    let reach_at = |k: usize| reach.get(k).copied().unwrap_or(Reach { window_ns: 0, slack_ns: 0, delay_ns: 0 });
    let (slack_before, delay_before) = added_up(copies.len(), reach_at);
    let widest = (0..copies.len()).map(|k| reach_at(k).window_ns).max().unwrap_or(0);
    let most_slack = slack_before.last().copied().unwrap_or(0);
    let mut journeys = Journeys { positions: copies.len(), seen: Vec::new() };
    let mut open: FxHashMap<u32, Candidates> = FxHashMap::default();
    for (n, (key, k, i)) in in_order(copies, &slack_before).into_iter().enumerate() {
        let (k, i) = (k as usize, i as usize);
        let Some(copy) = copies.get(k).and_then(|c| c.get(i)) else { continue };
        // every copy still to come is at least `key - most_slack`: a journey whose last copy
        // is older than the widest window before that continues nothing more
        let alive = |last_at: i64| last_at.saturating_add(widest) >= key.saturating_sub(most_slack);
        if n % SWEEP_EVERY == SWEEP_EVERY - 1 {
            open.retain(|_, candidates| candidates.forget_finished(alive));
        }
        let candidates = open.entry(copy.signature).or_default();
        candidates.forget_finished(alive);
        let wanted = Wanted { at: copy.at, position: k, reach: reach_at(k), delay_before: &delay_before };
        let journey = candidates.take_best(&wanted).unwrap_or_else(|| journeys.start());
        candidates.insert(Open { journey, last_at: copy.at, last_position: k }, copies.len());
        journeys.set(journey, k, copy.sighting);
    }
    journeys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(sighting: u32, signature: u32, at: i64) -> Copy {
        Copy { sighting, signature, at }
    }

    const REACH: Reach = Reach { window_ns: 10_000, slack_ns: 100, delay_ns: 300 };

    fn seen(journeys: &Journeys, j: usize) -> Vec<Option<u32>> {
        journeys.get(j).expect("a journey").copies().map(|(_, s)| s).collect()
    }

    #[test]
    fn a_resend_continues_the_resend_and_its_lost_original_ends_where_it_was_lost() {
        // the original (sighting 0) and its resend 150 µs later (sighting 1) pass the first
        // tap; only the resend reaches the second, 2 µs later
        let copies = vec![vec![copy(0, 7, 0), copy(1, 7, 150_000)], vec![copy(0, 7, 152_000)]];
        let journeys = follow(&copies, &[REACH, REACH]);
        assert_eq!(journeys.len(), 2);
        assert_eq!(seen(&journeys, 0), [Some(0), None], "the original ends at the first tap");
        assert_eq!(seen(&journeys, 1), [Some(1), Some(0)], "the resend goes on");
    }

    #[test]
    fn a_copy_a_tap_missed_is_found_at_the_tap_after() {
        let copies = vec![vec![copy(0, 1, 0)], vec![], vec![copy(0, 1, 5_000)]];
        let journeys = follow(&copies, &[REACH; 3]);
        assert_eq!(journeys.len(), 1);
        assert_eq!(seen(&journeys, 0), [Some(0), None, Some(0)]);
        let journey = journeys.get(0).expect("a journey");
        assert_eq!((journey.first(), journey.last()), (0, 2));
        assert_eq!(journey.at_hop(0), None);
    }

    #[test]
    fn a_copy_outside_the_window_or_too_early_starts_a_journey_of_its_own() {
        let late = vec![vec![copy(0, 1, 0)], vec![copy(0, 1, 10_001)]];
        assert_eq!(follow(&late, &[REACH; 2]).len(), 2);
        let early = vec![vec![copy(0, 1, 1_000)], vec![copy(0, 1, 899)]];
        assert_eq!(follow(&early, &[REACH; 2]).len(), 2);
        let within_slack = vec![vec![copy(0, 1, 1_000)], vec![copy(0, 1, 900)]];
        assert_eq!(follow(&within_slack, &[REACH; 2]).len(), 1);
    }

    #[test]
    fn two_copies_at_one_tap_never_join_one_journey() {
        let copies = vec![vec![copy(0, 1, 0)], vec![copy(0, 1, 1_000), copy(1, 1, 2_000)]];
        let journeys = follow(&copies, &[REACH; 2]);
        assert_eq!(journeys.len(), 2);
        assert_eq!(seen(&journeys, 0), [Some(0), Some(0)], "the first copy after it continues it");
        assert_eq!(seen(&journeys, 1), [None, Some(1)], "the second starts its own");
    }

    #[test]
    fn packets_alike_in_every_byte_each_find_their_own_copy() {
        // 10,000 identical CNPs 1 µs apart, each 5 µs (five packets' spacing) and a little
        // jitter later at the second tap, whose hop's smallest delay is 5 µs: each journey is
        // continued by its own copy, and the open journeys stay few
        let reach = Reach { delay_ns: 5_000, ..REACH };
        let first: Vec<Copy> = (0..10_000).map(|i| copy(i, 9, i64::from(i) * 1_000)).collect();
        let second: Vec<Copy> =
            (0..10_000).map(|i| copy(i, 9, i64::from(i) * 1_000 + 5_000 + i64::from(i % 7) * 40)).collect();
        let journeys = follow(&[first, second], &[reach; 2]);
        assert_eq!(journeys.len(), 10_000);
        assert!(journeys.iter().enumerate().all(|(j, journey)| journey.at_hop(0) == Some((j as u32, j as u32))));
    }

    #[test]
    fn a_storm_of_packets_alike_is_followed_copy_by_copy_in_time_order() {
        // one packet sent 60,000 times 100 ns apart (a sender stuck resending it), seen at three
        // taps each 2 µs (20 packets' spacing) and a little jitter later: all of them within the
        // window, open journeys of one signature that a scan for each copy would take minutes over
        let count = 60_000;
        let reach = Reach { window_ns: 10_000_000, slack_ns: 1_000, delay_ns: 2_000 };
        let at_tap = |tap: i64| -> Vec<Copy> {
            (0..count).map(|i| copy(i, 9, i64::from(i) * 100 + tap * 2_000 + i64::from(i % 3) * 10)).collect()
        };
        let journeys = follow(&[at_tap(0), at_tap(1), at_tap(2)], &[reach; 3]);
        assert_eq!(journeys.len(), count as usize);
        assert!(journeys.iter().enumerate().all(|(j, journey)| journey.copies().all(|(_, s)| s == Some(j as u32))));
    }

    /// The journeys as the matching first found them: every open journey of the copy's
    /// signature scanned, in the order they were opened, the first of the nearest taken.
    fn scanned(copies: &[Vec<Copy>], reach: &[Reach]) -> Journeys {
        let reach_at = |k: usize| reach.get(k).copied().expect("a reach");
        let (slack_before, delay_before) = added_up(copies.len(), reach_at);
        let mut journeys = Journeys { positions: copies.len(), seen: Vec::new() };
        let mut open: FxHashMap<u32, Vec<Open>> = FxHashMap::default();
        for (_, k, i) in in_order(copies, &slack_before) {
            let (k, copy) = (k as usize, copies[k as usize][i as usize]);
            let wanted = Wanted { at: copy.at, position: k, reach: reach_at(k), delay_before: &delay_before };
            let candidates = open.entry(copy.signature).or_default();
            let nearest = candidates.iter_mut().filter(|c| wanted.fits(c)).min_by_key(|c| {
                let (off_expected, later, _) = wanted.rank(c);
                (off_expected, later)
            });
            let journey = match nearest {
                Some(c) => {
                    (c.last_at, c.last_position) = (copy.at, k);
                    c.journey
                }
                None => {
                    let journey = journeys.start();
                    candidates.push(Open { journey, last_at: copy.at, last_position: k });
                    journey
                }
            };
            journeys.set(journey, k, copy.sighting);
        }
        journeys
    }

    /// Up to four positions of copies of three signatures (many of them alike, at times that
    /// often tie), each position's in time order, and a reach for each.
    fn storm() -> impl proptest::strategy::Strategy<Value = (Vec<Vec<Copy>>, Vec<Reach>)> {
        use proptest::prelude::*;
        let position = prop::collection::vec((0u32..3, 0i64..40), 0..120).prop_map(|steps| {
            let mut at = 0;
            let at_k = steps.into_iter().enumerate().map(|(i, (signature, step))| {
                at += step / 4;
                copy(i as u32, signature, at)
            });
            at_k.collect::<Vec<Copy>>()
        });
        let reach = (0i64..120, 0i64..30, 0i64..40).prop_map(|(window_ns, slack_ns, delay_ns)| Reach {
            window_ns,
            slack_ns,
            delay_ns,
        });
        (2usize..5).prop_flat_map(move |n| {
            (prop::collection::vec(position.clone(), n), prop::collection::vec(reach.clone(), n))
        })
    }

    proptest::proptest! {
        #[test]
        fn journeys_kept_in_time_order_are_those_a_scan_of_every_open_journey_finds((copies, reach) in storm()) {
            let (kept, scanned) = (follow(&copies, &reach), scanned(&copies, &reach));
            proptest::prop_assert_eq!(kept.seen, scanned.seen);
        }
    }
}
