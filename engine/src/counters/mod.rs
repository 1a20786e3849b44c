//! Counter snapshots taken beside a capture (`analyze --counters HOST=BEFORE,AFTER`): a host's
//! NIC counters before and after, read from what `ethtool -S` and the `hw_counters` files print.
//! The analysis reconciles them with what the capture saw (the report's counters section).

pub mod snapshot;
pub mod sonic;
pub mod sysfs;

use rocescope_parsers::ethernet::MacAddr;

pub use snapshot::{Snapshot, SnapshotError, parse};

/// A host's two snapshots, the host as it appears in the capture: its IP address and, when the
/// capture has a RoCE frame from it, that frame's MACs.
#[derive(Debug, Clone)]
pub struct HostSnapshots {
    pub host: std::net::IpAddr,
    pub macs: HostMacs,
    pub before: Snapshot,
    pub after: Snapshot,
}

/// A switch's two snapshots (`analyze --switch-counters NAME=BEFORE,AFTER`), read by
/// [`sonic::parse`].
#[derive(Debug, Clone)]
pub struct SwitchSnapshots {
    pub name: String,
    pub before: Snapshot,
    pub after: Snapshot,
}

/// The MACs of a host's first RoCE frame: its own (the source, whose pause frames the host
/// sent) and its link partner's (the destination: the switch's router MAC in a routed fabric,
/// whose pause frames the host received).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostMacs {
    pub own: Option<MacAddr>,
    pub partner: Option<MacAddr>,
}
