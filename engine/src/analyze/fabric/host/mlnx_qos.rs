//! `mlnx_qos -i IF`: the NIC's trust state, DSCP → priority map and PFC priorities.
//!
//! The output (indented with tabs), as `pretty_print` in mlnx-tools' `python/mlnx_qos` (with
//! `DcbAppTable.printAppSelector` in `python/dcbnetlink.py`) prints it:
//!
//! ```text
//! DCBX mode: OS controlled
//! Priority trust state: dscp
//! dscp2prio mapping:
//!     prio:0 dscp:07,06,05,04,03,02,01,00,
//!     ...
//! default priority:
//! Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1027584
//! Cable len: 7
//! PFC configuration:
//!     priority    0   1   2   3   4   5   6   7
//!     enabled     0   0   0   1   0   0   0   0
//!     buffer      0   0   0   1   0   0   0   0
//! tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
//!      priority:  0
//! ```
//!
//! Subtleties from that source: a priority's DSCP list is cut into lines of 8 entries, each
//! line repeating `prio:N dscp:` (so a priority can have several lines); the list ends in a
//! comma; the `dscp2prio` block is printed only under trust `dscp`; `default priority:` is
//! followed by `prio:N` lines with no `dscp:`; the trust state is `none` when the tool could
//! not read it (after `Priority trust state is not supported on your system`).

use super::common::{error, number_up_to, numbered, read_at};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig, Trust};

/// The prefixes of the lines `mlnx_qos` prints (after leading whitespace).
const LINE_PREFIXES: [&str; 16] = [
    "DCBX mode:",
    "Priority trust state",
    "dscp2prio mapping:",
    "prio:",
    "default priority:",
    "Receive buffer size",
    "Cable len:",
    "PFC configuration:",
    "priority",
    "enabled",
    "buffer",
    "tc:",
    "****** WARNING",
    "Buffers commands are not supported",
    "Bad value",
    "Netlink error",
];

/// Does this text look like `mlnx_qos` output?
pub fn recognises(text: &str) -> bool {
    text.lines().map(str::trim).any(|line| {
        line.starts_with("DCBX mode:")
            || line.starts_with("Priority trust state:")
            || line == "PFC configuration:"
            || line == "dscp2prio mapping:"
    })
}

/// Does this line begin an `mlnx_qos` output (when pasted after another tool's)?
pub(super) fn starts(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("DCBX mode:")
        || line.starts_with("Priority trust state")
        || line.starts_with("****** WARNING: lldpad")
        || line.starts_with("Buffers commands are not supported")
}

/// Could this line be part of an `mlnx_qos` output?
pub(super) fn continues(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty()
        || line.starts_with([' ', '\t'])
        || LINE_PREFIXES.iter().any(|prefix| trimmed.starts_with(prefix))
}

/// Reads `mlnx_qos -i IF` output into `config`: `trust`, `dscp_to_priority` and
/// `pfc_priorities`.
pub fn read(file: &str, text: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    read_from(file, text, 1, config)
}

/// The block of lines being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Top,
    DscpToPriority,
    DefaultPriority,
    Pfc { header_line: usize },
}

/// As [`read`], the text's first line being line `first_line` of the file.
pub(super) fn read_from(
    file: &str,
    text: &str,
    first_line: usize,
    config: &mut DeviceConfig,
) -> Result<(), ConfigError> {
    let mut block = Block::Top;
    for (line_number, line) in numbered(text, first_line) {
        let line = line.trim();
        block = read_in_block(file, line_number, line, block, config)?;
        if block == Block::Top {
            block = read_top_line(file, line_number, line, config)?;
        }
    }
    if let Block::Pfc { header_line } = block {
        note_missing_pfc(file, header_line, config);
    }
    Ok(())
}

/// Reads a line of the current block; returns the block that goes on, or `Top` when this
/// line is not the block's (it is then read as a top-level line).
fn read_in_block(
    file: &str,
    line_number: usize,
    line: &str,
    block: Block,
    config: &mut DeviceConfig,
) -> Result<Block, ConfigError> {
    let first_word = line.split_whitespace().next().unwrap_or("");
    match block {
        Block::Top => Ok(Block::Top),
        Block::DscpToPriority if line.starts_with("prio:") => {
            read_dscp_line(file, line_number, line, config)?;
            Ok(block)
        }
        Block::DefaultPriority if line.starts_with("prio:") => Ok(block),
        Block::Pfc { .. } if first_word == "priority" || first_word == "buffer" => Ok(block),
        Block::Pfc { .. } if first_word == "enabled" => {
            read_pfc_line(file, line_number, line, config)?;
            Ok(Block::Top)
        }
        Block::Pfc { header_line } => {
            note_missing_pfc(file, header_line, config);
            Ok(Block::Top)
        }
        Block::DscpToPriority | Block::DefaultPriority => Ok(Block::Top),
    }
}

