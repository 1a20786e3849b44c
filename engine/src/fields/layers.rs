//! A frame as the field registry reads it: the decoded packet with its headers in every
//! occurrence, outermost first (a mirror frame has the outer Ethernet, IP and UDP headers of
//! its encapsulation, then the inner ones), and the analysis's verdict for `rocescope.analysis.*`.

use rocescope_parsers::arista::{AristaHeader, ETHERTYPE_ARISTA};
use rocescope_parsers::bth::Bth;
use rocescope_parsers::cm::CmMad;
use rocescope_parsers::ethernet::{EthernetFrame, VlanTag};
use rocescope_parsers::ext::{Aeth, Deth, ExtHeaders, Reth};
use rocescope_parsers::gre::GreHeader;
use rocescope_parsers::ib::IbPacket;
use rocescope_parsers::ipv4::Ipv4Header;
use rocescope_parsers::ipv6::Ipv6Header;
use rocescope_parsers::mpls::{self, MplsStack};
use rocescope_parsers::opcode::ExtHeader;
use rocescope_parsers::port_tag::{ETHERTYPE_ETAG, ETHERTYPE_VNTAG, PortTag, PortTagKind};
use rocescope_parsers::udp::UdpHeader;
use rocescope_parsers::uet::Uet;

use std::ops::Range;

use crate::analyze::Verdict;
use crate::decode::{Body, DecodedFrame, Encap, EncapKind, Link, Network, Roce, UetFrame};

/// What the fields of one frame are read from.
pub struct Frame<'p, 'a> {
    /// The frame's number in the capture (1-based).
    pub number: u64,
    pub packet: &'p DecodedFrame<'a>,
    /// The time of the capture's first frame, for `frame.time_relative`.
    pub first_ts_ns: i64,
    /// The time of the frame captured before this one, for `frame.time_delta` (`None` for the
    /// first frame: a delta of 0).
    pub previous_ts_ns: Option<i64>,
    /// The time of the frame displayed before this one (the last that passed the filters),
    /// for `frame.time_delta_displayed`.
    pub previous_shown_ts_ns: Option<i64>,
    /// The analysis's verdict, where one was made.
    pub verdict: Option<&'p Verdict>,
}

impl<'p, 'a> Frame<'p, 'a> {
    /// Frame `number` on its own: the capture starting at time 0, no frame before it, no
    /// verdict (a probe of its fields, a test, a fuzzed frame).
    pub fn alone(number: u64, packet: &'p DecodedFrame<'a>) -> Frame<'p, 'a> {
        Frame { number, packet, first_ts_ns: 0, previous_ts_ns: None, previous_shown_ts_ns: None, verdict: None }
    }
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
    Encap(&'h Encap<'a>),
    /// Arista's timestamp header, after the Ethernet header before it.
    Arista(&'h AristaHeader<'a>),
    /// A port-extender tag, after the Ethernet header before it.
    PortTag(&'h PortTag<'a>),
    /// An MPLS label stack, after the Ethernet header or GRE header before it.
    Mpls(&'h MplsStack<'a>),
}

/// One layer of a frame, in wire order ([`Frame::layers`]): the decode tree shows a section
/// for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Frame,
    Sll,
    RawIp,
    /// An ERF record header, extension headers included.
    Erf,
    /// An InfiniBand Local Route Header.
    Lrh,
    UnsupportedLink,
    Ethernet,
    /// An 802.1Q tag (Wireshark's `vlan`).
    Vlan,
    /// Arista's timestamp header (Wireshark's `avsp`).
    Arista,
    /// Cisco's VN-Tag.
    VnTag,
    /// An 802.1BR E-tag.
    ETag,
    /// An MPLS label stack.
    Mpls,
    /// An Ethernet pseudowire's control word (Wireshark's `pwethcw`).
    PwControlWord,
    /// Another VLAN tag: 802.1ad S-tag or a legacy QinQ TPID.
    OtherVlan(VlanTag),
    Ipv4,
    Ipv6,
    Udp,
    Gre,
    Erspan,
    /// NVIDIA Spectrum's vendor mirror header.
    Spectrum,
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
    /// A native InfiniBand packet's variant CRC.
    Vcrc,
    MacControl,
    /// UET's entropy header (native IP only).
    UetEntropy,
    /// UET's security header; the ciphertext after it is [`Layer::Payload`].
    UetTss,
    UetPds,
    UetSes,
    /// UET's CRC32C trailer, or the AES-GCM tag of an encrypted packet.
    UetTrailer,
    Malformed,
    /// A payload rocescope does not decode.
    Other,
    Trailer,
    /// A Metamako timestamping trailer, inside the trailer.
    Metamako,
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

