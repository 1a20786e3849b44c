//! Linux "cooked" capture headers, written by `tcpdump -i any`: SLL (link type 113, 16 bytes)
//! and SLL2 (link type 276, 20 bytes). Both end in (or start with) the payload's EtherType.
//! Layouts: tcpdump.org/linktypes/LINKTYPE_LINUX_SLL.html and LINKTYPE_LINUX_SLL2.html.

use crate::error::{Error, Layer, be16, be32, split_array};

/// Which of the two cooked header versions a capture uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SllVersion {
    V1,
    V2,
}

/// A cooked capture header view.
#[derive(Debug, Clone, Copy)]
pub struct SllHeader<'a> {
    version: SllVersion,
    bytes: &'a [u8],
}

impl<'a> SllHeader<'a> {
    pub fn parse(input: &'a [u8], version: SllVersion) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest): (&[u8], &[u8]) = match version {
            SllVersion::V1 => {
                let (b, r) = split_array::<16>(input, Layer::LinuxSll)?;
                (b, r)
            }
            SllVersion::V2 => {
                let (b, r) = split_array::<20>(input, Layer::LinuxSll)?;
                (b, r)
            }
        };
        Ok((SllHeader { version, bytes }, rest))
    }

    /// The header's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    fn byte(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    fn word(&self, i: usize) -> u16 {
        be16([self.byte(i), self.byte(i + 1)])
    }

    pub fn version(&self) -> SllVersion {
        self.version
    }

    /// The EtherType of the payload.
    pub fn protocol(&self) -> u16 {
        match self.version {
            SllVersion::V1 => self.word(14),
            SllVersion::V2 => self.word(0),
        }
    }

    /// 0 = to us, 1 = broadcast, 2 = multicast, 3 = to another host, 4 = sent by us.
    pub fn packet_type(&self) -> u16 {
        match self.version {
            SllVersion::V1 => self.word(0),
            SllVersion::V2 => u16::from(self.byte(10)),
        }
    }

    /// The ARPHRD_ type of the interface (1 = Ethernet, 32 = InfiniBand).
    pub fn arphrd_type(&self) -> u16 {
        match self.version {
            SllVersion::V1 => self.word(2),
            SllVersion::V2 => self.word(8),
        }
    }

    /// The interface index (SLL2 only).
    pub fn interface_index(&self) -> Option<u32> {
        match self.version {
            SllVersion::V1 => None,
            SllVersion::V2 => Some(be32([self.byte(4), self.byte(5), self.byte(6), self.byte(7)])),
        }
    }

    /// The sender's link-layer address (up to 8 bytes, as many as the header says).
    pub fn link_address(&self) -> &'a [u8] {
        let (len_at, addr_at) = match self.version {
            SllVersion::V1 => (4, 6),
            SllVersion::V2 => (11, 12),
        };
        let len = match self.version {
            SllVersion::V1 => usize::from(self.word(len_at)),
            SllVersion::V2 => usize::from(self.byte(len_at)),
        }
        .min(8);
        self.bytes.get(addr_at..addr_at + len).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sll_v1_fields() {
        let bytes = [
            0x00, 0x04, // sent by us
            0x00, 0x01, // ARPHRD_ETHER
            0x00, 0x06, // address length
            0x02, 0, 0, 1, 0, 1, 0, 0, // address + 2 pad
            0x08, 0x00, // IPv4
            0x45,
        ];
        let (h, rest) = SllHeader::parse(&bytes, SllVersion::V1).unwrap();
        assert_eq!(h.packet_type(), 4);
        assert_eq!(h.arphrd_type(), 1);
        assert_eq!(h.link_address(), &[0x02, 0, 0, 1, 0, 1]);
        assert_eq!(h.protocol(), 0x0800);
        assert_eq!(h.interface_index(), None);
        assert_eq!(rest, &[0x45]);
    }

    #[test]
    fn sll_v2_fields() {
        let bytes = [
            0x86, 0xdd, // IPv6
            0x00, 0x00, // reserved
            0x00, 0x00, 0x00, 0x07, // ifindex 7
            0x00, 0x01, // ARPHRD_ETHER
            0x00, // to us
            0x06, // address length
            0x02, 0, 0, 1, 0, 2, 0, 0,
        ];
        let (h, rest) = SllHeader::parse(&bytes, SllVersion::V2).unwrap();
        assert_eq!(h.protocol(), 0x86dd);
        assert_eq!(h.interface_index(), Some(7));
        assert_eq!(h.packet_type(), 0);
        assert_eq!(h.link_address(), &[0x02, 0, 0, 1, 0, 2]);
        assert!(rest.is_empty());
    }

    #[test]
    fn truncated_cooked_headers() {
        assert_eq!(SllHeader::parse(&[0; 15], SllVersion::V1).unwrap_err(), Error::truncated(Layer::LinuxSll, 16, 15));
        assert_eq!(SllHeader::parse(&[0; 19], SllVersion::V2).unwrap_err(), Error::truncated(Layer::LinuxSll, 20, 19));
    }

    #[test]
    fn oversized_address_length_is_clamped() {
        let mut bytes = [0u8; 16];
        bytes[5] = 200;
        let (h, _) = SllHeader::parse(&bytes, SllVersion::V1).unwrap();
        assert_eq!(h.link_address().len(), 8);
    }
}
