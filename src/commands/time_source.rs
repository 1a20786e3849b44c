//! `--time-source`: which times the frames have. Hardware times are used only when every frame
//! has one, which a first pass over the captures finds out: a frame on the capture host's
//! clock among frames on a switch's or a tap's would put it out of order by the clocks' offset.

use std::path::PathBuf;

use super::exit::Failure;
use crate::capture::Inputs;
use crate::capture::interfaces::read_once_only;
use crate::decode::{Decoder, TimeSource};
use crate::pipeline::first_without_hardware_time;

/// The time source `decoder`'s frames of `files` get: `requested`, unless it is `hardware`
/// and a frame has no hardware timestamp; then a warning names the frame and the frames keep
/// the capture's times. An input that cannot be read twice (standard input, a pipe) is a usage
/// error.
pub fn choose(files: &[PathBuf], requested: TimeSource, decoder: &Decoder) -> Result<TimeSource, Failure> {
    if requested == TimeSource::Capture {
        return Ok(requested);
    }
    if let Some(once) = files.iter().find(|f| read_once_only(f)) {
        let what = match once.as_os_str() == "-" {
            true => "standard input".to_string(),
            false => format!("{} (a pipe or a device)", once.display()),
        };
        return Err(Failure::Usage(format!(
            "--time-source hardware reads the captures twice, and {what} can be read once only: save it to a file first"
        )));
    }
    // files that cannot be opened are reported by the command's own pass
    let (mut inputs, _) = Inputs::open(files, false);
    match first_without_hardware_time(&mut inputs, decoder) {
        None => Ok(TimeSource::Hardware),
        Some(frame) => {
            eprintln!(
                "rocescope: warning: --time-source hardware: frame {frame} has no hardware timestamp (an Arista \
                 timestamp header, an ERSPAN III IEEE 1588 time or a Metamako trailer); every frame keeps the \
                 capture's time"
            );
            Ok(TimeSource::Capture)
        }
    }
}
