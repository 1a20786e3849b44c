//! What the analysis needs of a decoded frame, as an owned value: small enough to copy, and
//! free of borrows, so that decoding and analysis can run on different threads.

use rocescope_parsers::Error;
use rocescope_parsers::cm::{CmMad, CmMessage};
use rocescope_parsers::ethernet::MacAddr;
use rocescope_parsers::ext::{Aeth, Deth, Reth};
use rocescope_parsers::mac_control::{MacControl, Pfc};
use rocescope_parsers::opcode::{CNP, OpcodeInfo};
use rocescope_parsers::uet::Uet;

use crate::analyze::renumber::{FrameNumber, Renumber};
use crate::capture::Record;
use crate::decode::MAX_ENCAP_DEPTH;
use crate::decode::{
    Body, DecodedFrame, Decoder, DeferredIcrc, Endpoint, IcrcStatus, Link, Marks, Other, PlainRoce, Roce,
};

/// The CM message fields connection tracking uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum CmFacts {
    Req {
        local_comm_id: u32,
        local_qpn: u32,
        starting_psn: u32,
        path_mtu: Option<u32>,
        retry_count: u8,
        rnr_retry_count: u8,
        local_ack_timeout: u8,
    },
    Rep {
        local_comm_id: u32,
        remote_comm_id: u32,
        local_qpn: u32,
        starting_psn: u32,
    },
    Rtu {
        local_comm_id: u32,
    },
    Rej {
        remote_comm_id: u32,
        reason: u16,
    },
    Dreq {
        local_comm_id: u32,
    },
    Other,
}

impl From<&CmMad<'_>> for CmFacts {
    fn from(mad: &CmMad<'_>) -> Self {
        match &mad.message {
            CmMessage::Req(r) => CmFacts::Req {
                local_comm_id: r.local_comm_id(),
                local_qpn: r.local_qpn(),
                starting_psn: r.starting_psn(),
                path_mtu: r.path_mtu(),
                retry_count: r.retry_count(),
                rnr_retry_count: r.rnr_retry_count(),
                local_ack_timeout: r.local_ack_timeout(),
            },
            CmMessage::Rep(r) => CmFacts::Rep {
                local_comm_id: r.local_comm_id(),
                remote_comm_id: r.remote_comm_id(),
                local_qpn: r.local_qpn(),
                starting_psn: r.starting_psn(),
            },
            CmMessage::Rtu(ids) => CmFacts::Rtu { local_comm_id: ids.local_comm_id() },
            CmMessage::Rej(r) => CmFacts::Rej { remote_comm_id: r.remote_comm_id(), reason: r.reason() },
            CmMessage::Dreq(r) => CmFacts::Dreq { local_comm_id: r.local_comm_id() },
            CmMessage::Drep(_) | CmMessage::Other { .. } => CmFacts::Other,
        }
    }
}

/// A RoCE packet as the analysis sees it.
#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize, Renumber)]
pub struct RoceFacts {
    /// 1, 2, or [`crate::decode::NATIVE_INFINIBAND`].
    pub version: u8,
    /// TTL or hop limit (0 for a native packet without a GRH).
    pub ttl: u8,
    /// PCP of the outermost VLAN tag.
    pub pcp: Option<u8>,
    pub src_mac: Option<MacAddr>,
    pub dst_mac: Option<MacAddr>,
    pub udp_sport: Option<u16>,
    pub opcode: u8,
    pub dest_qp: u32,
    pub psn: u32,
    pub ack_req: bool,
    pub payload_len: usize,
    pub icrc: IcrcStatus,
    /// The VCRC's verdict, for a native InfiniBand packet.
    pub vcrc: Option<IcrcStatus>,
    /// The BTH's FECN and BECN bits (IBA §9.2: congestion marks on InfiniBand).
    pub fecn: bool,
    pub becn: bool,
    /// Content signature for mirror-duplicate detection (see [`signature`]).
    pub signature: u32,
    /// An ICRC the decoder left to compute: `icrc` and `signature` are placeholders until
    /// [`RoceFacts::settle_icrc`].
    pub deferred_icrc: Option<DeferredIcrc>,
    pub aeth: Option<Aeth>,
    pub reth: Option<Reth>,
    pub deth: Option<Deth>,
    pub cm: Option<CmFacts>,
}

