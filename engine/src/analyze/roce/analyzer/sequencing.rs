//! Sequenced packets through their flow's PSN spaces, and what the analysis does with each
//! decision: retransmit episodes, message and ACK bookkeeping, per-frame verdicts, chart
//! traces; reorder windows that pass in capture time; QP numbers reused by new connections.

use rocescope_parsers::opcode::{self, Position};
use rocescope_parsers::psn::{PSN_HALF, psn_add, psn_forward_distance};

use crate::analyze::frame::{FrameSummary, RoceFacts};
use crate::analyze::id::FrameNumber;
use crate::analyze::id::{FlowId, Space};
use crate::analyze::roce::analyzer::{Analyzer, MAX_EPISODES_KEPT, PACKETS_HELD, VERDICTS_HELD};
use crate::analyze::roce::flow::arrival::Arrival;
use crate::analyze::roce::flow::episodes::{Cause, Episode, FirstResend, OpenEpisode, Trigger};
use crate::analyze::roce::flow::gaps::TRACKED_SPAN;
use crate::analyze::roce::flow::responses::{Read, ReadQueue};
use crate::analyze::roce::flow::runtime::Held;
use crate::analyze::roce::flow::sequence::{Decision, EveryPsn, Next, Observation, Rules, SeqEvent, read_psns};
use crate::analyze::roce::flow::table::Flow;
use crate::analyze::seq_class::SeqClass;
use crate::analyze::trace::{Event, EventKind};

/// The packet at hand when a PSN space decides: its facts and the silence before it.
#[derive(Clone, Copy)]
struct Current<'a> {
    frame: FrameNumber,
    facts: &'a RoceFacts,
    idle_ns: Option<i64>,
}

/// The PSN space of a sequenced packet: READ responses are in the peer's.
fn space_of(opcode: u8) -> Space {
    if opcode::is_read_response(opcode) { Space::Responses } else { Space::Requests }
}

fn position(facts: &RoceFacts) -> Position {
    facts.info().map_or(Position::Only, |i| i.position)
}

impl Analyzer {
    pub(crate) fn observe_sequenced(&mut self, fid: FlowId, s: &FrameSummary, roce: &RoceFacts) {
        self.expire_flow(fid, self.now_ns);
        let space = space_of(roce.opcode);
        let arrival = Arrival { frame: s.number, ts_ns: s.ts_ns, psn: roce.psn };
        let config = self.config.reorder;
        let read_request = opcode::is_read_request(roce.opcode);
        // only READs and their responses need the path MTU and the peer's READs
        let awaits_pmtu =
            space == Space::Requests && self.flows.flow(fid).is_some_and(|f| f.requests.seq.awaits_read_pmtu());
        let pmtu = if read_request || space == Space::Responses || awaits_pmtu { self.pmtu_of(fid) } else { None };
        let mut reads = if space == Space::Responses { self.take_peer_reads(fid) } else { ReadQueue::default() };
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        let Some(f) = self.flows.flow_mut(fid) else { return };
        let had_requested = f.has_requested();
        let idle_ns = f.sequenced_at(s.ts_ns);
        let held = match space {
            Space::Requests => {
                if let (true, Some(pmtu)) = (awaits_pmtu, pmtu) {
                    f.requests.seq.settle_read_pmtu(pmtu);
                }
                let next = match (read_request, pmtu) {
                    (false, _) => Next::Consumed(1),
                    (true, Some(pmtu)) => Next::Consumed(read_psns(dma_len(roce), pmtu)),
                    (true, None) => Next::ReadOfUnknownPmtu(dma_len(roce)),
                };
                let rules = Rules { holes: &EveryPsn, ahead_in_order: false, next };
                f.requests.seq.observe(arrival, &rules, &config, &mut events)
            }
            Space::Responses => {
                let response = f.response_rules(&reads, pmtu.unwrap_or(4096), roce.psn, position(roce));
                let rules =
                    Rules { holes: response.holes(), ahead_in_order: response.ahead_in_order(), next: Next::Owner };
                f.responses.seq.observe(arrival, &rules, &config, &mut events)
            }
        };
        let started_requesting = !had_requested && f.has_requested();
        if held {
            f.hold(Held { frame: s.number, ts_ns: s.ts_ns, facts: *roce, idle_ns });
            self.packets_held += 1;
            self.packets_held_peak = self.packets_held_peak.max(self.packets_held);
        }
        if started_requesting {
            self.flows.note_requesting();
        }
        if let Some(v) = &mut self.verdicts {
            v.hold(s.number);
        }
        let current = Current { frame: s.number, facts: roce, idle_ns };
        self.apply_events(fid, space, &events, Some(current), &mut reads);
        self.events = events;
        if space == Space::Responses {
            self.put_back_peer_reads(fid, reads);
        }
    }

