//! Ultra Ethernet Transport (UET, UEC specification 1.0 / 1.0.1): the optional entropy header
//! of native-IP encapsulation, the TSS security header, the Packet Delivery Sublayer (PDS)
//! header and the Semantic Sublayer (SES) header that its `next_hdr` selects.
//!
//! The layouts are those the open implementations agree on (Wireshark's `packet-uet.c`, the
//! consortium's reference provider `uet-ref-prov`, xdp2's `include/uet/`); where they disagree
//! the layout two of them share is taken, and docs/decoding.md says what Wireshark shows
//! differently. Every multi-byte field is big-endian.
//!
//! A packet is `[entropy (native IP only)] (TSS ciphertext tag | PDS [SES] payload CRC32C)`:
//! with a TSS header the rest is ciphertext ending in a 16-byte AES-GCM tag; without, a 4-byte
//! CRC32C trailer follows the payload (docs/decoding.md, "UET integrity").
//!
//! Beside each view, as for the other headers of this crate, a `Repr` writes the header
//! (`emit`) and reads one whole (`of`): [`EntropyRepr`], [`TssRepr`], [`pds::PdsRepr`],
//! [`ses::SesRequestRepr`] and [`ses::SesResponseRepr`]; the sample generator composes its
//! packets from them (`src/generate/uet.rs`).

pub mod crc;
pub mod names;
pub mod pds;
pub mod ses;

use crate::emit::join;
use crate::error::{Error, Layer, be16, be32_at, be64_at, byte_at, split_array, split_bytes};

pub use pds::{Pds, PdsRepr, PdsType};
pub use ses::{Ses, SesRequest, SesRequestRepr, SesResponse, SesResponseRepr};

/// The UDP destination port of UET over UDP (Wireshark and xdp2).
pub const UDP_PORT: u16 = 4793;
/// The UDP port the consortium's reference provider uses.
pub const REFERENCE_PROVIDER_PORT: u16 = 49150;
/// The IP protocol number of native UET in the reference provider (RFC 3692's experimental
/// 253: no number is assigned).
pub const IP_PROTOCOL: u8 = 253;

/// The CRC32C trailer of a packet without TSS.
pub const CRC_LEN: usize = 4;
/// The AES-GCM tag that ends a packet with TSS.
pub const TAG_LEN: usize = 16;

/// The 5-bit type that starts a TSS header (PDS types are 2..=14).
const TSS_TYPE: u8 = 1;
/// The TSS header's first word: secure port (an SSI word follows), association number, and
/// the secure domain index in the low 24 bits.
const TSS_SP: u32 = 0x0400_0000;
const TSS_AN: u32 = 0x0100_0000;
const TSS_SDI: u32 = 0x00FF_FFFF;

/// The 4-byte entropy header of native-IP encapsulation: over UDP the source port carries the
/// entropy and no such header is sent.
#[derive(Debug, Clone, Copy)]
pub struct Entropy<'a> {
    bytes: &'a [u8; 4],
}

impl<'a> Entropy<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<4>(input, Layer::UetPds)?;
        Ok((Entropy { bytes }, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8; 4] {
        self.bytes
    }

    pub fn entropy(&self) -> u16 {
        be16([self.bytes[0], self.bytes[1]])
    }

    pub fn reserved(&self) -> u16 {
        be16([self.bytes[2], self.bytes[3]])
    }
}

/// The TSS (transport security sublayer) header: 12 bytes, or 16 with the secure-port flag's
/// SSI word.
#[derive(Debug, Clone, Copy)]
pub struct Tss<'a> {
    /// 12 or 16 bytes.
    bytes: &'a [u8],
}

impl<'a> Tss<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (first, _) = split_array::<4>(input, Layer::UetTss)?;
        if first[0] >> 3 != TSS_TYPE {
            return Err(Error::invalid(Layer::UetTss, "not a TSS header"));
        }
        let len = if u32::from_be_bytes(*first) & TSS_SP != 0 { 16 } else { 12 };
        let (bytes, rest) = split_bytes(input, len, Layer::UetTss)?;
        Ok((Tss { bytes }, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    fn word(&self) -> u32 {
        be32_at(self.bytes, 0)
    }

    pub fn tss_type(&self) -> u8 {
        byte_at(self.bytes, 0) >> 3
    }

    /// Secure port: an SSI word follows.
    pub fn sp(&self) -> bool {
        self.word() & TSS_SP != 0
    }

    /// Association number (which of two keys).
    pub fn an(&self) -> bool {
        self.word() & TSS_AN != 0
    }

    /// Secure domain index (24 bits).
    pub fn sdi(&self) -> u32 {
        self.word() & TSS_SDI
    }

    pub fn ssi(&self) -> Option<u32> {
        self.sp().then(|| be32_at(self.bytes, 4))
    }

    /// Transmit security counter (the reference provider splits it: epoch 16 bits, counter 48).
    pub fn tsc(&self) -> u64 {
        be64_at(self.bytes, self.bytes.len().saturating_sub(8))
    }

    pub fn header_len(&self) -> usize {
        self.bytes.len()
    }
}

/// An entropy header's field, to write one ([`EntropyRepr::emit`]); the reserved half is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntropyRepr {
    pub entropy: u16,
}

impl EntropyRepr {
    pub fn of(header: &Entropy<'_>) -> Self {
        EntropyRepr { entropy: header.entropy() }
    }

    pub fn emit(&self) -> [u8; 4] {
        join(&[&self.entropy.to_be_bytes()])
    }
}

/// A TSS header's fields, to write one ([`TssRepr::emit`]) or to read one whole
/// ([`TssRepr::of`]); an SSI sets the secure-port flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TssRepr {
    pub an: bool,
    /// 24 bits.
    pub sdi: u32,
    pub ssi: Option<u32>,
    pub tsc: u64,
}

