//! One PSN space of a flow: the requests one side sends, or the READ responses it returns to
//! the other side's requests (docs/analysis.md, "PSN sequence" and "Reordering").
//!
//! A packet at the expected PSN e is in order; one ahead of e opens a gap whose holes are the
//! PSNs it skipped; one behind e is a retransmission, unless it is the first appearance of a
//! hole, which may be a late arrival (reordering): that is decided when the run of first
//! appearances it belongs to ends, or when its reorder window has passed. A gap's missing PSNs
//! are its holes no late arrival filled, and are counted once the gap is settled (its holes'
//! fate decided); a gap all of whose holes came late is a reorder event instead.

use rocescope_parsers::psn::{PSN_HALF, psn_add, psn_diff, psn_forward_distance};

use super::gaps::Gaps;

/// How a sequenced packet relates to its PSN space's expected PSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SeqClass {
    First,
    InOrder,
    /// PSNs were skipped and `missing` of them never arrived.
    Gap {
        missing: u32,
    },
    /// The packet skipped PSNs that all arrived late: a reorder event.
    Ahead,
    /// The first appearance of a skipped PSN, late but not resent.
    LateArrival,
    Retransmission,
}

impl SeqClass {
    pub fn name(self) -> &'static str {
        match self {
            SeqClass::First => "first",
            SeqClass::InOrder => "in_order",
            SeqClass::Gap { .. } => "gap",
            SeqClass::Ahead => "ahead",
            SeqClass::LateArrival => "late_arrival",
            SeqClass::Retransmission => "retransmission",
        }
    }

    /// Sent for the first time (everything but a retransmission).
    pub fn is_new(self) -> bool {
        self != SeqClass::Retransmission
    }
}

/// The reordering parameters (`--reorder-window-us`, `--nak-reaction-us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReorderConfig {
    /// A skipped PSN arriving at most this long after the packet that skipped it may be late.
    pub window_ns: i64,
    /// No sender answers a NAK faster: a copy of the NAKed PSN this long after it is a resend.
    pub nak_reaction_ns: i64,
}

impl Default for ReorderConfig {
    fn default() -> Self {
        ReorderConfig { window_ns: 20_000, nak_reaction_ns: 5_000 }
    }
}

/// The IBA path MTUs a READ's response count can be based on.
pub const PMTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// PSNs an RDMA READ of `dma_len` bytes consumes at `pmtu`.
pub fn read_psns(dma_len: u32, pmtu: u32) -> u32 {
    dma_len.div_ceil(pmtu.max(1)).max(1)
}

/// Which PSNs a gap skips over are holes (packets that should have come), and how many.
pub trait Holes {
    fn is_hole(&self, psn: u32) -> bool;
    /// Holes among the `span` PSNs from `first`.
    fn count(&self, first: u32, span: u32) -> u32;
}

/// Every skipped PSN is a hole (a requester's PSN space).
pub struct EveryPsn;

impl Holes for EveryPsn {
    fn is_hole(&self, _: u32) -> bool {
        true
    }

    fn count(&self, _: u32, span: u32) -> u32 {
        span
    }
}

/// Where the expected PSN goes after a packet sent for the first time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Next {
    /// The packet consumed this many PSNs (1, or a READ's response count).
    Consumed(u32),
    /// A READ of this many bytes with the path MTU unknown: whichever PMTU explains the next
    /// PSN.
    ReadOfUnknownPmtu(u32),
    /// The space's owner sets it before each packet (a response space).
    Owner,
}

/// How a PSN space classifies the packet at hand.
pub struct Rules<'a> {
    pub holes: &'a dyn Holes,
    /// A PSN ahead of the expected one is in order rather than a gap.
    pub ahead_in_order: bool,
    pub next: Next,
}

/// A sequenced packet as the PSN space sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Arrival {
    pub frame: u64,
    pub ts_ns: i64,
    pub psn: u32,
}

/// A packet's class, once decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Observation {
    pub arrival: Arrival,
    pub class: SeqClass,
    /// This retransmission starts a new episode.
    pub episode_start: bool,
    /// This new packet ends the episode that was running.
    pub episode_end: bool,
    /// The expected PSN when the packet arrived (None for the first).
    pub expected_before: Option<u32>,
    /// A gap whose missing count waits for its holes' fate ([`SeqEvent::GapSettled`]).
    pub gap_open: bool,
}

