//! The fabric's devices: the files given for each NAME (`NAME=FILE`, repeatable), each
//! recognised by its content as a host's tool output or a switch's configuration, read into
//! one [`DeviceConfig`] per NAME.
//!
//! A device whose files name no QoS at all is "not configured": what it runs is its vendor's
//! defaults, which no file shows, so its model keeps no QoS value (nothing to cite a line of)
//! and its [`Device::note`] says so. "No QoS at all" is the same test for every format: none of
//! trust, DSCP → priority, PFC, ECN marking, the CNP's class, the notification/reaction points,
//! the PFC watchdog or `NCCL_IB_TC` is set. Per format that means: SONiC, none of the QoS tables
//! (`DSCP_TO_TC_MAP`, `DOT1P_TO_TC_MAP`, `PORT_QOS_MAP`, `WRED_PROFILE`, `QUEUE`, `PFC_WD`);
//! NVUE, no `qos` tree (or `qos roce` off and nothing else); EOS, no `qos map`, `qos trust`,
//! `priority-flow-control` or `tx-queue` command; a host, only `show_gids`, `ip link`
//! or NCCL settings without `NCCL_IB_TC` (an `mlnx_qos` output always names a trust state and
//! PFC, so a host that gives one is configured). MTU, GIDs and the GID index are not QoS.

use crate::analyze::fabric::host::{self, HostFormat};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig, DeviceKind};
use crate::analyze::fabric::switch::{self, SwitchFormat};

/// One file read for a device: the file as given and its format's identifier (for a host
/// file holding several tools' outputs pasted, the first output's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    pub file: String,
    pub format: &'static str,
}

/// A device of the fabric: its NAME (a host by the address its RoCE packets carry, a switch by
/// any name), its kind, the files read and the model they make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub name: String,
    pub kind: DeviceKind,
    pub files: Vec<FileRead>,
    pub config: DeviceConfig,
    /// Whether the files name any QoS (see the module's documentation).
    pub configured: bool,
    /// What the reader says of the device: why it reads as not configured.
    pub note: Option<String>,
}

impl Device {
    pub fn is_host(&self) -> bool {
        self.kind == DeviceKind::Host
    }

    pub fn is_switch(&self) -> bool {
        self.kind == DeviceKind::Switch
    }
}

/// Reads `(NAME, FILE as given, text)` triples into devices, grouped by NAME in the order
/// NAMEs first appear. A file of no format read, or a NAME given both host and switch files,
/// is an error at that file's line 1; a reader's error keeps its own line.
pub fn read_devices(files: &[(&str, &str, &str)]) -> Result<Vec<Device>, ConfigError> {
    let mut devices: Vec<Device> = Vec::new();
    for (name, file, text) in files {
        let kind = recognise(text).ok_or_else(|| unrecognised(file))?;
        let index = match devices.iter().position(|device| device.name == *name) {
            Some(index) => index,
            None => {
                devices.push(new_device(name, kind));
                devices.len() - 1
            }
        };
        let device = &mut devices[index];
        if device.kind != kind {
            return Err(mixed_kinds(device, file));
        }
        let format = read_file(kind, file, text, &mut device.config)?;
        device.files.push(FileRead { file: file.to_string(), format });
    }
    for device in &mut devices {
        device.configured = names_qos(&device.config);
        device.note = (!device.configured).then(|| not_configured_note(device));
    }
    Ok(devices)
}

fn new_device(name: &str, kind: DeviceKind) -> Device {
    Device {
        name: name.to_string(),
        kind,
        files: Vec::new(),
        config: DeviceConfig::default(),
        configured: false,
        note: None,
    }
}

/// The kind of device a text comes from: a switch's configuration (whose recognisers look for
/// their formats' own markers) before a host's outputs (whose NCCL settings are loose
/// `KEY=VALUE` lines).
fn recognise(text: &str) -> Option<DeviceKind> {
    if switch::recognise(text).is_some() {
        Some(DeviceKind::Switch)
    } else if host::recognise(text).is_some() {
        Some(DeviceKind::Host)
    } else {
        None
    }
}

/// Reads one file into the device's model; its format's identifier.
fn read_file(kind: DeviceKind, file: &str, text: &str, config: &mut DeviceConfig) -> Result<&'static str, ConfigError> {
    match kind {
        DeviceKind::Host => host::read(file, text, config).map(HostFormat::id),
        DeviceKind::Switch => switch::read(file, text, config).map(SwitchFormat::id),
    }
}

fn unrecognised(file: &str) -> ConfigError {
    let hosts = host::RECOGNITION_ORDER.iter().map(|format| format.name());
    let switches = SwitchFormat::ALL.iter().map(|format| format.name());
    ConfigError {
        file: file.to_string(),
        line: 1,
        message: format!(
            "not a configuration read here; a host's file is one of {} (or several pasted one after \
             another), a switch's one of {}",
            hosts.collect::<Vec<_>>().join(", "),
            switches.collect::<Vec<_>>().join(", ")
        ),
    }
}

fn kind_name(kind: DeviceKind) -> &'static str {
    match kind {
        DeviceKind::Host => "host",
        DeviceKind::Switch => "switch",
    }
}

fn mixed_kinds(device: &Device, file: &str) -> ConfigError {
    let earlier: Vec<&str> = device.files.iter().map(|read| read.file.as_str()).collect();
    let other = match device.kind {
        DeviceKind::Host => DeviceKind::Switch,
        DeviceKind::Switch => DeviceKind::Host,
    };
    ConfigError {
        file: file.to_string(),
        line: 1,
        message: format!(
            "a {} file for {}, whose earlier files ({}) are a {}'s: a NAME is one device, a host or a switch",
            kind_name(other),
            device.name,
            earlier.join(", "),
            kind_name(device.kind)
        ),
    }
}

