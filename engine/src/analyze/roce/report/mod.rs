//! The RoCE analysis's report sections: the capture's frames and their damage, each flow
//! (`FlowReport`), the pauses and the marking policy, congestion (congestion.rs), resends a
//! pause held (paused.rs) and the series the HTML charts draw (chart_data.rs); the report
//! shell (`crate::analyze::report::Report`) holds them. Schema in docs/report-schema.md.

pub mod chart_data;
pub mod congestion;
pub mod exemplar;
pub mod inputs;
pub mod model;
pub mod paused;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analyze::counts::{EcnCounts, FlowCounters};
use crate::analyze::frame::UndecodedLink;
use crate::analyze::histogram::LogHistogram;
use crate::analyze::id::{FlowId, FlowKey, FrameNumber};
use crate::analyze::identity::join::FlowSeen;
use crate::analyze::identity::owners::Owner;
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::wide::facts::UndecodedLinkFrames;
use crate::analyze::roce::wide::pfc::PauseStats;
use crate::analyze::roce::wide::policy::PolicyCounts;
use crate::decode::Endpoint;
use congestion::FlowCongestion;

/// Management packets (to QP 0 or 1: subnet management and GSI MADs, RDMA CM), which the
/// marking policy leaves out unless `cm_dscp` is set.
#[derive(Debug, Clone, Serialize)]
pub struct ManagementReport {
    pub packets: u64,
    pub dscp: BTreeMap<u8, u64>,
    pub ecn: EcnCounts,
}

/// The doubled-mirror decision over the capture's first RoCE frames.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DoubledMirrorReport {
    /// RoCE frames looked at.
    pub frames: usize,
    /// Those with a byte-identical copy within the span window.
    pub with_identical_copy: usize,
    /// Every packet is seen twice: the first identical copy of a frame is its duplicate.
    pub doubled: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaptureReport {
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: Option<i64>,
    pub duration_ns: i64,
    pub non_monotonic_timestamps: u64,
    pub snaplen_cut: u64,
    pub mirror_truncated: u64,
    pub truncated_copies: u64,
    pub hardware_timestamps: u64,
    pub encapsulations: BTreeMap<&'static str, u64>,
    pub malformed_by_layer: Vec<MalformedReport>,
    pub doubled_mirror: Option<DoubledMirrorReport>,
    /// Link types (and ERF record types) whose frames were not decoded.
    pub undecoded_links: Vec<UndecodedLinkReport>,
}

/// Frames of one link layer rocescope does not decode.
#[derive(Debug, Clone, Serialize)]
pub struct UndecodedLinkReport {
    /// The capture's link type (tcpdump.org/linktypes.html), or `null` for an ERF record type.
    pub link_type: Option<u32>,
    /// The ERF record type, for ERF records of a type not decoded.
    pub erf_type: Option<u8>,
    pub frames: u64,
    pub first_frame: FrameNumber,
}

