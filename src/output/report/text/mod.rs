//! The terminal summary of an analysis, a file per section: the capture (with UET's PDCs),
//! flows sorted by trouble, pause frames, congestion control, the path, counters, the hosts'
//! accounts, the fabric's configuration, findings.

mod capture;
pub mod congestion;
pub mod counters;
pub mod fabric;
pub mod findings;
pub mod flows;
mod identity;
pub mod path;
mod pauses;
mod uet;

use std::io::{self, IsTerminal, Write};

use crate::analyze::report::Report;

pub(super) fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

pub(super) fn us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".to_string(), |v| format!("{:.1}", v as f64 / 1e3))
}

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
    flows::FLOW_KEYS,
    EPISODE_KEYS,
    findings::FINDING_KEYS,
    pauses::PAUSE_KEYS,
    congestion::BURST_KEYS,
    congestion::INCAST_KEYS,
    path::HOP_KEYS,
    counters::COUNTER_KEYS,
    uet::PDC_KEYS,
];

/// The retransmit episodes' keys: the summary shows them per flow (the flows' keys).
const EPISODE_KEYS: TextKeys = TextKeys {
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
};

/// The width the summary's findings wrap to in files and pipes, whatever the terminal, so that
/// a summary written there reads the same everywhere.
pub const PIPE_WIDTH: usize = 100;

/// The narrowest width the findings wrap to, however narrow the terminal says it is.
const MIN_WIDTH: usize = 40;

/// The width to wrap a summary written to standard output to: the terminal's when it is one
/// (what the terminal says, else `COLUMNS`), [`PIPE_WIDTH`] otherwise.
pub fn stdout_width() -> usize {
    if !io::stdout().is_terminal() {
        return PIPE_WIDTH;
    }
    #[cfg(feature = "browse")]
    let said = ratatui::crossterm::terminal::size().ok().map(|(w, _)| usize::from(w)).filter(|&w| w > 0);
    #[cfg(not(feature = "browse"))]
    let said = None;
    let columns = || std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok());
    said.or_else(columns).unwrap_or(PIPE_WIDTH).max(MIN_WIDTH)
}

/// Writes `text` after `prefix`, which is `indent` columns wide as shown (escapes aside),
/// wrapped at spaces so that no line is wider than `width` but for a word longer than a line
/// on its own; each further line is indented by `indent` spaces, under the text.
pub fn write_wrapped(out: &mut impl Write, prefix: &str, indent: usize, text: &str, width: usize) -> io::Result<()> {
    let room = width.saturating_sub(indent).max(1);
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("a line");
        let wide = line.chars().count();
        if wide == 0 {
            line.push_str(word);
        } else if wide + 1 + word.chars().count() <= room {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(word.to_string());
        }
    }
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            writeln!(out, "{prefix}{line}")?;
        } else {
            writeln!(out, "{:indent$}{line}", "")?;
        }
    }
    Ok(())
}

/// Writes the summary; `colour` styles the findings' severities with ANSI escapes, and the
/// findings wrap to `width` columns.
pub fn write_summary(out: &mut impl Write, r: &Report, colour: bool, width: usize) -> io::Result<()> {
    capture::write_capture(out, r)?;
    flows::write_flows(out, r)?;
    pauses::write_pauses(out, r)?;
    congestion::write_congestion_control(out, r)?;
    if let Some(path) = &r.path {
        path::write_path(out, path)?;
    }
    counters::write_counters(out, &r.counters)?;
    identity::write_accounts(out, r)?;
    if let Some(configured) = &r.fabric {
        fabric::write_fabric(out, configured)?;
    }
    writeln!(out)?;
    findings::write_findings(out, &r.findings, &r.troubleshooting, colour, width)
}
