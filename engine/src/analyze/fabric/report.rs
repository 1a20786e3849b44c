//! The fabric section of the report: each device's model and files, and the policy with its
//! sources. Values a device's files do not give are `null`; `nccl_tc`, `nccl_gid_index`,
//! `nccl_gid`, `notification_priorities` and `reaction_priorities` are a host's only.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analyze::fabric::checks::Mismatch;
use crate::analyze::fabric::devices::Device;
use crate::analyze::fabric::model::{DeviceKind, Read, Trust};
use crate::analyze::fabric::policy::FabricPolicy;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FabricReport {
    pub devices: Vec<DeviceReport>,
    pub policy: FabricPolicy,
    /// What the checks found, in the order of their rules; each is also a finding.
    pub checks: Vec<Mismatch>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceReport {
    pub name: String,
    /// `host` or `switch`.
    pub kind: &'static str,
    pub files: Vec<FileReport>,
    /// Whether the files name any QoS; `note` says what a device not configured runs.
    pub configured: bool,
    pub note: Option<String>,
    /// `dscp` or `pcp`.
    pub trust: Option<&'static str>,
    /// DSCP (a decimal string in JSON) → priority, in DSCP order.
    pub dscp_to_priority: BTreeMap<u8, u8>,
    pub pfc_priorities: Option<Vec<u8>>,
    pub ecn: Vec<EcnReport>,
    pub cnp_dscp: Option<u8>,
    pub cnp_priority: Option<u8>,
    pub mtu: Option<u32>,
    pub pfc_watchdog: Option<bool>,
    #[serde(flatten)]
    pub host: Option<HostReport>,
}

/// What only a host has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostReport {
    pub nccl_tc: Option<u8>,
    pub nccl_gid_index: Option<u32>,
    /// The `show_gids` entry `nccl_gid_index` names (the first, where several ports list it).
    pub nccl_gid: Option<GidReport>,
    /// The priorities with the DCQCN notification point (`roce_np`) on, and the reaction point
    /// (`roce_rp`); `null` where the ECN sysfs was not given.
    pub notification_priorities: Option<Vec<u8>>,
    pub reaction_priorities: Option<Vec<u8>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GidReport {
    pub device: String,
    pub port: u32,
    pub index: u32,
    pub gid: String,
    pub address: Option<String>,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    pub file: String,
    pub format: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EcnReport {
    pub priority: u8,
    pub enabled: bool,
    pub min_bytes: Option<u64>,
    pub max_bytes: Option<u64>,
    /// Percent.
    pub probability: Option<u8>,
}

/// The report of the devices read, the policy derived from them and what the checks found.
pub fn fabric_report(devices: &[Device], policy: &FabricPolicy, checks: Vec<Mismatch>) -> FabricReport {
    FabricReport { devices: devices.iter().map(device_report).collect(), policy: policy.clone(), checks }
}

fn value<T: Clone>(read: &Option<Read<T>>) -> Option<T> {
    read.as_ref().map(|read| read.value.clone())
}

fn device_report(device: &Device) -> DeviceReport {
    let config = &device.config;
    DeviceReport {
        name: device.name.clone(),
        kind: match device.kind {
            DeviceKind::Host => "host",
            DeviceKind::Switch => "switch",
        },
        files: device.files.iter().map(|read| FileReport { file: read.file.clone(), format: read.format }).collect(),
        configured: device.configured,
        note: device.note.clone(),
        trust: config.trust.as_ref().map(|trust| match trust.value {
            Trust::Dscp => "dscp",
            Trust::Pcp => "pcp",
        }),
        dscp_to_priority: config.dscp_to_priority.iter().map(|(dscp, priority)| (*dscp, priority.value)).collect(),
        pfc_priorities: value(&config.pfc_priorities),
        ecn: config
            .ecn
            .iter()
            .map(|marking| EcnReport {
                priority: marking.priority,
                enabled: marking.enabled,
                min_bytes: marking.min_bytes,
                max_bytes: marking.max_bytes,
                probability: marking.probability,
            })
            .collect(),
        cnp_dscp: value(&config.cnp_dscp),
        cnp_priority: value(&config.cnp_priority),
        mtu: value(&config.mtu),
        pfc_watchdog: value(&config.pfc_watchdog),
        host: device.is_host().then(|| host_report(device)),
    }
}

fn host_report(host: &Device) -> HostReport {
    let config = &host.config;
    let index = value(&config.nccl_gid_index);
    let on = |points: &BTreeMap<u8, Read<bool>>| {
        (!points.is_empty()).then(|| points.iter().filter(|(_, on)| on.value).map(|(priority, _)| *priority).collect())
    };
    HostReport {
        nccl_tc: value(&config.nccl_tc),
        nccl_gid_index: index,
        nccl_gid: index.and_then(|index| config.gids.iter().find(|gid| gid.index == index)).map(|gid| GidReport {
            device: gid.device.clone(),
            port: gid.port,
            index: gid.index,
            gid: gid.gid.clone(),
            address: gid.address.clone(),
            version: gid.version.clone(),
        }),
        notification_priorities: on(&config.notification_point),
        reaction_priorities: on(&config.reaction_point),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::fabric::devices::read_devices;
    use crate::analyze::fabric::policy::fabric_policy;
    use crate::analyze::fabric::samples::{NVIDIA, SONIC_DEFAULT};
    use serde_json::json;

    fn report_json(samples: &[crate::analyze::fabric::samples::Sample]) -> serde_json::Value {
        let devices = read_devices(samples).unwrap();
        serde_json::to_value(fabric_report(&devices, &fabric_policy(&devices), Vec::new())).unwrap()
    }

    #[test]
    fn a_host_and_a_switch_with_the_pinned_keys() {
        let report = report_json(&NVIDIA);
        let host = &report["devices"][1];
        assert_eq!(host["name"], "10.0.0.2");
        assert_eq!(host["kind"], "host");
        assert_eq!(host["files"][1], json!({"file": "10.0.0.2-nccl.env", "format": "nccl_env"}));
        assert_eq!(host["dscp_to_priority"]["26"], 3);
        assert_eq!(host["dscp_to_priority"].as_object().unwrap().len(), 64);
        assert_eq!(host["pfc_priorities"], json!([3]));
        assert_eq!(host["ecn"], json!([]));
        assert_eq!((host["cnp_dscp"].clone(), host["cnp_priority"].clone()), (json!(48), json!(6)));
        assert_eq!((host["mtu"].clone(), host["nccl_tc"].clone()), (json!(9000), json!(106)));
        assert_eq!(host["nccl_gid_index"], 3);
        assert_eq!(host["nccl_gid"]["address"], "10.0.0.2");
        assert_eq!(host["notification_priorities"], json!([3]));
        assert_eq!(host["pfc_watchdog"], json!(null));
        assert_eq!(host["trust"], "dscp");
        let switch = &report["devices"][3];
        assert_eq!(switch["kind"], "switch");
        assert_eq!(switch["dscp_to_priority"], json!({"26": 3, "48": 6}));
        assert_eq!(
            switch["ecn"][0],
            json!({"priority": 3, "enabled": true, "min_bytes": 153600, "max_bytes": 1536000, "probability": 100})
        );
        assert_eq!((switch["mtu"].clone(), switch["pfc_watchdog"].clone()), (json!(9214), json!(true)));
        assert!(switch.get("nccl_tc").is_none());
        assert_eq!(switch["configured"], true);
        assert_eq!(switch["note"], json!(null));
    }

    #[test]
    fn the_policy_with_its_sources() {
        let report = report_json(&SONIC_DEFAULT);
        let policy = &report["policy"];
        assert_eq!(policy["data_dscp"], 3);
        assert_eq!(policy["lossless_priorities"], json!([3, 4]));
        assert!(policy["data_dscp_source"].as_str().unwrap().starts_with("10.1.0.1.txt:"));
        // Numeric DSCP order, not the strings' order.
        let devices = read_devices(&SONIC_DEFAULT).unwrap();
        let text = serde_json::to_string(&fabric_report(&devices, &fabric_policy(&devices), Vec::new())).unwrap();
        assert!(text.contains(r#""dscp_to_priority":{"0":1,"3":3,"4":4,"8":0,"46":5,"48":6}"#), "{text}");
    }
}
