//! GRE (RFC 2784, with the key and sequence extensions of RFC 2890), the carrier of ERSPAN and of
//! bridged Ethernet (protocol 0x6558) in mirror sessions.
//!
//! First word: C (0x8000) checksum present, R (0x4000) routing present (RFC 1701, unsupported),
//! K (0x2000) key present, S (0x1000) sequence present, version in bits 2:0 (must be 0).
//! Optional fields follow in the order checksum+reserved, key, sequence, 4 bytes each.

use nom::Parser;
use nom::combinator::cond;
use nom::number::complete::be_u32;

use crate::error::{Error, Layer, NomError, be16, split_array};

pub const PROTO_ERSPAN_II: u16 = 0x88BE;
pub const PROTO_ERSPAN_III: u16 = 0x22EB;
pub const PROTO_TRANSPARENT_ETHERNET: u16 = 0x6558;

const FLAG_CHECKSUM: u16 = 0x8000;
const FLAG_ROUTING: u16 = 0x4000;
const FLAG_KEY: u16 = 0x2000;
const FLAG_SEQUENCE: u16 = 0x1000;

/// A decoded GRE header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GreHeader {
    pub flags_version: u16,
    pub protocol: u16,
    pub checksum: Option<u32>,
    pub key: Option<u32>,
    pub sequence: Option<u32>,
}

impl GreHeader {
    pub fn parse(input: &[u8]) -> Result<(Self, &[u8]), Error> {
        let (base, rest) = split_array::<4>(input, Layer::Gre)?;
        let flags_version = be16([base[0], base[1]]);
        if flags_version & 0x0007 != 0 {
            return Err(Error::invalid(Layer::Gre, "version is not 0"));
        }
        if flags_version & FLAG_ROUTING != 0 {
            return Err(Error::invalid(Layer::Gre, "source routing (RFC 1701) is not supported"));
        }
        let optional = |flag: u16| flags_version & flag != 0;
        let needed = 4 + 4 * [FLAG_CHECKSUM, FLAG_KEY, FLAG_SEQUENCE].iter().filter(|f| optional(**f)).count();
        let truncated = |_| Error::truncated(Layer::Gre, needed, input.len());
        let (rest, checksum) =
            cond(optional(FLAG_CHECKSUM), be_u32::<_, NomError<'_>>).parse_complete(rest).map_err(truncated)?;
        let (rest, key) =
            cond(optional(FLAG_KEY), be_u32::<_, NomError<'_>>).parse_complete(rest).map_err(truncated)?;
        let (rest, sequence) =
            cond(optional(FLAG_SEQUENCE), be_u32::<_, NomError<'_>>).parse_complete(rest).map_err(truncated)?;
        let header = GreHeader { flags_version, protocol: be16([base[2], base[3]]), checksum, key, sequence };
        Ok((header, rest))
    }

    /// Header length on the wire.
    pub fn header_len(&self) -> usize {
        4 + [self.checksum, self.key, self.sequence].iter().filter(|f| f.is_some()).count() * 4
    }
}

impl GreHeader {
    /// Writes the header through `put`: the flags of the optional words present (the other
    /// bits of `flags_version` as they are), the protocol, then checksum, key and sequence
    /// number where present.
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        let present = [(FLAG_CHECKSUM, self.checksum), (FLAG_KEY, self.key), (FLAG_SEQUENCE, self.sequence)];
        let flags = present.iter().filter(|(_, word)| word.is_some()).fold(0, |f, (flag, _)| f | flag);
        let flags_version = (self.flags_version & !(FLAG_CHECKSUM | FLAG_KEY | FLAG_SEQUENCE)) | flags;
        put(&flags_version.to_be_bytes());
        put(&self.protocol.to_be_bytes());
        present.iter().filter_map(|(_, word)| *word).for_each(|word| put(&word.to_be_bytes()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erspan_ii_gre_has_sequence_only() {
        let b = [0x10, 0x00, 0x88, 0xbe, 0x00, 0x00, 0x00, 0x2a, 0xEE];
        let (gre, rest) = GreHeader::parse(&b).unwrap();
        assert_eq!(gre.protocol, PROTO_ERSPAN_II);
        assert_eq!((gre.checksum, gre.key, gre.sequence), (None, None, Some(42)));
        assert_eq!(gre.header_len(), 8);
        assert_eq!(rest, &[0xEE]);
    }

    #[test]
    fn all_optional_fields_in_order() {
        let b = [0xb0, 0x00, 0x65, 0x58, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3];
        let (gre, rest) = GreHeader::parse(&b).unwrap();
        assert_eq!((gre.checksum, gre.key, gre.sequence), (Some(1), Some(2), Some(3)));
        assert_eq!(gre.protocol, PROTO_TRANSPARENT_ETHERNET);
        assert_eq!(gre.header_len(), 16);
        assert!(rest.is_empty());
    }

    #[test]
    fn malformed() {
        assert_eq!(GreHeader::parse(&[0x10, 0, 0x88]).unwrap_err(), Error::truncated(Layer::Gre, 4, 3));
        assert_eq!(
            GreHeader::parse(&[0x30, 0, 0x88, 0xbe, 0, 0, 0, 1]).unwrap_err(),
            Error::truncated(Layer::Gre, 12, 8)
        );
        assert_eq!(
            GreHeader::parse(&[0x00, 1, 0x88, 0xbe]).unwrap_err(),
            Error::invalid(Layer::Gre, "version is not 0")
        );
        assert!(GreHeader::parse(&[0x40, 0, 0x88, 0xbe]).is_err());
    }
}
