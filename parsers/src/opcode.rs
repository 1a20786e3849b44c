//! The BTH opcode table (IBA §9.2, Table 38 "OpCode field"; RoCEv2 CNP from IBA A17.9.3).
//!
//! Bits 7:5 of the opcode give the transport class, bits 4:0 the operation. For each defined
//! opcode the table gives its name, the extended transport headers that follow the BTH (always
//! in the order of [`ExtHeader`]) and whether a payload follows them.

/// Transport class: opcode bits 7:5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Transport {
    /// Reliable Connected (0x00–0x1F).
    Rc,
    /// Unreliable Connected (0x20–0x3F).
    Uc,
    /// Reliable Datagram (0x40–0x5F).
    Rd,
    /// Unreliable Datagram (0x60–0x7F).
    Ud,
    /// Congestion notification (0x80–0x9F; 0x81 is the RoCEv2 CNP).
    Cnp,
    /// Extended Reliable Connected (0xA0–0xBF).
    Xrc,
    /// Manufacturer specific (0xC0–0xFF).
    Vendor,
}

impl Transport {
    pub fn of(opcode: u8) -> Transport {
        match opcode >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            _ => Transport::Vendor,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Vendor => "VENDOR",
        }
    }
}

/// One extended transport header kind, in the order they follow the BTH (IBA §9.2–§9.5,
/// A17.9.3 for the CNP's 16 reserved bytes, IBA memory placement extensions for FETH).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum ExtHeader {
    Rdeth = 1 << 0,
    Deth = 1 << 1,
    Xrceth = 1 << 2,
    Feth = 1 << 3,
    Reth = 1 << 4,
    AtomicEth = 1 << 5,
    Aeth = 1 << 6,
    AtomicAckEth = 1 << 7,
    ImmDt = 1 << 8,
    Ieth = 1 << 9,
    /// The CNP's 16 reserved bytes.
    CnpReserved = 1 << 10,
}

impl ExtHeader {
    /// Every kind, in wire order.
    pub const ALL: [ExtHeader; 11] = [
        ExtHeader::Rdeth,
        ExtHeader::Deth,
        ExtHeader::Xrceth,
        ExtHeader::Feth,
        ExtHeader::Reth,
        ExtHeader::AtomicEth,
        ExtHeader::Aeth,
        ExtHeader::AtomicAckEth,
        ExtHeader::ImmDt,
        ExtHeader::Ieth,
        ExtHeader::CnpReserved,
    ];

    /// Size on the wire in bytes.
    pub const fn size(self) -> usize {
        match self {
            ExtHeader::Rdeth | ExtHeader::Xrceth | ExtHeader::Feth | ExtHeader::Aeth => 4,
            ExtHeader::ImmDt | ExtHeader::Ieth => 4,
            ExtHeader::Deth | ExtHeader::AtomicAckEth => 8,
            ExtHeader::Reth | ExtHeader::CnpReserved => 16,
            ExtHeader::AtomicEth => 28,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            ExtHeader::Rdeth => "RDETH",
            ExtHeader::Deth => "DETH",
            ExtHeader::Xrceth => "XRCETH",
            ExtHeader::Feth => "FETH",
            ExtHeader::Reth => "RETH",
            ExtHeader::AtomicEth => "AtomicETH",
            ExtHeader::Aeth => "AETH",
            ExtHeader::AtomicAckEth => "AtomicAckETH",
            ExtHeader::ImmDt => "ImmDt",
            ExtHeader::Ieth => "IETH",
            ExtHeader::CnpReserved => "CNP reserved",
        }
    }
}

/// A set of extended headers (a bit set over [`ExtHeader`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtSet(u16);

impl ExtSet {
    pub const EMPTY: ExtSet = ExtSet(0);

    pub const fn of(headers: &[ExtHeader]) -> ExtSet {
        let mut bits = 0u16;
        let mut remaining = headers;
        while let [first, rest @ ..] = remaining {
            bits |= *first as u16;
            remaining = rest;
        }
        ExtSet(bits)
    }

    pub const fn contains(self, h: ExtHeader) -> bool {
        self.0 & (h as u16) != 0
    }

