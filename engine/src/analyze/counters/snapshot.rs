//! A snapshot of a host's counters as an engineer prints them, in any order and concatenated:
//! `ethtool -S IFACE` ("NIC statistics:" then indented `name: value` lines), the loop over
//! `/sys/class/infiniband/DEV/ports/N/hw_counters/*` (`name value`, or `grep . …/*`'s
//! `PATH:value`), and an optional `time: RFC3339` line.

use std::fmt;

use rustc_hash::FxHashMap;

/// One file's counters, in the order first named (a name given again keeps its last value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Every counter once, in the order first named: read it; the parsers fill it (through
    /// `set`, which keeps the index beside it in step).
    pub counters: Vec<(String, u64)>,
    /// The `time:` line, as written and in ns since the Unix epoch.
    pub time: Option<(String, i64)>,
    /// Where each name is in `counters`: a lookup takes the same time however many there are.
    index: FxHashMap<String, usize>,
}

impl Snapshot {
    /// The value of counter `name`, if the snapshot has it.
    pub fn get(&self, name: &str) -> Option<u64> {
        let &at = self.index.get(name)?;
        self.counters.get(at).map(|&(_, v)| v)
    }

    /// Keeps `value` for counter `name`: a name given again keeps its first place and its last
    /// value.
    pub(super) fn set(&mut self, name: &str, value: u64) {
        match self.index.get(name).and_then(|&at| self.counters.get_mut(at)) {
            Some(slot) => slot.1 = value,
            None => {
                self.index.insert(name.to_string(), self.counters.len());
                self.counters.push((name.to_string(), value));
            }
        }
    }
}

/// At most this many bytes of a line are quoted in an error: a line of megabytes is named by
/// its start and its length.
pub const QUOTED_BYTES: usize = 200;

/// `text` quoted for an error message: all of it up to [`QUOTED_BYTES`], else its first
/// [`QUOTED_BYTES`] at most (cut on a character's boundary), "…" and its length.
pub(super) fn quoted(text: &str) -> String {
    crate::quoting::quoted(text, QUOTED_BYTES)
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
        let (name, value) = split(line).ok_or_else(|| fail(format!("{} is a name without a value", quoted(line))))?;
        let value = value.parse::<u64>().map_err(|_| fail(not_a_count(name, value)))?;
        snapshot.set(name, value);
    }
    Ok(snapshot)
}

/// What is wrong with a line whose value is not a count; the name quoted only when long.
fn not_a_count(name: &str, value: &str) -> String {
    let name = if name.len() <= QUOTED_BYTES { name.to_string() } else { quoted(name) };
    format!("the value of {name} is not a count: {}", quoted(value))
}

/// A `time:` line's time, as written and in ns since the Unix epoch; else what is wrong.
pub(crate) fn time_line(time: &str) -> Result<(String, i64), String> {
    let time = time.trim();
    let parts = rfc3339_parts(time).ok_or_else(|| format!("{} is not an RFC 3339 time", quoted(time)))?;
    let ns = ns_since_epoch(parts)
        .ok_or_else(|| format!("{} is outside the times rocescope holds, {TIME_RANGE}", quoted(time)))?;
    Ok((time.to_string(), ns))
}

/// The times a count of ns since the Unix epoch in 64 bits holds, as a message says them.
const TIME_RANGE: &str = "1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z";

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
/// offset); `None` for no such time or one outside [`TIME_RANGE`].
#[cfg(test)]
fn rfc3339_ns(s: &str) -> Option<i64> {
    rfc3339_parts(s).and_then(ns_since_epoch)
}

/// Seconds and ns since the Unix epoch as one count of ns, if 64 bits hold it.
fn ns_since_epoch((seconds, nanos): (i64, i64)) -> Option<i64> {
    seconds.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// Seconds since the Unix epoch and the ns of the second, of an RFC 3339 time.
fn rfc3339_parts(s: &str) -> Option<(i64, i64)> {
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
    valid.then_some((seconds, nanos))
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
    fn many_counters_parse_in_linear_time_and_a_name_given_twice_keeps_its_last_value() {
        // 200,000 distinct names: a search per line took minutes; the index takes milliseconds
        let mut text: String = (0..200_000).map(|i| format!("counter_{i}: {i}\n")).collect();
        text.push_str("counter_7: 70\n");
        let s = parse("many.txt", &text).expect("a snapshot");
        assert_eq!(s.counters.len(), 200_000);
        assert_eq!((s.get("counter_0"), s.get("counter_199999")), (Some(0), Some(199_999)));
        assert_eq!(s.get("counter_7"), Some(70), "the last value");
        assert_eq!(s.counters[7], ("counter_7".to_string(), 70), "the first place");
        assert_eq!(s.get("counter_200000"), None);
    }

    #[test]
    fn a_long_bad_line_is_quoted_by_its_start_and_length() {
        let long = format!("{}é", "x".repeat(QUOTED_BYTES - 1));
        let err = parse("big.txt", &format!("rx_packets 1\n{long}{}\n", "y".repeat(4 << 20))).unwrap_err();
        assert_eq!(err.line, 2);
        let text = err.to_string();
        assert!(text.len() < 300, "{} bytes", text.len());
        assert!(
            text.contains(&format!(
                "{}\"… ({} bytes) is a name without a value",
                "x".repeat(QUOTED_BYTES - 1),
                long.len() + (4 << 20)
            )),
            "{text}"
        );
        let err = parse("big.txt", &format!("{}: 1x\n", "n".repeat(1 << 20))).unwrap_err();
        assert!(err.to_string().len() < 400, "{err}");
        assert_eq!(quoted("short"), "\"short\"");
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
        assert_eq!(rfc3339_ns("2262-04-11T23:47:16Z").map(|ns| ns / 1_000_000_000), Some(i64::MAX / 1_000_000_000));
        assert_eq!(rfc3339_ns("1677-09-21T00:12:44Z").map(|ns| ns / 1_000_000_000), Some(i64::MIN / 1_000_000_000));
        for outside in ["9999-12-31T23:59:59Z", "2262-04-11T23:47:17Z", "0001-01-01T00:00:00Z"] {
            let message = time_line(outside).expect_err(outside);
            assert!(
                message.contains("outside the times rocescope holds, 1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z"),
                "{message}"
            );
        }
        assert!(time_line("yesterday").expect_err("no time").contains("is not an RFC 3339 time"));
    }
}