/// Where `bytes`, a part of the frame's `data`, lie in it.
fn place(data: &[u8], bytes: &[u8]) -> Range<usize> {
    let start = (bytes.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize).min(data.len());
    start..(start + bytes.len()).min(data.len())
}

/// The layers of one header of the link-through-UDP stack, with their bytes.
fn header_layers(
    header: Header<'_, '_>,
    within: &dyn Fn(&[u8]) -> Range<usize>,
    sink: &mut dyn FnMut(Layer, Range<usize>),
) {
    match header {
        Header::Ethernet(e) => {
            let eth = within(e.header.as_bytes());
            sink(Layer::Ethernet, eth.clone());
            for (i, tag) in e.vlans.iter().enumerate() {
                let at = eth.end + 4 * i;
                sink(if tag.tpid == TPID_8021Q { Layer::Vlan } else { Layer::OtherVlan(tag) }, at..at + 4);
            }
        }
        Header::Ipv4(h) => sink(Layer::Ipv4, within(h.as_bytes())),
        Header::Ipv6(h) => sink(Layer::Ipv6, within(h.as_bytes())),
        Header::Grh(h) => sink(Layer::Grh, within(h.as_bytes())),
        Header::Udp(h) => sink(Layer::Udp, within(h.as_bytes())),
        Header::Arista(h) => sink(Layer::Arista, within(h.as_bytes())),
        // a layer for each label stack entry, as Wireshark shows them
        Header::Mpls(m) => {
            let stack = within(m.as_bytes());
            for at in stack.clone().step_by(4) {
                sink(Layer::Mpls, at..(at + 4).min(stack.end));
            }
        }
        Header::PortTag(t) => sink(
            match t.kind {
                PortTagKind::VnTag => Layer::VnTag,
                PortTagKind::ETag => Layer::ETag,
            },
            within(t.as_bytes()),
        ),
        Header::Encap(e) => {
            let (outer, inner) = (within(e.outer).end, e.inner_at as usize);
            if let EncapKind::Vxlan { .. } = e.kind {
                // after the outer UDP header
                return sink(Layer::Vxlan, (outer + 8).min(inner)..inner);
            }
            // a pseudowire has no header of its own: its label stack is a header of the frame
            if let EncapKind::MplsPseudowire(control_word) = e.kind {
                if let Some(cw) = control_word {
                    sink(Layer::PwControlWord, within(cw));
                }
                return;
            }
            let vendor = match e.kind {
                EncapKind::Erspan2(bytes) | EncapKind::Erspan3(bytes) if e.kind.erspan().is_some() => {
                    Some((Layer::Erspan, bytes))
                }
                EncapKind::Spectrum(bytes) => Some((Layer::Spectrum, bytes)),
                _ => None,
            };
            match vendor {
                Some((layer, bytes)) => {
                    let bytes = within(bytes);
                    sink(Layer::Gre, outer..bytes.start);
                    sink(layer, bytes);
                }
                None => sink(Layer::Gre, outer..inner),
            }
        }
    }
}

