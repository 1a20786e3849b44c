//! The troubleshooting table (symptom → most likely cause → first action): where the capture and
//! the counters show an entry's symptom and the report has findings it explains, the report
//! lists the entry once, naming those findings. docs/analysis.md, "Troubleshooting table",
//! lists the entries.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::analyze::counters::report::{HostCounters, switch_pfc_priority};
use crate::analyze::finding::Finding;
use crate::analyze::report::Report;
use crate::analyze::roce::flow::episodes::Trigger;

/// One row of the table.
pub(super) struct Entry {
    pub symptom: &'static str,
    /// Does the report (its capture and its counters) show the symptom?
    shows: fn(&Report) -> bool,
    cause: &'static str,
    action: &'static str,
    /// The findings it explains: a code, and for `COUNTERS_DISAGREE` the family it names.
    joins: &'static [(&'static str, &'static str)],
}

pub(super) const TABLE: [Entry; 5] = [
    Entry {
        symptom: "loss or out-of-sequence growth with no ECN marks",
        shows: loss_without_marks,
        cause: "ECN under-tuning: the switch queue overflows before it marks, so brief loss and retries take the place of rate control.",
        action: "Lower the ECN marking thresholds (Kmin, Kmax) of the RoCE queue below its drop and PFC thresholds, and check that ECN is enabled on that queue.",
        joins: &[
            ("PSN_GAP", ""),
            ("RETRANSMISSION", ""),
            ("NAK_PSN_SEQUENCE", ""),
            ("RETRANSMIT_TIMEOUT", ""),
            ("COUNTERS_DISAGREE", "PSN sequence"),
        ],
    },
    Entry {
        symptom: "pauses on one priority while the RoCE data travels on another",
        shows: pauses_beside_the_data,
        cause: "PFC on the wrong priority, or a DSCP-to-priority mismatch: the priority that pauses is not the one the RoCE data travels on, so PFC protects nothing and the data's queue drops.",
        action: "Align the DSCP-to-priority maps of the hosts (trust mode, mlnx_qos) and of the switches, and enable PFC on the priority the RoCE data uses.",
        joins: &[
            ("PFC_OTHER_PRIORITY", ""),
            ("DATA_PCP", ""),
            ("PFC_STORM", ""),
            ("PAUSE_NOT_IN_CAPTURE", ""),
            ("COUNTERS_DISAGREE", "PFC pauses"),
        ],
    },
    Entry {
        symptom: "CE-marked packets reach a host whose NIC sent no CNP",
        shows: marks_without_notification,
        cause: "The receiver's notification point is off for the data's priority (DCQCN's CNP generation disabled): marks never become rate cuts.",
        action: "Enable the notification point for the data's priority on the receiver (/sys/class/net/IFACE/ecn/roce_np/enable/N, or mlnx_qos) and check that np_cnp_sent grows.",
        joins: &[("CE_WITHOUT_CNP", ""), ("COUNTERS_DISAGREE", "CNPs")],
    },
    Entry {
        symptom: "a host ignores the CNPs it receives",
        shows: notifications_ignored,
        cause: "The sender's reaction point is off for the priority (DCQCN's rate reduction disabled), so CNPs arrive and the rate stays.",
        action: "Enable the reaction point for the data's priority on the senders (/sys/class/net/IFACE/ecn/roce_rp/enable/N) and check that rp_cnp_handled grows instead of rp_cnp_ignored.",
        joins: &[("DCQCN_NO_REACTION", ""), ("CE_WITHOUT_CNP", "")],
    },
    Entry {
        symptom: "ACK timeouts with nothing lost on the way out",
        shows: timeouts_without_loss,
        cause: "Nothing the requester sent was lost: the ACKs were lost on the way back, or the QP's ACK timeout is shorter than the fabric's delay under pauses and deep queues.",
        action: "Look for loss on the return path (the responder's direction), and raise the QP's local ACK timeout above the worst pause and queueing delay.",
        joins: &[("RETRANSMIT_TIMEOUT", ""), ("COUNTERS_DISAGREE", "timeouts and RNR")],
    },
];

/// An entry of the table that applies to a report: its symptom shows, and it explains some of
/// the report's findings (`troubleshooting[]` in the JSON report).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub symptom: &'static str,
    pub cause: &'static str,
    pub action: &'static str,
    /// The codes of the findings it explains, each once, in the order of the findings.
    pub codes: Vec<&'static str>,
    /// The findings it explains: their indexes in the report's `findings[]`.
    pub findings: Vec<usize>,
}

