//! A snapshot of an RDMA device's counters read from sysfs, as `capture --counters DEV` takes
//! it at the capture's start and end: the ports' `hw_counters` and `counters` files and the
//! network device's statistics, in the form [`super::parse`] reads.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The snapshot of device `device` under `root` (`/` on a host), taken at `time` (RFC 3339).
pub fn read(root: &Path, device: &str, time: &str) -> io::Result<String> {
    let base = root.join("sys/class/infiniband").join(device);
    if !base.is_dir() {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("no RDMA device {device} in {}", base.display())));
    }
    let mut text = format!("time: {time}\n");
    for net in sorted(&base.join("device/net"))? {
        text.push_str("NIC statistics:\n");
        append(&mut text, &net.join("statistics"), "     ", ": ")?;
    }
    for port in sorted(&base.join("ports"))? {
        for group in ["hw_counters", "counters"] {
            append(&mut text, &port.join(group), "", " ")?;
        }
    }
    Ok(text)
}

/// Where a capture interface sits among the RDMA ports: the labels the NIC exporters put on
/// their series (`device`, `port`, `netdev`), and the network device's own MAC address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RdmaPort {
    /// The RDMA device (`mlx5_0`), where the interface has one.
    pub device: Option<String>,
    /// The device's port the network device is (`1`), where there is one.
    pub port: Option<String>,
    /// The network device (`ens1f0np0`); the interface's own name where it is none.
    pub netdev: String,
    /// The network device's MAC address as sysfs writes it (`0c:42:a1:00:00:01`).
    pub mac: Option<String>,
}

/// The RDMA port of capture interface `interface` under `root` (`/` on a host). The interface
/// is a network device, whose RDMA device is the entry of `class/net/IF/device/infiniband/`,
/// or an RDMA device itself (`capture -i mlx5_0`), whose network device is the entry of
/// `class/infiniband/DEV/device/net/`; `device` (`capture --counters DEV`) names the RDMA
/// device instead of the one found. The port is the device's port whose first GID's network
/// device (`ports/N/gid_attrs/ndevs/0`, kernel ABI sysfs-class-infiniband) is the interface,
/// else the device's first port. What sysfs does not say is left out.
pub fn rdma_port(root: &Path, interface: &str, device: Option<&str>) -> RdmaPort {
    let class = root.join("sys/class");
    let own_device = class.join("infiniband").join(interface);
    let (device, netdev) = if own_device.is_dir() {
        let netdev = first_name(&own_device.join("device/net")).unwrap_or_else(|| interface.to_string());
        (Some(device.map_or_else(|| interface.to_string(), str::to_string)), netdev)
    } else {
        let found = || first_name(&class.join("net").join(interface).join("device/infiniband"));
        (device.map(str::to_string).or_else(found), interface.to_string())
    };
    let port = device.as_deref().and_then(|d| port_of(&class.join("infiniband").join(d), &netdev));
    let mac = fs::read_to_string(class.join("net").join(&netdev).join("address")).ok().map(|a| a.trim().to_string());
    RdmaPort { device, port, netdev, mac }
}

/// The port of the RDMA device at `device` whose first GID is on `netdev`, else its first.
fn port_of(device: &Path, netdev: &str) -> Option<String> {
    let ports = sorted(&device.join("ports")).ok()?;
    let on_netdev = |p: &&PathBuf| fs::read_to_string(p.join("gid_attrs/ndevs/0")).is_ok_and(|n| n.trim() == netdev);
    let port = ports.iter().find(on_netdev).or(ports.first())?;
    Some(port.file_name()?.to_str()?.to_string())
}

/// The name of the first entry of `dir`, if it has any.
fn first_name(dir: &Path) -> Option<String> {
    let entries = sorted(dir).ok()?;
    Some(entries.first()?.file_name()?.to_str()?.to_string())
}

/// The entries of `dir` by name; none when it is not there.
fn sorted(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(listing) => listing.map(|e| e.map(|e| e.path())).collect::<io::Result<_>>()?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    entries.sort();
    Ok(entries)
}

