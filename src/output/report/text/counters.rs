//! The terminal summary's counters (`analyze --counters`): per host, the counters the capture
//! is compared with and the others that grew, each delta beside what the capture saw.

use std::io::{self, Write};

use super::TextKeys;
use crate::analyze::counters::report::{Agreement, HostCounters, Source};

/// Unpaired counters that grew, listed at most per host; the JSON report has every row.
const GROWN_SHOWN: usize = 20;

fn number(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The counter rows' keys.
pub const COUNTER_KEYS: TextKeys = TextKeys {
    table: "counters",
    shown: &["window_seconds", "before", "after", "delta", "capture"],
    hidden: &["difference"],
};

pub fn write_counters(out: &mut impl Write, hosts: &[HostCounters]) -> io::Result<()> {
    for host in hosts {
        writeln!(out)?;
        let window = host.window.seconds.map_or_else(String::new, |s| format!(" over {s:.1} s"));
        let whose = if host.source == Source::Switch { "switch " } else { "" };
        writeln!(out, "Counters of {whose}{}{window}", host.host)?;
        writeln!(
            out,
            "  {:<32} {:>14} {:>14} {:>10} {:>10}  verdict",
            "counter", "before", "after", "delta", "capture"
        )?;
        let compared = host.rows.iter().filter(|r| !matches!(r.verdict, Agreement::NotVisible));
        let grown = host.rows.iter().filter(|r| r.verdict == Agreement::NotVisible && r.delta.is_some_and(|d| d > 0));
        for row in compared.chain(grown.take(GROWN_SHOWN)) {
            writeln!(
                out,
                "  {:<32} {:>14} {:>14} {:>10} {:>10}  {}",
                row.counter,
                number(row.before),
                number(row.after),
                number(row.delta),
                number(row.capture),
                row.verdict.label()
            )?;
        }
    }
    Ok(())
}