    /// The peer's READ requests, which the flow's response space follows.
    fn take_peer_reads(&mut self, fid: FlowId) -> ReadQueue {
        let peer = self.flows.flow(fid).and_then(|f| f.peer).map(|(p, _)| p);
        peer.and_then(|p| self.flows.flow_mut(p)).map(Flow::take_reads).unwrap_or_default()
    }

    fn put_back_peer_reads(&mut self, fid: FlowId, reads: ReadQueue) {
        let peer = self.flows.flow(fid).and_then(|f| f.peer).map(|(p, _)| p);
        if let Some(p) = peer.and_then(|p| self.flows.flow_mut(p)) {
            p.put_back_reads(reads);
        }
    }

    fn apply_events(
        &mut self,
        fid: FlowId,
        space: Space,
        events: &[SeqEvent],
        current: Option<Current<'_>>,
        reads: &mut ReadQueue,
    ) {
        for event in events {
            match *event {
                SeqEvent::Packet(o) => match current.filter(|c| c.frame == o.arrival.frame) {
                    Some(c) => self.apply_observation(fid, space, &o, c, reads),
                    None => {
                        let Some(held) = self.take_held(fid, o.arrival.frame) else { continue };
                        let c = Current { frame: held.frame, facts: &held.facts, idle_ns: held.idle_ns };
                        self.apply_observation(fid, space, &o, c, reads);
                    }
                },
                SeqEvent::GapSettled { frame, ts_ns, first_psn, missing, capture_missed } => {
                    self.gap_settled(fid, frame, ts_ns, first_psn, missing);
                    if let (Some(v), true) = (&mut self.verdicts, capture_missed > 0) {
                        v.amend(frame, |verdict| verdict.capture_missed = capture_missed);
                    }
                }
                SeqEvent::Wait { until_ns } => {
                    // kept in order: a later deadline than needed only waits for the flow's
                    // next packet, which decides what has passed by then
                    let until_ns = self.deadlines.back().map_or(until_ns, |&(last, _)| until_ns.max(last));
                    self.deadlines.push_back((until_ns, fid));
                }
            }
        }
    }

    fn take_held(&mut self, fid: FlowId, frame: FrameNumber) -> Option<Held> {
        let held = self.flows.flow_mut(fid)?.take_held(frame)?;
        self.packets_held = self.packets_held.saturating_sub(1);
        Some(held)
    }

    /// A decided packet: episodes for retransmissions, bookkeeping for new packets.
    fn apply_observation(&mut self, fid: FlowId, space: Space, o: &Observation, c: Current<'_>, reads: &mut ReadQueue) {
        let (frame, ts_ns, psn) = (o.arrival.frame, o.arrival.ts_ns, o.arrival.psn);
        let advances_cursor = space == Space::Responses && o.class != SeqClass::LateArrival && o.class.is_new();
        let pmtu = if advances_cursor { self.pmtu_of(fid) } else { None };
        let Some(f) = self.flows.flow_mut(fid) else { return };
        if o.episode_end
            && let Some(open) = f.space_mut(space).open_episode.take()
            && let Some(e) = self.episodes.get_mut(open.index)
        {
            f.space_mut(space).seq.counts.missing_psns += u64::from(open.close(e));
        }
        if let Some(t) = &mut f.trace {
            if o.class == SeqClass::Retransmission { t.resent(ts_ns, psn) } else { t.sent(ts_ns, psn) }
        }
        let read_request = space == Space::Requests && opcode::is_read_request(c.facts.opcode);
        if o.class == SeqClass::Retransmission {
            earliest(&mut f.first_frames.retransmission, frame);
            if read_request {
                f.reissued_read(frame, ts_ns);
            }
            if o.out_of_order {
                self.retransmitted_alone(fid, space, o, c.idle_ns);
            } else {
                self.retransmitted(fid, space, o, c.idle_ns);
            }
        } else {
            if o.class == SeqClass::LateArrival {
                earliest(&mut f.first_frames.late_arrival, frame);
            }
            self.count_new_packet(fid, ts_ns, c.facts, read_request);
            match space {
                Space::Requests => self.request_for_completion(fid, frame, ts_ns, c.facts),
                Space::Responses => self.response_for_completion(fid, ts_ns, c.facts),
            }
            let Some(f) = self.flows.flow_mut(fid) else { return };
            if read_request {
                f.await_read(Read { first_psn: psn, dma_len: dma_len(c.facts) });
            }
            if advances_cursor {
                let pmtu = f.pmtu.or(pmtu).unwrap_or(4096);
                f.advance_cursor(reads, pmtu, psn, position(c.facts));
            }
            if o.gap_open {
                self.deadlines.push_back((ts_ns.saturating_add(self.config.reorder.window_ns), fid));
            }
            // a gap too wide to track its holes (or without room) is counted at once
            if let (SeqClass::Gap { missing }, false) = (o.class, o.gap_open) {
                mark_gap(f, frame, ts_ns, o.expected_before.unwrap_or(psn), missing);
            }
        }
        if let Some(v) = &mut self.verdicts {
            v.decide(frame, o.class, o.gap_open);
        }
    }

