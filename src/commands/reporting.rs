//! What `analyze` and `merge` do with a finished analysis: the summary or the JSON report on
//! standard output, the report's files (`--out`), its page (`--html`), its Chrome trace
//! (`--trace`) and `--fail-on`.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::exit::{Failure, Outcome, fail_on, written};
use super::refuse_input;
use crate::analyze::assemble::Joined;
use crate::analyze::finding::Severity;
use crate::analyze::report::Report;
use crate::analyze::roce::report::inputs::InputReport;
use crate::analyze::{Analyzer, assemble};
use crate::output::atomic::{Written, write_json, write_text, write_whole};
#[cfg(feature = "tables")]
use crate::output::report::tables;
use crate::output::report::{html, text, trace_events};

/// Where the report goes.
pub struct Reporting<'a> {
    /// What the report joins with the analysis: the path traced over `analyze --tap`'s taps,
    /// the counter snapshots of `--counters`.
    pub joined: &'a Joined,
    /// The JSON report on standard output rather than the summary.
    pub json: bool,
    pub color: bool,
    pub out: Option<&'a Path>,
    pub html: Option<&'a Path>,
    /// The Chrome trace's file; `-` for standard output, in place of the summary.
    pub trace: Option<&'a Path>,
    pub fail_on: Option<Severity>,
}

/// The files `--out` writes.
const OUT_FILES: &[&str] = &[
    "report.json",
    "index.html",
    "flows.csv",
    "flows.parquet",
    "retransmit_episodes.csv",
    "retransmit_episodes.parquet",
    "findings.csv",
    "findings.parquet",
    "pfc.csv",
    "pfc.parquet",
    "hops.csv",
    "hops.parquet",
    "counters.csv",
    "counters.parquet",
    "packets.csv",
    "packets.parquet",
];

/// What a build without the `tables` feature (`cargo build --no-default-features`, the quick
/// build) says when asked for what only polars writes.
pub const NO_TABLES: &str =
    "this quick build writes no CSV or Parquet tables; build with the default features (cargo build --release)";

/// The `--trace` that names standard output.
const TRACE_ON_STDOUT: &str = "-";

/// Does `--trace` name standard output?
fn on_stdout(trace: Option<&Path>) -> bool {
    trace == Some(Path::new(TRACE_ON_STDOUT))
}

impl Reporting<'_> {
    /// Does the Chrome trace go to standard output (`--trace -`)?
    fn trace_on_stdout(&self) -> bool {
        on_stdout(self.trace)
    }

    /// The file the Chrome trace is written to, unless it goes to standard output.
    fn trace_file(&self) -> Option<&Path> {
        self.trace.filter(|_| !self.trace_on_stdout())
    }
}

/// Says, in a build without tables, that `--out` writes the JSON report and the page only.
pub fn warn_without_tables(reporting: &Reporting<'_>) {
    if reporting.out.is_some() && !cfg!(feature = "tables") {
        eprintln!("rocescope: warning: --out writes report.json and index.html only: {NO_TABLES}");
    }
}

/// Refuses `--trace -` beside `--json`, which both want standard output.
pub fn check_stdout(json: bool, trace: Option<&Path>) -> Result<(), String> {
    if json && on_stdout(trace) {
        return Err("--json and --trace - both write to standard output: name a file for --trace".into());
    }
    Ok(())
}

/// Creates `--out`'s directory and refuses to write the report over an input, or over
/// `--html`'s page.
pub fn prepare(reporting: &Reporting<'_>, inputs: &[PathBuf]) -> Result<(), String> {
    if let Some(dir) = reporting.out {
        if dir.exists() && !dir.is_dir() {
            return Err(format!(
                "--out {}: a file is there; --out names a directory (created if missing)",
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let freed = crate::output::atomic::remove_stale(dir, OUT_FILES);
        if freed > 0 {
            eprintln!("rocescope: removed the temporary files ({freed} bytes) a killed run left in {}", dir.display());
        }
        OUT_FILES.iter().try_for_each(|name| refuse_input(&dir.join(name), inputs, "a report file"))?;
    }
    [reporting.html, reporting.trace_file()]
        .into_iter()
        .flatten()
        .try_for_each(|file| refuse_input(file, inputs, "a report file"))
}

/// A warning for each host whose counters `--counters` reconciles but that no RoCE frame of
/// the report is from or to (the command prints them; the Python module raises them).
pub fn absent_host_warnings(report: &Report) -> Vec<String> {
    let hosts = crate::analyze::counters::reconcile::hosts_not_in_capture(&report.counters, &report.roce);
    let warning = |host: &str| {
        format!(
            "--counters {host}: no RoCE frame is from or to {host}: its counters pair with nothing (HOST is the NIC's address in the capture)"
        )
    };
    hosts.into_iter().map(warning).collect()
}

/// Reports on the finished `analyzer` of the files `inputs`; `--out`'s directory also gets
/// `more_files` (the per-packet table), all its files named together once all are complete.
pub fn report(
    analyzer: &Analyzer,
    inputs: Vec<InputReport>,
    reporting: &Reporting<'_>,
    more_files: io::Result<Written>,
) -> Outcome {
    let report = assemble::report_joined(analyzer, inputs, reporting.joined);
    for warning in absent_host_warnings(&report) {
        eprintln!("rocescope: warning: {warning}");
    }
    let page = (reporting.out.is_some() || reporting.html.is_some()).then(|| html::render(&report));
    if let Some(dir) = reporting.out {
        more_files
            .and_then(|mut files| {
                files.append(write_json(dir, "report.json", &report)?);
                #[cfg(feature = "tables")]
                files.append(tables::write_tables(dir, &report)?);
                files.append(write_text(dir, "index.html", page.as_deref().unwrap_or_default())?);
                files.commit()
            })
            .map_err(|e| Failure::Output(format!("cannot write the report into {}: {e}", dir.display())))?;
    }
    if let (Some(path), Some(page)) = (reporting.html, &page) {
        write_whole(path, page).map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))?;
    }
    let trace = reporting.trace.is_some().then(|| trace_events::render(&report));
    if let (Some(path), Some(trace)) = (reporting.trace_file(), &trace) {
        write_whole(path, trace).map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))?;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let result = if let (true, Some(trace)) = (reporting.trace_on_stdout(), &trace) {
        out.write_all(trace.as_bytes())
    } else if reporting.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::from).and_then(|()| out.write_all(b"\n"))
    } else {
        text::write_summary(&mut out, &report, reporting.color, text::stdout_width())
    };
    written(result.and_then(|()| out.flush()), |e| format!("cannot write the report: {e}"))?;
    fail_on(&report.findings, reporting.fail_on)
}
