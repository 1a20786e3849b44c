//! Flows: one direction of one QP, keyed by (source IP, destination IP, BTH destination QP);
//! for RoCEv1 the GIDs stand for the IPs. Each flow carries its counters, its PSN sequence and
//! the state the analysis needs between packets; memory grows with flows, not packets.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use rocescope_parsers::ethernet::MacAddr;
use rocescope_parsers::opcode::Transport;

use crate::decode::Endpoint;
use rustc_hash::FxHashMap;

use crate::analyze::counts::{EcnCounts, FlowCounters};
use crate::analyze::histogram::LogHistogram;
use crate::analyze::id::{FlowId, FlowKey, Space};
use crate::analyze::partition::canonical;
use crate::analyze::roce::congestion::completion::Completions;
use crate::analyze::roce::congestion::reaction::Reaction;
use crate::analyze::roce::flow::episodes::OpenEpisode;
use crate::analyze::roce::flow::runtime::FlowRuntime;
use crate::analyze::roce::flow::sequence::Sequence;
use crate::analyze::roce::wide::policy::{DscpsSeen, PolicyCounts};
use crate::analyze::trace::TRACED_FLOWS;

/// How the two directions of a connection were matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum PairMethod {
    /// From an RDMA CM ConnectRequest / ConnectReply exchange.
    Cm,
    /// One response's PSN falls in this flow's PSN range alone.
    Psn,
    /// A PSN-sequence NAK names a PSN that is a hole of this flow alone.
    Nak,
    /// The PSNs of several responses together fall in this flow's range alone.
    Ack,
    /// Every other flow the responses could answer was paired with another.
    Elimination,
    /// A host's QP table names the two QPs of the connection (`analyze --qps`).
    HostTable,
}

impl PairMethod {
    pub fn name(self) -> &'static str {
        match self {
            PairMethod::Cm => "cm",
            PairMethod::Psn => "psn",
            PairMethod::Nak => "nak",
            PairMethod::Ack => "ack",
            PairMethod::Elimination => "elimination",
            PairMethod::HostTable => "host_table",
        }
    }

    /// Was the pair found from the PSN ranges of the flows between two hosts (any method but
    /// a CM exchange or a host's table)?
    pub fn reads_psn_ranges(self) -> bool {
        !matches!(self, PairMethod::Cm | PairMethod::HostTable)
    }

    /// Was the pair known by the first response (a CM exchange or a table pairs flows as they
    /// appear, a PSN range at the first response)?
    fn known_by_first_response(self) -> bool {
        matches!(self, PairMethod::Cm | PairMethod::Psn | PairMethod::HostTable)
    }
}

/// Small counted set of values (DSCP, PCP, UDP ports, opcodes); flows see only a few. At most
/// [`TALLY_KEPT`] distinct values are counted; occurrences of further values count in
/// `others` (only UDP source ports can have more: DSCP has 64 values, a QP's transport fewer
/// than 64 opcodes).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Tally<T: Copy + PartialEq> {
    pub entries: Vec<(T, u64)>,
    pub others: u64,
}

pub const TALLY_KEPT: usize = 64;

impl<T: Copy + PartialEq> Tally<T> {
    pub fn add(&mut self, value: T) {
        let full = self.entries.len() >= TALLY_KEPT;
        match self.entries.iter_mut().find(|(v, _)| *v == value) {
            Some((_, n)) => *n += 1,
            None if full => self.others += 1,
            None => self.entries.push((value, 1)),
        }
    }
}

/// One PSN space of a flow (its requests, or its responses to the peer's requests) and the
/// retransmit episode running in it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct PsnSpace {
    pub seq: Sequence,
    /// The retransmit episode in progress.
    #[combine(end)]
    pub open_episode: Option<OpenEpisode>,
}

/// The first frame of each kind of event on a flow, for findings' evidence.
#[derive(Debug, Clone, PartialEq, Copy, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct FirstFrames {
    #[combine(earliest)]
    pub gap: Option<FrameNumber>,
    #[combine(earliest)]
    pub retransmission: Option<FrameNumber>,
    #[combine(earliest)]
    pub nak_psn_seq_err: Option<FrameNumber>,
    #[combine(earliest)]
    pub nak_other: Option<FrameNumber>,
    #[combine(earliest)]
    pub rnr_nak: Option<FrameNumber>,
    #[combine(earliest)]
    pub ce: Option<FrameNumber>,
    #[combine(earliest)]
    pub late_arrival: Option<FrameNumber>,
    #[combine(earliest)]
    pub vcrc_bad: Option<FrameNumber>,
    /// The first FECN-marked packet of a native InfiniBand flow.
    #[combine(earliest)]
    pub fecn: Option<FrameNumber>,
    /// The first second copy of a packet (a mirror duplicate).
    #[combine(earliest)]
    pub mirror_duplicate: Option<FrameNumber>,
}

