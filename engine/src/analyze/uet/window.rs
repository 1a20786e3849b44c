//! A UET PDC's PSNs told apart one by one in a window that slides with the PDC: which were
//! seen (CE-marked or not), which a SACK acknowledged. PSNs leave the window behind the
//! cumulative ACK, or when the PDC runs further ahead than the window holds; then the
//! never-seen ones among them are settled: counted as the capture's miss when acknowledged,
//! else kept as ranges (which a later cumulative ACK can still acknowledge, and a late first
//! appearance can still fill). Memory is bounded per PDC ([`MAX_WORDS`]) and across an
//! analysis's PDCs ([`WordBudget`]).
//!
//! PSNs are unwrapped to positions (the first PSN seen at 0) by signed difference from the
//! highest, so a PDC may run through any number of 32-bit wraps.

use std::collections::{BTreeMap, VecDeque};

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::renumber::Renumber;

/// Words of bits (each of [`QUEUES`]) a PDC's window holds at most: 2^16 PSNs.
pub const MAX_WORDS: usize = 1 << 10;
/// The window's queues of bits: seen CE-marked, seen not CE-marked, SACKed.
const QUEUES: u64 = 3;
/// Words every PDC's window may hold, whatever the budget: 2048 PSNs.
const MIN_WORDS: usize = 32;
/// How far before the first PSN a later first appearance is still told apart (a multiple of 64).
const SLACK: i64 = 1 << 10;
/// Words of window growth and settled ranges an analysis grants its PDCs: 16 MiB.
pub const BUDGET_WORDS: u64 = 1 << 21;
/// A settled range's cost, in words.
const RANGE_WORDS: u64 = 2;

/// Words left to grant across an analysis's PDCs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct WordBudget {
    left: u64,
    /// Words granted in all (given back or not).
    granted: u64,
    /// Was a grant ever refused?
    refused: bool,
}

impl Default for WordBudget {
    fn default() -> WordBudget {
        WordBudget { left: BUDGET_WORDS, granted: 0, refused: false }
    }
}

/// Added, a shard's budget, which granted nothing (one shard has every UET packet); refused
/// otherwise. Grafted, it goes on as `end` went on from `start` (the same PDCs' grants, made
/// from a fuller budget); refused where this budget might have refused a grant `end`'s made.
impl Combine for WordBudget {
    fn add(&mut self, other: &WordBudget) -> Result<(), Refused> {
        match other.granted == 0 && !other.refused {
            true => Ok(()),
            false => Err("UET packets in more than one shard".into()),
        }
    }

    fn graft(&mut self, start: &WordBudget, end: WordBudget, _: &Seam) -> Result<(), Refused> {
        let granted_later = end.granted.saturating_sub(start.granted);
        if end.refused || self.left < granted_later {
            return Err("the UET PSN windows' memory bound".into());
        }
        self.left = self.left.saturating_add(end.left).saturating_sub(start.left);
        self.granted = self.granted.saturating_add(granted_later);
        Ok(())
    }
}

impl WordBudget {
    /// Takes `n` words if that many are left.
    fn take(&mut self, n: u64) -> bool {
        let granted = self.left >= n;
        if granted {
            self.left -= n;
            self.granted += n;
        }
        self.refused |= !granted;
        granted
    }

    fn give(&mut self, n: u64) {
        self.left += n;
    }
}

/// What a PSN's appearance was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appearance {
    First,
    /// Seen before, or settled behind the cumulative ACK.
    Again,
    /// Before the window's floor: not told apart.
    Untracked,
}

/// How one PSN passed the tap: seen, every copy CE-marked; seen, no copy CE-marked; not known
/// (never seen, or copies that differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    Marked,
    Unmarked,
    Unknown,
}

