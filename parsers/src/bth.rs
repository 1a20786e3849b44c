//! The Base Transport Header, 12 bytes (IBA §9.2, Figure 87 "BTH").
//!
//! byte 0 OpCode · byte 1 SE(7) M(6) PadCnt(5:4) TVer(3:0) · bytes 2–3 P_Key ·
//! byte 4 FECN(7) BECN(6) resv6(5:0) · bytes 5–7 DestQP · byte 8 A(7) resv7(6:0) · bytes 9–11 PSN.

use crate::emit::{be24_bytes, join};
use crate::error::{Error, Layer, be16, be24, split_array};
use crate::opcode::{self, OpcodeInfo, Transport};

pub const BTH_LEN: usize = 12;

/// A BTH view.
#[derive(Debug, Clone, Copy)]
pub struct Bth<'a> {
    bytes: &'a [u8; 12],
}

impl<'a> Bth<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<12>(input, Layer::Bth)?;
        Ok((Bth { bytes }, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8; 12] {
        self.bytes
    }

    pub fn opcode(&self) -> u8 {
        self.bytes[0]
    }

    pub fn transport(&self) -> Transport {
        Transport::of(self.opcode())
    }

    /// The opcode's table entry; `None` for a reserved opcode.
    pub fn opcode_info(&self) -> Option<OpcodeInfo> {
        opcode::info(self.opcode())
    }

    /// Solicited event.
    pub fn solicited(&self) -> bool {
        self.bytes[1] & 0x80 != 0
    }

    /// MigReq.
    pub fn mig_req(&self) -> bool {
        self.bytes[1] & 0x40 != 0
    }

    /// Pad bytes between the payload and the ICRC (0–3).
    pub fn pad_count(&self) -> u8 {
        (self.bytes[1] >> 4) & 0x03
    }

    /// Transport header version; 0 in every current specification.
    pub fn tver(&self) -> u8 {
        self.bytes[1] & 0x0F
    }

    pub fn pkey(&self) -> u16 {
        be16([self.bytes[2], self.bytes[3]])
    }

    /// Forward explicit congestion notification (set by an IB switch; RoCE uses IP ECN).
    pub fn fecn(&self) -> bool {
        self.bytes[4] & 0x80 != 0
    }

    /// Backward explicit congestion notification; set in RoCEv2 CNPs.
    pub fn becn(&self) -> bool {
        self.bytes[4] & 0x40 != 0
    }

    pub fn resv6(&self) -> u8 {
        self.bytes[4] & 0x3F
    }

    /// Destination QP number (24 bits).
    pub fn dest_qp(&self) -> u32 {
        be24([self.bytes[5], self.bytes[6], self.bytes[7]])
    }

    /// AckReq: the requester asks for an acknowledgement of this packet.
    pub fn ack_req(&self) -> bool {
        self.bytes[8] & 0x80 != 0
    }

    pub fn resv7(&self) -> u8 {
        self.bytes[8] & 0x7F
    }

    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        be24([self.bytes[9], self.bytes[10], self.bytes[11]])
    }
}

/// A BTH's fields, to write one ([`BthRepr::emit`]) or to read one whole ([`BthRepr::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BthRepr {
    pub opcode: u8,
    pub solicited: bool,
    pub mig_req: bool,
    /// Pad bytes after the payload (0–3), so that the payload ends on a 4-byte boundary.
    pub pad_count: u8,
    pub tver: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: u32,
}

impl BthRepr {
    /// A BTH of `opcode` for `dest_qp` at `psn`: the default partition key 0xFFFF, no flag set,
    /// no pad.
    pub fn new(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        BthRepr {
            opcode,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            tver: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp,
            ack_req: false,
            psn,
        }
    }

    pub fn of(bth: &Bth<'_>) -> Self {
        BthRepr {
            opcode: bth.opcode(),
            solicited: bth.solicited(),
            mig_req: bth.mig_req(),
            pad_count: bth.pad_count(),
            tver: bth.tver(),
            pkey: bth.pkey(),
            fecn: bth.fecn(),
            becn: bth.becn(),
            dest_qp: bth.dest_qp(),
            ack_req: bth.ack_req(),
            psn: bth.psn(),
        }
    }

    /// The 12 bytes; each field keeps its low bits (PadCnt 2, TVer 4, DestQP and PSN 24), the
    /// reserved bits are 0.
    pub fn emit(&self) -> [u8; BTH_LEN] {
        let flags = (u8::from(self.solicited) << 7) | (u8::from(self.mig_req) << 6);
        let byte1 = flags | ((self.pad_count & 0x03) << 4) | (self.tver & 0x0F);
        let byte4 = (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6);
        let byte8 = u8::from(self.ack_req) << 7;
        join(&[
            &[self.opcode, byte1],
            &self.pkey.to_be_bytes(),
            &[byte4],
            &be24_bytes(self.dest_qp),
            &[byte8],
            &be24_bytes(self.psn),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_a_hand_built_bth() {
        // RC RDMA WRITE FIRST, SE, M, PadCnt 2, TVer 0, P_Key 0xffff, FECN+BECN, resv6 0x15,
        // DestQP 0x00012a, AckReq, resv7 0x01, PSN 0x001234
        let b = [0x06, 0xE0, 0xff, 0xff, 0xD5, 0x00, 0x01, 0x2a, 0x81, 0x00, 0x12, 0x34, 0x99];
        let (bth, rest) = Bth::parse(&b).unwrap();
        assert_eq!(bth.opcode(), 0x06);
        assert_eq!(bth.transport(), Transport::Rc);
        assert_eq!(bth.opcode_info().unwrap().name, "RC_RDMA_WRITE_FIRST");
        assert!(bth.solicited() && bth.mig_req());
        assert_eq!((bth.pad_count(), bth.tver(), bth.pkey()), (2, 0, 0xffff));
        assert!(bth.fecn() && bth.becn());
        assert_eq!(bth.resv6(), 0x15);
        assert_eq!(bth.dest_qp(), 0x12a);
        assert!(bth.ack_req());
        assert_eq!(bth.resv7(), 1);
        assert_eq!(bth.psn(), 4660);
        assert_eq!(rest, &[0x99]);
    }

    #[test]
    fn psn_and_qpn_extremes() {
        let b = [0x81, 0x0F, 0, 0, 0x00, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff];
        let (bth, _) = Bth::parse(&b).unwrap();
        assert_eq!(bth.dest_qp(), 0xFF_FFFF);
        assert_eq!(bth.psn(), 0xFF_FFFF);
        assert_eq!(bth.tver(), 0x0F);
        assert!(!bth.ack_req() && !bth.fecn() && !bth.becn());
        let z = [0u8; 12];
        let (bth, _) = Bth::parse(&z).unwrap();
        assert_eq!((bth.dest_qp(), bth.psn(), bth.pkey()), (0, 0, 0));
    }

    #[test]
    fn truncated() {
        assert_eq!(Bth::parse(&[0; 11]).unwrap_err(), Error::truncated(Layer::Bth, 12, 11));
        assert_eq!(Bth::parse(&[]).unwrap_err(), Error::truncated(Layer::Bth, 12, 0));
    }
}
