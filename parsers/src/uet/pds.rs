//! The PDS header: a 16-bit prologue (type 5 bits, `next_hdr` or `ctl_type` 4 bits, flags 7
//! bits), then a layout of 4 to 40 bytes per type (../shared/uet-facts.md §2).

use crate::emit::{be24_bytes, join};
use crate::error::{Error, Layer, be16_at, be24_at, be32_at, be64_at, byte_at, split_bytes};

// The prologue's flag bits, as masks on its low byte (../shared/uet-facts.md §2.1): a bit's
// meaning depends on the type, so several names share a mask.

/// A retransmission (every type but UUD).
pub const RETX: u8 = 0x10;
/// Ack requested (requests and control packets).
pub const AR: u8 = 0x08;
/// SYN: the PDC is being established (requests and control packets).
pub const SYN: u8 = 0x04;
/// M: the packet acknowledged arrived CE-marked (ACKs, NACKs, RUDI responses).
pub const M: u8 = 0x20;
/// P: a probe's ACK.
pub const PROBE: u8 = 0x08;
/// An ACK's 2-bit request: [`ACK_REQUEST_CLEAR`] or [`ACK_REQUEST_CLOSE`].
pub const ACK_REQUEST: u8 = 0x06;
/// The ACK asks the initiator to clear the PSN state.
pub const ACK_REQUEST_CLEAR: u8 = 0x02;
/// The ACK asks the initiator to close the PDC.
pub const ACK_REQUEST_CLOSE: u8 = 0x04;
/// NT: a NACK of a RUDI packet.
pub const NACK_RUDI: u8 = 0x08;
/// A control packet of a ROD PDC.
pub const CONTROL_ROD: u8 = 0x20;
/// The 7 flag bits.
const FLAGS: u8 = 0x7F;

/// ACK_CC's `cc_type`: NSCC's state ([`Nscc`]) or receiver credit.
pub const CC_NSCC: u8 = 0;
pub const CC_CREDIT: u8 = 1;

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
        byte_at(self.bytes, 1) & FLAGS
    }

    fn flag(&self, mask: u8) -> bool {
        self.flags() & mask != 0
    }

    /// A retransmission (every type but UUD).
    pub fn retx(&self) -> bool {
        self.kind != PdsType::UudRequest && self.flag(RETX)
    }

    /// Ack requested (requests and control packets).
    pub fn ar(&self) -> bool {
        (self.kind.is_pdc_request() || self.kind == PdsType::Control) && self.flag(AR)
    }

    /// SYN: the PDC is being established (requests and control packets); the DPDCID's place
    /// then holds the PDC info and the PSN offset.
    pub fn syn(&self) -> bool {
        (self.kind.is_pdc_request() || self.kind == PdsType::Control) && self.flag(SYN)
    }

    /// M: the packet acknowledged arrived CE-marked (ACKs, NACKs, RUDI responses).
    pub fn ecn_marked(&self) -> bool {
        (self.kind.is_ack() || self.kind.is_nack() || self.kind == PdsType::RudiResponse) && self.flag(M)
    }

    /// P: a probe's ACK (its `ack_psn_offset` holds the probe's opaque value).
    pub fn probe(&self) -> bool {
        self.kind.is_ack() && self.flag(PROBE)
    }

    /// An ACK's request: 0 none, 1 clear the PSN state, 2 close the PDC.
    pub fn ack_request(&self) -> Option<u8> {
        self.kind.is_ack().then(|| (self.flags() & ACK_REQUEST) / ACK_REQUEST_CLEAR)
    }

    /// NT: a NACK of a RUDI packet (it names a packet id, not a PSN).
    pub fn nack_rudi(&self) -> bool {
        self.kind.is_nack() && self.flag(NACK_RUDI)
    }

    /// A control packet of a ROD PDC (the reference provider and xdp2; Wireshark shows it
    /// reserved).
    pub fn control_rod(&self) -> bool {
        self.kind == PdsType::Control && self.flag(CONTROL_ROD)
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
        (self.kind == PdsType::AckCc && self.cc_type() == Some(CC_NSCC)).then(|| Nscc {
            service_time: be16_at(self.bytes, 24),
            restore_cwnd: byte_at(self.bytes, 26) & 0x80 != 0,
            rcv_cwnd_pend: byte_at(self.bytes, 26) & 0x7F,
            rcvd_bytes: be24_at(self.bytes, 27),
            ooo_count: be16_at(self.bytes, 30),
        })
    }

    /// Receiver-credit state (ACK_CC with cc_type 1): the credit and the out-of-order count.
    pub fn credit(&self) -> Option<(u32, u16)> {
        (self.kind == PdsType::AckCc && self.cc_type() == Some(CC_CREDIT))
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

impl Nscc {
    /// The 8 bytes of ACK_CC's state ([`AckExtension::Cc`]), as [`Pds::nscc`] reads them.
    pub fn state(&self) -> u64 {
        let pend = (u8::from(self.restore_cwnd) << 7) | (self.rcv_cwnd_pend & 0x7F);
        u64::from_be_bytes(join(&[
            &self.service_time.to_be_bytes(),
            &[pend],
            &be24_bytes(self.rcvd_bytes),
            &self.ooo_count.to_be_bytes(),
        ]))
    }
}

/// A PDS header's fields, to write one ([`PdsRepr::emit`]) or to read one whole
/// ([`PdsRepr::of`]); the type follows from `body`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdsRepr {
    /// `next_hdr` (4 bits): the SES header that follows; a control packet's `ctl_type`.
    pub next_header: u8,
    /// The 7 flag bits (the constants above). SYN is written as the PDC fields' `target` says
    /// and P as an ACK's `acked` says, whatever this holds.
    pub flags: u8,
    pub body: PdsBody,
}

