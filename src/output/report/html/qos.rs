//! The fabric's QoS configuration on the HTML page (`analyze --config`): the policy the
//! configurations give, with the line of each value, and a table of the devices by priority
//! (the DSCPs each priority carries, PFC, ECN thresholds, the CNPs' class); the devices a
//! check names are marked.

use std::collections::BTreeSet;

use maud::{Markup, html};

use super::counters::number;

use crate::analyze::fabric::checks::listed;
use crate::analyze::fabric::report::{DeviceReport, FabricReport};

const PRIORITIES: std::ops::RangeInclusive<u8> = 0..=7;

pub fn section(fabric: Option<&FabricReport>) -> Markup {
    let Some(fabric) = fabric else { return html! {} };
    let p = &fabric.policy;
    let named: BTreeSet<&str> = fabric.checks.iter().flat_map(|c| c.devices.iter().map(String::as_str)).collect();
    html! {
        h2 id="fabric-configuration" { "Fabric configuration" }
        dl {
            dt { "data DSCP" } dd { (p.data_dscp) " " span.muted { (p.data_dscp_source) } }
            dt { "data priority" } dd { (number(p.data_priority)) " " span.muted { (p.data_priority_source) } }
            dt { "CNP DSCP, priority" } dd { (p.cnp_dscp) ", " (p.cnp_priority) " " span.muted { (p.cnp_dscp_source) ", " (p.cnp_priority_source) } }
            dt { "lossless priorities" } dd { (listed(&p.lossless_priorities)) " " span.muted { (p.lossless_priorities_source) } }
        }
        table {
            tr {
                th.l { "device" } th.l { "kind" } th.l { "trust" } th { "MTU" }
                @for priority in PRIORITIES { th.l { "priority " (priority) } }
            }
            @for device in &fabric.devices {
                tr class=[named.contains(device.name.as_str()).then_some("trouble")] {
                    td.l { (device.name) } td.l { (device.kind) }
                    @if device.configured {
                        td.l { (device.trust.unwrap_or("–")) } td { (number(device.mtu)) }
                        @for priority in PRIORITIES { td.l { (cell(device, priority)) } }
                    } @else {
                        td.l colspan="10" { (device.note.as_deref().unwrap_or("no QoS configured")) }
                    }
                }
            }
        }
        p.muted { "Marked rows: devices a finding of the configuration names. A cell lists the DSCPs the device maps to the priority, PFC where it is on, the ECN thresholds in bytes and the CNPs' priority." }
    }
}

/// What `device` does with `priority`: its DSCPs, PFC, ECN marking, CNPs.
fn cell(device: &DeviceReport, priority: u8) -> Markup {
    let dscps: Vec<u8> = device.dscp_to_priority.iter().filter(|(_, p)| **p == priority).map(|(d, _)| *d).collect();
    let pfc = device.pfc_priorities.as_ref().is_some_and(|pfc| pfc.contains(&priority));
    let ecn = device.ecn.iter().find(|e| e.priority == priority && e.enabled);
    html! {
        @if !dscps.is_empty() { "DSCP " (listed(&dscps)) br; }
        @if pfc { strong { "PFC" } br; }
        @if let Some(e) = ecn { "ECN " (number(e.min_bytes)) "–" (number(e.max_bytes)) @if let Some(p) = e.probability { " " (p) "%" } br; }
        @if device.cnp_priority == Some(priority) { "CNPs" @if let Some(d) = device.cnp_dscp { " (DSCP " (d) ")" } }
    }
}
