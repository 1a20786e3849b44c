//! Management datagrams (IBA §13.4.2, MAD common header) and the Communication Manager messages
//! that set up RC connections (IBA §12.6: REQ, REP, RTU, REJ, DREQ, DREP).
//!
//! RDMA CM runs over UD SEND ONLY packets to QP1 (the GSI) with Q_Key 0x80010000; the 256-byte
//! MAD is the payload. Management class 0x07 is the CM. A field narrower than its container
//! occupies its most significant bits (IBA §12.6 field tables; Linux `ibta_vol1_c12.h`).

use crate::error::{Error, Layer, be16, be24, be32, split_array};

pub const MAD_LEN: usize = 256;
pub const MAD_HEADER_LEN: usize = 24;
pub const CM_DATA_LEN: usize = MAD_LEN - MAD_HEADER_LEN;
pub const MGMT_CLASS_CM: u8 = 0x07;
/// The general services interface QP, to which CM MADs are sent.
pub const GSI_QP: u32 = 1;
pub const GSI_QKEY: u32 = 0x8001_0000;

pub const ATTR_REQ: u16 = 0x0010;
pub const ATTR_MRA: u16 = 0x0011;
pub const ATTR_REJ: u16 = 0x0012;
pub const ATTR_REP: u16 = 0x0013;
pub const ATTR_RTU: u16 = 0x0014;
pub const ATTR_DREQ: u16 = 0x0015;
pub const ATTR_DREP: u16 = 0x0016;

/// The MAD common header view (24 bytes).
#[derive(Debug, Clone, Copy)]
pub struct MadHeader<'a> {
    bytes: &'a [u8; 24],
}

impl<'a> MadHeader<'a> {
    pub fn parse(input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_array::<24>(input, Layer::Mad)?;
        Ok((MadHeader { bytes }, rest))
    }

    pub fn base_version(&self) -> u8 {
        self.bytes[0]
    }

    pub fn mgmt_class(&self) -> u8 {
        self.bytes[1]
    }

    pub fn class_version(&self) -> u8 {
        self.bytes[2]
    }

    /// Method (bits 6:0); 0x03 is Send.
    pub fn method(&self) -> u8 {
        self.bytes[3] & 0x7F
    }

    /// The response bit (bit 7 of the method byte).
    pub fn is_response(&self) -> bool {
        self.bytes[3] & 0x80 != 0
    }

    pub fn status(&self) -> u16 {
        be16([self.bytes[4], self.bytes[5]])
    }

    pub fn transaction_id(&self) -> u64 {
        let mut t = [0u8; 8];
        t.copy_from_slice(&self.bytes[8..16]);
        u64::from_be_bytes(t)
    }

    pub fn attribute_id(&self) -> u16 {
        be16([self.bytes[16], self.bytes[17]])
    }

    pub fn attribute_modifier(&self) -> u32 {
        be32([self.bytes[20], self.bytes[21], self.bytes[22], self.bytes[23]])
    }
}

/// The 232 bytes of a CM message after the MAD header, with typed readers at byte offsets.
#[derive(Debug, Clone, Copy)]
pub struct CmData<'a> {
    bytes: &'a [u8; CM_DATA_LEN],
}

impl<'a> CmData<'a> {
    fn byte(&self, at: usize) -> u8 {
        self.bytes.get(at).copied().unwrap_or(0)
    }

    fn u16_at(&self, at: usize) -> u16 {
        be16([self.byte(at), self.byte(at + 1)])
    }

    fn u24_at(&self, at: usize) -> u32 {
        be24([self.byte(at), self.byte(at + 1), self.byte(at + 2)])
    }

    fn u32_at(&self, at: usize) -> u32 {
        be32([self.byte(at), self.byte(at + 1), self.byte(at + 2), self.byte(at + 3)])
    }

    fn u64_at(&self, at: usize) -> u64 {
        (u64::from(self.u32_at(at)) << 32) | u64::from(self.u32_at(at + 4))
    }

