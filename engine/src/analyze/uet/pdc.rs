//! One UET packet delivery context (PDC) as the capture saw it: its requests' PSNs (first
//! appearances, resends, order), what its ACKs acknowledged (cumulatively and by SACK), its
//! NACKs and ECN marks. The definitions are docs/analysis.md's, "UET".

use std::collections::BTreeMap;

use crate::analyze::flow::trace::{Event, EventKind, FlowTrace};
use crate::analyze::frame::PdsFacts;
use crate::analyze::histogram::FineHistogram;

/// PSNs of a PDC tracked one by one, from a little before its first request's: beyond, the
/// PDC's PSNs are counted but not told apart ([`Pdc::untracked`]).
pub const TRACKED_PSNS: u32 = 1 << 20;
/// How far before the first request's PSN a later first appearance is still tracked.
const SLACK: u32 = 1 << 12;

/// A set of PSNs, as bits from an origin.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PsnBits {
    words: Vec<u64>,
}

impl PsnBits {
    fn get(&self, index: u32) -> bool {
        self.words.get((index / 64) as usize).is_some_and(|w| w >> (index % 64) & 1 == 1)
    }

    /// Sets bit `index`; whether it was set before.
    fn set(&mut self, index: u32) -> bool {
        let word = (index / 64) as usize;
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        let was = self.get(index);
        if let Some(w) = self.words.get_mut(word) {
            *w |= 1 << (index % 64);
        }
        was
    }

    /// The word of bits `64 × i` to `64 × i + 63` (none set past the last word).
    fn word(&self, i: usize) -> u64 {
        self.words.get(i).copied().unwrap_or(0)
    }

    /// Bits set in `from..=to`, each word first passed through `keep` (with its number): a
    /// word at a time, so a span costs what its allocated words do.
    fn ones(&self, from: u32, to: u32, keep: impl Fn(usize, u64) -> u64) -> u64 {
        if from > to || self.words.is_empty() {
            return 0;
        }
        let (first, last) = ((from / 64) as usize, (to / 64) as usize);
        (first..=last.min(self.words.len() - 1))
            .map(|i| {
                let mut w = keep(i, self.word(i));
                if i == first {
                    w &= u64::MAX << (from % 64);
                }
                if i == last {
                    w &= u64::MAX >> (63 - to % 64);
                }
                u64::from(w.count_ones())
            })
            .sum()
    }
}

/// Does `a` come after `b` (32-bit PSNs, by signed difference)?
pub fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// The PDC's delivery mode, from its requests' PDS type (with or without CC state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    Rud,
    Rod,
}

impl Mode {
    pub fn of(kind: u8) -> Option<Mode> {
        match kind {
            2 | 13 => Some(Mode::Rud),
            3 | 14 => Some(Mode::Rod),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Rud => "RUD",
            Mode::Rod => "ROD",
        }
    }
}

/// PDS types that carry congestion-control state: RUD_CC_REQ, ROD_CC_REQ, ACK_CC, ACK_CCX.
const CC_TYPES: [u8; 4] = [13, 14, 8, 9];

/// NACK codes of trimming: the switch cut the packet (congestion, not corruption).
pub const TRIM_CODES: [u8; 3] = [0x01, 0x02, 0x03];

/// One PDC's accounting.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Pdc {
    pub mode: Option<Mode>,
    /// Requests of a CC type, or ACKs with CC state.
    pub cc: bool,
    /// The target's PDC id, learned from its ACKs (their SPDCID).
    pub target_pdcid: Option<u16>,
    /// A request with SYN: the capture saw the PDC established.
    pub syn_seen: bool,
    /// A CLOSE or CLOSE_REQ control packet, or an ACK asking to close.
    pub closed: bool,
    pub start_psn: Option<u32>,
    /// The first PSN of the initiator's sequence (requests and control packets) seen.
    pub first_psn: Option<u32>,
    pub highest_psn: Option<u32>,
    /// The lowest and highest request PSN, by signed difference.
    pub request_psns: Option<(u32, u32)>,
    pub requests: u64,
    pub acks: u64,
    pub retransmitted: u64,
    pub out_of_order: u64,
    pub lost_before_tap: u64,
    /// Requests past the tracked span: counted, not told apart.
    pub untracked: u64,
    pub requests_ce: u64,
    /// ACKs and NACKs whose M flag says the packet acknowledged arrived CE-marked.
    pub acks_marked: u64,
    pub nacks: BTreeMap<u8, u64>,
    /// The highest cumulative ACK PSN.
    cumulative: Option<u32>,
    seen: PsnBits,
    sacked: PsnBits,
    /// PSNs each ACK acknowledged that no ACK before it had.
    pub coverage: FineHistogram,
    /// The sequence graph's points (first sends, resends, NACKs), for the first PDCs only.
    pub trace: Option<FlowTrace>,
    pub first_frame: u64,
    pub last_frame: u64,
}

