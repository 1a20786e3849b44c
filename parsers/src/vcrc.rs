//! The Variant CRC of an InfiniBand packet (IBA §7.8.2): CRC-16 with polynomial 0x100B,
//! processed least-significant bit first (reflected polynomial 0xD008), initial value 0xFFFF,
//! the result complemented; over the packet from the LRH through the ICRC, stored
//! little-endian in the 2 bytes after it. Every hop recomputes it (the VL may change), unlike
//! the ICRC.

/// The reflected polynomial.
const POLY: u16 = 0xD008;

/// The CRC of every byte value, for a byte at a time. (Built at compile time: an index out of
/// range would not compile.)
#[allow(clippy::indexing_slicing)]
const TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u16;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ POLY } else { crc >> 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// The VCRC of `bytes` (the LRH through the ICRC).
pub fn vcrc(bytes: &[u8]) -> u16 {
    let step = |crc: u16, b: u8| (crc >> 8) ^ TABLE.get(usize::from(crc as u8 ^ b)).copied().unwrap_or(0);
    let crc = bytes.iter().fold(0xFFFFu16, |crc, &b| step(crc, b));
    !crc
}

/// The VCRC as it is on the wire.
pub const fn to_wire(vcrc: u16) -> [u8; 2] {
    vcrc.to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same CRC the textbook way: the polynomial 0x100B not reflected, over the bytes with
    /// their bits reversed, the register reversed at the end.
    fn msb_first(bytes: &[u8]) -> u16 {
        let mut crc: u16 = 0xFFFF;
        for &b in bytes {
            crc ^= u16::from(b.reverse_bits()) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x100B } else { crc << 1 };
            }
        }
        !crc.reverse_bits()
    }

    #[test]
    fn the_table_agrees_with_the_bitwise_definition() {
        for input in [&b""[..], b"\x00", b"123456789", &[0xFF; 64], &(0..=255).collect::<Vec<u8>>()] {
            assert_eq!(vcrc(input), msb_first(input), "{input:?}");
        }
        // the empty input: the complemented initial value
        assert_eq!(vcrc(b""), 0x0000);
    }

    #[test]
    fn a_flipped_bit_changes_it_and_it_travels_little_endian() {
        let packet = [0x00, 0x02, 0x00, 0x01, 0x00, 0x06, 0x00, 0x04, 0x11, 0x22];
        let mut flipped = packet;
        flipped[9] ^= 0x01;
        assert_ne!(vcrc(&packet), vcrc(&flipped));
        assert_eq!(to_wire(0x1234), [0x34, 0x12]);
    }
}
