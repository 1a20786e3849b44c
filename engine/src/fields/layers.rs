//! A frame as the field registry reads it: the decoded packet with its headers in every
//! occurrence, outermost first (a mirror frame has the outer Ethernet, IP and UDP headers of
//! its encapsulation, then the inner ones), and the analysis's verdict for `rocescope.analysis.*`.

use rocescope_parsers::bth::Bth;
use rocescope_parsers::cm::CmMad;
use rocescope_parsers::ethernet::{EthernetFrame, VlanTag};
use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::ipv4::Ipv4Header;
use rocescope_parsers::ipv6::Ipv6Header;
use rocescope_parsers::opcode::ExtHeader;
use rocescope_parsers::udp::UdpHeader;

use crate::analyze::Verdict;
use crate::decode::{Body, DecodedFrame, EncapKind, Link, Network, Roce};

/// What the fields of one frame are read from.
pub struct Frame<'p, 'a> {
    /// The frame's number in the capture (1-based).
    pub number: u64,
    pub packet: &'p DecodedFrame<'a>,
    /// The time of the capture's first frame, for `frame.time_relative`.
    pub first_ts_ns: i64,
    /// The analysis's verdict, where one was made.
    pub verdict: Option<&'p Verdict>,
}

/// TPIDs Wireshark's `vlan` dissector takes (802.1ad S-tags are `ieee8021ad.*` there).
pub const TPID_8021Q: u16 = 0x8100;

/// One header of a frame's link-through-UDP stack ([`Frame::headers`]).
#[derive(Clone, Copy)]
pub enum Header<'h, 'a> {
    Ethernet(&'h EthernetFrame<'a>),
    Ipv4(&'h Ipv4Header<'a>),
    Ipv6(&'h Ipv6Header<'a>),
    /// RoCEv1's Global Route Header (IPv6's layout).
    Grh(&'h Ipv6Header<'a>),
    Udp(&'h UdpHeader<'a>),
    /// A mirror tunnel: GRE (with ERSPAN) or VXLAN.
    Encap(&'h EncapKind<'a>),
}

/// One layer of a frame, in wire order ([`Frame::layers`]): the decode tree shows a section
/// for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Frame,
    Sll,
    RawIp,
    UnsupportedLink,
    Ethernet,
    /// An 802.1Q tag (Wireshark's `vlan`).
    Vlan,
    /// Another VLAN tag: 802.1ad S-tag or a legacy QinQ TPID.
    OtherVlan(VlanTag),
    Ipv4,
    Ipv6,
    Udp,
    Gre,
    Erspan,
    Vxlan,
    Grh,
    Bth,
    Ext(ExtHeader),
    /// The snap length cut the extended transport headers.
    ExtCut,
    Mad,
    Cm,
    Payload,
    Icrc,
    MacControl,
    Malformed,
    /// A payload rocescope does not decode.
    Other,
    Trailer,
    Analysis,
}

/// Calls `sink` with each 802.1Q tag of `eth` and the EtherType that follows it.
fn for_each_8021q_tag(eth: &EthernetFrame<'_>, sink: &mut dyn FnMut(VlanTag, u16)) {
    let mut tags = eth.vlans.iter().peekable();
    while let Some(tag) = tags.next() {
        let next = tags.peek().map_or(eth.ethertype, |t| t.tpid);
        if tag.tpid == TPID_8021Q {
            sink(tag, next);
        }
    }
}

