//! The summary's flows table: the most troubled flows first, a row each (the browser's Flows
//! view draws the same rows).

use std::io::{self, Write};

use super::{TextKeys, us};
use crate::analyze::identity::owners::Owner;
use crate::analyze::report::Report;
use crate::analyze::roce::report::FlowReport;

/// The flows table's keys, and those of the reactions to CNP bursts.
pub const FLOW_KEYS: TextKeys = TextKeys {
    table: "flows",
    shown: &[
        "id",
        "dst_qp",
        "packets",
        "gaps",
        "missing_psns",
        "retransmitted",
        "late_arrivals",
        "naks_psn_seq_err",
        "naks_other",
        "rnr_naks",
        "cnps",
        "ce",
        "icrc_bad",
        "ack_latency_ns_p50",
        "cnp_bursts",
        "reactions_measured",
        "reaction_ratio_p50",
        "reacted",
        "recovered",
        "recovery_us_p50",
        "recovery_us_max",
        "owner_pid",
        "owner_comm",
        "owner_rank",
        "owner_nranks",
        "dst_owner_pid",
        "dst_owner_comm",
        "dst_owner_rank",
        "dst_owner_nranks",
    ],
    hidden: &[
        "owner_host",
        "owner_device",
        "owner_comm_id",
        "dst_owner_host",
        "dst_owner_device",
        "dst_owner_comm_id",
        "src_qp",
        "version",
        "first_frame",
        "last_frame",
        "first_ts_ns",
        "last_ts_ns",
        "duration_ns",
        "bytes",
        "payload_bytes",
        "icrc_unverifiable",
        "vcrc_bad",
        "mirror_duplicates",
        "acks",
        "atomic_acks",
        "fecn",
        "becn",
        "messages",
        "read_requests",
        "throughput_bps",
        "ecn_",
        "udp_sports_other_packets",
        "src_qps_other_packets",
        "first_icrc_bad_frame",
        "sequenced",
        "first_psn",
        "highest_psn",
        "capture_missed",
        "capture_only_gaps",
        "retransmit_episodes",
        "reorder_",
        "requests_",
        "responses_",
        "previous_flow",
        "cnp_spacing_ns_",
        "message_bytes_",
        "pmtu",
        "peer",
        "pairing_candidates",
        "from_peer_",
        "ack_latency_ns_",
        "ce_to_cnp_ns_",
        "policy_",
        "first_frames_",
        "first_cnp_burst_frame",
        "not_recovered",
        "messages_completed",
        "messages_incomplete",
        "fct_us_",
    ],
};

/// The most flows listed; the JSON report has them all.
const FLOWS_SHOWN: usize = 20;

/// The flows table's column titles (the summary's, and the browser's Flows view).
pub fn flow_header() -> String {
    let titles = ["id", "flow", "type", "packets", "gaps", "missing", "retx", "late", "NAK", "RNR", "CNP", "CE"];
    flow_columns(titles.map(String::from), ["ICRC!", "pair", "ACK p50 us"].map(String::from))
}

/// One flow's row of the flows table.
pub fn flow_row(f: &FlowReport) -> String {
    let counts = [
        f.id.to_string(),
        f.label(),
        f.transport.to_string(),
        f.counts.packets.to_string(),
        f.sequence.gaps.to_string(),
        f.sequence.missing_psns.to_string(),
        f.sequence.retransmitted.to_string(),
        f.sequence.late_arrivals.to_string(),
        (f.counts.naks_psn_seq_err + f.counts.naks_other).to_string(),
        f.counts.rnr_naks.to_string(),
        f.counts.cnps.to_string(),
        f.ce.to_string(),
    ];
    let rest = [f.counts.icrc_bad.to_string(), f.pairing.unwrap_or("-").to_string(), us(f.ack_latency_ns.p50)];
    flow_columns(counts, rest)
}

/// Who owns the QPs of `f`: `rank 0/8 python3[4321] → rank 1/8 python3[977]`, `-` where
/// nothing told.
fn owners(f: &FlowReport) -> String {
    let label = |o: &Option<Owner>| o.as_ref().map_or("-".to_string(), Owner::label);
    format!("{} → {}", label(&f.owner), label(&f.dst_owner))
}

fn flow_columns(counts: [String; 12], rest: [String; 3]) -> String {
    let [id, flow, kind, packets, gaps, missing, retx, late, nak, rnr, cnp, ce] = counts;
    let [icrc, pair, ack] = rest;
    format!(
        "{id:>4}  {flow:<44} {kind:>4} {packets:>8} {gaps:>5} {missing:>7} {retx:>6} {late:>5} {nak:>4} {rnr:>4} {cnp:>4} {ce:>5} {icrc:>5} {pair:>5} {ack:>10}"
    )
}

/// The flows, most troubled first; with the owners of their QPs where the hosts told them
/// (`--qps`, `--nccl-log`).
pub(super) fn write_flows(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let flows = r.roce.flows_by_trouble();
    let owned = r.roce.flows.iter().any(|f| f.owner.is_some() || f.dst_owner.is_some());
    if let Some(uet) = r.uet.as_ref().filter(|_| r.roce.flows.is_empty()) {
        // a UET capture: its PDCs are its flows, listed with its UET line
        let pdcs = uet.pdcs.iter().filter(|p| p.is_pdc()).count();
        let streams = match uet.pdcs.len() - pdcs {
            0 => String::new(),
            n => format!(", RUDI/UUD streams ({n})"),
        };
        return writeln!(out, "Flows: no RoCE flow; UET PDCs ({pdcs}){streams}: listed under UET above");
    }
    writeln!(out, "Flows ({}, most troubled first)", r.roce.flows.len())?;
    writeln!(out, "  {}{}", flow_header(), if owned { "  owner → dst owner" } else { "" })?;
    for f in flows.iter().take(FLOWS_SHOWN) {
        writeln!(out, "  {}{}", flow_row(f), if owned { format!("  {}", owners(f)) } else { String::new() })?;
    }
    if flows.len() > FLOWS_SHOWN {
        writeln!(out, "  … {} more flows (see --json)", flows.len() - FLOWS_SHOWN)?;
    }
    Ok(())
}
