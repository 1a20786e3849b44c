//! `rocescope capture`: frames from a live interface (libpcap) through the analysis of
//! `analyze`, with a rolling summary every interval, an optional capture file, and the full
//! report at the end. Packets libpcap reports lost are counted in every summary and in the
//! report's `live` section, since a lost packet looks like a PSN gap.

mod metrics;
mod rotation;

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use pcap::{Active, Capture, PacketHeader, Precision};
use serde::Serialize;

use super::exit::{Failure, Outcome, fail_on, written};
use crate::analyze::Analyzer;
use crate::analyze::assemble;
use crate::analyze::frame::FrameSummary;
use crate::analyze::report::{InputReport, LiveReport, Report};
use crate::capture::{LinkType, Record};
use crate::cli::CaptureArgs;
use crate::decode::Decoder;
use crate::display_filter::Selection;
use crate::output::analysis_text;
use rotation::RotatingWriter;

/// The default filter: RoCEv2, RoCEv1, MAC control, GRE (ERSPAN) and VXLAN, with or without
/// one VLAN tag (BPF's `vlan` moves the offsets of what follows it).
pub const DEFAULT_FILTER: &str = "udp port 4791 or ether proto 0x8915 or ether proto 0x8808 or ip proto 47 \
or udp port 4789 or (vlan and (udp port 4791 or ether proto 0x8915 or ip proto 47 or udp port 4789))";

/// libpcap's buffer timeout: frames reach the loop at most this late.
const READ_TIMEOUT_MS: i32 = 10;
/// The kernel buffer for frames not yet read.
const BUFFER_BYTES: i32 = 64 << 20;
/// The pause of the (non-blocking) read loop when no frame is waiting.
const IDLE_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

/// Counters of the rolling summary, cumulative since the start.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    pub frames: u64,
    pub bytes: u64,
    pub roce_packets: u64,
    pub ce_marks: u64,
    pub cnps: u64,
    pub naks: u64,
    pub rnr_naks: u64,
    pub out_of_sequence: u64,
    pub missing_psns: u64,
    pub resent: u64,
    pub pfc_frames: u64,
    pub pause_frames: u64,
    pub icrc_bad: u64,
    pub kernel_dropped: u64,
    pub interface_dropped: u64,
}

impl Counters {
    fn of(a: &Analyzer, live: LiveReport) -> Counters {
        let t = &a.totals;
        let mut c = Counters {
            frames: t.frames.frames,
            bytes: t.frames.bytes,
            roce_packets: t.frames.roce_packets,
            ce_marks: t.ecn[3],
            cnps: t.cnps,
            pfc_frames: t.frames.pfc_frames,
            pause_frames: t.frames.pause_frames,
            icrc_bad: t.icrc[1],
            kernel_dropped: live.kernel_dropped,
            interface_dropped: live.interface_dropped,
            ..Counters::default()
        };
        for f in &a.flows.flows {
            c.naks += f.naks_psn_seq_err + f.naks_other;
            c.rnr_naks += f.rnr_naks;
            for space in [&f.requests.seq, &f.responses.seq] {
                c.out_of_sequence += space.gaps;
                c.missing_psns += space.missing_psns;
                c.resent += space.retransmitted;
            }
        }
        c
    }

    fn since(&self, before: &Counters) -> Counters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        Counters {
            frames: d(self.frames, before.frames),
            bytes: d(self.bytes, before.bytes),
            roce_packets: d(self.roce_packets, before.roce_packets),
            ce_marks: d(self.ce_marks, before.ce_marks),
            cnps: d(self.cnps, before.cnps),
            naks: d(self.naks, before.naks),
            rnr_naks: d(self.rnr_naks, before.rnr_naks),
            out_of_sequence: d(self.out_of_sequence, before.out_of_sequence),
            missing_psns: d(self.missing_psns, before.missing_psns),
            resent: d(self.resent, before.resent),
            pfc_frames: d(self.pfc_frames, before.pfc_frames),
            pause_frames: d(self.pause_frames, before.pause_frames),
            icrc_bad: d(self.icrc_bad, before.icrc_bad),
            kernel_dropped: d(self.kernel_dropped, before.kernel_dropped),
            interface_dropped: d(self.interface_dropped, before.interface_dropped),
        }
    }
}

/// One rolling summary, as `--json` writes it.
#[derive(Debug, Serialize)]
struct Interval {
    interval_s: f64,
    elapsed_s: f64,
    /// What happened during the interval.
    delta: Counters,
    /// Since the start.
    total: Counters,
    flows: usize,
    /// Finding codes first raised during the interval.
    new_findings: Vec<&'static str>,
}

