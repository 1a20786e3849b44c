//! The findings of Ultra Ethernet Transport packets: their CRCs, and what each PDC's PSNs,
//! ACKs and NACKs say (docs/analysis.md, "UET").

use crate::analyze::finding::{EVIDENCE_KEPT, Evidence, kinds};
use crate::analyze::id::FrameNumber;
use crate::analyze::rules::{About, Rules, plural};
use crate::analyze::uet::report::{PdcReport, UetReport};

/// NACK codes of a PDC that could not be used: INV_DPDCID, INVALID_SYN, NO_PDC_AVAIL,
/// PDC_MODE_MISMATCH, CLOSING_IN_ERR.
const PDC_ERRORS: [&str; 5] = ["INV_DPDCID", "INVALID_SYN", "NO_PDC_AVAIL", "PDC_MODE_MISMATCH", "CLOSING_IN_ERR"];
/// NACK codes of trimming.
const TRIMMING: [&str; 3] = ["TRIMMED", "TRIMMED_LASTHOP", "TRIMMED_ACK"];

/// The UET rules: CRCs, loss, trimming, NACKs, ROD order, ECN echoes, PDC errors.
pub(crate) fn uet(r: &mut Rules<'_, Option<UetReport>>) {
    let Some(uet) = r.report else { return };
    crc(r, uet);
    pdc_rule(
        r,
        uet,
        LOSS,
        |p| p.missing + p.lost_before_tap,
        |p| format!("{} missing, {} lost before the tap", p.missing, p.lost_before_tap),
        |p| vec![p.first_frame],
    );
    pdc_rule(
        r,
        uet,
        TRIMMED,
        |p| p.trimmed,
        |p| format!("{} trimmed", p.trimmed),
        |p| nack_frames(p, |code| TRIMMING.contains(&code)),
    );
    pdc_rule(
        r,
        uet,
        NACKS,
        |p| nacks(p, |code| !TRIMMING.contains(&code)),
        |p| named_nacks(p, |code| !TRIMMING.contains(&code)),
        |p| nack_frames(p, |code| !TRIMMING.contains(&code)),
    );
    pdc_rule(
        r,
        uet,
        ROD_OUT_OF_ORDER,
        |p| if p.ordered() { p.out_of_order } else { 0 },
        |p| format!("{} out of order", p.out_of_order),
        |p| vec![p.first_frame],
    );
    pdc_rule(
        r,
        uet,
        ECN_ECHO,
        |p| p.ecn_marks_not_echoed + p.ecn_echoes_without_mark,
        |p| {
            format!(
                "{} ACKs without M naming a CE-marked packet, {} ACKs with M naming an unmarked one",
                p.ecn_marks_not_echoed, p.ecn_echoes_without_mark
            )
        },
        |p| vec![p.first_frame],
    );
    pdc_rule(
        r,
        uet,
        PDC_ERRORS_FINDING,
        |p| nacks(p, |code| PDC_ERRORS.contains(&code)),
        |p| named_nacks(p, |code| PDC_ERRORS.contains(&code)),
        |p| nack_frames(p, |code| PDC_ERRORS.contains(&code)),
    );
}

/// The frames of the first NACKs of `p` whose code name `wanted` picks.
fn nack_frames(p: &PdcReport, wanted: impl Fn(&str) -> bool) -> Vec<FrameNumber> {
    let mut frames: Vec<FrameNumber> =
        p.nack_frames.iter().filter(|(code, _)| wanted(code)).flat_map(|(_, f)| f).copied().collect();
    frames.sort_unstable();
    frames
}

/// The NACKs of `p` whose code name `wanted` picks.
fn nacks(p: &PdcReport, wanted: impl Fn(&str) -> bool) -> u64 {
    p.nacks.iter().filter(|(code, _)| wanted(code)).map(|(_, n)| n).sum()
}

fn named_nacks(p: &PdcReport, wanted: impl Fn(&str) -> bool) -> String {
    let named: Vec<String> =
        p.nacks.iter().filter(|(code, _)| wanted(code)).map(|(code, n)| format!("{code} {n}")).collect();
    named.join(", ")
}

/// A finding, its message's head after the count, and its unit.
struct PdcFinding {
    about: About,
    what: &'static str,
    unit: &'static str,
}

const LOSS: PdcFinding = PdcFinding {
    about: About {
        kind: kinds::UET_LOSS,
        cause: "Requests were lost on the way to the target: PSNs never seen and never acknowledged (missing), or first seen as a resend (lost before the tap). On a sprayed fabric a lossy path or a congested switch that drops instead of trimming.",
        action: "Find the path and switch that drops (the entropy values of the lost packets pick their paths), check its drop and trimming configuration, and compare with its queue counters.",
    },
    what: "lost",
    unit: "PSN",
};

const TRIMMED: PdcFinding = PdcFinding {
    about: About {
        kind: kinds::UET_TRIMMING,
        cause: "Switches trimmed packets: a congested queue cut their payload and forwarded the header, and the target NACKed them (TRIMMED, TRIMMED_LASTHOP, TRIMMED_ACK). Congestion, not corruption: the sender resends.",
        action: "Look at the congestion control's reaction (NSCC or credits) and at the queues of the trimming switches; trimming on the last hop points to incast at the target.",
    },
    what: "trimmed",
    unit: "packet",
};

