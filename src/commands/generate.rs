//! The `generate` command: the sample captures, or one benchmark capture.

use std::fs;
use std::process::ExitCode;

use crate::cli::{EXIT_OK, EXIT_OUTPUT, GenerateArgs};
use crate::generate::{bench, scenarios, write_scenario};

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