/// What a frame carries, as the analysis counts it.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, Renumber)]
pub enum Content {
    Roce(RoceFacts),
    Pfc {
        src: MacAddr,
        pfc: Pfc,
    },
    Pause {
        src: MacAddr,
        quanta: u16,
    },
    /// An Ultra Ethernet Transport packet: what its trailer matched and what its PDS header
    /// says.
    Uet(UetFacts),
    Other,
    Malformed(Error),
    /// A frame the snap length or a mirror cut before its headers ended: what the parser found
    /// short.
    HeadersCut(Error),
}

/// A UET packet as the analysis sees it: its trailer's check and the PDS header's fields
/// (`pds` none for an encrypted packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct UetFacts {
    pub check: UetCheck,
    pub pds: Option<PdsFacts>,
    /// What two copies of the packet (two taps', or a doubled mirror's) may differ in: the
    /// TTL / hop limit, the outer VLAN PCP and the MAC addresses.
    pub ttl: u8,
    pub pcp: Option<u8>,
    pub src_mac: Option<MacAddr>,
    pub dst_mac: Option<MacAddr>,
    /// Content signature for mirror-duplicate detection (see [`uet_signature`]).
    pub signature: u32,
}

/// The PDS header's fields the analysis per PDC reads (docs/analysis.md, "UET").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct PdsFacts {
    /// The PDS type (2..=14).
    pub kind: u8,
    pub retx: bool,
    pub syn: bool,
    /// M: the packet acknowledged arrived CE-marked.
    pub ecn_marked: bool,
    pub psn: Option<u32>,
    pub start_psn: Option<u32>,
    pub spdcid: Option<u16>,
    pub dpdcid: Option<u16>,
    pub cack_psn: Option<u32>,
    /// The PSN an ACK acknowledges (CACK_PSN + its offset): the packet M speaks of.
    pub ack_psn: Option<u32>,
    /// The SACK bitmap's first PSN and the bitmap (bit 0 that PSN).
    pub sack: Option<(u32, u64)>,
    pub nack_code: Option<u8>,
    /// The PSN a NACK names.
    pub nack_psn: Option<u32>,
    pub ctl_type: Option<u8>,
    pub packet_id: Option<u32>,
}

impl UetFacts {
    fn of(p: &DecodedFrame<'_>, uet: &crate::decode::UetFrame<'_>) -> UetFacts {
        let pds = uet.pds().map(|p| PdsFacts {
            kind: p.pds_type() as u8,
            retx: p.retx(),
            syn: p.syn(),
            ecn_marked: p.ecn_marked(),
            psn: p.psn(),
            start_psn: p.start_psn(),
            spdcid: p.spdcid(),
            dpdcid: p.dpdcid(),
            cack_psn: p.cack_psn(),
            ack_psn: p.ack_psn(),
            sack: p.sack_base().zip(p.sack_bitmap()),
            nack_code: p.nack_code(),
            nack_psn: p.nack_psn(),
            ctl_type: p.ctl_type(),
            packet_id: p.packet_id(),
        });
        UetFacts {
            check: UetCheck::of(uet.crc),
            pds,
            ttl: p.net.and_then(|n| n.ttl()).unwrap_or(0),
            pcp: p.eth.and_then(|e| e.vlans.outer()).map(|t| t.pcp()),
            src_mac: p.src_mac(),
            dst_mac: p.dst_mac(),
            signature: uet_signature(&uet.packet, uet.crc),
        }
    }
}

