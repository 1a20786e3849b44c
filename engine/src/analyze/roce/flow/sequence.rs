//! One PSN space of a flow: the requests one side sends, or the READ responses it returns to
//! the other side's requests (docs/analysis.md, "PSN sequence" and "Reordering").
//!
//! A packet at the expected PSN e is in order; one ahead of e opens a gap whose holes are the
//! PSNs it skipped; one behind e is a retransmission, unless it is the first appearance of a
//! hole, which may be a late arrival (reordering): that is decided when the run of first
//! appearances it belongs to ends, or when its reorder window has passed. A gap's missing PSNs
//! are its holes no late arrival filled, and are counted once the gap is settled (its holes'
//! fate decided); a gap all of whose holes came late is a reorder event instead.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use crate::analyze::seq_class::SeqClass;
use rocescope_parsers::psn::{PSN_HALF, PSN_MODULUS, psn_add, psn_diff, psn_forward_distance};

use crate::analyze::roce::flow::arrival::Arrival;
use crate::analyze::roce::flow::gaps::Gaps;
use crate::analyze::roce::flow::naked::{AnswerTimes, AwaitingCopy, COPY_WAIT_WINDOWS, NakedHoles};

/// What told a retransmission from a late arrival (docs/analysis.md, "Reordering").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The PSN had come before: only a resend repeats it.
    Psn,
    /// What followed: a PSN already seen after a run of first appearances (go-back-N went
    /// on), a burst of new ones (a late burst), or go-back-N begun below the hole.
    Sequence,
    /// The copies of a NAKed hole: one copy after the NAK is the resend; the first of two
    /// was late.
    Copies,
    /// Time: the reorder window had passed, or (the capture ending before the copies could
    /// tell) the NAK reaction time.
    Time,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::Psn => "psn",
            Decision::Sequence => "sequence",
            Decision::Copies => "copies",
            Decision::Time => "time",
        }
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

/// A packet's class, once decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
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
    /// What decided a retransmission or a late arrival.
    pub decided_by: Option<Decision>,
    /// Decided after later packets of its space: a retransmission so decided is an episode
    /// of its own, and a late arrival so decided ends none.
    pub out_of_order: bool,
}

/// What a PSN space decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum SeqEvent {
    Packet(Observation),
    /// The gap opened by `frame` is settled with `missing` holes never filled (0: a reorder
    /// event), of which `capture_missed` were acknowledged by the responder by then.
    GapSettled {
        frame: FrameNumber,
        ts_ns: i64,
        first_psn: u32,
        missing: u32,
        capture_missed: u32,
    },
    /// A packet waits for a decision until capture time passes `until_ns`.
    Wait {
        until_ns: i64,
    },
}

/// Reordering counters of a PSN space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct ReorderCounts {
    #[combine(sum)]
    pub late_arrivals: u64,
    #[combine(sum)]
    pub reorder_events: u64,
    /// The largest e − h over late arrivals (e the expected PSN when hole h arrived).
    #[combine(max)]
    pub depth_max: u32,
    /// The longest time from a gap to a late arrival that filled one of its holes.
    #[combine(max)]
    pub delay_ns_max: i64,
    /// PSN-sequence NAKs naming a hole that a late arrival filled.
    #[combine(sum)]
    pub reorder_naks: u64,
}

/// A first appearance of a hole waiting for its run to end.
#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize, Renumber)]
struct RunMember {
    arrival: Arrival,
    gap: usize,
    /// None: (a) and (c) hold, late if (b) does; else why it is a resend.
    resend: Option<Decision>,
    depth: u32,
    expected_before: Option<u32>,
}

/// Run members a space holds at most; beyond, the run is decided early.
pub const RUN_KEPT: usize = 1024;

/// One PSN space: its running state (the expected PSN, the gaps whose holes are undecided,
/// the run of late arrivals, the holes NAKs named, how the sender answers) and what it counted
/// ([`SequenceCounts`], the record the report reads).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
#[combine(check = Sequence::copies_agree)]
pub struct Sequence {
    #[combine(end)]
    expected: Option<u32>,
    /// After a READ with an unknown PMTU: the expected PSNs each PMTU would give.
    #[combine(end)]
    read_alternatives: Option<[u32; 5]>,
    #[combine(end)]
    in_episode: bool,
    #[combine(end)]
    gap_list: Gaps,
    #[combine(end)]
    run: Vec<RunMember>,
    #[combine(end)]
    run_deadline_ns: Option<i64>,
    #[combine(end)]
    naked: NakedHoles,
    /// How the sender answers, as far as measured: decides copies only, and is compared
    /// apart in a merge ([`Sequence::copies_agree`]).
    answers: AnswerTimes,
    pub counts: SequenceCounts,
}

