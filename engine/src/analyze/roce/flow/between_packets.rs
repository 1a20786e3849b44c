//! What a flow keeps between packets ([`FlowRuntime`]), changed only through these methods of
//! [`Flow`]: the packets held for a decision, READs and their responses, NAKs and re-issued
//! READs, pairing candidates, requests awaiting an ACK, the message in reassembly, CNPs and CE
//! marks.

use rocescope_parsers::opcode::Position;
use rocescope_parsers::psn::psn_diff;

use crate::analyze::id::FlowId;
use crate::analyze::id::FrameNumber;
use crate::analyze::roce::flow::pairing::Candidates;
use crate::analyze::roce::flow::responses::{Read, ReadQueue, ResponseCursor, ResponseRules};
use crate::analyze::roce::flow::runtime::{
    Held, NakEvent, OUTSTANDING_KEPT, RereadEvent, UNADDRESSED_KEPT, UnpairableAt,
};
use crate::analyze::roce::flow::table::Flow;

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
    pub fn take_held(&mut self, frame: FrameNumber) -> Option<Held> {
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
    pub fn reissued_read(&mut self, frame: FrameNumber, ts_ns: i64) {
        self.run.reread = Some(RereadEvent { frame, ts_ns, used: false });
    }

    /// The re-issued READ no resend has answered yet, now answered.
    pub fn answer_reread(&mut self) -> Option<RereadEvent> {
        let reread = self.run.reread.as_mut().filter(|r| !r.used)?;
        reread.used = true;
        Some(*reread)
    }

    /// The NAK a resend from `psn` at `ts_ns` by the peer answers ([`crate::analyze::roce::flow::runtime::NakLog::answer`]).
    pub fn answer_nak(&mut self, psn: u32, ts_ns: i64) -> Option<NakEvent> {
        self.run.naks.answer(psn, ts_ns)
    }

    /// Did the flow carry a PSN-sequence NAK naming `psn`, before `ts_ns`, that no resend has
    /// answered?
    pub fn awaits_resend_of(&self, psn: u32, ts_ns: i64) -> bool {
        self.run.naks.names(ts_ns, |named| named == psn)
    }

    /// Could `resender`'s resend from `psn` at `ts_ns` answer one of this flow's unanswered
    /// PSN-sequence NAKs: one naming `psn`, or an earlier PSN `resender` sent, whose resends
    /// up to `psn` were lost before the tap?
    pub fn may_await_resend_at(&self, resender: &Flow, psn: u32, ts_ns: i64) -> bool {
        let earlier = |named: u32| psn_diff(named, psn) < 0 && resender.psn_was_requested(named);
        self.run.naks.names(ts_ns, |named| named == psn || earlier(named))
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

    /// The flow table's generation when no flow the other way could fit the flow's responses
    /// ([`Flow::set_unpairable_at`]).
    pub fn unpairable_at(&self) -> Option<u64> {
        self.run.unpairable_at.0
    }

    /// No flow the other way can fit the flow's responses while the flow table stays at
    /// `generation`.
    pub fn set_unpairable_at(&mut self, generation: Option<u64>) {
        self.run.unpairable_at = UnpairableAt(generation);
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

    /// Has the flow been silent for `timer_ns` before `ts_ns` (a packet now is a resend
    /// whatever port it left by, no second tap's copy)?
    pub fn silent_before(&self, ts_ns: i64, timer_ns: i64) -> bool {
        self.counts.packets > 0 && ts_ns.saturating_sub(self.last_ts_ns) >= timer_ns
    }

    /// The view (port or tap) a packet after a timer's silence came by, through which the
    /// flow's packets are its own, no copies.
    pub fn resend_view(&self) -> Option<u32> {
        self.run.resend_view
    }

    pub fn resends_through(&mut self, view: u32) {
        self.run.resend_view = Some(view);
    }

    /// An ACK of `psn` at `ts_ns` acknowledges every request up to it: their ACK latencies.
    pub fn acknowledged(&mut self, psn: u32, ts_ns: i64) {
        let further = self.run.acknowledged_through.is_none_or(|t| psn_diff(psn, t) > 0);
        if further && self.psn_was_requested(psn) {
            self.run.acknowledged_before = self.run.acknowledged_through.replace(psn);
        }
        while let Some(&(request_psn, request_ts)) = self.run.outstanding.front() {
            if psn_diff(psn, request_psn) < 0 {
                break;
            }
            self.run.outstanding.pop_front();
            self.ack_latency.record(u64::try_from(ts_ns - request_ts).unwrap_or(0));
            self.requests.seq.acknowledged_after(ts_ns - request_ts);
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

    /// When the first congestion mark awaiting a notification came, if one awaits.
    pub fn waiting_mark(&self) -> Option<i64> {
        self.run.unanswered_ce_ts
    }

    /// A notification (CNP or BECN) at `ts_ns` that this flow carried to a QP no flow is known
    /// to be sent by: kept until the flow is paired ([`Flow::notified_before_pairing`]).
    pub fn carried_unaddressed_notification(&mut self, ts_ns: i64) {
        if self.run.unaddressed_notifications.len() < UNADDRESSED_KEPT {
            self.run.unaddressed_notifications.push(ts_ns);
        }
    }

    /// The notifications it carried before it was paired, to a QP no flow was known to be sent
    /// by then, taken out.
    pub(super) fn take_unaddressed_notifications(&mut self) -> Vec<i64> {
        std::mem::take(&mut self.run.unaddressed_notifications)
    }

    /// Paired with the flow that carried notifications at `times` before, of unknown addressee
    /// then: they were addressed to this flow's sender, and the first after the waiting mark
    /// answers it.
    pub(super) fn notified_before_pairing(&mut self, times: &[i64]) {
        let mark = self.run.unanswered_ce_ts;
        if let Some(&first) = times.iter().find(|&&t| mark.is_some_and(|m| t >= m)) {
            self.notified_at(first);
        }
    }

    /// A notification (CNP or BECN) addressed to this flow's sender at `ts_ns` answers the
    /// first waiting mark: the delay from mark to notification.
    pub fn notified_at(&mut self, ts_ns: i64) {
        if let Some(mark) = self.run.unanswered_ce_ts.take() {
            self.ce_to_cnp.record(u64::try_from(ts_ns - mark).unwrap_or(0));
        }
    }
}
