//! Joining the shards of an analysis split by host-pair partition ([`Analyzer::shard`]) into
//! the analysis one thread makes of the whole capture.
//!
//! A shard analyses every frame of its partitions, in capture order, and nothing the analysis
//! relates crosses host pairs ([`crate::analyze::partition`]), so each flow, connection and episode
//! comes out of its shard as it comes out of one thread's analysis. What is left to join:
//! flows are numbered again in the order of their first frame (the order one thread creates
//! them in), then each shard is added to the first ([`Combine::add`]: counters added, first
//! frames and times the earliest, last times the latest, lists appended, timelines of the same
//! start added bin by bin), and the lists are put in frame order. A part of the state that
//! cannot be added (running state two shards hold) makes the join decline.
//!
//! Incast spans host pairs: the shards list what incast looks at, and the split merges those
//! lists in frame order into one incast analysis (`pipeline::sharded`), which the joined
//! analysis is given.
//!
//! Two things make the whole capture's frames matter to a shard:
//! - a bound on the whole analysis (flows tracked, retransmit episodes kept, CM connections,
//!   sequenced packets held) might have been reached: the shards' totals, or their peaks of
//!   held packets added up, exceed it; [`shards`] then declines (the caller analyses on one
//!   thread instead, so no result depends on the thread count);
//! - timestamps go backwards: capture time is then the latest time seen over every frame,
//!   which within one partition's frames can be earlier, so reorder windows would close at other
//!   moments, and which frame came first is no longer the earliest time. The shards must come
//!   from frames whose timestamps never go back (the caller sees every frame; a shard that saw
//!   its own go back makes [`shards`] decline too).

use crate::analyze::combining::Combine;
use crate::analyze::id::{FlowId, FrameNumber};
use crate::analyze::renumber::{Renumber, Renumbering};
use crate::analyze::roce::analyzer::{Analyzer, MAX_EPISODES_KEPT, PACKETS_HELD};
use crate::analyze::roce::congestion::analysis::MAX_BURSTS_KEPT;
use crate::analyze::roce::wide::cm::MAX_CONNECTIONS;

/// The analysis of the whole capture from its shards, each finished, of frames whose
/// timestamps never go back; `None` when joining them might not give what one thread gives.
pub fn shards(shards: Vec<Analyzer>) -> Option<Analyzer> {
    if !exact(&shards) {
        return None;
    }
    let ids = flow_numbers(&shards);
    let mut numbered = shards.into_iter().zip(ids).map(|(mut shard, flows)| {
        // a shard saw the whole capture's frame numbers: only its flows are numbered again
        shard.renumber(&Renumbering { frames: 0, flows });
        shard
    });
    let mut whole = numbered.next()?;
    for shard in numbered {
        whole.add(&shard).ok()?;
    }
    whole.in_frame_order();
    Some(whole)
}

/// Could no bound have been reached, and do timestamps never go back?
fn exact(shards: &[Analyzer]) -> bool {
    let Some(first) = shards.first() else { return false };
    let sum = |count: fn(&Analyzer) -> u64| shards.iter().map(count).sum::<u64>();
    sum(|a| a.wide.capture().non_monotonic_timestamps) == 0
        && sum(|a| a.flows.flows.len() as u64) <= first.config.max_flows as u64
        && sum(|a| a.wide.untracked().packets) == 0
        && sum(|a| a.episodes.len() as u64 + a.episodes_dropped) <= MAX_EPISODES_KEPT as u64
        && sum(|a| a.wide.cm().connections.len() as u64 + a.wide.cm().not_kept) <= MAX_CONNECTIONS as u64
        && sum(|a| a.congestion.bursts().len() as u64 + a.congestion.bursts_not_kept()) <= MAX_BURSTS_KEPT as u64
        && sum(|a| a.packets_held_peak() as u64) <= PACKETS_HELD as u64
}

/// Each shard's flows' numbers in the whole analysis: in the order of their first frames
/// (no two flows of different shards share one; a shard numbers its own in that order).
fn flow_numbers(shards: &[Analyzer]) -> Vec<Vec<FlowId>> {
    let mut all: Vec<(FrameNumber, usize, usize)> = shards
        .iter()
        .enumerate()
        .flat_map(|(s, a)| a.flows.flows.iter().enumerate().map(move |(local, f)| (f.first_frame, s, local)))
        .collect();
    all.sort_unstable();
    let mut ids: Vec<Vec<FlowId>> = shards.iter().map(|a| vec![FlowId::default(); a.flows.flows.len()]).collect();
    for (id, (_, s, local)) in all.into_iter().enumerate() {
        if let Some(slot) = ids.get_mut(s).and_then(|v| v.get_mut(local)) {
            *slot = FlowId::at(id);
        }
    }
    ids
}
