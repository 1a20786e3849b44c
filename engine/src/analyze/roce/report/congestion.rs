//! The congestion-control part of the report: per flow, its CNP bursts' reactions and its
//! messages' completion times; capture-wide, every burst, completion-time percentiles overall
//! and by message size, and each receiver's fan-in with its incast periods (docs/analysis.md,
//! "Congestion control").

use serde::Serialize;

use crate::analyze::histogram::FineHistogram;
use crate::analyze::id::{FlowId, FrameNumber};
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::congestion::CongestionConfig;
use crate::analyze::roce::congestion::analysis::SIZE_CLASSES;
use crate::analyze::roce::congestion::incast::{IncastPeriod, ReceiverFanIn};
use crate::analyze::roce::congestion::reaction::{CnpBurst, Outcome};
use crate::analyze::roce::flow::table::Flow;

/// A flow's congestion-control keys.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct FlowCongestion {
    /// CNP bursts addressed to the flow, kept or not, and the frame of the first CNP of the
    /// first kept.
    pub cnp_bursts: u64,
    pub first_cnp_burst_frame: Option<FrameNumber>,
    pub reactions_measured: u64,
    /// The median reaction ratio r of the measured bursts (nearest rank).
    pub reaction_ratio_p50: Option<f64>,
    /// Measured bursts with r ≤ 0.9, and of those the ones that recovered and not.
    pub reacted: u64,
    pub recovered: u64,
    pub not_recovered: u64,
    pub recovery_us_p50: Option<f64>,
    pub recovery_us_max: Option<f64>,
    pub messages_completed: u64,
    pub messages_incomplete: u64,
    pub fct_us_p50: Option<f64>,
    pub fct_us_p99: Option<f64>,
    pub fct_us_max: Option<f64>,
}

/// One CNP burst, as measured within the capture.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BurstReport {
    pub flow: FlowId,
    pub first_frame: FrameNumber,
    pub start_ns: i64,
    pub end_ns: i64,
    pub cnps: u32,
    /// The flow's payload rate in the window before and the window after, bytes per second.
    pub rate_before_bps: u64,
    pub rate_after_bps: u64,
    pub reaction_ratio: Option<f64>,
    pub outcome: Outcome,
    pub recovered_ns: Option<i64>,
    pub recovery_us: Option<f64>,
}

/// Completion times of a set of messages, in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct FctSummary {
    pub messages: u64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
}

impl From<&FineHistogram> for FctSummary {
    fn from(h: &FineHistogram) -> Self {
        FctSummary {
            messages: h.count(),
            p50_us: us(h.quantile(0.5)),
            p99_us: us(h.quantile(0.99)),
            max_us: us(h.max()),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct SizeClassFct {
    /// `le_4k`, `le_64k`, `le_1m`, `gt_1m`.
    pub class: &'static str,
    /// The class as people read it (`≤ 4 KiB`), for the writers.
    #[serde(skip)]
    pub label: &'static str,
    #[serde(flatten)]
    pub fct: FctSummary,
}

#[derive(Debug, Clone, Serialize)]
pub struct CompletionReport {
    pub all: FctSummary,
    /// Messages of at most 64 KiB (the first two classes), which HIGH_TAIL_LATENCY judges.
    pub small: FctSummary,
    pub by_size: Vec<SizeClassFct>,
}

#[derive(Debug, Clone, Serialize)]
pub struct IncastReport {
    /// Every receiver of data packets, in order of its first.
    pub receivers: Vec<ReceiverFanIn>,
    pub periods: Vec<IncastPeriod>,
    pub periods_not_kept: u64,
    /// Data packets to receivers beyond the tracked ones.
    pub untracked_packets: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CongestionReport {
    pub cnp_bursts: Vec<BurstReport>,
    pub cnp_bursts_not_kept: u64,
    pub completion: CompletionReport,
    pub incast: IncastReport,
}

fn us(ns: Option<u64>) -> Option<f64> {
    ns.map(|n| n as f64 / 1_000.0)
}

/// The value of nearest rank ⌈p/100 × n⌉ of `values` (sorted here).
pub fn nearest_rank(values: &mut [f64], p: f64) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0 * values.len() as f64).ceil() as usize).clamp(1, values.len().max(1));
    values.get(rank - 1).copied()
}

/// The capture's bounds, which decide whether a burst was measured.
#[derive(Clone, Copy)]
struct Bounds {
    first_ns: i64,
    last_ns: i64,
    config: CongestionConfig,
}

impl Bounds {
    fn of(a: &Analyzer) -> Bounds {
        let c = a.wide.capture();
        Bounds { first_ns: c.first_ts_ns.unwrap_or(0), last_ns: c.last_ts_ns.unwrap_or(0), config: a.config.congestion }
    }

    fn outcome(&self, b: &CnpBurst) -> Outcome {
        b.outcome(self.first_ns, self.last_ns, &self.config)
    }

