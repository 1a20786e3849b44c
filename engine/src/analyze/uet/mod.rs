//! Ultra Ethernet Transport analysed per packet delivery context (PDC), keyed by (initiator,
//! target, the initiator's PDC id), the target's ACKs and NACKs (which carry the ids swapped)
//! joined to it; RUDI requests paired with their responses by packet id; UUD datagrams and
//! encrypted packets counted. The definitions are docs/analysis.md's, "UET".

pub mod crc;
pub mod pdc;
pub mod report;
pub mod rules;
pub mod window;

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analyze::frame::{FrameSummary, PdsFacts, UetFacts};
use crate::analyze::trace::{FlowTrace, TRACED_FLOWS};
use crate::decode::Endpoint;

pub use pdc::{Mode, Pdc, PsnVerdict};

/// PDCs tracked at most; the packets of further ones are counted only.
pub const MAX_PDCS: usize = 1 << 16;
/// RUDI requests awaiting their response, at most.
pub const MAX_RUDI_PENDING: usize = 1 << 16;

/// A PDC's identity: the initiator, the target and the initiator's PDC id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct PdcKey {
    pub initiator: Endpoint,
    pub target: Endpoint,
    pub pdcid: u16,
}

/// RUDI and UUD packets between two hosts: no PDC, one entry per (initiator, target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum DatagramMode {
    Rudi,
    Uud,
}

/// The RUDI or UUD packets from an initiator to a target.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Datagrams {
    pub requests: u64,
    /// RUDI responses from the target.
    pub responses: u64,
    /// RUDI requests not held for their response ([`MAX_RUDI_PENDING`] were waiting).
    pub not_held: u64,
    /// NACKs of RUDI packets from the target, by code.
    pub nacks: std::collections::BTreeMap<u8, u64>,
    pub first_frame: FrameNumber,
    pub last_frame: FrameNumber,
}

/// The UET packets of a capture. Added, a shard's (an analysis split by host pair gives them
/// all to one shard; a PDC in both is added up). Grafted, it goes on as the part went on from
/// its start (its kept frames analysed on their own, which this analysis has just analysed
/// too): a PDC that began within the kept frames and stands here as there, or that began after
/// them, is taken from the part; what the part counted after its kept frames is added. Refused
/// where the part met again a PDC of the parts before it, or answered RUDI requests that this
/// analysis holds and `start` does not, or a bound was reached.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
#[combine(check = UetAnalysis::datagrams_agree)]
pub struct UetAnalysis {
    #[combine(with = pdcs)]
    pdcs: FxHashMap<PdcKey, Pdc>,
    /// What the PDCs' PSN windows may still grow by.
    budget: window::WordBudget,
    /// Packets of PDCs beyond [`MAX_PDCS`].
    #[combine(with = untracked)]
    pub untracked_packets: u64,
    #[combine(with = datagrams)]
    datagrams: FxHashMap<(Endpoint, Endpoint, DatagramMode), Datagrams>,
    /// RUDI requests (initiator, target, packet id) not answered yet.
    #[combine(with = rudi_pending)]
    rudi_pending: FxHashSet<(Endpoint, Endpoint, u32)>,
    #[combine(sum)]
    pub encrypted: u64,
    /// Every UET packet observed, mirror duplicates included.
    #[combine(sum)]
    pub packets: u64,
    /// Second copies of a packet (another tap's, or a doubled mirror's): counted here only.
    #[combine(sum)]
    pub mirror_duplicates: u64,
}

/// PDS types.
const RUDI_REQUEST: u8 = 4;
const RUDI_RESPONSE: u8 = 5;
const UUD: u8 = 6;
const CONTROL: u8 = 11;
/// Control types that close a PDC: CLOSE (the initiator's) and CLOSE_REQ (the target's).
const CLOSING: [u8; 2] = [4, 5];

