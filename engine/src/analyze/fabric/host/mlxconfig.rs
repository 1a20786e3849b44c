//! `mlxconfig -d DEV query`: the NIC's non-volatile configuration, of which the CNP's DSCP
//! and 802.1p priority.
//!
//! The output: a `Device #1:` preamble (`Device type:`, `Name:`, `Description:`,
//! `Device:`), then `Configurations:` followed by the column names (`Next Boot` for a plain
//! `query`; `Default  Current  Next Boot` with `-e`) and one indented row per parameter,
//! `CNP_DSCP_P1    48`, values printed as a number or as `NAME(number)` (`True(1)`,
//! `ECN(0)`); with `-e` a changed parameter's row starts with `*`. Parameters of port N end
//! in `_PN`. Where the table has a `Current` column, that column is read; otherwise the first.

use super::common::{at, error, number_up_to, numbered, read_at};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig, Read};

/// Does this text look like `mlxconfig ... query` output?
pub fn recognises(text: &str) -> bool {
    text.lines().any(|line| line.trim_start().starts_with("Configurations:"))
}

/// Does this line begin an `mlxconfig` output?
pub(super) fn starts(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("Device #") || line.starts_with("Configurations:")
}

/// Could this line be part of an `mlxconfig` output?
pub(super) fn continues(line: &str) -> bool {
    let trimmed = line.trim();
    const PREFIXES: [&str; 9] =
        ["Device", "Name:", "Description:", "Configurations:", "The '*'", "-", "*", "Querying", "Apply"];
    trimmed.is_empty() || line.starts_with([' ', '\t']) || PREFIXES.iter().any(|prefix| trimmed.starts_with(prefix))
}

/// A value of a per-port parameter found so far: its port and where it was read.
type PortValue = Option<(u32, Read<u8>)>;

/// Reads `mlxconfig ... query` output into `config`: `cnp_dscp` (`CNP_DSCP_Pn`) and
/// `cnp_priority` (`CNP_802P_PRIO_Pn`), of port 1 or else the lowest port printed.
pub fn read(file: &str, text: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    read_from(file, text, 1, config)
}

/// As [`read`], the text's first line being line `first_line` of the file.
pub(super) fn read_from(
    file: &str,
    text: &str,
    first_line: usize,
    config: &mut DeviceConfig,
) -> Result<(), ConfigError> {
    let mut table: Option<(usize, usize)> = None; // (header line, value column)
    let mut cnp_dscp: PortValue = None;
    let mut cnp_priority: PortValue = None;
    for (line_number, line) in numbered(text, first_line) {
        let trimmed = line.trim();
        if let Some(columns) = trimmed.strip_prefix("Configurations:") {
            table = Some((line_number, value_column(columns)));
            continue;
        }
        let Some((_, column)) = table else { continue };
        let Some((name, value)) = row(trimmed, column) else {
            continue;
        };
        let Some((parameter, port)) = split_port(name) else {
            continue;
        };
        let (slot, max) = match parameter {
            "CNP_DSCP" => (&mut cnp_dscp, 63),
            "CNP_802P_PRIO" => (&mut cnp_priority, 7),
            _ => continue,
        };
        let number = enum_number(value)
            .and_then(|number| number_up_to(number, max))
            .ok_or_else(|| error(file, line_number, format!("{name} must be a number 0..={max}, not `{value}`")))?;
        keep_lowest_port(slot, port, read_at(number, file, line_number));
    }
    if let Some((header_line, _)) = table {
        store(config, "cnp_dscp", cnp_dscp, file, header_line, |config| &mut config.cnp_dscp);
        store(config, "cnp_priority", cnp_priority, file, header_line, |config| &mut config.cnp_priority);
    }
    Ok(())
}

/// Puts a value found in its field, or notes where the table that should have held it is.
fn store(
    config: &mut DeviceConfig,
    name: &str,
    found: PortValue,
    file: &str,
    header_line: usize,
    field: fn(&mut DeviceConfig) -> &mut Option<Read<u8>>,
) {
    match found {
        Some((_, value)) => *field(config) = Some(value),
        None => {
            config.sections.insert(name.to_string(), at(file, header_line));
        }
    }
}

/// Keeps the value of the lowest port (port 1 when printed).
fn keep_lowest_port(slot: &mut PortValue, port: u32, value: Read<u8>) {
    let replace = match slot {
        Some((kept, _)) => port < *kept,
        None => true,
    };
    if replace {
        *slot = Some((port, value));
    }
}

