//! The congestion analysis across the capture: the CNP bursts that ended (each flow's reaction
//! lists them), the completion times of every RC message, and incast, fed with every frame it
//! looks at (or, in a shard of a split analysis, a list of them that the split merges in frame
//! order).

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;

use crate::analyze::histogram::FineHistogram;
use crate::analyze::roce::congestion::CongestionConfig;
use crate::analyze::roce::congestion::completion::Completed;
use crate::analyze::roce::congestion::incast::{Incast, IncastEvent, Timed};
use crate::analyze::roce::congestion::reaction::CnpBurst;

/// CNP bursts whose details are kept; more are counted per flow only.
pub const MAX_BURSTS_KEPT: usize = 100_000;

/// The completion-time classes: their name in the report, as people read it, and the largest
/// message size they take (at most 4 KiB, 64 KiB, 1 MiB, and larger).
pub const SIZE_CLASSES: [(&str, &str, u64); 4] = [
    ("le_4k", "≤ 4 KiB", 4 << 10),
    ("le_64k", "≤ 64 KiB", 64 << 10),
    ("le_1m", "≤ 1 MiB", 1 << 20),
    ("gt_1m", "> 1 MiB", u64::MAX),
];

/// Completion times of every RC message of the capture, and by size class.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct FctTotals {
    pub all: FineHistogram,
    pub by_size: [FineHistogram; 4],
}

impl FctTotals {
    pub fn record(&mut self, m: Completed) {
        self.all.record(m.fct_ns);
        let class = SIZE_CLASSES.iter().position(|&(_, _, most)| m.bytes <= most).unwrap_or(3);
        self.by_size[class].record(m.fct_ns);
    }
}

/// Where the frames incast looks at go.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, Renumber)]
pub enum IncastSink {
    /// To the incast state itself.
    Track(Incast),
    /// To a list, for a split analysis to merge in frame order
    /// ([`CongestionAnalysis::take_incast_events`]).
    Record(Vec<Timed>),
}

/// Incast is not added: shards list its frames, which the split merges in frame order into
/// the incast of the whole (`pipeline::sharded`), set after the join; their lists are taken
/// before it. Grafted, where both analyses track it.
impl Combine for IncastSink {
    fn add(&mut self, other: &IncastSink) -> Result<(), Refused> {
        match other {
            IncastSink::Record(events) if events.is_empty() => Ok(()),
            _ => Err("incast, which spans host pairs".into()),
        }
    }

    fn graft(&mut self, start: &IncastSink, end: IncastSink, seam: &Seam) -> Result<(), Refused> {
        match (self, start, end) {
            (IncastSink::Track(mine), IncastSink::Track(start), IncastSink::Track(end)) => mine.graft(start, end, seam),
            _ => Ok(()),
        }
    }
}

impl Default for IncastSink {
    fn default() -> Self {
        IncastSink::Track(Incast::default())
    }
}

/// The congestion analysis across the capture.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct CongestionAnalysis {
    /// CNP bursts ended so far (the first [`MAX_BURSTS_KEPT`]), and those not kept.
    #[combine(continued)]
    bursts: Vec<CnpBurst>,
    #[combine(sum)]
    bursts_not_kept: u64,
    /// Completion times of the RC messages.
    fct: FctTotals,
    incast: IncastSink,
}

impl CongestionAnalysis {
    /// The congestion analysis of a shard of a split analysis: it lists the frames incast
    /// looks at, for the split to merge.
    pub fn of_shard() -> Self {
        CongestionAnalysis { incast: IncastSink::Record(Vec::new()), ..CongestionAnalysis::default() }
    }

    pub fn bursts(&self) -> &[CnpBurst] {
        &self.bursts
    }

    pub fn bursts_not_kept(&self) -> u64 {
        self.bursts_not_kept
    }

    pub fn fct(&self) -> &FctTotals {
        &self.fct
    }

    /// The incast analysis (None in a shard, which lists its events instead).
    pub fn incast(&self) -> Option<&Incast> {
        match &self.incast {
            IncastSink::Track(incast) => Some(incast),
            IncastSink::Record(_) => None,
        }
    }

    /// The incast analysis the split merged from its shards' events.
    pub fn set_incast(&mut self, incast: Incast) {
        self.incast = IncastSink::Track(incast);
    }

    /// Lists bursts whose windows are over (the first [`MAX_BURSTS_KEPT`]).
    pub fn keep_bursts(&mut self, bursts: Vec<CnpBurst>) {
        for burst in bursts {
            if self.bursts.len() >= MAX_BURSTS_KEPT {
                self.bursts_not_kept += 1;
            } else {
                self.bursts.push(burst);
            }
        }
    }

    /// A message completed.
    pub fn completed(&mut self, message: Completed) {
        self.fct.record(message);
    }

    /// A frame incast looks at.
    pub fn to_incast(&mut self, frame: FrameNumber, ts_ns: i64, event: IncastEvent, config: &CongestionConfig) {
        let timed = Timed { frame, ts_ns, event };
        match &mut self.incast {
            IncastSink::Track(incast) => incast.observe(timed, config),
            IncastSink::Record(events) => events.push(timed),
        }
    }

    /// The incast events recorded since the last call (a shard of a split analysis).
    pub fn take_incast_events(&mut self) -> Vec<Timed> {
        match &mut self.incast {
            IncastSink::Record(events) => std::mem::take(events),
            IncastSink::Track(_) => Vec::new(),
        }
    }

    /// Bursts in the order of their first CNP (after adding shards').
    pub fn sort(&mut self) {
        self.bursts.sort_by_key(|b| b.first_frame);
    }

    /// The frames a merge keeps end here: the completion times tell apart the extremes of
    /// what comes after.
    pub fn mark_head_end(&mut self) {
        self.fct.all.mark();
        self.fct.by_size.iter_mut().for_each(|h| h.mark());
    }

    /// Bursts in the order of their first CNP; incast's open periods closed.
    pub fn finish(&mut self) {
        self.sort();
        if let IncastSink::Track(incast) = &mut self.incast {
            incast.finish();
        }
    }
}
