//! The capture-wide counters and the facts about the capture as a measurement, and how two
//! analyses' are combined: added (shards of one capture) or grafted (a part going on from the
//! parts before it).

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::counts::{EcnCounts, FrameCounts, IcrcCounts, InfinibandCounts, UetCrcCounts};
use crate::analyze::frame::UndecodedLink;
use crate::analyze::id::FrameNumber;
use crate::analyze::names::{self, Name};
use crate::analyze::renumber::Renumber;
use crate::analyze::roce::wide::duplicates::Doubling;
use crate::analyze::uet::crc::UetCrcFrames;

/// Capture-wide counters.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct Totals {
    pub frames: FrameCounts,
    pub icrc: IcrcCounts,
    pub opcodes: Vec<u64>,
    pub ecn: EcnCounts,
    pub dscp: Vec<u64>,
    #[combine(sum)]
    pub cnps: u64,
    pub cnp_dscp: Vec<u64>,
    pub cnp_vlan_pcp: [u64; 8],
    /// RoCEv2 management packets (to QP 0 or 1): their count, DSCP and ECN.
    #[combine(sum)]
    pub management: u64,
    pub management_dscp: Vec<u64>,
    pub management_ecn: EcnCounts,
    pub infiniband: InfinibandCounts,
    /// UET packets by what their CRC32C trailer matched.
    #[serde(default)]
    pub uet_crc: UetCrcCounts,
    /// The first frames of each reading of the UET CRC and of none, to name the bad ones.
    #[serde(default)]
    pub uet_crc_frames: UetCrcFrames,
}

impl Totals {
    /// No frame counted yet, with a slot for every opcode and DSCP value.
    pub fn new() -> Self {
        Totals {
            opcodes: vec![0; 256],
            dscp: vec![0; 64],
            cnp_dscp: vec![0; 64],
            management_dscp: vec![0; 64],
            ..Totals::default()
        }
    }
}

/// Facts about the capture as a measurement. Added, they are the facts of frames whose
/// timestamps are in order with these; grafted, of the frames after the seam.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct CaptureFacts {
    #[combine(earliest)]
    pub first_ts_ns: Option<i64>,
    #[combine(latest)]
    pub last_ts_ns: Option<i64>,
    /// The last frame's: a shard's are among the others', the later part's is the last.
    #[combine(add = latest, graft = end)]
    pub previous_ts_ns: Option<i64>,
    /// Frames whose timestamp is earlier than the frame before.
    #[combine(sum)]
    pub non_monotonic_timestamps: u64,
    /// Frames cut by the snap length (captured < on the wire).
    #[combine(sum)]
    pub snaplen_cut: u64,
    /// RoCE frames an ERSPAN mirror marked truncated.
    #[combine(sum)]
    pub mirror_truncated: u64,
    /// RoCE frames cut short with nothing saying so (a mirror's truncation).
    #[combine(sum)]
    pub truncated_copies: u64,
    /// Frames a device on the way stamped with its time (Arista, ERSPAN III, Metamako).
    #[combine(sum)]
    pub hardware_timestamps: u64,
    /// Frames by encapsulation, in the order each was first seen.
    #[combine(with = entries)]
    pub encapsulations: Vec<Encapsulation>,
    /// Malformed frames by layer, with the first frame and reason of each.
    #[combine(with = entries)]
    pub malformed: Vec<MalformedLayer>,
    /// The doubled-mirror decision (None until decided).
    #[combine(decided)]
    pub doubled_mirror: Option<Doubling>,
    /// Link layers not decoded, in the order each was first seen.
    #[combine(with = entries)]
    pub undecoded_links: Vec<UndecodedLinkFrames>,
}

/// The frames that came through one encapsulation (a mirror format, a VLAN tag, a mark).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Encapsulation {
    #[serde(deserialize_with = "names::name")]
    pub name: Name,
    pub frames: u64,
}

