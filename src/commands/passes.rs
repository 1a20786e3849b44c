//! The passes a command makes before its main one ([`crate::pipeline::plan`]): `--time-source
//! hardware` reads the inputs first to find whether every frame has a hardware time (a frame
//! on the capture host's clock among frames on a switch's or a tap's would put it out of order
//! by the clocks' offset); `analyze --tap` follows the packets from tap to tap. A file read
//! twice must be a file.

use super::exit::Failure;
use crate::analyze::path::{self, Tap};
use crate::decode::{Decoder, TimeSource};
use crate::pipeline::plan::{Before, Pass, Plan, ReadOnce};

/// The time source `decoder`'s frames of `files` get: `requested`, unless it is `hardware`
/// and a frame has no hardware timestamp; then a warning names the frame and the frames keep
/// the capture's times. An input that cannot be read twice (standard input, a pipe) is a usage
/// error.
pub fn choose(files: &[std::path::PathBuf], requested: TimeSource, decoder: &Decoder) -> Result<TimeSource, Failure> {
    let plan = Plan::new(files, requested, &[]);
    Ok(read_before_main(&plan, &[], decoder, &path::Options::default())?.time_source)
}

/// Makes `plan`'s passes before its main one (`taps` are those the plan was made with):
/// a file it reads twice that can be read once only is a usage error, and a tap's file that
/// cannot be read ends the command; a frame without a hardware time is a warning.
pub fn read_before_main(plan: &Plan, taps: &[Tap], decoder: &Decoder, path: &path::Options) -> Result<Before, Failure> {
    if let Some(once) = plan.read_once_inputs() {
        return Err(Failure::Usage(read_once_message(&once, taps)));
    }
    let before = plan.read_before_main(decoder, path).map_err(|e| Failure::NoInput(e.to_string()))?;
    if let Some(frame) = before.without_hardware_time {
        eprintln!(
            "rocescope: warning: --time-source hardware: frame {frame} has no hardware timestamp (an Arista \
             timestamp header, an ERSPAN III IEEE 1588 time or a Metamako trailer); every frame keeps the \
             capture's time"
        );
    }
    Ok(before)
}

/// Why `once` cannot be read as the plan would: the option that asks for the first pass, and
/// what to do.
fn read_once_message(once: &ReadOnce, taps: &[Tap]) -> String {
    let file = &once.file;
    let what = match file.as_os_str() == "-" {
        true => "standard input".to_string(),
        false => format!("{} (a pipe or a device)", file.display()),
    };
    match (once.first, taps.iter().find(|t| t.files.contains(file))) {
        (Pass::Taps, Some(tap)) => format!(
            "--tap {}={}: a tap is read twice (to follow its packets from tap to tap, then to analyse them), \
             and standard input, a pipe or a device can be read once only: save it to a file first",
            tap.name,
            file.display()
        ),
        _ => format!(
            "--time-source hardware reads the captures twice, and {what} can be read once only: save it to a file first"
        ),
    }
}
