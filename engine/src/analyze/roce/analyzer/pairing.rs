//! Pairing a response flow with the flow it answers: as the hosts' QP tables say, where they
//! name its QPs ([`crate::analyze::identity::known`]), else from the evidence of its responses
//! ([`crate::analyze::roce::flow::pairing`]), across the flow table.

use crate::analyze::id::{FlowId, FlowKey};
use crate::analyze::roce::analyzer::{Analyzer, MAX_PAIRING_CANDIDATES};
use crate::analyze::roce::flow::pairing::{CANDIDATES_KEPT, Candidates};
use crate::analyze::roce::flow::table::{Flow, PairMethod};

impl Analyzer {
    /// The new flow `fid` of `key`: paired with the other direction its QPs' tables name, when
    /// the capture holds exactly one such flow unpaired; its sender's QP set from the tables.
    pub(crate) fn pair_by_table(&mut self, fid: FlowId, key: FlowKey) {
        let Some(other) = self.known_qps.other_direction(&key) else { return };
        let unpaired =
            |k: &FlowKey| self.flows.get(k).filter(|&id| self.flows.flow(id).is_some_and(|f| f.peer.is_none()));
        let found: Vec<FlowId> = other.iter().filter_map(unpaired).collect();
        let sender = self.known_qps.sender(&key);
        if let Some(f) = self.flows.flow_mut(fid).filter(|f| f.peer.is_none()) {
            f.src_qp = f.src_qp.or(sender);
            if let [peer] = found[..] {
                self.flows.pair(fid, peer, PairMethod::HostTable);
            }
        }
    }

    /// Has flow `id` requested a PSN yet?
    fn requested(&self, id: FlowId) -> bool {
        self.flows.flow(id).is_some_and(Flow::has_requested)
    }

    /// Do the hosts' tables name the QPs of flow `id` (so that its pairing is theirs, never the
    /// evidence's)?
    fn tabled(&self, id: FlowId) -> bool {
        !self.known_qps.is_empty() && self.flows.flow(id).is_some_and(|f| self.known_qps.names(&f.key))
    }

    /// Pairs the unpaired response flow `fid` with the flow it answers once the PSNs of its
    /// responses (this one, naming `psn`, and those before) leave one candidate; then pairs
    /// the flows that were left one candidate by that. A flow none of whose flows the other
    /// way could fit (none unpaired has requested yet, or there are too many to scan) is not
    /// tried again while the flow table's generation stays
    /// ([`crate::analyze::roce::flow::table::FlowTable::generation`]): on a
    /// capture of ACKs whose requests it lacks, every ACK would scan in vain.
    pub(crate) fn pair_by_evidence(&mut self, fid: FlowId, psn: u32) {
        let Some(f) = self.flows.flow(fid).filter(|f| f.peer.is_none()) else { return };
        if self.tabled(fid) {
            return;
        }
        let fresh = f.pairing_candidates().is_empty();
        let generation = self.flows.generation();
        // nothing the other way could fit, and nothing changed since
        if fresh && f.unpairable_at() == Some(generation) {
            return;
        }
        let pool: &[FlowId] = if fresh { self.flows.between(f.key.dst, f.key.src) } else { f.pairing_candidates() };
        let available =
            |c: &FlowId| *c != fid && !self.tabled(*c) && self.flows.flow(*c).is_some_and(|c| c.peer.is_none());
        if fresh && (pool.len() > MAX_PAIRING_CANDIDATES || !pool.iter().any(|c| available(c) && self.requested(*c))) {
            if let Some(f) = self.flows.flow_mut(fid) {
                f.set_unpairable_at(Some(generation));
            }
            return;
        }
        let fits = |c: &FlowId| available(c) && self.flows.flow(*c).is_some_and(|c| c.psn_in_range(psn));
        let left: Candidates = pool.iter().copied().filter(fits).collect();
        let method = if fresh { PairMethod::Psn } else { PairMethod::Ack };
        match left[..] {
            // the evidence fits no candidate: a response to a flow the capture lacks
            [] => {}
            [forward] if !self.psns_are_shared(forward) && !self.is_contested(fid, forward) => {
                self.pair_and_eliminate(fid, forward, method);
            }
            // a sole candidate by range alone may be a stranger: the QP answered may be one
            // the capture lacks (the other half of an ECMP fabric)
            _ => {
                if let Some(f) = self.flows.flow_mut(fid) {
                    f.set_pairing_candidates(if left.len() <= CANDIDATES_KEPT { left } else { Candidates::new() });
                }
            }
        }
    }