/// The PSNs of one PDC's sequence.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct PsnWindow {
    /// The PSN at position 0 (the first seen).
    anchor: u32,
    /// The highest position seen.
    highest: i64,
    /// The highest cumulatively acknowledged position.
    cumulative: Option<i64>,
    /// The position of bit 0 of the first word (a multiple of 64).
    start: i64,
    /// Seen, a copy CE-marked; seen, a copy not CE-marked (a PSN is seen when either is set).
    marked: VecDeque<u64>,
    clean: VecDeque<u64>,
    sacked: VecDeque<u64>,
    /// Words this window may hold: [`MIN_WORDS`] plus what the budget granted.
    granted: usize,
    /// Settled, never seen, acknowledged.
    missed: u64,
    /// Settled, never seen, not acknowledged yet: first position → last.
    unacked: BTreeMap<i64, i64>,
    unacked_psns: u64,
    /// Settled, never seen, not acknowledged, beyond what the budget let ranges keep.
    missing_uncounted_ranges: u64,
}

impl PsnWindow {
    /// A window whose first PSN is `psn`, the cumulative ACK PSN so far `cumulative`.
    pub fn new(psn: u32, cumulative: Option<u32>) -> PsnWindow {
        let mut window = PsnWindow { anchor: psn, start: -SLACK, granted: MIN_WORDS, ..PsnWindow::default() };
        window.cumulative = cumulative.map(|c| window.position(c));
        window
    }

    /// `psn`'s position, by signed difference from the highest.
    pub fn position(&self, psn: u32) -> i64 {
        let highest_psn = self.anchor.wrapping_add(self.highest as u32);
        self.highest.saturating_add(i64::from(psn.wrapping_sub(highest_psn) as i32))
    }

    /// The highest PSN seen.
    pub fn highest_psn(&self) -> u32 {
        self.anchor.wrapping_add(self.highest as u32)
    }

    /// Marks `psn` seen, CE-marked (`ce`) or not: its first appearance, or again.
    pub fn see(&mut self, psn: u32, ce: bool, budget: &mut WordBudget) -> Appearance {
        let pos = self.position(psn);
        if pos < -SLACK {
            return Appearance::Untracked;
        }
        if pos < self.start {
            return if self.fill_unacked(pos, budget) { Appearance::First } else { Appearance::Again };
        }
        if pos > self.highest {
            self.highest = pos;
        }
        self.hold(pos, budget);
        let seen_before = bit(&self.marked, self.start, pos) || bit(&self.clean, self.start, pos);
        set(if ce { &mut self.marked } else { &mut self.clean }, self.start, pos);
        if seen_before { Appearance::Again } else { Appearance::First }
    }

    /// The seen bits of word `i`.
    fn seen(&self, i: usize) -> u64 {
        self.marked.get(i).copied().unwrap_or(0) | self.clean.get(i).copied().unwrap_or(0)
    }

    /// Records the cumulative ACK of `psn`: how many PSNs it newly acknowledges that no SACK
    /// had.
    pub fn acknowledge_to(&mut self, psn: u32, budget: &mut WordBudget) -> u64 {
        let pos = self.position(psn);
        let from = match self.cumulative {
            Some(before) if pos > before => before + 1,
            Some(_) => return 0,
            None => pos.min(0),
        };
        self.cumulative = Some(pos);
        let sacked = ones(&self.sacked, self.start, from.max(self.start), pos, |_, w| w);
        self.acknowledge_unacked(pos, budget);
        (pos - from + 1) as u64 - sacked
    }

    /// How `psn` passed the tap, as far as the window still holds it.
    pub fn arrival(&self, psn: u32) -> Arrival {
        let pos = self.position(psn);
        if pos < self.start {
            return Arrival::Unknown;
        }
        match (bit(&self.marked, self.start, pos), bit(&self.clean, self.start, pos)) {
            (true, false) => Arrival::Marked,
            (false, true) => Arrival::Unmarked,
            _ => Arrival::Unknown,
        }
    }

