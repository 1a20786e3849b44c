//! VXLAN header (RFC 7348 §5): flags (I = 0x08 must be set), 24 reserved bits, VNI (24 bits),
//! 8 reserved bits. An Ethernet frame follows.

use crate::emit::{be24_bytes, join};
use crate::error::{Error, Layer, be24, split_array};

/// A VXLAN header view (8 bytes).
#[derive(Debug, Clone, Copy)]
pub struct VxlanHeader<'a> {
    bytes: &'a [u8; 8],
}

impl<'a> VxlanHeader<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<8>(input, Layer::Vxlan)?;
        if bytes[0] & 0x08 == 0 {
            return Err(Error::invalid(Layer::Vxlan, "I flag (valid VNI) not set"));
        }
        Ok((VxlanHeader { bytes }, rest))
    }

    pub fn flags(&self) -> u8 {
        self.bytes[0]
    }

    pub fn vni(&self) -> u32 {
        be24([self.bytes[4], self.bytes[5], self.bytes[6]])
    }
}

/// The VXLAN header of `vni`: the I flag set, the reserved bits 0.
pub fn emit(vni: u32) -> [u8; 8] {
    join(&[&[0x08, 0, 0, 0], &be24_bytes(vni), &[0]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vni() {
        let b = [0x08, 0, 0, 0, 0x01, 0x02, 0x03, 0, 0xAA];
        let (v, rest) = VxlanHeader::parse(&b).unwrap();
        assert_eq!((v.flags(), v.vni()), (0x08, 0x010203));
        assert_eq!(rest, &[0xAA]);
    }

    #[test]
    fn malformed() {
        assert_eq!(VxlanHeader::parse(&[0x08; 7]).unwrap_err(), Error::truncated(Layer::Vxlan, 8, 7));
        assert!(VxlanHeader::parse(&[0; 8]).is_err());
    }
}