/// A content signature of a UET packet for mirror-duplicate detection, computed from its
/// bytes as a RoCE packet's is from its ICRC: its CRC32C trailer where a reading of the CRC
/// matched it (it then covers every byte a hop leaves alone); where none did, the CRC the
/// capture's reading computes with the trailer's bytes (which may be no CRC but the payload's
/// last bytes, alike in many packets); an encrypted packet's tag (a MAC, distinct per
/// packet); for a packet not captured whole, a CRC of its captured UET bytes.
fn uet_signature(packet: &Uet<'_>, check: crate::decode::UetCrc) -> u32 {
    use crate::decode::UetCrc;
    let hash = |parts: &[&[u8]]| {
        let mut hasher = crc32fast::Hasher::new();
        parts.iter().for_each(|part| hasher.update(part));
        hasher.finalize()
    };
    match (packet, check) {
        (Uet::Clear { crc: Some(crc), .. }, UetCrc::Matched(_)) => u32::from_be_bytes(**crc),
        (_, UetCrc::NoVariant { computed, wire }) => hash(&[&computed.to_be_bytes(), &wire]),
        (Uet::Clear { pds, ses, payload, crc }, _) => {
            hash(&[pds.as_bytes(), ses.map_or(&[][..], |s| s.as_bytes()), payload, crc.map_or(&[][..], |c| &c[..])])
        }
        (Uet::Secured { tag: Some(tag), .. }, _) => hash(&[tag]),
        (Uet::Secured { tss, ciphertext, tag: None }, _) => hash(&[tss.as_bytes(), ciphertext]),
    }
}

/// What a UET packet's CRC32C trailer matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum UetCheck {
    Matched(rocescope_parsers::uet::crc::Variant),
    NoVariant,
    Unchecked,
}

impl UetCheck {
    fn of(crc: crate::decode::UetCrc) -> UetCheck {
        match crc {
            crate::decode::UetCrc::Matched(variant) => UetCheck::Matched(variant),
            crate::decode::UetCrc::NoVariant { .. } => UetCheck::NoVariant,
            crate::decode::UetCrc::Unchecked => UetCheck::Unchecked,
        }
    }
}

/// One frame, summarised for the analysis.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, Renumber)]
pub struct FrameSummary {
    pub number: FrameNumber,
    pub ts_ns: i64,
    pub orig_len: u32,
    pub caplen: u32,
    /// Names of the mirror encapsulations, outermost first.
    #[serde(deserialize_with = "crate::analyze::names::encapsulations")]
    pub encaps: [Option<&'static str>; MAX_ENCAP_DEPTH],
    /// A mirror marked the inner frame truncated.
    pub mirror_truncated: bool,
    /// A RoCE packet the frame does not hold whole although nothing says the frame was cut:
    /// no snap length cut, no truncation flag (a mirror's `truncate size`).
    pub truncated_copy: bool,
    pub vlan_tags: u8,
    /// Tags, vendor headers and trailers besides the tunnels.
    pub marks: Marks,
    /// A device on the way stamped the frame with its time.
    pub hardware_time: bool,
    /// Addresses of the innermost IP header, GRH or LRH, for every kind of frame.
    pub src: Option<Endpoint>,
    pub dst: Option<Endpoint>,
    pub dscp: Option<u8>,
    pub ecn: Option<u8>,
    /// A VXLAN overlay's outer IP header is CE-marked: congestion on the underlay.
    pub outer_ce: bool,
    /// The ERF record's loss counter: records the card dropped before this one.
    pub erf_lost: u16,
    /// What the link layer is when it is not a RoCE or InfiniBand packet's own.
    pub link: LinkKind,
    pub content: Content,
}

/// The link-layer facts the capture counts apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub enum LinkKind {
    #[default]
    Decoded,
    /// An InfiniBand link packet (flow control).
    InfinibandLink,
    /// A link type (or, in ERF, record type) rocescope does not decode.
    Undecoded(UndecodedLink),
}

/// A link layer rocescope does not decode, as the report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum UndecodedLink {
    LinkType(u32),
    ErfType(u8),
}

impl std::fmt::Display for UndecodedLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UndecodedLink::LinkType(l) => write!(f, "link type {l}"),
            UndecodedLink::ErfType(t) => write!(f, "ERF record type {t}"),
        }
    }
}

