//! The findings of counter snapshots reconciled with the capture (`analyze --counters`): each
//! names its host.

use crate::analyze::counters::report::{Agreement, CounterRow, FAMILIES, HostCounters, Link, counts_pauses, family};
use crate::analyze::finding::{Evidence, kinds};

use crate::analyze::roce::report::model::RoceReport;
use crate::analyze::rules::{About, Rules};

/// What the counters' rules read: the hosts' and switches' counters, and the RoCE analysis's
/// section they were reconciled with.
pub(crate) struct Sections<'r> {
    pub(crate) counters: &'r [HostCounters],
    pub(crate) roce: &'r RoceReport,
}

/// The counters of receive drops in the NIC: packets that reached the host and were dropped
/// for lack of receive buffers.
const RX_DROPS: &[&str] = &["rx_out_of_buffer", "rx_discards_phy", "rx_discards"];

/// The counters of errors on the link: symbols and frames received damaged, blocks FEC could
/// not correct (corrected bits alone are no error).
fn is_link_error(name: &str) -> bool {
    matches!(name, "rx_symbol_err_phy" | "rx_crc_errors_phy" | "rx_pcs_symbol_err_phy")
        || (name.contains("fec") && name.contains("uncorr"))
}

/// The counters' rules: counters that disagree with the capture, NIC drops, pauses the capture
/// lacks.
pub(crate) fn counters(r: &mut Rules<'_, Sections<'_>>) {
    for host in r.report.counters {
        growth(r, host, RX_DROPS_FINDING, |name| RX_DROPS.contains(&name));
        growth(r, host, LINK_ERRORS_FINDING, is_link_error);
        growth(r, host, QUEUE_DROPS_FINDING, |name| name.ends_with(" dropped_packets"));
        if !pauses_captured(r) {
            growth(r, host, PAUSE_NOT_IN_CAPTURE_FINDING, counts_pauses);
        } else if host.link == Link::NotSeen {
            growth(r, host, PAUSE_NOT_ON_LINK_FINDING, counts_pauses);
        }
        disagreements(r, host);
    }
}

/// A finding raised by counters that grew: what it is, and its message after the host.
struct Growth {
    about: About,
    what: &'static str,
}

const RX_DROPS_FINDING: Growth = Growth {
    about: About {
        kind: kinds::NIC_RX_DROPS,
        cause: "The host's NIC dropped packets it received because no receive buffer was free: host-side loss, not the network's. The capture on the wire shows these packets arriving; the receiver then NAKs or times out as if the network had lost them.",
        action: "Size the receive rings and buffers (ethtool -G, the number of receive WQEs and SRQ depth), check the CPU and PCIe load of the receiver, and look at rx_out_of_buffer per queue.",
    },
    what: "the NIC dropped received packets",
};

const LINK_ERRORS_FINDING: Growth = Growth {
    about: About {
        kind: kinds::LINK_ERRORS,
        cause: "The link delivers damaged symbols or frames: the field guide's slow degradation over weeks, an ageing optic or a marginal cable (or a dirty connector). Damaged frames are dropped before any capture sees them.",
        action: "Check the optics' receive power and the cable (ethtool -m), clean or replace them, and watch the corrected-bits counter for the trend.",
    },
    what: "errors on the link",
};

const QUEUE_DROPS_FINDING: Growth = Growth {
    about: About {
        kind: kinds::SWITCH_QUEUE_DROPS,
        cause: "The switch dropped packets in an egress queue: on the lossless RoCE queue, PFC is off for its priority, its headroom is too small or the DSCP-to-queue map sends RoCE to a lossy queue; on a lossy queue, plain congestion. The capture downstream shows these drops as PSN gaps.",
        action: "Check that PFC is enabled on the queue's priority (show priority-flow-control), the buffer profile's headroom and the DSCP-to-TC map, and that ECN marks before the queue fills (show ecn).",
    },
    what: "queue drops grew",
};

