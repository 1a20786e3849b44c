//! The `uet` section of a report: the capture's Ultra Ethernet Transport packets and what their
//! CRC32C trailers say. Defined in docs/analysis.md, "UET".

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analyze::counts::UetCrcCounts;
use crate::analyze::exemplar::{ENDPOINT, Exemplar};
use crate::analyze::finding::EVIDENCE_KEPT;
use crate::analyze::id::FrameNumber;
use crate::analyze::uet::crc::UetCrcFrames;
use crate::analyze::uet::pdc::TRIM_CODES;
use crate::analyze::uet::{DatagramMode, Datagrams, Pdc, PdcKey, UetAnalysis};
use crate::decode::Endpoint;

#[derive(Debug, Clone, Serialize)]
pub struct UetReport {
    pub packets: u64,
    pub crc: UetCrcReport,
    /// Every PDC, and the RUDI and UUD packets of each (initiator, target), in the order of
    /// their first frames.
    pub pdcs: Vec<PdcReport>,
    /// Packets of PDCs beyond the number tracked.
    pub pdcs_untracked_packets: u64,
    /// Encrypted packets (TSS): nothing after the security header is read.
    pub encrypted: u64,
    /// Second copies of a packet, another tap's or a doubled mirror's (in `packets`, in no PDC).
    pub mirror_duplicates: u64,
    /// The PDCs' `ecn_marks_not_echoed` and `ecn_echoes_without_mark`, added up.
    pub ecn_marks_not_echoed: u64,
    pub ecn_echoes_without_mark: u64,
}

/// One PDC (keyed by its initiator, its target and the initiator's PDC id), or the RUDI or UUD
/// packets from an initiator to a target (no ids, no PSNs).
#[derive(Debug, Clone, Serialize)]
pub struct PdcReport {
    pub initiator: Endpoint,
    pub target: Endpoint,
    /// The initiator's PDC id; null for RUDI and UUD.
    pub spdcid: Option<u16>,
    /// The target's PDC id, learned from its ACKs; null until then.
    pub dpdcid: Option<u16>,
    /// RUD, ROD (from the requests' type), RUDI or UUD; null for a PDC whose requests the
    /// capture lacks.
    pub mode: Option<&'static str>,
    /// Requests of a CC type (RUD_CC_REQ, ROD_CC_REQ) or ACKs with CC state.
    pub cc: bool,
    pub syn_seen: bool,
    pub closed: bool,
    pub start_psn: Option<u32>,
    pub requests: u64,
    pub acks: u64,
    /// The lowest and highest request PSN, by signed difference.
    pub psn_first: Option<u32>,
    pub psn_last: Option<u32>,
    pub out_of_order: u64,
    pub retransmitted: u64,
    pub lost_before_tap: u64,
    pub capture_missed: u64,
    pub missing: u64,
    /// Requests past the PSNs tracked one by one.
    pub untracked: u64,
    /// NACKs by code name.
    pub nacks: BTreeMap<&'static str, u64>,
    /// The frames of the first NACKs of each code (at most [`EVIDENCE_KEPT`]), by its name:
    /// what the NACK findings name.
    #[serde(skip)]
    pub nack_frames: BTreeMap<&'static str, Vec<FrameNumber>>,
    pub trimmed: u64,
    /// Requests that arrived CE-marked.
    pub ecn_ce: u64,
    /// ACKs and NACKs whose M flag says the packet acknowledged was CE-marked.
    pub ecn_echoed: u64,
    /// ACKs whose M flag was compared with the PSNs they newly acknowledged, and those that
    /// newly acknowledged PSNs whose marking the capture does not know (docs/analysis.md, "UET").
    pub ecn_acks_checked: u64,
    pub ecn_acks_unchecked: u64,
    /// CE-marked PSNs newly acknowledged by an ACK without M.
    pub ecn_marks_not_echoed: u64,
    /// ACKs with M whose newly acknowledged PSNs were all seen, none CE-marked.
    pub ecn_echoes_without_mark: u64,
    /// Neither a mark not echoed nor an echo without a mark; null unless an ACK was checked.
    pub ecn_echo_agrees: Option<bool>,
    /// PSNs each ACK newly acknowledged: median and most.
    pub ack_psns_p50: Option<u64>,
    pub ack_psns_max: Option<u64>,
    /// RUDI requests no response answered; null for a PDC and UUD.
    pub unanswered: Option<u64>,
    pub first_frame: FrameNumber,
    pub last_frame: FrameNumber,
}

/// NACK counts by code name (`unassigned` for a code not assigned).
fn named(nacks: &BTreeMap<u8, u64>) -> BTreeMap<&'static str, u64> {
    let mut by_name = BTreeMap::new();
    for (code, n) in nacks {
        *by_name.entry(rocescope_parsers::uet::names::nack_code(*code).unwrap_or("unassigned")).or_default() += n;
    }
    by_name
}

