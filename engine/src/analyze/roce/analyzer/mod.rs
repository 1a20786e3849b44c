//! The analysis as one thing ([`Analyzer`]): a façade that takes each frame and hands it to the
//! parts it concerns: the capture-wide accounting ([`CaptureWide`]), each flow's state machines
//! (the flow table, its PSN sequencing, pairing and episodes) and the congestion analysis
//! ([`CongestionAnalysis`]). It holds back the first frames until the doubled-mirror decision,
//! and the frames of one reorder window.

pub mod combine;
mod congestion;
pub mod head;
mod pairing;
mod sequencing;

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use rocescope_parsers::ethernet::MacAddr;
use rocescope_parsers::ext::AethKind;
use rocescope_parsers::opcode::{self, CNP};

use crate::analyze::combining::Combine;
use crate::analyze::frame::{Content, FrameSummary, RoceFacts, UetFacts};
use crate::analyze::id::FlowId;
use crate::analyze::id::FlowKey;
use crate::analyze::id::FrameNumber;
use crate::analyze::identity::known::KnownQps;
use crate::analyze::renumber::Renumber;
use crate::analyze::roce::config::Config;
use crate::analyze::roce::congestion::analysis::CongestionAnalysis;
use crate::analyze::roce::flow::counting::ResponseKind;
use crate::analyze::roce::flow::episodes::Episode;
use crate::analyze::roce::flow::sequence::SeqEvent;
use crate::analyze::roce::flow::table::{Flow, FlowTable, PairMethod};
use crate::analyze::roce::flow::verdicts::{Verdict, VerdictLedger};
use crate::analyze::roce::wide::CaptureWide;
use crate::analyze::roce::wide::cm::Connection;
use crate::analyze::roce::wide::duplicates::{Doubling, DoublingProbe, Resends};
use crate::analyze::roce::wide::facts::UndecodedLinkFrames;
use crate::analyze::trace::TRACED_FLOWS;
use crate::analyze::uet::UetAnalysis;
use crate::decode::Endpoint;
use head::Head;

/// Pairing by PSN range is not tried between two hosts with more flows than this (a scan per
/// response would cost too much, and so many open ranges rarely single one flow out).
pub const MAX_PAIRING_CANDIDATES: usize = 1024;

/// Retransmit episodes whose details are kept; more are counted per flow only.
pub const MAX_EPISODES_KEPT: usize = 100_000;

/// Frames held at the start of a capture until the doubled-mirror decision, at most, and
/// their captured bytes at most (what a caller that keeps the frames themselves holds).
pub const PROBE_HELD: usize = 65_536;
pub const PROBE_HELD_BYTES: u64 = 64 << 20;
/// Verdicts, and sequenced packets, waiting at most; beyond, the oldest reorder windows are
/// closed early.
pub const VERDICTS_HELD: usize = 65_536;
pub const PACKETS_HELD: usize = 65_536;

/// The first frames of a capture, held until it is known whether it is a doubled mirror.
#[derive(Debug, serde::Serialize, serde::Deserialize, Renumber)]
struct Probe {
    detector: DoublingProbe,
    frames: Vec<FrameSummary>,
    bytes: u64,
}

