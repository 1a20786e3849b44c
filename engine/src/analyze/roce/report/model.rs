//! The RoCE analysis's part of the report: the inputs read and the options, what the capture's
//! frames counted, each flow, the connections, resends, pauses, the marking policy and
//! congestion. The report shell (`crate::analyze::report::Report`) holds it, its keys at the
//! report's top level. Schema in docs/report-schema.md.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analyze::counts::{EcnCounts, FrameCounts, IcrcCounts, InfinibandCounts};
use crate::analyze::id::{FlowId, FrameNumber};
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::config::Config;
use crate::analyze::roce::flow::episodes::Episode;
use crate::analyze::roce::report::congestion::{self, CongestionReport};
use crate::analyze::roce::report::inputs::{InputReport, LiveReport};
use crate::analyze::roce::report::{
    CaptureReport, FlowReport, ManagementReport, PauseReport, PolicyReport, capture_report, chart_data, flow_report,
    nonzero_map, opcode_map, pause_reports, paused, policy_report,
};
use crate::analyze::roce::wide::cm::Connection;
use crate::analyze::roce::wide::policy::Policy;

#[derive(Debug, Clone, Serialize)]
pub struct RoceReport {
    pub inputs: Vec<InputReport>,
    /// A live capture's packet counts from libpcap; `null` for files.
    pub live: Option<LiveReport>,
    pub config: ConfigReport,
    pub capture: CaptureReport,
    pub totals: FrameCounts,
    pub icrc: IcrcCounts,
    pub opcodes: BTreeMap<String, u64>,
    pub ecn: EcnCounts,
    pub dscp: BTreeMap<u8, u64>,
    pub cnps: u64,
    pub cnp_dscp: BTreeMap<u8, u64>,
    pub cnp_vlan_pcp: BTreeMap<u8, u64>,
    pub management: ManagementReport,
    /// Native InfiniBand packets: VCRC verdicts, FECN and BECN marks, ERF records lost.
    pub infiniband: InfinibandCounts,
    pub flows: Vec<FlowReport>,
    pub connections: Vec<Connection>,
    pub retransmit_episodes: Vec<Episode>,
    pub retransmit_episodes_not_kept: u64,
    pub limits: LimitsReport,
    pub pfc: Vec<PauseReport>,
    pub pause: Vec<PauseReport>,
    pub policy: PolicyReport,
    /// CNP bursts and the senders' reactions, message completion times, incast.
    pub congestion: CongestionReport,
    /// The series the HTML page draws beyond the numbers above (not in the JSON).
    #[serde(skip)]
    pub charts: chart_data::ChartData,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigReport {
    pub link_speed_gbps: u64,
    pub pfc_storm_ns: i64,
    pub mirror_window_ns: i64,
    pub policy: Policy,
    pub max_flows: usize,
    pub reorder_window_ns: i64,
    pub nak_reaction_ns: i64,
    pub span_window_ns: i64,
    pub qp_reuse_idle_ns: i64,
    pub min_ack_timeout_ns: i64,
    pub cc_window_ns: i64,
    pub cc_delay_ns: i64,
    pub cc_recovery_ns: i64,
    pub fct_p99_ns: i64,
    pub incast_window_ns: i64,
    pub incast_senders: usize,
    /// `capture` or `hardware`: which times the frames have.
    pub time_source: &'static str,
}

/// What the analysis's memory bounds left out (docs/analysis.md, "Memory bounds").
#[derive(Debug, Clone, Serialize)]
pub struct LimitsReport {
    /// RoCE packets of flows beyond `config.max_flows`, and the first of them.
    pub untracked_packets: u64,
    pub first_untracked_frame: Option<FrameNumber>,
    /// CM connections beyond the first [`crate::analyze::roce::wide::cm::MAX_CONNECTIONS`].
    pub connections_not_kept: u64,
    /// PFC / PAUSE frames from sources beyond the first [`crate::analyze::roce::wide::pfc::MAX_SOURCES`].
    pub pause_frames_not_kept: u64,
    /// Pause periods beyond the first 65,536, which no resend is joined with.
    pub pause_periods_not_kept: u64,
}

impl RoceReport {
    /// What the RoCE analysis of `inputs` counted; `live` gives a live capture's statistics.
    pub fn model(a: &Analyzer, inputs: Vec<InputReport>, live: Option<LiveReport>) -> RoceReport {
        let t = a.wide.totals();
        let c = a.wide.capture();
        let congestion = congestion::flow_keys(a);
        let flows: Vec<FlowReport> = a
            .flows
            .flows
            .iter()
            .zip(congestion)
            .enumerate()
            .map(|(id, (f, congestion))| flow_report(a, FlowId::at(id), f, congestion))
            .collect();
        let (pfc, pause) = pause_reports(a);
        let policy = a.config.policy;
        let pfc_other_priority_xoff =
            pfc.iter().filter(|p| p.priority != Some(policy.lossless_priority)).map(|p| p.stats.xoff).sum();
        RoceReport {
            inputs,
            live,
            config: config_report(&a.config),
            capture: capture_report(c),
            totals: t.frames,
            icrc: t.icrc,
            opcodes: opcode_map(t.opcodes.iter().enumerate().map(|(op, n)| (op as u8, *n))),
            ecn: t.ecn,
            dscp: nonzero_map(&t.dscp),
            cnps: t.cnps,
            cnp_dscp: nonzero_map(&t.cnp_dscp),
            cnp_vlan_pcp: nonzero_map(&t.cnp_vlan_pcp),
            management: ManagementReport {
                packets: t.management,
                dscp: nonzero_map(&t.management_dscp),
                ecn: t.management_ecn,
            },
            infiniband: t.infiniband,
            flows,
            connections: a.wide.cm().connections.clone(),
            retransmit_episodes: paused::episodes(a),
            retransmit_episodes_not_kept: a.episodes_dropped,
            limits: LimitsReport {
                untracked_packets: a.wide.untracked().packets,
                first_untracked_frame: a.wide.untracked().first_frame,
                connections_not_kept: a.wide.cm().not_kept,
                pause_frames_not_kept: a.wide.pauses().not_kept,
                pause_periods_not_kept: a.wide.pauses().ended.periods_not_kept,
            },
            pfc,
            pause,
            policy: policy_report(a, pfc_other_priority_xoff),
            congestion: congestion::congestion_report(a),
            charts: chart_data::ChartData::of(a),
        }
    }

