//! The decoded view of one frame: every layer found, borrowed from the frame's bytes.

use std::net::IpAddr;

use rocescope_parsers::Error;
use rocescope_parsers::arista::AristaHeader;
use rocescope_parsers::bth::Bth;
use rocescope_parsers::cm::{CmMad, MadHeader};
use rocescope_parsers::erf::ErfHeader;
use rocescope_parsers::erspan::ErspanHeader;
use rocescope_parsers::ethernet::{EthernetFrame, MacAddr};
use rocescope_parsers::grh::GrhHeader;
use rocescope_parsers::ib::IbPacket;
use rocescope_parsers::ipv4::Ipv4Header;
use rocescope_parsers::ipv6::Ipv6Header;
use rocescope_parsers::lrh::LrhHeader;
use rocescope_parsers::mac_control::MacControl;
use rocescope_parsers::metamako::MetamakoTrailer;
use rocescope_parsers::mpls::MplsStack;
use rocescope_parsers::port_tag::PortTag;
use rocescope_parsers::sll::SllHeader;
use rocescope_parsers::udp::UdpHeader;

use crate::capture::{LinkType, Record};

/// Mirror encapsulations unwrapped before a frame is given up as too deeply nested.
pub const MAX_ENCAP_DEPTH: usize = 4;

/// A mirror/tunnel encapsulation that was removed to reach the inner frame: its kind and the
/// outer IP header, as views over the frame's bytes.
#[derive(Debug, Clone, Copy)]
pub struct Encap<'a> {
    pub kind: EncapKind<'a>,
    /// The outer IPv4 or IPv6 header; no bytes, where the tunnel header starts, for a tunnel
    /// with none of its own (an MPLS pseudowire).
    pub outer: &'a [u8],
    /// Where the inner frame (Ethernet, or IP) starts in the captured bytes.
    pub inner_at: u32,
}

impl Encap<'_> {
    fn outer_addresses(&self) -> Option<(IpAddr, IpAddr)> {
        match self.outer.first().map(|b| b >> 4) {
            Some(4) => Ipv4Header::parse(self.outer).ok().map(|(h, _)| (h.source().into(), h.destination().into())),
            Some(6) => Ipv6Header::parse(self.outer).ok().map(|(h, _)| (h.source().into(), h.destination().into())),
            _ => None,
        }
    }

    /// Source address of the outer IP header.
    pub fn outer_src(&self) -> Option<IpAddr> {
        self.outer_addresses().map(|(s, _)| s)
    }

    /// Destination address of the outer IP header.
    pub fn outer_dst(&self) -> Option<IpAddr> {
        self.outer_addresses().map(|(_, d)| d)
    }
}

#[derive(Debug, Clone, Copy)]
pub enum EncapKind<'a> {
    /// ERSPAN type I (GRE 0x88BE without a sequence number, no ERSPAN header).
    Erspan1,
    /// ERSPAN type II: the 8 header bytes (decode with [`ErspanHeader::parse_type2`]).
    Erspan2(&'a [u8]),
    /// ERSPAN type III: the header bytes, platform sub-header included
    /// ([`ErspanHeader::parse_type3`]).
    Erspan3(&'a [u8]),
    Vxlan {
        vni: u32,
    },
    /// GRE carrying Ethernet (0x6558), IP or MPLS directly.
    Gre {
        protocol: u16,
        key: Option<u32>,
    },
    /// NVIDIA Spectrum's mirror copies (GRE protocol 0x8949): the vendor header's bytes
    /// before the mirrored frame.
    Spectrum(&'a [u8]),
    /// An Ethernet pseudowire: an MPLS label stack (the frame's [`DecodedFrame::mpls`]), its
    /// control word's bytes or none, then an Ethernet frame.
    MplsPseudowire(Option<&'a [u8; 4]>),
}

impl EncapKind<'_> {
    /// Short name used in reports (`erspan2`, `vxlan`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            EncapKind::Erspan1 => "erspan1",
            EncapKind::Erspan2(_) => "erspan2",
            EncapKind::Erspan3(_) => "erspan3",
            EncapKind::Vxlan { .. } => "vxlan",
            EncapKind::Gre { .. } => "gre",
            EncapKind::Spectrum(_) => "spectrum",
            EncapKind::MplsPseudowire(_) => "mpls_pw",
        }
    }

    /// The decoded ERSPAN header, for ERSPAN II and III.
    pub fn erspan(&self) -> Option<ErspanHeader> {
        match self {
            EncapKind::Erspan2(bytes) => ErspanHeader::parse_type2(bytes).ok().map(|(h, _)| h),
            EncapKind::Erspan3(bytes) => ErspanHeader::parse_type3(bytes).ok().map(|(h, _)| h),
            _ => None,
        }
    }

    /// Did the mirroring switch truncate the inner frame (ERSPAN T bit)?
    pub fn truncated_by_mirror(&self) -> bool {
        self.erspan().is_some_and(|h| h.truncated)
    }
}

