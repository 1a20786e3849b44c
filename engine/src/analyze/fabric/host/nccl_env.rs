//! NCCL's settings as `KEY=VALUE` lines: an `env` dump, `export NCCL_IB_TC=106` lines, a
//! `/etc/profile.d/nccl.sh`, `declare -x` lines (`export -p`), `/etc/nccl.conf`.
//!
//! Only `NCCL_*` variables are read; other lines (other variables, shell code, the
//! continuation lines of a multi-line `env` value) are left alone. `NCCL_IB_TC` is the
//! traffic class NCCL puts in its QPs' address vector (the IP TOS byte: DSCP × 4 + ECN
//! bits, so 106 is DSCP 26 with ECT(0)), `NCCL_IB_GID_INDEX` the GID table index
//! (NCCL's environment-variable documentation).

use super::common::{error, numbered, read_at};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig};

/// Does this text look like NCCL settings: an `NCCL_*` assignment, or nothing but
/// assignments and comments?
pub fn recognises(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).peekable();
    if lines.peek().is_none() {
        return false;
    }
    let mut all_assignments = true;
    for line in lines {
        match assignment(line) {
            Some((key, _)) if key.starts_with("NCCL_") => return true,
            Some(_) => {}
            None => all_assignments = false,
        }
    }
    all_assignments
}

/// Does this line begin NCCL settings (an assignment, or a comment: no tool prints `#`
/// lines)?
pub(super) fn starts(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('#') || assignment(line).is_some()
}

/// Reads the `NCCL_*` assignments into `config`: `nccl_tc`, `nccl_gid_index` and
/// `nccl_other`; a later assignment of a key replaces an earlier one, as in a shell.
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
        let Some((key, raw_value)) = assignment(line.trim()) else {
            continue;
        };
        if !key.starts_with("NCCL_") {
            continue;
        }
        let value = unquote(raw_value)
            .ok_or_else(|| error(file, line_number, format!("{key}: unterminated quote in `{raw_value}`")))?;
        read_setting(file, line_number, key, value, config)?;
    }
    Ok(())
}

/// Puts one `NCCL_*` setting where it belongs.
fn read_setting(
    file: &str,
    line_number: usize,
    key: &str,
    value: &str,
    config: &mut DeviceConfig,
) -> Result<(), ConfigError> {
    match key {
        "NCCL_IB_TC" => {
            let tc = parse_number(value).and_then(|number| u8::try_from(number).ok()).ok_or_else(|| {
                error(file, line_number, format!("NCCL_IB_TC must be a number 0..=255, not `{value}`"))
            })?;
            config.nccl_tc = Some(read_at(tc, file, line_number));
        }
        // NCCL takes -1 (its default in recent releases) as "choose the GID itself": there is
        // no index to record, so it is kept as written among the other settings.
        "NCCL_IB_GID_INDEX" if value == "-1" => {
            config.nccl_gid_index = None;
            config.nccl_other.insert(key.to_string(), read_at(value.to_string(), file, line_number));
        }
        "NCCL_IB_GID_INDEX" => {
            let index = parse_number(value).and_then(|number| u32::try_from(number).ok()).ok_or_else(|| {
                error(file, line_number, format!("NCCL_IB_GID_INDEX must be a GID index (or -1), not `{value}`"))
            })?;
            config.nccl_gid_index = Some(read_at(index, file, line_number));
        }
        _ => {
            config.nccl_other.insert(key.to_string(), read_at(value.to_string(), file, line_number));
        }
    }
    Ok(())
}

/// `KEY=VALUE`, `export KEY=VALUE` or `declare -x KEY="VALUE"`: the key and the raw value.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let line =
        line.strip_prefix("export ").or_else(|| line.strip_prefix("declare -x ")).map(str::trim_start).unwrap_or(line);
    let (key, value) = line.split_once('=')?;
    let mut bytes = key.bytes();
    let first = bytes.next()?;
    let is_name = (first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
    is_name.then_some((key, value))
}

/// The value without its quotes or a trailing ` # comment`; `None` for an unterminated
/// quote.
fn unquote(raw: &str) -> Option<&str> {
    let raw = raw.trim();
    for quote in ['"', '\''] {
        if let Some(rest) = raw.strip_prefix(quote) {
            let (value, _after) = rest.split_once(quote)?;
            return Some(value);
        }
    }
    // In a shell, `#` starts a comment only after whitespace.
    let value = match raw.split_once([' ', '\t']) {
        Some((value, after)) if after.trim_start().starts_with('#') => value,
        _ => raw,
    };
    Some(value.trim())
}

