//! The terminal summary's QP tables and NCCL logs (`analyze --qps`, `--nccl-log`): what each
//! host's file held and how much of it the capture shows (the owners are the flows' column).

use std::io::{self, Write};

use crate::analyze::report::Report;

pub fn write_accounts(out: &mut impl Write, r: &Report) -> io::Result<()> {
    if r.identity.qp_tables.is_empty() && r.identity.nccl_logs.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "Hosts' QP tables and NCCL logs")?;
    for t in &r.identity.qp_tables {
        writeln!(
            out,
            "  {:<16} QP table {}: {} QPs, {} in the capture, {} contradicted",
            t.host,
            t.file,
            t.rows,
            t.rows_seen,
            t.conflicts.len()
        )?;
    }
    for l in &r.identity.nccl_logs {
        writeln!(
            out,
            "  {:<16} NCCL log {}: {} processes, {} communicators, {} QPs, {} on sockets, {} unreadable lines",
            l.host,
            l.file,
            l.processes,
            l.communicators,
            l.qps,
            l.socket_fallbacks.len(),
            l.warnings
        )?;
    }
    Ok(())
}
