//! Deterministic sample captures.

use std::process::ExitCode;

use crate::cli::GenerateArgs;

pub fn run(_args: &GenerateArgs) -> ExitCode {
    ExitCode::from(crate::cli::EXIT_USAGE)
}
