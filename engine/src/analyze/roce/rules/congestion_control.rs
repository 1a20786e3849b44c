//! Findings on congestion control: senders that do not slow down after CNPs or recover slowly
//! (DCQCN's reaction point), a high tail of small messages' completion times, and incast
//! (docs/analysis.md, "Congestion control").

use super::{About, EVIDENCE_KEPT, Evidence, FlowReport, Kind, RoceReport, Rules, Severity, kinds, names, plural};
use crate::analyze::roce::congestion::incast::IncastPeriod;
use crate::decode::Endpoint;

/// Measured bursts, recoveries or reactions a flow needs before it is judged.
const JUDGED_AFTER: u64 = 3;

/// DCQCN_NO_REACTION and DCQCN_SLOW_RECOVERY.
pub(super) fn reactions(r: &mut Rules<'_, RoceReport>) {
    let deaf = |f: &FlowReport| {
        let c = &f.congestion;
        let deaf = c.reactions_measured >= JUDGED_AFTER && c.reaction_ratio_p50.is_some_and(|p| p >= 0.95);
        if deaf { c.reactions_measured } else { 0 }
    };
    r.flow_rule(
        About {
            kind: kinds::DCQCN_NO_REACTION,
            cause: "CNPs reach the sender but it does not slow down: the NIC's reaction point looks disabled, or the CNPs do not reach it on the priority or DSCP it listens on.",
            action: "Check the reaction point on the senders (mlx5: /sys/class/net/IF/ecn/roce_rp/enable/PRIO; firmware ROCE_CC_ALGO and ROCE_CC_PRIO_MASK) and the CNPs' priority and DSCP mapping.",
        },
        deaf,
        |f| f.congestion.first_cnp_burst_frame,
        |bursts, flows, names| {
            format!(
                "{} kept their rate after CNPs (median reaction ratio at least 0.95 over {bursts} measured bursts): {names}",
                plural(flows, "flow")
            )
        },
    );
    let recovery_us = r.report.config.cc_recovery_ns as f64 / 1_000.0;
    let slow = move |f: &FlowReport| {
        let c = &f.congestion;
        let slow_median = c.recovered >= JUDGED_AFTER && c.recovery_us_p50.is_some_and(|p| p > recovery_us);
        let stuck = c.reacted >= JUDGED_AFTER && c.not_recovered * 2 >= c.reacted;
        if slow_median || stuck { c.reacted } else { 0 }
    };
    r.flow_rule(
        About {
            kind: kinds::DCQCN_SLOW_RECOVERY,
            cause: "Senders slow down after CNPs but take long to get their rate back, or do not before the next CNPs: DCQCN's rate-increase parameters are too conservative for the link (rate-increase timer, byte counter, rai / rhai), the classic cause of high tail latency.",
            action: "Tune the reaction point's rate increase (mlx5: rpg_time_reset, rpg_byte_reset, rpg_ai_rate, rpg_hai_rate) and compare the recovery times after.",
        },
        slow,
        |f| f.congestion.first_cnp_burst_frame,
        move |reacted, flows, names| {
            format!(
                "{} recovered slowly after {reacted} reactions to CNPs (median recovery above {recovery_us} µs, or half not recovered before the next CNPs): {names}",
                plural(flows, "flow")
            )
        },
    );
}

/// HIGH_TAIL_LATENCY: the p99 completion time of messages of at most 64 KiB.
pub(super) fn tail_latency(r: &mut Rules<'_, RoceReport>) {
    let report = r.report;
    let limit_us = report.config.fct_p99_ns as f64 / 1_000.0;
    let small = &report.congestion.completion.small;
    let Some(p99) = small.p99_us.filter(|p| *p > limit_us) else { return };
    let mut worst: Vec<&FlowReport> = report.flows.iter().filter(|f| f.congestion.fct_us_p99.is_some()).collect();
    worst.sort_by(|a, b| b.congestion.fct_us_p99.unwrap_or(0.0).total_cmp(&a.congestion.fct_us_p99.unwrap_or(0.0)));
    worst.truncate(EVIDENCE_KEPT);
    let e = Evidence {
        count: small.messages,
        flows: worst.iter().map(|f| f.id).collect(),
        frames: worst.iter().map(|f| f.first_frame).collect(),
        ..Evidence::default()
    };
    let flows = worst.len();
    let message = format!(
        "p99 completion time of messages of at most 64 KiB is {p99:.1} µs over {} messages (above {limit_us} µs); worst flows: {}",
        small.messages,
        names(report, &e, flows)
    );
    r.add(
        About {
            kind: kinds::HIGH_TAIL_LATENCY,
            cause: "Small messages wait long for their ACKs: queues build up in the fabric (congestion control reacting late or recovering slowly, incast, pauses) or packets are lost and resent.",
            action: "Look at the flows named for CNP bursts, retransmissions and pauses; check DCQCN's tuning and the ECN marking thresholds of the switches.",
        },
        message,
        e,
    );
}