impl LinkKind {
    fn of(p: &DecodedFrame<'_>) -> LinkKind {
        match p.body {
            Body::Other(Other::InfinibandLink { .. }) => LinkKind::InfinibandLink,
            Body::Other(Other::UnsupportedLink(l)) => LinkKind::Undecoded(UndecodedLink::LinkType(l)),
            Body::Other(Other::ErfType(t)) => LinkKind::Undecoded(UndecodedLink::ErfType(t)),
            _ => LinkKind::Decoded,
        }
    }
}

/// A content signature of a RoCE packet for mirror-duplicate detection: its ICRC when the
/// whole packet was captured (which covers every invariant byte), else a CRC of the captured
/// transport bytes with the variant BTH byte masked.
fn signature(roce: &Roce<'_>) -> u32 {
    if let Some(icrc) = roce.icrc_computed {
        return icrc;
    }
    let bytes = roce.ib.bytes;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(bytes.get(..4).unwrap_or_default());
    hasher.update(&[0xFF]);
    hasher.update(bytes.get(5..).unwrap_or_default());
    hasher.finalize()
}

/// Is `encap` a VXLAN overlay whose outer IP header is CE-marked? Only an overlay's: the outer
/// header of a mirror's copy (ERSPAN, GRE, Spectrum) is the mirror tunnel's, not the path's.
fn overlay_ce(encap: &crate::decode::Encap<'_>) -> bool {
    let ecn = match encap.outer.first().map(|b| b >> 4) {
        Some(4) => encap.outer.get(1).map(|tos| tos & 3),
        Some(6) => encap.outer.get(1).map(|b| (b >> 4) & 3),
        _ => None,
    };
    matches!(encap.kind, crate::decode::EncapKind::Vxlan { .. }) && ecn == Some(3)
}

/// Did the parser find a header short only because the capture kept less of the frame than
/// was sent? Then the frame is cut, not malformed: the record says so (the snap length), or
/// the mirror's truncation flag, or, for a mirror's copy, the inner IP header says the packet
/// was longer than the bytes kept (a mirror session that cuts copies and leaves no mark). A
/// frame captured as it is, shorter than its IP header says, is a runt: malformed.
fn cut_short(p: &DecodedFrame<'_>, error: &Error, mirror_truncated: bool) -> bool {
    let copy_cut = !p.encaps.is_empty() && ip_says_longer(p);
    let kept_less = (p.data.len() as u64) < u64::from(p.orig_len) || mirror_truncated || copy_cut;
    kept_less && matches!(error.kind, rocescope_parsers::error::ErrorKind::Truncated { .. })
}

/// Does the frame's IP header give the packet more bytes than the frame holds from it on?
fn ip_says_longer(p: &DecodedFrame<'_>) -> bool {
    let (header, claimed) = match p.net {
        Some(crate::decode::Network::Ipv4(ip)) => (ip.as_bytes(), usize::from(ip.total_length())),
        Some(crate::decode::Network::Ipv6(ip)) => (&ip.as_bytes()[..], 40 + usize::from(ip.payload_length())),
        _ => return false,
    };
    let start = (header.as_ptr() as usize).checked_sub(p.data.as_ptr() as usize);
    start.and_then(|s| p.data.len().checked_sub(s)).is_some_and(|kept| claimed > kept)
}

