//! What a flow keeps between packets to take the next one and that no report reads: packets
//! waiting for a decision, the peer's READs its responses follow, the NAKs and re-issued READ
//! that explain the peer's resends, requests awaiting an ACK, the message being reassembled,
//! the last CNP and the CE mark awaiting one, the pairing candidates left. Its fields are
//! private to this module: the analysis changes them through [`Flow`]'s methods below.

use std::collections::VecDeque;

use rocescope_parsers::opcode::Position;
use rocescope_parsers::psn::psn_diff;

use crate::analyze::flow::pairing::Candidates;
use crate::analyze::flow::responses::{Read, ReadQueue, ResponseCursor, ResponseRules};
use crate::analyze::flow::table::Flow;
use crate::analyze::frame::RoceFacts;
use crate::analyze::id::FlowId;
use crate::analyze::renumber::Renumbering;

/// A NAK or RNR NAK a flow carried, to explain the peer's next retransmissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NakEvent {
    pub rnr: bool,
    pub psn: u32,
    pub ts_ns: i64,
    pub frame: u64,
    pub rnr_delay_us: Option<u32>,
}

/// NAKs a flow remembers that no retransmit episode has answered yet; beyond, the oldest is
/// forgotten.
pub const NAKS_KEPT: usize = 64;

/// The NAKs and RNR NAKs a flow carried that no episode of the peer has answered yet, in
/// arrival order. Several recoveries can be under way at once (selective repeat NAKs each
/// lost PSN and resends it alone), so an episode takes the NAK that names the PSN it resends
/// first, never simply the latest (docs/analysis.md, "Retransmit episodes").
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct NakLog {
    unanswered: VecDeque<NakEvent>,
}

impl NakLog {
    pub fn push(&mut self, nak: NakEvent) {
        if self.unanswered.len() == NAKS_KEPT {
            self.unanswered.pop_front();
        }
        self.unanswered.push_back(nak);
    }

    /// The NAK an episode whose first resent PSN is `psn` answers, taken out: the latest one
    /// naming `psn` (with every earlier one naming it: one resend answers them all), else the
    /// latest one naming a PSN before `psn` (the sender went back to it and resent from a
    /// later PSN, the ones between having arrived). A NAK naming a later PSN asks for a
    /// resend that has not begun.
    pub fn answer(&mut self, psn: u32) -> Option<NakEvent> {
        let naming = self.unanswered.iter().rposition(|n| n.psn == psn);
        if let Some(i) = naming {
            let nak = self.unanswered[i];
            self.unanswered.retain(|n| n.psn != psn);
            return Some(nak);
        }
        let before = self.unanswered.iter().rposition(|n| psn_diff(n.psn, psn) < 0)?;
        self.unanswered.remove(before)
    }

    fn renumber(&mut self, r: &Renumbering) {
        self.unanswered.iter_mut().for_each(|n| r.frame(&mut n.frame));
    }
}

/// A READ request the flow sent again, to explain the peer's next resent READ responses.
#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize)]
pub struct RereadEvent {
    pub frame: u64,
    pub ts_ns: i64,
    used: bool,
}

/// A sequenced packet waiting for the analysis to decide whether it came late.
#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize)]
pub struct Held {
    pub frame: u64,
    pub ts_ns: i64,
    pub facts: RoceFacts,
    /// Time since the flow's previous sequenced packet when it arrived.
    pub idle_ns: Option<i64>,
}

/// How many requests awaiting an ACK a flow remembers for ACK latency.
pub const OUTSTANDING_KEPT: usize = 1024;

/// A flow's state between packets that no report reads (see the module's comment).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct FlowRuntime {
    /// Where the response space stands among the peer's READs.
    cursor: ResponseCursor,
    /// This flow's READ requests whose responses are awaited on the peer flow.
    reads: ReadQueue,
    /// Sequenced packets waiting for a decision, in arrival order.
    held: VecDeque<Held>,
    reread: Option<RereadEvent>,
    current_message_bytes: u64,
    /// Unpaired, with responses: the flows in the opposite direction it may answer, narrowed
    /// by each response (empty until a response leaves several; [`crate::analyze::flow::pairing`]).
    pairing_candidates: Candidates,
    /// The NAKs it carried that no episode of the peer has answered yet.
    naks: NakLog,
    /// Requests awaiting an ACK (PSN, time), in PSN order.
    outstanding: VecDeque<(u32, i64)>,
    last_cnp_ts: Option<i64>,
    /// The first CE mark not yet answered by a CNP on the peer flow.
    unanswered_ce_ts: Option<i64>,
    /// Timestamp of the last sequenced packet.
    last_sequenced_ts: Option<i64>,
}

impl FlowRuntime {
    pub(super) fn renumber(&mut self, r: &Renumbering) {
        self.held.iter_mut().for_each(|h| r.frame(&mut h.frame));
        if let Some(reread) = &mut self.reread {
            r.frame(&mut reread.frame);
        }
        self.pairing_candidates.iter_mut().for_each(|c| r.flow(c));
        self.naks.renumber(r);
    }

    /// Takes on what comes next from `end`, a later state of the same flow.
    pub(super) fn graft(&mut self, end: FlowRuntime) {
        *self = end;
    }
}

/// Sequencing: packets held for a decision, the silence before each, READs and responses.
impl Flow {
    /// A sequenced packet arrives at `ts_ns`: the silence since the previous one.
    pub fn sequenced_at(&mut self, ts_ns: i64) -> Option<i64> {
        self.run.last_sequenced_ts.replace(ts_ns).map(|t| ts_ns.saturating_sub(t))
    }

    pub fn hold(&mut self, held: Held) {
        self.run.held.push_back(held);
    }

