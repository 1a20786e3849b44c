//! Frame decoding: from a captured record to one [`DecodedFrame`] view, following the link type,
//! VLAN tags, IP, UDP and mirror encapsulations down to the RoCE transport headers, and
//! verifying the ICRC. Nothing here allocates.

mod packet;
mod plain;

pub use packet::*;
pub use plain::PlainRoce;

use rocescope_parsers::arista::{AristaHeader, ETHERTYPE_ARISTA};
use rocescope_parsers::bth::Bth;
use rocescope_parsers::cm::{CmMad, GSI_QP, MGMT_CLASS_CM, MadHeader};
use rocescope_parsers::erf::{self, ErfHeader};
use rocescope_parsers::erspan::ErspanHeader;
use rocescope_parsers::ethernet::{self as eth, EthernetFrame};
use rocescope_parsers::gre::{self, GreHeader};
use rocescope_parsers::grh::{GRH_LEN, GrhHeader};
use rocescope_parsers::ib::IbPacket;
use rocescope_parsers::ipv4::{self, Ipv4Header};
use rocescope_parsers::ipv6::Ipv6Header;
use rocescope_parsers::lrh::{LRH_LEN, LrhHeader, NextHeader};
use rocescope_parsers::mac_control::MacControl;
use rocescope_parsers::metamako::MetamakoTrailer;
use rocescope_parsers::mpls::{self, MplsPayload, MplsStack};
use rocescope_parsers::port_tag::{ETHERTYPE_ETAG, ETHERTYPE_VNTAG, PortTag, PortTagKind};
use rocescope_parsers::sll::{SllHeader, SllVersion};
use rocescope_parsers::spectrum::{GRE_PROTO_SPECTRUM, SpectrumHeader};
use rocescope_parsers::udp::{self, UdpHeader};
use rocescope_parsers::uet::{self, Entropy, Uet};
use rocescope_parsers::vxlan::VxlanHeader;
use rocescope_parsers::{Error, ErrorKind, Layer, icrc, vcrc};

use crate::capture::{LinkType, Record};

const IPPROTO_ICMPV6: u8 = 58;
/// The opcode of a UD SEND ONLY, which carries CM MADs to QP1.
const UD_SEND_ONLY: u8 = 0x64;

/// Which time a decoded frame has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TimeSource {
    /// The capture file's timestamp (or an ERF record's).
    #[default]
    Capture,
    /// The time a device on the way stamped the frame with
    /// ([`DecodedFrame::hardware_time_ns`]), where it has one.
    Hardware,
}

impl TimeSource {
    pub const ALL: [TimeSource; 2] = [TimeSource::Capture, TimeSource::Hardware];

    pub fn name(self) -> &'static str {
        match self {
            TimeSource::Capture => "capture",
            TimeSource::Hardware => "hardware",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            TimeSource::Capture => "the capture file's timestamps",
            TimeSource::Hardware => {
                "the timestamps devices on the way put in the frames (Arista's timestamp header, ERSPAN III's \
                 IEEE 1588 time, a Metamako trailer), when every frame has one"
            }
        }
    }
}

/// The IP protocol of native UET unless told otherwise ([`Decoder::with_uet`]).
pub const UET_IP_PROTOCOL: u8 = uet::IP_PROTOCOL;

/// Decodes frames; holds the UDP ports that mean RoCEv2 and UET, and UET's IP protocol.
#[derive(Debug, Clone)]
pub struct Decoder {
    roce_ports: Vec<u16>,
    uet_ports: Vec<u16>,
    uet_ip_protocol: u8,
    /// Leave ICRCs to be computed later ([`Roce::deferred_icrc`]).
    defer_icrc: bool,
    time_source: TimeSource,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new(&[])
    }
}

fn malformed<'a>(error: Error) -> Body<'a> {
    Body::Malformed(Malformed { error, bth: None })
}