/// The index of the value to read among a row's values: `Current` where printed, else 0.
fn value_column(columns: &str) -> usize {
    columns.split_whitespace().position(|word| word == "Current").unwrap_or(0)
}

/// A table row: the parameter's name and its value in `column` (else its first value).
fn row(trimmed: &str, column: usize) -> Option<(&str, &str)> {
    let trimmed = trimmed.strip_prefix('*').unwrap_or(trimmed).trim_start();
    let mut words = trimmed.split_whitespace();
    let name = words.next()?;
    let is_name = name.bytes().all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit() || byte == b'_');
    if !is_name {
        return None;
    }
    let values: Vec<&str> = words.collect();
    let value = values.get(column).or_else(|| values.first())?;
    Some((name, value))
}

/// `CNP_DSCP_P1` → (`CNP_DSCP`, 1).
fn split_port(name: &str) -> Option<(&str, u32)> {
    let (parameter, port) = name.rsplit_once("_P")?;
    let port = super::common::decimal(port)?;
    Some((parameter, port))
}

/// `48` → `48`; `ECN(0)` → `0`.
fn enum_number(value: &str) -> Option<&str> {
    match value.split_once('(') {
        Some((_, rest)) => rest.strip_suffix(')'),
        None => Some(value),
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::MLXCONFIG_ROCE;
    use super::*;

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        super::super::samples::read_with(read, "mlxconfig.txt", text)
    }

    #[test]
    fn reads_port_1s_cnp_settings() {
        let config = read_text(MLXCONFIG_ROCE).unwrap();
        let dscp = config.cnp_dscp.unwrap();
        assert_eq!((dscp.value, dscp.at.line), (48, 15));
        assert_eq!(dscp.at.file, "mlxconfig.txt");
        let priority = config.cnp_priority.unwrap();
        assert_eq!((priority.value, priority.at.line), (6, 14));
        assert!(config.sections.is_empty());
    }

    #[test]
    fn port_1_wins_whatever_the_order_and_a_lone_port_2_is_read() {
        let text = "Configurations:          Next Boot\n\
            \tCNP_DSCP_P2      46\n\
            \tCNP_DSCP_P1      48\n\
            \tCNP_802P_PRIO_P2 5\n";
        let config = read_text(text).unwrap();
        let dscp = config.cnp_dscp.unwrap();
        assert_eq!((dscp.value, dscp.at.line), (48, 3));
        let priority = config.cnp_priority.unwrap();
        assert_eq!((priority.value, priority.at.line), (5, 4));
    }

    #[test]
    fn reads_the_current_column_of_query_e() {
        let text = "Configurations:                                      Default         Current         Next Boot\n\
            *       CNP_DSCP_P1                                 48              26              26\n\
            \x20       CNP_802P_PRIO_P1                            6               3               6\n\
            The '*' shows parameters with next value different from default/current value.\n";
        let config = read_text(text).unwrap();
        let dscp = config.cnp_dscp.unwrap();
        assert_eq!((dscp.value, dscp.at.line), (26, 2));
        assert_eq!(config.cnp_priority.unwrap().value, 3);
    }

    #[test]
    fn missing_cnp_settings_point_at_the_table() {
        let text = "\nDevice #1:\n\nConfigurations:      Next Boot\n   LINK_TYPE_P1   ETH(2)\n";
        let config = read_text(text).unwrap();
        assert!(config.cnp_dscp.is_none());
        assert_eq!(config.sections["cnp_dscp"].line, 4);
        assert_eq!(config.sections["cnp_priority"].line, 4);
    }

    #[test]
    fn out_of_range_values_are_errors_at_their_line() {
        let cases = [
            ("Configurations: Next Boot\n  CNP_DSCP_P1   64\n", 2, "0..=63"),
            ("Configurations: Next Boot\n\n  CNP_802P_PRIO_P1   8\n", 3, "0..=7"),
            ("Configurations: Next Boot\n  CNP_DSCP_P1   N/A\n", 2, "N/A"),
        ];
        for (text, line, word) in cases {
            let error = read_text(text).unwrap_err();
            assert_eq!(error.line, line, "{text}");
            assert!(error.message.contains(word), "{}", error.message);
        }
        // Before the table, nothing is read.
        let config = read_text("CNP_DSCP_P1 99\n").unwrap();
        assert!(config.cnp_dscp.is_none());
    }

    #[test]
    fn recognises_the_table() {
        assert!(recognises(MLXCONFIG_ROCE));
        assert!(!recognises("CNP_DSCP_P1=48\n"));
    }
}