impl Pdc {
    /// A PDC first seen in frame `frame`, traced for its sequence graph or not.
    pub fn new(frame: u64, traced: bool) -> Pdc {
        Pdc { first_frame: frame, trace: traced.then(FlowTrace::default), ..Pdc::default() }
    }

    /// A PSN's place in the tracked span, if it has one.
    fn index(&self, psn: u32) -> Option<u32> {
        let origin = self.first_psn?.wrapping_sub(SLACK);
        let index = psn.wrapping_sub(origin);
        (index < TRACKED_PSNS + SLACK).then_some(index)
    }

    /// A request (RUD/ROD, with or without CC state) from the initiator, at `ts_ns`.
    pub fn request(&mut self, pds: &PdsFacts, ce: bool, ts_ns: i64) {
        let Some(psn) = pds.psn else { return };
        self.requests += 1;
        self.requests_ce += u64::from(ce);
        self.mode = self.mode.or(Mode::of(pds.kind));
        self.cc |= CC_TYPES.contains(&pds.kind);
        self.request_psns = Some(match self.request_psns {
            None => (psn, psn),
            Some((low, high)) => (if after(low, psn) { psn } else { low }, if after(psn, high) { psn } else { high }),
        });
        if pds.syn {
            self.syn_seen = true;
            self.start_psn = self.start_psn.or(pds.start_psn);
        }
        self.sequenced(psn, pds.retx, ts_ns);
    }

    /// A packet of the initiator's PSN space (a request, or a control packet: their PSNs are
    /// one sequence): first appearance or resend, in order or not.
    pub fn sequenced(&mut self, psn: u32, retx: bool, ts_ns: i64) {
        self.first_psn.get_or_insert(psn);
        let Some(index) = self.index(psn) else {
            self.untracked += 1;
            return;
        };
        let seen_before = self.seen.set(index);
        if seen_before || retx {
            self.retransmitted += 1;
        }
        if let Some(trace) = &mut self.trace {
            if seen_before || retx { trace.resent(ts_ns, psn) } else { trace.sent(ts_ns, psn) }
        }
        if !seen_before {
            self.lost_before_tap += u64::from(retx);
            match self.highest_psn {
                Some(highest) if after(highest, psn) => self.out_of_order += 1,
                _ => self.highest_psn = Some(psn),
            }
        }
    }

    /// An ACK (ACK, ACK_CC, ACK_CCX) from the target.
    pub fn ack(&mut self, pds: &PdsFacts) {
        self.acks += 1;
        self.acks_marked += u64::from(pds.ecn_marked);
        self.cc |= CC_TYPES.contains(&pds.kind);
        let mut covered = 0u64;
        if let Some(cack) = pds.cack_psn {
            let from = match self.cumulative {
                Some(before) if after(cack, before) => Some(before.wrapping_add(1)),
                Some(_) => None,
                None => Some(self.first_psn.filter(|f| !after(*f, cack)).unwrap_or(cack)),
            };
            if let Some(from) = from {
                covered += self.not_yet_sacked(from, cack);
                self.cumulative = Some(cack);
            }
        }
        if let Some((base, bitmap)) = pds.sack {
            for bit in (0..64).filter(|b| bitmap >> b & 1 == 1) {
                let psn = base.wrapping_add(bit);
                let beyond = self.cumulative.is_none_or(|c| after(psn, c));
                if let Some(index) = self.index(psn).filter(|_| beyond)
                    && !self.sacked.set(index)
                {
                    covered += 1;
                }
            }
        }
        self.coverage.record(covered);
    }

    /// PSNs from `from` to `to` a SACK has not acknowledged already (PSNs past the tracked
    /// ones count whole).
    fn not_yet_sacked(&self, from: u32, to: u32) -> u64 {
        let span = u64::from(to.wrapping_sub(from)) + 1;
        let sacked = match (self.index(from), self.index(to)) {
            (Some(lo), Some(hi)) => self.sacked.ones(lo, hi, |_, w| w),
            (Some(lo), None) => self.sacked.ones(lo, TRACKED_PSNS + SLACK - 1, |_, w| w),
            _ => 0,
        };
        span.saturating_sub(sacked)
    }

    /// A NACK from the target, at `ts_ns`.
    pub fn nack(&mut self, pds: &PdsFacts, ts_ns: i64) {
        self.acks_marked += u64::from(pds.ecn_marked);
        if let Some(code) = pds.nack_code {
            *self.nacks.entry(code).or_default() += 1;
        }
        if let (Some(trace), Some(psn)) = (&mut self.trace, pds.nack_psn) {
            trace.event(Event { ts_ns, psn, kind: EventKind::Nak { rnr: false } });
        }
    }

