//! The summary's findings: severity, code and message, the frames, cause and action.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use super::TextKeys;
use crate::analyze::finding::Finding;
use crate::analyze::finding::Severity;
use crate::analyze::id::FrameNumber;

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

/// Writes `findings`: each with its frames and configuration lines, cause and action.
pub fn write_findings(out: &mut impl Write, findings: &[Finding], colour: bool) -> io::Result<()> {
    if findings.is_empty() {
        writeln!(out, "Findings: none")?;
    } else {
        writeln!(out, "Findings ({})", findings.len())?;
        for f in findings {
            let style = severity_style(f.severity, colour);
            let label = format!("{:<7}", f.severity.name().to_uppercase());
            writeln!(out, "  {style}{label}{style:#} {:<20} {}", f.code, f.message)?;
            if !f.evidence.frames.is_empty() {
                let frames: Vec<String> = f.evidence.frames.iter().map(FrameNumber::to_string).collect();
                writeln!(out, "          frames: {}", frames.join(", "))?;
            }
            if !f.evidence.config_lines.is_empty() {
                writeln!(out, "          config: {}", f.evidence.config_lines.join(", "))?;
            }
            writeln!(out, "          cause:  {}", f.cause)?;
            writeln!(out, "          action: {}", f.action)?;
        }
    }
    Ok(())
}