/// What a PSN space decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SeqEvent {
    Packet(Observation),
    /// The gap opened by `frame` is settled with `missing` holes never filled (0: a reorder
    /// event), of which `capture_missed` were acknowledged by the responder by then.
    GapSettled {
        frame: u64,
        ts_ns: i64,
        first_psn: u32,
        missing: u32,
        capture_missed: u32,
    },
}

/// Reordering counters of a PSN space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReorderCounts {
    pub late_arrivals: u64,
    pub reorder_events: u64,
    /// The largest e − h over late arrivals (e the expected PSN when hole h arrived).
    pub depth_max: u32,
    /// The longest time from a gap to a late arrival that filled one of its holes.
    pub delay_ns_max: i64,
    /// PSN-sequence NAKs naming a hole that a late arrival filled.
    pub reorder_naks: u64,
}

/// A first appearance of a hole waiting for its run to end.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct RunMember {
    arrival: Arrival,
    gap: usize,
    /// (a) and (c) hold: late if (b) does.
    may_be_late: bool,
    depth: u32,
    expected_before: Option<u32>,
}

/// The last PSN-sequence NAK naming this space's PSNs, and whether its PSN came again since.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct NakSeen {
    psn: u32,
    ts_ns: i64,
    resent: bool,
}

/// Run members a space holds at most; beyond, the run is decided early.
pub const RUN_KEPT: usize = 1024;

/// Sequence state of one PSN space.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Sequence {
    expected: Option<u32>,
    /// After a READ with an unknown PMTU: the expected PSNs each PMTU would give.
    read_alternatives: Option<[u32; 5]>,
    in_episode: bool,
    gap_list: Gaps,
    run: Vec<RunMember>,
    run_deadline_ns: Option<i64>,
    nak: Option<NakSeen>,
    pub first_psn: Option<u32>,
    pub sequenced: u64,
    pub gaps: u64,
    pub missing_psns: u64,
    /// Holes the responder got and only the capture missed ([`Sequence::on_ack`]).
    pub capture_missed: u64,
    pub retransmitted: u64,
    pub retransmit_episodes: u64,
    pub reorder: ReorderCounts,
}

impl Sequence {
    /// The highest PSN sent so far (e − 1).
    pub fn highest(&self) -> Option<u32> {
        self.expected.map(|e| psn_add(e, 0xFF_FFFF))
    }

    pub fn expected(&self) -> Option<u32> {
        self.expected
    }

    /// Does a decision wait for a reorder window to pass?
    pub fn waits(&self) -> bool {
        self.run_deadline_ns.is_some() || self.gap_list.unsettled().next().is_some()
    }

    /// Sets the expected PSN (a response space follows its peer's READ requests).
    pub fn set_expected(&mut self, e: Option<u32>) {
        self.expected = e;
    }

    /// Is an episode running (the last decided packet was a retransmission)?
    pub fn in_episode(&self) -> bool {
        self.in_episode
    }

    /// Are packets waiting for a decision?
    pub fn holds_packets(&self) -> bool {
        !self.run.is_empty()
    }

    /// Was `psn` skipped by a remembered gap? Returns the gap's opening time.
    pub fn hole_of(&self, psn: u32) -> Option<i64> {
        self.gap_list.containing(psn).and_then(|i| self.gap_list.get(i)).map(|g| g.ts_ns)
    }

    /// Takes a sequenced packet. Decided packets (this one, and earlier ones it decides) are
    /// appended to `out` in arrival order; returns true when this packet waits for a decision.
    pub fn observe(&mut self, a: Arrival, rules: &Rules<'_>, config: &ReorderConfig, out: &mut Vec<SeqEvent>) -> bool {
        self.sequenced += 1;
        if let (Some(alternatives), Some(e)) = (self.read_alternatives.take(), self.expected)
            && alternatives.contains(&a.psn)
            && a.psn != e
        {
            self.expected = Some(a.psn);
        }
        let hole = self.unseen_hole(a.psn);
        if hole.is_none() && !self.run.is_empty() {
            // (b): the run ends; its packets were late if this one is new.
            let new = self.expected.is_none_or(|e| psn_forward_distance(a.psn, e) < PSN_HALF);
            self.resolve_run(new, out);
        }
        let held = match hole {
            Some(gap) => self.hole_appears(a, gap, config, out),
            None => {
                self.classify(a, rules, out);
                false
            }
        };
        if let Some(n) = &mut self.nak
            && n.psn == a.psn
            && a.ts_ns >= n.ts_ns
        {
            n.resent = true;
        }
        held
    }

