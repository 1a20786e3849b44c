//! What installing rocescope puts in place: the completion scripts load in their shell and
//! complete the commands and each command's options; the manual pages render with `man` and
//! name every command.

use std::path::Path;
use std::process::Command;

use clap::CommandFactory;
use rocescope::cli::Cli;

use crate::common::run_ok;

/// The commands of the command line, as its definition names them.
fn command_names() -> Vec<String> {
    Cli::command().get_subcommands().map(|c| c.get_name().to_string()).collect()
}

/// Whether `program` runs here; a message saying the test is skipped when it does not.
fn available(program: &str) -> bool {
    let runs = Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    if !runs {
        eprintln!("SKIPPED: {program} is not installed");
    }
    runs
}

/// `rocescope completions SHELL` written into a file of `dir`.
fn completion_script(dir: &Path, shell: &str) -> std::path::PathBuf {
    let path = dir.join(format!("rocescope.{shell}"));
    std::fs::write(&path, run_ok(&["completions", shell])).expect("write the script");
    path
}

/// What bash offers for the last of `words` (the command line as typed, the last word the one
/// being completed): the script's completion function run as bash's programmable completion
/// runs it, with COMP_WORDS and COMP_CWORD set, and COMPREPLY read back.
fn bash_completions(script: &Path, words: &[&str]) -> Vec<String> {
    let program = r#"source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
_rocescope rocescope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}""#;
    let out = Command::new("bash").args(["-c", program, "bash"]).arg(script).args(words).output().expect("bash runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn the_bash_script_loads_and_completes_commands_and_options() {
    if !available("bash") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let script = completion_script(dir.path(), "bash");
    let registered = Command::new("bash")
        .args(["-c", r#"source "$1" && complete -p rocescope"#, "bash"])
        .arg(&script)
        .output()
        .expect("bash runs");
    assert!(registered.status.success(), "{}", String::from_utf8_lossy(&registered.stderr));
    assert!(String::from_utf8_lossy(&registered.stdout).contains("-F _rocescope"));

    let offered = bash_completions(&script, &["rocescope", ""]);
    for name in command_names() {
        assert!(offered.contains(&name), "`rocescope ` does not offer {name}: {offered:?}");
    }

    let offered = bash_completions(&script, &["rocescope", "analyze", "--"]);
    let cli = Cli::command();
    let analyze = cli.find_subcommand("analyze").expect("an analyze command");
    for long in analyze.get_arguments().filter_map(|a| a.get_long()) {
        assert!(offered.contains(&format!("--{long}")), "`analyze --` does not offer --{long}: {offered:?}");
    }
    assert!(offered.iter().all(|o| o.starts_with("--")), "{offered:?}");
    assert!(!offered.contains(&"--metrics".to_string()), "capture's --metrics offered for analyze: {offered:?}");
}

#[test]
fn the_zsh_and_fish_scripts_name_every_command() {
    for (shell, registers) in [("zsh", "#compdef rocescope"), ("fish", "complete -c rocescope")] {
        let script = run_ok(&["completions", shell]);
        assert!(script.contains(registers), "the {shell} script does not register rocescope:\n{script}");
        for name in command_names() {
            assert!(script.contains(&name), "the {shell} script does not name {name}");
        }
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = crate::common::run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
}

/// `page` as `man -l` renders it, as plain text.
fn rendered(page: &Path) -> String {
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "200")
        .env_remove("MAN_KEEP_FORMATTING")
        .output()
        .expect("man runs");
    assert!(out.status.success(), "man -l {}: {}", page.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_manual_page_renders_and_names_every_command() {
    if !available("man") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("rocescope.1");
    std::fs::write(&page, run_ok(&["man"])).expect("write the page");
    let text = rendered(&page);
    assert!(text.contains("Analyze RoCE / RoCEv2 packet captures"), "{text}");
    for name in command_names() {
        assert!(text.contains(&format!("rocescope-{name}(1)")), "the page does not name {name}:\n{text}");
    }
}

#[test]
fn man_out_writes_a_page_per_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("man1");
    run_ok(&["man", "--out", out.to_str().expect("UTF-8 path")]);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .expect("the directory is created")
        .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = command_names().iter().map(|n| format!("rocescope-{n}.1")).collect();
    expected.push("rocescope.1".into());
    expected.sort();
    assert_eq!(names, expected);
    let analyze = std::fs::read_to_string(out.join("rocescope-analyze.1")).expect("the analyze page");
    assert!(analyze.contains(".TH rocescope-analyze 1"), "{analyze}");
    if available("man") {
        let text = rendered(&out.join("rocescope-analyze.1"));
        assert!(text.contains("--threads"), "{text}");
    }
}