/// The malformed frames of one layer: how many, and the first with its reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct MalformedLayer {
    #[serde(deserialize_with = "names::name")]
    pub layer: Name,
    pub frames: u64,
    pub first_frame: FrameNumber,
    pub first_reason: String,
}

/// The frames of one link layer not decoded: how many, and the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct UndecodedLinkFrames {
    pub link: UndecodedLink,
    pub frames: u64,
    pub first_frame: FrameNumber,
}

impl CaptureFacts {
    /// A frame's record: its time and its lengths.
    pub fn record(&mut self, ts_ns: i64, orig_len: u32, caplen: u32) {
        self.first_ts_ns.get_or_insert(ts_ns);
        self.last_ts_ns = Some(self.last_ts_ns.map_or(ts_ns, |t| t.max(ts_ns)));
        if self.previous_ts_ns.is_some_and(|t| ts_ns < t) {
            self.non_monotonic_timestamps += 1;
        }
        self.previous_ts_ns = Some(ts_ns);
        if caplen < orig_len {
            self.snaplen_cut += 1;
        }
    }

    /// One more frame through the encapsulation `name`.
    pub fn count_encapsulation(&mut self, name: Name) {
        match self.encapsulations.iter_mut().find(|e| e.name == name) {
            Some(e) => e.frames += 1,
            None => self.encapsulations.push(Encapsulation { name, frames: 1 }),
        }
    }

    /// Frame `frame` is of a link layer not decoded.
    pub fn count_undecoded(&mut self, link: UndecodedLink, frame: FrameNumber) {
        match self.undecoded_links.iter_mut().find(|u| u.link == link) {
            Some(u) => u.frames += 1,
            None => self.undecoded_links.push(UndecodedLinkFrames { link, frames: 1, first_frame: frame }),
        }
    }

    /// Frame `frame` is malformed at `layer`, for `reason`.
    pub fn count_malformed(&mut self, layer: Name, frame: FrameNumber, reason: impl FnOnce() -> String) {
        match self.malformed.iter_mut().find(|m| m.layer == layer) {
            Some(m) => m.frames += 1,
            None => {
                self.malformed.push(MalformedLayer { layer, frames: 1, first_frame: frame, first_reason: reason() })
            }
        }
    }

    /// The lists in the order of their first frames (after adding shards).
    pub fn sort(&mut self) {
        self.malformed.sort_by_key(|m| m.first_frame);
        self.undecoded_links.sort_by_key(|u| u.first_frame);
    }
}

/// An entry of a list of counts kept by name: an encapsulation's, an undecoded link layer's,
/// a malformed layer's.
trait Entry: Clone {
    fn same(&self, other: &Self) -> bool;
    fn frames(&self) -> u64;
    fn frames_mut(&mut self) -> &mut u64;
    /// Takes what `other`, an entry of the same name from other frames, says of its first
    /// frame where that came earlier.
    fn first_of(&mut self, _other: &Self) {}
}

impl Entry for Encapsulation {
    fn same(&self, other: &Self) -> bool {
        self.name == other.name
    }
    fn frames(&self) -> u64 {
        self.frames
    }
    fn frames_mut(&mut self) -> &mut u64 {
        &mut self.frames
    }
}

impl Entry for UndecodedLinkFrames {
    fn same(&self, other: &Self) -> bool {
        self.link == other.link
    }
    fn frames(&self) -> u64 {
        self.frames
    }
    fn frames_mut(&mut self) -> &mut u64 {
        &mut self.frames
    }
    fn first_of(&mut self, other: &Self) {
        self.first_frame = self.first_frame.min(other.first_frame);
    }
}

impl Entry for MalformedLayer {
    fn same(&self, other: &Self) -> bool {
        self.layer == other.layer
    }
    fn frames(&self) -> u64 {
        self.frames
    }
    fn frames_mut(&mut self) -> &mut u64 {
        &mut self.frames
    }
    fn first_of(&mut self, other: &Self) {
        if other.first_frame < self.first_frame {
            *self = MalformedLayer { frames: self.frames, ..other.clone() };
        }
    }
}

