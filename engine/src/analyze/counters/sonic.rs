//! A switch's counters as SONiC prints them (`analyze --switch-counters NAME=BEFORE,AFTER`):
//! the tables of `show pfc counters` (a `Port Rx` and a `Port Tx` table, a row per port and a
//! column per priority) and `show queue counters` (a row per port and queue, packets, bytes and
//! drops), in any order and concatenated, with an optional `time: RFC3339` line. Values may hold
//! thousands separators; `N/A` is left out. Every other line outside a table is skipped (the
//! `Last cached time` notes, the namespace headers).

use super::snapshot::{Snapshot, SnapshotError, quoted};
use crate::analyze::rfc3339::time_line;

/// What a table's header says its rows hold.
#[derive(Debug, Clone)]
enum Table {
    /// `Port Rx` or `Port Tx`: a column per priority.
    Pfc { direction: &'static str, priorities: Vec<u8> },
    /// `Port TxQ …`: the queue, then the named columns (`None` for a rate, which is no counter).
    Queue { columns: Vec<Option<&'static str>> },
}

/// The counter name a queue table's column is kept under; rates are skipped.
fn queue_column(header: &str) -> Option<&'static str> {
    match header {
        "Counter/pkts" => Some("packets"),
        "Counter/bytes" => Some("bytes"),
        "Drop/pkts" => Some("dropped_packets"),
        "Drop/bytes" => Some("dropped_bytes"),
        _ => None,
    }
}

/// The table a header line opens, if it is one.
fn header(words: &[&str]) -> Option<Table> {
    match words {
        ["Port", direction @ ("Rx" | "Tx"), columns @ ..] => {
            let priorities =
                columns.iter().map(|c| c.strip_prefix("PFC")?.parse::<u8>().ok()).collect::<Option<_>>()?;
            let direction = if *direction == "Rx" { "rx" } else { "tx" };
            Some(Table::Pfc { direction, priorities })
        }
        ["Port", "TxQ", columns @ ..] if columns.iter().any(|c| queue_column(c).is_some()) => {
            Some(Table::Queue { columns: columns.iter().map(|c| queue_column(c)).collect() })
        }
        _ => None,
    }
}

/// A value as SONiC prints it: `1,234`, or `N/A` (None).
fn value(word: &str) -> Result<Option<u64>, ()> {
    if word == "N/A" {
        return Ok(None);
    }
    let digits: String = word.chars().filter(|&c| c != ',').collect();
    digits.parse::<u64>().map(Some).map_err(|_| ())
}

/// The cells of a row whose rates carry a unit as a word of its own (`0.00 B/s`, `0.00 bps`):
/// each unit joined to the value before it.
fn with_units(words: &[&str]) -> Vec<String> {
    let mut cells: Vec<String> = Vec::with_capacity(words.len());
    for word in words {
        let unit = word.ends_with("/s") || word.ends_with("bps");
        match cells.last_mut() {
            Some(last) if unit && value(word).is_err() => {
                last.push(' ');
                last.push_str(word);
            }
            _ => cells.push((*word).to_string()),
        }
    }
    cells
}

/// Reads the switch counters of `text`, the contents of `file`. Counters are named
/// `PORT rx_pfcN` / `PORT tx_pfcN` and `PORT QUEUE packets|bytes|dropped_packets|dropped_bytes`.
pub fn parse(file: &str, text: &str) -> Result<Snapshot, SnapshotError> {
    let mut snapshot = Snapshot::default();
    let mut table: Option<Table> = None;
    for (n, raw) in text.lines().enumerate() {
        let fail = |message: String| SnapshotError { file: file.to_string(), line: n + 1, message };
        let line = raw.trim();
        let words: Vec<&str> = line.split_whitespace().collect();
        if line.is_empty() {
            table = None;
        } else if let Some(time) = line.strip_prefix("time:") {
            snapshot.time = Some(time_line(time).map_err(fail)?);
        } else if let Some(opened) = header(&words) {
            table = Some(opened);
        } else if line.chars().all(|c| c == '-' || c.is_whitespace()) {
            // the rule under a header
        } else if let Some(t) = &table {
            row(t, &words, &mut snapshot).map_err(|m| fail(format!("{m}: {}", quoted(line))))?;
        }
    }
    Ok(snapshot)
}

/// Does `text` hold a table's header, of `show pfc counters` or of `show queue counters`? A
/// file without one is not what `--switch-counters` reads, though [`parse`] finds no error in it.
pub fn has_table(text: &str) -> bool {
    text.lines().any(|line| header(&line.split_whitespace().collect::<Vec<_>>()).is_some())
}

/// Keeps the counters of one table row.
fn row(table: &Table, words: &[&str], snapshot: &mut Snapshot) -> Result<(), String> {
    let values = |words: &[&str]| words.iter().map(|w| value(w)).collect::<Result<Vec<_>, ()>>();
    match table {
        Table::Pfc { direction, priorities } => {
            let [port, rest @ ..] = words else { return Err("a row without a port".into()) };
            let values = values(rest).map_err(|()| "a value that is not a count".to_string())?;
            if values.len() != priorities.len() {
                return Err(format!("{} values under {} priorities", values.len(), priorities.len()));
            }
            for (priority, v) in priorities.iter().zip(values) {
                if let Some(v) = v {
                    snapshot.set(&format!("{port} {direction}_pfc{priority}"), v);
                }
            }
        }
        Table::Queue { columns } => {
            let [port, queue, rest @ ..] = words else { return Err("a row without a port and a queue".into()) };
            let rest = with_units(rest);
            if rest.len() != columns.len() {
                return Err(format!("{} values under {} columns", rest.len(), columns.len()));
            }
            for (column, word) in columns.iter().zip(&rest) {
                let Some(column) = column else { continue };
                if let Some(v) = value(word).map_err(|()| format!("{column} is not a count"))? {
                    snapshot.set(&format!("{port} {queue} {column}"), v);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PFC: &str = "Last cached time was 2026-12-05T10:00:00.000000
  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
-----------  ------  ------  ------  ------  ------  ------  ------  ------
  Ethernet0       0       0       0   1,204       0       0       0       0
  Ethernet4       0       0       0     N/A       0       0       0       0

  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
-----------  ------  ------  ------  ------  ------  ------  ------  ------
  Ethernet0       0       0       0      17       0       0       0       0
";

    const QUEUE: &str = "time: 2026-12-05T10:00:00Z
     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes
---------  -----  --------------  ---------------  -----------  ------------
Ethernet0    UC3       1,000,000    1,048,000,000           12        12,288
Ethernet0    MC8             N/A              N/A          N/A           N/A
";

    #[test]
    fn pfc_and_queue_tables_read_as_one_snapshot() {
        let s = parse("switch.txt", &format!("{QUEUE}\n{PFC}")).expect("a snapshot");
        assert_eq!(s.get("Ethernet0 rx_pfc3"), Some(1204));
        assert_eq!(s.get("Ethernet4 rx_pfc3"), None, "N/A is left out");
        assert_eq!(s.get("Ethernet4 rx_pfc2"), Some(0));
        assert_eq!(s.get("Ethernet0 tx_pfc3"), Some(17));
        assert_eq!(s.get("Ethernet0 UC3 packets"), Some(1_000_000));
        assert_eq!(s.get("Ethernet0 UC3 dropped_bytes"), Some(12_288));
        assert_eq!(s.get("Ethernet0 MC8 packets"), None);
        assert_eq!(s.counters.len(), 8 + 7 + 8 + 4);
        assert!(s.time.is_some());
    }

    #[test]
    fn a_queue_table_of_many_rows_parses_in_linear_time() {
        // 20,000 rows (a 512-port chassis has about 8,000), 80,000 counters
        let header = "     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n---------  -----  ---  ---  ---  ---\n";
        let rows: String =
            (0..20_000).map(|i| format!("Ethernet{}    UC{}  {i}  1,024  0  0\n", i / 8, i % 8)).collect();
        let s = parse("queues.txt", &format!("{header}{rows}")).expect("a snapshot");
        assert_eq!(s.counters.len(), 80_000);
        assert_eq!(s.get("Ethernet2499 UC7 packets"), Some(19_999));
        assert!(has_table(header) && has_table(PFC) && !has_table("Last cached time was …\nEthernet0 1 2\n"));
    }

    #[test]
    fn rates_are_skipped_and_bad_rows_are_named_by_their_line() {
        let rates = "Port  TxQ  Counter/pkts  Counter/bytes  Drop/pkts  Drop/bytes  Pkts/s  Bytes/s  Bits/s\n----\nEthernet8  UC0  5  320  1  64  0.00  1.20 KB/s  9.60 Kbps\n";
        let s = parse("q.txt", rates).expect("a snapshot");
        assert_eq!((s.get("Ethernet8 UC0 packets"), s.get("Ethernet8 UC0 dropped_packets")), (Some(5), Some(1)));
        assert_eq!(s.counters.len(), 4, "rates are no counters");
        let err = parse("q.txt", "Port  TxQ  Counter/pkts  Drop/pkts\n--\nEthernet8  UC0  5\n").unwrap_err();
        assert!(err.message.contains("1 values under 2 columns"), "{err}");
        let err = parse("p.txt", "Port Tx PFC0 PFC1\n---\nEthernet0 3 x\n").unwrap_err();
        assert_eq!((err.line, err.file.as_str()), (3, "p.txt"));
        assert!(err.message.contains("not a count"), "{err}");
    }
}
