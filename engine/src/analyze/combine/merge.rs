//! Joining the shards of an analysis split by host-pair partition ([`Analyzer::shard`]) into
//! the analysis one thread makes of the whole capture.
//!
//! A shard analyses every frame of its partitions, in capture order, and nothing the analysis
//! relates crosses host pairs ([`crate::analyze::partition`]), so each flow, connection and episode
//! comes out of its shard as it comes out of one thread's analysis. What is left to join:
//! flows are numbered again in the order of their first frame (the order one thread creates
//! them in), counters are added, first frames and times take the earliest, last times the
//! latest, lists are put in frame order, and timelines of the same start are added bin by bin.
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

use crate::analyze::MalformedLayer;
use crate::analyze::congestion::tracking::MAX_BURSTS_KEPT;
use crate::analyze::counts::Combine;
use crate::analyze::flow::id::FlowId;
use crate::analyze::flow::table::FlowTable;
use crate::analyze::flow::trace::TRACED_FLOWS;
use crate::analyze::wide::cm::MAX_CONNECTIONS;
use crate::analyze::{Analyzer, CaptureFacts, MAX_EPISODES_KEPT, PACKETS_HELD};

/// The analysis of the whole capture from its shards, each finished, of frames whose
/// timestamps never go back; `None` when joining them might not give what one thread gives.
pub fn shards(shards: Vec<Analyzer>) -> Option<Analyzer> {
    if !exact(&shards) {
        return None;
    }
    let ids = flow_numbers(&shards);
    let mut shards = shards.into_iter().zip(ids);
    let (mut whole, whole_ids) = shards.next()?;
    let mut lists = Lists::default();
    take_flows(&mut whole, &whole_ids, &mut lists);
    for (mut shard, ids) in shards {
        take_flows(&mut shard, &ids, &mut lists);
        add(&mut whole, &shard);
    }
    let Lists { mut flows, mut episodes, mut bursts } = lists;
    flows.sort_by_key(|(id, _)| *id);
    episodes.sort_by_key(|e| e.start_frame);
    bursts.sort_by_key(|b| b.first_frame);
    whole.flows = FlowTable::joined(flows.into_iter().map(|(_, f)| f).collect(), whole.config.max_flows);
    whole.episodes = episodes;
    whole.cnp_bursts = bursts;
    whole.capture.malformed.sort_by_key(|m| m.first_frame);
    whole.capture.undecoded_links.sort_by_key(|(_, _, first_frame)| *first_frame);
    whole.cm.connections.sort_by_key(|c| c.request_frame);
    Some(whole)
}

/// Could no bound have been reached, and do timestamps never go back?
fn exact(shards: &[Analyzer]) -> bool {
    let Some(first) = shards.first() else { return false };
    let sum = |count: fn(&Analyzer) -> u64| shards.iter().map(count).sum::<u64>();
    sum(|a| a.capture.non_monotonic_timestamps) == 0
        && sum(|a| a.flows.flows.len() as u64) <= first.config.max_flows as u64
        && sum(|a| a.untracked_packets) == 0
        && sum(|a| a.episodes.len() as u64 + a.episodes_dropped) <= MAX_EPISODES_KEPT as u64
        && sum(|a| a.cm.connections.len() as u64 + a.cm.not_kept) <= MAX_CONNECTIONS as u64
        && sum(|a| a.cnp_bursts.len() as u64 + a.cnp_bursts_not_kept) <= MAX_BURSTS_KEPT as u64
        && sum(|a| a.packets_held_peak as u64) <= PACKETS_HELD as u64
}

/// Each shard's flows' numbers in the whole analysis: in the order of their first frames
/// (no two flows of different shards share one; a shard numbers its own in that order).
fn flow_numbers(shards: &[Analyzer]) -> Vec<Vec<FlowId>> {
    let mut all: Vec<(u64, usize, usize)> = shards
        .iter()
        .enumerate()
        .flat_map(|(s, a)| a.flows.flows.iter().enumerate().map(move |(local, f)| (f.first_frame, s, local)))
        .collect();
    all.sort_unstable();
    let mut ids: Vec<Vec<FlowId>> = shards.iter().map(|a| vec![0; a.flows.flows.len()]).collect();
    for (id, (_, s, local)) in all.into_iter().enumerate() {
        if let Some(slot) = ids.get_mut(s).and_then(|v| v.get_mut(local)) {
            *slot = id as FlowId;
        }
    }
    ids
}