const PAUSE_NOT_IN_CAPTURE_FINDING: Growth = Growth {
    about: About {
        kind: kinds::PAUSE_NOT_IN_CAPTURE,
        cause: "The host's NIC sent or received pause frames, but the capture holds none: PFC and PAUSE frames live on one link and are consumed by the MAC at its other end, so a mirror session or a host capture does not see them.",
        action: "Capture at the port itself (a tap on the link, or the switch's own PFC counters: show pfc counters) to see when and how long the link paused.",
    },
    what: "pause counters grew but the capture has no pause frame",
};

/// `PAUSE_NOT_IN_CAPTURE` where the capture has pause frames, but none from the host's MAC.
const PAUSE_NOT_ON_LINK_FINDING: Growth = Growth {
    about: About {
        kind: kinds::PAUSE_NOT_IN_CAPTURE,
        cause: "The host's NIC sent or received pause frames, but the capture does not show its link: it holds pause frames, none of them from the host's MAC. PFC and PAUSE frames live on one link and are consumed by the MAC at its other end, so a capture of another port, a mirror session or a host capture does not see them; a pause frame from the host's link partner's MAC may have been sent on another port of the switch (a router MAC is often shared by every port), so the host's received pause counters are not paired.",
        action: "Capture at the host's own port (a tap on its link, or the switch's own PFC counters: show pfc counters) to see when and how long it paused; if the capture is of the host's link, say so with --link HOST.",
    },
    what: "pause counters grew but the capture has no pause frame of its link",
};

/// Does the capture hold any pause frame at all?
fn pauses_captured(r: &Rules<'_, Sections<'_>>) -> bool {
    !r.report.roce.pfc.is_empty() || !r.report.roce.pause.is_empty()
}

/// `finding` when some of the host's counters `wanted` picks grew, with their growth.
fn growth(r: &mut Rules<'_, Sections<'_>>, host: &HostCounters, finding: Growth, wanted: impl Fn(&str) -> bool) {
    let rows: Vec<&CounterRow> =
        host.rows.iter().filter(|row| wanted(&row.counter) && row.delta.is_some_and(|d| d > 0)).collect();
    if rows.is_empty() {
        return;
    }
    let count = rows.iter().filter_map(|row| row.delta).fold(0u64, u64::saturating_add);
    let listed: Vec<String> = rows.iter().map(|row| format!("{} +{}", row.counter, row.delta.unwrap_or(0))).collect();
    r.add(finding.about, format!("{}: {}: {}", host.host, finding.what, listed.join(", ")), on_host(host, count));
}

fn on_host(host: &HostCounters, count: u64) -> Evidence {
    Evidence { count, host: Some(host.host.clone()), ..Evidence::default() }
}

/// One finding per family of paired counters some of whose rows disagree, with the likely
/// reason.
fn disagreements(r: &mut Rules<'_, Sections<'_>>, host: &HostCounters) {
    for name in FAMILIES {
        // with no pause frame captured, or none of the host's link, PAUSE_NOT_IN_CAPTURE speaks
        // of the pause counters
        if name == "PFC pauses" && (!pauses_captured(r) || host.link == Link::NotSeen) {
            continue;
        }
        let rows: Vec<&CounterRow> = host
            .rows
            .iter()
            .filter(|row| family(&row.counter) == Some(name))
            .filter(|row| matches!(row.verdict, Agreement::CaptureSawFewer | Agreement::CaptureSawMore))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let what: Vec<String> = rows
            .iter()
            .map(|row| {
                format!(
                    "{} +{} counted, {} in the capture",
                    row.counter,
                    row.delta.unwrap_or(0),
                    row.capture.unwrap_or(0)
                )
            })
            .collect();
        let reason = Reason::of(r, host, name, &rows);
        r.add(
            About {
                kind: kinds::COUNTERS_DISAGREE,
                cause: reason.cause(),
                action: "Take the snapshots right before and after the capture, on the device that carries the capture's traffic; mirror every priority RoCE and CNPs use, and check the mirror session's drop counters.",
            },
            format!("{}: {name} counters and the capture disagree (likely {}): {}", host.host, reason.label(), what.join("; ")),
            on_host(host, rows.len() as u64),
        );
    }
}

