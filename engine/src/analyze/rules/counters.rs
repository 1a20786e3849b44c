//! The findings of counter snapshots reconciled with the capture (`analyze --counters`): each
//! names its host.

use crate::analyze::report::counters::{CounterRow, FAMILIES, HostCounters, PAUSE_COUNTERS, Verdict, counts_pauses};
use crate::analyze::report::finding::{Evidence, kinds};

use super::{About, Rules};

/// The counters of receive drops in the NIC: packets that reached the host and were dropped
/// for lack of receive buffers.
const RX_DROPS: &[&str] = &["rx_out_of_buffer", "rx_discards_phy", "rx_discards"];

/// The counters of errors on the link: symbols and frames received damaged, blocks FEC could
/// not correct (corrected bits alone are no error).
fn is_link_error(name: &str) -> bool {
    matches!(name, "rx_symbol_err_phy" | "rx_crc_errors_phy" | "rx_pcs_symbol_err_phy")
        || (name.contains("fec") && name.contains("uncorr"))
}

pub(super) fn counters(r: &mut Rules<'_>) {
    for host in &r.report.counters {
        growth(r, host, RX_DROPS_FINDING, |name| RX_DROPS.contains(&name));
        growth(r, host, LINK_ERRORS_FINDING, is_link_error);
        if !pauses_captured(r) {
            growth(r, host, PAUSE_NOT_IN_CAPTURE_FINDING, counts_pauses);
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

const PAUSE_NOT_IN_CAPTURE_FINDING: Growth = Growth {
    about: About {
        kind: kinds::PAUSE_NOT_IN_CAPTURE,
        cause: "The host's NIC sent or received pause frames, but the capture holds none: PFC and PAUSE frames live on one link and are consumed by the MAC at its other end, so a mirror session or a host capture does not see them.",
        action: "Capture at the port itself (a tap on the link, or the switch's own PFC counters: show pfc counters) to see when and how long the link paused.",
    },
    what: "pause counters grew but the capture has no pause frame",
};

/// Does the capture hold any pause frame at all?
fn pauses_captured(r: &Rules<'_>) -> bool {
    !r.report.pfc.is_empty() || !r.report.pause.is_empty()
}

/// `finding` when some of the host's counters `wanted` picks grew, with their growth.
fn growth(r: &mut Rules<'_>, host: &HostCounters, finding: Growth, wanted: impl Fn(&str) -> bool) {
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

/// One finding per family of paired counters some of whose rows disagree.
fn disagreements(r: &mut Rules<'_>, host: &HostCounters) {
    for (family, members) in FAMILIES {
        // with no pause frame captured, PAUSE_NOT_IN_CAPTURE speaks of the pause counters
        if *members == PAUSE_COUNTERS.as_slice() && !pauses_captured(r) {
            continue;
        }
        let rows: Vec<&CounterRow> = host
            .rows
            .iter()
            .filter(|row| members.contains(&row.counter.as_str()))
            .filter(|row| matches!(row.verdict, Verdict::CaptureSawFewer | Verdict::CaptureSawMore))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let fewer = rows.iter().any(|row| row.verdict == Verdict::CaptureSawFewer);
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
        let cause = if fewer {
            "The NIC counted more than the capture saw: the mirror session or the capture dropped copies, the packets left on a priority or path the mirror does not copy (CNPs on their own priority often are not mirrored), or they happened outside the capture's window (the snapshots were taken long before or after it)."
        } else {
            "The capture saw more than the NIC counted: the counter counts something narrower than the capture's pairing (one port of a bonded or multi-port NIC, one device of several on the host), or the snapshots were taken inside the capture's window."
        };
        r.add(
            About {
                kind: kinds::COUNTERS_DISAGREE,
                cause,
                action: "Take the snapshots right before and after the capture, on the device that carries the capture's traffic; mirror every priority RoCE and CNPs use, and check the mirror session's drop counters.",
            },
            format!("{}: {} counters and the capture disagree: {}", host.host, family, what.join("; ")),
            on_host(host, rows.len() as u64),
        );
    }
}