/// The encapsulations of a frame, outermost first (fixed capacity, no allocation).
#[derive(Debug, Clone, Copy, Default)]
pub struct EncapStack<'a> {
    layers: [Option<Encap<'a>>; MAX_ENCAP_DEPTH],
    len: usize,
}

impl<'a> EncapStack<'a> {
    pub fn push(&mut self, encap: Encap<'a>) -> bool {
        match self.layers.get_mut(self.len) {
            Some(slot) => {
                *slot = Some(encap);
                self.len += 1;
                true
            }
            None => false,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Encap<'a>> {
        self.layers.iter().flatten()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

/// The headers and trailers a frame carries besides its tunnels, as reports name them (a set,
/// listed in [`Marks::NAMES`]'s order, after the tunnels and VLAN tags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Marks(u8);

impl Marks {
    /// A port-extender tag (two kinds), Arista's timestamp header, an MPLS label stack, a
    /// Metamako trailer, RoCEv1's GRH.
    pub const NAMES: [&'static str; 6] = ["vntag", "etag", "arista", "mpls", "metamako", "rocev1"];

    pub fn of(p: &DecodedFrame<'_>) -> Marks {
        use rocescope_parsers::port_tag::PortTagKind;
        let has = [
            p.port_tag.is_some_and(|t| t.kind == PortTagKind::VnTag),
            p.port_tag.is_some_and(|t| t.kind == PortTagKind::ETag),
            p.arista.is_some(),
            p.mpls.is_some(),
            p.metamako.is_some(),
            matches!(p.net, Some(Network::Grh(_))) && p.lrh.is_none(),
        ];
        Marks(has.iter().enumerate().fold(0, |bits, (i, on)| bits | (u8::from(*on) << i)))
    }

    /// The names of the marks in the set.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES.into_iter().enumerate().filter(move |(i, _)| self.0 & (1 << i) != 0).map(|(_, name)| name)
    }
}

/// The link layer the capture file announced.
#[derive(Debug, Clone, Copy)]
pub enum Link<'a> {
    Ethernet,
    Sll(SllHeader<'a>),
    RawIp,
    /// LINKTYPE_INFINIBAND: the packet from its LRH through its VCRC.
    Infiniband,
    /// An ERF record: its header, then an InfiniBand packet or an Ethernet frame.
    Erf(ErfHeader<'a>),
    Unsupported(LinkType),
}

impl Link<'_> {
    /// Do the frame's bytes start with an Ethernet header (Ethernet, or an ERF Ethernet
    /// record)?
    pub fn is_ethernet(&self) -> bool {
        match self {
            Link::Ethernet => true,
            Link::Erf(h) => h.record_type == rocescope_parsers::erf::TYPE_ETHERNET,
            Link::Sll(_) | Link::RawIp | Link::Infiniband | Link::Unsupported(_) => false,
        }
    }
}

/// Where a packet comes from or goes to: an IP address (a GID is one, in IPv6 form), or an
/// InfiniBand LID when a native packet has no GRH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    Ip(IpAddr),
    Lid(u16),
}

impl Endpoint {
    /// The IP address, for an endpoint that has one.
    pub fn ip(self) -> Option<IpAddr> {
        match self {
            Endpoint::Ip(ip) => Some(ip),
            Endpoint::Lid(_) => None,
        }
    }
}

impl From<IpAddr> for Endpoint {
    fn from(ip: IpAddr) -> Self {
        Endpoint::Ip(ip)
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Ip(ip) => ip.fmt(f),
            Endpoint::Lid(lid) => write!(f, "LID {lid}"),
        }
    }
}

impl serde::Serialize for Endpoint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Read back from its text: an IP address, or `LID n`.
impl<'de> serde::Deserialize<'de> for Endpoint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let parsed = match text.strip_prefix("LID ") {
            Some(lid) => lid.parse().ok().map(Endpoint::Lid),
            None => text.parse().ok().map(Endpoint::Ip),
        };
        parsed.ok_or_else(|| serde::de::Error::custom(format!("not an endpoint: {text}")))
    }
}