impl TssRepr {
    pub fn of(tss: &Tss<'_>) -> Self {
        TssRepr { an: tss.an(), sdi: tss.sdi(), ssi: tss.ssi(), tsc: tss.tsc() }
    }

    /// Writes the header's 12 bytes, 16 with the SSI, through `put`.
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        let sp = if self.ssi.is_some() { TSS_SP } else { 0 };
        let an = if self.an { TSS_AN } else { 0 };
        put(&(u32::from(TSS_TYPE) << 27 | sp | an | self.sdi & TSS_SDI).to_be_bytes());
        if let Some(ssi) = self.ssi {
            put(&ssi.to_be_bytes());
        }
        put(&self.tsc.to_be_bytes());
    }
}

/// A UET packet from its first header (after UDP, or after the entropy header).
#[derive(Debug, Clone, Copy)]
pub enum Uet<'a> {
    /// Encrypted: the TSS header, then ciphertext (the PDS and SES headers and the payload are
    /// not decoded) and, when the packet is complete, the AES-GCM tag.
    Secured { tss: Tss<'a>, ciphertext: &'a [u8], tag: Option<&'a [u8]> },
    /// In the clear: the PDS header, the SES header it selects, the payload and, when the packet
    /// is complete, the CRC32C trailer.
    Clear { pds: Pds<'a>, ses: Option<Ses<'a>>, payload: &'a [u8], crc: Option<&'a [u8; CRC_LEN]> },
}

impl<'a> Uet<'a> {
    /// Parses `input`, the bytes from the first UET header to the end of the captured packet;
    /// `complete` says whether the capture holds the packet to its end (then the trailer is its
    /// last bytes).
    pub fn parse(input: &'a [u8], complete: bool) -> Result<Self, Error> {
        let first = input.first().copied().ok_or(Error::truncated(Layer::UetPds, 2, 0))?;
        if first >> 3 == TSS_TYPE {
            let (tss, rest) = Tss::parse(input)?;
            let (ciphertext, tag) = trailer(rest, complete, TAG_LEN, Layer::UetTss)?;
            return Ok(Uet::Secured { tss, ciphertext, tag });
        }
        let (pds, rest) = Pds::parse(input)?;
        let (body, crc) = trailer(rest, complete, CRC_LEN, Layer::UetPds)?;
        let crc = crc.and_then(|c| <&[u8; CRC_LEN]>::try_from(c).ok());
        let (ses, payload) = match Ses::parse(pds.next_header(), pds.pds_type(), body)? {
            Some((ses, payload)) => (Some(ses), payload),
            None => (None, body),
        };
        Ok(Uet::Clear { pds, ses, payload, crc })
    }
}

/// `rest` split before its last `len` bytes when the packet is `complete`.
fn trailer(rest: &[u8], complete: bool, len: usize, layer: Layer) -> Result<(&[u8], Option<&[u8]>), Error> {
    if !complete {
        return Ok((rest, None));
    }
    let body_len = rest.len().checked_sub(len).ok_or(Error::truncated(layer, len, rest.len()))?;
    let (body, trailer) = split_bytes(rest, body_len, layer)?;
    Ok((body, Some(trailer)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tss_packet_is_ciphertext_and_a_tag() {
        // type 1, SP set, AN set, SDI 0x000102; SSI; TSC
        let mut p = vec![0x0D, 0x00, 0x01, 0x02, 0, 0, 0, 9, 0, 1, 0, 0, 0, 0, 0, 5];
        p.extend_from_slice(&[0xAA; 20]);
        p.extend_from_slice(&[0xEE; TAG_LEN]);
        let Uet::Secured { tss, ciphertext, tag } = Uet::parse(&p, true).unwrap() else { panic!("secured") };
        assert_eq!((tss.tss_type(), tss.sp(), tss.an(), tss.sdi(), tss.ssi()), (1, true, true, 0x0102, Some(9)));
        assert_eq!((tss.tsc(), tss.header_len()), (0x0001_0000_0000_0005, 16));
        assert_eq!((ciphertext.len(), tag.map(<[u8]>::len)), (20, Some(TAG_LEN)));
        let Uet::Secured { tag, ciphertext, .. } = Uet::parse(&p, false).unwrap() else { panic!("secured") };
        assert_eq!((tag, ciphertext.len()), (None, 20 + TAG_LEN), "a cut packet has no trailer");
    }

    #[test]
    fn the_entropy_header_and_bad_input_never_panic() {
        let (e, rest) = Entropy::parse(&[0x12, 0x34, 0, 0, 0x10]).unwrap();
        assert_eq!((e.entropy(), e.reserved(), rest.len()), (0x1234, 0, 1));
        for len in 0..64 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let _ = Uet::parse(&bytes, true);
            let _ = Uet::parse(&bytes, false);
        }
        assert!(Uet::parse(&[], true).is_err());
    }

    #[test]
    fn entropy_and_tss_headers_round_trip() {
        let entropy = EntropyRepr { entropy: 0x1234 };
        let bytes = entropy.emit();
        let (e, _) = Entropy::parse(&bytes).unwrap();
        assert_eq!((EntropyRepr::of(&e), e.reserved()), (entropy, 0));
        for ssi in [None, Some(9)] {
            let tss = TssRepr { an: ssi.is_some(), sdi: 0x0102, ssi, tsc: 0x0001_0000_0000_0005 };
            let mut b = Vec::new();
            tss.emit(|part| b.extend_from_slice(part));
            let (t, rest) = Tss::parse(&b).unwrap();
            assert_eq!((TssRepr::of(&t), t.tss_type(), t.header_len(), rest.len()), (tss, 1, b.len(), 0));
        }
    }
}