    /// Total length in bytes of the headers in the set.
    pub fn len(self) -> usize {
        let mut bits = self.0;
        let mut total = 0;
        while bits != 0 {
            let bit = bits & bits.wrapping_neg();
            total += ExtHeader::ALL.get(bit.trailing_zeros() as usize).map_or(0, |h| h.size());
            bits &= bits - 1;
        }
        total
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Byte offset of `h` after the BTH, when the set holds it.
    pub fn offset_of(self, h: ExtHeader) -> Option<usize> {
        // Headers sit in bit order, so the ones before `h` are the set's bits below h's bit.
        self.contains(h).then(|| ExtSet(self.0 & ((h as u16) - 1)).len())
    }

    /// The headers in wire order.
    pub fn iter(self) -> impl Iterator<Item = ExtHeader> {
        ExtHeader::ALL.into_iter().filter(move |h| self.contains(*h))
    }
}

/// Where a packet sits in its message, for message reassembly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Position {
    First,
    Middle,
    Last,
    Only,
}

/// What the table knows about one opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// Upper-case name with the transport prefix, e.g. `RC_RDMA_WRITE_FIRST`.
    pub name: &'static str,
    pub ext: ExtSet,
    /// Whether a payload may follow the headers.
    pub payload: bool,
    pub position: Position,
}

use ExtHeader::*;
use Position::*;

const fn op(name: &'static str, ext: &[ExtHeader], payload: bool, position: Position) -> Option<OpcodeInfo> {
    Some(OpcodeInfo { name, ext: ExtSet::of(ext), payload, position })
}

