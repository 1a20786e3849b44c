use std::process::ExitCode;

use clap::Parser;

use rocescope::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Packets(args) => rocescope::packets::run(args),
        Command::Analyze(args) => rocescope::analyze_command::run(args),
        Command::Generate(args) => rocescope::generate::run(args),
        Command::Capture(args) => capture(args),
    }
}

#[cfg(feature = "live")]
fn capture(args: &rocescope::cli::CaptureArgs) -> ExitCode {
    rocescope::live::run(args)
}

#[cfg(not(feature = "live"))]
fn capture(_: &rocescope::cli::CaptureArgs) -> ExitCode {
    eprintln!(
        "rocescope: this build has no live capture; build with `cargo build --release --features live` \
         (needs libpcap's development files, e.g. apt-get install libpcap-dev)"
    );
    ExitCode::from(rocescope::cli::EXIT_USAGE)
}