    /// Records a SACK of `psn`: whether the SACK newly acknowledges it.
    pub fn sack(&mut self, psn: u32) -> bool {
        let pos = self.position(psn);
        let beyond = self.cumulative.is_none_or(|c| pos > c);
        let held = pos >= self.start && pos < self.start + 64 * self.granted as i64;
        if !beyond || !held {
            return false;
        }
        self.resize_to(((pos - self.start) / 64) as usize);
        !set(&mut self.sacked, self.start, pos)
    }

    /// Makes every queue hold word `word`.
    fn resize_to(&mut self, word: usize) {
        for queue in [&mut self.marked, &mut self.clean, &mut self.sacked] {
            if queue.len() <= word {
                queue.resize(word + 1, 0);
            }
        }
    }

    /// Positions from the first to the highest never seen: (acknowledged, cumulatively or by a
    /// SACK bit, so only the capture missed them; never acknowledged).
    pub fn never_seen(&self) -> (u64, u64) {
        let from = self.start.max(0);
        let valid = |i: usize| mask(self.start + 64 * i as i64, from, self.highest);
        let acked_to = self.cumulative.unwrap_or(i64::MIN);
        let unseen = ones(&self.sacked, self.start, from, self.highest, |i, _| !self.seen(i) & valid(i));
        let missed = ones(&self.sacked, self.start, from, self.highest, |i, w| {
            !self.seen(i) & valid(i) & (w | mask(self.start + 64 * i as i64, i64::MIN, acked_to))
        });
        let in_window = (missed, unseen - missed);
        (self.missed + in_window.0, self.unacked_psns + self.missing_uncounted_ranges + in_window.1)
    }

    /// Makes room for `pos`: grows the window while the budget grants it, else settles its
    /// first PSNs.
    fn hold(&mut self, pos: i64, budget: &mut WordBudget) {
        let needed = ((pos - self.start) / 64 + 1) as usize;
        if needed > self.granted && self.granted < MAX_WORDS {
            let more = needed.min(MAX_WORDS) - self.granted;
            if budget.take(QUEUES * more as u64) {
                self.granted += more;
            }
        }
        if needed > self.granted {
            self.settle_to(self.start + 64 * (needed - self.granted) as i64 - 1, budget);
        }
        self.resize_to(((pos - self.start) / 64) as usize);
    }

    /// Settles the words that lie wholly at or before `to`.
    fn settle_to(&mut self, to: i64, budget: &mut WordBudget) {
        while self.start + 63 <= to && !self.sacked.is_empty() {
            let seen = self.marked.pop_front().unwrap_or(0) | self.clean.pop_front().unwrap_or(0);
            let sacked = self.sacked.pop_front().unwrap_or(0);
            let acked_to = self.cumulative.unwrap_or(i64::MIN);
            let unseen = !seen & mask(self.start, 0, self.highest);
            let acked = sacked | mask(self.start, i64::MIN, acked_to);
            self.missed += u64::from((unseen & acked).count_ones());
            let mut unacked = unseen & !acked;
            while unacked != 0 {
                let first = unacked.trailing_zeros();
                let run = (!(unacked >> first)).trailing_zeros();
                let a = self.start + i64::from(first);
                self.settle_run(a, a + i64::from(run) - 1, budget);
                unacked &= if first + run >= 64 { 0 } else { u64::MAX << (first + run) };
            }
            self.start += 64;
        }
        if self.sacked.is_empty() && self.start + 63 <= to {
            // the window held nothing there: a run of never-seen positions
            let new_start = (to + 1).div_euclid(64) * 64;
            self.settle_run(self.start, new_start - 1, budget);
            self.start = new_start;
        }
    }

