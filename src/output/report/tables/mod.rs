//! `analyze --out DIR`: the report as files — `report.json`, and the flows, retransmit
//! episodes, findings, pause, CNP burst and incast tables as CSV and Parquet (polars); with `--packets` also a
//! per-packet table ([`crate::output::packet::table`]). Every file is written under a
//! temporary name; the files get their names together once all of them are complete, so a
//! failed run (a full disk, say) leaves neither a half-written file nor a partial set.

pub mod record;

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::output::atomic::{AtomicFile, Written};

use polars::prelude::*;

use serde::Serialize;

use crate::analyze::counters::report::{CounterRow, CounterWindow, HostCounters, Source};
use crate::analyze::exemplar::Exemplar;
use crate::analyze::finding::Finding;
use crate::analyze::path::report::HopReport;
use crate::analyze::report::Report;
use crate::analyze::roce::congestion::incast::IncastPeriod;
use crate::analyze::roce::flow::episodes::Episode;
use crate::analyze::roce::report::congestion::BurstReport;
use crate::analyze::roce::report::{FlowReport, PauseReport};
use crate::analyze::uet::report::PdcReport;
use record::{Cell, FlattenError, Schema};

pub(crate) fn polars_error(e: PolarsError) -> io::Error {
    io::Error::other(e.to_string())
}

/// A file that keeps the first write that failed: polars reports it as its own error (the
/// Parquet writer's "Invalid thrift: transport error"), which would hide why ("No space left
/// on device"). [`KeptError::or`] gives the write's error where there was one.
pub(crate) struct KeepsError<W> {
    inner: W,
    kept: KeptError,
}

/// The first failed write of a [`KeepsError`] file, shared with whoever reports it.
#[derive(Clone, Default)]
pub(crate) struct KeptError(Arc<Mutex<Option<io::Error>>>);

impl KeptError {
    /// The write error kept, else `e`.
    pub(crate) fn or(&self, e: PolarsError) -> io::Error {
        let kept = self.0.lock().ok().and_then(|mut k| k.take());
        kept.unwrap_or_else(|| polars_error(e))
    }
}

impl<W: Write> KeepsError<W> {
    pub(crate) fn new(inner: W) -> (KeepsError<W>, KeptError) {
        let kept = KeptError::default();
        (KeepsError { inner, kept: kept.clone() }, kept)
    }

    fn keep<T>(&self, result: io::Result<T>) -> io::Result<T> {
        if let (Err(e), Ok(mut kept)) = (&result, self.kept.0.lock()) {
            kept.get_or_insert_with(|| io::Error::new(e.kind(), e.to_string()));
        }
        result
    }
}

impl<W: Write> Write for KeepsError<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf);
        self.keep(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        let flushed = self.inner.flush();
        self.keep(flushed)
    }
}

/// Writes `df` as NAME.csv and NAME.parquet in `dir`, adding both to `written`.
fn write_table(dir: &Path, name: &str, df: &mut DataFrame, written: &mut Written) -> io::Result<()> {
    for (ext, parquet) in [("csv", false), ("parquet", true)] {
        let (atomic, file) = AtomicFile::create(dir, &format!("{name}.{ext}"))?;
        let (mut out, kept) = KeepsError::new(BufWriter::new(file));
        if parquet { ParquetWriter::new(&mut out).finish(df).map(|_| ()) } else { CsvWriter::new(&mut out).finish(df) }
            .map_err(|e| kept.or(e))?;
        out.flush()?;
        written.0.push(atomic);
    }
    Ok(())
}

/// Writes the report's tables.
pub fn write_tables(dir: &Path, report: &Report) -> io::Result<Written> {
    let mut written = Written::default();
    for (name, mut df) in report_tables(report)? {
        write_table(dir, name, &mut df, &mut written)?;
    }
    Ok(written)
}

