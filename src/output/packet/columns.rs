//! Columns of frames read through the field registry, a batch at a time: one column per field,
//! each row the field's innermost occurrence in a frame (the RoCE packet's own headers in a
//! mirror frame), null where the frame has none. Values go straight into polars' column
//! builders (values and a validity bitmap, no allocation per cell); addresses are formatted
//! once per distinct address a batch. The per-packet table and the dataset's frames are built
//! so.

use polars::prelude::*;
use rustc_hash::FxHashMap;

use crate::fields::{Field, FieldType, Frame, Value, write_tshark};

/// How the columns are typed and named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Named by the field (`frame.number`); unsigned integers as `u64`, times as `i64`
    /// nanoseconds (`analyze --out --packets`).
    Table,
    /// Named by the field with `.` replaced by `_` (`frame_number`), as SQL engines take
    /// names; integers signed (`i32` up to 16 bits, else `i64`: Spark reads no unsigned 64-bit
    /// integer), absolute times as UTC timestamps of microseconds (Spark reads no Parquet
    /// timestamp of nanoseconds) (`export --dataset`).
    Dataset,
}

/// A frame's columns unless chosen otherwise (the per-packet table's, and the dataset's when
/// `-e` does not choose), by field name: where and when, the addresses of every kind of packet
/// (Ethernet, IPv4, IPv6, RoCEv1's GIDs, InfiniBand LIDs), the headers' fields a query filters
/// and groups by, the ICRC and VCRC verdicts, what was malformed, and the analysis's per-frame
/// fields.
pub const FRAME_COLUMNS: &[&str] = &[
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
    "infiniband.grh.sgid",
    "infiniband.grh.dgid",
    "infiniband.lrh.slid",
    "infiniband.lrh.dlid",
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
    "rocescope.cnp",
    "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.deth.srcqp",
    "rocescope.payload.len",
    "rocescope.icrc.status",
    "rocescope.vcrc.status",
    "rocescope.malformed",
    "rocescope.malformed.layer",
    "rocescope.analysis.flow",
    "rocescope.analysis.seq_class",
    "rocescope.analysis.gap",
    "rocescope.analysis.missing_psns",
    "rocescope.analysis.capture_missed",
    "rocescope.analysis.retransmission",
    "rocescope.analysis.late_arrival",
    "rocescope.analysis.mirror_duplicate",
];

/// Distinct addresses kept formatted per text column; beyond, the memo starts again.
const MEMO_ENTRIES: usize = 4096;

/// The values of one column for the rows of a batch.
enum Values {
    U64(PrimitiveChunkedBuilder<UInt64Type>),
    I32(PrimitiveChunkedBuilder<Int32Type>),
    I64(PrimitiveChunkedBuilder<Int64Type>),
    /// Microseconds since the epoch, made a UTC timestamp column.
    Timestamp(PrimitiveChunkedBuilder<Int64Type>),
    Bool(BooleanChunkedBuilder),
    /// Text, with the text of each address met in the batch.
    Text(StringChunkedBuilder, FxHashMap<u128, Box<str>>),
}

impl Values {
    fn new(field: &Field, style: Style, name: &str, capacity: usize) -> Values {
        let name: PlSmallStr = name.into();
        let absolute = field.ty == FieldType::AbsoluteTime || field.name == "frame.time_epoch";
        match (field.ty, style) {
            (FieldType::Uint(_) | FieldType::FrameNum, Style::Table) => {
                Values::U64(PrimitiveChunkedBuilder::new(name, capacity))
            }
            (FieldType::Uint(bits), Style::Dataset) if bits <= 16 => {
                Values::I32(PrimitiveChunkedBuilder::new(name, capacity))
            }
            (FieldType::Uint(_) | FieldType::FrameNum, Style::Dataset) => {
                Values::I64(PrimitiveChunkedBuilder::new(name, capacity))
            }
            (FieldType::Bool(_) | FieldType::Protocol, _) => Values::Bool(BooleanChunkedBuilder::new(name, capacity)),
            (FieldType::AbsoluteTime | FieldType::RelativeTime, Style::Dataset) if absolute => {
                Values::Timestamp(PrimitiveChunkedBuilder::new(name, capacity))
            }
            (FieldType::AbsoluteTime | FieldType::RelativeTime, _) => {
                Values::I64(PrimitiveChunkedBuilder::new(name, capacity))
            }
            _ => Values::Text(StringChunkedBuilder::new(name, capacity), FxHashMap::default()),
        }
    }

