//! The checks of congestion control: ECN marking on the RoCE priority (QOS_ECN_OFF), its
//! thresholds (QOS_ECN_THRESHOLDS) and the CNPs' own class (QOS_CNP_CLASS).

use std::collections::BTreeMap;

use super::rules::{CNP_CLASS, ECN_OFF, ECN_THRESHOLDS};
use super::{Fabric, Finding, Mismatch, listed};
use crate::analyze::fabric::devices::Device;
use crate::analyze::fabric::model::{At, EcnMarking, Read};
use crate::analyze::fabric::policy::has_pfc;

/// The lowest minimum threshold accepted: 32 KB (32 × 1024 bytes).
const LOWEST_MIN_BYTES: u64 = 32 * 1024;
/// The highest maximum threshold accepted: 16 MB (16 × 1024 × 1024 bytes).
const HIGHEST_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// QOS_ECN_OFF: per DSCP the configurations give RoCE data, the switches with no ECN marking on the priority it maps to,
/// and the hosts whose notification or reaction point is off for it.
pub(super) fn ecn_off(fabric: &Fabric) -> Vec<Mismatch> {
    let mut found = Vec::new();
    for (dscp, first_frame) in fabric.configured_dscps() {
        let faults: Vec<(&Device, Unmarked)> = fabric
            .devices
            .iter()
            .filter_map(|device| {
                let unmarked = if device.is_switch() {
                    switch_without_marking(device, dscp)
                } else {
                    host_without_points(fabric, device, dscp)
                };
                Some((device, unmarked?))
            })
            .collect();
        if faults.is_empty() {
            continue;
        }
        let where_off: Vec<String> = faults
            .iter()
            .map(|(device, off)| format!("{} (priority {}: {})", device.name, off.priority, off.what))
            .collect();
        let message = format!("RoCE DSCP {dscp} gets no ECN marking on {}", where_off.join(", "));
        let finding = faults.iter().fold(Finding::new(&ECN_OFF, message), |finding, (device, off)| {
            finding.blame(&device.name, off.lines.iter().copied())
        });
        found.push(finding.with_frame(first_frame).done());
    }
    found
}

/// A device's priority for a DSCP that gets no ECN marking: what is off, and its lines.
struct Unmarked<'a> {
    priority: u8,
    what: String,
    lines: Vec<&'a At>,
}

/// A switch that maps `dscp` to a priority with no ECN marking: the marking turned off, at its
/// line; or no marking at all, at the section that should hold it, else at the line that maps
/// the DSCP there.
fn switch_without_marking(switch: &Device, dscp: u8) -> Option<Unmarked<'_>> {
    let mapped = switch.config.dscp_to_priority.get(&dscp)?;
    let priority = mapped.value;
    match switch.config.ecn.iter().find(|marking| marking.priority == priority) {
        Some(marking) if marking.enabled => None,
        Some(marking) => Some(Unmarked { priority, what: "marking off".into(), lines: vec![&marking.at] }),
        None => {
            let line = switch.config.sections.get("ecn").unwrap_or(&mapped.at);
            Some(Unmarked { priority, what: "no marking configured".into(), lines: vec![line] })
        }
    }
}