/// Whether a model holds any QoS value (see the module's documentation).
fn names_qos(config: &DeviceConfig) -> bool {
    config.trust.is_some()
        || !config.dscp_to_priority.is_empty()
        || config.pfc_priorities.is_some()
        || !config.ecn.is_empty()
        || config.cnp_dscp.is_some()
        || config.cnp_priority.is_some()
        || !config.notification_point.is_empty()
        || !config.reaction_point.is_empty()
        || config.pfc_watchdog.is_some()
        || config.nccl_tc.is_some()
}

/// What a not-configured device runs: its vendor's defaults, by the format of its first file.
fn not_configured_note(device: &Device) -> String {
    let defaults = match device.files.first().map(|read| read.format) {
        Some("sonic_config_db") => "SONiC's platform defaults (no DSCP map bound, no PFC, no WRED/ECN)",
        Some("cumulus_nvue") => "Cumulus Linux's defaults (no RoCE profile: no PFC, no ECN marking)",
        Some("arista_eos") => "EOS's defaults (no PFC, no ECN marking)",
        _ => "the NIC's defaults (trust pcp, no PFC, CNP class and DCQCN as the firmware ships them)",
    };
    format!("{} names no QoS at all: read as not configured, running {defaults}", device.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::fabric::samples::{NVIDIA, SONIC_DEFAULT};

    #[test]
    fn groups_files_by_name_in_order_of_first_appearance() {
        let devices = read_devices(&NVIDIA).unwrap();
        let names: Vec<(&str, DeviceKind, usize)> =
            devices.iter().map(|device| (device.name.as_str(), device.kind, device.files.len())).collect();
        use DeviceKind::*;
        assert_eq!(names, [("10.0.0.1", Host, 1), ("10.0.0.2", Host, 3), ("leaf1", Switch, 1), ("spine1", Switch, 1)]);
        let formats: Vec<&str> = devices[1].files.iter().map(|read| read.format).collect();
        assert_eq!(formats, ["mlnx_qos", "nccl_env", "show_gids"]);
        assert_eq!(devices[2].files[0].format, "cumulus_nvue");
        assert_eq!(devices[3].files[0].format, "arista_eos");
        assert!(devices.iter().all(|device| device.configured && device.note.is_none()));
        let devices = read_devices(&SONIC_DEFAULT).unwrap();
        assert_eq!(devices.len(), 4);
        assert_eq!(devices[2].files[0].format, "sonic_config_db");
    }

    #[test]
    fn a_name_with_host_and_switch_files_is_an_error_at_the_second_kind() {
        let mut files = NVIDIA.to_vec();
        let (_, _, eos) = files[files.len() - 1];
        files.push(("10.0.0.1", "gpu01-switch.cfg", eos));
        let error = read_devices(&files).unwrap_err();
        assert_eq!((error.file.as_str(), error.line), ("gpu01-switch.cfg", 1));
        assert!(error.message.contains("10.0.0.1.txt"), "{error}");
    }

    #[test]
    fn an_unrecognised_file_is_an_error_at_line_1_naming_every_format() {
        let mut files = NVIDIA.to_vec();
        files.insert(1, ("leaf1", "show-tech.txt", "Uptime: 3 days\nLoad: 0.1\n"));
        let error = read_devices(&files).unwrap_err();
        assert_eq!((error.file.as_str(), error.line), ("show-tech.txt", 1));
        for format in host::RECOGNITION_ORDER {
            assert!(error.message.contains(format.name()), "{error}");
        }
        for format in SwitchFormat::ALL {
            assert!(error.message.contains(format.name()), "{error}");
        }
    }

    #[test]
    fn a_readers_error_keeps_its_file_and_line() {
        let (name, file, text) = NVIDIA[2];
        let text = text.replacen("NCCL_IB_TC=106", "NCCL_IB_TC=lots", 1);
        let error = read_devices(&[(name, file, &text)]).unwrap_err();
        assert_eq!((error.file.as_str(), error.line), (file, 2));
        let json = "{\n  \"PORT\": {\n    \"Ethernet0\": {\"mtu\": \"9100\",}\n  }\n}\n";
        let error = read_devices(&[("leaf9", "config_db.json", json)]).unwrap_err();
        assert_eq!((error.file.as_str(), error.line), ("config_db.json", 3));
    }

    #[test]
    fn files_naming_no_qos_read_as_not_configured() {
        let sonic = "{\n  \"PORT\": {\n    \"Ethernet0\": {\"mtu\": \"9100\"}\n  }\n}\n";
        let nvue = "- set:\n    interface:\n      swp1:\n        link:\n          mtu: 9216\n";
        let eos = "! Command: show running-config\nhostname s1\n!\ninterface Ethernet1\n   mtu 9214\n!\nend\n";
        let host = "2: ens1f0np0: <BROADCAST,UP> mtu 9000 qdisc mq state UP\n";
        let files = [("s1", "s1.json", sonic), ("s2", "s2.yaml", nvue), ("s3", "s3.cfg", eos), ("h1", "h1.txt", host)];
        let devices = read_devices(&files).unwrap();
        for (device, vendor) in devices.iter().zip(["SONiC", "Cumulus", "EOS", "NIC"]) {
            assert!(!device.configured, "{}", device.name);
            let note = device.note.as_deref().unwrap_or_default();
            assert!(note.contains("not configured") && note.contains(vendor), "{note}");
            assert!(device.config.mtu.is_some(), "{}", device.name);
        }
    }
}