/// The analysis. Combined ([`Combine`]) with a shard's, finished, whose flows, episodes and
/// bursts are numbered as in the whole ([`crate::analyze::combine::merge`]), or with a later
/// part's, numbered as this one ([`crate::analyze::combine::graft`]).
#[derive(serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct Analyzer {
    #[combine(same)]
    pub(crate) config: Config,
    pub(crate) wide: CaptureWide,
    pub(crate) flows: FlowTable,
    /// In frame order ([`Analyzer::in_frame_order`] after adding shards).
    #[combine(continued)]
    pub(crate) episodes: Vec<Episode>,
    #[combine(sum)]
    pub(crate) episodes_dropped: u64,
    pub(crate) congestion: CongestionAnalysis,
    /// Ultra Ethernet Transport, per PDC.
    pub(crate) uet: UetAnalysis,
    /// CM-established directions not yet seen as flows: key → (peer key, path MTU).
    #[combine(with = combine::cm_links)]
    cm_links: FxHashMap<FlowKey, (FlowKey, Option<u32>)>,
    /// The hosts' QP tables (`analyze --qps`): each connection's two directions, exactly. The
    /// same in every shard and part (a merge refuses parts saved with others).
    #[combine(same)]
    known_qps: KnownQps,
    /// Decided before any combining (a shard starts decided, a merge checks both decided).
    #[combine(own)]
    probe: Option<Probe>,
    /// Per-frame verdicts, when the caller wants them (on one thread, which combines nothing).
    #[combine(own)]
    verdicts: Option<VerdictLedger>,
    /// The frames observed from the first, for a merge ([`Analyzer::keeping_head`]). Not
    /// renumbered: they keep the part's own numbers, from 1, which a merge moves on as it
    /// analyses them again after the parts before ([`crate::analyze::combine::parts`]), and
    /// not combined: the merge keeps them apart.
    #[renumber(skip)]
    #[combine(own)]
    head: Option<Head>,
    /// When reorder windows end: (deadline, flow), in order of opening. Shards are joined
    /// finished, every window closed: none is added.
    #[combine(add = own, graft = end)]
    deadlines: VecDeque<(i64, FlowId)>,
    /// The latest capture time analysed.
    #[combine(add = latest, graft = end)]
    now_ns: i64,
    /// Sequenced packets of every flow waiting for a decision.
    #[combine(add = sum, graft = end)]
    packets_held: usize,
    /// Scratch list of what a PSN space decided.
    #[combine(own)]
    events: Vec<SeqEvent>,
    /// The most sequenced packets held at once (see [`crate::analyze::combine::merge`]).
    #[combine(with = combine::peak)]
    packets_held_peak: usize,
    /// Shards are joined finished; a merge goes on unfinished.
    #[combine(own)]
    finished: bool,
}

/// Where every shard of an analysis split by host-pair partition starts: what the whole
/// capture's first frames decided before the split ([`Analyzer::shard_start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShardStart {
    /// The doubled-mirror decision.
    pub doubled_mirror: Doubling,
    /// When the capture's first RoCE frame was captured: where the timeline starts.
    pub timeline_start: Option<i64>,
}

/// Is the packet a UD datagram? A UD responder never checks the PSN (IBA chapter 9: an unreliable
/// service neither acknowledges nor resends), a UD QP numbers its packets across all
/// its destinations, and any number of source QPs may send to one UD QP: the PSNs of a UD flow
/// jump and interleave without anything being lost, so they are not sequenced (their messages
/// are counted all the same, and each source QP's packets apart, from its DETH).
fn is_datagram(roce: &RoceFacts) -> bool {
    opcode::Transport::of(roce.opcode) == opcode::Transport::Ud
}

impl Analyzer {
    pub fn new(config: Config) -> Self {
        Analyzer {
            config,
            wide: CaptureWide::new(config.link_gbps, config.pfc_storm_ns, config.mirror_window_ns),
            flows: FlowTable::with_limit(config.max_flows),
            episodes: Vec::new(),
            episodes_dropped: 0,
            congestion: CongestionAnalysis::default(),
            uet: UetAnalysis::default(),
            cm_links: FxHashMap::default(),
            known_qps: KnownQps::default(),
            probe: Some(Probe { detector: DoublingProbe::new(config.span_window_ns), frames: Vec::new(), bytes: 0 }),
            verdicts: None,
            head: None,
            deadlines: VecDeque::new(),
            now_ns: i64::MIN,
            packets_held: 0,
            events: Vec::new(),
            packets_held_peak: 0,
            finished: false,
        }
    }

    /// One shard of an analysis split by host-pair partition ([`crate::analyze::partition`]): it is given the
    /// frames of some partitions only, in capture order, and starts from the decisions `start`
    /// took on the whole capture's first frames. [`crate::analyze::combine::merge::shards`] joins the shards.
    pub fn shard(config: Config, start: ShardStart) -> Self {
        // incast spans host pairs: a shard lists what it saw for the split to merge
        let mut shard = Analyzer { probe: None, congestion: CongestionAnalysis::of_shard(), ..Analyzer::new(config) };
        shard.wide.apply_doubling(start.doubled_mirror, config.span_window_ns);
        shard.wide.start_timeline_at(start.timeline_start);
        shard
    }

