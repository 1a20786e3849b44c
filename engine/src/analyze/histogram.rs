//! A compact log-scale histogram for durations (ACK latency, CNP spacing, CE-to-CNP time):
//! 32 buckets per power of two, so a percentile is within 1/32 (about 3 %) of the true value.
//! Count, minimum, maximum and sum are exact. The counters of the buckets in use are kept as
//! a short sorted list (8 bytes each) until more than [`SPARSE_MAX`] buckets are in use, then
//! as the full array of 1,344 counters (5.25 KiB): most flows' histograms stay well under a
//! kilobyte, and none grows past the array.

const SUB_BUCKETS: u64 = 32;
const SUB_BITS: u32 = 5;
/// Values below 2^46 ns (about 19 hours) have their own buckets; larger ones share the last.
const OCTAVES: usize = 42;

const BUCKETS: usize = OCTAVES * SUB_BUCKETS as usize;
/// Buckets in use kept as a list before switching to the array.
const SPARSE_MAX: usize = 64;

/// Counters of the buckets.
#[derive(Debug, Clone, Default)]
enum Counts {
    #[default]
    Empty,
    /// (bucket, count) of the buckets in use, by bucket.
    Sparse(Vec<(u16, u32)>),
    Dense(Box<[u32]>),
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
                    let mut dense = vec![0u32; BUCKETS].into_boxed_slice();
                    for &(b, c) in list.iter() {
                        if let Some(slot) = dense.get_mut(usize::from(b)) {
                            *slot = c;
                        }
                    }
                    *self = Counts::Dense(dense);
                    self.add(bucket, n);
                }
                Err(i) => list.insert(i, (bucket as u16, n)),
            },
            Counts::Dense(counts) => {
                if let Some(c) = counts.get_mut(bucket) {
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
            Counts::Dense(counts) => Box::new(counts.iter().copied().enumerate().filter(|&(_, c)| c > 0)),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct LogHistogram {
    counts: Counts,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

fn bucket_of(value: u64) -> usize {
    if value < SUB_BUCKETS {
        return value as usize;
    }
    let octave = 63 - value.leading_zeros(); // >= SUB_BITS
    let sub = (value >> (octave - SUB_BITS)) & (SUB_BUCKETS - 1);
    let index = (octave - SUB_BITS + 1) as usize * SUB_BUCKETS as usize + sub as usize;
    index.min(OCTAVES * SUB_BUCKETS as usize - 1)
}

/// The smallest value of a bucket and its width.
fn bucket_range(index: usize) -> (u64, u64) {
    let (octave, sub) = ((index / SUB_BUCKETS as usize) as u32, index as u64 % SUB_BUCKETS);
    if octave == 0 {
        return (sub, 1);
    }
    let shift = octave - 1;
    ((SUB_BUCKETS + sub) << shift, 1 << shift)
}

impl LogHistogram {
    pub fn record(&mut self, value: u64) {
        self.counts.add(bucket_of(value), 1);
        self.min = if self.count == 0 { value } else { self.min.min(value) };
        self.max = self.max.max(value);
        self.count += 1;
        self.sum += u128::from(value);
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

    /// The value at quantile `q` (0..=1): the middle of the bucket holding the sample of rank
    /// ⌈q·count⌉, clamped to the exact minimum and maximum.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (index, c) in self.counts.in_use() {
            seen += u64::from(c);
            if seen >= rank {
                let (low, width) = bucket_range(index);
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
                let (low, width) = bucket_range(index);
                (low, width, c)
            })
            .collect()
    }

    /// Adds another histogram's samples.
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.count == 0 {
            return;
        }
        for (bucket, c) in other.counts.in_use() {
            self.counts.add(bucket, c);
        }
        self.min = if self.count == 0 { other.min } else { self.min.min(other.min) };
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }
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
            let b = bucket_of(v);
            assert!(b >= previous);
            previous = b;
            let (low, width) = bucket_range(b);
            if b < BUCKETS - 1 {
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
        assert!(matches!(array.counts, Counts::Dense(_)));
        let mut merged = LogHistogram::default();
        merged.merge(&list);
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
    fn empty_and_merged() {
        let empty = LogHistogram::default();
        assert_eq!((empty.quantile(0.5), empty.min(), empty.mean()), (None, None, None));
        let mut a = LogHistogram::default();
        a.record(10);
        let mut b = LogHistogram::default();
        b.record(30);
        a.merge(&b);
        a.merge(&empty);
        assert_eq!((a.count(), a.min(), a.max(), a.quantile(1.0)), (2, Some(10), Some(30), Some(30)));
    }
}
