//! The summary's findings: severity, code and message, the frames, cause and action.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use super::TextKeys;
use crate::analyze::finding::Severity;
use crate::analyze::id::FrameNumber;
use crate::analyze::report::Report;

/// The findings' keys: the summary lists the frames, not how many there were.
pub const FINDING_KEYS: TextKeys = TextKeys { table: "findings", shown: &[], hidden: &["evidence_count"] };

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

pub(super) fn write_findings(out: &mut impl Write, r: &Report, colour: bool) -> io::Result<()> {
    if r.findings.is_empty() {
        writeln!(out, "Findings: none")?;
    } else {
        writeln!(out, "Findings ({})", r.findings.len())?;
        for f in &r.findings {
            let style = severity_style(f.severity, colour);
            let label = format!("{:<7}", f.severity.name().to_uppercase());
            writeln!(out, "  {style}{label}{style:#} {:<20} {}", f.code, f.message)?;
            if !f.evidence.frames.is_empty() {
                let frames: Vec<String> = f.evidence.frames.iter().map(FrameNumber::to_string).collect();
                writeln!(out, "          frames: {}", frames.join(", "))?;
            }
            writeln!(out, "          cause:  {}", f.cause)?;
            writeln!(out, "          action: {}", f.action)?;
        }
    }
    Ok(())
}
