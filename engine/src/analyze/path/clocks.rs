//! Each tap's clock against the first tap's, from the packets two neighbouring taps both saw:
//! a forward packet's time difference is its delay plus the offset, a reverse packet's its
//! delay minus the offset, so half the difference of the two smallest is the offset and half
//! their sum bounds its error (NTP's rule, RFC 5905 §8, with the smallest delays standing for
//! the true ones). A clock that drifts is fitted as a line over the capture's time.

use rustc_hash::FxHashMap;

use crate::analyze::path::report::{Direction, OffsetMethod};
use crate::capture::Alignment;

use super::sightings::Sighting;

/// A tap's clock on the first tap's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    pub offset_ns: i64,
    pub drift_ppm: f64,
    /// Against the first tap's clock.
    pub uncertainty_ns: Option<u64>,
    /// Against the clock of the tap before, which it was aligned to: how well the delays of
    /// the hop between the two are known.
    pub to_neighbour_ns: Option<u64>,
    pub method: OffsetMethod,
}

impl Clock {
    pub const REFERENCE: Clock = Clock {
        offset_ns: 0,
        drift_ppm: 0.0,
        uncertainty_ns: Some(0),
        to_neighbour_ns: Some(0),
        method: OffsetMethod::Reference,
    };

    pub fn given(offset_ns: i64) -> Clock {
        Clock { offset_ns, drift_ppm: 0.0, uncertainty_ns: None, to_neighbour_ns: None, method: OffsetMethod::Given }
    }

    /// The clock as a file's alignment to the first tap's, at `reference_ns`.
    pub fn alignment(&self, reference_ns: i64) -> Alignment {
        Alignment { offset_ns: self.offset_ns, drift_ppm: self.drift_ppm, reference_ns, ..Alignment::default() }
    }
}

/// A capture shorter than this has its drift taken as zero: too short to tell it from jitter.
const DRIFT_SPAN_NS: i64 = 500_000_000;
/// The slices of the capture's time whose smallest delays the drift is fitted to.
const DRIFT_SLICES: usize = 16;

/// One packet both taps saw once: `at`, its time at the known tap on the first tap's clock,
/// and `difference`, the other tap's time minus it (forward) or it minus the other tap's time
/// (reverse).
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: i64,
    difference: i64,
    direction: Direction,
}

/// The clock of the tap `unknown` from the packets it shares with `known`, whose times are
/// already on the first tap's clock (`aligned`); `way` gives a packet's direction.
pub fn estimate(
    known: &[Sighting],
    aligned: &dyn Fn(&Sighting) -> i64,
    unknown: &[Sighting],
    way: &dyn Fn(&Sighting) -> Direction,
    reference_ns: i64,
) -> Clock {
    let samples = shared_once(known, aligned, unknown, way);
    let drift = drift_per_ns(&samples);
    let detrended = |s: &Sample| {
        let trend = (drift * s.at.saturating_sub(reference_ns) as f64).round() as i64;
        match s.direction {
            Direction::Forward => s.difference.saturating_sub(trend),
            Direction::Reverse => s.difference.saturating_add(trend),
        }
    };
    let smallest = |direction| samples.iter().filter(|s| s.direction == direction).map(detrended).min();
    let (offset_ns, uncertainty_ns, method) = match (smallest(Direction::Forward), smallest(Direction::Reverse)) {
        (Some(f), Some(r)) => (
            halve(i128::from(f) - i128::from(r)),
            Some(halve(i128::from(f) + i128::from(r)).max(0) as u64),
            OffsetMethod::TwoWay,
        ),
        (Some(f), None) => (f, None, OffsetMethod::OneWayBound),
        (None, Some(r)) => (r.saturating_neg(), None, OffsetMethod::OneWayBound),
        (None, None) => (0, None, OffsetMethod::Unknown),
    };
    Clock { offset_ns, drift_ppm: drift * 1e6, uncertainty_ns, to_neighbour_ns: uncertainty_ns, method }
}

