//! The checks of classification and PFC: where the RoCE DSCP lands (QOS_DSCP_MAP_MISMATCH,
//! QOS_LOSSY_ROCE, QOS_NCCL_TC), what devices classify by (QOS_TRUST_MODE), and which
//! priorities PFC protects (QOS_PFC_MISMATCH, QOS_PFC_WATCHDOG_OFF).

use std::collections::BTreeSet;

use super::rules::{DSCP_MAP_MISMATCH, LOSSY_ROCE, NCCL_TC, PFC_MISMATCH, PFC_WATCHDOG_OFF, TRUST_MODE};
use super::{Fabric, Finding, Mismatch, blame_each, devices_where, listed, mapping};
use crate::analyze::fabric::devices::Device;
use crate::analyze::fabric::model::{At, Read, Trust};
use crate::analyze::fabric::policy::{has_pfc, lossless_dscps, most_given, pfc_of};

/// QOS_DSCP_MAP_MISMATCH: per DSCP the configurations give RoCE data, the devices that map it to another priority than
/// the fabric's (most switches').
pub(super) fn dscp_map_mismatch(fabric: &Fabric) -> Vec<Mismatch> {
    let mut found = Vec::new();
    for (dscp, first_frame) in fabric.configured_dscps() {
        let Some(expected) = fabric.priority_of(dscp) else { continue };
        let faults = devices_where(fabric.devices, mapping(dscp), |_, priority| priority.value != expected);
        if faults.is_empty() {
            continue;
        }
        let others: Vec<String> =
            faults.iter().map(|(device, priority)| format!("{} to {}", device.name, priority.value)).collect();
        let message = format!("RoCE DSCP {dscp} maps to priority {expected} on most devices but {}", others.join(", "));
        found.push(blame_each(Finding::new(&DSCP_MAP_MISMATCH, message), &faults).with_frame(first_frame).done());
    }
    found
}

/// The line saying where PFC stands on a device: its PFC setting, else the section that should
/// have held it.
fn pfc_line(device: &Device) -> Option<&At> {
    pfc_of(device).map(|pfc| &pfc.at).or_else(|| device.config.sections.get("pfc"))
}

/// QOS_LOSSY_ROCE: per RoCE data DSCP, the devices that map it to a priority without PFC.
pub(super) fn lossy_roce(fabric: &Fabric) -> Vec<Mismatch> {
    let mut found = Vec::new();
    for (dscp, first_frame) in fabric.data_dscps() {
        let faults = devices_where(fabric.devices, mapping(dscp), |device, priority| !has_pfc(device, priority.value));
        if faults.is_empty() {
            continue;
        }
        let where_lossy: Vec<String> =
            faults.iter().map(|(device, priority)| format!("{} (priority {})", device.name, priority.value)).collect();
        let message =
            format!("DSCP {dscp} carries RoCE data but maps to a priority without PFC on {}", where_lossy.join(", "));
        let finding = faults.iter().fold(Finding::new(&LOSSY_ROCE, message), |finding, (device, priority)| {
            finding.blame(&device.name, [&priority.at].into_iter().chain(pfc_line(device)))
        });
        found.push(finding.with_frame(first_frame).done());
    }
    found
}

