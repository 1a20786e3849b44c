//! The counters of hosts and switches reconciled with a finished report: each counter's delta
//! beside what the capture saw of the same thing (docs/analysis.md, "Counters beside the
//! capture").

use std::net::IpAddr;

use rustc_hash::FxHashSet;

use crate::analyze::counters::report::{
    Agreement, CounterRow, CounterWindow, HostCounters, Link, Pauses, Source, agrees,
};
use crate::analyze::counters::{HostMacs, HostSnapshots, Snapshot, SwitchSnapshots};
use crate::analyze::id::FlowId;
use crate::analyze::roce::flow::episodes::Trigger;
use crate::analyze::roce::report::FlowReport;
use crate::analyze::roce::report::model::RoceReport;
use crate::decode::Endpoint;

impl Link {
    /// What shows (or not) the link of the host of `snapshots` in `report`.
    pub(crate) fn of(report: &RoceReport, snapshots: &HostSnapshots) -> Link {
        let own = snapshots.macs.own.map(|mac| mac.to_string());
        let sent = |own: &String| report.pfc.iter().chain(&report.pause).any(|p| p.src_mac == *own);
        match own {
            Some(own) if sent(&own) => Link::Seen,
            _ if snapshots.link => Link::Named,
            Some(_) => Link::NotSeen,
            None => Link::Unknown,
        }
    }
}

impl Pauses {
    /// What the capture saw of it: XOFF frames, or the paused time in µs, from the host's MAC
    /// (sent) or its link partner's (received, and only where the capture shows the host's
    /// `link`: a pause frame never leaves its link, and the partner's MAC, a router MAC many
    /// ports share or the peer host's on an L2 network, alone does not say which link it was
    /// on). None when that MAC is not known or the link is not shown.
    pub(crate) fn in_capture(self, report: &RoceReport, macs: HostMacs, link: Link) -> Option<u64> {
        let mac = if self.sent { macs.own } else { macs.partner.filter(|_| link.shown()) }?.to_string();
        let sources = match self.priority {
            Some(_) => &report.pfc,
            None => &report.pause,
        };
        let matching = sources.iter().filter(|p| p.src_mac == mac && p.priority == self.priority);
        Some(if self.duration {
            matching.map(|p| p.stats.paused_ns).sum::<u64>() / 1_000
        } else {
            matching.map(|p| p.stats.xoff).sum()
        })
    }
}

impl HostCounters {
    /// The rows of `snapshots`, paired with what `report` saw where it can.
    pub fn of(report: &RoceReport, snapshots: &HostSnapshots) -> HostCounters {
        let (before, after) = (&snapshots.before, &snapshots.after);
        let link = Link::of(report, snapshots);
        let rows = names(before, after)
            .into_iter()
            .map(|name| CounterRow::of(name, before, after, capture_of(report, snapshots, link, name)))
            .collect();
        HostCounters {
            host: snapshots.host.to_string(),
            source: Source::Nic,
            window: CounterWindow::of(before, after),
            rows,
            link,
        }
    }

    /// A switch's rows: none is paired, as the capture does not say which of its ports it saw.
    pub fn of_switch(snapshots: &SwitchSnapshots) -> HostCounters {
        let (before, after) = (&snapshots.before, &snapshots.after);
        let rows = names(before, after).into_iter().map(|name| CounterRow::of(name, before, after, None)).collect();
        HostCounters {
            host: snapshots.name.clone(),
            source: Source::Switch,
            window: CounterWindow::of(before, after),
            rows,
            link: Link::Unknown,
        }
    }
}

impl CounterWindow {
    fn of(before: &Snapshot, after: &Snapshot) -> CounterWindow {
        let time = |s: &Snapshot| s.time.clone();
        let seconds = time(before).zip(time(after)).map(|(b, a)| a.1.saturating_sub(b.1) as f64 / 1e9);
        CounterWindow { before: time(before).map(|t| t.0), after: time(after).map(|t| t.0), seconds }
    }
}

/// Every counter of either snapshot, in the order first named.
fn names<'s>(before: &'s Snapshot, after: &'s Snapshot) -> Vec<&'s str> {
    let mut names: Vec<&str> = before.counters.iter().map(|(n, _)| n.as_str()).collect();
    names.extend(after.counters.iter().map(|(n, _)| n.as_str()).filter(|name| before.get(name).is_none()));
    names
}

impl CounterRow {
    /// Counter `name`'s row, `capture` what the capture saw of it where it is paired.
    fn of(name: &str, before: &Snapshot, after: &Snapshot, capture: Option<u64>) -> CounterRow {
        let delta = |name: &str| after.get(name)?.checked_sub(before.get(name)?);
        let (b, a) = (before.get(name), after.get(name));
        let compared = match name {
            "rp_cnp_handled" => delta(name).map(|d| d.saturating_add(delta("rp_cnp_ignored").unwrap_or(0))),
            _ => delta(name),
        };
        let (verdict, difference) = match (b, a, compared, capture) {
            (Some(_), Some(_), None, _) => (Agreement::Reset, None),
            (None, _, _, _) | (_, None, _, _) => (Agreement::Missing, None),
            (_, _, Some(d), Some(c)) => (Agreement::of(d, c), Some(difference(d, c))),
            _ => (Agreement::NotVisible, None),
        };
        let capture = capture.filter(|_| verdict != Agreement::NotVisible);
        CounterRow { counter: name.to_string(), before: b, after: a, delta: delta(name), capture, verdict, difference }
    }
}

