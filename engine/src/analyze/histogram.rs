//! Compact log-scale histograms for durations. [`LogHistogram`] (ACK latency, CNP spacing,
//! CE-to-CNP time) has 32 buckets per power of two, so a percentile is within 1/64 (about
//! 1.6 %) of the true value, and [`FineHistogram`] (message completion times) 128, within
//! 1/256 (0.4 %): a percentile is the middle of its bucket, whose width is at most 1/32 (or
//! 1/128) of its lowest value. A [`FineHistogram`] of at most 64 values keeps them, and its
//! percentiles are exact. Count, minimum, maximum and sum are exact. The counters of the
//! buckets in use are kept as a short sorted list (8 bytes each) until more than
//! [`SPARSE_MAX`] buckets are in use, then as an array of counters from the lowest bucket in
//! use to the highest (at most 42 powers of two): most flows' histograms stay well under a
//! kilobyte.

use crate::analyze::combining::{Combine, Refused, Seam};

/// Values below 2^46 ns (about 19 hours) have their own buckets; larger ones share the last.
const OCTAVES: usize = 42;

/// Buckets in use kept as a list before switching to the array.
const SPARSE_MAX: usize = 64;

/// Counters of the buckets.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
enum Counts {
    #[default]
    Empty,
    /// (bucket, count) of the buckets in use, by bucket.
    Sparse(Vec<(u16, u32)>),
    /// The counters of the buckets from `first` on.
    Dense { first: usize, counts: Vec<u32> },
}

impl Counts {
    fn add(&mut self, bucket: usize, n: u32) {
        match self {
            Counts::Empty => *self = Counts::Sparse(vec![(bucket as u16, n)]),
            Counts::Sparse(list) => match list.binary_search_by_key(&(bucket as u16), |&(b, _)| b) {
                Ok(i) => {
                    if let Some((_, c)) = list.get_mut(i) {
                        *c = c.saturating_add(n);
                    }
                }
                Err(_) if list.len() >= SPARSE_MAX => {
                    let (first, last) = (list.first().map_or(0, |e| e.0), list.last().map_or(0, |e| e.0));
                    let (first, last) = (usize::from(first), usize::from(last));
                    let mut counts = vec![0u32; last - first + 1];
                    for &(b, c) in list.iter() {
                        if let Some(slot) = counts.get_mut(usize::from(b) - first) {
                            *slot = c;
                        }
                    }
                    *self = Counts::Dense { first, counts };
                    self.add(bucket, n);
                }
                Err(i) => list.insert(i, (bucket as u16, n)),
            },
            Counts::Dense { first, counts } => {
                if bucket < *first {
                    counts.splice(0..0, std::iter::repeat_n(0, *first - bucket));
                    *first = bucket;
                }
                if bucket >= *first + counts.len() {
                    counts.resize(bucket - *first + 1, 0);
                }
                if let Some(c) = counts.get_mut(bucket - *first) {
                    *c = c.saturating_add(n);
                }
            }
        }
    }

    /// (bucket, count) of the buckets in use, by bucket.
    fn in_use(&self) -> Box<dyn Iterator<Item = (usize, u32)> + '_> {
        match self {
            Counts::Empty => Box::new(std::iter::empty()),
            Counts::Sparse(list) => Box::new(list.iter().map(|&(b, c)| (usize::from(b), c))),
            Counts::Dense { first, counts } => {
                let first = *first;
                Box::new(counts.iter().copied().enumerate().filter(|&(_, c)| c > 0).map(move |(i, c)| (first + i, c)))
            }
        }
    }
}

/// A log-scale histogram with 2^`SUB_BITS` buckets per power of two, which keeps its first
/// `EXACT` values too: while it holds no more, its percentiles are exact.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Histogram<const SUB_BITS: u32, const EXACT: usize> {
    counts: Counts,
    /// The values, while there are at most `EXACT`.
    exact: Vec<u64>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    /// The least and greatest samples since [`Histogram::mark`], once marked (for a merge:
    /// what came after a part's kept frames).
    since_mark: Option<Option<(u64, u64)>>,
}

/// 32 buckets per power of two.
pub type LogHistogram = Histogram<5, 0>;
/// 128 buckets per power of two, percentiles within 1 %; exact up to 64 values.
pub type FineHistogram = Histogram<7, 64>;

impl<const SUB_BITS: u32, const EXACT: usize> Histogram<SUB_BITS, EXACT> {
    const SUB_BUCKETS: u64 = 1 << SUB_BITS;
    const BUCKETS: usize = OCTAVES * (1 << SUB_BITS);