/// A host whose notification (`roce_np`) or reaction (`roce_rp`) point is off for the priority
/// `dscp` maps to (its own map, else the fabric's), at the lines that turn them off.
fn host_without_points<'a>(fabric: &Fabric, host: &'a Device, dscp: u8) -> Option<Unmarked<'a>> {
    let priority =
        host.config.dscp_to_priority.get(&dscp).map(|read| read.value).or_else(|| fabric.priority_of(dscp))?;
    let off = |points: &'a BTreeMap<u8, Read<bool>>, name: &'static str| {
        points.get(&priority).filter(|point| !point.value).map(|point| (name, &point.at))
    };
    let offs: Vec<(&str, &At)> = [
        off(&host.config.notification_point, "notification point off"),
        off(&host.config.reaction_point, "reaction point off"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if offs.is_empty() {
        return None;
    }
    let what: Vec<&str> = offs.iter().map(|(name, _)| *name).collect();
    Some(Unmarked { priority, what: what.join(", "), lines: offs.into_iter().map(|(_, at)| at).collect() })
}

/// What is wrong with a marking's thresholds, if anything.
fn threshold_problems(marking: &EcnMarking) -> Vec<String> {
    let mut problems = Vec::new();
    if let (Some(min), Some(max)) = (marking.min_bytes, marking.max_bytes)
        && min >= max
    {
        problems.push(format!("minimum {min} bytes not below maximum {max} bytes"));
    }
    if marking.probability == Some(0) {
        problems.push("mark probability 0".to_string());
    }
    if let Some(min) = marking.min_bytes.filter(|min| *min < LOWEST_MIN_BYTES) {
        problems.push(format!("minimum {min} bytes below 32 KB"));
    }
    if let Some(max) = marking.max_bytes.filter(|max| *max > HIGHEST_MAX_BYTES) {
        problems.push(format!("maximum {max} bytes above 16 MB"));
    }
    problems
}

/// QOS_ECN_THRESHOLDS: each switch with a marking priority whose thresholds are wrong.
pub(super) fn ecn_thresholds(fabric: &Fabric) -> Vec<Mismatch> {
    fabric
        .switches()
        .filter_map(|switch| {
            // Each problem, with the priorities it is found on and the lines it is read at.
            let mut problems: BTreeMap<String, (Vec<u8>, Vec<&At>)> = BTreeMap::new();
            for marking in switch.config.ecn.iter().filter(|marking| marking.enabled) {
                for problem in threshold_problems(marking) {
                    let (found_on, lines) = problems.entry(problem).or_default();
                    found_on.push(marking.priority);
                    lines.push(&marking.at);
                }
            }
            if problems.is_empty() {
                return None;
            }
            let listed: Vec<String> = problems
                .iter()
                .map(|(problem, (found_on, _))| format!("{problem} (priorities {})", listed(found_on)))
                .collect();
            let message = format!("{}: ECN thresholds: {}", switch.name, listed.join("; "));
            let lines = problems.values().flat_map(|(_, lines)| lines.iter().copied());
            Some(Finding::new(&ECN_THRESHOLDS, message).blame(&switch.name, lines).done())
        })
        .collect()
}

/// QOS_CNP_CLASS: each switch that maps the CNP DSCP to a PFC-enabled priority or to the data's
/// priority; and each sending host whose CNPs in the capture carry another DSCP than its NIC is
/// set to (hosts not named, or whose NIC setting was not given, are not judged).
pub(super) fn cnp_class(fabric: &Fabric) -> Vec<Mismatch> {
    let mut found: Vec<Mismatch> = fabric.switches().filter_map(|switch| switch_cnp_class(fabric, switch)).collect();
    found.extend(captured_cnps(fabric));
    found
}

fn switch_cnp_class(fabric: &Fabric, switch: &Device) -> Option<Mismatch> {
    let (cnp_dscp, data_dscp) = (fabric.policy.cnp_dscp, fabric.policy.data_dscp);
    let cnp = switch.config.dscp_to_priority.get(&cnp_dscp)?;
    let mut reasons = Vec::new();
    let mut lines = vec![&cnp.at];
    if has_pfc(switch, cnp.value) {
        reasons.push("a priority with PFC on".to_string());
        lines.extend(switch.config.pfc_priorities.as_ref().map(|pfc| &pfc.at));
    }
    if let Some(data) = switch.config.dscp_to_priority.get(&data_dscp).filter(|data| data.value == cnp.value) {
        reasons.push(format!("the priority of the data's DSCP {data_dscp}"));
        lines.push(&data.at);
    }
    if reasons.is_empty() {
        return None;
    }
    let message =
        format!("{}: CNP DSCP {cnp_dscp} maps to priority {}, {}", switch.name, cnp.value, reasons.join(" and "));
    Some(Finding::new(&CNP_CLASS, message).blame(&switch.name, lines).done())
}

/// Per sending host, the first CNPs the capture shows on a DSCP other than its NIC's setting.
fn captured_cnps(fabric: &Fabric) -> Vec<Mismatch> {
    let mut first_wrong: BTreeMap<&str, (u8, u64, &Read<u8>)> = BTreeMap::new();
    for seen in fabric.seen.map(|seen| seen.cnps.as_slice()).unwrap_or_default() {
        let Some(host) = fabric.device(&seen.sender).filter(|device| device.is_host()) else { continue };
        let Some(set) = host.config.cnp_dscp.as_ref().filter(|set| set.value != seen.dscp) else { continue };
        let entry = first_wrong.entry(seen.sender.as_str()).or_insert((seen.dscp, seen.first_frame, set));
        if seen.first_frame < entry.1 {
            *entry = (seen.dscp, seen.first_frame, set);
        }
    }
    first_wrong
        .into_iter()
        .map(|(sender, (dscp, first_frame, set))| {
            let message = format!("{sender}'s CNPs carry DSCP {dscp} in the capture, its NIC is set to {}", set.value);
            Finding::new(&CNP_CLASS, message).blame(sender, [&set.at]).with_frame(Some(first_frame)).done()
        })
        .collect()
}
