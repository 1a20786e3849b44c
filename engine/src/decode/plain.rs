//! The fast path for the frame that makes up nearly every capture: a RoCEv2 packet in a plain
//! Ethernet frame (VLAN tags allowed), IPv4 or IPv6 without fragments or IPv6 extension
//! headers, UDP to a RoCE port, captured whole and ending where its IP datagram ends. Such a
//! frame is read into the few views the analysis needs ([`PlainRoce`]) instead of the whole
//! [`DecodedFrame`]; every other frame returns `None` and takes [`Decoder::decode`].
//!
//! The fast path reads with the same parsers as the general decoder and checks the ICRC with
//! the same functions; it only skips what such a frame cannot have (mirror encapsulations,
//! tags besides VLAN, trailers, CM datagrams, a native LRH). What it gives is a cache of the
//! general decoder's result: `tests/it/plain_path.rs` compares the two on every frame of
//! every sample, reference and generated capture, and the `plain_path` fuzz target on random
//! frames.

use rocescope_parsers::cm::GSI_QP;
use rocescope_parsers::ethernet::{self as eth, EthernetFrame};
use rocescope_parsers::ib::IbPacket;
use rocescope_parsers::icrc;
use rocescope_parsers::ipv4::{self, Ipv4Header};
use rocescope_parsers::ipv6::Ipv6Header;
use rocescope_parsers::udp::UdpHeader;

use super::{Decoder, IcrcStatus, Network, UD_SEND_ONLY};
use crate::capture::{LinkType, Record};

/// A plain RoCEv2 frame's views, and its ICRC checked.
#[derive(Debug, Clone, Copy)]
pub struct PlainRoce<'a> {
    pub eth: EthernetFrame<'a>,
    /// The IPv4 or IPv6 header.
    pub net: Network<'a>,
    pub udp: UdpHeader<'a>,
    pub ib: IbPacket<'a>,
    pub icrc: IcrcStatus,
    /// The ICRC computed over the packet.
    pub icrc_computed: u32,
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
        let (eth, payload) = EthernetFrame::parse(data).ok()?;
        let (net, after_ip, datagram_payload) = match eth.ethertype {
            eth::ETHERTYPE_IPV4 => {
                let (ip, after) = Ipv4Header::parse(payload).ok()?;
                if ip.is_fragment() || ip.protocol() != ipv4::PROTO_UDP {
                    return None;
                }
                (Network::Ipv4(ip), after, ip.payload_len())
            }
            eth::ETHERTYPE_IPV6 => {
                let (ip, after) = Ipv6Header::parse(payload).ok()?;
                if ip.next_header() != ipv4::PROTO_UDP {
                    return None;
                }
                (Network::Ipv6(ip), after, usize::from(ip.payload_length()))
            }
            _ => return None,
        };
        // the frame ends where the datagram does: no padding, FCS or trailer to look into
        if after_ip.len() != datagram_payload {
            return None;
        }
        let (udp, after_udp) = UdpHeader::parse(after_ip).ok()?;
        if usize::from(udp.length()) != datagram_payload || !self.roce_ports.contains(&udp.destination_port()) {
            return None;
        }
        let ib = IbPacket::parse(after_udp, udp.payload_len()).ok()?;
        let covered = ib.icrc_covered?;
        // management datagrams are decoded by the general path (their MAD and CM headers)
        if ib.bth.opcode() == UD_SEND_ONLY && ib.bth.dest_qp() <= GSI_QP {
            return None;
        }
        let icrc_computed = match net {
            Network::Ipv4(ip) => icrc::rocev2_ipv4(ip.as_bytes(), udp.as_bytes(), covered),
            Network::Ipv6(ip) => icrc::rocev2_ipv6(ip.as_bytes(), udp.as_bytes(), covered),
            Network::Grh(_) | Network::Lrh(_) => return None,
        };
        let icrc = if ib.icrc() == Some(icrc::to_wire(icrc_computed)) { IcrcStatus::Ok } else { IcrcStatus::Bad };
        Some(PlainRoce { eth, net, udp, ib, icrc, icrc_computed })
    }
}
