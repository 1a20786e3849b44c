//! One UET packet delivery context (PDC) as the capture saw it: its requests' PSNs (first
//! appearances, resends, order), what its ACKs acknowledged (cumulatively and by SACK), its
//! NACKs and ECN marks. The definitions are docs/analysis.md's, "UET".

use crate::analyze::finding::EVIDENCE_KEPT;
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use std::collections::BTreeMap;

use crate::analyze::frame::PdsFacts;
use crate::analyze::histogram::FineHistogram;
use crate::analyze::trace::{Event, EventKind, FlowTrace};

use super::window::{Appearance, Arrival, PsnWindow, WordBudget};
use crate::analyze::seq_class::SeqClass;

/// What a packet of the initiator's sequence was, for its frame's verdict: first (the PDC's
/// first PSN seen), in order, late (a first appearance below the highest PSN seen) or a
/// retransmission (seen before, or RETX); `lost_before_tap` when its first appearance is a
/// resend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PsnVerdict {
    pub class: SeqClass,
    pub lost_before_tap: bool,
}

/// Does `a` come after `b` (32-bit PSNs, by signed difference)?
pub fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// The PDC's delivery mode, from its requests' PDS type (with or without CC state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, Renumber)]
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
    /// The lowest and highest request PSN, by signed difference.
    pub request_psns: Option<(u32, u32)>,
    pub requests: u64,
    pub acks: u64,
    pub retransmitted: u64,
    pub out_of_order: u64,
    pub lost_before_tap: u64,
    /// PSNs of the initiator's sequence more than the window's slack before its first:
    /// counted, not told apart.
    pub untracked: u64,
    pub requests_ce: u64,
    /// ACKs and NACKs whose M flag says the packet acknowledged arrived CE-marked.
    pub acks_marked: u64,
    /// ACKs whose M flag was compared with the PSNs they newly acknowledged: one of those seen
    /// CE-marked, or every one seen and none CE-marked.
    pub ecn_acks_checked: u64,
    /// ACKs that newly acknowledged PSNs, none seen CE-marked and some whose marking the capture
    /// does not know (never seen, copies that differ, behind the window).
    pub ecn_acks_unchecked: u64,
    /// ACKs without M whose named packet (ACK_PSN) arrived CE-marked.
    pub ecn_marks_not_echoed: u64,
    /// ACKs with M whose named packet (ACK_PSN) arrived unmarked.
    pub ecn_echoes_without_mark: u64,
    pub nacks: BTreeMap<u8, u64>,
    /// The first NACKs of each code (at most [`EVIDENCE_KEPT`]): their frames.
    #[serde(default)]
    pub nack_frames: BTreeMap<u8, Vec<FrameNumber>>,
    /// The highest cumulative ACK PSN.
    cumulative: Option<u32>,
    /// The initiator's sequence (requests and control packets) from its first PSN seen.
    window: Option<PsnWindow>,
    /// PSNs each ACK acknowledged that no ACK before it had.
    pub coverage: FineHistogram,
    /// The sequence graph's points (first sends, resends, NACKs), for the first PDCs only.
    pub trace: Option<FlowTrace>,
    pub first_frame: FrameNumber,
    pub last_frame: FrameNumber,
}

impl Pdc {
    /// A PDC first seen in frame `frame`, traced for its sequence graph or not.
    pub fn new(frame: FrameNumber, traced: bool) -> Pdc {
        Pdc { first_frame: frame, trace: traced.then(FlowTrace::default), ..Pdc::default() }
    }

    /// A request (RUD/ROD, with or without CC state) from the initiator, at `ts_ns`.
    pub fn request(&mut self, pds: &PdsFacts, ce: bool, ts_ns: i64, budget: &mut WordBudget) -> Option<PsnVerdict> {
        let psn = pds.psn?;
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
        self.sequenced(psn, pds.retx, ce, ts_ns, budget)
    }

    /// A packet of the initiator's PSN space (a request, or a control packet: their PSNs are
    /// one sequence), CE-marked (`ce`) or not: first appearance or resend, in order or not.
    pub fn sequenced(
        &mut self,
        psn: u32,
        retx: bool,
        ce: bool,
        ts_ns: i64,
        budget: &mut WordBudget,
    ) -> Option<PsnVerdict> {
        let cumulative = self.cumulative;
        let first = self.window.is_none();
        let window = self.window.get_or_insert_with(|| PsnWindow::new(psn, cumulative));
        let highest = window.highest_psn();
        let appearance = window.see(psn, ce, budget);
        if appearance == Appearance::Untracked {
            self.untracked += 1;
            return None;
        }
        let again = appearance == Appearance::Again;
        if again || retx {
            self.retransmitted += 1;
        }
        if let Some(trace) = &mut self.trace {
            if again || retx { trace.resent(ts_ns, psn) } else { trace.sent(ts_ns, psn) }
        }
        let late = !again && after(highest, psn);
        let lost_before_tap = !again && retx;
        self.lost_before_tap += u64::from(lost_before_tap);
        self.out_of_order += u64::from(late);
        let class = match () {
            _ if again || retx => SeqClass::Retransmission,
            _ if first => SeqClass::First,
            _ if late => SeqClass::LateArrival,
            _ => SeqClass::InOrder,
        };
        Some(PsnVerdict { class, lost_before_tap })
    }

