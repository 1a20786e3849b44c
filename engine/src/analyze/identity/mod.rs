//! QP identity's room: the hosts' own account of their QPs, joined with the flows of a capture.
//!
//! - [`qp_table`]: `rdma resource show qp` (iproute2), every QP of a host with its device,
//!   port, type, state, PSNs and owning process;
//! - [`nccl_log`]: a NCCL log (`NCCL_DEBUG=INFO`), each process's communicators, the QPs it
//!   created, the network it chose and whether it fell back to sockets;
//! - [`known`]: what the tables say while the capture is read: the other direction of each
//!   connection, exactly (`pairing: host_table`), and the QP that sends a flow;
//! - [`owners`]: who owns each QP (host, device, process, NCCL rank), for the report's flows;
//! - [`report`]: the tables' and logs' report sections; [`join`]: them and the owners joined
//!   with a finished report's flows;
//! - [`rules`]: the findings they raise (`NCCL_SOCKET_FALLBACK`, `QP_TABLE_CONFLICT`).
//!
//! The readers are pure functions of a file's text: reading the file (at most
//! [`MAX_FILE_BYTES`]) is the caller's job.

pub mod join;
pub mod known;
pub mod nccl_log;
pub mod owners;
pub mod qp_table;
pub mod report;
pub mod rules;

use std::net::IpAddr;

/// The most a table or log file may hold (16 MiB), as for counter snapshots.
pub const MAX_FILE_BYTES: u64 = qp_table::MAX_TEXT_BYTES as u64;

/// A host's QP table (`analyze --qps HOST[@DEV]=FILE`), read; HOST the address its RoCE
/// packets carry, DEV the RDMA device that has it (where the host has several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTable {
    pub host: IpAddr,
    pub device: Option<String>,
    pub file: String,
    pub table: qp_table::QpTable,
}

impl HostTable {
    /// Its rows of HOST's device: every row, or those of the device named.
    pub fn rows(&self) -> impl Iterator<Item = &qp_table::QpRow> {
        self.table.rows.iter().filter(|row| self.device.as_ref().is_none_or(|d| *d == row.device))
    }
}

/// A host's NCCL log (`analyze --nccl-log HOST=FILE`), read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLog {
    pub host: IpAddr,
    pub file: String,
    pub log: nccl_log::NcclLog,
}

/// What the hosts said of their QPs, for the report: their tables and their NCCL logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostAccounts {
    pub tables: Vec<HostTable>,
    pub logs: Vec<HostLog>,
}
