//! The report as a Chrome trace (`analyze --trace`), in the Trace Event Format that Perfetto
//! and chrome://tracing load: a JSON object whose `traceEvents` are complete spans (`ph` "X",
//! `ts` and `dur` in µs), instants ("i", thread-scoped: `s` "t"), counters ("C", one value per
//! series in `args`) and the names of processes and threads ("M"); `otherData` holds the
//! trace's metadata ("Trace Event Format", Google, the JSON Object Format).
//!
//! Times are µs of capture time since the capture's first frame, whose absolute time
//! `otherData` gives, so that the trace can be shifted onto a profiler's. The capture is one
//! process; each flow is a thread with its traffic as spans and its gaps and NAKs as
//! instants, beside it threads of its retransmit episodes and CNP bursts, a thread per pause
//! source and priority (and one per priority two or more sources paused), a thread per UET PDC, and counters of the capture-wide series. What the report
//! holds no time for is left out (docs/trace.md).

use std::collections::{BTreeMap, HashMap};

use rocescope_parsers::ethernet::MacAddr;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::analyze::id::{FlowId, Space};
use crate::analyze::report::Report;
use crate::analyze::roce::flow::episodes::Episode;
use crate::analyze::roce::report::FlowReport;
use crate::analyze::roce::report::chart_data::ChartData;
use crate::analyze::roce::wide::pfc::{Closed, PAUSE_CHANNEL, PausePeriod};
use crate::analyze::timeline::Timeline;
use crate::analyze::trace::{EventKind, FlowTrace};
use crate::analyze::uet::PdcKey;
use crate::analyze::{CE_MARKS, CNPS, ROCE_BYTES};

/// The one process: the capture (its taps' frames on one clock).
const CAPTURE_PID: u32 = 1;

/// The thread of a process's counters (Chrome draws a process's counters as tracks of their
/// own, whatever their thread).
const COUNTER_TID: u32 = 0;

/// One trace event; fields a phase has no use for are left out.
#[derive(Debug, Serialize)]
struct TraceEvent {
    name: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    cat: &'static str,
    ph: &'static str,
    /// µs since the capture's first frame.
    ts: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    pid: u32,
    tid: u32,
    /// An instant's scope: its thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    #[serde(skip_serializing_if = "Value::is_null")]
    args: Value,
}

/// The whole file: the JSON Object Format.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TraceFile {
    trace_events: Vec<TraceEvent>,
    display_time_unit: &'static str,
    other_data: Value,
}

/// The events written so far, and the next thread's id.
struct Trace {
    /// The capture's first frame, ns since the Unix epoch: time 0 of the trace.
    origin_ns: i64,
    events: Vec<TraceEvent>,
    next_tid: u32,
}

/// The report as a Chrome trace, a JSON document ending in a newline.
pub fn render(report: &Report) -> String {
    let origin_ns = report.roce.capture.first_ts_ns.unwrap_or(0);
    let mut trace = Trace { origin_ns, events: Vec::new(), next_tid: COUNTER_TID + 1 };
    trace.process_name(report);
    let charts = &report.roce.charts;
    flows(&mut trace, report, charts);
    pauses(&mut trace, report, charts);
    uet_pdcs(&mut trace, report, charts);
    counters(&mut trace, charts);
    let file = TraceFile { trace_events: trace.events, display_time_unit: "ns", other_data: other_data(report) };
    // a tree of strings, numbers and maps: serialising it cannot fail
    let mut text = serde_json::to_string(&file).unwrap_or_default();
    text.push('\n');
    text
}

/// The trace's metadata: the absolute time of its time 0, as RFC 3339 (UTC) and as ns since
/// the Unix epoch (the form a PyTorch profiler trace's `baseTimeNanoseconds` takes).
fn other_data(report: &Report) -> Value {
    let first = report.roce.capture.first_ts_ns;
    let rfc3339 = first.and_then(|ns| u64::try_from(ns).ok()).map(|ns| {
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns);
        humantime::format_rfc3339_nanos(time).to_string()
    });
    json!({
        "generator": format!("{} {}", report.tool.name, report.tool.version),
        "inputs": report.roce.inputs.iter().map(|i| i.file.as_str()).collect::<Vec<_>>(),
        "time_origin": "the capture's first frame",
        "first_frame_time": rfc3339,
        "first_frame_epoch_ns": first,
    })
}

impl Trace {
    /// µs since the capture's first frame.
    fn us(&self, ts_ns: i64) -> f64 {
        ts_ns.saturating_sub(self.origin_ns) as f64 / 1e3
    }

    /// An event of phase `ph` at `ts_ns`, with no category, duration or scope yet.
    fn event(&self, name: String, ph: &'static str, tid: u32, ts_ns: i64, args: Value) -> TraceEvent {
        TraceEvent { name, cat: "", ph, ts: self.us(ts_ns), dur: None, pid: CAPTURE_PID, tid, s: None, args }
    }