    /// Where the shards of a split analysis start, once this analysis of the capture's first
    /// frames knows it: the doubled-mirror decision is taken, and the first RoCE frame seen or
    /// the input over (`ended`, after [`Analyzer::decide_doubling`]).
    pub fn shard_start(&self, ended: bool) -> Option<ShardStart> {
        let doubled_mirror = self.wide.capture().doubled_mirror?;
        let timeline_start = self.wide.timeline().start_ns();
        (timeline_start.is_some() || ended).then_some(ShardStart { doubled_mirror, timeline_start })
    }

    /// The analysis, pairing the flows whose QPs the hosts' tables name as those tables say
    /// (`analyze --qps`; [`crate::analyze::identity::known`]).
    pub fn with_known_qps(self, known_qps: KnownQps) -> Self {
        Analyzer { known_qps, ..self }
    }

    /// What the hosts' QP tables say of the flows' QPs.
    pub fn known_qps(&self) -> &KnownQps {
        &self.known_qps
    }

    /// An analyzer that also gives each frame's verdict ([`Analyzer::next_verdict`]).
    pub fn with_verdicts(config: Config) -> Self {
        Analyzer { verdicts: Some(VerdictLedger::default()), ..Analyzer::new(config) }
    }

    /// The analysis of a part of a capture analysed on its own, which keeps the frames it
    /// observes from its first ([`Head`], within its bound) for a merge to analyse them again
    /// after the parts before it ([`crate::analyze::combine::parts`]).
    pub fn keeping_head(self, frames: usize) -> Self {
        Analyzer { head: Some(Head::keeping(frames)), ..self }
    }

    /// The frames kept from the first ([`Analyzer::keeping_head`]), taken out.
    pub fn take_head(&mut self) -> Option<Head> {
        self.head.take()
    }

    /// The kept frames end here: histograms start telling apart the extremes of what comes
    /// after, for a merge ([`crate::analyze::combine::graft`]).
    fn mark_head_end(&mut self) {
        for f in &mut self.flows.flows {
            for h in [&mut f.message_bytes, &mut f.ack_latency, &mut f.cnp_spacing, &mut f.ce_to_cnp] {
                h.mark();
            }
            f.completions.fct_ns.mark();
        }
        self.congestion.mark_head_end();
    }

    /// Counts `frames` analysed beyond those its head keeps.
    pub fn skip_in_head(&mut self, frames: u64) {
        if let Some(head) = &mut self.head {
            head.skip(frames);
        }
    }

    /// Takes one frame (the summary of a decoded frame). The first frames of a capture are
    /// held until the doubled-mirror decision ([`PROBE_HELD`] at most).
    pub fn observe(&mut self, s: &FrameSummary) {
        if self.head.as_mut().is_some_and(|head| head.record(s)) {
            self.mark_head_end();
        }
        let Some(probe) = &mut self.probe else { return self.process(s) };
        if let Some(identity) = crate::analyze::roce::wide::copy_identity(s) {
            probe.detector.add(identity, s.ts_ns);
        }
        probe.frames.push(*s);
        probe.bytes += u64::from(s.caplen);
        if probe.detector.is_complete() || probe.frames.len() >= PROBE_HELD || probe.bytes >= PROBE_HELD_BYTES {
            self.decide_doubling();
        }
    }

    /// Decides whether the capture is a doubled mirror with the frames seen so far (at the
    /// end of the input, or when a live capture reports) and analyses the frames held.
    pub fn decide_doubling(&mut self) {
        let Some(probe) = self.probe.take() else { return };
        let (frames, copied) = probe.detector.counts();
        let decision = Doubling { frames, with_identical_copy: copied, doubled: probe.detector.is_doubled() };
        self.wide.apply_doubling(decision, self.config.span_window_ns);
        for s in &probe.frames {
            self.process(s);
        }
    }

    /// The link layers not decoded so far: each with its frame count and first frame.
    pub fn undecoded_links(&self) -> &[UndecodedLinkFrames] {
        self.wide.undecoded_links()
    }

