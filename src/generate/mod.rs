//! The deterministic sample generator behind `rocescope generate`: frame encoders, capture
//! writers and the sample scenarios (documented in docs/samples.md).

pub mod bench;
pub mod encode;
pub mod scenarios;
pub mod writer;

use std::fs;
use std::io::BufWriter;
use std::path::Path;
use std::process::ExitCode;

use crate::cli::{EXIT_OK, EXIT_OUTPUT, GenerateArgs};
use scenarios::{Container, Scenario};
use writer::CaptureWriter;

/// Writes one scenario into `dir`.
pub fn write_scenario(dir: &Path, scenario: &Scenario) -> std::io::Result<()> {
    let file = BufWriter::new(fs::File::create(dir.join(scenario.file))?);
    let mut w = match &scenario.container {
        Container::Pcap { snaplen } => CaptureWriter::pcap(file, 1, *snaplen, false, false)?,
        Container::Pcapng { interfaces } => CaptureWriter::pcapng(file, interfaces)?,
    };
    for frame in &scenario.frames {
        if frame.simple {
            w.simple_packet(&frame.bytes)?;
        } else {
            w.packet(frame.interface, frame.ts_ns, &frame.bytes)?;
        }
    }
    w.finish()?;
    Ok(())
}

pub fn run(args: &GenerateArgs) -> ExitCode {
    if let Some(kind) = args.benchmark {
        let path = args.dir.clone();
        return match bench::write_benchmark(&path, kind, args.size) {
            Ok(frames) => {
                println!("{}: {frames} frames", path.display());
                ExitCode::from(EXIT_OK)
            }
            Err(e) => {
                eprintln!("rocescope: cannot write {}: {e}", path.display());
                ExitCode::from(EXIT_OUTPUT)
            }
        };
    }
    let result = fs::create_dir_all(&args.dir).and_then(|()| {
        scenarios::all().iter().try_for_each(|s| {
            write_scenario(&args.dir, s)?;
            println!("{}", args.dir.join(s.file).display());
            Ok(())
        })
    });
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => {
            eprintln!("rocescope: cannot write samples into {}: {e}", args.dir.display());
            ExitCode::from(EXIT_OUTPUT)
        }
    }
}
