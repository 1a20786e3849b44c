//! `export --dataset DIR`: a Hive-partitioned Parquet dataset that the engines a fabric team
//! already runs (Spark, DuckDB, Trino, ClickHouse) read directly (docs/scale.md):
//!
//! - `DIR/frames/capture=NAME/date=YYYY-MM-DD/part-NNNNN.parquet`: one row a frame, a column a
//!   field of the field registry ([`super::packet::columns`], `Style::Dataset`), the analysis's
//!   fields included; each file one row group of at most [`ROW_GROUP_ROWS`] rows, sorted by
//!   time, of one UTC day;
//! - `DIR/TABLE/capture=NAME/part-00000.parquet` for each per-run table (flows, retransmit
//!   episodes, findings, PFC, CNP bursts, incast, UET PDCs, and `captures`: the run's headline
//!   numbers), with the capture's time range as columns.
//!
//! Every file is zstd-compressed and carries the dataset's schema version in its key-value
//! metadata. A capture's partitions are written into a staging directory and replace the
//! capture's earlier ones only once every file is complete; other captures are left alone.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use polars::prelude::*;

use super::packet::columns::{FrameColumns, Style};
use super::report::tables::{KeepsError, polars_error, report_tables};
use crate::analyze::Verdict;
use crate::analyze::report::Report;
use crate::capture::{LinkType, Record};
use crate::decode::{DecodedFrame, Decoder};
use crate::fields::{Field, Frame};
use crate::pipeline::Beside;

/// The version of the dataset's layout and columns, in every file's metadata under
/// [`SCHEMA_VERSION_KEY`]. 5: the findings have `evidence_devices` and `evidence_config_lines`
/// (`analyze --config`); 4: the flows have owner columns and the findings `evidence_lines`;
/// 3: the per-run tables' columns are their records' JSON keys; 2:
/// timestamps of microseconds, and `frame_time_epoch_ns`.
pub const SCHEMA_VERSION: u32 = 5;
pub const SCHEMA_VERSION_KEY: &str = "rocescope.dataset.schema_version";

/// The frames' column of their exact times, nanoseconds since the epoch (the timestamp columns
/// hold microseconds, as Spark reads them), beside `frame_time_epoch`.
pub const EXACT_TIME_COLUMN: &str = "frame_time_epoch_ns";

/// Rows of a frames file (one row group).
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows the frames' columns are made for at first; they grow from there to a file's.
const ROWS_RESERVED: usize = 1 << 17;

/// A name as a partition value takes it: letters, digits, `.`, `_` and `-`; anything else
/// becomes `_` (a path separator, `=`, spaces).
pub fn partition_value(name: &str) -> String {
    let cleaned: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
    if cleaned.is_empty() || cleaned.starts_with('.') { format!("_{cleaned}") } else { cleaned }
}

/// A capture's name from its first file: the file name without its capture and compression
/// extensions (`tap1.pcapng.zst` → `tap1`); `stdin` for standard input.
pub fn capture_name(first_file: &Path) -> String {
    if first_file.as_os_str() == "-" {
        return "stdin".to_string();
    }
    let mut name = first_file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for ext in [".gz", ".zst", ".pcapng", ".pcap", ".cap", ".erf"] {
        if let Some(stem) = name.strip_suffix(ext).filter(|s| !s.is_empty()) {
            name = stem.to_string();
        }
    }
    partition_value(&name)
}

/// Writes `df` as a zstd Parquet file at `path`, the schema version in its metadata.
fn write_parquet(path: &Path, df: &mut DataFrame) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let metadata = vec![(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())];
    let (file, kept) = KeepsError::new(BufWriter::new(File::create(path)?));
    ParquetWriter::new(file)
        .with_compression(ParquetCompression::Zstd(None))
        .with_row_group_size(Some(ROW_GROUP_ROWS))
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata)))
        .finish(df)
        .map(|_| ())
        .map_err(|e| kept.or(e))
}

