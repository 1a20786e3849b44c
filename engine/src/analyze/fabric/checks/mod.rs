//! The fabric's configuration checked against itself and against what a capture shows.
//!
//! Each check is one [`Rule`] ([`rules`]); a [`Mismatch`] names the devices at fault (sorted)
//! and the configuration lines it read (`FILE:LINE`, sorted and deduplicated); for something
//! missing, the line of the section that should have held it ([`DeviceConfig::sections`]), or
//! where a reader names no such section, the line that put the traffic in that priority. A
//! mismatch the capture proves carries the first frame that shows it.
//!
//! The RoCE data DSCPs checked are the policy's data DSCP, each host's `NCCL_IB_TC` ÷ 4 and
//! each DSCP data packets carry in the capture. The "fabric's priority" of a DSCP, where
//! devices disagree, is the one most switches map it to (ties to the first switch named), else
//! most hosts'. Devices not configured ([`Device::configured`]) hold no values and are not
//! judged.
//!
//! [`DeviceConfig::sections`]: crate::analyze::fabric::model::DeviceConfig::sections

mod classes;
mod congestion;
mod endpoints;
pub mod rules;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use rules::{RULES, Rule, rule};

use crate::analyze::finding::Severity;

use crate::analyze::fabric::devices::Device;
use crate::analyze::fabric::model::{At, Read};
use crate::analyze::fabric::policy::{FabricPolicy, most_given};

/// What the capture shows of the marking, as these checks take it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// The DSCPs RoCE data packets carry: one entry per sender and DSCP.
    pub data: Vec<SeenDscp>,
    /// The DSCPs CNPs carry: one entry per sending host and DSCP.
    pub cnps: Vec<SeenDscp>,
}

/// A DSCP packets of one sender carry, and the first frame (its number) that does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenDscp {
    pub dscp: u8,
    pub first_frame: u64,
    /// The sending host's address, as its device is named (`10.0.0.1`).
    pub sender: String,
}

/// One finding of the checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The NAMEs of the devices at fault, sorted.
    pub devices: Vec<String>,
    /// `FILE:LINE` of each configuration line read, sorted and deduplicated.
    pub config_lines: Vec<String>,
    /// The first frame of the capture that proves it.
    pub first_frame: Option<u64>,
}

/// A mismatch being built: the devices and lines it names, kept sorted and unique.
struct Finding {
    code: &'static str,
    severity: Severity,
    message: String,
    devices: BTreeSet<String>,
    lines: BTreeSet<(String, usize)>,
    first_frame: Option<u64>,
}

impl Finding {
    /// A finding of `rule`, with the rule's severity, naming no device yet.
    fn new(rule: &Rule, message: String) -> Finding {
        Finding {
            code: rule.kind.code,
            severity: rule.kind.severity,
            message,
            devices: BTreeSet::new(),
            lines: BTreeSet::new(),
            first_frame: None,
        }
    }

    /// Names a device at fault and the lines read of it.
    fn blame<'a>(mut self, device: &str, lines: impl IntoIterator<Item = &'a At>) -> Finding {
        self.devices.insert(device.to_string());
        self.lines.extend(lines.into_iter().map(|at| (at.file.clone(), at.line)));
        self
    }

    fn with_frame(mut self, first_frame: Option<u64>) -> Finding {
        self.first_frame = first_frame;
        self
    }

    fn with_severity(mut self, severity: Severity) -> Finding {
        self.severity = severity;
        self
    }

    fn done(self) -> Mismatch {
        Mismatch {
            code: self.code,
            severity: self.severity,
            message: self.message,
            devices: self.devices.into_iter().collect(),
            config_lines: self.lines.into_iter().map(|(file, line)| format!("{file}:{line}")).collect(),
            first_frame: self.first_frame,
        }
    }
}

/// Checks the devices against each other and the policy, and against the capture where
/// `seen` is given; the mismatches in the order of [`RULES`].
pub fn check(devices: &[Device], policy: &FabricPolicy, seen: Option<&Seen>) -> Vec<Mismatch> {
    let fabric = Fabric { devices, policy, seen };
    let checks: [fn(&Fabric) -> Vec<Mismatch>; 11] = [
        classes::dscp_map_mismatch,
        classes::lossy_roce,
        classes::pfc_mismatch,
        congestion::ecn_off,
        congestion::ecn_thresholds,
        congestion::cnp_class,
        classes::nccl_tc,
        endpoints::gid_index,
        classes::trust_mode,
        endpoints::mtu,
        classes::pfc_watchdog_off,
    ];
    checks.iter().flat_map(|check| check(&fabric)).collect()
}