/// The network header of the innermost packet.
#[derive(Debug, Clone, Copy)]
pub enum Network<'a> {
    Ipv4(Ipv4Header<'a>),
    Ipv6(Ipv6Header<'a>),
    /// The Global Route Header of RoCEv1 or of a native InfiniBand packet.
    Grh(GrhHeader<'a>),
    /// The LRH of a native InfiniBand packet without a GRH: its LIDs are the addresses.
    Lrh(LrhHeader<'a>),
}

impl Network<'_> {
    pub fn source(&self) -> Endpoint {
        match self {
            Network::Ipv4(h) => IpAddr::from(h.source()).into(),
            Network::Ipv6(h) => IpAddr::from(h.source()).into(),
            Network::Grh(h) => IpAddr::from(h.fields().source()).into(),
            Network::Lrh(h) => Endpoint::Lid(h.slid()),
        }
    }

    pub fn destination(&self) -> Endpoint {
        match self {
            Network::Ipv4(h) => IpAddr::from(h.destination()).into(),
            Network::Ipv6(h) => IpAddr::from(h.destination()).into(),
            Network::Grh(h) => IpAddr::from(h.fields().destination()).into(),
            Network::Lrh(h) => Endpoint::Lid(h.dlid()),
        }
    }

    /// TTL or hop limit (none in an LRH).
    pub fn ttl(&self) -> Option<u8> {
        match self {
            Network::Ipv4(h) => Some(h.ttl()),
            Network::Ipv6(h) => Some(h.hop_limit()),
            Network::Grh(h) => Some(h.fields().hop_limit()),
            Network::Lrh(_) => None,
        }
    }

    /// DSCP, for IP (RoCEv2) only.
    pub fn dscp(&self) -> Option<u8> {
        match self {
            Network::Ipv4(h) => Some(h.dscp()),
            Network::Ipv6(h) => Some(h.dscp()),
            Network::Grh(_) | Network::Lrh(_) => None,
        }
    }

    /// ECN codepoint, for IP (RoCEv2) only.
    pub fn ecn(&self) -> Option<u8> {
        match self {
            Network::Ipv4(h) => Some(h.ecn()),
            Network::Ipv6(h) => Some(h.ecn()),
            Network::Grh(_) | Network::Lrh(_) => None,
        }
    }
}

/// ICRC verdict of one RoCE packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum IcrcStatus {
    Ok,
    Bad,
    /// The capture does not hold the whole packet (snap length, ERSPAN truncation).
    Unverifiable,
}

impl IcrcStatus {
    pub fn name(self) -> &'static str {
        match self {
            IcrcStatus::Ok => "ok",
            IcrcStatus::Bad => "bad",
            IcrcStatus::Unverifiable => "unverifiable",
        }
    }
}

/// [`Roce::version`] of a native InfiniBand packet, which no Ethernet carries.
pub const NATIVE_INFINIBAND: u8 = 0;

/// An InfiniBand transport packet, carried by RoCE or native: transport headers, ICRC verdict
/// (and VCRC for a native one), and the CM message it carries, if any.
#[derive(Debug, Clone, Copy)]
pub struct Roce<'a> {
    /// 1 (EtherType 0x8915 + GRH), 2 (UDP), or [`NATIVE_INFINIBAND`].
    pub version: u8,
    pub ib: IbPacket<'a>,
    pub icrc: IcrcStatus,
    /// The ICRC computed over the captured bytes, when they are all there.
    pub icrc_computed: Option<u32>,
    /// Set instead of the two fields above when the decoder defers the ICRC
    /// ([`super::Decoder::deferring_icrc`]); `icrc` is then only a placeholder.
    pub deferred_icrc: Option<DeferredIcrc>,
    /// The VCRC, for a native InfiniBand packet.
    pub vcrc: Option<Vcrc>,
    /// The MAD common header of a management datagram (a UD SEND to QP 0 or 1).
    pub mad: Option<MadHeader<'a>>,
    pub cm: Option<CmMad<'a>>,
}

