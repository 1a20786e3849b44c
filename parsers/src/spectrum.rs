//! The vendor header NVIDIA Spectrum switches put between GRE and the mirrored frame when they
//! mirror to a collector (SONiC's "everflow" on Spectrum: GRE protocol 0x8949, no key or
//! sequence number). The header's layout is not public ("mirror header version 1" in the SAI
//! implementation): it is 22 bytes in SONiC's tests (the inner frame at byte 60 of the outer
//! one), and newer parts may differ by a few bytes (SONiC's newer tests allow the mirror's
//! overhead to vary by 8 bytes each way). So the header is not read by one fixed length: the
//! mirrored frame is where a plausible Ethernet header starts ([`frame_plausible_at`]), 22
//! bytes on if one starts there, else the nearest such place from [`MIN_LEN`] to [`MAX_LEN`].
//! `../shared/mirror-formats.md`.

use crate::error::{Error, Layer};
use crate::ethernet::frame_plausible_at;

/// The GRE protocol type of Spectrum's mirror copies.
pub const GRE_PROTO_SPECTRUM: u16 = 0x8949;

/// The header's length on the Spectrum parts SONiC's tests run on.
pub const USUAL_LEN: usize = 22;
/// The shortest and longest headers looked for.
pub const MIN_LEN: usize = USUAL_LEN - 8;
pub const MAX_LEN: usize = USUAL_LEN + 8;

/// The vendor header's bytes (shown raw: their fields are not public).
#[derive(Debug, Clone, Copy)]
pub struct SpectrumHeader<'a> {
    bytes: &'a [u8],
}

impl<'a> SpectrumHeader<'a> {
    /// Finds the mirrored frame in the bytes after the GRE header; returns the vendor header
    /// and the frame.
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let len = std::iter::once(USUAL_LEN)
            .chain(MIN_LEN..=MAX_LEN)
            .find(|&len| frame_plausible_at(input, len))
            .ok_or(if input.len() < MIN_LEN + 14 {
                Error::truncated(Layer::Spectrum, MIN_LEN + 14, input.len())
            } else {
                Error::invalid(Layer::Spectrum, "no Ethernet frame after a vendor header of 14 to 30 bytes")
            })?;
        match (input.get(..len), input.get(len..)) {
            (Some(bytes), Some(frame)) => Ok((SpectrumHeader { bytes }, frame)),
            _ => Err(Error::truncated(Layer::Spectrum, len, input.len())),
        }
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet header with the IPv4 EtherType and the first bytes of an IPv4 header.
    const FRAME: [u8; 16] = [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0x00];

    fn after_header(len: usize, fill: u8) -> Vec<u8> {
        let mut bytes = vec![fill; len];
        bytes.extend_from_slice(&FRAME);
        bytes
    }

    #[test]
    fn the_frame_is_found_after_headers_of_every_length_tried() {
        for len in MIN_LEN..=MAX_LEN {
            let bytes = after_header(len, 0xA5);
            let (header, frame) = SpectrumHeader::parse(&bytes).unwrap();
            assert_eq!((header.as_bytes().len(), frame), (len, &FRAME[..]), "{len}");
        }
    }

    #[test]
    fn an_ethertype_alone_is_not_a_frame() {
        // a header of 30 bytes whose bytes 26..28 hold the IPv4 EtherType with no IPv4
        // version after it (a frame at 14, were that enough): the frame is found at 30
        let mut bytes = after_header(MAX_LEN, 0);
        bytes[MIN_LEN + 12..MIN_LEN + 14].copy_from_slice(&[0x08, 0x00]);
        let (header, frame) = SpectrumHeader::parse(&bytes).unwrap();
        assert_eq!((header.as_bytes().len(), frame), (MAX_LEN, &FRAME[..]));
    }

    #[test]
    fn no_frame_or_too_few_bytes_are_errors() {
        assert!(matches!(SpectrumHeader::parse(&[0xA5; 64]), Err(Error { layer: Layer::Spectrum, .. })));
        assert_eq!(SpectrumHeader::parse(&[0; 10]).unwrap_err(), Error::truncated(Layer::Spectrum, 28, 10));
    }
}