/// What the checks look at.
struct Fabric<'a> {
    devices: &'a [Device],
    policy: &'a FabricPolicy,
    seen: Option<&'a Seen>,
}

impl<'a> Fabric<'a> {
    fn hosts(&self) -> impl Iterator<Item = &'a Device> + use<'a> {
        self.devices.iter().filter(|device| device.is_host())
    }

    fn switches(&self) -> impl Iterator<Item = &'a Device> + use<'a> {
        self.devices.iter().filter(|device| device.is_switch())
    }

    /// The RoCE data DSCPs (the policy's, the hosts' `NCCL_IB_TC` ÷ 4, the capture's), each
    /// with the first frame of data the capture shows carrying it.
    fn data_dscps(&self) -> BTreeMap<u8, Option<u64>> {
        let mut dscps = self.configured_dscps();
        for seen in self.seen.map(|seen| seen.data.as_slice()).unwrap_or_default() {
            let first = dscps.entry(seen.dscp).or_default();
            *first = Some(first.map_or(seen.first_frame, |frame| frame.min(seen.first_frame)));
        }
        dscps
    }

    /// The DSCPs the configurations mean RoCE data to carry (the policy's and the hosts'
    /// `NCCL_IB_TC` ÷ 4), each with the first frame of data the capture shows on it. A DSCP
    /// only the capture shows (a perftest without `--tclass`, an application on the default
    /// ToS) is judged by QOS_LOSSY_ROCE alone: the map, PFC and ECN checks are about the
    /// class the fabric gives RoCE.
    fn configured_dscps(&self) -> BTreeMap<u8, Option<u64>> {
        let mut dscps: BTreeMap<u8, Option<u64>> = BTreeMap::new();
        dscps.insert(self.policy.data_dscp, None);
        for host in self.hosts() {
            if let Some(tc) = &host.config.nccl_tc {
                dscps.insert(tc.value >> 2, None);
            }
        }
        for seen in self.seen.map(|seen| seen.data.as_slice()).unwrap_or_default() {
            if let Some(first) = dscps.get_mut(&seen.dscp) {
                *first = Some(first.map_or(seen.first_frame, |frame| frame.min(seen.first_frame)));
            }
        }
        dscps
    }

    /// The first frame of `sender`'s data packets on `dscp`, where the capture shows one.
    fn first_data_from(&self, sender: &str, dscp: u8) -> Option<u64> {
        let data = self.seen.map(|seen| seen.data.as_slice()).unwrap_or_default();
        data.iter().filter(|seen| seen.sender == sender && seen.dscp == dscp).map(|seen| seen.first_frame).min()
    }

    /// The priority most switches map `dscp` to (ties to the first named), else most hosts'.
    fn priority_of(&self, dscp: u8) -> Option<u8> {
        most_given(self.switches().filter_map(mapping(dscp)))
            .or_else(|| most_given(self.hosts().filter_map(mapping(dscp))))
            .map(|read| read.value)
    }

    /// The device named `name`.
    fn device(&self, name: &str) -> Option<&'a Device> {
        self.devices.iter().find(|device| device.name == name)
    }
}

/// A device's priority for `dscp`, where it classifies it.
fn mapping(dscp: u8) -> impl Fn(&Device) -> Option<&Read<u8>> {
    move |device| device.config.dscp_to_priority.get(&dscp)
}

/// Numbers (priorities, DSCPs) as a message or a table lists them: `3, 4` (`none` when empty).
pub fn listed<'a>(numbers: impl IntoIterator<Item = &'a u8>) -> String {
    let numbers: Vec<String> = numbers.into_iter().map(u8::to_string).collect();
    if numbers.is_empty() { "none".to_string() } else { numbers.join(", ") }
}

/// The devices that have a value (`value_of`) which `differs`, each with that value.
fn devices_where<'a, T>(
    devices: &'a [Device],
    value_of: impl Fn(&'a Device) -> Option<&'a Read<T>>,
    differs: impl Fn(&Device, &Read<T>) -> bool,
) -> Vec<(&'a Device, &'a Read<T>)> {
    devices
        .iter()
        .filter_map(|device| Some((device, value_of(device)?)))
        .filter(|(device, value)| differs(device, value))
        .collect()
}

/// `finding`, blaming each device of `faults` with the line of its value.
fn blame_each<T>(finding: Finding, faults: &[(&Device, &Read<T>)]) -> Finding {
    faults.iter().fold(finding, |finding, (device, value)| finding.blame(&device.name, [&value.at]))
}
