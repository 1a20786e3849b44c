//! The sample fabrics of `samples/fabric/`, as `(NAME, FILE, text)` triples given to
//! [`read_devices`](super::devices::read_devices), for the tests.
//!
//! - [`NVIDIA`]: NVIDIA's RoCE profile (DSCP 26 → priority 3 lossless with ECN, CNPs at DSCP 48
//!   priority 6, `NCCL_IB_TC=106`, GID index 3): host 10.0.0.1 in one pasted file, host 10.0.0.2
//!   in three, a Cumulus NVUE leaf and an Arista EOS spine.
//! - [`SONIC_DEFAULT`]: SONiC's default QoS (DSCP 3 and 4 lossless on priorities 3 and 4, WRED
//!   `AZURE_LOSSLESS`, CNPs at 48 → 6, `NCCL_IB_TC=12`): two hosts and two SONiC leaves.

/// One sample file: its NAME, its file name and its text.
pub type Sample = (&'static str, &'static str, &'static str);

macro_rules! sample {
    ($name:literal, $dir:literal, $file:literal) => {
        ($name, $file, include_str!(concat!("../../../../samples/fabric/", $dir, "/", $file)))
    };
}

pub const NVIDIA: [Sample; 6] = [
    sample!("10.0.0.1", "nvidia", "10.0.0.1.txt"),
    sample!("10.0.0.2", "nvidia", "10.0.0.2-qos.txt"),
    sample!("10.0.0.2", "nvidia", "10.0.0.2-nccl.env"),
    sample!("10.0.0.2", "nvidia", "10.0.0.2-gids.txt"),
    sample!("leaf1", "nvidia", "leaf1-nv.yaml"),
    sample!("spine1", "nvidia", "spine1-eos.cfg"),
];

pub const SONIC_DEFAULT: [Sample; 4] = [
    sample!("10.1.0.1", "sonic-default", "10.1.0.1.txt"),
    sample!("10.1.0.2", "sonic-default", "10.1.0.2.txt"),
    sample!("leaf1", "sonic-default", "leaf1-config_db.json"),
    sample!("leaf2", "sonic-default", "leaf2-config_db.json"),
];

/// The 1-based line of the first line of `file` (of `samples`) holding `needle`, as
/// `FILE:LINE`; panics (in tests) where there is none.
pub fn line_of(samples: &[Sample], file: &str, needle: &str) -> String {
    first_line(samples, file, |line| line.contains(needle))
}

/// As [`line_of`], of the first line that is `whole` (leading and trailing blanks aside).
pub fn line_is(samples: &[Sample], file: &str, whole: &str) -> String {
    first_line(samples, file, |line| line.trim() == whole)
}

/// As [`line_of`], of the first line `matches` takes.
pub fn first_line(samples: &[Sample], file: &str, matches: impl Fn(&str) -> bool) -> String {
    let (_, _, text) = samples.iter().find(|(_, name, _)| *name == file).expect("a sample file");
    let index = text.lines().position(matches).expect("the line in the sample");
    format!("{file}:{}", index + 1)
}

/// The samples with, in each `(file, from, to)`, every `from` of `file` replaced by `to`.
pub fn edit(samples: &[Sample], edits: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    samples
        .iter()
        .map(|(name, file, text)| {
            let mut text = text.to_string();
            for (_, from, to) in edits.iter().filter(|(edited, _, _)| edited == file) {
                assert!(text.contains(from), "{from} in {file}");
                text = text.replace(from, to);
            }
            (name.to_string(), file.to_string(), text)
        })
        .collect()
}

/// Reads owned `(NAME, FILE, text)` triples (as [`edit`] makes them) into devices.
pub fn devices_of(
    files: &[(String, String, String)],
) -> Result<Vec<super::devices::Device>, super::model::ConfigError> {
    let files: Vec<(&str, &str, &str)> =
        files.iter().map(|(name, file, text)| (name.as_str(), file.as_str(), text.as_str())).collect();
    super::devices::read_devices(&files)
}
