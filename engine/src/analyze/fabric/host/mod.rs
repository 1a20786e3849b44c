//! Readers of a host's QoS configuration: what the host's tools print.
//!
//! One module per format, each with `read` (fill a [`DeviceConfig`]) and `recognises`
//! (does a text look like it). [`read`] takes a file holding one format, or several tools'
//! outputs pasted one after another: it cuts the text where one output ends and the next
//! begins (see [`split`]) and reads each part with its reader.

mod common;
pub mod ip_link;
pub mod mlnx_qos;
pub mod mlxconfig;
pub mod nccl_env;
#[cfg(test)]
mod samples;
pub mod show_gids;
pub mod sysfs_ecn;

use crate::analyze::fabric::model::{ConfigError, DeviceConfig};

/// The formats the host readers take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostFormat {
    /// `mlnx_qos -i IF`.
    MlnxQos,
    /// `show_gids`.
    ShowGids,
    /// NCCL's `KEY=VALUE` settings (`env`, `export`, a profile script).
    NcclEnv,
    /// `mlxconfig -d DEV query`.
    Mlxconfig,
    /// `grep . /sys/class/net/IF/ecn/*/*`.
    SysfsEcn,
    /// `ip link show IF`.
    IpLink,
}

/// The formats in the order [`recognise`] tries them: the tools' own markers first, NCCL's
/// loose `KEY=VALUE` lines last.
pub const RECOGNITION_ORDER: [HostFormat; 6] = [
    HostFormat::MlnxQos,
    HostFormat::ShowGids,
    HostFormat::Mlxconfig,
    HostFormat::IpLink,
    HostFormat::SysfsEcn,
    HostFormat::NcclEnv,
];

impl HostFormat {
    /// What the format is, as its tool is run.
    pub fn name(self) -> &'static str {
        match self {
            HostFormat::MlnxQos => "`mlnx_qos -i IF`",
            HostFormat::ShowGids => "`show_gids`",
            HostFormat::NcclEnv => "NCCL `KEY=VALUE` settings",
            HostFormat::Mlxconfig => "`mlxconfig -d DEV query`",
            HostFormat::SysfsEcn => "`grep . /sys/class/net/IF/ecn/*/*`",
            HostFormat::IpLink => "`ip link show IF`",
        }
    }

    /// A short identifier of the format, as reports name it (`mlnx_qos`, `show_gids`, ...).
    pub fn id(self) -> &'static str {
        match self {
            HostFormat::MlnxQos => "mlnx_qos",
            HostFormat::ShowGids => "show_gids",
            HostFormat::NcclEnv => "nccl_env",
            HostFormat::Mlxconfig => "mlxconfig",
            HostFormat::SysfsEcn => "sysfs_ecn",
            HostFormat::IpLink => "ip_link",
        }
    }

    /// Does this text look like this format?
    pub fn recognises(self, text: &str) -> bool {
        match self {
            HostFormat::MlnxQos => mlnx_qos::recognises(text),
            HostFormat::ShowGids => show_gids::recognises(text),
            HostFormat::NcclEnv => nccl_env::recognises(text),
            HostFormat::Mlxconfig => mlxconfig::recognises(text),
            HostFormat::SysfsEcn => sysfs_ecn::recognises(text),
            HostFormat::IpLink => ip_link::recognises(text),
        }
    }

    /// Does this line begin an output of this format?
    fn starts(self, line: &str) -> bool {
        match self {
            HostFormat::MlnxQos => mlnx_qos::starts(line),
            HostFormat::ShowGids => show_gids::starts(line),
            HostFormat::NcclEnv => nccl_env::starts(line),
            HostFormat::Mlxconfig => mlxconfig::starts(line),
            HostFormat::SysfsEcn => sysfs_ecn::starts(line),
            HostFormat::IpLink => ip_link::starts(line),
        }
    }

    /// Could this line go on an output of this format? (NCCL settings go on until another
    /// tool's output begins.)
    fn continues(self, line: &str) -> bool {
        match self {
            HostFormat::MlnxQos => mlnx_qos::continues(line),
            HostFormat::ShowGids => show_gids::continues(line),
            HostFormat::NcclEnv => false,
            HostFormat::Mlxconfig => mlxconfig::continues(line),
            HostFormat::SysfsEcn => sysfs_ecn::continues(line),
            HostFormat::IpLink => ip_link::continues(line),
        }
    }

    /// Reads a part of a file, its first line being line `first_line`.
    fn read_from(
        self,
        file: &str,
        text: &str,
        first_line: usize,
        config: &mut DeviceConfig,
    ) -> Result<(), ConfigError> {
        match self {
            HostFormat::MlnxQos => mlnx_qos::read_from(file, text, first_line, config),
            HostFormat::ShowGids => show_gids::read_from(file, text, first_line, config),
            HostFormat::NcclEnv => nccl_env::read_from(file, text, first_line, config),
            HostFormat::Mlxconfig => mlxconfig::read_from(file, text, first_line, config),
            HostFormat::SysfsEcn => sysfs_ecn::read_from(file, text, first_line, config),
            HostFormat::IpLink => ip_link::read_from(file, text, first_line, config),
        }
    }
}

