//! The passes a command makes over its inputs, declared before the first is made. What must be
//! known before the first frame is analysed reads the inputs first, in a pass of its own; each
//! such pass says why it cannot ride the main pass ([`Pass`]). Everything else rides the main
//! pass: the flows' first MACs, which the counters' reconciliation takes, are the analysis's.
//!
//! A plan is made from what the command was asked ([`Plan::new`]); [`Plan::read_before_main`]
//! makes the passes before the main one and hands on what they found ([`Before`]). A file that a
//! plan reads twice must be a file: standard input, a pipe or a device can be read once only
//! ([`Plan::read_once_inputs`]).

use std::path::PathBuf;

use crate::analyze::path::{self, Tap, Traced};
use crate::capture::interfaces::read_once_only;
use crate::capture::{CaptureError, Inputs};
use crate::decode::{Decoder, TimeSource};

/// A pass over the inputs, in the order a plan makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Has every frame a hardware time (`--time-source hardware`)? The time source gives each
    /// frame its time and orders the frames of several files, so it is settled before the first
    /// frame is read in order: a frame on the capture host's clock among frames on a switch's
    /// would be out of place by the clocks' offset.
    HardwareTimes,
    /// The path over several taps (`analyze --tap`, [`crate::analyze::path`]): the main pass reads the
    /// union of the taps on the first tap's clock, each packet once, and the clocks' offsets
    /// and the later copies are known only once every tap's packets have been followed.
    Taps,
    /// The command's own pass (the analysis, a listing, a table), and what rides it.
    Main,
}

impl Pass {
    /// What the pass is, as a message names it.
    pub fn name(self) -> &'static str {
        match self {
            Pass::HardwareTimes => "the hardware-time check",
            Pass::Taps => "following packets from tap to tap",
            Pass::Main => "the analysis",
        }
    }
}

/// The passes a command makes, and the inputs each reads.
#[derive(Debug, Clone)]
pub struct Plan {
    passes: Vec<Pass>,
    files: Vec<PathBuf>,
    taps: Vec<Tap>,
    requested: TimeSource,
}

/// What the passes before the main one found.
#[derive(Debug)]
pub struct Before {
    /// The times the main pass gives the frames: the time source requested, unless it is
    /// `hardware` and a frame has none.
    pub time_source: TimeSource,
    /// The first frame without a hardware time, when `hardware` was requested and one has none.
    pub without_hardware_time: Option<u64>,
    /// The path traced over the taps, with `--tap`.
    pub traced: Option<Traced>,
}

/// A file a plan reads in two passes that can be read once only (standard input, a pipe, a
/// device), with the pass that would read it first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnce {
    pub file: PathBuf,
    pub first: Pass,
}

impl Plan {
    /// The passes over `files` (with taps, the taps' files) for the time source `requested`,
    /// with `taps` (none without `--tap`).
    pub fn new(files: &[PathBuf], requested: TimeSource, taps: &[Tap]) -> Plan {
        let mut passes = Vec::with_capacity(3);
        if requested == TimeSource::Hardware {
            passes.push(Pass::HardwareTimes);
        }
        if !taps.is_empty() {
            passes.push(Pass::Taps);
        }
        passes.push(Pass::Main);
        Plan { passes, files: files.to_vec(), taps: taps.to_vec(), requested }
    }

    /// The passes, in order; the last is [`Pass::Main`].
    pub fn passes(&self) -> &[Pass] {
        &self.passes
    }

    /// The first file read by more than one pass that can be read once only, if any. Every
    /// pass reads every input file.
    pub fn read_once_inputs(&self) -> Option<ReadOnce> {
        let first = *self.passes.first()?;
        let twice = self.passes.len() > 1;
        let once = |file: &&PathBuf| read_once_only(file);
        twice.then(|| self.files.iter().find(once)).flatten().map(|file| ReadOnce { file: file.clone(), first })
    }

