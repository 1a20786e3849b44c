use std::process::ExitCode;

use clap::Parser;

use rocescope::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Packets(args) => rocescope::commands::packets::run(args),
        Command::Analyze(args) => rocescope::commands::analyze::run(args),
        Command::Generate(args) => rocescope::commands::generate::run(args),
        Command::Fields => list_fields(),
        Command::Annotate(args) => rocescope::commands::annotate::run(args),
        Command::Capture(args) => capture(args),
    }
}

/// `rocescope fields`: the field registry, as `tshark -G fields` prints its own.
fn list_fields() -> ExitCode {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match rocescope::fields::write_glossary(&mut out).and_then(|()| std::io::Write::flush(&mut out)) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("rocescope: cannot write the output: {e}");
            ExitCode::from(rocescope::cli::EXIT_OUTPUT)
        }
        _ => ExitCode::from(rocescope::cli::EXIT_OK),
    }
}

#[cfg(feature = "live")]
fn capture(args: &rocescope::cli::CaptureArgs) -> ExitCode {
    rocescope::commands::capture::run(args)
}

#[cfg(not(feature = "live"))]
fn capture(_: &rocescope::cli::CaptureArgs) -> ExitCode {
    eprintln!(
        "rocescope: this build has no live capture; build with `cargo build --release --features live` \
         (needs libpcap's development files, e.g. apt-get install libpcap-dev)"
    );
    ExitCode::from(rocescope::cli::EXIT_USAGE)
}