/// Half of `v`, within what an i64 holds (times from a capture file can be any i64).
fn halve(v: i128) -> i64 {
    i64::try_from(v / 2).unwrap_or(if v > 0 { i64::MAX } else { i64::MIN })
}

/// The packets each tap saw exactly once (a packet resent, or two packets alike, cannot tell
/// which copy is which before the clocks are known).
fn shared_once(
    known: &[Sighting],
    aligned: &dyn Fn(&Sighting) -> i64,
    unknown: &[Sighting],
    way: &dyn Fn(&Sighting) -> Direction,
) -> Vec<Sample> {
    let once = |sightings: &[Sighting]| {
        let mut by_signature: FxHashMap<u32, Option<usize>> = FxHashMap::default();
        for (i, s) in sightings.iter().enumerate() {
            by_signature.entry(s.signature).and_modify(|e| *e = None).or_insert(Some(i));
        }
        by_signature
    };
    let there = once(unknown);
    let mut samples = Vec::new();
    for (signature, here) in once(known) {
        let (Some(Some(here)), Some(Some(there))) = (Some(here), there.get(&signature)) else { continue };
        let (Some(k), Some(u)) = (known.get(here), unknown.get(*there)) else { continue };
        let direction = way(k);
        let at = aligned(k);
        let difference = match direction {
            Direction::Forward => u.ts_ns.saturating_sub(at),
            Direction::Reverse => at.saturating_sub(u.ts_ns),
        };
        samples.push(Sample { at, difference, direction });
    }
    samples.sort_by_key(|s| s.at);
    samples
}

/// The drift (ns per ns) fitted, by least squares, to the offsets of the capture's slices
/// (each from its smallest forward and reverse differences, or one of them when it has only
/// one direction); zero for a capture shorter than [`DRIFT_SPAN_NS`].
fn drift_per_ns(samples: &[Sample]) -> f64 {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else { return 0.0 };
    let span = last.at.saturating_sub(first.at);
    if span < DRIFT_SPAN_NS {
        return 0.0;
    }
    let slice_of =
        |at: i64| ((at.saturating_sub(first.at) as i128 * DRIFT_SLICES as i128) / (span as i128 + 1)) as usize;
    let mut smallest = [[None::<i64>; 2]; DRIFT_SLICES];
    for s in samples {
        let d = usize::from(s.direction == Direction::Reverse);
        if let Some(slot) = smallest.get_mut(slice_of(s.at)).and_then(|slot| slot.get_mut(d)) {
            *slot = Some(slot.map_or(s.difference, |v| v.min(s.difference)));
        }
    }
    let two_way = smallest.iter().filter(|[f, r]| f.is_some() && r.is_some()).count() >= 2;
    let points: Vec<(f64, f64)> = smallest
        .iter()
        .enumerate()
        .filter_map(|(i, [f, r])| {
            let offset = match (f, r) {
                (Some(f), Some(r)) => (*f as f64 - *r as f64) / 2.0,
                (Some(f), None) if !two_way => *f as f64,
                (None, Some(r)) if !two_way => -*r as f64,
                _ => return None,
            };
            let middle = (i as f64 + 0.5) * span as f64 / DRIFT_SLICES as f64;
            Some((middle, offset))
        })
        .collect();
    slope(&points)
}