/// The first format that recognises the text, if any.
pub fn recognise(text: &str) -> Option<HostFormat> {
    RECOGNITION_ORDER.into_iter().find(|format| format.recognises(text))
}

/// Reads a host's file into `config`, whatever host format it holds, or several of them
/// pasted one after another; returns the format of the (first) output read. A text, or a
/// part of it, that is no host format is an error at its first line naming the formats taken.
pub fn read(file: &str, text: &str, config: &mut DeviceConfig) -> Result<HostFormat, ConfigError> {
    let parts = split(text);
    let mut first_format = None;
    for part in &parts {
        let Some(format) = part.format else {
            return Err(unrecognised(file, part.first_line));
        };
        let part_text = text.get(part.start..part.end).unwrap_or("");
        format.read_from(file, part_text, part.first_line, config)?;
        first_format.get_or_insert(format);
    }
    first_format.ok_or_else(|| unrecognised(file, 1))
}

fn unrecognised(file: &str, line: usize) -> ConfigError {
    let names: Vec<&str> = RECOGNITION_ORDER.iter().map(|format| format.name()).collect();
    common::error(file, line, format!("not a host format this reads (one of {})", names.join(", ")))
}

/// One tool's output in a text: its format (`None`: no format begins there), its bytes and
/// its first line's number.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    format: Option<HostFormat>,
    start: usize,
    end: usize,
    first_line: usize,
}

/// Cuts a text into its tools' outputs. A line goes on the current output where that
/// format allows it (`continues`); otherwise a line that begins a format (`starts`: a tool's
/// first line, an `N: IF: <...>` line, an ECN sysfs line, an assignment) begins a new part; a
/// shell prompt running a command (`$ mlnx_qos -i ens1f0np0`) ends the current part and is
/// read by no one; other lines stay with the current part. Blank lines never begin a part.
fn split(text: &str) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    let mut current: Option<Part> = None;
    let mut offset = 0;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let line_number = index + 1;
        let (start, end) = (offset, offset + raw.len());
        offset = end;
        let line = raw.trim_end_matches(['\n', '\r']);
        if is_command_echo(line) {
            parts.extend(current.take());
            continue;
        }
        let current_format = current.as_ref().and_then(|part| part.format);
        let goes_on = line.trim().is_empty() || current_format.is_some_and(|format| format.continues(line));
        let begins = if goes_on { None } else { starting_format(line) };
        match (&mut current, begins) {
            (Some(part), None) => part.end = end,
            (Some(part), Some(format)) if part.format == Some(format) => part.end = end,
            (slot, begins) => {
                if begins.is_none() && line.trim().is_empty() {
                    continue;
                }
                parts.extend(slot.take());
                *slot = Some(Part { format: begins, start, end, first_line: line_number });
            }
        }
    }
    parts.extend(current);
    parts
}

/// The format a line begins, if any (the tools' markers before NCCL's assignments).
fn starting_format(line: &str) -> Option<HostFormat> {
    RECOGNITION_ORDER.into_iter().find(|format| format.starts(line))
}

/// The commands whose echo (after a shell prompt) separates pasted outputs.
const COMMANDS: [&str; 10] =
    ["mlnx_qos", "show_gids", "mlxconfig", "ip", "grep", "cat", "env", "printenv", "sudo", "sh"];

/// A shell prompt and a command, as pasted above a tool's output: `$ show_gids`,
/// `# mlnx_qos -i eth2`, `root@node1:~# ip link show ens1f0np0`, `[root@n1 ~]$ env`.
fn is_command_echo(line: &str) -> bool {
    let line = line.trim();
    let Some(split_at) = line.find(['$', '#']) else {
        return false;
    };
    let (prompt, rest) = line.split_at(split_at);
    let prompt_looks_right =
        prompt.is_empty() || (!prompt.contains('=') && (prompt.contains('@') || prompt.ends_with([']', '~', ' '])));
    let command = rest.get(1..).unwrap_or("");
    if !prompt_looks_right || !command.starts_with(' ') {
        return false;
    }
    let first_word = command.split_whitespace().next().unwrap_or("");
    let program = first_word.rsplit('/').next().unwrap_or(first_word);
    COMMANDS.contains(&program)
}

