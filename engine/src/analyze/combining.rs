//! How two analyses of one capture combine into one ([`Combine`]): a shard's, of other host
//! pairs, added; or a part's, of later frames, grafted on at the point where the two met
//! ([`Seam`]). `analyze::combine` orders the parts and checks that they met; every type of the
//! state says how it combines, by `#[derive(Combine)]` (from engine/derive/), which combines
//! each field as the field says ([`by`]: `#[combine(sum)]`, `#[combine(earliest)]`, …, or the
//! field's type's own `Combine`), or by an impl of its own where its combination is not
//! field-wise. A field added to the state says how it combines, or does not compile.
//!
//! On the ground floor, beside [`crate::analyze::renumber`], so that every type of the
//! analysis can implement it.

use rocescope_parsers::ethernet::MacAddr;
use rustc_hash::FxHashSet;

pub use rocescope_derive::Combine;

/// Why two analyses were not combined: the reason, and what it concerns where that is one
/// part of the state (a flow). Written `what: reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    reason: &'static str,
    about: Option<String>,
}

impl Refused {
    /// The same refusal, said of `what` (a flow, as messages name it).
    pub fn about(self, what: String) -> Refused {
        Refused { about: Some(what), ..self }
    }

    /// The reason alone.
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

impl From<&'static str> for Refused {
    fn from(reason: &'static str) -> Refused {
        Refused { reason, about: None }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.about {
            Some(what) => write!(f, "{what}: {}", self.reason),
            None => f.write_str(self.reason),
        }
    }
}

/// The point where a part's analysis is grafted on: what its kept frames, analysed after the
/// parts before it and on their own, came to when they end.
#[derive(Debug, Clone, Default)]
pub struct Seam {
    /// The latest capture time analysed when the kept frames end: what a chart holds after
    /// it is the part's own.
    pub at_ns: i64,
    /// The incast window (the analyses' setting), which a receiver's recent frames span.
    pub incast_window_ns: i64,
    /// The pause sources (their MACs) that sent pause frames after the seam.
    pub paused_after: FxHashSet<MacAddr>,
}

/// How a value of a capture's analysis joins another's of the same capture.
pub trait Combine {
    /// Adds what `other` made of other frames of the same capture (a shard's: other host
    /// pairs, times among these).
    fn add(&mut self, other: &Self) -> Result<(), Refused>;
    /// Goes on as `end` went on from `start` (its state at the seam, where this one stands
    /// too), after the seam.
    fn graft(&mut self, start: &Self, end: Self, seam: &Seam) -> Result<(), Refused>;
}

/// The greatest value of `mine` and of what `end` saw after `start`, its value at an earlier
/// point: a later value above `start` shows in `end`; one at or below does not, which does
/// not matter only where `mine` is at least `start`.
pub fn later_max<T: Ord + Copy>(mine: T, start: T, end: T) -> Result<T, &'static str> {
    match end > start {
        true => Ok(mine.max(end)),
        false if mine >= start => Ok(mine),
        false => Err("a greatest value"),
    }
}

/// Adds counts slot by slot.
fn add_slots(mine: &mut [u64], other: &[u64]) {
    mine.iter_mut().zip(other).for_each(|(m, o)| *m += o);
}

/// Adds what each of `end`'s slots counted beyond `start`'s.
fn graft_slots(mine: &mut [u64], start: &[u64], end: &[u64]) {
    mine.iter_mut().zip(start.iter().zip(end)).for_each(|(m, (s, e))| *m += e.saturating_sub(*s));
}

/// Counts kept as a list of slots (by opcode, DSCP value, priority): each added slot by slot.
impl Combine for Vec<u64> {
    fn add(&mut self, other: &Self) -> Result<(), Refused> {
        add_slots(self, other);
        Ok(())
    }

    fn graft(&mut self, start: &Self, end: Self, _: &Seam) -> Result<(), Refused> {
        graft_slots(self, start, &end);
        Ok(())
    }
}

