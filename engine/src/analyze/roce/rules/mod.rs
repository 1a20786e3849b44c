//! The RoCE analysis's rules: integrity, loss, retransmission, reordering, congestion and its
//! control, marking, pauses, copies, damage and the capture's limits. They read the finished
//! report through the rules' frame ([`crate::analyze::rules::Rules`]).

mod congestion_control;

use crate::analyze::finding::{EVIDENCE_KEPT, Evidence, Kind, Severity, kinds};
use crate::analyze::id::{FlowId, FrameNumber};
use crate::analyze::roce::flow::episodes::Trigger;
use crate::analyze::roce::report::FlowReport;
use crate::analyze::roce::report::model::RoceReport;
use crate::analyze::roce::wide::pfc::PERIODS_KEPT;
use crate::analyze::rules::{About, Rules, plural};
use crate::decode::Endpoint;
use rustc_hash::FxHashSet;

/// Evidence from the flows where `count` is not zero, with the frame `first` gives, and the
/// number of such flows.
fn from_flows(
    report: &RoceReport,
    count: impl Fn(&FlowReport) -> u64,
    first: impl Fn(&FlowReport) -> Option<FrameNumber>,
) -> (Evidence, usize) {
    let mut e = Evidence::default();
    let mut flows = 0;
    for f in report.flows.iter().filter(|f| count(f) > 0) {
        e.count += count(f);
        flows += 1;
        if e.flows.len() < EVIDENCE_KEPT {
            e.flows.push(f.id);
            e.frames.extend(first(f));
        }
    }
    (e, flows)
}

/// The first three flows of the evidence by name, and how many more there are.
fn names(report: &RoceReport, e: &Evidence, flows: usize) -> String {
    let mut s: Vec<String> =
        e.flows.iter().take(3).filter_map(|&id| report.flows.get(id.index())).map(FlowReport::label).collect();
    if flows > 3 {
        s.push(format!("{} more", flows - 3));
    }
    s.join(", ")
}

impl Rules<'_, RoceReport> {
    /// A finding about flows where `count` is not zero; `message` gets the total and the names.
    fn flow_rule(
        &mut self,
        about: About,
        count: impl Fn(&FlowReport) -> u64,
        first: impl Fn(&FlowReport) -> Option<FrameNumber>,
        message: impl Fn(u64, usize, &str) -> String,
    ) {
        let (e, flows) = from_flows(self.report, count, first);
        if e.count > 0 {
            let text = message(e.count, flows, &names(self.report, &e, flows));
            self.add(about, text, e);
        }
    }
}

/// The RoCE analysis's rules: integrity, loss, retransmission, reordering, congestion and its
/// control, marking, pauses, copies, damage and the capture's limits.
pub(crate) fn roce(r: &mut Rules<'_, RoceReport>) {
    icrc(r);
    vcrc(r);
    loss(r);
    timeouts(r);
    naks(r);
    reordering(r);
    congestion(r);
    congestion_control::reactions(r);
    congestion_control::tail_latency(r);
    congestion_control::incast(r);
    marking(r);
    pauses(r);
    copies_and_truncation(r);
    damage(r);
    capture_limits(r);
    no_roce(r);
}

fn icrc(r: &mut Rules<'_, RoceReport>) {
    r.flow_rule(
        About {
            kind: kinds::ICRC_BAD,
            cause: "The bytes changed on the way: the ICRC ignores re-marking (DSCP, ECN, TTL, FECN/BECN, UDP checksum), so a mismatch means bit errors on a link (optics, cable, connector), a faulty NIC or switch buffer, or a device rewriting invariant fields.",
            action: "Check FEC and symbol-error counters on every hop of the flows (ethtool -S on hosts, interface counters on switches); clean or replace the optics and cables of the link whose counters grow.",
        },
        |f| f.counts.icrc_bad,
        |f| f.first_icrc_bad_frame,
        |n, flows, names| format!("{} with a bad ICRC on {} ({names})", plural(n as usize, "packet"), plural(flows, "flow")),
    );
}

/// Native InfiniBand packets whose VCRC is wrong: the VCRC covers the last link only.
fn vcrc(r: &mut Rules<'_, RoceReport>) {
    r.flow_rule(
        About {
            kind: kinds::VCRC_BAD,
            cause: "Bits changed on the last link before the capture point: the VCRC is recomputed at every hop, so a mismatch is a bit error on that link (cable, optics, connector, port) or a device that does not recompute it.",
            action: "Check the symbol-error and link-downed counters of the ports of that link (perfquery, ibqueryerrors) and reseat or replace the cable.",
        },
        |f| f.counts.vcrc_bad,
        |f| f.first_frames.vcrc_bad,
        |n, flows, names| format!("{} with a bad VCRC on {} ({names})", plural(n as usize, "InfiniBand packet"), plural(flows, "flow")),
    );
}

