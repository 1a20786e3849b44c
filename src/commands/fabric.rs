//! The fabric's QoS configuration: the files `--config NAME=FILE` names for `analyze`, read
//! before the capture, and the `fabric` command, which reads and checks them alone.

use std::io::{self, BufWriter, Write};

use super::exit::{Failure, Outcome, fail_on, written};
use crate::analyze::assemble;
use crate::analyze::counters;
use crate::analyze::fabric::{self, devices::Device};
use crate::cli::{DeviceFile, FabricArgs};
use crate::output::report::text::{fabric::write_fabric, findings::write_findings, stdout_width};

/// The devices of the configuration files `files` (given with `option`), in the order first
/// named. A file that cannot be read, holds more than 16 MiB, is of no format read here or
/// has a malformed line is a usage error naming the file and the line.
pub fn read_configs(files: &[DeviceFile], option: &str) -> Result<Vec<Device>, Failure> {
    let mut texts = Vec::with_capacity(files.len());
    for given in files {
        let file = given.file.display().to_string();
        let text = counters::read_file(&given.file).map_err(|e| Failure::Usage(format!("{option}: {file}: {e}")))?;
        texts.push((given.name.as_str(), file, text));
    }
    let named: Vec<(&str, &str, &str)> =
        texts.iter().map(|(name, file, text)| (*name, file.as_str(), text.as_str())).collect();
    fabric::devices::read_devices(&named).map_err(|e| Failure::Usage(format!("{option}: {e}")))
}

pub fn run(args: &FabricArgs) -> Outcome {
    let devices = read_configs(&args.files, "fabric")?;
    let report = fabric::analyse(&devices, None);
    let findings = assemble::fabric_findings(&report);
    let mut out = BufWriter::new(io::stdout().lock());
    let result = if args.json {
        let document = serde_json::json!({ "fabric": report, "findings": findings });
        serde_json::to_writer_pretty(&mut out, &document).map_err(io::Error::from).and_then(|()| out.write_all(b"\n"))
    } else {
        write_fabric(&mut out, &report)
            .and_then(|()| writeln!(out))
            .and_then(|()| write_findings(&mut out, &findings, &[], args.color.enabled(), stdout_width()))
    };
    written(result.and_then(|()| out.flush()), |e| format!("cannot write the report: {e}"))?;
    fail_on(&findings, args.fail_on)
}
