//! The CRC32C trailer of a UET packet without TSS: CRC-32C (Castagnoli, reflected polynomial
//! 0x82F63B78) over the bytes from the IP source address to the end of the payload, so that
//! the IP header's mutable fields (DSCP and ECN, TTL, the checksum) are outside it. The sources
//! do not settle the final XOR nor the byte order on the wire (../shared/uet-facts.md §6): each
//! [`Variant`] is one reading, and a capture is checked against the one its packets match.

/// One reading of the trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Variant {
    /// CRC-32C (initial value and final XOR all ones), least significant byte first: the
    /// reference provider copies a host integer on a little-endian machine.
    Le,
    /// The same, most significant byte first, as every other field of UET.
    Be,
    /// Without the final XOR, least significant byte first.
    RawLe,
    /// Without the final XOR, most significant byte first.
    RawBe,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Le, Variant::Be, Variant::RawLe, Variant::RawBe];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Le => "crc32c_le",
            Variant::Be => "crc32c_be",
            Variant::RawLe => "crc32c_raw_le",
            Variant::RawBe => "crc32c_raw_be",
        }
    }

    /// The trailer this reading expects of a packet whose CRC-32C is `crc`.
    pub fn trailer(self, crc: u32) -> [u8; 4] {
        match self {
            Variant::Le => crc.to_le_bytes(),
            Variant::Be => crc.to_be_bytes(),
            Variant::RawLe => (!crc).to_le_bytes(),
            Variant::RawBe => (!crc).to_be_bytes(),
        }
    }

    /// The reading `wire` matches, given the covered bytes' CRC-32C.
    pub fn matching(crc: u32, wire: [u8; 4]) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.trailer(crc) == wire)
    }
}

/// CRC-32C of `covered`.
pub fn crc32c(covered: &[u8]) -> u32 {
    crc32c::crc32c(covered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_value_and_the_four_readings() {
        // CRC-32C's check value (the CRC catalogue's "123456789")
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        let crc = crc32c(b"123456789");
        assert_eq!(Variant::matching(crc, [0x83, 0x92, 0x06, 0xE3]), Some(Variant::Le));
        assert_eq!(Variant::matching(crc, [0xE3, 0x06, 0x92, 0x83]), Some(Variant::Be));
        assert_eq!(Variant::matching(crc, (!crc).to_le_bytes()), Some(Variant::RawLe));
        assert_eq!(Variant::matching(crc, (!crc).to_be_bytes()), Some(Variant::RawBe));
        assert_eq!(Variant::matching(crc, [0; 4]), None);
    }
}
