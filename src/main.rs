use std::process::ExitCode;

use clap::Parser;

use rocescope::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Packets(args) => rocescope::packets::run(args),
        Command::Analyze(args) => rocescope::analyze_command::run(args),
        Command::Generate(args) => rocescope::generate::run(args),
    }
}
