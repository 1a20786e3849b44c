//! The findings of a path traced over several taps (`analyze --tap`): each names its hop or
//! its tap in its evidence.

use crate::analyze::finding::{EVIDENCE_KEPT, Evidence, kinds};
use crate::analyze::path::report::{HopReport, PathReport};
use crate::analyze::rules::{About, Rules, plural};

/// The path's rules: packets lost on a hop, CE marks added, DSCP and PCP re-marked, delays.
pub(crate) fn path(r: &mut Rules<'_, Option<PathReport>>) {
    let Some(path) = r.report else { return };
    for hop in &path.hops {
        loss_on_hop(r, path, hop);
        marks_on_hop(r, hop);
        rewrites_on_hop(r, hop);
    }
    latency(r, path);
    taps(r, path);
}

/// "leaf->spine forward".
fn hop_name(hop: &HopReport) -> String {
    let direction = serde_json::to_value(hop.direction).ok().and_then(|v| v.as_str().map(str::to_owned));
    format!("{}->{} {}", hop.from, hop.to, direction.unwrap_or_default())
}

fn on_hop(hop: &HopReport, count: u64) -> Evidence {
    Evidence { count, hop: Some(hop_name(hop)), ..Evidence::default() }
}

fn loss_on_hop(r: &mut Rules<'_, Option<PathReport>>, path: &PathReport, hop: &HopReport) {
    if hop.lost == 0 {
        return;
    }
    let lost_on = format!("{}->{}", hop.from, hop.to);
    let mut evidence = on_hop(hop, hop.lost);
    // a hop's two directions have their taps in opposite orders: "from->to" is one direction
    let losses = path.losses.iter().filter(|l| l.lost_on == lost_on);
    for flow in losses.filter_map(|l| l.flow) {
        if !evidence.flows.contains(&flow) && evidence.flows.len() < EVIDENCE_KEPT {
            evidence.flows.push(flow);
        }
    }
    let share = 100.0 * hop.lost as f64 / (hop.matched + hop.lost).max(1) as f64;
    r.add(
        About {
            kind: kinds::LOSS_ON_HOP,
            cause: "The packets left the first tap and never reached the second: the switch or link between them dropped them (a full buffer on a lossy priority, PFC not enabled on the RoCE priority, a bad link or optic).",
            action: "Read the drop counters of that hop's egress port and queue (show queue counters, show pfc counters) and the link's error counters; check that PFC is enabled on the RoCE priority end to end.",
        },
        format!("{} lost between {} and {} ({share:.2} % of what left {})", plural(hop.lost as usize, "packet"), hop.from, hop.to, hop.from),
        evidence,
    );
}

fn marks_on_hop(r: &mut Rules<'_, Option<PathReport>>, hop: &HopReport) {
    if hop.ce_added == 0 {
        return;
    }
    r.add(
        About {
            kind: kinds::ECN_MARKED_ON_HOP,
            cause: "A queue on this hop was above its ECN marking threshold: this is where the congestion is.",
            action: "Look at the egress queue of this hop for the RoCE priority (its occupancy and WRED/ECN thresholds), and at what else shares the port.",
        },
        format!("{} marked CE between {} and {}", plural(hop.ce_added as usize, "packet"), hop.from, hop.to),
        on_hop(hop, hop.ce_added),
    );
}

fn rewrites_on_hop(r: &mut Rules<'_, Option<PathReport>>, hop: &HopReport) {
    let changes: Vec<String> = hop
        .dscp_rewritten
        .iter()
        .map(|(c, n)| format!("DSCP {c} ({n})"))
        .chain(hop.pcp_rewritten.iter().map(|(c, n)| format!("PCP {c} ({n})")))
        .collect();
    if changes.is_empty() {
        return;
    }
    let count = hop.dscp_rewritten.values().chain(hop.pcp_rewritten.values()).sum();
    r.add(
        About {
            kind: kinds::DSCP_REWRITTEN,
            cause: "A device between the two taps re-marks the packets: a port that does not trust DSCP (trust mode PCP or none), a QoS policy or a remarking table; the packets then leave on another priority and lose PFC protection and the ECN marking the fabric expects.",
            action: "Set the ports between the two taps to trust DSCP and check their remarking maps, so that RoCE keeps its DSCP and priority end to end.",
        },
        format!("marking rewritten between {} and {}: {}", hop.from, hop.to, changes.join(", ")),
        on_hop(hop, count),
    );
}

