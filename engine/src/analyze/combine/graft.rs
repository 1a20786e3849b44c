//! Merging a part longer than the frames its state keeps (`rocescope merge`,
//! docs/scale.md): the part's kept frames are analysed again after the parts before it (the
//! merged analysis) and on their own (the part's start, as the part itself began); where the
//! two have come to the same state by the end of those frames, the part's own analysis
//! went on from there exactly as one run would have, and what it did after is added to the
//! merged analysis: counters added, the first frames of the merged analysis kept and the last
//! of the part taken, extremes compared, lists continued, frame and flow numbers moved on
//! ([`crate::analyze::renumber`]). Where they have not, or an extreme cannot be told, or a bound was
//! reached, the merge is refused with the reason: it is exact or not made.

use crate::analyze::MalformedLayer;
use crate::analyze::congestion::tracking::{IncastSink, MAX_BURSTS_KEPT};
use crate::analyze::counts::Combine;
use crate::analyze::flow::id::FlowId;
use crate::analyze::flow::table::Flow;
use crate::analyze::frame::FrameSummary;
use crate::analyze::renumber::Renumbering;
use crate::analyze::{Analyzer, CaptureFacts, MAX_EPISODES_KEPT};

/// `merged` goes on with a part: its kept frames `head`, numbered from 1 at its first, and
/// `part`, its own analysis of all its frames; `frames_before`: the frames of the parts
/// before it.
pub fn after(
    merged: &mut Analyzer,
    head: Vec<FrameSummary>,
    mut part: Analyzer,
    frames_before: u64,
) -> Result<(), String> {
    let mut start = Analyzer::new(part.config());
    let lost_before = merged.duplicates.lost();
    for mut frame in head {
        frame.number = frame.number.saturating_add(frames_before);
        start.observe(&frame);
        merged.observe(&frame);
    }
    if merged.probe.is_some() || start.probe.is_some() {
        return Err("the doubled-mirror decision was not taken within them".into());
    }
    if merged.capture.doubled_mirror.map(|d| d.doubled) != start.capture.doubled_mirror.map(|d| d.doubled) {
        return Err("it decides otherwise whether the capture is a doubled mirror".into());
    }
    let flows = flow_numbers(merged, &start, &part)?;
    start.renumber(&Renumbering { frames: 0, flows: flows.clone() });
    part.renumber(&Renumbering { frames: frames_before, flows });
    // neither window forgot a frame inside it: both find every copy, whatever their tables
    if merged.duplicates.lost() != lost_before || part.duplicates.lost() > 0 {
        return Err("a mirror-duplicate window forgot frames inside it".into());
    }
    capture_wide_agree(merged, &start, &part)?;
    graft_flows(merged, &start, &mut part)?;
    graft_capture_wide(merged, &start, part).map_err(String::from)
}

/// The merged number of each of the part's flows: those of its kept frames are the merged
/// analysis's flows of the same keys; those that came later are new, numbered after the
/// merged analysis's flows in the order the part made them.
fn flow_numbers(merged: &Analyzer, start: &Analyzer, part: &Analyzer) -> Result<Vec<FlowId>, String> {
    let mut numbers = Vec::with_capacity(part.flows.flows.len());
    for (local, f) in part.flows.flows.iter().enumerate() {
        let number = match start.flows.flows.get(local) {
            Some(s) if start.flows.get(&s.key) == Some(local as FlowId) => merged.flows.get(&s.key),
            Some(_) => None,
            None if f.previous.is_none() && merged.flows.knows(&f.key) => {
                return Err(format!("{} went on from the parts before it after its kept frames", described(&f.key)));
            }
            None => Some((merged.flows.flows.len() + local - start.flows.flows.len()) as FlowId),
        };
        numbers.push(
            number.ok_or_else(|| format!("{}'s QP number was used again within its kept frames", described(&f.key)))?,
        );
    }
    if merged.flows.flows.len() + numbers.len() - start.flows.flows.len() > merged.flows.limit() {
        return Err("the flows tracked reach their bound".into());
    }
    Ok(numbers)
}