impl Decoder {
    /// A decoder for UDP destination port 4791 and the `extra_roce_ports`.
    pub fn new(extra_roce_ports: &[u16]) -> Self {
        let mut roce_ports = vec![udp::PORT_ROCEV2];
        roce_ports.extend_from_slice(extra_roce_ports);
        Decoder {
            roce_ports,
            uet_ports: vec![uet::UDP_PORT],
            uet_ip_protocol: uet::IP_PROTOCOL,
            defer_icrc: false,
            time_source: TimeSource::Capture,
        }
    }

    /// A decoder that takes UDP destination ports `extra` as UET too, besides 4793, and IP
    /// protocol `ip_protocol` (253 by default) as native UET.
    pub fn with_uet(mut self, extra: &[u16], ip_protocol: u8) -> Self {
        self.uet_ports.extend_from_slice(extra);
        self.uet_ip_protocol = ip_protocol;
        self
    }

    /// A decoder whose frames have the times of `source`.
    pub fn with_time_source(mut self, source: TimeSource) -> Self {
        self.time_source = source;
        self
    }

    /// A decoder that does not compute ICRCs but records, in [`Roce::deferred_icrc`], what a
    /// later [`DeferredIcrc::compute`] over the same frame bytes needs.
    pub fn deferring_icrc(mut self) -> Self {
        self.defer_icrc = true;
        self
    }