    fn gid_at(&self, at: usize) -> [u8; 16] {
        let mut g = [0u8; 16];
        for (i, b) in g.iter_mut().enumerate() {
            *b = self.byte(at + i);
        }
        g
    }

    /// Local communication ID (every CM message starts with it).
    pub fn local_comm_id(&self) -> u32 {
        self.u32_at(0)
    }

    /// Remote communication ID (every message but REQ).
    pub fn remote_comm_id(&self) -> u32 {
        self.u32_at(4)
    }
}

/// ConnectRequest (IBA §12.6.5).
#[derive(Debug, Clone, Copy)]
pub struct CmReq<'a>(pub CmData<'a>);

impl CmReq<'_> {
    pub fn local_comm_id(&self) -> u32 {
        self.0.local_comm_id()
    }

    pub fn service_id(&self) -> u64 {
        self.0.u64_at(8)
    }

    pub fn local_ca_guid(&self) -> u64 {
        self.0.u64_at(16)
    }

    pub fn local_qkey(&self) -> u32 {
        self.0.u32_at(28)
    }

    /// The active side's QP number.
    pub fn local_qpn(&self) -> u32 {
        self.0.u24_at(32)
    }

    pub fn responder_resources(&self) -> u8 {
        self.0.byte(35)
    }

    pub fn initiator_depth(&self) -> u8 {
        self.0.byte(39)
    }

    /// Transport service type: 0 RC, 1 UC, 3 XRC (bits 2:1 of byte 43).
    pub fn transport_service_type(&self) -> u8 {
        (self.0.byte(43) >> 1) & 0x03
    }

    /// The PSN the active side starts sending with.
    pub fn starting_psn(&self) -> u32 {
        self.0.u24_at(44)
    }

    /// Retries on ACK timeout or PSN-sequence NAK (3 bits).
    pub fn retry_count(&self) -> u8 {
        self.0.byte(47) & 0x07
    }

    pub fn pkey(&self) -> u16 {
        self.0.u16_at(48)
    }

    /// Path MTU code: 1 = 256, 2 = 512, 3 = 1024, 4 = 2048, 5 = 4096 bytes.
    pub fn path_mtu_code(&self) -> u8 {
        self.0.byte(50) >> 4
    }

    /// Path MTU in bytes, when the code is valid.
    pub fn path_mtu(&self) -> Option<u32> {
        mtu_bytes(self.path_mtu_code())
    }

    /// RNR retries (3 bits; 7 = infinite).
    pub fn rnr_retry_count(&self) -> u8 {
        self.0.byte(50) & 0x07
    }

    pub fn max_cm_retries(&self) -> u8 {
        self.0.byte(51) >> 4
    }

    pub fn srq(&self) -> bool {
        self.0.byte(51) & 0x08 != 0
    }

    pub fn primary_local_gid(&self) -> [u8; 16] {
        self.0.gid_at(56)
    }

    pub fn primary_remote_gid(&self) -> [u8; 16] {
        self.0.gid_at(72)
    }

    pub fn primary_flow_label(&self) -> u32 {
        self.0.u24_at(88) >> 4
    }

    pub fn primary_traffic_class(&self) -> u8 {
        self.0.byte(92)
    }

    pub fn primary_hop_limit(&self) -> u8 {
        self.0.byte(93)
    }

    pub fn primary_sl(&self) -> u8 {
        self.0.byte(94) >> 4
    }

    /// Local ACK timeout exponent: the timeout is 4.096 µs × 2^value (0 = disabled).
    pub fn local_ack_timeout(&self) -> u8 {
        self.0.byte(95) >> 3
    }
}

/// ConnectReply (IBA §12.6.8).
#[derive(Debug, Clone, Copy)]
pub struct CmRep<'a>(pub CmData<'a>);

