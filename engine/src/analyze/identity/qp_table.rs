//! The QP table of one host: the output of iproute2's `rdma resource show qp`, in any of its
//! forms: plain text, `-d`, `-dd` (driver details on continuation lines, or after `\` with
//! `-o`), `-j`, `-jd`, `-jp` (pretty JSON), for any number of devices and ports, concatenated.
//!
//! What the tool prints was read from iproute2's `rdma/res-qp.c`, `rdma/res.c` and
//! `rdma/utils.c` (v4.16 to v6.19 and master):
//!
//! - text: one row a QP, `link DEV/PORT lqpn N [rqpn N] type T [subtype S] state S [rq-psn N]
//!   sq-psn N [path-mig-state M] [pdn N] [pid N] [comm NAME]`, each value followed by a space;
//!   `link DEV/-` when the QP has no port; a kernel QP has no `pid` (iproute2 before 5.x printed
//!   `pid 0`) and its `comm` in brackets, `[ib_core]`; `-d` alone changes nothing for QPs; `-dd`
//!   adds `drv_*` keys on a continuation line indented by four spaces;
//! - JSON (iproute2 5.5 and later; before, the tool printed names inside arrays, not JSON): one
//!   array of objects with keys `ifindex`, `ifname`, `port`, `lqpn`, `rqpn`, `type`,
//!   `subtype`, `state`, `rq-psn`, `sq-psn`, `path-mig-state`, `pdn`, `pid`, `comm` (no
//!   brackets, even for a kernel QP) and `drv_*`; objects may be separated by new lines.
//!
//! An optional `time: RFC3339` line may come first (kept as written: the counters' parser reads
//! it), and blank lines and `#` comments are skipped anywhere in the text form and before the
//! JSON.

use std::fmt;

use serde_json::{Map, Value};

/// At most this many bytes of table are read: a larger text is an error.
pub const MAX_TEXT_BYTES: usize = 16 << 20;
/// At most this many bytes in one line of the text form: a longer line is an error.
pub const MAX_LINE_BYTES: usize = 64 << 10;
/// At most this many QPs in one table: more is an error (a host holds far fewer).
pub const MAX_ROWS: usize = 1 << 18;
/// The largest QP number: QPNs are 24 bits wide (IBTA, BTH DestQP).
pub const MAX_QPN: u32 = 0x00FF_FFFF;
/// At most this many bytes of a line are quoted in an error message.
const QUOTED_BYTES: usize = 120;

/// The QPs of one host, as `rdma resource show qp` listed them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QpTable {
    /// The `time:` line's value as written (trimmed), if the file has one.
    pub time: Option<String>,
    /// The QPs in the order listed.
    pub rows: Vec<QpRow>,
}

/// One QP of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QpRow {
    /// The RDMA device (`mlx5_0`).
    pub device: String,
    /// The port, if the QP has one (`link mlx5_0/-` has none).
    pub port: Option<u32>,
    /// The local QP number.
    pub lqpn: u32,
    /// The remote QP number: absent for UD and other unconnected QPs, and before RTR.
    pub rqpn: Option<u32>,
    /// The QP's transport type.
    pub qp_type: QpType,
    /// The QP's state.
    pub state: QpState,
    /// The receive queue's expected PSN, when the kernel reports it.
    pub rq_psn: Option<u32>,
    /// The send queue's next PSN, when the kernel reports it.
    pub sq_psn: Option<u32>,
    /// The protection domain's number, when the kernel reports it.
    pub pdn: Option<u32>,
    /// The owning process; `None` for a kernel QP (`pid 0`, printed by iproute2 before 5.x for
    /// kernel QPs, is read as no pid).
    pub pid: Option<u32>,
    /// The owner's name: the process's `comm`, or the kernel module's name without brackets.
    pub comm: Option<String>,
    /// Whether the kernel owns the QP (text `comm [name]`, or a `comm` with no pid).
    pub kernel: bool,
    /// The line of the row (text) or of the object's `{` (JSON), from 1.
    pub line: usize,
}

/// A QP's transport type, as `rdma` names it (`qp_types_to_str` in iproute2's `rdma/res.c`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QpType {
    Smi,
    Gsi,
    Rc,
    Uc,
    Ud,
    RawIpv6,
    RawEthertype,
    RawPacket,
    XrcIni,
    XrcTgt,
    /// `DRIVER`: a driver-specific type (its `subtype` is not kept).
    Driver,
    /// Any other name, as written (`UNKNOWN` included).
    Other(String),
}

impl QpType {
    /// The type named `name` as `rdma` prints it.
    pub fn from_name(name: &str) -> QpType {
        match name {
            "SMI" => QpType::Smi,
            "GSI" => QpType::Gsi,
            "RC" => QpType::Rc,
            "UC" => QpType::Uc,
            "UD" => QpType::Ud,
            "RAW_IPV6" => QpType::RawIpv6,
            "RAW_ETHERTYPE" => QpType::RawEthertype,
            "RAW_PACKET" => QpType::RawPacket,
            "XRC_INI" => QpType::XrcIni,
            "XRC_TGT" => QpType::XrcTgt,
            "DRIVER" => QpType::Driver,
            other => QpType::Other(other.to_string()),
        }
    }
}

