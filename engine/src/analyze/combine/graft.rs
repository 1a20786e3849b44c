//! Merging a part longer than the frames its state keeps (`rocescope merge`,
//! docs/scale.md): the part's kept frames are analysed again after the parts before it (the
//! merged analysis) and on their own (the part's start, as the part itself began); where the
//! two have come to the same state by the end of those frames, the part's own analysis
//! went on from there exactly as one run would have, and what it did after is grafted on the
//! merged analysis (its [`Combine::graft`]: counters added, the first frames of the merged
//! analysis kept and the last of the part taken, extremes compared, lists continued), its frame
//! and flow numbers moved on first ([`crate::analyze::renumber`]). Where they have not, or an
//! extreme cannot be told, or a bound was reached, the merge is refused with the reason: it is
//! exact or not made.

use crate::analyze::combining::Combine;
use crate::analyze::frame::FrameSummary;
use crate::analyze::id::FlowId;
use crate::analyze::renumber::{Renumber, Renumbering};
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::flow::table::Flow;

/// `merged` goes on with a part: its kept frames `head`, numbered from 1 at its first, and
/// `part`, its own analysis of all its frames; `frames_before`: the frames of the parts
/// before it.
pub fn after(
    merged: &mut Analyzer,
    head: Vec<FrameSummary>,
    mut part: Analyzer,
    frames_before: u64,
) -> Result<(), String> {
    let mut start = Analyzer::new(part.config()).with_known_qps(part.known_qps().clone());
    let lost_before = merged.wide.duplicates_lost();
    for mut frame in head {
        frame.number = frame.number.after(frames_before);
        start.observe(&frame);
        merged.observe(&frame);
    }
    if !merged.has_decided_doubling() || !start.has_decided_doubling() {
        return Err("the doubled-mirror decision was not taken within them".into());
    }
    let doubled = |a: &Analyzer| a.wide.capture().doubled_mirror.map(|d| d.doubled);
    if doubled(merged) != doubled(&start) {
        return Err("it decides otherwise whether the capture is a doubled mirror".into());
    }
    let flows = flow_numbers(merged, &start, &part)?;
    start.renumber(&Renumbering { frames: 0, flows: flows.clone() });
    part.renumber(&Renumbering { frames: frames_before, flows });
    // the part's open episodes go on in the merged analysis's list, after its episodes
    let episodes_before = (merged.episodes.len(), start.episodes.len());
    part.flows.move_open_episodes(|index| index + episodes_before.0 - episodes_before.1);
    // neither window forgot a frame inside it: both find every copy, whatever their tables
    if merged.wide.duplicates_lost() != lost_before || part.wide.duplicates_lost() > 0 {
        return Err("a mirror-duplicate window forgot frames inside it".into());
    }
    capture_wide_agree(merged, &start, &part)?;
    flows_agree(merged, &start, &part)?;
    let seam = Analyzer::seam(&start, &part);
    merged.graft(&start, part, &seam).map_err(|refused| refused.to_string())?;
    merged.keeps_within_bounds().map_err(String::from)
}

