//! The PDS header: a 16-bit prologue (type 5 bits, `next_hdr` or `ctl_type` 4 bits, flags 7
//! bits), then a layout of 4 to 40 bytes per type (../shared/uet-facts.md §2).

use crate::error::{Error, Layer, be16_at, be24_at, be32_at, be64_at, byte_at, split_bytes};

/// The 14 PDS types (type 1 is the TSS header, 0 and 15..31 are not assigned).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PdsType {
    RudRequest = 2,
    RodRequest = 3,
    RudiRequest = 4,
    RudiResponse = 5,
    UudRequest = 6,
    Ack = 7,
    AckCc = 8,
    AckCcx = 9,
    Nack = 10,
    Control = 11,
    NackCcx = 12,
    RudCcRequest = 13,
    RodCcRequest = 14,
}

impl PdsType {
    pub fn of(value: u8) -> Option<PdsType> {
        use PdsType::*;
        Some(match value {
            2 => RudRequest,
            3 => RodRequest,
            4 => RudiRequest,
            5 => RudiResponse,
            6 => UudRequest,
            7 => Ack,
            8 => AckCc,
            9 => AckCcx,
            10 => Nack,
            11 => Control,
            12 => NackCcx,
            13 => RudCcRequest,
            14 => RodCcRequest,
            _ => return None,
        })
    }

    /// The header's length. ACK_CCX is 40 bytes and NACK_CCX 32, as Wireshark and the reference
    /// provider read them (xdp2 has 8 bytes of state less).
    pub fn header_len(self) -> usize {
        use PdsType::*;
        match self {
            UudRequest => 4,
            RudiRequest | RudiResponse => 8,
            RudRequest | RodRequest | Ack => 12,
            RudCcRequest | RodCcRequest | Nack | Control => 16,
            AckCc | NackCcx => 32,
            AckCcx => 40,
        }
    }

    /// A request of a PDC (RUD or ROD, with or without CC state): PSN, PDC ids, SYN.
    pub fn is_pdc_request(self) -> bool {
        matches!(self, PdsType::RudRequest | PdsType::RodRequest | PdsType::RudCcRequest | PdsType::RodCcRequest)
    }

    pub fn is_ack(self) -> bool {
        matches!(self, PdsType::Ack | PdsType::AckCc | PdsType::AckCcx)
    }

    pub fn is_nack(self) -> bool {
        matches!(self, PdsType::Nack | PdsType::NackCcx)
    }

    /// Ordered delivery (ROD).
    pub fn is_ordered(self) -> bool {
        matches!(self, PdsType::RodRequest | PdsType::RodCcRequest)
    }

    pub fn name(self) -> &'static str {
        super::names::pds_type(self as u8)
    }
}

/// A PDS header view: its type and its bytes (exactly [`PdsType::header_len`] of them).
#[derive(Debug, Clone, Copy)]
pub struct Pds<'a> {
    kind: PdsType,
    bytes: &'a [u8],
}

