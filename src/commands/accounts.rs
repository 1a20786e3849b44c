//! What the hosts say of their QPs (`--qps HOST=FILE`, `--nccl-log HOST=FILE`, for `analyze`
//! and `merge`): their tables and logs read before the capture or the states.

use std::io::Read;

use super::exit::Failure;
use crate::analyze::counters;
use crate::analyze::identity::known::KnownQps;
use crate::analyze::identity::{self, HostAccounts, HostLog, HostTable, nccl_log, qp_table};
use crate::cli::{HostAccountFiles, HostFile};

/// With `--qps HOST=FILE` and `--nccl-log HOST=FILE`: the hosts' QP tables and NCCL logs, read
/// before the capture. A table that cannot be read, holds more than 16 MiB or a line that is no
/// QP row is a usage error naming the file and the line; a log's NCCL lines that cannot be read
/// are warnings naming theirs.
pub fn read(files: &HostAccountFiles) -> Result<HostAccounts, Failure> {
    let tables = files.qp_tables.iter().map(read_qp_table).collect::<Result<_, _>>()?;
    let logs = files.nccl_logs.iter().map(read_nccl_log).collect::<Result<_, _>>()?;
    Ok(HostAccounts { tables, logs })
}

fn read_qp_table(given: &HostFile) -> Result<HostTable, Failure> {
    let file = given.file.display().to_string();
    let text = counters::read_file(&given.file).map_err(|e| Failure::Usage(format!("--qps: {file}: {e}")))?;
    let table = qp_table::parse(&file, &text).map_err(|e| Failure::Usage(format!("--qps: {e}")))?;
    Ok(HostTable { host: given.host, device: given.device.clone(), file, table })
}

/// A NCCL log, whatever else its program wrote among its lines (bytes that are not UTF-8
/// included): its first 16 MiB.
fn read_nccl_log(given: &HostFile) -> Result<HostLog, Failure> {
    let file = given.file.display().to_string();
    if let Some(device) = &given.device {
        return Err(Failure::Usage(format!(
            "--nccl-log {}@{device}=…: a log is the host's, HOST=FILE (its QPs name their devices)",
            given.host
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&given.file)
        .and_then(|f| f.take(identity::MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| Failure::Usage(format!("--nccl-log: {file}: {e}")))?;
    let log = nccl_log::parse(&file, &String::from_utf8_lossy(&bytes));
    for warning in &log.warnings {
        eprintln!("rocescope: warning: --nccl-log: {warning}");
    }
    Ok(HostLog { host: given.host, file, log })
}

/// A usage error unless `saved`, the QP tables a saved analysis was made with, are those of
/// `accounts`: the tables decide the pairing while the capture is read.
pub fn check_saved_with(saved: &KnownQps, accounts: &HostAccounts, what: &str) -> Result<(), Failure> {
    match *saved == KnownQps::of(&accounts.tables) {
        true => Ok(()),
        false => Err(Failure::Usage(format!("{what} made with other QP tables: give the --qps it was saved with"))),
    }
}