    /// An ACK (ACK, ACK_CC, ACK_CCX) from the target.
    pub fn ack(&mut self, pds: &PdsFacts, budget: &mut WordBudget) {
        self.acks += 1;
        self.acks_marked += u64::from(pds.ecn_marked);
        self.cc |= CC_TYPES.contains(&pds.kind);
        // how the packet M speaks of passed the tap, before the ACK moves the window on
        let acked = match (&self.window, pds.ack_psn) {
            (Some(window), Some(psn)) => window.arrival(psn),
            _ => Arrival::Unknown,
        };
        let mut newly = 0;
        if let Some(cack) = pds.cack_psn {
            newly += match &mut self.window {
                Some(window) => window.acknowledge_to(cack, budget),
                // no request seen yet: nothing acknowledged is known but how many
                None => match self.cumulative {
                    Some(before) if after(cack, before) => u64::from(cack.wrapping_sub(before)),
                    Some(_) => 0,
                    None => 1,
                },
            };
            if self.cumulative.is_none_or(|before| after(cack, before)) {
                self.cumulative = Some(cack);
            }
        }
        if let (Some((base, bitmap)), Some(window)) = (pds.sack, &mut self.window) {
            newly += (0..64).filter(|b| bitmap >> b & 1 == 1 && window.sack(base.wrapping_add(*b))).count() as u64;
        }
        self.coverage.record(newly);
        if newly > 0 {
            self.echo(pds.ecn_marked, acked);
        }
    }

    /// Compares an ACK's M flag (`echoes`) with how the packet it acknowledges (ACK_PSN =
    /// CACK_PSN + offset: M says "the packet being acknowledged arrived CE-marked") passed the
    /// tap. A coalesced ACK speaks of that one packet, not of the others it covers. Only ACKs
    /// that acknowledge something new are compared (a duplicate counts neither way).
    fn echo(&mut self, echoes: bool, acked: Arrival) {
        match acked {
            Arrival::Marked => {
                self.ecn_acks_checked += 1;
                self.ecn_marks_not_echoed += u64::from(!echoes);
            }
            Arrival::Unmarked => {
                self.ecn_acks_checked += 1;
                self.ecn_echoes_without_mark += u64::from(echoes);
            }
            Arrival::Unknown => self.ecn_acks_unchecked += 1,
        }
    }

    /// A NACK from the target, in frame `frame` at `ts_ns`.
    pub fn nack(&mut self, pds: &PdsFacts, frame: FrameNumber, ts_ns: i64) {
        self.acks_marked += u64::from(pds.ecn_marked);
        if let Some(code) = pds.nack_code {
            *self.nacks.entry(code).or_default() += 1;
            let frames = self.nack_frames.entry(code).or_default();
            if frames.len() < EVIDENCE_KEPT {
                frames.push(frame);
            }
        }
        if let (Some(trace), Some(psn)) = (&mut self.trace, pds.nack_psn) {
            trace.event(Event { ts_ns, psn, kind: EventKind::Nak { rnr: false } });
        }
    }

    /// PSNs between the first and the highest that never appeared: (acknowledged, by the
    /// cumulative ACK PSN or a SACK bit, so only the capture missed them; never acknowledged).
    pub fn never_seen(&self) -> (u64, u64) {
        self.window.as_ref().map_or((0, 0), PsnWindow::never_seen)
    }