impl UndecodedLinkReport {
    /// `link type 105` or `ERF record type 7`.
    pub fn name(&self) -> String {
        match (self.link_type, self.erf_type) {
            (Some(l), _) => UndecodedLink::LinkType(l).to_string(),
            (None, Some(t)) => UndecodedLink::ErfType(t).to_string(),
            (None, None) => "an unknown link layer".to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MalformedReport {
    pub layer: &'static str,
    pub count: u64,
    pub first_frame: FrameNumber,
    pub first_reason: String,
}

/// A distribution of durations in nanoseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct DurationSummary {
    pub count: u64,
    pub min: Option<u64>,
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub max: Option<u64>,
}

impl From<&LogHistogram> for DurationSummary {
    fn from(h: &LogHistogram) -> Self {
        DurationSummary { count: h.count(), min: h.min(), p50: h.quantile(0.5), p99: h.quantile(0.99), max: h.max() }
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SizeSummary {
    pub min: Option<u64>,
    pub mean: Option<u64>,
    pub max: Option<u64>,
}

/// The sequence counters of one PSN space (or of both, added up).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SequenceReport {
    pub sequenced: u64,
    pub first_psn: Option<u32>,
    pub highest_psn: Option<u32>,
    pub gaps: u64,
    pub missing_psns: u64,
    pub capture_missed: u64,
    /// Of `gaps`, those whose every hole only the capture missed (the responder acknowledged
    /// them): no gap at the receiver.
    pub capture_only_gaps: u64,
    pub retransmitted: u64,
    pub retransmit_episodes: u64,
    pub late_arrivals: u64,
    pub reorder_events: u64,
    pub reorder_depth_max: u32,
    pub reorder_delay_us_max: f64,
    pub reorder_naks: u64,
}

impl SequenceReport {
    fn of(s: &crate::analyze::roce::flow::sequence::Sequence) -> SequenceReport {
        SequenceReport {
            sequenced: s.counts.sequenced,
            first_psn: s.counts.first_psn,
            highest_psn: s.counts.first_psn.and(s.highest()),
            gaps: s.counts.gaps,
            missing_psns: s.counts.missing_psns,
            capture_missed: s.counts.capture_missed,
            capture_only_gaps: s.counts.capture_only_gaps,
            retransmitted: s.counts.retransmitted,
            retransmit_episodes: s.counts.retransmit_episodes,
            late_arrivals: s.counts.reorder.late_arrivals,
            reorder_events: s.counts.reorder.reorder_events,
            reorder_depth_max: s.counts.reorder.depth_max,
            reorder_delay_us_max: s.counts.reorder.delay_ns_max as f64 / 1_000.0,
            reorder_naks: s.counts.reorder.reorder_naks,
        }
    }

    /// Both spaces: counts added, maxima taken; the PSNs are the requests' unless the flow
    /// has only responses.
    fn sum(requests: &SequenceReport, responses: &SequenceReport) -> SequenceReport {
        let psns = if requests.sequenced > 0 || responses.sequenced == 0 { requests } else { responses };
        SequenceReport {
            sequenced: requests.sequenced + responses.sequenced,
            first_psn: psns.first_psn,
            highest_psn: psns.highest_psn,
            gaps: requests.gaps + responses.gaps,
            missing_psns: requests.missing_psns + responses.missing_psns,
            capture_missed: requests.capture_missed + responses.capture_missed,
            capture_only_gaps: requests.capture_only_gaps + responses.capture_only_gaps,
            retransmitted: requests.retransmitted + responses.retransmitted,
            retransmit_episodes: requests.retransmit_episodes + responses.retransmit_episodes,
            late_arrivals: requests.late_arrivals + responses.late_arrivals,
            reorder_events: requests.reorder_events + responses.reorder_events,
            reorder_depth_max: requests.reorder_depth_max.max(responses.reorder_depth_max),
            reorder_delay_us_max: requests.reorder_delay_us_max.max(responses.reorder_delay_us_max),
            reorder_naks: requests.reorder_naks + responses.reorder_naks,
        }
    }
}

/// What the peer flow of a pair reports back to this one.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PeerSummary {
    pub naks_psn_seq_err: u64,
    pub naks_other: u64,
    pub rnr_naks: u64,
    pub acks: u64,
    pub cnps: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowReport {
    pub id: FlowId,
    pub src_ip: Endpoint,
    pub dst_ip: Endpoint,
    pub dst_qp: u32,
    pub src_qp: Option<u32>,
    pub version: u8,
    pub transport: &'static str,
    pub first_frame: FrameNumber,
    pub last_frame: FrameNumber,
    pub first_ts_ns: i64,
    pub last_ts_ns: i64,
    pub duration_ns: i64,
    /// What the flow carried and what came of it.
    #[serde(flatten)]
    pub counts: FlowCounters,
    pub throughput_bps: u64,
    pub opcodes: BTreeMap<String, u64>,
    pub dscp: BTreeMap<u8, u64>,
    pub ecn: EcnCounts,
    pub pcp: BTreeMap<u8, u64>,
    /// The first [`crate::analyze::roce::flow::table::TALLY_KEPT`] UDP source ports seen.
    pub udp_sports: Vec<u16>,
    /// Packets whose UDP source port is not in `udp_sports`.
    pub udp_sports_other_packets: u64,
    /// Packets per sending QP named by a DETH (`"0x000123"`), the first 64 QPs.
    pub src_qps: BTreeMap<String, u64>,
    /// Packets whose DETH source QP is not in `src_qps`.
    pub src_qps_other_packets: u64,
    pub first_icrc_bad_frame: Option<FrameNumber>,
    /// Both PSN spaces added up.
    #[serde(flatten)]
    pub sequence: SequenceReport,
    /// The flow's own requests.
    pub requests: SequenceReport,
    /// Its READ responses to the peer's requests.
    pub responses: SequenceReport,
    /// The flow this one replaced on the same key: its QP number was reused.
    pub previous_flow: Option<FlowId>,
    pub ce: u64,
    pub cnp_spacing_ns: DurationSummary,
    pub message_bytes: SizeSummary,
    pub pmtu: Option<u32>,
    pub peer: Option<FlowId>,
    pub pairing: Option<&'static str>,
    /// Unpaired: how many flows its responses could still answer (0 where none or one).
    pub pairing_candidates: usize,
    /// Who owns the QP that sends it, and the QP it is sent to, as the hosts' QP tables and
    /// NCCL logs tell (`analyze --qps`, `--nccl-log`): absent where nothing told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dst_owner: Option<Owner>,
    pub from_peer: Option<PeerSummary>,
    pub ack_latency_ns: DurationSummary,
    pub ce_to_cnp_ns: DurationSummary,
    pub policy: PolicyCounts,
    /// The first frame of each kind of event.
    pub first_frames: crate::analyze::roce::flow::table::FirstFrames,
    /// Its reactions to CNPs and its messages' completion times.
    #[serde(flatten)]
    pub congestion: FlowCongestion,
}

impl FlowReport {
    /// The flow as operators name it: `10.0.0.1 → 10.0.0.2 QP 0x000202`.
    pub fn label(&self) -> String {
        format!("{} → {} QP 0x{:06x}", self.src_ip, self.dst_ip, self.dst_qp)
    }

    /// How much is wrong with the flow, for sorting: integrity first, then loss, then
    /// congestion.
    pub fn trouble(&self) -> u64 {
        self.counts.icrc_bad * 1_000_000
            + (self.counts.naks_other + self.counts.rnr_naks + self.counts.naks_psn_seq_err) * 10_000
            + (self.sequence.missing_psns + self.sequence.retransmitted) * 100
            + self.policy.total() * 10
            + self.ce
            + self.counts.cnps
    }

    /// What QP identity's join reads of the flow.
    pub fn seen(&self) -> FlowSeen {
        FlowSeen {
            id: self.id,
            key: FlowKey { src: self.src_ip, dst: self.dst_ip, dst_qp: self.dst_qp },
            src_qp: self.src_qp,
            transport: self.transport,
            cm_peer: self.peer.filter(|_| self.pairing == Some("cm")),
            last_ts_ns: self.last_ts_ns,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PauseReport {
    pub src_mac: String,
    /// PFC priority; `null` for 802.3x PAUSE, which pauses every priority.
    pub priority: Option<u8>,
    #[serde(flatten)]
    pub stats: PauseStats,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicyReport {
    pub expected_data_dscp: u8,
    pub expected_cnp_dscp: u8,
    pub expected_data_pcp: u8,
    pub expected_cnp_pcp: u8,
    pub lossless_priority: u8,
    pub expected_cm_dscp: Option<u8>,
    pub data_dscp_violations: u64,
    pub cnp_dscp_violations: u64,
    pub not_ect_data: u64,
    pub data_pcp_violations: u64,
    pub cnp_pcp_violations: u64,
    pub cm_dscp_violations: u64,
    /// PFC XOFF frames for a priority other than the lossless one.
    pub pfc_other_priority_xoff: u64,
    pub first_frames: PolicyCounts,
    /// Each DSCP each host's RoCE data packets and CNPs carry, with the first frame: what a
    /// fabric's configuration is checked against (`analyze --config`).
    pub dscps_seen: Vec<DscpSeenReport>,
}

/// A DSCP the RoCE data packets (`class` `data`, ACKs and NAKs included) or the CNPs (`cnp`)
/// of one sending host carry, and the first frame that does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DscpSeenReport {
    pub class: &'static str,
    pub dscp: u8,
    pub sender: Endpoint,
    pub first_frame: FrameNumber,
}

/// The DSCPs each sender's data packets and CNPs carry, in order of class, DSCP and sender.
fn dscps_seen(a: &Analyzer) -> Vec<DscpSeenReport> {
    let mut firsts: BTreeMap<(bool, u8, Endpoint), FrameNumber> = BTreeMap::new();
    for f in &a.flows.flows {
        for first in f.dscps_seen.firsts() {
            let frame = firsts.entry((first.cnp, first.dscp, f.key.src)).or_insert(first.frame);
            *frame = (*frame).min(first.frame);
        }
    }
    let class = |cnp: bool| if cnp { "cnp" } else { "data" };
    firsts
        .into_iter()
        .map(|((cnp, dscp, sender), first_frame)| DscpSeenReport { class: class(cnp), dscp, sender, first_frame })
        .collect()
}

pub(crate) fn tally<T: Copy + Ord>(entries: &[(T, u64)]) -> BTreeMap<T, u64> {
    entries.iter().copied().collect()
}

pub(crate) fn opcode_map(counts: impl Iterator<Item = (u8, u64)>) -> BTreeMap<String, u64> {
    counts.filter(|(_, n)| *n > 0).map(|(op, n)| (format!("0x{op:02x}"), n)).collect()
}

pub(crate) fn nonzero_map(counts: &[u64]) -> BTreeMap<u8, u64> {
    counts.iter().enumerate().filter(|(_, n)| **n > 0).map(|(v, n)| (v as u8, *n)).collect()
}

/// PFC per (source, priority) and PAUSE per source, each in order of its first frame.
pub(crate) fn pause_reports(a: &Analyzer) -> (Vec<PauseReport>, Vec<PauseReport>) {
    let mut pfc: Vec<PauseReport> = a
        .wide
        .pauses()
        .pfc
        .iter()
        .map(|((mac, priority), source)| PauseReport {
            src_mac: mac.to_string(),
            priority: Some(*priority),
            stats: source.stats.clone(),
        })
        .collect();
    pfc.sort_by_key(|p| (p.stats.first_frame, p.priority));
    let mut pause: Vec<PauseReport> = a
        .wide
        .pauses()
        .pause
        .iter()
        .map(|(mac, source)| PauseReport { src_mac: mac.to_string(), priority: None, stats: source.stats.clone() })
        .collect();
    pause.sort_by_key(|p| p.stats.first_frame);
    (pfc, pause)
}

pub(crate) fn capture_report(c: &crate::analyze::roce::wide::facts::CaptureFacts) -> CaptureReport {
    CaptureReport {
        first_ts_ns: c.first_ts_ns,
        last_ts_ns: c.last_ts_ns,
        duration_ns: c.last_ts_ns.zip(c.first_ts_ns).map_or(0, |(l, f)| (l - f).max(0)),
        non_monotonic_timestamps: c.non_monotonic_timestamps,
        snaplen_cut: c.snaplen_cut,
        mirror_truncated: c.mirror_truncated,
        truncated_copies: c.truncated_copies,
        hardware_timestamps: c.hardware_timestamps,
        encapsulations: c.encapsulations.iter().map(|e| (e.name, e.frames)).collect(),
        malformed_by_layer: c
            .malformed
            .iter()
            .map(|m| MalformedReport {
                layer: m.layer,
                count: m.frames,
                first_frame: m.first_frame,
                first_reason: m.first_reason.clone(),
            })
            .collect(),
        doubled_mirror: c.doubled_mirror.map(|d| DoubledMirrorReport {
            frames: d.frames,
            with_identical_copy: d.with_identical_copy,
            doubled: d.doubled,
        }),
        undecoded_links: c
            .undecoded_links
            .iter()
            .map(|&UndecodedLinkFrames { link, frames, first_frame }| {
                let (link_type, erf_type) = match link {
                    UndecodedLink::LinkType(l) => (Some(l), None),
                    UndecodedLink::ErfType(t) => (None, Some(t)),
                };
                UndecodedLinkReport { link_type, erf_type, frames, first_frame }
            })
            .collect(),
    }
}

pub(crate) fn policy_report(a: &Analyzer, pfc_other_priority_xoff: u64) -> PolicyReport {
    let policy = a.config.policy;
    PolicyReport {
        expected_data_dscp: policy.data_dscp,
        expected_cnp_dscp: policy.cnp_dscp,
        expected_data_pcp: policy.data_pcp,
        expected_cnp_pcp: policy.cnp_pcp,
        lossless_priority: policy.lossless_priority,
        expected_cm_dscp: policy.cm_dscp,
        data_dscp_violations: a.wide.policy().data_dscp.count,
        cnp_dscp_violations: a.wide.policy().cnp_dscp.count,
        not_ect_data: a.wide.policy().not_ect_data.count,
        data_pcp_violations: a.wide.policy().data_pcp.count,
        cnp_pcp_violations: a.wide.policy().cnp_pcp.count,
        cm_dscp_violations: a.wide.policy().cm_dscp.count,
        pfc_other_priority_xoff,
        first_frames: *a.wide.policy(),
        dscps_seen: dscps_seen(a),
    }
}

pub(crate) fn flow_report(
    a: &Analyzer,
    id: FlowId,
    f: &crate::analyze::roce::flow::table::Flow,
    congestion: FlowCongestion,
) -> FlowReport {
    let duration_ns = (f.last_ts_ns - f.first_ts_ns).max(0);
    let peer = f.peer.and_then(|(p, _)| a.flows.flow(p));
    let (requests, responses) = (SequenceReport::of(&f.requests.seq), SequenceReport::of(&f.responses.seq));
    FlowReport {
        id,
        src_ip: f.key.src,
        dst_ip: f.key.dst,
        dst_qp: f.key.dst_qp,
        src_qp: f.src_qp,
        version: f.version,
        transport: f.transport.name(),
        first_frame: f.first_frame,
        last_frame: f.last_frame,
        first_ts_ns: f.first_ts_ns,
        last_ts_ns: f.last_ts_ns,
        duration_ns,
        counts: f.counts,
        throughput_bps: if duration_ns > 0 {
            (u128::from(f.counts.payload_bytes) * 8 * 1_000_000_000 / duration_ns as u128) as u64
        } else {
            0
        },
        opcodes: opcode_map(f.opcodes.entries.iter().copied()),
        dscp: tally(&f.dscp.entries),
        ecn: f.ecn,
        pcp: tally(&f.pcp.entries),
        udp_sports: f.udp_sports.entries.iter().map(|(p, _)| *p).collect(),
        udp_sports_other_packets: f.udp_sports.others,
        src_qps: f.src_qps.entries.iter().map(|&(qp, n)| (format!("0x{qp:06x}"), n)).collect(),
        src_qps_other_packets: f.src_qps.others,
        first_icrc_bad_frame: f.first_icrc_bad_frame,
        sequence: SequenceReport::sum(&requests, &responses),
        requests,
        responses,
        previous_flow: f.previous,
        ce: f.ecn.ce,
        cnp_spacing_ns: (&f.cnp_spacing).into(),
        message_bytes: SizeSummary {
            min: f.message_bytes.min(),
            mean: f.message_bytes.mean(),
            max: f.message_bytes.max(),
        },
        pmtu: f.pmtu,
        peer: f.peer.map(|(p, _)| p),
        pairing: f.peer.map(|(_, m)| m.name()),
        pairing_candidates: if f.peer.is_none() { f.pairing_candidates().len() } else { 0 },
        owner: None,
        dst_owner: None,
        from_peer: peer.map(|p| PeerSummary {
            naks_psn_seq_err: p.counts.naks_psn_seq_err,
            naks_other: p.counts.naks_other,
            rnr_naks: p.counts.rnr_naks,
            acks: p.counts.acks,
            cnps: p.counts.cnps,
        }),
        ack_latency_ns: (&f.ack_latency).into(),
        ce_to_cnp_ns: (&f.ce_to_cnp).into(),
        policy: f.policy,
        first_frames: f.first_frames,
        congestion,
    }
}