/// Where a capture's frames stand in the dataset when its analysis is saved (`export
/// --state`): what an export that goes on from that state (`--resume`) carries on with.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    /// The capture's name, its partitions' `capture=`.
    pub capture: String,
    /// The frames' fields, in the order of their columns.
    pub fields: Vec<String>,
    /// The capture's frames files numbered from this one hold the rows whose verdicts were not
    /// final when the analysis was saved, with the verdicts the capture's end gives them: the
    /// export that goes on writes those rows again, with the verdicts its frames decide.
    pub provisional_from: u32,
    /// The rows in those files.
    pub provisional_rows: usize,
}

/// One capture's part of a dataset, being written.
pub struct Dataset {
    root: PathBuf,
    capture: String,
    /// Where the capture's partitions are written before they replace the earlier ones.
    staging: PathBuf,
    /// Where an earlier export of the capture, which this one goes on from, left its frames:
    /// the frames' partition keeps its files but the provisional ones, and takes the new files.
    going_on: Option<Progress>,
    committed: bool,
}

impl Dataset {
    /// Starts writing the capture `capture` (a [`partition_value`]) into the dataset `root`.
    pub fn create(root: &Path, capture: &str) -> io::Result<Dataset> {
        let staging = root.join(format!(".staging-{capture}-{}", std::process::id()));
        if staging.exists() {
            fs::remove_dir_all(&staging)?;
        }
        fs::create_dir_all(&staging)?;
        let root = root.to_path_buf();
        Ok(Dataset { root, capture: capture.to_string(), staging, going_on: None, committed: false })
    }

    /// Starts writing more of the capture an earlier export left at `progress`.
    pub fn going_on(root: &Path, progress: &Progress) -> io::Result<Dataset> {
        let mut dataset = Dataset::create(root, &progress.capture)?;
        dataset.going_on = Some(progress.clone());
        Ok(dataset)
    }

    /// The capture's frames partition in the dataset.
    fn frames_partition(&self) -> PathBuf {
        self.root.join("frames").join(self.partition())
    }

    /// The capture's name.
    pub fn capture(&self) -> &str {
        &self.capture
    }

    /// The capture's partition directory's name.
    fn partition(&self) -> String {
        format!("capture={}", self.capture)
    }

    /// The staging directory of `table`'s partition for this capture.
    fn staged(&self, table: impl AsRef<Path>) -> PathBuf {
        self.staging.join(table).join(self.partition())
    }

