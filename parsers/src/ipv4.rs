//! IPv4 header (RFC 791), with options. Fragments are recognised (so that the caller can stop
//! there) but not reassembled.

use crate::emit::join;
use crate::error::{Error, Layer, be16, split_array, split_bytes};

/// An IPv4 header's length without options.
pub const MIN_HEADER_LEN: usize = 20;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_GRE: u8 = 47;
pub const PROTO_ICMP: u8 = 1;

/// An IPv4 header view: the fixed 20 bytes plus any options.
#[derive(Debug, Clone, Copy)]
pub struct Ipv4Header<'a> {
    fixed: &'a [u8; 20],
    header: &'a [u8],
}

impl<'a> Ipv4Header<'a> {
    /// Parses and checks the header. Returns the header and the bytes after it, not yet cut to
    /// the total length (see [`Ipv4Header::payload`]).
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (fixed, _) = split_array::<20>(input, Layer::Ipv4)?;
        if fixed[0] >> 4 != 4 {
            return Err(Error::invalid(Layer::Ipv4, "version is not 4"));
        }
        let header_len = usize::from(fixed[0] & 0x0F) * 4;
        if header_len < 20 {
            return Err(Error::invalid(Layer::Ipv4, "IHL below 5"));
        }
        let (header, rest) = split_bytes(input, header_len, Layer::Ipv4)?;
        let ip = Ipv4Header { fixed, header };
        if usize::from(ip.total_length()) < header_len {
            return Err(Error::invalid(Layer::Ipv4, "total length shorter than the header"));
        }
        Ok((ip, rest))
    }

    pub fn header_len(&self) -> usize {
        self.header.len()
    }

    /// The whole header including options, as on the wire.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.header
    }

    pub fn tos(&self) -> u8 {
        self.fixed[1]
    }

    pub fn dscp(&self) -> u8 {
        self.fixed[1] >> 2
    }

    pub fn ecn(&self) -> u8 {
        self.fixed[1] & 0x03
    }

    pub fn total_length(&self) -> u16 {
        be16([self.fixed[2], self.fixed[3]])
    }

    pub fn identification(&self) -> u16 {
        be16([self.fixed[4], self.fixed[5]])
    }

    pub fn dont_fragment(&self) -> bool {
        self.fixed[6] & 0x40 != 0
    }

    pub fn more_fragments(&self) -> bool {
        self.fixed[6] & 0x20 != 0
    }

    /// Fragment offset in bytes.
    pub fn fragment_offset(&self) -> u16 {
        (be16([self.fixed[6], self.fixed[7]]) & 0x1FFF) * 8
    }

    /// Is this datagram a fragment (first or later)?
    pub fn is_fragment(&self) -> bool {
        self.more_fragments() || self.fragment_offset() != 0
    }

    pub fn ttl(&self) -> u8 {
        self.fixed[8]
    }

    pub fn protocol(&self) -> u8 {
        self.fixed[9]
    }

    pub fn checksum(&self) -> u16 {
        be16([self.fixed[10], self.fixed[11]])
    }

    pub fn source(&self) -> [u8; 4] {
        [self.fixed[12], self.fixed[13], self.fixed[14], self.fixed[15]]
    }

    pub fn destination(&self) -> [u8; 4] {
        [self.fixed[16], self.fixed[17], self.fixed[18], self.fixed[19]]
    }

    /// The datagram payload per the total-length field, and whether the capture holds all of it.
    /// Bytes after the datagram (Ethernet padding, FCS, trailers) are excluded.
    pub fn payload(&self, after_header: &'a [u8]) -> (&'a [u8], bool) {
        let declared = usize::from(self.total_length()).saturating_sub(self.header_len());
        match after_header.get(..declared) {
            Some(p) => (p, true),
            None => (after_header, false),
        }
    }

    /// Declared payload length (total length minus header length).
    pub fn payload_len(&self) -> usize {
        usize::from(self.total_length()).saturating_sub(self.header_len())
    }
}

/// An IPv4 header without options, to write ([`Ipv4Repr::emit`]) or read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub dscp: u8,
    pub ecn: u8,
    pub identification: u16,
    pub dont_fragment: bool,
    pub ttl: u8,
    pub protocol: u8,
    pub source: [u8; 4],
    pub destination: [u8; 4],
    /// The bytes after the header; the total length is 20 more (at most 65,535).
    pub payload_len: u16,
}

impl Ipv4Repr {
    pub fn of(ip: &Ipv4Header<'_>) -> Self {
        Ipv4Repr {
            dscp: ip.dscp(),
            ecn: ip.ecn(),
            identification: ip.identification(),
            dont_fragment: ip.dont_fragment(),
            ttl: ip.ttl(),
            protocol: ip.protocol(),
            source: ip.source(),
            destination: ip.destination(),
            payload_len: ip.total_length().saturating_sub(MIN_HEADER_LEN as u16),
        }
    }

