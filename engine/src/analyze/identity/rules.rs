//! The findings of the hosts' QP tables and NCCL logs (`analyze --qps`, `--nccl-log`): each
//! names its host and the lines of its file.

use crate::analyze::finding::{EVIDENCE_KEPT, Evidence, kinds};
use crate::analyze::identity::report::IdentityReport;
use crate::analyze::rules::{About, Rules, plural};

/// QP identity's rules: NCCL processes that fell back to sockets, tables the capture
/// contradicts.
pub(crate) fn identity(r: &mut Rules<'_, IdentityReport>) {
    socket_fallbacks(r);
    table_conflicts(r);
}

const SOCKET_FALLBACK: About = About {
    kind: kinds::NCCL_SOCKET_FALLBACK,
    cause: "NCCL moved the job's traffic over TCP sockets although the host has RDMA devices (or other ranks use them): the field guide's disaster mode, most often GID index detection failing at NCCL's init (a RoCE v1 or link-local entry chosen, or none), or a device, port or HCA filter (NCCL_IB_HCA) that matches nothing.",
    action: "Pin NCCL_IB_GID_INDEX to the RoCE v2 IPv4 entry (check show_gids after the driver loads), check NCCL_IB_HCA and NCCL_SOCKET_IFNAME, and rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see NET/IB choose its devices.",
};

fn socket_fallbacks(r: &mut Rules<'_, IdentityReport>) {
    let report = r.report;
    for log in &report.nccl_logs {
        let Some(first) = log.socket_fallbacks.first() else { continue };
        let n = log.socket_fallbacks.len();
        let lines = log.socket_fallbacks.iter().take(EVIDENCE_KEPT).map(|f| format!("{}:{}", log.file, f.line));
        let evidence =
            Evidence { count: n as u64, host: Some(log.host.clone()), lines: lines.collect(), ..Evidence::default() };
        let message = format!(
            "{} of {}'s NCCL log used sockets where RDMA was to be had: {}:{} {} ({}:{})",
            plural(n, "process"),
            log.host,
            first.hostname,
            first.pid,
            first.reason,
            log.file,
            first.line
        );
        r.add(SOCKET_FALLBACK, message, evidence);
    }
}

const TABLE_CONFLICT: About = About {
    kind: kinds::QP_TABLE_CONFLICT,
    cause: "The capture contradicts a host's QP table: the table was taken from another host or at another time than the capture (a QP destroyed and its number reused, a job restarted), or HOST does not name the address the host's RoCE packets carry.",
    action: "Take the table on the host whose address HOST names, while the job runs (rdma -j resource show qp, with a time: line), and compare its QPs with the capture's flows; a QP in ERR carrying traffic means the QP failed during the capture: look at the application's completion errors.",
};

fn table_conflicts(r: &mut Rules<'_, IdentityReport>) {
    let report = r.report;
    for table in &report.qp_tables {
        let Some(first) = table.conflicts.first() else { continue };
        let n = table.conflicts.len();
        let kept = || table.conflicts.iter().take(EVIDENCE_KEPT);
        let evidence = Evidence {
            count: n as u64,
            flows: kept().map(|c| c.flow).collect(),
            host: Some(table.host.clone()),
            lines: kept().map(|c| format!("{}:{}", table.file, c.line)).collect(),
            ..Evidence::default()
        };
        let message = format!(
            "the capture contradicts {} of {}'s QP table: {} ({}:{})",
            plural(n, "row"),
            table.host,
            first.what,
            table.file,
            first.line
        );
        r.add(TABLE_CONFLICT, message, evidence);
    }
}