fn loss(r: &mut Rules<'_, RoceReport>) {
    r.flow_rule(
        About {
            kind: kinds::PSN_GAP,
            cause: "Packets were dropped before the tap: a buffer overflow on a priority that is not lossless (PFC not enabled end to end, or the traffic is on another priority than the one PFC protects), a link error, or the capture itself dropping packets.",
            action: "Compare the switch drop counters of the RoCE priority along the path with the capture's own drop count (pcap statistics, NIC rx_dropped); check that PFC is enabled on the priority the RoCE DSCP maps to on every hop.",
        },
        |f| f.sequence.missing_psns,
        |f| f.first_frames.gap,
        |n, flows, names| format!("{n} PSNs never reached the tap on {} ({names})", plural(flows, "flow")),
    );
    r.flow_rule(
        About {
            kind: kinds::CAPTURE_LOSS,
            cause: "The capture missed packets the network delivered: a later ACK covered them, with no NAK and no resend. A mirror session over its bandwidth (a SPAN of a busy port, or of both directions into one), drops in libpcap or ibdump, or a capture ring too small.",
            action: "Nothing to fix in the fabric for these; give the capture more room (a dedicated mirror port, a larger buffer with tcpdump -B, a smaller snap length, a filter) before reading loss into its gaps.",
        },
        |f| f.sequence.capture_missed,
        |f| f.first_frames.gap,
        |n, flows, names| {
            format!("{n} PSNs acknowledged by their responders are not in the capture, on {} ({names}): the capture missed them, the network did not lose them", plural(flows, "flow"))
        },
    );
    let episodes = &r.report.retransmit_episodes;
    if !episodes.is_empty() || r.report.retransmit_episodes_not_kept > 0 {
        let by = |t: Trigger| episodes.iter().filter(|e| e.trigger == t).count();
        let (mut e, _) = from_flows(r.report, |f| f.sequence.retransmit_episodes, |f| f.first_frames.retransmission);
        e.frames = episodes.iter().take(EVIDENCE_KEPT).map(|ep| ep.start_frame).collect();
        let packets: u64 = r.report.flows.iter().map(|f| f.sequence.retransmitted).sum();
        let kinds = [
            (Trigger::NakPsnSeqErr, "go-back-N after a PSN-sequence NAK"),
            (Trigger::RnrNak, "after an RNR NAK"),
            (Trigger::Reread, "READ responses for a re-issued READ"),
            (Trigger::ResponseGap, "READs re-issued after a gap in their responses"),
            (Trigger::Timeout, "after a timeout"),
            (Trigger::NoNak, "with no NAK in the capture"),
        ];
        let breakdown: Vec<String> =
            kinds.iter().filter(|(t, _)| by(*t) > 0).map(|(t, what)| format!("{} {what}", by(*t))).collect();
        let message = format!(
            "{} ({} resent): {}",
            plural(e.count as usize, "retransmit episode"),
            plural(packets as usize, "packet"),
            breakdown.join(", ")
        );
        r.add(
            About {
                kind: kinds::RETRANSMISSION,
                cause: "Requesters resent data: after a NAK the responder saw a gap, after an RNR NAK it had no receive buffer, after a timeout the data or its ACK was lost beyond the tap; responders resent READ responses when the requester read again.",
                action: "Follow the more specific findings (NAKs, RNR NAKs, timeouts); each retransmit episode is listed with its trigger and timing.",
            },
            message,
            e,
        );
    }
}

/// Resends after timeouts, and those whose NAK the capture does not hold.
fn timeouts(r: &mut Rules<'_, RoceReport>) {
    episode_rule(
        r,
        Trigger::Timeout,
        About {
            kind: kinds::RETRANSMIT_TIMEOUT,
            cause: "Packets or their ACKs were lost after the tap (the tap saw them, the peer did not answer), or the tail of a transfer was dropped so no later packet could reveal a gap. Each timeout stalls the QP for the full local ACK timeout.",
            action: "Look for drops between the tap and the responder; check the local ACK timeout (CM ConnectRequest, ibv_modify_qp timeout) is neither too short (spurious resends) nor far above the fabric RTT.",
        },
        |n, longest| {
            format!(
                "{n} retransmit episodes with no NAK before them: the requester's ACK timer expired (longest silence before a resend {longest:.3} ms)"
            )
        },
    );
    episode_rule(
        r,
        Trigger::NoNak,
        About {
            kind: kinds::RETRANSMIT_NO_NAK,
            cause: "The NAK that made the requester resend was not captured: a one-way capture (only the requester's direction is mirrored), or the NAK was lost or left on a path the capture does not see.",
            action: "Capture both directions of the flows to see what the responder asked for; the gaps and retransmissions themselves are real.",
        },
        |n, longest| {
            format!(
                "{n} retransmit episodes came too soon for an ACK timeout (longest silence before a resend {longest:.3} ms) and no NAK before them is in the capture"
            )
        },
    );
}