    /// Settles positions `a..=b`, none seen nor SACKed: those within the first to the highest,
    /// missed where the cumulative ACK covers them, else kept as a range to acknowledge later.
    fn settle_run(&mut self, a: i64, b: i64, budget: &mut WordBudget) {
        let (a, b) = (a.max(0), b.min(self.highest));
        if a > b {
            return;
        }
        let acked_to = self.cumulative.unwrap_or(i64::MIN).min(b);
        if acked_to >= a {
            self.missed += (acked_to - a + 1) as u64;
        }
        let a = a.max(acked_to + 1);
        if a > b {
            return;
        }
        let joins = self.unacked.range(..a).next_back().filter(|(_, last)| **last + 1 == a).map(|(first, _)| *first);
        match joins {
            Some(first) => {
                self.unacked.insert(first, b);
            }
            None if budget.take(RANGE_WORDS) => {
                self.unacked.insert(a, b);
            }
            None => {
                self.missing_uncounted_ranges += (b - a + 1) as u64;
                return;
            }
        }
        self.unacked_psns += (b - a + 1) as u64;
    }

    /// The settled never-seen positions a cumulative ACK at `to` acknowledges: missed now.
    fn acknowledge_unacked(&mut self, to: i64, budget: &mut WordBudget) {
        while let Some((&first, &last)) = self.unacked.range(..=to).next() {
            self.unacked.remove(&first);
            let acked = last.min(to) - first + 1;
            self.missed += acked as u64;
            self.unacked_psns = self.unacked_psns.saturating_sub(acked as u64);
            if last > to {
                self.unacked.insert(to + 1, last);
            } else {
                budget.give(RANGE_WORDS);
            }
        }
    }

    /// A first appearance of a settled, never-seen position? Then it is seen now.
    fn fill_unacked(&mut self, pos: i64, budget: &mut WordBudget) -> bool {
        let Some((&first, &last)) = self.unacked.range(..=pos).next_back() else { return false };
        if last < pos {
            return false;
        }
        self.unacked.remove(&first);
        self.unacked_psns = self.unacked_psns.saturating_sub(1);
        if first < pos {
            self.unacked.insert(first, pos - 1);
        }
        let split = first < pos;
        match (pos < last, split) {
            (true, true) if !budget.take(RANGE_WORDS) => {
                // no words for a second range: the rest is missing, not to be acknowledged
                let rest = (last - pos) as u64;
                self.unacked_psns = self.unacked_psns.saturating_sub(rest);
                self.missing_uncounted_ranges += rest;
            }
            (true, _) => {
                self.unacked.insert(pos + 1, last);
            }
            (false, false) => budget.give(RANGE_WORDS),
            (false, true) => {}
        }
        true
    }
}

/// The bits of the word starting at `word_start` whose positions lie in `from..=to`.
fn mask(word_start: i64, from: i64, to: i64) -> u64 {
    let lo = from.saturating_sub(word_start).clamp(0, 64);
    let hi = to.saturating_sub(word_start).saturating_add(1).clamp(0, 64);
    if lo >= hi {
        return 0;
    }
    let upper = if hi == 64 { u64::MAX } else { (1u64 << hi) - 1 };
    upper & (u64::MAX << lo)
}

/// Is `pos`'s bit set (in the window starting at `start`)?
fn bit(words: &VecDeque<u64>, start: i64, pos: i64) -> bool {
    let (word, bit) = (((pos - start) / 64) as usize, (pos - start) % 64);
    words.get(word).is_some_and(|w| w >> bit & 1 == 1)
}

/// Sets `pos`'s bit (held in the window starting at `start`); whether it was set.
fn set(words: &mut VecDeque<u64>, start: i64, pos: i64) -> bool {
    let (word, bit) = (((pos - start) / 64) as usize, (pos - start) % 64);
    let Some(w) = words.get_mut(word) else { return false };
    let was = *w >> bit & 1 == 1;
    *w |= 1 << bit;
    was
}