    fn unseen_hole(&self, psn: u32) -> Option<usize> {
        self.gap_list.containing(psn).filter(|&i| self.gap_list.get(i).is_some_and(|g| g.is_unseen_hole(psn)))
    }

    /// A packet that is not the first appearance of a hole.
    fn classify(&mut self, a: Arrival, rules: &Rules<'_>, out: &mut Vec<SeqEvent>) {
        let expected_before = self.expected;
        if self.first_psn.is_none() {
            self.first_psn = Some(a.psn);
            out.push(SeqEvent::Packet(self.apply(a, SeqClass::First, expected_before, false)));
            self.advance(a.psn, rules.next);
            return;
        }
        let (class, gap_open) = match self.expected {
            None => (SeqClass::InOrder, false),
            Some(e) if a.psn == e => (SeqClass::InOrder, false),
            Some(e) => {
                let ahead = psn_forward_distance(a.psn, e);
                if ahead >= PSN_HALF {
                    (SeqClass::Retransmission, false)
                } else {
                    match rules.holes.count(e, ahead) {
                        _ if rules.ahead_in_order => (SeqClass::InOrder, false),
                        0 => (SeqClass::InOrder, false),
                        missing => (SeqClass::Gap { missing }, self.open_gap(a, e, ahead, missing, rules.holes)),
                    }
                }
            }
        };
        out.push(SeqEvent::Packet(self.apply(a, class, expected_before, gap_open)));
        if class.is_new() {
            self.advance(a.psn, rules.next);
        }
    }

    /// Remembers a gap; returns whether its holes' fate is open. A gap too wide to track, or
    /// that finds no room, is counted at once.
    fn open_gap(&mut self, a: Arrival, e: u32, span: u32, missing: u32, holes: &dyn Holes) -> bool {
        let open = self.gap_list.open(a.frame, a.ts_ns, e, span, missing, &|p| holes.is_hole(p));
        if !open {
            self.gaps += 1;
            self.missing_psns += u64::from(missing);
        }
        open
    }

    fn advance(&mut self, psn: u32, next: Next) {
        match next {
            Next::Consumed(n) => self.expected = Some(psn_add(psn, n)),
            Next::ReadOfUnknownPmtu(dma_len) => {
                self.read_alternatives = Some(PMTUS.map(|m| psn_add(psn, read_psns(dma_len, m))));
                self.expected = Some(psn_add(psn, read_psns(dma_len, 4096)));
            }
            Next::Owner => {}
        }
    }

    /// Updates the retransmission and episode counters for a decided packet.
    fn apply(&mut self, a: Arrival, class: SeqClass, expected_before: Option<u32>, gap_open: bool) -> Observation {
        let mut o =
            Observation { arrival: a, class, episode_start: false, episode_end: false, expected_before, gap_open };
        if class == SeqClass::Retransmission {
            self.retransmitted += 1;
            if !self.in_episode {
                self.in_episode = true;
                self.retransmit_episodes += 1;
                o.episode_start = true;
            }
        } else {
            o.episode_end = std::mem::take(&mut self.in_episode);
        }
        o
    }

    /// The first appearance of a hole of gap `index`: decided now when it cannot be late and
    /// nothing waits before it, else held in the run.
    fn hole_appears(&mut self, a: Arrival, index: usize, config: &ReorderConfig, out: &mut Vec<SeqEvent>) -> bool {
        let expected_before = self.expected;
        let resend_began = self.resend_began(a, index, config);
        let Some(gap) = self.gap_list.get_mut(index) else { return false };
        if let Some(o) = gap.offset(a.psn) {
            gap.seen.set(o);
            // a hole taken for a capture miss appears after all: what it is is decided again
            if gap.captured.get(o) {
                gap.captured.clear(o);
                gap.missing += 1;
                self.capture_missed = self.capture_missed.saturating_sub(1);
                if gap.settled {
                    self.missing_psns += 1;
                }
            }
        }
        // (a): within the reorder window of the packet that opened the gap; (c): no resend
        // covering it has begun.
        let may_be_late = !gap.settled && a.ts_ns.saturating_sub(gap.ts_ns) <= config.window_ns && !resend_began;
        let deadline = gap.ts_ns.saturating_add(config.window_ns);
        if !may_be_late && self.run.is_empty() {
            out.push(SeqEvent::Packet(self.apply(a, SeqClass::Retransmission, expected_before, false)));
            self.settle_if_complete(index, out);
            return false;
        }
        if may_be_late {
            self.run_deadline_ns = Some(self.run_deadline_ns.map_or(deadline, |d| d.min(deadline)));
        }
        let depth = expected_before.map_or(0, |e| psn_forward_distance(e, a.psn));
        self.run.push(RunMember { arrival: a, gap: index, may_be_late, depth, expected_before });
        if self.run.len() >= RUN_KEPT {
            self.resolve_run(true, out);
        }
        true
    }