    fn push(&mut self, name: String, ph: &'static str, tid: u32, ts_ns: i64, args: Value) {
        let event = self.event(name, ph, tid, ts_ns, args);
        self.events.push(event);
    }

    /// Names the process after the capture's files.
    fn process_name(&mut self, report: &Report) {
        let files: Vec<&str> = report.roce.inputs.iter().map(|i| i.file.as_str()).collect();
        let name = if files.is_empty() { "capture".to_string() } else { format!("capture {}", files.join(", ")) };
        self.push("process_name".into(), "M", COUNTER_TID, self.origin_ns, json!({ "name": name }));
    }

    /// A new thread named `name`, drawn in the order threads are made.
    fn thread(&mut self, name: String) -> u32 {
        let tid = self.next_tid;
        self.next_tid += 1;
        self.push("thread_name".into(), "M", tid, self.origin_ns, json!({ "name": name }));
        self.push("thread_sort_index".into(), "M", tid, self.origin_ns, json!({ "sort_index": tid }));
        tid
    }

    /// A complete span from `from_ns` to `to_ns` (none shorter than nothing).
    fn span(&mut self, tid: u32, cat: &'static str, name: String, (from_ns, to_ns): (i64, i64), args: Value) {
        let dur = to_ns.saturating_sub(from_ns).max(0) as f64 / 1e3;
        let event = self.event(name, "X", tid, from_ns, args);
        self.events.push(TraceEvent { cat, dur: Some(dur), ..event });
    }

    /// An instant on thread `tid`.
    fn instant(&mut self, tid: u32, cat: &'static str, name: String, ts_ns: i64, args: Value) {
        let event = self.event(name, "i", tid, ts_ns, args);
        self.events.push(TraceEvent { cat, s: Some("t"), ..event });
    }

    /// A counter's values at `ts_ns`, a series each.
    fn counter(&mut self, name: &str, ts_ns: i64, values: Map<String, Value>) {
        self.push(name.to_string(), "C", COUNTER_TID, ts_ns, Value::Object(values));
    }
}

/// A thread per flow with its traffic, gaps and NAKs; beside it, where it has them, a thread
/// of its retransmit episodes per PSN space and one of the CNP bursts addressed to it.
fn flows(trace: &mut Trace, report: &Report, charts: &ChartData) {
    // keyed by the space's name: a flow's episodes of each PSN space
    let mut episodes: HashMap<(FlowId, &str), Vec<&Episode>> = HashMap::new();
    for e in &report.roce.retransmit_episodes {
        episodes.entry((e.flow, e.space.name())).or_default().push(e);
    }
    for f in &report.roce.flows {
        let tid = trace.thread(f.label());
        match charts.trace(f.id) {
            Some(t) => flow_events(trace, tid, f, t),
            None => trace.span(
                tid,
                "traffic",
                "traffic".into(),
                (f.first_ts_ns, f.last_ts_ns),
                json!({ "timeline": "not kept" }),
            ),
        }
        for space in [Space::Requests, Space::Responses] {
            if let Some(list) = episodes.get(&(f.id, space.name())) {
                episode_thread(trace, f, space, list);
            }
        }
        cnp_bursts(trace, report, f);
    }
}

/// A traced flow's traffic (the runs of its throughput timeline's bins that carried bytes,
/// within its first and last frames), its gaps and the NAKs it carried.
fn flow_events(trace: &mut Trace, tid: u32, f: &FlowReport, t: &FlowTrace) {
    for (from_ns, to_ns, bytes) in busy_runs(&t.bytes) {
        let within = (from_ns.max(f.first_ts_ns), to_ns.min(f.last_ts_ns));
        trace.span(tid, "traffic", "traffic".into(), within, json!({ "bytes": bytes }));
    }
    for gap in &t.gaps {
        let count = match gap.kind {
            EventKind::Gap { count } => count,
            EventKind::Nak { .. } => 0,
        };
        trace.instant(tid, "gap", "gap".into(), gap.ts_ns, json!({ "first_missing_psn": gap.psn, "psns": count }));
    }
    for nak in &t.naks {
        let rnr = matches!(nak.kind, EventKind::Nak { rnr: true });
        let name = if rnr { "RNR NAK" } else { "NAK" };
        trace.instant(tid, "nak", name.into(), nak.ts_ns, json!({ "psn": nak.psn }));
    }
}

