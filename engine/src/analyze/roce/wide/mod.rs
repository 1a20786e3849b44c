//! What the analysis counts across the capture rather than per flow: the capture-wide
//! counters and facts about the capture, PFC and PAUSE, the marking policy, RDMA CM
//! connections, mirror duplicates and the capture-wide timeline, behind one
//! [`CaptureWide`].

pub mod cm;
pub mod duplicates;
pub mod facts;
pub mod pfc;
pub mod policy;

use crate::analyze::combining::Combine;
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use rocescope_parsers::ethernet::MacAddr;
use rocescope_parsers::mac_control::Pfc;
use rocescope_parsers::opcode::CNP;

use crate::analyze::frame::{Content, FrameSummary, LinkKind, RoceFacts, UetCheck, UetFacts};
use crate::analyze::id::FlowKey;
use crate::analyze::timeline::Timeline;
use crate::decode::{Endpoint, IcrcStatus};
use cm::{CmEvent, CmTracker, Connection};
use duplicates::{Doubling, DuplicateWindow, Outside, Resends, TapView};
use facts::{CaptureFacts, Totals, UndecodedLinkFrames};
use pfc::PauseTracker;
use policy::{Class, Policy, PolicyCounts};

/// Bins of the capture-wide timeline.
pub const TIMELINE_BINS: usize = 256;
/// Channels of the capture-wide timeline.
pub const ROCE_BYTES: usize = 0;
pub const CE_MARKS: usize = 1;
pub const CNPS: usize = 2;

/// The capture-wide part of an analysis (its lists put in frame order by
/// [`CaptureWide::sort`] after adding shards).
#[derive(serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct CaptureWide {
    totals: Totals,
    capture: CaptureFacts,
    /// RoCE bytes, CE marks and CNPs over time ([`ROCE_BYTES`], [`CE_MARKS`], [`CNPS`]),
    /// mirror duplicates included.
    timeline: Timeline,
    /// Policy breaches over every RoCEv2 packet, mirror duplicates included.
    policy: PolicyCounts,
    pauses: PauseTracker,
    cm: CmTracker,
    /// Running state, each partition's table of recent frames: shards are joined finished, and
    /// a finished analysis looks at no frame more, so a shard's is not added; grafted, the
    /// part's.
    #[combine(add = own, graft = end)]
    duplicates: DuplicateWindow,
    untracked: Untracked,
}

/// RoCE packets of flows beyond the flows tracked, and the first of them.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct Untracked {
    #[combine(sum)]
    pub packets: u64,
    #[combine(earliest)]
    pub first_frame: Option<FrameNumber>,
}

