//! IPv6 header (RFC 8200 §3) and extension-header skipping (§4). The upper-layer protocol is
//! found by walking Hop-by-Hop, Routing, Fragment, Destination Options and AH headers.

use crate::emit::join;
use crate::error::{Error, Layer, be16, split_array, split_bytes};

/// An IPv6 fixed header view (40 bytes).
#[derive(Debug, Clone, Copy)]
pub struct Ipv6Header<'a> {
    bytes: &'a [u8; 40],
}

/// Where the upper-layer payload starts after the extension headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpperLayer<'a> {
    /// Upper-layer protocol number (17 = UDP).
    pub protocol: u8,
    /// Upper-layer bytes (cut to the payload length when the capture holds them all).
    pub payload: &'a [u8],
    /// Bytes of extension headers skipped.
    pub extension_len: usize,
    /// The datagram is a fragment (a Fragment header with offset or M set).
    pub fragment: bool,
    /// The capture holds the whole payload.
    pub complete: bool,
}

const HOP_BY_HOP: u8 = 0;
const ROUTING: u8 = 43;
const FRAGMENT: u8 = 44;
const AUTH: u8 = 51;
const DEST_OPTS: u8 = 60;
/// Extension headers walked before giving up: more than any real stack uses.
const MAX_EXTENSION_HEADERS: usize = 8;

impl<'a> Ipv6Header<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<40>(input, Layer::Ipv6)?;
        if bytes[0] >> 4 != 6 {
            return Err(Error::invalid(Layer::Ipv6, "version is not 6"));
        }
        Ok((Ipv6Header { bytes }, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8; 40] {
        self.bytes
    }

    pub fn traffic_class(&self) -> u8 {
        (self.bytes[0] << 4) | (self.bytes[1] >> 4)
    }

    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 0x03
    }

    pub fn flow_label(&self) -> u32 {
        (u32::from(self.bytes[1] & 0x0F) << 16) | (u32::from(self.bytes[2]) << 8) | u32::from(self.bytes[3])
    }

    pub fn payload_length(&self) -> u16 {
        be16([self.bytes[4], self.bytes[5]])
    }

    pub fn next_header(&self) -> u8 {
        self.bytes[6]
    }

    pub fn hop_limit(&self) -> u8 {
        self.bytes[7]
    }

    pub fn source(&self) -> [u8; 16] {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.bytes[8..24]);
        a
    }

    pub fn destination(&self) -> [u8; 16] {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.bytes[24..40]);
        a
    }

    /// Walks the extension headers in `after_header` (the bytes after the fixed header) and
    /// returns the upper-layer protocol and payload. ESP (50) and No Next Header (59) end the
    /// walk with that protocol number, since nothing after them can be decoded.
    pub fn upper_layer(&self, after_header: &'a [u8]) -> Result<UpperLayer<'a>, Error> {
        let declared = usize::from(self.payload_length());
        let (mut data, complete) = match after_header.get(..declared) {
            Some(d) => (d, true),
            None => (after_header, false),
        };
        let mut protocol = self.next_header();
        let mut extension_len = 0usize;
        let mut fragment = false;
        for _ in 0..MAX_EXTENSION_HEADERS {
            let len = match protocol {
                HOP_BY_HOP | ROUTING | DEST_OPTS => {
                    let (h, _) = split_array::<2>(data, Layer::Ipv6)?;
                    (usize::from(h[1]) + 1) * 8
                }
                AUTH => {
                    let (h, _) = split_array::<2>(data, Layer::Ipv6)?;
                    (usize::from(h[1]) + 2) * 4
                }
                FRAGMENT => {
                    let (h, _) = split_array::<8>(data, Layer::Ipv6)?;
                    let offset_flags = be16([h[2], h[3]]);
                    fragment = offset_flags & 0xFFF9 != 0;
                    8
                }
                _ => return Ok(UpperLayer { protocol, payload: data, extension_len, fragment, complete }),
            };
            let (header, rest) = split_bytes(data, len, Layer::Ipv6)?;
            protocol = header.first().copied().unwrap_or(0);
            extension_len += len;
            data = rest;
            if fragment {
                return Ok(UpperLayer { protocol, payload: data, extension_len, fragment, complete });
            }
        }
        Err(Error::invalid(Layer::Ipv6, "too many extension headers"))
    }
}

/// An IPv6 fixed header (or a GRH, which has its shape), to write ([`Ipv6Repr::emit`]) or read
/// whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Repr {
    pub traffic_class: u8,
    /// 20 bits.
    pub flow_label: u32,
    pub payload_length: u16,
    pub next_header: u8,
    pub hop_limit: u8,
    pub source: [u8; 16],
    pub destination: [u8; 16],
}