/// A flow. Its parts combine as a later part's analysis of it goes on from the merged one's
/// (a flow is never added: each comes whole out of one shard, numbered into the whole's
/// table by [`FlowTable`]'s `add`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct Flow {
    #[combine(same)]
    pub key: FlowKey,
    #[combine(same)]
    pub version: u8,
    /// Transport of the first packet (RC, UC, UD, RD, XRC, CNP).
    #[combine(same)]
    pub transport: Transport,
    #[combine(earliest)]
    pub first_frame: FrameNumber,
    #[combine(earliest)]
    pub first_ts_ns: i64,
    /// Its last packet's (timestamps may go back: the later part's, not the latest).
    #[combine(end)]
    pub last_ts_ns: i64,
    pub counts: FlowCounters,
    pub opcodes: Tally<u8>,
    pub dscp: Tally<u8>,
    pub pcp: Tally<u8>,
    pub ecn: EcnCounts,
    pub udp_sports: Tally<u16>,
    /// Packets per sending QP, from the DETH (UD, RD): the QPs sending into a datagram QP.
    pub src_qps: Tally<u32>,
    #[combine(earliest)]
    pub first_icrc_bad_frame: Option<FrameNumber>,
    /// The flow's own requests, in its PSN space.
    pub requests: PsnSpace,
    /// READ responses to the peer's requests, in the peer's PSN space.
    pub responses: PsnSpace,
    /// The flow this one replaced on the same key (a reused QP number): set when it is made,
    /// as its first frame, so the merged analysis's.
    #[combine(earliest)]
    pub previous: Option<FlowId>,
    pub message_bytes: LogHistogram,
    /// Path MTU inferred from FIRST/MIDDLE payload sizes, or given by the CM exchange.
    #[combine(end)]
    pub pmtu: Option<u32>,
    pub policy: PolicyCounts,
    /// The DSCPs its data packets and its CNPs carry, each with its first frame.
    pub dscps_seen: DscpsSeen,
    #[combine(end)]
    pub peer: Option<(FlowId, PairMethod)>,
    /// The sender's QP, when known (DETH, or the peer flow's destination QP).
    #[combine(end)]
    pub src_qp: Option<u32>,
    pub ack_latency: LogHistogram,
    pub cnp_spacing: LogHistogram,
    pub ce_to_cnp: LogHistogram,
    #[combine(end)]
    pub last_frame: FrameNumber,
    pub first_frames: FirstFrames,
    /// The source and destination MACs of its first packet: a host's own and its link
    /// partner's, which pair its pause counters with the pause frames of its link.
    #[combine(with = first_macs)]
    pub first_macs: (Option<MacAddr>, Option<MacAddr>),
    /// What the flow's charts need; the first [`crate::analyze::trace::TRACED_FLOWS`] flows have one.
    #[combine(with = crate::analyze::trace::traced)]
    pub trace: Option<Box<crate::analyze::trace::FlowTrace>>,
    /// Its data rate around the CNPs addressed to it.
    pub reaction: Reaction,
    /// Its RC messages awaiting completion, and their completion times.
    pub completions: Completions,
    /// What it keeps between packets that no report reads.
    pub(super) run: FlowRuntime,
}

impl Flow {
    pub fn new(key: FlowKey, version: u8, transport: Transport, frame: FrameNumber, ts_ns: i64) -> Self {
        Flow {
            key,
            version,
            transport,
            first_frame: frame,
            first_ts_ns: ts_ns,
            last_ts_ns: ts_ns,
            counts: FlowCounters::default(),
            opcodes: Tally::default(),
            dscp: Tally::default(),
            pcp: Tally::default(),
            ecn: EcnCounts::default(),
            udp_sports: Tally::default(),
            src_qps: Tally::default(),
            first_icrc_bad_frame: None,
            requests: PsnSpace::default(),
            responses: PsnSpace::default(),
            previous: None,
            message_bytes: LogHistogram::default(),
            pmtu: None,
            policy: PolicyCounts::default(),
            dscps_seen: DscpsSeen::default(),
            peer: None,
            src_qp: None,
            ack_latency: LogHistogram::default(),
            cnp_spacing: LogHistogram::default(),
            ce_to_cnp: LogHistogram::default(),
            last_frame: frame,
            first_frames: FirstFrames::default(),
            first_macs: (None, None),
            trace: None,
            reaction: Reaction::default(),
            completions: Completions::default(),
            run: FlowRuntime::default(),
        }
    }