/// The report's tables by name: flows, retransmit episodes, findings, pauses (PFC and PAUSE),
/// CNP bursts and incast periods, and with `--tap` the path's hops. Each table's columns are
/// its record's JSON keys ([`record`]).
pub fn report_tables(report: &Report) -> io::Result<Vec<(&'static str, DataFrame)>> {
    let pauses: Vec<PauseRow> = report
        .roce
        .pfc
        .iter()
        .map(|p| PauseRow { kind: "pfc", pause: p.clone() })
        .chain(report.roce.pause.iter().map(|p| PauseRow { kind: "pause", pause: p.clone() }))
        .collect();
    let congestion = &report.roce.congestion;
    let mut tables = vec![
        ("flows", table(&report.roce.flows)?),
        ("retransmit_episodes", table(&report.roce.retransmit_episodes)?),
        ("findings", table(&report.findings)?),
        ("pfc", table(&pauses)?),
        ("cnp_bursts", table(&congestion.cnp_bursts)?),
        ("incast", table(&congestion.incast.periods)?),
    ];
    if let Some(path) = &report.path {
        tables.push(("hops", table(&path.hops)?));
    }
    if !report.counters.is_empty() {
        let rows: Vec<CounterTableRow> = report.counters.iter().flat_map(CounterTableRow::of_host).collect();
        tables.push(("counters", table(&rows)?));
    }
    if let Some(uet) = &report.uet {
        tables.push(("uet_pdcs", table(&uet.pdcs)?));
    }
    Ok(tables)
}

/// Every table's columns, those only some reports have included, whatever the rows.
pub fn table_schemas() -> io::Result<Vec<(&'static str, Schema)>> {
    Ok(vec![
        ("flows", schema::<FlowReport>()?),
        ("retransmit_episodes", schema::<Episode>()?),
        ("findings", schema::<Finding>()?),
        ("pfc", schema::<PauseRow>()?),
        ("cnp_bursts", schema::<BurstReport>()?),
        ("incast", schema::<IncastPeriod>()?),
        ("hops", schema::<HopReport>()?),
        ("counters", schema::<CounterTableRow>()?),
        ("uet_pdcs", schema::<PdcReport>()?),
    ])
}

/// A row of the PFC table: a pause source of `pfc[]` (`kind` pfc) or `pause[]` (pause).
#[derive(Serialize)]
struct PauseRow {
    kind: &'static str,
    #[serde(flatten)]
    pause: PauseReport,
}

impl Exemplar for PauseRow {
    fn exemplar() -> Self {
        PauseRow { kind: "", pause: PauseReport::exemplar() }
    }
}

/// A row of the counters table (`analyze --counters`): a counter of `counters[].rows[]` with
/// its host (or switch), source and window.
#[derive(Serialize)]
struct CounterTableRow {
    host: String,
    source: Source,
    window: CounterWindow,
    #[serde(flatten)]
    row: CounterRow,
}

impl CounterTableRow {
    fn of_host(h: &HostCounters) -> impl Iterator<Item = CounterTableRow> + '_ {
        h.rows.iter().map(|row| CounterTableRow {
            host: h.host.clone(),
            source: h.source,
            window: h.window.clone(),
            row: row.clone(),
        })
    }
}

impl Exemplar for CounterTableRow {
    fn exemplar() -> Self {
        let window = CounterWindow { before: Some(String::new()), after: Some(String::new()), seconds: Some(0.0) };
        CounterTableRow { host: String::new(), source: Source::Nic, window, row: CounterRow::exemplar() }
    }
}

fn flatten_error(e: FlattenError) -> io::Error {
    io::Error::other(format!("report table: {e}"))
}

fn schema<T: Serialize + Exemplar>() -> io::Result<Schema> {
    Schema::of(&T::exemplar()).map_err(flatten_error)
}

/// The table of `rows`, its columns their exemplar's flattened keys.
fn table<T: Serialize + Exemplar>(rows: &[T]) -> io::Result<DataFrame> {
    let schema = schema::<T>()?;
    let mut columns: Vec<ColumnCells> =
        schema.columns.iter().map(|(_, cell)| ColumnCells::of(cell, rows.len())).collect();
    for row in rows {
        for (column, cell) in columns.iter_mut().zip(schema.row(row).map_err(flatten_error)?) {
            column.push(cell);
        }
    }
    let columns = schema.columns.iter().zip(columns).map(|((name, _), cells)| cells.into_column(name)).collect();
    DataFrame::new_infer_height(columns).map_err(polars_error)
}