/// The fields after the prologue, per type (../shared/uet-facts.md §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdsBody {
    /// RUD_REQ, ROD_REQ, RUD_CC_REQ, ROD_CC_REQ.
    Request(RequestRepr),
    /// ACK, ACK_CC, ACK_CCX.
    Ack(AckRepr),
    /// NACK, NACK_CCX.
    Nack(NackRepr),
    Control(ControlRepr),
    RudiRequest {
        packet_id: u32,
    },
    RudiResponse {
        packet_id: u32,
    },
    /// UUD_REQ: the prologue and 2 reserved bytes.
    Uud,
}

/// The PSN and the PDC ids a request or a control packet carries at bytes 4 to 12.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdcFields {
    pub psn: u32,
    pub spdcid: u16,
    pub target: PdcTarget,
}

/// What the DPDCID's place holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdcTarget {
    Dpdcid(u16),
    /// A SYN packet's PDC info (4 bits, written whole: the place of its use-reserved-PDC bit
    /// is disputed, ../shared/uet-facts.md §2.2) and PSN − Start_PSN (12 bits).
    Syn {
        pdc_info: u8,
        psn_offset: u16,
    },
}

/// A RUD or ROD request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRepr {
    /// ROD rather than RUD.
    pub ordered: bool,
    /// Clear_PSN − PSN.
    pub clear_psn_offset: i16,
    pub pdc: PdcFields,
    /// The CC state of RUD_CC_REQ and ROD_CC_REQ.
    pub cc: Option<RequestCc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestCc {
    pub ccc_id: u8,
    /// 24 bits.
    pub credit_target: u32,
}

/// An ACK, with ACK_CC's or ACK_CCX's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckRepr {
    pub acked: Acked,
    pub cack_psn: u32,
    pub spdcid: u16,
    pub dpdcid: u16,
    pub extension: AckExtension,
}

/// What an ACK's bytes 2 and 3 hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acked {
    /// ACK_PSN − CACK_PSN.
    Offset(i16),
    /// A probe's ACK: the probe's opaque value.
    Probe(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckExtension {
    /// A plain ACK.
    None,
    /// ACK_CC: the SACK and 8 bytes of congestion state ([`Nscc::state`] for NSCC).
    Cc { sack: Sack, state: u64 },
    /// ACK_CCX: the SACK and 16 bytes of CCX state.
    Ccx { sack: Sack, state: [u8; 16] },
}

/// The SACK part of ACK_CC's and ACK_CCX's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sack {
    /// 4 bits: 0 NSCC, 1 credit (ACK_CCX: the CCX type).
    pub cc_type: u8,
    /// 4 bits.
    pub cc_flags: u8,
    pub mpr: u8,
    /// The bitmap's base less CACK_PSN.
    pub sack_psn_offset: i16,
    pub bitmap: u64,
}