    /// Makes the passes before the main one, in order, with `decoder`; `path` gives the taps'
    /// options. A tap's file that cannot be read ends the taps' pass with its error (files the
    /// hardware-time check cannot open are left to the main pass, which names them).
    pub fn read_before_main(&self, decoder: &Decoder, path: &path::Options) -> Result<Before, CaptureError> {
        let mut before = Before { time_source: self.requested, without_hardware_time: None, traced: None };
        for pass in &self.passes {
            match pass {
                Pass::HardwareTimes => {
                    before.without_hardware_time = first_without_hardware_time(&self.files, decoder);
                    if before.without_hardware_time.is_some() {
                        before.time_source = TimeSource::Capture;
                    }
                }
                Pass::Taps => {
                    let decoder = decoder.clone().with_time_source(before.time_source);
                    before.traced = Some(path::trace(&self.taps, &decoder, path)?);
                }
                Pass::Main => {}
            }
        }
        Ok(before)
    }
}

/// The number of the first frame of `files` without a hardware timestamp
/// ([`crate::decode::DecodedFrame::hardware_time_ns`]), or `None` when every frame has one:
/// whether [`TimeSource::Hardware`] can give every frame its time.
fn first_without_hardware_time(files: &[PathBuf], decoder: &Decoder) -> Option<u64> {
    let (mut inputs, _) = Inputs::open(files, false);
    // the times are all this pass needs: no ICRC is computed
    let decoder = decoder.clone().deferring_icrc();
    while let Some(frame) = inputs.next_frame() {
        if decoder.decode(&frame.record).hardware_time_ns(frame.record.ts_ns).is_none() {
            return Some(frame.number);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples").join(name)
    }

    fn tap(name: &str, file: PathBuf) -> Tap {
        Tap { name: name.into(), files: vec![file], interface: None }
    }

    #[test]
    fn the_input_is_read_once_unless_something_must_be_known_first() {
        let files = vec![sample("rc_write_healthy.pcap")];
        assert_eq!(Plan::new(&files, TimeSource::Capture, &[]).passes(), [Pass::Main]);
        assert_eq!(Plan::new(&files, TimeSource::Hardware, &[]).passes(), [Pass::HardwareTimes, Pass::Main]);
        let taps = [tap("a", sample("rc_write_healthy.pcap")), tap("b", sample("rc_write_healthy.pcap"))];
        let plan = Plan::new(&files, TimeSource::Hardware, &taps);
        assert_eq!(plan.passes(), [Pass::HardwareTimes, Pass::Taps, Pass::Main]);
    }

    #[test]
    fn a_file_read_in_two_passes_must_be_a_file() {
        let stdin = vec![PathBuf::from("-")];
        assert_eq!(Plan::new(&stdin, TimeSource::Capture, &[]).read_once_inputs(), None);
        assert_eq!(
            Plan::new(&stdin, TimeSource::Hardware, &[]).read_once_inputs(),
            Some(ReadOnce { file: PathBuf::from("-"), first: Pass::HardwareTimes })
        );
        let taps = [tap("a", PathBuf::from("/dev/null")), tap("b", sample("rc_write_healthy.pcap"))];
        let files: Vec<PathBuf> = taps.iter().flat_map(|t| t.files.clone()).collect();
        assert_eq!(
            Plan::new(&files, TimeSource::Capture, &taps).read_once_inputs(),
            Some(ReadOnce { file: PathBuf::from("/dev/null"), first: Pass::Taps })
        );
    }

    #[test]
    fn hardware_times_are_kept_only_when_every_frame_has_one() {
        let files = vec![sample("rc_write_healthy.pcap")];
        let plan = Plan::new(&files, TimeSource::Hardware, &[]);
        let before = plan.read_before_main(&Decoder::new(&[]), &path::Options::default()).expect("no taps");
        // a host capture's frames carry no hardware timestamp: the first says so
        assert_eq!((before.time_source, before.without_hardware_time), (TimeSource::Capture, Some(1)));
        assert!(before.traced.is_none());
        let plain = Plan::new(&files, TimeSource::Capture, &[]);
        let before = plain.read_before_main(&Decoder::new(&[]), &path::Options::default()).expect("no pass");
        assert_eq!((before.time_source, before.without_hardware_time), (TimeSource::Capture, None));
    }
}
