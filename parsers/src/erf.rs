//! ERF, the Extensible Record Format of Endace capture cards and `ibdump` (link type 197): a
//! 16-byte record header, optional 8-byte extension headers, then the captured packet
//! (an InfiniBand packet from its LRH, or an Ethernet frame after 2 bytes of padding), and
//! padding up to the record length. Layout: Endace ERF types reference, as summarised in
//! `../shared/protocol-facts.md` §15.1.

use crate::emit::join;
use crate::error::{Error, Layer, be16, split_array};

pub const ERF_HEADER_LEN: usize = 16;
const EXTENSION_LEN: usize = 8;
/// Extension headers read at most (a record claiming more is malformed).
const EXTENSIONS_MAX: usize = 32;

/// ERF record types rocescope reads.
pub const TYPE_ETHERNET: u8 = 2;
pub const TYPE_INFINIBAND: u8 = 21;
pub const TYPE_INFINIBAND_LINK: u8 = 25;

/// The padding before an ERF Ethernet record's frame.
pub const ETHERNET_PAD: usize = 2;

/// An ERF record header, with its extension headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErfHeader<'a> {
    /// The timestamp: seconds in the high 32 bits, a binary fraction below.
    pub timestamp: u64,
    /// The record type's low 7 bits.
    pub record_type: u8,
    pub flags: u8,
    /// The record's length, header and padding included.
    pub rlen: u16,
    /// Records the card dropped before this one.
    pub loss_counter: u16,
    /// The packet's length on the wire.
    pub wlen: u16,
    /// The extension headers, 8 bytes each.
    pub extensions: &'a [u8],
}

impl<'a> ErfHeader<'a> {
    /// Parses the header and its extensions; the rest is the record's payload, cut to `rlen`.
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (h, mut rest) = split_array::<ERF_HEADER_LEN>(input, Layer::Erf)?;
        let rlen = be16([h[10], h[11]]);
        let mut count = 0;
        let mut more = h[8] & 0x80 != 0;
        while more {
            if count == EXTENSIONS_MAX {
                return Err(Error::invalid(Layer::Erf, "more extension headers than a record holds"));
            }
            let (ext, after) = split_array::<EXTENSION_LEN>(rest, Layer::Erf)?;
            more = ext[0] & 0x80 != 0;
            rest = after;
            count += 1;
        }
        let header_len = ERF_HEADER_LEN + count * EXTENSION_LEN;
        let extensions = input.get(ERF_HEADER_LEN..header_len).unwrap_or_default();
        let payload_len = usize::from(rlen)
            .checked_sub(header_len)
            .ok_or_else(|| Error::invalid(Layer::Erf, "rlen shorter than the headers"))?;
        let payload = rest.get(..payload_len.min(rest.len())).unwrap_or_default();
        let header = ErfHeader {
            timestamp: u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]),
            record_type: h[8] & 0x7F,
            flags: h[9],
            rlen,
            loss_counter: be16([h[12], h[13]]),
            wlen: be16([h[14], h[15]]),
            extensions,
        };
        Ok((header, payload))
    }

    /// The capture interface (flags bits 0–1).
    pub fn interface(&self) -> u8 {
        self.flags & 0x03
    }

    /// Was the record cut short by the card (flags bit 3)?
    pub fn truncated(&self) -> bool {
        self.flags & 0x08 != 0
    }

    /// Did the card see a receive error on the packet (flags bit 4)?
    pub fn rx_error(&self) -> bool {
        self.flags & 0x10 != 0
    }

    /// The timestamp in nanoseconds since the Unix epoch, the binary fraction rounded to the
    /// nearest nanosecond (as Wireshark rounds it).
    pub fn ts_ns(&self) -> i64 {
        let seconds = (self.timestamp >> 32) as i64;
        let scaled = (self.timestamp & 0xFFFF_FFFF) * 1_000_000_000;
        let fraction = (scaled + ((scaled & 0x8000_0000) << 1)) >> 32;
        seconds * 1_000_000_000 + fraction as i64
    }
}

