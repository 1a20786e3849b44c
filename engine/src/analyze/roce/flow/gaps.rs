//! The gaps a PSN space remembers: the PSNs each gap skipped (its holes), which of them have
//! appeared since, which came late (reordering) and which a NAK named. Small gaps get a bitmap
//! of their holes so that late arrivals can fill them; larger ones are remembered as ranges
//! only, for the retransmit episodes' patterns (docs/analysis.md, "Reordering").

use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use rocescope_parsers::psn::{psn_add, psn_forward_distance};

/// The widest gap whose holes are tracked one by one (a reordering this deep inside one
/// reorder window is beyond any fabric; a wider gap is loss).
pub const TRACKED_SPAN: u32 = 256;
/// Gaps a PSN space remembers; a new gap replaces the oldest settled one.
pub const GAPS_KEPT: usize = 16;

const WORDS: usize = (TRACKED_SPAN / 64) as usize;

/// A set of PSN offsets within a tracked gap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Bits([u64; WORDS]);

impl Bits {
    pub fn get(&self, i: u32) -> bool {
        self.0.get((i / 64) as usize).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    pub fn set(&mut self, i: u32) {
        if let Some(w) = self.0.get_mut((i / 64) as usize) {
            *w |= 1 << (i % 64);
        }
    }

    pub fn clear(&mut self, i: u32) {
        if let Some(w) = self.0.get_mut((i / 64) as usize) {
            *w &= !(1 << (i % 64));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

/// One gap: the PSNs from `first_psn` up to the packet that skipped them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Gap {
    /// The frame that opened the gap (the first packet after the skipped PSNs).
    pub frame: FrameNumber,
    pub ts_ns: i64,
    pub first_psn: u32,
    /// PSNs from `first_psn` to the frame's PSN (some may not be holes in a response space).
    pub span: u32,
    /// Holes no late arrival has filled.
    pub missing: u32,
    /// Its holes' fate is decided: no late arrival can fill one any more.
    pub settled: bool,
    /// Holes are tracked one by one (`span` ≤ [`TRACKED_SPAN`]).
    pub tracked: bool,
    /// Offsets that are not holes or have appeared since the gap opened.
    pub seen: Bits,
    /// Offsets filled by late arrivals.
    pub late: Bits,
    /// Offsets a PSN-sequence NAK named.
    pub naked: Bits,
    /// A PSN-sequence NAK named one of its PSNs (settled or not): the responder missed them.
    pub nak: bool,
    /// Holes a later ACK covered with no NAK and no resend: the responder got them, only the
    /// capture missed them (not in `missing`).
    pub captured: Bits,
    /// Offsets below this one have been covered by an ACK.
    pub acked_to: u32,
    /// The PSNs just before a space's first packet, which it may have overtaken: they may
    /// come late, and those that never come are no loss.
    pub prelude: bool,
}

impl Gap {
    /// The offset of `psn` in the gap, if it lies in it.
    pub fn offset(&self, psn: u32) -> Option<u32> {
        let d = psn_forward_distance(psn, self.first_psn);
        (d < self.span).then_some(d)
    }

    /// Is `psn` a hole of this gap that has not appeared yet?
    pub fn is_unseen_hole(&self, psn: u32) -> bool {
        self.tracked && self.offset(psn).is_some_and(|o| !self.seen.get(o))
    }

    /// Are all holes accounted for (filled late or appeared as resends)?
    pub fn all_seen(&self) -> bool {
        self.tracked && (0..self.span).all(|o| self.seen.get(o))
    }
}

/// The index of the prelude among a space's gaps.
pub const PRELUDE: usize = usize::MAX;

/// The remembered gaps of one PSN space, oldest first, and its prelude while it lasts.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Gaps {
    list: Vec<Gap>,
    /// The PSNs before the space's first ([`Gaps::open_prelude`]), until settled.
    prelude: Option<Box<Gap>>,
}

impl Gaps {
    /// Remembers a gap that skipped from `first_psn` for `span` PSNs, of which `is_hole`
    /// tells the holes. Returns whether its holes' fate is open: false for a gap too wide to
    /// track (remembered as a range, settled at once) and for one that finds every slot taken
    /// by an unsettled gap (not remembered).
    pub fn open(
        &mut self,
        frame: FrameNumber,
        ts_ns: i64,
        first_psn: u32,
        span: u32,
        missing: u32,
        is_hole: &dyn Fn(u32) -> bool,
    ) -> bool {
        if self.list.len() >= GAPS_KEPT {
            match self.list.iter().position(|g| g.settled) {
                Some(i) => {
                    self.list.remove(i);
                }
                None => return false,
            }
        }
        let tracked = span <= TRACKED_SPAN;
        let mut seen = Bits::default();
        if tracked {
            for o in (0..span).filter(|&o| !is_hole(psn_add(first_psn, o))) {
                seen.set(o);
            }
        }
        self.list.push(Gap {
            frame,
            ts_ns,
            first_psn,
            span,
            missing,
            settled: !tracked,
            tracked,
            seen,
            late: Bits::default(),
            naked: Bits::default(),
            nak: false,
            captured: Bits::default(),
            acked_to: 0,
            prelude: false,
        });
        tracked
    }

    /// Remembers the `span` PSNs from `first_psn` before a space's first packet (opened by
    /// `frame` at `ts_ns`) as a prelude: holes that may come late, none of them missing.
    /// Returns false when every slot is taken by an unsettled gap.
    pub fn open_prelude(&mut self, frame: FrameNumber, ts_ns: i64, first_psn: u32, span: u32) {
        let span = span.min(TRACKED_SPAN);
        let (seen, late, naked, captured) = (Bits::default(), Bits::default(), Bits::default(), Bits::default());
        let (missing, settled, tracked, nak, acked_to, prelude) = (0, false, true, false, 0, true);
        self.prelude = Some(Box::new(Gap {
            frame,
            ts_ns,
            first_psn,
            span,
            missing,
            settled,
            tracked,
            seen,
            late,
            naked,
            nak,
            captured,
            acked_to,
            prelude,
        }));
    }

    /// The prelude is settled: it is forgotten.
    pub fn close_prelude(&mut self) {
        self.prelude = None;
    }

    /// Every remembered gap, oldest first (the prelude first of all).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Gap> {
        self.prelude.as_deref_mut().into_iter().chain(self.list.iter_mut())
    }

    /// The newest gap (the prelude aside) with a hole not seen yet among the `span` PSNs from
    /// `psn`.
    pub fn with_unseen_hole_in(&self, psn: u32, span: u32) -> Option<&Gap> {
        let in_range = |p: u32| psn_forward_distance(p, psn) < span;
        self.list
            .iter()
            .rev()
            .find(|g| g.tracked && (0..g.span).any(|o| !g.seen.get(o) && in_range(psn_add(g.first_psn, o))))
    }

    /// The newest gap that holds `psn` ([`PRELUDE`] for the prelude).
    pub fn containing(&self, psn: u32) -> Option<usize> {
        let prelude = || self.prelude.as_ref().filter(|g| g.offset(psn).is_some()).map(|_| PRELUDE);
        self.list.iter().rposition(|g| g.offset(psn).is_some()).or_else(prelude)
    }

    pub fn get(&self, i: usize) -> Option<&Gap> {
        if i == PRELUDE { self.prelude.as_deref() } else { self.list.get(i) }
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut Gap> {
        if i == PRELUDE { self.prelude.as_deref_mut() } else { self.list.get_mut(i) }
    }

    /// Every gap with its index.
    fn indexed(&self) -> impl Iterator<Item = (usize, &Gap)> + '_ {
        self.prelude.as_deref().map(|g| (PRELUDE, g)).into_iter().chain(self.list.iter().enumerate())
    }

    /// Unsettled gaps whose reorder window ended before `now_ns`.
    pub fn expired(&self, now_ns: i64, window_ns: i64) -> impl Iterator<Item = usize> + '_ {
        self.indexed().filter(move |(_, g)| !g.settled && now_ns.saturating_sub(g.ts_ns) > window_ns).map(|(i, _)| i)
    }

