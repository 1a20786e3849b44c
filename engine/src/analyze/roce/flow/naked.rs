//! The NAKs a PSN space has seen, and the copies of NAKed holes waiting for the evidence that
//! tells a late original from its resend (docs/analysis.md, "Reordering").
//!
//! After a PSN-sequence NAK for PSN h, a responsive sender resends h. Had h's original only
//! been late, the tap sees two copies of h after the gap (the late original, then the
//! resend); had it been lost, one. So the first copy of a NAKed hole waits: a second copy
//! makes it a late arrival; the sender resending a later PSN, or its wait ending without a
//! second copy, makes it the resend. The wait is as long as the flow's own round trips say a
//! sender may take to answer (a busy sender answers a NAK 25–30 µs later, past a 20 µs reorder
//! window), and a copy sooner after its NAK than half the fastest resend the flow has shown
//! could not have been sent in answer to it. Only where the capture ends before the wait does
//! the NAK reaction time decide.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use std::collections::VecDeque;

use rocescope_parsers::psn::psn_diff;

use crate::analyze::roce::flow::arrival::Arrival;

/// PSN-sequence NAKs a space remembers (those of the longest wait); beyond, the oldest is
/// forgotten.
pub const NAKS_REMEMBERED: usize = 64;

/// A copy waits at most this many reorder windows after its NAK (160 µs by default): below
/// the 200 µs a NIC's adaptive retransmission waits at the least, so a second resend after a
/// timeout is never taken for the resend of a late original.
pub const COPY_WAIT_WINDOWS: i64 = 8;

/// What a PSN space has measured of how its sender answers (docs/analysis.md, "Reordering").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct AnswerTimes {
    /// The fastest and slowest NAK-to-resend delays of resends the capture proves (a PSN seen
    /// before, the second of two copies, or a copy go-back-N resent past).
    fastest_resend_ns: Option<i64>,
    slowest_resend_ns: Option<i64>,
    /// The slowest ACK round trip: a request to the ACK covering it.
    slowest_ack_ns: Option<i64>,
}

impl AnswerTimes {
    /// A resend came `delay_ns` after the NAK it answered.
    pub fn resend(&mut self, delay_ns: i64) {
        self.fastest_resend_ns = Some(self.fastest_resend_ns.map_or(delay_ns, |f| f.min(delay_ns)));
        self.slowest_resend_ns = self.slowest_resend_ns.max(Some(delay_ns));
    }

    /// A request was acknowledged `rtt_ns` after it was sent.
    pub fn ack(&mut self, rtt_ns: i64) {
        self.slowest_ack_ns = self.slowest_ack_ns.max(Some(rtt_ns));
    }

    /// How long after its NAK a copy of a NAKed hole waits for a second copy: twice the
    /// slowest round trip measured (a resend or an ACK), at least one reorder window (all
    /// there is with nothing measured) and at most [`COPY_WAIT_WINDOWS`] windows.
    pub fn copy_wait_ns(&self, window_ns: i64) -> i64 {
        let most = window_ns.saturating_mul(COPY_WAIT_WINDOWS).max(window_ns);
        let round_trip = self.slowest_resend_ns.max(self.slowest_ack_ns).unwrap_or(0);
        round_trip.saturating_mul(2).clamp(window_ns, most)
    }

    /// Could a copy `delay_ns` after its NAK have been sent in answer to it? Not when it came
    /// sooner than half the fastest resend the space has shown.
    pub fn could_answer(&self, delay_ns: i64) -> bool {
        self.fastest_resend_ns.is_none_or(|fastest| delay_ns >= fastest / 2)
    }
}

/// What both measured, added or grafted (the samples of the parts before and of the part: the
/// part's measures since its start are among its own, and their extremes are the whole's).
impl Combine for AnswerTimes {
    fn add(&mut self, other: &AnswerTimes) -> Result<(), Refused> {
        let fastest = match (self.fastest_resend_ns, other.fastest_resend_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        *self = AnswerTimes {
            fastest_resend_ns: fastest,
            slowest_resend_ns: self.slowest_resend_ns.max(other.slowest_resend_ns),
            slowest_ack_ns: self.slowest_ack_ns.max(other.slowest_ack_ns),
        };
        Ok(())
    }

    fn graft(&mut self, _: &AnswerTimes, end: AnswerTimes, _: &Seam) -> Result<(), Refused> {
        self.add(&end)
    }
}

/// A PSN-sequence NAK naming a PSN of this space, and whether that PSN came again since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct NakSeen {
    pub psn: u32,
    pub ts_ns: i64,
    pub resent: bool,
}

