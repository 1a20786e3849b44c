//! One packet's journey along the path: its copies at the taps it passed, in path order.
//! A copy at a tap continues a journey whose signature is the same and whose last copy, at an
//! earlier tap, is within the window before it; of several, the one whose delay to it is
//! nearest the hop's smallest delay: a resent packet's copy continues the resend, not its lost
//! original (which is a resend timeout older), and in a stream of packets alike in every byte
//! each copy continues the packet that left just one hop's delay before it.
//!
//! Copies are taken in the order they could continue one another (by time, each position's
//! clock slack added up), so a journey whose last copy is older than the window is finished
//! and forgotten: packets alike in every byte (a stream of CNPs between two QPs) cost no more
//! than others.

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

/// A journey that can still be continued: its index, the time and position of its last copy.
#[derive(Debug, Clone, Copy)]
struct Open {
    journey: usize,
    last_at: i64,
    last_position: usize,
}

/// The journeys of the copies at each position (`copies[k]`, in time order), with `reach[k]`
/// the reach from position `k - 1` to `k`.
pub fn follow(copies: &[Vec<Copy>], reach: &[Reach]) -> Journeys {
    let reach_at = |k: usize| reach.get(k).copied().unwrap_or(Reach { window_ns: 0, slack_ns: 0, delay_ns: 0 });
    // a copy at position k may come up to its reach's slack before the copy it continues:
    // ordered by its time plus the slacks up to k, it comes after that copy
    let (mut slack_before, mut delay_before) = (Vec::with_capacity(copies.len()), Vec::with_capacity(copies.len()));
    let (mut slack, mut delay) = (0i64, 0i64);
    for k in 0..copies.len() {
        if k > 0 {
            slack = slack.saturating_add(reach_at(k).slack_ns.max(0));
            delay = delay.saturating_add(reach_at(k).delay_ns.max(0));
        }
        slack_before.push(slack);
        delay_before.push(delay);
    }
    // the smallest delay from position a to position b
    let expected = |a: usize, b: usize| {
        delay_before.get(b).copied().unwrap_or(0).saturating_sub(delay_before.get(a).copied().unwrap_or(0))
    };
    let mut order: Vec<(i64, u32, u32)> = Vec::with_capacity(copies.iter().map(Vec::len).sum());
    for (k, at_k) in copies.iter().enumerate() {
        let slack = slack_before.get(k).copied().unwrap_or(0);
        order.extend(at_k.iter().enumerate().map(|(i, c)| (c.at.saturating_add(slack), k as u32, i as u32)));
    }
    order.sort_unstable();
    let widest = (0..copies.len()).map(|k| reach_at(k).window_ns).max().unwrap_or(0);
    let most_slack = slack_before.last().copied().unwrap_or(0);
    let mut journeys = Journeys { positions: copies.len(), seen: Vec::new() };
    let mut open: FxHashMap<u32, Vec<Open>> = FxHashMap::default();
    for (n, (key, k, i)) in order.into_iter().enumerate() {
        let (k, i) = (k as usize, i as usize);
        let Some(copy) = copies.get(k).and_then(|c| c.get(i)) else { continue };
        let reach = reach_at(k);
        // every copy still to come is at least `key - most_slack`: a journey whose last copy
        // is older than the widest window before that continues nothing more
        let alive = |c: &Open| c.last_at.saturating_add(widest) >= key.saturating_sub(most_slack);
        if n % SWEEP_EVERY == SWEEP_EVERY - 1 {
            open.retain(|_, candidates| candidates.iter().any(alive));
        }
        let candidates = open.entry(copy.signature).or_default();
        candidates.retain(alive);
        let fits = |c: &&mut Open| {
            c.last_position < k
                && c.last_at.saturating_sub(reach.slack_ns) <= copy.at
                && copy.at.saturating_sub(c.last_at) <= reach.window_ns
        };
        let off_expected = |c: &&mut Open| copy.at.saturating_sub(c.last_at).abs_diff(expected(c.last_position, k));
        let nearest =
            candidates.iter_mut().filter(fits).min_by_key(|c| (off_expected(c), std::cmp::Reverse(c.last_at)));
        let journey = match nearest {
            Some(c) => {
                c.last_at = copy.at;
                c.last_position = k;
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
}