    pub fn decode<'a>(&self, record: &Record<'a>) -> DecodedFrame<'a> {
        let mut p = DecodedFrame::undecoded(record);
        self.fill(record, &mut p);
        p
    }

    /// [`Decoder::decode`] into `p`, whatever it held before: the hot path decodes every frame
    /// into one place instead of copying each out of the decoder (688 bytes a frame).
    pub fn decode_into<'a>(&self, record: &Record<'a>, p: &mut DecodedFrame<'a>) {
        *p = DecodedFrame::undecoded(record);
        self.fill(record, p);
    }

    /// Decodes `record` into `p`, which holds it undecoded ([`DecodedFrame::undecoded`]).
    fn fill<'a>(&self, record: &Record<'a>, p: &mut DecodedFrame<'a>) {
        let data = record.data;
        p.body = match record.link_type {
            LinkType::ETHERNET => self.ethernet(p, data),
            LinkType::LINUX_SLL | LinkType::LINUX_SLL2 => {
                let version = if record.link_type == LinkType::LINUX_SLL { SllVersion::V1 } else { SllVersion::V2 };
                match SllHeader::parse(data, version) {
                    Ok((sll, rest)) => {
                        p.link = Link::Sll(sll);
                        self.ethertype(p, sll.protocol(), rest, &[])
                    }
                    Err(e) => malformed(e),
                }
            }
            LinkType::RAW | LinkType::RAW_BSD | LinkType::RAW_OPENBSD | LinkType::IPV4 | LinkType::IPV6 => {
                p.link = Link::RawIp;
                self.raw_ip(p, data)
            }
            LinkType::INFINIBAND => {
                p.link = Link::Infiniband;
                self.infiniband(p, data)
            }
            LinkType::ERF => self.erf(p, data),
            other => {
                p.link = Link::Unsupported(other);
                Body::Other(Other::UnsupportedLink(other.0))
            }
        };
        p.metamako = MetamakoTrailer::find(p.trailer.bytes, record.ts_ns.div_euclid(1_000_000_000));
        if self.time_source == TimeSource::Hardware
            && let Some(ts_ns) = p.hardware_time_ns(record.ts_ns)
        {
            p.ts_ns = ts_ns;
        }
    }

    /// An ERF record: InfiniBand packets and link packets, and Ethernet frames after their
    /// padding (`../shared/protocol-facts.md` §15.1). As in Wireshark, the ERF header (and an
    /// Ethernet record's padding) is a pseudo-header: the frame's bytes and lengths start after
    /// it, and its timestamp is the frame's.
    fn erf<'a>(&self, p: &mut DecodedFrame<'a>, data: &'a [u8]) -> Body<'a> {
        let (header, payload) = match ErfHeader::parse(data) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        p.link = Link::Erf(header);
        // the card's timestamp, finer than the record's
        p.ts_ns = header.ts_ns();
        let pad = if header.record_type == erf::TYPE_ETHERNET { erf::ETHERNET_PAD } else { 0 };
        let Some(packet) = payload.get(pad..) else {
            return malformed(Error::truncated(Layer::Erf, pad, payload.len()));
        };
        p.data = packet;
        let pseudo_header = (packet.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
        p.orig_len = p.orig_len.saturating_sub(u32::try_from(pseudo_header).unwrap_or(u32::MAX));
        match header.record_type {
            erf::TYPE_INFINIBAND => self.infiniband(p, packet),
            erf::TYPE_INFINIBAND_LINK => match packet.first() {
                Some(byte) => Body::Other(Other::InfinibandLink { operand: byte >> 4 }),
                None => malformed(Error::truncated(Layer::Erf, 1, 0)),
            },
            erf::TYPE_ETHERNET => self.ethernet(p, packet),
            other => Body::Other(Other::ErfType(other)),
        }
    }

    /// A native InfiniBand packet from its LRH: the GRH when the LNH says so, then the IBA
    /// transport. The LRH's PktLen, not the bytes captured, bounds the packet (an ERF record
    /// can be padded past it); the VCRC follows it.
    fn infiniband<'a>(&self, p: &mut DecodedFrame<'a>, data: &'a [u8]) -> Body<'a> {
        let (lrh, after_lrh) = match LrhHeader::parse(data) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        p.lrh = Some(lrh);
        let declared = lrh.packet_len().saturating_sub(LRH_LEN);
        let packet = after_lrh.get(..declared).unwrap_or(after_lrh);
        match lrh.next_header() {
            NextHeader::Raw | NextHeader::Ipv6 => Body::Other(Other::InfinibandNonIba { lnh: lrh.lnh() }),
            NextHeader::IbaLocal => {
                p.net = Some(Network::Lrh(lrh));
                self.transport_packet(p, NATIVE_INFINIBAND, packet, declared)
            }
            NextHeader::IbaGlobal => match GrhHeader::parse(packet) {
                Ok((grh, rest)) => {
                    p.net = Some(Network::Grh(grh));
                    let after_grh = declared.saturating_sub(GRH_LEN);
                    self.transport_packet(p, NATIVE_INFINIBAND, rest, after_grh)
                }
                Err(e) => malformed(e),
            },
        }
    }

    fn ethernet<'a>(&self, p: &mut DecodedFrame<'a>, frame: &'a [u8]) -> Body<'a> {
        match EthernetFrame::parse(frame) {
            Ok((header, payload)) => {
                p.eth = Some(header);
                self.ethertype(p, header.ethertype, payload, frame)
            }
            Err(e) => malformed(e),
        }
    }

    /// Dispatches on an EtherType. `l2_frame` is the whole Ethernet frame (empty when the link
    /// layer is not Ethernet), used to locate trailers.
    fn ethertype<'a>(
        &self,
        p: &mut DecodedFrame<'a>,
        ethertype: u16,
        payload: &'a [u8],
        l2_frame: &'a [u8],
    ) -> Body<'a> {
        match ethertype {
            eth::ETHERTYPE_IPV4 => self.ipv4(p, payload, l2_frame),
            eth::ETHERTYPE_IPV6 => self.ipv6(p, payload, l2_frame),
            eth::ETHERTYPE_ROCEV1 => self.rocev1(p, payload, l2_frame),
            eth::ETHERTYPE_MAC_CONTROL => match MacControl::parse(payload) {
                Ok(MacControl::Other { opcode }) => Body::Other(Other::MacControl { opcode }),
                Ok(mac_control) => Body::MacControl(mac_control),
                Err(e) => malformed(e),
            },
            // one timestamp header a frame (another one is not followed)
            ETHERTYPE_ARISTA if p.arista.is_none() => match AristaHeader::parse(payload) {
                Ok((header, rest)) => {
                    p.arista = Some(header);
                    self.ethertype(p, header.ethertype(), rest, l2_frame)
                }
                // a subtype or version whose length is not known: the frame is not followed
                Err(Error { kind: ErrorKind::Invalid(_), .. }) => Body::Other(Other::EtherType(ETHERTYPE_ARISTA)),
                Err(e) => malformed(e),
            },
            // one port-extender tag a frame (another one is not followed)
            ETHERTYPE_VNTAG | ETHERTYPE_ETAG if p.port_tag.is_none() => {
                let kind = if ethertype == ETHERTYPE_VNTAG { PortTagKind::VnTag } else { PortTagKind::ETag };
                match PortTag::parse(kind, payload) {
                    Ok((tag, rest)) => {
                        p.port_tag = Some(tag);
                        self.ethertype(p, tag.ethertype(), rest, l2_frame)
                    }
                    Err(e) => malformed(e),
                }
            }
            // one label stack a frame (another one is not followed)
            eth::ETHERTYPE_MPLS | eth::ETHERTYPE_MPLS_MULTICAST if p.mpls.is_none() => self.mpls(p, payload, l2_frame),
            eth::ETHERTYPE_ARP => Body::Other(Other::Arp),
            eth::ETHERTYPE_LLDP => Body::Other(Other::Lldp),
            other => Body::Other(Other::EtherType(other)),
        }
    }

    fn raw_ip<'a>(&self, p: &mut DecodedFrame<'a>, data: &'a [u8]) -> Body<'a> {
        match data.first().map(|b| b >> 4) {
            Some(4) => self.ipv4(p, data, &[]),
            Some(6) => self.ipv6(p, data, &[]),
            _ => malformed(Error::invalid(Layer::Ipv4, "raw IP frame with an IP version other than 4 or 6")),
        }
    }

    fn ipv4<'a>(&self, p: &mut DecodedFrame<'a>, data: &'a [u8], l2_frame: &'a [u8]) -> Body<'a> {
        let (ip, after_header) = match Ipv4Header::parse(data) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        p.net = Some(Network::Ipv4(ip));
        p.trailer = trailer(l2_frame, after_header, ip.payload_len());
        if ip.is_fragment() {
            return Body::Other(Other::IpFragment);
        }
        let (payload, _) = ip.payload(after_header);
        self.transport(p, ip.protocol(), payload, ip.payload_len(), ip.as_bytes())
    }

    fn ipv6<'a>(&self, p: &mut DecodedFrame<'a>, data: &'a [u8], l2_frame: &'a [u8]) -> Body<'a> {
        let (ip, after_header) = match Ipv6Header::parse(data) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        p.net = Some(Network::Ipv6(ip));
        p.trailer = trailer(l2_frame, after_header, usize::from(ip.payload_length()));
        let upper = match ip.upper_layer(after_header) {
            Ok(upper) => upper,
            Err(e) => return malformed(e),
        };
        if upper.fragment {
            return Body::Other(Other::IpFragment);
        }
        let declared = usize::from(ip.payload_length()).saturating_sub(upper.extension_len);
        self.transport(p, upper.protocol, upper.payload, declared, ip.as_bytes())
    }

    /// Dispatches on the IP protocol; `declared` is the upper-layer length per the IP header.
    fn transport<'a>(
        &self,
        p: &mut DecodedFrame<'a>,
        protocol: u8,
        payload: &'a [u8],
        declared: usize,
        outer: &'a [u8],
    ) -> Body<'a> {
        match protocol {
            ipv4::PROTO_UDP => self.udp(p, payload, declared, outer),
            // native UET: its entropy header, then the packet
            protocol if protocol == self.uet_ip_protocol => match Entropy::parse(payload) {
                Ok((entropy, rest)) => uet_body(p, Some(entropy), rest, declared.saturating_sub(4)),
                Err(e) => malformed(e),
            },
            ipv4::PROTO_GRE => self.gre(p, payload, outer),
            ipv4::PROTO_TCP => match payload {
                [s0, s1, d0, d1, ..] => Body::Other(Other::Tcp {
                    sport: u16::from_be_bytes([*s0, *s1]),
                    dport: u16::from_be_bytes([*d0, *d1]),
                }),
                _ => Body::Other(Other::IpProtocol(protocol)),
            },
            ipv4::PROTO_ICMP => Body::Other(Other::Icmp),
            IPPROTO_ICMPV6 => Body::Other(Other::Icmpv6),
            other => Body::Other(Other::IpProtocol(other)),
        }
    }

    fn udp<'a>(&self, p: &mut DecodedFrame<'a>, payload: &'a [u8], declared: usize, outer: &'a [u8]) -> Body<'a> {
        let (udp, rest) = match UdpHeader::parse(payload) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        p.udp = Some(udp);
        let dport = udp.destination_port();
        if self.roce_ports.contains(&dport) {
            if usize::from(udp.length()) > declared {
                return malformed(Error::invalid(Layer::Udp, "length larger than the IP payload"));
            }
            return self.transport_packet(p, 2, rest, udp.payload_len());
        }
        if self.uet_ports.contains(&dport) {
            if usize::from(udp.length()) > declared {
                return malformed(Error::invalid(Layer::Udp, "length larger than the IP payload"));
            }
            return uet_body(p, None, rest, udp.payload_len());
        }
        if dport == udp::PORT_VXLAN || dport == udp::PORT_VXLAN_LINUX {
            return match VxlanHeader::parse(rest) {
                Ok((vxlan, inner)) => self.unwrap_ethernet(
                    p,
                    Encap { kind: EncapKind::Vxlan { vni: vxlan.vni() }, outer, inner_at: 0 },
                    inner,
                    Layer::Vxlan,
                ),
                Err(_) => Body::Other(Other::Udp { sport: udp.source_port(), dport }),
            };
        }
        Body::Other(Other::Udp { sport: udp.source_port(), dport })
    }

    fn gre<'a>(&self, p: &mut DecodedFrame<'a>, payload: &'a [u8], outer: &'a [u8]) -> Body<'a> {
        let (header, rest) = match GreHeader::parse(payload) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        let encap = |kind| Encap { kind, outer, inner_at: 0 };
        // The ERSPAN header's bytes: from after GRE to the inner frame.
        let erspan_bytes = |inner: &'a [u8]| rest.get(..rest.len() - inner.len()).unwrap_or_default();
        match header.protocol {
            gre::PROTO_ERSPAN_II if header.sequence.is_none() && !erspan2_header_follows(rest) => {
                self.unwrap_ethernet(p, encap(EncapKind::Erspan1), rest, Layer::Gre)
            }
            gre::PROTO_ERSPAN_II => match ErspanHeader::parse_type2(rest) {
                Ok((_, inner)) => {
                    self.unwrap_ethernet(p, encap(EncapKind::Erspan2(erspan_bytes(inner))), inner, Layer::Erspan)
                }
                Err(e) => malformed(e),
            },
            gre::PROTO_ERSPAN_III => match ErspanHeader::parse_type3(rest) {
                Ok((erspan, inner)) if erspan.frame_type == Some(0) => {
                    self.unwrap_ethernet(p, encap(EncapKind::Erspan3(erspan_bytes(inner))), inner, Layer::Erspan)
                }
                Ok((_, inner)) => {
                    self.unwrap_ip(p, encap(EncapKind::Erspan3(erspan_bytes(inner))), inner, Layer::Erspan)
                }
                Err(e) => malformed(e),
            },
            gre::PROTO_TRANSPARENT_ETHERNET => self.unwrap_ethernet(
                p,
                encap(EncapKind::Gre { protocol: header.protocol, key: header.key }),
                rest,
                Layer::Gre,
            ),
            eth::ETHERTYPE_IPV4 | eth::ETHERTYPE_IPV6 => self.unwrap_ip(
                p,
                encap(EncapKind::Gre { protocol: header.protocol, key: header.key }),
                rest,
                Layer::Gre,
            ),
            protocol if mpls::is_mpls(protocol) && p.mpls.is_none() => {
                match Self::enter(p, encap(EncapKind::Gre { protocol, key: header.key }), rest, Layer::Gre) {
                    Ok(()) => self.mpls(p, rest, &[]),
                    Err(e) => malformed(e),
                }
            }
            GRE_PROTO_SPECTRUM => match SpectrumHeader::parse(rest) {
                Ok((vendor, inner)) => {
                    self.unwrap_ethernet(p, encap(EncapKind::Spectrum(vendor.as_bytes())), inner, Layer::Spectrum)
                }
                Err(e) => malformed(e),
            },
            protocol => Body::Other(Other::Gre { protocol }),
        }
    }

    /// An MPLS label stack and what its payload's first nibble says follows: IP, or an Ethernet
    /// pseudowire (an encapsulation of its own).
    fn mpls<'a>(&self, p: &mut DecodedFrame<'a>, data: &'a [u8], l2_frame: &'a [u8]) -> Body<'a> {
        let (stack, payload) = match MplsStack::parse(data) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        p.mpls = Some(stack);
        match stack.payload {
            MplsPayload::Ipv4 => self.ipv4(p, payload, l2_frame),
            MplsPayload::Ipv6 => self.ipv6(p, payload, l2_frame),
            MplsPayload::Ethernet => {
                // no outer IP header of its own: its place is the label stack's
                let outer = data.get(..0).unwrap_or_default();
                let kind = EncapKind::MplsPseudowire(stack.control_word());
                self.unwrap_ethernet(p, Encap { kind, outer, inner_at: 0 }, payload, Layer::Mpls)
            }
            MplsPayload::Unknown => Body::Other(Other::MplsPayload),
        }
    }

    /// Records an encapsulation and forgets the outer headers, so that the inner frame's own
    /// headers describe the packet.
    fn enter<'a>(p: &mut DecodedFrame<'a>, encap: Encap<'a>, inner: &'a [u8], layer: Layer) -> Result<(), Error> {
        // `inner` lies inside the frame's bytes: its distance from their start is its offset
        let inner_at = (inner.as_ptr() as usize).wrapping_sub(p.data.as_ptr() as usize);
        let encap = Encap { inner_at: u32::try_from(inner_at).unwrap_or(u32::MAX), ..encap };
        if !p.encaps.push(encap) {
            return Err(Error::invalid(layer, "encapsulations nested too deeply"));
        }
        p.eth = None;
        p.net = None;
        p.udp = None;
        p.trailer = Trailer::default();
        Ok(())
    }

    fn unwrap_ethernet<'a>(
        &self,
        p: &mut DecodedFrame<'a>,
        encap: Encap<'a>,
        inner: &'a [u8],
        layer: Layer,
    ) -> Body<'a> {
        match Self::enter(p, encap, inner, layer) {
            Ok(()) => self.ethernet(p, inner),
            Err(e) => malformed(e),
        }
    }

    fn unwrap_ip<'a>(&self, p: &mut DecodedFrame<'a>, encap: Encap<'a>, inner: &'a [u8], layer: Layer) -> Body<'a> {
        match Self::enter(p, encap, inner, layer) {
            Ok(()) => self.raw_ip(p, inner),
            Err(e) => malformed(e),
        }
    }

    fn rocev1<'a>(&self, p: &mut DecodedFrame<'a>, data: &'a [u8], l2_frame: &'a [u8]) -> Body<'a> {
        let (grh, rest) = match GrhHeader::parse(data) {
            Ok(parsed) => parsed,
            Err(e) => return malformed(e),
        };
        p.net = Some(Network::Grh(grh));
        let declared = usize::from(grh.fields().payload_length());
        p.trailer = trailer(l2_frame, rest, declared);
        let captured = rest.get(..declared).unwrap_or(rest);
        self.transport_packet(p, 1, captured, declared)
    }

    /// Decodes the InfiniBand transport packet and checks its ICRC (and a native packet's
    /// VCRC).
    fn transport_packet<'a>(&self, p: &DecodedFrame<'a>, version: u8, captured: &'a [u8], declared: usize) -> Body<'a> {
        let ib = match IbPacket::parse(captured, declared) {
            Ok(ib) => ib,
            Err(error) => {
                return Body::Malformed(Malformed { error, bth: Bth::parse(captured).ok().map(|(bth, _)| bth) });
            }
        };
        let truncated_by_mirror = p.encaps.iter().any(|e| e.kind.truncated_by_mirror());
        let covered = ib.icrc_covered.filter(|_| !truncated_by_mirror);
        let deferred_icrc =
            covered.filter(|_| self.defer_icrc && p.lrh.is_none()).and_then(|covered| deferred(p, covered));
        let icrc_computed = covered.filter(|_| deferred_icrc.is_none()).and_then(|covered| icrc_of(p, covered));
        let icrc = match (icrc_computed, icrc_computed.and_then(|_| ib.icrc()), deferred_icrc) {
            (_, _, Some(_)) => IcrcStatus::Ok, // a placeholder until the deferred ICRC is computed
            (Some(computed), Some(wire), None) if icrc::to_wire(computed) == wire => IcrcStatus::Ok,
            (Some(_), Some(_), None) => IcrcStatus::Bad,
            _ => IcrcStatus::Unverifiable,
        };
        // management datagrams go to QP 0 (subnet management) or QP 1 (the GSI, CM among them)
        let mad = (ib.bth.opcode() == UD_SEND_ONLY && ib.bth.dest_qp() <= GSI_QP)
            .then(|| MadHeader::parse(ib.payload).ok().map(|(header, _)| header))
            .flatten();
        let cm = mad
            .filter(|m| m.mgmt_class() == MGMT_CLASS_CM && ib.bth.dest_qp() == GSI_QP)
            .and_then(|_| CmMad::parse(ib.payload).ok());
        let vcrc = p.lrh.map(|lrh| native_vcrc(p.data, lrh));
        Body::Roce(Roce { version, ib, icrc, icrc_computed, deferred_icrc, vcrc, mad, cm })
    }
}

