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

/// The lines of a summary's findings and troubleshooting entries, escapes and carriage returns
/// left out.
fn findings_lines(summary: &str) -> Vec<String> {
    let from = summary.find("Findings (").expect("findings");
    let text = summary[from..].split("\nScript done").next().unwrap_or_default();
    let plain = |line: &str| {
        let mut out = String::new();
        let mut rest = line.trim_end_matches('\r');
        while let Some(at) = rest.find('\x1b') {
            out.push_str(&rest[..at]);
            rest = &rest[at..];
            rest = rest.find('m').map_or("", |m| &rest[m + 1..]);
        }
        out + rest
    };
    text.lines().map(plain).collect()
}

#[test]
fn findings_wrap_at_100_columns_into_a_pipe_and_at_the_terminals_width() {
    let sizes = sample("message_sizes.pcap");
    // into a pipe: 100 columns, whatever the terminal, the wrapped text under its first line
    let piped = common::run_ok(&["analyze", &sizes]);
    let lines = findings_lines(&piped);
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{lines:#?}");
    let cause = lines.iter().position(|l| l.starts_with("          cause:  Packets were dropped")).expect("a cause");
    assert!(lines[cause].chars().count() > 90, "filled: {}", lines[cause]);
    assert!(lines[cause + 1].starts_with(&" ".repeat(18)), "under the text: {}", lines[cause + 1]);
    let bin = env!("CARGO_BIN_EXE_rocescope");
    let Some(narrow) = in_terminal(&format!("stty cols 64 && {bin} analyze {sizes}"), &[]) else {
        eprintln!("skipped the terminal part: `script` (util-linux) is not installed");
        return;
    };
    let lines = findings_lines(&narrow);
    assert!(lines.iter().all(|l| l.chars().count() <= 64), "{lines:#?}");
    assert!(lines.iter().any(|l| l.chars().count() > 56), "filled to the width: {lines:#?}");
}

#[test]
fn a_word_longer_than_the_line_stands_alone_and_the_rest_wraps() {
    let long = "/sys/class/net/IFACE/ecn/roce_np/enable/N";
    let text = format!("Enable the notification point ({long}) and check that np_cnp_sent grows.");
    let mut out = Vec::new();
    rocescope::output::report::text::write_wrapped(&mut out, "  action: ", 10, &text, 40).expect("written");
    let out = String::from_utf8(out).expect("UTF-8");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "  action: Enable the notification point",
            &format!("          ({long})"),
            "          and check that np_cnp_sent",
            "          grows.",
        ]
    );
    for line in lines {
        assert!(line.chars().count() <= 40 || !line.trim().contains(' '), "{line}");
    }
}
