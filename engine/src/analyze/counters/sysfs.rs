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
}
