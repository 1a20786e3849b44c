//! The rolling summaries of a live capture: counters since the start and since the last
//! summary, the findings first raised in each interval.

use std::io::{self, Write};
use std::time::Instant;

use serde::Serialize;

use crate::analyze::report::Report;
use crate::analyze::roce::report::PauseReport;
use crate::analyze::roce::report::inputs::LiveReport;
use crate::analyze::{Analyzer, assemble};

rocescope_engine::counters! {
    /// Counters of the rolling summary, cumulative since the start.
    pub struct Counters {
        frames,
        bytes,
        roce_packets,
        ce_marks,
        cnps,
        naks,
        rnr_naks,
        out_of_sequence,
        missing_psns,
        resent,
        pfc_frames,
        pause_frames,
        icrc_bad,
        kernel_dropped,
        interface_dropped,
    }
}

impl Counters {
    /// The counters of a report of everything so far, with libpcap's.
    fn of(report: &Report, live: LiveReport) -> Counters {
        let t = &report.roce.totals;
        let mut c = Counters {
            frames: t.frames,
            bytes: t.bytes,
            roce_packets: t.roce_packets,
            ce_marks: report.roce.ecn.ce,
            cnps: report.roce.cnps,
            pfc_frames: t.pfc_frames,
            pause_frames: t.pause_frames,
            icrc_bad: report.roce.icrc.bad,
            kernel_dropped: live.kernel_dropped,
            interface_dropped: live.interface_dropped,
            ..Counters::default()
        };
        for f in &report.roce.flows {
            c.naks += f.counts.naks_psn_seq_err + f.counts.naks_other;
            c.rnr_naks += f.counts.rnr_naks;
            c.out_of_sequence += f.sequence.gaps;
            c.missing_psns += f.sequence.missing_psns;
            c.resent += f.sequence.retransmitted;
        }
        c
    }
}

/// One rolling summary, as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct Interval {
    interval_s: f64,
    elapsed_s: f64,
    /// What happened during the interval.
    delta: Counters,
    /// Since the start.
    pub total: Counters,
    flows: usize,
    /// Finding codes first raised during the interval.
    new_findings: Vec<&'static str>,
    /// The PFC and PAUSE sources since the start (`--metrics` exposes them per priority).
    #[serde(skip)]
    pub pauses: Vec<PauseReport>,
}

pub fn write_interval(out: &mut impl Write, i: &Interval, json: bool) -> io::Result<()> {
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
pub struct Rolling {
    pub started: Instant,
    last: Instant,
    last_counters: Counters,
    findings_seen: Vec<&'static str>,
}

impl Rolling {
    pub fn new() -> Self {
        let now = Instant::now();
        Rolling { started: now, last: now, last_counters: Counters::default(), findings_seen: Vec::new() }
    }

    pub fn due(&self, every: std::time::Duration) -> bool {
        self.last.elapsed() >= every
    }

    /// The summary of the interval that ends now; the findings first raised in it are those
    /// of a report of everything so far that earlier summaries did not have.
    pub fn next(&mut self, analyzer: &Analyzer, live: LiveReport) -> Interval {
        let report = assemble::report(analyzer, Vec::new(), None);
        let now = Counters::of(&report, live);
        let new_findings: Vec<&'static str> =
            report.findings.iter().map(|f| f.code).filter(|c| !self.findings_seen.contains(c)).collect();
        self.findings_seen.extend(&new_findings);
        let interval = Interval {
            interval_s: self.last.elapsed().as_secs_f64(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
            delta: now.since(&self.last_counters),
            total: now,
            flows: report.roce.flows.len(),
            new_findings,
            pauses: report.roce.pfc.iter().chain(&report.roce.pause).cloned().collect(),
        };
        (self.last, self.last_counters) = (Instant::now(), now);
        interval
    }
}
