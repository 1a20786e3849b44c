//! One packet's journey along the path: its copies at the taps it passed, in path order.
//! A copy at a tap continues the journey whose signature is the same and whose last copy,
//! at an earlier tap, is the latest before it within the window: a resent packet's copy
//! continues the resend, not its lost original.

use std::collections::HashMap;

/// The copies of one packet, by position on its way (0 the first tap it passes); each the
/// index of its sighting at that tap.
#[derive(Debug, Clone)]
pub struct Journey {
    pub seen: Vec<Option<u32>>,
}

impl Journey {
    /// The first and the last position where the packet was seen.
    pub fn first(&self) -> usize {
        self.seen.iter().position(Option::is_some).unwrap_or(0)
    }

    pub fn last(&self) -> usize {
        self.seen.iter().rposition(Option::is_some).unwrap_or(0)
    }

    /// The sightings at positions `k` and `k + 1`, when the packet was seen at both.
    pub fn at_hop(&self, k: usize) -> Option<(u32, u32)> {
        self.seen.get(k).copied().flatten().zip(self.seen.get(k + 1).copied().flatten())
    }
}

/// One copy at one position: its sighting, its signature and its time on the first tap's clock.
#[derive(Debug, Clone, Copy)]
pub struct Copy {
    pub sighting: u32,
    pub signature: u32,
    pub at: i64,
}

/// How far apart two copies of one journey may be: later by at most `window_ns`, earlier by at
/// most `slack_ns` (the clocks' uncertainty).
#[derive(Debug, Clone, Copy)]
pub struct Reach {
    pub window_ns: i64,
    pub slack_ns: i64,
}

/// The journeys of the copies at each position (`copies[k]`, in time order), with `reach[k]`
/// the reach from position `k - 1` onwards.
pub fn follow(copies: &[Vec<Copy>], reach: &[Reach]) -> Vec<Journey> {
    let positions = copies.len();
    let mut journeys: Vec<Journey> = Vec::new();
    // per signature: the journeys and the time of their last copy
    let mut open: HashMap<u32, Vec<(usize, i64)>> = HashMap::new();
    for (k, at_k) in copies.iter().enumerate() {
        let reach = reach.get(k).copied().unwrap_or(Reach { window_ns: 0, slack_ns: 0 });
        for copy in at_k {
            let candidates = open.entry(copy.signature).or_default();
            let fits = |&(j, last): &(usize, i64)| {
                let free = journeys.get(j).is_some_and(|journey: &Journey| journey.last() < k);
                free && last - reach.slack_ns <= copy.at && copy.at - last <= reach.window_ns
            };
            let best = candidates.iter_mut().filter(|c| fits(c)).max_by_key(|c| c.1);
            let j = match best {
                Some(candidate) => {
                    candidate.1 = copy.at;
                    candidate.0
                }
                None => {
                    journeys.push(Journey { seen: vec![None; positions] });
                    candidates.push((journeys.len() - 1, copy.at));
                    journeys.len() - 1
                }
            };
            if let Some(slot) = journeys.get_mut(j).and_then(|journey| journey.seen.get_mut(k)) {
                *slot = Some(copy.sighting);
            }
        }
    }
    journeys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(sighting: u32, signature: u32, at: i64) -> Copy {
        Copy { sighting, signature, at }
    }

    const REACH: Reach = Reach { window_ns: 10_000, slack_ns: 100 };

    #[test]
    fn a_resend_continues_the_resend_and_its_lost_original_ends_where_it_was_lost() {
        // the original (sighting 0) and its resend 150 µs later (sighting 1) pass the first
        // tap; only the resend reaches the second, 2 µs later
        let copies = vec![vec![copy(0, 7, 0), copy(1, 7, 150_000)], vec![copy(0, 7, 152_000)]];
        let journeys = follow(&copies, &[REACH, REACH]);
        assert_eq!(journeys.len(), 2);
        assert_eq!(journeys[0].seen, [Some(0), None], "the original ends at the first tap");
        assert_eq!(journeys[1].seen, [Some(1), Some(0)], "the resend goes on");
    }

    #[test]
    fn a_copy_a_tap_missed_is_found_at_the_tap_after() {
        let copies = vec![vec![copy(0, 1, 0)], vec![], vec![copy(0, 1, 5_000)]];
        let journeys = follow(&copies, &[REACH; 3]);
        assert_eq!(journeys.len(), 1);
        assert_eq!(journeys[0].seen, [Some(0), None, Some(0)]);
        assert_eq!((journeys[0].first(), journeys[0].last()), (0, 2));
        assert_eq!(journeys[0].at_hop(0), None);
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
        assert_eq!(journeys[0].seen, [Some(0), Some(0)], "the first copy after it continues it");
        assert_eq!(journeys[1].seen, [None, Some(1)], "the second starts its own");
    }
}