/// The entries whose symptom `report` shows and which explain some of `findings` (the
/// report's, in their final order), each once.
pub(crate) fn rows(report: &Report, findings: &[Finding]) -> Vec<Row> {
    let mut rows = Vec::new();
    for entry in TABLE.iter().filter(|e| (e.shows)(report)) {
        let explained =
            |f: &Finding| entry.joins.iter().any(|&(code, family)| f.code == code && f.message.contains(family));
        let indexes: Vec<usize> = (0..findings.len()).filter(|&i| explained(&findings[i])).collect();
        if indexes.is_empty() {
            continue;
        }
        let mut codes: Vec<&'static str> = Vec::new();
        for &i in &indexes {
            if !codes.contains(&findings[i].code) {
                codes.push(findings[i].code);
            }
        }
        rows.push(Row { symptom: entry.symptom, cause: entry.cause, action: entry.action, codes, findings: indexes });
    }
    rows
}

/// The delta of `counter` on `host`, where both snapshots have it.
fn grew(host: &HostCounters, counter: &str) -> Option<u64> {
    host.rows.iter().find(|row| row.counter == counter).and_then(|row| row.delta)
}

fn loss_without_marks(report: &Report) -> bool {
    let lost = report.roce.flows.iter().any(|f| f.sequence.missing_psns > 0);
    let counted = |host: &HostCounters| {
        ["out_of_sequence", "packet_seq_err"].iter().any(|c| grew(host, c).is_some_and(|d| d > 0))
    };
    let marked = report.roce.ecn.ce + report.roce.ecn.outer_ce > 0
        || report.counters.iter().any(|h| grew(h, "np_ecn_marked_roce_packets").is_some_and(|d| d > 0));
    // ECN-capable data: with Not-ECT data, NOT_ECT_DATA says that ECN is off
    let capable = report.roce.ecn.ect0 + report.roce.ecn.ect1 > 0;
    (lost || report.counters.iter().any(counted)) && !marked && capable
}

fn pauses_beside_the_data(report: &Report) -> bool {
    let mut paused: BTreeSet<u8> =
        report.roce.pfc.iter().filter(|p| p.stats.xoff > 0).filter_map(|p| p.priority).collect();
    for host in &report.counters {
        for row in host.rows.iter().filter(|row| row.delta.is_some_and(|d| d > 0)) {
            let nic = (0..8u8).find(|p| ["tx", "rx"].iter().any(|d| row.counter == format!("{d}_prio{p}_pause")));
            paused.extend(nic.or_else(|| switch_pfc_priority(&row.counter)));
        }
    }
    let data: BTreeSet<u8> =
        report.roce.flows.iter().filter(|f| f.counts.cnps == 0).flat_map(|f| f.pcp.keys().copied()).collect();
    !paused.is_empty() && !data.is_empty() && paused.is_disjoint(&data)
}

fn marks_without_notification(report: &Report) -> bool {
    report.counters.iter().any(|host| {
        let marked_to_host = report.roce.flows.iter().any(|f| f.dst_ip.to_string() == host.host && f.ce > 0);
        marked_to_host && grew(host, "np_cnp_sent") == Some(0)
    })
}

fn notifications_ignored(report: &Report) -> bool {
    report.counters.iter().any(|host| grew(host, "rp_cnp_ignored").is_some_and(|d| d > 0))
}

fn timeouts_without_loss(report: &Report) -> bool {
    let timed_out = report.roce.retransmit_episodes.iter().any(|e| e.trigger == Trigger::Timeout)
        || report.counters.iter().any(|h| grew(h, "local_ack_timeout_err").is_some_and(|d| d > 0));
    timed_out && report.roce.flows.iter().all(|f| f.sequence.missing_psns == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_list_every_entry_in_order() {
        let doc = std::fs::read_to_string(format!("{}/../docs/analysis.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let table = &doc[doc.find("### Troubleshooting table").expect("the section")..];
        let rows = table.lines().skip_while(|l| !l.starts_with('|')).skip(2).take_while(|l| l.starts_with('|'));
        let symptoms: Vec<String> = rows.map(|r| r.split('|').nth(1).unwrap_or("").trim().to_string()).collect();
        let ours: Vec<&str> = TABLE.iter().map(|e| e.symptom).collect();
        assert_eq!(symptoms, ours);
    }
}
