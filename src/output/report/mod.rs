//! Writers of the analysis's report: the terminal summary ([`text`]), the HTML page
//! ([`html`]) and the CSV/Parquet tables ([`tables`]), each a file per section, and the Chrome
//! trace of its timeline ([`trace_events`]). The JSON report is the report model's own
//! serialization.

pub mod html;
#[cfg(feature = "tables")]
pub mod tables;
pub mod text;
pub mod trace_events;
