//! UDP header (RFC 768). RoCEv2 uses destination port 4791 (IBA A17.2); VXLAN uses 4789.

use crate::emit::join;
use crate::error::{Error, Layer, be16, split_array};

pub const PORT_ROCEV2: u16 = 4791;
pub const PORT_VXLAN: u16 = 4789;
/// The VXLAN port Linux used before IANA assigned 4789.
pub const PORT_VXLAN_LINUX: u16 = 8472;

/// A UDP header view (8 bytes).
#[derive(Debug, Clone, Copy)]
pub struct UdpHeader<'a> {
    bytes: &'a [u8; 8],
}

impl<'a> UdpHeader<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<8>(input, Layer::Udp)?;
        let udp = UdpHeader { bytes };
        if udp.length() < 8 {
            return Err(Error::invalid(Layer::Udp, "length shorter than the header"));
        }
        Ok((udp, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8; 8] {
        self.bytes
    }

    pub fn source_port(&self) -> u16 {
        be16([self.bytes[0], self.bytes[1]])
    }

    pub fn destination_port(&self) -> u16 {
        be16([self.bytes[2], self.bytes[3]])
    }

    /// Length of header plus payload.
    pub fn length(&self) -> u16 {
        be16([self.bytes[4], self.bytes[5]])
    }

    pub fn checksum(&self) -> u16 {
        be16([self.bytes[6], self.bytes[7]])
    }

    /// Declared payload length (length field minus 8).
    pub fn payload_len(&self) -> usize {
        usize::from(self.length()).saturating_sub(8)
    }
}

/// A UDP header, to write ([`UdpRepr::emit`]) or read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    pub source_port: u16,
    pub destination_port: u16,
    /// Header and payload.
    pub length: u16,
    /// 0: none (RoCEv2 senders leave it 0, IBA A17.4.2).
    pub checksum: u16,
}

impl UdpRepr {
    pub fn of(udp: &UdpHeader<'_>) -> Self {
        UdpRepr {
            source_port: udp.source_port(),
            destination_port: udp.destination_port(),
            length: udp.length(),
            checksum: udp.checksum(),
        }
    }

    pub fn emit(&self) -> [u8; 8] {
        join(&[
            &self.source_port.to_be_bytes(),
            &self.destination_port.to_be_bytes(),
            &self.length.to_be_bytes(),
            &self.checksum.to_be_bytes(),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let b = [0xec, 0xf8, 0x12, 0xb7, 0x04, 0x3c, 0x00, 0x00, 0x06];
        let (udp, rest) = UdpHeader::parse(&b).unwrap();
        assert_eq!(udp.source_port(), 60664);
        assert_eq!(udp.destination_port(), PORT_ROCEV2);
        assert_eq!(udp.length(), 1084);
        assert_eq!(udp.payload_len(), 1076);
        assert_eq!(udp.checksum(), 0);
        assert_eq!(rest, &[0x06]);
    }

    #[test]
    fn malformed() {
        assert_eq!(UdpHeader::parse(&[0; 7]).unwrap_err(), Error::truncated(Layer::Udp, 8, 7));
        let b = [0, 1, 0x12, 0xb7, 0, 7, 0, 0];
        assert_eq!(UdpHeader::parse(&b).unwrap_err(), Error::invalid(Layer::Udp, "length shorter than the header"));
    }
}