/// A NACK, with NACK_CCX's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NackRepr {
    pub code: u8,
    pub vendor_code: u8,
    /// The PSN, or the packet id of a RUDI NACK.
    pub psn: u32,
    /// The PDC ids, 0 in a RUDI NACK ([`NACK_RUDI`]).
    pub spdcid: u16,
    pub dpdcid: u16,
    pub payload: u32,
    pub ccx_state: Option<[u8; 16]>,
}

/// A control packet (its `ctl_type` is [`PdsRepr::next_header`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlRepr {
    pub probe_opaque: u16,
    pub pdc: PdcFields,
    pub payload: u32,
}

impl PdsRepr {
    pub fn pds_type(&self) -> PdsType {
        use PdsType::*;
        match &self.body {
            PdsBody::Request(r) => match (r.ordered, r.cc.is_some()) {
                (false, false) => RudRequest,
                (true, false) => RodRequest,
                (false, true) => RudCcRequest,
                (true, true) => RodCcRequest,
            },
            PdsBody::Ack(a) => match a.extension {
                AckExtension::None => Ack,
                AckExtension::Cc { .. } => AckCc,
                AckExtension::Ccx { .. } => AckCcx,
            },
            PdsBody::Nack(n) => {
                if n.ccx_state.is_some() {
                    NackCcx
                } else {
                    Nack
                }
            }
            PdsBody::Control(_) => Control,
            PdsBody::RudiRequest { .. } => RudiRequest,
            PdsBody::RudiResponse { .. } => RudiResponse,
            PdsBody::Uud => UudRequest,
        }
    }

    pub fn header_len(&self) -> usize {
        self.pds_type().header_len()
    }

    /// Reads a header whole. A field the view does not show (a SYN packet's DPDCID, a RUDI
    /// NACK's PDC ids) reads as 0.
    pub fn of(pds: &Pds<'_>) -> Self {
        let body = match pds.pds_type() {
            kind if kind.is_pdc_request() => PdsBody::Request(RequestRepr::of(pds)),
            kind if kind.is_ack() => PdsBody::Ack(AckRepr::of(pds)),
            kind if kind.is_nack() => PdsBody::Nack(NackRepr::of(pds)),
            PdsType::Control => PdsBody::Control(ControlRepr::of(pds)),
            PdsType::RudiRequest => PdsBody::RudiRequest { packet_id: pds.packet_id().unwrap_or(0) },
            PdsType::RudiResponse => PdsBody::RudiResponse { packet_id: pds.packet_id().unwrap_or(0) },
            _ => PdsBody::Uud,
        };
        PdsRepr { next_header: pds.next_header(), flags: pds.flags(), body }
    }

    /// Writes the header's [`PdsRepr::header_len`] bytes through `put`; each field keeps its
    /// low bits, the reserved bytes are 0.
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        let word = u16::from(self.pds_type() as u8) << 11
            | u16::from(self.next_header & 0x0F) << 7
            | u16::from(self.written_flags());
        put(&word.to_be_bytes());
        match &self.body {
            PdsBody::Request(r) => r.emit(put),
            PdsBody::Ack(a) => a.emit(put),
            PdsBody::Nack(n) => n.emit(put),
            PdsBody::Control(c) => c.emit(put),
            PdsBody::RudiRequest { packet_id } | PdsBody::RudiResponse { packet_id } => {
                put(&[0, 0]);
                put(&packet_id.to_be_bytes());
            }
            PdsBody::Uud => put(&[0, 0]),
        }
    }

    /// `flags` with the bit that says what a field holds (SYN, P) set from that field.
    fn written_flags(&self) -> u8 {
        let (bit, set) = match &self.body {
            PdsBody::Request(RequestRepr { pdc, .. }) | PdsBody::Control(ControlRepr { pdc, .. }) => {
                (SYN, matches!(pdc.target, PdcTarget::Syn { .. }))
            }
            PdsBody::Ack(a) => (PROBE, matches!(a.acked, Acked::Probe(_))),
            _ => (0, false),
        };
        let flags = self.flags & FLAGS & !bit;
        if set { flags | bit } else { flags }
    }
}