impl UetAnalysis {
    /// Observes a UET packet: its place in its PDC's sequence, when it has one.
    pub fn observe(&mut self, s: &FrameSummary, uet: &UetFacts) -> Option<PsnVerdict> {
        self.packets += 1;
        let Some(pds) = &uet.pds else {
            self.encrypted += 1;
            return None;
        };
        let (src, dst) = s.endpoints();
        let ce = s.ecn == Some(3);
        match pds.kind {
            2 | 3 | 13 | 14 => {
                self.with_pdc(s, (src, dst, pds.spdcid), |p, budget| p.request(pds, ce, s.ts_ns, budget)).flatten()
            }
            7..=9 => self
                .with_pdc(s, (dst, src, pds.dpdcid), |p, budget| {
                    p.target_pdcid = p.target_pdcid.or(pds.spdcid);
                    p.ack(pds, budget);
                })
                .and(None),
            10 | 12 => {
                self.nack(s, (src, dst), pds);
                None
            }
            CONTROL => self.control(s, (src, dst), pds, ce),
            RUDI_REQUEST => {
                self.rudi_request(s, (src, dst), pds);
                None
            }
            RUDI_RESPONSE => {
                if let Some(id) = pds.packet_id {
                    self.rudi_pending.remove(&(dst, src, id));
                }
                self.datagrams(s, (dst, src, DatagramMode::Rudi)).responses += 1;
                None
            }
            UUD => {
                self.datagrams(s, (src, dst, DatagramMode::Uud)).requests += 1;
                None
            }
            _ => None,
        }
    }

    /// A mirror duplicate: a packet, in no PDC.
    pub fn count_mirror_duplicate(&mut self) {
        self.packets += 1;
        self.mirror_duplicates += 1;
    }

    /// The RUDI or UUD entry of (initiator, target), made when new.
    fn datagrams(&mut self, s: &FrameSummary, key: (Endpoint, Endpoint, DatagramMode)) -> &mut Datagrams {
        let entry =
            self.datagrams.entry(key).or_insert_with(|| Datagrams { first_frame: s.number, ..Datagrams::default() });
        entry.last_frame = s.number;
        entry
    }

    /// Calls `f` with the PDC of (initiator, target, initiator's id), made when new.
    fn with_pdc<R>(
        &mut self,
        s: &FrameSummary,
        (initiator, target, id): (Endpoint, Endpoint, Option<u16>),
        f: impl FnOnce(&mut Pdc, &mut window::WordBudget) -> R,
    ) -> Option<R> {
        let pdcid = id?;
        let key = PdcKey { initiator, target, pdcid };
        if !self.pdcs.contains_key(&key) && self.pdcs.len() >= MAX_PDCS {
            self.untracked_packets += 1;
            return None;
        }
        let traced = self.pdcs.len() < TRACED_FLOWS;
        let pdc = self.pdcs.entry(key).or_insert_with(|| Pdc::new(s.number, traced));
        pdc.last_frame = s.number;
        Some(f(pdc, &mut self.budget))
    }

    /// A NACK from the target of a PDC, or of a RUDI packet (its NT flag: no PDC ids).
    fn nack(&mut self, s: &FrameSummary, (src, dst): (Endpoint, Endpoint), pds: &PdsFacts) {
        if pds.spdcid.is_none()
            && let Some(code) = pds.nack_code
        {
            *self.datagrams(s, (dst, src, DatagramMode::Rudi)).nacks.entry(code).or_default() += 1;
            return;
        }
        self.with_pdc(s, (dst, src, pds.dpdcid), |p, _| p.nack(pds, s.number, s.ts_ns));
    }

    /// A control packet, CE-marked (`ce`) or not: the initiator's (its SPDCID names a PDC it
    /// opened) or the target's.
    fn control(
        &mut self,
        s: &FrameSummary,
        (src, dst): (Endpoint, Endpoint),
        pds: &PdsFacts,
        ce: bool,
    ) -> Option<PsnVerdict> {
        let closing = pds.ctl_type.is_some_and(|t| CLOSING.contains(&t));
        let from_target =
            pds.dpdcid.map(|pdcid| PdcKey { initiator: dst, target: src, pdcid }).filter(|k| self.pdcs.contains_key(k));
        let ids = match from_target {
            Some(key) => (key.initiator, key.target, Some(key.pdcid)),
            None => (src, dst, pds.spdcid),
        };
        let initiators_psn = pds.psn.filter(|_| from_target.is_none());
        self.with_pdc(s, ids, |p, budget| {
            p.closed |= closing;
            initiators_psn.and_then(|psn| p.sequenced(psn, pds.retx, ce, s.ts_ns, budget))
        })
        .flatten()
    }

