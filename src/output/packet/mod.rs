//! Writers of decoded frames: the packet list line (its time column and analysis flag), the
//! decode tree, the hex dump, tshark's JSON, JSON lines, field export, the per-packet table and
//! capture files.

pub mod capture_file;
#[cfg(feature = "tables")]
pub mod columns;
pub mod fields;
pub mod hexdump;
pub mod json;
pub mod jsonl;
pub mod summary;
#[cfg(feature = "tables")]
pub mod table;
#[cfg(not(feature = "tables"))]
pub mod table_absent;
pub mod tree;

use std::fmt::{self, Write};
use std::time::{Duration, UNIX_EPOCH};

use crate::decode::DecodedFrame;

/// How the time column is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFormat {
    /// Seconds since the capture's first frame (Wireshark's relative time).
    Relative,
    /// Seconds since the previous frame listed.
    Delta,
    /// Seconds since the Unix epoch.
    Epoch,
    /// UTC date and time (RFC 3339, nanoseconds).
    Absolute,
}

impl TimeFormat {
    pub const ALL: [TimeFormat; 4] = [TimeFormat::Relative, TimeFormat::Delta, TimeFormat::Epoch, TimeFormat::Absolute];

    pub fn name(self) -> &'static str {
        match self {
            TimeFormat::Relative => "relative",
            TimeFormat::Delta => "delta",
            TimeFormat::Epoch => "epoch",
            TimeFormat::Absolute => "absolute",
        }
    }

    /// tshark's `-t` names for the format (`ad` is local time there; here every absolute
    /// time is UTC).
    pub fn tshark_names(self) -> &'static [&'static str] {
        match self {
            TimeFormat::Relative => &["r"],
            TimeFormat::Delta => &["d"],
            TimeFormat::Epoch => &["e"],
            TimeFormat::Absolute => &["ad", "ud"],
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            TimeFormat::Relative => "Seconds since the capture's first frame (Wireshark's relative time)",
            TimeFormat::Delta => "Seconds since the previous frame listed",
            TimeFormat::Epoch => "Seconds since the Unix epoch",
            TimeFormat::Absolute => "UTC date and time (RFC 3339, nanoseconds)",
        }
    }
}

/// Writes a timestamp as an RFC 3339 UTC date and time with nanoseconds (times before the
/// epoch, which no real capture has, as signed epoch seconds).
pub fn write_absolute_time(out: &mut impl Write, ts_ns: i64) -> fmt::Result {
    match u64::try_from(ts_ns) {
        Ok(ns) => write!(out, "{}", humantime::format_rfc3339_nanos(UNIX_EPOCH + Duration::from_nanos(ns))),
        Err(_) => crate::fields::names::write_seconds(out, ts_ns),
    }
}

/// The state the time column needs across lines.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub format: TimeFormat,
    first: Option<i64>,
    previous: Option<i64>,
}

impl Clock {
    pub fn new(format: TimeFormat) -> Self {
        Clock { format, first: None, previous: None }
    }

    /// Counts relative times from `first_ts_ns`, the capture's first frame (Wireshark's
    /// meaning, whatever frames a filter hides), unless a first time is already set.
    pub fn start_at(&mut self, first_ts_ns: i64) {
        self.first.get_or_insert(first_ts_ns);
    }

    /// Writes the time column for a frame at `ts_ns` and remembers it.
    pub fn write(&mut self, out: &mut impl Write, ts_ns: i64) -> fmt::Result {
        let first = *self.first.get_or_insert(ts_ns);
        let previous = self.previous.replace(ts_ns).unwrap_or(ts_ns);
        match self.format {
            TimeFormat::Relative => crate::fields::names::write_seconds(out, ts_ns.saturating_sub(first)),
            TimeFormat::Delta => crate::fields::names::write_seconds(out, ts_ns.saturating_sub(previous)),
            TimeFormat::Epoch => crate::fields::names::write_seconds(out, ts_ns),
            TimeFormat::Absolute => write_absolute_time(out, ts_ns),
        }
    }
}

/// Writes one packet-list line (without the newline) into `line`, reusing `scratch` buffers.
pub fn write_list_line(
    line: &mut String,
    scratch: &mut [String; 2],
    clock: &mut Clock,
    number: u64,
    p: &DecodedFrame<'_>,
) -> fmt::Result {
    let [src, dst] = scratch;
    src.clear();
    dst.clear();
    summary::write_endpoints(src, dst, p)?;
    write!(line, "{number:>6} ")?;
    clock.write(line, p.ts_ns)?;
    write!(line, " {src:>15} → {dst:<15} {:<9} {:>5} ", summary::protocol(p), p.orig_len)?;
    summary::write_info(line, p)
}

/// The analysis flag appended to a packet-list line, like Wireshark's TCP analysis flags.
pub fn write_verdict_flag(line: &mut String, verdict: &crate::analyze::Verdict) -> std::fmt::Result {
    use crate::analyze::seq_class::SeqClass;
    if verdict.mirror_duplicate {
        return line.write_str(" [mirror duplicate]");
    }
    match verdict.seq {
        Some(SeqClass::Gap { missing }) if verdict.capture_missed > 0 => {
            write!(line, " [gap: {missing} PSNs missing, {} of them only from the capture]", verdict.capture_missed)
        }
        Some(SeqClass::Gap { missing }) => write!(line, " [gap: {missing} PSNs missing]"),
        Some(SeqClass::Retransmission) => line.write_str(" [retransmission]"),
        Some(SeqClass::LateArrival) => line.write_str(" [late arrival]"),
        Some(SeqClass::Ahead) => line.write_str(" [ahead of late arrivals]"),
        _ => Ok(()),
    }
}