/// NAKs and RNR NAKs from responders.
fn naks(r: &mut Rules<'_, RoceReport>) {
    // NAKs of packets that were only late are REORDER_NAKS, not loss
    let report = r.report;
    let lost = |f: &FlowReport| {
        let reordered = f.peer.and_then(|p| report.flows.get(p.index())).map_or(0, |p| p.sequence.reorder_naks);
        f.counts.naks_psn_seq_err.saturating_sub(reordered)
    };
    r.flow_rule(
        About {
            kind: kinds::NAK_PSN_SEQUENCE,
            cause: "The responder received a PSN beyond the one it expected: packets were lost between requester and responder.",
            action: "Find where the packets were dropped (the PSN_GAP and switch drop counters); a NAK costs a go-back-N resend of everything in flight.",
        },
        lost,
        |f| f.first_frames.nak_psn_seq_err,
        |n, flows, names| format!("{} (PSN sequence error) on {} ({names})", plural(n as usize, "NAK"), plural(flows, "flow")),
    );
    r.flow_rule(
        About {
            kind: kinds::RNR_NAK,
            cause: "Receiver not ready: a SEND arrived when no receive work request was posted. The requester waits the RNR timer and resends.",
            action: "Post receive buffers earlier or deeper (receive queue depth, SRQ), and check the application keeps up; a short min_rnr_timer only hides the cause.",
        },
        |f| f.counts.rnr_naks,
        |f| f.first_frames.rnr_nak,
        |n, flows, names| format!("{} on {} ({names})", plural(n as usize, "RNR NAK"), plural(flows, "flow")),
    );
    r.flow_rule(
        About {
            kind: kinds::NAK_FATAL,
            cause: "The responder refused a request: bad R_Key, address or length outside the memory region, missing access rights, or a responder fault. The QP goes to the error state.",
            action: "Check the application's memory registration and remote keys for the QP; the requester's completion queue shows the matching error status.",
        },
        |f| f.counts.naks_other,
        |f| f.first_frames.nak_other,
        |n, flows, names| {
            format!(
                "{} for invalid request, remote access or remote operational errors on {} ({names})",
                plural(n as usize, "NAK"),
                plural(flows, "flow")
            )
        },
    );
}

/// A finding about the retransmit episodes with `trigger`; `message` gets their count and the
/// longest silence before one, in ms.
fn episode_rule(r: &mut Rules<'_, RoceReport>, trigger: Trigger, about: About, message: impl Fn(usize, f64) -> String) {
    let chosen: Vec<_> = r.report.retransmit_episodes.iter().filter(|e| e.trigger == trigger).collect();
    if chosen.is_empty() {
        return;
    }
    let mut flows: Vec<FlowId> = Vec::new();
    for flow in chosen.iter().map(|e| e.flow) {
        if !flows.contains(&flow) && flows.len() < EVIDENCE_KEPT {
            flows.push(flow);
        }
    }
    let longest = chosen.iter().filter_map(|e| e.idle_before_ns).max().unwrap_or(0);
    let e = Evidence {
        count: chosen.len() as u64,
        flows,
        frames: chosen.iter().take(EVIDENCE_KEPT).map(|e| e.start_frame).collect(),
        ..Evidence::default()
    };
    r.add(about, message(chosen.len(), longest as f64 / 1e6), e);
}

fn reordering(r: &mut Rules<'_, RoceReport>) {
    let flows = &r.report.flows;
    let depth = flows.iter().map(|f| f.sequence.reorder_depth_max).max().unwrap_or(0);
    let delay = flows.iter().map(|f| f.sequence.reorder_delay_us_max).fold(0.0, f64::max);
    r.flow_rule(
        About {
            kind: kinds::REORDERING,
            cause: "Packets of one flow took paths of different delay: adaptive routing (e.g. Spectrum-X), packet spraying, or ECMP changes after a link event. Harmless when the receiving NICs place out-of-order packets.",
            action: "Nothing to fix if the receivers accept out-of-order arrival (no REORDER_NAKS finding); otherwise see REORDER_NAKS.",
        },
        |f| f.sequence.late_arrivals,
        |f| f.first_frames.late_arrival,
        |n, flows, names| {
            format!("{} on {} ({names}): reordered, not lost (deepest {depth} PSNs, up to {delay:.3} µs late)", plural(n as usize, "late arrival"), plural(flows, "flow"))
        },
    );
    r.flow_rule(
        About {
            kind: kinds::REORDER_NAKS,
            cause: "The receiving NICs do not accept out-of-order arrival on this fabric: every reordered packet costs a NAK and a go-back-N resend of everything in flight.",
            action: "Enable out-of-order placement on the receivers (adaptive-routing / out-of-order RC support of the NIC and its QP attribute), or keep this traffic class off adaptive routing.",
        },
        |f| f.sequence.reorder_naks,
        |f| f.first_frames.late_arrival,
        |n, flows, names| {
            format!("{} for packets that were only late, on {} ({names}): the receivers took reordering for loss and the senders went back N", plural(n as usize, "NAK"), plural(flows, "flow"))
        },
    );
    r.flow_rule(
        About {
            kind: kinds::QP_REUSED,
            cause: "Short-lived connections (NCCL bootstrap, rping, test tools, connection pools) reuse QP numbers; each connection is a flow of its own.",
            action: "Nothing to fix; the flows list each connection with its own counters (previous_flow links them).",
        },
        |f| u64::from(f.previous_flow.is_some()),
        |f| Some(f.first_frame),
        |n, _, names| format!("{} continue a QP number used by an earlier connection ({names})", plural(n as usize, "flow")),
    );
    ambiguous_pairing(r);
}

