//! Sums (or maxima) over time in a fixed number of bins, for the report's charts: memory does
//! not grow with the capture's length. Bins start at the first sample and are
//! [`INITIAL_WIDTH_NS`] wide; when a sample falls past the last bin, neighbouring bins are
//! merged pairwise and the width doubles, as often as needed. A sample earlier than the first
//! counts in the first bin.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::renumber::Renumber;

/// The width of a bin before any merge.
pub const INITIAL_WIDTH_NS: i64 = 1_000;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Renumber)]
#[serde(try_from = "Saved")]
pub struct Timeline {
    start_ns: Option<i64>,
    width_ns: i64,
    bins: usize,
    channels: usize,
    /// `bins × channels` sums (or maxima), bin-major.
    sums: Vec<u64>,
    /// Does a bin keep the largest of its values rather than their sum?
    maxima: bool,
}

/// A timeline read back from a state file, a timeline once its bins add up.
#[derive(serde::Deserialize)]
struct Saved {
    start_ns: Option<i64>,
    width_ns: i64,
    bins: usize,
    channels: usize,
    sums: Vec<u64>,
    maxima: bool,
}

impl TryFrom<Saved> for Timeline {
    type Error = &'static str;

    fn try_from(t: Saved) -> Result<Timeline, Self::Error> {
        let bins_add_up =
            t.bins >= 2 && t.bins.is_multiple_of(2) && t.bins.checked_mul(t.channels) == Some(t.sums.len());
        if t.width_ns < 1 || !bins_add_up {
            return Err("a timeline whose bins do not add up");
        }
        let Saved { start_ns, width_ns, bins, channels, sums, maxima } = t;
        Ok(Timeline { start_ns, width_ns, bins, channels, sums, maxima })
    }
}

impl Timeline {
    pub fn new(bins: usize, channels: usize) -> Self {
        let bins = bins.max(2) & !1; // an even count, so that pairs merge evenly
        let sums = vec![0; bins * channels];
        Timeline { start_ns: None, width_ns: INITIAL_WIDTH_NS, bins, channels, sums, maxima: false }
    }

    /// A timeline whose bins keep the largest value added to them (a fan-in over time).
    pub fn of_maxima(bins: usize, channels: usize) -> Self {
        Timeline { maxima: true, ..Timeline::new(bins, channels) }
    }

    fn combine(&self, a: u64, b: u64) -> u64 {
        if self.maxima { a.max(b) } else { a + b }
    }

    /// The bin of `ts_ns`, after widening the bins until it fits.
    fn bin_of(&mut self, ts_ns: i64) -> usize {
        let start = *self.start_ns.get_or_insert(ts_ns);
        let offset = ts_ns.saturating_sub(start).max(0);
        while offset / self.width_ns >= self.bins as i64 {
            self.merge_pairs();
        }
        (offset / self.width_ns) as usize
    }

    fn merge_pairs(&mut self) {
        let c = self.channels;
        for bin in 0..self.bins / 2 {
            for ch in 0..c {
                let merged = self.combine(self.sums[2 * bin * c + ch], self.sums[(2 * bin + 1) * c + ch]);
                self.sums[bin * c + ch] = merged;
            }
        }
        self.sums[self.bins / 2 * c..].fill(0);
        self.width_ns = self.width_ns.saturating_mul(2);
    }

    pub fn add(&mut self, ts_ns: i64, channel: usize, value: u64) {
        if channel >= self.channels {
            return;
        }
        let bin = self.bin_of(ts_ns);
        let at = bin * self.channels + channel;
        self.sums[at] = self.combine(self.sums[at], value);
    }

    /// Adds the length of `[from_ns, to_ns)` to every bin it overlaps, in nanoseconds (a first
    /// span starts the timeline at its start).
    pub fn add_span(&mut self, from_ns: i64, to_ns: i64, channel: usize) {
        if channel >= self.channels || to_ns <= from_ns {
            return;
        }
        self.start_ns.get_or_insert(from_ns);
        self.bin_of(to_ns.saturating_sub(1)); // widen first, so that both ends fit
        let mut at = from_ns;
        while at < to_ns {
            let bin = self.bin_of(at);
            let bin_end = self.bin_start(bin).saturating_add(self.width_ns);
            let end = to_ns.min(bin_end).max(at.saturating_add(1));
            self.sums[bin * self.channels + channel] += (end - at) as u64;
            at = end;
        }
    }

    fn bin_start(&self, bin: usize) -> i64 {
        self.start_ns.unwrap_or(0).saturating_add(self.width_ns.saturating_mul(bin as i64))
    }

    /// Fixes where the timeline starts (before anything is added), rather than at the time of
    /// the first value added.
    pub fn start_at(&mut self, start_ns: Option<i64>) {
        self.start_ns = self.start_ns.or(start_ns);
    }

    pub fn width_ns(&self) -> i64 {
        self.width_ns
    }

    pub fn start_ns(&self) -> Option<i64> {
        self.start_ns
    }

    /// Start time and sum of each bin of `channel`, up to the last bin with a sample in any
    /// channel.
    pub fn series(&self, channel: usize) -> Vec<(i64, u64)> {
        let used = (0..self.bins)
            .rev()
            .find(|b| self.sums[b * self.channels..(b + 1) * self.channels].iter().any(|v| *v > 0))
            .map_or(0, |b| b + 1);
        (0..used)
            .map(|b| (self.bin_start(b), self.sums.get(b * self.channels + channel).copied().unwrap_or(0)))
            .collect()
    }
}

