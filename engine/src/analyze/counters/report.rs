//! The `counters` section of a report (`analyze --counters HOST=BEFORE,AFTER`): every counter
//! of a host's two snapshots, its delta, and where the capture sees the same thing, what it
//! saw and whether the two agree; the counters' families by name. Defined in
//! docs/analysis.md, "Counters beside the capture"; reconciled in [`super::reconcile`].

use serde::Serialize;

use crate::analyze::exemplar::Exemplar;

#[derive(Debug, Clone, Serialize)]
pub struct HostCounters {
    /// A host's IP address, or a switch's name.
    pub host: String,
    pub source: Source,
    pub window: CounterWindow,
    pub rows: Vec<CounterRow>,
    /// Whether the capture shows the host's own link; `Unknown` for a switch.
    #[serde(skip)]
    pub link: Link,
}

/// Whether the capture shows a host's own link, the only one its pause frames travel: the
/// pauses it sent and those it received (docs/analysis.md, "Counters beside the capture").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Link {
    /// The capture holds a PFC or PAUSE frame from the host's MAC.
    Seen,
    /// The capture holds none, and the user says it is of the host's link (`--link HOST`).
    Named,
    /// The host's MAC is known, the capture holds no pause frame from it and the user does not
    /// name the link.
    NotSeen,
    /// The host's MAC is not known (it sends no RoCE frame, or the capture cannot be read
    /// twice), nor its link named; or the counters are a switch's.
    #[default]
    Unknown,
}

impl Link {
    /// Does the capture show the link, as its own pause frames or the user say?
    pub fn shown(self) -> bool {
        matches!(self, Link::Seen | Link::Named)
    }
}

/// Whose counters: a host's NIC (`--counters`) or a switch (`--switch-counters`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Nic,
    Switch,
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
    pub verdict: Agreement,
    /// The delta compared (with `rp_cnp_ignored` added for `rp_cnp_handled`) less `capture`.
    pub difference: Option<i64>,
}

/// How a counter's delta compares with what the capture saw of the same thing (a frame's
/// verdict is another matter: `flow::verdicts::Verdict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Agreement {
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

impl Agreement {
    /// As the summary and the page say it.
    pub fn label(self) -> &'static str {
        match self {
            Agreement::Agrees => "agrees",
            Agreement::CaptureSawFewer => "capture saw fewer",
            Agreement::CaptureSawMore => "capture saw more",
            Agreement::NotVisible => "not visible",
            Agreement::Reset => "reset",
            Agreement::Missing => "missing",
        }
    }
}

/// The families of paired counters, as the findings name them.
pub const FAMILIES: [&str; 5] = ["CNPs", "ECN marks", "PSN sequence", "timeouts and RNR", "PFC pauses"];

/// The family counter `name` is paired in, if it is paired.
pub fn family(name: &str) -> Option<&'static str> {
    Some(match name {
        "np_cnp_sent" | "rp_cnp_handled" => "CNPs",
        "np_ecn_marked_roce_packets" => "ECN marks",
        "out_of_sequence" | "packet_seq_err" | "duplicate_request" | "implied_nak_seq_err" => "PSN sequence",
        "local_ack_timeout_err" | "rnr_nak_retry_err" => "timeouts and RNR",
        _ if Pauses::of(name).is_some() => "PFC pauses",
        _ => return None,
    })
}

/// Is `name` a counter of pause frames or paused time, sent or received (per priority, or all
/// of them): a NIC's, or a switch port's (`PORT rx_pfcN`)?
pub fn counts_pauses(name: &str) -> bool {
    Pauses::of(name).is_some() || switch_pfc_priority(name).is_some()
}

/// The priority of a switch port's PFC counter (`PORT rx_pfcN`, `PORT tx_pfcN`).
pub fn switch_pfc_priority(name: &str) -> Option<u8> {
    let (_, counter) = name.rsplit_once(' ')?;
    let digit = counter.strip_prefix("rx_pfc").or_else(|| counter.strip_prefix("tx_pfc"))?;
    digit.parse().ok().filter(|p| *p < 8)
}

/// What a pause counter counts (mlx5's names, as `ethtool -S` prints them): the frames or the
/// paused time (µs), of one priority's PFC XOFFs or of 802.3x PAUSE XOFFs, sent by the host
/// (`tx_`) or received from its link partner (`rx_`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pauses {
    pub(crate) sent: bool,
    /// `None` for 802.3x PAUSE (`*_pause_ctrl_phy`).
    pub(crate) priority: Option<u8>,
    pub(crate) duration: bool,
}

impl Pauses {
    pub(crate) fn of(name: &str) -> Option<Pauses> {
        let (sent, rest) = match name.split_at_checked(3)? {
            ("tx_", rest) => (true, rest),
            ("rx_", rest) => (false, rest),
            _ => return None,
        };
        if rest == "pause_ctrl_phy" {
            return Some(Pauses { sent, priority: None, duration: false });
        }
        let rest = rest.strip_prefix("prio")?;
        let (digit, kind) = rest.split_at_checked(1)?;
        let priority = digit.parse::<u8>().ok().filter(|p| *p < 8)?;
        let duration = match kind {
            "_pause" => false,
            "_pause_duration" => true,
            _ => return None,
        };
        Some(Pauses { sent, priority: Some(priority), duration })
    }
}

/// Does `compared` agree with `capture`: within max(2, 0.5 % of `compared`)?
pub fn agrees(compared: u64, capture: u64) -> bool {
    let tolerance = (compared as f64 * 0.005).max(2.0);
    (compared as f64 - capture as f64).abs() <= tolerance
}

impl Exemplar for CounterRow {
    fn exemplar() -> Self {
        CounterRow {
            counter: String::new(),
            before: Some(0),
            after: Some(0),
            delta: Some(0),
            capture: Some(0),
            verdict: Agreement::Agrees,
            difference: Some(0),
        }
    }
}