    fn rudi_request(&mut self, s: &FrameSummary, (src, dst): (Endpoint, Endpoint), pds: &PdsFacts) {
        let full = self.rudi_pending.len() >= MAX_RUDI_PENDING;
        let entry = self.datagrams(s, (src, dst, DatagramMode::Rudi));
        entry.requests += 1;
        let Some(id) = pds.packet_id else { return };
        if full {
            entry.not_held += 1;
            return;
        }
        self.rudi_pending.insert((src, dst, id));
    }

    /// The PDCs, in the order of their first frames.
    pub fn pdcs(&self) -> Vec<(&PdcKey, &Pdc)> {
        let mut pdcs: Vec<(&PdcKey, &Pdc)> = self.pdcs.iter().collect();
        pdcs.sort_by_key(|(key, p)| (p.first_frame, **key));
        pdcs
    }

    /// The traced PDCs' sequence graphs.
    pub fn traces(&self) -> impl Iterator<Item = (&PdcKey, &FlowTrace)> {
        self.pdcs.iter().filter_map(|(key, p)| Some((key, p.trace.as_ref()?)))
    }

    /// The RUDI and UUD entries, in the order of their first frames.
    pub fn datagram_entries(&self) -> Vec<(&(Endpoint, Endpoint, DatagramMode), &Datagrams)> {
        let mut entries: Vec<_> = self.datagrams.iter().collect();
        entries.sort_by_key(|(key, d)| (d.first_frame, **key));
        entries
    }

    /// RUDI requests from `initiator` to `target` no response answered in the capture.
    pub fn rudi_unanswered(&self, initiator: Endpoint, target: Endpoint) -> u64 {
        let pending = self.rudi_pending.iter().filter(|(i, t, _)| (*i, *t) == (initiator, target)).count() as u64;
        let not_held = self.datagrams.get(&(initiator, target, DatagramMode::Rudi)).map_or(0, |d| d.not_held);
        pending + not_held
    }

    /// Before a graft: the RUDI requests the part answered after its kept frames wait here as
    /// in `start`, and the part held them all within the bound.
    fn datagrams_agree(&self, start: &UetAnalysis, part: &UetAnalysis, _: &Seam) -> Result<(), Refused> {
        for (key, end) in &part.datagrams {
            let answered_later = end.responses > start.datagrams.get(key).map_or(0, |d| d.responses);
            let (initiator, target, _) = *key;
            let waiting = |a: &UetAnalysis| -> FxHashSet<u32> {
                a.rudi_pending.iter().filter(|(i, t, _)| (*i, *t) == (initiator, target)).map(|k| k.2).collect()
            };
            if answered_later && waiting(self) != waiting(start) {
                return Err("RUDI requests of the parts before answered after the kept frames".into());
            }
        }
        if part.rudi_pending.len() + self.rudi_pending.len() >= MAX_RUDI_PENDING
            || part.datagrams.values().map(|d| d.not_held).sum::<u64>() > 0
        {
            return Err("the RUDI requests' bound".into());
        }
        Ok(())
    }
}

/// The PDCs: added, a PDC in both added up; grafted, taken from the part where it began within
/// its kept frames and stands here as there, or began after them (in the order of their first
/// frames).
mod pdcs {
    use super::{FxHashMap, MAX_PDCS, Pdc, PdcKey, Refused, Seam, TRACED_FLOWS};

    type Pdcs = FxHashMap<PdcKey, Pdc>;

    pub fn add(mine: &mut Pdcs, other: &Pdcs) -> Result<(), Refused> {
        for (key, pdc) in other {
            match mine.get_mut(key) {
                Some(m) => m.add(pdc),
                None => {
                    mine.insert(*key, pdc.clone());
                }
            }
        }
        Ok(())
    }

    pub fn graft(mine: &mut Pdcs, start: &Pdcs, end: Pdcs, _: &Seam) -> Result<(), Refused> {
        let mut later: Vec<(PdcKey, Pdc)> = end.into_iter().collect();
        later.sort_by_key(|(key, p)| (p.first_frame, *key));
        for (key, end) in later {
            graft_pdc(mine, start.get(&key), key, end)?;
        }
        Ok(())
    }