/// The runs of consecutive bins of channel 0 of `timeline` with a value: their start, their
/// end and the sum of their values.
fn busy_runs(timeline: &Timeline) -> Vec<(i64, i64, u64)> {
    let width = timeline.width_ns();
    let mut runs: Vec<(i64, i64, u64)> = Vec::new();
    let mut extends = false;
    for (start, value) in timeline.series(0) {
        match runs.last_mut() {
            Some(run) if extends && value > 0 => {
                run.1 = start.saturating_add(width);
                run.2 += value;
            }
            _ if value > 0 => runs.push((start, start.saturating_add(width), value)),
            _ => {}
        }
        extends = value > 0;
    }
    runs
}

/// A thread of the retransmit episodes of one PSN space of `f`: each from its first resent
/// frame to its last.
fn episode_thread(trace: &mut Trace, f: &FlowReport, space: Space, episodes: &[&Episode]) {
    let tid = trace.thread(format!("{} retransmits ({})", f.label(), space.name()));
    for e in episodes {
        let args = json!({
            "trigger": e.trigger,
            "pattern": e.pattern,
            "first_psn": e.first_psn,
            "last_psn": e.last_psn,
            "packets": e.packets,
            "start_frame": e.start_frame,
            "end_frame": e.end_frame,
            "trigger_frame": e.trigger_frame,
        });
        let name = format!("retransmit ({})", e.trigger.name());
        trace.span(tid, "retransmit", name, (e.start_ts_ns, e.end_ts_ns), args);
    }
}

/// A thread of the CNP bursts addressed to `f` that the report kept, each from its first CNP
/// to its last.
fn cnp_bursts(trace: &mut Trace, report: &Report, f: &FlowReport) {
    let mut bursts = report.roce.congestion.cnp_bursts.iter().filter(|b| b.flow == f.id).peekable();
    if bursts.peek().is_none() {
        return;
    }
    let tid = trace.thread(format!("{} CNP bursts", f.label()));
    for b in bursts {
        let args = json!({
            "cnps": b.cnps,
            "first_frame": b.first_frame,
            "rate_before_bps": b.rate_before_bps,
            "rate_after_bps": b.rate_after_bps,
            "reaction_ratio": b.reaction_ratio,
            "outcome": b.outcome,
        });
        trace.span(tid, "cnp", "CNP burst".into(), (b.start_ns, b.end_ns), args);
    }
}

/// `PFC priority 3` or `PAUSE (802.3x)`.
fn channel_name(channel: usize) -> String {
    if channel == PAUSE_CHANNEL { "PAUSE (802.3x)".to_string() } else { format!("PFC priority {channel}") }
}

/// The pause periods the analysis kept, per channel and pausing MAC (the report's pause
/// source): each source's own periods, in time order.
type BySource<'a> = BTreeMap<(usize, MacAddr), Vec<&'a Closed>>;

/// Groups `periods` (in time order) by channel and source.
fn by_source(periods: &[PausePeriod]) -> BySource<'_> {
    let mut grouped = BySource::new();
    for p in periods {
        grouped.entry((usize::from(p.channel), p.source)).or_default().push(&p.period);
    }
    grouped
}

/// For each paused priority (and 802.3x PAUSE): where two or more sources paused it, a thread
/// of when any of them did, then a thread per source with its own pause periods.
fn pauses(trace: &mut Trace, report: &Report, charts: &ChartData) {
    let grouped = by_source(charts.pause_periods());
    for channel in 0..=PAUSE_CHANNEL {
        let sources: Vec<_> = grouped.iter().filter(|((c, _), _)| *c == channel).collect();
        if sources.len() > 1 {
            union_thread(trace, report, charts, channel);
        }
        for ((_, mac), periods) in sources {
            source_thread(trace, channel, *mac, periods);
        }
    }
}

/// A thread of `channel`'s pauses by `source`, `PFC priority 3 from 02:00:00:00:00:09`: a
/// span per period, from its first XOFF to the XON or the quanta's expiry.
fn source_thread(trace: &mut Trace, channel: usize, source: MacAddr, periods: &[&Closed]) {
    let tid = trace.thread(format!("{} from {source}", channel_name(channel)));
    for p in periods {
        let args = json!({ "first_xoff_frame": p.start_frame, "storm": p.storm });
        trace.span(tid, "pause", "paused".into(), (p.start_ns, p.end_ns), args);
    }
}

/// A thread of when any source paused `channel`: the union of the sources' pause periods,
/// each span naming the sources the report lists for the channel.
fn union_thread(trace: &mut Trace, report: &Report, charts: &ChartData, channel: usize) {
    let priority = (channel != PAUSE_CHANNEL).then_some(channel as u8);
    let sources: Vec<&str> = report
        .roce
        .pfc
        .iter()
        .chain(&report.roce.pause)
        .filter(|p| p.priority == priority)
        .map(|p| p.src_mac.as_str())
        .collect();
    let tid = trace.thread(format!("{} paused", channel_name(channel)));
    for &(from_ns, to_ns, first_xoff) in charts.pauses().intervals(channel) {
        let storm = charts.storms().iter().any(|s| s.0 == channel && s.1 >= from_ns && s.2 <= to_ns);
        let args = json!({ "first_xoff_frame": first_xoff, "storm": storm, "sources": sources });
        trace.span(tid, "pause", "paused".into(), (from_ns, to_ns), args);
    }
}