impl<'a> Frame<'_, 'a> {
    /// Does the encapsulation carry an Ethernet frame (not IP directly)?
    fn carries_ethernet(kind: &EncapKind<'_>) -> bool {
        match kind {
            EncapKind::Erspan1 | EncapKind::Erspan2(_) | EncapKind::Vxlan { .. } => true,
            EncapKind::Erspan3(_) => kind.erspan().is_some_and(|h| h.frame_type == Some(0)),
            EncapKind::Gre { protocol, .. } => *protocol == rocescope_parsers::gre::PROTO_TRANSPARENT_ETHERNET,
        }
    }

    /// The headers from the link layer through the innermost UDP header, in wire order: for
    /// each encapsulation its outer Ethernet (the link's, or the previous tunnel's inner
    /// frame), outer IP, VXLAN's UDP and the tunnel header; then the packet's own Ethernet,
    /// network and UDP headers. Every per-occurrence field reads its headers from here.
    pub fn headers(&self, sink: &mut dyn FnMut(Header<'_, 'a>)) {
        let p = self.packet;
        let data: &'a [u8] = p.data;
        let mut encaps = p.encaps.iter().peekable();
        if encaps.peek().is_some()
            && matches!(p.link, Link::Ethernet)
            && let Ok((outer, _)) = EthernetFrame::parse(data)
        {
            sink(Header::Ethernet(&outer));
        }
        while let Some(e) = encaps.next() {
            match e.outer.first().map(|b| b >> 4) {
                Some(4) => {
                    if let Ok((h, _)) = Ipv4Header::parse(e.outer) {
                        sink(Header::Ipv4(&h))
                    }
                }
                Some(6) => {
                    if let Ok((h, _)) = Ipv6Header::parse(e.outer) {
                        sink(Header::Ipv6(&h))
                    }
                }
                _ => {}
            }
            if matches!(e.kind, EncapKind::Vxlan { .. }) {
                let start = (e.outer.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize) + e.outer.len();
                if let Some((udp, _)) = data.get(start..).and_then(|b| UdpHeader::parse(b).ok()) {
                    sink(Header::Udp(&udp));
                }
            }
            sink(Header::Encap(&e.kind));
            // the last tunnel's inner Ethernet is the packet's own
            if encaps.peek().is_some()
                && Self::carries_ethernet(&e.kind)
                && let Some(inner) = data.get(e.inner_at as usize..)
                && let Ok((eth, _)) = EthernetFrame::parse(inner)
            {
                sink(Header::Ethernet(&eth));
            }
        }
        if let Some(eth) = &p.eth {
            sink(Header::Ethernet(eth));
        }
        match &p.net {
            Some(Network::Ipv4(h)) => sink(Header::Ipv4(h)),
            Some(Network::Ipv6(h)) => sink(Header::Ipv6(h)),
            Some(Network::Grh(g)) => sink(Header::Grh(g.fields())),
            None => {}
        }
        if let Some(udp) = &p.udp {
            sink(Header::Udp(udp));
        }
    }

    /// The frame's layers in wire order, then its analysis.
    pub fn layers(&self, sink: &mut dyn FnMut(Layer)) {
        sink(Layer::Frame);
        match self.packet.link {
            Link::Sll(_) => sink(Layer::Sll),
            Link::RawIp => sink(Layer::RawIp),
            Link::Unsupported(_) => sink(Layer::UnsupportedLink),
            Link::Ethernet => {}
        }
        self.headers(&mut |h| match h {
            Header::Ethernet(e) => {
                sink(Layer::Ethernet);
                for tag in e.vlans.iter() {
                    sink(if tag.tpid == TPID_8021Q { Layer::Vlan } else { Layer::OtherVlan(tag) });
                }
            }
            Header::Ipv4(_) => sink(Layer::Ipv4),
            Header::Ipv6(_) => sink(Layer::Ipv6),
            Header::Grh(_) => sink(Layer::Grh),
            Header::Udp(_) => sink(Layer::Udp),
            Header::Encap(EncapKind::Vxlan { .. }) => sink(Layer::Vxlan),
            Header::Encap(kind) => {
                sink(Layer::Gre);
                if kind.erspan().is_some() {
                    sink(Layer::Erspan);
                }
            }
        });
        match &self.packet.body {
            Body::Roce(roce) => Self::roce_layers(roce, sink),
            Body::MacControl(_) => sink(Layer::MacControl),
            Body::Malformed(m) => {
                if m.bth.is_some() {
                    sink(Layer::Bth);
                }
                sink(Layer::Malformed);
            }
            Body::Other(_) => sink(Layer::Other),
        }
        if !self.packet.trailer.bytes.is_empty() {
            sink(Layer::Trailer);
        }
        if self.verdict.is_some() {
            sink(Layer::Analysis);
        }
    }

    fn roce_layers(roce: &Roce<'_>, sink: &mut dyn FnMut(Layer)) {
        sink(Layer::Bth);
        match roce.ib.ext() {
            // the CNP's reserved bytes have no fields
            Some(_) => {
                roce.ib.info.ext.iter().filter(|h| *h != ExtHeader::CnpReserved).for_each(|h| sink(Layer::Ext(h)))
            }
            None => sink(Layer::ExtCut),
        }
        if roce.cm.is_some() {
            sink(Layer::Mad);
            sink(Layer::Cm);
        }
        sink(Layer::Payload);
        sink(Layer::Icrc);
    }

    /// Every Ethernet header, outermost first.
    pub fn ethernets(&self, sink: &mut dyn FnMut(&EthernetFrame<'a>)) {
        self.headers(&mut |h| {
            if let Header::Ethernet(e) = h {
                sink(e)
            }
        })
    }

    /// Every 802.1Q tag, outermost first, with the EtherType that follows it.
    pub fn vlan_tags(&self, sink: &mut dyn FnMut(VlanTag, u16)) {
        self.ethernets(&mut |eth| for_each_8021q_tag(eth, &mut *sink));
    }

    /// The version of every IP header, IPv4 and IPv6, outermost first (Wireshark's IPv6
    /// dissector adds `ip.version` too).
    pub fn ip_versions(&self, sink: &mut dyn FnMut(u8)) {
        self.headers(&mut |h| match h {
            Header::Ipv4(_) => sink(4),
            Header::Ipv6(_) => sink(6),
            _ => {}
        })
    }

    /// Every IPv4 header, outermost first.
    pub fn ipv4s(&self, sink: &mut dyn FnMut(&Ipv4Header<'a>)) {
        self.headers(&mut |h| {
            if let Header::Ipv4(h) = h {
                sink(h)
            }
        })
    }

    /// Every IPv6 header, outermost first (a RoCEv1 GRH is not one).
    pub fn ipv6s(&self, sink: &mut dyn FnMut(&Ipv6Header<'a>)) {
        self.headers(&mut |h| {
            if let Header::Ipv6(h) = h {
                sink(h)
            }
        })
    }

    /// Every UDP header, outermost first (a VXLAN encapsulation's, then the packet's own).
    pub fn udps(&self, sink: &mut dyn FnMut(&UdpHeader<'a>)) {
        self.headers(&mut |h| {
            if let Header::Udp(u) = h {
                sink(u)
            }
        })
    }

    /// The encapsulations, outermost first.
    pub fn encaps(&self, sink: &mut dyn FnMut(&EncapKind<'a>)) {
        for e in self.packet.encaps.iter() {
            sink(&e.kind);
        }
    }

    /// The RoCEv1 GRH.
    pub fn grh(&self) -> Option<&Ipv6Header<'a>> {
        match &self.packet.net {
            Some(Network::Grh(g)) => Some(g.fields()),
            _ => None,
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
}
