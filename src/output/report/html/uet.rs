//! The UET section of the HTML page: the CRC32C verdicts, a row per PDC (and per host pair's
//! RUDI or UUD packets) with what its PSNs, ACKs and NACKs came to, and the sequence graph of
//! the first PDCs.

use maud::{Markup, html};
use rocescope_parsers::psn::psn_forward_distance;

use super::charts::{self, PsnGraph};
use super::figure::figure;
use crate::analyze::roce::report::chart_data::ChartData;
use crate::analyze::uet::PdcKey;
use crate::analyze::uet::report::{PdcReport, UetReport};

/// PDCs whose sequence graph the page draws, at most.
const GRAPHS_SHOWN: usize = 16;

/// PDCs the page lists at most; the JSON report has every one.
const PDCS_SHOWN: usize = 200;

fn number(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// The sequence graph of PDC `p`: first sends as dots, resends as crosses, NACKs as markers,
/// PSNs from its first.
fn graph(a: &ChartData, p: &PdcReport, t0: i64) -> Option<String> {
    let key = PdcKey { initiator: p.initiator, target: p.target, pdcid: p.spdcid? };
    let trace = a.uet_trace(&key)?;
    let first = p.psn_first.unwrap_or(0);
    let at = |ts: i64, psn: u32| ((ts - t0) as f64 / 1e6, f64::from(psn_forward_distance(psn, first)));
    charts::psn_graph(&PsnGraph {
        sent: trace.sent.iter().map(|q| at(q.ts_ns, q.psn)).collect(),
        resent: trace.resent.iter().map(|q| at(q.ts_ns, q.psn)).collect(),
        gaps: Vec::new(),
        naks: trace.naks.iter().map(|e| at(e.ts_ns, e.psn)).collect(),
    })
}

pub fn section(uet: Option<&UetReport>, a: &ChartData, t0: i64) -> Markup {
    let Some(uet) = uet else { return html! {} };
    let graphed: Vec<&PdcReport> =
        uet.pdcs.iter().filter(|p| p.requests > 0 && p.spdcid.is_some()).take(GRAPHS_SHOWN).collect();
    let crc = &uet.crc;
    html! {
        h2 id="uet" { "Ultra Ethernet Transport" }
        p {
            (uet.packets) " packets; CRC32C " (crc.ok) " ok, " (crc.bad) " bad, " (crc.unchecked) " unchecked"
            @if let Some(v) = crc.variant { " (reading " (v) ")" }
            @if uet.encrypted > 0 { "; " (uet.encrypted) " encrypted" }
        }
        // nine columns that fit the page, their headers wrapped; a narrow window scrolls the
        // table alone
        div.wide {
            table.pdcs {
                tr {
                    th.l { "PDC: initiator → target, SPDCID / DPDCID, mode" } th { "requests / ACKs" }
                    th { "out of order" } th { "resent" } th { "missing / lost before tap / capture missed" }
                    th { "trimmed" } th.l { "NACKs" }
                    th { "CE / echoed; marks not echoed / echoes without a mark" } th { "PSNs per ACK p50 / max" }
                }
                @for p in uet.pdcs.iter().take(PDCS_SHOWN) {
                    tr {
                        td.l {
                            (p.initiator) " → " (p.target) br;
                            span.muted { (number(p.spdcid)) " / " (number(p.dpdcid)) " " (p.mode.unwrap_or("?")) @if p.cc { " CC" } }
                        }
                        td { (p.requests) " / " (p.acks) } td { (p.out_of_order) } td { (p.retransmitted) }
                        td { (p.missing) " / " (p.lost_before_tap) " / " (p.capture_missed) } td { (p.trimmed) }
                        td.l { @for (code, n) in &p.nacks { (code) " " (n) br; } }
                        td { (p.ecn_ce) " / " (p.ecn_echoed) "; " (p.ecn_marks_not_echoed) " / " (p.ecn_echoes_without_mark) }
                        td { (number(p.ack_psns_p50)) " / " (number(p.ack_psns_max)) }
                    }
                }
            }
        }
        div.grid {
            @for (i, p) in graphed.iter().enumerate() {
                (figure(&format!("chart-pdc-{i}"), &format!("PDC {} → {} {}: PSN over time (NACKs marked)", p.initiator, p.target, number(p.spdcid)), graph(a, p, t0), "no requests"))
            }
        }
    }
}
