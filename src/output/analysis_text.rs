//! The terminal summary of an analysis: capture, ICRC, flows sorted by trouble, PFC,
//! congestion control, findings.

use std::io::{self, Write};

use crate::analyze::report::finding::Severity;
use crate::analyze::report::uet::UetReport;
use crate::analyze::report::{FlowReport, Report};
use anstyle::{AnsiColor, Style};

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".to_string(), |v| format!("{:.1}", v as f64 / 1e3))
}

/// The most flows listed; the JSON report has them all.
const FLOWS_SHOWN: usize = 20;

/// Which numeric keys of a report table the summary shows, and which it leaves to the JSON
/// report and the `--out` tables: each of the table's numeric columns is one or the other
/// (a name ending in `_` stands for every key it begins, but for those `shown`).
pub struct TextKeys {
    pub table: &'static str,
    pub shown: &'static [&'static str],
    pub hidden: &'static [&'static str],
}

impl TextKeys {
    /// Does the summary show `column`, or leave it to the tables? `None`: it has not said.
    pub fn shows(&self, column: &str) -> Option<bool> {
        if self.shown.contains(&column) {
            return Some(true);
        }
        let hidden = |h: &&str| *h == column || (h.ends_with('_') && column.starts_with(*h));
        self.hidden.iter().any(hidden).then_some(false)
    }
}

/// The summary's choice for every report table.
pub const TEXT_KEYS: [TextKeys; 9] = [
    FLOW_KEYS,
    TextKeys {
        table: "retransmit_episodes",
        shown: &[],
        hidden: &[
            "flow",
            "start_",
            "end_",
            "first_psn",
            "last_psn",
            "packets",
            "highest_sent_psn",
            "trigger_frame",
            "nak_to_resend_ns",
            "rnr_delay_us",
            "idle_before_ns",
            "gap_to_recovery_ns",
        ],
    },
    TextKeys { table: "findings", shown: &[], hidden: &["evidence_count"] },
    TextKeys {
        table: "pfc",
        shown: &["priority", "xoff", "xon", "paused_ns", "longest_pause_ns"],
        hidden: &["storm_periods", "first_frame", "first_ts_ns", "first_storm_frame"],
    },
    super::congestion_text::BURST_KEYS,
    super::congestion_text::INCAST_KEYS,
    super::path_text::HOP_KEYS,
    super::counters_text::COUNTER_KEYS,
    PDC_KEYS,
];