fn write_interval(out: &mut impl Write, i: &Interval, json: bool) -> io::Result<()> {
    if json {
        serde_json::to_writer(&mut *out, i)?;
        writeln!(out)?;
    } else {
        let d = &i.delta;
        let gbps = d.bytes as f64 * 8.0 / i.interval_s.max(1e-9) / 1e9;
        write!(
            out,
            "{:>8.1}s  frames {:>8}  RoCE {:>8} ({gbps:.2} Gb/s)  CE {:>5}  CNP {:>5}  NAK {:>4}  RNR {:>4}  gaps {:>4}  resent {:>5}  PFC {:>5}  PAUSE {:>4}  bad ICRC {:>3}  lost {}/{}  flows {}",
            i.elapsed_s,
            d.frames,
            d.roce_packets,
            d.ce_marks,
            d.cnps,
            d.naks,
            d.rnr_naks,
            d.out_of_sequence,
            d.resent,
            d.pfc_frames,
            d.pause_frames,
            d.icrc_bad,
            d.kernel_dropped,
            d.interface_dropped,
            i.flows
        )?;
        if !i.new_findings.is_empty() {
            write!(out, "  new: {}", i.new_findings.join(", "))?;
        }
        writeln!(out)?;
    }
    out.flush()
}

/// The state of the rolling summaries.
struct Rolling {
    started: Instant,
    last: Instant,
    last_counters: Counters,
    findings_seen: Vec<&'static str>,
}

impl Rolling {
    fn new() -> Self {
        let now = Instant::now();
        Rolling { started: now, last: now, last_counters: Counters::default(), findings_seen: Vec::new() }
    }

    fn due(&self, every: std::time::Duration) -> bool {
        self.last.elapsed() >= every
    }

