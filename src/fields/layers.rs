//! A frame as the field registry reads it: the decoded packet with its headers in every
//! occurrence, outermost first (a mirror frame has the outer Ethernet, IP and UDP headers of
//! its encapsulation, then the inner ones), and the analysis's verdict for `rocescope.analysis.*`.

use rocescope_parsers::bth::Bth;
use rocescope_parsers::cm::{CmMad, CmMessage};
use rocescope_parsers::ethernet::{EthernetFrame, VlanTag};
use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::ipv4::Ipv4Header;
use rocescope_parsers::ipv6::Ipv6Header;
use rocescope_parsers::opcode::ExtHeader;
use rocescope_parsers::udp::UdpHeader;

use crate::analyze::Verdict;
use crate::decode::{EncapKind, Link, Network, Packet, Roce};

/// What the fields of one frame are read from.
pub struct Frame<'p, 'a> {
    /// The frame's number in the capture (1-based).
    pub number: u64,
    pub packet: &'p Packet<'a>,
    /// The time of the capture's first frame, for `frame.time_relative`.
    pub first_ts_ns: i64,
    /// The analysis's verdict, where one was made.
    pub verdict: Option<&'p Verdict>,
}

/// TPIDs Wireshark's `vlan` dissector takes (802.1ad S-tags are `ieee8021ad.*` there).
const TPID_8021Q: u16 = 0x8100;

impl<'a> Frame<'_, 'a> {
    /// Does the encapsulation carry an Ethernet frame (not IP directly)?
    fn carries_ethernet(kind: &EncapKind<'_>) -> bool {
        match kind {
            EncapKind::Erspan1 | EncapKind::Erspan2(_) | EncapKind::Vxlan { .. } => true,
            EncapKind::Erspan3(_) => kind.erspan().is_some_and(|h| h.frame_type == Some(0)),
            EncapKind::Gre { protocol, .. } => *protocol == rocescope_parsers::gre::PROTO_TRANSPARENT_ETHERNET,
        }
    }

    /// Every Ethernet header, outermost first.
    pub fn ethernets(&self, sink: &mut dyn FnMut(&EthernetFrame<'a>)) {
        let p = self.packet;
        let data: &'a [u8] = p.data;
        let mut encaps = p.encaps.iter().peekable();
        if encaps.peek().is_some()
            && matches!(p.link, Link::Ethernet)
            && let Ok((outer, _)) = EthernetFrame::parse(data)
        {
            sink(&outer);
        }
        while let Some(e) = encaps.next() {
            if encaps.peek().is_none() {
                break;
            }
            if Self::carries_ethernet(&e.kind)
                && let Some(inner) = data.get(e.inner_at as usize..)
                && let Ok((eth, _)) = EthernetFrame::parse(inner)
            {
                sink(&eth);
            }
        }
        if let Some(eth) = &p.eth {
            sink(eth);
        }
    }

    /// Every 802.1Q tag, outermost first, with the EtherType that follows it.
    pub fn vlan_tags(&self, sink: &mut dyn FnMut(VlanTag, u16)) {
        self.ethernets(&mut |eth| {
            let mut tags = eth.vlans.iter().peekable();
            while let Some(tag) = tags.next() {
                let next = tags.peek().map_or(eth.ethertype, |t| t.tpid);
                if tag.tpid == TPID_8021Q {
                    sink(tag, next);
                }
            }
        });
    }

    /// The version of every IP header, IPv4 and IPv6, outermost first (Wireshark's IPv6
    /// dissector adds `ip.version` too).
    pub fn ip_versions(&self, sink: &mut dyn FnMut(u8)) {
        for e in self.packet.encaps.iter() {
            if let Some(v @ (4 | 6)) = e.outer.first().map(|b| b >> 4) {
                sink(v)
            }
        }
        match &self.packet.net {
            Some(Network::Ipv4(_)) => sink(4),
            Some(Network::Ipv6(_)) => sink(6),
            _ => {}
        }
    }

    /// Every IPv4 header, outermost first.
    pub fn ipv4s(&self, sink: &mut dyn FnMut(&Ipv4Header<'a>)) {
        for e in self.packet.encaps.iter() {
            if e.outer.first().is_some_and(|b| b >> 4 == 4)
                && let Ok((h, _)) = Ipv4Header::parse(e.outer)
            {
                sink(&h);
            }
        }
        if let Some(Network::Ipv4(h)) = &self.packet.net {
            sink(h);
        }
    }

    /// Every IPv6 header, outermost first (a RoCEv1 GRH is not one).
    pub fn ipv6s(&self, sink: &mut dyn FnMut(&Ipv6Header<'a>)) {
        for e in self.packet.encaps.iter() {
            if e.outer.first().is_some_and(|b| b >> 4 == 6)
                && let Ok((h, _)) = Ipv6Header::parse(e.outer)
            {
                sink(&h);
            }
        }
        if let Some(Network::Ipv6(h)) = &self.packet.net {
            sink(h);
        }
    }

    /// Every UDP header, outermost first (a VXLAN encapsulation's, then the packet's own).
    pub fn udps(&self, sink: &mut dyn FnMut(&UdpHeader<'a>)) {
        let data: &'a [u8] = self.packet.data;
        for e in self.packet.encaps.iter() {
            if matches!(e.kind, EncapKind::Vxlan { .. }) {
                let start = (e.outer.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize) + e.outer.len();
                if let Some(udp) = data.get(start..).and_then(|b| UdpHeader::parse(b).ok()) {
                    sink(&udp.0);
                }
            }
        }
        if let Some(udp) = &self.packet.udp {
            sink(udp);
        }
    }

    /// The encapsulations, outermost first.
    pub fn encaps(&self, sink: &mut dyn FnMut(&EncapKind<'a>)) {
        for e in self.packet.encaps.iter() {
            sink(&e.kind);
        }
    }

    pub fn roce(&self) -> Option<&Roce<'a>> {
        self.packet.roce()
    }

    pub fn bth(&self) -> Option<Bth<'a>> {
        self.packet.bth()
    }

    /// The extended transport headers of a RoCE packet.
    pub fn ext(&self) -> Option<ExtHeaders> {
        self.roce().and_then(|r| r.ib.ext())
    }

    /// The bytes of one extended transport header, when the packet has it whole.
    pub fn ext_bytes(&self, header: ExtHeader) -> Option<&'a [u8]> {
        let ib = &self.roce()?.ib;
        let at = ib.info.ext.offset_of(header)?;
        ib.ext_bytes.get(at..at + header.size())
    }

    /// The RDMA CM message a GSI packet carries.
    pub fn cm(&self) -> Option<&CmMad<'a>> {
        self.roce().and_then(|r| r.cm.as_ref())
    }

    /// The CM ConnectRequest's local QPN and starting PSN, or the ConnectReply's.
    pub fn cm_qpn_psn(&self, reply: bool) -> Option<(u32, u32)> {
        match (&self.cm()?.message, reply) {
            (CmMessage::Req(r), false) => Some((r.local_qpn(), r.starting_psn())),
            (CmMessage::Rep(r), true) => Some((r.local_qpn(), r.starting_psn())),
            _ => None,
        }
    }

    /// The RoCEv1 GRH.
    pub fn grh(&self) -> Option<&Ipv6Header<'a>> {
        match &self.packet.net {
            Some(Network::Grh(g)) => Some(g.fields()),
            _ => None,
        }
    }
}
