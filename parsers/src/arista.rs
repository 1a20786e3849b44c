//! Arista's timestamp header (vendor EtherType 0xD28B), which Arista switches insert after the
//! source MAC of a frame they timestamp (tap aggregation, mirroring to GRE): a subtype (1: a
//! timestamp), a version saying the timestamp's format, the timestamp (TAI or UTC), then the
//! frame's own EtherType. Layout: Arista's EtherType assignment as tcpdump's `print-arista.c`
//! and Wireshark's `packet-avsp.c` read it; `../shared/mirror-formats.md`.

use crate::error::{Error, Layer, be16, be16_at, be32, split_array};

pub const ETHERTYPE_ARISTA: u16 = 0xD28B;
pub const SUBTYPE_TIMESTAMP: u16 = 0x0001;

/// Timestamp formats (the version field): 32-bit seconds or 16-bit seconds, then 32-bit
/// nanoseconds; TAI or UTC.
pub const VERSION_64_TAI: u16 = 0x0010;
pub const VERSION_64_UTC: u16 = 0x0110;
pub const VERSION_48_TAI: u16 = 0x0020;
pub const VERSION_48_UTC: u16 = 0x0120;

/// An Arista timestamp header view.
#[derive(Debug, Clone, Copy)]
pub struct AristaHeader<'a> {
    bytes: &'a [u8],
}

impl<'a> AristaHeader<'a> {
    /// Parses the header from the bytes after its EtherType; the rest is the frame's payload.
    /// Subtypes other than the timestamp, and versions not known, are errors: where their
    /// EtherType lies is not known.
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (head, _) = split_array::<4>(input, Layer::Arista)?;
        if be16([head[0], head[1]]) != SUBTYPE_TIMESTAMP {
            return Err(Error::invalid(Layer::Arista, "subtype is not a timestamp"));
        }
        let len = match be16([head[2], head[3]]) {
            VERSION_64_TAI | VERSION_64_UTC => 4 + 8 + 2,
            VERSION_48_TAI | VERSION_48_UTC => 4 + 6 + 2,
            _ => return Err(Error::invalid(Layer::Arista, "unknown timestamp version")),
        };
        let bytes = input.get(..len).ok_or(Error::truncated(Layer::Arista, len, input.len()))?;
        Ok((AristaHeader { bytes }, input.get(len..).unwrap_or_default()))
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    fn u16_at(&self, at: usize) -> u16 {
        be16_at(self.bytes, at)
    }

    fn u32_at(&self, at: usize) -> u32 {
        match self.bytes.get(at..at + 4) {
            Some(&[a, b, c, d]) => be32([a, b, c, d]),
            _ => 0,
        }
    }

    pub fn subtype(&self) -> u16 {
        self.u16_at(0)
    }

    pub fn version(&self) -> u16 {
        self.u16_at(2)
    }

    /// Is the timestamp the 64-bit format (32-bit seconds)? Else the 48-bit one.
    pub fn is_64_bit(&self) -> bool {
        matches!(self.version(), VERSION_64_TAI | VERSION_64_UTC)
    }

    /// Seconds: all of them in the 64-bit format, the low 16 bits in the 48-bit one.
    pub fn seconds(&self) -> u32 {
        if self.is_64_bit() { self.u32_at(4) } else { u32::from(self.u16_at(4)) }
    }

    pub fn nanoseconds(&self) -> u32 {
        self.u32_at(if self.is_64_bit() { 8 } else { 6 })
    }

    /// The frame's own EtherType, after the timestamp.
    pub fn ethertype(&self) -> u16 {
        self.u16_at(self.bytes.len().saturating_sub(2))
    }
}

/// A timestamp header's fields, to write one ([`AristaRepr::emit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AristaRepr {
    /// One of the `VERSION_*` formats.
    pub version: u16,
    /// All the seconds in a 64-bit format; their low 16 bits are written in a 48-bit one.
    pub seconds: u32,
    pub nanoseconds: u32,
}

impl AristaRepr {
    /// Writes the header after its EtherType through `put`: subtype, version, the timestamp
    /// in the version's format (the frame's own EtherType is the caller's).
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&SUBTYPE_TIMESTAMP.to_be_bytes());
        put(&self.version.to_be_bytes());
        if matches!(self.version, VERSION_64_TAI | VERSION_64_UTC) {
            put(&self.seconds.to_be_bytes());
        } else {
            put(&(self.seconds as u16).to_be_bytes());
        }
        put(&self.nanoseconds.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_64_bit_and_48_bit_formats() {
        // subtype 1, version 0x0010, 0x5F000000 s, 123456789 ns, then IPv4
        let bytes = [0, 1, 0, 0x10, 0x5F, 0, 0, 0, 0x07, 0x5B, 0xCD, 0x15, 0x08, 0x00, 0xAA];
        let (h, rest) = AristaHeader::parse(&bytes).unwrap();
        assert_eq!((h.subtype(), h.version(), h.is_64_bit()), (1, 0x10, true));
        assert_eq!(
            (h.seconds(), h.nanoseconds(), h.ethertype(), rest),
            (0x5F00_0000, 123_456_789, 0x0800, &[0xAA][..])
        );
        // version 0x0120: 16-bit seconds
        let bytes = [0, 1, 0x01, 0x20, 0x12, 0x34, 0, 0, 0, 9, 0x86, 0xDD];
        let (h, rest) = AristaHeader::parse(&bytes).unwrap();
        assert_eq!((h.is_64_bit(), h.seconds(), h.nanoseconds(), h.ethertype()), (false, 0x1234, 9, 0x86DD));
        assert!(rest.is_empty());
    }

    #[test]
    fn other_subtypes_versions_and_short_headers_are_errors() {
        assert!(AristaHeader::parse(&[0, 2, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0]).is_err());
        assert!(AristaHeader::parse(&[0, 1, 0, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0]).is_err());
        assert_eq!(AristaHeader::parse(&[0, 1, 0, 0x10, 0, 0]).unwrap_err(), Error::truncated(Layer::Arista, 14, 6));
        assert!(AristaHeader::parse(&[0, 1]).is_err());
    }
}
