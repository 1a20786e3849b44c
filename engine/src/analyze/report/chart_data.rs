//! What the HTML report's charts read from a finished analysis, beyond the report's numbers:
//! the capture-wide time series, when traffic was paused and the storms, the traced flows'
//! PSN events and ACK latencies, message completion times and receivers' fan-in over time.

use crate::analyze::analyzer::Analyzer;
use crate::analyze::flow::trace::FlowTrace;
use crate::analyze::histogram::{FineHistogram, LogHistogram};
use crate::analyze::wide::timeline::Timeline;
use crate::decode::Endpoint;

/// A read-only view of an analysis for charts.
pub struct ChartData<'a>(&'a Analyzer);

impl Analyzer {
    pub fn charts(&self) -> ChartData<'_> {
        ChartData(self)
    }
}

impl<'a> ChartData<'a> {
    /// RoCE bytes, CE marks and CNPs over time ([`crate::analyze::ROCE_BYTES`], [`crate::analyze::CE_MARKS`],
    /// [`crate::analyze::CNPS`]).
    pub fn timeline(&self) -> &'a Timeline {
        self.0.wide.timeline()
    }

    /// Nanoseconds paused per priority over time ([`crate::analyze::wide::pfc::PAUSE_CHANNEL`] for PAUSE).
    pub fn paused(&self) -> &'a Timeline {
        &self.0.wide.pauses().ended.paused
    }

    /// Pause storms: (priority channel, start, end).
    pub fn storms(&self) -> &'a [(usize, i64, i64)] {
        &self.0.wide.pauses().ended.storms
    }

    /// The PSN events of flow `id`, for the first traced flows.
    pub fn trace(&self, id: u32) -> Option<&'a FlowTrace> {
        self.0.flows.flow(id).and_then(|f| f.trace.as_deref())
    }

    /// The sequence graph's points of a UET PDC.
    pub fn uet_trace(&self, key: &crate::analyze::uet::PdcKey) -> Option<&'a FlowTrace> {
        self.0.uet.trace(key)
    }

    /// The ACK latencies of flow `id`.
    pub fn ack_latency(&self, id: u32) -> Option<&'a LogHistogram> {
        self.0.flows.flow(id).map(|f| &f.ack_latency)
    }

    /// The completion times of every RC message.
    pub fn completion_times(&self) -> &'a FineHistogram {
        &self.0.congestion.fct().all
    }

    /// The largest fan-in of `receiver` over time, for the first receivers.
    pub fn fan_in(&self, receiver: Endpoint) -> Option<&'a Timeline> {
        self.0.congestion.incast()?.over_time(receiver)
    }
}