/// The first copy of a NAKed hole, waiting for a second copy or for its wait to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct AwaitingCopy {
    pub arrival: Arrival,
    pub depth: u32,
    pub expected_before: Option<u32>,
    /// When the NAK naming it was seen.
    pub nak_ts_ns: i64,
    /// When its wait ends ([`AnswerTimes::copy_wait_ns`] after the NAK).
    pub until_ns: i64,
    /// A later packet of the space was decided while it waited (it is decided out of order).
    pub overtaken: bool,
}

/// The NAKs of the longest wait and the copies waiting, of one PSN space.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct NakedHoles {
    naks: VecDeque<NakSeen>,
    awaiting: Vec<AwaitingCopy>,
    /// Copies that waited so far.
    pub copies_waited: u64,
}

impl NakedHoles {
    pub fn on_nak(&mut self, psn: u32, ts_ns: i64) {
        if self.naks.len() == NAKS_REMEMBERED {
            self.naks.pop_front();
        }
        self.naks.push_back(NakSeen { psn, ts_ns, resent: false });
    }

    /// A packet of PSN `psn` arrived at `ts_ns`: the NAKs naming it were answered, and those
    /// older than `oldest_ns` can no longer bear on a hole or a wait. Returns how long after
    /// the first NAK naming it not answered before it came.
    pub fn saw(&mut self, psn: u32, ts_ns: i64, oldest_ns: i64) -> Option<i64> {
        if self.naks.is_empty() {
            return None;
        }
        while self.naks.front().is_some_and(|n| n.ts_ns < oldest_ns) {
            self.naks.pop_front();
        }
        let mut delay = None;
        for n in self.naks.iter_mut().filter(|n| n.psn == psn && ts_ns >= n.ts_ns && !n.resent) {
            n.resent = true;
            delay = delay.or(Some(ts_ns - n.ts_ns));
        }
        delay
    }

    /// When the latest NAK naming `psn`, sent at or after `since_ns`, was seen.
    pub fn naming(&self, psn: u32, since_ns: i64) -> Option<i64> {
        self.naks.iter().rev().find(|n| n.psn == psn && n.ts_ns >= since_ns).map(|n| n.ts_ns)
    }

    /// Has go-back-N begun below `psn`: did a NAK sent at or after `since_ns` name an earlier
    /// PSN that came again since?
    pub fn resend_began_before(&self, psn: u32, since_ns: i64) -> bool {
        self.naks.iter().any(|n| n.ts_ns >= since_ns && n.resent && psn_diff(n.psn, psn) < 0)
    }

    pub fn wait(&mut self, copy: AwaitingCopy) {
        self.copies_waited += 1;
        self.awaiting.push(copy);
    }

    pub fn is_waiting(&self) -> bool {
        !self.awaiting.is_empty()
    }

    /// Does a copy of a PSN in `first` … `first + span − 1` wait?
    pub fn waits_in(&self, first: u32, span: u32) -> bool {
        let distance = rocescope_parsers::psn::psn_forward_distance;
        self.awaiting.iter().any(|c| distance(c.arrival.psn, first) < span)
    }

    /// The waiting copy of `psn`, taken out (its second copy has come).
    pub fn take_copy_of(&mut self, psn: u32) -> Option<AwaitingCopy> {
        let i = self.awaiting.iter().position(|c| c.arrival.psn == psn)?;
        Some(self.awaiting.remove(i))
    }

    /// The waiting copies of PSNs before `psn`, taken out (the sender resent past them).
    pub fn take_before(&mut self, psn: u32) -> Vec<AwaitingCopy> {
        self.take_where(|c| psn_diff(c.arrival.psn, psn) < 0)
    }