    /// Does it stand where `other` stands, whatever their sequence graphs (one traced, the
    /// other not)? Then the same packets take both alike.
    pub fn stands_as(&self, other: &Pdc) -> bool {
        Pdc { trace: None, ..self.clone() } == Pdc { trace: None, ..other.clone() }
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
        self.ecn_acks_checked += other.ecn_acks_checked;
        self.ecn_acks_unchecked += other.ecn_acks_unchecked;
        self.ecn_marks_not_echoed += other.ecn_marks_not_echoed;
        self.ecn_echoes_without_mark += other.ecn_echoes_without_mark;
        for (code, n) in &other.nacks {
            *self.nacks.entry(*code).or_default() += n;
        }
        for (code, frames) in &other.nack_frames {
            let mine = self.nack_frames.entry(*code).or_default();
            mine.extend(frames);
            mine.sort_unstable();
            mine.dedup();
            mine.truncate(EVIDENCE_KEPT);
        }
        self.coverage.add_samples(&other.coverage);
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
            ack_psn: None,
            sack: None,
            nack_code: None,
            nack_psn: None,
            ctl_type: None,
            packet_id: None,
        }
    }

    fn ack(cack: u32, sack: Option<(u32, u64)>) -> PdsFacts {
        PdsFacts { kind: 8, psn: None, cack_psn: Some(cack), ack_psn: Some(cack), sack, ..request(0, false) }
    }

    #[test]
    fn psns_are_told_first_resent_late_lost_before_the_tap_missed_or_missing() {
        let (mut p, mut budget) = (Pdc::new(FrameNumber::new(1), true), WordBudget::default());
        for (psn, retx) in
            [(100, false), (101, false), (103, false), (102, false), (101, false), (104, true), (107, false)]
        {
            p.request(&request(psn, retx), false, 0, &mut budget);
        }
        assert_eq!((p.requests, p.retransmitted, p.out_of_order, p.lost_before_tap), (7, 2, 1, 1));
        // 105 acknowledged (cumulatively), 106 never: 105 only the capture missed
        p.ack(&ack(105, None), &mut budget);
        assert_eq!(p.never_seen(), (1, 1));
        // a SACK of 106 makes it the capture's miss too
        p.ack(&ack(105, Some((106, 0b1))), &mut budget);
        assert_eq!(p.never_seen(), (2, 0));
        assert_eq!((p.coverage.count(), p.coverage.max()), (2, Some(6)), "100..=105, then 106");
        // a cumulative ACK over what a SACK acknowledged covers only the rest
        p.ack(&ack(107, None), &mut budget);
        assert_eq!(p.coverage.min(), Some(1), "107 alone: 106 was SACKed");
    }

    #[test]
    fn each_ack_s_echo_is_compared_with_the_packet_it_names() {
        let (mut p, mut budget) = (Pdc::new(FrameNumber::new(1), false), WordBudget::default());
        // 100, 102 and 105 CE-marked; 102 resent unmarked; 104 never seen
        for (psn, retx, ce) in [
            (100, false, true),
            (101, false, false),
            (102, false, true),
            (103, false, false),
            (102, true, false),
            (105, false, true),
            (106, false, false),
        ] {
            p.request(&request(psn, retx), ce, 0, &mut budget);
        }
        let echoing = |a: PdsFacts| PdsFacts { ecn_marked: true, ..a };
        let counts =
            |p: &Pdc| (p.ecn_acks_checked, p.ecn_acks_unchecked, p.ecn_marks_not_echoed, p.ecn_echoes_without_mark);
        p.ack(&echoing(ack(100, None)), &mut budget);
        p.ack(&echoing(ack(100, None)), &mut budget);
        assert_eq!(counts(&p), (1, 0, 0, 0), "100 echoed; the duplicate acknowledges nothing new");
        p.ack(&ack(101, None), &mut budget);
        p.ack(&echoing(ack(102, None)), &mut budget);
        assert_eq!(counts(&p), (2, 1, 0, 0), "101 unmarked, not echoed; 102's copies differ: unknown");
        p.ack(&echoing(ack(103, None)), &mut budget);
        p.ack(&echoing(ack(104, None)), &mut budget);
        assert_eq!(counts(&p), (3, 2, 0, 1), "103 seen unmarked, echoed; 104 never seen: unknown");
        // a SACK of 105 (marked) and 106 (not), naming 105, without M: one mark not echoed
        p.ack(&PdsFacts { ack_psn: Some(105), ..ack(104, Some((105, 0b11))) }, &mut budget);
        assert_eq!(counts(&p), (4, 2, 1, 1));
        assert_eq!(p.acks_marked, 5);
    }

    #[test]
    fn psns_compare_across_the_wrap() {
        let (mut p, mut budget) = (Pdc::new(FrameNumber::new(1), true), WordBudget::default());
        for psn in [u32::MAX - 1, u32::MAX, 1, 0] {
            p.request(&request(psn, false), false, 0, &mut budget);
        }
        assert_eq!(p.out_of_order, 1);
        assert_eq!(p.never_seen(), (0, 0));
        assert!(after(0, u32::MAX) && !after(u32::MAX, 0));
    }
}