    /// A retransmitted packet starts or extends its space's episode.
    fn retransmitted(&mut self, fid: FlowId, space: Space, o: &Observation, idle_ns: Option<i64>) {
        let (frame, ts_ns, psn) = (o.arrival.frame, o.arrival.ts_ns, o.arrival.psn);
        let Some(f) = self.flows.flow_mut(fid) else { return };
        let hole_ts = f.space_mut(space).seq.hole_of(psn);
        if !o.episode_start {
            if let Some(open) = &mut f.space_mut(space).open_episode
                && let Some(e) = self.episodes.get_mut(open.index)
            {
                open.extend(e, frame, ts_ns, psn, hole_ts.is_some());
            }
            return;
        }
        let highest = o.expected_before.map_or(psn, |e| psn_add(e, 0xFF_FFFF));
        if space == Space::Requests {
            self.pair_by_answer(fid, psn, ts_ns);
        }
        let trigger = self.trigger_of(fid, space, psn, ts_ns, idle_ns);
        let first = FirstResend { frame, ts_ns, psn, highest_sent_psn: highest, idle_before_ns: idle_ns, hole_ts };
        let decided_by = o.decided_by.unwrap_or(Decision::Psn);
        let episode = Episode::start(fid, first, trigger).in_space(space).decided_by(decided_by);
        if self.episodes.len() >= MAX_EPISODES_KEPT {
            self.episodes_dropped += 1;
            return;
        }
        if let Some(f) = self.flows.flow_mut(fid) {
            f.space_mut(space).open_episode = Some(OpenEpisode::new(self.episodes.len(), &first));
        }
        self.episodes.push(episode);
    }

    /// A retransmission decided after later packets of its space: an episode of its own,
    /// over at once; the episode running in the space goes on.
    fn retransmitted_alone(&mut self, fid: FlowId, space: Space, o: &Observation, idle_ns: Option<i64>) {
        let running = self.flows.flow_mut(fid).and_then(|f| f.space_mut(space).open_episode.take());
        self.retransmitted(fid, space, o, idle_ns);
        let Some(f) = self.flows.flow_mut(fid) else { return };
        let alone = std::mem::replace(&mut f.space_mut(space).open_episode, running);
        if let Some(open) = alone
            && let Some(e) = self.episodes.get_mut(open.index)
        {
            f.space_mut(space).seq.counts.missing_psns += u64::from(open.close(e));
        }
    }