/// Bits set in positions `from..=to` of the window starting at `start`, each word first passed
/// through `keep` (with its number): a word at a time.
fn ones(words: &VecDeque<u64>, start: i64, from: i64, to: i64, keep: impl Fn(usize, u64) -> u64) -> u64 {
    if from > to || words.is_empty() {
        return 0;
    }
    let word = |pos: i64| ((pos - start).div_euclid(64)).clamp(0, words.len() as i64 - 1) as usize;
    (word(from)..=word(to))
        .map(|i| {
            let word_start = start + 64 * i as i64;
            let w = words.get(i).copied().unwrap_or(0);
            u64::from((keep(i, w) & mask(word_start, from, to)).count_ones())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Arrival::{Marked, Unknown, Unmarked};

    /// Sees `psns` in order; the window's largest size in words.
    fn see_all(w: &mut PsnWindow, psns: impl Iterator<Item = u32>, budget: &mut WordBudget) -> usize {
        let mut largest = 0;
        for psn in psns {
            assert_eq!(w.see(psn, false, budget), Appearance::First, "PSN {psn}");
            largest = largest.max(w.sacked.len());
        }
        largest
    }

    #[test]
    fn a_pdc_longer_than_the_window_is_told_apart_to_its_end_across_wraps() {
        // 3 million PSNs from just before the wrap, every 1000th never seen; the cumulative
        // ACK reaches the middle, so the capture missed the skipped PSNs before it
        let first = u32::MAX - 1000;
        let (mut w, mut budget) = (PsnWindow::new(first, None), WordBudget::default());
        let psns = (0..3_000_000u32).filter(|i| i % 1000 != 500).map(|i| first.wrapping_add(i));
        let largest = see_all(&mut w, psns, &mut budget);
        assert!(largest <= MAX_WORDS, "the window holds at most {MAX_WORDS} words, held {largest}");
        assert_eq!(w.acknowledge_to(first.wrapping_add(1_499_999), &mut budget), 1_500_000);
        assert_eq!(w.never_seen(), (1500, 1500));
        assert_eq!(w.see(first.wrapping_add(7), false, &mut budget), Appearance::Again, "settled, seen before");
        assert_eq!(w.highest_psn(), first.wrapping_add(2_999_999));
    }

    #[test]
    fn a_settled_psn_seen_late_is_a_first_appearance_and_no_longer_missing() {
        let (mut w, mut budget) = (PsnWindow::new(0, None), WordBudget::default());
        see_all(&mut w, (0..200_000u32).filter(|i| !(10..13).contains(i)), &mut budget);
        assert_eq!(w.never_seen(), (0, 3), "10, 11 and 12, settled unacknowledged");
        assert_eq!(w.see(11, false, &mut budget), Appearance::First);
        assert_eq!(w.see(11, false, &mut budget), Appearance::Again);
        assert_eq!(w.never_seen(), (0, 2));
        assert_eq!(w.acknowledge_to(10, &mut budget), 11, "0 to 10");
        assert_eq!(w.never_seen(), (1, 1), "10 acknowledged, 12 not");
    }

    #[test]
    fn a_jump_far_ahead_settles_the_gap_as_one_range() {
        let (mut w, mut budget) = (PsnWindow::new(0, None), WordBudget::default());
        see_all(&mut w, [0, 1, 50_000_000].into_iter(), &mut budget);
        assert_eq!(w.never_seen(), (0, 49_999_998));
        assert!(w.unacked.len() <= 2 && w.sacked.len() <= MAX_WORDS);
        w.acknowledge_to(30_000_000, &mut budget);
        assert_eq!(w.never_seen(), (29_999_999, 20_000_000 - 1));
    }

    #[test]
    fn sacks_acknowledge_only_beyond_the_cumulative_ack_and_within_the_window() {
        let (mut w, mut budget) = (PsnWindow::new(100, None), WordBudget::default());
        see_all(&mut w, [100, 101, 104].into_iter(), &mut budget);
        assert_eq!(w.acknowledge_to(101, &mut budget), 2);
        assert!(!w.sack(101), "behind the cumulative ACK");
        assert!(w.sack(103) && !w.sack(103));
        assert!(!w.sack(100 + 64 * MAX_WORDS as u32), "beyond what the window may hold");
        assert_eq!(w.never_seen(), (1, 1), "103 SACKed, 102 never acknowledged");
        assert_eq!(w.acknowledge_to(104, &mut budget), 2, "102 and 104: 103 was SACKed");
    }

    #[test]
    fn psns_far_before_the_first_are_untracked() {
        let (mut w, mut budget) = (PsnWindow::new(5000, None), WordBudget::default());
        assert_eq!(w.see(5000 - SLACK as u32, false, &mut budget), Appearance::First);
        assert_eq!(w.see(5000 - SLACK as u32 - 1, false, &mut budget), Appearance::Untracked);
        assert_eq!(w.never_seen(), (0, 0), "nothing between the first and the highest");
    }

    #[test]
    fn without_budget_windows_stay_small_and_ranges_still_count() {
        let mut budget = WordBudget { left: 0, ..WordBudget::default() };
        let mut w = PsnWindow::new(0, None);
        let largest = see_all(&mut w, (0..100_000u32).filter(|i| i % 100 != 0 || *i == 0), &mut budget);
        assert_eq!(largest, MIN_WORDS);
        assert_eq!(w.never_seen(), (0, 999), "every 100th but the first");
        assert!(w.unacked.is_empty(), "no words for ranges: counted only");
        w.acknowledge_to(99_999, &mut budget);
        // the window holds 97,984 to 99,999 (32 words): its 20 skipped PSNs are acknowledged
        assert_eq!((w.start, w.never_seen()), (97_984, (20, 979)));
    }

    #[test]
    fn psns_are_told_marked_unmarked_or_unknown_and_those_behind_the_window_unknown() {
        let mut budget = WordBudget { left: 0, ..WordBudget::default() };
        let mut w = PsnWindow::new(0, None);
        for psn in 0..5000u32 {
            assert_eq!(w.see(psn, psn.is_multiple_of(10), &mut budget), Appearance::First);
        }
        // the window holds 3,008 to 5,055 (32 words); the PSNs before it have left it
        assert_eq!(w.start, 3008);
        assert_eq!([w.arrival(3010), w.arrival(3011), w.arrival(3000)], [Marked, Unmarked, Unknown]);
        assert_eq!(w.acknowledge_to(4999, &mut budget), 5000);
        // a copy that differs makes a PSN's marking unknown; one beyond the highest is unseen
        assert_eq!(w.see(5000, true, &mut budget), Appearance::First);
        assert_eq!(w.see(5000, false, &mut budget), Appearance::Again);
        assert_eq!(w.see(5001, true, &mut budget), Appearance::First);
        assert_eq!([w.arrival(5000), w.arrival(5001), w.arrival(5002)], [Unknown, Marked, Unknown]);
        assert_eq!([w.sack(5000), w.sack(5001), w.sack(5002), w.sack(5001)], [true, true, true, false]);
        assert_eq!(w.acknowledge_to(5003, &mut budget), 1, "5003 alone: the rest SACKed");
    }

    #[test]
    fn masks_and_counts_cross_word_edges() {
        assert_eq!(
            (mask(0, 0, 63), mask(64, 0, 63), mask(0, 63, 200), mask(-64, -1, -1)),
            (u64::MAX, 0, 1 << 63, 1 << 63)
        );
        let words: VecDeque<u64> = [1 | 1 << 63, 1, 0b100].into_iter().collect();
        let all = |_: usize, w: u64| w;
        assert_eq!(
            (ones(&words, 0, 0, 63, all), ones(&words, 0, 1, 64, all), ones(&words, 0, 63, 130, all)),
            (2, 2, 3)
        );
        assert_eq!((ones(&words, 0, 131, 100_000, all), ones(&words, 0, 5, 4, all)), (0, 0));
    }
}
