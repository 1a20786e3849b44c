//! What a flow keeps between packets to take the next one and that no report reads: packets
//! waiting for a decision, the peer's READs its responses follow, the NAKs and re-issued READ
//! that explain the peer's resends, requests awaiting an ACK, the message being reassembled,
//! the last CNP and the CE mark awaiting one, the pairing candidates left. Its fields are
//! private to the flow module: the analysis changes them through the methods of
//! [`crate::analyze::roce::flow::table::Flow`] in `between_packets.rs`.

use crate::analyze::combining::Combine;
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use std::collections::VecDeque;

use rocescope_parsers::psn::psn_diff;

use crate::analyze::frame::RoceFacts;
use crate::analyze::roce::flow::pairing::Candidates;
use crate::analyze::roce::flow::responses::{ReadQueue, ResponseCursor};

/// A NAK or RNR NAK a flow carried, to explain the peer's next retransmissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct NakEvent {
    pub rnr: bool,
    pub psn: u32,
    pub ts_ns: i64,
    pub frame: FrameNumber,
    pub rnr_delay_us: Option<u32>,
    /// When a later ACK of the flow first covered the PSN it names: that PSN had arrived by
    /// then (IBA §9.7.5.1.1), a resend or the late original, whether or not the capture holds
    /// it.
    pub acknowledged_ns: Option<i64>,
}

/// NAKs a flow remembers that no retransmit episode has answered yet; beyond, the oldest is
/// forgotten.
pub const NAKS_KEPT: usize = 64;

/// The NAKs and RNR NAKs a flow carried that no episode of the peer has answered yet, in
/// arrival order. Several recoveries can be under way at once (selective repeat NAKs each
/// lost PSN and resends it alone), so an episode takes the NAK that names the PSN it resends
/// first, never simply the latest (docs/analysis.md, "Retransmit episodes").
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber)]
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

    /// The NAK an episode whose first resent PSN is `psn`, at `ts_ns`, answers, taken out:
    /// the latest one naming `psn` (with every earlier one naming it: one resend answers them
    /// all), else the latest one naming a PSN before `psn` that no ACK had covered by then
    /// (the sender went back to it and resent from a later PSN, the ones between having
    /// arrived). A NAK naming a later PSN asks for a resend that has not begun.
    pub fn answer(&mut self, psn: u32, ts_ns: i64) -> Option<NakEvent> {
        let naming = self.unanswered.iter().rposition(|n| n.psn == psn);
        if let Some(i) = naming {
            let nak = self.unanswered[i];
            self.unanswered.retain(|n| n.psn != psn);
            return Some(nak);
        }
        let open = |n: &NakEvent| n.ts_ns <= ts_ns && n.acknowledged_ns.is_none_or(|a| a > ts_ns);
        let before = self.unanswered.iter().rposition(|n| psn_diff(n.psn, psn) < 0 && open(n))?;
        self.unanswered.remove(before)
    }

    /// An ACK of `psn` at `ts_ns`: the PSN every NAK naming it or an earlier PSN asked for had
    /// arrived by then.
    pub fn acknowledged(&mut self, psn: u32, ts_ns: i64) {
        let covered = |n: &&mut NakEvent| psn_diff(n.psn, psn) <= 0 && n.acknowledged_ns.is_none();
        for n in self.unanswered.iter_mut().filter(covered) {
            n.acknowledged_ns = Some(ts_ns);
        }
    }

    /// Does an unanswered PSN-sequence NAK from before `ts_ns` name a PSN `naming` accepts? An
    /// ACK covering its PSN since does not close it: the late original may have arrived, and
    /// the sender answers the NAK all the same.
    pub fn names(&self, ts_ns: i64, naming: impl Fn(u32) -> bool) -> bool {
        self.unanswered.iter().any(|n| !n.rnr && n.ts_ns <= ts_ns && naming(n.psn))
    }
}

/// A READ request the flow sent again, to explain the peer's next resent READ responses.
#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize, Renumber)]
pub struct RereadEvent {
    pub frame: FrameNumber,
    pub ts_ns: i64,
    pub(super) used: bool,
}