/// The first NACK frames of `frames`, by the codes' names.
fn frames_named(frames: &BTreeMap<u8, Vec<FrameNumber>>) -> BTreeMap<&'static str, Vec<FrameNumber>> {
    let mut by_name = BTreeMap::<&'static str, Vec<FrameNumber>>::new();
    for (code, f) in frames {
        let kept = by_name.entry(rocescope_parsers::uet::names::nack_code(*code).unwrap_or("unassigned")).or_default();
        kept.extend(f);
        kept.sort_unstable();
        kept.truncate(EVIDENCE_KEPT);
    }
    by_name
}

impl PdcReport {
    fn of(key: &PdcKey, p: &Pdc) -> PdcReport {
        let (capture_missed, missing) = p.never_seen();
        let agrees = p.ecn_marks_not_echoed == 0 && p.ecn_echoes_without_mark == 0;
        PdcReport {
            initiator: key.initiator,
            target: key.target,
            spdcid: Some(key.pdcid),
            dpdcid: p.target_pdcid,
            mode: p.mode.map(|m| m.name()),
            cc: p.cc,
            syn_seen: p.syn_seen,
            closed: p.closed,
            start_psn: p.start_psn,
            requests: p.requests,
            acks: p.acks,
            psn_first: p.request_psns.map(|r| r.0),
            psn_last: p.request_psns.map(|r| r.1),
            out_of_order: p.out_of_order,
            retransmitted: p.retransmitted,
            lost_before_tap: p.lost_before_tap,
            capture_missed,
            missing,
            untracked: p.untracked,
            nacks: named(&p.nacks),
            nack_frames: frames_named(&p.nack_frames),
            trimmed: p.trimmed(),
            ecn_ce: p.requests_ce,
            ecn_echoed: p.acks_marked,
            ecn_acks_checked: p.ecn_acks_checked,
            ecn_acks_unchecked: p.ecn_acks_unchecked,
            ecn_marks_not_echoed: p.ecn_marks_not_echoed,
            ecn_echoes_without_mark: p.ecn_echoes_without_mark,
            ecn_echo_agrees: (p.ecn_acks_checked > 0).then_some(agrees),
            ack_psns_p50: p.coverage.quantile(0.5),
            ack_psns_max: p.coverage.max(),
            unanswered: None,
            first_frame: p.first_frame,
            last_frame: p.last_frame,
        }
    }

    /// The RUDI or UUD packets from `initiator` to `target`.
    fn of_datagrams(
        initiator: Endpoint,
        target: Endpoint,
        mode: DatagramMode,
        d: &Datagrams,
        unanswered: u64,
    ) -> PdcReport {
        let rudi = mode == DatagramMode::Rudi;
        PdcReport {
            initiator,
            target,
            spdcid: None,
            dpdcid: None,
            mode: Some(if rudi { "RUDI" } else { "UUD" }),
            cc: false,
            syn_seen: false,
            closed: false,
            start_psn: None,
            requests: d.requests,
            acks: 0,
            psn_first: None,
            psn_last: None,
            out_of_order: 0,
            retransmitted: 0,
            lost_before_tap: 0,
            capture_missed: 0,
            missing: 0,
            untracked: 0,
            nacks: named(&d.nacks),
            nack_frames: BTreeMap::new(),
            trimmed: d.nacks.iter().filter(|(code, _)| TRIM_CODES.contains(code)).map(|(_, n)| n).sum(),
            ecn_ce: 0,
            ecn_echoed: 0,
            ecn_acks_checked: 0,
            ecn_acks_unchecked: 0,
            ecn_marks_not_echoed: 0,
            ecn_echoes_without_mark: 0,
            ecn_echo_agrees: None,
            ack_psns_p50: None,
            ack_psns_max: None,
            unanswered: rudi.then_some(unanswered),
            first_frame: d.first_frame,
            last_frame: d.last_frame,
        }
    }

    /// Is the PDC's delivery ordered (ROD)?
    pub fn ordered(&self) -> bool {
        self.mode == Some("ROD")
    }

    /// A PDC, not the RUDI or UUD packets of two hosts.
    pub fn is_pdc(&self) -> bool {
        self.spdcid.is_some()
    }
}

/// The trailers checked against the capture's reading of the CRC.
#[derive(Debug, Clone, Serialize)]
pub struct UetCrcReport {
    /// The reading the capture's packets match (the one most of them match); none when no
    /// packet matched any.
    pub variant: Option<&'static str>,
    /// Packets whose trailer is the reading's.
    pub ok: u64,
    /// Packets whose trailer is not, once the capture has a reading.
    pub bad: u64,
    /// Packets not checked: encrypted, cut, or any packet of a capture without a reading.
    pub unchecked: u64,
    /// Packets by the reading their trailer matched.
    pub readings: UetCrcCounts,
    /// The first bad packets' frames (at most [`EVIDENCE_KEPT`]), which `UET_CRC_BAD` names.
    #[serde(skip)]
    pub bad_frames: Vec<FrameNumber>,
}