impl PdcFields {
    fn of(pds: &Pds<'_>) -> Self {
        let target = if pds.syn() {
            PdcTarget::Syn { pdc_info: pds.pdc_info().unwrap_or(0), psn_offset: pds.psn_offset().unwrap_or(0) }
        } else {
            PdcTarget::Dpdcid(pds.dpdcid().unwrap_or(0))
        };
        PdcFields { psn: pds.psn().unwrap_or(0), spdcid: pds.spdcid().unwrap_or(0), target }
    }

    fn emit(&self, mut put: impl FnMut(&[u8])) {
        let target = match self.target {
            PdcTarget::Dpdcid(id) => id,
            PdcTarget::Syn { pdc_info, psn_offset } => u16::from(pdc_info & 0x0F) << 12 | psn_offset & 0x0FFF,
        };
        put(&self.psn.to_be_bytes());
        put(&self.spdcid.to_be_bytes());
        put(&target.to_be_bytes());
    }
}

impl RequestRepr {
    fn of(pds: &Pds<'_>) -> Self {
        let cc =
            pds.ccc_id().zip(pds.credit_target()).map(|(ccc_id, credit_target)| RequestCc { ccc_id, credit_target });
        RequestRepr {
            ordered: pds.pds_type().is_ordered(),
            clear_psn_offset: pds.clear_psn_offset().unwrap_or(0),
            pdc: PdcFields::of(pds),
            cc,
        }
    }

    fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&self.clear_psn_offset.to_be_bytes());
        self.pdc.emit(&mut put);
        if let Some(cc) = self.cc {
            put(&[cc.ccc_id]);
            put(&be24_bytes(cc.credit_target));
        }
    }
}

impl AckRepr {
    fn of(pds: &Pds<'_>) -> Self {
        let acked = match pds.ack_psn_offset() {
            Some(offset) => Acked::Offset(offset),
            None => Acked::Probe(pds.probe_opaque().unwrap_or(0)),
        };
        let sack = Sack {
            cc_type: pds.cc_type().unwrap_or(0),
            cc_flags: pds.cc_flags().unwrap_or(0),
            mpr: pds.mpr().unwrap_or(0),
            sack_psn_offset: pds.sack_psn_offset().unwrap_or(0),
            bitmap: pds.sack_bitmap().unwrap_or(0),
        };
        let extension = match pds.pds_type() {
            PdsType::AckCc => AckExtension::Cc { sack, state: pds.cc_state().unwrap_or(0) },
            PdsType::AckCcx => AckExtension::Ccx { sack, state: state16(pds.ccx_state()) },
            _ => AckExtension::None,
        };
        AckRepr {
            acked,
            cack_psn: pds.cack_psn().unwrap_or(0),
            spdcid: pds.spdcid().unwrap_or(0),
            dpdcid: pds.dpdcid().unwrap_or(0),
            extension,
        }
    }

    fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&match self.acked {
            Acked::Offset(offset) => offset.to_be_bytes(),
            Acked::Probe(opaque) => opaque.to_be_bytes(),
        });
        put(&self.cack_psn.to_be_bytes());
        put(&self.spdcid.to_be_bytes());
        put(&self.dpdcid.to_be_bytes());
        match &self.extension {
            AckExtension::None => {}
            AckExtension::Cc { sack, state } => {
                sack.emit(&mut put);
                put(&state.to_be_bytes());
            }
            AckExtension::Ccx { sack, state } => {
                sack.emit(&mut put);
                put(state);
            }
        }
    }
}

impl Sack {
    fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&[(self.cc_type << 4) | (self.cc_flags & 0x0F), self.mpr]);
        put(&self.sack_psn_offset.to_be_bytes());
        put(&self.bitmap.to_be_bytes());
    }
}

