//! The policy a capture is judged by, derived from the devices' configurations, each value with
//! where it came from (`FILE:LINE`, or `"default"`: the marking policy's defaults, 26/48/6/[3]).
//!
//! - data DSCP: `NCCL_IB_TC` ÷ 4 of the hosts (the value most hosts give, ties to the first host
//!   named); else a DSCP the switches make lossless ([`lossless_dscps`]): DSCP 26 (the RoCE
//!   convention) where it is one of them, else the lowest of them;
//! - data priority: the priority the data DSCP maps to, most switches' map, else most hosts';
//! - CNP DSCP and priority: the NICs' (`cnp_dscp`, `cnp_802p_prio` / `CNP_DSCP_P1`,
//!   `CNP_802P_PRIO_P1`), most hosts' value;
//! - lossless priorities: the switches' PFC priorities, most switches' value; with no switch
//!   that says, most hosts' (the NICs' PFC vector).
//!
//! Where devices disagree the policy takes the most given value, ties to the first device
//! named (the mismatch findings then name the others).

use std::collections::BTreeSet;

use serde::Serialize;

use crate::analyze::fabric::devices::Device;
use crate::analyze::fabric::model::Read;
use crate::analyze::roce::wide::policy::Policy;

/// The source of a value no configuration gave.
pub const DEFAULT_SOURCE: &str = "default";

/// DSCP 26: the RoCE data DSCP by convention, preferred among several lossless DSCPs.
const CONVENTIONAL_DATA_DSCP: u8 = 26;

/// The expected marking, each value with its source (`FILE:LINE` or [`DEFAULT_SOURCE`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FabricPolicy {
    pub data_dscp: u8,
    pub data_dscp_source: String,
    /// The priority the data DSCP maps to: most switches' map, else most hosts'.
    pub data_priority: Option<u8>,
    pub data_priority_source: String,
    pub cnp_dscp: u8,
    pub cnp_dscp_source: String,
    pub cnp_priority: u8,
    pub cnp_priority_source: String,
    /// Sorted.
    pub lossless_priorities: Vec<u8>,
    pub lossless_priorities_source: String,
}

impl FabricPolicy {
    /// Sets in `policy` (the marking a capture is judged by) each value the configurations
    /// gave: the data and CNP DSCPs, the CNPs' priority, and as the lossless priority and the
    /// data's the priority the data DSCP maps to where it is lossless, else the lowest lossless
    /// one.
    pub fn apply_to(&self, policy: &mut Policy) {
        let given = |source: &String| source != DEFAULT_SOURCE;
        if given(&self.data_dscp_source) {
            policy.data_dscp = self.data_dscp;
        }
        if given(&self.cnp_dscp_source) {
            policy.cnp_dscp = self.cnp_dscp;
        }
        if given(&self.cnp_priority_source) {
            policy.cnp_pcp = self.cnp_priority;
        }
        if given(&self.lossless_priorities_source) {
            let of_data = self.data_priority.filter(|p| self.lossless_priorities.contains(p));
            if let Some(lossless) = of_data.or(self.lossless_priorities.first().copied()) {
                (policy.lossless_priority, policy.data_pcp) = (lossless, lossless);
            }
        }
    }
}

/// The policy the devices' configurations give (see the module's documentation).
pub fn fabric_policy(devices: &[Device]) -> FabricPolicy {
    let defaults = Policy::default();
    let hosts = || devices.iter().filter(|device| device.is_host());
    let switches = || devices.iter().filter(|device| device.is_switch());
    let (data_dscp, data_dscp_source) = data_dscp(devices).unwrap_or((defaults.data_dscp, DEFAULT_SOURCE.into()));
    let (cnp_dscp, cnp_dscp_source) = sourced(most_given(hosts().filter_map(|host| host.config.cnp_dscp.as_ref())))
        .unwrap_or((defaults.cnp_dscp, DEFAULT_SOURCE.into()));
    let (cnp_priority, cnp_priority_source) =
        sourced(most_given(hosts().filter_map(|host| host.config.cnp_priority.as_ref())))
            .unwrap_or((defaults.cnp_pcp, DEFAULT_SOURCE.into()));
    let (lossless_priorities, lossless_priorities_source) = sourced(most_given(switches().filter_map(pfc_of)))
        .or_else(|| sourced(most_given(hosts().filter_map(pfc_of))))
        .unwrap_or((vec![defaults.lossless_priority], DEFAULT_SOURCE.into()));
    let data_priority = most_given(switches().filter_map(|switch| switch.config.dscp_to_priority.get(&data_dscp)))
        .or_else(|| most_given(hosts().filter_map(|host| host.config.dscp_to_priority.get(&data_dscp))));
    let (data_priority, data_priority_source) = match sourced(data_priority) {
        Some((priority, source)) => (Some(priority), source),
        None => (None, DEFAULT_SOURCE.into()),
    };
    FabricPolicy {
        data_dscp,
        data_dscp_source,
        data_priority,
        data_priority_source,
        cnp_dscp,
        cnp_dscp_source,
        cnp_priority,
        cnp_priority_source,
        lossless_priorities,
        lossless_priorities_source,
    }
}

