//! The inputs as the report describes them: each file read (or live interface), where it was
//! damaged, and a live capture's libpcap counts.

use serde::Serialize;

use crate::analyze::names::Name;
use crate::capture::CaptureInfo;

/// An input file as the report describes it (saved with an analysis's state, [`crate::analyze::SavedRun`]).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct InputReport {
    pub file: String,
    #[serde(deserialize_with = "crate::analyze::names::name")]
    pub container: Name,
    #[serde(deserialize_with = "crate::analyze::names::name")]
    pub compression: Name,
    #[serde(deserialize_with = "crate::analyze::names::name")]
    pub ts_resolution: Name,
    #[serde(deserialize_with = "crate::analyze::names::name")]
    pub byte_order: Name,
    pub snaplen: u32,
    /// The devices captured on, as a pcapng file names its interfaces (`if_name`).
    pub interfaces: Vec<String>,
    /// Where the file was damaged, if it was: the frames before were analysed.
    pub damage: Option<DamageReport>,
}

impl InputReport {
    /// A capture file as it was read (or written, by a live capture).
    pub fn of_capture(file: &str, info: &CaptureInfo, damage: Option<DamageReport>) -> InputReport {
        InputReport {
            file: file.to_string(),
            container: info.container.name(),
            compression: info.compression.name(),
            ts_resolution: info.ts_resolution,
            byte_order: if info.big_endian { "big" } else { "little" },
            snaplen: info.snaplen,
            // the names given; an interface without one names no device
            interfaces: info.interfaces.iter().filter(|name| !name.is_empty()).cloned().collect(),
            damage,
        }
    }

    /// A live interface, its frames analysed as they arrived (not written to a file).
    pub fn live(interface: &str, nanos: bool, snaplen: u32) -> InputReport {
        InputReport {
            file: format!("{interface} (live)"),
            container: "live",
            compression: "none",
            ts_resolution: if nanos { "ns" } else { "us" },
            byte_order: "little",
            snaplen,
            interfaces: vec![interface.to_string()],
            damage: None,
        }
    }
}

/// What libpcap counted during a live capture (`pcap_stats`): packets the filter passed,
/// packets the kernel dropped for want of buffer space, and packets the interface or its driver
/// dropped. Dropped packets never reach the analysis and look like PSN gaps.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct LiveReport {
    pub interface_received: u64,
    pub kernel_dropped: u64,
    pub interface_dropped: u64,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DamageReport {
    pub offset: Option<u64>,
    pub message: String,
}