    /// (c) fails: a PSN-sequence NAK sent after the gap opened names a PSN n at or before
    /// `a.psn`, and either n itself came again since (go-back-N from n has begun), or n is this
    /// PSN and the NAK came more than the NAK reaction time before it.
    fn resend_began(&self, a: Arrival, index: usize, config: &ReorderConfig) -> bool {
        let (Some(n), Some(gap)) = (self.nak, self.gap_list.get(index)) else { return false };
        if n.ts_ns < gap.ts_ns || psn_diff(n.psn, a.psn) > 0 {
            return false;
        }
        if n.psn == a.psn { a.ts_ns.saturating_sub(n.ts_ns) > config.nak_reaction_ns } else { n.resent }
    }

    /// Decides every packet of the run: late arrivals if `late` (and they may be), else
    /// retransmissions.
    fn resolve_run(&mut self, late: bool, out: &mut Vec<SeqEvent>) {
        self.run_deadline_ns = None;
        let run = std::mem::take(&mut self.run);
        for m in &run {
            let class = if late && m.may_be_late { SeqClass::LateArrival } else { SeqClass::Retransmission };
            if class == SeqClass::LateArrival {
                self.fill(m);
            }
            out.push(SeqEvent::Packet(self.apply(m.arrival, class, m.expected_before, false)));
        }
        for m in &run {
            self.settle_if_complete(m.gap, out);
        }
    }

    /// A late arrival fills its hole.
    fn fill(&mut self, m: &RunMember) {
        let Some(gap) = self.gap_list.get_mut(m.gap) else { return };
        let Some(o) = gap.offset(m.arrival.psn) else { return };
        gap.late.set(o);
        gap.missing = gap.missing.saturating_sub(1);
        let r = &mut self.reorder;
        r.late_arrivals += 1;
        r.depth_max = r.depth_max.max(m.depth);
        r.delay_ns_max = r.delay_ns_max.max(m.arrival.ts_ns.saturating_sub(gap.ts_ns));
        if gap.naked.get(o) {
            r.reorder_naks += 1;
        }
    }

    /// Settles a gap whose holes have all appeared (nothing can change it any more).
    fn settle_if_complete(&mut self, index: usize, out: &mut Vec<SeqEvent>) {
        if self.gap_list.get(index).is_some_and(|g| !g.settled && g.all_seen()) && self.run.is_empty() {
            self.settle(index, out);
        }
    }

    fn settle(&mut self, index: usize, out: &mut Vec<SeqEvent>) {
        let Some(gap) = self.gap_list.get_mut(index) else { return };
        gap.settled = true;
        // the frame's gap counts every PSN the capture lacks, the responder's or not
        let capture_missed = (0..gap.span).filter(|&o| gap.captured.get(o)).count() as u32;
        let lacking = gap.missing + capture_missed;
        if lacking > 0 {
            self.gaps += 1;
            self.missing_psns += u64::from(gap.missing);
        } else {
            self.reorder.reorder_events += 1;
        }
        let (frame, ts_ns, first_psn) = (gap.frame, gap.ts_ns, gap.first_psn);
        out.push(SeqEvent::GapSettled { frame, ts_ns, first_psn, missing: lacking, capture_missed });
    }

    /// Capture time has reached `now_ns`: decides what a reorder window that has passed
    /// decides.
    pub fn expire(&mut self, now_ns: i64, config: &ReorderConfig, out: &mut Vec<SeqEvent>) {
        if self.run_deadline_ns.is_some_and(|d| now_ns > d) {
            self.resolve_run(true, out);
        }
        if self.run.is_empty() {
            let expired: Vec<usize> = self.gap_list.expired(now_ns, config.window_ns).collect();
            for index in expired {
                self.settle(index, out);
            }
        }
    }