    /// The next frame's final verdict, in frame order (with [`Analyzer::with_verdicts`]).
    pub fn next_verdict(&mut self) -> Option<(u64, Verdict)> {
        self.verdicts.as_mut()?.pop_final()
    }

    fn process(&mut self, s: &FrameSummary) {
        self.expire(s.ts_ns);
        self.wide.observe_capture(s);
        if let Some(v) = &mut self.verdicts {
            v.push(s.number, Verdict::default(), false);
        }
        let frame = s.number;
        match &s.content {
            Content::Roce(roce) => self.observe_roce(s, roce),
            Content::Pfc { src, pfc } => {
                self.wide.observe_pfc(frame, s.ts_ns, *src, pfc);
                self.observe_pause_for_incast(s);
            }
            Content::Pause { src, quanta } => {
                self.wide.observe_pause(frame, s.ts_ns, *src, *quanta);
                self.observe_pause_for_incast(s);
            }
            Content::Uet(uet) => self.observe_uet(s, uet),
            Content::Other => self.wide.observe_other(s),
            Content::Malformed(error) => self.wide.observe_malformed(frame, error),
            Content::HeadersCut(_) => self.wide.observe_headers_cut(),
        }
        if self.packets_held > PACKETS_HELD || self.verdicts.as_ref().is_some_and(|v| v.len() > VERDICTS_HELD) {
            self.close_oldest_windows();
        }
    }

    /// A UET packet: counted, then (unless it is a mirror duplicate) placed in its PDC.
    fn observe_uet(&mut self, s: &FrameSummary, uet: &UetFacts) {
        self.wide.observe_uet(s, uet.check);
        if self.wide.is_uet_mirror_duplicate(s, uet) {
            self.uet.count_mirror_duplicate();
            self.amend_verdict(|v| v.mirror_duplicate = true);
            return;
        }
        if let Some(placed) = self.uet.observe(s, uet) {
            self.amend_verdict(|v| {
                v.seq = Some(placed.class);
                v.lost_before_tap = placed.lost_before_tap;
            });
        }
    }

    fn observe_roce(&mut self, s: &FrameSummary, roce: &RoceFacts) {
        let (frame, ts_ns) = (s.number, s.ts_ns);
        let (src, dst) = s.endpoints();
        self.wide.observe_roce(s, roce, &self.config.policy);
        let key = FlowKey { src, dst, dst_qp: roce.dest_qp };
        if let Some(cm) = &roce.cm
            && let Some(connection) = self.wide.observe_cm(frame, src, dst, cm)
        {
            let connection = connection.clone();
            self.link_cm_connection(&connection);
        }
        let Some(fid) = self.flow_of(key, s, roce) else {
            self.wide.count_untracked(frame);
            return;
        };
        // a packet after the flow fell silent for a retransmission timer is a resend, whatever
        // port it left by (a bond's other port, a dual-homed host's other NIC), and so are
        // those after it through that port: a second tap's copy trails the packet it copies
        let timer_ns = self.config.min_ack_timeout_ns;
        let flow = self.flows.flow(fid);
        let silent = flow.is_some_and(|f| f.silent_before(s.ts_ns, timer_ns));
        let mut resends = Resends { silent, view: flow.and_then(Flow::resend_view), timer_ns };
        let known = resends.view;
        let duplicate = self.wide.is_mirror_duplicate(&key, s, roce, &mut resends);
        if let Some(view) = resends.view.filter(|&v| known != Some(v))
            && let Some(f) = self.flows.flow_mut(fid)
        {
            f.resends_through(view);
        }
        if duplicate {
            if let Some(f) = self.flows.flow_mut(fid) {
                f.counts.mirror_duplicates += 1;
                f.first_frames.mirror_duplicate.get_or_insert(frame);
            }
            self.amend_verdict(|v| *v = Verdict { flow: Some(fid), mirror_duplicate: true, ..Verdict::default() });
            return;
        }
        self.amend_verdict(|v| v.flow = Some(fid));
        if let Some(f) = self.flows.flow_mut(fid) {
            f.count_packet(s, roce, &self.config.policy);
        }
        self.observe_congestion(fid, s, roce);
        let info = roce.info();
        let carries_payload = info.is_some_and(|i| i.payload);
        if let Some(aeth) = roce.aeth.filter(|_| !carries_payload || opcode::is_read_response(roce.opcode)) {
            self.observe_response(fid, frame, ts_ns, roce.opcode, roce.psn, aeth.kind());
        } else if opcode::is_read_response(roce.opcode) {
            // a READ response without an AETH (a MIDDLE) pairs as the others do
            self.pair_by_evidence(fid, roce.psn);
        }
        if roce.opcode == CNP {
            self.observe_cnp(fid, ts_ns);
        } else {
            if roce.notifies_congestion() {
                self.answer_congestion_mark(fid, ts_ns);
            }
            if s.congestion_marked(roce)
                && let Some(f) = self.flows.flow_mut(fid)
            {
                f.count_congestion_mark(frame, ts_ns, roce.is_native());
            }
        }
        if opcode::is_unsequenced(roce.opcode) {
            return;
        }
        if is_datagram(roce) {
            // a message all the same
            self.count_new_packet(fid, s.ts_ns, roce, false);
        } else {
            self.observe_sequenced(fid, s, roce);
        }
    }

