//! `rocescope capture`: frames from a live interface (libpcap) through the analysis of
//! `analyze`, with a rolling summary every interval, an optional capture file, and the full
//! report at the end. Packets libpcap reports lost are counted in every summary and in the
//! report's `live` section, since a lost packet looks like a PSN gap.

mod beside;
mod interface;
mod metrics;
mod rotation;
mod summaries;

use std::cell::Cell;
use std::io::{self, BufWriter, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::exit::{Failure, Outcome, fail_on, written};
use crate::analyze::counters::Snapshot;
use crate::analyze::counters::sysfs::{RdmaPort, rdma_port};
use crate::analyze::frame::FrameSummary;
use crate::analyze::report::Report;
use crate::analyze::roce::report::PauseReport;
use crate::analyze::roce::report::inputs::{InputReport, LiveReport};
use crate::analyze::{Analyzer, assemble};
use crate::capture::{CaptureInfo, Compression, Container, Frame as InputFrame, PER_INTERFACE};
use crate::cli::CaptureArgs;
use crate::decode::{DecodedFrame, Decoder};
use crate::display_filter::Selection;
use crate::output::report::text;
use crate::pipeline::{self, Stage, Step};
use interface::{Interface, OpenError};
use rotation::RotatingWriter;
use summaries::Counters;
use summaries::{Rolling, write_interval};

/// The default filter: RoCEv2, RoCEv1, MAC control, GRE (ERSPAN) and VXLAN, with or without
/// one VLAN tag (BPF's `vlan` moves the offsets of what follows it).
pub const DEFAULT_FILTER: &str = "udp port 4791 or ether proto 0x8915 or ether proto 0x8808 or ip proto 47 \
or udp port 4789 or (vlan and (udp port 4791 or ether proto 0x8915 or ip proto 47 or udp port 4789))";

pub fn run(args: &CaptureArgs) -> Outcome {
    let mut config = args.analysis.config().map_err(Failure::Usage)?;
    // live frames cannot be read twice to learn whether each has a hardware time: those that
    // have one are on it
    config.time_source = args.times.time_source;
    let selection = Selection::new(args.display_filter.as_deref()).map_err(Failure::Usage)?;
    let filter = args.filter.as_deref().unwrap_or(DEFAULT_FILTER);
    let mut interface = Interface::open(args, filter).map_err(|e| match e {
        OpenError::Device(m) => Failure::NoInput(m),
        OpenError::Filter(m) => Failure::Usage(m),
    })?;
    let link_type = interface.link_type.0;
    let writer = args.write.as_deref().map(|path| {
        let max_bytes = args.file_size.map(|mb| mb.saturating_mul(1_000_000));
        let max_age = args.rotate_seconds.map(|s| i64::try_from(s.saturating_mul(1_000_000_000)).unwrap_or(i64::MAX));
        RotatingWriter::new(path, link_type, args.snaplen, max_bytes, max_age).naming(&args.interface)
    });
    let stop = Arc::new(AtomicBool::new(false));
    let on_interrupt = Arc::clone(&stop);
    if let Err(e) = ctrlc::set_handler(move || on_interrupt.store(true, Ordering::SeqCst)) {
        eprintln!("rocescope: cannot handle Ctrl-C: {e}");
    }
    let nic_start = beside::snapshot_counters(args, "before")?;
    beside::snapshot_qps(args, "before")?;
    // like tcpdump's "listening on": the capture is open from here on
    eprintln!("rocescope: capturing on {} (link type {link_type}), filter: {filter}", args.interface);
    let metrics = args.metrics.as_deref().map(metrics::serve).transpose().map_err(Failure::Usage)?;
    let place = rdma_port(&args.sysfs_root, &args.interface, args.counters.as_deref());
    let mut live = Live {
        args,
        selection,
        analyzer: Analyzer::new(config),
        writer,
        rolling: Rolling::new(),
        out: BufWriter::new(io::stdout().lock()),
        stop,
        stats: Rc::clone(&interface.stats),
        metrics,
        nic_start,
        place,
    };
    live.export(&Counters::default(), &[]);
    let decoder = args.analysis.ports.decoder().with_time_source(config.time_source);
    let ran = pipeline::run(&mut interface, &decoder, &mut live, &|_| {});
    ran.result.map_err(|e| Failure::Output(format!("cannot write the capture file: {e}")))?;
    if let Some(failure) = interface.failure.take() {
        return Err(Failure::NoInput(failure));
    }
    let stats = interface.read_stats();
    beside::snapshot_counters(args, "after")?;
    beside::snapshot_qps(args, "after")?;
    let Live { mut analyzer, writer, mut out, .. } = live;
    let container =
        if writer.as_ref().is_some_and(RotatingWriter::is_pcapng) { Container::Pcapng } else { Container::Pcap };
    let files = writer
        .map(RotatingWriter::finish)
        .transpose()
        .map_err(|e| Failure::Output(format!("cannot write the capture file: {e}")))?
        .unwrap_or_default();
    analyzer.finish();
    let nanos = interface.nanos();
    // the files as `analyze` of them describes them: pcap with nanosecond timestamps, or pcapng
    let ts_resolution = if container == Container::Pcapng { PER_INTERFACE } else { "ns" };
    let written = CaptureInfo {
        container,
        compression: Compression::None,
        ts_resolution,
        big_endian: false,
        snaplen: args.snaplen,
        // a pcapng file names the device it was captured on; a pcap file cannot
        interfaces: if container == Container::Pcapng { vec![args.interface.clone()] } else { Vec::new() },
    };
    let inputs = if files.is_empty() {
        vec![InputReport::live(&args.interface, nanos, args.snaplen)]
    } else {
        files.iter().map(|f| InputReport::of_capture(&f.display().to_string(), &written, None)).collect()
    };
    final_report(&mut out, &assemble::report(&analyzer, inputs, Some(stats)), args)
}

/// The live capture as a pipeline stage: each frame into the capture file and the analysis,
/// a rolling summary every interval, and the end at Ctrl-C, `--count` or `--duration`.
struct Live<'a> {
    args: &'a CaptureArgs,
    selection: Selection,
    analyzer: Analyzer,
    writer: Option<RotatingWriter>,
    rolling: Rolling,
    out: BufWriter<io::StdoutLock<'static>>,
    stop: Arc<AtomicBool>,
    stats: Rc<Cell<LiveReport>>,
    /// The Prometheus exposition, when served.
    metrics: Option<Arc<Mutex<String>>>,
    /// With `--counters DEV`: the device's counters when the capture began.
    nic_start: Option<Snapshot>,
    /// The interface's RDMA device and port, which label the exported series.
    place: RdmaPort,
}