/// The capture-wide state that decides how later frames are taken is the same in `merged`
/// and `start` when the kept frames end.
fn capture_wide_agree(merged: &Analyzer, start: &Analyzer, part: &Analyzer) -> Result<(), String> {
    let now = start.now_ns;
    let checks: [(&str, bool); 6] = [
        ("the reorder windows open", merged.deadlines == start.deadlines),
        ("the time", merged.now_ns == now && merged.packets_held == start.packets_held),
        ("management packets (CM) after the kept frames", part.totals.management == start.totals.management),
        ("flows beyond the bound", part.untracked_packets == start.untracked_packets && merged.untracked_packets == 0),
        ("retransmit episodes beyond the bound", part.episodes_dropped == start.episodes_dropped),
        ("CNP bursts beyond the bound", part.cnp_bursts_not_kept == start.cnp_bursts_not_kept),
    ];
    match checks.iter().find(|(_, agree)| !agree) {
        Some((what, _)) => Err(format!("{what}: they differ, or may")),
        None => Ok(()),
    }
}

/// Each flow of the part goes on in the merged analysis: one of the kept frames from the
/// merged flow, whose state must be the part's start's; a later one as a new flow.
fn graft_flows(merged: &mut Analyzer, start: &Analyzer, part: &mut Analyzer) -> Result<(), String> {
    let after_ns = start.now_ns;
    let episodes_before = (merged.episodes.len(), start.episodes.len());
    let moved = |index: usize| index + episodes_before.0 - episodes_before.1;
    let ends = std::mem::take(&mut part.flows.flows);
    for (local, mut end) in ends.into_iter().enumerate() {
        for space in [&mut end.requests, &mut end.responses] {
            if let Some(open) = &mut space.open_episode {
                open.index = moved(open.index);
            }
        }
        let before = start.flows.flows.get(local);
        if before != Some(&end) {
            check_pairing(merged, start, before, &end)?;
        }
        let Some(s) = before else {
            check_new_flow(merged, start, &end)?;
            merged.flows.flows.push(end);
            continue;
        };
        if *s == end {
            continue;
        }
        let id =
            merged.flows.get(&s.key).ok_or_else(|| format!("{} is not in the merged analysis", described(&s.key)))?;
        let Some(mine) = merged.flows.flow_mut(id) else { return Err("a flow number".into()) };
        if s.requests.open_episode.is_some() || s.responses.open_episode.is_some() {
            return Err(format!("{} is in a retransmit episode when its kept frames end", described(&s.key)));
        }
        if mine.context() != s.context() {
            return Err(format!("{}'s state differs when its kept frames end", described(&s.key)));
        }
        mine.graft(s, end, after_ns).map_err(|what| format!("{}: {what}", described(&s.key)))?;
    }
    Ok(())
}

/// Pairing by PSN range looks at every unpaired flow between two hosts, whose PSN ranges
/// begin where the parts before saw them begin: a flow that the part paired so after its kept
/// frames, or one left unpaired that took responses while the merged analysis has unpaired
/// flows the part did not know to pair it with, could have gone otherwise in one run.
fn check_pairing(merged: &Analyzer, start: &Analyzer, before: Option<&Flow>, end: &Flow) -> Result<(), String> {
    let paired_by_psn = end.peer.is_some_and(|(_, method)| method.reads_psn_ranges());
    if paired_by_psn && before.is_none_or(|s| s.peer.is_none()) {
        return Err(format!("{} was paired by its PSNs after its kept frames", described(&end.key)));
    }
    let responses = |f: &Flow| {
        let c = &f.counts;
        c.acks + c.atomic_acks + c.naks_psn_seq_err + c.naks_other + c.rnr_naks + f.responses.seq.sequenced
    };
    let took_responses = responses(end) > before.map_or(0, responses);
    let unknown_candidate = merged
        .flows
        .between(end.key.dst, end.key.src)
        .iter()
        .any(|&id| merged.flows.flow(id).is_some_and(|c| c.peer.is_none() && start.flows.get(&c.key).is_none()));
    if end.peer.is_none() && took_responses && unknown_candidate {
        return Err(format!("{} took responses unpaired after its kept frames", described(&end.key)));
    }
    Ok(())
}

/// A flow the part made after its kept frames takes no CM exchange or path MTU of the parts
/// before it that the part did not know.
fn check_new_flow(merged: &Analyzer, start: &Analyzer, f: &Flow) -> Result<(), String> {
    if merged.cm_links.get(&f.key) != start.cm_links.get(&f.key) {
        return Err(format!("{} was set up by a CM exchange before the part", described(&f.key)));
    }
    let hosts = crate::analyze::host_pair(f.key.src, f.key.dst);
    if merged.host_pmtu.get(&hosts) != start.host_pmtu.get(&hosts) {
        return Err(format!("{}'s hosts' path MTU is known from before the part", described(&f.key)));
    }
    Ok(())
}