impl ErfHeader<'_> {
    /// The timestamp of `ts_ns` nanoseconds since the Unix epoch (before 2106: the seconds
    /// are 32 bits): the fraction rounded up, so that [`ErfHeader::ts_ns`] rounds it back to
    /// the same nanosecond.
    pub fn timestamp_of(ts_ns: i64) -> u64 {
        let (seconds, nanos) = (ts_ns.div_euclid(1_000_000_000) as u64, ts_ns.rem_euclid(1_000_000_000) as u64);
        (seconds << 32) | (nanos << 32).div_ceil(1_000_000_000)
    }

    /// The 16-byte header (the extension headers, when there are any, follow it; their
    /// presence is the type byte's high bit).
    pub fn emit(&self) -> [u8; ERF_HEADER_LEN] {
        let type_byte = (self.record_type & 0x7F) | if self.extensions.is_empty() { 0 } else { 0x80 };
        join(&[
            &self.timestamp.to_le_bytes(),
            &[type_byte, self.flags],
            &self.rlen.to_be_bytes(),
            &self.loss_counter.to_be_bytes(),
            &self.wlen.to_be_bytes(),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ERF header: time 1.5 s, `type_byte`, flags, rlen, loss counter, wlen.
    fn header(type_byte: u8, flags: u8, rlen: u16, lctr: u16, wlen: u16) -> Vec<u8> {
        let mut h = ((1u64 << 32) | 0x8000_0000).to_le_bytes().to_vec();
        h.extend_from_slice(&[type_byte, flags]);
        h.extend_from_slice(&rlen.to_be_bytes());
        h.extend_from_slice(&lctr.to_be_bytes());
        h.extend_from_slice(&wlen.to_be_bytes());
        h
    }

    #[test]
    fn an_infiniband_record_with_padding_and_lost_records() {
        // 16-byte header, a 6-byte packet, 2 bytes of padding: rlen 24
        let mut r = header(TYPE_INFINIBAND, 0x01, 24, 3, 6);
        r.extend_from_slice(&[1, 2, 3, 4, 5, 6, 0, 0, 0xEE]);
        let (h, payload) = ErfHeader::parse(&r).unwrap();
        assert_eq!((h.record_type, h.interface(), h.rlen, h.loss_counter, h.wlen), (TYPE_INFINIBAND, 1, 24, 3, 6));
        assert_eq!(payload, [1, 2, 3, 4, 5, 6, 0, 0]);
        assert_eq!(h.ts_ns(), 1_500_000_000);
        // a fraction between two nanoseconds rounds to the nearer: 0x7ff07040 / 2^32 s is
        // 499762549.996 ns
        let between = ErfHeader { timestamp: 0x7FF0_7040, ..h };
        assert_eq!(between.ts_ns(), 499_762_550);
        assert!(h.extensions.is_empty() && !h.truncated() && !h.rx_error());
    }

    #[test]
    fn extension_headers_are_skipped_and_kept() {
        // type with bit 7 set: two extension headers, the first saying another follows
        let mut r = header(0x80 | TYPE_INFINIBAND_LINK, 0x08, 16 + 16 + 4, 0, 4);
        r.extend_from_slice(&[0x81, 0, 0, 0, 0, 0, 0, 1]);
        r.extend_from_slice(&[0x02, 0, 0, 0, 0, 0, 0, 2]);
        r.extend_from_slice(&[9, 9, 9, 9]);
        let (h, payload) = ErfHeader::parse(&r).unwrap();
        assert_eq!((h.record_type, h.extensions.len(), h.truncated()), (TYPE_INFINIBAND_LINK, 16, true));
        assert_eq!(payload, [9, 9, 9, 9]);
    }

    #[test]
    fn damaged_headers_are_errors() {
        assert_eq!(ErfHeader::parse(&[0; 15]).unwrap_err(), Error::truncated(Layer::Erf, 16, 15));
        // an extension announced but missing
        assert!(ErfHeader::parse(&header(0x80 | TYPE_INFINIBAND, 0, 24, 0, 0)).is_err());
        // rlen shorter than the header
        assert!(ErfHeader::parse(&header(TYPE_INFINIBAND, 0, 8, 0, 0)).is_err());
        // endless extensions
        let mut r = header(0x80 | TYPE_INFINIBAND, 0, 1000, 0, 0);
        (0..40).for_each(|_| r.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 0, 0]));
        assert!(ErfHeader::parse(&r).is_err());
    }
}