/// `compared` − `capture`, within what an i64 holds (counters are 64-bit and unsigned).
fn difference(compared: u64, capture: u64) -> i64 {
    let d = i128::from(compared) - i128::from(capture);
    i64::try_from(d).unwrap_or(if d > 0 { i64::MAX } else { i64::MIN })
}

impl Agreement {
    /// The verdict on a counter that grew by `compared` where the capture saw `capture`.
    fn of(compared: u64, capture: u64) -> Agreement {
        if agrees(compared, capture) {
            Agreement::Agrees
        } else if compared > capture {
            Agreement::CaptureSawFewer
        } else {
            Agreement::CaptureSawMore
        }
    }
}

/// The hosts whose NIC counters the report reconciles (`--counters`) that no flow has as its
/// source or destination: the capture (or the frames `-Y` chose) has no RoCE frame of theirs,
/// so their counters pair with nothing.
pub fn hosts_not_in_capture<'r>(counters: &'r [HostCounters], report: &RoceReport) -> Vec<&'r str> {
    let absent = |host: &HostCounters| {
        let Ok(ip) = host.host.parse::<IpAddr>() else { return false };
        !report.flows.iter().any(|f| f.src_ip == Endpoint::Ip(ip) || f.dst_ip == Endpoint::Ip(ip))
    };
    counters.iter().filter(|h| h.source == Source::Nic && absent(h)).map(|h| h.host.as_str()).collect()
}

/// What the capture saw of what counter `name` counts on the host, for the counters paired
/// (docs/analysis.md lists them); `None` for every other counter.
fn capture_of(report: &RoceReport, snapshots: &HostSnapshots, link: Link, name: &str) -> Option<u64> {
    if let Some(pauses) = Pauses::of(name) {
        return pauses.in_capture(report, snapshots.macs, link);
    }
    let host = Endpoint::Ip(snapshots.host);
    let to = || report.flows.iter().filter(move |f| f.dst_ip == host);
    let from = || report.flows.iter().filter(move |f| f.src_ip == host);
    let sum = |flows: &mut dyn Iterator<Item = &FlowReport>, field: fn(&FlowReport) -> u64| flows.map(field).sum();
    Some(match name {
        "np_cnp_sent" => sum(&mut from(), |f| f.counts.cnps),
        "rp_cnp_handled" => sum(&mut to(), |f| f.counts.cnps),
        "np_ecn_marked_roce_packets" => sum(&mut to(), |f| f.ce),
        "out_of_sequence" => {
            // gaps at the receiver: not those only the capture missed
            sum(&mut to(), |f| f.sequence.gaps.saturating_sub(f.sequence.capture_only_gaps) + f.sequence.late_arrivals)
        }
        "packet_seq_err" => sum(&mut to(), |f| f.counts.naks_psn_seq_err),
        "duplicate_request" => sum(&mut to(), |f| f.requests.retransmitted),
        "implied_nak_seq_err" => sum(&mut to(), |f| f.responses.gaps),
        "rnr_nak_retry_err" => sum(&mut to(), |f| f.counts.rnr_naks),
        "local_ack_timeout_err" => {
            let mine: FxHashSet<FlowId> = from().map(|f| f.id).collect();
            let timeouts = report.retransmit_episodes.iter().filter(|e| e.trigger == Trigger::Timeout);
            timeouts.filter(|e| mine.contains(&e.flow)).count() as u64
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::counters::report::family;

    #[test]
    fn differences_of_the_largest_counters_stay_within_an_i64() {
        assert_eq!(difference(5, 3), 2);
        assert_eq!(difference(3, 5), -2);
        assert_eq!(difference(u64::MAX, 0), i64::MAX);
        assert_eq!(difference(0, u64::MAX), i64::MIN);
    }

    #[test]
    fn pause_counters_are_read_by_their_names() {
        let sent3 = Pauses { sent: true, priority: Some(3), duration: false };
        assert_eq!(Pauses::of("tx_prio3_pause"), Some(sent3));
        assert_eq!(
            Pauses::of("rx_prio7_pause_duration"),
            Some(Pauses { sent: false, priority: Some(7), duration: true })
        );
        assert_eq!(Pauses::of("rx_pause_ctrl_phy"), Some(Pauses { sent: false, priority: None, duration: false }));
        for other in ["tx_prio8_pause", "tx_prio3_pause_transition", "rx_prio3_packets", "tx_pause", "x"] {
            assert_eq!(Pauses::of(other), None, "{other}");
        }
        assert_eq!(family("rx_prio0_pause_duration"), Some("PFC pauses"));
        assert_eq!(family("rx_packets_phy"), None);
    }

    #[test]
    fn the_tolerance_is_two_or_half_a_percent() {
        assert!(agrees(0, 0) && agrees(10, 12) && !agrees(10, 13));
        assert!(agrees(10_000, 10_050) && !agrees(10_000, 10_051));
        assert_eq!(Agreement::of(31, 28), Agreement::CaptureSawFewer);
        assert_eq!(Agreement::of(25, 28), Agreement::CaptureSawMore);
    }
}
