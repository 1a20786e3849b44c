//! A snapshot of a host's counters as an engineer prints them, in any order and concatenated:
//! `ethtool -S IFACE` ("NIC statistics:" then indented `name: value` lines), the loop over
//! `/sys/class/infiniband/DEV/ports/N/hw_counters/*` (`name value`, or `grep . …/*`'s
//! `PATH:value`), and an optional `time: RFC3339` line.

use std::fmt;

/// One file's counters, in the order first named (a name given again keeps its last value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub counters: Vec<(String, u64)>,
    /// The `time:` line, as written and in ns since the Unix epoch.
    pub time: Option<(String, i64)>,
}

impl Snapshot {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.counters.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    pub(super) fn set(&mut self, name: &str, value: u64) {
        match self.counters.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.counters.push((name.to_string(), value)),
        }
    }
}

/// A line that is no counter, with the file and its line number (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: line {}: {}", self.file, self.line, self.message)
    }
}

/// Reads the counters of `text`, the contents of `file`.
pub fn parse(file: &str, text: &str) -> Result<Snapshot, SnapshotError> {
    let mut snapshot = Snapshot::default();
    for (n, raw) in text.lines().enumerate() {
        let fail = |message: String| SnapshotError { file: file.to_string(), line: n + 1, message };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.eq_ignore_ascii_case("NIC statistics:") {
            continue;
        }
        if let Some(time) = line.strip_prefix("time:") {
            snapshot.time = Some(time_line(time).map_err(fail)?);
            continue;
        }
        let (name, value) = split(line).ok_or_else(|| fail(format!("{line:?} is a name without a value")))?;
        let value = value.parse::<u64>().map_err(|_| fail(format!("the value of {name} is not a count: {value:?}")))?;
        snapshot.set(name, value);
    }
    Ok(snapshot)
}

/// A `time:` line's time, as written and in ns since the Unix epoch; else what is wrong.
pub(super) fn time_line(time: &str) -> Result<(String, i64), String> {
    let time = time.trim();
    let ns = rfc3339_ns(time).ok_or_else(|| format!("{time:?} is not an RFC 3339 time"))?;
    Ok((time.to_string(), ns))
}

/// A line's counter name (a path's last part) and its value: `name: value`, `PATH:value` or
/// `name value`.
fn split(line: &str) -> Option<(&str, &str)> {
    let (name, value) = match line.rsplit_once(':') {
        Some((name, value)) => (name.trim(), value.trim()),
        None => line.split_once(char::is_whitespace).map(|(n, v)| (n.trim(), v.trim()))?,
    };
    let name = name.rsplit('/').next().unwrap_or(name);
    (!name.is_empty() && !value.is_empty() && !name.contains(char::is_whitespace)).then_some((name, value))
}

/// ns since the Unix epoch of an RFC 3339 time (`2026-12-05T10:00:00Z`, fractions and any
/// offset).
fn rfc3339_ns(s: &str) -> Option<i64> {
    let number = |from: usize, len: usize| s.get(from..from + len)?.parse::<i64>().ok();
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    let bytes = s.as_bytes();
    if separators.iter().any(|&(i, c)| bytes.get(i) != Some(&c)) || !matches!(bytes.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let rest = s.get(19..)?;
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(f) => f.split_at(f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len())),
        None => ("", rest),
    };
    let nanos = if fraction.is_empty() { 0 } else { format!("{fraction:0<9}").get(..9)?.parse::<i64>().ok()? };
    let offset_s = match zone {
        "Z" | "z" => 0,
        _ => {
            // ±HH:MM, at most a day either way
            let sign = match zone.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = (zone.get(1..3)?.parse::<i64>().ok()?, zone.get(4..6)?.parse::<i64>().ok()?);
            if zone.len() != 6 || zone.as_bytes().get(3) != Some(&b':') || h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    let valid = (1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && minute < 60 && second < 61;
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    valid.then(|| seconds.checked_mul(1_000_000_000)?.checked_add(nanos)).flatten()
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethtool_hw_counters_and_grep_lines_read_as_one_snapshot() {
        let text = "time: 2026-12-05T10:00:00Z\nNIC statistics:\n     rx_packets: 1200\n     rx_out_of_buffer: 7\n     tx_prio3_pause: 12\n\nout_of_sequence 5\n/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:9\n";
        let s = parse("before.txt", text).expect("a snapshot");
        assert_eq!(s.get("rx_packets"), Some(1200));
        assert_eq!(s.get("rx_out_of_buffer"), Some(7));
        assert_eq!(s.get("tx_prio3_pause"), Some(12));
        assert_eq!(s.get("out_of_sequence"), Some(5));
        assert_eq!(s.get("np_cnp_sent"), Some(9));
        assert_eq!(s.time.as_ref().map(|t| t.1), Some(1_796_464_800_000_000_000));
        assert_eq!(s.counters.len(), 5);
    }

    #[test]
    fn a_malformed_line_is_named_by_its_number() {
        let err = parse("after.txt", "NIC statistics:\n     rx_packets: 12\n     rx_bytes:\n").unwrap_err();
        assert_eq!((err.line, err.file.as_str()), (3, "after.txt"));
        assert!(err.message.contains("without a value"), "{err}");
        let err = parse("after.txt", "out_of_sequence twelve\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.to_string().starts_with("after.txt: line 1: the value of out_of_sequence is not a count"), "{err}");
        assert_eq!(parse("a", "time: yesterday\n").unwrap_err().line, 1);
    }

    #[test]
    fn times_with_offsets_and_fractions() {
        let utc = rfc3339_ns("2026-12-05T10:00:00Z").expect("a time");
        assert_eq!(rfc3339_ns("2026-12-05T11:30:00+01:30"), Some(utc));
        assert_eq!(rfc3339_ns("2026-12-05T09:00:00.5-01:00"), Some(utc + 500_000_000));
        assert_eq!(rfc3339_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_ns("2026-13-05T10:00:00Z"), None);
        assert_eq!(rfc3339_ns("2026-12-05 10:00"), None);
        assert_eq!(rfc3339_ns("2026-12-05T10:00:00+99999999999999999:00"), None);
        assert_eq!(rfc3339_ns("2026-12-05T10:00:00+1:00"), None);
    }
}