impl<'a> Pds<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let first = input.first().copied().ok_or(Error::truncated(Layer::UetPds, 2, 0))?;
        let kind = PdsType::of(first >> 3).ok_or(Error::invalid(Layer::UetPds, "unassigned PDS type"))?;
        let (bytes, rest) = split_bytes(input, kind.header_len(), Layer::UetPds)?;
        Ok((Pds { kind, bytes }, rest))
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn pds_type(&self) -> PdsType {
        self.kind
    }

    /// The prologue's 4-bit `next_hdr`: the SES header that follows (0 none). A control packet
    /// holds its `ctl_type` there ([`Pds::ctl_type`]).
    pub fn next_header(&self) -> u8 {
        ((byte_at(self.bytes, 0) & 0x07) << 1) | (byte_at(self.bytes, 1) >> 7)
    }

    /// The 7 flag bits; their meaning depends on the type (the accessors below).
    pub fn flags(&self) -> u8 {
        byte_at(self.bytes, 1) & 0x7F
    }

    fn flag(&self, mask: u8) -> bool {
        self.flags() & mask != 0
    }

    /// A retransmission (every type but UUD).
    pub fn retx(&self) -> bool {
        self.kind != PdsType::UudRequest && self.flag(0x10)
    }

    /// Ack requested (requests and control packets).
    pub fn ar(&self) -> bool {
        (self.kind.is_pdc_request() || self.kind == PdsType::Control) && self.flag(0x08)
    }

    /// SYN: the PDC is being established (requests and control packets); the DPDCID's place
    /// then holds the PDC info and the PSN offset.
    pub fn syn(&self) -> bool {
        (self.kind.is_pdc_request() || self.kind == PdsType::Control) && self.flag(0x04)
    }

    /// M: the packet acknowledged arrived CE-marked (ACKs, NACKs, RUDI responses).
    pub fn ecn_marked(&self) -> bool {
        (self.kind.is_ack() || self.kind.is_nack() || self.kind == PdsType::RudiResponse) && self.flag(0x20)
    }

    /// P: a probe's ACK (its `ack_psn_offset` holds the probe's opaque value).
    pub fn probe(&self) -> bool {
        self.kind.is_ack() && self.flag(0x08)
    }

    /// An ACK's request: 0 none, 1 clear the PSN state, 2 close the PDC.
    pub fn ack_request(&self) -> Option<u8> {
        self.kind.is_ack().then(|| (self.flags() >> 1) & 0x03)
    }

    /// NT: a NACK of a RUDI packet (it names a packet id, not a PSN).
    pub fn nack_rudi(&self) -> bool {
        self.kind.is_nack() && self.flag(0x08)
    }

    /// A control packet of a ROD PDC (the reference provider and xdp2; Wireshark shows it
    /// reserved).
    pub fn control_rod(&self) -> bool {
        self.kind == PdsType::Control && self.flag(0x20)
    }

    fn i16_at(&self, at: usize) -> i16 {
        i16::from_be_bytes([byte_at(self.bytes, at), byte_at(self.bytes, at + 1)])
    }

    /// Carries a PSN at offset 4 (requests and control packets).
    fn sequenced(&self) -> bool {
        self.kind.is_pdc_request() || self.kind == PdsType::Control
    }

    /// The packet's PSN (requests and control packets).
    pub fn psn(&self) -> Option<u32> {
        self.sequenced().then(|| be32_at(self.bytes, 4))
    }

    /// Clear_PSN − PSN (requests): the initiator no longer needs the target's state of PSNs
    /// before Clear_PSN.
    pub fn clear_psn_offset(&self) -> Option<i16> {
        self.kind.is_pdc_request().then(|| self.i16_at(2))
    }

    /// Clear_PSN = PSN + its offset.
    pub fn clear_psn(&self) -> Option<u32> {
        Some(self.psn()?.wrapping_add_signed(i32::from(self.clear_psn_offset()?)))
    }

    /// The sender's PDC id (requests, ACKs, NACKs of a PDC and control packets).
    pub fn spdcid(&self) -> Option<u16> {
        self.has_pdc_ids().then(|| be16_at(self.bytes, 8))
    }

    /// The receiver's PDC id; `None` on a SYN packet, whose place holds the PDC info and the
    /// PSN offset.
    pub fn dpdcid(&self) -> Option<u16> {
        (self.has_pdc_ids() && !self.syn()).then(|| be16_at(self.bytes, 10))
    }

    fn has_pdc_ids(&self) -> bool {
        self.sequenced() || self.kind.is_ack() || (self.kind.is_nack() && !self.nack_rudi())
    }

    /// A SYN packet's PDC info (4 bits; the use-reserved-PDC bit's place is disputed, so the
    /// nibble is shown whole).
    pub fn pdc_info(&self) -> Option<u8> {
        self.syn().then(|| byte_at(self.bytes, 10) >> 4)
    }

    /// A SYN packet's PSN − Start_PSN (12 bits).
    pub fn psn_offset(&self) -> Option<u16> {
        self.syn().then(|| be16_at(self.bytes, 10) & 0x0FFF)
    }

    /// Start_PSN = PSN − PSN offset, on a SYN packet.
    pub fn start_psn(&self) -> Option<u32> {
        Some(self.psn()?.wrapping_sub(u32::from(self.psn_offset()?)))
    }

    /// A CC request's congestion-control context id.
    pub fn ccc_id(&self) -> Option<u8> {
        self.has_request_cc().then(|| byte_at(self.bytes, 12))
    }

    /// A CC request's credit target (24 bits).
    pub fn credit_target(&self) -> Option<u32> {
        self.has_request_cc().then(|| be24_at(self.bytes, 13))
    }

    fn has_request_cc(&self) -> bool {
        matches!(self.kind, PdsType::RudCcRequest | PdsType::RodCcRequest)
    }

    /// The cumulative ACK PSN: every PSN up to it was received (ACKs).
    pub fn cack_psn(&self) -> Option<u32> {
        self.kind.is_ack().then(|| be32_at(self.bytes, 4))
    }

    /// ACK_PSN − CACK_PSN (ACKs that are no probe's).
    pub fn ack_psn_offset(&self) -> Option<i16> {
        (self.kind.is_ack() && !self.probe()).then(|| self.i16_at(2))
    }

    /// The PSN this ACK acknowledges: CACK_PSN + offset.
    pub fn ack_psn(&self) -> Option<u32> {
        Some(self.cack_psn()?.wrapping_add_signed(i32::from(self.ack_psn_offset()?)))
    }

    /// A probe's opaque value (a probe's ACK, a control packet).
    pub fn probe_opaque(&self) -> Option<u16> {
        (self.probe() || self.kind == PdsType::Control).then(|| be16_at(self.bytes, 2))
    }

    fn has_ack_extension(&self) -> bool {
        matches!(self.kind, PdsType::AckCc | PdsType::AckCcx)
    }

    /// The congestion control of ACK_CC's state: 0 NSCC, 1 credit (ACK_CCX: the CCX type).
    pub fn cc_type(&self) -> Option<u8> {
        self.has_ack_extension().then(|| byte_at(self.bytes, 12) >> 4)
    }

    pub fn cc_flags(&self) -> Option<u8> {
        self.has_ack_extension().then(|| byte_at(self.bytes, 12) & 0x0F)
    }

    /// Maximum PSN range (the reference provider counts it in units of 128 PSNs).
    pub fn mpr(&self) -> Option<u8> {
        self.has_ack_extension().then(|| byte_at(self.bytes, 13))
    }

    /// The SACK bitmap's base less CACK_PSN.
    pub fn sack_psn_offset(&self) -> Option<i16> {
        self.has_ack_extension().then(|| self.i16_at(14))
    }

    /// The SACK bitmap's first PSN: CACK_PSN + SACK offset.
    pub fn sack_base(&self) -> Option<u32> {
        Some(self.cack_psn()?.wrapping_add_signed(i32::from(self.sack_psn_offset()?)))
    }

    /// 64 PSNs from [`Pds::sack_base`], bit 0 (the least significant) the base.
    pub fn sack_bitmap(&self) -> Option<u64> {
        self.has_ack_extension().then(|| be64_at(self.bytes, 16))
    }

    /// Is `psn` selectively acknowledged by this ACK's bitmap?
    pub fn sacks(&self, psn: u32) -> bool {
        let (Some(base), Some(bitmap)) = (self.sack_base(), self.sack_bitmap()) else { return false };
        let bit = psn.wrapping_sub(base);
        bit < 64 && bitmap >> bit & 1 == 1
    }

    /// ACK_CC's 8 bytes of congestion state (ACK_CCX: the first 8 of its 16).
    pub fn cc_state(&self) -> Option<u64> {
        self.has_ack_extension().then(|| be64_at(self.bytes, 24))
    }

    /// NSCC's state (ACK_CC with cc_type 0).
    pub fn nscc(&self) -> Option<Nscc> {
        (self.kind == PdsType::AckCc && self.cc_type() == Some(0)).then(|| Nscc {
            service_time: be16_at(self.bytes, 24),
            restore_cwnd: byte_at(self.bytes, 26) & 0x80 != 0,
            rcv_cwnd_pend: byte_at(self.bytes, 26) & 0x7F,
            rcvd_bytes: be24_at(self.bytes, 27),
            ooo_count: be16_at(self.bytes, 30),
        })
    }

    /// Receiver-credit state (ACK_CC with cc_type 1): the credit and the out-of-order count.
    pub fn credit(&self) -> Option<(u32, u16)> {
        (self.kind == PdsType::AckCc && self.cc_type() == Some(1))
            .then(|| (be24_at(self.bytes, 24), be16_at(self.bytes, 30)))
    }

    /// ACK_CCX's 16 bytes or NACK_CCX's 16 bytes of CCX state.
    pub fn ccx_state(&self) -> Option<&'a [u8]> {
        match self.kind {
            PdsType::AckCcx => self.bytes.get(24..40),
            PdsType::NackCcx => self.bytes.get(16..32),
            _ => None,
        }
    }

    /// A NACK's code ([`super::names::nack_code`]).
    pub fn nack_code(&self) -> Option<u8> {
        self.kind.is_nack().then(|| byte_at(self.bytes, 2))
    }

    pub fn nack_vendor_code(&self) -> Option<u8> {
        self.kind.is_nack().then(|| byte_at(self.bytes, 3))
    }

    /// The PSN a NACK names (the packet id for a RUDI NACK: [`Pds::nack_rudi`]).
    pub fn nack_psn(&self) -> Option<u32> {
        self.kind.is_nack().then(|| be32_at(self.bytes, 4))
    }

    /// A NACK's or a control packet's 32-bit payload, meaning per code or control type.
    pub fn payload(&self) -> Option<u32> {
        (self.kind.is_nack() || self.kind == PdsType::Control).then(|| be32_at(self.bytes, 12))
    }

    /// A control packet's type ([`super::names::control_type`]), in the `next_hdr` place.
    pub fn ctl_type(&self) -> Option<u8> {
        (self.kind == PdsType::Control).then(|| self.next_header())
    }

    /// A RUDI packet's id.
    pub fn packet_id(&self) -> Option<u32> {
        matches!(self.kind, PdsType::RudiRequest | PdsType::RudiResponse).then(|| be32_at(self.bytes, 4))
    }
}

