//! Resends the sender's timer set off while PFC held it: joined after the analysis, since the
//! pause frames are analysed apart from the flows (docs/analysis.md, "Retransmit episodes").

use crate::analyze::id::{FrameNumber, Space};
use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::flow::episodes::{Episode, Trigger};
use crate::analyze::roce::flow::table::Flow;
use crate::analyze::roce::wide::pfc::{PAUSE_CHANNEL, PausePeriod};
use crate::analyze::roce::wide::policy::Policy;

/// The analysis's retransmit episodes, a request flow's `no_nak` resend that a pause on the
/// flow's priority held in the `--min-ack-timeout-us` before it made a `timeout`: the
/// sender's timer expired while PFC paused it, and the packets it had queued went out before
/// the resend, so the tap saw little silence. Its `trigger_frame` is the XOFF that began the
/// pause.
pub fn episodes(a: &Analyzer) -> Vec<Episode> {
    let paused = Paused::of(&a.wide.pauses().ended.periods);
    let window_ns = a.config.min_ack_timeout_ns;
    let mut episodes = a.episodes.clone();
    for e in episodes.iter_mut().filter(|e| e.trigger == Trigger::NoNak && e.space == Space::Requests) {
        let Some(flow) = a.flows.flows.get(e.flow.index()) else { continue };
        let priority = priority_of(flow, &a.config.policy);
        if let Some(xoff) = paused.holding(priority, e.start_ts_ns, window_ns) {
            e.trigger = Trigger::Timeout;
            e.trigger_frame = Some(xoff);
        }
    }
    episodes
}

/// When each channel (a PFC priority, or [`PAUSE_CHANNEL`]) was paused by any source: the
/// union of its periods, as disjoint intervals `(start_ns, end_ns, first XOFF frame)` in time
/// order.
#[derive(Debug, Clone)]
pub struct Paused([Vec<(i64, i64, FrameNumber)>; PAUSE_CHANNEL + 1]);

impl Paused {
    /// The union of `periods`, channel by channel, whatever their sources.
    pub fn of(periods: &[PausePeriod]) -> Paused {
        let mut by_start = periods.to_vec();
        by_start.sort_by_key(|p| (p.period.start_ns, p.period.start_frame));
        let mut paused = Paused(Default::default());
        for p in by_start {
            let Some(channel) = paused.0.get_mut(usize::from(p.channel)) else { continue };
            let c = p.period;
            match channel.last_mut() {
                Some(last) if c.start_ns <= last.1 => last.1 = last.1.max(c.end_ns),
                _ => channel.push((c.start_ns, c.end_ns, c.start_frame)),
            }
        }
        paused
    }

    /// When `channel` was paused: disjoint `(start_ns, end_ns, first XOFF frame)` in time
    /// order; none for a channel beyond [`PAUSE_CHANNEL`].
    pub fn intervals(&self, channel: usize) -> &[(i64, i64, FrameNumber)] {
        self.0.get(channel).map_or(&[], Vec::as_slice)
    }

    /// The first XOFF of the latest pause of `priority` (or of every priority) that began
    /// before `resend_ns` and lasted into the `window_ns` before it.
    fn holding(&self, priority: Option<u8>, resend_ns: i64, window_ns: i64) -> Option<FrameNumber> {
        let channels = priority.map(usize::from).into_iter().chain([PAUSE_CHANNEL]);
        let held = channels.filter_map(|c| {
            let intervals = self.0.get(c)?;
            let before = intervals.partition_point(|i| i.0 < resend_ns);
            let last = intervals.get(before.checked_sub(1)?)?;
            (last.1 > resend_ns.saturating_sub(window_ns)).then_some(*last)
        });
        held.max_by_key(|i| (i.1, i.2)).map(|i| i.2)
    }
}

/// The PFC priority `flow` travels on: the one 802.1p priority its frames carry, or, untagged,
/// the QoS plan's data priority (`--data-pcp`) where its one DSCP is the plan's data DSCP;
/// otherwise unknown.
fn priority_of(flow: &Flow, policy: &Policy) -> Option<u8> {
    let only = |entries: &[(u8, u64)], others: u64| match entries {
        [(value, _)] if others == 0 => Some(*value),
        _ => None,
    };
    if flow.pcp.entries.is_empty() && flow.pcp.others == 0 {
        let dscp = only(&flow.dscp.entries, flow.dscp.others)?;
        return (dscp == policy.data_dscp).then_some(policy.data_pcp);
    }
    only(&flow.pcp.entries, flow.pcp.others)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::roce::wide::pfc::Closed;
    use rocescope_parsers::ethernet::MacAddr;

    fn period(channel: u8, start_ns: i64, end_ns: i64, start_frame: u64) -> PausePeriod {
        PausePeriod {
            channel,
            source: MacAddr([2, 0, 0, 0, 0, start_frame as u8]),
            period: Closed { start_ns, end_ns, start_frame: FrameNumber::new(start_frame), storm: false },
        }
    }

    #[test]
    fn overlapping_periods_of_two_sources_are_one_pause_from_the_first_xoff() {
        let paused = Paused::of(&[period(3, 500, 900, 7), period(3, 100, 600, 2), period(3, 2_000, 2_100, 9)]);
        assert_eq!(paused.0[3], vec![(100, 900, FrameNumber::new(2)), (2_000, 2_100, FrameNumber::new(9))]);
        // held in the 200 ns before 1,000: the pause from 100 to 900
        assert_eq!(paused.holding(Some(3), 1_000, 200).map(FrameNumber::get), Some(2));
        // not in the 50 ns before it, nor on another priority, nor when unknown
        assert_eq!(paused.holding(Some(3), 1_000, 50), None);
        assert_eq!(paused.holding(Some(4), 1_000, 200), None);
        assert_eq!(paused.holding(None, 1_000, 200), None);
        // a pause that began after the resend did not hold it
        assert_eq!(paused.holding(Some(3), 1_950, 2_000).map(FrameNumber::get), Some(2));
        // 802.3x PAUSE holds every priority, and the latest pause is the one
        let paused = Paused::of(&[period(3, 100, 900, 2), period(PAUSE_CHANNEL as u8, 800, 950, 5)]);
        assert_eq!(paused.holding(None, 1_000, 200).map(FrameNumber::get), Some(5));
        assert_eq!(paused.holding(Some(3), 1_000, 200).map(FrameNumber::get), Some(5));
    }
}
