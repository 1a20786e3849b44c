//! The commands: each picks its sources and sinks from the engine and the output writers, and
//! turns what happened into an exit status.

pub mod accounts;
pub mod analyze;
pub mod annotate;
#[cfg(feature = "live")]
pub mod capture;
pub mod exit;
#[cfg(feature = "tables")]
pub mod export;
pub mod fabric;
pub mod generate;
pub mod install;
pub mod merge;
pub mod packets;
pub mod passes;
pub mod reporting;
pub mod saved_run;
pub mod wireshark_plugin;

use std::io::Write as _;

use crate::cli::Command;
use exit::{Outcome, written};

/// Runs `command` as the command line does.
pub fn run(command: &Command) -> Outcome {
    match command {
        Command::Packets(args) => packets::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Fabric(args) => fabric::run(args),
        Command::Export(args) => export(args),
        Command::Generate(args) => generate::run(args),
        Command::Fields(args) => list_fields(args.prefix.as_deref().unwrap_or_default()),
        Command::Annotate(args) => annotate::run(args),
        Command::WiresharkPlugin(args) => wireshark_plugin::run(args),
        Command::Browse(args) => browse(args),
        Command::Capture(args) => capture(args),
        Command::Completions(args) => install::completions(args),
        Command::Man(args) => install::man(args),
    }
}

/// `rocescope fields [PREFIX]`: the field registry, as `tshark -G fields` prints its own; the
/// fields and protocols whose names begin with `prefix`.
fn list_fields(prefix: &str) -> Outcome {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = crate::fields::write_glossary(&mut out, prefix).and_then(|()| out.flush());
    written(result, |e| format!("cannot write the output: {e}"))
}

#[cfg(feature = "tables")]
fn export(args: &crate::cli::ExportArgs) -> Outcome {
    crate::commands::export::run(args)
}

#[cfg(not(feature = "tables"))]
fn export(_: &crate::cli::ExportArgs) -> Outcome {
    Err(exit::Failure::Usage(format!("export: {}", crate::commands::reporting::NO_TABLES)))
}

#[cfg(feature = "browse")]
fn browse(args: &crate::cli::BrowseArgs) -> Outcome {
    crate::browse::run(args)
}

#[cfg(not(feature = "browse"))]
fn browse(_: &crate::cli::BrowseArgs) -> Outcome {
    Err(exit::Failure::Usage("this build has no browser; build with the default features".into()))
}

#[cfg(feature = "live")]
fn capture(args: &crate::cli::CaptureArgs) -> Outcome {
    crate::commands::capture::run(args)
}

#[cfg(not(feature = "live"))]
fn capture(_: &crate::cli::CaptureArgs) -> Outcome {
    Err(exit::Failure::Usage(
        "this build has no live capture; build with `cargo build --release --features live` \
         (needs libpcap's development files, e.g. apt-get install libpcap-dev)"
            .into(),
    ))
}

/// An error when `target` is one of the input `files`, which `what` would overwrite.
fn refuse_input(target: &std::path::Path, files: &[std::path::PathBuf], what: &str) -> Result<(), String> {
    let existing = std::fs::canonicalize(target).ok();
    if existing.is_some_and(|e| files.iter().any(|f| std::fs::canonicalize(f).is_ok_and(|i| i == e))) {
        return Err(format!("refusing to overwrite the input {} with {what}", target.display()));
    }
    Ok(())
}
