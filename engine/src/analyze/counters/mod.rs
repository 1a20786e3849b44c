//! Counter snapshots taken beside a capture (`analyze --counters HOST=BEFORE,AFTER`): a host's
//! NIC counters before and after, read from what `ethtool -S` and the `hw_counters` files print.
//! The analysis reconciles them with what the capture saw (the report's counters section).

pub mod order;
pub mod reconcile;
pub mod report;
pub mod rules;
pub mod snapshot;
pub mod sonic;
pub mod sysfs;

use std::fs::File;
use std::io::Read;
use std::path::Path;

use rocescope_parsers::ethernet::MacAddr;

pub use order::{Order, in_order};
pub use snapshot::{Snapshot, SnapshotError, parse};

/// The most a snapshot file may hold (16 MiB): a snapshot is kilobytes (`ethtool -S` of a NIC
/// with many queues some hundreds, a 512-port switch's queue table under 1 MB), so a file past
/// this is none, and reading stops there (docs/performance.md, "Hostile input").
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// The text of snapshot file `path`, else what is wrong: it cannot be read, it holds more than
/// [`MAX_FILE_BYTES`] (of which no more than that is read), or it is not UTF-8 (naming the
/// offset of the first byte that is not).
pub fn read_file(path: &Path) -> Result<String, String> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB, the most a file read beside a capture may hold",
            MAX_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8 text (byte offset {} is not UTF-8)", e.utf8_error().valid_up_to()))
}

/// A host's two snapshots, the host as it appears in the capture: its IP address and, when the
/// capture has a RoCE frame from it, that frame's MACs.
#[derive(Debug, Clone)]
pub struct HostSnapshots {
    pub host: std::net::IpAddr,
    pub macs: HostMacs,
    /// The user says the capture is of the host's own link (`analyze --link HOST`: a mirror of
    /// its switch port, a tap on its cable), where the pauses it receives are.
    pub link: bool,
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
/// whose pause frames the host received when the capture shows the host's link; the peer
/// host's own on a switched L2 network).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostMacs {
    pub own: Option<MacAddr>,
    pub partner: Option<MacAddr>,
}