fn congestion(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    let ce: u64 = report.ecn.ce;
    if ce > 0 {
        let sent = CnpsSent::of(report);
        // where the capture holds nothing its receiver sent its sender (a mirror of one
        // direction), whether it sent CNPs is not known
        let back: FxHashSet<(Endpoint, Endpoint)> = report.flows.iter().map(|f| (f.dst_ip, f.src_ip)).collect();
        let unanswered =
            |f: &FlowReport| if f.ce > 0 && back.contains(&(f.src_ip, f.dst_ip)) && !sent.answer(f) { f.ce } else { 0 };
        let (e, flows) = from_flows(report, unanswered, |f| f.first_frames.ce);
        if e.count > 0 {
            let msg = if report.cnps == 0 {
                format!("{ce} CE-marked packets and no CNP in the whole capture")
            } else {
                format!(
                    "{} CE-marked packets on flows whose receivers sent no CNP ({})",
                    e.count,
                    names(report, &e, flows)
                )
            };
            r.add(
                About {
                    kind: kinds::CE_WITHOUT_CNP,
                    cause: "Switches mark congestion but the receivers' notification point does not answer, so senders never slow down: DCQCN is off on the receiving NICs, or the CNPs leave on a path the capture does not see.",
                    action: "Enable the DCQCN notification point on the receivers (e.g. /sys/class/net/IF/ecn/roce_np/enable/PRIO) and capture both directions.",
                },
                msg,
                e,
            );
        }
    }
    fecn_without_becn(r);
}

/// Where the capture's CNPs went, by their addressing (docs/analysis.md, "Which marks a CNP
/// answers"): a CNP from host D to host S with destination QP X is addressed to the sender of
/// the flow from S to D whose source QP is X.
struct CnpsSent {
    /// (D, S, X) of every flow that carried a CNP.
    to_qp: FxHashSet<(Endpoint, Endpoint, u32)>,
    /// (D, S) of every flow that carried a CNP to a QP no flow is known to send from: an
    /// unpaired flow whose destination QP no flow from S to D is known to be sent by.
    to_unknown_qp: FxHashSet<(Endpoint, Endpoint)>,
}

/// The QPs known to send `f`: its source QP (from its pairing or a host's QP table) and the
/// source QPs its DETHs named (the first 64).
fn sender_qps(f: &FlowReport) -> impl Iterator<Item = u32> + '_ {
    let named = f.src_qps.keys().filter_map(|qp| u32::from_str_radix(qp.trim_start_matches("0x"), 16).ok());
    f.src_qp.into_iter().chain(named)
}

impl CnpsSent {
    fn of(report: &RoceReport) -> Self {
        let known: FxHashSet<(Endpoint, Endpoint, u32)> =
            report.flows.iter().flat_map(|f| sender_qps(f).map(|qp| (f.src_ip, f.dst_ip, qp))).collect();
        let mut sent = CnpsSent { to_qp: FxHashSet::default(), to_unknown_qp: FxHashSet::default() };
        for c in report.flows.iter().filter(|c| c.counts.cnps > 0) {
            sent.to_qp.insert((c.src_ip, c.dst_ip, c.dst_qp));
            if c.peer.is_none() && !known.contains(&(c.dst_ip, c.src_ip, c.dst_qp)) {
                sent.to_unknown_qp.insert((c.src_ip, c.dst_ip));
            }
        }
        sent
    }

    /// Did the receiver of `f` send a CNP to its sender: to its source QP (its peer's
    /// destination QP, one a host's table or its DETHs named), or, where that is not known, to
    /// a QP of its source host no flow is known to send from?
    fn answer(&self, f: &FlowReport) -> bool {
        if f.peer.is_some() {
            return f.from_peer.is_some_and(|p| p.cnps > 0);
        }
        let mut senders = sender_qps(f).peekable();
        if senders.peek().is_none() {
            return self.to_unknown_qp.contains(&(f.dst_ip, f.src_ip));
        }
        senders.any(|qp| self.to_qp.contains(&(f.dst_ip, f.src_ip, qp)))
    }
}

/// InfiniBand's counterpart of CE without CNP: FECN marks the receivers never answered.
fn fecn_without_becn(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    let notified = |f: &FlowReport| {
        f.peer.and_then(|p| report.flows.get(p.index())).is_some_and(|p| p.counts.becn + p.counts.cnps > 0)
    };
    r.flow_rule(
        About {
            kind: kinds::FECN_WITHOUT_BECN,
            cause: "Switches mark congestion with FECN but the receiving HCAs return no BECN (or CNP), so the senders' congestion control never slows them down: InfiniBand congestion control is not enabled on the receivers (the subnet manager configures it), or the notifications leave on a path the capture does not see.",
            action: "Enable congestion control in the subnet manager (OpenSM's congestion control configuration, or UFM) for the HCAs and switches of these flows, and capture both directions.",
        },
        |f| if f.counts.fecn > 0 && !notified(f) { f.counts.fecn } else { 0 },
        |f| f.first_frames.fecn,
        |n, flows, names| {
            format!("{n} FECN-marked packets on {} whose receivers returned no BECN ({names})", plural(flows, "flow"))
        },
    );
}