/// As a [`Vec`] of counts.
impl<const N: usize> Combine for [u64; N] {
    fn add(&mut self, other: &Self) -> Result<(), Refused> {
        add_slots(self, other);
        Ok(())
    }

    fn graft(&mut self, start: &Self, end: Self, _: &Seam) -> Result<(), Refused> {
        graft_slots(self, start, &end);
        Ok(())
    }
}

/// Values of one kind side by side (histograms by size class): each combines with its own.
impl<T: Combine, const N: usize> Combine for [T; N] {
    fn add(&mut self, other: &Self) -> Result<(), Refused> {
        self.iter_mut().zip(other).try_for_each(|(mine, theirs)| mine.add(theirs))
    }

    fn graft(&mut self, start: &Self, end: Self, seam: &Seam) -> Result<(), Refused> {
        self.iter_mut().zip(start.iter().zip(end)).try_for_each(|(mine, (s, e))| mine.graft(s, e, seam))
    }
}

/// What the field attributes of `#[derive(Combine)]` name: a module per strategy, each with the
/// `add` and `graft` the derive calls for a field (`#[combine(with = path)]` names a module of
/// the same two functions).
pub mod by {
    /// No attribute: the field's type's own [`Combine`](super::Combine).
    pub mod nested {
        use super::super::{Combine, Refused, Seam};

        pub fn add<T: Combine>(mine: &mut T, other: &T) -> Result<(), Refused> {
            mine.add(other)
        }

        pub fn graft<T: Combine>(mine: &mut T, start: &T, end: T, seam: &Seam) -> Result<(), Refused> {
            mine.graft(start, end, seam)
        }
    }

    /// `#[combine(sum)]`, counts: added; grafted, what `end` counted beyond `start`.
    pub mod sum {
        use super::super::{Refused, Seam};

        /// A count.
        pub trait Count: Copy {
            fn plus(self, more: Self) -> Self;
            fn beyond(self, start: Self) -> Self;
        }

        macro_rules! counts {
            ($($ty:ty),*) => {$(
                impl Count for $ty {
                    fn plus(self, more: Self) -> Self {
                        self + more
                    }
                    fn beyond(self, start: Self) -> Self {
                        self.saturating_sub(start)
                    }
                }
            )*};
        }

        counts!(u64, usize);

        pub fn add<T: Count>(mine: &mut T, other: &T) -> Result<(), Refused> {
            *mine = mine.plus(*other);
            Ok(())
        }

        pub fn graft<T: Count>(mine: &mut T, start: &T, end: T, _: &Seam) -> Result<(), Refused> {
            *mine = mine.plus(end.beyond(*start));
            Ok(())
        }
    }

    /// A frame number or a time, alone or where known (`Option`).
    pub trait Moment: Copy {
        /// The earlier of two, a known one before none.
        fn earlier(self, other: Self) -> Self;
        /// The later of two, a known one after none.
        fn later(self, other: Self) -> Self;
        /// This one where known, else `other`.
        fn known_or(self, other: Self) -> Self;
    }

    impl<T: Ord + Copy> Moment for Option<T> {
        fn earlier(self, other: Self) -> Self {
            match (self, other) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        fn later(self, other: Self) -> Self {
            self.max(other)
        }
        fn known_or(self, other: Self) -> Self {
            self.or(other)
        }
    }

    /// A frame number or a time that is always known.
    pub trait Plain: Ord + Copy {}

    impl Plain for i64 {}

    impl<T: Plain> Moment for T {
        fn earlier(self, other: Self) -> Self {
            self.min(other)
        }
        fn later(self, other: Self) -> Self {
            self.max(other)
        }
        fn known_or(self, _: Self) -> Self {
            self
        }
    }

    /// `#[combine(earliest)]`, first frames and times: added, the earlier; grafted, this
    /// one's, or `end`'s where this one has none.
    pub mod earliest {
        use super::super::{Refused, Seam};
        use super::Moment;

        pub fn add<T: Moment>(mine: &mut T, other: &T) -> Result<(), Refused> {
            *mine = mine.earlier(*other);
            Ok(())
        }