    fn bucket_of(value: u64) -> usize {
        if value < Self::SUB_BUCKETS {
            return value as usize;
        }
        let octave = 63 - value.leading_zeros(); // >= SUB_BITS
        let sub = (value >> (octave - SUB_BITS)) & (Self::SUB_BUCKETS - 1);
        let index = (octave - SUB_BITS + 1) as usize * Self::SUB_BUCKETS as usize + sub as usize;
        index.min(Self::BUCKETS - 1)
    }

    /// The smallest value of a bucket and its width.
    fn bucket_range(index: usize) -> (u64, u64) {
        let (octave, sub) = ((index / Self::SUB_BUCKETS as usize) as u32, index as u64 % Self::SUB_BUCKETS);
        if octave == 0 {
            return (sub, 1);
        }
        let shift = octave - 1;
        ((Self::SUB_BUCKETS + sub) << shift, 1 << shift)
    }

    pub fn record(&mut self, value: u64) {
        self.counts.add(Self::bucket_of(value), 1);
        self.keep_exact(std::iter::once(value), 1);
        self.min = if self.count == 0 { value } else { self.min.min(value) };
        self.max = self.max.max(value);
        self.count += 1;
        self.sum += u128::from(value);
        if let Some(since) = &mut self.since_mark {
            *since = Some(since.map_or((value, value), |(lo, hi)| (lo.min(value), hi.max(value))));
        }
    }