    /// The waiting copies whose wait ended before `now_ns`.
    pub fn take_due(&mut self, now_ns: i64) -> Vec<AwaitingCopy> {
        self.take_where(|c| now_ns > c.until_ns)
    }

    /// Every waiting copy, taken out.
    pub fn take_all(&mut self) -> Vec<AwaitingCopy> {
        std::mem::take(&mut self.awaiting)
    }

    fn take_where(&mut self, take: impl Fn(&AwaitingCopy) -> bool) -> Vec<AwaitingCopy> {
        if self.awaiting.is_empty() {
            return Vec::new();
        }
        let (taken, kept) = std::mem::take(&mut self.awaiting).into_iter().partition(take);
        self.awaiting = kept;
        taken
    }

    /// Frame `frame` was decided: every copy waiting from an earlier frame is decided out of
    /// order.
    pub fn overtake_before(&mut self, frame: FrameNumber) {
        self.awaiting.iter_mut().filter(|c| c.arrival.frame < frame).for_each(|c| c.overtaken = true);
    }

    /// Does a copy of a PSN before `psn` wait?
    pub fn waits_before(&self, psn: u32) -> bool {
        self.awaiting.iter().any(|c| psn_diff(c.arrival.psn, psn) < 0)
    }

    pub fn has_copy_of(&self, psn: u32) -> bool {
        self.awaiting.iter().any(|c| c.arrival.psn == psn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(psn: u32, nak_ts_ns: i64) -> AwaitingCopy {
        let arrival = Arrival { frame: FrameNumber::new(u64::from(psn)), ts_ns: nak_ts_ns + 1, psn };
        AwaitingCopy { arrival, depth: 1, expected_before: None, nak_ts_ns, until_ns: nak_ts_ns + 5, overtaken: false }
    }

    #[test]
    fn naks_are_answered_by_their_psn_and_forgotten_after_a_window() {
        let mut n = NakedHoles::default();
        n.on_nak(10, 100);
        n.on_nak(20, 200);
        assert_eq!((n.naming(10, 50), n.naming(10, 150), n.naming(20, 150)), (Some(100), None, Some(200)));
        assert!(!n.resend_began_before(30, 0));
        assert_eq!(n.saw(10, 300, 0), Some(200), "answered 200 ns after its NAK");
        assert!(n.resend_began_before(30, 0) && !n.resend_began_before(10, 0));
        assert_eq!(n.saw(10, 350, 0), None, "answered already");
        n.saw(11, 400, 150);
        assert_eq!(n.naming(10, 0), None, "older than the window");
    }

    #[test]
    fn waiting_copies_leave_by_psn_or_when_due() {
        let mut n = NakedHoles::default();
        for (psn, ts) in [(5, 0), (9, 10), (15, 20)] {
            n.wait(copy(psn, ts));
        }
        assert!(n.waits_in(8, 2) && !n.waits_in(10, 5));
        assert_eq!(n.take_copy_of(9).map(|c| c.arrival.psn), Some(9));
        assert_eq!(n.take_before(15).len(), 1);
        assert!(n.take_due(25).is_empty());
        n.overtake_before(FrameNumber::new(16));
        assert!(n.has_copy_of(15));
        let due = n.take_due(26);
        assert_eq!((due.len(), due[0].overtaken, n.is_waiting()), (1, true, false));
    }

    #[test]
    fn a_copy_waits_twice_the_slowest_round_trip_within_bounds() {
        let window = 20_000;
        let mut a = AnswerTimes::default();
        assert_eq!(a.copy_wait_ns(window), window, "nothing measured: one window");
        assert!(a.could_answer(0), "nothing measured: any delay");
        a.ack(5_000);
        assert_eq!(a.copy_wait_ns(window), window, "never below one window");
        a.resend(28_000);
        a.resend(26_000);
        assert_eq!(a.copy_wait_ns(window), 56_000);
        assert!(!a.could_answer(12_999) && a.could_answer(13_000));
        a.ack(500_000);
        assert_eq!(a.copy_wait_ns(window), 160_000, "never above the longest wait");
    }
}