fn marking(r: &mut Rules<'_, RoceReport>) {
    let p = r.report.policy.clone();
    r.flow_rule(
        About {
            kind: kinds::CNP_DSCP,
            cause: "CNPs outside their high-priority class queue behind data, so senders learn of congestion late.",
            action: "Set the NICs' CNP DSCP (mlxconfig CNP_DSCP / ecn/roce_np/cnp_dscp) to the fabric's CNP class and trust DSCP on the switches.",
        },
        |f| f.policy.cnp_dscp.count,
        |f| f.policy.cnp_dscp.first_frame,
        |n, _, names| format!("{n} CNPs not marked DSCP {} ({names})", p.expected_cnp_dscp),
    );
    r.flow_rule(
        About {
            kind: kinds::CNP_PCP,
            cause: "CNPs on the wrong 802.1p priority wait behind data or are paused with it.",
            action: "Set the NICs' CNP priority (mlxconfig CNP_802P_PRIO / ecn/roce_np/cnp_802p_prio).",
        },
        |f| f.policy.cnp_pcp.count,
        |f| f.policy.cnp_pcp.first_frame,
        |n, _, names| format!("{n} VLAN-tagged CNPs not on priority {} ({names})", p.expected_cnp_pcp),
    );
    r.flow_rule(
        About {
            kind: kinds::DATA_DSCP,
            cause: "Data outside the lossless class maps to a lossy queue: it can be dropped, and ECN/PFC settings of the RoCE class do not apply to it.",
            action: "Set the traffic class of the QPs or the NIC default (e.g. cma_roce_tos 106 for DSCP 26 with ECT(0)) and check the switches trust DSCP.",
        },
        |f| f.policy.data_dscp.count,
        |f| f.policy.data_dscp.first_frame,
        |n, _, names| format!("{n} RoCE data packets not marked DSCP {} ({names})", p.expected_data_dscp),
    );
    r.flow_rule(
        About {
            kind: kinds::DATA_PCP,
            cause: "Data on another 802.1p priority than the lossless one is not protected by PFC.",
            action: "Map the RoCE DSCP to the lossless priority on the NICs (DSCP-to-priority or egress map) and switches.",
        },
        |f| f.policy.data_pcp.count,
        |f| f.policy.data_pcp.first_frame,
        |n, _, names| format!("{n} VLAN-tagged RoCE data packets not on priority {} ({names})", p.expected_data_pcp),
    );
    r.flow_rule(
        About {
            kind: kinds::NOT_ECT_DATA,
            cause: "Switches cannot mark Not-ECT packets, so they drop them (or pause the link) instead of signalling congestion; DCQCN never engages for these flows.",
            action: "Enable ECN on the sending NICs (DCQCN reaction point, e.g. ecn/roce_rp/enable) or set ECT(0) in the traffic class.",
        },
        |f| f.policy.not_ect_data.count,
        |f| f.policy.not_ect_data.first_frame,
        |n, _, names| format!("{n} RoCE data packets not ECN-capable (Not-ECT) ({names})"),
    );
    if let Some(cm_dscp) = r.report.policy.expected_cm_dscp {
        r.flow_rule(
            About {
                kind: kinds::CM_DSCP,
                cause: "The NICs send connection management with another traffic class than the fabric expects for it.",
                action: "Set the RDMA CM traffic class (e.g. the rdma_cm default_roce_tos in configfs) or the management class of the NICs.",
            },
            |f| f.policy.cm_dscp.count,
            |f| f.policy.cm_dscp.first_frame,
            |n, _, names| format!("{n} management packets (QP 0 and 1: MADs, RDMA CM) not marked DSCP {cm_dscp} ({names})"),
        );
    }
}

