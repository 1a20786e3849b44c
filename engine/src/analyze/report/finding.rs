//! Findings: what an operator should look at, each with a severity, a stable code, a one-line
//! message, evidence (flows, frame numbers, counts), the likely cause and the first action.
//! The rules that raise them are in [`crate::analyze::rules`].

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

/// What a finding is, whatever its numbers: its stable code and its severity. Every kind is in
/// [`kinds`], declared once; docs/analysis.md's table of findings lists each with its severity
/// (a test holds the two to each other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub code: &'static str,
    /// The severity a finding of the kind has (`INCAST` rises to a warning when the receiver
    /// shows congestion).
    pub severity: Severity,
}

/// Declares each kind of finding as a constant named by its code, and [`ALL`] of them.
macro_rules! kinds {
    ($($code:ident: $severity:ident;)*) => {
        /// Every kind of finding, by its code.
        pub mod kinds {
            use super::{Kind, Severity};
            $(pub const $code: Kind = Kind { code: stringify!($code), severity: Severity::$severity };)*
        }
        /// Every kind of finding, in the order docs/analysis.md lists them.
        pub const ALL: &[Kind] = &[$(kinds::$code),*];
    };
}

kinds! {
    ICRC_BAD: Error;
    VCRC_BAD: Error;
    NAK_FATAL: Error;
    PFC_STORM: Error;
    PSN_GAP: Warning;
    CAPTURE_LOSS: Info;
    RETRANSMISSION: Warning;
    RETRANSMIT_TIMEOUT: Warning;
    REORDER_NAKS: Warning;
    CM_DSCP: Warning;
    NAK_PSN_SEQUENCE: Warning;
    RNR_NAK: Warning;
    CE_WITHOUT_CNP: Warning;
    FECN_WITHOUT_BECN: Warning;
    CNP_DSCP: Warning;
    CNP_PCP: Warning;
    DATA_DSCP: Warning;
    DATA_PCP: Warning;
    NOT_ECT_DATA: Warning;
    PFC_OTHER_PRIORITY: Warning;
    PAUSE_WITHOUT_ECN: Warning;
    LINK_PAUSE: Warning;
    CAPTURE_DAMAGED: Warning;
    MALFORMED_FRAMES: Warning;
    CAPTURE_LOST_PACKETS: Warning;
    RDMA_DEVICE_CAPTURE: Info;
    NO_ROCE: Info;
    UNDECODED_LINK_TYPE: Warning;
    LIMITS_REACHED: Warning;
    MIRROR_DUPLICATES: Info;
    RETRANSMIT_NO_NAK: Info;
    REORDERING: Info;
    QP_REUSED: Info;
    PAIRING_AMBIGUOUS: Info;
    TRUNCATED_FRAMES: Info;
    TIMESTAMPS_BACKWARDS: Info;
    DCQCN_NO_REACTION: Warning;
    DCQCN_SLOW_RECOVERY: Warning;
    HIGH_TAIL_LATENCY: Warning;
    INCAST: Info;
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub evidence: Evidence,
    pub cause: &'static str,
    pub action: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/analysis.md's table of findings: each row's codes and severity.
    fn documented() -> Vec<(String, String)> {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/analysis.md")).unwrap();
        let table = &doc[doc.find("## Findings").unwrap()..];
        let rows = table.lines().skip(4).take_while(|l| l.starts_with('|'));
        rows.flat_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let severity = cells[2].to_string();
            cells[1].split(", ").map(move |c| (c.trim_matches('`').to_string(), severity.clone())).collect::<Vec<_>>()
        })
        .collect()
    }

    #[test]
    fn every_kind_is_documented_with_its_severity() {
        let documented = documented();
        let codes: Vec<&str> = documented.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(codes, ALL.iter().map(|k| k.code).collect::<Vec<_>>());
        for (kind, (_, severity)) in ALL.iter().zip(&documented) {
            assert!(severity.starts_with(kind.severity.name()), "{}: {severity}", kind.code);
        }
    }
}
