//! What `capture -w FILE` writes beside its capture file, at the start and the end: the RDMA
//! device's counters (`--counters DEV`, for `analyze --counters`) and the host's QP table
//! (`--qps`, for `analyze --qps`), each as its file with a `time:` line first.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::super::exit::Failure;
use crate::analyze::counters::Snapshot;
use crate::analyze::identity::qp_table;
use crate::cli::CaptureArgs;

/// With `--counters DEV`: the device's counters now, into `FILE.counters-{when}.txt` beside
/// the capture file (`analyze --counters HOST=…before.txt,…after.txt` reconciles them).
pub(super) fn snapshot_counters(args: &CaptureArgs, when: &str) -> Result<Option<Snapshot>, Failure> {
    let (Some(device), Some(file)) = (&args.counters, &args.write) else { return Ok(None) };
    let text = read_counters(args, device).map_err(|e| Failure::NoInput(format!("--counters {device}: {e}")))?;
    write(&beside(file, &format!("counters-{when}")), &text)?;
    Ok(crate::analyze::counters::parse(device, &text).ok())
}

/// The device's counters now, as a snapshot's text.
pub(super) fn read_counters(args: &CaptureArgs, device: &str) -> io::Result<String> {
    crate::analyze::counters::sysfs::read(&args.sysfs_root, device, &now())
}

/// With `--qps`: the QP table `--qps-cmd` prints now, after a `time:` line, into
/// `FILE.qps-{when}.txt` beside the capture file. A command that cannot be run or fails ends
/// the capture; a table that cannot be read is written all the same, with a warning.
pub(super) fn snapshot_qps(args: &CaptureArgs, when: &str) -> Result<(), Failure> {
    let Some(file) = args.write.as_ref().filter(|_| args.qps) else { return Ok(()) };
    let printed = run(&args.qps_cmd).map_err(|e| Failure::NoInput(format!("--qps-cmd {:?}: {e}", args.qps_cmd)))?;
    let text = format!("time: {}\n{printed}", now());
    let path = beside(file, &format!("qps-{when}"));
    if let Err(e) = qp_table::parse(&path.display().to_string(), &text) {
        eprintln!("rocescope: warning: --qps: the table {:?} printed cannot be read: {e}", args.qps_cmd);
    }
    write(&path, &text)
}

/// What `command` (words split at spaces, no shell) prints on standard output, else why not:
/// it cannot be started, or it fails (with the first line it printed on standard error).
fn run(command: &str) -> Result<String, String> {
    let mut words = command.split_whitespace();
    let program = words.next().ok_or("an empty command")?;
    let out = Command::new(program).args(words).output().map_err(|e| format!("cannot be run: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(format!("failed ({}): {}", out.status, said.lines().next().unwrap_or_default()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `FILE.SUFFIX.txt`.
fn beside(file: &Path, suffix: &str) -> PathBuf {
    let mut path = file.to_path_buf().into_os_string();
    path.push(format!(".{suffix}.txt"));
    PathBuf::from(path)
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    crate::output::atomic::write_whole(path, text)
        .map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))
}

fn now() -> String {
    humantime::format_rfc3339_nanos(std::time::SystemTime::now()).to_string()
}