/// Each counter file of `dir` whose content is a count, as a line `{indent}{name}{separator}{value}`
/// (files that hold no count, as some drivers' `lifespan`, are left out).
fn append(text: &mut String, dir: &Path, indent: &str, separator: &str) -> io::Result<()> {
    for file in sorted(dir)?.into_iter().filter(|f| f.is_file()) {
        let Some(name) = file.file_name().and_then(|n| n.to_str()) else { continue };
        let Ok(content) = fs::read_to_string(&file) else { continue };
        if let Ok(value) = content.trim().parse::<u64>() {
            text.push_str(&format!("{indent}{name}{separator}{value}\n"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, content: &str) {
        fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
        fs::write(path, content).expect("write");
    }

    #[test]
    fn a_devices_counters_read_as_a_snapshot() {
        let root = tempfile::tempdir().expect("temp dir");
        let device = root.path().join("sys/class/infiniband/mlx5_0");
        write(&device.join("ports/1/hw_counters/np_cnp_sent"), "24\n");
        write(&device.join("ports/1/hw_counters/out_of_sequence"), "3\n");
        write(&device.join("ports/1/hw_counters/lifespan"), "12 s\n");
        write(&device.join("ports/1/counters/port_rcv_packets"), "900\n");
        write(&device.join("device/net/ens1f0np0/statistics/rx_packets"), "1234\n");
        let text = read(root.path(), "mlx5_0", "2026-12-05T10:00:00Z").expect("a snapshot");
        let snapshot = crate::analyze::counters::parse("snapshot", &text).expect("it reads back");
        assert_eq!(snapshot.get("np_cnp_sent"), Some(24));
        assert_eq!(snapshot.get("out_of_sequence"), Some(3));
        assert_eq!(snapshot.get("port_rcv_packets"), Some(900));
        assert_eq!(snapshot.get("rx_packets"), Some(1234));
        assert_eq!(snapshot.get("lifespan"), None, "a file that holds no count is left out");
        assert_eq!(snapshot.time.map(|t| t.0), Some("2026-12-05T10:00:00Z".to_string()));
        let missing = read(root.path(), "mlx5_9", "2026-12-05T10:00:00Z").unwrap_err();
        assert!(missing.to_string().contains("no RDMA device mlx5_9"), "{missing}");
    }

    /// A host with two RDMA devices, the second with two ports on two network devices.
    fn two_devices() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("temp dir");
        let class = root.path().join("sys/class");
        write(&class.join("net/ens1f0np0/address"), "0c:42:a1:00:00:01\n");
        write(&class.join("net/ens1f0np0/device/infiniband/mlx5_0/node_type"), "1\n");
        write(&class.join("infiniband/mlx5_0/device/net/ens1f0np0/address"), "0c:42:a1:00:00:01\n");
        write(&class.join("infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0"), "ens1f0np0\n");
        write(&class.join("net/ib1/device/infiniband/mlx5_1/node_type"), "1\n");
        write(&class.join("infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0"), "ib0\n");
        write(&class.join("infiniband/mlx5_1/ports/2/gid_attrs/ndevs/0"), "ib1\n");
        root
    }

    #[test]
    fn a_network_device_finds_its_rdma_device_and_port() {
        let root = two_devices();
        let port = rdma_port(root.path(), "ens1f0np0", None);
        assert_eq!(
            port,
            RdmaPort {
                device: Some("mlx5_0".into()),
                port: Some("1".into()),
                netdev: "ens1f0np0".into(),
                mac: Some("0c:42:a1:00:00:01".into()),
            }
        );
        let second = rdma_port(root.path(), "ib1", None);
        assert_eq!((second.device.as_deref(), second.port.as_deref()), (Some("mlx5_1"), Some("2")));
    }

    #[test]
    fn an_rdma_device_finds_its_network_device() {
        let root = two_devices();
        let port = rdma_port(root.path(), "mlx5_0", None);
        assert_eq!(port.netdev, "ens1f0np0");
        assert_eq!((port.device.as_deref(), port.port.as_deref()), (Some("mlx5_0"), Some("1")));
        assert_eq!(port.mac.as_deref(), Some("0c:42:a1:00:00:01"));
    }

    #[test]
    fn the_device_named_overrides_and_a_plain_interface_has_none() {
        let root = two_devices();
        let named = rdma_port(root.path(), "ens1f0np0", Some("mlx5_1"));
        assert_eq!((named.device.as_deref(), named.port.as_deref()), (Some("mlx5_1"), Some("1")));
        let plain = rdma_port(root.path(), "eth0", None);
        assert_eq!(plain, RdmaPort { netdev: "eth0".into(), ..RdmaPort::default() });
    }
}
