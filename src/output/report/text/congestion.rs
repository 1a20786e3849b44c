//! The congestion-control part of the terminal summary: the senders' reactions to CNP bursts
//! per flow, message completion times by size, and incast periods. Shown when the capture has
//! any of them.

use std::io::{self, Write};

use super::TextKeys;

use crate::analyze::report::Report;
use crate::analyze::roce::report::congestion::FctSummary;

/// The most flows and incast periods listed; the JSON report has them all.
const ROWS_SHOWN: usize = 10;

fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

/// The CNP bursts' keys: the summary shows them per flow (the flows' keys), not per burst.
pub const BURST_KEYS: TextKeys = TextKeys {
    table: "cnp_bursts",
    shown: &[],
    hidden: &[
        "flow",
        "first_frame",
        "start_ns",
        "end_ns",
        "cnps",
        "rate_before_bps",
        "rate_after_bps",
        "reaction_ratio",
        "recovered_ns",
        "recovery_us",
    ],
};

/// The incast periods' keys.
pub const INCAST_KEYS: TextKeys = TextKeys {
    table: "incast",
    shown: &["start_ns", "end_ns", "peak_fan_in", "ce_marks", "cnps", "pauses"],
    hidden: &["first_frame"],
};

pub fn write_congestion_control(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let c = &r.roce.congestion;
    if c.cnp_bursts.is_empty() && c.completion.all.messages == 0 && c.incast.periods.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "Congestion control")?;
    write_reactions(out, r)?;
    write_completion(out, r)?;
    write_incast(out, r)
}

fn write_reactions(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let flows: Vec<_> = r.roce.flows.iter().filter(|f| f.congestion.cnp_bursts > 0).collect();
    if flows.is_empty() {
        return Ok(());
    }
    writeln!(out, "  Reactions to CNP bursts")?;
    writeln!(
        out,
        "    {:<40} {:>6} {:>8} {:>9} {:>7} {:>9} {:>16} {:>16}",
        "data flow", "bursts", "measured", "ratio p50", "reacted", "recovered", "recovery p50 us", "recovery max us"
    )?;
    for f in flows.iter().take(ROWS_SHOWN) {
        let c = &f.congestion;
        writeln!(
            out,
            "    {:<40} {:>6} {:>8} {:>9} {:>7} {:>9} {:>16} {:>16}",
            f.label(),
            c.cnp_bursts,
            c.reactions_measured,
            c.reaction_ratio_p50.map_or_else(|| "-".to_string(), |v| format!("{v:.2}")),
            c.reacted,
            c.recovered,
            us(c.recovery_us_p50),
            us(c.recovery_us_max),
        )?;
    }
    if flows.len() > ROWS_SHOWN {
        writeln!(out, "    … {} more flows (see --json)", flows.len() - ROWS_SHOWN)?;
    }
    Ok(())
}

fn write_completion(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let completion = &r.roce.congestion.completion;
    if completion.all.messages == 0 {
        return Ok(());
    }
    writeln!(out, "  Message completion times (RC)")?;
    writeln!(out, "    {:<10} {:>9} {:>10} {:>10} {:>10}", "size", "messages", "p50 us", "p99 us", "max us")?;
    let row = |out: &mut dyn Write, label: &str, s: &FctSummary| {
        writeln!(
            out,
            "    {label:<10} {:>9} {:>10} {:>10} {:>10}",
            s.messages,
            us(s.p50_us),
            us(s.p99_us),
            us(s.max_us)
        )
    };
    for class in completion.by_size.iter().filter(|c| c.fct.messages > 0) {
        row(out, class.label, &class.fct)?;
    }
    row(out, "all", &completion.all)
}

fn write_incast(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let periods = &r.roce.congestion.incast.periods;
    if periods.is_empty() {
        return Ok(());
    }
    let first_ns = r.roce.capture.first_ts_ns.unwrap_or(0);
    writeln!(out, "  Incast periods (fan-in ≥ {})", r.roce.config.incast_senders)?;
    writeln!(
        out,
        "    {:<16} {:>10} {:>12} {:>7} {:>5} {:>5} {:>6}",
        "receiver", "start ms", "length us", "fan-in", "CE", "CNPs", "pauses"
    )?;
    for p in periods.iter().take(ROWS_SHOWN) {
        writeln!(
            out,
            "    {:<16} {:>10.3} {:>12.1} {:>7} {:>5} {:>5} {:>6}",
            p.receiver.to_string(),
            (p.start_ns - first_ns) as f64 / 1e6,
            (p.end_ns - p.start_ns) as f64 / 1e3,
            p.peak_fan_in,
            p.ce_marks,
            p.cnps,
            p.pauses
        )?;
    }
    if periods.len() > ROWS_SHOWN {
        writeln!(out, "    … {} more periods (see --json)", periods.len() - ROWS_SHOWN)?;
    }
    Ok(())
}