/// Looks up an opcode. `None` means reserved: no transport defines it. Manufacturer-specific
/// opcodes (0xC0–0xFF) are returned as `VENDOR_SPECIFIC` with no known extended headers.
pub const fn info(opcode: u8) -> Option<OpcodeInfo> {
    match opcode {
        // Reliable Connected
        0x00 => op("RC_SEND_FIRST", &[], true, First),
        0x01 => op("RC_SEND_MIDDLE", &[], true, Middle),
        0x02 => op("RC_SEND_LAST", &[], true, Last),
        0x03 => op("RC_SEND_LAST_WITH_IMMEDIATE", &[ImmDt], true, Last),
        0x04 => op("RC_SEND_ONLY", &[], true, Only),
        0x05 => op("RC_SEND_ONLY_WITH_IMMEDIATE", &[ImmDt], true, Only),
        0x06 => op("RC_RDMA_WRITE_FIRST", &[Reth], true, First),
        0x07 => op("RC_RDMA_WRITE_MIDDLE", &[], true, Middle),
        0x08 => op("RC_RDMA_WRITE_LAST", &[], true, Last),
        0x09 => op("RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", &[ImmDt], true, Last),
        0x0A => op("RC_RDMA_WRITE_ONLY", &[Reth], true, Only),
        0x0B => op("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", &[Reth, ImmDt], true, Only),
        0x0C => op("RC_RDMA_READ_REQUEST", &[Reth], false, Only),
        0x0D => op("RC_RDMA_READ_RESPONSE_FIRST", &[Aeth], true, First),
        0x0E => op("RC_RDMA_READ_RESPONSE_MIDDLE", &[], true, Middle),
        0x0F => op("RC_RDMA_READ_RESPONSE_LAST", &[Aeth], true, Last),
        0x10 => op("RC_RDMA_READ_RESPONSE_ONLY", &[Aeth], true, Only),
        0x11 => op("RC_ACKNOWLEDGE", &[Aeth], false, Only),
        0x12 => op("RC_ATOMIC_ACKNOWLEDGE", &[Aeth, AtomicAckEth], false, Only),
        0x13 => op("RC_COMPARE_SWAP", &[AtomicEth], false, Only),
        0x14 => op("RC_FETCH_ADD", &[AtomicEth], false, Only),
        0x16 => op("RC_SEND_LAST_WITH_INVALIDATE", &[Ieth], true, Last),
        0x17 => op("RC_SEND_ONLY_WITH_INVALIDATE", &[Ieth], true, Only),
        0x1C => op("RC_FLUSH", &[Feth, Reth], false, Only),
        0x1D => op("RC_ATOMIC_WRITE", &[Reth], true, Only),
        // Unreliable Connected
        0x20 => op("UC_SEND_FIRST", &[], true, First),
        0x21 => op("UC_SEND_MIDDLE", &[], true, Middle),
        0x22 => op("UC_SEND_LAST", &[], true, Last),
        0x23 => op("UC_SEND_LAST_WITH_IMMEDIATE", &[ImmDt], true, Last),
        0x24 => op("UC_SEND_ONLY", &[], true, Only),
        0x25 => op("UC_SEND_ONLY_WITH_IMMEDIATE", &[ImmDt], true, Only),
        0x26 => op("UC_RDMA_WRITE_FIRST", &[Reth], true, First),
        0x27 => op("UC_RDMA_WRITE_MIDDLE", &[], true, Middle),
        0x28 => op("UC_RDMA_WRITE_LAST", &[], true, Last),
        0x29 => op("UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", &[ImmDt], true, Last),
        0x2A => op("UC_RDMA_WRITE_ONLY", &[Reth], true, Only),
        0x2B => op("UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", &[Reth, ImmDt], true, Only),
        // Reliable Datagram
        0x40 => op("RD_SEND_FIRST", &[Rdeth, Deth], true, First),
        0x41 => op("RD_SEND_MIDDLE", &[Rdeth, Deth], true, Middle),
        0x42 => op("RD_SEND_LAST", &[Rdeth, Deth], true, Last),
        0x43 => op("RD_SEND_LAST_WITH_IMMEDIATE", &[Rdeth, Deth, ImmDt], true, Last),
        0x44 => op("RD_SEND_ONLY", &[Rdeth, Deth], true, Only),
        0x45 => op("RD_SEND_ONLY_WITH_IMMEDIATE", &[Rdeth, Deth, ImmDt], true, Only),
        0x46 => op("RD_RDMA_WRITE_FIRST", &[Rdeth, Deth, Reth], true, First),
        0x47 => op("RD_RDMA_WRITE_MIDDLE", &[Rdeth, Deth], true, Middle),
        0x48 => op("RD_RDMA_WRITE_LAST", &[Rdeth, Deth], true, Last),
        0x49 => op("RD_RDMA_WRITE_LAST_WITH_IMMEDIATE", &[Rdeth, Deth, ImmDt], true, Last),
        0x4A => op("RD_RDMA_WRITE_ONLY", &[Rdeth, Deth, Reth], true, Only),
        0x4B => op("RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE", &[Rdeth, Deth, Reth, ImmDt], true, Only),
        0x4C => op("RD_RDMA_READ_REQUEST", &[Rdeth, Deth, Reth], false, Only),
        0x4D => op("RD_RDMA_READ_RESPONSE_FIRST", &[Rdeth, Aeth], true, First),
        0x4E => op("RD_RDMA_READ_RESPONSE_MIDDLE", &[Rdeth], true, Middle),
        0x4F => op("RD_RDMA_READ_RESPONSE_LAST", &[Rdeth, Aeth], true, Last),
        0x50 => op("RD_RDMA_READ_RESPONSE_ONLY", &[Rdeth, Aeth], true, Only),
        0x51 => op("RD_ACKNOWLEDGE", &[Rdeth, Aeth], false, Only),
        0x52 => op("RD_ATOMIC_ACKNOWLEDGE", &[Rdeth, Aeth, AtomicAckEth], false, Only),
        0x53 => op("RD_COMPARE_SWAP", &[Rdeth, Deth, AtomicEth], false, Only),
        0x54 => op("RD_FETCH_ADD", &[Rdeth, Deth, AtomicEth], false, Only),
        0x55 => op("RD_RESYNC", &[Rdeth, Deth], false, Only),
        // Unreliable Datagram
        0x64 => op("UD_SEND_ONLY", &[Deth], true, Only),
        0x65 => op("UD_SEND_ONLY_WITH_IMMEDIATE", &[Deth, ImmDt], true, Only),
        // RoCEv2 congestion notification packet (IBA A17.9.3)
        0x81 => op("CNP", &[CnpReserved], false, Only),
        // Extended Reliable Connected
        0xA0 => op("XRC_SEND_FIRST", &[Xrceth], true, First),
        0xA1 => op("XRC_SEND_MIDDLE", &[Xrceth], true, Middle),
        0xA2 => op("XRC_SEND_LAST", &[Xrceth], true, Last),
        0xA3 => op("XRC_SEND_LAST_WITH_IMMEDIATE", &[Xrceth, ImmDt], true, Last),
        0xA4 => op("XRC_SEND_ONLY", &[Xrceth], true, Only),
        0xA5 => op("XRC_SEND_ONLY_WITH_IMMEDIATE", &[Xrceth, ImmDt], true, Only),
        0xA6 => op("XRC_RDMA_WRITE_FIRST", &[Xrceth, Reth], true, First),
        0xA7 => op("XRC_RDMA_WRITE_MIDDLE", &[Xrceth], true, Middle),
        0xA8 => op("XRC_RDMA_WRITE_LAST", &[Xrceth], true, Last),
        0xA9 => op("XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE", &[Xrceth, ImmDt], true, Last),
        0xAA => op("XRC_RDMA_WRITE_ONLY", &[Xrceth, Reth], true, Only),
        0xAB => op("XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", &[Xrceth, Reth, ImmDt], true, Only),
        0xAC => op("XRC_RDMA_READ_REQUEST", &[Xrceth, Reth], false, Only),
        0xAD => op("XRC_RDMA_READ_RESPONSE_FIRST", &[Aeth], true, First),
        0xAE => op("XRC_RDMA_READ_RESPONSE_MIDDLE", &[], true, Middle),
        0xAF => op("XRC_RDMA_READ_RESPONSE_LAST", &[Aeth], true, Last),
        0xB0 => op("XRC_RDMA_READ_RESPONSE_ONLY", &[Aeth], true, Only),
        0xB1 => op("XRC_ACKNOWLEDGE", &[Aeth], false, Only),
        0xB2 => op("XRC_ATOMIC_ACKNOWLEDGE", &[Aeth, AtomicAckEth], false, Only),
        0xB3 => op("XRC_COMPARE_SWAP", &[Xrceth, AtomicEth], false, Only),
        0xB4 => op("XRC_FETCH_ADD", &[Xrceth, AtomicEth], false, Only),
        0xB6 => op("XRC_SEND_LAST_WITH_INVALIDATE", &[Xrceth, Ieth], true, Last),
        0xB7 => op("XRC_SEND_ONLY_WITH_INVALIDATE", &[Xrceth, Ieth], true, Only),
        0xC0..=0xFF => op("VENDOR_SPECIFIC", &[], true, Only),
        _ => None,
    }
}

