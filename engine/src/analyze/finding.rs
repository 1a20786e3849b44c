//! Findings: what an operator should look at, each with a severity, a stable code, a one-line
//! message, evidence (flows, frame numbers, counts), the likely cause and the first action.
//! The rules that raise them are in [`crate::analyze::rules`].

use std::borrow::Cow;

use serde::Serialize;

use crate::analyze::exemplar::Exemplar;
use crate::analyze::id::{FlowId, FrameNumber};

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

    /// What `--fail-on` with this severity fails on.
    pub fn describe(self) -> &'static str {
        match self {
            Severity::Info => "any finding",
            Severity::Warning => "a warning or an error",
            Severity::Error => "an error",
        }
    }
}

/// Where a finding shows: flow ids and frame numbers (at most [`EVIDENCE_KEPT`] each), how
/// many occurrences there were in all, and for the path's findings the hop or the tap.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    pub count: u64,
    pub flows: Vec<FlowId>,
    pub frames: Vec<FrameNumber>,
    /// The hop a finding of the path is about: its two taps and its direction
    /// ("leaf->spine forward").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hop: Option<String>,
    /// The tap a finding of the path is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tap: Option<String>,
    /// The host a finding of its counters, QP table or NCCL log is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The lines of a host's file a finding is about, `FILE:LINE` (from 1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
    /// The devices a finding of the fabric's configuration is about (`analyze --config`), sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// The configuration lines it read, `FILE:LINE` (from 1): the devices' for a fabric's
    /// finding, the expected value's source for a marking finding judged by them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config_lines: Vec<String>,
}

pub const EVIDENCE_KEPT: usize = 10;

/// What a finding is, whatever its numbers: its stable code, its severity, a title and the
/// section of the docs that defines what it counts. Every kind is in [`kinds`], declared once;
/// docs/analysis.md's table of findings lists each with its severity and title, and each doc
/// anchor names a heading there (tests hold the three to each other); the HTML report's legend
/// reads the titles and anchors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub code: &'static str,
    /// The severity a finding of the kind has (`INCAST` rises to a warning when the receiver
    /// shows congestion).
    pub severity: Severity,
    /// What it is, in a few words.
    pub title: &'static str,
    /// The file under docs/ and the anchor of the section that defines it.
    pub doc: &'static str,
}

impl Kind {
    /// The kind of `code`.
    pub fn of(code: &str) -> Option<Kind> {
        ALL.iter().find(|k| k.code == code).copied()
    }
}

/// Declares each kind of finding as a constant named by its code, and [`ALL`] of them.
macro_rules! kinds {
    ($($code:ident: $severity:ident, $title:literal, $doc:literal;)*) => {
        /// Every kind of finding, by its code.
        pub mod kinds {
            use super::{Kind, Severity};
            $(pub const $code: Kind =
                Kind { code: stringify!($code), severity: Severity::$severity, title: $title, doc: $doc };)*
        }
        /// Every kind of finding, in the order docs/analysis.md lists them.
        pub const ALL: &[Kind] = &[$(kinds::$code),*];
    };
}