/// A UET packet (docs/decoding.md, "Ultra Ethernet Transport"): its headers and, over native
/// IP, its entropy header.
#[derive(Debug, Clone, Copy)]
pub struct UetFrame<'a> {
    pub entropy: Option<rocescope_parsers::uet::Entropy<'a>>,
    pub packet: rocescope_parsers::uet::Uet<'a>,
    pub crc: UetCrc,
}

/// What a UET packet's CRC32C trailer says (docs/decoding.md, "UET integrity").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UetCrc {
    /// The trailer is the one a reading of the CRC expects.
    Matched(rocescope_parsers::uet::crc::Variant),
    /// The trailer is none of the readings' (bad, once the capture's reading is known).
    NoVariant { computed: u32, wire: [u8; 4] },
    /// Not checked: an encrypted packet (its tag is no CRC), one the snap length or a mirror
    /// cut, or one without an IP header to cover.
    Unchecked,
}

impl UetCrc {
    /// The frame's own verdict (`rocescope.uet.crc.status`): `ok` where the trailer matched a
    /// reading of the CRC, `bad` where it matched none of the four (so it is wrong under any
    /// reading the capture may have), `unchecked` where nothing was checked.
    pub fn name(self) -> &'static str {
        match self {
            UetCrc::Matched(_) => "ok",
            UetCrc::NoVariant { .. } => "bad",
            UetCrc::Unchecked => "unchecked",
        }
    }
}

impl<'a> UetFrame<'a> {
    /// The PDS header, unless the packet is encrypted.
    pub fn pds(&self) -> Option<rocescope_parsers::uet::Pds<'a>> {
        match self.packet {
            rocescope_parsers::uet::Uet::Clear { pds, .. } => Some(pds),
            rocescope_parsers::uet::Uet::Secured { .. } => None,
        }
    }

    pub fn ses(&self) -> Option<rocescope_parsers::uet::Ses<'a>> {
        match self.packet {
            rocescope_parsers::uet::Uet::Clear { ses, .. } => ses,
            rocescope_parsers::uet::Uet::Secured { .. } => None,
        }
    }

    /// The CRC32C trailer, or an encrypted packet's tag, when the capture holds it.
    pub fn trailer(&self) -> Option<&'a [u8]> {
        match self.packet {
            rocescope_parsers::uet::Uet::Clear { crc, .. } => crc.map(|c| &c[..]),
            rocescope_parsers::uet::Uet::Secured { tag, .. } => tag,
        }
    }

    pub fn tss(&self) -> Option<rocescope_parsers::uet::Tss<'a>> {
        match self.packet {
            rocescope_parsers::uet::Uet::Secured { tss, .. } => Some(tss),
            rocescope_parsers::uet::Uet::Clear { .. } => None,
        }
    }
}

/// A native InfiniBand packet's variant CRC (IBA §7.8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vcrc {
    pub status: IcrcStatus,
    /// Computed over the LRH through the ICRC, when the capture holds them.
    pub computed: Option<u16>,
    /// The 2 bytes after the ICRC, when captured.
    pub wire: Option<[u8; 2]>,
}

impl Roce<'_> {
    pub fn is_native(&self) -> bool {
        self.version == NATIVE_INFINIBAND
    }
}

/// Which ICRC rule a deferred computation follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum IcrcFamily {
    Ipv4,
    Ipv6,
    Rocev1,
}

/// An ICRC left to compute later from the frame's bytes: where the network header, the UDP
/// header and the covered transport bytes lie in the frame (the ICRC on the wire follows the
/// covered bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeferredIcrc {
    pub family: IcrcFamily,
    pub network_at: u32,
    pub network_len: u32,
    pub udp_at: u32,
    pub covered_at: u32,
    pub covered_len: u32,
}