impl UetReport {
    /// The section of a capture with `packets` UET packets whose trailers matched `readings`,
    /// analysed in `uet`; none without UET packets.
    pub fn of(packets: u64, readings: UetCrcCounts, frames: &UetCrcFrames, uet: &UetAnalysis) -> Option<UetReport> {
        (packets > 0).then(|| {
            let pdcs = uet.pdcs().into_iter().map(|(key, p)| PdcReport::of(key, p));
            let datagrams = uet.datagram_entries().into_iter().map(|(&(initiator, target, mode), d)| {
                PdcReport::of_datagrams(initiator, target, mode, d, uet.rudi_unanswered(initiator, target))
            });
            let mut pdcs: Vec<PdcReport> = pdcs.chain(datagrams).collect();
            pdcs.sort_by_key(|p| p.first_frame);
            UetReport {
                packets,
                crc: UetCrcReport::of(readings, frames),
                pdcs_untracked_packets: uet.untracked_packets,
                encrypted: uet.encrypted,
                mirror_duplicates: uet.mirror_duplicates,
                ecn_marks_not_echoed: pdcs.iter().map(|p| p.ecn_marks_not_echoed).sum(),
                ecn_echoes_without_mark: pdcs.iter().map(|p| p.ecn_echoes_without_mark).sum(),
                pdcs,
            }
        })
    }
}

impl UetCrcReport {
    fn of(r: UetCrcCounts, frames: &UetCrcFrames) -> UetCrcReport {
        let matched = [
            ("crc32c_le", r.crc32c_le),
            ("crc32c_be", r.crc32c_be),
            ("crc32c_raw_le", r.crc32c_raw_le),
            ("crc32c_raw_be", r.crc32c_raw_be),
        ];
        let total: u64 = matched.iter().map(|m| m.1).sum();
        // the most matched reading, the first of equals
        let best = matched.iter().copied().enumerate().filter(|(_, m)| m.1 > 0).rev().max_by_key(|(_, m)| m.1);
        match best {
            Some((at, (variant, ok))) => {
                let others = frames.readings.iter().enumerate().filter(|(i, _)| *i != at).flat_map(|(_, f)| f);
                let mut bad_frames: Vec<FrameNumber> = frames.no_variant.iter().chain(others).copied().collect();
                bad_frames.sort_unstable();
                bad_frames.truncate(EVIDENCE_KEPT);
                UetCrcReport {
                    variant: Some(variant),
                    ok,
                    bad: r.no_variant + (total - ok),
                    unchecked: r.unchecked,
                    readings: r,
                    bad_frames,
                }
            }
            // never bad before a reading matched: nothing to check against
            None => UetCrcReport {
                variant: None,
                ok: 0,
                bad: 0,
                unchecked: r.unchecked + r.no_variant,
                readings: r,
                bad_frames: Vec::new(),
            },
        }
    }
}

impl Exemplar for PdcReport {
    fn exemplar() -> Self {
        PdcReport {
            initiator: ENDPOINT,
            target: ENDPOINT,
            spdcid: Some(0),
            dpdcid: Some(0),
            mode: Some(""),
            cc: false,
            syn_seen: false,
            closed: false,
            start_psn: Some(0),
            requests: 0,
            acks: 0,
            psn_first: Some(0),
            psn_last: Some(0),
            out_of_order: 0,
            retransmitted: 0,
            lost_before_tap: 0,
            capture_missed: 0,
            missing: 0,
            untracked: 0,
            nacks: BTreeMap::new(),
            nack_frames: BTreeMap::new(),
            trimmed: 0,
            ecn_ce: 0,
            ecn_echoed: 0,
            ecn_acks_checked: 0,
            ecn_acks_unchecked: 0,
            ecn_marks_not_echoed: 0,
            ecn_echoes_without_mark: 0,
            ecn_echo_agrees: Some(false),
            ack_psns_p50: Some(0),
            ack_psns_max: Some(0),
            unanswered: Some(0),
            first_frame: FrameNumber::default(),
            last_frame: FrameNumber::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capture_reading_is_the_most_matched_and_no_packet_is_bad_without_one() {
        let n = FrameNumber::new;
        let frames =
            UetCrcFrames { readings: [vec![n(1), n(2)], vec![n(9)], vec![], vec![]], no_variant: vec![n(4), n(12)] };
        let r = UetCrcCounts { crc32c_le: 90, crc32c_be: 1, no_variant: 4, unchecked: 5, ..UetCrcCounts::default() };
        let crc = UetCrcReport::of(r, &frames);
        assert_eq!((crc.variant, crc.ok, crc.bad, crc.unchecked), (Some("crc32c_le"), 90, 5, 5));
        assert_eq!(crc.bad_frames, [n(4), n(9), n(12)], "none's and another reading's, in frame order");
        let tie = UetCrcReport::of(UetCrcCounts { crc32c_be: 3, crc32c_raw_le: 3, ..UetCrcCounts::default() }, &frames);
        assert_eq!((tie.variant, tie.ok, tie.bad), (Some("crc32c_be"), 3, 3), "the first of equals");
        let none = UetCrcReport::of(UetCrcCounts { no_variant: 7, unchecked: 2, ..UetCrcCounts::default() }, &frames);
        assert_eq!((none.variant, none.ok, none.bad, none.unchecked), (None, 0, 0, 9));
        assert!(none.bad_frames.is_empty());
        assert!(UetReport::of(0, UetCrcCounts::default(), &UetCrcFrames::default(), &UetAnalysis::default()).is_none());
    }
}