    /// What made the sender resend from `psn`: the peer's NAK or RNR NAK naming it (or an
    /// earlier PSN), its re-issued READ, or else its own timer when it was silent long enough
    /// for one.
    fn trigger_of(&mut self, fid: FlowId, space: Space, psn: u32, ts_ns: i64, idle_ns: Option<i64>) -> Cause {
        let requester = self.flows.flow(fid);
        let span = requester.map_or(TRACKED_SPAN, |r| requested_span(r, psn));
        let peer = requester.and_then(|f| f.peer).map(|(p, _)| p);
        let peer = peer.and_then(|p| self.flows.flow_mut(p));
        match (space, peer) {
            (Space::Requests, Some(p)) => {
                if let Some(n) = p.answer_nak(psn, ts_ns) {
                    let kind = if n.rnr { Trigger::RnrNak } else { Trigger::NakPsnSeqErr };
                    return Cause {
                        trigger: kind,
                        frame: Some(n.frame),
                        ts_ns: Some(n.ts_ns),
                        rnr_delay_us: n.rnr_delay_us,
                    };
                }
                // a READ re-issued from a PSN whose responses, or later ones, the peer's
                // response sequence skipped (IBA §9.7.5.1.5: the requester reads again from
                // the first response missing)
                if let Some((frame, ts_ns)) = p.responses.seq.unseen_hole_in(psn, span) {
                    return Cause {
                        trigger: Trigger::ResponseGap,
                        frame: Some(frame),
                        ts_ns: Some(ts_ns),
                        rnr_delay_us: None,
                    };
                }
            }
            (Space::Responses, Some(p)) => {
                if let Some(r) = p.answer_reread() {
                    return Cause {
                        trigger: Trigger::Reread,
                        frame: Some(r.frame),
                        ts_ns: Some(r.ts_ns),
                        rnr_delay_us: None,
                    };
                }
            }
            _ => {}
        }
        let timeout = idle_ns.is_some_and(|i| i >= self.config.min_ack_timeout_ns);
        Cause::unseen(if timeout { Trigger::Timeout } else { Trigger::NoNak })
    }

    /// A gap's holes are decided: its frame's verdict, its chart mark and its evidence.
    fn gap_settled(&mut self, fid: FlowId, frame: FrameNumber, ts_ns: i64, first_psn: u32, missing: u32) {
        if let Some(f) = self.flows.flow_mut(fid)
            && missing > 0
        {
            mark_gap(f, frame, ts_ns, first_psn, missing);
        }
        if let Some(v) = &mut self.verdicts {
            v.decide(frame, if missing > 0 { SeqClass::Gap { missing } } else { SeqClass::Ahead }, false);
        }
    }

    /// Bookkeeping of a sequenced packet sent for the first time ([`Flow::count_new_packet`]).
    pub(crate) fn count_new_packet(&mut self, fid: FlowId, ts_ns: i64, roce: &RoceFacts, read_request: bool) {
        if let Some(f) = self.flows.flow_mut(fid) {
            f.count_new_packet(ts_ns, roce, read_request);
        }
    }

    /// Capture time has reached `ts_ns`: decides what the reorder windows that have passed
    /// decide.
    pub(crate) fn expire(&mut self, ts_ns: i64) {
        self.now_ns = self.now_ns.max(ts_ns);
        while let Some(&(deadline, fid)) = self.deadlines.front() {
            if deadline >= self.now_ns {
                break;
            }
            self.deadlines.pop_front();
            self.expire_flow(fid, self.now_ns);
        }
    }

    /// Too many verdicts or packets wait (timestamps far out of order, or crafted): closes
    /// the oldest reorder windows as if they had passed.
    pub(crate) fn close_oldest_windows(&mut self) {
        while self.packets_held > PACKETS_HELD / 2
            || self.verdicts.as_ref().is_some_and(|v| v.len() > VERDICTS_HELD / 2)
        {
            let Some((_, fid)) = self.deadlines.pop_front() else { break };
            self.expire_flow(fid, i64::MAX);
        }
    }

    /// Decides what the flow's reorder windows that ended before `now_ns` decide. Called for
    /// a flow before its PSN spaces take anything new, so that what a flow decides depends on
    /// its own frames and their times only, never on other flows' windows queued before its
    /// own in [`Analyzer::expire`].
    pub(crate) fn expire_flow(&mut self, fid: FlowId, now_ns: i64) {
        if !self.flows.flow(fid).is_some_and(|f| f.requests.seq.waits() || f.responses.seq.waits()) {
            return;
        }
        let config = self.config.reorder;
        self.decide_spaces(fid, |seq, events| seq.expire(now_ns, &config, events));
    }

    /// Runs `decide` on both PSN spaces of a flow and applies what they decided.
    fn decide_spaces(
        &mut self,
        fid: FlowId,
        decide: impl Fn(&mut crate::analyze::roce::flow::sequence::Sequence, &mut Vec<SeqEvent>),
    ) {
        for space in [Space::Requests, Space::Responses] {
            let mut events = std::mem::take(&mut self.events);
            events.clear();
            let Some(f) = self.flows.flow_mut(fid) else { return };
            decide(&mut f.space_mut(space).seq, &mut events);
            self.apply_events(fid, space, &events, None, &mut ReadQueue::default());
            self.events = events;
        }
    }

