//! What combining two analyses ([`crate::analyze::combine`]) reads and sets of the
//! analysis's own running state: the doubled-mirror decision taken, the reorder windows open,
//! the CM links and path MTUs a new flow takes, and each part's combining, delegated.

use crate::analyze::analyzer::{Analyzer, MAX_EPISODES_KEPT};
use crate::analyze::id::FlowKey;
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

    /// Adds what a shard of the same capture counted, beyond its flows, episodes and bursts.
    pub fn add_shard(&mut self, shard: &Analyzer) {
        self.wide.add(&shard.wide);
        self.congestion.add(&shard.congestion);
        self.episodes_dropped += shard.episodes_dropped;
        self.uet.add(&shard.uet);
    }

    /// Goes on, beyond its flows, as `part` went on from `start` (the part's kept frames
    /// analysed on their own): what it counted after them added, what it holds taken.
    pub fn graft_after(&mut self, start: &Analyzer, part: Analyzer) -> Result<(), &'static str> {
        let after_ns = start.now_ns;
        self.uet.graft(&start.uet, part.uet)?;
        let pausing = self.wide.graft(&start.wide, part.wide, after_ns)?;
        let incast_window = (after_ns, self.config.congestion.incast_window_ns);
        self.congestion.graft(&start.congestion, part.congestion, incast_window, &pausing)?;
        self.episodes.extend(part.episodes.into_iter().skip(start.episodes.len()));
        if self.episodes.len() > MAX_EPISODES_KEPT || self.congestion.bursts().len() > MAX_BURSTS_KEPT {
            return Err("the retransmit episodes or CNP bursts kept reach their bound");
        }
        self.flows.graft_routes(&part.flows);
        for key in start.cm_links.keys() {
            if !part.cm_links.contains_key(key) {
                self.cm_links.remove(key);
            }
        }
        self.deadlines = part.deadlines;
        (self.now_ns, self.packets_held) = (part.now_ns, part.packets_held);
        self.packets_held_peak = self.packets_held_peak.max(part.packets_held_peak);
        Ok(())
    }
}