#[cfg(test)]
mod tests {
    use super::samples::{
        IP_LINK_DETAILS, MLNX_QOS_ROCE, MLXCONFIG_ROCE, NCCL_PROFILE, SHOW_GIDS_ROCE, SYSFS_ECN_ROCE, all,
    };
    use super::*;
    use crate::analyze::fabric::model::Trust;

    const ALL_FORMATS: [HostFormat; 6] = RECOGNITION_ORDER;

    #[test]
    fn each_sample_is_recognised_as_its_own_format_and_no_other() {
        for (format, sample) in all() {
            assert_eq!(recognise(sample), Some(format), "{sample}");
            for other in ALL_FORMATS.into_iter().filter(|other| *other != format) {
                assert!(!other.recognises(sample), "{other:?} took {sample}");
            }
        }
    }

    #[test]
    fn each_sample_reads_whole_as_its_format() {
        for (format, sample) in all() {
            let mut config = DeviceConfig::default();
            assert_eq!(read("f", sample, &mut config), Ok(format), "{sample}");
            assert_ne!(config, DeviceConfig::default(), "{sample}");
        }
    }

    #[test]
    fn an_unrecognised_text_is_an_error_at_line_1_naming_the_formats() {
        for text in ["", "\n\n", "hello world\n"] {
            let mut config = DeviceConfig::default();
            let error = read("notes.txt", text, &mut config).unwrap_err();
            assert_eq!((error.file.as_str(), error.line), ("notes.txt", 1));
            for format in ALL_FORMATS {
                assert!(error.message.contains(format.name()), "{}", error.message);
            }
        }
    }