/// Why a family's counters and the capture disagree, as the evidence points (the first that
/// holds, in this order; docs/analysis.md, "Counters beside the capture").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    /// The host's receive drop counters grew, and the family is the PSN sequence's.
    ReceiveDrops,
    /// A counter grew of which the capture has nothing, though it has the host's RoCE traffic.
    NotMirrored,
    /// The capture lacks PSNs of the host's flows that their responder acknowledged.
    CopiesDropped,
    /// The snapshots span more than twice the capture's duration and a second.
    OutsideWindow,
    /// Fewer in the capture, and no evidence points to one reason.
    Fewer,
    /// More in the capture than counted.
    More,
}

impl Reason {
    fn of(r: &Rules<'_, Sections<'_>>, host: &HostCounters, family: &str, rows: &[&CounterRow]) -> Reason {
        let report = r.report.roce;
        let fewer: Vec<&&CounterRow> = rows.iter().filter(|row| row.verdict == Agreement::CaptureSawFewer).collect();
        let host_flows =
            || report.flows.iter().filter(|f| f.src_ip.to_string() == host.host || f.dst_ip.to_string() == host.host);
        let dropped = |name: &str| RX_DROPS.contains(&name);
        if fewer.is_empty() {
            return Reason::More;
        }
        if family == "PSN sequence"
            && host.rows.iter().any(|row| dropped(&row.counter) && row.delta.is_some_and(|d| d > 0))
        {
            return Reason::ReceiveDrops;
        }
        if fewer.iter().any(|row| row.capture == Some(0)) && host_flows().next().is_some() {
            return Reason::NotMirrored;
        }
        if host_flows().any(|f| f.sequence.capture_missed > 0) {
            return Reason::CopiesDropped;
        }
        let capture_s = report.capture.duration_ns as f64 / 1e9;
        if host.window.seconds.is_some_and(|window| window > 2.0 * capture_s + 1.0) {
            return Reason::OutsideWindow;
        }
        Reason::Fewer
    }

    /// As the finding's message names it.
    fn label(self) -> &'static str {
        match self {
            Reason::ReceiveDrops => "receive drops in the NIC",
            Reason::NotMirrored => "a priority the mirror does not copy",
            Reason::CopiesDropped => "a mirror dropping copies",
            Reason::OutsideWindow => "counts outside the capture's window",
            Reason::Fewer => "copies dropped, a priority not mirrored or counts outside the window",
            Reason::More => "a counter narrower than the capture",
        }
    }

    fn cause(self) -> &'static str {
        match self {
            Reason::ReceiveDrops => {
                "The NIC dropped packets the capture saw arrive (its receive drop counters grew): the receiver's sequence counters count the gaps and resends that loss made, which the wire never showed."
            }
            Reason::NotMirrored => {
                "The capture has the host's RoCE traffic but none of what this counter counts: it travels on a priority the mirror does not copy. CNPs usually have a priority of their own (often 6), which a mirror session set to the data's priority misses."
            }
            Reason::CopiesDropped => {
                "The capture shows some but not all: the mirror session or the capture dropped copies. The capture itself lacks PSNs of the host's flows that their responder acknowledged, as an oversubscribed mirror port or a full capture buffer makes."
            }
            Reason::OutsideWindow => {
                "The snapshots span much more time than the capture: what the counters counted before the capture began or after it ended is not in it."
            }
            Reason::Fewer => {
                "The NIC counted more than the capture saw: the mirror session or the capture dropped copies, the packets left on a priority or path the mirror does not copy (CNPs on their own priority often are not mirrored), or they happened outside the capture's window (the snapshots were taken long before or after it)."
            }
            Reason::More => {
                "The capture saw more than the NIC counted: the counter counts something narrower than the capture's pairing (one port of a bonded or multi-port NIC, one device of several on the host), or the snapshots were taken inside the capture's window."
            }
        }
    }
}