impl CmRep<'_> {
    pub fn local_comm_id(&self) -> u32 {
        self.0.local_comm_id()
    }

    pub fn remote_comm_id(&self) -> u32 {
        self.0.remote_comm_id()
    }

    pub fn local_qkey(&self) -> u32 {
        self.0.u32_at(8)
    }

    /// The passive side's QP number.
    pub fn local_qpn(&self) -> u32 {
        self.0.u24_at(12)
    }

    /// The PSN the passive side starts sending with.
    pub fn starting_psn(&self) -> u32 {
        self.0.u24_at(20)
    }

    pub fn responder_resources(&self) -> u8 {
        self.0.byte(24)
    }

    pub fn initiator_depth(&self) -> u8 {
        self.0.byte(25)
    }

    pub fn target_ack_delay(&self) -> u8 {
        self.0.byte(26) >> 3
    }

    pub fn rnr_retry_count(&self) -> u8 {
        self.0.byte(27) >> 5
    }

    pub fn srq(&self) -> bool {
        self.0.byte(27) & 0x10 != 0
    }

    pub fn local_ca_guid(&self) -> u64 {
        self.0.u64_at(28)
    }
}

/// ConnectReject (IBA §12.6.7).
#[derive(Debug, Clone, Copy)]
pub struct CmRej<'a>(pub CmData<'a>);

impl CmRej<'_> {
    pub fn local_comm_id(&self) -> u32 {
        self.0.local_comm_id()
    }

    pub fn remote_comm_id(&self) -> u32 {
        self.0.remote_comm_id()
    }

    /// Which message is rejected: 0 REQ, 1 REP, 2 other.
    pub fn message_rejected(&self) -> u8 {
        self.0.byte(8) >> 6
    }

    /// Reject reason (IBA Table 112), e.g. 28 = consumer reject.
    pub fn reason(&self) -> u16 {
        self.0.u16_at(10)
    }
}

/// DisconnectRequest (IBA §12.6.10).
#[derive(Debug, Clone, Copy)]
pub struct CmDreq<'a>(pub CmData<'a>);

impl CmDreq<'_> {
    pub fn local_comm_id(&self) -> u32 {
        self.0.local_comm_id()
    }

    pub fn remote_comm_id(&self) -> u32 {
        self.0.remote_comm_id()
    }

    /// The QPN of the side that receives this DREQ.
    pub fn remote_qpn(&self) -> u32 {
        self.0.u24_at(8)
    }
}

/// A CM message that carries only the two communication IDs (RTU, DREP).
#[derive(Debug, Clone, Copy)]
pub struct CmIds<'a>(pub CmData<'a>);

impl CmIds<'_> {
    pub fn local_comm_id(&self) -> u32 {
        self.0.local_comm_id()
    }

    pub fn remote_comm_id(&self) -> u32 {
        self.0.remote_comm_id()
    }
}

/// A decoded CM message.
#[derive(Debug, Clone, Copy)]
pub enum CmMessage<'a> {
    Req(CmReq<'a>),
    Rep(CmRep<'a>),
    Rtu(CmIds<'a>),
    Rej(CmRej<'a>),
    Dreq(CmDreq<'a>),
    Drep(CmIds<'a>),
    /// Another CM attribute (MRA, SIDR, LAP, APR, ClassPortInfo).
    Other {
        attribute_id: u16,
    },
}

impl CmMessage<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            CmMessage::Req(_) => "ConnectRequest",
            CmMessage::Rep(_) => "ConnectReply",
            CmMessage::Rtu(_) => "ReadyToUse",
            CmMessage::Rej(_) => "ConnectReject",
            CmMessage::Dreq(_) => "DisconnectRequest",
            CmMessage::Drep(_) => "DisconnectReply",
            CmMessage::Other { attribute_id } => attribute_name(*attribute_id),
        }
    }
}

/// Names CM attributes (IBA Table 99).
fn attribute_name(attribute_id: u16) -> &'static str {
    match attribute_id {
        0x0001 => "ClassPortInfo",
        ATTR_REQ => "ConnectRequest",
        ATTR_MRA => "MessageReceiptAcknowledgement",
        ATTR_REJ => "ConnectReject",
        ATTR_REP => "ConnectReply",
        ATTR_RTU => "ReadyToUse",
        ATTR_DREQ => "DisconnectRequest",
        ATTR_DREP => "DisconnectReply",
        0x0017 => "ServiceIDResolutionRequest",
        0x0018 => "ServiceIDResolutionResponse",
        0x0019 => "LoadAlternatePath",
        0x001A => "AlternatePathResponse",
        _ => "unknown CM attribute",
    }
}

/// Path MTU in bytes for an IBA MTU code (1 = 256 … 5 = 4096).
pub fn mtu_bytes(code: u8) -> Option<u32> {
    match code {
        1..=5 => Some(128 << code),
        _ => None,
    }
}

/// A CM MAD: header and message.
#[derive(Debug, Clone, Copy)]
pub struct CmMad<'a> {
    pub header: MadHeader<'a>,
    pub message: CmMessage<'a>,
}

