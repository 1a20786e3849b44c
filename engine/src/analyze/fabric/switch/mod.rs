//! Readers of a switch's QoS configuration: its configuration files as the switch shows them.
//! SONiC's `config_db.json` ([`sonic`]), NVIDIA Cumulus Linux's `nv config show -o yaml`
//! ([`nvue`]) and Arista EOS's `show running-config` ([`eos`]), each into a [`DeviceConfig`].

pub mod eos;
mod json;
pub mod nvue;
pub mod sonic;
mod tree;
mod yaml;

use crate::analyze::fabric::model::{ConfigError, DeviceConfig};

/// The switch configuration formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchFormat {
    /// SONiC's `config_db.json`.
    SonicConfigDb,
    /// NVIDIA Cumulus Linux's `nv config show -o yaml`.
    CumulusNvue,
    /// Arista EOS's `show running-config`.
    AristaEos,
}

impl SwitchFormat {
    /// The formats read, in the order [`recognise`] tries them.
    pub const ALL: [SwitchFormat; 3] =
        [SwitchFormat::SonicConfigDb, SwitchFormat::CumulusNvue, SwitchFormat::AristaEos];

    /// What the format is, as the switch shows it.
    pub fn name(self) -> &'static str {
        match self {
            SwitchFormat::SonicConfigDb => "SONiC's config_db.json",
            SwitchFormat::CumulusNvue => "NVIDIA Cumulus Linux's `nv config show -o yaml`",
            SwitchFormat::AristaEos => "Arista EOS's `show running-config`",
        }
    }

    /// A short identifier of the format, as reports name it.
    pub fn id(self) -> &'static str {
        match self {
            SwitchFormat::SonicConfigDb => "sonic_config_db",
            SwitchFormat::CumulusNvue => "cumulus_nvue",
            SwitchFormat::AristaEos => "arista_eos",
        }
    }
}

/// The format `text` looks like, without parsing it (a file with a syntax error is still
/// recognised, so that reading it names the error).
pub fn recognise(text: &str) -> Option<SwitchFormat> {
    if sonic::recognises(text) {
        Some(SwitchFormat::SonicConfigDb)
    } else if nvue::recognises(text) {
        Some(SwitchFormat::CumulusNvue)
    } else if eos::recognises(text) {
        Some(SwitchFormat::AristaEos)
    } else {
        None
    }
}

/// Reads a switch's configuration `text` (of `file`, as named in errors and `At`s) into
/// `config`, in the format it is recognised as; returns that format.
pub fn read(file: &str, text: &str, config: &mut DeviceConfig) -> Result<SwitchFormat, ConfigError> {
    let format = recognise(text).ok_or_else(|| {
        let names: Vec<&str> = SwitchFormat::ALL.iter().map(|format| format.name()).collect();
        ConfigError {
            file: file.to_string(),
            line: 1,
            message: format!("not a switch configuration read here: expected one of {}", names.join(", ")),
        }
    })?;
    match format {
        SwitchFormat::SonicConfigDb => sonic::read(file, text, config)?,
        SwitchFormat::CumulusNvue => nvue::read(file, text, config)?,
        SwitchFormat::AristaEos => eos::read(file, text, config)?,
    }
    Ok(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SONIC: &str = include_str!("testdata/sonic_roce.json");
    const SONIC_AZURE: &str = include_str!("testdata/sonic_azure.json");
    const NVUE: &str = include_str!("testdata/nvue_roce_explicit.yaml");
    const NVUE_DEFAULTS: &str = include_str!("testdata/nvue_roce_defaults.yaml");
    const EOS: &str = include_str!("testdata/eos_roce.txt");

    #[test]
    fn recognises_each_format() {
        assert_eq!(recognise(SONIC), Some(SwitchFormat::SonicConfigDb));
        assert_eq!(recognise(NVUE), Some(SwitchFormat::CumulusNvue));
        assert_eq!(recognise(EOS), Some(SwitchFormat::AristaEos));
        assert_eq!(recognise("{\"anything\": 1}"), None);
        assert_eq!(recognise(""), None);
    }

    #[test]
    fn dispatches_to_the_recognised_reader() {
        for (text, format, dscp_26_line) in [
            (SONIC, SwitchFormat::SonicConfigDb, 13),
            (NVUE, SwitchFormat::CumulusNvue, 26),
            (EOS, SwitchFormat::AristaEos, 14),
        ] {
            let mut config = DeviceConfig::default();
            assert_eq!(read("f", text, &mut config), Ok(format));
            let dscp_26 = config.dscp_to_priority.get(&26).unwrap();
            assert_eq!((dscp_26.value, dscp_26.at.line), (3, dscp_26_line), "{format:?}");
            assert_eq!(config.pfc_priorities.map(|read| read.value), Some(vec![3]), "{format:?}");
        }
    }

    #[test]
    fn an_unrecognised_text_names_the_formats_read() {
        let err = read("show-tech.txt", "Uptime: 3 days\n", &mut DeviceConfig::default()).unwrap_err();
        assert_eq!((err.file.as_str(), err.line), ("show-tech.txt", 1));
        for name in ["config_db.json", "nv config show -o yaml", "show running-config"] {
            assert!(err.message.contains(name), "{}", err.message);
        }
    }

    #[test]
    fn syntax_errors_are_at_their_line() {
        let json = SONIC.replacen("\"ROCE\": {", "\"ROCE\" {", 1);
        let err = read("c.json", &json, &mut DeviceConfig::default()).unwrap_err();
        assert_eq!(err.line, 10, "{err}");
        let yaml = NVUE.replace("      hostname: leaf2", "      hostname: [leaf2");
        let err = read("nv.yaml", &yaml, &mut DeviceConfig::default()).unwrap_err();
        // An unclosed `[` is found where the text ends: the line after the last.
        assert_eq!(err.line, 55, "{err}");
        assert!(err.message.contains("YAML"), "{err}");
    }

    /// Every prefix of every sample, and each with a byte flipped, reads or fails without panic.
    #[test]
    fn never_panics_on_cut_or_damaged_input() {
        for sample in [SONIC, SONIC_AZURE, NVUE, NVUE_DEFAULTS, EOS] {
            for end in (0..=sample.len()).filter(|end| sample.is_char_boundary(*end)) {
                let _ = read("f", &sample[..end], &mut DeviceConfig::default());
            }
            for (index, _) in sample.char_indices().step_by(7) {
                for replacement in ["{", "]", ":", "\"", "\n", "-", "9", "&a", "*a"] {
                    let mut damaged = sample.to_string();
                    damaged.replace_range(index..index + 1, replacement);
                    let _ = read("f", &damaged, &mut DeviceConfig::default());
                }
            }
        }
    }

    proptest::proptest! {
        /// Any text, and text made of the formats' own punctuation, reads or fails: no panic.
        #[test]
        fn never_panics_on_any_text(text in "(\\PC|\n){0,200}", syntax in "[-{}\\[\\]:,\" a-z0-9\n!#&*|>?]{0,300}") {
            let _ = read("f", &text, &mut DeviceConfig::default());
            for prefix in ["{", "- set:\n", "!\ninterface Ethernet1\n"] {
                let _ = read("f", &format!("{prefix}{syntax}"), &mut DeviceConfig::default());
            }
        }
    }
}
