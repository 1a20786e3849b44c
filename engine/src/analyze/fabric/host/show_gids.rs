//! `show_gids`: the RDMA devices' GID tables.
//!
//! As mlnx-tools' `sbin/show_gids` prints them: a tab-separated header
//! `DEV PORT INDEX GID IPv4 VER DEV`, a line of dashes, one row per non-zero GID
//! (`mlx5_0    1    3    0000:0000:0000:0000:0000:ffff:0a00:0001    10.0.0.1      v2    ens1f0np0`),
//! then `n_gids_found=N`. The IPv4 column is printed only for GIDs whose first group is
//! `0000` (IPv4-mapped); other rows leave it empty (two tabs). `VER` is `v1`/`v2` cut from
//! the GID type (`IB/RoCE v1`, `RoCE v2`), and the last `DEV` is the netdev, empty for
//! an InfiniBand port. Rows are split on whitespace, so a paste that turned tabs into spaces
//! reads the same.

use std::net::Ipv4Addr;

use super::common::{at, error, numbered};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig, GidEntry};

/// The header's words.
const HEADER: [&str; 7] = ["DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "DEV"];

/// Does this text look like `show_gids` output?
pub fn recognises(text: &str) -> bool {
    text.lines().any(is_header)
}

/// Does this line begin a `show_gids` output (its header)?
pub(super) fn starts(line: &str) -> bool {
    is_header(line)
}

/// Could this line be part of a `show_gids` output?
pub(super) fn continues(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        [] => true,
        [only] if only.starts_with("n_gids_found=") => true,
        [device, port, index, ..] => {
            words.iter().all(|word| word.bytes().all(|byte| byte == b'-'))
                || (!device.is_empty()
                    && port.bytes().all(|byte| byte.is_ascii_digit())
                    && index.bytes().all(|byte| byte.is_ascii_digit()))
        }
        _ => words.iter().all(|word| word.bytes().all(|byte| byte == b'-')),
    }
}

fn is_header(line: &str) -> bool {
    line.split_whitespace().eq(HEADER)
}

/// Reads `show_gids` output into `config.gids`, one entry a row, in the order printed.
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
        let words: Vec<&str> = line.split_whitespace().collect();
        let is_dashes = words.iter().all(|word| word.bytes().all(|byte| byte == b'-'));
        let is_count = words.len() == 1 && line.trim().starts_with("n_gids_found=");
        if is_dashes || is_count || is_header(line) {
            continue;
        }
        let entry = read_row(file, line_number, &words)?;
        config.gids.push(entry);
    }
    Ok(())
}

/// One row: `DEV PORT INDEX GID [IPv4] [VER] [NETDEV]`.
fn read_row(file: &str, line_number: usize, words: &[&str]) -> Result<GidEntry, ConfigError> {
    let malformed = |what: &str| error(file, line_number, format!("malformed show_gids row: {what}"));
    let [device, port, index, gid, rest @ ..] = words else {
        return Err(malformed("expected DEV PORT INDEX GID [IPv4] VER [DEV]"));
    };
    let port = port.parse::<u32>().map_err(|_| malformed(&format!("port `{port}` is not a number")))?;
    let index = index.parse::<u32>().map_err(|_| malformed(&format!("index `{index}` is not a number")))?;
    if !is_gid(gid) {
        return Err(malformed(&format!("`{gid}` is not a GID (eight groups of four hex digits)")));
    }
    let (address, rest) = match rest {
        [first, tail @ ..] if first.parse::<Ipv4Addr>().is_ok() => (Some(first.to_string()), tail),
        _ => (None, rest),
    };
    let (version, rest) = match rest {
        [first, tail @ ..] if is_version(first) => (first.to_string(), tail),
        _ => (String::new(), rest),
    };
    let netdev = match rest {
        [] => None,
        [netdev] => Some(netdev.to_string()),
        _ => return Err(malformed("too many columns")),
    };
    Ok(GidEntry {
        device: device.to_string(),
        port,
        index,
        gid: gid.to_string(),
        address,
        version,
        netdev,
        at: at(file, line_number),
    })
}

/// `v1`, `v2` (the script keeps what follows the `v` of the GID type).
fn is_version(word: &str) -> bool {
    let Some(number) = word.strip_prefix(['v', 'V']) else {
        return false;
    };
    !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit())
}