/// A QP's state, as `rdma` names it (`qp_states_to_str` in iproute2's `rdma/res-qp.c`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Sqd,
    Sqe,
    Err,
    /// Any other name, as written (`UNKNOWN` included).
    Other(String),
}

impl QpState {
    /// The state named `name` as `rdma` prints it.
    pub fn from_name(name: &str) -> QpState {
        match name {
            "RESET" => QpState::Reset,
            "INIT" => QpState::Init,
            "RTR" => QpState::Rtr,
            "RTS" => QpState::Rts,
            "SQD" => QpState::Sqd,
            "SQE" => QpState::Sqe,
            "ERR" => QpState::Err,
            other => QpState::Other(other.to_string()),
        }
    }
}

/// A table that cannot be read: the file, the line (from 1) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QpTableError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for QpTableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: line {}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for QpTableError {}

/// Reads the QP table `text`, the contents of `file`: JSON when its first character that is not
/// blank, in a `#` comment or in the `time:` line is `[` or `{`, else the text form.
pub fn parse(file: &str, text: &str) -> Result<QpTable, QpTableError> {
    let fail = |line: usize, message: String| QpTableError { file: file.to_string(), line, message };
    if text.len() > MAX_TEXT_BYTES {
        return Err(fail(1, format!("the table has {} bytes, more than the {MAX_TEXT_BYTES} read", text.len())));
    }
    let head = read_head(text).map_err(|(line, message)| fail(line, message))?;
    let rows = match head.json_start {
        Some(start) => json::rows(text.get(start..).unwrap_or_default(), head.lines_before),
        None => text_rows(text),
    };
    rows.map(|rows| QpTable { time: head.time, rows }).map_err(|(line, message)| fail(line, message))
}

/// A line number (from 1) and a message: an error before the file's name is attached.
type LineError = (usize, String);

/// What comes before the rows: the `time:` line and where JSON starts, if it does.
struct Head {
    time: Option<String>,
    /// The byte where the JSON starts (the start of its first line).
    json_start: Option<usize>,
    /// How many lines come before the JSON.
    lines_before: usize,
}

/// Reads the blank, comment and `time:` lines at the start of `text`.
fn read_head(text: &str) -> Result<Head, LineError> {
    let mut head = Head { time: None, json_start: None, lines_before: 0 };
    let mut offset = 0;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim();
        if line.starts_with('[') || line.starts_with('{') {
            head.json_start = Some(offset);
            head.lines_before = index;
            return Ok(head);
        }
        if let Some(time) = line.strip_prefix("time:") {
            if head.time.is_some() {
                return Err((index + 1, "a second time: line".to_string()));
            }
            head.time = Some(time.trim().to_string());
        } else if !line.is_empty() && !line.starts_with('#') {
            return Ok(head);
        }
        offset += raw.len();
    }
    Ok(head)
}

/// The rows of the text form.
fn text_rows(text: &str) -> Result<Vec<QpRow>, LineError> {
    let mut rows = Vec::new();
    let mut seen_time = false;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        if raw.len() > MAX_LINE_BYTES {
            return Err((number, format!("a line of {} bytes, more than the {MAX_LINE_BYTES} read", raw.len())));
        }
        // `-o` (one line) puts `\` where a new line would be, before the driver details.
        let line = raw.split('\\').next().unwrap_or_default().trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("time:") {
            if seen_time || !rows.is_empty() {
                return Err((number, "a time: line after the start of the table".to_string()));
            }
            seen_time = true;
            continue;
        }
        if line.starts_with("drv_") && !rows.is_empty() {
            continue; // `-dd`: the driver's details of the row above, on a line of their own
        }
        if rows.len() == MAX_ROWS {
            return Err((number, format!("more than {MAX_ROWS} QPs in one table")));
        }
        rows.push(text_row(line, number)?);
    }
    Ok(rows)
}

/// The fields of a text row, before their checks.
#[derive(Default)]
struct TextFields<'a> {
    lqpn: Option<&'a str>,
    rqpn: Option<&'a str>,
    qp_type: Option<&'a str>,
    state: Option<&'a str>,
    rq_psn: Option<&'a str>,
    sq_psn: Option<&'a str>,
    pdn: Option<&'a str>,
    pid: Option<&'a str>,
    comm: Option<&'a str>,
}