impl DeferredIcrc {
    /// Computes the ICRC from `frame`, the bytes the packet was decoded from: its status and
    /// value.
    pub fn compute(&self, frame: &[u8]) -> Option<(IcrcStatus, u32)> {
        let range = |at: u32, len: u32| frame.get(at as usize..at as usize + len as usize);
        let network = range(self.network_at, self.network_len)?;
        let covered = range(self.covered_at, self.covered_len)?;
        let wire: [u8; 4] = range(self.covered_at + self.covered_len, 4)?.try_into().ok()?;
        let computed = match self.family {
            IcrcFamily::Ipv4 => {
                let udp: &[u8; 8] = range(self.udp_at, 8)?.try_into().ok()?;
                rocescope_parsers::icrc::rocev2_ipv4(network, udp, covered)
            }
            IcrcFamily::Ipv6 => {
                let udp: &[u8; 8] = range(self.udp_at, 8)?.try_into().ok()?;
                rocescope_parsers::icrc::rocev2_ipv6(network.try_into().ok()?, udp, covered)
            }
            IcrcFamily::Rocev1 => rocescope_parsers::icrc::rocev1(network.try_into().ok()?, covered),
        };
        let status = if rocescope_parsers::icrc::to_wire(computed) == wire { IcrcStatus::Ok } else { IcrcStatus::Bad };
        Some((status, computed))
    }
}

/// A frame that needed RoCE/IP decoding and could not get it.
#[derive(Debug, Clone, Copy)]
pub struct Malformed<'a> {
    pub error: Error,
    /// The BTH, when it was read before the failure (a reserved opcode, bad lengths).
    pub bth: Option<Bth<'a>>,
}

/// Non-RoCE traffic, named for the packet list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Other {
    Arp,
    Lldp,
    EtherType(u16),
    IpFragment,
    Tcp {
        sport: u16,
        dport: u16,
    },
    Udp {
        sport: u16,
        dport: u16,
    },
    Icmp,
    Icmpv6,
    IpProtocol(u8),
    Gre {
        protocol: u16,
    },
    /// An MPLS label stack followed by neither IP nor a recognisable Ethernet frame.
    MplsPayload,
    MacControl {
        opcode: u16,
    },
    /// An InfiniBand packet whose LNH says raw (0) or IPv6 (1): no IBA transport.
    InfinibandNonIba {
        lnh: u8,
    },
    /// An InfiniBand link packet (flow control), by its operand.
    InfinibandLink {
        operand: u8,
    },
    /// An ERF record of a type rocescope does not decode.
    ErfType(u8),
    UnsupportedLink(u32),
}

/// What the frame carries after its headers.
// The RoCE variant is the large one and the common one; boxing it would allocate per packet.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    Roce(Roce<'a>),
    /// An Ultra Ethernet Transport packet.
    Uet(UetFrame<'a>),
    /// PFC or PAUSE.
    MacControl(MacControl),
    Other(Other),
    Malformed(Malformed<'a>),
}

/// The kind of a frame, as counted in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    Roce,
    Uet,
    Pfc,
    Pause,
    Other,
    Malformed,
}

impl FrameKind {
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Roce => "roce",
            FrameKind::Uet => "uet",
            FrameKind::Pfc => "pfc",
            FrameKind::Pause => "pause",
            FrameKind::Other => "other",
            FrameKind::Malformed => "malformed",
        }
    }
}

/// One decoded frame.
#[derive(Debug, Clone, Copy)]
pub struct DecodedFrame<'a> {
    /// The captured bytes.
    pub data: &'a [u8],
    pub orig_len: u32,
    pub ts_ns: i64,
    pub link: Link<'a>,
    /// Encapsulations removed to reach the inner frame, outermost first.
    pub encaps: EncapStack<'a>,
    /// The innermost Ethernet header (the one of the RoCE packet itself).
    pub eth: Option<EthernetFrame<'a>>,
    /// The LRH of a native InfiniBand packet.
    pub lrh: Option<LrhHeader<'a>>,
    /// An Arista timestamp header after an Ethernet header's source MAC.
    pub arista: Option<AristaHeader<'a>>,
    /// A port-extender tag (VN-Tag, E-tag) after an Ethernet header's source MAC.
    pub port_tag: Option<PortTag<'a>>,
    /// An MPLS label stack, after an Ethernet header or inside GRE.
    pub mpls: Option<MplsStack<'a>>,
    pub net: Option<Network<'a>>,
    pub udp: Option<UdpHeader<'a>>,
    pub body: Body<'a>,
    /// Bytes after the innermost IP datagram or GRH packet (Ethernet padding, FCS, trailers),
    /// with the frame bytes before them, for FCS detection.
    pub trailer: Trailer<'a>,
    /// A Metamako timestamping trailer at the end of those bytes.
    pub metamako: Option<MetamakoTrailer<'a>>,
}

