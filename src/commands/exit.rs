//! How a command ends: one error type for every command, and the one place that turns it into
//! a message on standard error and a documented exit status.

use std::io;

use crate::analyze::finding::Finding;
use crate::analyze::finding::Severity;

/// Why a command did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// No input could be read: files missing, unreadable, not captures or damaged before their
    /// first frame; an interface that cannot be opened, or a capture that failed. The message
    /// is empty where each input's trouble was reported as it was met.
    NoInput(String),
    /// The command line was wrong: an option, a filter, a policy file.
    Usage(String),
    /// The output could not be written.
    Output(String),
    /// `--fail-on`: the report has a finding of that severity or worse (it says which).
    Findings,
}

/// What a command returns.
pub type Outcome = Result<(), Failure>;

/// The exit statuses, with what each means; the commands' help lists them from here.
pub const STATUSES: [(u8, &str); 5] = [
    (0, "success; damaged input files were read up to the damage and reported on stderr"),
    (
        1,
        "no input could be read (missing, unreadable, not a capture, or damaged before the first frame; an interface that cannot be opened)",
    ),
    (2, "usage error (also a filter or policy file that cannot be read, or capture in a build without it)"),
    (3, "the output could not be written"),
    (4, "--fail-on: a finding of that severity or worse"),
];

impl Failure {
    /// The exit status (clap's own usage errors exit with 2 too).
    pub fn status(&self) -> u8 {
        match self {
            Failure::NoInput(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Output(_) => 3,
            Failure::Findings => 4,
        }
    }
}

/// The exit status of `outcome`, its failure's message written on standard error.
pub fn status(outcome: Outcome) -> u8 {
    match outcome {
        Ok(()) => 0,
        Err(failure) => {
            if let Failure::NoInput(m) | Failure::Usage(m) | Failure::Output(m) = &failure
                && !m.is_empty()
            {
                eprintln!("rocescope: {m}");
            }
            failure.status()
        }
    }
}

/// The result of writing the output: a reader that went away (`| head`) ends the command
/// quietly, any other error is an output failure described by `what`.
pub fn written(result: io::Result<()>, what: impl FnOnce(io::Error) -> String) -> Outcome {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::Output(what(e))),
        Ok(()) => Ok(()),
    }
}

/// `--fail-on`: a finding of severity `level` or worse among `findings` fails the command.
pub fn fail_on(findings: &[Finding], level: Option<Severity>) -> Outcome {
    match level {
        Some(level) if findings.iter().any(|f| f.severity >= level) => Err(Failure::Findings),
        _ => Ok(()),
    }
}

/// The help section listing the exit statuses `codes` of a command.
pub fn help_section(codes: &[u8]) -> String {
    let mut text = String::from("EXIT STATUS:");
    for (code, meaning) in STATUSES.iter().filter(|(c, _)| codes.contains(c)) {
        text.push_str(&format!("\n    {code}  {meaning}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_has_its_documented_status() {
        for (failure, status) in [
            (Failure::NoInput(String::new()), 1),
            (Failure::Usage(String::new()), 2),
            (Failure::Output(String::new()), 3),
            (Failure::Findings, 4),
        ] {
            assert_eq!(failure.status(), status);
            assert!(STATUSES.iter().any(|(c, _)| *c == status));
        }
        let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
        assert!(written(Err(pipe), |e| e.to_string()).is_ok());
        let full = io::Error::other("disk full");
        assert!(matches!(written(Err(full), |e| e.to_string()), Err(Failure::Output(m)) if m == "disk full"));
        assert_eq!(help_section(&[0, 3]), format!("EXIT STATUS:\n    0  {}\n    3  {}", STATUSES[0].1, STATUSES[3].1));
    }
}