    /// Does `psn` fall in the PSNs this flow has requested, [first, highest + 1] (the NAK of a
    /// PSN sequence error carries the next expected PSN)? After a READ of unknown PMTU, its
    /// responses may reach as far as the smallest PMTU takes them.
    pub fn psn_in_range(&self, psn: u32) -> bool {
        self.requested_distance(psn).is_some_and(|(d, span)| d <= span)
    }

    /// Has the flow requested a PSN yet (so that a response may fall in its range)?
    pub fn has_requested(&self) -> bool {
        self.requested_distance(0).is_some()
    }

    /// Was `psn` requested by this flow already, [first, highest]?
    pub fn psn_was_requested(&self, psn: u32) -> bool {
        self.requested_distance(psn).is_some_and(|(d, span)| d < span)
    }

    /// Has the peer acknowledged every PSN the flow requested (IBA §9.7.5.1.1: an ACK of a PSN
    /// says every PSN up to it arrived)? Nothing is then outstanding, and nothing can be resent.
    pub fn all_acknowledged(&self) -> bool {
        let highest = self.requests.seq.highest();
        highest.is_some() && self.run.acknowledged_through == highest
    }

    /// Did two of the peer's ACKs acknowledge `psn` (the last and the one before)? Had the
    /// last been lost on its way, the sender, holding the one before, still resends nothing
    /// up to it.
    pub fn psn_was_acknowledged_twice(&self, psn: u32) -> bool {
        self.psn_was_requested(psn)
            && self
                .run
                .acknowledged_before
                .is_some_and(|t| self.psn_was_requested(t) && rocescope_parsers::psn::psn_diff(psn, t) <= 0)
    }

    /// Do this flow's requested PSNs and `other`'s overlap (QPs in lock-step)?
    pub fn ranges_overlap(&self, other: &Flow) -> bool {
        let first = |f: &Flow| f.requests.seq.counts.first_psn;
        match (first(self), first(other)) {
            (Some(mine), Some(theirs)) => self.psn_was_requested(theirs) || other.psn_was_requested(mine),
            _ => false,
        }
    }

    /// The distance of `psn` from the first requested PSN, and the span requested.
    fn requested_distance(&self, psn: u32) -> Option<(u32, u32)> {
        let seq = &self.requests.seq;
        let (first, next) = (seq.counts.first_psn?, seq.requested_end()?);
        let distance = rocescope_parsers::psn::psn_forward_distance;
        Some((distance(psn, first), distance(next, first)))
    }

    /// The PSN space a sequenced packet of `opcode` belongs to.
    pub fn space_mut(&mut self, space: Space) -> &mut PsnSpace {
        match space {
            Space::Requests => &mut self.requests,
            Space::Responses => &mut self.responses,
        }
    }
}

/// A flow key as plain integers (IPv4 addresses mapped into IPv6), cheap to hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
struct PackedKey(u128, u128, u32);

impl From<&FlowKey> for PackedKey {
    fn from(k: &FlowKey) -> Self {
        PackedKey(canonical(k.src), canonical(k.dst), k.dst_qp)
    }
}

/// Every flow, in order of first appearance, with lookups by key and by host pair. At most
/// `limit` flows are tracked: a packet of a new flow beyond it gets no flow (see
/// [`FlowTable::get_or_insert`]), so memory stays bounded whatever the capture holds.
#[derive(Debug, serde::Serialize, serde::Deserialize, Renumber)]
pub struct FlowTable {
    pub flows: Vec<Flow>,
    limit: usize,
    by_key: FxHashMap<PackedKey, FlowId>,
    by_hosts: FxHashMap<(Endpoint, Endpoint), Vec<FlowId>>,
    /// The last flow each retired key routed to.
    retired: FxHashMap<PackedKey, FlowId>,
    last: Option<(FlowKey, FlowId)>,
    /// Moves on whenever a response could fit a flow it fitted none of before: a flow is
    /// added or retired, or one starts requesting ([`FlowTable::generation`]). Not saved.
    #[serde(skip)]
    generation: u64,
}