/// What follows the innermost packet in its Ethernet frame.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trailer<'a> {
    /// The Ethernet frame from its destination MAC to the end of the packet.
    pub frame: &'a [u8],
    pub bytes: &'a [u8],
}

impl Trailer<'_> {
    /// Is the trailer a valid 4-byte Ethernet FCS?
    pub fn is_fcs(&self) -> bool {
        rocescope_parsers::icrc::is_ethernet_fcs(self.frame, self.bytes)
    }
}

impl<'a> DecodedFrame<'a> {
    /// The record before any layer is decoded: its bytes, lengths and time, a body that says
    /// the link layer is not one rocescope decodes.
    pub fn undecoded(record: &Record<'a>) -> Self {
        DecodedFrame {
            data: record.data,
            orig_len: record.orig_len,
            ts_ns: record.ts_ns,
            link: Link::Ethernet,
            encaps: EncapStack::default(),
            eth: None,
            lrh: None,
            arista: None,
            port_tag: None,
            mpls: None,
            net: None,
            udp: None,
            body: Body::Other(Other::UnsupportedLink(record.link_type.0)),
            trailer: Trailer::default(),
            metamako: None,
        }
    }

    /// A frame to decode into ([`super::Decoder::decode_into`]) before any is read.
    pub fn scratch() -> DecodedFrame<'static> {
        let nothing = Record { ts_ns: 0, orig_len: 0, data: &[], link_type: LinkType::ETHERNET, offset: 0 };
        DecodedFrame::undecoded(&nothing)
    }

    pub fn kind(&self) -> FrameKind {
        match &self.body {
            Body::Roce(_) => FrameKind::Roce,
            Body::Uet(_) => FrameKind::Uet,
            Body::MacControl(MacControl::Pfc(_)) => FrameKind::Pfc,
            Body::MacControl(MacControl::Pause { .. }) => FrameKind::Pause,
            Body::MacControl(MacControl::Other { .. }) | Body::Other(_) => FrameKind::Other,
            Body::Malformed(_) => FrameKind::Malformed,
        }
    }

    pub fn uet(&self) -> Option<&UetFrame<'a>> {
        match &self.body {
            Body::Uet(u) => Some(u),
            _ => None,
        }
    }

    pub fn roce(&self) -> Option<&Roce<'a>> {
        match &self.body {
            Body::Roce(r) => Some(r),
            _ => None,
        }
    }

    /// The BTH, for RoCE packets and for malformed ones whose BTH was read.
    pub fn bth(&self) -> Option<Bth<'a>> {
        match &self.body {
            Body::Roce(r) => Some(r.ib.bth),
            Body::Malformed(m) => m.bth,
            _ => None,
        }
    }

    pub fn src_mac(&self) -> Option<MacAddr> {
        self.eth.map(|e| e.header.source())
    }

    pub fn dst_mac(&self) -> Option<MacAddr> {
        self.eth.map(|e| e.header.destination())
    }

    pub fn src_ip(&self) -> Option<IpAddr> {
        self.source().and_then(Endpoint::ip)
    }

    pub fn dst_ip(&self) -> Option<IpAddr> {
        self.destination().and_then(Endpoint::ip)
    }

    /// The innermost packet's source: IP address, GID or LID.
    pub fn source(&self) -> Option<Endpoint> {
        self.net.map(|n| n.source())
    }

    pub fn destination(&self) -> Option<Endpoint> {
        self.net.map(|n| n.destination())
    }

    /// The names of the frame's encapsulations, as reports list them: each tunnel's,
    /// outermost first (`erspan2`, `vxlan`, `mpls_pw`, …), a `vlan` for each VLAN tag of the
    /// packet's own Ethernet header, then its [`Marks`].
    pub fn encapsulation_names(&self, sink: &mut dyn FnMut(&'static str)) {
        self.encaps.iter().for_each(|e| sink(e.kind.name()));
        self.eth.iter().flat_map(|e| e.vlans.iter()).for_each(|_| sink("vlan"));
        Marks::of(self).names().for_each(sink);
    }

    /// The time a device on the way stamped the frame with, in nanoseconds since the epoch
    /// (UTC): Arista's timestamp header, else an ERSPAN type III header's IEEE 1588 time, else
    /// a Metamako trailer's. The first is the nearest the frame's own wire. TAI times (Arista's
    /// TAI formats, IEEE 1588) are made UTC; 48-bit Arista times keep only 16 bits of seconds,
    /// and the rest are the capture time's.
    pub fn hardware_time_ns(&self, capture_ts_ns: i64) -> Option<i64> {
        let erspan = || self.encaps.iter().find_map(|e| e.kind.erspan()?.time_ns()).map(|t| t - TAI_MINUS_UTC_NS);
        self.arista
            .map(|a| arista_time_ns(&a, capture_ts_ns))
            .or_else(erspan)
            .or_else(|| self.metamako.map(|m| m.time_ns()))
    }
}