fn pauses(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    let lossless = report.policy.lossless_priority;
    let storms: Vec<_> = report.pfc.iter().filter(|p| p.stats.storm).collect();
    if !storms.is_empty() {
        let longest = storms.iter().map(|p| p.stats.longest_pause_ns).max().unwrap_or(0);
        let who: Vec<String> =
            storms.iter().map(|p| format!("{} priority {}", p.src_mac, p.priority.unwrap_or(0))).collect();
        let e = Evidence {
            count: storms.iter().map(|p| p.stats.storm_periods).sum(),
            frames: storms.iter().filter_map(|p| p.stats.first_storm_frame).take(EVIDENCE_KEPT).collect(),
            ..Evidence::default()
        };
        r.add(
            About {
                kind: kinds::PFC_STORM,
                cause: "A device keeps pausing its link partner: a NIC that stopped draining its receive buffer (driver hang, host stall) or a congestion tree; the pause spreads upstream and can stop the whole fabric.",
                action: "Find the port of the sending MAC and its host; enable the switches' PFC watchdog so a stuck port is taken out of the lossless class.",
            },
            format!("PFC pause storm: {} kept a priority paused for up to {:.1} ms without a break", who.join(", "), longest as f64 / 1e6),
            e,
        );
    }
    let other: Vec<_> = report.pfc.iter().filter(|p| p.priority != Some(lossless) && p.stats.xoff > 0).collect();
    if !other.is_empty() {
        let e = Evidence {
            count: other.iter().map(|p| p.stats.xoff).sum(),
            frames: other.iter().map(|p| p.stats.first_frame).take(EVIDENCE_KEPT).collect(),
            ..Evidence::default()
        };
        let which: Vec<String> =
            other.iter().map(|p| format!("{} priority {}", p.src_mac, p.priority.unwrap_or(0))).collect();
        r.add(
            About {
                kind: kinds::PFC_OTHER_PRIORITY,
                cause: "PFC is enabled on a priority that is not the RoCE one, or RoCE traffic is mapped to another priority than the one PFC protects.",
                action: "Align the PFC-enabled priority, the DSCP-to-priority map and the RoCE traffic class on NICs and switches.",
            },
            format!("{} PFC XOFF frames for priorities other than the lossless priority {lossless} ({})", e.count, which.join(", ")),
            e,
        );
    }
    let xoffs: u64 = report.pfc.iter().chain(&report.pause).map(|p| p.stats.xoff).sum();
    if xoffs > 0 && report.ecn.ce + report.ecn.outer_ce == 0 && report.totals.roce_v2 > 0 {
        r.add(
            About {
                kind: kinds::PAUSE_WITHOUT_ECN,
                cause: "With ECN off, congestion is handled by PFC alone: senders never slow down, pauses spread upstream and block unrelated flows (head-of-line blocking) and can turn into storms.",
                action: "Enable ECN marking (WRED/ECN thresholds Kmin/Kmax) on the switches' lossless queue so DCQCN throttles senders before buffers fill.",
            },
            format!("{xoffs} pause frames and not one CE-marked RoCE packet: ECN marking looks disabled"),
            Evidence { count: xoffs, ..Evidence::default() },
        );
    }
    if !report.pause.is_empty() {
        let e = Evidence {
            count: report.pause.iter().map(|p| p.stats.xoff + p.stats.xon).sum(),
            frames: report.pause.iter().map(|p| p.stats.first_frame).take(EVIDENCE_KEPT).collect(),
            ..Evidence::default()
        };
        r.add(
            About {
                kind: kinds::LINK_PAUSE,
                cause: "Global pause is enabled on a port of a PFC fabric; it stops all traffic classes, not only the lossless one.",
                action: "Disable 802.3x flow control (ethtool -A IF rx off tx off) on ports that use PFC.",
            },
            format!("{} 802.3x PAUSE frames: link-level flow control pauses every priority", e.count),
            e,
        );
    }
}

/// Second copies of packets, and frames cut short by the snap length or the mirror.
fn copies_and_truncation(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    if report.totals.mirror_duplicates > 0 {
        let (e, _) = from_flows(report, |f| f.counts.mirror_duplicates, |f| f.first_frames.mirror_duplicate);
        r.add(
            About {
                kind: kinds::MIRROR_DUPLICATES,
                cause: "The capture holds the same traffic from two mirror sessions or taps (the copies differ in TTL or MAC addresses).",
                action: "Nothing to fix; filter the capture to one session if only one vantage point is wanted.",
            },
            format!("{} frames are second copies of packets seen at another tap; flows count each packet once", report.totals.mirror_duplicates),
            e,
        );
    }
    let c = &report.capture;
    let cut = c.snaplen_cut + c.mirror_truncated + c.truncated_copies;
    if cut > 0 || report.icrc.unverifiable > 0 {
        r.add(
            About {
                kind: kinds::TRUNCATED_FRAMES,
                cause: "The capture keeps only the start of each frame (tcpdump -s, mirror session truncation: ERSPAN's T bit, or a truncate size that leaves no mark).",
                action: "Capture full frames (tcpdump -s 0, no truncation on the mirror session) when ICRC verification matters; headers, PSNs and lengths are analysed all the same.",
            },
            format!(
                "{} frames were cut by the snap length or the mirror ({} of them mirror copies cut with no mark); {} ICRCs could not be verified{}",
                cut,
                c.truncated_copies,
                report.icrc.unverifiable,
                headers_cut(report.totals.headers_cut)
            ),
            Evidence { count: cut.max(report.icrc.unverifiable), ..Evidence::default() },
        );
    }
}

/// What a cut that reached the headers leaves unknown, for `TRUNCATED_FRAMES`' message.
fn headers_cut(frames: u64) -> String {
    match frames {
        0 => String::new(),
        n => format!(
            "; {} cut inside their headers (a RoCE frame within its BTH: its QP and PSN unknown, so not analysed; tcpdump -s 128 keeps every RoCE header)",
            plural(n as usize, "frame")
        ),
    }
}

/// RDMA devices by the names Linux gives them (`rdma link`): NVIDIA/Mellanox, Broadcom, Intel,
/// soft-RoCE and soft-iWARP, HiSilicon, QLogic/Marvell, AWS, Alibaba, AMD Pensando, Microsoft,
/// Chelsio, VMware, Emulex.
const RDMA_DEVICE_PREFIXES: &[&str] = &[
    "mlx4_",
    "mlx5_",
    "bnxt_re",
    "irdma",
    "i40iw",
    "rxe",
    "siw",
    "hns_",
    "qedr",
    "efa_",
    "erdma",
    "ionic_",
    "mana_",
    "cxgb4_",
    "vmw_pvrdma",
    "ocrdma",
];