    fn burst(&self, b: &CnpBurst) -> BurstReport {
        let rate = |bytes: u64| (u128::from(bytes) * 1_000_000_000 / self.config.window_ns.max(1) as u128) as u64;
        BurstReport {
            flow: b.flow,
            first_frame: b.first_frame,
            start_ns: b.start_ns,
            end_ns: b.end_ns,
            cnps: b.cnps,
            rate_before_bps: rate(b.bytes_before),
            rate_after_bps: rate(b.bytes_after),
            reaction_ratio: b.ratio(),
            outcome: self.outcome(b),
            recovered_ns: b.recovered_ns,
            recovery_us: b.recovery_ns().map(|ns| ns as f64 / 1_000.0),
        }
    }
}

/// Each flow's congestion-control keys, by flow number.
pub fn flow_keys(a: &Analyzer) -> Vec<FlowCongestion> {
    let bounds = Bounds::of(a);
    let mut by_flow: Vec<Vec<&CnpBurst>> = vec![Vec::new(); a.flows.flows.len()];
    for b in a.congestion.bursts() {
        if let Some(list) = by_flow.get_mut(b.flow.index()) {
            list.push(b);
        }
    }
    a.flows.flows.iter().zip(by_flow).map(|(f, bursts)| flow_congestion(f, &bursts, &bounds)).collect()
}

fn flow_congestion(f: &Flow, bursts: &[&CnpBurst], bounds: &Bounds) -> FlowCongestion {
    let outcomes: Vec<(Outcome, &CnpBurst)> = bursts.iter().map(|b| (bounds.outcome(b), *b)).collect();
    let count = |o: Outcome| outcomes.iter().filter(|(x, _)| *x == o).count() as u64;
    let mut ratios: Vec<f64> =
        outcomes.iter().filter(|(o, _)| *o != Outcome::NotMeasured).filter_map(|(_, b)| b.ratio()).collect();
    let mut recoveries: Vec<f64> = outcomes
        .iter()
        .filter(|(o, _)| *o == Outcome::Recovered)
        .filter_map(|(_, b)| b.recovery_ns())
        .map(|ns| ns as f64 / 1_000.0)
        .collect();
    let fct = &f.completions.fct_ns;
    FlowCongestion {
        cnp_bursts: f.reaction.bursts,
        first_cnp_burst_frame: bursts.iter().map(|b| b.first_frame).min(),
        reactions_measured: ratios.len() as u64,
        reaction_ratio_p50: nearest_rank(&mut ratios, 50.0),
        reacted: count(Outcome::Recovered) + count(Outcome::NotRecovered),
        recovered: count(Outcome::Recovered),
        not_recovered: count(Outcome::NotRecovered),
        recovery_us_p50: nearest_rank(&mut recoveries, 50.0),
        recovery_us_max: recoveries.iter().copied().reduce(f64::max),
        messages_completed: fct.count(),
        messages_incomplete: f.completions.incomplete(),
        fct_us_p50: us(fct.quantile(0.5)),
        fct_us_p99: us(fct.quantile(0.99)),
        fct_us_max: us(fct.max()),
    }
}

/// The capture-wide congestion-control section.
pub fn congestion_report(a: &Analyzer) -> CongestionReport {
    let bounds = Bounds::of(a);
    let mut small = a.congestion.fct().by_size[0].clone();
    small.add_samples(&a.congestion.fct().by_size[1]);
    let by_size = SIZE_CLASSES
        .iter()
        .zip(&a.congestion.fct().by_size)
        .map(|(&(class, label, _), h)| SizeClassFct { class, label, fct: h.into() })
        .collect();
    let incast = match a.congestion.incast() {
        Some(incast) => IncastReport {
            receivers: incast.fan_in(),
            periods: incast.periods.clone(),
            periods_not_kept: incast.periods_not_kept,
            untracked_packets: incast.untracked_packets,
        },
        None => IncastReport { receivers: Vec::new(), periods: Vec::new(), periods_not_kept: 0, untracked_packets: 0 },
    };
    CongestionReport {
        cnp_bursts: a.congestion.bursts().iter().map(|b| bounds.burst(b)).collect(),
        cnp_bursts_not_kept: a.congestion.bursts_not_kept(),
        completion: CompletionReport { all: (&a.congestion.fct().all).into(), small: (&small).into(), by_size },
        incast,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_is_the_value_at_rank_ceil_p_n() {
        let mut v = vec![5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(nearest_rank(&mut v, 50.0), Some(3.0));
        assert_eq!(nearest_rank(&mut v, 99.0), Some(5.0));
        assert_eq!(nearest_rank(&mut v, 20.0), Some(1.0));
        assert_eq!(nearest_rank(&mut v[..4], 50.0), Some(2.0));
        assert_eq!(nearest_rank(&mut [], 50.0), None);
    }
}