/// One row of the text form, `line` trimmed; `number` is its line number.
fn text_row(line: &str, number: usize) -> Result<QpRow, LineError> {
    let fail = |message: String| (number, message);
    let Some(rest) = line.strip_prefix("link ") else {
        return Err(fail(format!("not a QP row (one starts with `link DEV/PORT`): {}", quoted(line))));
    };
    let rest = rest.trim_start();
    let (link, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let (device, port) = link_parts(link).map_err(fail)?;
    let fields = text_fields(rest).map_err(fail)?;
    let comm = fields.comm.map(str::trim).filter(|comm| !comm.is_empty());
    let pid = optional_number("pid", fields.pid).map_err(fail)?.filter(|&pid| pid != 0);
    let kernel_name = comm.filter(|_| pid.is_none()).and_then(kernel_name);
    Ok(QpRow {
        device,
        port,
        lqpn: qpn("lqpn", fields.lqpn.ok_or_else(|| fail("the row has no lqpn".to_string()))?).map_err(fail)?,
        rqpn: fields.rqpn.map(|value| qpn("rqpn", value)).transpose().map_err(fail)?,
        qp_type: QpType::from_name(fields.qp_type.ok_or_else(|| fail("the row has no type".to_string()))?),
        state: QpState::from_name(fields.state.ok_or_else(|| fail("the row has no state".to_string()))?),
        rq_psn: optional_number("rq-psn", fields.rq_psn).map_err(fail)?,
        sq_psn: optional_number("sq-psn", fields.sq_psn).map_err(fail)?,
        pdn: optional_number("pdn", fields.pdn).map_err(fail)?,
        kernel: pid.is_none() && comm.is_some(),
        comm: kernel_name.or(comm).map(str::to_string),
        pid,
        line: number,
    })
}

/// A kernel owner's name without its brackets: print_comm writes `[name]` into 18 bytes, so a
/// name of more than 15 characters loses its `]` (iproute2's `rdma/res.c`).
fn kernel_name(comm: &str) -> Option<&str> {
    let name = comm.strip_prefix('[')?;
    Some(name.strip_suffix(']').unwrap_or(name))
}

/// `DEV/PORT` or `DEV/-` as the device and its port.
fn link_parts(link: &str) -> Result<(String, Option<u32>), String> {
    let bad = || format!("{} is not a link, DEV/PORT", quoted(link));
    let (device, port) = link.rsplit_once('/').ok_or_else(bad)?;
    if device.is_empty() {
        return Err(bad());
    }
    let port = match port {
        "-" => None,
        port => Some(port.parse::<u32>().map_err(|_| bad())?),
    };
    Ok((device.to_string(), port))
}

/// The `key value` pairs after the link; `comm` takes the rest of the line, as it ends every
/// row in iproute2 (a task's name may hold spaces); unknown keys and their values are skipped.
fn text_fields(rest: &str) -> Result<TextFields<'_>, String> {
    let mut fields = TextFields::default();
    let mut remaining = rest.trim_start();
    while let Some((key, after)) = next_word(remaining) {
        if key == "comm" {
            fields.comm = Some(after);
            break;
        }
        let (value, after) = next_word(after).ok_or_else(|| format!("{key} has no value"))?;
        let slot = match key {
            "lqpn" => &mut fields.lqpn,
            "rqpn" => &mut fields.rqpn,
            "type" => &mut fields.qp_type,
            "state" => &mut fields.state,
            "rq-psn" => &mut fields.rq_psn,
            "sq-psn" => &mut fields.sq_psn,
            "pdn" => &mut fields.pdn,
            "pid" => &mut fields.pid,
            _ => {
                remaining = after;
                continue;
            }
        };
        if slot.replace(value).is_some() {
            return Err(format!("{key} is given twice in one row"));
        }
        remaining = after;
    }
    Ok(fields)
}

/// The first word of `text` and what follows it (leading blanks skipped), if it has a word.
fn next_word(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    if text.is_empty() {
        return None;
    }
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    Some((word, rest.trim_start()))
}

/// A QP number: decimal, at most 24 bits.
fn qpn(key: &str, value: &str) -> Result<u32, String> {
    let number = number(key, value)?;
    if number > MAX_QPN {
        return Err(format!("{key} {number} is more than 24 bits (the largest QPN is {MAX_QPN})"));
    }
    Ok(number)
}

/// An optional decimal number of 32 bits.
fn optional_number(key: &str, value: Option<&str>) -> Result<Option<u32>, String> {
    value.map(|value| number(key, value)).transpose()
}

/// A decimal number of 32 bits.
fn number(key: &str, value: &str) -> Result<u32, String> {
    value.parse::<u32>().map_err(|_| format!("{key} {} is not a number of 32 bits", quoted(value)))
}

/// `text` quoted for a message, cut to [`QUOTED_BYTES`] on a character's boundary.
fn quoted(text: &str) -> String {
    crate::quoting::quoted(text, QUOTED_BYTES)
}

/// The JSON forms (`-j`, `-jd`, `-jp`): one or more arrays of QP objects, or lone objects.
mod json {
    use super::*;