/// Is `interface` an RDMA device's name?
fn is_rdma_device(interface: &str) -> bool {
    RDMA_DEVICE_PREFIXES.iter().any(|p| interface.starts_with(p))
}

/// A capture on an RDMA device (libpcap's RDMA sniffer, ibdump) sees what the NIC hands it:
/// the NIC's own retransmissions may not pass through.
fn rdma_device(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    let mut devices: Vec<&str> =
        report.inputs.iter().flat_map(|i| &i.interfaces).map(String::as_str).filter(|i| is_rdma_device(i)).collect();
    devices.sort_unstable();
    devices.dedup();
    if devices.is_empty() {
        return;
    }
    r.add(
        About {
            kind: kinds::RDMA_DEVICE_CAPTURE,
            cause: "The capture was taken on an RDMA device (tcpdump or dumpcap on mlx5_0 through libpcap's RDMA sniffer, ibdump): it sees the packets the NIC's steering hands it. Packets the NIC's transport engine resends from its own queues may never pass through it, and its own drops are not counted, so a resend can be missing where the gap it closes is not.",
            action: "Before reading a missing resend or a gap as the fabric's doing, check the NIC's counters (ethtool -S: out_of_sequence, packet_seq_err, local_ack_timeout_err, rx_discards_phy) or capture from a switch mirror session.",
        },
        format!(
            "captured on {} {}: outbound retransmissions may be missing from the capture",
            if devices.len() == 1 { "the RDMA device" } else { "the RDMA devices" },
            devices.join(", ")
        ),
        Evidence::default(),
    );
}

/// A capture with frames and neither RoCE nor flow control in it: most often taken where RoCE
/// does not pass (the kernel's Ethernet interface), or RoCE on another UDP port.
fn no_roce(r: &mut Rules<'_, RoceReport>) {
    let t = &r.report.totals;
    let seen = t.roce_packets + t.pfc_frames + t.pause_frames + t.uet_packets + t.headers_cut;
    if t.frames == 0 || seen > 0 {
        return;
    }
    r.add(
        About {
            kind: kinds::NO_ROCE,
            cause: "RoCE bypasses the kernel: a capture on the host's Ethernet interface (eth0, ens1f0np0) sees only what the kernel sends and receives, never the NIC's RoCE traffic. Or the traffic is RoCE on a UDP port other than 4791.",
            action: "Capture on the RDMA device (tcpdump -i mlx5_0, ibdump) or from a switch mirror session; for RoCE on another UDP destination port, add --roce-port PORT.",
        },
        format!("no RoCE packet among {}: RoCEv2 is UDP destination port 4791 (--roce-port adds others)", plural(t.frames as usize, "frame")),
        Evidence::default(),
    );
}

/// Files cut short and frames that do not decode.
fn damage(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    let damaged: Vec<_> = report.inputs.iter().filter(|i| i.damage.is_some()).collect();
    if !damaged.is_empty() {
        let what: Vec<String> = damaged
            .iter()
            .filter_map(|i| {
                i.damage.as_ref().map(|d| format!("{} at byte {}: {}", i.file, d.offset.unwrap_or(0), d.message))
            })
            .collect();
        r.add(
            About {
                kind: kinds::CAPTURE_DAMAGED,
                cause: "The file was cut short (disk full, capture killed, transfer interrupted) or corrupted.",
                action: "Take the capture again if the missing tail matters; everything before the damage is analysed.",
            },
            format!("capture file damaged, analysed up to the damage: {}", what.join("; ")),
            Evidence { count: damaged.len() as u64, ..Evidence::default() },
        );
    }
    if report.totals.malformed > 0 {
        let frames = report.capture.malformed_by_layer.iter().map(|m| m.first_frame).take(EVIDENCE_KEPT).collect();
        let layers: Vec<String> = report
            .capture
            .malformed_by_layer
            .iter()
            .map(|m| format!("{} {} ({})", m.count, m.layer, m.first_reason))
            .collect();
        r.add(
            About {
                kind: kinds::MALFORMED_FRAMES,
                cause: "Frames that should carry RoCE could not be decoded: truncated headers, impossible lengths, reserved opcodes, or non-RoCE traffic on UDP port 4791.",
                action: "Inspect the first malformed frames with `rocescope packets -V --only errors`.",
            },
            format!("{} malformed frames: {}", report.totals.malformed, layers.join("; ")),
            Evidence { count: report.totals.malformed, frames, ..Evidence::default() },
        );
    }
}