/// A UET packet of `declared` bytes whose captured bytes start `captured`: complete (its
/// trailer the last bytes) when the capture holds all of them.
// kept out of line: the RoCE path's decoding stays as compact as it was
#[cold]
#[inline(never)]
fn uet_body<'a>(p: &DecodedFrame<'a>, entropy: Option<Entropy<'a>>, captured: &'a [u8], declared: usize) -> Body<'a> {
    let packet = captured.get(..declared).unwrap_or(captured);
    let complete = packet.len() == declared && !p.encaps.iter().any(|e| e.kind.truncated_by_mirror());
    match Uet::parse(packet, complete) {
        Ok(packet) => Body::Uet(UetFrame { entropy, packet, crc: uet_crc(p, &packet) }),
        Err(e) => malformed(e),
    }
}

/// The CRC32C trailer checked against every reading: over the bytes from the IP source
/// address (IPv4 offset 12, IPv6 offset 8) to the trailer.
fn uet_crc(p: &DecodedFrame<'_>, packet: &Uet<'_>) -> UetCrc {
    let Uet::Clear { crc: Some(wire), .. } = *packet else { return UetCrc::Unchecked };
    let (network, source_at) = match p.net {
        Some(Network::Ipv4(ip)) => (ip.as_bytes(), 12),
        Some(Network::Ipv6(ip)) => (&ip.as_bytes()[..], 8),
        _ => return UetCrc::Unchecked,
    };
    let offset = |bytes: &[u8]| (bytes.as_ptr() as usize).checked_sub(p.data.as_ptr() as usize);
    let covered = offset(network).zip(offset(&wire[..])).and_then(|(ip, end)| p.data.get(ip + source_at..end));
    let Some(covered) = covered else { return UetCrc::Unchecked };
    let computed = uet::crc::crc32c(covered);
    match uet::crc::Variant::matching(computed, *wire) {
        Some(variant) => UetCrc::Matched(variant),
        None => UetCrc::NoVariant { computed, wire: *wire },
    }
}