    /// Every unsettled gap.
    pub fn unsettled(&self) -> impl Iterator<Item = usize> + '_ {
        self.indexed().filter(|(_, g)| !g.settled).map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_tracked_one_by_one_in_small_gaps() {
        let mut gaps = Gaps::default();
        assert!(gaps.open(FrameNumber::new(5), 100, 0xFF_FFFE, 4, 4, &|_| true));
        let i = gaps.containing(1).unwrap();
        let g = gaps.get_mut(i).unwrap();
        assert_eq!((g.offset(0xFF_FFFE), g.offset(1), g.offset(2)), (Some(0), Some(3), None));
        assert!(g.is_unseen_hole(0));
        g.seen.set(2);
        assert!(!g.is_unseen_hole(0) && !g.all_seen());
        // a response gap whose middle PSNs belong to no READ: they are not holes
        assert!(gaps.open(FrameNumber::new(6), 100, 10, 4, 2, &|p| p == 10 || p == 13));
        let g = gaps.get(gaps.containing(11).unwrap()).unwrap();
        assert!(!g.is_unseen_hole(11) && g.is_unseen_hole(13));
    }

    #[test]
    fn a_wide_gap_is_remembered_as_a_range_and_settled_at_once() {
        let mut gaps = Gaps::default();
        assert!(!gaps.open(FrameNumber::new(1), 0, 0, TRACKED_SPAN + 1, TRACKED_SPAN + 1, &|_| true));
        let g = gaps.get(0).unwrap();
        assert!(g.settled && !g.is_unseen_hole(3) && g.offset(3).is_some());
    }

    #[test]
    fn unsettled_gaps_are_never_replaced() {
        let mut gaps = Gaps::default();
        for i in 0..GAPS_KEPT as u32 {
            assert!(gaps.open(FrameNumber::new(u64::from(i)), 0, i * 10, 2, 2, &|_| true));
        }
        assert!(!gaps.open(FrameNumber::new(99), 0, 500, 2, 2, &|_| true));
        if let Some(g) = gaps.get_mut(3) {
            g.settled = true;
        }
        assert!(gaps.open(FrameNumber::new(99), 0, 500, 2, 2, &|_| true));
        assert_eq!(gaps.containing(30), None);
        assert_eq!(gaps.expired(10, 5).count(), GAPS_KEPT);
    }
}