    /// The rows of `body`, the JSON after `lines_before` lines of head.
    pub(super) fn rows(body: &str, lines_before: usize) -> Result<Vec<QpRow>, LineError> {
        let lines = LineIndex::new(body, lines_before);
        let values = values(body, &lines)?;
        let starts = object_starts(body);
        let mut rows = Vec::new();
        let mut next_start = starts.iter();
        for (value, value_offset) in &values {
            for (position, object) in objects(value, lines.line_of(*value_offset))?.into_iter().enumerate() {
                let offset = next_start.next().copied().unwrap_or(*value_offset);
                let line = lines.line_of(offset);
                if rows.len() == MAX_ROWS {
                    return Err((line, format!("more than {MAX_ROWS} QPs in one table")));
                }
                let row = row(object, line).map_err(|message| (line, format!("QP {}: {message}", position + 1)))?;
                rows.push(row);
            }
        }
        Ok(rows)
    }

    /// Every top-level JSON value of `body` with the byte where it starts.
    fn values(body: &str, lines: &LineIndex) -> Result<Vec<(Value, usize)>, LineError> {
        let mut stream = serde_json::Deserializer::from_str(body).into_iter::<Value>();
        let mut values = Vec::new();
        loop {
            let start = stream.byte_offset();
            match stream.next() {
                None => return Ok(values),
                Some(Ok(value)) => {
                    let skipped = body.get(start..).map_or(0, |rest| rest.len() - rest.trim_start().len());
                    values.push((value, start + skipped));
                }
                Some(Err(error)) if error.is_eof() => {
                    let skipped = body.get(start..).map_or(0, |rest| rest.len() - rest.trim_start().len());
                    return Err(cut_short(&error, lines, lines.line_of(start + skipped)));
                }
                Some(Err(error)) => return Err(json_error(&error, lines)),
            }
        }
    }

    /// A JSON value cut short (the file ends inside it): named at the line where it starts, as
    /// a truncated table's damage is the value as a whole.
    fn cut_short(error: &serde_json::Error, lines: &LineIndex, starts_at: usize) -> LineError {
        let ends_at = lines.before + error.line().max(1);
        (
            starts_at,
            format!("not valid JSON: the value that starts here is cut short (the file ends at line {ends_at})"),
        )
    }

    /// A JSON syntax error at its line in the file, with its column.
    fn json_error(error: &serde_json::Error, lines: &LineIndex) -> LineError {
        let text = error.to_string();
        // serde_json ends its message with " at line L column C", L counted in the JSON alone.
        let what = text.rsplit_once(" at line ").map_or(text.as_str(), |(what, _)| what);
        (lines.before + error.line().max(1), format!("not valid JSON: {what} (column {})", error.column()))
    }

