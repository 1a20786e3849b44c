//! The `counters` section of a report (`analyze --counters HOST=BEFORE,AFTER`): every counter
//! of a host's two snapshots, its delta, and where the capture sees the same thing, what it
//! saw and whether the two agree. Defined in docs/analysis.md, "Counters beside the capture".

use serde::Serialize;

use crate::analyze::flow::episodes::Trigger;
use crate::analyze::report::{FlowReport, Report};
use crate::counters::{HostSnapshots, Snapshot};
use crate::decode::Endpoint;

#[derive(Debug, Clone, Serialize)]
pub struct HostCounters {
    pub host: String,
    pub window: CounterWindow,
    pub rows: Vec<CounterRow>,
}

/// When the two snapshots were taken, as their `time:` lines say.
#[derive(Debug, Clone, Serialize)]
pub struct CounterWindow {
    pub before: Option<String>,
    pub after: Option<String>,
    pub seconds: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CounterRow {
    pub counter: String,
    pub before: Option<u64>,
    pub after: Option<u64>,
    pub delta: Option<u64>,
    /// What the capture saw of the same thing, for a counter it can see.
    pub capture: Option<u64>,
    pub verdict: Verdict,
    /// The delta compared (with `rp_cnp_ignored` added for `rp_cnp_handled`) less `capture`.
    pub difference: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Agrees,
    CaptureSawFewer,
    CaptureSawMore,
    /// The capture cannot see what the counter counts, or it is not paired with anything.
    NotVisible,
    /// The after is below the before: the counter was reset between the snapshots.
    Reset,
    /// The counter is in one snapshot only.
    Missing,
}

impl Verdict {
    /// As the summary and the page say it.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::CaptureSawFewer => "capture saw fewer",
            Verdict::CaptureSawMore => "capture saw more",
            Verdict::NotVisible => "not visible",
            Verdict::Reset => "reset",
            Verdict::Missing => "missing",
        }
    }
}

/// The counter families rows are paired in, with the counters of each.
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("CNPs", &["np_cnp_sent", "rp_cnp_handled"]),
    ("ECN marks", &["np_ecn_marked_roce_packets"]),
    ("PSN sequence", &["out_of_sequence", "packet_seq_err", "duplicate_request", "implied_nak_seq_err"]),
    ("timeouts and RNR", &["local_ack_timeout_err", "rnr_nak_retry_err"]),
    ("PFC pauses", &PAUSE_COUNTERS),
];

/// The counters of PFC XOFF frames the host sent, per priority.
pub const PAUSE_COUNTERS: [&str; 8] = [
    "tx_prio0_pause",
    "tx_prio1_pause",
    "tx_prio2_pause",
    "tx_prio3_pause",
    "tx_prio4_pause",
    "tx_prio5_pause",
    "tx_prio6_pause",
    "tx_prio7_pause",
];

/// Is `name` a counter of pause frames, sent or received (per priority, or all of them)?
pub fn counts_pauses(name: &str) -> bool {
    (name.contains("_prio") && name.ends_with("_pause")) || name.ends_with("pause_ctrl_phy")
}

/// Does `compared` agree with `capture`: within max(2, 0.5 % of `compared`)?
pub fn agrees(compared: u64, capture: u64) -> bool {
    let tolerance = (compared as f64 * 0.005).max(2.0);
    (compared as f64 - capture as f64).abs() <= tolerance
}

impl HostCounters {
    /// The rows of `snapshots`, paired with what `report` saw where it can.
    pub fn of(report: &Report, snapshots: &HostSnapshots) -> HostCounters {
        let (before, after) = (&snapshots.before, &snapshots.after);
        let rows = names(before, after)
            .into_iter()
            .map(|name| CounterRow::of(name, before, after, capture_of(report, snapshots, name)))
            .collect();
        let time = |s: &Snapshot| s.time.clone();
        let seconds = time(before).zip(time(after)).map(|(b, a)| a.1.saturating_sub(b.1) as f64 / 1e9);
        HostCounters {
            host: snapshots.host.to_string(),
            window: CounterWindow { before: time(before).map(|t| t.0), after: time(after).map(|t| t.0), seconds },
            rows,
        }
    }
}

