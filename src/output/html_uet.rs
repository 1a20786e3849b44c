//! The UET section of the HTML page: the CRC32C verdicts and a row per PDC (and per host pair's
//! RUDI or UUD packets) with what its PSNs, ACKs and NACKs came to.

use maud::{Markup, html};

use crate::analyze::report::uet::UetReport;

/// PDCs the page lists at most; the JSON report has every one.
const PDCS_SHOWN: usize = 200;

fn number(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

pub fn section(uet: Option<&UetReport>) -> Markup {
    let Some(uet) = uet else { return html! {} };
    let crc = &uet.crc;
    html! {
        h2 id="uet" { "Ultra Ethernet Transport" }
        p {
            (uet.packets) " packets; CRC32C " (crc.ok) " ok, " (crc.bad) " bad, " (crc.unchecked) " unchecked"
            @if let Some(v) = crc.variant { " (reading " (v) ")" }
            @if uet.encrypted > 0 { "; " (uet.encrypted) " encrypted" }
        }
        table {
            tr {
                th.l { "initiator → target" } th.l { "PDC" } th.l { "mode" } th { "requests" } th { "ACKs" }
                th { "out of order" } th { "resent" } th { "lost before tap" } th { "missing" } th { "capture missed" }
                th { "trimmed" } th.l { "NACKs" } th { "CE / echoed" } th { "PSNs per ACK p50 / max" }
            }
            @for p in uet.pdcs.iter().take(PDCS_SHOWN) {
                tr {
                    td.l { (p.initiator) " → " (p.target) }
                    td.l { (number(p.spdcid)) " / " (number(p.dpdcid)) }
                    td.l { (p.mode.unwrap_or("?")) @if p.cc { " CC" } }
                    td { (p.requests) } td { (p.acks) } td { (p.out_of_order) } td { (p.retransmitted) }
                    td { (p.lost_before_tap) } td { (p.missing) } td { (p.capture_missed) } td { (p.trimmed) }
                    td.l { @for (code, n) in &p.nacks { (code) " " (n) " " } }
                    td { (p.ecn_ce) " / " (p.ecn_echoed) }
                    td { (number(p.ack_psns_p50)) " / " (number(p.ack_psns_max)) }
                }
            }
        }
    }
}