/// The flows table's keys, and those of the reactions to CNP bursts.
const FLOW_KEYS: TextKeys = TextKeys {
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
    ],
    hidden: &[
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

/// The PDC lines' keys.
const PDC_KEYS: TextKeys = TextKeys {
    table: "uet_pdcs",
    shown: &[
        "spdcid",
        "dpdcid",
        "requests",
        "acks",
        "out_of_order",
        "retransmitted",
        "missing",
        "capture_missed",
        "unanswered",
        "ecn_marks_not_echoed",
        "ecn_echoes_without_mark",
    ],
    hidden: &[
        "start_psn",
        "psn_first",
        "psn_last",
        "lost_before_tap",
        "untracked",
        "trimmed",
        "ecn_ce",
        "ecn_echoed",
        "ecn_acks_checked",
        "ecn_acks_unchecked",
        "ack_psns_p50",
        "ack_psns_max",
        "first_frame",
        "last_frame",
    ],
};

/// The style of a severity's label when colour is on: errors red, warnings yellow, info blue.
fn severity_style(severity: Severity, colour: bool) -> Style {
    if !colour {
        return Style::new();
    }
    let fg = match severity {
        Severity::Error => AnsiColor::Red,
        Severity::Warning => AnsiColor::Yellow,
        Severity::Info => AnsiColor::Blue,
    };
    Style::new().fg_color(Some(fg.into())).bold()
}

/// Writes the summary; `colour` styles the findings' severities with ANSI escapes.
pub fn write_summary(out: &mut impl Write, r: &Report, colour: bool) -> io::Result<()> {
    write_capture(out, r)?;
    write_flows(out, r)?;
    write_pauses(out, r)?;
    super::congestion_text::write_congestion_control(out, r)?;
    if let Some(path) = &r.path {
        super::path_text::write_path(out, path)?;
    }
    super::counters_text::write_counters(out, &r.counters)?;
    writeln!(out)?;
    write_findings(out, r, colour)
}

/// The capture: files, frames by kind, ICRC and ECN totals, encapsulations.
fn write_capture(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let t = &r.totals;
    let files: Vec<&str> = r.inputs.iter().map(|i| i.file.as_str()).collect();
    writeln!(out, "Capture: {}", files.join(", "))?;
    writeln!(out, "  duration {} ms, {} frames, {} bytes", ms(r.capture.duration_ns as u64), t.frames, t.bytes)?;
    writeln!(
        out,
        "  RoCE {} (v2 {}, v1 {}{}), other {} (PFC {}, PAUSE {}), malformed {}{}, mirror duplicates {}",
        t.roce_packets,
        t.roce_v2,
        t.roce_v1,
        if t.infiniband > 0 { format!(", native InfiniBand {}", t.infiniband) } else { String::new() },
        t.non_roce,
        t.pfc_frames,
        t.pause_frames,
        t.malformed,
        if t.headers_cut > 0 { format!(", cut inside their headers {}", t.headers_cut) } else { String::new() },
        t.mirror_duplicates
    )?;
    writeln!(out, "  ICRC: {} ok, {} bad, {} unverifiable", r.icrc.ok, r.icrc.bad, r.icrc.unverifiable)?;
    if let Some(uet) = &r.uet {
        let c = &uet.crc;
        let reading = c.variant.map_or_else(|| "no reading matched".to_string(), |v| format!("reading {v}"));
        let copies = match uet.mirror_duplicates {
            0 => String::new(),
            n => format!(" ({n} mirror duplicates)"),
        };
        writeln!(
            out,
            "  UET: {} packets{copies}; CRC32C: {} ok, {} bad, {} unchecked ({reading})",
            uet.packets, c.ok, c.bad, c.unchecked
        )?;
        write_pdcs(out, uet)?;
    }
    if t.infiniband + t.infiniband_link > 0 {
        let ib = &r.infiniband;
        writeln!(
            out,
            "  InfiniBand: {} packets, {} link packets; VCRC {} ok, {} bad, {} unverifiable; FECN {}, BECN {}; ERF records lost {}",
            t.infiniband,
            t.infiniband_link,
            ib.vcrc_ok,
            ib.vcrc_bad,
            ib.vcrc_unverifiable,
            ib.fecn,
            ib.becn,
            ib.erf_records_lost
        )?;
    }
    writeln!(
        out,
        "  ECN: {} Not-ECT, {} ECT(0), {} ECT(1), {} CE{}; CNPs {}",
        r.ecn.not_ect,
        r.ecn.ect0,
        r.ecn.ect1,
        r.ecn.ce,
        if r.ecn.outer_ce > 0 {
            format!(" (and {} CE in a VXLAN overlay's outer header only)", r.ecn.outer_ce)
        } else {
            String::new()
        },
        r.cnps
    )?;
    if !r.capture.encapsulations.is_empty() {
        let e: Vec<String> = r.capture.encapsulations.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(out, "  encapsulations: {}", e.join(", "))?;
    }
    if let Some(d) = r.capture.doubled_mirror.filter(|d| d.doubled) {
        writeln!(
            out,
            "  doubled mirror: {} of the first {} RoCE frames have a byte-identical copy; each packet counts once",
            d.with_identical_copy, d.frames
        )?;
    }
    if r.management.packets > 0 {
        writeln!(out, "  management (QP 0/1, not policy-checked data): {} packets", r.management.packets)?;
    }
    writeln!(out)?;
    Ok(())
}

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

fn flow_columns(counts: [String; 12], rest: [String; 3]) -> String {
    let [id, flow, kind, packets, gaps, missing, retx, late, nak, rnr, cnp, ce] = counts;
    let [icrc, pair, ack] = rest;
    format!(
        "{id:>4}  {flow:<44} {kind:>4} {packets:>8} {gaps:>5} {missing:>7} {retx:>6} {late:>5} {nak:>4} {rnr:>4} {cnp:>4} {ce:>5} {icrc:>5} {pair:>5} {ack:>10}"
    )
}

/// The flows, most troubled first.
fn write_flows(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let flows = r.flows_by_trouble();
    writeln!(out, "Flows ({}, most troubled first)", r.flows.len())?;
    writeln!(out, "  {}", flow_header())?;
    for f in flows.iter().take(FLOWS_SHOWN) {
        writeln!(out, "  {}", flow_row(f))?;
    }
    if flows.len() > FLOWS_SHOWN {
        writeln!(out, "  … {} more flows (see --json)", flows.len() - FLOWS_SHOWN)?;
    }
    Ok(())
}

/// PFC and PAUSE per source and priority, when the capture has any.
fn write_pauses(out: &mut impl Write, r: &Report) -> io::Result<()> {
    if !r.pfc.is_empty() || !r.pause.is_empty() {
        writeln!(out)?;
        writeln!(out, "Pause frames")?;
        writeln!(
            out,
            "  {:<17} {:>8} {:>6} {:>5} {:>12} {:>12} {:>5}",
            "source MAC", "priority", "XOFF", "XON", "paused ms", "longest ms", "storm"
        )?;
        for p in r.pfc.iter().chain(&r.pause) {
            writeln!(
                out,
                "  {:<17} {:>8} {:>6} {:>5} {:>12} {:>12} {:>5}",
                p.src_mac,
                p.priority.map_or_else(|| "all".to_string(), |v| v.to_string()),
                p.stats.xoff,
                p.stats.xon,
                ms(p.stats.paused_ns),
                ms(p.stats.longest_pause_ns),
                if p.stats.storm { "YES" } else { "no" }
            )?;
        }
    }
    Ok(())
}

fn write_findings(out: &mut impl Write, r: &Report, colour: bool) -> io::Result<()> {
    if r.findings.is_empty() {
        writeln!(out, "Findings: none")?;
    } else {
        writeln!(out, "Findings ({})", r.findings.len())?;
        for f in &r.findings {
            let style = severity_style(f.severity, colour);
            let label = format!("{:<7}", f.severity.name().to_uppercase());
            writeln!(out, "  {style}{label}{style:#} {:<20} {}", f.code, f.message)?;
            if !f.evidence.frames.is_empty() {
                let frames: Vec<String> = f.evidence.frames.iter().map(u64::to_string).collect();
                writeln!(out, "          frames: {}", frames.join(", "))?;
            }
            writeln!(out, "          cause:  {}", f.cause)?;
            writeln!(out, "          action: {}", f.action)?;
        }
    }
    Ok(())
}

/// PDCs the summary lists at most; the JSON report has every one.
const PDCS_SHOWN: usize = 10;

/// A line per UET PDC (and per host pair's RUDI or UUD packets): its ends and ids, mode, and
/// what its PSNs and NACKs came to.
fn write_pdcs(out: &mut impl Write, uet: &UetReport) -> io::Result<()> {
    let id = |id: Option<u16>| id.map_or_else(|| "?".to_string(), |id| id.to_string());
    for p in uet.pdcs.iter().take(PDCS_SHOWN) {
        let nacks: Vec<String> = p.nacks.iter().map(|(code, n)| format!("{code} {n}")).collect();
        let nacks = if nacks.is_empty() { String::new() } else { format!(", NACKs {}", nacks.join(", ")) };
        let mode = p.mode.unwrap_or("?");
        if !p.is_pdc() {
            let unanswered = p.unanswered.map_or_else(String::new, |n| format!(", {n} unanswered"));
            writeln!(out, "    {mode} {} → {}: {} requests{unanswered}{nacks}", p.initiator, p.target, p.requests)?;
            continue;
        }
        let ecn = match (p.ecn_marks_not_echoed, p.ecn_echoes_without_mark) {
            (0, 0) => String::new(),
            (marks, echoes) => format!(", ECN: {marks} marks not echoed, {echoes} echoes without a mark"),
        };
        writeln!(
            out,
            "    PDC {} → {} {}/{} {mode}: {} requests, {} ACKs, {} out of order, {} resent, {} missing, {} missed by the capture{nacks}{ecn}",
            p.initiator,
            p.target,
            id(p.spdcid),
            id(p.dpdcid),
            p.requests,
            p.acks,
            p.out_of_order,
            p.retransmitted,
            p.missing,
            p.capture_missed,
        )?;
    }
    if uet.pdcs.len() > PDCS_SHOWN {
        writeln!(out, "    … {} more PDCs (the JSON report has every one)", uet.pdcs.len() - PDCS_SHOWN)?;
    }
    Ok(())
}