/// Every counter of either snapshot, in the order first named.
fn names<'s>(before: &'s Snapshot, after: &'s Snapshot) -> Vec<&'s str> {
    let mut names: Vec<&str> = before.counters.iter().map(|(n, _)| n.as_str()).collect();
    for (name, _) in &after.counters {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
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
            (Some(_), Some(_), None, _) => (Verdict::Reset, None),
            (None, _, _, _) | (_, None, _, _) => (Verdict::Missing, None),
            (_, _, Some(d), Some(c)) => (Verdict::of(d, c), Some(difference(d, c))),
            _ => (Verdict::NotVisible, None),
        };
        let capture = capture.filter(|_| verdict != Verdict::NotVisible);
        CounterRow { counter: name.to_string(), before: b, after: a, delta: delta(name), capture, verdict, difference }
    }
}

/// `compared` − `capture`, within what an i64 holds (counters are 64-bit and unsigned).
fn difference(compared: u64, capture: u64) -> i64 {
    let d = i128::from(compared) - i128::from(capture);
    i64::try_from(d).unwrap_or(if d > 0 { i64::MAX } else { i64::MIN })
}

impl Verdict {
    /// The verdict on a counter that grew by `compared` where the capture saw `capture`.
    fn of(compared: u64, capture: u64) -> Verdict {
        if agrees(compared, capture) {
            Verdict::Agrees
        } else if compared > capture {
            Verdict::CaptureSawFewer
        } else {
            Verdict::CaptureSawMore
        }
    }
}

/// What the capture saw of what counter `name` counts on the host, for the counters paired
/// (docs/analysis.md lists them); `None` for every other counter.
fn capture_of(report: &Report, snapshots: &HostSnapshots, name: &str) -> Option<u64> {
    if let Some(priority) = PAUSE_COUNTERS.iter().position(|&c| c == name) {
        // PFC XOFF frames from the host's MAC with the priority enabled
        let mac = snapshots.mac?.to_string();
        let from_host = report.pfc.iter().filter(|p| p.src_mac == mac && p.priority.map(usize::from) == Some(priority));
        return Some(from_host.map(|p| p.stats.xoff).sum());
    }
    let host = Endpoint::Ip(snapshots.host);
    let to = || report.flows.iter().filter(move |f| f.dst_ip == host);
    let from = || report.flows.iter().filter(move |f| f.src_ip == host);
    let sum = |flows: &mut dyn Iterator<Item = &FlowReport>, field: fn(&FlowReport) -> u64| flows.map(field).sum();
    Some(match name {
        "np_cnp_sent" => sum(&mut from(), |f| f.counts.cnps),
        "rp_cnp_handled" => sum(&mut to(), |f| f.counts.cnps),
        "np_ecn_marked_roce_packets" => sum(&mut to(), |f| f.ce),
        "out_of_sequence" => sum(&mut to(), |f| f.sequence.gaps + f.sequence.late_arrivals),
        "packet_seq_err" => sum(&mut to(), |f| f.counts.naks_psn_seq_err),
        "duplicate_request" => sum(&mut to(), |f| f.requests.retransmitted),
        "implied_nak_seq_err" => sum(&mut to(), |f| f.responses.gaps),
        "rnr_nak_retry_err" => sum(&mut to(), |f| f.counts.rnr_naks),
        "local_ack_timeout_err" => {
            let mine: Vec<u32> = from().map(|f| f.id).collect();
            let timeouts = report.retransmit_episodes.iter().filter(|e| e.trigger == Trigger::Timeout);
            timeouts.filter(|e| mine.contains(&e.flow)).count() as u64
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_of_the_largest_counters_stay_within_an_i64() {
        assert_eq!(difference(5, 3), 2);
        assert_eq!(difference(3, 5), -2);
        assert_eq!(difference(u64::MAX, 0), i64::MAX);
        assert_eq!(difference(0, u64::MAX), i64::MIN);
    }

    #[test]
    fn the_tolerance_is_two_or_half_a_percent() {
        assert!(agrees(0, 0) && agrees(10, 12) && !agrees(10, 13));
        assert!(agrees(10_000, 10_050) && !agrees(10_000, 10_051));
        assert_eq!(Verdict::of(31, 28), Verdict::CaptureSawFewer);
        assert_eq!(Verdict::of(25, 28), Verdict::CaptureSawMore);
    }
}