impl<'a> CmMad<'a> {
    /// Decodes a UD payload as a CM MAD. Fails when the payload is shorter than a MAD or is a
    /// MAD of another management class.
    pub fn parse(payload: &'a [u8]) -> Result<Self, Error> {
        let (header, rest) = MadHeader::parse(payload)?;
        if header.mgmt_class() != MGMT_CLASS_CM {
            return Err(Error::invalid(Layer::Mad, "management class is not CM (0x07)"));
        }
        let (data, _) = split_array::<CM_DATA_LEN>(rest, Layer::Mad)
            .map_err(|_| Error::truncated(Layer::Mad, MAD_LEN, payload.len()))?;
        let data = CmData { bytes: data };
        let message = match header.attribute_id() {
            ATTR_REQ => CmMessage::Req(CmReq(data)),
            ATTR_REP => CmMessage::Rep(CmRep(data)),
            ATTR_RTU => CmMessage::Rtu(CmIds(data)),
            ATTR_REJ => CmMessage::Rej(CmRej(data)),
            ATTR_DREQ => CmMessage::Dreq(CmDreq(data)),
            ATTR_DREP => CmMessage::Drep(CmIds(data)),
            attribute_id => CmMessage::Other { attribute_id },
        };
        Ok(CmMad { header, message })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mad(attribute_id: u16, fill: impl Fn(&mut [u8])) -> Vec<u8> {
        let mut m = vec![0u8; MAD_LEN];
        m[..4].copy_from_slice(&[1, MGMT_CLASS_CM, 2, 0x03]);
        m[8..16].copy_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
        m[16..18].copy_from_slice(&attribute_id.to_be_bytes());
        fill(&mut m[MAD_HEADER_LEN..]);
        m
    }

    #[test]
    fn connect_request_fields() {
        let m = mad(ATTR_REQ, |d| {
            d[0..4].copy_from_slice(&0xaabb_ccddu32.to_be_bytes());
            d[8..16].copy_from_slice(&0x0000_0000_0106_4a91u64.to_be_bytes());
            d[32..35].copy_from_slice(&[0x00, 0x00, 0x11]); // local QPN 0x11
            d[35] = 0x10;
            d[43] = 0b1011_0000; // remote CM timeout 22, RC
            d[44..47].copy_from_slice(&[0xe1, 0xa4, 0x7d]); // starting PSN
            d[47] = 0b1011_0111; // local CM timeout 22, retry 7
            d[48..50].copy_from_slice(&[0xff, 0xff]);
            d[50] = 0x37; // MTU 1024, RNR retry 7
            d[51] = 0xf0;
            d[88..91].copy_from_slice(&[0x12, 0x34, 0x50]); // flow label 0x12345
            d[92] = 106;
            d[93] = 64;
            d[94] = 0x30;
            d[95] = 14 << 3; // ACK timeout 14
        });
        let cm = CmMad::parse(&m).unwrap();
        assert_eq!(cm.header.base_version(), 1);
        assert_eq!(cm.header.class_version(), 2);
        assert_eq!(cm.header.method(), 3);
        assert!(!cm.header.is_response());
        assert_eq!(cm.header.transaction_id(), 0x0102_0304_0506_0708);
        assert_eq!(cm.message.name(), "ConnectRequest");
        let CmMessage::Req(req) = cm.message else { panic!("not a REQ") };
        assert_eq!(req.local_comm_id(), 0xaabb_ccdd);
        assert_eq!(req.service_id(), 0x0106_4a91);
        assert_eq!(req.local_qpn(), 0x11);
        assert_eq!(req.responder_resources(), 0x10);
        assert_eq!(req.transport_service_type(), 0);
        assert_eq!(req.starting_psn(), 0xe1a47d);
        assert_eq!(req.retry_count(), 7);
        assert_eq!(req.pkey(), 0xffff);
        assert_eq!((req.path_mtu_code(), req.path_mtu()), (3, Some(1024)));
        assert_eq!(req.rnr_retry_count(), 7);
        assert_eq!(req.max_cm_retries(), 15);
        assert_eq!(req.primary_flow_label(), 0x12345);
        assert_eq!((req.primary_traffic_class(), req.primary_hop_limit(), req.primary_sl()), (106, 64, 3));
        assert_eq!(req.local_ack_timeout(), 14);
    }

    #[test]
    fn connect_reply_and_teardown() {
        let rep = mad(ATTR_REP, |d| {
            d[0..4].copy_from_slice(&7u32.to_be_bytes());
            d[4..8].copy_from_slice(&0xaabb_ccddu32.to_be_bytes());
            d[12..15].copy_from_slice(&[0, 0, 0x17]);
            d[20..23].copy_from_slice(&[0x89, 0xbb, 0x0e]);
            d[26] = 15 << 3;
            d[27] = 0xe0;
        });
        let CmMessage::Rep(r) = CmMad::parse(&rep).unwrap().message else { panic!("not a REP") };
        assert_eq!((r.local_comm_id(), r.remote_comm_id()), (7, 0xaabb_ccdd));
        assert_eq!((r.local_qpn(), r.starting_psn()), (0x17, 0x89bb0e));
        assert_eq!((r.target_ack_delay(), r.rnr_retry_count(), r.srq()), (15, 7, false));

        let dreq = mad(ATTR_DREQ, |d| d[8..11].copy_from_slice(&[0, 0, 0x11]));
        let CmMessage::Dreq(d) = CmMad::parse(&dreq).unwrap().message else { panic!("not a DREQ") };
        assert_eq!(d.remote_qpn(), 0x11);

        let rej = mad(ATTR_REJ, |d| {
            d[8] = 0x40;
            d[10..12].copy_from_slice(&28u16.to_be_bytes());
        });
        let CmMessage::Rej(j) = CmMad::parse(&rej).unwrap().message else { panic!("not a REJ") };
        assert_eq!((j.message_rejected(), j.reason()), (1, 28));

        assert_eq!(CmMad::parse(&mad(ATTR_RTU, |_| ())).unwrap().message.name(), "ReadyToUse");
        assert_eq!(CmMad::parse(&mad(ATTR_DREP, |_| ())).unwrap().message.name(), "DisconnectReply");
        assert_eq!(CmMad::parse(&mad(0x0019, |_| ())).unwrap().message.name(), "LoadAlternatePath");
    }

    #[test]
    fn not_a_cm_mad() {
        let mut m = mad(ATTR_REQ, |_| ());
        m[1] = 0x01; // subnet management
        assert_eq!(CmMad::parse(&m).unwrap_err(), Error::invalid(Layer::Mad, "management class is not CM (0x07)"));
        let m = mad(ATTR_REQ, |_| ());
        assert_eq!(CmMad::parse(&m[..100]).unwrap_err(), Error::truncated(Layer::Mad, 256, 100));
        assert_eq!(CmMad::parse(&m[..10]).unwrap_err(), Error::truncated(Layer::Mad, 24, 10));
    }

    #[test]
    fn mtu_codes() {
        assert_eq!(mtu_bytes(1), Some(256));
        assert_eq!(mtu_bytes(5), Some(4096));
        assert_eq!(mtu_bytes(0), None);
        assert_eq!(mtu_bytes(6), None);
    }
}