/// What the shards' flows and the lists that name them come to, numbered as in the whole.
#[derive(Default)]
struct Lists {
    flows: Vec<(FlowId, crate::analyze::flow::table::Flow)>,
    episodes: Vec<crate::analyze::flow::episodes::Episode>,
    bursts: Vec<crate::analyze::congestion::reaction::CnpBurst>,
}

/// Moves a shard's flows, episodes and CNP bursts out, numbered as in the whole analysis;
/// only the first [`TRACED_FLOWS`] flows of the whole keep their traces.
fn take_flows(shard: &mut Analyzer, ids: &[FlowId], lists: &mut Lists) {
    let Lists { flows, episodes, bursts } = lists;
    let number = |local: FlowId| ids.get(local as usize).copied().unwrap_or(local);
    for (local, mut f) in std::mem::take(&mut shard.flows.flows).into_iter().enumerate() {
        let id = number(local as FlowId);
        f.peer = f.peer.map(|(p, method)| (number(p), method));
        f.previous = f.previous.map(number);
        if id as usize >= TRACED_FLOWS {
            f.trace = None;
        }
        flows.push((id, f));
    }
    episodes.extend(std::mem::take(&mut shard.episodes).into_iter().map(|mut e| {
        e.flow = number(e.flow);
        e
    }));
    bursts.extend(std::mem::take(&mut shard.cnp_bursts).into_iter().map(|mut b| {
        b.flow = number(b.flow);
        b
    }));
}

/// Adds what `shard` counted, beyond its flows and episodes, to `whole`.
fn add(whole: &mut Analyzer, shard: &Analyzer) {
    whole.totals.add(&shard.totals);
    whole.capture.add(&shard.capture);
    whole.timeline.merge(&shard.timeline);
    whole.policy.merge(&shard.policy);
    whole.cm.connections.extend(shard.cm.connections.iter().cloned());
    whole.cm.not_kept += shard.cm.not_kept;
    whole.episodes_dropped += shard.episodes_dropped;
    whole.cnp_bursts_not_kept += shard.cnp_bursts_not_kept;
    whole.fct.merge(&shard.fct);
}

impl CaptureFacts {
    /// Adds what other frames, of timestamps in order with these, told.
    fn add(&mut self, other: &CaptureFacts) {
        let earliest = |a: Option<i64>, b: Option<i64>| a.into_iter().chain(b).min();
        let latest = |a: Option<i64>, b: Option<i64>| a.into_iter().chain(b).max();
        self.first_ts_ns = earliest(self.first_ts_ns, other.first_ts_ns);
        self.last_ts_ns = latest(self.last_ts_ns, other.last_ts_ns);
        self.previous_ts_ns = latest(self.previous_ts_ns, other.previous_ts_ns);
        self.non_monotonic_timestamps += other.non_monotonic_timestamps;
        self.snaplen_cut += other.snaplen_cut;
        self.mirror_truncated += other.mirror_truncated;
        self.truncated_copies += other.truncated_copies;
        self.hardware_timestamps += other.hardware_timestamps;
        for &(name, count) in &other.encapsulations {
            match self.encapsulations.iter_mut().find(|(n, _)| *n == name) {
                Some((_, n)) => *n += count,
                None => self.encapsulations.push((name, count)),
            }
        }
        for &(link, count, first_frame) in &other.undecoded_links {
            match self.undecoded_links.iter_mut().find(|(l, ..)| *l == link) {
                Some(mine) => *mine = (link, mine.1 + count, mine.2.min(first_frame)),
                None => self.undecoded_links.push((link, count, first_frame)),
            }
        }
        for layer in &other.malformed {
            match self.malformed.iter_mut().find(|m| m.layer == layer.layer) {
                Some(mine) if layer.first_frame < mine.first_frame => {
                    *mine = MalformedLayer { frames: mine.frames + layer.frames, ..layer.clone() }
                }
                Some(mine) => mine.frames += layer.frames,
                None => self.malformed.push(layer.clone()),
            }
        }
    }
}