impl CaptureWide {
    /// Nothing seen yet: pause quanta last for the time they take at `link_gbps`, pauses
    /// longer than `pfc_storm_ns` are storms, copies at most `mirror_window_ns` apart are
    /// mirror duplicates.
    pub fn new(link_gbps: u64, pfc_storm_ns: i64, mirror_window_ns: i64) -> Self {
        CaptureWide {
            totals: Totals::new(),
            capture: CaptureFacts::default(),
            timeline: Timeline::new(TIMELINE_BINS, CNPS + 1),
            policy: PolicyCounts::default(),
            pauses: PauseTracker::new(link_gbps, pfc_storm_ns),
            cm: CmTracker::default(),
            duplicates: DuplicateWindow::new(mirror_window_ns),
            untracked: Untracked::default(),
        }
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    pub fn capture(&self) -> &CaptureFacts {
        &self.capture
    }

    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    pub fn policy(&self) -> &PolicyCounts {
        &self.policy
    }

    pub fn pauses(&self) -> &PauseTracker {
        &self.pauses
    }

    pub fn cm(&self) -> &CmTracker {
        &self.cm
    }

    pub fn untracked(&self) -> Untracked {
        self.untracked
    }

    /// The link layers not decoded so far.
    pub fn undecoded_links(&self) -> &[UndecodedLinkFrames] {
        &self.capture.undecoded_links
    }

    /// Frames that went to a mirror-duplicate window's overflow and were forgotten inside it.
    pub fn duplicates_lost(&self) -> u64 {
        self.duplicates.lost()
    }

    /// The doubled-mirror decision is taken.
    pub fn apply_doubling(&mut self, decision: Doubling, span_window_ns: i64) {
        self.capture.doubled_mirror = Some(decision);
        if decision.doubled {
            self.duplicates.doubled(span_window_ns);
        }
    }

    /// The timeline of a shard starts where the whole capture's does.
    pub fn start_timeline_at(&mut self, start_ns: Option<i64>) {
        self.timeline.start_at(start_ns);
    }

    /// What a frame's record and decoding say of the capture: its time, lengths,
    /// encapsulations and tags.
    pub fn observe_capture(&mut self, s: &FrameSummary) {
        self.totals.frames.frames += 1;
        self.totals.frames.bytes += u64::from(s.orig_len);
        self.totals.infiniband.erf_records_lost += u64::from(s.erf_lost);
        let c = &mut self.capture;
        c.record(s.ts_ns, s.orig_len, s.caplen);
        for name in s.encaps.iter().flatten() {
            c.count_encapsulation(name);
        }
        c.mirror_truncated += u64::from(s.mirror_truncated);
        c.truncated_copies += u64::from(s.truncated_copy);
        c.hardware_timestamps += u64::from(s.hardware_time);
        for _ in 0..s.vlan_tags {
            c.count_encapsulation("vlan");
        }
        for name in s.marks.names() {
            c.count_encapsulation(name);
        }
    }

    pub fn observe_pfc(&mut self, frame: FrameNumber, ts_ns: i64, src: MacAddr, pfc: &Pfc) {
        self.totals.frames.non_roce += 1;
        self.totals.frames.pfc_frames += 1;
        self.pauses.observe_pfc(frame, ts_ns, src, pfc);
    }

    pub fn observe_pause(&mut self, frame: FrameNumber, ts_ns: i64, src: MacAddr, quanta: u16) {
        self.totals.frames.non_roce += 1;
        self.totals.frames.pause_frames += 1;
        self.pauses.observe_pause(frame, ts_ns, src, quanta);
    }

    /// A frame cut before its headers ended (already counted among the cut frames).
    pub fn observe_headers_cut(&mut self) {
        self.totals.frames.headers_cut += 1;
    }

    pub fn observe_malformed(&mut self, frame: FrameNumber, error: &rocescope_parsers::error::Error) {
        self.totals.frames.malformed += 1;
        self.capture.count_malformed(error.layer.name(), frame, || error.to_string());
    }

    /// A frame that is neither RoCE nor a pause: InfiniBand link packets and undecoded link
    /// layers are counted apart.
    /// A UET packet: non-RoCE, counted as UET and by what its CRC32C trailer matched.
    pub fn observe_uet(&mut self, s: &FrameSummary, check: UetCheck) {
        use rocescope_parsers::uet::crc::Variant;
        self.totals.frames.uet_packets += 1;
        let crc = &mut self.totals.uet_crc;
        let frames = &mut self.totals.uet_crc_frames;
        let kept = match check {
            UetCheck::Matched(Variant::Le) => Some(&mut frames.readings[0]),
            UetCheck::Matched(Variant::Be) => Some(&mut frames.readings[1]),
            UetCheck::Matched(Variant::RawLe) => Some(&mut frames.readings[2]),
            UetCheck::Matched(Variant::RawBe) => Some(&mut frames.readings[3]),
            UetCheck::NoVariant => Some(&mut frames.no_variant),
            UetCheck::Unchecked => None,
        };
        if let Some(list) = kept {
            crate::analyze::uet::crc::UetCrcFrames::keep(list, s.number);
        }
        *match check {
            UetCheck::Matched(Variant::Le) => &mut crc.crc32c_le,
            UetCheck::Matched(Variant::Be) => &mut crc.crc32c_be,
            UetCheck::Matched(Variant::RawLe) => &mut crc.crc32c_raw_le,
            UetCheck::Matched(Variant::RawBe) => &mut crc.crc32c_raw_be,
            UetCheck::NoVariant => &mut crc.no_variant,
            UetCheck::Unchecked => &mut crc.unchecked,
        } += 1;
        self.observe_other(s);
    }

    pub fn observe_other(&mut self, s: &FrameSummary) {
        let frames = &mut self.totals.frames;
        frames.non_roce += 1;
        match s.link {
            LinkKind::Decoded => {}
            LinkKind::InfinibandLink => frames.infiniband_link += 1,
            LinkKind::Undecoded(link) => {
                frames.undecoded_link += 1;
                self.capture.count_undecoded(link, s.number);
            }
        }
    }

    /// A RoCE frame, mirror duplicates included: the capture-wide counters, the policy and
    /// the timeline.
    pub fn observe_roce(&mut self, s: &FrameSummary, roce: &RoceFacts, policy: &Policy) {
        let (ts_ns, qos) = (s.ts_ns, s.qos());
        self.count_roce(s, roce, policy);
        self.timeline.add(ts_ns, ROCE_BYTES, u64::from(s.orig_len));
        if qos.is_some_and(|(_, ecn)| ecn == 3) {
            self.timeline.add(ts_ns, CE_MARKS, 1);
        }
        if roce.opcode == CNP {
            self.timeline.add(ts_ns, CNPS, 1);
        }
    }

    /// Capture-wide RoCE counters.
    fn count_roce(&mut self, s: &FrameSummary, roce: &RoceFacts, policy: &Policy) {
        let (frame, qos) = (s.number, s.qos());
        let t = &mut self.totals;
        if let Some(n) = t.opcodes.get_mut(usize::from(roce.opcode)) {
            *n += 1;
        }
        t.icrc.count(roce.icrc);
        let cnp = roce.opcode == CNP;
        if cnp {
            t.cnps += 1;
            if let Some(pcp) = roce.pcp {
                t.cnp_vlan_pcp[usize::from(pcp & 7)] += 1;
            }
        }
        t.frames.roce_packets += 1;
        if let Some(vcrc) = roce.vcrc {
            t.frames.infiniband += 1;
            let ib = &mut t.infiniband;
            match vcrc {
                IcrcStatus::Ok => ib.vcrc_ok += 1,
                IcrcStatus::Bad => ib.vcrc_bad += 1,
                IcrcStatus::Unverifiable => ib.vcrc_unverifiable += 1,
            }
            ib.fecn += u64::from(roce.fecn);
            ib.becn += u64::from(roce.becn);
            return;
        }
        let Some((dscp, ecn)) = qos else {
            t.frames.roce_v1 += 1;
            return;
        };
        t.frames.roce_v2 += 1;
        if let Some(n) = t.dscp.get_mut(usize::from(dscp)) {
            *n += 1;
        }
        t.ecn.count_with_outer(ecn, s.outer_ce);
        if let (true, Some(n)) = (cnp, t.cnp_dscp.get_mut(usize::from(dscp))) {
            *n += 1;
        }
        let class = Class::of(roce.opcode, roce.dest_qp);
        if class == Class::Management {
            t.management += 1;
            if let Some(n) = t.management_dscp.get_mut(usize::from(dscp)) {
                *n += 1;
            }
            t.management_ecn.count(ecn);
        }
        self.policy.check(policy, frame, class, dscp, ecn, roce.pcp);
    }

    /// A CM message: the connection it completes, if it completes one.
    pub fn observe_cm(
        &mut self,
        frame: FrameNumber,
        src: Endpoint,
        dst: Endpoint,
        cm: &crate::analyze::frame::CmFacts,
    ) -> Option<&Connection> {
        match self.cm.observe(frame, src, dst, cm) {
            CmEvent::Established(index) => self.cm.connections.get(index),
            CmEvent::Other => None,
        }
    }

    /// A RoCE packet of a flow not tracked (beyond the flows tracked).
    pub fn count_untracked(&mut self, frame: FrameNumber) {
        self.untracked.packets += 1;
        self.untracked.first_frame.get_or_insert(frame);
    }

    /// Is the RoCE frame a mirror duplicate (counted so when it is)? A resend through another
    /// port is none ([`Resends`]).
    pub fn is_mirror_duplicate(
        &mut self,
        key: &FlowKey,
        s: &FrameSummary,
        roce: &RoceFacts,
        resends: &mut Resends,
    ) -> bool {
        self.is_copy(key, roce.signature, s, &outside(s, roce), resends)
    }

    /// Is the UET frame a mirror duplicate (counted so when it is)? Its copies are told apart
    /// by host pair and content.
    pub fn is_uet_mirror_duplicate(&mut self, s: &FrameSummary, uet: &UetFacts) -> bool {
        let (src, dst) = s.endpoints();
        let key = FlowKey { src, dst, dst_qp: UET_COPIES };
        self.is_copy(&key, uet.signature, s, &uet_outside(s, uet), &mut Resends::default())
    }

    fn is_copy(
        &mut self,
        key: &FlowKey,
        signature: u32,
        s: &FrameSummary,
        outside: &Outside,
        resends: &mut Resends,
    ) -> bool {
        let duplicate = self.duplicates.check(key, signature, s.ts_ns, outside, resends);
        self.totals.frames.mirror_duplicates += u64::from(duplicate);
        duplicate
    }

    pub fn finish(&mut self) {
        self.pauses.finish();
    }
}

/// The destination QP the duplicate window files UET packets under: none of RoCE's 24-bit QPs.
const UET_COPIES: u32 = 1 << 24;

/// The bytes of a RoCE frame outside its ICRC's cover, for telling copies apart.
pub fn outside(s: &FrameSummary, roce: &RoceFacts) -> Outside {
    outside_of(s, TapView { ttl: roce.ttl, src_mac: roce.src_mac, dst_mac: roce.dst_mac }, roce.pcp)
}

/// The bytes of a UET frame outside its CRC32C's cover, for telling copies apart.
pub fn uet_outside(s: &FrameSummary, uet: &UetFacts) -> Outside {
    outside_of(s, TapView { ttl: uet.ttl, src_mac: uet.src_mac, dst_mac: uet.dst_mac }, uet.pcp)
}

fn outside_of(s: &FrameSummary, view: TapView, pcp: Option<u8>) -> Outside {
    Outside { view, tos: s.qos().map(|(dscp, ecn)| (dscp << 2) | (ecn & 3)), pcp, orig_len: s.orig_len }
}

/// What the doubled-mirror decision knows a RoCE or UET frame by ([`Outside::identity`]);
/// none for other frames.
pub fn copy_identity(s: &FrameSummary) -> Option<u64> {
    match &s.content {
        Content::Roce(roce) => Some(outside(s, roce).identity(roce.signature)),
        Content::Uet(uet) => Some(uet_outside(s, uet).identity(uet.signature)),
        _ => None,
    }
}

/// What combining two analyses' capture-wide parts ([`crate::analyze::combine`]) reads and
/// does beyond [`Combine`].
impl CaptureWide {
    /// The lists in frame order, after adding shards.
    pub fn sort(&mut self) {
        self.capture.sort();
        self.cm.connections.sort_by_key(|c| c.request_frame);
    }

    /// Is `start` (the part's kept frames analysed on their own) where `part` stands
    /// in everything capture-wide that decides how its later frames are taken? `self` is the
    /// merged analysis at the end of the same frames. If not, what differs (or may).
    pub fn agrees(&self, start: &CaptureWide, part: &CaptureWide) -> Result<(), &'static str> {
        if part.totals.management != start.totals.management {
            return Err("management packets (CM) after the kept frames");
        }
        if part.untracked.packets != start.untracked.packets || self.untracked.packets != 0 {
            return Err("flows beyond the bound");
        }
        Ok(())
    }
}