    /// The flow's end (of the capture, or of its connection): every reorder window has
    /// passed, and its episodes are over.
    pub(crate) fn finish_flow(&mut self, fid: FlowId) {
        let (now_ns, config) = (self.now_ns, self.config.reorder);
        self.decide_spaces(fid, |seq, events| seq.finish(now_ns, &config, events));
        let last_bursts = self.flows.flow_mut(fid).map(|f| {
            f.reaction.finish();
            f.reaction.take_done()
        });
        self.congestion.keep_bursts(last_bursts.unwrap_or_default());
        let Some(f) = self.flows.flow_mut(fid) else { return };
        for space in [Space::Requests, Space::Responses] {
            if let Some(open) = f.space_mut(space).open_episode.take()
                && let Some(e) = self.episodes.get_mut(open.index)
            {
                f.space_mut(space).seq.counts.missing_psns += u64::from(open.close(e));
            }
        }
    }

    /// Ends a flow whose QP number a new connection took over: later packets of its key
    /// start a new flow.
    pub(crate) fn retire_flow(&mut self, fid: FlowId) {
        self.finish_flow(fid);
        if let Some(key) = self.flows.flow(fid).map(|f| f.key) {
            self.flows.retire(&key);
        }
    }

    /// Does this packet begin a new connection on a reused QP number (docs/analysis.md,
    /// "Reused QP numbers")? A request after at least `qp_reuse_idle` of silence does when it
    /// cannot be a resend: its PSN is behind the expected one and was never requested, or two
    /// of the peer's ACKs acknowledged it already (a job restarted at PSN 0); or it jumps
    /// further ahead than holes are tracked after the peer acknowledged everything (a new
    /// random first PSN).
    pub(crate) fn is_new_connection(&self, fid: FlowId, ts_ns: i64, roce: &RoceFacts) -> bool {
        if opcode::is_unsequenced(roce.opcode) || opcode::is_read_response(roce.opcode) {
            return false;
        }
        let Some(f) = self.flows.flow(fid) else { return false };
        let Some(e) = f.requests.seq.expected() else { return false };
        if f.counts.packets == 0 || ts_ns.saturating_sub(f.last_ts_ns) < self.config.qp_reuse_idle_ns {
            return false;
        }
        let ahead = psn_forward_distance(roce.psn, e);
        if roce.psn != e && ahead >= PSN_HALF {
            !f.psn_was_requested(roce.psn) || f.psn_was_acknowledged_twice(roce.psn)
        } else {
            ahead >= crate::analyze::roce::flow::gaps::TRACKED_SPAN && f.all_acknowledged()
        }
    }

    /// Ends a flow whose QP number a new connection takes over, and its peer when that was
    /// idle as long: the new connection's packets in both directions start flows of their own.
    pub(crate) fn end_connection(&mut self, fid: FlowId, ts_ns: i64) {
        let idle = self.config.qp_reuse_idle_ns;
        let peer = self.flows.flow(fid).and_then(|f| f.peer).map(|(p, _)| p);
        if let Some(p) =
            peer.filter(|&p| self.flows.flow(p).is_some_and(|p| ts_ns.saturating_sub(p.last_ts_ns) >= idle))
        {
            self.retire_flow(p);
        }
        self.retire_flow(fid);
    }
}

/// A gap of `missing` PSNs from `first_psn` found at `frame`: the flow's evidence and its
/// chart's mark.
fn mark_gap(f: &mut Flow, frame: FrameNumber, ts_ns: i64, first_psn: u32, missing: u32) {
    earliest(&mut f.first_frames.gap, frame);
    if let Some(t) = &mut f.trace {
        t.event(Event { ts_ns, psn: first_psn, kind: EventKind::Gap { count: missing } });
    }
}

/// The PSNs from `psn` up to the end of what `requester` has requested (the PSNs a re-read
/// from `psn` may cover: the READs' responses), as far as known.
fn requested_span(requester: &Flow, psn: u32) -> u32 {
    requester.requests.seq.requested_end().map_or(TRACKED_SPAN, |end| psn_forward_distance(end, psn))
}

/// Keeps the earliest of the frames given (packets can be decided out of order).
fn earliest(first: &mut Option<FrameNumber>, frame: FrameNumber) {
    *first = Some(first.map_or(frame, |f| f.min(frame)));
}

fn dma_len(roce: &RoceFacts) -> u32 {
    roce.reth.map_or(0, |r| r.dma_len)
}
