//! Retransmit episodes: a maximal run of retransmitted packets of one flow, with what
//! triggered it and how the sender resent.
//!
//! Trigger: a PSN-sequence-error NAK or an RNR NAK carried by the peer flow since the flow's
//! previous episode (go-back-N after NAK / after RNR); for READ responses, a READ request the
//! peer re-issued; else a timeout when the sender was silent for at least the minimum ACK
//! timeout before it (it resent on its own timer), or `no_nak` when the silence was shorter
//! (the NAK that caused it is not in the capture). Pattern: `go_back_n` when the resent
//! PSNs run contiguously from the first resent one to the highest PSN sent before the episode,
//! or in passes that each go up to it again, a PSN a pass skipped that a later pass begins at
//! or before being a resend lost before the tap (the receiver asked for it again);
//! `selective` when every resent PSN was a hole the tap saw skipped; `partial` otherwise.

use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use serde::Serialize;

use rocescope_parsers::psn::{psn_add, psn_diff};

use crate::analyze::id::{FlowId, Space};
use crate::analyze::roce::flow::sequence::Decision;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Renumber)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    NakPsnSeqErr,
    RnrNak,
    /// READ responses sent again for a re-issued READ request.
    Reread,
    /// A READ request re-issued after a gap in its responses.
    ResponseGap,
    Timeout,
    /// No NAK in the capture and too short a silence for a timeout.
    NoNak,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Renumber)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    GoBackN,
    Selective,
    Partial,
}

impl Trigger {
    pub fn name(self) -> &'static str {
        match self {
            Trigger::NakPsnSeqErr => "nak_psn_seq_err",
            Trigger::RnrNak => "rnr_nak",
            Trigger::Reread => "reread",
            Trigger::ResponseGap => "response_gap",
            Trigger::Timeout => "timeout",
            Trigger::NoNak => "no_nak",
        }
    }
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::GoBackN => "go_back_n",
            Pattern::Selective => "selective",
            Pattern::Partial => "partial",
        }
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, Renumber)]
pub struct Episode {
    pub flow: FlowId,
    pub space: Space,
    pub start_frame: FrameNumber,
    pub end_frame: FrameNumber,
    pub start_ts_ns: i64,
    pub end_ts_ns: i64,
    pub first_psn: u32,
    pub last_psn: u32,
    pub packets: u64,
    /// The highest PSN the flow had sent before the episode.
    pub highest_sent_psn: u32,
    pub trigger: Trigger,
    /// The NAK, RNR NAK or re-issued READ that triggered the episode.
    pub trigger_frame: Option<FrameNumber>,
    /// Time from the triggering NAK (or re-issued READ) to the first resent packet.
    pub nak_to_resend_ns: Option<i64>,
    /// The RNR NAK's timer.
    pub rnr_delay_us: Option<u32>,
    /// Time without a sequenced packet before the episode (for timeouts and `no_nak`).
    pub idle_before_ns: Option<i64>,
    /// Time from the gap that skipped the first resent PSN to its resend.
    pub gap_to_recovery_ns: Option<i64>,
    pub pattern: Pattern,
    /// What told its first resent packet from a late arrival.
    pub decided_by: Decision,
}

/// The retransmit episode a PSN space is in: its place in the analysis's list of episodes, and
/// what its resent packets so far say of its pattern, decided when it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct OpenEpisode {
    pub index: usize,
    /// Every resent PSN followed the one before.
    contiguous: bool,
    /// Every resent PSN was a hole the tap saw skipped.
    all_holes: bool,
    passes: Passes,
}

/// The resent PSNs as go-back-N passes: each runs up from where it began, a pass beginning
/// again at or before the last PSN resent (IBA §9.7.5.1.5: a requester answering a NAK resends
/// from the PSN it names, whatever it was resending). A PSN a pass skipped that the next pass
/// begins at or before was resent and lost before the tap: the receiver, still lacking it,
/// asked for it again. One no later pass asked for may have reached the receiver unseen (the
/// mirror missed it, or a NAK of a later PSN moved the pass on), and is not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
struct Passes {
    /// Every pass so far ran up, with fewer PSNs skipped than resent, and began at or before
    /// the first PSN the pass before skipped.
    each_runs_up: bool,
    resent: u32,
    skipped: u32,
    first_skipped: Option<u32>,
    /// PSNs skipped by the passes before the current one: resends lost before the tap.
    lost_resends: u32,
}

impl Passes {
    fn new() -> Self {
        Passes { each_runs_up: true, resent: 1, skipped: 0, first_skipped: None, lost_resends: 0 }
    }

    /// The next resent PSN, after `last`.
    fn next(&mut self, last: u32, psn: u32) {
        let ahead = psn_diff(psn, last);
        if ahead <= 0 {
            // a new pass: the one before ends
            self.each_runs_up &= self.skipped < self.resent;
            self.each_runs_up &= self.first_skipped.is_none_or(|s| psn_diff(psn, s) <= 0);
            let lost_resends = self.lost_resends + self.skipped;
            *self = Passes { each_runs_up: self.each_runs_up, lost_resends, ..Passes::new() };
            return;
        }
        let skipped = (ahead - 1) as u32;
        if skipped > 0 {
            self.first_skipped.get_or_insert(psn_add(last, 1));
        }
        self.skipped += skipped;
        self.resent += 1;
    }