    fn graft_pdc(mine: &mut Pdcs, begun: Option<&Pdc>, key: PdcKey, mut end: Pdc) -> Result<(), &'static str> {
        let room = mine.len() < MAX_PDCS;
        let traced = mine.len() < TRACED_FLOWS;
        match (begun, mine.get_mut(&key)) {
            (Some(begun), Some(_)) if end == *begun => Ok(()),
            (Some(begun), Some(m)) if m.stands_as(begun) => {
                if m.trace.is_none() {
                    end.trace = None;
                }
                *m = end;
                Ok(())
            }
            (None, None) if room => {
                if !traced {
                    end.trace = None;
                }
                mine.insert(key, end);
                Ok(())
            }
            (None, None) => Err("the UET PDCs' bound"),
            (None, Some(_)) => Err("a UET PDC of the parts before met again after the kept frames"),
            (Some(_), _) => Err("a UET PDC's state differs"),
        }
    }
}

/// Packets of PDCs beyond the bound: added; a part that met any after its kept frames is
/// refused (the PDCs it could not track might have been tracked here).
mod untracked {
    use super::{Refused, Seam};

    pub fn add(mine: &mut u64, other: &u64) -> Result<(), Refused> {
        *mine += other;
        Ok(())
    }

    pub fn graft(_: &mut u64, start: &u64, end: u64, _: &Seam) -> Result<(), Refused> {
        match end > *start {
            true => Err("the UET PDCs' bound".into()),
            false => Ok(()),
        }
    }
}

/// The RUDI and UUD packets by (initiator, target, mode): added; grafted, what the part
/// counted after its kept frames added.
mod datagrams {
    use super::{DatagramMode, Datagrams, Endpoint, FxHashMap, Refused, Seam};

    type ByHosts = FxHashMap<(Endpoint, Endpoint, DatagramMode), Datagrams>;

    pub fn add(mine: &mut ByHosts, other: &ByHosts) -> Result<(), Refused> {
        for (key, d) in other {
            entry(mine, key, d).add(d);
        }
        Ok(())
    }

    pub fn graft(mine: &mut ByHosts, start: &ByHosts, end: ByHosts, _: &Seam) -> Result<(), Refused> {
        for (key, d) in &end {
            entry(mine, key, d).add(&d.since(start.get(key)));
        }
        Ok(())
    }

    /// The entry of `key`, made with `d`'s first frame where new.
    fn entry<'a>(mine: &'a mut ByHosts, key: &(Endpoint, Endpoint, DatagramMode), d: &Datagrams) -> &'a mut Datagrams {
        mine.entry(*key).or_insert_with(|| Datagrams { first_frame: d.first_frame, ..Datagrams::default() })
    }
}

/// The RUDI requests waiting: added; grafted, those the part answered after its kept frames
/// left, those it sent after them added.
mod rudi_pending {
    use super::{Endpoint, FxHashSet, Refused, Seam};

    type Pending = FxHashSet<(Endpoint, Endpoint, u32)>;

    pub fn add(mine: &mut Pending, other: &Pending) -> Result<(), Refused> {
        mine.extend(other.iter().copied());
        Ok(())
    }

    pub fn graft(mine: &mut Pending, start: &Pending, end: Pending, _: &Seam) -> Result<(), Refused> {
        mine.retain(|k| !start.contains(k) || end.contains(k));
        mine.extend(end.difference(start).copied());
        Ok(())
    }
}

impl Datagrams {
    /// What it counted beyond `start` (its counts at an earlier point): its frames its own.
    fn since(&self, start: Option<&Datagrams>) -> Datagrams {
        let Some(start) = start else { return self.clone() };
        let mut nacks = self.nacks.clone();
        for (code, n) in &start.nacks {
            if let Some(count) = nacks.get_mut(code) {
                *count = count.saturating_sub(*n);
            }
        }
        nacks.retain(|_, n| *n > 0);
        Datagrams {
            requests: self.requests.saturating_sub(start.requests),
            responses: self.responses.saturating_sub(start.responses),
            not_held: self.not_held.saturating_sub(start.not_held),
            nacks,
            first_frame: self.first_frame,
            last_frame: self.last_frame,
        }
    }

    fn add(&mut self, other: &Datagrams) {
        self.requests += other.requests;
        self.responses += other.responses;
        self.not_held += other.not_held;
        for (code, n) in &other.nacks {
            *self.nacks.entry(*code).or_default() += n;
        }
        self.first_frame = self.first_frame.min(other.first_frame);
        self.last_frame = self.last_frame.max(other.last_frame);
    }
}

// what names a PDC or a datagram stream: endpoints, ids and modes
crate::holds_no_numbers!(PdcKey, DatagramMode);
