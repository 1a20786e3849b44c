//! The `path` section of a report on several taps of one path (`analyze --tap`): each tap's
//! clock, what each hop between two taps did to the packets that crossed it, and where each
//! lost packet disappeared. Computed by [`crate::analyze::path`]; defined in docs/analysis.md, "Where on
//! the path".

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analyze::exemplar::Exemplar;
use crate::analyze::id::FlowId;
use crate::decode::Endpoint;

#[derive(Debug, Clone, Default, Serialize)]
pub struct PathReport {
    /// The taps in path order, from the requester's side to the responder's.
    pub taps: Vec<TapReport>,
    /// Every hop between two consecutive taps, forward then reverse.
    pub hops: Vec<HopReport>,
    /// The packets lost on a hop (at most [`LOSSES_KEPT`]; each hop's `lost` counts them all),
    /// and those lost after the last tap of their way ([`LossReport::lost_on`]).
    pub losses: Vec<LossReport>,
    /// `--path-window-us`, in nanoseconds.
    pub window_ns: u64,
    /// The taps' order as their packets tell it; absent when it is the order given.
    #[serde(skip_serializing_if = "TapOrder::is_as_given")]
    pub tap_order: TapOrder,
}

impl PathReport {
    /// The one-line warning to print when the packets say the taps were not given in the order
    /// a request passes them (`rocescope: warning: ...`); none when they were.
    pub fn order_warning(&self) -> Option<String> {
        let names: Vec<&str> = self.taps.iter().map(|t| t.name.as_str()).collect();
        match &self.tap_order {
            TapOrder::AsGiven => None,
            TapOrder::Reversed => {
                let in_order: Vec<String> = self.taps.iter().rev().map(TapReport::option).collect();
                Some(format!(
                    "--tap: the taps seem to be given in reverse order ({}): packets reach each tap before the one given \
                     before it, and their copies read as lost; give them in the order a request passes them, from the \
                     requester's side: {}",
                    names.join(", "),
                    in_order.join(" ")
                ))
            }
            TapOrder::OutOfOrder(pairs) => {
                let pairs: Vec<String> = pairs.iter().map(|[a, b]| format!("{b} before {a}")).collect();
                Some(format!(
                    "--tap: the taps seem out of order ({}): packets reach {}; give them in the order a request \
                     passes them, from the requester's side",
                    names.join(", "),
                    pairs.join(", ")
                ))
            }
        }
    }
}

/// The order of the taps as the packets tell it: a pair of neighbouring taps is backwards when
/// most of the packets both saw once, either way, reached the second given before they left the
/// first (on the aligned clocks, beyond their uncertainty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TapOrder {
    /// As given, or nothing tells otherwise.
    #[default]
    AsGiven,
    /// Every pair of neighbouring taps that could tell is backwards: the taps were given from
    /// the responder's side.
    Reversed,
    /// These pairs of neighbouring taps, named in the order given, are backwards; others are not.
    OutOfOrder(Vec<[String; 2]>),
}

impl TapOrder {
    /// Is it the order given (the report then leaves it out)?
    pub fn is_as_given(&self) -> bool {
        *self == TapOrder::AsGiven
    }
}

/// The losses the report lists at most.
pub const LOSSES_KEPT: usize = 10_000;

#[derive(Debug, Clone, Serialize)]
pub struct TapReport {
    pub name: String,
    pub files: Vec<String>,
    /// The pcapng interface of the files that is this tap's (`NAME=FILE#IFACE`), or null.
    pub interface: Option<String>,
    /// Frames read from the tap's files (of its interface).
    pub frames: u64,
    /// RoCE packets among them.
    pub roce_packets: u64,
    /// The tap's clock minus the first tap's, at the first tap's first frame.
    pub clock_offset_ns: i64,
    /// How far the true offset may be from `clock_offset_ns` (half the smallest round trip).
    pub offset_uncertainty_ns: Option<u64>,
    pub offset_method: OffsetMethod,
    /// How much faster than the first tap's the tap's clock runs, in parts per million.
    pub drift_ppm: f64,
    /// Packets both of the tap's neighbours on their way saw and the tap did not.
    pub missed: u64,
}

impl TapReport {
    /// The tap as `--tap` gives it: `NAME=FILE[,FILE...][#IFACE]`.
    fn option(&self) -> String {
        let interface = self.interface.as_ref().map(|i| format!("#{i}")).unwrap_or_default();
        format!("--tap {}={}{interface}", self.name, self.files.join(","))
    }
}

/// How a tap's clock offset was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OffsetMethod {
    /// The first tap: the reference.
    Reference,
    /// From packets seen in both directions: half the difference of their smallest one-way
    /// delays, as NTP does.
    TwoWay,
    /// Packets seen in one direction only: the offset that makes the smallest one-way delay
    /// zero, a bound.
    OneWayBound,
    /// `--tap-offset`.
    Given,
    /// No packet the tap shares with its neighbour: no offset could be found (0 is used).
    Unknown,
}

/// The way a packet crosses the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// From the first tap towards the last: the requests of the host on the first tap's side.
    Forward,
    Reverse,
}