impl FlowTable {
    pub fn with_limit(limit: usize) -> Self {
        FlowTable {
            flows: Vec::new(),
            limit,
            by_key: FxHashMap::default(),
            by_hosts: FxHashMap::default(),
            retired: FxHashMap::default(),
            last: None,
            generation: 0,
        }
    }

    /// Where the table stands for pairing: the same generation means no flow was added or
    /// retired and none started requesting since (a flow unpaired by evidence finds its
    /// candidates unchanged, [`Flow::unpairable_at`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A flow started requesting: its range of PSNs may fit responses now.
    pub fn note_requesting(&mut self) {
        self.generation += 1;
    }

    pub fn get(&self, key: &FlowKey) -> Option<FlowId> {
        self.by_key.get(&PackedKey::from(key)).copied()
    }

    /// The flow of `key`, created by `make` when new; `None` for a new flow when the table
    /// already holds `limit` flows. Flows are never evicted: each tracked flow's counters stay
    /// complete from its first packet (an evicted flow that came back would start again and
    /// show a false PSN gap).
    pub fn get_or_insert(&mut self, key: FlowKey, make: impl FnOnce() -> Flow) -> Option<FlowId> {
        if let Some((k, id)) = self.last
            && k == key
        {
            return Some(id);
        }
        let packed = PackedKey::from(&key);
        let id = match self.by_key.get(&packed) {
            Some(&id) => id,
            None if self.flows.len() >= self.limit => return None,
            None => {
                let id = FlowId::at(self.flows.len());
                let mut flow = make();
                flow.previous = self.retired.remove(&packed);
                self.flows.push(flow);
                self.by_key.insert(packed, id);
                self.by_hosts.entry((key.src, key.dst)).or_default().push(id);
                self.generation += 1;
                id
            }
        };
        self.last = Some((key, id));
        Some(id)
    }

    /// Stops routing `key` to its current flow (the QPN was reused by a new connection); the
    /// old flow stays in the report.
    pub fn retire(&mut self, key: &FlowKey) -> Option<FlowId> {
        let packed = PackedKey::from(key);
        let id = self.by_key.remove(&packed)?;
        self.retired.insert(packed, id);
        if let Some(ids) = self.by_hosts.get_mut(&(key.src, key.dst)) {
            ids.retain(|i| *i != id);
        }
        self.last = None;
        self.generation += 1;
        Some(id)
    }

    /// Current flows from `src` to `dst`.
    pub fn between(&self, src: Endpoint, dst: Endpoint) -> &[FlowId] {
        self.by_hosts.get(&(src, dst)).map(Vec::as_slice).unwrap_or_default()
    }

    /// Takes `paired` out of the pairing candidates of the flows from `src` to `dst`.
    pub fn forget_candidate(&mut self, src: Endpoint, dst: Endpoint, paired: FlowId) {
        let Some(ids) = self.by_hosts.get(&(src, dst)) else { return };
        for &id in ids {
            if let Some(f) = self.flows.get_mut(id.index()) {
                f.forget_candidate(paired);
            }
        }
    }

    pub fn flow(&self, id: FlowId) -> Option<&Flow> {
        self.flows.get(id.index())
    }

    pub fn flow_mut(&mut self, id: FlowId) -> Option<&mut Flow> {
        self.flows.get_mut(id.index())
    }

    /// Pairs two flows as the directions of one connection.
    pub fn pair(&mut self, a: FlowId, b: FlowId, method: PairMethod) {
        let (qa, qb) = match (self.flow(a), self.flow(b)) {
            (Some(fa), Some(fb)) => (fa.key.dst_qp, fb.key.dst_qp),
            _ => return,
        };
        // paired after a first response, the responses before were linked to nothing: what
        // awaited an ACK may have had it already, and is no longer timed
        let late = !method.known_by_first_response();
        for (f, peer) in [(a, b), (b, a)] {
            let times = self.flow_mut(peer).map(Flow::take_unaddressed_notifications).unwrap_or_default();
            if let Some(f) = self.flow_mut(f) {
                f.notified_before_pairing(&times);
            }
        }
        for (f, peer, src_qp) in [(a, b, qb), (b, a, qa)] {
            if let Some(f) = self.flow_mut(f) {
                f.peer = Some((peer, method));
                f.src_qp = Some(src_qp);
                if late {
                    f.completions.untrack_awaited();
                    f.run.outstanding.clear();
                }
            }
        }
    }
}