    /// The held packet of `frame`, taken out.
    pub fn take_held(&mut self, frame: u64) -> Option<Held> {
        let i = self.run.held.iter().position(|h| h.frame == frame)?;
        self.run.held.remove(i)
    }

    /// Its READ requests awaiting responses, taken out for the peer's response space.
    pub fn take_reads(&mut self) -> ReadQueue {
        std::mem::take(&mut self.run.reads)
    }

    pub fn put_back_reads(&mut self, reads: ReadQueue) {
        self.run.reads = reads;
    }

    pub fn await_read(&mut self, read: Read) {
        self.run.reads.push(read);
    }

    /// The rules a READ response of `psn` at `position` is taken by, among the peer's `reads`;
    /// the response space expects what the cursor expects.
    pub fn response_rules(&mut self, reads: &ReadQueue, pmtu: u32, psn: u32, position: Position) -> ResponseRules {
        let rules = self.run.cursor.rules(reads, pmtu, psn, position);
        self.responses.seq.set_expected(self.run.cursor.expected(reads));
        rules
    }

    /// A new READ response moves the cursor on among the peer's `reads`.
    pub fn advance_cursor(&mut self, reads: &mut ReadQueue, pmtu: u32, psn: u32, position: Position) {
        self.run.cursor.advance(reads, pmtu, psn, position);
    }

    /// Where its response space stands among the peer's READs.
    pub fn response_cursor(&self) -> ResponseCursor {
        self.run.cursor
    }

    /// Its READs whose responses the peer carried before the two were paired (up to the
    /// peer's `cursor`) are answered.
    pub fn forget_reads_answered(&mut self, cursor: &ResponseCursor) {
        self.run.reads.forget_answered(cursor);
    }

    /// It re-issued a READ request: the peer's next resent responses answer it.
    pub fn reissued_read(&mut self, frame: u64, ts_ns: i64) {
        self.run.reread = Some(RereadEvent { frame, ts_ns, used: false });
    }

    /// The re-issued READ no resend has answered yet, now answered.
    pub fn answer_reread(&mut self) -> Option<RereadEvent> {
        let reread = self.run.reread.as_mut().filter(|r| !r.used)?;
        reread.used = true;
        Some(*reread)
    }

    /// The NAK a resend from `psn` by the peer answers ([`NakLog::answer`]).
    pub fn answer_nak(&mut self, psn: u32) -> Option<NakEvent> {
        self.run.naks.answer(psn)
    }

    pub(super) fn remember_nak(&mut self, nak: NakEvent) {
        self.run.naks.push(nak);
    }
}

/// Pairing: the candidates an unpaired response flow has left.
impl Flow {
    pub fn pairing_candidates(&self) -> &[FlowId] {
        &self.run.pairing_candidates
    }

    pub fn set_pairing_candidates(&mut self, candidates: Candidates) {
        self.run.pairing_candidates = candidates;
    }

    pub(super) fn forget_candidate(&mut self, paired: FlowId) {
        self.run.pairing_candidates.retain(|c| *c != paired);
    }
}

/// Messages, ACK latency and congestion marks, timed between packets.
impl Flow {
    /// A request asking for an ACK, sent at `ts_ns` (a late one takes its place in PSN order).
    pub(super) fn await_ack(&mut self, psn: u32, ts_ns: i64) {
        let outstanding = &mut self.run.outstanding;
        if outstanding.len() == OUTSTANDING_KEPT {
            outstanding.pop_front();
        }
        let at = outstanding.iter().rposition(|&(p, _)| psn_diff(p, psn) < 0).map_or(0, |i| i + 1);
        outstanding.insert(at, (psn, ts_ns));
    }

    /// An ACK of `psn` at `ts_ns` acknowledges every request up to it: their ACK latencies.
    pub fn acknowledged(&mut self, psn: u32, ts_ns: i64) {
        while let Some(&(request_psn, request_ts)) = self.run.outstanding.front() {
            if psn_diff(psn, request_psn) < 0 {
                break;
            }
            self.run.outstanding.pop_front();
            self.ack_latency.record(u64::try_from(ts_ns - request_ts).unwrap_or(0));
        }
    }

    /// A packet of a message at `position` with `payload` bytes: a whole message counted at
    /// its last packet (or its only one, when it carries a payload).
    pub(super) fn count_message_part(&mut self, position: Position, carries_payload: bool, payload: u64) {
        let whole = match position {
            Position::First => {
                self.run.current_message_bytes = payload;
                return;
            }
            Position::Middle => {
                self.run.current_message_bytes += payload;
                return;
            }
            Position::Last => std::mem::take(&mut self.run.current_message_bytes) + payload,
            Position::Only if carries_payload => payload,
            Position::Only => return,
        };
        self.counts.messages += 1;
        self.message_bytes.record(whole);
    }

    /// A CNP at `ts_ns`: the spacing since the previous one.
    pub(super) fn cnp_at(&mut self, ts_ns: i64) {
        if let Some(last) = self.run.last_cnp_ts.replace(ts_ns) {
            self.cnp_spacing.record(u64::try_from(ts_ns - last).unwrap_or(0));
        }
    }

    /// A congestion-marked packet at `ts_ns`: the first mark awaiting a notification.
    pub(super) fn congestion_mark_at(&mut self, ts_ns: i64) {
        self.run.unanswered_ce_ts.get_or_insert(ts_ns);
    }

    /// A notification (CNP or BECN) from the peer at `ts_ns` answers the first waiting mark:
    /// the delay from mark to notification.
    pub fn notified_at(&mut self, ts_ns: i64) {
        if let Some(mark) = self.run.unanswered_ce_ts.take() {
            self.ce_to_cnp.record(u64::try_from(ts_ns - mark).unwrap_or(0));
        }
    }
}