/// A flow as messages name it.
fn described(key: &crate::analyze::flow::table::FlowKey) -> String {
    format!("the flow {} → {} QP {:#x}", key.src, key.dst, key.dst_qp)
}

/// What the part counted capture-wide after its kept frames, added.
fn graft_capture_wide(merged: &mut Analyzer, start: &Analyzer, part: Analyzer) -> Result<(), &'static str> {
    let after_ns = start.now_ns;
    merged.totals.graft(&start.totals, &part.totals);
    merged.capture.graft(&start.capture, &part.capture);
    merged.policy.graft(&start.policy, &part.policy);
    merged.fct.all.graft(&start.fct.all, &part.fct.all)?;
    for ((mine, s), e) in merged.fct.by_size.iter_mut().zip(&start.fct.by_size).zip(&part.fct.by_size) {
        mine.graft(s, e)?;
    }
    merged.timeline.graft_after(&part.timeline, after_ns);
    let pausing = part.pauses.sources_since(&start.pauses);
    merged.pauses.graft(&start.pauses, part.pauses, after_ns)?;
    if let (IncastSink::Track(mine), IncastSink::Track(s), IncastSink::Track(e)) =
        (&mut merged.incast, &start.incast, part.incast)
    {
        mine.graft(s, e, (after_ns, merged.config.congestion.incast_window_ns), &pausing)?;
    }
    merged.episodes.extend(part.episodes.into_iter().skip(start.episodes.len()));
    merged.cnp_bursts.extend(part.cnp_bursts.into_iter().skip(start.cnp_bursts.len()));
    if merged.episodes.len() > MAX_EPISODES_KEPT || merged.cnp_bursts.len() > MAX_BURSTS_KEPT {
        return Err("the retransmit episodes or CNP bursts kept reach their bound");
    }
    merged.flows.graft_routes(&part.flows);
    for key in start.cm_links.keys() {
        if !part.cm_links.contains_key(key) {
            merged.cm_links.remove(key);
        }
    }
    for (hosts, mtu) in part.host_pmtu {
        merged.host_pmtu.entry(hosts).or_insert(mtu);
    }
    merged.duplicates = part.duplicates;
    merged.deadlines = part.deadlines;
    (merged.now_ns, merged.packets_held) = (part.now_ns, part.packets_held);
    merged.packets_held_peak = merged.packets_held_peak.max(part.packets_held_peak);
    Ok(())
}

impl CaptureFacts {
    /// Goes on as `end` went on from `start`, its facts at an earlier point.
    fn graft(&mut self, start: &CaptureFacts, end: &CaptureFacts) {
        let later = |e: u64, s: u64| e.saturating_sub(s);
        self.last_ts_ns = self.last_ts_ns.max(end.last_ts_ns);
        self.previous_ts_ns = end.previous_ts_ns;
        self.non_monotonic_timestamps += later(end.non_monotonic_timestamps, start.non_monotonic_timestamps);
        self.snaplen_cut += later(end.snaplen_cut, start.snaplen_cut);
        self.mirror_truncated += later(end.mirror_truncated, start.mirror_truncated);
        self.truncated_copies += later(end.truncated_copies, start.truncated_copies);
        self.hardware_timestamps += later(end.hardware_timestamps, start.hardware_timestamps);
        for &(name, count) in &end.encapsulations {
            let before = start.encapsulations.iter().find(|(n, _)| *n == name).map_or(0, |e| e.1);
            match self.encapsulations.iter_mut().find(|(n, _)| *n == name) {
                Some((_, n)) => *n += later(count, before),
                None if count > before => self.encapsulations.push((name, count - before)),
                None => {}
            }
        }
        for &(link, count, first) in &end.undecoded_links {
            let before = start.undecoded_links.iter().find(|(l, ..)| *l == link).map_or(0, |e| e.1);
            match self.undecoded_links.iter_mut().find(|(l, ..)| *l == link) {
                Some(mine) => mine.1 += later(count, before),
                None if count > before => self.undecoded_links.push((link, count - before, first)),
                None => {}
            }
        }
        for layer in &end.malformed {
            let before = start.malformed.iter().find(|m| m.layer == layer.layer).map_or(0, |m| m.frames);
            match self.malformed.iter_mut().find(|m| m.layer == layer.layer) {
                Some(mine) => mine.frames += later(layer.frames, before),
                None if layer.frames > before => {
                    self.malformed.push(MalformedLayer { frames: layer.frames - before, ..layer.clone() })
                }
                None => {}
            }
        }
    }
}