    /// Appends the field's value (or null); `scratch` is reused for text.
    fn push(&mut self, frame: &Frame<'_, '_>, field: &Field, value: Option<Value<'_>>, scratch: &mut String) {
        let uint = value.and_then(|x| x.as_uint());
        let time = || value.and_then(|x| if let Value::Time(t) = x { Some(t) } else { None });
        match self {
            Values::U64(b) => b.append_option(uint),
            Values::I32(b) => b.append_option(uint.map(|v| v as i32)),
            Values::I64(b) if matches!(field.ty, FieldType::AbsoluteTime | FieldType::RelativeTime) => {
                b.append_option(time())
            }
            Values::I64(b) => b.append_option(uint.map(|v| v as i64)),
            Values::Timestamp(b) => b.append_option(time().map(|ns| ns.div_euclid(1000))),
            Values::Bool(b) => b.append_option(value.map(|x| x.as_uint().is_none_or(|u| u != 0))),
            Values::Text(b, memo) => match value {
                Some(Value::Str(text)) => b.append_value(text),
                Some(x) => match address_key(&x) {
                    Some(key) => {
                        if memo.len() >= MEMO_ENTRIES {
                            memo.clear();
                        }
                        let text = memo.entry(key).or_insert_with(|| {
                            scratch.clear();
                            write_tshark(scratch, frame, field, &x);
                            scratch.as_str().into()
                        });
                        b.append_value(&**text);
                    }
                    None => {
                        scratch.clear();
                        write_tshark(scratch, frame, field, &x);
                        b.append_value(scratch.as_str());
                    }
                },
                None => b.append_null(),
            },
        }
    }

    /// The column, and a new builder in its place.
    fn take(&mut self, field: &Field, style: Style, name: &str, capacity: usize) -> Column {
        match std::mem::replace(self, Values::new(field, style, name, capacity)) {
            Values::U64(b) => b.finish().into_column(),
            Values::I32(b) => b.finish().into_column(),
            Values::I64(b) => b.finish().into_column(),
            Values::Timestamp(b) => b.finish().into_datetime(TimeUnit::Microseconds, Some(TimeZone::UTC)).into_column(),
            Values::Bool(b) => b.finish().into_column(),
            Values::Text(b, _) => b.finish().into_column(),
        }
    }
}

/// An address's bytes as a memo key (the kind in the top byte), for the values formatted as
/// text that repeat from frame to frame.
fn address_key(value: &Value<'_>) -> Option<u128> {
    let (kind, bytes): (u8, &[u8]) = match value {
        Value::Ether(m) => (1, m),
        Value::Ipv4(a) => (2, a),
        Value::Ipv6(a) => return Some(u128::from_be_bytes(*a) ^ (3 << 120)),
        _ => return None,
    };
    Some(bytes.iter().fold(u128::from(kind) << 120, |k, b| (k << 8) | u128::from(*b)))
}

/// One column being filled.
struct ColumnBuilder {
    field: &'static Field,
    name: String,
    values: Values,
}

/// Columns of frames, one per field, in batches.
pub struct FrameColumns {
    columns: Vec<ColumnBuilder>,
    style: Style,
    /// Rows a batch is made for.
    capacity: usize,
    rows: usize,
    scratch: String,
}

impl FrameColumns {
    /// Columns of `fields` in `style`, for batches of about `capacity` rows.
    pub fn new(fields: &[&'static Field], style: Style, capacity: usize) -> FrameColumns {
        let columns = fields
            .iter()
            .map(|&field| {
                let name = match style {
                    Style::Table => field.name.to_string(),
                    Style::Dataset => field.name.replace('.', "_"),
                };
                let values = Values::new(field, style, &name, capacity);
                ColumnBuilder { field, name, values }
            })
            .collect();
        FrameColumns { columns, style, capacity, rows: 0, scratch: String::new() }
    }

    /// Adds a row: each field's innermost value in `frame`.
    pub fn push(&mut self, frame: &Frame<'_, '_>) {
        for column in &mut self.columns {
            let mut innermost = None;
            column.field.values(frame, &mut |v| innermost = Some(v));
            column.values.push(frame, column.field, innermost, &mut self.scratch);
        }
        self.rows += 1;
    }

    /// Rows in the batch.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The batch as a data frame; the columns start the next one empty, made for as many rows
    /// as this one had (at least the capacity they were made for).
    pub fn take(&mut self) -> PolarsResult<DataFrame> {
        let (style, capacity) = (self.style, self.capacity.max(self.rows));
        self.rows = 0;
        let batch: Vec<Column> =
            self.columns.iter_mut().map(|c| c.values.take(c.field, style, &c.name, capacity)).collect();
        DataFrame::new_infer_height(batch)
    }
}