/// Eight groups of four hex digits separated by colons, as sysfs prints a GID.
fn is_gid(text: &str) -> bool {
    let groups: Vec<&str> = text.split(':').collect();
    groups.len() == 8
        && groups.iter().all(|group| group.len() == 4 && group.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::super::samples::{SHOW_GIDS_ROCE, SHOW_GIDS_V1_ONLY};
    use super::*;
    use crate::analyze::fabric::model::At;

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        super::super::samples::read_with(read, "gids.txt", text)
    }

    #[test]
    fn reads_v1_and_v2_gids() {
        let gids = read_text(SHOW_GIDS_ROCE).unwrap().gids;
        assert_eq!(gids.len(), 4);
        assert_eq!(
            gids[3],
            GidEntry {
                device: "mlx5_0".to_string(),
                port: 1,
                index: 3,
                gid: "0000:0000:0000:0000:0000:ffff:0a00:0001".to_string(),
                address: Some("10.0.0.1".to_string()),
                version: "v2".to_string(),
                netdev: Some("ens1f0np0".to_string()),
                at: At { file: "gids.txt".to_string(), line: 6 },
            }
        );
        // A link-local GID has no IPv4 column.
        assert_eq!(gids[1].index, 1);
        assert_eq!(gids[1].address, None);
        assert_eq!(gids[1].version, "v2");
        assert_eq!(gids[1].gid, "fe80:0000:0000:0000:0e42:a1ff:fe5b:2c10");
        assert_eq!(gids[1].at.line, 4);
        let versions: Vec<&str> = gids.iter().map(|gid| gid.version.as_str()).collect();
        assert_eq!(versions, ["v1", "v2", "v1", "v2"]);
    }

    #[test]
    fn reads_a_v1_only_table() {
        let gids = read_text(SHOW_GIDS_V1_ONLY).unwrap().gids;
        assert_eq!(gids.len(), 2);
        assert!(gids.iter().all(|gid| gid.version == "v1"));
        assert_eq!(gids[1].device, "mlx5_1");
        assert_eq!(gids[1].address.as_deref(), Some("10.0.1.2"));
        assert_eq!(gids[1].netdev.as_deref(), Some("ens1f1np1"));
        assert_eq!(gids[1].at.line, 4);
    }

    #[test]
    fn reads_rows_whose_tabs_became_spaces_and_an_ib_port() {
        let text = "DEV     PORT    INDEX   GID     IPv4    VER     DEV\n\
            mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0a00:0001 10.0.0.1    v2  ens1f0np0\n\
            mlx5_2\t1\t0\tfe80:0000:0000:0000:0e42:a103:005b:2c10\t\t\t\t\n";
        let gids = read_text(text).unwrap().gids;
        assert_eq!(gids[0].index, 3);
        assert_eq!(gids[0].netdev.as_deref(), Some("ens1f0np0"));
        assert_eq!(gids[1].version, "");
        assert_eq!(gids[1].netdev, None);
        assert_eq!(gids[1].at.line, 3);
    }

    #[test]
    fn errors_name_their_line() {
        let header = "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n";
        let gid = "0000:0000:0000:0000:0000:ffff:0a00:0001";
        let cases = [
            format!("{header}mlx5_0\tx\t3\t{gid}\t10.0.0.1\tv2\tens1\n"),
            format!("{header}mlx5_0\t1\t-3\t{gid}\t10.0.0.1\tv2\tens1\n"),
            format!("{header}mlx5_0\t1\t3\t0000:ffff:0a00:0001\t10.0.0.1\tv2\tens1\n"),
            format!("{header}mlx5_0\t1\t3\t{gid}\t10.0.0.1\tv2\tens1\textra\n"),
            format!("{header}mlx5_0 1\n"),
        ];
        for text in cases {
            let error = read_text(&text).unwrap_err();
            assert_eq!((error.file.as_str(), error.line), ("gids.txt", 2), "{text}");
        }
    }

    #[test]
    fn recognises_its_header() {
        assert!(recognises(SHOW_GIDS_ROCE));
        assert!(!recognises("mlx5_0\t1\t3\n"));
    }
}