    /// The end of the capture: every reorder window has passed.
    pub fn finish(&mut self, out: &mut Vec<SeqEvent>) {
        self.resolve_run(true, out);
        let open: Vec<usize> = self.gap_list.unsettled().collect();
        for index in open {
            self.settle(index, out);
        }
    }

    /// The peer sent a PSN-sequence NAK naming `psn` (the PSN it expected).
    pub fn on_nak(&mut self, psn: u32, ts_ns: i64) {
        self.nak = Some(NakSeen { psn, ts_ns, resent: false });
        let Some(gap) = self.gap_list.containing(psn).and_then(|i| self.gap_list.get_mut(i)) else { return };
        gap.nak = true;
        let Some(o) = gap.offset(psn) else { return };
        if gap.late.get(o) {
            self.reorder.reorder_naks += 1;
        } else if !gap.settled {
            gap.naked.set(o);
        }
    }
}

impl Sequence {
    /// The peer acknowledged every PSN up to `psn` (an AETH with the ACK syndrome; IBA
    /// §9.7.5.1.1: a responder ACKs a PSN only when it holds every PSN before it). Holes of a
    /// remembered gap at or before `psn` that no NAK of the gap named and that were not resent
    /// reached the responder: only the capture missed them. They leave `missing_psns` for
    /// `capture_missed` (a gap too wide to track holes of, over [`super::gaps::TRACKED_SPAN`],
    /// stays missing).
    pub fn on_ack(&mut self, psn: u32) {
        let mut found = 0u64;
        for gap in self.gap_list.iter_mut().filter(|g| g.tracked && !g.nak) {
            // the offsets the ACK covers that no ACK covered before
            let reach = psn_forward_distance(psn, gap.first_psn);
            if reach >= PSN_HALF {
                continue;
            }
            let end = reach.saturating_add(1).min(gap.span);
            let mut here = 0;
            for o in gap.acked_to..end {
                if !gap.seen.get(o) {
                    gap.captured.set(o);
                    here += 1;
                }
            }
            gap.acked_to = gap.acked_to.max(end);
            gap.missing = gap.missing.saturating_sub(here);
            if gap.settled {
                self.missing_psns = self.missing_psns.saturating_sub(u64::from(here));
            }
            found += u64::from(here);
        }
        self.capture_missed += found;
    }
}

impl Sequence {
    /// Numbers its frames as a merged analysis does.
    pub fn renumber(&mut self, r: &super::renumber::Renumbering) {
        self.gap_list.renumber(r);
        self.run.iter_mut().for_each(|m| r.frame(&mut m.arrival.frame));
    }
}