impl Ipv6Repr {
    pub fn of(ip: &Ipv6Header<'_>) -> Self {
        Ipv6Repr {
            traffic_class: ip.traffic_class(),
            flow_label: ip.flow_label(),
            payload_length: ip.payload_length(),
            next_header: ip.next_header(),
            hop_limit: ip.hop_limit(),
            source: ip.source(),
            destination: ip.destination(),
        }
    }

    /// The 40 bytes: version 6, then the fields (the flow label keeps its low 20 bits).
    pub fn emit(&self) -> [u8; 40] {
        let word = (6u32 << 28) | (u32::from(self.traffic_class) << 20) | (self.flow_label & 0xF_FFFF);
        join(&[
            &word.to_be_bytes(),
            &self.payload_length.to_be_bytes(),
            &[self.next_header, self.hop_limit],
            &self.source,
            &self.destination,
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TC 0x6a (DSCP 26, ECT(0)), flow label 0x12345, payload 8, next UDP, hop limit 63,
    /// fd00::1 -> fd00::2.
    const HEADER: [u8; 40] = [
        0x66, 0xa1, 0x23, 0x45, 0x00, 0x08, 0x11, 0x3f, //
        0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
    ];

    #[test]
    fn fixed_header_fields() {
        let (ip, _) = Ipv6Header::parse(&HEADER).unwrap();
        assert_eq!(ip.traffic_class(), 0x6a);
        assert_eq!((ip.dscp(), ip.ecn()), (26, 2));
        assert_eq!(ip.flow_label(), 0x12345);
        assert_eq!((ip.payload_length(), ip.next_header(), ip.hop_limit()), (8, 17, 63));
        assert_eq!(ip.source()[15], 1);
        assert_eq!(ip.destination()[0], 0xfd);
    }

    #[test]
    fn no_extension_headers() {
        let mut frame = HEADER.to_vec();
        frame.extend_from_slice(&[9; 8]);
        frame.extend_from_slice(&[0xFC; 4]); // trailer beyond payload length
        let (ip, rest) = Ipv6Header::parse(&frame).unwrap();
        let up = ip.upper_layer(rest).unwrap();
        assert_eq!(
            (up.protocol, up.payload.len(), up.extension_len, up.fragment, up.complete),
            (17, 8, 0, false, true)
        );
    }

    #[test]
    fn hop_by_hop_and_dest_options_are_skipped() {
        let mut frame = HEADER.to_vec();
        frame[6] = HOP_BY_HOP;
        frame[5] = 8 + 16 + 8;
        frame.extend_from_slice(&[DEST_OPTS, 0, 1, 4, 0, 0, 0, 0]); // 8 bytes
        frame.extend_from_slice(&[17, 1, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 0, 0]); // 16 bytes
        frame.extend_from_slice(&[7; 8]);
        let (ip, rest) = Ipv6Header::parse(&frame).unwrap();
        let up = ip.upper_layer(rest).unwrap();
        assert_eq!((up.protocol, up.extension_len, up.payload), (17, 24, &[7u8; 8][..]));
    }

    #[test]
    fn fragment_header_marks_fragment() {
        let mut frame = HEADER.to_vec();
        frame[6] = FRAGMENT;
        frame[5] = 16;
        frame.extend_from_slice(&[17, 0, 0x00, 0x01, 0, 0, 0, 1]); // offset 0, M = 1
        frame.extend_from_slice(&[0; 8]);
        let (ip, rest) = Ipv6Header::parse(&frame).unwrap();
        let up = ip.upper_layer(rest).unwrap();
        assert!(up.fragment);
        assert_eq!(up.protocol, 17);
    }

    #[test]
    fn malformed() {
        assert_eq!(Ipv6Header::parse(&HEADER[..39]).unwrap_err(), Error::truncated(Layer::Ipv6, 40, 39));
        let mut frame = HEADER.to_vec();
        frame[0] = 0x45;
        assert_eq!(Ipv6Header::parse(&frame).unwrap_err(), Error::invalid(Layer::Ipv6, "version is not 6"));
        // an endless chain of 8-byte destination-options headers
        let mut frame = HEADER.to_vec();
        frame[6] = DEST_OPTS;
        frame[4] = 1;
        frame[5] = 0;
        for _ in 0..32 {
            frame.extend_from_slice(&[DEST_OPTS, 0, 1, 4, 0, 0, 0, 0]);
        }
        let (ip, rest) = Ipv6Header::parse(&frame).unwrap();
        assert_eq!(ip.upper_layer(rest).unwrap_err(), Error::invalid(Layer::Ipv6, "too many extension headers"));
        // extension header cut short
        let mut frame = HEADER.to_vec();
        frame[6] = ROUTING;
        frame.extend_from_slice(&[17, 2, 0]);
        let (ip, rest) = Ipv6Header::parse(&frame).unwrap();
        assert_eq!(ip.upper_layer(rest).unwrap_err(), Error::truncated(Layer::Ipv6, 24, 3));
    }
}
