//! What combining two analyses ([`crate::analyze::combine`]) reads of the analysis's own
//! running state: the doubled-mirror decision taken, the reorder windows open, the CM links and
//! path MTUs a new flow takes; the seam where a part is grafted on; and how the analysis's own
//! fields that need logic combine (its `Combine` is derived, [`Analyzer`]).

use crate::analyze::combining::Seam;
use crate::analyze::id::FlowKey;
use crate::analyze::roce::analyzer::{Analyzer, MAX_EPISODES_KEPT};
use crate::analyze::roce::congestion::analysis::MAX_BURSTS_KEPT;

impl Analyzer {
    /// Has the doubled-mirror decision been taken (no frame held for it)?
    pub fn has_decided_doubling(&self) -> bool {
        self.probe.is_none()
    }

    /// The latest capture time analysed.
    pub fn now_ns(&self) -> i64 {
        self.now_ns
    }

    /// The most sequenced packets held at once.
    pub fn packets_held_peak(&self) -> usize {
        self.packets_held_peak
    }

    /// Do the two analyses have the same reorder windows open, at the same time? If not, what
    /// differs.
    pub fn windows_agree(&self, other: &Analyzer) -> Result<(), &'static str> {
        if self.deadlines != other.deadlines {
            return Err("the reorder windows open");
        }
        if self.now_ns != other.now_ns || self.packets_held != other.packets_held {
            return Err("the time");
        }
        Ok(())
    }

    /// Would a flow of `key` new now take the same CM link (and its path MTU) here as in
    /// `other`?
    pub fn cm_link_agrees(&self, other: &Analyzer, key: &FlowKey) -> bool {
        self.cm_links.get(key) == other.cm_links.get(key)
    }

    /// Where a part's analysis is grafted on this one, `start` (the part's kept frames analysed
    /// on their own, where this one stands too) and `part` its analysis of every frame.
    pub fn seam(start: &Analyzer, part: &Analyzer) -> Seam {
        Seam {
            at_ns: start.now_ns,
            incast_window_ns: start.config.congestion.incast_window_ns,
            paused_after: part.wide.pauses().sources_since(start.wide.pauses()),
        }
    }

    /// Are the retransmit episodes and CNP bursts kept within their bounds (after a graft)?
    pub fn keeps_within_bounds(&self) -> Result<(), &'static str> {
        match self.episodes.len() > MAX_EPISODES_KEPT || self.congestion.bursts().len() > MAX_BURSTS_KEPT {
            true => Err("the retransmit episodes or CNP bursts kept reach their bound"),
            false => Ok(()),
        }
    }

    /// The lists in frame order, after adding shards.
    pub fn in_frame_order(&mut self) {
        self.episodes.sort_by_key(|e| e.start_frame);
        self.congestion.sort();
        self.wide.sort();
    }
}

/// The CM links waiting for their flows: added, a shard's (of its own host pairs); grafted,
/// those the part took up after its kept frames left (a merge refuses a part with CM packets
/// after them: it made none).
pub(super) mod cm_links {
    use crate::analyze::combining::{Refused, Seam};
    use crate::analyze::id::FlowKey;
    use rustc_hash::FxHashMap;

    type Links = FxHashMap<FlowKey, (FlowKey, Option<u32>)>;

    pub fn add(mine: &mut Links, other: &Links) -> Result<(), Refused> {
        mine.extend(other.iter().map(|(key, link)| (*key, *link)));
        Ok(())
    }

    pub fn graft(mine: &mut Links, start: &Links, end: Links, _: &Seam) -> Result<(), Refused> {
        for key in start.keys() {
            if !end.contains_key(key) {
                mine.remove(key);
            }
        }
        Ok(())
    }
}

/// The most sequenced packets held at once: added, the shards' peaks added up (at most what one
/// thread held, as the join's bound counts it); grafted, the larger.
pub(super) mod peak {
    use crate::analyze::combining::{Refused, Seam};

    pub fn add(mine: &mut usize, other: &usize) -> Result<(), Refused> {
        *mine += other;
        Ok(())
    }

    pub fn graft(mine: &mut usize, _: &usize, end: usize, _: &Seam) -> Result<(), Refused> {
        *mine = (*mine).max(end);
        Ok(())
    }
}