    /// Were the passes go-back-N, the last one reaching `last` at the highest PSN sent?
    fn go_back_n(&self, reached_highest: bool) -> bool {
        self.each_runs_up && self.skipped < self.resent && reached_highest
    }
}

/// Why an episode began: its trigger, and the NAK, RNR NAK or re-issued READ that set it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cause {
    pub trigger: Trigger,
    pub frame: Option<FrameNumber>,
    pub ts_ns: Option<i64>,
    /// An RNR NAK's timer.
    pub rnr_delay_us: Option<u32>,
}

impl Cause {
    /// A trigger no frame of the capture set off (a timeout, or a NAK it does not hold).
    pub fn unseen(trigger: Trigger) -> Cause {
        Cause { trigger, frame: None, ts_ns: None, rnr_delay_us: None }
    }
}

/// The first resent packet of an episode.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct FirstResend {
    pub frame: FrameNumber,
    pub ts_ns: i64,
    pub psn: u32,
    /// The highest PSN the flow had sent before.
    pub highest_sent_psn: u32,
    /// Time without a sequenced packet before it.
    pub idle_before_ns: Option<i64>,
    /// When the gap that skipped its PSN was seen.
    pub hole_ts: Option<i64>,
}

impl Episode {
    pub fn start(flow: FlowId, first: FirstResend, cause: Cause) -> Self {
        let FirstResend { frame, ts_ns, psn, highest_sent_psn, idle_before_ns, hole_ts } = first;
        let Cause { trigger, frame: trigger_frame, ts_ns: trigger_ts, rnr_delay_us } = cause;
        Episode {
            flow,
            space: Space::Requests,
            start_frame: frame,
            end_frame: frame,
            start_ts_ns: ts_ns,
            end_ts_ns: ts_ns,
            first_psn: psn,
            last_psn: psn,
            packets: 1,
            highest_sent_psn,
            trigger,
            trigger_frame,
            nak_to_resend_ns: trigger_ts.map(|t| (ts_ns - t).max(0)),
            rnr_delay_us,
            idle_before_ns: if matches!(trigger, Trigger::Timeout | Trigger::NoNak) { idle_before_ns } else { None },
            gap_to_recovery_ns: hole_ts.map(|t| (ts_ns - t).max(0)),
            pattern: Pattern::Partial,
            decided_by: Decision::Psn,
        }
    }

    /// The episode resent in `space`.
    pub fn in_space(self, space: Space) -> Self {
        Episode { space, ..self }
    }

    pub fn decided_by(self, decided_by: Decision) -> Self {
        Episode { decided_by, ..self }
    }
}

impl OpenEpisode {
    /// The episode at `index` of the list, which `first` started.
    pub fn new(index: usize, first: &FirstResend) -> Self {
        OpenEpisode { index, contiguous: true, all_holes: first.hole_ts.is_some(), passes: Passes::new() }
    }

    /// Adds the next retransmitted packet to `episode`, this one.
    pub fn extend(&mut self, episode: &mut Episode, frame: FrameNumber, ts_ns: i64, psn: u32, in_hole: bool) {
        self.contiguous &= psn == psn_add(episode.last_psn, 1);
        self.all_holes &= in_hole;
        self.passes.next(episode.last_psn, psn);
        episode.last_psn = psn;
        episode.end_frame = frame;
        episode.end_ts_ns = ts_ns;
        episode.packets += 1;
    }