    /// The unpaired request flow `resender` begins resending from `psn` at `ts_ns`: the one
    /// unpaired flow of responses the other way that carried a PSN-sequence NAK naming `psn`
    /// before, and not yet answered, is its peer (IBA §9.7.5.1.5: a requester answers a NAK by
    /// resending from the PSN it names), unless another such flow's unanswered NAK names an
    /// earlier PSN `resender` sent: its go-back-N, the resends before `psn` lost before the
    /// tap, would reach the tap at `psn` too.
    pub(crate) fn pair_by_answer(&mut self, resender: FlowId, psn: u32, ts_ns: i64) {
        let Some(r) = self.flows.flow(resender).filter(|r| r.peer.is_none()) else { return };
        if self.tabled(resender) {
            return;
        }
        let unpaired = |c: FlowId| self.flows.flow(c).filter(|c| c.peer.is_none()).filter(|_| !self.tabled(c));
        let between = self.flows.between(r.key.dst, r.key.src);
        let answerable = |&c: &FlowId| unpaired(c).is_some_and(|c| c.may_await_resend_at(r, psn, ts_ns));
        let answerable: Candidates = between.iter().copied().filter(answerable).collect();
        if let [response] = answerable[..]
            && unpaired(response).is_some_and(|c| c.awaits_resend_of(psn, ts_ns))
        {
            self.pair_and_eliminate(response, resender, PairMethod::Nak);
        }
    }

    /// Pairs `response` with `forward`, then every response flow whose last candidate that
    /// leaves is one other flow (the others are paired).
    fn pair_and_eliminate(&mut self, response: FlowId, forward: FlowId, method: PairMethod) {
        let mut pairs = vec![(response, forward, method)];
        while let Some((response, forward, method)) = pairs.pop() {
            if self.flows.flow(forward).is_none_or(|f| f.peer.is_some()) {
                continue;
            }
            self.flows.pair(response, forward, method);
            self.forget_answered_reads(response, forward);
            self.forget_answered_reads(forward, response);
            let Some(key) = self.flows.flow(response).map(|f| f.key) else { continue };
            for &sibling in self.flows.between(key.src, key.dst) {
                let Some(s) = self.flows.flow(sibling).filter(|s| s.peer.is_none()) else { continue };
                if !s.pairing_candidates().contains(&forward) {
                    continue;
                }
                let left: Candidates = s
                    .pairing_candidates()
                    .iter()
                    .copied()
                    .filter(|&c| c != forward && self.flows.flow(c).is_some_and(|c| c.peer.is_none()))
                    .collect();
                if let [last] = left[..]
                    && !self.psns_are_shared(last)
                    && !self.is_contested(sibling, last)
                {
                    pairs.push((sibling, last, PairMethod::Elimination));
                }
            }
            self.flows.forget_candidate(key.src, key.dst, forward);
        }
    }

    /// Does request flow `forward` share its PSNs with another QP between the same hosts, so
    /// that a response's PSN in its range proves nothing (docs/analysis.md, "Pairing")? Its
    /// range overlaps another request flow's (QPs that start at the same PSN, as NCCL's all
    /// start at 0): the QP answered may then be one whose requests the capture lacks.
    fn psns_are_shared(&self, forward: FlowId) -> bool {
        let Some(f) = self.flows.flow(forward) else { return false };
        self.flows
            .between(f.key.src, f.key.dst)
            .iter()
            .any(|&other| other != forward && self.flows.flow(other).is_some_and(|o| f.ranges_overlap(o)))
    }

    /// Does another unpaired flow of responses between the same hosts as `response` still
    /// hold `forward` as a candidate (two QPs' responses fit it)?
    fn is_contested(&self, response: FlowId, forward: FlowId) -> bool {
        let Some(f) = self.flows.flow(response) else { return false };
        self.flows.between(f.key.src, f.key.dst).iter().any(|&other| {
            other != response
                && self.flows.flow(other).is_some_and(|o| o.peer.is_none() && o.pairing_candidates().contains(&forward))
        })
    }

    /// `requester`'s READs whose responses `responder` carried before the two were paired are
    /// answered: the response space does not wait for them.
    fn forget_answered_reads(&mut self, responder: FlowId, requester: FlowId) {
        let Some(cursor) = self.flows.flow(responder).map(Flow::response_cursor) else { return };
        if let Some(r) = self.flows.flow_mut(requester) {
            r.forget_reads_answered(&cursor);
        }
    }
}