/// Timelines of the same start, bins and channels. Added, the sums of the other's bins (of
/// other frames): the timeline of both sets of values. Grafted, what `end` holds after the
/// seam, bin by bin at each bin's start (a chart, which may be binned otherwise than one pass
/// over the same frames would bin it).
impl Combine for Timeline {
    fn add(&mut self, other: &Timeline) -> Result<(), Refused> {
        if other.start_ns.is_none() {
            return Ok(());
        }
        self.start_ns = self.start_ns.or(other.start_ns);
        let mut other = other.clone();
        while other.width_ns < self.width_ns {
            other.merge_pairs();
        }
        while self.width_ns < other.width_ns {
            self.merge_pairs();
        }
        let maxima = self.maxima;
        for (sum, add) in self.sums.iter_mut().zip(&other.sums) {
            *sum = if maxima { (*sum).max(*add) } else { *sum + add };
        }
        Ok(())
    }

    fn graft(&mut self, _: &Timeline, end: Timeline, seam: &Seam) -> Result<(), Refused> {
        self.add_after(&end, seam.at_ns);
        Ok(())
    }
}

impl Timeline {
    /// Adds what `end` holds after `after_ns`, bin by bin at each bin's start.
    pub fn add_after(&mut self, end: &Timeline, after_ns: i64) {
        for channel in 0..end.channels.min(self.channels) {
            for (start, value) in end.series(channel) {
                if start >= after_ns && value > 0 {
                    self.add(start, channel, value);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_land_in_their_bins_and_bins_widen_to_fit() {
        let mut t = Timeline::new(4, 2);
        t.add(100, 0, 1); // the start
        t.add(100 + 999, 0, 2);
        t.add(100 + 3_500, 1, 5);
        assert_eq!(t.series(0), [(100, 3), (1_100, 0), (2_100, 0), (3_100, 0)]);
        assert_eq!(t.series(1)[3], (3_100, 5));
        // 4 bins of 1 µs cover 4 µs; a sample at 9 µs needs 4 µs bins
        t.add(100 + 9_000, 1, 7);
        assert_eq!(t.width_ns(), 4_000);
        assert_eq!(t.series(0), [(100, 3), (4_100, 0), (8_100, 0)]);
        assert_eq!(t.series(1), [(100, 5), (4_100, 0), (8_100, 7)]);
        // an earlier sample counts in the first bin; an unknown channel is ignored
        t.add(0, 0, 1);
        t.add(500, 9, 1);
        assert_eq!(t.series(0)[0], (100, 4));
    }

    #[test]
    fn a_span_is_split_over_the_bins_it_covers() {
        let mut t = Timeline::new(8, 1);
        t.add(0, 0, 0);
        t.add_span(1_500, 4_200, 0);
        assert_eq!(t.series(0), [(0, 0), (1_000, 500), (2_000, 1_000), (3_000, 1_000), (4_000, 200)]);
        // a span past the end widens the bins first
        t.add_span(7_000, 12_000, 0);
        assert_eq!(t.width_ns(), 2_000);
        let total: u64 = t.series(0).iter().map(|(_, v)| v).sum();
        assert_eq!(total, 2_700 + 5_000);
    }

    #[test]
    fn a_first_span_starts_the_timeline_at_its_start() {
        // it once started at the span's end, so that the whole span fell into the first bin
        let mut t = Timeline::new(8, 1);
        t.add_span(10_000, 13_500, 0);
        assert_eq!(t.series(0), [(10_000, 1_000), (11_000, 1_000), (12_000, 1_000), (13_000, 500)]);
    }

    #[test]
    fn timelines_of_the_same_start_merge_into_the_timeline_of_all_their_values() {
        let values = [(100, 0, 1), (2_000, 1, 4), (30_000, 0, 2), (31_000, 1, 8), (70_000, 0, 16)];
        let mut whole = Timeline::new(8, 2);
        let (mut even, mut odd) = (Timeline::new(8, 2), Timeline::new(8, 2));
        even.start_at(Some(100));
        odd.start_at(Some(100));
        for (i, &(ts, channel, value)) in values.iter().enumerate() {
            whole.add(ts, channel, value);
            if i % 2 == 0 { even.add(ts, channel, value) } else { odd.add(ts, channel, value) }
        }
        assert!(odd.width_ns() < even.width_ns(), "the halves were binned differently");
        Combine::add(&mut odd, &even).expect("added");
        assert_eq!((odd.series(0), odd.series(1)), (whole.series(0), whole.series(1)));
        assert_eq!(odd.width_ns(), whole.width_ns());
    }

    #[test]
    fn a_timeline_of_maxima_keeps_each_bins_largest_value_as_bins_widen() {
        let mut t = Timeline::of_maxima(4, 1);
        for (ts, v) in [(0, 3), (500, 5), (1_200, 2), (3_900, 1)] {
            t.add(ts, 0, v);
        }
        assert_eq!(t.series(0), [(0, 5), (1_000, 2), (2_000, 0), (3_000, 1)]);
        t.add(7_000, 0, 4);
        assert_eq!(t.series(0), [(0, 5), (2_000, 1), (4_000, 0), (6_000, 4)]);
    }
}
