//! `analyze --out DIR`: the report as files — `report.json`, and the flows, retransmit
//! episodes, findings, pause, CNP burst and incast tables as CSV and Parquet (polars); with `--packets` also a
//! per-packet table ([`super::packet_table`]). Every file is written under a
//! temporary name; the files get their names together once all of them are complete, so a
//! failed run (a full disk, say) leaves neither a half-written file nor a partial set.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::atomic::{AtomicFile, Written};

use polars::prelude::*;

use crate::analyze::congestion::incast::IncastPeriod;
use crate::analyze::counts::FlowCounters;
use crate::analyze::flow::episodes::Episode;
use crate::analyze::report::congestion::BurstReport;
use crate::analyze::report::counters::{CounterRow, HostCounters};
use crate::analyze::report::finding::Finding;
use crate::analyze::report::path::{Direction, HopReport};
use crate::analyze::report::uet::PdcReport;
use crate::analyze::report::{FlowReport, PauseReport, Report};

pub(crate) fn polars_error(e: PolarsError) -> io::Error {
    io::Error::other(e.to_string())
}

/// Writes `df` as NAME.csv and NAME.parquet in `dir`, adding both to `written`.
fn write_table(dir: &Path, name: &str, df: &mut DataFrame, written: &mut Written) -> io::Result<()> {
    for (ext, parquet) in [("csv", false), ("parquet", true)] {
        let (atomic, file) = AtomicFile::create(dir, &format!("{name}.{ext}"))?;
        let mut out = BufWriter::new(file);
        if parquet { ParquetWriter::new(&mut out).finish(df).map(|_| ()) } else { CsvWriter::new(&mut out).finish(df) }
            .map_err(polars_error)?;
        out.flush()?;
        written.0.push(atomic);
    }
    Ok(())
}

/// A column built from one field of every row.
fn col<R, T>(name: &str, rows: &[R], field: impl Fn(&R) -> T) -> Column
where
    Series: NamedFrom<Vec<T>, [T]>,
{
    Column::new(name.into(), rows.iter().map(field).collect::<Vec<T>>())
}

fn frame(columns: Vec<Column>) -> io::Result<DataFrame> {
    DataFrame::new_infer_height(columns).map_err(polars_error)
}

fn join<T: ToString>(values: &[T]) -> String {
    values.iter().map(ToString::to_string).collect::<Vec<_>>().join(";")
}

/// Writes report.json and the tables.
pub fn write_report(dir: &Path, report: &Report) -> io::Result<Written> {
    let mut written = Written::default();
    let (atomic, file) = AtomicFile::create(dir, "report.json")?;
    let mut out = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, report)?;
    out.write_all(b"\n")?;
    out.flush()?;
    written.0.push(atomic);
    for (name, mut df) in report_tables(report)? {
        write_table(dir, name, &mut df, &mut written)?;
    }
    Ok(written)
}

/// The report's tables by name: flows, retransmit episodes, findings, pauses (PFC and PAUSE),
/// CNP bursts and incast periods, and with `--tap` the path's hops.
pub fn report_tables(report: &Report) -> io::Result<Vec<(&'static str, DataFrame)>> {
    let pauses: Vec<_> =
        report.pfc.iter().map(|p| ("pfc", p)).chain(report.pause.iter().map(|p| ("pause", p))).collect();
    let congestion = &report.congestion;
    let mut tables = vec![
        ("flows", frame(flow_columns(&report.flows))?),
        ("retransmit_episodes", frame(episode_columns(&report.retransmit_episodes))?),
        ("findings", frame(finding_columns(&report.findings))?),
        ("pfc", frame(pause_columns(&pauses))?),
        ("cnp_bursts", frame(burst_columns(&congestion.cnp_bursts))?),
        ("incast", frame(incast_columns(&congestion.incast.periods))?),
    ];
    if let Some(path) = &report.path {
        tables.push(("hops", frame(hop_columns(&path.hops))?));
    }
    if !report.counters.is_empty() {
        let rows: Vec<(&HostCounters, &CounterRow)> =
            report.counters.iter().flat_map(|h| h.rows.iter().map(move |r| (h, r))).collect();
        tables.push(("counters", frame(counter_columns(&rows))?));
    }
    if let Some(uet) = &report.uet {
        tables.push(("uet_pdcs", frame(pdc_columns(&uet.pdcs))?));
    }
    Ok(tables)
}

