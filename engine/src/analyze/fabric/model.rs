//! One model of a device's QoS configuration, whatever format it was read from: what each
//! reader fills, each value with the file and line it was read at.

use std::collections::BTreeMap;

/// Where a value was read: the file as given and its line (from 1; for JSON and YAML the line
/// where the key or value stands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for At {
    /// `FILE:LINE`, as findings cite a configuration line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A value and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read<T> {
    pub value: T,
    pub at: At,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    Host,
    Switch,
}

/// What a device classifies received packets by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    Dscp,
    Pcp,
}

/// ECN marking of one priority (or egress queue) of a switch: WRED/ECN thresholds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EcnMarking {
    pub priority: u8,
    /// Marking on (a switch profile with `ecn` off, or a queue with no ECN, is `false`).
    pub enabled: bool,
    pub min_bytes: Option<u64>,
    pub max_bytes: Option<u64>,
    /// The marking probability at the max threshold, in percent.
    pub probability: Option<u8>,
    pub at: At,
}

/// One entry of a host's GID table (`show_gids`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GidEntry {
    pub device: String,
    pub port: u32,
    pub index: u32,
    /// The GID as printed (`0000:0000:0000:0000:0000:ffff:0a00:0001`).
    pub gid: String,
    /// The IPv4 or IPv6 address it stands for, where printed.
    pub address: Option<String>,
    /// `v1` or `v2` (RoCE version).
    pub version: String,
    pub netdev: Option<String>,
    pub at: At,
}

/// A device's QoS configuration as its files say it; a field nothing set is `None` (or empty).
/// `sections` names, for values a reader looked for and did not find, the line of the section
/// that should have held them (a `tx-queue`, a `PORT_QOS_MAP` entry, a `qos` tree's key), by a
/// short name of the value (`ecn`, `pfc_watchdog`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceConfig {
    pub trust: Option<Read<Trust>>,
    /// DSCP (0..=63) → priority (0..=7).
    pub dscp_to_priority: BTreeMap<u8, Read<u8>>,
    /// The priorities with PFC on (sorted); `Some(empty)` where PFC is configured off.
    pub pfc_priorities: Option<Read<Vec<u8>>>,
    pub ecn: Vec<EcnMarking>,
    /// The CNPs' DSCP and 802.1p priority the NIC sends (hosts).
    pub cnp_dscp: Option<Read<u8>>,
    pub cnp_priority: Option<Read<u8>>,
    /// The priorities with the DCQCN notification point (`roce_np`) and reaction point
    /// (`roce_rp`) on or off (hosts).
    pub notification_point: BTreeMap<u8, Read<bool>>,
    pub reaction_point: BTreeMap<u8, Read<bool>>,
    pub mtu: Option<Read<u32>>,
    /// A PFC watchdog on or off (switches).
    pub pfc_watchdog: Option<Read<bool>>,
    /// NCCL's `NCCL_IB_TC` (DSCP × 4 + ECN bits) and `NCCL_IB_GID_INDEX` (hosts).
    pub nccl_tc: Option<Read<u8>>,
    pub nccl_gid_index: Option<Read<u32>>,
    /// Other NCCL_* settings, as written.
    pub nccl_other: BTreeMap<String, Read<String>>,
    pub gids: Vec<GidEntry>,
    /// Where a missing value's section stands.
    pub sections: BTreeMap<String, At>,
}

/// A file that cannot be read as its format: the file, the line (from 1) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: line {}: {}", self.file, self.line, self.message)
    }
}