const NACKS: PdcFinding = PdcFinding {
    about: About {
        kind: kinds::UET_NACKS,
        cause: "The target refused packets for the reasons their NACK codes name (resources, PSN out of the window, ordering, PDC state); each costs a resend or a failed operation.",
        action: "Act on the codes named: resource codes (NO_PKT_BUFFER, NO_RESOURCE, NO_CCC_AVAIL) point to the target's sizing, PSN_OOR_WINDOW to the sender's window against the target's MPR, ROD_OOO to reordering on an ordered PDC.",
    },
    what: "NACKed",
    unit: "NACK",
};

const ROD_OUT_OF_ORDER: PdcFinding = PdcFinding {
    about: About {
        kind: kinds::UET_ROD_OUT_OF_ORDER,
        cause: "Packets of an ordered (ROD) PDC arrived out of order: ROD requires in-order delivery, so the target drops them (NACK ROD_OOO) and the sender resends. Its packets took different paths (spraying or ECMP changes).",
        action: "Keep ROD traffic on one path (a fixed entropy value), or use RUD where the semantics allow it.",
    },
    what: "out of order",
    unit: "packet",
};

const ECN_ECHO: PdcFinding = PdcFinding {
    about: About {
        kind: kinds::UET_ECN_ECHO_MISMATCH,
        cause: "ACK by ACK, the M flag (ECN echo) disagrees with the packet the ACK names (its ACK_PSN): a packet the tap saw CE-marked named by an ACK without M (the target does not echo congestion, so its sender will not slow down), or an ACK with M naming a packet the tap saw unmarked (a mark added after the tap, or a target echoing marks that were not there).",
        action: "Check the target's ECN echo (the M flag of its ACKs, coalesced ones included); where the tap is near the sender, marks added further on show as echoes without a mark and are expected.",
    },
    what: "between ECN marks and their echoes",
    unit: "disagreement",
};

const PDC_ERRORS_FINDING: PdcFinding = PdcFinding {
    about: About {
        kind: kinds::UET_PDC_ERRORS,
        cause: "PDCs could not be established or used: the target knew no PDC of that id (INV_DPDCID), refused the SYN (INVALID_SYN), had none free (NO_PDC_AVAIL), saw another delivery mode (PDC_MODE_MISMATCH) or was closing in error (CLOSING_IN_ERR).",
        action: "Check the target's PDC limits and its state after a restart (a target that lost its PDCs answers INV_DPDCID), and that both ends agree on the PDC's mode.",
    },
    what: "with PDC errors",
    unit: "NACK",
};

/// One finding over the PDCs where `count` is not zero, each named with `detail`; its frames
/// are the first of those `picked` picks (the packets it is about, or a PDC's first frame).
fn pdc_rule(
    r: &mut Rules<'_, Option<UetReport>>,
    uet: &UetReport,
    finding: PdcFinding,
    count: impl Fn(&PdcReport) -> u64,
    detail: impl Fn(&PdcReport) -> String,
    picked: impl Fn(&PdcReport) -> Vec<FrameNumber>,
) {
    // the PDCs: RUDI and UUD packets raise none
    let hit: Vec<&PdcReport> = uet.pdcs.iter().filter(|p| p.is_pdc() && count(p) > 0).collect();
    if hit.is_empty() {
        return;
    }
    let total: u64 = hit.iter().map(|p| count(p)).sum();
    let named: Vec<String> = hit
        .iter()
        .take(3)
        .map(|p| format!("{} → {} PDC {}: {}", p.initiator, p.target, p.spdcid.unwrap_or(0), detail(p)))
        .chain((hit.len() > 3).then(|| format!("{} more", hit.len() - 3)))
        .collect();
    let message = format!(
        "{} {} on {} ({})",
        plural(total as usize, finding.unit),
        finding.what,
        plural(hit.len(), "PDC"),
        named.join("; ")
    );
    let mut frames: Vec<FrameNumber> = hit.iter().flat_map(|p| picked(p)).collect();
    frames.sort_unstable();
    frames.truncate(EVIDENCE_KEPT);
    r.add(finding.about, message, Evidence { count: total, frames, ..Evidence::default() });
}

/// Packets whose CRC32C trailer is not the capture's reading of it.
fn crc(r: &mut Rules<'_, Option<UetReport>>, uet: &UetReport) {
    let crc = &uet.crc;
    if crc.bad == 0 {
        return;
    }
    let variant = crc.variant.unwrap_or("none");
    r.add(
        About {
            kind: kinds::UET_CRC_BAD,
            cause: "The bytes changed on the way: the CRC32C covers everything from the IP source address to the end of the payload except what switches may rewrite (DSCP, ECN, TTL, the IP checksum), so a mismatch means bit errors on a link (optics, cable, connector), a faulty NIC or switch buffer, or a device rewriting covered fields.",
            action: "Check the FEC and symbol-error counters of every hop the packets crossed (ethtool -S on hosts, interface counters on switches) and clean or replace the optics and cables whose counters grow.",
        },
        format!(
            "{} with a bad CRC32C ({} of {} checked match the capture's reading, {variant})",
            plural(crc.bad as usize, "UET packet"),
            crc.ok,
            crc.ok + crc.bad
        ),
        Evidence { count: crc.bad, frames: crc.bad_frames.clone(), ..Evidence::default() },
    );
}
