//! The per-packet table of `analyze --out DIR --packets`: packets.csv and packets.parquet, one
//! row per frame, one column per field of [`FRAME_COLUMNS`] ([`super::columns`]), with the
//! frame's final verdict. Written a batch at a time, so memory does not grow with the capture.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use polars::prelude::*;

use super::columns::{FRAME_COLUMNS, FrameColumns, Style};
use crate::fields::{self, Field};
use crate::ordered::{Decided, FrameSink};
use crate::output::atomic::{AtomicFile, Written};
use crate::output::report::tables::{KeepsError, KeptError, polars_error};

/// Rows per batch.
const BATCH_ROWS: usize = 16_384;

pub struct PacketTable {
    columns: FrameColumns,
    csv: polars::io::csv::write::BatchedWriter<KeepsError<BufWriter<File>>>,
    parquet: polars::io::parquet::write::BatchedWriter<KeepsError<BufWriter<File>>>,
    files: [AtomicFile; 2],
    /// The first failed write of each file.
    kept: [KeptError; 2],
}

impl PacketTable {
    pub fn create(dir: &Path) -> io::Result<PacketTable> {
        let fields: Vec<&'static Field> = FRAME_COLUMNS
            .iter()
            .map(|name| fields::by_name(name).ok_or_else(|| io::Error::other(format!("no field {name}"))))
            .collect::<io::Result<_>>()?;
        let mut columns = FrameColumns::new(&fields, Style::Table, BATCH_ROWS);
        let schema = columns.take().map_err(polars_error)?.schema().as_ref().clone();
        let (csv_file, csv) = AtomicFile::create(dir, "packets.csv")?;
        let (parquet_file, parquet) = AtomicFile::create(dir, "packets.parquet")?;
        let ((csv, csv_kept), (parquet, parquet_kept)) =
            (KeepsError::new(BufWriter::new(csv)), KeepsError::new(BufWriter::new(parquet)));
        let csv = CsvWriter::new(csv).batched(&schema).map_err(|e| csv_kept.or(e))?;
        let parquet = ParquetWriter::new(parquet).batched(&schema).map_err(|e| parquet_kept.or(e))?;
        Ok(PacketTable { columns, csv, parquet, files: [csv_file, parquet_file], kept: [csv_kept, parquet_kept] })
    }

    fn flush(&mut self) -> io::Result<()> {
        let df = self.columns.take().map_err(polars_error)?;
        let [csv, parquet] = &self.kept;
        self.csv.write_batch(&df).map_err(|e| csv.or(e))?;
        self.parquet.write_batch(&df).map_err(|e| parquet.or(e))
    }

    /// Writes the last batch; the complete files are still to be committed.
    pub fn finish(mut self) -> io::Result<Written> {
        self.flush()?;
        let [csv, parquet] = &self.kept;
        self.csv.finish().map_err(|e| csv.or(e))?;
        self.parquet.finish().map_err(|e| parquet.or(e))?;
        Ok(Written(self.files.into()))
    }
}

impl FrameSink for PacketTable {
    fn write(&mut self, d: Decided<'_, '_>) -> io::Result<()> {
        self.columns.push(&d.frame());
        if self.columns.rows() >= BATCH_ROWS { self.flush() } else { Ok(()) }
    }
}