/// The hop whose p99 delay is the largest, when it is more than 4 × its own median.
fn latency(r: &mut Rules<'_, Option<PathReport>>, path: &PathReport) {
    let worst = path.hops.iter().filter_map(|h| Some((h, h.delay_p50_ns?, h.delay_p99_ns?))).max_by_key(|t| t.2);
    let Some((hop, p50, p99)) = worst.filter(|&(_, p50, p99)| p99 > 4 * p50.max(0)) else { return };
    r.add(
        About {
            kind: kinds::LATENCY_ON_HOP,
            cause: "Packets queue on this hop: its tail delay is many times its typical delay (a congested egress queue, PFC pauses holding the queue, or a slower link).",
            action: "Look at this hop's egress queue occupancy and PFC pause counters on the RoCE priority, and at the ECN marks and CNPs that should be slowing the senders.",
        },
        format!("delay between {} and {}: p99 {} µs, {:.1} × its median {} µs", hop.from, hop.to, p99 / 1000, p99 as f64 / p50.max(1) as f64, p50 / 1000),
        on_hop(hop, hop.matched),
    );
}

fn taps(r: &mut Rules<'_, Option<PathReport>>, path: &PathReport) {
    for tap in path.taps.iter().filter(|t| t.missed > 0) {
        r.add(
            About {
                kind: kinds::TAP_MISSED,
                cause: "The tap missed packets that the taps on both sides of it saw: the mirror session or the capture dropped copies (an oversubscribed mirror port, a policer on the session, a busy capture host), not the network.",
                action: "Do not read these as network loss; give the mirror session more bandwidth, capture fewer bytes per packet (a snap length) or capture on fewer ports.",
            },
            format!("tap {} missed {} both its neighbours saw", tap.name, plural(tap.missed as usize, "packet")),
            Evidence { count: tap.missed, tap: Some(tap.name.clone()), ..Evidence::default() },
        );
    }
    for (i, tap) in path.taps.iter().enumerate().skip(1) {
        let before = path.taps.get(i - 1).map(|t| t.name.as_str()).unwrap_or_default();
        let between = |h: &&HopReport| (h.from == tap.name && h.to == before) || (h.to == tap.name && h.from == before);
        let known = path.hops.iter().filter(between).filter_map(|h| Some((h.delay_uncertainty_ns?, h.delay_p50_ns?)));
        let Some((uncertainty, median)) = known.min_by_key(|&(_, median)| median) else { continue };
        if uncertainty as i64 <= median {
            continue;
        }
        r.add(
            About {
                kind: kinds::TAP_CLOCK_UNCERTAIN,
                cause: "The tap's clock cannot be aligned to its neighbour's better than the delays it would explain: the packets seen both ways are few, or the two directions' smallest delays differ (an asymmetric path or a busy tap), so one-way delays on this hop are not to be trusted.",
                action: "Synchronise the capture clocks (PTP on the hosts and switches), or give the offset with --tap-offset NAME=NS.",
            },
            format!("tap {}'s clock is aligned to {before}'s within ±{} µs, more than the hop's median delay of {} µs", tap.name, uncertainty / 1000, median / 1000),
            Evidence { count: 1, tap: Some(tap.name.clone()), hop: Some(format!("{before}->{}", tap.name)), ..Evidence::default() },
        );
    }
}
