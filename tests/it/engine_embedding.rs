//! The engine embedded in a program of its own: frames from a source the program defines (here
//! the generator's frames, held in memory), through the pipeline with a stage of its own, into
//! the analysis; the report equals `analyze --json` of the same frames written to a file.

use crate::common;

use std::io;

use rocescope_engine::analyze::frame::FrameSummary;
use rocescope_engine::analyze::{Analyzer, Config, assemble};
use rocescope_engine::capture::{Frame, LinkType, Record};
use rocescope_engine::decode::{DecodedFrame, Decoder};
use rocescope_engine::pipeline::{self, FrameSource, Next, Stage, Step};

/// Ethernet frames held in memory, with their timestamps.
struct InMemory {
    frames: Vec<(i64, Vec<u8>)>,
    next: usize,
}

impl FrameSource for InMemory {
    fn next(&mut self) -> Next<'_> {
        let Some((ts_ns, bytes)) = self.frames.get(self.next) else { return Next::End };
        self.next += 1;
        let record =
            Record { ts_ns: *ts_ns, orig_len: bytes.len() as u32, data: bytes, link_type: LinkType(1), offset: 0 };
        Next::Frame(Frame { number: self.next as u64, file: 0, record })
    }
}

/// A stage of the program's own: every frame into the analysis, and a count of the RoCE ones.
struct Counting {
    analyzer: Analyzer,
    roce: u64,
}

impl Stage for Counting {
    fn frame(&mut self, frame: &Frame<'_>, packet: &DecodedFrame<'_>, _: &Decoder) -> io::Result<Step> {
        self.roce += u64::from(packet.roce().is_some());
        self.analyzer.observe(&FrameSummary::of(frame.number, packet));
        Ok(Step::Continue)
    }

    fn finish(&mut self, _: &Decoder) -> io::Result<()> {
        self.analyzer.finish();
        Ok(())
    }
}

#[test]
fn a_program_runs_the_pipeline_with_its_own_source_and_stage() {
    let scenario = rocescope::generate::all_scenarios()
        .into_iter()
        .find(|s| s.file == "loss_go_back_n.pcap")
        .expect("the loss scenario");
    let frames: Vec<(i64, Vec<u8>)> = scenario.frames.iter().map(|f| (f.ts_ns, f.bytes.clone())).collect();
    let mut source = InMemory { frames, next: 0 };
    let mut stage = Counting { analyzer: Analyzer::new(Config::default()), roce: 0 };
    let ran = pipeline::run(&mut source, &Decoder::new(&[]), &mut stage, &|_| {});
    ran.result.expect("the stage never fails");
    assert_eq!(ran.frames, scenario.frames.len() as u64);
    assert!(ran.damage.is_empty());

    let ours = serde_json::to_value(assemble::report(&stage.analyzer, Vec::new(), None)).expect("JSON");
    let dir = tempfile::tempdir().expect("temp dir");
    rocescope::generate::write_scenario(dir.path(), &scenario).expect("the sample is written");
    let file = dir.path().join(scenario.file);
    let cli: serde_json::Value =
        serde_json::from_str(&common::run_ok(&["analyze", "--json", file.to_str().expect("UTF-8")])).expect("JSON");
    assert_eq!(stage.roce, cli["totals"]["roce_packets"].as_u64().expect("a count"));
    for key in ["totals", "flows", "retransmit_episodes", "findings", "icrc", "ecn"] {
        assert_eq!(ours[key], cli[key], "{key}");
    }
    // the scenario loses packets: the comparison is of a report with something in it
    let gaps: u64 = ours["flows"].as_array().expect("flows").iter().filter_map(|f| f["gaps"].as_u64()).sum();
    assert!(gaps > 0 && stage.roce > 0, "{ours}");
}