/// Values of other frames counted: added, `other`'s counts; grafted, what `end` counted beyond
/// `start`; each in the order the other tally first met its values. Refused where the other
/// counted values it had no room to keep and this tally has.
impl<T: Copy + PartialEq> Combine for Tally<T> {
    fn add(&mut self, other: &Self) -> Result<(), Refused> {
        self.count_beyond(&Tally { entries: Vec::new(), others: 0 }, other)
    }

    fn graft(&mut self, start: &Self, end: Self, _: &Seam) -> Result<(), Refused> {
        self.count_beyond(start, &end)
    }
}

impl<T: Copy + PartialEq> Tally<T> {
    /// Adds what `end` counted beyond `start`, its counts at an earlier point.
    fn count_beyond(&mut self, start: &Self, end: &Self) -> Result<(), Refused> {
        if end.others > start.others && self.entries.len() < TALLY_KEPT {
            return Err("values a part could not keep".into());
        }
        for &(value, n) in &end.entries {
            let before = start.entries.iter().find(|(v, _)| *v == value).map_or(0, |e| e.1);
            let later = n.saturating_sub(before);
            if later == 0 {
                continue;
            }
            let full = self.entries.len() >= TALLY_KEPT;
            match self.entries.iter_mut().find(|(v, _)| *v == value) {
                Some((_, count)) => *count += later,
                None if full => self.others += later,
                None => self.entries.push((value, later)),
            }
        }
        self.others += end.others.saturating_sub(start.others);
        Ok(())
    }
}

impl Flow {
    /// What decides how its later packets are taken: equal in two analyses (numbered alike),
    /// they take them alike.
    pub fn context(&self) -> impl PartialEq + '_ {
        let (requests, responses) = (&self.requests, &self.responses);
        (
            (self.key, self.version, self.transport),
            (requests.seq.context(), requests.open_episode.is_some()),
            (responses.seq.context(), responses.open_episode.is_some()),
            (&self.run, self.pmtu, self.peer, self.src_qp),
            (self.last_ts_ns, self.last_frame),
            (self.reaction.context(), self.completions.context()),
        )
    }
}

/// A flow's first MACs, those of its first packet: this one's where known.
mod first_macs {
    use super::{MacAddr, Refused, Seam};

    type Macs = (Option<MacAddr>, Option<MacAddr>);

    pub fn add(mine: &mut Macs, other: &Macs) -> Result<(), Refused> {
        *mine = (mine.0.or(other.0), mine.1.or(other.1));
        Ok(())
    }

    pub fn graft(mine: &mut Macs, _: &Macs, end: Macs, _: &Seam) -> Result<(), Refused> {
        add(mine, &end)
    }
}

/// The flows of two analyses, numbered alike (`analyze::combine`).
impl Combine for FlowTable {
    /// A shard's flows join these, in the order of their first frames (one thread's order,
    /// which their numbers follow); every key routed to its last flow, and only the first
    /// [`TRACED_FLOWS`] flows keep their traces.
    fn add(&mut self, other: &FlowTable) -> Result<(), Refused> {
        let mut flows = std::mem::take(&mut self.flows);
        flows.extend(other.flows.iter().cloned());
        flows.sort_by_key(|f| f.first_frame);
        flows.iter_mut().skip(TRACED_FLOWS).for_each(|f| f.trace = None);
        *self = FlowTable::routing(flows, self.limit);
        Ok(())
    }

    /// Each of `end`'s flows goes on from this table's flow of its key where `start` had it
    /// (a refusal names the flow), or comes new; keys are then routed as `end` routes them.
    fn graft(&mut self, start: &FlowTable, end: FlowTable, seam: &Seam) -> Result<(), Refused> {
        let FlowTable { flows, by_key, retired, .. } = end;
        for (local, later) in flows.into_iter().enumerate() {
            match start.flows.get(local) {
                None => self.flows.push(later),
                Some(s) if *s == later => {}
                Some(s) => {
                    let id = self.get(&s.key).ok_or("a flow number")?;
                    let mine = self.flow_mut(id).ok_or("a flow number")?;
                    mine.graft(s, later, seam).map_err(|refused| refused.about(s.key.described()))?;
                }
            }
        }
        self.route_as(&by_key, &retired);
        Ok(())
    }
}