/// NSCC's congestion state in an ACK_CC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nscc {
    pub service_time: u16,
    pub restore_cwnd: bool,
    pub rcv_cwnd_pend: u8,
    pub rcvd_bytes: u32,
    pub ooo_count: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prologue word: type, next header, flags.
    fn prologue(kind: u8, next: u8, flags: u8) -> [u8; 2] {
        (u16::from(kind) << 11 | u16::from(next) << 7 | u16::from(flags)).to_be_bytes()
    }

    #[test]
    fn a_syn_request_carries_its_start_psn() {
        let mut b = prologue(2, 3, 0x10 | 0x08 | 0x04).to_vec(); // RETX AR SYN
        b.extend_from_slice(&(-3i16).to_be_bytes());
        b.extend_from_slice(&1000u32.to_be_bytes());
        b.extend_from_slice(&[0x00, 0x07, 0x80, 0x05]); // SPDCID 7, info 8, offset 5
        let (p, rest) = Pds::parse(&b).unwrap();
        assert!(rest.is_empty());
        assert_eq!(
            (p.pds_type(), p.next_header(), p.retx(), p.ar(), p.syn()),
            (PdsType::RudRequest, 3, true, true, true)
        );
        assert_eq!((p.psn(), p.clear_psn(), p.spdcid(), p.dpdcid()), (Some(1000), Some(997), Some(7), None));
        assert_eq!((p.pdc_info(), p.psn_offset(), p.start_psn()), (Some(8), Some(5), Some(995)));
        assert_eq!((p.cack_psn(), p.nack_code(), p.ecn_marked()), (None, None, false));
    }

    #[test]
    fn an_ack_cc_selectively_acknowledges_and_carries_nscc() {
        let mut b = prologue(8, 4, 0x20 | 0x04).to_vec(); // M, REQ = close
        b.extend_from_slice(&2i16.to_be_bytes());
        b.extend_from_slice(&500u32.to_be_bytes());
        b.extend_from_slice(&[0, 9, 0, 7]); // SPDCID 9, DPDCID 7
        b.extend_from_slice(&[0x00, 4, 0, 2]); // NSCC, MPR 4, SACK offset 2
        b.extend_from_slice(&0b1011u64.to_be_bytes());
        b.extend_from_slice(&[0, 100, 0x85, 0, 1, 0, 0, 3]);
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!(
            (p.ecn_marked(), p.ack_request(), p.ack_psn(), p.spdcid(), p.dpdcid()),
            (true, Some(2), Some(502), Some(9), Some(7))
        );
        assert_eq!((p.sack_base(), p.mpr()), (Some(502), Some(4)));
        assert!(p.sacks(502) && p.sacks(503) && !p.sacks(504) && p.sacks(505) && !p.sacks(501) && !p.sacks(566));
        let nscc = Nscc { service_time: 100, restore_cwnd: true, rcv_cwnd_pend: 5, rcvd_bytes: 256, ooo_count: 3 };
        assert_eq!(p.nscc(), Some(nscc));
        assert_eq!(p.credit(), None);
    }

    #[test]
    fn nacks_controls_and_short_headers() {
        let mut b = prologue(10, 0, 0x20).to_vec();
        b.extend_from_slice(&[0x01, 0]); // TRIMMED
        b.extend_from_slice(&77u32.to_be_bytes());
        b.extend_from_slice(&[0, 7, 0, 9, 0, 0, 0, 78]);
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!(
            (p.nack_code(), p.nack_psn(), p.payload(), p.ecn_marked(), p.spdcid()),
            (Some(1), Some(77), Some(78), true, Some(7))
        );
        let mut c = prologue(11, 6, 0x08).to_vec(); // CONTROL PROBE, AR
        c.extend_from_slice(&[0xAB, 0xCD]);
        c.extend_from_slice(&[0, 0, 0, 1, 0, 7, 0, 9, 0, 0, 0, 2]);
        let (p, _) = Pds::parse(&c).unwrap();
        assert_eq!(
            (p.ctl_type(), p.probe_opaque(), p.psn(), p.payload(), p.ar()),
            (Some(6), Some(0xABCD), Some(1), Some(2), true)
        );
        assert!(Pds::parse(&b[..15]).is_err(), "a NACK is 16 bytes");
        assert!(Pds::parse(&prologue(0, 0, 0)).is_err() && Pds::parse(&prologue(15, 0, 0)).is_err());
        let uud = [prologue(6, 1, 0x7F)[0], prologue(6, 1, 0x7F)[1], 0, 0];
        let (p, _) = Pds::parse(&uud).unwrap();
        assert_eq!((p.pds_type(), p.retx(), p.psn(), p.spdcid()), (PdsType::UudRequest, false, None, None));
    }
}