    /// The flows, most troubled first (then in order of appearance).
    pub fn flows_by_trouble(&self) -> Vec<&FlowReport> {
        let mut flows: Vec<&FlowReport> = self.flows.iter().collect();
        flows.sort_by_key(|f| (std::cmp::Reverse(f.trouble()), f.id));
        flows
    }
}

fn config_report(c: &Config) -> ConfigReport {
    ConfigReport {
        link_speed_gbps: c.link_gbps,
        pfc_storm_ns: c.pfc_storm_ns,
        mirror_window_ns: c.mirror_window_ns,
        policy: c.policy,
        max_flows: c.max_flows,
        reorder_window_ns: c.reorder.window_ns,
        nak_reaction_ns: c.reorder.nak_reaction_ns,
        span_window_ns: c.span_window_ns,
        qp_reuse_idle_ns: c.qp_reuse_idle_ns,
        min_ack_timeout_ns: c.min_ack_timeout_ns,
        cc_window_ns: c.congestion.window_ns,
        cc_delay_ns: c.congestion.delay_ns,
        cc_recovery_ns: c.congestion.recovery_ns,
        fct_p99_ns: c.congestion.fct_p99_ns,
        incast_window_ns: c.congestion.incast_window_ns,
        incast_senders: c.congestion.incast_senders,
        time_source: c.time_source.name(),
    }
}