/// Reads a line outside any block; returns the block it opens.
fn read_top_line(file: &str, line_number: usize, line: &str, config: &mut DeviceConfig) -> Result<Block, ConfigError> {
    if let Some(state) = line.strip_prefix("Priority trust state:") {
        read_trust(file, line_number, state.trim(), config)?;
        return Ok(Block::Top);
    }
    Ok(match line {
        "dscp2prio mapping:" => Block::DscpToPriority,
        "default priority:" => Block::DefaultPriority,
        "PFC configuration:" => Block::Pfc { header_line: line_number },
        _ => Block::Top,
    })
}

/// `Priority trust state: dscp` (or `pcp`; `none` when the tool could not read it).
fn read_trust(file: &str, line_number: usize, state: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let trust = match state {
        "dscp" => Trust::Dscp,
        "pcp" => Trust::Pcp,
        "none" => return Ok(()),
        other => {
            return Err(error(
                file,
                line_number,
                format!("unknown priority trust state `{other}` (expected dscp or pcp)"),
            ));
        }
    };
    config.trust = Some(read_at(trust, file, line_number));
    Ok(())
}

/// `prio:3 dscp:31,30,29,28,27,26,25,24,`: each DSCP of the list maps to the priority.
fn read_dscp_line(file: &str, line_number: usize, line: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let malformed = |what: &str| error(file, line_number, format!("malformed dscp2prio line `{line}`: {what}"));
    let rest = line.strip_prefix("prio:").unwrap_or(line);
    let (priority, list) = rest.split_once("dscp:").ok_or_else(|| malformed("no `dscp:`"))?;
    let priority = number_up_to(priority.trim(), 7).ok_or_else(|| malformed("the priority is not 0..=7"))?;
    for dscp in list.split(',').map(str::trim).filter(|dscp| !dscp.is_empty()) {
        let dscp = number_up_to(dscp, 63).ok_or_else(|| malformed(&format!("DSCP `{dscp}` is not 0..=63")))?;
        config.dscp_to_priority.insert(dscp, read_at(priority, file, line_number));
    }
    Ok(())
}

/// `enabled     0   0   0   1   0   0   0   0`: one 0/1 for each priority 0..=7.
fn read_pfc_line(file: &str, line_number: usize, line: &str, config: &mut DeviceConfig) -> Result<(), ConfigError> {
    let flags: Vec<&str> = line.split_whitespace().skip(1).collect();
    if flags.len() != 8 || flags.iter().any(|flag| *flag != "0" && *flag != "1") {
        return Err(error(
            file,
            line_number,
            format!("malformed PFC line `{line}`: expected `enabled` and eight 0 or 1"),
        ));
    }
    let priorities = (0u8..8).zip(flags).filter(|(_, flag)| *flag == "1").map(|(priority, _)| priority).collect();
    config.pfc_priorities = Some(read_at(priorities, file, line_number));
    Ok(())
}

