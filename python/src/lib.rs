//! The extension module `rocescope._rocescope` behind the Python package `rocescope`
//! (`python/rocescope/__init__.py` gives the API its shape, types and docstrings): the
//! command line's reading, analysis and tables, with the GIL released while they run. Every
//! call takes its arguments as the command line does, so that it checks them alike and says
//! the same of them.

mod arrow;
mod frames;
mod report;
mod watch;

use clap::Parser;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use rocescope::analyze::assemble;
use rocescope::cli::{Cli, Command};
use rocescope::commands::analyze::{Analysed, analyse};
use rocescope::commands::exit::Failure;
use rocescope::commands::reporting::absent_host_warnings;
use rocescope::fields;

use arrow::ArrowStream;
use report::NativeReport;
use watch::PythonWatch;

pyo3::create_exception!(
    _rocescope,
    NativeFailure,
    PyException,
    "A command's failure: (kind, message), kind one of capture, usage, output."
);

/// `failure` as Python's exception; where its message was given as warnings (the inputs that
/// could not be read), those.
fn raised(failure: Failure, warnings: &[String]) -> PyErr {
    let (kind, message) = match failure {
        Failure::NoInput(m) => ("capture", m),
        Failure::Usage(m) => ("usage", m),
        Failure::Output(m) => ("output", m),
        Failure::Findings => ("findings", String::new()),
    };
    let message = if message.is_empty() { warnings.join("; ") } else { message };
    NativeFailure::new_err((kind, message))
}

/// The command line `rocescope ARGS…`, parsed; a wrong one is a usage failure with clap's
/// first line (`error: …`).
fn parse(args: Vec<String>) -> PyResult<Command> {
    let line = std::iter::once("rocescope".to_string()).chain(args);
    Cli::try_parse_from(line).map(|cli| cli.command).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
        raised(Failure::Usage(first), &[])
    })
}

/// What a call returns beside its result: the warnings the command would print; the
/// progress callback's error, raised instead.
fn finished<T>(watch: PythonWatch, result: Result<T, Failure>) -> PyResult<(T, Vec<String>)> {
    if let Some(e) = watch.take_callback_error() {
        return Err(e);
    }
    let warnings = watch.take_warnings();
    match result {
        Ok(value) => Ok((value, warnings)),
        Err(failure) => Err(raised(failure, &warnings)),
    }
}

/// `packets ARGS…` (files, `-Y`, the frame choices), `fields` of each frame as a table: the
/// batches as an Arrow stream, and the warnings.
#[pyfunction]
#[pyo3(signature = (args, fields, progress = None))]
fn packets(
    py: Python<'_>,
    args: Vec<String>,
    fields: Vec<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(ArrowStream, Vec<String>)> {
    let Command::Packets(args) = parse([vec!["packets".to_string()], args].concat())? else {
        return Err(raised(Failure::Usage("not a packets command".into()), &[]));
    };
    let fields = fields
        .iter()
        .map(|name| fields::for_option("fields:", name))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| raised(Failure::Usage(e), &[]))?;
    let watch = PythonWatch::new(progress);
    let batches = py.detach(|| frames::packet_batches(&args, &fields, &watch));
    finished(watch, batches).map(|(batches, warnings)| (ArrowStream::new(batches), warnings))
}

/// `analyze ARGS…`: the report, and the warnings.
#[pyfunction]
#[pyo3(signature = (args, progress = None))]
fn analyze(py: Python<'_>, args: Vec<String>, progress: Option<Py<PyAny>>) -> PyResult<(NativeReport, Vec<String>)> {
    let Command::Analyze(args) = parse([vec!["analyze".to_string()], args].concat())? else {
        return Err(raised(Failure::Usage("not an analyze command".into()), &[]));
    };
    let watch = PythonWatch::new(progress);
    let report = py.detach(|| {
        let Analysed { analyzer, inputs, joined, .. } = analyse(&args, &watch)?;
        let report = assemble::report_joined(&analyzer, inputs, &joined);
        absent_host_warnings(&report).into_iter().for_each(|w| watch.warn(w));
        Ok(report)
    });
    finished(watch, report).map(|(report, warnings)| (NativeReport::new(report), warnings))
}

/// The command line `args` (the program's name first) run as the `rocescope` command runs it:
/// its output on standard output and error, its exit status returned (a usage error clap
/// reports ends the process with status 2, as the command does). `python -m rocescope` and
/// the `rocescope` script pip installs.
#[pyfunction]
fn main(py: Python<'_>, args: Vec<String>) -> u8 {
    let cli = rocescope::cli::parse_from(args);
    py.detach(|| rocescope::commands::exit::status(rocescope::commands::run(&cli.command)))
}

/// The field registry, one tuple a field: name, label, type, protocol, base, description
/// (what `rocescope fields` lists; a protocol's type is `FT_PROTOCOL`).
#[pyfunction]
fn field_registry() -> Vec<(&'static str, &'static str, &'static str, &'static str, String, &'static str)> {
    fields::all()
        .map(|f| (f.name, f.label, f.ty.name(), f.protocol(), f.glossary_base().into_owned(), f.blurb))
        .collect()
}

#[pymodule]
fn _rocescope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(packets, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(field_registry, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_class::<ArrowStream>()?;
    m.add_class::<NativeReport>()?;
    m.add("NativeFailure", m.py().get_type::<NativeFailure>())?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("FRAME_COLUMNS", rocescope::output::packet::columns::FRAME_COLUMNS.to_vec())?;
    Ok(())
}