/// What the capture or the analysis could not keep, and clocks that go back.
fn capture_limits(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    if let Some(live) = report.live.filter(|l| l.kernel_dropped + l.interface_dropped > 0) {
        r.add(
            About {
                kind: kinds::CAPTURE_LOST_PACKETS,
                cause: "The capture host did not read frames as fast as they arrived (CPU, disk, or a buffer too small), or the NIC dropped them.",
                action: "Capture with a narrower filter or a smaller snap length, write to a faster disk, or spread the mirror over several capture ports; compare the gaps with these losses before blaming the fabric.",
            },
            format!(
                "the capture lost {} packets in the kernel and {} at the interface; PSN gaps may be the capture's own",
                live.kernel_dropped, live.interface_dropped
            ),
            Evidence { count: live.kernel_dropped + live.interface_dropped, ..Evidence::default() },
        );
    }
    rdma_device(r);
    let lost = report.infiniband.erf_records_lost;
    if lost > 0 {
        r.add(
            About {
                kind: kinds::CAPTURE_LOST_PACKETS,
                cause: "The capture card dropped records before writing them (its ERF loss counters): it could not keep up with the link, or its host did not drain it in time.",
                action: "Capture with a narrower filter or a smaller snap length, or spread the traffic over more capture ports; compare the gaps with these losses before blaming the fabric.",
            },
            format!("the capture card lost {} (ERF loss counters); PSN gaps may be the capture's own", plural(lost as usize, "record")),
            Evidence { count: lost, ..Evidence::default() },
        );
    }
    for link in &report.capture.undecoded_links {
        r.add(
            About {
                kind: kinds::UNDECODED_LINK_TYPE,
                cause: "The capture holds frames of a link layer rocescope does not decode, so nothing in them was analysed: the findings say nothing about them.",
                action: "Capture on an Ethernet or InfiniBand interface (or an RDMA device), or convert the capture (editcap -T) to a link type rocescope reads.",
            },
            format!("{} of {} were not decoded or analysed", plural(link.frames as usize, "frame"), link.name()),
            Evidence { count: link.frames, frames: vec![link.first_frame], ..Evidence::default() },
        );
    }
    let limits = &report.limits;
    let beyond = limits.untracked_packets
        + limits.connections_not_kept
        + limits.pause_frames_not_kept
        + limits.pause_periods_not_kept;
    if beyond > 0 {
        r.add(
            About {
                kind: kinds::LIMITS_REACHED,
                cause: "The capture holds more flows (QPs), CM connections, pause sources or pause periods than the analysis keeps in memory: a very large fabric, random or corrupted QP numbers, or crafted traffic.",
                action: "Re-run with a larger --max-flows (each flow takes about 1 KiB), or filter the capture to the hosts of interest.",
            },
            format!(
                "{} RoCE packets belong to flows beyond the first {} and are in the capture-wide totals only; \
                 {} CM connections and {} pause frames beyond the tracking limits were counted only; \
                 {} pause periods beyond the first {} were not joined with resends",
                limits.untracked_packets,
                report.config.max_flows,
                limits.connections_not_kept,
                limits.pause_frames_not_kept,
                limits.pause_periods_not_kept,
                PERIODS_KEPT
            ),
            Evidence {
                count: limits.untracked_packets,
                frames: limits.first_untracked_frame.into_iter().collect(),
                ..Evidence::default()
            },
        );
    }
    if report.capture.non_monotonic_timestamps > 0 {
        r.add(
            About {
                kind: kinds::TIMESTAMPS_BACKWARDS,
                cause: "Several capture queues or interfaces with unsynchronised clocks, or merged files that overlap.",
                action: "Treat sub-microsecond timings with care; durations that would be negative are counted as zero.",
            },
            format!(
                "{} frames are timestamped earlier than the frame before them",
                report.capture.non_monotonic_timestamps
            ),
            Evidence { count: report.capture.non_monotonic_timestamps, ..Evidence::default() },
        );
    }
}

/// Flows of responses no evidence paired with the QP they answer; the message names a host
/// whose QP table would pair them exactly (`--qps`).
fn ambiguous_pairing(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    let (e, flows) =
        from_flows(report, |f| u64::from(f.peer.is_none() && f.pairing_candidates > 0), |f| Some(f.first_frame));
    let Some(first) = e.flows.first().and_then(|id| report.flows.get(id.index())) else { return };
    let message = format!(
        "{} of responses could not be paired with the QP they answer ({}); the QP table of {} or {} (--qps {}=FILE, from `rdma -j resource show qp`) would pair them",
        plural(flows, "flow"),
        names(report, &e, flows),
        first.src_ip,
        first.dst_ip,
        first.src_ip
    );
    r.add(PAIRING_AMBIGUOUS, message, e);
}

const PAIRING_AMBIGUOUS: About = About {
    kind: kinds::PAIRING_AMBIGUOUS,
    cause: "Several QPs between the same two hosts use the same PSNs (NCCL connects without RDMA CM, starts every QP at PSN 0 and stripes a connection over QPs in lock-step), and no response told which QP each flow of responses answers. Even one QP left whose PSNs fit is no proof: the QP answered may be one whose requests took a path the capture does not see (the other half of an ECMP fabric).",
    action: "Give the hosts' QP tables (rdma -j resource show qp on each host while the job runs, then analyze --qps HOST=FILE), or capture the connection's setup (RDMA CM); until then ACK latency, completion times, CE-to-CNP delays and NAK-to-resend links are not measured on these flows. Losses are still counted on each QP.",
};