/// The value most of `reads` give, ties to the first of them; the first read of that value.
pub fn most_given<'a, T: PartialEq + 'a>(reads: impl IntoIterator<Item = &'a Read<T>>) -> Option<&'a Read<T>> {
    let reads: Vec<&Read<T>> = reads.into_iter().collect();
    let count = |read: &Read<T>| reads.iter().filter(|other| other.value == read.value).count();
    let mut best: Option<(&Read<T>, usize)> = None;
    for read in &reads {
        let times = count(read);
        if best.is_none_or(|(_, most)| times > most) {
            best = Some((read, times));
        }
    }
    best.map(|(read, _)| read)
}

/// A read's value and its `FILE:LINE`.
fn sourced<T: Clone>(read: Option<&Read<T>>) -> Option<(T, String)> {
    read.map(|read| (read.value.clone(), read.at.to_string()))
}

/// The data DSCP: the hosts' `NCCL_IB_TC` ÷ 4, else a lossless DSCP of the switches.
fn data_dscp(devices: &[Device]) -> Option<(u8, String)> {
    let tcs: Vec<Read<u8>> = devices
        .iter()
        .filter(|device| device.is_host())
        .filter_map(|host| host.config.nccl_tc.as_ref())
        .map(|tc| Read { value: tc.value >> 2, at: tc.at.clone() })
        .collect();
    if let Some(found) = sourced(most_given(&tcs)) {
        return Some(found);
    }
    let lossless = lossless_dscps(devices);
    let dscp = if lossless.contains(&CONVENTIONAL_DATA_DSCP) { CONVENTIONAL_DATA_DSCP } else { *lossless.first()? };
    let first_map = devices.iter().filter(|device| device.is_switch()).find_map(|switch| {
        let read = switch.config.dscp_to_priority.get(&dscp)?;
        Some(read.at.to_string())
    })?;
    Some((dscp, first_map))
}

/// The DSCPs the switches make lossless: a DSCP is lossless when at least one switch classifies
/// it and every switch that classifies it maps it to a priority with PFC on. (A DSCP no
/// switch's configuration classifies goes to the switches' default class: not lossless.)
pub fn lossless_dscps(devices: &[Device]) -> BTreeSet<u8> {
    let switches: Vec<&Device> = devices.iter().filter(|device| device.is_switch()).collect();
    (0..=63u8)
        .filter(|dscp| {
            let mut classifying = switches.iter().filter_map(|switch| {
                let priority = switch.config.dscp_to_priority.get(dscp)?.value;
                Some((switch, priority))
            });
            let mut any = false;
            let all_lossless = classifying.all(|(switch, priority)| {
                any = true;
                has_pfc(switch, priority)
            });
            any && all_lossless
        })
        .collect()
}

/// A device's PFC priorities, where its files give them.
pub fn pfc_of(device: &Device) -> Option<&Read<Vec<u8>>> {
    device.config.pfc_priorities.as_ref()
}

/// Whether PFC is on for `priority` on `device`.
pub fn has_pfc(device: &Device, priority: u8) -> bool {
    pfc_of(device).is_some_and(|pfc| pfc.value.contains(&priority))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::fabric::devices::read_devices;
    use crate::analyze::fabric::samples::{NVIDIA, SONIC_DEFAULT, Sample, devices_of, edit, line_is, line_of};

    fn policy_of(samples: &[Sample]) -> FabricPolicy {
        fabric_policy(&read_devices(samples).unwrap())
    }

    #[test]
    fn nvidia_fabric_policy_and_its_sources() {
        let policy = policy_of(&NVIDIA);
        let source = |file, needle| line_of(&NVIDIA, file, needle);
        assert_eq!(
            policy,
            FabricPolicy {
                data_dscp: 26,
                data_dscp_source: source("10.0.0.1.txt", "NCCL_IB_TC=106"),
                // The sysfs listing comes after mlxconfig in the pasted file: its line is kept.
                data_priority: Some(3),
                data_priority_source: source("leaf1-nv.yaml", "26:"),
                cnp_dscp: 48,
                cnp_dscp_source: source("10.0.0.1.txt", "roce_np/cnp_dscp:48"),
                cnp_priority: 6,
                cnp_priority_source: source("10.0.0.1.txt", "roce_np/cnp_802p_prio:6"),
                lossless_priorities: vec![3],
                lossless_priorities_source: line_is(&NVIDIA, "leaf1-nv.yaml", "switch-priority:"),
            }
        );
    }

    #[test]
    fn the_configurations_values_set_the_marking_policy_and_the_defaults_stay() {
        let mut policy = Policy { data_dscp: 24, cnp_dscp: 46, ..Policy::default() };
        policy_of(&SONIC_DEFAULT).apply_to(&mut policy);
        assert_eq!((policy.data_dscp, policy.cnp_dscp, policy.cnp_pcp), (3, 48, 6));
        assert_eq!((policy.lossless_priority, policy.data_pcp), (3, 3));
        let mut unchanged = Policy { data_dscp: 24, ..Policy::default() };
        fabric_policy(&[]).apply_to(&mut unchanged);
        assert_eq!(unchanged, Policy { data_dscp: 24, ..Policy::default() });
    }

    #[test]
    fn sonic_default_fabric_policy() {
        let policy = policy_of(&SONIC_DEFAULT);
        assert_eq!((policy.data_dscp, policy.cnp_dscp, policy.cnp_priority), (3, 48, 6));
        assert_eq!(policy.lossless_priorities, [3, 4]);
        assert_eq!(policy.data_priority, Some(3));
        assert_eq!(policy.data_dscp_source, line_of(&SONIC_DEFAULT, "10.1.0.1.txt", "NCCL_IB_TC=12"));
        let pfc = line_of(&SONIC_DEFAULT, "leaf1-config_db.json", "\"pfc_enable\"");
        assert_eq!(policy.lossless_priorities_source, pfc);
    }

    #[test]
    fn without_nccl_the_data_dscp_is_the_switches_lossless_one() {
        let files = edit(
            &NVIDIA,
            &[("10.0.0.1.txt", "export NCCL_IB_TC=106\n", ""), ("10.0.0.2-nccl.env", "NCCL_IB_TC=106\n", "")],
        );
        let policy = fabric_policy(&devices_of(&files).unwrap());
        assert_eq!(policy.data_dscp, 26);
        // The first switch named that classifies it: leaf1's mapping.
        assert_eq!(policy.data_dscp_source, line_of(&NVIDIA, "leaf1-nv.yaml", "26:"));
        // SONiC's default makes DSCP 3 and 4 lossless: the lowest is taken.
        let files =
            edit(&SONIC_DEFAULT, &[("10.1.0.1.txt", "NCCL_IB_TC=12\n", ""), ("10.1.0.2.txt", "NCCL_IB_TC=12\n", "")]);
        let policy = fabric_policy(&devices_of(&files).unwrap());
        assert_eq!(policy.data_dscp, 3);
        assert_eq!(policy.data_dscp_source, line_of(&SONIC_DEFAULT, "leaf1-config_db.json", "\"3\" : \"3\""));
    }

    #[test]
    fn nothing_configured_gives_the_defaults() {
        let policy = fabric_policy(&[]);
        assert_eq!((policy.data_dscp, policy.cnp_dscp, policy.cnp_priority), (26, 48, 6));
        assert_eq!(policy.lossless_priorities, [3]);
        for source in [
            &policy.data_dscp_source,
            &policy.cnp_dscp_source,
            &policy.cnp_priority_source,
            &policy.lossless_priorities_source,
        ] {
            assert_eq!(source, DEFAULT_SOURCE);
        }
    }

    #[test]
    fn disagreeing_devices_give_the_most_given_value_ties_to_the_first() {
        let pfc_3 = |file| [(file, "\"pfc_enable\"      : \"3,4\"", "\"pfc_enable\"      : \"3\"")];
        // One switch of two disagrees: a tie, the first switch named (leaf1) wins.
        let policy = fabric_policy(&devices_of(&edit(&SONIC_DEFAULT, &pfc_3("leaf2-config_db.json"))).unwrap());
        assert_eq!(policy.lossless_priorities, [3, 4]);
        let policy = fabric_policy(&devices_of(&edit(&SONIC_DEFAULT, &pfc_3("leaf1-config_db.json"))).unwrap());
        assert_eq!(policy.lossless_priorities, [3]);
        // Hosts: the first host's CNP DSCP wins a tie.
        let files = edit(&NVIDIA, &[("10.0.0.1.txt", "roce_np/cnp_dscp:48", "roce_np/cnp_dscp:46")]);
        let policy = fabric_policy(&devices_of(&files).unwrap());
        assert_eq!(policy.cnp_dscp, 46);
    }

    #[test]
    fn most_given_counts_and_breaks_ties_by_order() {
        let read = |value: u8, line| Read { value, at: crate::analyze::fabric::model::At { file: "f".into(), line } };
        let reads = [read(1, 1), read(2, 2), read(2, 3), read(1, 4), read(3, 5)];
        assert_eq!(most_given(&reads).map(|read| read.at.line), Some(1));
        let reads = [read(1, 1), read(2, 2), read(2, 3)];
        assert_eq!(most_given(&reads).map(|read| read.at.line), Some(2));
        assert!(most_given::<u8>(&[]).is_none());
    }
}
