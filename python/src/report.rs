//! `rocescope.analyze`'s report: the JSON report, the text summary, the HTML page and the `--out` tables
//! (flows, retransmit episodes, findings, pauses, CNP bursts, incast periods, and the path's
//! hops, the counters and the UET PDCs where the report has them).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use rocescope::analyze::report::Report;
use rocescope::output::report::{html, tables, text};

use crate::arrow::ArrowStream;

#[pyclass(module = "rocescope._rocescope", frozen)]
pub struct NativeReport {
    report: Report,
}

impl NativeReport {
    pub fn new(report: Report) -> NativeReport {
        NativeReport { report }
    }
}

#[pymethods]
impl NativeReport {
    /// The JSON report, as `analyze --json` prints it.
    fn json(&self) -> PyResult<String> {
        serde_json::to_string(&self.report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// The text summary, as `analyze` prints it (without colour).
    fn summary(&self) -> PyResult<String> {
        let mut text = Vec::new();
        text::write_summary(&mut text, &self.report, false, text::PIPE_WIDTH)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    /// The HTML page, as `analyze --html` writes it.
    fn html(&self) -> String {
        html::render(&self.report)
    }

    /// The tables `--out` writes, by name.
    fn tables(&self) -> PyResult<Vec<(String, ArrowStream)>> {
        let tables = tables::report_tables(&self.report).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(tables.into_iter().map(|(name, df)| (name.to_string(), ArrowStream::new(vec![df]))).collect())
    }
}
