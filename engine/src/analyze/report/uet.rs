//! The `uet` section of a report: the capture's Ultra Ethernet Transport packets and what their
//! CRC32C trailers say. Defined in docs/analysis.md, "UET".

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analyze::counts::UetCrcCounts;
use crate::analyze::uet::{Pdc, PdcKey, UetAnalysis};
use crate::decode::Endpoint;

#[derive(Debug, Clone, Serialize)]
pub struct UetReport {
    pub packets: u64,
    pub crc: UetCrcReport,
    /// Every PDC, in the order of its first frame.
    pub pdcs: Vec<PdcReport>,
    /// Packets of PDCs beyond the number tracked.
    pub pdcs_untracked_packets: u64,
    pub rudi: RudiReport,
    /// UUD datagrams (no PDC, no acknowledgement).
    pub uud: u64,
    /// Encrypted packets (TSS): nothing after the security header is read.
    pub encrypted: u64,
}

/// One PDC: keyed by its initiator, its target and the initiator's PDC id.
#[derive(Debug, Clone, Serialize)]
pub struct PdcReport {
    pub initiator: Endpoint,
    pub target: Endpoint,
    pub pdcid: u16,
    /// Learned from the target's ACKs.
    pub target_pdcid: Option<u16>,
    /// rud, rod, rud_cc or rod_cc, from the requests' type; null when no request was seen.
    pub mode: Option<&'static str>,
    pub syn_seen: bool,
    pub closed: bool,
    pub start_psn: Option<u32>,
    pub first_psn: Option<u32>,
    pub highest_psn: Option<u32>,
    pub requests: u64,
    pub acks: u64,
    pub out_of_order: u64,
    pub retransmitted: u64,
    pub lost_before_tap: u64,
    pub capture_missed: u64,
    pub missing: u64,
    /// Requests past the PSNs tracked one by one.
    pub untracked: u64,
    /// NACKs by code name.
    pub nacks: BTreeMap<&'static str, u64>,
    pub trimmed: u64,
    pub requests_ce: u64,
    pub acks_marked: u64,
    /// Do the CE marks the requests arrived with and the M flags of the ACKs agree (both or
    /// neither)? Null unless the capture has both directions.
    pub ecn_echo_agrees: Option<bool>,
    /// PSNs each ACK newly acknowledged: median and most.
    pub psns_per_ack_p50: Option<u64>,
    pub psns_per_ack_max: Option<u64>,
    pub first_frame: u64,
    pub last_frame: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RudiReport {
    pub requests: u64,
    pub responses: u64,
    /// Requests no response (by packet id, in the other direction) answered.
    pub unanswered: u64,
    pub nacks: BTreeMap<&'static str, u64>,
}

/// NACK counts by code name (`code_0xNN` for a code not assigned).
fn named(nacks: &BTreeMap<u8, u64>) -> BTreeMap<&'static str, u64> {
    nacks
        .iter()
        .map(|(code, n)| (rocescope_parsers::uet::names::nack_code(*code).unwrap_or("unassigned"), *n))
        .collect()
}

impl PdcReport {
    fn of(key: &PdcKey, p: &Pdc) -> PdcReport {
        let (capture_missed, missing) = p.never_seen();
        let both_ways = p.requests > 0 && p.acks > 0;
        PdcReport {
            initiator: key.initiator,
            target: key.target,
            pdcid: key.pdcid,
            target_pdcid: p.target_pdcid,
            mode: p.mode.map(|m| m.name()),
            syn_seen: p.syn_seen,
            closed: p.closed,
            start_psn: p.start_psn,
            first_psn: p.first_psn,
            highest_psn: p.highest_psn,
            requests: p.requests,
            acks: p.acks,
            out_of_order: p.out_of_order,
            retransmitted: p.retransmitted,
            lost_before_tap: p.lost_before_tap,
            capture_missed,
            missing,
            untracked: p.untracked,
            nacks: named(&p.nacks),
            trimmed: p.trimmed(),
            requests_ce: p.requests_ce,
            acks_marked: p.acks_marked,
            ecn_echo_agrees: both_ways.then_some((p.requests_ce > 0) == (p.acks_marked > 0)),
            psns_per_ack_p50: p.coverage.quantile(0.5),
            psns_per_ack_max: p.coverage.max(),
            first_frame: p.first_frame,
            last_frame: p.last_frame,
        }
    }

    /// Is the PDC's delivery ordered (ROD)?
    pub fn ordered(&self) -> bool {
        matches!(self.mode, Some("rod" | "rod_cc"))
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
}

impl UetReport {
    /// The section of a capture with `packets` UET packets whose trailers matched `readings`,
    /// analysed in `uet`; none without UET packets.
    pub fn of(packets: u64, readings: UetCrcCounts, uet: &UetAnalysis) -> Option<UetReport> {
        (packets > 0).then(|| UetReport {
            packets,
            crc: UetCrcReport::of(readings),
            pdcs: uet.pdcs().into_iter().map(|(key, p)| PdcReport::of(key, p)).collect(),
            pdcs_untracked_packets: uet.untracked_packets,
            rudi: RudiReport {
                requests: uet.rudi_requests,
                responses: uet.rudi_responses,
                unanswered: uet.rudi_unanswered(),
                nacks: named(&uet.rudi_nacks),
            },
            uud: uet.uud,
            encrypted: uet.encrypted,
        })
    }
}

impl UetCrcReport {
    fn of(r: UetCrcCounts) -> UetCrcReport {
        let matched = [
            ("crc32c_le", r.crc32c_le),
            ("crc32c_be", r.crc32c_be),
            ("crc32c_raw_le", r.crc32c_raw_le),
            ("crc32c_raw_be", r.crc32c_raw_be),
        ];
        let total: u64 = matched.iter().map(|m| m.1).sum();
        // the most matched reading, the first of equals
        let best = matched.iter().copied().filter(|m| m.1 > 0).rev().max_by_key(|m| m.1);
        match best {
            Some((variant, ok)) => UetCrcReport {
                variant: Some(variant),
                ok,
                bad: r.no_variant + (total - ok),
                unchecked: r.unchecked,
                readings: r,
            },
            // never bad before a reading matched: nothing to check against
            None => UetCrcReport { variant: None, ok: 0, bad: 0, unchecked: r.unchecked + r.no_variant, readings: r },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capture_reading_is_the_most_matched_and_no_packet_is_bad_without_one() {
        let r = UetCrcCounts { crc32c_le: 90, crc32c_be: 1, no_variant: 4, unchecked: 5, ..UetCrcCounts::default() };
        let crc = UetCrcReport::of(r);
        assert_eq!((crc.variant, crc.ok, crc.bad, crc.unchecked), (Some("crc32c_le"), 90, 5, 5));
        let tie = UetCrcReport::of(UetCrcCounts { crc32c_be: 3, crc32c_raw_le: 3, ..UetCrcCounts::default() });
        assert_eq!((tie.variant, tie.ok, tie.bad), (Some("crc32c_be"), 3, 3), "the first of equals");
        let none = UetCrcReport::of(UetCrcCounts { no_variant: 7, unchecked: 2, ..UetCrcCounts::default() });
        assert_eq!((none.variant, none.ok, none.bad, none.unchecked), (None, 0, 0, 9));
        assert!(UetReport::of(0, UetCrcCounts::default(), &UetAnalysis::default()).is_none());
    }
}