/// The RoCEv2 congestion notification packet (IBA A17.9.2).
pub const CNP: u8 = 0x81;

/// Is this an ACKNOWLEDGE (an ACK or a NAK) of the RC, RD or XRC transport?
pub const fn is_acknowledge(opcode: u8) -> bool {
    matches!(opcode, 0x11 | 0x51 | 0xB1)
}

/// Is this an ATOMIC ACKNOWLEDGE of the RC, RD or XRC transport?
pub const fn is_atomic_acknowledge(opcode: u8) -> bool {
    matches!(opcode, 0x12 | 0x52 | 0xB2)
}

/// Opcodes that carry no PSN of their own in the sender's sequence: acknowledgements and CNPs.
pub const fn is_unsequenced(opcode: u8) -> bool {
    is_acknowledge(opcode) || is_atomic_acknowledge(opcode) || opcode == CNP
}

/// Is this an RDMA READ request (which consumes one PSN per response packet)?
pub const fn is_read_request(opcode: u8) -> bool {
    matches!(opcode, 0x0C | 0x4C | 0xAC)
}

/// Is this an RDMA READ response packet?
pub const fn is_read_response(opcode: u8) -> bool {
    matches!(opcode, 0x0D..=0x10 | 0x4D..=0x50 | 0xAD..=0xB0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header length (BTH + extended headers) per opcode, from protocol-facts §3 (which
    /// transcribes the Linux rxe opcode table and Wireshark's dissector).
    const HEADER_LENGTHS: &[(u8, usize)] = &[
        (0x00, 12),
        (0x01, 12),
        (0x02, 12),
        (0x03, 16),
        (0x04, 12),
        (0x05, 16),
        (0x06, 28),
        (0x07, 12),
        (0x08, 12),
        (0x09, 16),
        (0x0A, 28),
        (0x0B, 32),
        (0x0C, 28),
        (0x0D, 16),
        (0x0E, 12),
        (0x0F, 16),
        (0x10, 16),
        (0x11, 16),
        (0x12, 24),
        (0x13, 40),
        (0x14, 40),
        (0x16, 16),
        (0x17, 16),
        (0x1C, 32),
        (0x1D, 28),
        (0x20, 12),
        (0x21, 12),
        (0x22, 12),
        (0x23, 16),
        (0x24, 12),
        (0x25, 16),
        (0x26, 28),
        (0x27, 12),
        (0x28, 12),
        (0x29, 16),
        (0x2A, 28),
        (0x2B, 32),
        (0x40, 24),
        (0x41, 24),
        (0x42, 24),
        (0x43, 28),
        (0x44, 24),
        (0x45, 28),
        (0x46, 40),
        (0x47, 24),
        (0x48, 24),
        (0x49, 28),
        (0x4A, 40),
        (0x4B, 44),
        (0x4C, 40),
        (0x4D, 20),
        (0x4E, 16),
        (0x4F, 20),
        (0x50, 20),
        (0x51, 20),
        (0x52, 28),
        (0x53, 52),
        (0x54, 52),
        (0x55, 24),
        (0x64, 20),
        (0x65, 24),
        (0x81, 28),
        (0xA0, 16),
        (0xA1, 16),
        (0xA2, 16),
        (0xA3, 20),
        (0xA4, 16),
        (0xA5, 20),
        (0xA6, 32),
        (0xA7, 16),
        (0xA8, 16),
        (0xA9, 20),
        (0xAA, 32),
        (0xAB, 36),
        (0xAC, 32),
        (0xAD, 16),
        (0xAE, 12),
        (0xAF, 16),
        (0xB0, 16),
        (0xB1, 16),
        (0xB2, 24),
        (0xB3, 44),
        (0xB4, 44),
        (0xB6, 20),
        (0xB7, 20),
    ];

    #[test]
    fn acknowledges_are_named_so_in_the_opcode_table() {
        for op in 0..=255u8 {
            let name = info(op).map_or("", |i| i.name);
            let atomic = name.ends_with("_ATOMIC_ACKNOWLEDGE");
            assert_eq!(is_atomic_acknowledge(op), atomic, "0x{op:02x} {name}");
            assert_eq!(is_acknowledge(op), name.ends_with("_ACKNOWLEDGE") && !atomic, "0x{op:02x} {name}");
            assert_eq!(is_unsequenced(op), name.ends_with("_ACKNOWLEDGE") || op == CNP, "0x{op:02x} {name}");
        }
    }

    #[test]
    fn every_defined_opcode_has_the_documented_header_length() {
        for &(opcode, header_len) in HEADER_LENGTHS {
            let info = info(opcode).unwrap_or_else(|| panic!("0x{opcode:02x} missing"));
            assert_eq!(12 + info.ext.len(), header_len, "opcode 0x{opcode:02x} {}", info.name);
        }
    }

    #[test]
    fn table_defines_exactly_the_listed_opcodes_below_the_vendor_range() {
        let defined: Vec<u8> = (0u8..0xC0).filter(|&o| info(o).is_some()).collect();
        let listed: Vec<u8> = HEADER_LENGTHS.iter().map(|&(o, _)| o).collect();
        assert_eq!(defined, listed);
        for reserved in
            [0x15, 0x18, 0x1B, 0x1E, 0x1F, 0x2C, 0x3F, 0x56, 0x60, 0x63, 0x66, 0x80, 0x82, 0x9F, 0xB5, 0xB8, 0xBF]
        {
            assert_eq!(info(reserved), None, "0x{reserved:02x}");
        }
        assert_eq!(info(0xC0).map(|i| i.name), Some("VENDOR_SPECIFIC"));
        assert_eq!(info(0xFF).map(|i| i.name), Some("VENDOR_SPECIFIC"));
    }

    #[test]
    fn names_carry_their_transport_prefix() {
        for o in 0u8..0xC0 {
            if let Some(i) = info(o) {
                assert!(i.name.starts_with(Transport::of(o).name()), "{}", i.name);
            }
        }
    }

    #[test]
    fn extended_headers_iterate_in_wire_order() {
        let rd_write = info(0x4B).unwrap();
        let order: Vec<_> = rd_write.ext.iter().collect();
        assert_eq!(order, vec![Rdeth, Deth, Reth, ImmDt]);
        let flush: Vec<_> = info(0x1C).unwrap().ext.iter().collect();
        assert_eq!(flush, vec![Feth, Reth]);
        let atomic_ack: Vec<_> = info(0x12).unwrap().ext.iter().collect();
        assert_eq!(atomic_ack, vec![Aeth, AtomicAckEth]);
    }

    #[test]
    fn offsets_of_extended_headers() {
        let rd_write = info(0x4B).unwrap().ext;
        assert_eq!(rd_write.offset_of(Rdeth), Some(0));
        assert_eq!(rd_write.offset_of(Deth), Some(4));
        assert_eq!(rd_write.offset_of(Reth), Some(12));
        assert_eq!(rd_write.offset_of(ImmDt), Some(28));
        assert_eq!(rd_write.offset_of(Aeth), None);
    }

    #[test]
    fn transport_classes() {
        assert_eq!(Transport::of(0x1F), Transport::Rc);
        assert_eq!(Transport::of(0x20), Transport::Uc);
        assert_eq!(Transport::of(0x5F), Transport::Rd);
        assert_eq!(Transport::of(0x64), Transport::Ud);
        assert_eq!(Transport::of(0x81), Transport::Cnp);
        assert_eq!(Transport::of(0xA0), Transport::Xrc);
        assert_eq!(Transport::of(0xE0), Transport::Vendor);
    }

    #[test]
    fn sequencing_classes() {
        for o in [0x11, 0x12, 0x81] {
            assert!(is_unsequenced(o));
        }
        assert!(!is_unsequenced(0x10));
        assert!(is_read_request(0x0C) && !is_read_request(0x0D));
        assert!((0x0D..=0x10).all(is_read_response) && !is_read_response(0x11));
    }
}