impl NackRepr {
    fn of(pds: &Pds<'_>) -> Self {
        NackRepr {
            code: pds.nack_code().unwrap_or(0),
            vendor_code: pds.nack_vendor_code().unwrap_or(0),
            psn: pds.nack_psn().unwrap_or(0),
            spdcid: pds.spdcid().unwrap_or(0),
            dpdcid: pds.dpdcid().unwrap_or(0),
            payload: pds.payload().unwrap_or(0),
            ccx_state: (pds.pds_type() == PdsType::NackCcx).then(|| state16(pds.ccx_state())),
        }
    }

    fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&[self.code, self.vendor_code]);
        put(&self.psn.to_be_bytes());
        put(&self.spdcid.to_be_bytes());
        put(&self.dpdcid.to_be_bytes());
        put(&self.payload.to_be_bytes());
        if let Some(state) = &self.ccx_state {
            put(state);
        }
    }
}

impl ControlRepr {
    fn of(pds: &Pds<'_>) -> Self {
        ControlRepr {
            probe_opaque: pds.probe_opaque().unwrap_or(0),
            pdc: PdcFields::of(pds),
            payload: pds.payload().unwrap_or(0),
        }
    }

    fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&self.probe_opaque.to_be_bytes());
        self.pdc.emit(&mut put);
        put(&self.payload.to_be_bytes());
    }
}

