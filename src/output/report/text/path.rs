//! The terminal summary's path (`analyze --tap`): the taps in a line, their clocks, then each
//! hop's figures, forward and reverse, and the first packets lost on a hop.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::TextKeys;
use crate::analyze::path::report::{Direction, HopReport, LossReport, OffsetMethod, PathReport};

/// The losses listed; the JSON report has them all.
const LOSSES_SHOWN: usize = 5;

fn us(ns: Option<i64>) -> String {
    ns.map_or_else(|| "-".to_string(), |v| format!("{:.1}", v as f64 / 1e3))
}

/// The hops' keys.
pub const HOP_KEYS: TextKeys = TextKeys {
    table: "hops",
    shown: &[
        "matched",
        "lost",
        "ce_added",
        "ttl_decrement",
        "reordered",
        "delay_p50_ns",
        "delay_p99_ns",
        "delay_max_ns",
    ],
    hidden: &["delay_uncertainty_ns", "delay_bins_"],
};

pub fn write_path(out: &mut impl Write, path: &PathReport) -> io::Result<()> {
    writeln!(out)?;
    let names: Vec<&str> = path.taps.iter().map(|t| t.name.as_str()).collect();
    writeln!(out, "Path: {}", names.join(" ──▶ "))?;
    writeln!(
        out,
        "  {:<12} {:>16} {:>10} {:<15} {:>9} {:>8} {:>7}",
        "tap", "clock offset ms", "± µs", "method", "drift ppm", "frames", "missed"
    )?;
    for t in &path.taps {
        writeln!(
            out,
            "  {:<12} {:>16.6} {:>10} {:<15} {:>9.3} {:>8} {:>7}",
            t.name,
            t.clock_offset_ns as f64 / 1e6,
            us(t.offset_uncertainty_ns.map(|u| u as i64)),
            method(t.offset_method),
            t.drift_ppm,
            t.frames,
            t.missed
        )?;
    }
    writeln!(
        out,
        "  {:<28} {:>8} {:>6} {:>6} {:>5} {:>9} {:>8} {:>8} {:>8}  re-marked",
        "hop", "matched", "lost", "CE+", "TTL-", "reordered", "p50 µs", "p99 µs", "max µs"
    )?;
    for h in &path.hops {
        write_hop(out, h)?;
    }
    let lost: u64 = path.hops.iter().map(|h| h.lost).sum();
    let (after, on_hops): (Vec<&LossReport>, Vec<&LossReport>) =
        path.losses.iter().partition(|l| l.lost_on.starts_with("after:"));
    if lost > 0 {
        writeln!(out, "  lost on a hop: {lost}")?;
        for l in on_hops.iter().take(LOSSES_SHOWN) {
            writeln!(out, "    {}: last seen at {}, lost on {}", packet(l), l.last_tap, l.lost_on)?;
        }
    }
    if !after.is_empty() {
        writeln!(out, "  sent again after reaching the last tap: {}", after.len())?;
        for l in after.iter().take(LOSSES_SHOWN) {
            writeln!(out, "    {}: reached {}", packet(l), l.last_tap)?;
        }
    }
    Ok(())
}

fn packet(l: &LossReport) -> String {
    format!("{} → {} QP 0x{:06x} PSN {}", l.src, l.dst, l.dest_qp, l.psn)
}

fn write_hop(out: &mut impl Write, h: &HopReport) -> io::Result<()> {
    let direction = match h.direction {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
    };
    let remarked = [("DSCP", &h.dscp_rewritten), ("PCP", &h.pcp_rewritten)]
        .iter()
        .flat_map(|(what, changes): &(&str, &BTreeMap<String, u64>)| {
            changes.iter().map(move |(c, n)| format!("{what} {c} ×{n}"))
        })
        .collect::<Vec<_>>();
    writeln!(
        out,
        "  {:<28} {:>8} {:>6} {:>6} {:>5} {:>9} {:>8} {:>8} {:>8}  {}",
        format!("{} → {} ({direction})", h.from, h.to),
        h.matched,
        h.lost,
        h.ce_added,
        h.ttl_decrement.map_or_else(|| "-".to_string(), |d| d.to_string()),
        h.reordered,
        us(h.delay_p50_ns),
        us(h.delay_p99_ns),
        us(h.delay_max_ns),
        if remarked.is_empty() { "-".to_string() } else { remarked.join(", ") }
    )
}

fn method(m: OffsetMethod) -> &'static str {
    match m {
        OffsetMethod::Reference => "reference",
        OffsetMethod::TwoWay => "two-way",
        OffsetMethod::OneWayBound => "one-way bound",
        OffsetMethod::Given => "given",
        OffsetMethod::Unknown => "unknown",
    }
}