impl Live<'_> {
    fn export(&self, counters: &Counters, pauses: &[PauseReport]) {
        if let Some(text) = &self.metrics
            && let Ok(mut text) = text.lock()
        {
            *text = metrics::exposition(&self.place, counters, pauses, self.nic_growth().as_ref());
        }
    }

    /// With `--counters DEV`: how much each of the device's counters grew since the capture
    /// began (none that cannot be read now).
    fn nic_growth(&self) -> Option<metrics::NicGrowth> {
        let (start, device) = (self.nic_start.as_ref()?, self.args.counters.as_deref()?);
        let now = crate::analyze::counters::parse(device, &beside::read_counters(self.args, device).ok()?).ok()?;
        let grown = start
            .counters
            .iter()
            .filter_map(|(name, before)| Some((name.clone(), now.get(name)?.checked_sub(*before)?)))
            .collect();
        Some(metrics::NicGrowth { counters: grown })
    }

    /// Stops at Ctrl-C or `--duration`; writes the rolling summary when one is due (a closed
    /// standard output stops the capture quietly).
    fn tick(&mut self) -> Step {
        let args = self.args;
        if self.stop.load(Ordering::SeqCst) || args.duration.is_some_and(|d| self.rolling.started.elapsed() >= d) {
            return Step::Stop;
        }
        if self.rolling.due(args.interval) {
            // a live capture cannot wait for its first RoCE frames to decide on doubling
            self.analyzer.decide_doubling();
            let interval = self.rolling.next(&self.analyzer, self.stats.get());
            self.export(&interval.total, &interval.pauses);
            if write_interval(&mut self.out, &interval, args.json).is_err() {
                return Step::Stop;
            }
        }
        Step::Continue
    }
}

impl Stage for Live<'_> {
    fn frame(&mut self, frame: &InputFrame<'_>, packet: &DecodedFrame<'_>, _: &Decoder) -> io::Result<Step> {
        if let Some(w) = self.writer.as_mut() {
            w.write(frame.record.ts_ns, frame.record.data)?;
        }
        if self.selection.keeps(frame.number, packet) {
            self.analyzer.observe(&FrameSummary::of(frame.number, packet));
        }
        if self.args.count.is_some_and(|n| frame.number >= n) {
            return Ok(Step::Stop);
        }
        Ok(self.tick())
    }

    fn idle(&mut self) -> io::Result<Step> {
        Ok(self.tick())
    }

    fn finish(&mut self, _: &Decoder) -> io::Result<()> {
        Ok(())
    }
}

/// Prints the report at the end of a capture; the exit status follows `--fail-on`.
fn final_report(out: &mut impl Write, report: &Report, args: &CaptureArgs) -> Outcome {
    let result = if args.json {
        serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::from).and_then(|()| writeln!(out))
    } else {
        writeln!(out).and_then(|()| text::write_summary(&mut *out, report, false, text::stdout_width()))
    };
    written(result.and_then(|()| out.flush()), |e| format!("cannot write the report: {e}"))?;
    fail_on(&report.findings, args.fail_on)
}