/// How the lists of counts kept by name combine: each entry's frames added (grafted, those
/// beyond `start`'s of the same name), the earliest first frame kept.
mod entries {
    use super::{Entry, Refused, Seam, add_entries};

    pub fn add<E: Entry>(mine: &mut Vec<E>, other: &[E]) -> Result<(), Refused> {
        add_entries(mine, other, E::frames);
        for entry in other {
            if let Some(m) = mine.iter_mut().find(|m| m.same(entry)) {
                m.first_of(entry);
            }
        }
        Ok(())
    }

    pub fn graft<E: Entry>(mine: &mut Vec<E>, start: &[E], end: Vec<E>, _: &Seam) -> Result<(), Refused> {
        let before = |e: &E| start.iter().find(|s| s.same(e)).map_or(0, E::frames);
        add_entries(mine, &end, |e| e.frames().saturating_sub(before(e)));
        Ok(())
    }
}

/// Adds `frames(entry)` of each of `other`'s entries to `mine`'s of the same name; an entry new
/// to `mine` comes in with what else `other`'s says (its first frame and reason).
fn add_entries<E: Entry>(mine: &mut Vec<E>, other: &[E], frames: impl Fn(&E) -> u64) {
    for entry in other {
        let more = frames(entry);
        match mine.iter_mut().find(|m| m.same(entry)) {
            Some(m) => *m.frames_mut() += more,
            None if more > 0 => {
                let mut new = entry.clone();
                *new.frames_mut() = more;
                mine.push(new);
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(encapsulations: &[(Name, u64)], malformed: &[(Name, u64, u64)], snaplen_cut: u64) -> CaptureFacts {
        CaptureFacts {
            snaplen_cut,
            encapsulations: encapsulations.iter().map(|&(name, frames)| Encapsulation { name, frames }).collect(),
            malformed: malformed
                .iter()
                .map(|&(layer, frames, first_frame)| MalformedLayer {
                    layer,
                    frames,
                    first_frame: FrameNumber::new(first_frame),
                    first_reason: format!("at {first_frame}"),
                })
                .collect(),
            ..CaptureFacts::default()
        }
    }

    #[test]
    fn a_shard_adds_its_counts_and_the_earliest_first_frame_wins() {
        let mut whole = facts(&[("vlan", 3)], &[("ip", 2, 40)], 1);
        let shard = facts(&[("vlan", 2), ("erspan", 5)], &[("ip", 1, 7), ("udp", 1, 9)], 4);
        whole.add(&shard).expect("added");
        let encapsulations: Vec<_> = whole.encapsulations.iter().map(|e| (e.name, e.frames)).collect();
        assert_eq!(encapsulations, [("vlan", 5), ("erspan", 5)]);
        let malformed: Vec<_> =
            whole.malformed.iter().map(|m| (m.layer, m.frames, m.first_frame.get(), m.first_reason.as_str())).collect();
        assert_eq!(malformed, [("ip", 3, 7, "at 7"), ("udp", 1, 9, "at 9")]);
        assert_eq!(whole.snaplen_cut, 5);
    }

    #[test]
    fn a_graft_adds_what_came_after_the_start_only() {
        let start = facts(&[("vlan", 3)], &[("ip", 2, 40)], 1);
        let end = facts(&[("vlan", 5), ("erspan", 2)], &[("ip", 2, 40), ("udp", 1, 90)], 3);
        let mut merged = facts(&[("vlan", 10)], &[("ip", 4, 12)], 2);
        merged.graft(&start, end, &Seam::default()).expect("grafted");
        let encapsulations: Vec<_> = merged.encapsulations.iter().map(|e| (e.name, e.frames)).collect();
        assert_eq!(encapsulations, [("vlan", 12), ("erspan", 2)]);
        let malformed: Vec<_> = merged.malformed.iter().map(|m| (m.layer, m.frames, m.first_frame.get())).collect();
        assert_eq!(malformed, [("ip", 4, 12), ("udp", 1, 90)]);
        assert_eq!(merged.snaplen_cut, 4);
    }
}