    /// The frames' writers, with columns for `fields`. Going on, the earlier run's provisional
    /// rows are read back, to be written again with their final verdicts.
    pub fn frames(&self, fields: &[&'static Field]) -> io::Result<(FrameRows, VerdictRows)> {
        let Some(progress) = &self.going_on else {
            return Ok(frame_rows(fields, self.staged("frames"), Start::default()));
        };
        let from = progress.provisional_from;
        let provisional = numbered_parts(&self.frames_partition())?.into_iter().filter(|(n, _)| *n >= from);
        let waiting = provisional.map(|(_, path)| waiting_rows(&path)).collect::<io::Result<Vec<_>>>()?;
        let found: usize = waiting.iter().map(|w| w.headers.height()).sum();
        if found != progress.provisional_rows {
            return Err(io::Error::other(format!(
                "its capture {} holds {found} of the {} rows the saved export left unsettled: is it the dataset that export wrote?",
                self.capture, progress.provisional_rows
            )));
        }
        let start = Start { first_part: from, waiting };
        Ok(frame_rows(fields, self.staged("frames"), start))
    }

    /// Writes the last frames and the per-run tables of `report`, then puts every partition
    /// of the capture in place of its earlier one.
    pub fn finish(mut self, frames: VerdictRows, report: &Report) -> io::Result<()> {
        frames.finish()?;
        let range = |name: &str, ts: Option<i64>| {
            Int64Chunked::from_iter_options(name.into(), std::iter::once(ts.map(|ns| ns.div_euclid(1000))))
                .into_datetime(TimeUnit::Microseconds, Some(TimeZone::UTC))
                .into_column()
        };
        let (first, last) = (report.roce.capture.first_ts_ns, report.roce.capture.last_ts_ns);
        for (table, df) in report_tables(report)?.into_iter().chain([("captures", captures_row(report)?)]) {
            let rows = df.height();
            let mut df = signed(df)?
                .hstack(&[
                    range("capture_first_ts", first).new_from_index(0, rows),
                    range("capture_last_ts", last).new_from_index(0, rows),
                ])
                .map_err(polars_error)?;
            write_parquet(&self.staged(table).join("part-00000.parquet"), &mut df)?;
        }
        self.commit()
    }

    /// Replaces each table's partition of the capture with the staged one; going on, the
    /// frames' partition keeps its files but the provisional ones, and takes the new.
    fn commit(&mut self) -> io::Result<()> {
        for entry in fs::read_dir(&self.staging)? {
            let table = entry?.file_name();
            let target = self.root.join(&table).join(self.partition());
            if let (Some(progress), true) = (&self.going_on, table == "frames") {
                add_frames_files(&self.staged(&table), &target, progress.provisional_from)?;
                continue;
            }
            if target.exists() {
                fs::remove_dir_all(&target)?;
            }
            fs::create_dir_all(self.root.join(&table))?;
            fs::rename(self.staged(&table), &target)?;
        }
        self.committed = true;
        fs::remove_dir_all(&self.staging)
    }
}

impl Drop for Dataset {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// The frames files of a capture's partition, `(part number, path)`, in part order.
fn numbered_parts(partition: &Path) -> io::Result<Vec<(u32, PathBuf)>> {
    let mut parts = Vec::new();
    if !partition.is_dir() {
        return Ok(parts);
    }
    for day in fs::read_dir(partition)? {
        for file in fs::read_dir(day?.path())? {
            let path = file?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let number = name.strip_prefix("part-").and_then(|n| n.strip_suffix(".parquet"));
            if let Some(number) = number.and_then(|n| n.parse().ok()) {
                parts.push((number, path));
            }
        }
    }
    parts.sort();
    Ok(parts)
}

/// The provisional rows of a frames file, back in frame order, without the analysis's columns:
/// rows waiting for their verdicts again.
fn waiting_rows(path: &Path) -> io::Result<Segment> {
    let df = ParquetReader::new(File::open(path)?).finish().map_err(polars_error)?;
    let headers: Vec<PlSmallStr> =
        df.get_column_names().into_iter().filter(|n| !n.starts_with("rocescope_analysis_")).cloned().collect();
    let df = df.select(headers).and_then(|df| df.sort(["frame_number"], Default::default())).map_err(polars_error)?;
    let times: Vec<i64> = df
        .column(EXACT_TIME_COLUMN)
        .and_then(|c| c.i64().map(|t| t.into_no_null_iter().collect()))
        .map_err(polars_error)?;
    let day = times.first().map_or(0, |t| t.div_euclid(NS_PER_DAY));
    Ok(Segment { headers: df, day, sorted: times.windows(2).all(|w| w[0] <= w[1]) })
}

/// Moves the frames files staged in `staged` into the capture's partition `target`, in place of
/// its files numbered from `provisional_from`.
fn add_frames_files(staged: &Path, target: &Path, provisional_from: u32) -> io::Result<()> {
    for (_, path) in numbered_parts(target)?.into_iter().filter(|(n, _)| *n >= provisional_from) {
        fs::remove_file(&path)?;
        if let Some(day) = path.parent() {
            // a day's directory left empty goes too
            let _ = fs::remove_dir(day);
        }
    }
    for (_, path) in numbered_parts(staged)? {
        let day =
            path.parent().and_then(Path::file_name).map(|d| target.join(d)).unwrap_or_else(|| target.to_path_buf());
        fs::create_dir_all(&day)?;
        fs::rename(&path, day.join(path.file_name().unwrap_or_default()))?;
    }
    Ok(())
}

/// `df` with its unsigned integer columns made signed 64-bit ones, as the frames' are: Spark
/// reads no unsigned 64-bit integer.
fn signed(df: DataFrame) -> io::Result<DataFrame> {
    let columns = df
        .columns()
        .iter()
        .map(|c| if c.dtype().is_unsigned_integer() { c.cast(&DataType::Int64) } else { Ok(c.clone()) })
        .collect::<PolarsResult<Vec<Column>>>()
        .map_err(polars_error)?;
    DataFrame::new_infer_height(columns).map_err(polars_error)
}

/// The run's headline numbers, one row: what a query over the frames should add up to.
fn captures_row(report: &Report) -> io::Result<DataFrame> {
    let t = &report.roce.totals;
    let flows = &report.roce.flows;
    let sum = |f: fn(&crate::analyze::roce::report::FlowReport) -> u64| flows.iter().map(f).sum::<u64>();
    let columns = vec![
        Column::new("schema_version".into(), [i64::from(SCHEMA_VERSION)]),
        Column::new("tool_version".into(), [report.tool.version]),
        Column::new("frames".into(), [t.frames]),
        Column::new("roce_packets".into(), [t.roce_packets]),
        Column::new("malformed".into(), [t.malformed]),
        Column::new("headers_cut".into(), [t.headers_cut]),
        Column::new("mirror_duplicates".into(), [t.mirror_duplicates]),
        Column::new("cnps".into(), [report.roce.cnps]),
        Column::new("ce_marks".into(), [report.roce.ecn.ce]),
        Column::new("icrc_bad".into(), [report.roce.icrc.bad]),
        Column::new("flows".into(), [flows.len() as u64]),
        Column::new("gaps".into(), [sum(|f| f.sequence.gaps)]),
        Column::new("missing_psns".into(), [sum(|f| f.sequence.missing_psns)]),
        Column::new("retransmitted".into(), [sum(|f| f.sequence.retransmitted)]),
        Column::new("findings".into(), [report.findings.len() as u64]),
    ];
    DataFrame::new_infer_height(columns).map_err(polars_error)
}

/// The frames' partitions, a file per row group, each row made in two halves: its headers'
/// fields where the frame is decoded ([`FrameRows`], beside the analysis, on the reading
/// thread), its analysis's fields once its verdict is final ([`VerdictRows`]; verdicts come in
/// frame order, some frames later). The headers' rows go over in segments (a file's worth, of
/// one day) and wait for their verdicts; no frame's bytes are kept.
pub fn frame_rows(fields: &[&'static Field], dir: PathBuf, start: Start) -> (FrameRows, VerdictRows) {
    let (analysis, own): (Vec<&'static Field>, Vec<&'static Field>) =
        fields.iter().partition(|f| f.name.starts_with("rocescope.analysis."));
    let (segments, received) = mpsc::channel();
    let record = Record { ts_ns: 0, orig_len: 0, data: &[], link_type: LinkType::ETHERNET, offset: 0 };
    let rows = FrameRows {
        // columns grow with their rows: an export of few frames takes little memory, even as
        // address space (a `ulimit -v`)
        headers: FrameColumns::new(&own, Style::Dataset, ROWS_RESERVED),
        times: Vec::with_capacity(ROWS_RESERVED),
        day: None,
        last_ts_ns: i64::MIN,
        sorted: true,
        segments: Some(segments),
    };
    let verdicts = VerdictRows {
        verdicts: FrameColumns::new(&analysis, Style::Dataset, ROWS_RESERVED),
        order: column_order(fields),
        empty: Decoder::default().decode(&record),
        dir,
        received,
        segments: start.waiting.into(),
        parts: start.first_part,
        writer: Writer::start(),
    };
    (rows, verdicts)
}

/// The frames' columns in the order `fields` asks for, [`EXACT_TIME_COLUMN`] after
/// `frame_time_epoch` (every frame has both).
fn column_order(fields: &[&'static Field]) -> Vec<String> {
    let mut order = Vec::with_capacity(fields.len() + 1);
    for field in fields {
        order.push(field.name.replace('.', "_"));
        if field.name == "frame.time_epoch" {
            order.push(EXACT_TIME_COLUMN.to_string());
        }
    }
    order
}

/// Where a run's frames start: the number of its first file, and rows of an earlier run waiting
/// for their verdicts.
#[derive(Default)]
pub struct Start {
    first_part: u32,
    waiting: Vec<Segment>,
}

/// A file's worth of headers' rows.
struct Segment {
    headers: DataFrame,
    day: i64,
    sorted: bool,
}

const NS_PER_DAY: i64 = 86_400 * 1_000_000_000;

/// The headers' halves of the frames' rows.
pub struct FrameRows {
    headers: FrameColumns,
    /// The open segment's rows' times, in nanoseconds ([`EXACT_TIME_COLUMN`]).
    times: Vec<i64>,
    /// The UTC day (days since the epoch) of the open segment's rows.
    day: Option<i64>,
    last_ts_ns: i64,
    /// The open segment's rows are in time order.
    sorted: bool,
    segments: Option<mpsc::Sender<Segment>>,
}

impl FrameRows {
    /// Sends the open segment over.
    fn close_segment(&mut self) -> io::Result<()> {
        let Some(day) = self.day.filter(|_| self.headers.rows() > 0) else { return Ok(()) };
        let times = Column::new(EXACT_TIME_COLUMN.into(), std::mem::take(&mut self.times));
        let headers = self.headers.take().and_then(|df| df.hstack(&[times])).map_err(polars_error)?;
        let segment = Segment { headers, day, sorted: self.sorted };
        self.sorted = true;
        match self.segments.as_ref().map(|s| s.send(segment)) {
            Some(Ok(())) => Ok(()),
            _ => Err(io::Error::other("the dataset's frames stopped being written")),
        }
    }

    /// Sends the last rows over: no more come.
    pub fn finish(mut self) -> io::Result<()> {
        self.close_segment()
    }
}

impl Beside for FrameRows {
    fn frame(
        &mut self,
        number: u64,
        packet: &DecodedFrame<'_>,
        first_ts_ns: i64,
        previous: (Option<i64>, Option<i64>),
    ) -> io::Result<()> {
        let ts = packet.ts_ns;
        let day = ts.div_euclid(NS_PER_DAY);
        if self.day != Some(day) || self.headers.rows() >= ROW_GROUP_ROWS {
            self.close_segment()?;
            self.day = Some(day);
            self.last_ts_ns = i64::MIN;
        }
        self.sorted &= ts >= self.last_ts_ns;
        self.last_ts_ns = ts;
        self.times.push(ts);
        let (previous_ts_ns, previous_shown_ts_ns) = previous;
        self.headers.push(&Frame { number, packet, first_ts_ns, previous_ts_ns, previous_shown_ts_ns, verdict: None });
        Ok(())
    }
}

/// The analysis's halves of the frames' rows, joined to the headers' and written.
pub struct VerdictRows {
    verdicts: FrameColumns,
    /// The columns' names in the order the fields were asked for.
    order: Vec<String>,
    /// A frame of no bytes, for the analysis's fields (which read the verdict only).
    empty: DecodedFrame<'static>,
    /// `frames/capture=NAME` in the staging directory.
    dir: PathBuf,
    received: mpsc::Receiver<Segment>,
    /// Segments whose verdicts are still to come, oldest first.
    segments: VecDeque<Segment>,
    parts: u32,
    writer: Writer,
}

impl VerdictRows {
    /// Adds the analysis's half of the next row (every analysed frame gets one verdict, in
    /// frame order).
    pub fn push(&mut self, verdict: &Verdict) -> io::Result<()> {
        // the rows before this one may complete a segment: it was sent before this frame was
        // read, so it is here now
        self.write_complete()?;
        self.verdicts.push(&Frame { verdict: Some(verdict), ..Frame::alone(0, &self.empty) });
        Ok(())
    }

    /// Writes the oldest segment once every verdict of it is in: both halves side by side,
    /// the columns in the order asked for, sorted by time, as the next part of its day.
    fn write_complete(&mut self) -> io::Result<()> {
        self.segments.extend(self.received.try_iter());
        let (have, need) = (self.verdicts.rows(), self.segments.front().map_or(usize::MAX, |s| s.headers.height()));
        if have > need {
            return Err(io::Error::other("a frame's verdict came without its row"));
        }
        if have < need {
            return Ok(());
        }
        let Some(Segment { headers, day, sorted }) = self.segments.pop_front() else { return Ok(()) };
        let verdicts = self.verdicts.take().map_err(polars_error)?;
        let mut df = headers
            .hstack(verdicts.columns())
            .and_then(|df| df.select(self.order.iter().map(String::as_str)))
            .map_err(polars_error)?;
        if !sorted {
            let options = SortMultipleOptions::default().with_maintain_order(true);
            df = df.sort([EXACT_TIME_COLUMN], options).map_err(polars_error)?;
        }
        let path = self.dir.join(format!("date={}", date_of_day(day))).join(format!("part-{:05}.parquet", self.parts));
        self.writer.write(path, df)?;
        self.parts += 1;
        Ok(())
    }

    /// The analysis is saved here: writes every row whose verdict is in, and puts the rows
    /// still waiting for theirs in files of their own, whose first number it gives with their
    /// count (they are written once the analysis ends, with the verdicts the capture's end gives
    /// them; an export that goes on writes them again). Every row's headers must have been sent.
    pub fn suspend(&mut self) -> io::Result<(u32, usize)> {
        while let Ok(segment) = self.received.recv() {
            self.segments.push_back(segment);
            self.write_complete()?;
        }
        let have = self.verdicts.rows();
        if have > 0
            && let Some(Segment { headers, day, sorted }) = self.segments.pop_front()
        {
            let waiting = headers.slice(have as i64, headers.height() - have);
            self.segments.push_front(Segment { headers: headers.slice(0, have), day, sorted });
            self.write_complete()?;
            self.segments.push_front(Segment { headers: waiting, day, sorted });
        }
        Ok((self.parts, self.segments.iter().map(|s| s.headers.height()).sum()))
    }

    /// Writes the rows still waiting, once the headers' halves are all sent and every verdict
    /// is in.
    fn finish(mut self) -> io::Result<()> {
        while let Ok(segment) = self.received.recv() {
            self.segments.push_back(segment);
            self.write_complete()?;
        }
        self.write_complete()?;
        self.writer.finish()?;
        match self.segments.is_empty() {
            true => Ok(()),
            false => Err(io::Error::other("frames left without their analysis's verdicts")),
        }
    }
}

/// Files written on a thread of their own, while the analysis goes on.
struct Writer {
    files: Option<mpsc::SyncSender<(PathBuf, DataFrame)>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl Writer {
    fn start() -> Writer {
        // one file waits at most: the rows of two files are in memory at once
        let (files, received) = mpsc::sync_channel::<(PathBuf, DataFrame)>(1);
        let thread = std::thread::spawn(move || {
            received.into_iter().try_for_each(|(path, mut df)| write_parquet(&path, &mut df))
        });
        Writer { files: Some(files), thread: Some(thread) }
    }

    fn write(&mut self, path: PathBuf, df: DataFrame) -> io::Result<()> {
        match self.files.as_ref().map(|f| f.send((path, df))) {
            Some(Ok(())) => Ok(()),
            // the thread stopped on an error, which finish reports
            _ => self.finish(),
        }
    }

    /// Waits for every file to be written.
    fn finish(&mut self) -> io::Result<()> {
        self.files = None;
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the dataset's writer failed")),
            None => Ok(()),
        }
    }
}

/// `YYYY-MM-DD` of a day counted from the epoch.
fn date_of_day(day: i64) -> String {
    let seconds = u64::try_from(day.saturating_mul(86_400)).unwrap_or(0);
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    humantime::format_rfc3339_seconds(time).to_string().chars().take(10).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_names_are_safe_partition_values() {
        assert_eq!(capture_name(Path::new("/data/tap1.pcapng.zst")), "tap1");
        assert_eq!(capture_name(Path::new("rack 12=a.pcap")), "rack_12_a");
        assert_eq!(capture_name(Path::new("-")), "stdin");
        assert_eq!(partition_value("../etc"), "_.._etc");
        assert_eq!(partition_value(""), "_");
    }

    #[test]
    fn days_are_utc_dates() {
        assert_eq!(date_of_day(0), "1970-01-01");
        assert_eq!(date_of_day(1_700_000_000 / 86_400), "2023-11-14");
    }
}