/// A `PFC configuration:` block with no `enabled` line: where PFC should have been said.
fn note_missing_pfc(file: &str, header_line: usize, config: &mut DeviceConfig) {
    if config.pfc_priorities.is_none() {
        config.sections.insert("pfc".to_string(), super::common::at(file, header_line));
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::{MLNX_QOS_PCP_PFC_OFF, MLNX_QOS_ROCE};
    use super::*;
    use crate::analyze::fabric::model::At;

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        super::super::samples::read_with(read, "qos.txt", text)
    }

    fn at(line: usize) -> At {
        At { file: "qos.txt".to_string(), line }
    }

    #[test]
    fn reads_the_roce_profile() {
        let config = read_text(MLNX_QOS_ROCE).unwrap();
        let trust = config.trust.unwrap();
        assert_eq!(trust.value, Trust::Dscp);
        assert_eq!(trust.at, at(2));
        assert_eq!(config.dscp_to_priority.len(), 64);
        let dscp26 = &config.dscp_to_priority[&26];
        assert_eq!((dscp26.value, dscp26.at.line), (3, 7));
        let dscp0 = &config.dscp_to_priority[&0];
        assert_eq!((dscp0.value, dscp0.at.line), (0, 4));
        let dscp48 = &config.dscp_to_priority[&48];
        assert_eq!((dscp48.value, dscp48.at.line), (6, 10));
        let dscp63 = &config.dscp_to_priority[&63];
        assert_eq!((dscp63.value, dscp63.at.line), (7, 11));
        let pfc = config.pfc_priorities.unwrap();
        assert_eq!(pfc.value, vec![3]);
        assert_eq!(pfc.at, at(17));
        assert!(config.sections.is_empty());
    }

    #[test]
    fn reads_trust_pcp_and_pfc_off() {
        let config = read_text(MLNX_QOS_PCP_PFC_OFF).unwrap();
        let trust = config.trust.unwrap();
        assert_eq!((trust.value, trust.at.line), (Trust::Pcp, 2));
        assert!(config.dscp_to_priority.is_empty());
        let pfc = config.pfc_priorities.unwrap();
        assert_eq!(pfc.value, Vec::<u8>::new());
        assert_eq!(pfc.at.line, 8);
    }

    #[test]
    fn reads_a_priority_cut_over_several_lines() {
        // As printed when priority 6 holds more than 8 DSCPs (30 moved from 3 to 6).
        let text = "Priority trust state: dscp\n\
            dscp2prio mapping:\n\
            \tprio:3 dscp:31,29,28,27,26,25,24,\n\
            \tprio:6 dscp:30,55,54,53,52,51,50,49,\n\
            \tprio:6 dscp:48,\n\
            default priority:\n\
            \tprio:1\n";
        let config = read_text(text).unwrap();
        assert_eq!(config.dscp_to_priority.len(), 16);
        assert_eq!(config.dscp_to_priority[&30].value, 6);
        assert_eq!(config.dscp_to_priority[&30].at.line, 4);
        assert_eq!(config.dscp_to_priority[&48].value, 6);
        assert_eq!(config.dscp_to_priority[&48].at.line, 5);
        assert_eq!(config.dscp_to_priority[&26].value, 3);
        // The default priority's `prio:1` is not a DSCP mapping.
        assert!(!config.dscp_to_priority.contains_key(&1));
    }

    #[test]
    fn reads_the_older_single_spaced_layout() {
        // MLNX_OFED 4.2's mlnx_qos, as NVIDIA's community page shows it.
        let text = "DCBX mode: OS controlled\n\
            Priority trust state: dscp\n\
            Cable len: 10\n\
            PFC configuration:\n\
            priority 0 1 2 3 4 5 6 7\n\
            enabled 1 0 1 0 0 0 1 1\n\
            \n\
            tc: 0 ratelimit: unlimited, tsa: ets, bw: 10%\n";
        let config = read_text(text).unwrap();
        let pfc = config.pfc_priorities.unwrap();
        assert_eq!((pfc.value, pfc.at.line), (vec![0, 2, 6, 7], 6));
    }

    #[test]
    fn trust_none_is_left_unset() {
        let text = "Priority trust state is not supported on your system\n\
            DCBX mode: Firmware controlled\n\
            Priority trust state: none\n";
        let config = read_text(text).unwrap();
        assert!(config.trust.is_none());
    }

    #[test]
    fn a_pfc_block_without_enabled_line_is_noted() {
        let text = "Priority trust state: dscp\nPFC configuration:\ntc: 0 ratelimit: unlimited\n";
        let config = read_text(text).unwrap();
        assert!(config.pfc_priorities.is_none());
        assert_eq!(config.sections["pfc"], at(2));
        let text = "PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n";
        let config = read_text(text).unwrap();
        assert_eq!(config.sections["pfc"], at(1));
    }

    #[test]
    fn errors_name_their_line() {
        let cases = [
            ("DCBX mode: OS controlled\nPriority trust state: vlan\n", 2, "vlan"),
            ("dscp2prio mapping:\n\tprio:3 dscp:26,64,\n", 2, "64"),
            ("dscp2prio mapping:\n\tprio:8 dscp:26,\n", 2, "0..=7"),
            ("dscp2prio mapping:\n\tprio:3 dscp:2x,\n", 2, "2x"),
            ("dscp2prio mapping:\n\tprio:3 26,\n", 2, "dscp:"),
            ("x\nPFC configuration:\n\tenabled 0 0 0 1 0 0 0\n", 3, "eight"),
            ("PFC configuration:\n\tenabled 0 0 0 2 0 0 0 0\n", 2, "eight"),
        ];
        for (text, line, word) in cases {
            let error = read_text(text).unwrap_err();
            assert_eq!((error.file.as_str(), error.line), ("qos.txt", line), "{text}");
            assert!(error.message.contains(word), "{}", error.message);
        }
    }

    #[test]
    fn recognises_its_output_only() {
        assert!(recognises(MLNX_QOS_ROCE));
        assert!(recognises(MLNX_QOS_PCP_PFC_OFF));
        assert!(!recognises("NCCL_IB_TC=106\n"));
        assert!(!recognises("2: eth0: <UP> mtu 9000\n"));
    }
}
