//! Counter snapshots taken beside a capture (`analyze --counters HOST=BEFORE,AFTER`): a host's
//! NIC counters before and after, read from what `ethtool -S` and the `hw_counters` files print.
//! The analysis reconciles them with what the capture saw (the report's counters section).

pub mod snapshot;

pub use snapshot::{Snapshot, SnapshotError, parse};

/// A host's two snapshots, the host as it appears in the capture (its IP address).
#[derive(Debug, Clone)]
pub struct HostSnapshots {
    pub host: std::net::IpAddr,
    pub before: Snapshot,
    pub after: Snapshot,
}
