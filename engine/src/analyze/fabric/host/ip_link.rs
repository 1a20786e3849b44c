//! `ip link show IF` (and `ip -d link show`): the interface's MTU.
//!
//! iproute2 prints each interface as a line
//! `2: ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP ...` followed
//! by indented lines (`link/ether ...`; with `-d`, `... minmtu 68 maxmtu 9978 ...`, which are
//! not the MTU). Given several interfaces (`ip link show` with no name), the first one that is
//! not a loopback is read.

use super::common::{decimal, error, numbered, read_at};
use crate::analyze::fabric::model::{ConfigError, DeviceConfig};

/// Does this text look like `ip link show` output?
pub fn recognises(text: &str) -> bool {
    text.lines().any(|line| interface_line(line).is_some())
}

/// Does this line begin an `ip link` output (an interface line)?
pub(super) fn starts(line: &str) -> bool {
    interface_line(line).is_some()
}

/// Could this line be part of an `ip link` output?
pub(super) fn continues(line: &str) -> bool {
    line.trim().is_empty() || line.starts_with([' ', '\t']) || starts(line)
}

/// An interface line's flags and the words after them: `N: NAME: <FLAGS> ...`.
fn interface_line(line: &str) -> Option<(&str, Vec<&str>)> {
    let mut words = line.split_whitespace();
    let index = words.next()?.strip_suffix(':')?;
    decimal(index)?;
    words.next()?.strip_suffix(':')?;
    let flags = words.next()?.strip_prefix('<')?.strip_suffix('>')?;
    Some((flags, words.collect()))
}

/// Reads `ip link show` output into `config.mtu`.
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
    let mut found_interface = false;
    for (line_number, line) in numbered(text, first_line) {
        let Some((flags, rest)) = interface_line(line) else {
            continue;
        };
        found_interface = true;
        if flags.split(',').any(|flag| flag == "LOOPBACK") {
            continue;
        }
        let mtu = rest
            .iter()
            .position(|word| *word == "mtu")
            .and_then(|position| rest.get(position + 1))
            .and_then(|mtu| decimal(mtu))
            .ok_or_else(|| error(file, line_number, "the interface line has no `mtu N`"))?;
        config.mtu = Some(read_at(mtu, file, line_number));
        return Ok(());
    }
    if found_interface {
        return Ok(());
    }
    Err(error(file, first_line, "no interface line (`N: IF: <FLAGS> mtu M ...`)"))
}

#[cfg(test)]
mod tests {
    use super::super::samples::IP_LINK_DETAILS;
    use super::*;

    fn read_text(text: &str) -> Result<DeviceConfig, ConfigError> {
        super::super::samples::read_with(read, "link.txt", text)
    }

    #[test]
    fn reads_the_mtu_not_maxmtu() {
        let mtu = read_text(IP_LINK_DETAILS).unwrap().mtu.unwrap();
        assert_eq!((mtu.value, mtu.at.line, mtu.at.file.as_str()), (9000, 1, "link.txt"));
    }

    #[test]
    fn skips_the_loopback_of_a_full_listing() {
        let text = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n\
            \x20   link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n\
            5: ens1f0np0.100@ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 4200 qdisc noqueue state UP\n\
            6: ens1f1np1: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN\n";
        let mtu = read_text(text).unwrap().mtu.unwrap();
        assert_eq!((mtu.value, mtu.at.line), (4200, 3));
        let only_lo = read_text("1: lo: <LOOPBACK,UP> mtu 65536 qdisc noqueue\n").unwrap();
        assert!(only_lo.mtu.is_none());
    }

    #[test]
    fn errors() {
        let error = read_text("\n2: eth0: <UP> qdisc mq\n").unwrap_err();
        assert_eq!(error.line, 2);
        let error = read_text("2: eth0: <UP> mtu big\n").unwrap_err();
        assert_eq!(error.line, 1);
        let error = read_text("Device \"eth9\" does not exist.\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(error.message.contains("no interface line"));
    }

    #[test]
    fn recognises_interface_lines() {
        assert!(recognises(IP_LINK_DETAILS));
        assert!(!recognises("2: eth0 mtu 9000\n"));
        assert!(!recognises("mtu 9000\n"));
    }
}
