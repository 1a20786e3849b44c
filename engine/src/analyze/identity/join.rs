//! The hosts' accounts joined with a finished report's flows: each flow's owners (the QP that
//! sends it, `owner`, and the QP it is sent to, `dst_owner`), the tables' and logs' sections,
//! and where the capture contradicts a table (docs/analysis.md, "QP tables and NCCL logs").

use rustc_hash::FxHashMap;

use crate::analyze::id::{FlowId, FlowKey};
use crate::analyze::identity::known::KnownQps;
use crate::analyze::identity::nccl_log::NcclProcess;
use crate::analyze::identity::owners::{Owner, Owners};
use crate::analyze::identity::qp_table::{QpRow, QpState, QpType};
use crate::analyze::identity::report::{Conflict, IdentityReport, NcclLogReport, QpTableReport, SocketFallback};
use crate::analyze::identity::{HostAccounts, HostLog, HostTable};
use crate::analyze::rfc3339::time_line;
use crate::decode::Endpoint;

/// What the join reads of a flow of the report, in the report's order (the RoCE analysis's
/// flows give it).
#[derive(Debug, Clone, Copy)]
pub struct FlowSeen {
    pub id: FlowId,
    pub key: FlowKey,
    /// The QP that sends it, where the capture tells.
    pub src_qp: Option<u32>,
    /// The transport its packets carry (`RC`, `UC`, `UD`, …).
    pub transport: &'static str,
    /// The flow RDMA CM paired it with.
    pub cm_peer: Option<FlowId>,
    pub last_ts_ns: i64,
}

/// A flow's owners: the QP that sends it and the QP it is sent to, as the hosts name them.
#[derive(Debug, Clone, Default)]
pub struct FlowOwners {
    pub owner: Option<Owner>,
    pub dst_owner: Option<Owner>,
}

/// Joins `accounts` with the report's `flows`: each flow's owners, in the flows' order, and
/// the tables' and logs' sections.
pub fn join(flows: &[FlowSeen], accounts: &HostAccounts) -> (Vec<FlowOwners>, IdentityReport) {
    let owners = Owners::of(accounts);
    let flow_owners = flows
        .iter()
        .map(|f| FlowOwners {
            owner: f.src_qp.and_then(|qp| owners.of_qp(f.key.src, qp)).cloned(),
            dst_owner: owners.of_qp(f.key.dst, f.key.dst_qp).cloned(),
        })
        .collect();
    let known = KnownQps::of(&accounts.tables);
    let qp_tables = accounts.tables.iter().map(|t| table_report(flows, t, &known)).collect();
    let ib_users: Vec<&NcclProcess> = accounts.logs.iter().flat_map(|l| l.log.ib_users()).collect();
    let nccl_logs = accounts.logs.iter().map(|l| log_report(l, &ib_users)).collect();
    (flow_owners, IdentityReport { qp_tables, nccl_logs })
}

fn table_report(flows: &[FlowSeen], t: &HostTable, known: &KnownQps) -> QpTableReport {
    let by_qp = flows_by_qp(flows, Endpoint::Ip(t.host));
    let of_row = |row: &QpRow| by_qp.get(&row.lqpn).map(Vec::as_slice).unwrap_or_default();
    let time_ns = t.table.time.as_deref().and_then(|time| time_line(time).ok()).map(|(_, ns)| ns);
    let mut conflicts = Vec::new();
    for row in t.rows() {
        for f in of_row(row) {
            conflicts.extend(conflict(row, f, time_ns, flows, known));
        }
    }
    QpTableReport {
        host: t.host.to_string(),
        file: t.file.clone(),
        time: t.table.time.clone(),
        rows: t.rows().count(),
        rows_seen: t.rows().filter(|row| !of_row(row).is_empty()).count(),
        conflicts,
    }
}

/// The report's flows of `host`'s QPs, by QP number: those sent to it and those it sends (a
/// flow once per QP).
fn flows_by_qp(flows: &[FlowSeen], host: Endpoint) -> FxHashMap<u32, Vec<&FlowSeen>> {
    let mut by_qp: FxHashMap<u32, Vec<&FlowSeen>> = FxHashMap::default();
    for f in flows {
        let to = (f.key.dst == host).then_some(f.key.dst_qp);
        let from = f.src_qp.filter(|&qp| f.key.src == host && to != Some(qp));
        for qp in to.into_iter().chain(from) {
            by_qp.entry(qp).or_default().push(f);
        }
    }
    by_qp
}

/// What flow `f` of the QP of `row` shows against the row, if anything: connected traffic on
/// a QP the table calls unconnected, a CM pairing with another QP than the table's, the QP
/// sending after the table's time when the table says it is in error (a peer still sending to
/// it is only retrying; a QP in RESET then may be set up since).
fn conflict(row: &QpRow, f: &FlowSeen, time_ns: Option<i64>, flows: &[FlowSeen], known: &KnownQps) -> Option<Conflict> {
    let connected = matches!(f.transport, "RC" | "UC");
    let what = if row.qp_type == QpType::Ud && connected {
        format!("the table calls QP {} UD, and the flow carries {} packets", row.lqpn, f.transport)
    } else if let Some(peer) = cm_peer_against_table(f, flows, known) {
        format!("RDMA CM paired it with the flow to QP {peer:#x}, which its table does not name")
    } else if let Some(disagreement) = known.disagreement(&f.key) {
        disagreement
    } else if row.state == QpState::Err && f.src_qp == Some(row.lqpn) && time_ns.is_some_and(|t| f.last_ts_ns > t) {
        format!("the table shows QP {} in state ERR, and it sends packets after the table's time", row.lqpn)
    } else {
        return None;
    };
    Some(Conflict { line: row.line, qpn: row.lqpn, flow: f.id, what })
}

/// The QP a CM exchange paired flow `f` with, when the tables name other directions.
fn cm_peer_against_table(f: &FlowSeen, flows: &[FlowSeen], known: &KnownQps) -> Option<u32> {
    let peer = flows.get(f.cm_peer?.index())?;
    let named = known.other_direction(&f.key)?;
    let agrees = named.is_empty() || named.contains(&peer.key);
    (!agrees).then_some(peer.key.dst_qp)
}

fn log_report(l: &HostLog, ib_users: &[&NcclProcess]) -> NcclLogReport {
    let processes = &l.log.processes;
    let socket_fallbacks = l.log.socket_fallbacks_among(ib_users).into_iter();
    NcclLogReport {
        host: l.host.to_string(),
        file: l.file.clone(),
        processes: processes.len(),
        communicators: processes.iter().map(|p| p.communicators.len()).sum(),
        qps: processes.iter().map(|p| p.qps.len()).sum(),
        warnings: l.log.warnings.len(),
        socket_fallbacks: socket_fallbacks
            .map(|f| SocketFallback { hostname: f.hostname, pid: f.pid, line: f.line, reason: f.reason })
            .collect(),
    }
}
