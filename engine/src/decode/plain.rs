//! The fast path for the frame that makes up nearly every capture: a RoCEv2 packet in a plain
//! Ethernet frame (VLAN tags allowed), IPv4 or IPv6 without fragments or IPv6 extension
//! headers, UDP to a RoCE port, captured whole and ending where its IP datagram ends. Such a
//! frame is read at its headers' offsets into what its summary needs ([`PlainRoce`]) instead
//! of into the whole [`DecodedFrame`](super::DecodedFrame); every other frame returns `None`
//! and takes [`Decoder::decode`].
//!
//! The fast path reads the Ethernet, VLAN, IP and UDP headers at their offsets (RFC 791,
//! RFC 8200, RFC 768, IEEE 802.1Q), takes the transport headers from the same parser as the
//! general decoder (`IbPacket`) and checks the ICRC with the same functions; it leaves to the
//! general decoder everything else (mirror encapsulations, tags besides VLAN, IPv4 options
//! past what the ICRC reads, trailers, CM datagrams). What it gives is a cache of the general
//! decoder's result: `tests/it/plain_path.rs` compares the two on every frame of every sample,
//! reference and generated capture, and the `plain_path` fuzz target on random frames.

use std::net::IpAddr;

use rocescope_parsers::cm::GSI_QP;
use rocescope_parsers::ethernet::{self as eth, MacAddr};
use rocescope_parsers::ib::IbPacket;
use rocescope_parsers::icrc;
use rocescope_parsers::ipv4;

use super::{Decoder, IcrcStatus, UD_SEND_ONLY};
use crate::capture::{LinkType, Record};

/// A frame's Ethernet header, VLAN tags and IPv4 or IPv6 header, read at their offsets.
#[derive(Debug, Clone, Copy)]
struct PlainIp<'a> {
    data: &'a [u8],
    vlan_tags: usize,
    /// The IP header: from `ip_at` to `upper_at`.
    ip_at: usize,
    upper_at: usize,
    ipv6: bool,
    /// The IPv4 protocol or the IPv6 next header.
    protocol: u8,
    /// An IPv4 fragment (More Fragments set, or an offset).
    fragment: bool,
    /// Where the datagram ends by its length field (past the bytes captured, maybe).
    datagram_end: usize,
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]))
}

impl<'a> PlainIp<'a> {
    /// Reads `data` as Ethernet, its VLAN tags and an IP header whose fixed part is there and
    /// well formed (the version its EtherType says; an IPv4 header length of at least 20 bytes,
    /// all captured, and no more than the total length).
    fn read(data: &'a [u8]) -> Option<Self> {
        let mut ethertype = be16(data, 12)?;
        let mut vlan_tags = 0;
        // each tag: its TCI, then the EtherType after it
        while eth::is_vlan_tpid(ethertype) {
            ethertype = be16(data, 14 + 4 * vlan_tags + 2)?;
            vlan_tags += 1;
        }
        let ip_at = 14 + 4 * vlan_tags;
        let first = *data.get(ip_at)?;
        let (upper_at, ipv6, protocol, fragment, datagram_end) = match ethertype {
            eth::ETHERTYPE_IPV4 if first >> 4 == 4 => {
                let header_len = usize::from(first & 0x0F) * 4;
                let total = usize::from(be16(data, ip_at + 2)?);
                let flags_offset = be16(data, ip_at + 6)?;
                let protocol = *data.get(ip_at + 9)?;
                if header_len < 20 || total < header_len || data.len() < ip_at + header_len.max(20) {
                    return None;
                }
                (ip_at + header_len, false, protocol, flags_offset & 0x3FFF != 0, ip_at + total)
            }
            eth::ETHERTYPE_IPV6 if first >> 4 == 6 && data.len() >= ip_at + 40 => {
                let payload = usize::from(be16(data, ip_at + 4)?);
                (ip_at + 40, true, *data.get(ip_at + 6)?, false, ip_at + 40 + payload)
            }
            _ => return None,
        };
        Some(PlainIp { data, vlan_tags, ip_at, upper_at, ipv6, protocol, fragment, datagram_end })
    }

    /// The source and destination addresses.
    fn hosts(&self) -> Option<(IpAddr, IpAddr)> {
        let header = self.header();
        if self.ipv6 {
            let v6 = |at: usize| header.get(at..at + 16)?.first_chunk::<16>().map(|a| IpAddr::from(*a));
            Some((v6(8)?, v6(24)?))
        } else {
            let v4 = |at: usize| header.get(at..at + 4)?.first_chunk::<4>().map(|a| IpAddr::from(*a));
            Some((v4(12)?, v4(16)?))
        }
    }