    /// The QP objects of one top-level value: an array of objects, or one object.
    fn objects(value: &Value, line: usize) -> Result<Vec<&Map<String, Value>>, LineError> {
        match value {
            Value::Object(object) => Ok(vec![object]),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(at, item)| {
                    item.as_object().ok_or_else(|| {
                        let message = format!("item {} of the array is {}, not a QP object", at + 1, kind_of(item));
                        (line, message)
                    })
                })
                .collect(),
            other => Err((line, format!("the JSON is {}, not an array of QP objects", kind_of(other)))),
        }
    }

    /// What kind of JSON value `value` is, for a message.
    fn kind_of(value: &Value) -> &'static str {
        match value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// One QP object as a row; unknown keys (`ifindex`, `path-mig-state`, `drv_*`…) are skipped.
    fn row(object: &Map<String, Value>, line: usize) -> Result<QpRow, String> {
        let pid = optional_u32(object, "pid")?.filter(|&pid| pid != 0);
        let comm = optional_str(object, "comm")?.filter(|comm| !comm.is_empty());
        let rqpn = optional_u32(object, "rqpn")?;
        Ok(QpRow {
            device: required_str(object, "ifname")?.to_string(),
            port: optional_u32(object, "port")?,
            lqpn: checked_qpn("lqpn", required_u32(object, "lqpn")?)?,
            rqpn: rqpn.map(|rqpn| checked_qpn("rqpn", rqpn)).transpose()?,
            qp_type: QpType::from_name(required_str(object, "type")?),
            state: QpState::from_name(required_str(object, "state")?),
            rq_psn: optional_u32(object, "rq-psn")?,
            sq_psn: optional_u32(object, "sq-psn")?,
            pdn: optional_u32(object, "pdn")?,
            kernel: pid.is_none() && comm.is_some(),
            comm: comm.map(str::to_string),
            pid,
            line,
        })
    }

    /// `qpn` if it fits in 24 bits.
    fn checked_qpn(key: &str, qpn: u32) -> Result<u32, String> {
        if qpn > MAX_QPN {
            return Err(format!("{key} {qpn} is more than 24 bits (the largest QPN is {MAX_QPN})"));
        }
        Ok(qpn)
    }

    fn required_str<'a>(object: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
        optional_str(object, key)?.ok_or_else(|| format!("no {key:?}"))
    }

    fn optional_str<'a>(object: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(format!("{key:?} is {}, not a string", kind_of(other))),
        }
    }

    fn required_u32(object: &Map<String, Value>, key: &str) -> Result<u32, String> {
        optional_u32(object, key)?.ok_or_else(|| format!("no {key:?}"))
    }

    fn optional_u32(object: &Map<String, Value>, key: &str) -> Result<Option<u32>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .and_then(|number| u32::try_from(number).ok())
                .map(Some)
                .ok_or_else(|| format!("{key:?} is {value}, not a number of 32 bits")),
        }
    }

    /// The bytes where each QP object starts: a `{` at the top level, or directly inside a
    /// top-level array; read from valid JSON (the values were parsed first), in order.
    fn object_starts(body: &str) -> Vec<usize> {
        let mut starts = Vec::new();
        let mut open: Vec<u8> = Vec::new();
        let (mut in_string, mut escaped) = (false, false);
        for (at, byte) in body.bytes().enumerate() {
            if in_string {
                match byte {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    let top_level = open.is_empty() || (open.len() == 1 && open.first() == Some(&b'['));
                    if byte == b'{' && top_level {
                        starts.push(at);
                    }
                    open.push(byte);
                }
                b'}' | b']' => {
                    open.pop();
                }
                _ => {}
            }
        }
        starts
    }

    /// Line numbers of byte offsets in the JSON body.
    struct LineIndex {
        /// Lines of the file before the body.
        before: usize,
        /// Where each line of the body starts.
        starts: Vec<usize>,
    }

    impl LineIndex {
        fn new(body: &str, before: usize) -> LineIndex {
            let breaks = body.bytes().enumerate().filter(|&(_, byte)| byte == b'\n').map(|(at, _)| at + 1);
            LineIndex { before, starts: std::iter::once(0).chain(breaks).collect() }
        }

        /// The file's line number (from 1) of the byte at `offset` of the body.
        fn line_of(&self, offset: usize) -> usize {
            let index = self.starts.partition_point(|&start| start <= offset);
            self.before + index.max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(device: &str, port: Option<u32>, lqpn: u32, qp_type: QpType, state: QpState, line: usize) -> QpRow {
        QpRow {
            device: device.to_string(),
            port,
            lqpn,
            rqpn: None,
            qp_type,
            state,
            rq_psn: None,
            sq_psn: None,
            pdn: None,
            pid: None,
            comm: None,
            kernel: false,
            line,
        }
    }

    /// `rdma resource show qp` on two devices of two ports, as res_qp_line prints (each value
    /// then a space), with a time line and a comment.
    const TEXT: &str = "time: 2026-12-05T10:00:00.5Z
# rdma resource show qp
link mlx5_0/1 lqpn 1 type GSI state RTS sq-psn 0 comm [ib_core] 
link mlx5_0/1 lqpn 4660 rqpn 4712 type RC state RTS rq-psn 9842133 sq-psn 1234 path-mig-state MIGRATED pdn 3 pid 4321 comm python3 
link mlx5_0/2 lqpn 200 type UD state RTS sq-psn 77 pdn 4 pid 4321 comm python3 

link mlx5_1/1 lqpn 16777215 rqpn 5 type RC state ERR rq-psn 0 sq-psn 16777215 path-mig-state ARMED pdn 9 pid 777 comm pt_main_thread 
link mlx5_1/1 lqpn 305 type RC state RESET sq-psn 0 pdn 9 pid 777 
link mlx5_1/- lqpn 306 type UC state INIT sq-psn 0 pid 1 comm Web Content 
";

    #[test]
    fn text_rows_are_read_with_every_field() {
        let table = parse("host-a.qp", TEXT).unwrap();
        assert_eq!(table.time.as_deref(), Some("2026-12-05T10:00:00.5Z"));
        let mut gsi = row("mlx5_0", Some(1), 1, QpType::Gsi, QpState::Rts, 3);
        gsi.sq_psn = Some(0);
        gsi.comm = Some("ib_core".to_string());
        gsi.kernel = true;
        let rc = QpRow {
            device: "mlx5_0".to_string(),
            port: Some(1),
            lqpn: 4660,
            rqpn: Some(4712),
            qp_type: QpType::Rc,
            state: QpState::Rts,
            rq_psn: Some(9842133),
            sq_psn: Some(1234),
            pdn: Some(3),
            pid: Some(4321),
            comm: Some("python3".to_string()),
            kernel: false,
            line: 4,
        };
        let mut ud = row("mlx5_0", Some(2), 200, QpType::Ud, QpState::Rts, 5);
        (ud.sq_psn, ud.pdn, ud.pid, ud.comm) = (Some(77), Some(4), Some(4321), Some("python3".to_string()));
        let mut err = row("mlx5_1", Some(1), 16777215, QpType::Rc, QpState::Err, 7);
        (err.rqpn, err.rq_psn, err.sq_psn, err.pdn) = (Some(5), Some(0), Some(16777215), Some(9));
        (err.pid, err.comm) = (Some(777), Some("pt_main_thread".to_string()));
        let mut reset = row("mlx5_1", Some(1), 305, QpType::Rc, QpState::Reset, 8);
        (reset.sq_psn, reset.pdn, reset.pid) = (Some(0), Some(9), Some(777));
        let mut portless = row("mlx5_1", None, 306, QpType::Uc, QpState::Init, 9);
        (portless.sq_psn, portless.pid, portless.comm) = (Some(0), Some(1), Some("Web Content".to_string()));
        assert_eq!(table.rows, vec![gsi, rc, ud, err, reset, portless]);
    }

    /// `-dd`: driver details on a line of their own, four spaces in; `-dd -o`: after a `\`.
    #[test]
    fn driver_details_are_skipped_in_both_layouts() {
        let text = "link mlx5_0/1 lqpn 4660 rqpn 4712 type RC state RTS rq-psn 9 sq-psn 10 path-mig-state MIGRATED pdn 3 pid 4321 comm ib_write_bw 
    drv_sq_wqe_cnt 128 drv_sq_max_gs 1 drv_rq_wqe_cnt 512 
link mlx5_0/1 lqpn 4661 type DRIVER subtype DCT state RTR sq-psn 0 pdn 3 pid 4321 comm ib_write_bw \\    drv_dct_access_key 0x0 
";
        let table = parse("dd.txt", text).unwrap();
        assert_eq!(table.rows.len(), 2);
        let first = &table.rows[0];
        assert_eq!((first.lqpn, first.rqpn, first.rq_psn, first.sq_psn), (4660, Some(4712), Some(9), Some(10)));
        assert_eq!(first.comm.as_deref(), Some("ib_write_bw"));
        let second = &table.rows[1];
        assert_eq!((second.lqpn, &second.qp_type, &second.state), (4661, &QpType::Driver, &QpState::Rtr));
        assert_eq!((second.comm.as_deref(), second.line), (Some("ib_write_bw"), 3));
    }

    /// iproute2 before 5.x printed `pid 0` and a bracketed comm for kernel QPs.
    #[test]
    fn old_kernel_rows_with_pid_zero_have_no_pid() {
        let table =
            parse("old.txt", "link mlx5_0/1 lqpn 1 type GSI state RTS sq-psn 0 pid 0 comm [ib_core] \n").unwrap();
        let gsi = table.rows.first().unwrap();
        assert_eq!((gsi.pid, gsi.comm.as_deref(), gsi.kernel), (None, Some("ib_core"), true));
    }

    /// A kernel name cut by print_comm's 18 bytes has no `]`; a process's name keeps brackets.
    #[test]
    fn cut_kernel_names_and_bracketed_process_names() {
        let text = "link mlx5_0/1 lqpn 2 type RC state RTS sq-psn 0 comm [nvme_rdma_long_\n\
                    link mlx5_0/1 lqpn 3 type RC state RTS sq-psn 0 pid 12 comm [odd]\n";
        let table = parse("k.txt", text).unwrap();
        let owners: Vec<_> = table.rows.iter().map(|r| (r.comm.as_deref(), r.pid, r.kernel)).collect();
        assert_eq!(owners, vec![(Some("nvme_rdma_long_"), None, true), (Some("[odd]"), Some(12), false)]);
    }

    #[test]
    fn unknown_keys_and_any_order_are_accepted() {
        let text = "link rxe0/1 state RTS lqpn 17 flavour vanilla type RC sq-psn 3 future-key 12 pid 99\n";
        let table = parse("t", text).unwrap();
        let mut expected = row("rxe0", Some(1), 17, QpType::Rc, QpState::Rts, 1);
        (expected.sq_psn, expected.pid) = (Some(3), Some(99));
        assert_eq!(table.rows, vec![expected]);
    }

    #[test]
    fn text_errors_name_their_line() {
        let cases = [
            ("link mlx5_0/1 lqpn 1 type RC state RTS\nRDMA is great\n", 2, "not a QP row"),
            ("# c\nlink mlx5_0/1 lqpn 16777216 type RC state RTS\n", 2, "more than 24 bits"),
            ("link mlx5_0/1 lqpn 5 rqpn 16777216 type RC state RTS\n", 1, "rqpn 16777216 is more than 24 bits"),
            ("\n\nlink mlx5_0/1 lqpn x12 type RC state RTS\n", 3, "lqpn \"x12\" is not a number"),
            ("link mlx5_0/1 type RC state RTS\n", 1, "no lqpn"),
            ("link mlx5_0/1 lqpn 3 state RTS\n", 1, "no type"),
            ("link mlx5_0/1 lqpn 3 type RC\n", 1, "no state"),
            ("link mlx5_0 lqpn 3 type RC state RTS\n", 1, "not a link"),
            ("link mlx5_0/x lqpn 3 type RC state RTS\n", 1, "not a link"),
            ("link mlx5_0/1 lqpn 3 lqpn 4 type RC state RTS\n", 1, "twice"),
            ("link mlx5_0/1 lqpn 3 type RC state\n", 1, "state has no value"),
            ("link mlx5_0/1 lqpn 3 type RC state RTS\ntime: 2026-12-05T10:00:00Z\n", 2, "time: line after"),
            ("time: a\ntime: b\n", 2, "a second time: line"),
            ("    drv_sq_wqe_cnt 128\n", 1, "not a QP row"),
        ];
        for (text, line, needle) in cases {
            let error = parse("bad.txt", text).unwrap_err();
            assert_eq!((error.file.as_str(), error.line), ("bad.txt", line), "{text:?}: {error}");
            assert!(error.message.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn the_error_displays_file_line_and_message() {
        let error = parse("hosts/a.qp", "link mlx5_0/1 lqpn 1 type RC state RTS\ngarbage\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "hosts/a.qp: line 2: not a QP row (one starts with `link DEV/PORT`): \"garbage\""
        );
    }

    /// `-j` of iproute2 6.x: one array, each object then a new line (newline() after
    /// close_json_object), the comma before the next object; two devices, several ports.
    const JSON: &str = r#"time: 2026-12-05T10:00:00Z
[{"ifindex":3,"ifname":"mlx5_0","port":1,"lqpn":1,"type":"GSI","state":"RTS","sq-psn":0,"comm":"ib_core"}
,{"ifindex":3,"ifname":"mlx5_0","port":1,"lqpn":4660,"rqpn":4712,"type":"RC","state":"RTS","rq-psn":9842133,"sq-psn":1234,"path-mig-state":"MIGRATED","pdn":3,"pid":4321,"comm":"python3"}
,{"ifindex":3,"ifname":"mlx5_0","port":2,"lqpn":200,"type":"UD","state":"RTS","sq-psn":77,"pdn":4,"pid":4321,"comm":"python3"}
,{"ifindex":4,"ifname":"mlx5_1","port":1,"lqpn":305,"type":"RC","state":"RESET","sq-psn":0,"pdn":9,"pid":777}
,{"ifindex":4,"ifname":"mlx5_1","port":1,"lqpn":306,"rqpn":9,"type":"RC","state":"ERR","rq-psn":1,"sq-psn":2,"pdn":9,"pid":777,"comm":"pt_main_thread","drv_sq_wqe_cnt":128,"drv_note":"x"}
]
"#;

    #[test]
    fn json_rows_are_read_with_their_object_lines() {
        let table = parse("a.json", JSON).unwrap();
        assert_eq!(table.time.as_deref(), Some("2026-12-05T10:00:00Z"));
        let mut gsi = row("mlx5_0", Some(1), 1, QpType::Gsi, QpState::Rts, 2);
        (gsi.sq_psn, gsi.comm, gsi.kernel) = (Some(0), Some("ib_core".to_string()), true);
        let rc = QpRow {
            device: "mlx5_0".to_string(),
            port: Some(1),
            lqpn: 4660,
            rqpn: Some(4712),
            qp_type: QpType::Rc,
            state: QpState::Rts,
            rq_psn: Some(9842133),
            sq_psn: Some(1234),
            pdn: Some(3),
            pid: Some(4321),
            comm: Some("python3".to_string()),
            kernel: false,
            line: 3,
        };
        let mut ud = row("mlx5_0", Some(2), 200, QpType::Ud, QpState::Rts, 4);
        (ud.sq_psn, ud.pdn, ud.pid, ud.comm) = (Some(77), Some(4), Some(4321), Some("python3".to_string()));
        let mut reset = row("mlx5_1", Some(1), 305, QpType::Rc, QpState::Reset, 5);
        (reset.sq_psn, reset.pdn, reset.pid) = (Some(0), Some(9), Some(777));
        let mut err = row("mlx5_1", Some(1), 306, QpType::Rc, QpState::Err, 6);
        (err.rqpn, err.rq_psn, err.sq_psn, err.pdn) = (Some(9), Some(1), Some(2), Some(9));
        (err.pid, err.comm) = (Some(777), Some("pt_main_thread".to_string()));
        assert_eq!(table.rows, vec![gsi, rc, ud, reset, err]);
    }

    /// The same table as text and as JSON gives the same rows (lines aside).
    #[test]
    fn text_and_json_agree() {
        let text = parse("t", TEXT).unwrap();
        let json = parse("j", JSON).unwrap();
        let without_lines =
            |rows: &[QpRow]| -> Vec<QpRow> { rows.iter().map(|row| QpRow { line: 0, ..row.clone() }).collect() };
        assert_eq!(without_lines(&text.rows[..3]), without_lines(&json.rows[..3]));
    }

    /// `-jp`: pretty, four spaces a level; two invocations concatenated (one a device), and a
    /// lone object.
    #[test]
    fn pretty_and_concatenated_json_is_read() {
        let text = r#"# rdma -jp res show qp link mlx5_0
[ {
        "ifindex": 3,
        "ifname": "mlx5_0",
        "port": 1,
        "lqpn": 4660,
        "type": "RC",
        "state": "RTS",
        "sq-psn": 1234,
        "pid": 4321,
        "comm": "nccl \"x\" [y]"
    },{
        "ifindex": 3,
        "ifname": "mlx5_0",
        "port": 1,
        "lqpn": 200,
        "type": "UD",
        "state": "RTS",
        "sq-psn": 5
    } ]
[{"ifname":"mlx5_1","port":1,"lqpn":7,"type":"XRC_TGT","state":"SQD","sq-psn":1}]
{"ifname":"mlx5_2","lqpn":8,"type":"RAW_PACKET","state":"SQE","sq-psn":1}
"#;
        let table = parse("p.json", text).unwrap();
        let summary: Vec<_> = table
            .rows
            .iter()
            .map(|r| (r.device.as_str(), r.lqpn, r.qp_type.clone(), r.state.clone(), r.line))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("mlx5_0", 4660, QpType::Rc, QpState::Rts, 2),
                ("mlx5_0", 200, QpType::Ud, QpState::Rts, 12),
                ("mlx5_1", 7, QpType::XrcTgt, QpState::Sqd, 21),
                ("mlx5_2", 8, QpType::RawPacket, QpState::Sqe, 22),
            ]
        );
        assert_eq!(table.rows[0].comm.as_deref(), Some("nccl \"x\" [y]"));
        assert!(!table.rows[0].kernel);
        assert_eq!((table.rows[1].pid, table.rows[1].comm.as_deref(), table.rows[1].kernel), (None, None, false));
        assert_eq!(table.rows[3].port, None);
    }

    #[test]
    fn json_errors_name_their_line() {
        let cases = [
            ("[{\"ifname\":\"mlx5_0\",\"lqpn\":1,\n\"type\":\"RC\" \"state\":\"RTS\"}]\n", 2, "not valid JSON"),
            (
                "time: x\n[{\"ifname\":\"m\",\"lqpn\":1,\"type\":\"RC\",\"state\":\"RTS\"}\n,{\"ifname\":\"m\",\"lqpn\":16777216,\"type\":\"RC\",\"state\":\"RTS\"}]\n",
                3,
                "QP 2: lqpn 16777216 is more than 24 bits",
            ),
            (
                "[{\"ifname\":\"m\",\"lqpn\":\"1\",\"type\":\"RC\",\"state\":\"RTS\"}]",
                1,
                "\"lqpn\" is \"1\", not a number",
            ),
            ("[{\"ifname\":\"m\",\"type\":\"RC\",\"state\":\"RTS\"}]", 1, "no \"lqpn\""),
            ("[{\"lqpn\":1,\"type\":\"RC\",\"state\":\"RTS\"}]", 1, "no \"ifname\""),
            ("[{\"ifname\":\"m\",\"lqpn\":1,\"type\":2,\"state\":\"RTS\"}]", 1, "\"type\" is a number, not a string"),
            ("\n[1, 2]\n", 2, "item 1 of the array is a number, not a QP object"),
            (
                "{\"ifname\":\"m\",\"lqpn\":1,\"type\":\"RC\",\"state\":\"RTS\"}\n[[]]",
                2,
                "item 1 of the array is an array",
            ),
            ("[{\"ifname\":\"m\",\"lqpn\":1,\"type\":\"RC\",\"state\":\"RTS\",\"rqpn\":-1}]", 1, "\"rqpn\" is -1"),
            ("[{\"ifname\":\"m\",\"lqpn\":1,\"type\":\"RC\",\"state\":\"RTS\"}\n\n] trailing", 3, "not valid JSON"),
            // cut short: named where the cut value starts, the end of the file in the message
            ("[{\"ifname\":\"m\",\"lqpn\":1,\n", 1, "cut short (the file ends at line 2)"),
        ];
        for (text, line, needle) in cases {
            let error = parse("bad.json", text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.message.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_bare_json_scalar_is_text_and_an_error() {
        let error = parse("x", "\"hello\"\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(error.message.contains("not a QP row"), "{error}");
    }

    #[test]
    fn empty_and_comment_only_tables_have_no_rows() {
        assert_eq!(parse("e", "").unwrap(), QpTable::default());
        let table = parse("e", "time: 2026-01-01T00:00:00Z\n# nothing\n\n").unwrap();
        assert_eq!((table.time.as_deref(), table.rows.len()), (Some("2026-01-01T00:00:00Z"), 0));
        assert_eq!(parse("e", "[]\n").unwrap().rows.len(), 0);
    }

    #[test]
    fn oversized_input_is_refused() {
        let line = format!("link mlx5_0/1 lqpn 1 type RC state RTS comm {}\n", "x".repeat(MAX_LINE_BYTES));
        assert!(parse("big", &line).unwrap_err().message.contains("more than"));
        let huge = "#".repeat(MAX_TEXT_BYTES + 1);
        assert_eq!(parse("huge", &huge).unwrap_err().line, 1);
    }

    #[test]
    fn deep_or_odd_json_does_not_panic() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse("deep", &deep).is_err());
        for text in ["[", "{", "[{]", "[\"\\", "{\"a\":\"\u{1F600}\"}", "[{}]", "[null]", "[{\"ifname\":null}]"] {
            let _ = parse("odd", text);
        }
    }
}
