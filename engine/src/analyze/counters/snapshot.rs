//! A snapshot of a host's counters as an engineer prints them, in any order and concatenated:
//! `ethtool -S IFACE` ("NIC statistics:" then indented `name: value` lines), the loop over
//! `/sys/class/infiniband/DEV/ports/N/hw_counters/*` (`name value`, or `grep . …/*`'s
//! `PATH:value`), and an optional `time: RFC3339` line.

use std::fmt;

use crate::analyze::rfc3339::time_line;

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
}