    /// The 20 bytes, with the header checksum (RFC 791 §3.1); not a fragment.
    pub fn emit(&self) -> [u8; MIN_HEADER_LEN] {
        let tos = (self.dscp << 2) | (self.ecn & 0x03);
        let total = self.payload_len.saturating_add(MIN_HEADER_LEN as u16);
        let flags: u16 = if self.dont_fragment { 0x4000 } else { 0 };
        let with_checksum = |checksum: u16| {
            join(&[
                &[0x45, tos],
                &total.to_be_bytes(),
                &self.identification.to_be_bytes(),
                &flags.to_be_bytes(),
                &[self.ttl, self.protocol],
                &checksum.to_be_bytes(),
                &self.source,
                &self.destination,
            ])
        };
        with_checksum(header_checksum(&with_checksum(0)))
    }
}

/// The Internet checksum of `header` (RFC 1071): the ones' complement of the ones' complement
/// sum of its 16-bit words. Over a header whose checksum field holds 0 it is the value to put
/// there; over a whole correct header it is 0.
pub fn header_checksum(header: &[u8]) -> u16 {
    let words = header
        .chunks(2)
        .map(|w| u32::from(w.first().copied().unwrap_or(0)) << 8 | u32::from(w.get(1).copied().unwrap_or(0)));
    // the carry is added back word by word, so the sum never passes 0x1FFFF however long
    let sum = words.fold(0u32, |sum, word| {
        let sum = sum + word;
        (sum & 0xFFFF) + (sum >> 16)
    });
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_of_any_length_neither_overflows_nor_loses_a_carry() {
        // 65,538 words of 0xFFFF: a plain u32 sum would overflow; their ones' complement sum is 0xFFFF
        assert_eq!(header_checksum(&[0xFF; 131_076]), 0);
        assert_eq!(header_checksum(&[0x80, 0x00, 0x80, 0x00]), !1);
    }

    /// 10.1.0.1 -> 10.1.0.2, UDP, total length 40, TOS 0x6a (DSCP 26, ECT(0)), TTL 64, DF.
    pub(crate) const HEADER: [u8; 20] =
        [0x45, 0x6a, 0x00, 0x28, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0xab, 0xcd, 10, 1, 0, 1, 10, 1, 0, 2];

    #[test]
    fn fields() {
        let mut frame = HEADER.to_vec();
        frame.extend_from_slice(&[0xAA; 24]); // 20 payload + 4 trailer
        let (ip, rest) = Ipv4Header::parse(&frame).unwrap();
        assert_eq!((ip.dscp(), ip.ecn(), ip.tos()), (26, 2, 0x6a));
        assert_eq!((ip.ttl(), ip.protocol(), ip.total_length()), (64, PROTO_UDP, 40));
        assert_eq!(ip.identification(), 0x1234);
        assert!(ip.dont_fragment() && !ip.is_fragment());
        assert_eq!(ip.checksum(), 0xabcd);
        assert_eq!(ip.source(), [10, 1, 0, 1]);
        assert_eq!(ip.destination(), [10, 1, 0, 2]);
        let (payload, complete) = ip.payload(rest);
        assert_eq!((payload.len(), complete), (20, true));
        assert_eq!(ip.payload_len(), 20);
    }

    #[test]
    fn options_are_skipped() {
        let mut frame = HEADER.to_vec();
        frame[0] = 0x46; // IHL 6
        frame[3] = 0x2c;
        frame.extend_from_slice(&[1, 1, 1, 0, 0xEE]); // NOP NOP NOP EOL, then payload
        let (ip, rest) = Ipv4Header::parse(&frame).unwrap();
        assert_eq!(ip.header_len(), 24);
        assert_eq!(rest, &[0xEE]);
        assert_eq!(ip.payload(rest), (&[0xEE][..], false));
    }

    #[test]
    fn fragments_are_recognised() {
        let mut frame = HEADER.to_vec();
        frame[6] = 0x20; // MF
        assert!(Ipv4Header::parse(&frame).unwrap().0.is_fragment());
        frame[6] = 0x00;
        frame[7] = 0x03; // offset 24 bytes
        let (ip, _) = Ipv4Header::parse(&frame).unwrap();
        assert_eq!(ip.fragment_offset(), 24);
        assert!(ip.is_fragment());
    }

    #[test]
    fn malformed_headers() {
        let mut frame = HEADER.to_vec();
        frame[0] = 0x44;
        assert_eq!(Ipv4Header::parse(&frame).unwrap_err(), Error::invalid(Layer::Ipv4, "IHL below 5"));
        frame[0] = 0x65;
        assert_eq!(Ipv4Header::parse(&frame).unwrap_err(), Error::invalid(Layer::Ipv4, "version is not 4"));
        frame[0] = 0x4f; // 60-byte header, only 20 present
        assert_eq!(Ipv4Header::parse(&frame).unwrap_err(), Error::truncated(Layer::Ipv4, 60, 20));
        frame[0] = 0x45;
        frame[2] = 0;
        frame[3] = 19;
        assert_eq!(
            Ipv4Header::parse(&frame).unwrap_err(),
            Error::invalid(Layer::Ipv4, "total length shorter than the header")
        );
        assert_eq!(Ipv4Header::parse(&HEADER[..19]).unwrap_err(), Error::truncated(Layer::Ipv4, 20, 19));
    }
}
