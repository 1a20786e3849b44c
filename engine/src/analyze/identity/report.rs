//! QP identity's report sections: each table and log the hosts gave, what of it the capture
//! holds, and what they contradict (the owners themselves are keys of each flow, `owner` and
//! `dst_owner`).

use serde::Serialize;

use crate::analyze::id::FlowId;

/// QP identity's sections of the report, each absent when empty.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IdentityReport {
    /// The hosts' QP tables (`analyze --qps`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub qp_tables: Vec<QpTableReport>,
    /// The hosts' NCCL logs (`analyze --nccl-log`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nccl_logs: Vec<NcclLogReport>,
}

/// A host's QP table as the report lists it (`qp_tables`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QpTableReport {
    pub host: String,
    pub file: String,
    /// Its `time:` line, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    pub rows: usize,
    /// Rows whose QP the capture holds: a flow sent to it on the host, or sent by it.
    pub rows_seen: usize,
    /// Where the capture contradicts it.
    pub conflicts: Vec<Conflict>,
}

/// A table row the capture contradicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The row's line in its file, from 1.
    pub line: usize,
    pub qpn: u32,
    /// The flow that contradicts it.
    pub flow: FlowId,
    /// What the capture shows against the row.
    pub what: String,
}

/// A host's NCCL log as the report lists it (`nccl_logs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NcclLogReport {
    pub host: String,
    pub file: String,
    pub processes: usize,
    pub communicators: usize,
    /// The QPs its processes created.
    pub qps: usize,
    /// Its NCCL lines that could not be read (each also a warning when it is read).
    pub warnings: usize,
    /// Its processes that used sockets where RDMA was to be had.
    pub socket_fallbacks: Vec<SocketFallback>,
}

/// A NCCL process that fell back to sockets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SocketFallback {
    /// The host's name and the process as NCCL prints them.
    pub hostname: String,
    pub pid: u32,
    /// The first line showing its use of sockets, from 1.
    pub line: usize,
    pub reason: String,
}