    /// Starts telling apart the least and greatest samples recorded from now on.
    pub fn mark(&mut self) {
        self.since_mark = Some(None);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    pub fn mean(&self) -> Option<u64> {
        (self.count > 0).then(|| (self.sum / u128::from(self.count)) as u64)
    }

    /// Keeps `n` more values while the histogram holds at most `EXACT`.
    fn keep_exact(&mut self, values: impl Iterator<Item = u64>, n: u64) {
        if self.count + n <= EXACT as u64 {
            self.exact.extend(values);
        } else if !self.exact.is_empty() {
            self.exact = Vec::new();
        }
    }

    /// The value at quantile `q` (0..=1), nearest rank: the sample of rank ⌈q·count⌉ while
    /// the values are kept, else the middle of the bucket holding it, clamped to the exact
    /// minimum and maximum.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if self.exact.len() as u64 == self.count {
            let mut sorted = self.exact.clone();
            sorted.sort_unstable();
            return sorted.get(rank as usize - 1).copied();
        }
        let mut seen = 0u64;
        for (index, c) in self.counts.in_use() {
            seen += u64::from(c);
            if seen >= rank {
                let (low, width) = Self::bucket_range(index);
                return Some((low + width / 2).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// (lowest value, width, count) of every bucket in use, in order.
    pub fn buckets(&self) -> Vec<(u64, u64, u32)> {
        self.counts
            .in_use()
            .map(|(index, c)| {
                let (low, width) = Self::bucket_range(index);
                (low, width, c)
            })
            .collect()
    }

    /// Adds another histogram's samples.
    pub fn add_samples(&mut self, other: &Self) {
        if other.count == 0 {
            return;
        }
        for (bucket, c) in other.counts.in_use() {
            self.counts.add(bucket, c);
        }
        let theirs = if other.exact.len() as u64 == other.count { other.exact.clone() } else { Vec::new() };
        match theirs.len() as u64 == other.count {
            true => self.keep_exact(theirs.into_iter(), other.count),
            false => self.exact = Vec::new(),
        }
        self.min = if self.count == 0 { other.min } else { self.min.min(other.min) };
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }
}

impl<const SUB_BITS: u32, const EXACT: usize> Histogram<SUB_BITS, EXACT> {
    /// The least (`least`) or greatest of these samples and later ones: `shown` when `end`
    /// (the extreme of the first samples and the later ones) is the later ones'; otherwise
    /// theirs lies in the bucket `(low, width)` and no further than `end`, which tells it
    /// where that leaves one value, or where all of it lies beyond these samples' extreme.
    fn later_extreme(&self, shown: bool, end: u64, (low, width): (u64, u64), least: bool) -> Result<u64, &'static str> {
        // the later samples' extreme lies in its bucket, and no further than `end`
        let (low, high) = match least {
            true => (low.max(end), low + width - 1),
            false => (low, (low + width - 1).min(end)),
        };
        let (mine, beyond) = match least {
            true => (self.min, self.count > 0 && low >= self.min),
            false => (self.max, self.count > 0 && high <= self.max),
        };
        let later = match (shown, low == high) {
            (true, _) => end,
            (false, true) => low,
            (false, false) if beyond => return Ok(mine),
            _ => return Err("an extreme of a histogram"),
        };
        Ok(match (self.count, least) {
            (0, _) => later,
            (_, true) => mine.min(later),
            (_, false) => mine.max(later),
        })
    }
}

impl Counts {
    /// The counter of `bucket`.
    fn get(&self, bucket: usize) -> u32 {
        match self {
            Counts::Empty => 0,
            Counts::Sparse(list) => list
                .binary_search_by_key(&(bucket as u16), |&(b, _)| b)
                .ok()
                .and_then(|i| list.get(i))
                .map_or(0, |e| e.1),
            Counts::Dense { first, counts } => {
                bucket.checked_sub(*first).and_then(|i| counts.get(i)).copied().unwrap_or(0)
            }
        }
    }
}

impl<const SUB_BITS: u32, const EXACT: usize> Histogram<SUB_BITS, EXACT> {
    /// Adds the samples `end` holds beyond `start`, which holds its first samples; an error
    /// where the least or greatest of those later samples cannot be told from the two and
    /// would decide these.
    fn graft_samples(&mut self, start: &Self, end: &Self) -> Result<(), &'static str> {
        let later = end.count.saturating_sub(start.count);
        if later == 0 {
            return Ok(());
        }
        // the later samples' buckets: those where end counts more than start
        let later_buckets: Vec<usize> =
            end.counts.in_use().filter(|&(b, c)| c > start.counts.get(b)).map(|(b, _)| b).collect();
        let (Some(&lowest), Some(&highest)) = (later_buckets.first(), later_buckets.last()) else {
            return Err("a histogram's later samples");
        };
        let told = match end.since_mark {
            Some(Some(extremes)) => Some(extremes),
            _ => None,
        };
        let (min, max) = match (told, self.count) {
            // the part told its later samples' extremes apart
            (Some((lo, hi)), 0) => (lo, hi),
            (Some((lo, hi)), _) => (self.min.min(lo), self.max.max(hi)),
            (None, _) => (
                self.later_extreme(start.count == 0 || end.min < start.min, end.min, Self::bucket_range(lowest), true)?,
                self.later_extreme(
                    start.count == 0 || end.max > start.max,
                    end.max,
                    Self::bucket_range(highest),
                    false,
                )?,
            ),
        };
        // this histogram's own mark goes on with the later samples, where their extremes are told
        self.since_mark = match (self.since_mark, told) {
            (Some(Some((a, b))), Some((lo, hi))) => Some(Some((a.min(lo), b.max(hi)))),
            (Some(None), Some(extremes)) => Some(Some(extremes)),
            (Some(_), None) | (None, _) => None,
        };
        for (bucket, c) in end.counts.in_use() {
            let n = c.saturating_sub(start.counts.get(bucket));
            if n > 0 {
                self.counts.add(bucket, n);
            }
        }
        let mut values = end.exact.clone();
        for v in &start.exact {
            if let Some(i) = values.iter().position(|x| x == v) {
                values.remove(i);
            }
        }
        let known = end.exact.len() as u64 == end.count && values.len() as u64 == later;
        if known {
            self.keep_exact(values.into_iter(), later);
        } else {
            self.exact = Vec::new();
        }
        self.count += later;
        self.sum += end.sum.saturating_sub(start.sum);
        (self.min, self.max) = (min, max);
        Ok(())
    }
}

/// A histogram counts values (sizes, times), never frames or flows by number.
/// Samples of other frames added; grafted, the samples `end` holds beyond `start` (refused
/// where their least or greatest cannot be told).
impl<const SUB_BITS: u32, const EXACT: usize> Combine for Histogram<SUB_BITS, EXACT> {
    fn add(&mut self, other: &Self) -> Result<(), Refused> {
        self.add_samples(other);
        Ok(())
    }

    fn graft(&mut self, start: &Self, end: Self, _: &Seam) -> Result<(), Refused> {
        Ok(self.graft_samples(start, &end)?)
    }
}

impl<const SUB_BITS: u32, const EXACT: usize> crate::analyze::renumber::HoldsNoNumbers for Histogram<SUB_BITS, EXACT> {}

impl<const SUB_BITS: u32, const EXACT: usize> crate::analyze::renumber::Renumber for Histogram<SUB_BITS, EXACT> {
    fn renumber(&mut self, _: &crate::analyze::renumber::Renumbering) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = LogHistogram::default();
        for v in [3, 1, 2, 2, 9] {
            h.record(v);
        }
        assert_eq!((h.count(), h.min(), h.max(), h.mean()), (5, Some(1), Some(9), Some(3)));
        assert_eq!(h.quantile(0.5), Some(2));
        assert_eq!(h.quantile(0.99), Some(9));
        assert_eq!(h.quantile(0.0), Some(1));
    }