    /// The summary of the interval that ends now; the findings first raised in it are those
    /// of a report of everything so far that earlier summaries did not have.
    fn next(&mut self, analyzer: &Analyzer, live: LiveReport) -> Interval {
        let now = Counters::of(analyzer, live);
        let report = assemble::report(analyzer, Vec::new(), None);
        let new_findings: Vec<&'static str> =
            report.findings.iter().map(|f| f.code).filter(|c| !self.findings_seen.contains(c)).collect();
        self.findings_seen.extend(&new_findings);
        let interval = Interval {
            interval_s: self.last.elapsed().as_secs_f64(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
            delta: now.since(&self.last_counters),
            total: now,
            flows: analyzer.flows.flows.len(),
            new_findings,
        };
        (self.last, self.last_counters) = (Instant::now(), now);
        interval
    }
}

/// Opens the interface, with nanosecond timestamps where the system has them.
fn open(args: &CaptureArgs) -> Result<(Capture<Active>, bool), String> {
    let attempt = |nanos: bool| {
        let inactive = Capture::from_device(args.interface.as_str())?
            .promisc(!args.no_promisc)
            .snaplen(i32::try_from(args.snaplen).unwrap_or(i32::MAX))
            .timeout(READ_TIMEOUT_MS)
            .buffer_size(BUFFER_BYTES);
        let inactive = if nanos { inactive.precision(Precision::Nano) } else { inactive };
        // non-blocking, so that the loop sees Ctrl-C, --duration and the summary interval in
        // time whatever the traffic
        inactive.open()?.setnonblock()
    };
    match attempt(true).map(|c| (c, true)).or_else(|_| attempt(false).map(|c| (c, false))) {
        Ok(opened) => Ok(opened),
        Err(e) => Err(open_error(&args.interface, &e)),
    }
}

/// A one-line explanation of why an interface cannot be opened.
fn open_error(interface: &str, e: &pcap::Error) -> String {
    let text = e.to_string();
    let lower = text.to_lowercase();
    if lower.contains("permission") || lower.contains("not permitted") {
        format!(
            "cannot capture on {interface}: permission denied; run as root or give rocescope the CAP_NET_RAW and \
             CAP_NET_ADMIN capabilities (setcap cap_net_raw,cap_net_admin=eip $(command -v rocescope))"
        )
    } else if lower.contains("no such device") || lower.contains("doesn't exist") || lower.contains("not found") {
        format!("cannot capture on {interface}: no such interface (see `ip link`)")
    } else {
        format!("cannot capture on {interface}: {text}")
    }
}

pub fn run(args: &CaptureArgs) -> Outcome {
    let config = args.analysis.config().map_err(Failure::Usage)?;
    let mut selection = Selection::new(args.display_filter.as_deref()).map_err(Failure::Usage)?;
    let (mut cap, nanos) = open(args).map_err(Failure::NoInput)?;
    let filter = args.filter.as_deref().unwrap_or(DEFAULT_FILTER);
    cap.filter(filter, true).map_err(|e| Failure::Usage(format!("the filter '{filter}' is not valid: {e}")))?;
    let link_type = u32::try_from(cap.get_datalink().0).unwrap_or(0);
    let mut writer = args.write.as_deref().map(|path| {
        let max_bytes = args.file_size.map(|mb| mb.saturating_mul(1_000_000));
        let max_age = args.rotate_seconds.map(|s| i64::try_from(s.saturating_mul(1_000_000_000)).unwrap_or(i64::MAX));
        RotatingWriter::new(path, link_type, args.snaplen, max_bytes, max_age)
    });
    let stop = Arc::new(AtomicBool::new(false));
    let on_interrupt = Arc::clone(&stop);
    if let Err(e) = ctrlc::set_handler(move || on_interrupt.store(true, Ordering::SeqCst)) {
        eprintln!("rocescope: cannot handle Ctrl-C: {e}");
    }

    // like tcpdump's "listening on": the capture is open from here on
    eprintln!("rocescope: capturing on {} (link type {link_type}), filter: {filter}", args.interface);
    let exported = args.metrics.as_deref().map(metrics::serve).transpose().map_err(Failure::Usage)?;
    let export = |counters: &Counters| {
        if let Some(text) = &exported
            && let Ok(mut text) = text.lock()
        {
            *text = metrics::exposition(&args.interface, counters);
        }
    };
    export(&Counters::default());
    let decoder = Decoder::new(&args.analysis.roce_ports);
    let mut analyzer = Analyzer::new(config);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut rolling = Rolling::new();
    let mut number = 0u64;
    let mut failed = None;
    let stats = |cap: &mut Capture<Active>| {
        cap.stats().map_or(LiveReport::default(), |s| LiveReport {
            interface_received: u64::from(s.received),
            kernel_dropped: u64::from(s.dropped),
            interface_dropped: u64::from(s.if_dropped),
        })
    };
    loop {
        if stop.load(Ordering::SeqCst)
            || args.count.is_some_and(|n| number >= n)
            || args.duration.is_some_and(|d| rolling.started.elapsed() >= d)
        {
            break;
        }
        match cap.next_packet() {
            Ok(packet) => {
                number += 1;
                let ts_ns = timestamp_ns(packet.header, nanos);
                if let Some(w) = writer.as_mut()
                    && let Err(e) = w.write(ts_ns, packet.data)
                {
                    failed = Some(Failure::Output(format!("cannot write the capture file: {e}")));
                    break;
                }
                let record = Record {
                    ts_ns,
                    orig_len: packet.header.len,
                    data: packet.data,
                    link_type: LinkType(link_type),
                    offset: 0,
                };
                let decoded = decoder.decode(&record);
                if selection.keeps(number, &decoded) {
                    analyzer.observe(&FrameSummary::of(number, &decoded));
                }
            }
            Err(pcap::Error::TimeoutExpired) => std::thread::sleep(IDLE_PAUSE),
            Err(e) => {
                failed = Some(Failure::NoInput(format!("capture on {} failed: {e}", args.interface)));
                break;
            }
        }
        if rolling.due(args.interval) {
            // a live capture cannot wait for its first RoCE frames to decide on doubling
            analyzer.decide_doubling();
            let interval = rolling.next(&analyzer, stats(&mut cap));
            export(&interval.total);
            if write_interval(&mut out, &interval, args.json).is_err() {
                break; // standard output closed: stop quietly
            }
        }
    }
    let live = stats(&mut cap);
    let container = if writer.as_ref().is_some_and(RotatingWriter::is_pcapng) { "pcapng" } else { "pcap" };
    let files = writer
        .map(RotatingWriter::finish)
        .transpose()
        .map_err(|e| Failure::Output(format!("cannot write the capture file: {e}")))?
        .unwrap_or_default();
    if let Some(failure) = failed {
        return Err(failure);
    }
    analyzer.finish();
    let inputs = if files.is_empty() {
        vec![input(&format!("{} (live)", args.interface), "live", nanos, args.snaplen)]
    } else {
        files.iter().map(|f| input(&f.display().to_string(), container, true, args.snaplen)).collect()
    };
    final_report(&mut out, &assemble::report(&analyzer, inputs, Some(live)), args)
}

/// Prints the report at the end of a capture; the exit status follows `--fail-on`.
fn final_report(out: &mut impl Write, report: &Report, args: &CaptureArgs) -> Outcome {
    let result = if args.json {
        serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::from).and_then(|()| writeln!(out))
    } else {
        writeln!(out).and_then(|()| analysis_text::write_summary(&mut *out, report, false))
    };
    written(result.and_then(|()| out.flush()), |e| format!("cannot write the report: {e}"))?;
    fail_on(report, args.fail_on)
}

/// A libpcap timestamp in nanoseconds; the fraction is in nanoseconds when the capture was
/// opened with nanosecond precision, else in microseconds.
// time_t and suseconds_t are not i64 on every target
#[allow(clippy::useless_conversion)]
fn timestamp_ns(header: &PacketHeader, nanos: bool) -> i64 {
    let (sec, frac) = (i64::from(header.ts.tv_sec), i64::from(header.ts.tv_usec));
    sec.saturating_mul(1_000_000_000).saturating_add(if nanos { frac } else { frac.saturating_mul(1_000) })
}

/// How a capture file written here is described, as `analyze` describes it when reading it.
fn input(file: &str, container: &'static str, nanos: bool, snaplen: u32) -> InputReport {
    InputReport {
        file: file.to_string(),
        container,
        compression: "none",
        ts_resolution: if nanos { "ns" } else { "us" },
        byte_order: "little",
        snaplen,
        damage: None,
    }
}
