//! The `generate` command: the sample captures, or one benchmark capture.

use std::fs;

use super::exit::{Failure, Outcome};
use crate::cli::GenerateArgs;
use crate::generate::path::{PATH_SAMPLE_FILES, Plan, path_set};
use crate::generate::{all_scenarios, bench, write_scenario};

pub fn run(args: &GenerateArgs) -> Outcome {
    if let Some(kind) = args.benchmark {
        let path = &args.dir;
        let frames = bench::write_benchmark(path, kind, args.size)
            .map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))?;
        println!("{}: {frames} frames", path.display());
        return Ok(());
    }
    fs::create_dir_all(&args.dir)
        .and_then(|()| {
            all_scenarios().iter().try_for_each(|s| {
                write_scenario(&args.dir, s)?;
                println!("{}", args.dir.join(s.file).display());
                Ok(())
            })
        })
        .and_then(|()| write_path_sample(&args.dir))
        .map_err(|e| Failure::Output(format!("cannot write samples into {}: {e}", args.dir.display())))
}

/// The taps of `samples/path/` (see [`crate::generate::path`]).
fn write_path_sample(dir: &std::path::Path) -> std::io::Result<()> {
    fs::create_dir_all(dir.join("path"))?;
    for capture in path_set(&Plan::sample(), &PATH_SAMPLE_FILES).captures {
        write_scenario(dir, &capture)?;
        println!("{}", dir.join(capture.file).display());
    }
    Ok(())
}