/// The least-squares slope of `points`; zero for fewer than three.
fn slope(points: &[(f64, f64)]) -> f64 {
    if points.len() < 3 {
        return 0.0;
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let covariance: f64 = points.iter().map(|(x, y)| (x - mean_x) * (y - mean_y)).sum();
    let variance: f64 = points.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
    if variance == 0.0 { 0.0 } else { covariance / variance }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sighting(signature: u32, ts_ns: i64) -> Sighting {
        Sighting {
            ts_ns,
            signature,
            pair: 0,
            dest_qp: 1,
            psn: signature,
            opcode: 4,
            dscp: None,
            ecn: None,
            pcp: None,
            ttl: 64,
            file: 0,
            record: 0,
        }
    }

    /// Packets every 1 ms, forward on odd signatures with a delay of 3 µs + jitter, reverse on
    /// even ones with 3 µs + jitter, seen by a second tap whose clock is `offset` ahead and
    /// drifts by `ppm`.
    fn two_taps(offset: i64, ppm: f64, count: u32) -> (Vec<Sighting>, Vec<Sighting>) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..count {
            let t = i64::from(i) * 1_000_000;
            let delay = 3_000 + i64::from(i * 7919 % 500);
            let clock_b = |true_t: i64| true_t + offset + (ppm * 1e-6 * true_t as f64).round() as i64;
            let (at_a, at_b) = if i % 2 == 1 { (t, t + delay) } else { (t + delay, t) };
            a.push(sighting(i, at_a));
            b.push(sighting(i, clock_b(at_b)));
        }
        (a, b)
    }

    fn way(s: &Sighting) -> Direction {
        if s.signature % 2 == 1 { Direction::Forward } else { Direction::Reverse }
    }

    #[test]
    fn an_offset_is_found_within_the_jitter_from_both_directions() {
        let (a, b) = two_taps(-50_000_000, 0.0, 200);
        let clock = estimate(&a, &|s| s.ts_ns, &b, &way, 0);
        assert_eq!(clock.method, OffsetMethod::TwoWay);
        assert!((clock.offset_ns + 50_000_000).abs() <= 50, "{clock:?}");
        assert!(clock.uncertainty_ns.is_some_and(|u| (2_900..=3_100).contains(&u)), "{clock:?}");
        assert_eq!(clock.drift_ppm, 0.0, "a capture of 0.2 s has no drift fitted");
    }

    #[test]
    fn a_drift_of_20_ppm_is_fitted_over_two_seconds() {
        let (a, b) = two_taps(50_000_000, 20.0, 2_000);
        let clock = estimate(&a, &|s| s.ts_ns, &b, &way, 0);
        assert!((clock.drift_ppm - 20.0).abs() < 1.0, "{clock:?}");
        assert!((clock.offset_ns - 50_000_000).abs() <= 500, "{clock:?}");
    }

    #[test]
    fn one_direction_gives_a_bound_that_makes_the_smallest_delay_zero() {
        let (a, b) = two_taps(1_000_000, 0.0, 200);
        let forward = |s: &&Sighting| s.signature % 2 == 1;
        let a: Vec<Sighting> = a.iter().filter(forward).copied().collect();
        let b: Vec<Sighting> = b.iter().filter(forward).copied().collect();
        let clock = estimate(&a, &|s| s.ts_ns, &b, &way, 0);
        assert_eq!(clock.method, OffsetMethod::OneWayBound);
        assert_eq!(clock.uncertainty_ns, None);
        let smallest_delay = 3_000 + (1..200).step_by(2).map(|i: i64| i * 7919 % 500).min().unwrap_or(0);
        assert_eq!(clock.offset_ns, 1_000_000 + smallest_delay);
    }

    #[test]
    fn times_at_the_ends_of_an_i64_do_not_overflow() {
        let a = [sighting(1, i64::MIN), sighting(2, i64::MAX)];
        let b = [sighting(1, i64::MAX), sighting(2, i64::MIN)];
        let clock = estimate(&a, &|s| s.ts_ns, &b, &way, i64::MIN);
        assert_eq!(clock.method, OffsetMethod::TwoWay);
    }

    #[test]
    fn no_shared_packet_leaves_the_offset_unknown() {
        let clock = estimate(&[sighting(1, 0)], &|s| s.ts_ns, &[sighting(2, 5)], &way, 0);
        assert_eq!(clock.method, OffsetMethod::Unknown);
    }
}
