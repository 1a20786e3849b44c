//! Pairing a response flow with the flow it answers from the evidence of its responses
//! ([`crate::analyze::flow::pairing`]), across the flow table.

use crate::analyze::analyzer::{Analyzer, MAX_PAIRING_CANDIDATES};
use crate::analyze::flow::pairing::{CANDIDATES_KEPT, Candidates, Evidence};
use crate::analyze::flow::table::{Flow, PairMethod};
use crate::analyze::id::FlowId;

impl Analyzer {
    /// Pairs the unpaired response flow `fid` with the flow it answers once the evidence of
    /// its responses (this one, naming `psn`, and those before) leaves one candidate; then
    /// pairs the flows that were left one candidate by that.
    pub(crate) fn pair_by_evidence(&mut self, fid: FlowId, psn: u32, evidence: Evidence) {
        let Some(f) = self.flows.flow(fid).filter(|f| f.peer.is_none()) else { return };
        let fresh = f.pairing_candidates().is_empty();
        let pool: &[FlowId] = if fresh {
            let between = self.flows.between(f.key.dst, f.key.src);
            if between.len() > MAX_PAIRING_CANDIDATES {
                return;
            }
            between
        } else {
            f.pairing_candidates()
        };
        let fits =
            |c: &FlowId| *c != fid && self.flows.flow(*c).is_some_and(|c| c.peer.is_none() && c.psn_in_range(psn));
        let in_range: Candidates = pool.iter().copied().filter(fits).collect();
        let with_hole: Candidates = match evidence {
            Evidence::Nak => in_range
                .iter()
                .copied()
                .filter(|&c| self.flows.flow(c).is_some_and(|c| c.requests.seq.is_hole(psn)))
                .collect(),
            Evidence::Psn => Candidates::new(),
        };
        let (left, method) = match (with_hole.len(), in_range.len()) {
            (1, _) => (with_hole, PairMethod::Nak),
            (_, 1) if fresh => (in_range, PairMethod::Psn),
            (_, 1) => (in_range, PairMethod::Ack),
            // the evidence fits no candidate: a response to a flow the capture lacks
            (_, 0) => return,
            (0, _) => (in_range, PairMethod::Psn),
            _ => (with_hole, PairMethod::Nak),
        };
        if let [forward] = left[..] {
            if method != PairMethod::Nak && (self.psns_are_shared(forward) || self.is_contested(fid, forward)) {
                // a sole candidate by range alone may be a stranger: the QP answered may be
                // one the capture lacks (the other half of an ECMP fabric)
                if let Some(f) = self.flows.flow_mut(fid) {
                    f.set_pairing_candidates(left);
                }
                return;
            }
            self.pair_and_eliminate(fid, forward, method);
        } else if let Some(f) = self.flows.flow_mut(fid) {
            f.set_pairing_candidates(if left.len() <= CANDIDATES_KEPT { left } else { Candidates::new() });
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