/// Does an ERSPAN type II header follow a GRE header without the sequence bit, as some
/// switches send it (Nexus 9000, Tofino)? It does when the version nibble says 1 and an
/// Ethernet frame starts after its 8 bytes where none starts right after GRE (type I).
fn erspan2_header_follows(after_gre: &[u8]) -> bool {
    after_gre.first().is_some_and(|b| b >> 4 == 1)
        && eth::frame_starts_at(after_gre, 8)
        && !eth::frame_starts_at(after_gre, 0)
}

/// The ICRC of a packet whose covered bytes (BTH up to the ICRC) are `covered`: over the
/// IP/UDP or GRH headers for RoCE, from the LRH for a native InfiniBand packet.
fn icrc_of(p: &DecodedFrame<'_>, covered: &[u8]) -> Option<u32> {
    if let Some(lrh) = p.lrh {
        return icrc::native(span(p.data, lrh.as_bytes(), covered)?);
    }
    match (p.net, p.udp) {
        (Some(Network::Ipv4(ip)), Some(udp)) => Some(icrc::rocev2_ipv4(ip.as_bytes(), udp.as_bytes(), covered)),
        (Some(Network::Ipv6(ip)), Some(udp)) => Some(icrc::rocev2_ipv6(ip.as_bytes(), udp.as_bytes(), covered)),
        (Some(Network::Grh(grh)), _) => Some(icrc::rocev1(grh.as_bytes(), covered)),
        _ => None,
    }
}