/// One column's values as they are gathered, typed by the exemplar's cell.
enum ColumnCells {
    Bool(Vec<Option<bool>>),
    U32(Vec<Option<u32>>),
    U64(Vec<Option<u64>>),
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

impl ColumnCells {
    fn of(exemplar: &Cell, rows: usize) -> ColumnCells {
        match exemplar {
            Cell::Bool(_) => ColumnCells::Bool(Vec::with_capacity(rows)),
            Cell::U32(_) => ColumnCells::U32(Vec::with_capacity(rows)),
            Cell::U64(_) => ColumnCells::U64(Vec::with_capacity(rows)),
            Cell::I64(_) => ColumnCells::I64(Vec::with_capacity(rows)),
            Cell::F64(_) => ColumnCells::F64(Vec::with_capacity(rows)),
            Cell::Text(_) | Cell::Null => ColumnCells::Text(Vec::with_capacity(rows)),
        }
    }

    /// Adds a row's cell; one of another type than the column's (which a record of the
    /// exemplar's type never gives) is empty.
    fn push(&mut self, cell: Cell) {
        match (self, cell) {
            (ColumnCells::Bool(v), Cell::Bool(x)) => v.push(Some(x)),
            (ColumnCells::U32(v), Cell::U32(x)) => v.push(Some(x)),
            (ColumnCells::U64(v), Cell::U64(x)) => v.push(Some(x)),
            (ColumnCells::I64(v), Cell::I64(x)) => v.push(Some(x)),
            (ColumnCells::F64(v), Cell::F64(x)) => v.push(Some(x)),
            (ColumnCells::Text(v), Cell::Text(x)) => v.push(Some(x)),
            (ColumnCells::Bool(v), _) => v.push(None),
            (ColumnCells::U32(v), _) => v.push(None),
            (ColumnCells::U64(v), _) => v.push(None),
            (ColumnCells::I64(v), _) => v.push(None),
            (ColumnCells::F64(v), _) => v.push(None),
            (ColumnCells::Text(v), _) => v.push(None),
        }
    }

    fn into_column(self, name: &str) -> Column {
        let name = name.into();
        match self {
            ColumnCells::Bool(v) => Column::new(name, v),
            ColumnCells::U32(v) => Column::new(name, v),
            ColumnCells::U64(v) => Column::new(name, v),
            ColumnCells::I64(v) => Column::new(name, v),
            ColumnCells::F64(v) => Column::new(name, v),
            ColumnCells::Text(v) => Column::new(name, v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::report::text::TEXT_KEYS;

    /// Every numeric column of every table: the summary shows it or says it leaves it to the
    /// tables, and every key it names is a column.
    #[test]
    fn the_summary_shows_or_leaves_aside_every_numeric_key_of_every_table() {
        let schemas = table_schemas().unwrap();
        for keys in &TEXT_KEYS {
            let (_, schema) = schemas.iter().find(|(t, _)| *t == keys.table).expect(keys.table);
            let numeric = schema.columns.iter().filter(|(_, c)| !matches!(c, Cell::Text(_) | Cell::Bool(_)));
            for (column, _) in numeric {
                assert!(
                    keys.shows(column).is_some(),
                    "{}: the summary neither shows nor leaves aside `{column}`",
                    keys.table
                );
            }
            for name in keys.shown.iter().chain(keys.hidden) {
                let matches = |(c, _): &(String, Cell)| c == name || (name.ends_with('_') && c.starts_with(name));
                assert!(schema.columns.iter().any(matches), "{}: `{name}` is no column", keys.table);
            }
        }
        let tables: Vec<&str> = schemas.iter().map(|(t, _)| *t).collect();
        let declared: Vec<&str> = TEXT_KEYS.iter().map(|k| k.table).collect();
        assert_eq!(tables.len(), declared.len());
        assert!(tables.iter().all(|t| declared.contains(t)), "{tables:?} {declared:?}");
    }
}
