//! Counter snapshots taken beside a capture (`analyze --counters HOST=BEFORE,AFTER`): a host's
//! NIC counters before and after, read from what `ethtool -S` and the `hw_counters` files print.
//! The analysis reconciles them with what the capture saw (the report's counters section).

pub mod snapshot;
pub mod sysfs;

pub use snapshot::{Snapshot, SnapshotError, parse};

/// A host's two snapshots, the host as it appears in the capture (its IP address, and the
/// source MAC of its RoCE frames when the capture has one).
#[derive(Debug, Clone)]
pub struct HostSnapshots {
    pub host: std::net::IpAddr,
    pub mac: Option<rocescope_parsers::ethernet::MacAddr>,
    pub before: Snapshot,
    pub after: Snapshot,
}
