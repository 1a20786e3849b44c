//! Ethernet II header and IEEE 802.1Q / 802.1ad VLAN tag stacks.
//!
//! A tag is TPID (2 bytes) + TCI (2 bytes: PCP 3 bits, DEI 1 bit, VID 12 bits), IEEE 802.1Q §9.6.
//! Tags are skipped while the EtherType is 0x8100 (C-tag), 0x88A8 (S-tag) or 0x9100 (legacy
//! QinQ), so any number of tags is accepted.

use crate::emit::join;
use crate::error::{Error, Layer, be16, split_array, split_bytes};

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
pub const ETHERTYPE_MPLS: u16 = 0x8847;
pub const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
pub const ETHERTYPE_QINQ: u16 = 0x88A8;
pub const ETHERTYPE_LLDP: u16 = 0x88CC;
pub const ETHERTYPE_ROCEV1: u16 = 0x8915;
pub const ETHERTYPE_QINQ_LEGACY: u16 = 0x9100;

/// Is `ethertype` one a frame on a RoCE fabric carries (IP, VLAN tags, MPLS, RoCEv1, ARP, MAC
/// control, LLDP)? Mirror headers of no fixed length are found by looking for a frame with
/// one of these after them.
pub fn is_known_ethertype(ethertype: u16) -> bool {
    matches!(
        ethertype,
        ETHERTYPE_IPV4
            | ETHERTYPE_IPV6
            | ETHERTYPE_VLAN
            | ETHERTYPE_QINQ
            | ETHERTYPE_QINQ_LEGACY
            | ETHERTYPE_MPLS
            | ETHERTYPE_MPLS_MULTICAST
            | ETHERTYPE_ROCEV1
            | ETHERTYPE_ARP
            | ETHERTYPE_MAC_CONTROL
            | ETHERTYPE_LLDP
    )
}

/// Does an Ethernet frame with a [known EtherType](is_known_ethertype) start `at` bytes into
/// `bytes`?
pub fn frame_starts_at(bytes: &[u8], at: usize) -> bool {
    let ethertype = at.checked_add(12).and_then(|start| bytes.get(start..)?.first_chunk::<2>());
    ethertype.is_some_and(|&[high, low]| is_known_ethertype(be16([high, low])))
}

/// Does a plausible Ethernet frame start `at` bytes into `bytes`: a [known
/// EtherType](is_known_ethertype) and, after it, an IPv4 or IPv6 header's version (with an
/// IPv4 header length of at least 5 words) or another known EtherType after a VLAN tag? A
/// vendor header of no known length is skipped by looking for one.
pub fn frame_plausible_at(bytes: &[u8], at: usize) -> bool {
    let byte = |i: usize| bytes.get(at.checked_add(i)?).copied();
    let ethertype = |i: usize| Some(be16([byte(i)?, byte(i + 1)?]));
    match ethertype(12) {
        Some(ETHERTYPE_IPV4) => byte(14).is_some_and(|b| b >> 4 == 4 && b & 0x0F >= 5),
        Some(ETHERTYPE_IPV6) => byte(14).is_some_and(|b| b >> 4 == 6),
        Some(tpid) if is_vlan_tpid(tpid) => ethertype(16).is_some_and(is_known_ethertype),
        Some(other) => is_known_ethertype(other),
        None => false,
    }
}

/// Is `ethertype` a VLAN tag protocol identifier?
pub fn is_vlan_tpid(ethertype: u16) -> bool {
    matches!(ethertype, ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_LEGACY)
}

/// A 6-byte MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MacAddr(pub [u8; 6]);

impl core::fmt::Display for MacAddr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

/// The 14-byte Ethernet II header (destination, source, EtherType/TPID).
#[derive(Debug, Clone, Copy)]
pub struct EthernetHeader<'a> {
    bytes: &'a [u8; 14],
}

