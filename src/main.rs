use std::process::ExitCode;

use rocescope::cli;
use rocescope::commands::{self, exit};

fn main() -> ExitCode {
    ExitCode::from(exit::status(commands::run(&cli::parse().command)))
}