/// A sequenced packet waiting for the analysis to decide whether it came late.
#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Held {
    pub frame: FrameNumber,
    pub ts_ns: i64,
    pub facts: RoceFacts,
    /// Time since the flow's previous sequenced packet when it arrived.
    pub idle_ns: Option<i64>,
}

/// How many notifications of unknown addressee a flow keeps until it is paired: the first after
/// the peer's waiting mark is all a pairing looks for, and marks come before their CNPs.
pub const UNADDRESSED_KEPT: usize = 16;

/// How many requests awaiting an ACK a flow remembers for ACK latency.
pub const OUTSTANDING_KEPT: usize = 1024;

/// A flow's state between packets that no report reads (see the module's comment): running
/// state, which a later part's analysis took on.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct FlowRuntime {
    /// Where the response space stands among the peer's READs.
    #[combine(end)]
    pub(super) cursor: ResponseCursor,
    /// This flow's READ requests whose responses are awaited on the peer flow.
    #[combine(end)]
    pub(super) reads: ReadQueue,
    /// Sequenced packets waiting for a decision, in arrival order.
    #[combine(end)]
    pub(super) held: VecDeque<Held>,
    #[combine(end)]
    pub(super) reread: Option<RereadEvent>,
    #[combine(end)]
    pub(super) current_message_bytes: u64,
    /// Unpaired, with responses: the flows in the opposite direction it may answer, narrowed
    /// by each response (empty until a response leaves several; [`crate::analyze::roce::flow::pairing`]).
    #[combine(end)]
    pub(super) pairing_candidates: Candidates,
    /// Unpaired, with no candidate: the flow table's generation
    /// ([`crate::analyze::roce::flow::table::FlowTable::generation`]) when none of the flows
    /// the other way could ever fit a response, so that no response tries again until that
    /// changes. Not saved: a part read back tries once more.
    #[serde(skip)]
    #[combine(end)]
    pub(super) unpairable_at: UnpairableAt,
    /// The NAKs it carried that no episode of the peer has answered yet.
    #[combine(end)]
    pub(super) naks: NakLog,
    /// Requests awaiting an ACK (PSN, time), in PSN order.
    #[combine(end)]
    pub(super) outstanding: VecDeque<(u32, i64)>,
    /// The furthest PSN the peer's ACKs have acknowledged (every PSN up to it arrived), and
    /// the one the ACK before acknowledged.
    #[combine(end)]
    pub(super) acknowledged_through: Option<u32>,
    #[combine(end)]
    pub(super) acknowledged_before: Option<u32>,
    /// The view (addresses and TTL, folded as the copy check folds them) of a resend that came
    /// after a retransmission timer's silence through another port than its original's
    /// ([`crate::analyze::roce::wide::duplicates::Resends`]).
    #[combine(end)]
    pub(super) resend_view: Option<u32>,
    #[combine(end)]
    pub(super) last_cnp_ts: Option<i64>,
    /// The first CE mark not yet answered by a CNP addressed to the flow's sender.
    #[combine(end)]
    pub(super) unanswered_ce_ts: Option<i64>,
    /// Unpaired: the times of the notifications (CNPs, BECNs) it carried whose addressee was not
    /// known then (the first [`UNADDRESSED_KEPT`]), for its peer's waiting mark once paired.
    #[combine(end)]
    pub(super) unaddressed_notifications: Vec<i64>,
    /// Timestamp of the last sequenced packet.
    #[combine(end)]
    pub(super) last_sequenced_ts: Option<i64>,
}

/// When a flow's responses could fit no flow the other way ([`FlowRuntime::unpairable_at`]):
/// work saved, which changes no result, so that two analyses of the same frames are alike
/// whatever generations their tables went through (a merge compares flows where the parts
/// meet): any two are equal.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnpairableAt(pub Option<u64>);

impl PartialEq for UnpairableAt {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

crate::holds_no_numbers!(UnpairableAt);
