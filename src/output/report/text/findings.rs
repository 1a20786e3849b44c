//! The summary's findings: severity, code and message, the frames, cause and action; then the
//! troubleshooting table's entries that explain them, each once.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use super::{TextKeys, write_wrapped};
use crate::analyze::finding::Finding;
use crate::analyze::finding::Severity;
use crate::analyze::id::FrameNumber;
use crate::analyze::report::troubleshooting::Row;

/// The findings' keys: the summary lists the frames, not how many there were.
pub const FINDING_KEYS: TextKeys = TextKeys { table: "findings", shown: &[], hidden: &["evidence_count"] };

/// Where a finding's frames, cause and action begin: under its code.
const DETAIL: &str = "          ";

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

/// Writes a detail line, `label` (`cause:  `) then `text`, wrapped to `width` under the text.
fn write_detail(out: &mut impl Write, label: &str, text: &str, width: usize) -> io::Result<()> {
    let prefix = format!("{DETAIL}{label}");
    write_wrapped(out, &prefix, prefix.chars().count(), text, width)
}

/// Writes `findings`, wrapped to `width`: each with its frames and configuration lines, cause
/// and action, and the numbers of the troubleshooting `rows` that explain it; then the rows,
/// each once, with the codes of the findings it explains.
pub fn write_findings(
    out: &mut impl Write,
    findings: &[Finding],
    rows: &[Row],
    colour: bool,
    width: usize,
) -> io::Result<()> {
    if findings.is_empty() {
        return writeln!(out, "Findings: none");
    }
    writeln!(out, "Findings ({})", findings.len())?;
    for (i, f) in findings.iter().enumerate() {
        let style = severity_style(f.severity, colour);
        let label = format!("{:<7}", f.severity.name().to_uppercase());
        let code = format!("{:<20}", f.code);
        let indent = format!("  {label} {code} ").chars().count();
        write_wrapped(out, &format!("  {style}{label}{style:#} {code} "), indent, &f.message, width)?;
        if !f.evidence.frames.is_empty() {
            let frames: Vec<String> = f.evidence.frames.iter().map(FrameNumber::to_string).collect();
            write_detail(out, "frames: ", &frames.join(", "), width)?;
        }
        if !f.evidence.config_lines.is_empty() {
            write_detail(out, "config: ", &f.evidence.config_lines.join(", "), width)?;
        }
        write_detail(out, "cause:  ", &f.cause, width)?;
        write_detail(out, "action: ", &f.action, width)?;
        let explained: Vec<String> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.findings.contains(&i))
            .map(|(n, _)| format!("[{}]", n + 1))
            .collect();
        if !explained.is_empty() {
            write_detail(out, "see:    ", &format!("troubleshooting {}", explained.join(", ")), width)?;
        }
    }
    if !rows.is_empty() {
        writeln!(out)?;
        writeln!(out, "Troubleshooting ({})", rows.len())?;
        for (n, row) in rows.iter().enumerate() {
            let number = format!("  {:<7} ", format!("[{}]", n + 1));
            write_wrapped(out, &number, number.chars().count(), row.symptom, width)?;
            write_detail(out, "for:    ", &row.codes.join(", "), width)?;
            write_detail(out, "cause:  ", row.cause, width)?;
            write_detail(out, "action: ", row.action, width)?;
        }
    }
    Ok(())
}
