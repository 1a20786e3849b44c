//! The exemplars of the RoCE analysis's table records (flows, episodes, pause
//! sources, CNP bursts, incast periods): [`crate::analyze::exemplar`]. Each names every field,
//! so that a record that gains one does not build until its exemplar has it; the counters'
//! structs, whose fields are all counts, are their defaults.

use std::collections::BTreeMap;

use crate::analyze::counts::{EcnCounts, FlowCounters};
use crate::analyze::exemplar::{ENDPOINT, Exemplar};
use crate::analyze::id::{FlowId, FrameNumber, Space};
use crate::analyze::identity::owners::Owner;
use crate::analyze::roce::congestion::incast::IncastPeriod;
use crate::analyze::roce::congestion::reaction::Outcome;
use crate::analyze::roce::flow::episodes::{Episode, Pattern, Trigger};
use crate::analyze::roce::flow::sequence::Decision;
use crate::analyze::roce::flow::table::FirstFrames;
use crate::analyze::roce::report::congestion::{BurstReport, FlowCongestion};
use crate::analyze::roce::report::{
    DurationSummary, FlowReport, PauseReport, PeerSummary, SequenceReport, SizeSummary,
};
use crate::analyze::roce::wide::pfc::PauseStats;
use crate::analyze::roce::wide::policy::{PolicyCounts, Violations};

/// The frame and flow the exemplars name.
const FRAME: FrameNumber = FrameNumber::new(0);
const FLOW: FlowId = FlowId::new(0);

impl Exemplar for DurationSummary {
    fn exemplar() -> Self {
        DurationSummary { count: 0, min: Some(0), p50: Some(0), p99: Some(0), max: Some(0) }
    }
}

impl Exemplar for SizeSummary {
    fn exemplar() -> Self {
        SizeSummary { min: Some(0), mean: Some(0), max: Some(0) }
    }
}

impl Exemplar for SequenceReport {
    fn exemplar() -> Self {
        SequenceReport {
            sequenced: 0,
            first_psn: Some(0),
            highest_psn: Some(0),
            gaps: 0,
            missing_psns: 0,
            capture_missed: 0,
            capture_only_gaps: 0,
            retransmitted: 0,
            retransmit_episodes: 0,
            late_arrivals: 0,
            reorder_events: 0,
            reorder_depth_max: 0,
            reorder_delay_us_max: 0.0,
            reorder_naks: 0,
        }
    }
}

impl Exemplar for Violations {
    fn exemplar() -> Self {
        Violations { count: 0, first_frame: Some(FRAME) }
    }
}

impl Exemplar for PolicyCounts {
    fn exemplar() -> Self {
        let v = Violations::exemplar();
        PolicyCounts { data_dscp: v, data_pcp: v, not_ect_data: v, cnp_dscp: v, cnp_pcp: v, cm_dscp: v }
    }
}

impl Exemplar for FirstFrames {
    fn exemplar() -> Self {
        let f = Some(FRAME);
        FirstFrames {
            gap: f,
            retransmission: f,
            nak_psn_seq_err: f,
            nak_other: f,
            rnr_nak: f,
            ce: f,
            late_arrival: f,
            vcrc_bad: f,
            fecn: f,
            mirror_duplicate: f,
        }
    }
}

impl Exemplar for FlowCongestion {
    fn exemplar() -> Self {
        let f = Some(0.0);
        FlowCongestion {
            cnp_bursts: 0,
            first_cnp_burst_frame: Some(FRAME),
            reactions_measured: 0,
            reaction_ratio_p50: f,
            reacted: 0,
            recovered: 0,
            not_recovered: 0,
            recovery_us_p50: f,
            recovery_us_max: f,
            messages_completed: 0,
            messages_incomplete: 0,
            fct_us_p50: f,
            fct_us_p99: f,
            fct_us_max: f,
        }
    }
}

impl Exemplar for FlowReport {
    fn exemplar() -> Self {
        FlowReport {
            id: FLOW,
            src_ip: ENDPOINT,
            dst_ip: ENDPOINT,
            dst_qp: 0,
            src_qp: Some(0),
            version: 0,
            transport: "",
            first_frame: FRAME,
            last_frame: FRAME,
            first_ts_ns: 0,
            last_ts_ns: 0,
            duration_ns: 0,
            counts: FlowCounters::default(),
            throughput_bps: 0,
            opcodes: BTreeMap::new(),
            dscp: BTreeMap::new(),
            ecn: EcnCounts::default(),
            pcp: BTreeMap::new(),
            udp_sports: Vec::new(),
            udp_sports_other_packets: 0,
            src_qps: BTreeMap::new(),
            src_qps_other_packets: 0,
            first_icrc_bad_frame: Some(FRAME),
            sequence: SequenceReport::exemplar(),
            requests: SequenceReport::exemplar(),
            responses: SequenceReport::exemplar(),
            previous_flow: Some(FLOW),
            ce: 0,
            cnp_spacing_ns: DurationSummary::exemplar(),
            message_bytes: SizeSummary::exemplar(),
            pmtu: Some(0),
            peer: Some(FLOW),
            pairing: Some(""),
            pairing_candidates: 0,
            owner: Some(Owner::exemplar()),
            dst_owner: Some(Owner::exemplar()),
            from_peer: Some(PeerSummary::default()),
            ack_latency_ns: DurationSummary::exemplar(),
            ce_to_cnp_ns: DurationSummary::exemplar(),
            policy: PolicyCounts::exemplar(),
            first_frames: FirstFrames::exemplar(),
            congestion: FlowCongestion::exemplar(),
        }
    }
}

impl Exemplar for Episode {
    fn exemplar() -> Self {
        Episode {
            flow: FLOW,
            space: Space::Requests,
            start_frame: FRAME,
            end_frame: FRAME,
            start_ts_ns: 0,
            end_ts_ns: 0,
            first_psn: 0,
            last_psn: 0,
            packets: 0,
            highest_sent_psn: 0,
            trigger: Trigger::NakPsnSeqErr,
            trigger_frame: Some(FRAME),
            nak_to_resend_ns: Some(0),
            rnr_delay_us: Some(0),
            idle_before_ns: Some(0),
            gap_to_recovery_ns: Some(0),
            pattern: Pattern::GoBackN,
            decided_by: Decision::Psn,
        }
    }
}

impl Exemplar for PauseReport {
    fn exemplar() -> Self {
        PauseReport {
            src_mac: String::new(),
            priority: Some(0),
            stats: PauseStats {
                xoff: 0,
                xon: 0,
                paused_ns: 0,
                longest_pause_ns: 0,
                storm: false,
                storm_periods: 0,
                first_frame: FRAME,
                first_ts_ns: 0,
                first_storm_frame: Some(FRAME),
            },
        }
    }
}

impl Exemplar for BurstReport {
    fn exemplar() -> Self {
        BurstReport {
            flow: FLOW,
            first_frame: FRAME,
            start_ns: 0,
            end_ns: 0,
            cnps: 0,
            rate_before_bps: 0,
            rate_after_bps: 0,
            reaction_ratio: Some(0.0),
            outcome: Outcome::NotMeasured,
            recovered_ns: Some(0),
            recovery_us: Some(0.0),
        }
    }
}

impl Exemplar for IncastPeriod {
    fn exemplar() -> Self {
        IncastPeriod {
            receiver: ENDPOINT,
            first_frame: FRAME,
            start_ns: 0,
            end_ns: 0,
            peak_fan_in: 0,
            senders: Vec::new(),
            ce_marks: 0,
            cnps: 0,
            pauses: 0,
        }
    }
}
