//! The per-packet table of `analyze --out DIR --packets`: packets.csv and packets.parquet, one
//! row per frame, one column per field of [`PACKET_COLUMNS`], read through the field registry
//! (the innermost occurrence of each: the RoCE packet's own headers in a mirror frame), with
//! the frame's final verdict. Written a batch at a time, so memory does not grow with the
//! capture.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use polars::prelude::*;

use super::atomic::{AtomicFile, Written};
use super::tables::polars_error;
use crate::fields::{self, Field, FieldType, Frame, Value, write_tshark};
use crate::ordered::{Decided, FrameSink};

/// The table's columns, by field name; times are integers of nanoseconds, other integers are
/// numbers whatever their display base, addresses and strings text as tshark prints them.
pub const PACKET_COLUMNS: &[&str] = &[
    "frame.number",
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "rocescope.frame.kind",
    "eth.src",
    "eth.dst",
    "vlan.id",
    "vlan.priority",
    "ip.src",
    "ip.dst",
    "ipv6.src",
    "ipv6.dst",
    "infiniband.lrh.slid",
    "infiniband.lrh.dlid",
    "infiniband.grh.sgid",
    "infiniband.grh.dgid",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    "udp.srcport",
    "udp.dstport",
    "rocescope.roce.version",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.bth.a",
    "rocescope.bth.fecn",
    "rocescope.bth.becn",
    "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.deth.srcqp",
    "rocescope.icrc.status",
    "rocescope.vcrc.status",
    "rocescope.malformed",
    "rocescope.analysis.flow",
    "rocescope.analysis.seq_class",
    "rocescope.analysis.missing_psns",
    "rocescope.analysis.capture_missed",
    "rocescope.analysis.mirror_duplicate",
];

/// Rows per batch.
const BATCH_ROWS: usize = 16_384;

/// The values of one column for the rows of a batch (text straight into the column's
/// buffer, with no allocation per cell).
enum Values {
    Uint(Vec<Option<u64>>),
    Bool(Vec<Option<bool>>),
    Int(Vec<Option<i64>>),
    Text(StringChunkedBuilder),
}

impl Values {
    fn for_type(ty: FieldType, name: &str) -> Values {
        match ty {
            FieldType::Uint(_) | FieldType::FrameNum => Values::Uint(Vec::with_capacity(BATCH_ROWS)),
            FieldType::Bool(_) | FieldType::Protocol => Values::Bool(Vec::with_capacity(BATCH_ROWS)),
            FieldType::AbsoluteTime | FieldType::RelativeTime => Values::Int(Vec::with_capacity(BATCH_ROWS)),
            _ => Values::Text(StringChunkedBuilder::new(name.into(), BATCH_ROWS)),
        }
    }

    /// Appends the field's value (or null); `scratch` is reused for text.
    fn push(&mut self, field: &Field, value: Option<Value<'_>>, scratch: &mut String) {
        match self {
            Values::Uint(v) => v.push(value.and_then(|x| x.as_uint())),
            Values::Bool(v) => v.push(value.map(|x| x.as_uint().is_none_or(|u| u != 0))),
            Values::Int(v) => v.push(value.and_then(|x| if let Value::Time(t) = x { Some(t) } else { None })),
            Values::Text(b) => match value {
                Some(Value::Str(text)) => b.append_value(text),
                Some(x) => {
                    scratch.clear();
                    write_tshark(scratch, field, &x);
                    b.append_value(scratch.as_str());
                }
                None => b.append_null(),
            },
        }
    }

    /// The batch as a column, emptied.
    fn take(&mut self, name: &str) -> Column {
        match self {
            Values::Uint(v) => Column::new(name.into(), std::mem::take(v)),
            Values::Bool(v) => Column::new(name.into(), std::mem::take(v)),
            Values::Int(v) => Column::new(name.into(), std::mem::take(v)),
            Values::Text(b) => {
                let full = std::mem::replace(b, StringChunkedBuilder::new(name.into(), BATCH_ROWS));
                full.finish().into_column()
            }
        }
    }
}

pub struct PacketTable {
    fields: Vec<&'static Field>,
    columns: Vec<Values>,
    rows: usize,
    scratch: String,
    csv: polars::io::csv::write::BatchedWriter<BufWriter<File>>,
    parquet: polars::io::parquet::write::BatchedWriter<BufWriter<File>>,
    files: [AtomicFile; 2],
}

impl PacketTable {
    pub fn create(dir: &Path) -> io::Result<PacketTable> {
        let fields: Vec<&'static Field> = PACKET_COLUMNS
            .iter()
            .map(|name| fields::by_name(name).ok_or_else(|| io::Error::other(format!("no field {name}"))))
            .collect::<io::Result<_>>()?;
        let mut columns: Vec<Values> = fields.iter().map(|f| Values::for_type(f.ty, f.name)).collect();
        let empty: Vec<Column> = columns.iter_mut().zip(&fields).map(|(c, f)| c.take(f.name)).collect();
        let schema = DataFrame::new_infer_height(empty).map_err(polars_error)?.schema().as_ref().clone();
        let (csv_file, csv) = AtomicFile::create(dir, "packets.csv")?;
        let (parquet_file, parquet) = AtomicFile::create(dir, "packets.parquet")?;
        let csv = CsvWriter::new(BufWriter::new(csv)).batched(&schema).map_err(polars_error)?;
        let parquet = ParquetWriter::new(BufWriter::new(parquet)).batched(&schema).map_err(polars_error)?;
        Ok(PacketTable {
            fields,
            columns,
            rows: 0,
            scratch: String::new(),
            csv,
            parquet,
            files: [csv_file, parquet_file],
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        let batch: Vec<Column> = self.columns.iter_mut().zip(&self.fields).map(|(c, f)| c.take(f.name)).collect();
        self.rows = 0;
        let df = DataFrame::new_infer_height(batch).map_err(polars_error)?;
        self.csv.write_batch(&df).map_err(polars_error)?;
        self.parquet.write_batch(&df).map_err(polars_error)
    }

    /// Writes the last batch; the complete files are still to be committed.
    pub fn finish(mut self) -> io::Result<Written> {
        self.flush()?;
        self.csv.finish().map_err(polars_error)?;
        self.parquet.finish().map_err(polars_error)?;
        Ok(Written(self.files.into()))
    }
}

impl FrameSink for PacketTable {
    fn write(&mut self, d: Decided<'_, '_>) -> io::Result<()> {
        let frame = Frame { number: d.number, packet: d.packet, first_ts_ns: d.first_ts_ns, verdict: Some(d.verdict) };
        for (values, field) in self.columns.iter_mut().zip(&self.fields) {
            let mut innermost = None;
            field.values(&frame, &mut |v| innermost = Some(v));
            values.push(field, innermost, &mut self.scratch);
        }
        self.rows += 1;
        if self.rows >= BATCH_ROWS { self.flush() } else { Ok(()) }
    }
}