/// The merged number of each of the part's flows: those of its kept frames are the merged
/// analysis's flows of the same keys; those that came later are new, numbered after the
/// merged analysis's flows in the order the part made them.
fn flow_numbers(merged: &Analyzer, start: &Analyzer, part: &Analyzer) -> Result<Vec<FlowId>, String> {
    let mut numbers = Vec::with_capacity(part.flows.flows.len());
    for (local, f) in part.flows.flows.iter().enumerate() {
        let number = match start.flows.flows.get(local) {
            Some(s) if start.flows.get(&s.key) == Some(FlowId::at(local)) => merged.flows.get(&s.key),
            Some(_) => None,
            None if f.previous.is_none() && merged.flows.knows(&f.key) => {
                return Err(format!("{} went on from the parts before it after its kept frames", f.key.described()));
            }
            None => Some(FlowId::at(merged.flows.flows.len() + local - start.flows.flows.len())),
        };
        numbers.push(
            number.ok_or_else(|| format!("{}'s QP number was used again within its kept frames", f.key.described()))?,
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
    let bounds = || {
        if part.episodes_dropped != start.episodes_dropped {
            return Err("retransmit episodes beyond the bound");
        }
        if part.congestion.bursts_not_kept() != start.congestion.bursts_not_kept() {
            return Err("CNP bursts beyond the bound");
        }
        Ok(())
    };
    merged
        .windows_agree(start)
        .and_then(|()| merged.wide.agrees(&start.wide, &part.wide))
        .and_then(|()| bounds())
        .map_err(|what| format!("{what}: they differ, or may"))
}

/// Each flow of the part can go on in the merged analysis: one of the kept frames from the
/// merged flow, whose state must be the part's start's; a later one as a new flow.
fn flows_agree(merged: &Analyzer, start: &Analyzer, part: &Analyzer) -> Result<(), String> {
    for (local, end) in part.flows.flows.iter().enumerate() {
        let before = start.flows.flows.get(local);
        if before != Some(end) {
            check_pairing(merged, start, before, end)?;
            check_notifications(merged, start, before, end)?;
        }
        let Some(s) = before else {
            check_new_flow(merged, start, end)?;
            continue;
        };
        if s == end {
            continue;
        }
        let id =
            merged.flows.get(&s.key).ok_or_else(|| format!("{} is not in the merged analysis", s.key.described()))?;
        let Some(mine) = merged.flows.flow(id) else { return Err("a flow number".into()) };
        if s.requests.open_episode.is_some() || s.responses.open_episode.is_some() {
            return Err(format!("{} is in a retransmit episode when its kept frames end", s.key.described()));
        }
        if mine.context() != s.context() {
            return Err(format!("{}'s state differs when its kept frames end", s.key.described()));
        }
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
        return Err(format!("{} was paired by its PSNs after its kept frames", end.key.described()));
    }
    let responses = |f: &Flow| {
        let c = &f.counts;
        c.acks + c.atomic_acks + c.naks_psn_seq_err + c.naks_other + c.rnr_naks + f.responses.seq.counts.sequenced
    };
    let took_responses = responses(end) > before.map_or(0, responses);
    let unknown_candidate = merged
        .flows
        .between(end.key.dst, end.key.src)
        .iter()
        .any(|&id| merged.flows.flow(id).is_some_and(|c| c.peer.is_none() && start.flows.get(&c.key).is_none()));
    if end.peer.is_none() && took_responses && unknown_candidate {
        return Err(format!("{} took responses unpaired after its kept frames", end.key.described()));
    }
    Ok(())
}

/// A CNP (or BECN) on an unpaired flow answers the earliest waiting mark of the flows from its
/// destination host to its source host known to be sent by its QP (a table or their DETHs say
/// so), or waits for the flow's pairing (docs/analysis.md, "Which marks a CNP answers"): an
/// unpaired flow that took notifications after its kept frames, while the merged analysis has
/// flows between those hosts the part did not know that are known to be sent by its QP, or of
/// unknown source QP with a waiting mark, could have answered another mark in one run.
fn check_notifications(merged: &Analyzer, start: &Analyzer, before: Option<&Flow>, end: &Flow) -> Result<(), String> {
    let notifications = |f: &Flow| f.counts.cnps + f.counts.becn;
    let took = notifications(end) > before.map_or(0, notifications);
    if !took || before.is_some_and(|s| s.peer.is_some()) {
        return Ok(());
    }
    let qp = end.key.dst_qp;
    let sent_by_qp = |f: &Flow| f.src_qp == Some(qp) || f.src_qps.entries.iter().any(|&(q, _)| q == qp);
    let addressed = |f: &Flow| sent_by_qp(f) || (f.src_qp.is_none() && f.waiting_mark().is_some());
    let unknown = merged
        .flows
        .between(end.key.dst, end.key.src)
        .iter()
        .any(|&id| merged.flows.flow(id).is_some_and(|f| start.flows.get(&f.key).is_none() && addressed(f)));
    if unknown {
        return Err(format!("{} took CNPs unpaired after its kept frames", end.key.described()));
    }
    Ok(())
}

/// A flow the part made after its kept frames takes no CM exchange of the parts before it that
/// the part did not know.
fn check_new_flow(merged: &Analyzer, start: &Analyzer, f: &Flow) -> Result<(), String> {
    match merged.cm_link_agrees(start, &f.key) {
        true => Ok(()),
        false => Err(format!("{} was set up by a CM exchange before the part", f.key.described())),
    }
}