    #[test]
    fn large_values_are_within_three_percent() {
        let mut h = LogHistogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 1_000);
        }
        let p50 = h.quantile(0.5).unwrap() as f64;
        let p99 = h.quantile(0.99).unwrap() as f64;
        assert!((p50 / 5_000_000.0 - 1.0).abs() < 0.035, "{p50}");
        assert!((p99 / 9_900_000.0 - 1.0).abs() < 0.035, "{p99}");
        assert_eq!(h.max(), Some(10_000_000));
    }

    #[test]
    fn buckets_cover_values_in_order() {
        let mut previous = 0;
        for v in (0..100_000u64).chain([u64::MAX / 2, u64::MAX]) {
            let b = LogHistogram::bucket_of(v);
            assert!(b >= previous);
            previous = b;
            let (low, width) = LogHistogram::bucket_range(b);
            if b < LogHistogram::BUCKETS - 1 {
                assert!(low <= v && v < low + width, "{v} in bucket {b} [{low}, +{width})");
            }
        }
    }

    #[test]
    fn the_list_and_the_array_give_the_same_quantiles() {
        // 2,000 distinct values fill far more than SPARSE_MAX buckets; a histogram fed the
        // first 60 only stays a list
        let values: Vec<u64> = (0..2_000u64).map(|i| (i * 7_919) % 1_000_003 + 1).collect();
        let mut list = LogHistogram::default();
        values.iter().take(60).for_each(|&v| list.record(v));
        assert!(matches!(list.counts, Counts::Sparse(_)));
        let mut array = LogHistogram::default();
        values.iter().for_each(|&v| array.record(v));
        assert!(matches!(array.counts, Counts::Dense { .. }));
        let mut merged = LogHistogram::default();
        merged.add_samples(&list);
        values.iter().skip(60).for_each(|&v| merged.record(v));
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(merged.quantile(q), array.quantile(q), "q {q}");
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let exact_p50 = sorted[999] as f64;
        assert!((array.quantile(0.5).unwrap() as f64 / exact_p50 - 1.0).abs() < 0.035);
    }

    #[test]
    fn the_fine_histogram_is_exact_while_it_keeps_its_values_and_merges_them() {
        let mut a = FineHistogram::default();
        let mut b = FineHistogram::default();
        [14_000, 2_000, 9_000].iter().for_each(|&v| a.record(v));
        [13_999, 2_001].iter().for_each(|&v| b.record(v));
        a.add_samples(&b);
        assert_eq!((a.quantile(0.5), a.quantile(0.2), a.quantile(0.99)), (Some(9_000), Some(2_000), Some(14_000)));
        (0..100).for_each(|v| a.record(10_000 + v));
        assert!(a.exact.is_empty());
        assert_eq!(a.count(), 105);
    }

    #[test]
    fn the_fine_histogram_is_within_one_percent() {
        let mut h = FineHistogram::default();
        let values: Vec<u64> = (1..=20_000u64).map(|i| (i * 7_919) % 10_000_019 + 100).collect();
        values.iter().for_each(|&v| h.record(v));
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for q in [0.01, 0.25, 0.5, 0.9, 0.99, 0.999] {
            let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
            let exact = sorted[rank - 1] as f64;
            let got = h.quantile(q).unwrap() as f64;
            assert!((got / exact - 1.0).abs() <= 0.01, "q {q}: {got} vs {exact}");
        }
        // a value far below the others widens the array downwards
        h.record(3);
        assert_eq!(h.quantile(0.0), Some(3));
    }

    #[test]
    fn empty_and_merged() {
        let empty = LogHistogram::default();
        assert_eq!((empty.quantile(0.5), empty.min(), empty.mean()), (None, None, None));
        let mut a = LogHistogram::default();
        a.record(10);
        let mut b = LogHistogram::default();
        b.record(30);
        a.add_samples(&b);
        a.add_samples(&empty);
        assert_eq!((a.count(), a.min(), a.max(), a.quantile(1.0)), (2, Some(10), Some(30), Some(30)));
    }
}