/// The UET PDCs table: one row per PDC (and per RUDI or UUD host pair), as `uet.pdcs[]`, the
/// NACKs `;`-separated ("TRIMMED=2").
fn pdc_columns(p: &[PdcReport]) -> Vec<Column> {
    let id = |v: Option<u16>| v.map(u32::from);
    let nacks = |p: &PdcReport| p.nacks.iter().map(|(code, n)| format!("{code}={n}")).collect::<Vec<_>>().join(";");
    vec![
        col("initiator", p, |p| p.initiator.to_string()),
        col("target", p, |p| p.target.to_string()),
        col("spdcid", p, |p| id(p.spdcid)),
        col("dpdcid", p, |p| id(p.dpdcid)),
        col("mode", p, |p| p.mode.map(str::to_string)),
        col("cc", p, |p| p.cc),
        col("syn_seen", p, |p| p.syn_seen),
        col("closed", p, |p| p.closed),
        col("start_psn", p, |p| p.start_psn),
        col("requests", p, |p| p.requests),
        col("acks", p, |p| p.acks),
        col("psn_first", p, |p| p.psn_first),
        col("psn_last", p, |p| p.psn_last),
        col("out_of_order", p, |p| p.out_of_order),
        col("retransmitted", p, |p| p.retransmitted),
        col("lost_before_tap", p, |p| p.lost_before_tap),
        col("capture_missed", p, |p| p.capture_missed),
        col("missing", p, |p| p.missing),
        col("nacks", p, nacks),
        col("trimmed", p, |p| p.trimmed),
        col("ecn_ce", p, |p| p.ecn_ce),
        col("ecn_echoed", p, |p| p.ecn_echoed),
        col("ecn_marks_not_echoed", p, |p| p.ecn_marks_not_echoed),
        col("ecn_echoes_without_mark", p, |p| p.ecn_echoes_without_mark),
        col("ack_psns_p50", p, |p| p.ack_psns_p50),
        col("ack_psns_max", p, |p| p.ack_psns_max),
        col("unanswered", p, |p| p.unanswered),
        col("first_frame", p, |p| p.first_frame),
        col("last_frame", p, |p| p.last_frame),
    ]
}

/// The counters table (`analyze --counters`): one row per host and counter, as
/// `counters[].rows[]` with the host (or switch) and its source.
fn counter_columns(rows: &[(&HostCounters, &CounterRow)]) -> Vec<Column> {
    let name = |v: serde_json::Result<serde_json::Value>| v.ok().and_then(|v| v.as_str().map(str::to_owned));
    let verdict = |r: &CounterRow| name(serde_json::to_value(r.verdict));
    vec![
        col("host", rows, |(h, _)| h.host.clone()),
        col("source", rows, |(h, _)| name(serde_json::to_value(h.source)).unwrap_or_default()),
        col("counter", rows, |(_, r)| r.counter.clone()),
        col("before", rows, |(_, r)| r.before),
        col("after", rows, |(_, r)| r.after),
        col("delta", rows, |(_, r)| r.delta),
        col("capture", rows, |(_, r)| r.capture),
        col("verdict", rows, |(_, r)| verdict(r).unwrap_or_default()),
        col("difference", rows, |(_, r)| r.difference),
    ]
}

/// The hops table (`analyze --tap`): one row per hop and direction, as `path.hops[]`, the
/// re-markings `;`-separated ("26->0=504").
fn hop_columns(h: &[HopReport]) -> Vec<Column> {
    let changes = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter().map(|(c, n)| format!("{c}={n}")).collect::<Vec<_>>().join(";")
    };
    vec![
        col("from", h, |h| h.from.clone()),
        col("to", h, |h| h.to.clone()),
        col("direction", h, |h| if h.direction == Direction::Forward { "forward" } else { "reverse" }.to_string()),
        col("matched", h, |h| h.matched),
        col("lost", h, |h| h.lost),
        col("ce_added", h, |h| h.ce_added),
        col("dscp_rewritten", h, |h| changes(&h.dscp_rewritten)),
        col("pcp_rewritten", h, |h| changes(&h.pcp_rewritten)),
        col("ttl_decrement", h, |h| h.ttl_decrement.map(u32::from)),
        col("reordered", h, |h| h.reordered),
        col("delay_uncertainty_ns", h, |h| h.delay_uncertainty_ns),
        col("delay_p50_ns", h, |h| h.delay_p50_ns),
        col("delay_p99_ns", h, |h| h.delay_p99_ns),
        col("delay_max_ns", h, |h| h.delay_max_ns),
    ]
}

