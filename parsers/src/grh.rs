//! The InfiniBand Global Route Header (IBA §8.3), which RoCEv1 (EtherType 0x8915) places
//! between the Ethernet header and the BTH. It has the IPv6 header's layout (IPVer 6, TClass,
//! FlowLabel, PayLen, NxtHdr, HopLmt, SGID, DGID), so it is read through an [`Ipv6Header`]
//! view; PayLen counts the bytes after the GRH up to and including the ICRC, and NxtHdr is
//! 0x1B (BTH).

use crate::error::{Error, Layer};
use crate::ipv6::Ipv6Header;

pub const GRH_LEN: usize = 40;

/// NxtHdr value announcing a BTH (IBA §8.3.1).
pub const NEXT_HEADER_BTH: u8 = 0x1B;

/// A GRH view (40 bytes).
#[derive(Debug, Clone, Copy)]
pub struct GrhHeader<'a> {
    fields: Ipv6Header<'a>,
}

impl<'a> GrhHeader<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (fields, rest) = Ipv6Header::parse(input).map_err(|e| Error { layer: Layer::Grh, ..e })?;
        if fields.next_header() != NEXT_HEADER_BTH {
            return Err(Error::invalid(Layer::Grh, "NxtHdr is not a BTH (0x1B)"));
        }
        Ok((GrhHeader { fields }, rest))
    }

    /// The GRH's fields, named as in IPv6 (`source()` is the SGID, `payload_length()` PayLen).
    pub fn fields(&self) -> &Ipv6Header<'a> {
        &self.fields
    }

    pub fn as_bytes(&self) -> &'a [u8; 40] {
        self.fields.as_bytes()
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
        let f = g.fields();
        assert_eq!((f.traffic_class(), f.flow_label(), f.payload_length()), (0x03, 7, 300));
        assert_eq!((f.next_header(), f.hop_limit()), (0x1b, 64));
        assert_eq!(f.source()[15], 1);
        assert_eq!(f.destination()[15], 2);
        assert_eq!(rest, &[0x06]);
    }

    #[test]
    fn malformed() {
        assert_eq!(GrhHeader::parse(&[0x60; 39]).unwrap_err(), Error::truncated(Layer::Grh, 40, 39));
        let mut b = [0u8; 40];
        b[0] = 0x60;
        b[6] = 0x11;
        assert_eq!(GrhHeader::parse(&b).unwrap_err(), Error::invalid(Layer::Grh, "NxtHdr is not a BTH (0x1B)"));
        b[6] = 0x1b;
        b[0] = 0x40;
        assert_eq!(GrhHeader::parse(&b).unwrap_err(), Error::invalid(Layer::Grh, "version is not 6"));
    }
}
