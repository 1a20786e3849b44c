//! Writers of the analysis's report: the terminal summary ([`text`]), the HTML page
//! ([`html`]) and the CSV/Parquet tables ([`tables`]), each a file per section. The JSON report
//! is the report model's own serialization.

pub mod html;
#[cfg(feature = "tables")]
pub mod tables;
pub mod text;
