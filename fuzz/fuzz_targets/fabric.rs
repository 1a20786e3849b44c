//! Arbitrary text as a fabric's configuration files (`analyze --config NAME=FILE`, `fabric
//! NAME=FILE`): the input cut at each `0xFF` byte into files (at most 8), each given to a NAME
//! of a small fixed list (hosts by address and switches by name, so that a NAME gets several
//! files, and host and switch files meet under one NAME). The files are read into devices,
//! or refused naming one of the files and a line within it, never a panic; where they read,
//! the policy is derived, the checks run without a capture and with a small one, and the
//! fabric section of the report is serialised, as `fabric --json` and `analyze --json` do.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocescope::analyze::fabric::checks::{self, Seen, SeenDscp};
use rocescope::analyze::fabric::{devices, policy, report};

/// The NAMEs the files are given to: a file's first byte picks one.
const NAMES: [&str; 4] = ["10.0.0.1", "10.0.0.2", "leaf1", "spine1"];
/// The files an input is cut into, at most.
const MAX_FILES: usize = 8;

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let parts: Vec<(&str, String, String)> = data
        .split(|byte| *byte == 0xFF)
        .take(MAX_FILES)
        .enumerate()
        .map(|(index, part)| {
            let name = NAMES[usize::from(part.first().copied().unwrap_or(0)) % NAMES.len()];
            let body = part.get(1..).unwrap_or_default();
            (name, format!("file{index}"), String::from_utf8_lossy(body).into_owned())
        })
        .collect();
    let files: Vec<(&str, &str, &str)> =
        parts.iter().map(|(name, file, text)| (*name, file.as_str(), text.as_str())).collect();
    let devices = match devices::read_devices(&files) {
        Ok(devices) => devices,
        Err(e) => {
            let (_, _, text) = files.iter().find(|(_, file, _)| *file == e.file).expect("the error names a file given");
            let lines = text.lines().count().max(1);
            assert!(e.line >= 1 && e.line <= lines + 1, "line {} of {lines}: {e}", e.line);
            return;
        }
    };
    assert!(devices.len() <= files.len());
    let policy = policy::fabric_policy(&devices);
    let seen = Seen {
        data: vec![
            SeenDscp { dscp: 26, first_frame: 7, sender: "10.0.0.1".into() },
            SeenDscp { dscp: 3, first_frame: 2, sender: "10.0.0.2".into() },
        ],
        cnps: vec![
            SeenDscp { dscp: 46, first_frame: 9, sender: "10.0.0.1".into() },
            SeenDscp { dscp: 48, first_frame: 4, sender: "10.0.0.2".into() },
            SeenDscp { dscp: 48, first_frame: 5, sender: "leaf1".into() },
        ],
    };
    let names: Vec<&str> = devices.iter().map(|device| device.name.as_str()).collect();
    let mut checked = Vec::new();
    for seen in [None, Some(&seen)] {
        checked = checks::check(&devices, &policy, seen);
        for mismatch in &checked {
            assert!(checks::rule(mismatch.code).is_some(), "{}", mismatch.code);
            assert!(mismatch.devices.windows(2).all(|pair| pair[0] < pair[1]), "{:?}", mismatch.devices);
            assert!(mismatch.devices.iter().all(|name| names.contains(&name.as_str())), "{:?}", mismatch.devices);
            assert!(seen.is_some() || mismatch.first_frame.is_none(), "{mismatch:?}");
        }
    }
    let fabric = report::fabric_report(&devices, &policy, checked);
    let _ = serde_json::to_string(&fabric).expect("the fabric report serialises");
});
