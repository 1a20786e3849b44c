//! The InfiniBand Local Route Header (IBA §7.7; 8 bytes, big-endian), which starts every packet
//! on an InfiniBand link: virtual lane, link version, service level, which header follows
//! (LNH), destination and source LIDs and the packet's length in 4-byte words, counting the
//! LRH through the ICRC (not the VCRC).

use crate::emit::join;
use crate::error::{Error, Layer, be16, split_array};

pub const LRH_LEN: usize = 8;

/// What follows the LRH (its LNH field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextHeader {
    /// Raw: a non-IBA transport (LNH 0).
    Raw,
    /// IPv6 over InfiniBand, not an IBA transport (LNH 1).
    Ipv6,
    /// IBA local: the BTH follows (LNH 2).
    IbaLocal,
    /// IBA global: a GRH, then the BTH (LNH 3).
    IbaGlobal,
}

/// The permissive LID, which every port accepts.
pub const PERMISSIVE_LID: u16 = 0xFFFF;

/// An LRH view.
#[derive(Debug, Clone, Copy)]
pub struct LrhHeader<'a> {
    bytes: &'a [u8; LRH_LEN],
}

impl<'a> LrhHeader<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<LRH_LEN>(input, Layer::Lrh)?;
        let lrh = LrhHeader { bytes };
        if usize::from(lrh.packet_words()) * 4 < LRH_LEN {
            return Err(Error::invalid(Layer::Lrh, "PktLen shorter than the LRH"));
        }
        Ok((lrh, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8; LRH_LEN] {
        self.bytes
    }

    /// The virtual lane (15: subnet management).
    pub fn vl(&self) -> u8 {
        self.bytes[0] >> 4
    }

    /// The link version (0).
    pub fn lver(&self) -> u8 {
        self.bytes[0] & 0x0F
    }

    /// The service level.
    pub fn sl(&self) -> u8 {
        self.bytes[1] >> 4
    }

    /// The 2 reserved bits between SL and LNH.
    pub fn reserved2(&self) -> u8 {
        (self.bytes[1] >> 2) & 0x03
    }

    /// The LNH field's 2 bits.
    pub fn lnh(&self) -> u8 {
        self.bytes[1] & 0x03
    }

    pub fn next_header(&self) -> NextHeader {
        match self.lnh() {
            0 => NextHeader::Raw,
            1 => NextHeader::Ipv6,
            2 => NextHeader::IbaLocal,
            _ => NextHeader::IbaGlobal,
        }
    }

    pub fn dlid(&self) -> u16 {
        be16([self.bytes[2], self.bytes[3]])
    }

    /// PktLen: the packet's length in 4-byte words, LRH through ICRC.
    pub fn packet_words(&self) -> u16 {
        be16([self.bytes[4], self.bytes[5]]) & 0x07FF
    }

    /// The 5 reserved bits before PktLen.
    pub fn reserved5(&self) -> u8 {
        self.bytes[4] >> 3
    }

    /// The packet's length in bytes, LRH through ICRC (the VCRC's 2 bytes follow).
    pub fn packet_len(&self) -> usize {
        usize::from(self.packet_words()) * 4
    }

    pub fn slid(&self) -> u16 {
        be16([self.bytes[6], self.bytes[7]])
    }
}

impl NextHeader {
    /// The LNH field's value.
    pub fn lnh(self) -> u8 {
        match self {
            NextHeader::Raw => 0,
            NextHeader::Ipv6 => 1,
            NextHeader::IbaLocal => 2,
            NextHeader::IbaGlobal => 3,
        }
    }
}

/// An LRH, to write ([`LrhRepr::emit`]) or read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LrhRepr {
    pub vl: u8,
    pub lver: u8,
    pub sl: u8,
    pub next_header: NextHeader,
    pub dlid: u16,
    /// PktLen: LRH through ICRC in 4-byte words (11 bits).
    pub packet_words: u16,
    pub slid: u16,
}

impl LrhRepr {
    pub fn of(lrh: &LrhHeader<'_>) -> Self {
        LrhRepr {
            vl: lrh.vl(),
            lver: lrh.lver(),
            sl: lrh.sl(),
            next_header: lrh.next_header(),
            dlid: lrh.dlid(),
            packet_words: lrh.packet_words(),
            slid: lrh.slid(),
        }
    }

    /// The 8 bytes; reserved bits are 0.
    pub fn emit(&self) -> [u8; LRH_LEN] {
        let byte0 = (self.vl << 4) | (self.lver & 0x0F);
        let byte1 = (self.sl << 4) | self.next_header.lnh();
        join(&[
            &[byte0, byte1],
            &self.dlid.to_be_bytes(),
            &(self.packet_words & 0x07FF).to_be_bytes(),
            &self.slid.to_be_bytes(),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_an_iba_local_header() {
        // VL 0, LVer 0; SL 0, LNH 2; DLID 1; PktLen 0x0F words (60 bytes); SLID 4
        let bytes = [0x00, 0x02, 0x00, 0x01, 0x00, 0x0F, 0x00, 0x04, 0xAA];
        let (lrh, rest) = LrhHeader::parse(&bytes).unwrap();
        assert_eq!((lrh.vl(), lrh.lver(), lrh.sl(), lrh.next_header()), (0, 0, 0, NextHeader::IbaLocal));
        assert_eq!((lrh.dlid(), lrh.slid(), lrh.packet_words(), lrh.packet_len()), (1, 4, 15, 60));
        assert_eq!(rest, [0xAA]);
    }

    #[test]
    fn management_lane_global_header_and_reserved_bits() {
        // VL 15, LVer 0; SL 9, reserved bits set, LNH 3; reserved PktLen bits ignored
        let bytes = [0xF0, 0x9F, 0xFF, 0xFF, 0xF8, 0x12, 0x00, 0x07];
        let (lrh, _) = LrhHeader::parse(&bytes).unwrap();
        assert_eq!((lrh.vl(), lrh.sl(), lrh.next_header()), (15, 9, NextHeader::IbaGlobal));
        assert_eq!((lrh.dlid(), lrh.packet_words()), (PERMISSIVE_LID, 0x12));
        assert_eq!((lrh.reserved2(), lrh.reserved5()), (3, 0x1F));
    }

    #[test]
    fn short_input_and_a_pktlen_shorter_than_the_header_are_errors() {
        assert_eq!(LrhHeader::parse(&[0; 7]).unwrap_err(), Error::truncated(Layer::Lrh, 8, 7));
        assert!(LrhHeader::parse(&[0, 2, 0, 1, 0, 1, 0, 4]).is_err());
    }
}
