//! Arbitrary text as the hosts' files (`analyze --qps`, `--nccl-log`): a QP table is read or
//! refused naming a line within the text, never a panic; a NCCL log is always read, its
//! warnings naming lines within the text. What both give joins into the pairing index and the
//! owners, as an analysis would take them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::analyze::identity::known::KnownQps;
use rocescope::analyze::identity::owners::Owners;
use rocescope::analyze::identity::{HostAccounts, HostLog, HostTable, nccl_log, qp_table};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = text.lines().count().max(1);
    let host = std::net::IpAddr::from([10, 0, 0, 1]);
    let mut accounts = HostAccounts::default();
    match qp_table::parse("fuzz", &text) {
        Ok(table) => {
            assert!(table.rows.iter().all(|row| row.line >= 1 && row.line <= lines && row.lqpn <= qp_table::MAX_QPN));
            accounts.tables.push(HostTable { host, device: None, file: "fuzz".into(), table });
        }
        Err(e) => assert!(e.line >= 1 && e.line <= lines + 1, "line {} of {lines}: {e}", e.line),
    }
    let log = nccl_log::parse("fuzz", &text);
    assert!(log.warnings.len() <= nccl_log::MAX_WARNINGS + 1);
    let _ = log.socket_fallbacks();
    accounts.logs.push(HostLog { host, file: "fuzz".into(), log });
    let known = KnownQps::of(&accounts.tables);
    let _ = known.is_empty();
    let _ = Owners::of(&accounts);
});