impl<'a> Frame<'_, 'a> {
    /// Does the encapsulation carry an Ethernet frame (not IP directly)?
    fn carries_ethernet(kind: &EncapKind<'_>) -> bool {
        match kind {
            EncapKind::Erspan1
            | EncapKind::Erspan2(_)
            | EncapKind::Vxlan { .. }
            | EncapKind::Spectrum(_)
            | EncapKind::MplsPseudowire(_) => true,
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
            && p.link.is_ethernet()
            && let Ok((outer, _)) = EthernetFrame::parse(data)
        {
            sink(Header::Ethernet(&outer));
            self.tags_after(&outer, sink);
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
                let start = place(data, e.outer).end;
                if let Some((udp, _)) = data.get(start..).and_then(|b| UdpHeader::parse(b).ok()) {
                    sink(Header::Udp(&udp));
                }
            }
            sink(Header::Encap(e));
            // MPLS inside GRE
            if let (EncapKind::Gre { protocol, .. }, Some(m)) = (e.kind, &p.mpls)
                && mpls::is_mpls(protocol)
                && place(data, m.as_bytes()).start == e.inner_at as usize
            {
                sink(Header::Mpls(m));
            }
            // the last tunnel's inner Ethernet is the packet's own
            if encaps.peek().is_some()
                && Self::carries_ethernet(&e.kind)
                && let Some(inner) = data.get(e.inner_at as usize..)
                && let Ok((eth, _)) = EthernetFrame::parse(inner)
            {
                sink(Header::Ethernet(&eth));
                self.tags_after(&eth, sink);
            }
        }
        if let Some(eth) = &p.eth {
            sink(Header::Ethernet(eth));
            self.tags_after(eth, sink);
        }
        match &p.net {
            Some(Network::Ipv4(h)) => sink(Header::Ipv4(h)),
            Some(Network::Ipv6(h)) => sink(Header::Ipv6(h)),
            Some(Network::Grh(g)) => sink(Header::Grh(g.fields())),
            Some(Network::Lrh(_)) | None => {}
        }
        if let Some(udp) = &p.udp {
            sink(Header::Udp(udp));
        }
    }

    /// The headers after `eth`'s source MAC and tags that announce another EtherType: a
    /// port-extender tag, then Arista's timestamp header, where they follow it.
    fn tags_after(&self, eth: &EthernetFrame<'a>, sink: &mut dyn FnMut(Header<'_, 'a>)) {
        let data = self.packet.data;
        let mut at = place(data, eth.header.as_bytes()).end + 4 * eth.vlans.len();
        let mut ethertype = eth.ethertype;
        let follows = |bytes: &[u8], at: usize| place(data, bytes).start == at;
        if let Some(t) = self.packet.port_tag
            && matches!(ethertype, ETHERTYPE_VNTAG | ETHERTYPE_ETAG)
            && follows(t.as_bytes(), at)
        {
            sink(Header::PortTag(&t));
            (at, ethertype) = (place(data, t.as_bytes()).end, t.ethertype());
        }
        if let Some(a) = self.packet.arista.filter(|a| ethertype == ETHERTYPE_ARISTA && follows(a.as_bytes(), at)) {
            sink(Header::Arista(&a));
            (at, ethertype) = (place(data, a.as_bytes()).end, a.ethertype());
        }
        if let Some(m) = self.packet.mpls.filter(|m| mpls::is_mpls(ethertype) && follows(m.as_bytes(), at)) {
            sink(Header::Mpls(&m));
        }
    }

    /// The frame's port-extender tag of `kind`.
    pub fn port_tag(&self, kind: PortTagKind) -> Option<PortTag<'a>> {
        self.packet.port_tag.filter(|t| t.kind == kind)
    }

    /// Arista's timestamp header of the frame.
    pub fn arista(&self) -> Option<AristaHeader<'a>> {
        self.packet.arista
    }

    /// The frame's MPLS label stack.
    pub fn mpls(&self) -> Option<MplsStack<'a>> {
        self.packet.mpls
    }

    /// The vendor header of a Spectrum mirror copy.
    pub fn spectrum_header(&self) -> Option<&'a [u8]> {
        self.packet.encaps.iter().find_map(|e| match e.kind {
            EncapKind::Spectrum(bytes) => Some(bytes),
            _ => None,
        })
    }

    /// The frame's Metamako trailer.
    pub fn metamako(&self) -> Option<rocescope_parsers::metamako::MetamakoTrailer<'a>> {
        self.packet.metamako
    }

    /// The frame's layers in wire order, then its analysis, each with the bytes of the frame
    /// it takes (what a packet-bytes pane highlights): the frame all of them, a header its
    /// own; the analysis none. An 802.1Q tag's layer is its TCI and the EtherType after it,
    /// as in Wireshark.
    pub fn layers(&self, sink: &mut dyn FnMut(Layer, Range<usize>)) {
        let data = self.packet.data;
        let within = |bytes: &[u8]| place(data, bytes);
        // where the innermost packet's bytes end: before the trailer
        let end = data.len() - self.packet.trailer.bytes.len().min(data.len());
        sink(Layer::Frame, 0..data.len());
        // where the last header so far ends: the body starts there
        let last_end = std::cell::Cell::new(0);
        let mut emit = |layer: Layer, span: Range<usize>| {
            last_end.set(span.end);
            sink(layer, span)
        };
        match self.packet.link {
            Link::Sll(h) => emit(Layer::Sll, within(h.as_bytes())),
            Link::RawIp => emit(Layer::RawIp, 0..0),
            Link::Unsupported(_) => emit(Layer::UnsupportedLink, 0..data.len()),
            // a pseudo-header, outside the frame's bytes
            Link::Erf(_) => emit(Layer::Erf, 0..0),
            Link::Ethernet | Link::Infiniband => {}
        }
        if let Some(lrh) = &self.packet.lrh {
            emit(Layer::Lrh, within(lrh.as_bytes()));
        }
        self.headers(&mut |h| header_layers(h, &within, &mut emit));
        let rest = last_end.get().min(end)..end;
        match &self.packet.body {
            Body::Roce(roce) => Self::roce_layers(roce, &within, &mut emit),
            Body::Uet(uet) => Self::uet_layers(uet, &within, &mut emit),
            Body::Other(_) if self.packet.lrh.is_some() => emit(Layer::Other, rest.start..data.len()),
            Body::MacControl(_) => emit(Layer::MacControl, rest),
            Body::Malformed(m) => {
                let mut rest = rest;
                if let Some(bth) = &m.bth {
                    let bth = within(bth.as_bytes());
                    rest = bth.end..end.max(bth.end);
                    emit(Layer::Bth, bth);
                }
                emit(Layer::Malformed, rest);
            }
            Body::Other(_) => emit(Layer::Other, rest),
        }
        if !self.packet.trailer.bytes.is_empty() {
            emit(Layer::Trailer, within(self.packet.trailer.bytes));
        }
        if let Some(m) = &self.packet.metamako {
            emit(Layer::Metamako, within(m.as_bytes()));
        }
        if self.verdict.is_some() {
            emit(Layer::Analysis, 0..0);
        }
    }

    fn roce_layers(roce: &Roce<'_>, within: &dyn Fn(&[u8]) -> Range<usize>, sink: &mut dyn FnMut(Layer, Range<usize>)) {
        let ib = &roce.ib;
        sink(Layer::Bth, within(ib.bth.as_bytes()));
        let ext = within(ib.ext_bytes);
        match ib.ext() {
            // the CNP's reserved bytes have no fields
            Some(_) => ib.info.ext.iter().filter(|h| *h != ExtHeader::CnpReserved).for_each(|h| {
                let at = ext.start + ib.info.ext.offset_of(h).unwrap_or(0);
                sink(Layer::Ext(h), at..(at + h.size()).min(ext.end))
            }),
            None => sink(Layer::ExtCut, ext),
        }
        let payload = within(ib.payload);
        if roce.mad.is_some() {
            let mad_end = (payload.start + rocescope_parsers::cm::MAD_HEADER_LEN).min(payload.end);
            sink(Layer::Mad, payload.start..mad_end);
            if roce.cm.is_some() {
                sink(Layer::Cm, mad_end..payload.end);
            }
        }
        sink(Layer::Payload, payload);
        // the ICRC ends the packet, when the packet was captured whole
        let packet = within(ib.bytes);
        let icrc = match ib.icrc_covered {
            Some(_) => packet.end.saturating_sub(4).max(packet.start)..packet.end,
            None => packet.end..packet.end,
        };
        sink(Layer::Icrc, icrc.clone());
        if let Some(vcrc) = roce.vcrc {
            let len = if vcrc.wire.is_some() { 2 } else { 0 };
            sink(Layer::Vcrc, icrc.end..icrc.end + len);
        }
    }

    fn uet_layers(
        uet: &UetFrame<'_>,
        within: &dyn Fn(&[u8]) -> Range<usize>,
        sink: &mut dyn FnMut(Layer, Range<usize>),
    ) {
        if let Some(entropy) = &uet.entropy {
            sink(Layer::UetEntropy, within(entropy.as_bytes()));
        }
        let (payload, trailer) = match uet.packet {
            Uet::Secured { tss, ciphertext, tag } => {
                sink(Layer::UetTss, within(tss.as_bytes()));
                (ciphertext, tag)
            }
            Uet::Clear { pds, ses, payload, crc } => {
                sink(Layer::UetPds, within(pds.as_bytes()));
                if let Some(ses) = ses {
                    sink(Layer::UetSes, within(ses.as_bytes()));
                }
                (payload, crc.map(|c| &c[..]))
            }
        };
        sink(Layer::Payload, within(payload));
        if let Some(trailer) = trailer {
            sink(Layer::UetTrailer, within(trailer));
        }
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

    /// The GRE header of every GRE encapsulation, outermost first, as it is on the wire.
    pub fn gre_headers(&self, sink: &mut dyn FnMut(GreHeader)) {
        let data = self.packet.data;
        for e in self.packet.encaps.iter().filter(|e| !matches!(e.kind, EncapKind::Vxlan { .. })) {
            let after_outer = place(data, e.outer).end;
            if let Some((gre, _)) = data.get(after_outer..).and_then(|b| GreHeader::parse(b).ok()) {
                sink(gre)
            }
        }
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

    /// One extended transport header of a RoCE packet read alone (with one of `IbPacket`'s
    /// single-header readers, cheaper than [`Frame::ext`] for a field that needs one), when the
    /// packet's extended headers were all captured, as [`Frame::ext`] requires.
    fn one_ext<T>(&self, read: impl FnOnce(&IbPacket<'a>) -> Option<T>) -> Option<T> {
        let ib = &self.roce()?.ib;
        (ib.ext_bytes.len() >= ib.info.ext.len()).then(|| read(ib)).flatten()
    }

    pub fn aeth(&self) -> Option<Aeth> {
        self.one_ext(IbPacket::aeth)
    }

    pub fn reth(&self) -> Option<Reth> {
        self.one_ext(IbPacket::reth)
    }

    pub fn deth(&self) -> Option<Deth> {
        self.one_ext(IbPacket::deth)
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

    /// The MAD common header of a management datagram.
    pub fn mad(&self) -> Option<rocescope_parsers::cm::MadHeader<'a>> {
        self.roce().and_then(|r| r.mad)
    }
}