    /// PSNs between the first and the highest that never appeared: (acknowledged, by the
    /// cumulative ACK PSN or a SACK bit, so only the capture missed them; never acknowledged).
    /// Counted a word of bits at a time.
    pub fn never_seen(&self) -> (u64, u64) {
        let (Some(first), Some(highest)) = (self.first_psn, self.highest_psn) else { return (0, 0) };
        let (Some(lo), Some(hi)) = (self.index(first), self.index(highest)) else { return (0, 0) };
        if lo > hi {
            return (0, 0);
        }
        let unseen = |from: u32, to: u32| u64::from(to - from) + 1 - self.seen.ones(from, to, |_, w| w);
        // the part the cumulative ACK PSN covers
        let covered_to = match self.cumulative {
            Some(c) if after(first, c) => None,
            Some(c) if after(c, highest) => Some(hi),
            Some(c) => self.index(c).map(|ci| ci.min(hi)),
            None => None,
        };
        let by_cumulative = covered_to.map_or(0, |to| unseen(lo, to));
        let beyond = covered_to.map_or(lo, |to| to + 1);
        let by_sack = self.sacked.ones(beyond, hi, |i, w| w & !self.seen.word(i));
        let missed = by_cumulative + by_sack;
        (missed, unseen(lo, hi) - missed)
    }

    /// Trimmed packets: NACKs TRIMMED, TRIMMED_LASTHOP, TRIMMED_ACK.
    pub fn trimmed(&self) -> u64 {
        TRIM_CODES.iter().filter_map(|c| self.nacks.get(c)).sum()
    }

    /// Adds `other`'s accounting of the same PDC (another shard's packets of it).
    pub fn add(&mut self, other: &Pdc) {
        self.requests += other.requests;
        self.acks += other.acks;
        self.retransmitted += other.retransmitted;
        self.out_of_order += other.out_of_order;
        self.lost_before_tap += other.lost_before_tap;
        self.untracked += other.untracked;
        self.requests_ce += other.requests_ce;
        self.acks_marked += other.acks_marked;
        for (code, n) in &other.nacks {
            *self.nacks.entry(*code).or_default() += n;
        }
        self.coverage.merge(&other.coverage);
        self.syn_seen |= other.syn_seen;
        self.closed |= other.closed;
        self.cc |= other.cc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(psn: u32, retx: bool) -> PdsFacts {
        PdsFacts {
            kind: 2,
            retx,
            syn: false,
            ecn_marked: false,
            psn: Some(psn),
            start_psn: None,
            spdcid: Some(7),
            dpdcid: Some(9),
            cack_psn: None,
            sack: None,
            nack_code: None,
            nack_psn: None,
            ctl_type: None,
            packet_id: None,
        }
    }

    fn ack(cack: u32, sack: Option<(u32, u64)>) -> PdsFacts {
        PdsFacts { kind: 8, psn: None, cack_psn: Some(cack), sack, ..request(0, false) }
    }

    #[test]
    fn psns_are_told_first_resent_late_lost_before_the_tap_missed_or_missing() {
        let mut p = Pdc::new(1, true);
        for (psn, retx) in
            [(100, false), (101, false), (103, false), (102, false), (101, false), (104, true), (107, false)]
        {
            p.request(&request(psn, retx), false, 0);
        }
        assert_eq!((p.requests, p.retransmitted, p.out_of_order, p.lost_before_tap), (7, 2, 1, 1));
        // 105 acknowledged (cumulatively), 106 never: 105 only the capture missed
        p.ack(&ack(105, None));
        assert_eq!(p.never_seen(), (1, 1));
        // a SACK of 106 makes it the capture's miss too
        p.ack(&ack(105, Some((106, 0b1))));
        assert_eq!(p.never_seen(), (2, 0));
        assert_eq!((p.coverage.count(), p.coverage.max()), (2, Some(6)), "100..=105, then 106");
        // a cumulative ACK over what a SACK acknowledged covers only the rest
        p.ack(&ack(107, None));
        assert_eq!(p.coverage.min(), Some(1), "107 alone: 106 was SACKed");
    }

    #[test]
    fn bits_are_counted_a_word_at_a_time_across_word_edges() {
        let mut bits = PsnBits::default();
        for i in [0, 63, 64, 130] {
            bits.set(i);
        }
        let all = |_: usize, w: u64| w;
        assert_eq!((bits.ones(0, 63, all), bits.ones(1, 64, all), bits.ones(63, 130, all)), (2, 2, 3));
        assert_eq!((bits.ones(131, 100_000, all), bits.ones(5, 4, all), PsnBits::default().ones(0, 9, all)), (0, 0, 0));
    }

    #[test]
    fn psns_compare_across_the_wrap() {
        let mut p = Pdc::new(1, true);
        for psn in [u32::MAX - 1, u32::MAX, 1, 0] {
            p.request(&request(psn, false), false, 0);
        }
        assert_eq!((p.out_of_order, p.highest_psn), (1, Some(1)));
        assert_eq!(p.never_seen(), (0, 0));
        assert!(after(0, u32::MAX) && !after(u32::MAX, 0));
    }
}
