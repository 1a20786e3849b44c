//! The summary's UET PDCs, under the capture's UET line.

use std::io::{self, Write};

use super::TextKeys;
use crate::analyze::uet::report::UetReport;

/// The PDC lines' keys.
pub const PDC_KEYS: TextKeys = TextKeys {
    table: "uet_pdcs",
    shown: &[
        "spdcid",
        "dpdcid",
        "requests",
        "acks",
        "out_of_order",
        "retransmitted",
        "missing",
        "capture_missed",
        "unanswered",
        "ecn_marks_not_echoed",
        "ecn_echoes_without_mark",
    ],
    hidden: &[
        "start_psn",
        "psn_first",
        "psn_last",
        "lost_before_tap",
        "untracked",
        "trimmed",
        "ecn_ce",
        "ecn_echoed",
        "ecn_acks_checked",
        "ecn_acks_unchecked",
        "ack_psns_p50",
        "ack_psns_max",
        "first_frame",
        "last_frame",
    ],
};

/// PDCs the summary lists at most; the JSON report has every one.
const PDCS_SHOWN: usize = 10;

/// A line per UET PDC (and per host pair's RUDI or UUD packets): its ends and ids, mode, and
/// what its PSNs and NACKs came to.
pub(super) fn write_pdcs(out: &mut impl Write, uet: &UetReport) -> io::Result<()> {
    let id = |id: Option<u16>| id.map_or_else(|| "?".to_string(), |id| id.to_string());
    for p in uet.pdcs.iter().take(PDCS_SHOWN) {
        let nacks: Vec<String> = p.nacks.iter().map(|(code, n)| format!("{code} {n}")).collect();
        let nacks = if nacks.is_empty() { String::new() } else { format!(", NACKs {}", nacks.join(", ")) };
        let mode = p.mode.unwrap_or("?");
        if !p.is_pdc() {
            let unanswered = p.unanswered.map_or_else(String::new, |n| format!(", {n} unanswered"));
            writeln!(out, "    {mode} {} → {}: {} requests{unanswered}{nacks}", p.initiator, p.target, p.requests)?;
            continue;
        }
        let ecn = match (p.ecn_marks_not_echoed, p.ecn_echoes_without_mark) {
            (0, 0) => String::new(),
            (marks, echoes) => format!(", ECN: {marks} marks not echoed, {echoes} echoes without a mark"),
        };
        writeln!(
            out,
            "    PDC {} → {} {}/{} {mode}: {} requests, {} ACKs, {} out of order, {} resent, {} missing, {} missed by the capture{nacks}{ecn}",
            p.initiator,
            p.target,
            id(p.spdcid),
            id(p.dpdcid),
            p.requests,
            p.acks,
            p.out_of_order,
            p.retransmitted,
            p.missing,
            p.capture_missed,
        )?;
    }
    if uet.pdcs.len() > PDCS_SHOWN {
        writeln!(out, "    … {} more PDCs (the JSON report has every one)", uet.pdcs.len() - PDCS_SHOWN)?;
    }
    Ok(())
}