impl FrameSummary {
    pub fn of(number: u64, p: &DecodedFrame<'_>) -> FrameSummary {
        let mirror_truncated = p.encaps.iter().any(|e| e.kind.truncated_by_mirror());
        let mut encaps = [None; MAX_ENCAP_DEPTH];
        for (slot, e) in encaps.iter_mut().zip(p.encaps.iter()) {
            *slot = Some(e.kind.name());
        }
        let content = match &p.body {
            Body::Roce(roce) if p.net.is_some() => Content::Roce(RoceFacts::of(p, roce)),
            Body::Roce(_) => Content::Other,
            Body::Uet(uet) => Content::Uet(UetFacts::of(p, uet)),
            Body::MacControl(MacControl::Pfc(pfc)) => {
                Content::Pfc { src: p.src_mac().unwrap_or(MacAddr([0; 6])), pfc: *pfc }
            }
            Body::MacControl(MacControl::Pause { quanta }) => {
                Content::Pause { src: p.src_mac().unwrap_or(MacAddr([0; 6])), quanta: *quanta }
            }
            Body::MacControl(MacControl::Other { .. }) | Body::Other(_) => Content::Other,
            Body::Malformed(m) if cut_short(p, &m.error, mirror_truncated) => Content::HeadersCut(m.error),
            Body::Malformed(m) => Content::Malformed(m.error),
        };
        FrameSummary {
            number: FrameNumber::new(number),
            ts_ns: p.ts_ns,
            orig_len: p.orig_len,
            caplen: p.data.len() as u32,
            encaps,
            mirror_truncated,
            truncated_copy: !mirror_truncated
                && p.data.len() as u32 >= p.orig_len
                && p.roce().is_some_and(|r| !r.ib.fully_captured()),
            vlan_tags: p.eth.map_or(0, |e| e.vlans.len() as u8),
            marks: Marks::of(p),
            hardware_time: p.hardware_time_ns(p.ts_ns).is_some(),
            src: p.source(),
            dst: p.destination(),
            dscp: p.net.and_then(|n| n.dscp()),
            ecn: p.net.and_then(|n| n.ecn()),
            outer_ce: p.encaps.iter().any(overlay_ce),
            erf_lost: match p.link {
                Link::Erf(h) => h.loss_counter,
                _ => 0,
            },
            link: LinkKind::of(p),
            content,
        }
    }

    /// The summary of `record`: from the fast path when it is a plain RoCEv2 frame
    /// ([`Decoder::plain_roce`]), else from its whole decoding.
    pub fn of_record(number: u64, record: &Record<'_>, decoder: &Decoder) -> FrameSummary {
        match decoder.plain_roce(record) {
            Some(plain) => FrameSummary::of_plain(number, record, &plain),
            None => FrameSummary::of(number, &decoder.decode(record)),
        }
    }

    /// The summary of a plain RoCEv2 frame: what [`FrameSummary::of`] gives its whole
    /// decoding, where nothing but its Ethernet, IP, UDP and transport headers is set.
    pub fn of_plain(number: u64, record: &Record<'_>, plain: &PlainRoce<'_>) -> FrameSummary {
        let (ib, traffic_class) = (plain.ib, plain.traffic_class());
        let roce = RoceFacts {
            version: 2,
            ttl: plain.ttl(),
            pcp: plain.pcp(),
            src_mac: Some(plain.src_mac()),
            dst_mac: Some(plain.dst_mac()),
            udp_sport: Some(plain.udp_source_port),
            opcode: ib.bth.opcode(),
            dest_qp: ib.bth.dest_qp(),
            psn: ib.bth.psn(),
            ack_req: ib.bth.ack_req(),
            payload_len: ib.payload_len,
            icrc: plain.icrc,
            vcrc: None,
            fecn: ib.bth.fecn(),
            becn: ib.bth.becn(),
            signature: plain.icrc_computed,
            deferred_icrc: None,
            aeth: ib.aeth(),
            reth: ib.reth(),
            deth: ib.deth(),
            cm: None,
        };
        FrameSummary {
            number: FrameNumber::new(number),
            ts_ns: record.ts_ns,
            orig_len: record.orig_len,
            caplen: record.data.len() as u32,
            encaps: [None; MAX_ENCAP_DEPTH],
            mirror_truncated: false,
            truncated_copy: false,
            vlan_tags: plain.vlan_tags() as u8,
            marks: Marks::default(),
            hardware_time: false,
            src: Some(plain.source.into()),
            dst: Some(plain.destination.into()),
            dscp: Some(traffic_class >> 2),
            ecn: Some(traffic_class & 0x03),
            outer_ce: false,
            erf_lost: 0,
            link: LinkKind::Decoded,
            content: Content::Roce(roce),
        }
    }

