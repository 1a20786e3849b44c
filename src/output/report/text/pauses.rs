//! The summary's pause frames: PFC and PAUSE per source and priority.

use std::io::{self, Write};

use super::{TextKeys, ms};
use crate::analyze::report::Report;

/// The pause sources' keys.
pub const PAUSE_KEYS: TextKeys = TextKeys {
    table: "pfc",
    shown: &["priority", "xoff", "xon", "paused_ns", "longest_pause_ns"],
    hidden: &["storm_periods", "first_frame", "first_ts_ns", "first_storm_frame"],
};

/// PFC and PAUSE per source and priority, when the capture has any.
pub(super) fn write_pauses(out: &mut impl Write, r: &Report) -> io::Result<()> {
    if !r.roce.pfc.is_empty() || !r.roce.pause.is_empty() {
        writeln!(out)?;
        writeln!(out, "Pause frames")?;
        writeln!(
            out,
            "  {:<17} {:>8} {:>6} {:>5} {:>12} {:>12} {:>5}",
            "source MAC", "priority", "XOFF", "XON", "paused ms", "longest ms", "storm"
        )?;
        for p in r.roce.pfc.iter().chain(&r.roce.pause) {
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