    fn amend_verdict(&mut self, update: impl FnOnce(&mut Verdict)) {
        if let Some(v) = &mut self.verdicts {
            v.amend_last(update);
        }
    }

    /// The flow of a RoCE packet, new when its key is new or its QP number was reused by a
    /// new connection; None beyond [`Config::max_flows`].
    fn flow_of(&mut self, key: FlowKey, s: &FrameSummary, roce: &RoceFacts) -> Option<FlowId> {
        let transport = opcode::Transport::of(roce.opcode);
        let make = || Flow::new(key, roce.version, transport, s.number, s.ts_ns);
        let mut fid = self.flows.get_or_insert(key, make)?;
        if self.is_new_connection(fid, s.ts_ns, roce) {
            self.end_connection(fid, s.ts_ns);
            fid = self.flows.get_or_insert(key, make)?;
        }
        if let Some(f) = self.flows.flow_mut(fid).filter(|f| f.counts.packets == 0) {
            f.first_macs = (roce.src_mac, roce.dst_mac);
            self.on_new_flow(fid, key);
        }
        Some(fid)
    }

    /// A CM reply completed a connection: retire flows left by an earlier use of its QPNs,
    /// and pair the two directions when (or as soon as) both are seen.
    fn link_cm_connection(&mut self, c: &Connection) {
        let Some(passive_qpn) = c.passive_qpn else { return };
        let forward = FlowKey { src: c.active_ip, dst: c.passive_ip, dst_qp: passive_qpn };
        let reverse = FlowKey { src: c.passive_ip, dst: c.active_ip, dst_qp: c.active_qpn };
        let pmtu = c.path_mtu;
        for key in [forward, reverse] {
            if let Some(old) = self.flows.get(&key) {
                self.retire_flow(old);
            }
        }
        self.cm_links.insert(forward, (reverse, pmtu));
        self.cm_links.insert(reverse, (forward, pmtu));
    }

    fn on_new_flow(&mut self, fid: FlowId, key: FlowKey) {
        if fid.index() < TRACED_FLOWS
            && let Some(f) = self.flows.flow_mut(fid)
        {
            f.trace = Some(Box::default());
        }
        if let Some(&(peer_key, pmtu)) = self.cm_links.get(&key) {
            if let Some(f) = self.flows.flow_mut(fid) {
                f.pmtu = f.pmtu.or(pmtu);
            }
            if let Some(peer) = self.flows.get(&peer_key) {
                self.flows.pair(fid, peer, PairMethod::Cm);
            }
        }
        if !self.known_qps.is_empty() {
            self.pair_by_table(fid, key);
        }
    }