    /// The IP header's bytes.
    fn header(&self) -> &'a [u8] {
        self.data.get(self.ip_at..self.upper_at).unwrap_or_default()
    }

    /// An unfragmented UDP datagram's destination port.
    fn udp_destination(&self) -> Option<u16> {
        (self.protocol == ipv4::PROTO_UDP && !self.fragment).then(|| be16(self.data, self.upper_at + 2)).flatten()
    }
}

/// A plain RoCEv2 frame's headers, and its ICRC checked.
#[derive(Debug, Clone, Copy)]
pub struct PlainRoce<'a> {
    ip: PlainIp<'a>,
    pub source: IpAddr,
    pub destination: IpAddr,
    pub udp_source_port: u16,
    pub ib: IbPacket<'a>,
    pub icrc: IcrcStatus,
    /// The ICRC computed over the packet.
    pub icrc_computed: u32,
}

impl PlainRoce<'_> {
    pub fn dst_mac(&self) -> MacAddr {
        let mac = self.ip.data.first_chunk::<6>().copied();
        MacAddr(mac.unwrap_or_default())
    }

    pub fn src_mac(&self) -> MacAddr {
        let mac = self.ip.data.get(6..12).and_then(|b| <[u8; 6]>::try_from(b).ok());
        MacAddr(mac.unwrap_or_default())
    }

    pub fn vlan_tags(&self) -> usize {
        self.ip.vlan_tags
    }

    /// The outer VLAN tag's priority.
    pub fn pcp(&self) -> Option<u8> {
        (self.ip.vlan_tags > 0).then(|| self.ip.data.get(14).map(|tci| tci >> 5)).flatten()
    }

    /// The IPv4 TTL or the IPv6 hop limit.
    pub fn ttl(&self) -> u8 {
        let at = if self.ip.ipv6 { 7 } else { 8 };
        self.ip.data.get(self.ip.ip_at + at).copied().unwrap_or(0)
    }

    /// The IPv4 type of service or the IPv6 traffic class: DSCP and ECN.
    pub fn traffic_class(&self) -> u8 {
        let header = self.ip.header();
        match (self.ip.ipv6, header) {
            (true, [a, b, ..]) => (a << 4) | (b >> 4),
            (false, [_, tos, ..]) => *tos,
            _ => 0,
        }
    }
}

impl Decoder {
    /// `record` read by the fast path, when it is a plain RoCEv2 frame (see the module's
    /// description); `None` sends it to [`Decoder::decode`]. A decoder that defers ICRCs
    /// ([`Decoder::deferring_icrc`]) takes no fast path.
    pub fn plain_roce<'a>(&self, record: &Record<'a>) -> Option<PlainRoce<'a>> {
        let data = record.data;
        if record.link_type != LinkType::ETHERNET || self.defer_icrc || data.len() as u64 != u64::from(record.orig_len)
        {
            return None;
        }
        let ip = PlainIp::read(data)?;
        // the frame ends where the datagram does: no padding, FCS or trailer to look into
        if ip.datagram_end != data.len() || !self.roce_ports.contains(&ip.udp_destination()?) {
            return None;
        }
        let udp: &[u8; 8] = data.get(ip.upper_at..)?.first_chunk()?;
        let udp_length = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
        if udp_length != data.len() - ip.upper_at {
            return None;
        }
        let ib = IbPacket::parse(data.get(ip.upper_at + 8..)?, udp_length.saturating_sub(8)).ok()?;
        let covered = ib.icrc_covered?;
        // management datagrams are decoded by the general path (their MAD and CM headers)
        if ib.bth.opcode() == UD_SEND_ONLY && ib.bth.dest_qp() <= GSI_QP {
            return None;
        }
        let icrc_computed = if ip.ipv6 {
            icrc::rocev2_ipv6(ip.header().first_chunk()?, udp, covered)
        } else {
            icrc::rocev2_ipv4(ip.header(), udp, covered)
        };
        let icrc = if ib.icrc() == Some(icrc::to_wire(icrc_computed)) { IcrcStatus::Ok } else { IcrcStatus::Bad };
        let (source, destination) = ip.hosts()?;
        let udp_source_port = u16::from_be_bytes([udp[0], udp[1]]);
        Some(PlainRoce { ip, source, destination, udp_source_port, ib, icrc, icrc_computed })
    }

    /// The source and destination hosts of a plain RoCEv2 frame (Ethernet, VLAN tags, IPv4 or
    /// IPv6 without extension headers, not a fragment, UDP to a RoCE port), read at their
    /// offsets without decoding further: the addresses [`Decoder::decode`] gives the frame.
    /// `None` for any other frame, which only a full decoding can place.
    pub fn plain_hosts(&self, record: &Record<'_>) -> Option<(IpAddr, IpAddr)> {
        if record.link_type != LinkType::ETHERNET {
            return None;
        }
        let ip = PlainIp::read(record.data)?;
        if !self.roce_ports.contains(&ip.udp_destination()?) {
            return None;
        }
        ip.hosts()
    }
}