        pub fn graft<T: Moment>(mine: &mut T, _: &T, end: T, _: &Seam) -> Result<(), Refused> {
            *mine = mine.known_or(end);
            Ok(())
        }
    }

    /// `#[combine(latest)]`, last times: the later, added or grafted.
    pub mod latest {
        use super::super::{Refused, Seam};
        use super::Moment;

        pub fn add<T: Moment>(mine: &mut T, other: &T) -> Result<(), Refused> {
            *mine = mine.later(*other);
            Ok(())
        }

        pub fn graft<T: Moment>(mine: &mut T, _: &T, end: T, _: &Seam) -> Result<(), Refused> {
            *mine = mine.later(end);
            Ok(())
        }
    }

    /// `#[combine(max)]`, extremes: added, the larger; grafted, the larger of this one and of
    /// what `end` saw after `start` ([`later_max`](super::super::later_max): refused where
    /// that cannot be told).
    pub mod max {
        use super::super::{Refused, Seam, later_max};

        pub fn add<T: Ord + Copy>(mine: &mut T, other: &T) -> Result<(), Refused> {
            *mine = (*mine).max(*other);
            Ok(())
        }

        pub fn graft<T: Ord + Copy>(mine: &mut T, start: &T, end: T, _: &Seam) -> Result<(), Refused> {
            *mine = later_max(*mine, *start, end)?;
            Ok(())
        }
    }

    /// `#[combine(end)]`, running state: grafted, `end`'s, which the later frames took on;
    /// never added (shards share no running state: the join declines rather than guess).
    pub mod end {
        use super::super::{Refused, Seam};

        pub fn add<T>(_: &mut T, _: &T) -> Result<(), Refused> {
            Err("running state, which shards do not share".into())
        }

        pub fn graft<T>(mine: &mut T, _: &T, end: T, _: &Seam) -> Result<(), Refused> {
            *mine = end;
            Ok(())
        }
    }

    /// `#[combine(same)]`, settings: equal in both, or refused.
    pub mod same {
        use super::super::{Refused, Seam};

        pub fn add<T: PartialEq>(mine: &mut T, other: &T) -> Result<(), Refused> {
            match mine == other {
                true => Ok(()),
                false => Err("the analyses' settings differ".into()),
            }
        }

        pub fn graft<T: PartialEq>(mine: &mut T, _: &T, end: T, _: &Seam) -> Result<(), Refused> {
            add(mine, &end)
        }
    }

    /// `#[combine(own)]`, this analysis's own, which the other's does not change (what it
    /// holds for its caller: the frames it keeps for a merge, the verdicts it gives; a scratch
    /// list). Say beside a field why it is its own.
    pub mod own {
        use super::super::{Refused, Seam};

        pub fn add<T>(_: &mut T, _: &T) -> Result<(), Refused> {
            Ok(())
        }

        pub fn graft<T>(_: &mut T, _: &T, _: T, _: &Seam) -> Result<(), Refused> {
            Ok(())
        }
    }

    /// `#[combine(decided)]`, a decision taken at the capture's start (the doubled mirror):
    /// added, the same in both (shards start from one), or refused; grafted, this one's (the
    /// merge checks apart that the part decided alike).
    pub mod decided {
        pub use super::own::graft;
        pub use super::same::add;
    }

    /// `#[combine(continued)]`, lists in frame order: added, `other`'s appended (the caller
    /// puts them in frame order); grafted, `end`'s beyond those `start` holds appended.
    pub mod continued {
        use super::super::{Refused, Seam};

        pub fn add<T: Clone>(mine: &mut Vec<T>, other: &[T]) -> Result<(), Refused> {
            mine.extend_from_slice(other);
            Ok(())
        }

