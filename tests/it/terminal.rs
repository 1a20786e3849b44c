//! Behaviour that depends on a terminal: colour of the findings (`--color`, NO_COLOR) and the
//! progress bar on standard error. A pseudo-terminal comes from util-linux's `script`; those
//! tests skip with a message where it is missing.

use crate::common;

use std::process::Command;

const ESC: &str = "\x1b[";

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `command` (a shell command line) with a pseudo-terminal as its standard streams;
/// returns what it wrote there, or `None` when `script` is not available.
fn in_terminal(command: &str, env: &[(&str, &str)]) -> Option<String> {
    let log = tempfile::NamedTempFile::new().ok()?;
    let status = Command::new("script")
        .args(["-qec", command])
        .arg(log.path())
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    assert!(status.success(), "{command}");
    Some(String::from_utf8_lossy(&std::fs::read(log.path()).ok()?).into_owned())
}

#[test]
fn findings_are_coloured_only_on_a_terminal_or_when_asked() {
    let storm = sample("pfc_storm.pcap");
    let always = common::run_ok(&["analyze", "--color", "always", &storm]);
    assert!(always.contains("\x1b[1m\x1b[31mERROR  \x1b[0m PFC_STORM"), "{always}");
    assert!(always.contains("\x1b[1m\x1b[33mWARNING\x1b[0m"));
    for args in [vec!["analyze", &storm], vec!["analyze", "--color", "never", &storm]] {
        assert!(!common::run_ok(&args).contains(ESC), "{args:?}: no colour into a pipe");
    }
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let Some(coloured) = in_terminal(&format!("{bin} analyze {storm}"), &[]) else {
        eprintln!("skipped the terminal part: `script` (util-linux) is not installed");
        return;
    };
    assert!(coloured.contains("\x1b[31mERROR"), "a terminal gets colour");
    let plain = in_terminal(&format!("{bin} analyze {storm}"), &[("NO_COLOR", "1")]).expect("script");
    assert!(plain.contains("ERROR") && !plain.contains("\x1b[31m"), "NO_COLOR turns it off");
}

#[test]
fn the_progress_bar_shows_on_a_terminal_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let capture = dir.path().join("small.pcap");
    common::run_ok(&["generate", "--benchmark", "small", "--size", "20M", capture.to_str().unwrap()]);
    let capture = capture.to_str().unwrap();
    // into a pipe: nothing on standard error
    let out = common::run(&["analyze", "--json", capture]);
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let Some(shown) = in_terminal(&format!("{bin} analyze --json {capture} > /dev/null"), &[]) else {
        eprintln!("skipped the terminal part: `script` (util-linux) is not installed");
        return;
    };
    assert!(shown.contains("/20.00 MiB") && shown.contains("eta"), "a bar by bytes with the total: {shown:?}");
    let quiet = in_terminal(&format!("{bin} analyze --quiet --json {capture} > /dev/null"), &[]).expect("script");
    assert!(!quiet.contains("MiB"), "--quiet hides it: {quiet:?}");
}