    /// An AETH-carrying response (ACK, NAK, ATOMIC ACK, READ response) on flow `fid`: counted
    /// on its flow, it pairs the flow and tells the flow it answers what was acknowledged.
    fn observe_response(&mut self, fid: FlowId, frame: FrameNumber, ts_ns: i64, opcode: u8, psn: u32, aeth: AethKind) {
        let Some(f) = self.flows.flow_mut(fid) else { return };
        let kind = f.count_response(frame, ts_ns, opcode, psn, aeth);
        self.pair_by_evidence(fid, psn);
        let Some((requests, _)) = self.flows.flow(fid).and_then(|f| f.peer) else { return };
        match kind {
            ResponseKind::PsnNak => {
                self.expire_flow(requests, self.now_ns);
                if let Some(r) = self.flows.flow_mut(requests) {
                    r.requests.seq.on_nak(psn, ts_ns);
                }
            }
            ResponseKind::Ack => {
                self.ack_for_completion(requests, psn, ts_ns, frame);
                if let Some(r) = self.flows.flow_mut(requests) {
                    r.requests.seq.on_ack(psn);
                    r.acknowledged(psn, ts_ns);
                }
            }
            ResponseKind::AethAck => {
                if let Some(r) = self.flows.flow_mut(requests) {
                    r.acknowledged(psn, ts_ns);
                }
            }
            ResponseKind::Other => {}
        }
    }

    fn observe_cnp(&mut self, fid: FlowId, ts_ns: i64) {
        let Some(f) = self.flows.flow_mut(fid) else { return };
        f.count_cnp(ts_ns);
        self.answer_congestion_mark(fid, ts_ns);
    }

    /// The path MTU to count a READ's responses with: the flow's or its peer's. The path MTU
    /// is a QP's (IBA §9.7.6: the responder segments by the QP's path MTU), never its hosts':
    /// two applications between one host pair may run at 1024 and 4096 side by side.
    fn pmtu_of(&self, fid: FlowId) -> Option<u32> {
        let f = self.flows.flow(fid)?;
        f.pmtu.or_else(|| f.peer.and_then(|(p, _)| self.flows.flow(p)).and_then(|p| p.pmtu))
    }

    /// For each source, the source and destination MACs of the first RoCE packet it sent among
    /// the frames analysed: its own and its link partner's.
    pub fn first_macs_by_source(&self) -> FxHashMap<Endpoint, (Option<MacAddr>, Option<MacAddr>)> {
        let mut first: FxHashMap<Endpoint, &Flow> = FxHashMap::default();
        for f in &self.flows.flows {
            let earliest = first.entry(f.key.src).or_insert(f);
            if f.first_frame < earliest.first_frame {
                *earliest = f;
            }
        }
        first.into_iter().map(|(host, f)| (host, f.first_macs)).collect()
    }

    pub fn config(&self) -> Config {
        self.config
    }

    /// The analysis, no longer giving each frame's verdict (one saved by a command that took
    /// them, going on in one that does not).
    pub fn without_verdicts(self) -> Self {
        Analyzer { verdicts: None, ..self }
    }

    /// Does the analysis give each frame's verdict ([`Analyzer::with_verdicts`])?
    pub fn gives_verdicts(&self) -> bool {
        self.verdicts.is_some()
    }

    /// Has the analysis been given a frame (it goes on from a saved state, say)?
    pub fn has_observed(&self) -> bool {
        self.wide.totals().frames.frames > 0 || self.probe.as_ref().is_some_and(|p| !p.frames.is_empty())
    }

    /// Frames observed so far.
    pub fn frames(&self) -> u64 {
        self.wide.totals().frames.frames
    }

    /// The latest time of a frame observed so far (those held for the doubled-mirror decision
    /// included).
    pub fn last_ts_ns(&self) -> Option<i64> {
        let held = self.probe.iter().flat_map(|p| p.frames.iter().map(|f| f.ts_ns));
        self.wide.capture().last_ts_ns.into_iter().chain(held).max()
    }

    /// Ends the analysis (once; later calls change nothing): analyses the frames still held,
    /// decides what waited for a reorder window, closes open episodes and pause periods, and
    /// lists the retransmit episodes in the order of their first resend.
    pub fn finish(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.decide_doubling();
        for index in 0..self.flows.flows.len() {
            self.finish_flow(FlowId::at(index));
        }
        self.wide.finish();
        self.episodes.sort_by_key(|e| e.start_frame);
        self.congestion.finish();
    }
}