        pub fn graft<T>(mine: &mut Vec<T>, start: &[T], end: Vec<T>, _: &Seam) -> Result<(), Refused> {
            mine.extend(end.into_iter().skip(start.len()));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::renumber::FrameNumber;

    /// A count that must stay even: its own pair of functions (`with`).
    mod even {
        use super::super::{Refused, Seam};

        pub fn add(mine: &mut u64, other: &u64) -> Result<(), Refused> {
            if other % 2 == 1 {
                return Err("an odd count".into());
            }
            *mine += other;
            Ok(())
        }

        pub fn graft(mine: &mut u64, start: &u64, end: u64, _: &Seam) -> Result<(), Refused> {
            add(mine, &(end - start))
        }
    }

    #[derive(Debug, Clone, PartialEq, Default, Combine)]
    struct Inner {
        #[combine(sum)]
        count: u64,
        slots: [u64; 2],
    }

    /// Every strategy that adds.
    #[derive(Debug, Clone, PartialEq, Default, Combine)]
    struct Every {
        #[combine(sum)]
        packets: u64,
        #[combine(earliest)]
        first_frame: Option<FrameNumber>,
        #[combine(earliest)]
        first_ts_ns: i64,
        #[combine(latest)]
        last_ts_ns: Option<i64>,
        #[combine(max)]
        deepest: u32,
        #[combine(same)]
        window_ns: i64,
        #[combine(decided)]
        doubled: Option<bool>,
        #[combine(continued)]
        episodes: Vec<u32>,
        #[combine(own)]
        scratch: Vec<u8>,
        #[combine(add = latest, graft = end)]
        previous_ts_ns: i64,
        #[combine(with = even)]
        pairs: u64,
        inner: Inner,
    }

    /// Running state beside a count, checked at the seam as a whole.
    #[derive(Debug, Clone, PartialEq, Default, Combine)]
    #[combine(check = Running::agrees)]
    struct Running(#[combine(sum)] u64, #[combine(end)] u32);

    impl Running {
        fn agrees(&self, start: &Running, _: &Running, _: &Seam) -> Result<(), Refused> {
            match self.1 == start.1 {
                true => Ok(()),
                false => Err("running state that differs at the seam".into()),
            }
        }
    }

    fn every(first: u64, last: i64, deepest: u32, episodes: &[u32]) -> Every {
        Every {
            packets: first,
            first_frame: (first > 0).then(|| FrameNumber::new(first)),
            first_ts_ns: first as i64 * 10,
            last_ts_ns: Some(last),
            deepest,
            window_ns: 20,
            doubled: Some(true),
            episodes: episodes.to_vec(),
            scratch: vec![first as u8],
            previous_ts_ns: last,
            pairs: 2 * first,
            inner: Inner { count: first, slots: [first, 1] },
        }
    }

    #[test]
    fn adding_combines_each_field_as_it_says() {
        let mut whole = every(3, 300, 4, &[3]);
        whole.add(&every(2, 200, 9, &[2])).expect("added");
        let added = Every {
            packets: 5,
            first_frame: Some(FrameNumber::new(2)),
            first_ts_ns: 20,
            last_ts_ns: Some(300),
            deepest: 9,
            window_ns: 20,
            doubled: Some(true),
            episodes: vec![3, 2],
            scratch: vec![3],
            previous_ts_ns: 300,
            pairs: 10,
            inner: Inner { count: 5, slots: [5, 2] },
        };
        assert_eq!(whole, added);
        // a known first frame or time beats none
        let mut none = Every { first_frame: None, last_ts_ns: None, ..added.clone() };
        none.add(&every(7, 50, 0, &[])).expect("added");
        assert_eq!((none.first_frame, none.last_ts_ns), (Some(FrameNumber::new(7)), Some(50)));
    }

    #[test]
    fn grafting_goes_on_as_the_later_part_went_on() {
        let seam = Seam::default();
        // the merged analysis, the part at the seam and at its end
        let (mut merged, start, end) =
            (every(5, 500, 8, &[1, 2]), every(1, 100, 3, &[7]), every(4, 400, 6, &[7, 8, 9]));
        merged.graft(&start, end, &seam).expect("grafted");
        let grafted = Every {
            packets: 8,
            first_frame: Some(FrameNumber::new(5)),
            first_ts_ns: 50,
            last_ts_ns: Some(500),
            deepest: 8,
            window_ns: 20,
            doubled: Some(true),
            episodes: vec![1, 2, 8, 9],
            scratch: vec![5],
            previous_ts_ns: 400,
            pairs: 16,
            inner: Inner { count: 8, slots: [8, 1] },
        };
        assert_eq!(merged, grafted);
        // the first frame is the part's where the merged analysis had none
        let mut none = Every { first_frame: None, ..grafted };
        none.graft(&every(1, 100, 3, &[]), every(2, 200, 3, &[]), &seam).expect("grafted");
        assert_eq!(none.first_frame, Some(FrameNumber::new(2)));
        let mut running = Running(1, 10);
        running.graft(&Running(0, 10), Running(4, 11), &seam).expect("grafted");
        assert_eq!(running, Running(5, 11));
    }

    #[test]
    fn a_refusal_stops_the_combining_with_its_reason() {
        let seam = Seam::default();
        // running state is never added: the join declines rather than guess
        assert_eq!(
            Running(1, 2).add(&Running(1, 2)).map_err(|r| r.reason()),
            Err("running state, which shards do not share")
        );
        // the part's greatest value after the seam cannot be told from the one before
        let mut merged = every(5, 500, 2, &[]);
        let refused = merged.graft(&every(1, 100, 3, &[]), every(4, 400, 3, &[]), &seam);
        assert_eq!(refused, Err(Refused::from("a greatest value")));
        // the fields before the refusal were combined, those after it not
        assert_eq!((merged.packets, merged.pairs), (8, 10));
        // settings must be the same, a with's function refuses what it refuses
        let mut other = every(1, 100, 3, &[]);
        other.window_ns = 50;
        assert!(every(1, 100, 3, &[]).add(&other).is_err());
        assert_eq!(
            every(1, 100, 3, &[]).add(&Every { pairs: 1, ..every(1, 100, 3, &[]) }).map_err(|r| r.reason()),
            Err("an odd count")
        );
        // a struct's check refuses before any field is grafted
        let mut running = Running(1, 10);
        let refused = running.graft(&Running(0, 9), Running(4, 11), &seam).map_err(|r| r.about("the flow".to_string()));
        assert_eq!(
            refused.map_err(|r| r.to_string()),
            Err("the flow: running state that differs at the seam".to_string())
        );
        assert_eq!(running, Running(1, 10));
    }

    #[test]
    fn counts_combine_added_or_grafted() {
        let (mut counts, mut lists) = ([1u64, 2, 3], vec![10u64, 20]);
        counts.add(&[1, 1, 1]).expect("added");
        lists.add(&vec![1, 2]).expect("added");
        assert_eq!((counts, lists.clone()), ([2, 3, 4], vec![11, 22]));
        // what the part counted after the point the analyses met: end less start
        counts.graft(&[1, 1, 1], [3, 1, 2], &Seam::default()).expect("grafted");
        lists.graft(&vec![5, 5], vec![6, 9], &Seam::default()).expect("grafted");
        assert_eq!((counts, lists), ([4, 3, 5], vec![12, 26]));
        let mut flows = crate::analyze::counts::FlowCounters { packets: 3, ..Default::default() };
        let start = crate::analyze::counts::FlowCounters { packets: 1, acks: 2, ..Default::default() };
        let end = crate::analyze::counts::FlowCounters { packets: 4, acks: 5, ..Default::default() };
        Combine::graft(&mut flows, &start, end, &Seam::default()).expect("grafted");
        assert_eq!((flows.packets, flows.acks), (6, 3));
    }

    #[test]
    fn a_greatest_value_after_the_seam_is_told_or_refused() {
        assert_eq!(later_max(5, 3, 7), Ok(7));
        assert_eq!(later_max(5, 3, 3), Ok(5));
        assert_eq!(later_max(2, 3, 3), Err("a greatest value"));
    }
}