impl FlowTable {
    /// A table of `flows`, numbered in their order; each key looks up its last flow.
    fn routing(flows: Vec<Flow>, limit: usize) -> Self {
        let mut table = FlowTable::with_limit(limit);
        for (id, f) in flows.iter().enumerate() {
            let packed = PackedKey::from(&f.key);
            if let Some(replaced) = table.by_key.insert(packed, FlowId::at(id)) {
                table.retired.insert(packed, replaced);
                if let Some(ids) = table.by_hosts.get_mut(&(f.key.src, f.key.dst)) {
                    ids.retain(|i| *i != replaced);
                }
            }
            table.by_hosts.entry((f.key.src, f.key.dst)).or_default().push(FlowId::at(id));
        }
        table.flows = flows;
        table.forget_unpairable();
        table
    }

    /// Every flow's [`Flow::unpairable_at`] is forgotten: flows were joined from tables of
    /// other generations.
    fn forget_unpairable(&mut self) {
        self.flows.iter_mut().for_each(|f| f.set_unpairable_at(None));
    }

    /// Routes keys as a table that went on from this one does (`by_key`, `retired`: its
    /// routes), where it routes them.
    fn route_as(&mut self, by_key: &FxHashMap<PackedKey, FlowId>, retired: &FxHashMap<PackedKey, FlowId>) {
        for (key, &id) in by_key {
            self.by_key.insert(*key, id);
            self.retired.remove(key);
        }
        for (key, &id) in retired {
            if !by_key.contains_key(key) {
                self.by_key.remove(key);
            }
            self.retired.insert(*key, id);
        }
        let mut current: Vec<FlowId> = self.by_key.values().copied().collect();
        current.sort_unstable();
        self.by_hosts.clear();
        for id in current {
            if let Some(f) = self.flows.get(id.index()) {
                self.by_hosts.entry((f.key.src, f.key.dst)).or_default().push(id);
            }
        }
        self.last = None;
        self.forget_unpairable();
    }

    /// Moves each open retransmit episode's place in the analysis's list of episodes as `moved`
    /// says (a part's, grafted after the episodes of the parts before it).
    pub fn move_open_episodes(&mut self, moved: impl Fn(usize) -> usize) {
        let spaces = self.flows.iter_mut().flat_map(|f| [&mut f.requests, &mut f.responses]);
        for open in spaces.filter_map(|space| space.open_episode.as_mut()) {
            open.index = moved(open.index);
        }
    }

    /// The flows tracked at most.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Is `key` routed to a flow, current or retired?
    pub fn knows(&self, key: &FlowKey) -> bool {
        let packed = PackedKey::from(key);
        self.by_key.contains_key(&packed) || self.retired.contains_key(&packed)
    }
}

// a flow's key, packed: its endpoints and QP
crate::holds_no_numbers!(PackedKey);

#[cfg(test)]
mod tests {
    use super::*;

    fn key(qp: u32) -> FlowKey {
        FlowKey {
            src: Endpoint::Ip(std::net::IpAddr::from([10, 0, 0, 1])),
            dst: Endpoint::Ip(std::net::IpAddr::from([10, 0, 0, 2])),
            dst_qp: qp,
        }
    }

    #[test]
    fn the_table_refuses_new_flows_beyond_its_limit_and_keeps_the_old_ones() {
        let mut t = FlowTable::with_limit(2);
        let make = |qp| move || Flow::new(key(qp), 2, Transport::Rc, FrameNumber::new(1), 0);
        assert_eq!(t.get_or_insert(key(1), make(1)), Some(FlowId::new(0)));
        assert_eq!(t.get_or_insert(key(2), make(2)), Some(FlowId::new(1)));
        assert_eq!(t.get_or_insert(key(3), make(3)), None);
        assert_eq!(t.get_or_insert(key(1), make(1)), Some(FlowId::new(0)));
        assert_eq!(t.get_or_insert(key(2), make(2)), Some(FlowId::new(1)));
        assert_eq!((t.flows.len(), t.between(key(1).src, key(1).dst).len()), (2, 2));
    }

    #[test]
    fn a_tally_counts_values_beyond_its_limit_as_others() {
        let mut t = Tally::default();
        for v in 0..(TALLY_KEPT as u16 + 3) {
            t.add(v);
        }
        t.add(0);
        t.add(TALLY_KEPT as u16 + 1);
        assert_eq!((t.entries.len(), t.entries.first(), t.others), (TALLY_KEPT, Some(&(0, 2)), 4));
    }
}