    /// The frame kind as reports name it (see [`crate::decode::FrameKind`]).
    pub fn kind_name(&self) -> &'static str {
        match self.content {
            Content::Roce(_) => "roce",
            Content::Pfc { .. } => "pfc",
            Content::Pause { .. } => "pause",
            Content::Uet(_) => "uet",
            Content::Other => "other",
            Content::Malformed(_) => "malformed",
            Content::HeadersCut(_) => "headers_cut",
        }
    }

    /// Source and destination of a RoCE frame (always known: RoCE has an IP header, GRH or
    /// LRH).
    pub fn endpoints(&self) -> (Endpoint, Endpoint) {
        let unknown = Endpoint::Ip(std::net::IpAddr::from([0u8; 4]));
        (self.src.unwrap_or(unknown), self.dst.unwrap_or(unknown))
    }

    /// DSCP and ECN of a RoCEv2 frame.
    pub fn qos(&self) -> Option<(u8, u8)> {
        self.dscp.zip(self.ecn)
    }

    /// Was the packet marked for congestion on its way: ECN-CE on RoCEv2, the BTH's FECN on
    /// native InfiniBand?
    pub fn congestion_marked(&self, roce: &RoceFacts) -> bool {
        self.qos().is_some_and(|(_, ecn)| ecn == 3) || (roce.is_native() && roce.fecn)
    }

    pub fn roce(&self) -> Option<&RoceFacts> {
        match &self.content {
            Content::Roce(r) => Some(r),
            _ => None,
        }
    }

    pub fn roce_mut(&mut self) -> Option<&mut RoceFacts> {
        match &mut self.content {
            Content::Roce(r) => Some(r),
            _ => None,
        }
    }
}

impl RoceFacts {
    /// Is this a native InfiniBand packet?
    pub fn is_native(&self) -> bool {
        self.vcrc.is_some()
    }

    /// A congestion notification for the sender: a CNP, or on native InfiniBand any packet
    /// with BECN set, which the receiver returns for FECN marks (IBA annex A10).
    pub fn notifies_congestion(&self) -> bool {
        self.opcode == CNP || (self.is_native() && self.becn)
    }

    /// Records the ICRC computed for a deferred one: its status, and its value as the content
    /// signature.
    pub fn settle_icrc(&mut self, status: IcrcStatus, computed: u32) {
        self.icrc = status;
        self.signature = computed;
        self.deferred_icrc = None;
    }

    /// The opcode's table entry (every RoCE packet's opcode has one).
    pub fn info(&self) -> Option<OpcodeInfo> {
        rocescope_parsers::opcode::info(self.opcode)
    }

    fn of(p: &DecodedFrame<'_>, roce: &Roce<'_>) -> RoceFacts {
        let bth = roce.ib.bth;
        let net = p.net;
        RoceFacts {
            version: roce.version,
            ttl: net.and_then(|n| n.ttl()).unwrap_or(0),
            pcp: p.eth.and_then(|e| e.vlans.outer()).map(|t| t.pcp()),
            src_mac: p.src_mac(),
            dst_mac: p.dst_mac(),
            udp_sport: p.udp.map(|u| u.source_port()),
            opcode: bth.opcode(),
            dest_qp: bth.dest_qp(),
            psn: bth.psn(),
            ack_req: bth.ack_req(),
            payload_len: roce.ib.payload_len,
            icrc: roce.icrc,
            vcrc: roce.vcrc.map(|v| v.status),
            fecn: bth.fecn(),
            becn: bth.becn(),
            signature: if roce.deferred_icrc.is_some() { 0 } else { signature(roce) },
            deferred_icrc: roce.deferred_icrc,
            aeth: roce.ib.aeth(),
            reth: roce.ib.reth(),
            deth: roce.ib.deth(),
            cm: roce.cm.as_ref().map(CmFacts::from),
        }
    }
}