/// What one PSN space counted (docs/analysis.md, "PSN sequence"): the record the report reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct SequenceCounts {
    #[combine(earliest)]
    pub first_psn: Option<u32>,
    #[combine(sum)]
    pub sequenced: u64,
    #[combine(sum)]
    pub gaps: u64,
    #[combine(sum)]
    pub missing_psns: u64,
    /// Holes the responder got and only the capture missed ([`Sequence::on_ack`]).
    #[combine(sum)]
    pub capture_missed: u64,
    /// Of `gaps`, those whose every hole only the capture missed: the receiver had no gap.
    #[combine(sum)]
    pub capture_only_gaps: u64,
    #[combine(sum)]
    pub retransmitted: u64,
    #[combine(sum)]
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

    /// The PSN after the last one requested so far: the expected one, or, after a READ whose
    /// PMTU is unknown, the furthest its responses may reach (at the smallest PMTU), until the
    /// next request tells which it was.
    pub fn requested_end(&self) -> Option<u32> {
        self.read_alternatives.map_or(self.expected, |alternatives| Some(alternatives[0]))
    }

    /// Does the expected PSN wait on a READ's path MTU ([`Sequence::settle_read_pmtu`])?
    pub fn awaits_read_pmtu(&self) -> bool {
        self.read_alternatives.is_some()
    }

    /// A READ seen before its path MTU was known: its responses have shown it since, so the
    /// expected PSN is the one that PMTU gives (a request re-issued from within the READ's
    /// range is then a retransmission, whatever PSN another PMTU would have ended at).
    pub fn settle_read_pmtu(&mut self, pmtu: u32) {
        let Some(alternatives) = self.read_alternatives else { return };
        if let Some(i) = PMTUS.iter().position(|&m| m == pmtu) {
            self.expected = Some(alternatives[i]);
            self.read_alternatives = None;
        }
    }

    /// After a READ of unknown PMTU, the next request's PSN tells which PMTU it was: one
    /// that some PMTU's end explains sets the expected PSN there; one behind the expected
    /// PSN (the READ re-issued, an earlier resend) tells nothing and keeps the alternatives;
    /// any other leaves the expected PSN at the largest PMTU's end.
    fn narrow_read_alternatives(&mut self, psn: u32) {
        let Some(alternatives) = self.read_alternatives else { return };
        if alternatives.contains(&psn) {
            self.expected = Some(psn);
        } else if self.is_behind(psn) {
            return;
        }
        self.read_alternatives = None;
    }

    /// Does a decision wait for a reorder window to pass?
    pub fn waits(&self) -> bool {
        self.run_deadline_ns.is_some() || self.gap_list.unsettled().next().is_some() || self.naked.is_waiting()
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
        !self.run.is_empty() || self.naked.is_waiting()
    }

    /// The frame and time of the newest remembered gap with a hole not seen yet among the
    /// `span` PSNs from `psn`.
    pub fn unseen_hole_in(&self, psn: u32, span: u32) -> Option<(FrameNumber, i64)> {
        self.gap_list.with_unseen_hole_in(psn, span).map(|g| (g.frame, g.ts_ns))
    }

    /// Was `psn` skipped by a remembered gap? Returns the gap's opening time. (PSNs before a
    /// space's first one were skipped by nothing.)
    pub fn hole_of(&self, psn: u32) -> Option<i64> {
        self.gap_list.containing(psn).and_then(|i| self.gap_list.get(i)).filter(|g| !g.prelude).map(|g| g.ts_ns)
    }

    /// Takes a sequenced packet. Decided packets (this one, and earlier ones it decides) are
    /// appended to `out` in arrival order; returns true when this packet waits for a decision.
    pub fn observe(&mut self, a: Arrival, rules: &Rules<'_>, config: &ReorderConfig, out: &mut Vec<SeqEvent>) -> bool {
        self.counts.sequenced += 1;
        self.narrow_read_alternatives(a.psn);
        if self.naked.is_waiting() {
            self.meet_waiting_copies(a, config, out);
        }
        let hole = self.unseen_hole(a.psn);
        // behind the expected PSN and no hole: a resend whatever comes
        let proven_resend = hole.is_none() && self.is_behind(a.psn);
        if hole.is_none() && !self.run.is_empty() {
            // (b): the run ends; its packets were late if this one is new.
            let new = self.expected.is_none_or(|e| psn_forward_distance(a.psn, e) < PSN_HALF);
            self.resolve_run(new, Decision::Sequence, out);
        }
        let held = match hole {
            Some(gap) => self.hole_appears(a, gap, config, out),
            None => {
                self.classify(a, rules, config, out);
                false
            }
        };
        if !self.naked.has_copy_of(a.psn) {
            // a copy still waiting is no resend yet
            let oldest_ns = a.ts_ns.saturating_sub(config.window_ns.saturating_mul(COPY_WAIT_WINDOWS));
            if let Some(delay_ns) = self.naked.saw(a.psn, a.ts_ns, oldest_ns)
                && proven_resend
            {
                self.answers.resend(delay_ns);
            }
        }
        held
    }

    /// A packet arrives while copies of NAKed holes wait: a second copy of one makes the first
    /// late; a resend of a PSN after some makes each of those the resend (the sender resent
    /// past them).
    fn meet_waiting_copies(&mut self, a: Arrival, config: &ReorderConfig, out: &mut Vec<SeqEvent>) {
        if let Some(copy) = self.naked.take_copy_of(a.psn) {
            self.decide_copy(copy, SeqClass::LateArrival, Decision::Copies, a.ts_ns, config, out);
        } else if self.is_resend_by_psn(a.psn) {
            for copy in self.naked.take_before(a.psn) {
                // go-back-N went on past it: it was the resend
                self.answers.resend(copy.arrival.ts_ns.saturating_sub(copy.nak_ts_ns));
                self.decide_copy(copy, SeqClass::Retransmission, Decision::Copies, a.ts_ns, config, out);
            }
        }
    }

    /// Is a packet at `psn` behind the expected PSN and no hole, so a resend whatever comes?
    fn is_resend_by_psn(&self, psn: u32) -> bool {
        self.is_behind(psn) && self.unseen_hole(psn).is_none()
    }

    fn is_behind(&self, psn: u32) -> bool {
        self.expected.is_some_and(|e| psn != e && psn_forward_distance(psn, e) >= PSN_HALF)
    }

    /// Decides a waiting copy; its gap settles once nothing about it is open, at `now_ns`.
    fn decide_copy(
        &mut self,
        copy: AwaitingCopy,
        class: SeqClass,
        by: Decision,
        now_ns: i64,
        config: &ReorderConfig,
        out: &mut Vec<SeqEvent>,
    ) {
        let index = self.gap_list.containing(copy.arrival.psn);
        match (class, index) {
            (SeqClass::LateArrival, Some(index)) => self.fill(index, copy.arrival, copy.depth),
            _ => {
                // the NAK was answered: go-back-N has begun from it, and the holes after it
                // that wait in the run are resent too ((c)); not a hole that opened after
                // the copy came (a selective resend, new PSNs after it, a later hole)
                self.naked.saw(copy.arrival.psn, copy.arrival.ts_ns, i64::MIN);
                let gaps = &self.gap_list;
                let covered = |m: &RunMember| {
                    psn_diff(copy.arrival.psn, m.arrival.psn) < 0
                        && gaps.get(m.gap).is_none_or(|g| g.ts_ns <= copy.arrival.ts_ns)
                };
                for m in self.run.iter_mut().filter(|m| covered(m)) {
                    m.resend.get_or_insert(Decision::Sequence);
                }
            }
        }
        let o = if copy.overtaken {
            self.apply_out_of_order(copy.arrival, class, copy.expected_before, by)
        } else {
            self.apply(copy.arrival, class, copy.expected_before, false, Some(by))
        };
        out.push(SeqEvent::Packet(o));
        if let Some(index) = index {
            self.settle_if_complete(index, out);
        }
        self.settle_expired(now_ns, config, out);
    }

    /// Is `psn` a hole a gap skipped that has not appeared yet (PSNs before the space's
    /// first are none)?
    pub fn is_hole(&self, psn: u32) -> bool {
        self.unseen_hole(psn).and_then(|i| self.gap_list.get(i)).is_some_and(|g| !g.prelude)
    }

    fn unseen_hole(&self, psn: u32) -> Option<usize> {
        self.gap_list.containing(psn).filter(|&i| self.gap_list.get(i).is_some_and(|g| g.is_unseen_hole(psn)))
    }

    /// A packet that is not the first appearance of a hole.
    fn classify(&mut self, a: Arrival, rules: &Rules<'_>, config: &ReorderConfig, out: &mut Vec<SeqEvent>) {
        let expected_before = self.expected;
        if self.counts.first_psn.is_none() {
            if let Some(e) = self.anchor(a.psn, rules) {
                // a response space starts at its first outstanding READ's PSN, whichever
                // response comes first
                self.counts.first_psn = Some(e);
            } else {
                self.counts.first_psn = Some(a.psn);
                out.push(SeqEvent::Packet(self.apply(a, SeqClass::First, expected_before, false, None)));
                self.advance(a.psn, rules.next);
                self.open_prelude(a, config, out);
                return;
            }
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
        let decided_by = (class == SeqClass::Retransmission).then_some(Decision::Psn);
        out.push(SeqEvent::Packet(self.apply(a, class, expected_before, gap_open, decided_by)));
        if class.is_new() {
            self.advance(a.psn, rules.next);
        }
    }

    /// Where a space's sequence starts when its first packet is ahead of an expected PSN its
    /// owner set (a response space, at its peer's first outstanding READ) with holes between.
    fn anchor(&self, psn: u32, rules: &Rules<'_>) -> Option<u32> {
        let e = self.expected?;
        let ahead = psn_forward_distance(psn, e);
        (psn != e && ahead < PSN_HALF && !rules.ahead_in_order && rules.holes.count(e, ahead) > 0).then_some(e)
    }

    /// The PSNs just before a space's first packet may still come: packets it overtook when
    /// the capture began. Within one reorder window, their first appearances may be late
    /// arrivals as a gap's holes may; the PSNs that never come are no loss (nothing says they
    /// were sent since the capture began).
    fn open_prelude(&mut self, a: Arrival, config: &ReorderConfig, out: &mut Vec<SeqEvent>) {
        let span = crate::analyze::roce::flow::gaps::TRACKED_SPAN;
        self.gap_list.open_prelude(a.frame, a.ts_ns, psn_add(a.psn, PSN_MODULUS - span), span);
        out.push(SeqEvent::Wait { until_ns: a.ts_ns.saturating_add(config.window_ns) });
    }

    /// Remembers a gap; returns whether its holes' fate is open. A gap too wide to track, or
    /// that finds no room, is counted at once.
    fn open_gap(&mut self, a: Arrival, e: u32, span: u32, missing: u32, holes: &dyn Holes) -> bool {
        let open = self.gap_list.open(a.frame, a.ts_ns, e, span, missing, &|p| holes.is_hole(p));
        if !open {
            self.counts.gaps += 1;
            self.counts.missing_psns += u64::from(missing);
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
    fn apply(
        &mut self,
        a: Arrival,
        class: SeqClass,
        expected_before: Option<u32>,
        gap_open: bool,
        decided_by: Option<Decision>,
    ) -> Observation {
        let mut o = Observation {
            arrival: a,
            class,
            episode_start: false,
            episode_end: false,
            expected_before,
            gap_open,
            decided_by,
            out_of_order: false,
        };
        // a copy waiting from before this packet is now decided after it
        self.naked.overtake_before(a.frame);
        if class == SeqClass::Retransmission {
            self.counts.retransmitted += 1;
            if !self.in_episode {
                self.in_episode = true;
                self.counts.retransmit_episodes += 1;
                o.episode_start = true;
            }
        } else {
            o.episode_end = std::mem::take(&mut self.in_episode);
        }
        o
    }

    /// A packet decided after later packets of its space: a retransmission is an episode of
    /// its own, and the episode running is left as it is.
    fn apply_out_of_order(
        &mut self,
        a: Arrival,
        class: SeqClass,
        expected_before: Option<u32>,
        by: Decision,
    ) -> Observation {
        let resend = class == SeqClass::Retransmission;
        if resend {
            self.counts.retransmitted += 1;
            self.counts.retransmit_episodes += 1;
        }
        Observation {
            arrival: a,
            class,
            episode_start: resend,
            episode_end: false,
            expected_before,
            gap_open: false,
            decided_by: Some(by),
            out_of_order: true,
        }
    }

    /// The first appearance of a hole of gap `index`: decided now when it cannot be late and
    /// nothing waits before it, else held in the run; a copy of a NAKed hole waits for the
    /// copies to tell ([`crate::analyze::roce::flow::naked`]).
    fn hole_appears(&mut self, a: Arrival, index: usize, config: &ReorderConfig, out: &mut Vec<SeqEvent>) -> bool {
        let expected_before = self.expected;
        let Some(gap) = self.gap_list.get_mut(index) else { return false };
        if let Some(o) = gap.offset(a.psn) {
            gap.seen.set(o);
            // a hole taken for a capture miss appears after all: what it is is decided again
            if gap.captured.get(o) {
                gap.captured.clear(o);
                gap.missing += 1;
                self.counts.capture_missed = self.counts.capture_missed.saturating_sub(1);
                if gap.settled {
                    self.counts.missing_psns += 1;
                    if gap.missing == 1 {
                        self.counts.capture_only_gaps = self.counts.capture_only_gaps.saturating_sub(1);
                    }
                }
            }
        }
        let (gap_ts, deadline) = (gap.ts_ns, gap.ts_ns.saturating_add(config.window_ns));
        // (a): within the reorder window of the packet that opened the gap
        let within = !gap.settled && a.ts_ns.saturating_sub(gap_ts) <= config.window_ns;
        let depth = expected_before.map_or(0, |e| psn_forward_distance(e, a.psn));
        if let Some(nak_ts_ns) = self.naked.naming(a.psn, gap_ts).filter(|_| within) {
            let until_ns = nak_ts_ns.saturating_add(self.answers.copy_wait_ns(config.window_ns));
            let copy = AwaitingCopy { arrival: a, depth, expected_before, nak_ts_ns, until_ns, overtaken: false };
            self.naked.wait(copy);
            out.push(SeqEvent::Wait { until_ns });
            return true;
        }
        // (c): no resend covering it has begun
        let resend = if !within {
            Some(Decision::Time)
        } else if self.naked.resend_began_before(a.psn, gap_ts) {
            Some(Decision::Sequence)
        } else {
            None
        };
        if resend.is_some() && self.run.is_empty() {
            out.push(SeqEvent::Packet(self.apply(a, SeqClass::Retransmission, expected_before, false, resend)));
            self.settle_if_complete(index, out);
            return false;
        }
        if resend.is_none() {
            self.run_deadline_ns = Some(self.run_deadline_ns.map_or(deadline, |d| d.min(deadline)));
        }
        self.run.push(RunMember { arrival: a, gap: index, resend, depth, expected_before });
        if self.run.len() >= RUN_KEPT {
            self.resolve_run(true, Decision::Time, out);
        }
        true
    }

    /// Decides every packet of the run: late arrivals if `late` (and they may be), else
    /// retransmissions; `by` is what decided it.
    fn resolve_run(&mut self, late: bool, by: Decision, out: &mut Vec<SeqEvent>) {
        self.run_deadline_ns = None;
        let run = std::mem::take(&mut self.run);
        for m in &run {
            let (class, decided_by) = match m.resend {
                Some(reason) => (SeqClass::Retransmission, reason),
                None if late => (SeqClass::LateArrival, by),
                None => (SeqClass::Retransmission, by),
            };
            if class == SeqClass::LateArrival {
                self.fill(m.gap, m.arrival, m.depth);
            }
            out.push(SeqEvent::Packet(self.apply(m.arrival, class, m.expected_before, false, Some(decided_by))));
        }
        for m in &run {
            self.settle_if_complete(m.gap, out);
        }
    }

    /// A late arrival fills its hole in gap `index`.
    fn fill(&mut self, index: usize, arrival: Arrival, depth: u32) {
        let Some(gap) = self.gap_list.get_mut(index) else { return };
        let Some(o) = gap.offset(arrival.psn) else { return };
        gap.late.set(o);
        gap.missing = gap.missing.saturating_sub(1);
        let r = &mut self.counts.reorder;
        r.late_arrivals += 1;
        r.depth_max = r.depth_max.max(depth);
        r.delay_ns_max = r.delay_ns_max.max(arrival.ts_ns.saturating_sub(gap.ts_ns));
        if gap.naked.get(o) {
            r.reorder_naks += 1;
        }
    }

    /// Settles a gap whose holes have all appeared (nothing can change it any more).
    fn settle_if_complete(&mut self, index: usize, out: &mut Vec<SeqEvent>) {
        if self.gap_list.get(index).is_some_and(|g| !g.settled && g.all_seen() && !self.copy_waits_in(g))
            && self.run.is_empty()
        {
            self.settle(index, out);
        }
    }

    /// Does a copy of one of the gap's holes wait (the gap cannot settle before it is decided)?
    fn copy_waits_in(&self, gap: &crate::analyze::roce::flow::gaps::Gap) -> bool {
        self.naked.waits_in(gap.first_psn, gap.span)
    }

    /// Settles the gaps whose reorder window ended before `now_ns`, once no run is open and no
    /// copy of theirs waits.
    fn settle_expired(&mut self, now_ns: i64, config: &ReorderConfig, out: &mut Vec<SeqEvent>) {
        if !self.run.is_empty() {
            return;
        }
        let expired: Vec<usize> = self
            .gap_list
            .expired(now_ns, config.window_ns)
            .filter(|&i| self.gap_list.get(i).is_some_and(|g| !self.copy_waits_in(g)))
            .collect();
        for index in expired {
            self.settle(index, out);
        }
    }

    fn settle(&mut self, index: usize, out: &mut Vec<SeqEvent>) {
        let Some(gap) = self.gap_list.get_mut(index) else { return };
        gap.settled = true;
        if gap.prelude {
            // PSNs before the first that never came are no loss; those that came late are
            // one reorder event
            if !gap.late.is_empty() {
                self.counts.reorder.reorder_events += 1;
            }
            self.gap_list.close_prelude();
            return;
        }
        // the frame's gap counts every PSN the capture lacks, the responder's or not
        let capture_missed = (0..gap.span).filter(|&o| gap.captured.get(o)).count() as u32;
        let lacking = gap.missing + capture_missed;
        if lacking > 0 {
            self.counts.gaps += 1;
            self.counts.missing_psns += u64::from(gap.missing);
            self.counts.capture_only_gaps += u64::from(gap.missing == 0);
        } else {
            self.counts.reorder.reorder_events += 1;
        }
        let (frame, ts_ns, first_psn) = (gap.frame, gap.ts_ns, gap.first_psn);
        out.push(SeqEvent::GapSettled { frame, ts_ns, first_psn, missing: lacking, capture_missed });
    }

    /// Capture time has reached `now_ns`: decides what a reorder window that has passed
    /// decides.
    pub fn expire(&mut self, now_ns: i64, config: &ReorderConfig, out: &mut Vec<SeqEvent>) {
        for copy in self.naked.take_due(now_ns) {
            let (class, by) = self.copy_without_a_second(&copy);
            self.decide_copy(copy, class, by, now_ns, config, out);
        }
        // a hole after a waiting copy is a resend if the copy is: it waits for the copy
        let after_copy = self.run.iter().any(|m| self.naked.waits_before(m.arrival.psn));
        if !after_copy && self.run_deadline_ns.is_some_and(|d| now_ns > d) {
            self.resolve_run(true, Decision::Time, out);
        }
        self.settle_expired(now_ns, config, out);
    }

    /// A copy whose wait ended with no second copy was the resend, unless it came sooner
    /// after its NAK than the sender could have answered.
    fn copy_without_a_second(&self, copy: &AwaitingCopy) -> (SeqClass, Decision) {
        if self.answers.could_answer(copy.arrival.ts_ns.saturating_sub(copy.nak_ts_ns)) {
            (SeqClass::Retransmission, Decision::Copies)
        } else {
            (SeqClass::LateArrival, Decision::Time)
        }
    }

    /// The end of the capture (or of the flow), at capture time `now_ns`: every reorder
    /// window has passed. A copy of a NAKed hole whose wait had not ended is decided by the
    /// NAK reaction time: no sender answers a NAK faster, so a copy that soon was late.
    pub fn finish(&mut self, now_ns: i64, config: &ReorderConfig, out: &mut Vec<SeqEvent>) {
        for copy in self.naked.take_all() {
            let delay_ns = copy.arrival.ts_ns.saturating_sub(copy.nak_ts_ns);
            let (class, by) = if now_ns > copy.until_ns {
                self.copy_without_a_second(&copy)
            } else if delay_ns > config.nak_reaction_ns && self.answers.could_answer(delay_ns) {
                (SeqClass::Retransmission, Decision::Time)
            } else {
                (SeqClass::LateArrival, Decision::Time)
            };
            self.decide_copy(copy, class, by, now_ns, config, out);
        }
        self.resolve_run(true, Decision::Time, out);
        let open: Vec<usize> = self.gap_list.unsettled().collect();
        for index in open {
            self.settle(index, out);
        }
    }

    /// A request was acknowledged `rtt_ns` after it was sent: a round trip the sender's
    /// answers are measured by.
    pub fn acknowledged_after(&mut self, rtt_ns: i64) {
        self.answers.ack(rtt_ns);
    }

    /// The peer sent a PSN-sequence NAK naming `psn` (the PSN it expected).
    pub fn on_nak(&mut self, psn: u32, ts_ns: i64) {
        self.naked.on_nak(psn, ts_ns);
        let Some(gap) = self.gap_list.containing(psn).and_then(|i| self.gap_list.get_mut(i)) else { return };
        gap.nak = true;
        let Some(o) = gap.offset(psn) else { return };
        if gap.late.get(o) {
            self.counts.reorder.reorder_naks += 1;
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
    /// `capture_missed` (a gap too wide to track holes of, over [`crate::analyze::roce::flow::gaps::TRACKED_SPAN`],
    /// stays missing).
    pub fn on_ack(&mut self, psn: u32) {
        let mut found = 0u64;
        for gap in self.gap_list.iter_mut().filter(|g| g.tracked && !g.nak && !g.prelude) {
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
            let was_missing = gap.missing;
            gap.missing = gap.missing.saturating_sub(here);
            if gap.settled {
                self.counts.missing_psns = self.counts.missing_psns.saturating_sub(u64::from(here));
                self.counts.capture_only_gaps += u64::from(was_missing > 0 && gap.missing == 0);
            }
            found += u64::from(here);
        }
        self.counts.capture_missed += found;
    }
}

impl Sequence {
    /// What decides how its later packets are taken: equal in two analyses, they take them
    /// alike.
    pub fn context(&self) -> impl PartialEq + '_ {
        (
            self.expected,
            self.read_alternatives,
            self.in_episode,
            &self.gap_list,
            &self.run,
            self.run_deadline_ns,
            &self.naked,
        )
    }

    /// Before a graft: a copy of a NAKed hole the part decided after the seam was decided by
    /// answer times that the parts before change (this one's differ from `start`'s).
    fn copies_agree(&self, start: &Sequence, end: &Sequence, _: &Seam) -> Result<(), Refused> {
        match end.naked.copies_waited > start.naked.copies_waited && self.answers != start.answers {
            true => Err("a copy of a NAKed hole was decided by answer times the parts before change".into()),
            false => Ok(()),
        }
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
            s.observe(Arrival { frame: FrameNumber::new(i as u64 + 1), ts_ns, psn }, &REQUESTS, &config, &mut out);
        }
        s.finish(psns.len() as i64 * US, &config, &mut out);
        (out, s)
    }

    /// The final class of each frame, in frame order (a gap's class once settled).
    fn classes(psns: &[u32]) -> (Vec<SeqClass>, Sequence) {
        let (events, s) = run(psns);
        let mut by_frame = vec![SeqClass::First; psns.len()];
        for e in events {
            match e {
                SeqEvent::Packet(o) => by_frame[o.arrival.frame.get() as usize - 1] = o.class,
                SeqEvent::GapSettled { frame, missing, .. } => {
                    by_frame[frame.get() as usize - 1] =
                        if missing > 0 { SeqClass::Gap { missing } } else { SeqClass::Ahead }
                }
                SeqEvent::Wait { .. } => {}
            }
        }
        (by_frame, s)
    }

    fn totals(s: &Sequence) -> (u64, u64, u64, u64, u64, u64) {
        (
            s.counts.sequenced,
            s.counts.gaps,
            s.counts.missing_psns,
            s.counts.retransmitted,
            s.counts.retransmit_episodes,
            s.counts.reorder.late_arrivals,
        )
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
        assert_eq!(
            (s.counts.reorder.reorder_events, s.counts.reorder.depth_max, s.counts.reorder.delay_ns_max),
            (1, 5, 4 * US)
        );
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
            s.observe(
                Arrival { frame: FrameNumber::new(i as u64), ts_ns: i as i64 * US, psn: *psn },
                &REQUESTS,
                &config,
                &mut out,
            );
        }
        assert!(s.holds_packets());
        out.clear();
        s.expire(21 * US, &config, &mut out);
        assert!(s.holds_packets() && out.is_empty(), "the window of the gap at 1 µs ends after 21 µs");
        s.expire(21 * US + 1, &config, &mut out);
        assert!(matches!(out.first(), Some(SeqEvent::Packet(o)) if o.class == LateArrival), "{out:?}");
    }

    /// 1, 3 (a gap at 2), a NAK for 2 at 2 µs, a copy of 2 `after_nak` later, then 4, then
    /// `then` (PSN, µs after the NAK) and the end of the capture at `end_us` after the NAK:
    /// the class of the first copy, and what decided it.
    fn naked_copy(after_nak: i64, then: Option<(u32, i64)>, end_us: i64) -> (SeqClass, Option<Decision>, Sequence) {
        let config = ReorderConfig::default();
        let mut s = Sequence::default();
        let mut out = Vec::new();
        let at = |frame: FrameNumber, ts_ns: i64, psn: u32| Arrival { frame, ts_ns, psn };
        s.observe(at(FrameNumber::new(1), 0, 1), &REQUESTS, &config, &mut out);
        s.observe(at(FrameNumber::new(2), US, 3), &REQUESTS, &config, &mut out);
        s.on_nak(2, 2 * US);
        s.observe(at(FrameNumber::new(3), 2 * US + after_nak, 2), &REQUESTS, &config, &mut out);
        s.observe(at(FrameNumber::new(4), 3 * US + after_nak, 4), &REQUESTS, &config, &mut out);
        if let Some((psn, us)) = then {
            s.expire(2 * US + us * US, &config, &mut out);
            s.observe(at(FrameNumber::new(5), 2 * US + us * US, psn), &REQUESTS, &config, &mut out);
        }
        s.expire(2 * US + end_us * US, &config, &mut out);
        s.finish(2 * US + end_us * US, &config, &mut out);
        let decided = out.iter().find_map(|e| match e {
            SeqEvent::Packet(o) if o.arrival.frame == FrameNumber::new(3) => Some((o.class, o.decided_by)),
            _ => None,
        });
        let (class, by) = decided.expect("the copy is decided");
        (class, by, s)
    }

    #[test]
    fn one_copy_of_a_naked_hole_is_its_resend_and_the_first_of_two_was_late() {
        // one copy 3 µs after the NAK, and the capture goes on past a window after the NAK
        let (class, by, s) = naked_copy(3 * US, None, 30);
        assert_eq!(
            (class, by, s.counts.missing_psns, s.counts.retransmitted),
            (Retransmission, Some(Decision::Copies), 1, 1)
        );
        // a second copy follows: the first was late, the second is the resend
        let (class, by, s) = naked_copy(3 * US, Some((2, 10)), 30);
        assert_eq!((class, by), (LateArrival, Some(Decision::Copies)));
        assert_eq!((s.counts.missing_psns, s.counts.retransmitted, s.counts.reorder.reorder_naks), (0, 1, 1));
        // the sender resends past it (go-back-N from 2 went on to 3): the copy was the resend
        let (class, by, _) = naked_copy(3 * US, Some((3, 5)), 30);
        assert_eq!((class, by), (Retransmission, Some(Decision::Copies)));
    }

    #[test]
    fn a_naked_copy_the_capture_cannot_tell_is_decided_by_the_nak_reaction_time() {
        for (after_nak, class) in [(4 * US, LateArrival), (6 * US, Retransmission)] {
            let (decided, by, s) = naked_copy(after_nak, None, 10);
            assert_eq!((decided, by), (class, Some(Decision::Time)), "{after_nak} ns after the NAK");
            assert_eq!(s.counts.reorder.reorder_naks, u64::from(class == LateArrival));
        }
    }

    #[test]
    fn packets_the_first_one_overtook_are_late_and_those_never_seen_are_no_loss() {
        let (c, s) = classes(&[12, 13, 10, 11, 14, 15]);
        assert_eq!(c, vec![First, InOrder, LateArrival, LateArrival, InOrder, InOrder]);
        assert_eq!(
            (s.counts.gaps, s.counts.missing_psns, s.counts.retransmitted, s.counts.reorder.reorder_events),
            (0, 0, 0, 1)
        );
        // a capture that starts inside a go-back-N resend: what repeats is resent
        let (c, s) = classes(&[12, 13, 10, 11, 12, 13, 14]);
        assert_eq!(&c[2..6], &[Retransmission; 4]);
        assert_eq!(
            (s.counts.gaps, s.counts.missing_psns, s.counts.retransmit_episodes, s.counts.reorder.reorder_events),
            (0, 0, 1, 0)
        );
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
                SeqEvent::GapSettled { .. } | SeqEvent::Wait { .. } => None,
            })
            .collect();
        assert!(obs[3].episode_start && !obs[4].episode_start);
        assert!(obs[5].episode_end);
        assert!(obs[6].episode_start);
        assert_eq!(s.counts.retransmit_episodes, 2);
        assert!(s.in_episode());
    }

    #[test]
    fn read_requests_consume_their_response_psns() {
        let config = ReorderConfig::default();
        let classify = |next: Next, second: u32| {
            let mut s = Sequence::default();
            let mut out = Vec::new();
            let first = Rules { holes: &EveryPsn, ahead_in_order: false, next };
            s.observe(Arrival { frame: FrameNumber::new(1), ts_ns: 0, psn: 100 }, &first, &config, &mut out);
            s.observe(Arrival { frame: FrameNumber::new(2), ts_ns: US, psn: second }, &REQUESTS, &config, &mut out);
            match out.iter().filter(|e| matches!(e, SeqEvent::Packet(_))).nth(1) {
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

    /// A READ of 3,000 bytes at PSN 100, PMTU unknown (1 PSN at 4096, 3 at 1024), then the
    /// requests `then`, the path MTU `settle` known before the last: the last one's class.
    fn last_after_read(then: &[u32], settle: Option<u32>) -> SeqClass {
        let config = ReorderConfig::default();
        let (mut s, mut out) = (Sequence::default(), Vec::new());
        let read = Rules { holes: &EveryPsn, ahead_in_order: false, next: Next::ReadOfUnknownPmtu(3000) };
        s.observe(Arrival { frame: FrameNumber::new(1), ts_ns: 0, psn: 100 }, &read, &config, &mut out);
        for (i, &psn) in then.iter().enumerate() {
            if let Some(pmtu) = settle.filter(|_| i == then.len() - 1) {
                s.settle_read_pmtu(pmtu);
            }
            s.observe(
                Arrival { frame: FrameNumber::new(2 + i as u64), ts_ns: US * (1 + i as i64), psn },
                &REQUESTS,
                &config,
                &mut out,
            );
        }
        match out
            .iter()
            .rev()
            .find(|e| matches!(e, SeqEvent::Packet(o) if o.arrival.frame == FrameNumber::new(1 + then.len() as u64)))
        {
            Some(SeqEvent::Packet(o)) => o.class,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_read_re_issued_before_the_next_request_keeps_its_pmtus_open() {
        // the READ sent again: the next request at 103 still says PMTU 1024
        assert_eq!(last_after_read(&[100, 103], None), InOrder);
        // a request past every PMTU's end: a gap from the largest PMTU's end
        assert_eq!(last_after_read(&[100, 105], None), Gap { missing: 4 });
    }

    #[test]
    fn a_read_s_pmtu_shown_by_its_responses_decides_its_end() {
        // the responses showed PMTU 1024: a READ re-issued at 101 is within the first one,
        // though at PMTU 2048 (2 PSNs) it would be the next request
        assert_eq!(last_after_read(&[101], Some(1024)), Retransmission);
        assert_eq!(last_after_read(&[101], None), InOrder);
    }
}
