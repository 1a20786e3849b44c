//! What the HTML report's charts read beyond the report's numbers, taken from the finished
//! analysis into the report so that the page renders from the report alone: the capture-wide
//! time series, when traffic was paused and the storms, the traced flows' PSN events and ACK
//! latencies, message completion times and receivers' fan-in over time.

use rustc_hash::FxHashMap;

use crate::analyze::histogram::{FineHistogram, LogHistogram};
use crate::analyze::id::FlowId;
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::report::paused::Paused;
use crate::analyze::roce::wide::pfc::PausePeriod;
use crate::analyze::timeline::Timeline;
use crate::analyze::trace::FlowTrace;
use crate::analyze::uet::PdcKey;
use crate::decode::Endpoint;

/// The charts' series of one analysis.
#[derive(Debug, Clone)]
pub struct ChartData {
    timeline: Timeline,
    paused: Timeline,
    storms: Vec<(usize, i64, i64)>,
    pauses: Paused,
    /// The pause periods the analysis kept, each with its source, in order of their start.
    periods: Vec<PausePeriod>,
    /// Per traced flow: its PSN events and ACK latencies.
    traced: FxHashMap<u32, (FlowTrace, LogHistogram)>,
    uet_traces: FxHashMap<PdcKey, FlowTrace>,
    completion_times: FineHistogram,
    fan_in: FxHashMap<Endpoint, Timeline>,
}

impl ChartData {
    /// The series of the finished analysis `a`.
    pub fn of(a: &Analyzer) -> ChartData {
        let traced = a.flows.flows.iter().enumerate().filter_map(|(id, f)| {
            let trace = f.trace.as_deref()?;
            Some((id as u32, (trace.clone(), f.ack_latency.clone())))
        });
        let fan_in = a.congestion.incast().map(|i| i.over_time_all()).unwrap_or_default();
        ChartData {
            timeline: a.wide.timeline().clone(),
            paused: a.wide.pauses().ended.paused.clone(),
            storms: a.wide.pauses().ended.storms.clone(),
            pauses: Paused::of(&a.wide.pauses().ended.periods),
            periods: a.wide.pauses().ended.periods.clone(),
            traced: traced.collect(),
            uet_traces: a.uet.traces().map(|(k, t)| (*k, t.clone())).collect(),
            completion_times: a.congestion.fct().all.clone(),
            fan_in: fan_in.into_iter().map(|(r, t)| (r, t.clone())).collect(),
        }
    }

    /// RoCE bytes, CE marks and CNPs over time ([`crate::analyze::ROCE_BYTES`], [`crate::analyze::CE_MARKS`],
    /// [`crate::analyze::CNPS`]).
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Nanoseconds paused per priority over time ([`crate::analyze::roce::wide::pfc::PAUSE_CHANNEL`]
    /// for PAUSE): the union of the sources' pauses in force, at most each bin's width.
    pub fn paused(&self) -> &Timeline {
        &self.paused
    }

    /// Pause storms: (priority channel, start, end).
    pub fn storms(&self) -> &[(usize, i64, i64)] {
        &self.storms
    }

    /// When each priority (or [`crate::analyze::roce::wide::pfc::PAUSE_CHANNEL`] for PAUSE)
    /// was paused by any source, from the pause periods the analysis kept.
    pub fn pauses(&self) -> &Paused {
        &self.pauses
    }

    /// Each source's pause periods the analysis kept (the first
    /// [`crate::analyze::roce::wide::pfc::PERIODS_KEPT`]), in order of their start.
    pub fn pause_periods(&self) -> &[PausePeriod] {
        &self.periods
    }

    /// The PSN events of flow `id`, for the first traced flows.
    pub fn trace(&self, id: FlowId) -> Option<&FlowTrace> {
        self.traced.get(&id.get()).map(|(trace, _)| trace)
    }

    /// The sequence graph's points of a UET PDC.
    pub fn uet_trace(&self, key: &PdcKey) -> Option<&FlowTrace> {
        self.uet_traces.get(key)
    }

    /// The ACK latencies of traced flow `id`.
    pub fn ack_latency(&self, id: FlowId) -> Option<&LogHistogram> {
        self.traced.get(&id.get()).map(|(_, latency)| latency)
    }

    /// The completion times of every RC message.
    pub fn completion_times(&self) -> &FineHistogram {
        &self.completion_times
    }

    /// The largest fan-in of `receiver` over time, for the first receivers.
    pub fn fan_in(&self, receiver: Endpoint) -> Option<&Timeline> {
        self.fan_in.get(&receiver)
    }
}