/// The flows table: the flow's identity, its counters (as declared in [`FlowCounters`]), then
/// its sequence, peer, latency and policy columns.
fn flow_columns(f: &[FlowReport]) -> Vec<Column> {
    let mut columns = vec![
        col("id", f, |f| f.id),
        col("src_ip", f, |f| f.src_ip.to_string()),
        col("dst_ip", f, |f| f.dst_ip.to_string()),
        col("dst_qp", f, |f| f.dst_qp),
        col("src_qp", f, |f| f.src_qp),
        col("version", f, |f| u32::from(f.version)),
        col("transport", f, |f| f.transport.to_string()),
        col("first_frame", f, |f| f.first_frame),
        col("last_frame", f, |f| f.last_frame),
        col("first_ts_ns", f, |f| f.first_ts_ns),
        col("last_ts_ns", f, |f| f.last_ts_ns),
    ];
    for (i, name) in FlowCounters::NAMES.iter().enumerate() {
        columns.push(col(name, f, |f| f.counts.values().nth(i).unwrap_or(0)));
    }
    columns.extend([
        col("throughput_bps", f, |f| f.throughput_bps),
        col("sequenced", f, |f| f.sequence.sequenced),
        col("first_psn", f, |f| f.sequence.first_psn),
        col("highest_psn", f, |f| f.sequence.highest_psn),
        col("gaps", f, |f| f.sequence.gaps),
        col("missing_psns", f, |f| f.sequence.missing_psns),
        col("capture_missed", f, |f| f.sequence.capture_missed),
        col("retransmitted", f, |f| f.sequence.retransmitted),
        col("retransmit_episodes", f, |f| f.sequence.retransmit_episodes),
        col("late_arrivals", f, |f| f.sequence.late_arrivals),
        col("reorder_events", f, |f| f.sequence.reorder_events),
        col("reorder_depth_max", f, |f| f.sequence.reorder_depth_max),
        col("reorder_delay_us_max", f, |f| f.sequence.reorder_delay_us_max),
        col("reorder_naks", f, |f| f.sequence.reorder_naks),
        col("response_gaps", f, |f| f.responses.gaps),
        col("response_missing_psns", f, |f| f.responses.missing_psns),
        col("response_retransmitted", f, |f| f.responses.retransmitted),
        col("previous_flow", f, |f| f.previous_flow),
        col("ecn_not_ect", f, |f| f.ecn.not_ect),
        col("ecn_ect0", f, |f| f.ecn.ect0),
        col("ecn_ect1", f, |f| f.ecn.ect1),
        col("ecn_outer_ce", f, |f| f.ecn.outer_ce),
        col("ce", f, |f| f.ce),
        col("cnps_from_peer", f, |f| f.from_peer.map(|p| p.cnps)),
        col("naks_from_peer", f, |f| f.from_peer.map(|p| p.naks_psn_seq_err + p.naks_other)),
        col("pmtu", f, |f| f.pmtu),
        col("peer", f, |f| f.peer),
        col("pairing", f, |f| f.pairing.map(str::to_string)),
        col("pairing_candidates", f, |f| f.pairing_candidates as u64),
        col("ack_latency_p50_ns", f, |f| f.ack_latency_ns.p50),
        col("ack_latency_p99_ns", f, |f| f.ack_latency_ns.p99),
        col("ack_latency_max_ns", f, |f| f.ack_latency_ns.max),
        col("ce_to_cnp_p50_ns", f, |f| f.ce_to_cnp_ns.p50),
        col("cnp_spacing_min_ns", f, |f| f.cnp_spacing_ns.min),
        col("cnp_spacing_p50_ns", f, |f| f.cnp_spacing_ns.p50),
        col("data_dscp_violations", f, |f| f.policy.data_dscp.count),
        col("cnp_dscp_violations", f, |f| f.policy.cnp_dscp.count),
        col("not_ect_data", f, |f| f.policy.not_ect_data.count),
        col("data_pcp_violations", f, |f| f.policy.data_pcp.count),
        col("cnp_pcp_violations", f, |f| f.policy.cnp_pcp.count),
        col("cm_dscp_violations", f, |f| f.policy.cm_dscp.count),
        col("cnp_bursts", f, |f| f.congestion.cnp_bursts),
        col("reactions_measured", f, |f| f.congestion.reactions_measured),
        col("reaction_ratio_p50", f, |f| f.congestion.reaction_ratio_p50),
        col("reacted", f, |f| f.congestion.reacted),
        col("recovered", f, |f| f.congestion.recovered),
        col("not_recovered", f, |f| f.congestion.not_recovered),
        col("recovery_us_p50", f, |f| f.congestion.recovery_us_p50),
        col("recovery_us_max", f, |f| f.congestion.recovery_us_max),
        col("messages_completed", f, |f| f.congestion.messages_completed),
        col("messages_incomplete", f, |f| f.congestion.messages_incomplete),
        col("fct_us_p50", f, |f| f.congestion.fct_us_p50),
        col("fct_us_p99", f, |f| f.congestion.fct_us_p99),
        col("fct_us_max", f, |f| f.congestion.fct_us_max),
    ]);
    columns
}