/// A thread per UET PDC the report traced: its first resends and its NACKs as instants (the
/// report keeps a sample of its packets, no timeline of its traffic).
fn uet_pdcs(trace: &mut Trace, report: &Report, charts: &ChartData) {
    let Some(uet) = &report.uet else { return };
    for p in &uet.pdcs {
        let Some(pdcid) = p.spdcid else { continue };
        let Some(t) = charts.uet_trace(&PdcKey { initiator: p.initiator, target: p.target, pdcid }) else { continue };
        let tid = trace.thread(format!("PDC {} → {} {pdcid}", p.initiator, p.target));
        for r in &t.resent {
            trace.instant(tid, "retransmit", "resend".into(), r.ts_ns, json!({ "psn": r.psn }));
        }
        for n in &t.naks {
            trace.instant(tid, "nak", "NACK".into(), n.ts_ns, json!({ "psn": n.psn }));
        }
    }
}

/// The capture-wide series as counters, each a rate over its timeline's bins: RoCE
/// throughput, CE marks and CNPs per second, and each paused priority's share of time.
fn counters(trace: &mut Trace, charts: &ChartData) {
    let per_second = |width_ns: i64| 1e9 / width_ns.max(1) as f64;
    let wide = charts.timeline();
    let rate = per_second(wide.width_ns());
    counter_track(trace, "throughput (bit/s)", wide, &[("RoCE".into(), ROCE_BYTES)], 8.0 * rate);
    counter_track(trace, "CE marks (/s)", wide, &[("CE marks".into(), CE_MARKS)], rate);
    counter_track(trace, "CNPs (/s)", wide, &[("CNPs".into(), CNPS)], rate);
    let paused = charts.paused();
    let channels: Vec<(String, usize)> = (0..=PAUSE_CHANNEL)
        .filter(|c| paused.series(*c).iter().any(|(_, ns)| *ns > 0))
        .map(|c| (channel_name(c), c))
        .collect();
    if !channels.is_empty() {
        counter_track(trace, "paused share", paused, &channels, 1.0 / paused.width_ns().max(1) as f64);
    }
}

/// A counter over the bins of `timeline`: a value per series (`channels`, each a name and its
/// channel) at each bin's start, the bin's sum times `scale`, back to 0 at the last bin's end.
fn counter_track(trace: &mut Trace, name: &str, timeline: &Timeline, channels: &[(String, usize)], scale: f64) {
    let series: Vec<(&String, Vec<(i64, u64)>)> = channels.iter().map(|(n, c)| (n, timeline.series(*c))).collect();
    let bins = series.first().map_or(0, |(_, s)| s.len());
    if series.iter().all(|(_, s)| s.iter().all(|(_, v)| *v == 0)) {
        return;
    }
    for bin in 0..bins {
        let Some(&(start, _)) = series.first().and_then(|(_, s)| s.get(bin)) else { continue };
        let values = series.iter().map(|(n, s)| {
            let value = s.get(bin).map_or(0.0, |(_, v)| *v as f64 * scale);
            ((*n).clone(), json!(value))
        });
        trace.counter(name, start, values.collect());
    }
    if let Some(&(last, _)) = series.first().and_then(|(_, s)| s.last()) {
        let zeros = series.iter().map(|(n, _)| ((*n).clone(), json!(0.0)));
        trace.counter(name, last.saturating_add(timeline.width_ns()), zeros.collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_bins_in_a_row_are_one_run_and_an_idle_bin_ends_it() {
        let mut timeline = Timeline::new(8, 1);
        for (ts_ns, bytes) in [(0, 100), (1_500, 50), (3_500, 10)] {
            timeline.add(ts_ns, 0, bytes);
        }
        assert_eq!(busy_runs(&timeline), [(0, 2_000, 150), (3_000, 4_000, 10)]);
    }

    #[test]
    fn spans_are_in_us_since_the_first_frame_and_never_last_less_than_nothing() {
        let mut trace = Trace { origin_ns: 1_000, events: Vec::new(), next_tid: 1 };
        trace.span(1, "traffic", "traffic".into(), (3_500, 2_000), Value::Null);
        let [event] = trace.events.as_slice() else { panic!("one event") };
        assert_eq!((event.ts, event.dur, event.ph), (2.5, Some(0.0), "X"));
    }
}