/// The bytes of `data` from the start of `first` to the end of `last`, both parts of it.
fn span<'a>(data: &'a [u8], first: &[u8], last: &[u8]) -> Option<&'a [u8]> {
    let offset = |bytes: &[u8]| (bytes.as_ptr() as usize).checked_sub(data.as_ptr() as usize);
    data.get(offset(first)?..offset(last)? + last.len())
}

/// The VCRC of a native packet: over the LRH through the ICRC (PktLen's bytes), the 2 bytes
/// after them on the wire; unverifiable when the capture holds fewer.
fn native_vcrc(data: &[u8], lrh: LrhHeader<'_>) -> Vcrc {
    let start = (lrh.as_bytes().as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
    let end = start.saturating_add(lrh.packet_len());
    let computed = data.get(start..end).map(vcrc::vcrc);
    let wire = data.get(end..end.saturating_add(2)).and_then(|w| <[u8; 2]>::try_from(w).ok());
    let status = match (computed, wire) {
        (Some(c), Some(w)) if vcrc::to_wire(c) == w => IcrcStatus::Ok,
        (Some(_), Some(_)) => IcrcStatus::Bad,
        _ => IcrcStatus::Unverifiable,
    };
    Vcrc { status, computed, wire }
}

/// The bytes after a packet of `declared` bytes that starts at `after_header`'s header, inside
/// `l2_frame` (empty when the link layer is not Ethernet).
fn trailer<'a>(l2_frame: &'a [u8], after_header: &'a [u8], declared_after_header: usize) -> Trailer<'a> {
    let header_end = l2_frame.len().saturating_sub(after_header.len());
    if l2_frame.is_empty() || after_header.as_ptr() as usize != l2_frame.as_ptr() as usize + header_end {
        return Trailer::default();
    }
    let end = header_end + declared_after_header;
    match (l2_frame.get(..end), l2_frame.get(end..)) {
        (Some(frame), Some(bytes)) => Trailer { frame, bytes },
        _ => Trailer::default(),
    }
}

/// Where a packet's ICRC inputs lie in its frame, for computing it later.
fn deferred(p: &DecodedFrame<'_>, covered: &[u8]) -> Option<DeferredIcrc> {
    let at = |bytes: &[u8]| u32::try_from((bytes.as_ptr() as usize).checked_sub(p.data.as_ptr() as usize)?).ok();
    let (family, network, udp_at) = match (p.net?, p.udp) {
        (Network::Ipv4(ip), Some(udp)) => (IcrcFamily::Ipv4, ip.as_bytes(), at(udp.as_bytes())?),
        (Network::Ipv6(ip), Some(udp)) => (IcrcFamily::Ipv6, &ip.as_bytes()[..], at(udp.as_bytes())?),
        (Network::Grh(grh), _) => (IcrcFamily::Rocev1, &grh.as_bytes()[..], 0),
        _ => return None,
    };
    Some(DeferredIcrc {
        family,
        network_at: at(network)?,
        network_len: network.len() as u32,
        udp_at,
        covered_at: at(covered)?,
        covered_len: covered.len() as u32,
    })
}