/// TAI − UTC: 37 seconds since 2017-01-01 (no leap second since; IERS Bulletin C).
pub const TAI_MINUS_UTC_NS: i64 = 37_000_000_000;

/// The UTC time of an Arista timestamp header; a 48-bit one's 16 bits of seconds are put in
/// the 65,536-second period nearest the capture time.
fn arista_time_ns(a: &AristaHeader<'_>, capture_ts_ns: i64) -> i64 {
    use rocescope_parsers::arista::{VERSION_48_TAI, VERSION_64_TAI};
    let tai = matches!(a.version(), VERSION_64_TAI | VERSION_48_TAI);
    let offset = if tai { TAI_MINUS_UTC_NS } else { 0 };
    let seconds = if a.is_64_bit() {
        i64::from(a.seconds())
    } else {
        // a capture time near the ends of i64 (a damaged file's) saturates, as times do
        let near = capture_ts_ns.saturating_add(offset).div_euclid(1_000_000_000);
        let candidate = near - near.rem_euclid(0x1_0000) + i64::from(a.seconds());
        // of the candidates one period apart, the nearest
        [candidate - 0x1_0000, candidate, candidate + 0x1_0000]
            .into_iter()
            .min_by_key(|c| (c - near).abs())
            .unwrap_or(candidate)
    };
    seconds.saturating_mul(1_000_000_000).saturating_add(i64::from(a.nanoseconds()) - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Arista timestamp header of `version` with `seconds` and 5 ns, before IPv4.
    fn header(version: u16, seconds: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0, 1];
        bytes.extend_from_slice(&version.to_be_bytes());
        bytes.extend_from_slice(seconds);
        bytes.extend_from_slice(&[0, 0, 0, 5, 0x08, 0x00]);
        bytes
    }

    #[test]
    fn arista_times_are_utc_and_48_bit_seconds_take_the_nearest_period() {
        use rocescope_parsers::arista::AristaHeader;
        let at = |version: u16, seconds: &[u8], capture_ts_ns: i64| {
            let bytes = header(version, seconds);
            arista_time_ns(&AristaHeader::parse(&bytes).expect("a header").0, capture_ts_ns)
        };
        // 64-bit TAI: 37 s ahead of UTC
        assert_eq!(at(0x0010, &1_700_000_037u32.to_be_bytes(), 0), 1_700_000_000_000_000_005);
        // 48-bit UTC, low seconds 0xFFFF, captured a second into the next period: the period before
        let period = 1_700_000_000 - 1_700_000_000 % 0x1_0000 + 0x1_0000;
        assert_eq!(at(0x0120, &[0xFF, 0xFF], period * 1_000_000_000), (period - 1) * 1_000_000_000 + 5);
        // capture times at the ends of i64 (a damaged file's) give a time, not an overflow
        assert!(at(0x0020, &[0xFF, 0xFF], i64::MAX) > 9_223_300_000_000_000_000);
        assert!(at(0x0020, &[0xFF, 0xFF], i64::MAX - 1_000_000_000) > 0);
        assert!(at(0x0120, &[0, 0], i64::MIN) < 0);
    }
}