kinds! {
    ICRC_BAD: Error, "Bad ICRC", "analysis.md#flows";
    VCRC_BAD: Error, "Bad VCRC on an InfiniBand link", "analysis.md#native-infiniband";
    NAK_FATAL: Error, "Fatal NAK", "analysis.md#acknowledgements";
    PFC_STORM: Error, "PFC storm", "analysis.md#pfc-and-pause";
    PSN_GAP: Warning, "Missing PSNs", "analysis.md#the-request-sequence";
    CAPTURE_LOSS: Info, "Packets the capture missed", "analysis.md#capture-loss-or-network-loss";
    RETRANSMISSION: Warning, "Retransmissions", "analysis.md#retransmit-episodes";
    RETRANSMIT_TIMEOUT: Warning, "Retransmission after an ACK timeout", "analysis.md#retransmit-episodes";
    REORDER_NAKS: Warning, "NAKs for packets that were only late", "analysis.md#reordering";
    CM_DSCP: Warning, "Connection management on another DSCP", "analysis.md#policy";
    NAK_PSN_SEQUENCE: Warning, "PSN sequence error NAKs", "analysis.md#acknowledgements";
    RNR_NAK: Warning, "Receiver not ready (RNR NAK)", "analysis.md#acknowledgements";
    CE_WITHOUT_CNP: Warning, "CE marks without CNPs", "analysis.md#congestion";
    FECN_WITHOUT_BECN: Warning, "FECN marks without BECN or CNP", "analysis.md#native-infiniband";
    CNP_DSCP: Warning, "CNPs on another DSCP", "analysis.md#policy";
    CNP_PCP: Warning, "CNPs on another priority", "analysis.md#policy";
    DATA_DSCP: Warning, "RoCE data on another DSCP", "analysis.md#policy";
    DATA_PCP: Warning, "RoCE data on another priority", "analysis.md#policy";
    NOT_ECT_DATA: Warning, "RoCE data not ECN-capable", "analysis.md#policy";
    PFC_OTHER_PRIORITY: Warning, "PFC pauses on another priority", "analysis.md#pfc-and-pause";
    PAUSE_WITHOUT_ECN: Warning, "Pauses without ECN marks", "analysis.md#pfc-and-pause";
    LINK_PAUSE: Warning, "802.3x link PAUSE", "analysis.md#pfc-and-pause";
    CAPTURE_DAMAGED: Warning, "Damaged capture file", "analysis.md#capture-wide-counts";
    MALFORMED_FRAMES: Warning, "Malformed frames", "analysis.md#capture-wide-counts";
    CAPTURE_LOST_PACKETS: Warning, "Packets dropped by the capture", "analysis.md#capture-wide-counts";
    RDMA_DEVICE_CAPTURE: Info, "Captured on an RDMA device", "analysis.md#capture-wide-counts";
    NO_ROCE: Info, "No RoCE in the capture", "analysis.md#capture-wide-counts";
    UNDECODED_LINK_TYPE: Warning, "Frames of a link type not decoded", "analysis.md#capture-wide-counts";
    LIMITS_REACHED: Warning, "Memory bounds reached", "analysis.md#memory-bounds";
    MIRROR_DUPLICATES: Info, "Mirror duplicates", "analysis.md#mirror-duplicates";
    RETRANSMIT_NO_NAK: Info, "Retransmissions whose NAK the capture lacks", "analysis.md#retransmit-episodes";
    REORDERING: Info, "Reordering", "analysis.md#reordering";
    QP_REUSED: Info, "QP numbers reused", "analysis.md#reused-qp-numbers";
    PAIRING_AMBIGUOUS: Info, "Responses more than one QP could answer", "analysis.md#pairing-the-two-directions-of-a-connection";
    TRUNCATED_FRAMES: Info, "Truncated frames", "analysis.md#capture-wide-counts";
    TIMESTAMPS_BACKWARDS: Info, "Timestamps going backwards", "analysis.md#capture-wide-counts";
    DCQCN_NO_REACTION: Warning, "Senders not slowing down on CNPs", "analysis.md#sender-reaction-to-cnps";
    DCQCN_SLOW_RECOVERY: Warning, "Senders recovering slowly after CNPs", "analysis.md#sender-reaction-to-cnps";
    HIGH_TAIL_LATENCY: Warning, "High tail completion time", "analysis.md#message-completion-time";
    INCAST: Info, "Incast", "analysis.md#incast";
    LOSS_ON_HOP: Warning, "Packets lost on a hop", "analysis.md#where-on-the-path";
    ECN_MARKED_ON_HOP: Info, "CE marks added on a hop", "analysis.md#where-on-the-path";
    DSCP_REWRITTEN: Warning, "Marking rewritten on a hop", "analysis.md#where-on-the-path";
    LATENCY_ON_HOP: Warning, "Delay on a hop", "analysis.md#where-on-the-path";
    TAP_MISSED: Info, "Packets a tap missed", "analysis.md#where-on-the-path";
    TAP_CLOCK_UNCERTAIN: Info, "Tap clock uncertain", "analysis.md#where-on-the-path";
    NIC_RX_DROPS: Warning, "Receive drops in the NIC", "analysis.md#counters-beside-the-capture";
    LINK_ERRORS: Warning, "Errors on the link", "analysis.md#counters-beside-the-capture";
    COUNTERS_DISAGREE: Warning, "Counters and capture disagree", "analysis.md#counters-beside-the-capture";
    PAUSE_NOT_IN_CAPTURE: Info, "Pauses the capture cannot see", "analysis.md#counters-beside-the-capture";
    SWITCH_QUEUE_DROPS: Warning, "Drops in a switch queue", "analysis.md#counters-beside-the-capture";
    NCCL_SOCKET_FALLBACK: Error, "NCCL fell back to sockets", "analysis.md#qp-tables-and-nccl-logs";
    QP_TABLE_CONFLICT: Warning, "The capture contradicts a QP table", "analysis.md#qp-tables-and-nccl-logs";
    QOS_DSCP_MAP_MISMATCH: Error, "The RoCE DSCP maps to different priorities", "fabric.md#qos_dscp_map_mismatch";
    QOS_LOSSY_ROCE: Error, "RoCE data on a priority without PFC", "fabric.md#qos_lossy_roce";
    QOS_PFC_MISMATCH: Warning, "PFC on different priorities", "fabric.md#qos_pfc_mismatch";
    QOS_ECN_OFF: Error, "No ECN for the RoCE priority", "fabric.md#qos_ecn_off";
    QOS_ECN_THRESHOLDS: Warning, "ECN thresholds out of range", "fabric.md#qos_ecn_thresholds";
    QOS_CNP_CLASS: Warning, "CNPs in the wrong class", "fabric.md#qos_cnp_class";
    QOS_NCCL_TC: Error, "NCCL_IB_TC is not a lossless DSCP", "fabric.md#qos_nccl_tc";
    QOS_GID_INDEX: Error, "NCCL_IB_GID_INDEX names the wrong GID", "fabric.md#qos_gid_index";
    QOS_TRUST_MODE: Warning, "Hosts and switches classify by different fields", "fabric.md#qos_trust_mode";
    QOS_MTU: Warning, "MTU too small for RoCE", "fabric.md#qos_mtu";
    QOS_PFC_WATCHDOG_OFF: Warning, "PFC without a watchdog", "fabric.md#qos_pfc_watchdog_off";
    UET_CRC_BAD: Error, "Bad UET CRC", "analysis.md#uet";
    UET_LOSS: Warning, "UET packets lost", "analysis.md#uet";
    UET_TRIMMING: Warning, "UET packets trimmed", "analysis.md#uet";
    UET_NACKS: Warning, "UET NACKs", "analysis.md#uet";
    UET_ROD_OUT_OF_ORDER: Warning, "Out of order on an ordered UET PDC", "analysis.md#uet";
    UET_ECN_ECHO_MISMATCH: Warning, "UET ECN marks and their echoes disagree", "analysis.md#uet";
    UET_PDC_ERRORS: Error, "UET PDC errors", "analysis.md#uet";
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub evidence: Evidence,
    /// The likely cause; the troubleshooting table's entries that explain the finding are the
    /// report's `troubleshooting` (docs/analysis.md, "Troubleshooting table").
    pub cause: Cow<'static, str>,
    pub action: Cow<'static, str>,
}

