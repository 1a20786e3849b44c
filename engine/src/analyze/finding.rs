//! Findings: what an operator should look at, each with a severity, a stable code, a one-line
//! message, evidence (flows, frame numbers, counts), the likely cause and the first action.
//! The rules that raise them are in [`super::rules`].

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Info, Severity::Warning, Severity::Error];

    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Where a finding shows: flow ids and frame numbers (at most [`EVIDENCE_KEPT`] each) and
/// how many occurrences there were in all.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    pub count: u64,
    pub flows: Vec<u32>,
    pub frames: Vec<u64>,
}

pub const EVIDENCE_KEPT: usize = 10;

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub evidence: Evidence,
    pub cause: &'static str,
    pub action: &'static str,
}