impl<'a> EthernetHeader<'a> {
    /// Splits the header off `input`; returns it and the bytes after it.
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<14>(input, Layer::Ethernet)?;
        Ok((EthernetHeader { bytes }, rest))
    }

    pub fn destination(&self) -> MacAddr {
        let [a, b, c, d, e, f, ..] = *self.bytes;
        MacAddr([a, b, c, d, e, f])
    }

    pub fn source(&self) -> MacAddr {
        let [_, _, _, _, _, _, a, b, c, d, e, f, _, _] = *self.bytes;
        MacAddr([a, b, c, d, e, f])
    }

    /// The EtherType field (a TPID when a VLAN tag follows).
    pub fn ethertype(&self) -> u16 {
        be16([self.bytes[12], self.bytes[13]])
    }

    pub fn as_bytes(&self) -> &'a [u8; 14] {
        self.bytes
    }
}

/// One VLAN tag: the TPID that announced it and its TCI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag {
    pub tpid: u16,
    pub tci: u16,
}

impl VlanTag {
    /// Priority code point, the 802.1p priority PFC acts on.
    pub fn pcp(&self) -> u8 {
        (self.tci >> 13) as u8
    }

    /// Drop eligible indicator.
    pub fn dei(&self) -> bool {
        self.tci & 0x1000 != 0
    }

    /// VLAN identifier.
    pub fn vid(&self) -> u16 {
        self.tci & 0x0FFF
    }
}

/// The stack of VLAN tags after the MAC addresses, outermost first, as a view over the 4-byte
/// tag records (TPID + TCI); iterate with [`VlanTags::iter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct VlanTags<'a> {
    bytes: &'a [u8],
}

impl<'a> VlanTags<'a> {
    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = VlanTag> + 'a {
        self.bytes.chunks_exact(4).map(|c| match *c {
            [t0, t1, c0, c1] => VlanTag { tpid: be16([t0, t1]), tci: be16([c0, c1]) },
            _ => VlanTag { tpid: 0, tci: 0 }, // unreachable: chunks_exact yields 4 bytes
        })
    }

    /// The outermost tag, if any.
    pub fn outer(&self) -> Option<VlanTag> {
        self.iter().next()
    }
}

/// An Ethernet II frame header with its VLAN tags: MAC addresses, tags, and the EtherType of
/// the payload after the last tag.
#[derive(Debug, Clone, Copy)]
pub struct EthernetFrame<'a> {
    pub header: EthernetHeader<'a>,
    pub vlans: VlanTags<'a>,
    /// The EtherType after the last VLAN tag.
    pub ethertype: u16,
}

impl<'a> EthernetFrame<'a> {
    /// Parses the Ethernet header and every VLAN tag; returns the frame and its payload.
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (header, after_header) = EthernetHeader::parse(input)?;
        let mut ethertype = header.ethertype();
        // The TPID of the first tag is the header's EtherType field; each tag record in the
        // view is that TPID-or-previous-inner-type followed by the TCI. Re-slice from byte 12
        // so tags are contiguous 4-byte records [TPID, TCI].
        let tags_start = input.get(12..).unwrap_or_default();
        let mut tag_count = 0usize;
        let mut rest = after_header;
        while is_vlan_tpid(ethertype) {
            let (tag, after_tag) = split_array::<4>(rest, Layer::Vlan)?;
            ethertype = be16([tag[2], tag[3]]);
            rest = after_tag;
            tag_count += 1;
        }
        let (tag_bytes, _) = split_bytes(tags_start, tag_count * 4, Layer::Vlan)?;
        Ok((EthernetFrame { header, vlans: VlanTags { bytes: tag_bytes }, ethertype }, rest))
    }
}

/// An Ethernet II header, to write ([`EthernetRepr::emit`]) or read whole; VLAN tags are
/// written apart ([`VlanTag::emit`]) between the source address and the EtherType.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    pub destination: MacAddr,
    pub source: MacAddr,
    pub ethertype: u16,
}

impl EthernetRepr {
    pub fn of(header: &EthernetHeader<'_>) -> Self {
        EthernetRepr { destination: header.destination(), source: header.source(), ethertype: header.ethertype() }
    }