/// 16 bytes of CCX state (zeros if the view has none).
fn state16(state: Option<&[u8]>) -> [u8; 16] {
    state.and_then(|s| <[u8; 16]>::try_from(s).ok()).unwrap_or([0; 16])
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

    /// `repr`'s bytes, checked to be its type's length and to read back as `repr`.
    fn emitted(repr: PdsRepr) -> Vec<u8> {
        let mut b = Vec::new();
        repr.emit(|part| b.extend_from_slice(part));
        let (p, rest) = Pds::parse(&b).unwrap();
        assert_eq!((b.len(), rest.len(), p.pds_type()), (repr.header_len(), 0, repr.pds_type()));
        assert_eq!(PdsRepr::of(&p), repr);
        b
    }

    fn pdc(psn: u32, target: PdcTarget) -> PdcFields {
        PdcFields { psn, spdcid: 7, target }
    }

    #[test]
    fn requests_round_trip_with_and_without_cc_and_syn() {
        let syn = PdcTarget::Syn { pdc_info: 8, psn_offset: 5 };
        for (ordered, cc) in
            [(false, None), (true, None), (false, Some(RequestCc { ccc_id: 3, credit_target: 0x12_3456 }))]
        {
            let request = RequestRepr { ordered, clear_psn_offset: -3, pdc: pdc(1000, syn), cc };
            let b = emitted(PdsRepr { next_header: 3, flags: RETX | AR | SYN, body: PdsBody::Request(request) });
            let (p, _) = Pds::parse(&b).unwrap();
            assert_eq!(
                (p.retx(), p.ar(), p.syn(), p.clear_psn(), p.start_psn()),
                (true, true, true, Some(997), Some(995))
            );
            assert_eq!(
                (p.pdc_info(), p.dpdcid(), p.ccc_id(), p.pds_type().is_ordered()),
                (Some(8), None, cc.map(|c| c.ccc_id), ordered)
            );
        }
        let cc = Some(RequestCc { ccc_id: 1, credit_target: 64 });
        let request = RequestRepr { ordered: true, clear_psn_offset: 0, pdc: pdc(5, PdcTarget::Dpdcid(9)), cc };
        // SYN follows the target, whatever the flags say
        let b = emitted(PdsRepr { next_header: 2, flags: 0, body: PdsBody::Request(request) });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!((p.pds_type(), p.dpdcid(), p.credit_target()), (PdsType::RodCcRequest, Some(9), Some(64)));
        let mut b = Vec::new();
        PdsRepr { next_header: 2, flags: SYN, body: PdsBody::Request(request) }.emit(|part| b.extend_from_slice(part));
        assert!(!Pds::parse(&b).unwrap().0.syn());
    }

    #[test]
    fn acks_round_trip_with_their_extensions() {
        let ack = |acked, extension| AckRepr { acked, cack_psn: 500, spdcid: 9, dpdcid: 7, extension };
        let b = emitted(PdsRepr {
            next_header: 4,
            flags: ACK_REQUEST_CLOSE,
            body: PdsBody::Ack(ack(Acked::Offset(-2), AckExtension::None)),
        });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!((p.ack_psn(), p.ack_request(), p.probe(), p.dpdcid()), (Some(498), Some(2), false, Some(7)));
        let b = emitted(PdsRepr {
            next_header: 0,
            flags: PROBE,
            body: PdsBody::Ack(ack(Acked::Probe(0xABCD), AckExtension::None)),
        });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!((p.probe(), p.probe_opaque(), p.ack_psn_offset()), (true, Some(0xABCD), None));
        let sack = Sack { cc_type: 0, cc_flags: 2, mpr: 4, sack_psn_offset: 2, bitmap: 0b1011 };
        let nscc = Nscc { service_time: 100, restore_cwnd: true, rcv_cwnd_pend: 5, rcvd_bytes: 256, ooo_count: 3 };
        let cc = AckExtension::Cc { sack, state: nscc.state() };
        let b = emitted(PdsRepr { next_header: 0, flags: M, body: PdsBody::Ack(ack(Acked::Offset(2), cc)) });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!(
            (p.ecn_marked(), p.cc_flags(), p.mpr(), p.sack_base(), p.nscc()),
            (true, Some(2), Some(4), Some(502), Some(nscc))
        );
        assert!(p.sacks(502) && p.sacks(503) && !p.sacks(504) && p.sacks(505));
        let ccx = AckExtension::Ccx { sack: Sack { cc_type: 3, ..sack }, state: [0x44; 16] };
        let b = emitted(PdsRepr { next_header: 5, flags: RETX, body: PdsBody::Ack(ack(Acked::Offset(0), ccx)) });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!((p.cc_type(), p.ccx_state(), p.retx(), p.nscc()), (Some(3), Some(&[0x44; 16][..]), true, None));
    }

    #[test]
    fn nacks_and_control_packets_round_trip() {
        let nack = NackRepr { code: 1, vendor_code: 2, psn: 77, spdcid: 7, dpdcid: 9, payload: 78, ccx_state: None };
        let b = emitted(PdsRepr { next_header: 0, flags: M, body: PdsBody::Nack(nack) });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!(
            (p.nack_code(), p.nack_vendor_code(), p.nack_psn(), p.payload(), p.ecn_marked()),
            (Some(1), Some(2), Some(77), Some(78), true)
        );
        let rudi = NackRepr { spdcid: 0, dpdcid: 0, ccx_state: Some([0x33; 16]), ..nack };
        let b = emitted(PdsRepr { next_header: 0, flags: NACK_RUDI, body: PdsBody::Nack(rudi) });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!(
            (p.pds_type(), p.nack_rudi(), p.spdcid(), p.ccx_state()),
            (PdsType::NackCcx, true, None, Some(&[0x33; 16][..]))
        );
        let control = ControlRepr {
            probe_opaque: 0xABCD,
            pdc: pdc(1, PdcTarget::Syn { pdc_info: 0, psn_offset: 1 }),
            payload: 2,
        };
        let b = emitted(PdsRepr { next_header: 6, flags: CONTROL_ROD | AR | SYN, body: PdsBody::Control(control) });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!(
            (p.ctl_type(), p.control_rod(), p.ar(), p.start_psn(), p.payload()),
            (Some(6), true, true, Some(0), Some(2))
        );
    }

    #[test]
    fn rudi_and_uud_round_trip() {
        let b = emitted(PdsRepr { next_header: 1, flags: RETX, body: PdsBody::RudiRequest { packet_id: 77 } });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!((p.packet_id(), p.retx(), p.psn(), p.next_header()), (Some(77), true, None, 1));
        let b = emitted(PdsRepr { next_header: 4, flags: M, body: PdsBody::RudiResponse { packet_id: 78 } });
        let (p, _) = Pds::parse(&b).unwrap();
        assert_eq!((p.packet_id(), p.ecn_marked()), (Some(78), true));
        let b = emitted(PdsRepr { next_header: 3, flags: 0, body: PdsBody::Uud });
        assert_eq!(b, [6 << 3 | 1, 0x80, 0, 0]);
    }
}