    /// Decides the pattern of `episode`, this one, now over; returns the resends its
    /// go-back-N passes lost before the tap (PSNs a pass skipped), to count as missing.
    pub fn close(self, episode: &mut Episode) -> u32 {
        let reached_highest = psn_diff(episode.last_psn, episode.highest_sent_psn) >= 0;
        let (pattern, lost) = if episode.space == Space::Responses {
            // responses are resent only as the answers to re-issued requests, which go back
            // from the first response missing (IBA §9.7.5.1.5); the PSNs between a re-read's
            // READ responses are other requests', answered by ACKs: skipping them is no gap
            (if reached_highest { Pattern::GoBackN } else { Pattern::Partial }, 0)
        } else if self.contiguous && reached_highest {
            (Pattern::GoBackN, 0)
        } else if self.all_holes {
            (Pattern::Selective, 0)
        } else if self.passes.go_back_n(reached_highest) {
            (Pattern::GoBackN, self.passes.lost_resends)
        } else {
            (Pattern::Partial, 0)
        };
        episode.pattern = pattern;
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(psns: &[u32], highest: u32, holes: &[u32]) -> Episode {
        let in_hole = |p: u32| holes.contains(&p);
        let first = psns[0];
        let resend = FirstResend {
            frame: FrameNumber::new(1),
            ts_ns: 0,
            psn: first,
            highest_sent_psn: highest,
            idle_before_ns: Some(5),
            hole_ts: in_hole(first).then_some(0),
        };
        let mut e = Episode::start(FlowId::new(0), resend, Cause::unseen(Trigger::Timeout));
        let mut open = OpenEpisode::new(0, &resend);
        for (i, &p) in psns.iter().enumerate().skip(1) {
            open.extend(&mut e, FrameNumber::new(i as u64 + 1), i as i64, p, in_hole(p));
        }
        open.close(&mut e);
        e
    }

    #[test]
    fn patterns() {
        assert_eq!(episode(&[10, 11, 12, 13], 13, &[10, 11]).pattern, Pattern::GoBackN);
        assert_eq!(episode(&[10, 11], 13, &[10, 11]).pattern, Pattern::Selective);
        assert_eq!(episode(&[10, 12], 13, &[10, 12]).pattern, Pattern::Selective);
        assert_eq!(episode(&[10, 11], 13, &[]).pattern, Pattern::Partial);
        assert_eq!(episode(&[0xFF_FFFF, 0, 1], 1, &[]).pattern, Pattern::GoBackN);
    }

    /// The pattern of an episode resending `psns` up to `highest` (no holes), and the resends
    /// it lost before the tap.
    fn passes(psns: &[u32], highest: u32) -> (Pattern, u32) {
        let resend = FirstResend {
            frame: FrameNumber::new(1),
            ts_ns: 0,
            psn: psns[0],
            highest_sent_psn: highest,
            idle_before_ns: None,
            hole_ts: None,
        };
        let mut e = Episode::start(FlowId::new(0), resend, Cause::unseen(Trigger::Timeout));
        let mut open = OpenEpisode::new(0, &resend);
        for (i, &p) in psns.iter().enumerate().skip(1) {
            open.extend(&mut e, FrameNumber::new(i as u64 + 1), i as i64, p, false);
        }
        let lost = open.close(&mut e);
        (e.pattern, lost)
    }

    #[test]
    fn go_back_n_in_passes_and_with_lost_resends() {
        // two passes, the second from a later NAK
        assert_eq!(passes(&[10, 11, 12, 13, 14, 12, 13, 14], 14), (Pattern::GoBackN, 0));
        // a pass cut short by a NAK for a PSN it had resent
        assert_eq!(passes(&[10, 11, 12, 11, 12, 13, 14], 14), (Pattern::GoBackN, 0));
        // 12's resend lost before the tap; the next pass begins at it
        assert_eq!(passes(&[10, 11, 13, 14, 12, 13, 14], 14), (Pattern::GoBackN, 1));
        // the last pass skips 13, which no pass asked for again: the mirror may have missed
        // it, or a NAK of 14 moved the pass on (13 had arrived late)
        assert_eq!(passes(&[10, 11, 12, 14], 14), (Pattern::GoBackN, 0));
        // the next pass begins after the PSN skipped: not go-back-N
        assert_eq!(passes(&[10, 11, 13, 14, 13, 14], 14), (Pattern::Partial, 0));
        // more skipped than resent, or short of the highest
        assert_eq!(passes(&[10, 14], 14), (Pattern::Partial, 0));
        assert_eq!(passes(&[10, 11, 12], 14), (Pattern::Partial, 0));
    }

    #[test]
    fn a_re_read_runs_up_over_the_psns_other_requests_took() {
        let resend = FirstResend {
            frame: FrameNumber::new(1),
            ts_ns: 0,
            psn: 10,
            highest_sent_psn: 30,
            idle_before_ns: None,
            hole_ts: None,
        };
        let pattern = |psns: &[u32]| {
            let mut e =
                Episode::start(FlowId::new(0), resend, Cause::unseen(Trigger::Reread)).in_space(Space::Responses);
            let mut open = OpenEpisode::new(0, &resend);
            for (i, &p) in psns.iter().enumerate() {
                open.extend(&mut e, FrameNumber::new(i as u64 + 2), i as i64, p, false);
            }
            (open.close(&mut e), e.pattern)
        };
        // 12..=28 were a WRITE's, which the responder answered with an ACK
        assert_eq!(pattern(&[11, 29, 30]), (0, Pattern::GoBackN));
        assert_eq!(pattern(&[11, 29]), (0, Pattern::Partial));
    }

    #[test]
    fn timing_fields() {
        let resend = FirstResend {
            frame: FrameNumber::new(7),
            ts_ns: 1_000,
            psn: 5,
            highest_sent_psn: 9,
            idle_before_ns: Some(900),
            hole_ts: Some(100),
        };
        let nak = Cause {
            trigger: Trigger::NakPsnSeqErr,
            frame: Some(FrameNumber::new(4)),
            ts_ns: Some(400),
            rnr_delay_us: None,
        };
        let e = Episode::start(FlowId::new(3), resend, nak);
        assert_eq!((e.nak_to_resend_ns, e.idle_before_ns, e.gap_to_recovery_ns), (Some(600), None, Some(900)));
        let e =
            Episode::start(FlowId::new(3), FirstResend { hole_ts: None, ..resend }, Cause::unseen(Trigger::Timeout));
        assert_eq!((e.idle_before_ns, e.gap_to_recovery_ns), (Some(900), None));
    }
}