impl Exemplar for Finding {
    fn exemplar() -> Self {
        let some = Some(String::new());
        Finding {
            severity: Severity::Info,
            code: "",
            message: String::new(),
            evidence: Evidence {
                count: 0,
                flows: Vec::new(),
                frames: Vec::new(),
                hop: some.clone(),
                tap: some.clone(),
                host: some,
                lines: vec![String::new()],
                devices: vec![String::new()],
                config_lines: vec![String::new()],
            },
            cause: Cow::Borrowed(""),
            action: Cow::Borrowed(""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str) -> String {
        std::fs::read_to_string(format!("{}/../docs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// docs/analysis.md's table of findings: each row's code, severity and title.
    fn documented() -> Vec<(String, String, String)> {
        let doc = doc("analysis.md");
        let table = &doc[doc.find("## Findings").unwrap()..];
        let rows = table.lines().skip(4).take_while(|l| l.starts_with('|'));
        rows.map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            (cells[1].trim_matches('`').to_string(), cells[2].to_string(), cells[3].to_string())
        })
        .collect()
    }

    #[test]
    fn every_kind_is_documented_with_its_severity_and_title() {
        let documented = documented();
        let codes: Vec<&str> = documented.iter().map(|(c, _, _)| c.as_str()).collect();
        assert_eq!(codes, ALL.iter().map(|k| k.code).collect::<Vec<_>>());
        for (kind, (_, severity, title)) in ALL.iter().zip(&documented) {
            assert!(severity.starts_with(kind.severity.name()), "{}: {severity}", kind.code);
            assert_eq!(title, kind.title, "{}", kind.code);
        }
    }

    /// A heading's anchor as GitHub makes it: lower case, spaces to hyphens, punctuation gone.
    fn anchor(heading: &str) -> String {
        let kept = heading.chars().filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_');
        kept.collect::<String>().to_lowercase().replace(' ', "-")
    }

    #[test]
    fn every_kinds_doc_anchor_names_a_heading_of_its_file() {
        for kind in ALL {
            let (file, wanted) = kind.doc.split_once('#').unwrap();
            let doc = doc(file);
            let headings =
                doc.lines().filter_map(|l| l.strip_prefix('#')).map(|h| anchor(h.trim_start_matches('#').trim()));
            assert!(headings.into_iter().any(|h| h == wanted), "{}: {} names no heading", kind.code, kind.doc);
        }
    }

    #[test]
    fn a_kind_is_found_by_its_code() {
        assert_eq!(Kind::of("PSN_GAP"), Some(kinds::PSN_GAP));
        assert_eq!(Kind::of("NO_SUCH_CODE"), None);
    }
}