/// Receivers and senders an INCAST message names before "and N more".
const NAMED: usize = 8;

/// INCAST: one finding for every receiver with incast periods, the receivers listed (those
/// with the largest fan-in first), the largest period described.
pub(super) fn incast(r: &mut Rules<'_, RoceReport>) {
    let incast = &r.report.congestion.incast;
    let periods = &incast.periods;
    // each receiver with its largest period, in the order of their first periods
    let mut receivers: Vec<(Endpoint, usize, &IncastPeriod)> = Vec::new();
    for p in periods {
        match receivers.iter_mut().find(|(receiver, _, _)| *receiver == p.receiver) {
            Some((_, count, peak)) => {
                *count += 1;
                if p.peak_fan_in > peak.peak_fan_in {
                    *peak = p;
                }
            }
            None => receivers.push((p.receiver, 1, p)),
        }
    }
    receivers.sort_by_key(|(_, _, peak)| std::cmp::Reverse(peak.peak_fan_in));
    let Some(&(receiver, count, peak)) = receivers.first() else {
        return;
    };
    let (ce, cnps, pauses) = periods.iter().fold((0, 0, 0), |(c, n, p), x| (c + x.ce_marks, n + x.cnps, p + x.pauses));
    let first_ns = r.report.capture.first_ts_ns.unwrap_or(0);
    let largest = format!(
        "{:.3} ms into the capture for {:.1} µs",
        (peak.start_ns - first_ns) as f64 / 1e6,
        (peak.end_ns - peak.start_ns) as f64 / 1_000.0
    );
    let senders = named(peak.senders.iter().map(ToString::to_string), peak.senders.len());
    let during = format!(
        "during them {}, {}, {}",
        plural(ce as usize, "CE mark"),
        plural(cnps as usize, "CNP"),
        plural(pauses as usize, "pause")
    );
    let message = if receivers.len() == 1 {
        format!(
            "{} senders converged on {receiver} ({}, the largest {largest}): {senders}; {during}",
            peak.peak_fan_in,
            plural(count, "incast period"),
        )
    } else {
        let each = receivers.iter().map(|(receiver, _, peak)| format!("{receiver} ({} senders)", peak.peak_fan_in));
        format!(
            "Incast at {} receivers ({}): {}; the largest, {} senders on {receiver} {largest}: {senders}; {during}",
            receivers.len(),
            plural(periods.len(), "incast period"),
            named(each, receivers.len()),
            peak.peak_fan_in,
        )
    };
    // each receiver's largest period first, then the others in order, each once
    let mut frames: Vec<_> = receivers.iter().map(|(_, _, peak)| peak.first_frame).take(EVIDENCE_KEPT).collect();
    for p in periods {
        if frames.len() >= EVIDENCE_KEPT {
            break;
        }
        if !frames.contains(&p.first_frame) {
            frames.push(p.first_frame);
        }
    }
    frames.sort();
    let e = Evidence { count: periods.len() as u64, frames, ..Evidence::default() };
    let severity = if ce + cnps + pauses > 0 { Severity::Warning } else { Severity::Info };
    let about = About {
        kind: Kind { severity, ..kinds::INCAST },
        cause: "Many senders send to one receiver at once (a collective's all-to-one step, a parameter server, storage reads): the receiver's switch port queues, marks CE and pauses, and every sender slows down.",
        action: "Spread the senders in time or over receivers (the collective's algorithm, its chunk size), and check that ECN marking starts before the port's PFC threshold.",
    };
    r.add(about, message, e);
}

/// The first [`NAMED`] of `items` (`total` of them), then "and N more".
fn named(items: impl Iterator<Item = String>, total: usize) -> String {
    let listed: Vec<String> = items.take(NAMED).collect();
    let more = total.saturating_sub(NAMED);
    if more > 0 { format!("{} and {more} more", listed.join(", ")) } else { listed.join(", ") }
}
