//! What a flow's charts need, in bounded memory: an even sample of the packets it sent for the
//! first time and its first resends (time and PSN) for the PSN-versus-time graph, the first
//! gaps and NAKs to mark on it, and its bytes over time. Only the first [`TRACED_FLOWS`] flows
//! carry one.

use crate::analyze::renumber::Renumber;
use crate::analyze::timeline::Timeline;

/// Flows that get a trace, in order of appearance.
pub const TRACED_FLOWS: usize = 1024;
/// First transmissions kept per flow; when full, every other one is dropped and only every
/// second packet after that is sampled (then every fourth, and so on).
pub const POINTS_KEPT: usize = 512;
/// Resends, gaps and NAKs kept per flow (the first ones).
pub const EVENTS_KEPT: usize = 128;
/// Bins of a flow's throughput timeline.
pub const THROUGHPUT_BINS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum EventKind {
    /// PSNs this flow skipped: `psn` is the first missing one, `count` how many.
    Gap { count: u32 },
    /// A NAK or RNR NAK this flow carried, for the peer's PSN `psn`.
    Nak { rnr: bool },
}

#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Event {
    pub ts_ns: i64,
    pub psn: u32,
    pub kind: EventKind,
}

/// A packet on the PSN graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Point {
    pub ts_ns: i64,
    pub psn: u32,
    /// Its position among the flow's first transmissions (1-based).
    n: u64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct FlowTrace {
    /// First transmissions whose position is a multiple of `stride`.
    pub sent: Vec<Point>,
    stride: u64,
    seen: u64,
    pub resent: Vec<Point>,
    pub gaps: Vec<Event>,
    pub naks: Vec<Event>,
    pub bytes: Timeline,
}

impl Default for FlowTrace {
    fn default() -> Self {
        FlowTrace {
            sent: Vec::new(),
            stride: 1,
            seen: 0,
            resent: Vec::new(),
            gaps: Vec::new(),
            naks: Vec::new(),
            bytes: Timeline::new(THROUGHPUT_BINS, 1),
        }
    }
}

impl FlowTrace {
    /// A packet sent for the first time.
    pub fn sent(&mut self, ts_ns: i64, psn: u32) {
        self.seen += 1;
        if !self.seen.is_multiple_of(self.stride) {
            return;
        }
        self.sent.push(Point { ts_ns, psn, n: self.seen });
        if self.sent.len() > POINTS_KEPT {
            self.stride = self.stride.saturating_mul(2);
            let stride = self.stride;
            self.sent.retain(|p| p.n.is_multiple_of(stride));
        }
    }

    /// A packet sent again.
    pub fn resent(&mut self, ts_ns: i64, psn: u32) {
        if self.resent.len() < EVENTS_KEPT {
            self.resent.push(Point { ts_ns, psn, n: 0 });
        }
    }

    pub fn event(&mut self, event: Event) {
        let list = match event.kind {
            EventKind::Gap { .. } => &mut self.gaps,
            EventKind::Nak { .. } => &mut self.naks,
        };
        if list.len() < EVENTS_KEPT {
            list.push(event);
        }
    }
}

/// A flow's trace, where both analyses trace it: grafted, what the later part traced after the
/// seam added (a chart: its points thinned again). Never added: a flow's trace is its own
/// shard's, whole.
pub mod traced {
    use super::FlowTrace;
    use crate::analyze::combining::{Combine, Refused, Seam};

    type Traced = Option<Box<FlowTrace>>;

    pub fn add(_: &mut Traced, _: &Traced) -> Result<(), Refused> {
        Err("a flow's trace, which one shard makes whole".into())
    }

    pub fn graft(mine: &mut Traced, start: &Traced, end: Traced, seam: &Seam) -> Result<(), Refused> {
        // the part traces a flow of its kept frames where its start does: numbered alike
        let (Some(mine), Some(start), Some(end)) = (mine, start, end) else { return Ok(()) };
        let after_ns = seam.at_ns;
        end.sent.iter().filter(|p| p.ts_ns > after_ns).for_each(|p| mine.sent(p.ts_ns, p.psn));
        end.resent.iter().filter(|p| p.ts_ns > after_ns).for_each(|p| mine.resent(p.ts_ns, p.psn));
        end.gaps.iter().chain(&end.naks).filter(|e| e.ts_ns > after_ns).for_each(|e| mine.event(*e));
        mine.bytes.graft(&start.bytes, end.bytes, seam)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_transmissions_thin_out_evenly_and_stay_bounded() {
        let mut t = FlowTrace::default();
        let total = 4 * POINTS_KEPT as u32 + 3;
        for i in 0..total {
            t.sent(i64::from(i), i);
        }
        assert!(t.sent.len() <= POINTS_KEPT && t.sent.len() >= POINTS_KEPT / 2, "{}", t.sent.len());
        // what is left is every stride-th packet (1-based), across the whole flow
        let psns: Vec<u32> = t.sent.iter().map(|p| p.psn).collect();
        let stride = t.stride as u32;
        assert_eq!((stride, psns.first()), (4, Some(&(stride - 1))));
        assert!(psns.windows(2).all(|w| w[1] - w[0] == stride), "{psns:?}");
        assert!(*psns.last().unwrap() >= total - stride);
    }

    #[test]
    fn resends_and_events_keep_the_first_ones() {
        let mut t = FlowTrace::default();
        for i in 0..(EVENTS_KEPT as u32 + 5) {
            t.resent(i64::from(i), i);
            t.event(Event { ts_ns: 0, psn: i, kind: EventKind::Nak { rnr: false } });
        }
        assert_eq!((t.resent.len(), t.naks.len(), t.gaps.len()), (EVENTS_KEPT, EVENTS_KEPT, 0));
        assert_eq!(t.resent[EVENTS_KEPT - 1].psn, EVENTS_KEPT as u32 - 1);
    }
}
