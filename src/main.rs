use std::process::ExitCode;

use rocescope::cli::{self, Command};
use rocescope::commands::exit::{self, Outcome, written};
use rocescope::commands::{analyze, annotate, fabric, generate, merge, packets};

fn main() -> ExitCode {
    let cli = cli::parse();
    exit::exit(match &cli.command {
        Command::Packets(args) => packets::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Fabric(args) => fabric::run(args),
        Command::Export(args) => export(args),
        Command::Generate(args) => generate::run(args),
        Command::Fields => list_fields(),
        Command::Annotate(args) => annotate::run(args),
        Command::Browse(args) => browse(args),
        Command::Capture(args) => capture(args),
    })
}

/// `rocescope fields`: the field registry, as `tshark -G fields` prints its own.
fn list_fields() -> Outcome {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = rocescope::fields::write_glossary(&mut out).and_then(|()| std::io::Write::flush(&mut out));
    written(result, |e| format!("cannot write the output: {e}"))
}

#[cfg(feature = "tables")]
fn export(args: &rocescope::cli::ExportArgs) -> Outcome {
    rocescope::commands::export::run(args)
}

#[cfg(not(feature = "tables"))]
fn export(_: &rocescope::cli::ExportArgs) -> Outcome {
    Err(exit::Failure::Usage(format!("export: {}", rocescope::commands::reporting::NO_TABLES)))
}

#[cfg(feature = "browse")]
fn browse(args: &rocescope::cli::BrowseArgs) -> Outcome {
    rocescope::browse::run(args)
}

#[cfg(not(feature = "browse"))]
fn browse(_: &rocescope::cli::BrowseArgs) -> Outcome {
    Err(exit::Failure::Usage("this build has no browser; build with the default features".into()))
}

#[cfg(feature = "live")]
fn capture(args: &rocescope::cli::CaptureArgs) -> Outcome {
    rocescope::commands::capture::run(args)
}

#[cfg(not(feature = "live"))]
fn capture(_: &rocescope::cli::CaptureArgs) -> Outcome {
    Err(exit::Failure::Usage(
        "this build has no live capture; build with `cargo build --release --features live` \
         (needs libpcap's development files, e.g. apt-get install libpcap-dev)"
            .into(),
    ))
}