impl Sequence {
    /// What decides how its later packets are taken: equal in two analyses, they take them
    /// alike.
    pub fn context(&self) -> impl serde::Serialize + '_ {
        (
            self.expected,
            self.read_alternatives,
            self.in_episode,
            &self.gap_list,
            &self.run,
            self.run_deadline_ns,
            &self.nak,
        )
    }

    /// Goes on as `end` went on from `start` (whose context is this one's): its context, and
    /// its counts added; an error where a greatest value cannot be told.
    pub fn graft(&mut self, start: &Sequence, end: Sequence) -> Result<(), &'static str> {
        use super::later::later_max;
        let first_psn = self.first_psn.or(end.first_psn);
        let add = |mine: u64, e: u64, s: u64| mine + e.saturating_sub(s);
        let (mine, s, e) = (&self.reorder, &start.reorder, &end.reorder);
        let reorder = ReorderCounts {
            late_arrivals: add(mine.late_arrivals, e.late_arrivals, s.late_arrivals),
            reorder_events: add(mine.reorder_events, e.reorder_events, s.reorder_events),
            depth_max: later_max(mine.depth_max, s.depth_max, e.depth_max)?,
            delay_ns_max: later_max(mine.delay_ns_max, s.delay_ns_max, e.delay_ns_max)?,
            reorder_naks: add(mine.reorder_naks, e.reorder_naks, s.reorder_naks),
        };
        *self = Sequence {
            first_psn,
            sequenced: add(self.sequenced, end.sequenced, start.sequenced),
            gaps: add(self.gaps, end.gaps, start.gaps),
            missing_psns: add(self.missing_psns, end.missing_psns, start.missing_psns),
            capture_missed: add(self.capture_missed, end.capture_missed, start.capture_missed),
            retransmitted: add(self.retransmitted, end.retransmitted, start.retransmitted),
            retransmit_episodes: add(self.retransmit_episodes, end.retransmit_episodes, start.retransmit_episodes),
            reorder,
            ..end
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: i64 = 1_000;
    const REQUESTS: Rules<'static> = Rules { holes: &EveryPsn, ahead_in_order: false, next: Next::Consumed(1) };

    /// Feeds PSNs 1 µs apart (frame n at n µs) and returns every decision, expiring windows as
    /// time passes and at the end.
    fn run(psns: &[u32]) -> (Vec<SeqEvent>, Sequence) {
        let config = ReorderConfig::default();
        let mut s = Sequence::default();
        let mut out = Vec::new();
        for (i, &psn) in psns.iter().enumerate() {
            let ts_ns = i as i64 * US;
            s.expire(ts_ns, &config, &mut out);
            s.observe(Arrival { frame: i as u64 + 1, ts_ns, psn }, &REQUESTS, &config, &mut out);
        }
        s.finish(&mut out);
        (out, s)
    }

    /// The final class of each frame, in frame order (a gap's class once settled).
    fn classes(psns: &[u32]) -> (Vec<SeqClass>, Sequence) {
        let (events, s) = run(psns);
        let mut by_frame = vec![SeqClass::First; psns.len()];
        for e in events {
            match e {
                SeqEvent::Packet(o) => by_frame[o.arrival.frame as usize - 1] = o.class,
                SeqEvent::GapSettled { frame, missing, .. } => {
                    by_frame[frame as usize - 1] = if missing > 0 { SeqClass::Gap { missing } } else { SeqClass::Ahead }
                }
            }
        }
        (by_frame, s)
    }

    fn totals(s: &Sequence) -> (u64, u64, u64, u64, u64, u64) {
        (s.sequenced, s.gaps, s.missing_psns, s.retransmitted, s.retransmit_episodes, s.reorder.late_arrivals)
    }

    use SeqClass::*;

    #[test]
    fn a_go_back_n_resend_is_a_retransmission_and_its_gap_stays() {
        let (c, s) = classes(&[10, 11, 15, 16, 12, 13, 14, 15, 16, 17]);
        let expected = [First, InOrder, Gap { missing: 3 }, InOrder];
        assert_eq!(&c[..4], &expected);
        assert!(c[4..9].iter().all(|&k| k == Retransmission), "{c:?}");
        assert_eq!(c[9], InOrder);
        assert_eq!(totals(&s), (10, 1, 3, 5, 1, 0));
    }

    #[test]
    fn late_packets_followed_by_new_ones_are_late_arrivals() {
        // 12..14 overtaken by 15 and 16, then 17: reordering
        let (c, s) = classes(&[10, 11, 15, 16, 12, 13, 14, 17]);
        assert_eq!(c, vec![First, InOrder, Ahead, InOrder, LateArrival, LateArrival, LateArrival, InOrder]);
        assert_eq!(totals(&s), (8, 0, 0, 0, 0, 3));
        assert_eq!((s.reorder.reorder_events, s.reorder.depth_max, s.reorder.delay_ns_max), (1, 5, 4 * US));
    }

    #[test]
    fn a_partly_filled_gap_keeps_its_unfilled_holes() {
        // 12 and 13 skipped; 13 comes late; 12 never
        let (c, s) = classes(&[10, 11, 14, 13, 15]);
        assert_eq!(c, vec![First, InOrder, Gap { missing: 1 }, LateArrival, InOrder]);
        assert_eq!(totals(&s), (5, 1, 1, 0, 0, 1));
    }

    #[test]
    fn a_run_that_ends_the_capture_is_late_once_its_window_passes() {
        let (c, _) = classes(&[1, 3, 2]);
        assert_eq!(c, vec![First, Ahead, LateArrival]);
        // decided by capture time when nothing follows on the flow
        let config = ReorderConfig::default();
        let mut s = Sequence::default();
        let mut out = Vec::new();
        for (i, psn) in [1u32, 3, 2].iter().enumerate() {
            s.observe(Arrival { frame: i as u64, ts_ns: i as i64 * US, psn: *psn }, &REQUESTS, &config, &mut out);
        }
        assert!(s.holds_packets());
        out.clear();
        s.expire(21 * US, &config, &mut out);
        assert!(s.holds_packets() && out.is_empty(), "the window of the gap at 1 µs ends after 21 µs");
        s.expire(21 * US + 1, &config, &mut out);
        assert!(matches!(out.first(), Some(SeqEvent::Packet(o)) if o.class == LateArrival), "{out:?}");
    }

    #[test]
    fn a_copy_of_the_naked_psn_soon_after_the_nak_is_late_and_later_it_is_a_resend() {
        let config = ReorderConfig::default();
        for (after_nak, class) in [(4 * US, LateArrival), (6 * US, Retransmission)] {
            let mut s = Sequence::default();
            let mut out = Vec::new();
            let at = |frame: u64, ts_ns: i64, psn: u32| Arrival { frame, ts_ns, psn };
            s.observe(at(1, 0, 1), &REQUESTS, &config, &mut out);
            s.observe(at(2, US, 3), &REQUESTS, &config, &mut out);
            s.on_nak(2, 2 * US);
            s.observe(at(3, 2 * US + after_nak, 2), &REQUESTS, &config, &mut out);
            s.observe(at(4, 3 * US + after_nak, 4), &REQUESTS, &config, &mut out);
            s.finish(&mut out);
            let decided = out.iter().find_map(|e| match e {
                SeqEvent::Packet(o) if o.arrival.frame == 3 => Some(o.class),
                _ => None,
            });
            assert_eq!(decided, Some(class), "{after_nak} ns after the NAK");
            assert_eq!(s.reorder.reorder_naks, u64::from(class == LateArrival));
        }
    }

    #[test]
    fn wraps_at_2_to_the_24() {
        let (c, s) = classes(&[0xFF_FFFE, 0xFF_FFFF, 0, 2, 0xFF_FFFF]);
        assert_eq!(c, vec![First, InOrder, InOrder, Gap { missing: 1 }, Retransmission]);
        assert_eq!(s.highest(), Some(2));
    }

    #[test]
    fn half_the_space_ahead_is_behind() {
        // exactly 2^23 ahead of e is not a gap (0 < d < 2^23 is), so it is a retransmission
        let (c, _) = classes(&[0, 1 + PSN_HALF]);
        assert_eq!(c[1], Retransmission);
        let (c, _) = classes(&[0, PSN_HALF]);
        assert_eq!(c[1], Gap { missing: PSN_HALF - 1 });
    }

    #[test]
    fn episodes_end_only_on_new_packets() {
        let (events, s) = run(&[5, 6, 7, 5, 6, 8, 6]);
        let obs: Vec<Observation> = events
            .iter()
            .filter_map(|e| match e {
                SeqEvent::Packet(o) => Some(*o),
                SeqEvent::GapSettled { .. } => None,
            })
            .collect();
        assert!(obs[3].episode_start && !obs[4].episode_start);
        assert!(obs[5].episode_end);
        assert!(obs[6].episode_start);
        assert_eq!(s.retransmit_episodes, 2);
        assert!(s.in_episode());
    }

    #[test]
    fn read_requests_consume_their_response_psns() {
        let config = ReorderConfig::default();
        let classify = |next: Next, second: u32| {
            let mut s = Sequence::default();
            let mut out = Vec::new();
            let first = Rules { holes: &EveryPsn, ahead_in_order: false, next };
            s.observe(Arrival { frame: 1, ts_ns: 0, psn: 100 }, &first, &config, &mut out);
            s.observe(Arrival { frame: 2, ts_ns: US, psn: second }, &REQUESTS, &config, &mut out);
            match out.get(1) {
                Some(SeqEvent::Packet(o)) => o.class,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(classify(Next::Consumed(read_psns(4096, 1024)), 104), InOrder);
        // PMTU unknown: 3000 bytes is 12 PSNs at 256, 1 at 4096; 3 (at 1024) is in order
        assert_eq!(classify(Next::ReadOfUnknownPmtu(3000), 103), InOrder);
        assert_eq!(classify(Next::ReadOfUnknownPmtu(3000), 101), InOrder);
        assert_eq!(classify(Next::ReadOfUnknownPmtu(3000), 105), Gap { missing: 4 });
        // a zero-length READ consumes one PSN
        assert_eq!(read_psns(0, 1024), 1);
        assert_eq!(read_psns(1025, 1024), 2);
    }
}