#[derive(Debug, Clone, Serialize)]
pub struct HopReport {
    /// The tap the packets passed first, then the one they reached.
    pub from: String,
    pub to: String,
    pub direction: Direction,
    /// Copies seen at both taps.
    pub matched: u64,
    /// Copies seen at `from`, at no tap after it, while the next tap was capturing.
    pub lost: u64,
    /// ECN-capable at `from`, CE at `to`.
    pub ce_added: u64,
    /// DSCP at `from` → DSCP at `to` ("26->0"), for the matched copies whose DSCP changed.
    pub dscp_rewritten: BTreeMap<String, u64>,
    /// The same for the outermost VLAN tag's PCP.
    pub pcp_rewritten: BTreeMap<String, u64>,
    /// The commonest decrease of the TTL (hop limit): the routers between the taps.
    pub ttl_decrement: Option<u8>,
    /// Matched copies that reached `to` after a packet of their flow that left `from` after them.
    pub reordered: u64,
    /// How far the two taps' clocks may be from aligned (half the smallest round trip between
    /// them): the delays below are known to ± this.
    pub delay_uncertainty_ns: Option<u64>,
    /// One-way delays on aligned clocks, by nearest rank; absent when a tap's offset is only a
    /// bound or unknown.
    pub delay_p50_ns: Option<i64>,
    pub delay_p99_ns: Option<i64>,
    pub delay_max_ns: Option<i64>,
    /// The delays' distribution: [`DELAY_BINS`] bins of equal width from the smallest delay to
    /// the largest.
    pub delay_bins: Option<DelayBins>,
}

/// The bins of a hop's delay distribution.
pub const DELAY_BINS: usize = 20;

#[derive(Debug, Clone, Serialize)]
pub struct DelayBins {
    /// The first bin's lower edge (the smallest delay) and every bin's width, in ns.
    pub first_ns: i64,
    pub width_ns: i64,
    pub counts: Vec<u64>,
}

impl DelayBins {
    /// The bins of `sorted`, ascending delays.
    pub fn of(sorted: &[i64]) -> Option<DelayBins> {
        let (&first_ns, &last) = (sorted.first()?, sorted.last()?);
        let width_ns = ((last - first_ns) / DELAY_BINS as i64 + 1).max(1);
        let mut counts = vec![0u64; DELAY_BINS];
        for d in sorted {
            let bin = usize::try_from((d - first_ns) / width_ns).unwrap_or(0).min(DELAY_BINS - 1);
            if let Some(c) = counts.get_mut(bin) {
                *c += 1;
            }
        }
        Some(DelayBins { first_ns, width_ns, counts })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct LossReport {
    /// The flow's id in the report's `flows` (absent when the analysis has no such flow).
    pub flow: Option<FlowId>,
    pub src: Endpoint,
    pub dst: Endpoint,
    pub dest_qp: u32,
    pub psn: u32,
    pub opcode: u8,
    /// The last tap that saw it.
    pub last_tap: String,
    /// The hop where it disappeared, "from->to"; or "after:NAME", NAME the last tap of its way:
    /// it reached that tap and a resend that starts a run of resends sent it again (a packet a
    /// later resend of a go-back-N run sent again was discarded behind the run's hole, and is not
    /// listed; docs/analysis.md, "Per hop").
    pub lost_on: String,
}

impl Exemplar for HopReport {
    fn exemplar() -> Self {
        HopReport {
            from: String::new(),
            to: String::new(),
            direction: Direction::Forward,
            matched: 0,
            lost: 0,
            ce_added: 0,
            dscp_rewritten: BTreeMap::new(),
            pcp_rewritten: BTreeMap::new(),
            ttl_decrement: Some(0),
            reordered: 0,
            delay_uncertainty_ns: Some(0),
            delay_p50_ns: Some(0),
            delay_p99_ns: Some(0),
            delay_max_ns: Some(0),
            delay_bins: Some(DelayBins { first_ns: 0, width_ns: 0, counts: Vec::new() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tap(name: &str, files: &[&str], interface: Option<&str>) -> TapReport {
        TapReport {
            name: name.to_string(),
            files: files.iter().map(|f| f.to_string()).collect(),
            interface: interface.map(str::to_string),
            frames: 0,
            roce_packets: 0,
            clock_offset_ns: 0,
            offset_uncertainty_ns: None,
            offset_method: OffsetMethod::Unknown,
            drift_ppm: 0.0,
            missed: 0,
        }
    }

    fn path(tap_order: TapOrder) -> PathReport {
        let taps = vec![
            tap("host_b", &["b.pcap"], None),
            tap("leaf", &["l.pcapng"], Some("1")),
            tap("host_a", &["a1", "a2"], None),
        ];
        PathReport { taps, tap_order, ..PathReport::default() }
    }

    #[test]
    fn taps_in_reverse_give_a_warning_that_gives_them_in_the_paths_order() {
        let warning = path(TapOrder::Reversed).order_warning().expect("a warning");
        assert!(warning.starts_with("--tap: the taps seem to be given in reverse order (host_b, leaf, host_a)"));
        assert!(
            warning
                .ends_with("from the requester's side: --tap host_a=a1,a2 --tap leaf=l.pcapng#1 --tap host_b=b.pcap")
        );
        assert!(!warning.contains('\n'), "one line");
    }

    #[test]
    fn taps_out_of_order_name_the_pairs_and_taps_in_order_give_no_warning() {
        let swapped = TapOrder::OutOfOrder(vec![["leaf".to_string(), "host_a".to_string()]]);
        let warning = path(swapped).order_warning().expect("a warning");
        assert!(warning.contains("packets reach host_a before leaf;"), "{warning}");
        assert_eq!(path(TapOrder::AsGiven).order_warning(), None);
    }
}