    pub fn emit(&self) -> [u8; 14] {
        join(&[&self.destination.0, &self.source.0, &self.ethertype.to_be_bytes()])
    }

    /// The two addresses alone, which tags and the EtherType follow.
    pub fn emit_addresses(&self) -> [u8; 12] {
        join(&[&self.destination.0, &self.source.0])
    }
}

impl VlanTag {
    /// A tag announced by `tpid` with priority `pcp` (3 bits) and VLAN `vid` (12 bits).
    pub fn new(tpid: u16, pcp: u8, vid: u16) -> Self {
        VlanTag { tpid, tci: (u16::from(pcp & 0x07) << 13) | (vid & 0x0FFF) }
    }

    /// TPID and TCI, 4 bytes.
    pub fn emit(&self) -> [u8; 4] {
        join(&[&self.tpid.to_be_bytes(), &self.tci.to_be_bytes()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_looked_for_past_the_end_of_memory_is_none() {
        let bytes = [0u8; 64];
        assert!(!frame_starts_at(&bytes, usize::MAX) && !frame_plausible_at(&bytes, usize::MAX));
    }

    const UNTAGGED: [u8; 16] = [
        0x02, 0, 0, 1, 0, 2, // dst
        0x02, 0, 0, 1, 0, 1, // src
        0x08, 0x00, // IPv4
        0x45, 0x00,
    ];

    #[test]
    fn untagged_frame() {
        let (eth, rest) = EthernetFrame::parse(&UNTAGGED).unwrap();
        assert_eq!(eth.header.destination().to_string(), "02:00:00:01:00:02");
        assert_eq!(eth.header.source().to_string(), "02:00:00:01:00:01");
        assert_eq!(eth.ethertype, ETHERTYPE_IPV4);
        assert!(eth.vlans.is_empty());
        assert_eq!(rest, &[0x45, 0x00]);
    }

    #[test]
    fn qinq_stack_is_read_outer_first() {
        // S-tag 0x88a8 PCP 5 VID 200, then C-tag 0x8100 PCP 3 VID 100, then IPv6.
        let mut frame = UNTAGGED[..12].to_vec();
        frame.extend_from_slice(&[0x88, 0xa8, 0xa0, 0xc8, 0x81, 0x00, 0x60, 0x64, 0x86, 0xdd, 0x60]);
        let (eth, rest) = EthernetFrame::parse(&frame).unwrap();
        let tags: Vec<_> = eth.vlans.iter().collect();
        assert_eq!(tags.len(), 2);
        assert_eq!((tags[0].tpid, tags[0].pcp(), tags[0].vid()), (0x88a8, 5, 200));
        assert_eq!((tags[1].tpid, tags[1].pcp(), tags[1].vid()), (0x8100, 3, 100));
        assert!(!tags[1].dei());
        assert_eq!(eth.ethertype, ETHERTYPE_IPV6);
        assert_eq!(rest, &[0x60]);
    }

    #[test]
    fn legacy_9100_tag_and_dei() {
        let mut frame = UNTAGGED[..12].to_vec();
        frame.extend_from_slice(&[0x91, 0x00, 0xf0, 0x01, 0x88, 0x08]);
        let (eth, _) = EthernetFrame::parse(&frame).unwrap();
        let tag = eth.vlans.outer().unwrap();
        assert_eq!((tag.pcp(), tag.dei(), tag.vid()), (7, true, 1));
        assert_eq!(eth.ethertype, ETHERTYPE_MAC_CONTROL);
    }

    #[test]
    fn truncated_inputs() {
        assert_eq!(EthernetFrame::parse(&UNTAGGED[..13]).unwrap_err(), Error::truncated(Layer::Ethernet, 14, 13));
        let mut frame = UNTAGGED[..12].to_vec();
        frame.extend_from_slice(&[0x81, 0x00, 0x60]);
        assert_eq!(EthernetFrame::parse(&frame).unwrap_err(), Error::truncated(Layer::Vlan, 4, 1));
    }
}