fn burst_columns(b: &[BurstReport]) -> Vec<Column> {
    vec![
        col("flow", b, |b| b.flow),
        col("first_frame", b, |b| b.first_frame),
        col("start_ns", b, |b| b.start_ns),
        col("end_ns", b, |b| b.end_ns),
        col("cnps", b, |b| b.cnps),
        col("rate_before_bps", b, |b| b.rate_before_bps),
        col("rate_after_bps", b, |b| b.rate_after_bps),
        col("reaction_ratio", b, |b| b.reaction_ratio),
        col("outcome", b, |b| b.outcome.name().to_string()),
        col("recovered_ns", b, |b| b.recovered_ns),
        col("recovery_us", b, |b| b.recovery_us),
    ]
}

fn incast_columns(p: &[IncastPeriod]) -> Vec<Column> {
    vec![
        col("receiver", p, |p| p.receiver.to_string()),
        col("first_frame", p, |p| p.first_frame),
        col("start_ns", p, |p| p.start_ns),
        col("end_ns", p, |p| p.end_ns),
        col("peak_fan_in", p, |p| p.peak_fan_in as u64),
        col("senders", p, |p| join(&p.senders)),
        col("ce_marks", p, |p| p.ce_marks),
        col("cnps", p, |p| p.cnps),
        col("pauses", p, |p| p.pauses),
    ]
}

fn episode_columns(e: &[Episode]) -> Vec<Column> {
    vec![
        col("flow", e, |e| e.flow),
        col("space", e, |e| e.space.name().to_string()),
        col("start_frame", e, |e| e.start_frame),
        col("end_frame", e, |e| e.end_frame),
        col("start_ts_ns", e, |e| e.start_ts_ns),
        col("end_ts_ns", e, |e| e.end_ts_ns),
        col("first_psn", e, |e| e.first_psn),
        col("last_psn", e, |e| e.last_psn),
        col("packets", e, |e| e.packets),
        col("highest_sent_psn", e, |e| e.highest_sent_psn),
        col("trigger", e, |e| e.trigger.name().to_string()),
        col("trigger_frame", e, |e| e.trigger_frame),
        col("nak_to_resend_ns", e, |e| e.nak_to_resend_ns),
        col("rnr_delay_us", e, |e| e.rnr_delay_us),
        col("idle_before_ns", e, |e| e.idle_before_ns),
        col("gap_to_recovery_ns", e, |e| e.gap_to_recovery_ns),
        col("pattern", e, |e| e.pattern.name().to_string()),
        col("decided_by", e, |e| e.decided_by.name().to_string()),
    ]
}

fn finding_columns(fi: &[Finding]) -> Vec<Column> {
    vec![
        col("severity", fi, |f| f.severity.name().to_string()),
        col("code", fi, |f| f.code.to_string()),
        col("message", fi, |f| f.message.clone()),
        col("count", fi, |f| f.evidence.count),
        col("flows", fi, |f| join(&f.evidence.flows)),
        col("frames", fi, |f| join(&f.evidence.frames)),
        col("cause", fi, |f| f.cause.to_string()),
        col("action", fi, |f| f.action.to_string()),
    ]
}

fn pause_columns(pauses: &[(&str, &PauseReport)]) -> Vec<Column> {
    vec![
        col("kind", pauses, |(k, _)| k.to_string()),
        col("src_mac", pauses, |(_, p)| p.src_mac.clone()),
        col("priority", pauses, |(_, p)| p.priority.map(u32::from)),
        col("xoff", pauses, |(_, p)| p.stats.xoff),
        col("xon", pauses, |(_, p)| p.stats.xon),
        col("paused_ns", pauses, |(_, p)| p.stats.paused_ns),
        col("longest_pause_ns", pauses, |(_, p)| p.stats.longest_pause_ns),
        col("storm", pauses, |(_, p)| p.stats.storm),
        col("storm_periods", pauses, |(_, p)| p.stats.storm_periods),
        col("first_frame", pauses, |(_, p)| p.stats.first_frame),
        col("first_storm_frame", pauses, |(_, p)| p.stats.first_storm_frame),
    ]
}
