//! Port-extender tags, which a fabric extender or a port extender inserts after the source MAC
//! (Cisco FEX/UCS mirror sources, `../shared/mirror-formats.md`), each followed by the frame's
//! own EtherType:
//! - Cisco's VN-Tag (EtherType 0x8926): direction, pointer, destination VIF, looped, a
//!   reserved bit, version, source VIF in 32 bits;
//! - IEEE 802.1BR's E-tag (EtherType 0x893F): E-PCP, E-DEI, ingress E-CID base, reserved, GRP,
//!   E-CID base, ingress E-CID and E-CID extensions in 48 bits.

use crate::error::{Error, Layer, be16_at, be32};

pub const ETHERTYPE_VNTAG: u16 = 0x8926;
pub const ETHERTYPE_ETAG: u16 = 0x893F;

/// Which tag, by its EtherType.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortTagKind {
    VnTag,
    ETag,
}

/// A port-extender tag view: the bytes after its EtherType, its own fields then the next
/// EtherType.
#[derive(Debug, Clone, Copy)]
pub struct PortTag<'a> {
    pub kind: PortTagKind,
    bytes: &'a [u8],
}

impl<'a> PortTag<'a> {
    /// Parses the tag announced by `ethertype` from the bytes after it; the rest is the
    /// frame's payload.
    pub fn parse(kind: PortTagKind, input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let len = match kind {
            PortTagKind::VnTag => 4 + 2,
            PortTagKind::ETag => 6 + 2,
        };
        let bytes = input.get(..len).ok_or(Error::truncated(Layer::Ethernet, len, input.len()))?;
        Ok((PortTag { kind, bytes }, input.get(len..).unwrap_or_default()))
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    fn u16_at(&self, at: usize) -> u16 {
        be16_at(self.bytes, at)
    }

    /// The tag's first 32 bits (VN-Tag's fields).
    pub fn word(&self) -> u32 {
        match self.bytes.get(..4) {
            Some(&[a, b, c, d]) => be32([a, b, c, d]),
            _ => 0,
        }
    }

    /// The E-tag's first and second 16-bit words, and its two extension bytes.
    pub fn etag_words(&self) -> (u16, u16, u8, u8) {
        let byte = |at: usize| self.bytes.get(at).copied().unwrap_or(0);
        (self.u16_at(0), self.u16_at(2), byte(4), byte(5))
    }

    /// The frame's own EtherType, after the tag.
    pub fn ethertype(&self) -> u16 {
        self.u16_at(self.bytes.len().saturating_sub(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vn_tag_and_an_e_tag() {
        // direction 1, destination VIF 0x0123, looped 0, version 0, source VIF 0x045; IPv4
        let bytes = [0x81, 0x23, 0x00, 0x45, 0x08, 0x00, 0xAA];
        let (t, rest) = PortTag::parse(PortTagKind::VnTag, &bytes).unwrap();
        assert_eq!((t.word() >> 31, (t.word() >> 16) & 0x3FFF, t.word() & 0xFFF), (1, 0x123, 0x45));
        assert_eq!((t.ethertype(), rest), (0x0800, &[0xAA][..]));
        // E-PCP 5, ingress E-CID base 0x012, GRP 1, E-CID base 0x345, extensions 6 and 7; IPv6
        let bytes = [0xA0, 0x12, 0x13, 0x45, 6, 7, 0x86, 0xDD];
        let (t, rest) = PortTag::parse(PortTagKind::ETag, &bytes).unwrap();
        assert_eq!(t.etag_words(), (0xA012, 0x1345, 6, 7));
        assert_eq!((t.ethertype(), rest.len()), (0x86DD, 0));
    }

    #[test]
    fn short_tags_are_errors() {
        assert_eq!(PortTag::parse(PortTagKind::VnTag, &[0; 5]).unwrap_err(), Error::truncated(Layer::Ethernet, 6, 5));
        assert!(PortTag::parse(PortTagKind::ETag, &[0; 7]).is_err());
    }
}