/// A decimal or `0x` hexadecimal number.
fn parse_number(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok();
    }
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::super::samples::NCCL_PROFILE;
    use super::*;

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        super::super::samples::read_with(read, "nccl.sh", text)
    }

    #[test]
    fn reads_a_profile_script() {
        let config = read_text(NCCL_PROFILE).unwrap();
        let tc = config.nccl_tc.unwrap();
        assert_eq!((tc.value, tc.at.line, tc.at.file.as_str()), (106, 3, "nccl.sh"));
        let gid = config.nccl_gid_index.unwrap();
        assert_eq!((gid.value, gid.at.line), (3, 4));
        let other: Vec<(&str, &str, usize)> =
            config.nccl_other.iter().map(|(key, value)| (key.as_str(), value.value.as_str(), value.at.line)).collect();
        assert_eq!(other, [("NCCL_IB_HCA", "mlx5_0:1,mlx5_1:1", 5), ("NCCL_SOCKET_IFNAME", "ens1f0np0", 6),]);
    }

    #[test]
    fn reads_an_env_dump_and_declare_lines() {
        let text = "SHELL=/bin/bash\n\
            BASH_FUNC_module%%=() {  eval `/usr/bin/modulecmd bash $*`\n\
            }\n\
            NCCL_IB_GID_INDEX=5\n\
            declare -x NCCL_IB_TC=\"0x6a\"\n\
            NCCL_DEBUG=INFO\n\
            NCCL_IB_TC=104\n";
        let config = read_text(text).unwrap();
        // The later assignment wins, as in a shell.
        let tc = config.nccl_tc.unwrap();
        assert_eq!((tc.value, tc.at.line), (104, 7));
        assert_eq!(config.nccl_gid_index.unwrap().value, 5);
        assert_eq!(config.nccl_other["NCCL_DEBUG"].value, "INFO");
        assert_eq!(config.nccl_other["NCCL_DEBUG"].at.line, 6);
        assert_eq!(config.nccl_other.len(), 1);
        let hex = read_text("declare -x NCCL_IB_TC=\"0x6a\"\n").unwrap();
        assert_eq!(hex.nccl_tc.unwrap().value, 106);
    }

    #[test]
    fn comments_and_quotes() {
        let text = "# export NCCL_IB_TC=96\nexport NCCL_IB_TC='106' # DSCP 26\n";
        let tc = read_text(text).unwrap().nccl_tc.unwrap();
        assert_eq!((tc.value, tc.at.line), (106, 2));
    }

    #[test]
    fn gid_index_minus_one_is_automatic() {
        let config = read_text("NCCL_IB_GID_INDEX=-1\n").unwrap();
        assert!(config.nccl_gid_index.is_none());
        assert_eq!(config.nccl_other["NCCL_IB_GID_INDEX"].value, "-1");
    }

    #[test]
    fn malformed_known_values_are_errors_at_their_line() {
        let cases = [
            ("PATH=/bin\nNCCL_IB_TC=abc\n", 2, "abc"),
            ("NCCL_IB_TC=256\n", 1, "256"),
            ("\n\nexport NCCL_IB_TC=\n", 3, "0..=255"),
            ("NCCL_IB_GID_INDEX=three\n", 1, "three"),
            ("NCCL_IB_GID_INDEX=-2\n", 1, "-2"),
            ("x=1\nNCCL_IB_HCA=\"mlx5_0\n", 2, "quote"),
        ];
        for (text, line, word) in cases {
            let error = read_text(text).unwrap_err();
            assert_eq!((error.file.as_str(), error.line), ("nccl.sh", line), "{text}");
            assert!(error.message.contains(word), "{}", error.message);
        }
    }

    #[test]
    fn recognises_settings() {
        assert!(recognises(NCCL_PROFILE));
        assert!(recognises("# no NCCL here\nHOME=/root\nUSER=root\n"));
        assert!(!recognises("n_gids_found=4\nDEV PORT\n"));
        assert!(!recognises("# only a comment\n"));
        assert!(!recognises(""));
    }
}