/// QOS_PFC_MISMATCH: the devices whose PFC differs from most switches' (else most hosts') on a
/// priority RoCE travels on (the priorities of the DSCPs the configurations give RoCE data;
/// every priority where none is known): SONiC's default PFC on 3 and 4 beside NICs with PFC on 3 alone, RoCE on 3, is no
/// mismatch.
pub(super) fn pfc_mismatch(fabric: &Fabric) -> Vec<Mismatch> {
    let switches: Vec<&Read<Vec<u8>>> = fabric.switches().filter_map(pfc_of).collect();
    let hosts: Vec<&Read<Vec<u8>>> = fabric.hosts().filter_map(pfc_of).collect();
    let Some(expected) = most_given(switches).or_else(|| most_given(hosts)) else { return Vec::new() };
    // PFC matters on the priorities RoCE travels on; without one known, on every priority
    let roce: BTreeSet<u8> = fabric.configured_dscps().keys().filter_map(|dscp| fabric.priority_of(*dscp)).collect();
    let on_roce =
        |pfc: &[u8]| -> Vec<u8> { pfc.iter().copied().filter(|p| roce.is_empty() || roce.contains(p)).collect() };
    let faults = devices_where(fabric.devices, pfc_of, |_, read| on_roce(&read.value) != on_roce(&expected.value));
    if faults.is_empty() {
        return Vec::new();
    }
    let others: Vec<String> =
        faults.iter().map(|(device, read)| format!("{} on {}", device.name, listed(&read.value))).collect();
    let message = format!(
        "PFC is on priorities {} on most devices but {} (RoCE travels on priorities {})",
        listed(&expected.value),
        others.join("; "),
        listed(&roce)
    );
    vec![blame_each(Finding::new(&PFC_MISMATCH, message), &faults).done()]
}

/// QOS_NCCL_TC: each host whose `NCCL_IB_TC` ÷ 4 is not a lossless DSCP of the switches (not
/// judged without a switch that classifies by DSCP).
pub(super) fn nccl_tc(fabric: &Fabric) -> Vec<Mismatch> {
    if fabric.switches().all(|switch| switch.config.dscp_to_priority.is_empty()) {
        return Vec::new();
    }
    let lossless = lossless_dscps(fabric.devices);
    fabric
        .hosts()
        .filter_map(|host| {
            let tc = host.config.nccl_tc.as_ref()?;
            let dscp = tc.value >> 2;
            if lossless.contains(&dscp) {
                return None;
            }
            let message = format!(
                "{}: NCCL_IB_TC={} marks DSCP {dscp}, which the switches do not make lossless (lossless DSCPs: {})",
                host.name,
                tc.value,
                listed(&lossless)
            );
            let first_frame = fabric.first_data_from(&host.name, dscp);
            Some(Finding::new(&NCCL_TC, message).blame(&host.name, [&tc.at]).with_frame(first_frame).done())
        })
        .collect()
}

fn trust_name(trust: Trust) -> &'static str {
    match trust {
        Trust::Dscp => "DSCP",
        Trust::Pcp => "PCP",
    }
}

fn trust(device: &Device) -> Option<&Read<Trust>> {
    device.config.trust.as_ref()
}

/// QOS_TRUST_MODE: the devices that classify by another field than most switches.
pub(super) fn trust_mode(fabric: &Fabric) -> Vec<Mismatch> {
    let Some(expected) = most_given(fabric.switches().filter_map(trust)) else { return Vec::new() };
    let faults = devices_where(fabric.devices, trust, |_, read| read.value != expected.value);
    if faults.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> =
        faults.iter().map(|(device, read)| format!("{} trusts {}", device.name, trust_name(read.value))).collect();
    let message = format!("most switches classify by {}, but {}", trust_name(expected.value), names.join(", "));
    vec![blame_each(Finding::new(&TRUST_MODE, message), &faults).done()]
}

/// QOS_PFC_WATCHDOG_OFF: each switch with PFC on some priority and no watchdog on.
pub(super) fn pfc_watchdog_off(fabric: &Fabric) -> Vec<Mismatch> {
    fabric
        .switches()
        .filter_map(|switch| {
            let pfc = pfc_of(switch).filter(|pfc| !pfc.value.is_empty())?;
            let watchdog = switch.config.pfc_watchdog.as_ref();
            if watchdog.is_some_and(|on| on.value) {
                return None;
            }
            let line = watchdog.map(|off| &off.at).or_else(|| switch.config.sections.get("pfc_watchdog"));
            let message = format!(
                "{} has PFC on priorities {} and no PFC watchdog {}",
                switch.name,
                listed(&pfc.value),
                if watchdog.is_some() { "(turned off)" } else { "configured" }
            );
            Some(Finding::new(&PFC_WATCHDOG_OFF, message).blame(&switch.name, line).done())
        })
        .collect()
}