    /// The samples pasted one after another, with no separator.
    fn pasted() -> String {
        [MLNX_QOS_ROCE, SHOW_GIDS_ROCE, NCCL_PROFILE, MLXCONFIG_ROCE, SYSFS_ECN_ROCE, IP_LINK_DETAILS].concat()
    }

    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|line| line.contains(needle)).unwrap() + 1
    }

    fn assert_reads_everything(text: &str, config: &DeviceConfig) {
        assert_eq!(config.trust.as_ref().unwrap().value, Trust::Dscp);
        let trust_line = line_of(text, "Priority trust state: dscp");
        assert_eq!(config.trust.as_ref().unwrap().at.line, trust_line);
        assert_eq!(config.dscp_to_priority[&26].value, 3);
        assert_eq!(config.dscp_to_priority[&26].at.line, line_of(text, "prio:3 dscp:"));
        let pfc = config.pfc_priorities.as_ref().unwrap();
        assert_eq!((pfc.value.clone(), pfc.at.line), (vec![3], line_of(text, "enabled ")));
        assert_eq!(config.gids.len(), 4);
        assert_eq!(config.gids[3].at.line, line_of(text, "mlx5_0\t1\t3\t"));
        let tc = config.nccl_tc.as_ref().unwrap();
        assert_eq!((tc.value, tc.at.line), (106, line_of(text, "NCCL_IB_TC=106")));
        assert_eq!(config.nccl_gid_index.as_ref().unwrap().value, 3);
        // The sysfs listing comes after mlxconfig: its values are the ones kept.
        let dscp = config.cnp_dscp.as_ref().unwrap();
        assert_eq!((dscp.value, dscp.at.line), (48, line_of(text, "roce_np/cnp_dscp:48")));
        let priority = config.cnp_priority.as_ref().unwrap();
        assert_eq!(priority.at.line, line_of(text, "cnp_802p_prio:6"));
        assert!(config.notification_point[&3].value);
        assert_eq!(config.reaction_point[&3].at.line, line_of(text, "roce_rp/enable/3"));
        let mtu = config.mtu.as_ref().unwrap();
        assert_eq!((mtu.value, mtu.at.line), (9000, line_of(text, "mtu 9000")));
        assert!(config.sections.is_empty(), "{:?}", config.sections);
    }

    #[test]
    fn reads_outputs_pasted_one_after_another() {
        let text = pasted();
        let parts = split(&text);
        let formats: Vec<Option<HostFormat>> = parts.iter().map(|part| part.format).collect();
        use HostFormat::*;
        assert_eq!(formats, [MlnxQos, ShowGids, NcclEnv, Mlxconfig, SysfsEcn, IpLink].map(Some));
        let mut config = DeviceConfig::default();
        assert_eq!(read("host.txt", &text, &mut config), Ok(MlnxQos));
        assert_reads_everything(&text, &config);
    }

    #[test]
    fn reads_outputs_pasted_under_their_commands() {
        let text = [
            "root@node1:~# mlnx_qos -i ens1f0np0\n",
            MLNX_QOS_ROCE,
            "root@node1:~# show_gids mlx5_0\n",
            SHOW_GIDS_ROCE,
            "[root@node1 ~]$ cat /etc/profile.d/nccl.sh\n",
            NCCL_PROFILE,
            "$ sudo mlxconfig -d /dev/mst/mt4125_pciconf0 query\n",
            MLXCONFIG_ROCE,
            "\n# grep . /sys/class/net/ens1f0np0/ecn/*/* 2>&1\n",
            SYSFS_ECN_ROCE,
            "$ ip -d link show ens1f0np0\n",
            IP_LINK_DETAILS,
        ]
        .concat();
        assert_eq!(split(&text).len(), 6);
        let mut config = DeviceConfig::default();
        assert_eq!(read("host.txt", &text, &mut config), Ok(HostFormat::MlnxQos));
        assert_reads_everything(&text, &config);
    }

    #[test]
    fn an_error_in_a_later_part_keeps_its_line_in_the_file() {
        let text = format!("{MLNX_QOS_ROCE}{SHOW_GIDS_ROCE}export NCCL_IB_TC=abc\n");
        let mut config = DeviceConfig::default();
        let error = read("host.txt", &text, &mut config).unwrap_err();
        assert_eq!(error.line, line_of(&text, "NCCL_IB_TC=abc"));
        let text = format!("{SHOW_GIDS_ROCE}\nsome words\n");
        let error = read("host.txt", &text, &mut DeviceConfig::default()).unwrap_err();
        assert_eq!(error.line, line_of(&text, "some words"));
    }

    #[test]
    fn an_unknown_part_is_an_error_at_its_first_line() {
        let text = format!("$ uname -a\nLinux node1 6.8.0\n{IP_LINK_DETAILS}");
        let error = read("host.txt", &text, &mut DeviceConfig::default()).unwrap_err();
        assert_eq!(error.line, 1);
        // After a command's echo, output that is no format is a part of its own.
        let text = format!("{IP_LINK_DETAILS}$ cat /proc/loadavg\n0.00 0.01 0.05 1/123 4567\n");
        let parts = split(&text);
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[1].format, parts[1].first_line), (None, 4));
        let error = read("host.txt", &text, &mut DeviceConfig::default()).unwrap_err();
        assert_eq!(error.line, 4);
        // Lines no format begins stay with the part before (its reader judges them).
        let text = format!("{IP_LINK_DETAILS}$ uptime\n");
        assert_eq!(split(&text).len(), 1);
    }

    #[test]
    fn command_echoes() {
        for line in [
            "$ show_gids",
            "# mlnx_qos -i eth2",
            "root@node1:~# ip link show ens1f0np0",
            "[root@n1 ~]$ env",
            "user@h:~$ sudo /usr/bin/mlxconfig -d mlx5_0 q",
        ] {
            assert!(is_command_echo(line), "{line}");
        }
        for line in
            ["# NCCL over RoCE", "#!/bin/sh", "export NCCL_IB_TC=106 # $ env", "NCCL_IB_HCA=a#b", "prio:3 dscp:26,"]
        {
            assert!(!is_command_echo(line), "{line}");
        }
    }
}

#[cfg(test)]
mod robustness {
    use super::samples::all;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// No text makes a reader panic.
        #[test]
        fn any_text_reads_without_panic(text in "\\PC{0,400}") {
            let _ = read("f", &text, &mut DeviceConfig::default());
        }

        /// Nor does a sample cut, or spliced with another, anywhere.
        #[test]
        fn cut_and_spliced_samples_read_without_panic(
            first in 0usize..10,
            second in 0usize..10,
            cut in 0usize..2000,
            keep in 0usize..2000,
        ) {
            let samples = all();
            let (_, a) = samples[first % samples.len()];
            let (_, b) = samples[second % samples.len()];
            let a: String = a.chars().take(cut).collect();
            let b: String = b.chars().skip(keep % (b.len() + 1)).collect();
            let text = format!("{a}{b}");
            let _ = read("f", &text, &mut DeviceConfig::default());
            for format in RECOGNITION_ORDER {
                let _ = format.read_from("f", &text, 1, &mut DeviceConfig::default());
            }
        }
    }
}
