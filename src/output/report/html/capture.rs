//! The page's header facts: duration, frames by kind (UET and RoCE), ICRC, ECN, DSCP,
//! encapsulations and damage.

use maud::{Markup, html};

use super::{ms, percent};
use crate::analyze::report::Report;

pub(super) fn facts(r: &Report) -> Markup {
    let t = &r.roce.totals;
    let damaged: Vec<String> = r
        .roce
        .inputs
        .iter()
        .filter_map(|i| {
            i.damage.as_ref().map(|d| format!("{} at byte {}: {}", i.file, d.offset.unwrap_or(0), d.message))
        })
        .collect();
    // UET packets are non-RoCE frames, shown on their own line
    let uet = r.uet.as_ref().map_or(0, |u| u.packets);
    // a UET capture without RoCE leaves out the RoCE lines, all zeros
    let roce = uet == 0 || t.roce_packets + t.infiniband > 0;
    let encaps: Vec<String> = r.roce.capture.encapsulations.iter().map(|(k, v)| format!("{k} {v}")).collect();
    html! {
        dl.facts {
            dt { "Duration" } dd { (ms(r.roce.capture.duration_ns)) }
            dt { "Frames" } dd { (t.frames) " frames, " (t.bytes) " bytes" }
            @if let Some(u) = r.uet.as_ref() {
                @let pdcs = u.pdcs.iter().filter(|p| p.is_pdc()).count();
                dt { "UET" } dd {
                    (u.packets) " packets (" (percent(u.packets, t.frames)) "); " (pdcs) @if pdcs == 1 { " PDC" } @else { " PDCs" } "; CRC32C "
                    (u.crc.ok) " ok, " strong { (u.crc.bad) " bad" } ", " (u.crc.unchecked) " unchecked: "
                    a href="#uet" { "the UET section" }
                }
            }
            @if roce {
                dt { "RoCE" } dd { (t.roce_packets) " packets (" (percent(t.roce_packets, t.frames)) "): v2 " (t.roce_v2) ", v1 " (t.roce_v1) ", native InfiniBand " (t.infiniband) "; " (r.roce.flows.len()) " flows" }
            }
            dt { "Other frames" } dd { "PFC " (t.pfc_frames) ", PAUSE " (t.pause_frames) ", other " (t.non_roce.saturating_sub(t.pfc_frames + t.pause_frames + uet)) ", malformed " (t.malformed) @if t.headers_cut > 0 { ", cut inside their headers " (t.headers_cut) } }
            @if roce {
                dt { "ICRC" } dd { (r.roce.icrc.ok) " ok, " strong { (r.roce.icrc.bad) " bad" } ", " (r.roce.icrc.unverifiable) " unverifiable" }
                dt { "ECN" } dd { (r.roce.ecn.ce) " CE-marked of " (t.roce_v2) " RoCEv2 packets" @if r.roce.ecn.outer_ce > 0 { " (and " (r.roce.ecn.outer_ce) " in a VXLAN overlay's outer header only)" } "; " (r.roce.cnps) " CNPs" }
            }
            @if t.infiniband + t.infiniband_link > 0 {
                dt { "InfiniBand" } dd {
                    (t.infiniband) " packets, " (t.infiniband_link) " link packets; VCRC " (r.roce.infiniband.vcrc_ok) " ok, "
                    strong { (r.roce.infiniband.vcrc_bad) " bad" } ", " (r.roce.infiniband.vcrc_unverifiable) " unverifiable; FECN "
                    (r.roce.infiniband.fecn) ", BECN " (r.roce.infiniband.becn) "; ERF records lost " (r.roce.infiniband.erf_records_lost)
                }
            }
            dt { "Capture quality" } dd {
                (r.roce.capture.snaplen_cut) " frames cut by the snap length, " (r.roce.capture.mirror_truncated) " truncated by a mirror, "
                (r.roce.capture.truncated_copies) " mirror copies cut with no mark, "
                (t.mirror_duplicates) " mirror duplicates, " (r.roce.capture.non_monotonic_timestamps) " timestamps going backwards"
                @if r.roce.limits.untracked_packets > 0 { ", " (r.roce.limits.untracked_packets) " packets beyond the flow limit" }
            }
            dt { "Encapsulations" } dd { @if encaps.is_empty() { "none" } @else { (encaps.join(", ")) } }
            @if !damaged.is_empty() {
                dt { "Damage" } dd { strong { (damaged.join("; ")) } " — analysed up to the damage" }
            }
        }
    }
}
