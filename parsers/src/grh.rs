//! The InfiniBand Global Route Header (IBA §8.3), which RoCEv1 (EtherType 0x8915) places
//! between the Ethernet header and the BTH. It is IPv6-shaped: IPVer 6, TClass, FlowLabel,
//! PayLen (bytes after the GRH up to and including the ICRC), NxtHdr 0x1B (BTH), HopLmt,
//! SGID, DGID.

use crate::error::{Error, Layer, be16, split_array};

/// NxtHdr value announcing a BTH (IBA §8.3.1).
pub const NEXT_HEADER_BTH: u8 = 0x1B;

/// A GRH view (40 bytes).
#[derive(Debug, Clone, Copy)]
pub struct GrhHeader<'a> {
    bytes: &'a [u8; 40],
}

impl<'a> GrhHeader<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<40>(input, Layer::Grh)?;
        if bytes[0] >> 4 != 6 {
            return Err(Error::invalid(Layer::Grh, "IPVer is not 6"));
        }
        if bytes[6] != NEXT_HEADER_BTH {
            return Err(Error::invalid(Layer::Grh, "NxtHdr is not a BTH (0x1B)"));
        }
        Ok((GrhHeader { bytes }, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8; 40] {
        self.bytes
    }

    pub fn traffic_class(&self) -> u8 {
        (self.bytes[0] << 4) | (self.bytes[1] >> 4)
    }

    pub fn flow_label(&self) -> u32 {
        (u32::from(self.bytes[1] & 0x0F) << 16) | (u32::from(self.bytes[2]) << 8) | u32::from(self.bytes[3])
    }

    /// Bytes after the GRH, BTH to ICRC inclusive.
    pub fn payload_length(&self) -> u16 {
        be16([self.bytes[4], self.bytes[5]])
    }

    pub fn next_header(&self) -> u8 {
        self.bytes[6]
    }

    pub fn hop_limit(&self) -> u8 {
        self.bytes[7]
    }

    pub fn source_gid(&self) -> [u8; 16] {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.bytes[8..24]);
        a
    }

    pub fn destination_gid(&self) -> [u8; 16] {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.bytes[24..40]);
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let mut b = vec![0x60, 0x30, 0x00, 0x07, 0x01, 0x2c, 0x1b, 0x40];
        b.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0x09, 0, 1]);
        b.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0x09, 0, 2]);
        b.push(0x06);
        let (g, rest) = GrhHeader::parse(&b).unwrap();
        assert_eq!((g.traffic_class(), g.flow_label(), g.payload_length()), (0x03, 7, 300));
        assert_eq!((g.next_header(), g.hop_limit()), (0x1b, 64));
        assert_eq!(g.source_gid()[15], 1);
        assert_eq!(g.destination_gid()[15], 2);
        assert_eq!(rest, &[0x06]);
    }

    #[test]
    fn malformed() {
        assert_eq!(GrhHeader::parse(&[0x60; 39]).unwrap_err(), Error::truncated(Layer::Grh, 40, 39));
        let mut b = [0u8; 40];
        b[0] = 0x60;
        b[6] = 0x11;
        assert!(GrhHeader::parse(&b).is_err());
        b[6] = 0x1b;
        b[0] = 0x40;
        assert!(GrhHeader::parse(&b).is_err());
    }
}
