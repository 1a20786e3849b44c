//! The NIC's DCQCN settings in sysfs, as `grep . /sys/class/net/IF/ecn/*/*` (or
//! `grep -r . /sys/class/net/IF/ecn`) prints them: one `PATH:VALUE` line per file.
//!
//! The files (the mlx5 driver's `en_ecn` sysfs in MLNX_OFED): `ecn/roce_np/enable/N` and
//! `ecn/roce_rp/enable/N` (0 or 1, for each priority N of 0..=7),
//! `ecn/roce_np/cnp_dscp`, `ecn/roce_np/cnp_802p_prio`, `ecn/roce_np/min_time_between_cnps`
//! and the reaction point's `ecn/roce_rp/rpg_*`, `clamp_tgt_rate`, ... parameters (not read).
//! `grep . ecn/*/*` also says `grep: .../enable: Is a directory`, which is skipped. The
//! path may be absolute or relative (`roce_np/enable/3:1` from inside `ecn/`).

use super::common::{error, number_up_to, numbered, read_at};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig};

/// Does this text look like the ECN sysfs files printed by `grep`?
pub fn recognises(text: &str) -> bool {
    text.lines().any(|line| ecn_file(line).is_some())
}

/// Does this line begin (or continue) an ECN sysfs listing?
pub(super) fn starts(line: &str) -> bool {
    ecn_file(line).is_some()
}

/// Could this line be part of an ECN sysfs listing?
pub(super) fn continues(line: &str) -> bool {
    line.trim().is_empty() || line.starts_with("grep:") || ecn_file(line).is_some()
}

/// A `PATH:VALUE` line of the ECN sysfs: the point (`roce_np`, `roce_rp`), the file under it
/// (`enable/3`, `cnp_dscp`) and the value.
fn ecn_file(line: &str) -> Option<(&str, &str, &str)> {
    let (path, value) = line.trim().rsplit_once(':')?;
    for (point, marker) in [("roce_np", "roce_np/"), ("roce_rp", "roce_rp/")] {
        let Some((before, file)) = path.split_once(marker) else {
            continue;
        };
        if before.is_empty() || before.ends_with('/') {
            return Some((point, file, value.trim()));
        }
    }
    None
}

/// Reads the ECN sysfs lines into `config`: `notification_point` and `reaction_point` for
/// each priority, `cnp_dscp` and `cnp_priority`.
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
    for (line_number, line) in numbered(text, first_line) {
        if line.trim().is_empty() || line.starts_with("grep:") {
            continue;
        }
        let (point, name, value) = ecn_file(line).ok_or_else(|| {
            error(file, line_number, format!("not a `/sys/class/net/IF/ecn/...:VALUE` line: `{}`", line.trim()))
        })?;
        read_value(file, line_number, point, name, value, config)?;
    }
    Ok(())
}

/// One file's value.
fn read_value(
    file: &str,
    line_number: usize,
    point: &str,
    name: &str,
    value: &str,
    config: &mut DeviceConfig,
) -> Result<(), ConfigError> {
    let bad = |what: &str| error(file, line_number, format!("{point}/{name}: {what}, not `{value}`"));
    if let Some(priority) = name.strip_prefix("enable/") {
        let priority = number_up_to(priority, 7).ok_or_else(|| bad("the priority is not 0..=7"))?;
        let enabled = match value {
            "1" => true,
            "0" => false,
            _ => return Err(bad("expected 0 or 1")),
        };
        let map = if point == "roce_np" { &mut config.notification_point } else { &mut config.reaction_point };
        map.insert(priority, read_at(enabled, file, line_number));
        return Ok(());
    }
    match (point, name) {
        ("roce_np", "cnp_dscp") => {
            let dscp = number_up_to(value, 63).ok_or_else(|| bad("expected a DSCP 0..=63"))?;
            config.cnp_dscp = Some(read_at(dscp, file, line_number));
        }
        ("roce_np", "cnp_802p_prio") => {
            let priority = number_up_to(value, 7).ok_or_else(|| bad("expected a priority 0..=7"))?;
            config.cnp_priority = Some(read_at(priority, file, line_number));
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::samples::SYSFS_ECN_ROCE;
    use super::*;

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        super::super::samples::read_with(read, "ecn.txt", text)
    }

    #[test]
    fn reads_the_roce_profile() {
        let config = read_text(SYSFS_ECN_ROCE).unwrap();
        let dscp = config.cnp_dscp.unwrap();
        assert_eq!((dscp.value, dscp.at.line, dscp.at.file.as_str()), (48, 2, "ecn.txt"));
        let priority = config.cnp_priority.unwrap();
        assert_eq!((priority.value, priority.at.line), (6, 1));
        assert_eq!(config.notification_point.len(), 8);
        let np3 = &config.notification_point[&3];
        assert_eq!((np3.value, np3.at.line), (true, 11));
        let np4 = &config.notification_point[&4];
        assert_eq!((np4.value, np4.at.line), (false, 12));
        assert_eq!(config.reaction_point.len(), 1);
        let rp3 = &config.reaction_point[&3];
        assert_eq!((rp3.value, rp3.at.line), (true, 16));
    }

    #[test]
    fn reads_np_disabled_on_priority_3_and_relative_paths() {
        let text = "roce_np/enable/3:0\nroce_rp/enable/3:1\n";
        let config = read_text(text).unwrap();
        assert!(!config.notification_point[&3].value);
        assert_eq!(config.notification_point[&3].at.line, 1);
        assert!(config.reaction_point[&3].value);
        assert!(config.cnp_dscp.is_none());
    }

    #[test]
    fn errors_name_their_line() {
        let base = "/sys/class/net/ens1f0np0/ecn/";
        let cases = [
            (format!("{base}roce_np/cnp_dscp:48\n{base}roce_np/enable/3:2\n"), 2, "0 or 1"),
            (format!("{base}roce_np/enable/8:1\n"), 1, "0..=7"),
            (format!("{base}roce_np/cnp_dscp:64\n"), 1, "0..=63"),
            (format!("{base}roce_np/cnp_802p_prio:9\n"), 1, "0..=7"),
            (format!("{base}roce_np/cnp_dscp:48\nsomething else\n"), 2, "something"),
        ];
        for (text, line, word) in cases {
            let error = read_text(&text).unwrap_err();
            assert_eq!(error.line, line, "{text}");
            assert!(error.message.contains(word), "{}", error.message);
        }
    }

    #[test]
    fn recognises_the_listing() {
        assert!(recognises(SYSFS_ECN_ROCE));
        assert!(!recognises("/sys/class/net/eth0/mtu:9000\n"));
        assert!(!recognises("xroce_np/enable/3:1\n"));
    }
}
