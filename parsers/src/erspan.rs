//! ERSPAN headers (draft-foschiano-erspan; Linux `include/net/erspan.h`).
//!
//! Type II (GRE protocol 0x88BE, 8 bytes): Ver(4)=1 · VLAN(12) · COS(3) · En(2) · T(1) ·
//! Session(10) | reserved(12) · Index(20).
//! Type III (GRE protocol 0x22EB, 12 bytes): Ver(4)=2 · VLAN(12) · COS(3) · BSO(2) · T(1) ·
//! Session(10) | timestamp(32) | SGT(16) · P(1) · FT(5) · HW ID(6) · D(1) · Gra(2) · O(1);
//! O = 1 adds an 8-byte platform-specific sub-header. T = 1 means the mirrored frame was
//! truncated. Type I has no header (GRE 0x88BE without a sequence number).

use crate::error::{Error, Layer, be16, be32, split_array};

/// A decoded ERSPAN header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErspanHeader {
    /// 1 for type II, 2 for type III (the wire's version field).
    pub version: u8,
    pub vlan: u16,
    pub cos: u8,
    /// Type II: encapsulation type (En). Type III: bad/short/oversized indicator (BSO).
    pub en_or_bso: u8,
    /// The mirrored frame was truncated by the switch.
    pub truncated: bool,
    pub session_id: u16,
    /// Type II: port index (20 bits). Type III: none.
    pub index: Option<u32>,
    /// Type III: timestamp in units of `granularity`.
    pub timestamp: Option<u32>,
    /// Type III: frame type (0 = Ethernet).
    pub frame_type: Option<u8>,
    /// Type III: hardware ID.
    pub hw_id: Option<u8>,
    /// Type III: direction, true = egress.
    pub egress: Option<bool>,
    /// Type III: timestamp granularity (0 = 100 µs, 1 = 100 ns, 2 = IEEE 1588, 3 = user).
    pub granularity: Option<u8>,
    /// Type III: an 8-byte platform-specific sub-header was present.
    pub platform_subheader: bool,
}

impl ErspanHeader {
    /// Parses a type II header (8 bytes).
    pub fn parse_type2(input: &[u8]) -> Result<(Self, &[u8]), Error> {
        let (b, rest) = split_array::<8>(input, Layer::Erspan)?;
        let (version, w0) = Self::word0(b[0], b[1], b[2], b[3]);
        if version != 1 {
            return Err(Error::invalid(Layer::Erspan, "type II header version is not 1"));
        }
        let index = be32([b[4], b[5], b[6], b[7]]) & 0x000F_FFFF;
        Ok((ErspanHeader { index: Some(index), ..w0 }, rest))
    }

    /// Parses a type III header (12 bytes, plus 8 when O is set).
    pub fn parse_type3(input: &[u8]) -> Result<(Self, &[u8]), Error> {
        let (b, rest) = split_array::<12>(input, Layer::Erspan)?;
        let (version, w0) = Self::word0(b[0], b[1], b[2], b[3]);
        if version != 2 {
            return Err(Error::invalid(Layer::Erspan, "type III header version is not 2"));
        }
        let w2 = be16([b[10], b[11]]);
        let platform_subheader = w2 & 0x0001 != 0;
        let rest = if platform_subheader {
            split_array::<8>(rest, Layer::Erspan).map_err(|_| Error::truncated(Layer::Erspan, 20, input.len()))?.1
        } else {
            rest
        };
        let header = ErspanHeader {
            timestamp: Some(be32([b[4], b[5], b[6], b[7]])),
            frame_type: Some(((w2 >> 10) & 0x1F) as u8),
            hw_id: Some(((w2 >> 4) & 0x3F) as u8),
            egress: Some(w2 & 0x0008 != 0),
            granularity: Some(((w2 >> 1) & 0x03) as u8),
            platform_subheader,
            ..w0
        };
        Ok((header, rest))
    }

    fn word0(b0: u8, b1: u8, b2: u8, b3: u8) -> (u8, ErspanHeader) {
        let hi = be16([b0, b1]);
        let lo = be16([b2, b3]);
        let header = ErspanHeader {
            version: (hi >> 12) as u8,
            vlan: hi & 0x0FFF,
            cos: (lo >> 13) as u8,
            en_or_bso: ((lo >> 11) & 0x03) as u8,
            truncated: lo & 0x0400 != 0,
            session_id: lo & 0x03FF,
            index: None,
            timestamp: None,
            frame_type: None,
            hw_id: None,
            egress: None,
            granularity: None,
            platform_subheader: false,
        };
        (header.version, header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type2_fields() {
        // ver 1, VLAN 100, COS 3, En 3, T 0, session 5; index 0x12345
        let b = [0x10, 0x64, 0x78, 0x05, 0x00, 0x01, 0x23, 0x45, 0xAB];
        let (h, rest) = ErspanHeader::parse_type2(&b).unwrap();
        assert_eq!((h.version, h.vlan, h.cos, h.en_or_bso, h.truncated, h.session_id), (1, 100, 3, 3, false, 5));
        assert_eq!(h.index, Some(0x12345));
        assert_eq!(rest, &[0xAB]);
    }

    #[test]
    fn type3_fields_with_platform_subheader() {
        // ver 2, VLAN 0, COS 0, BSO 0, T 1, session 0x3ff; ts 0x01020304;
        // SGT 0, P 0, FT 0, HW ID 5, D 1, Gra 1, O 1
        let mut b = vec![0x20, 0x00, 0x07, 0xff, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x5b];
        b.extend_from_slice(&[0xEE; 8]);
        b.push(0x02);
        let (h, rest) = ErspanHeader::parse_type3(&b).unwrap();
        assert_eq!((h.version, h.truncated, h.session_id), (2, true, 0x3ff));
        assert_eq!(h.timestamp, Some(0x01020304));
        assert_eq!((h.frame_type, h.hw_id, h.egress, h.granularity), (Some(0), Some(5), Some(true), Some(1)));
        assert!(h.platform_subheader);
        assert_eq!(rest, &[0x02]);
    }

    #[test]
    fn malformed() {
        assert_eq!(ErspanHeader::parse_type2(&[0x10; 7]).unwrap_err(), Error::truncated(Layer::Erspan, 8, 7));
        assert!(ErspanHeader::parse_type2(&[0x20, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(ErspanHeader::parse_type3(&[0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        let b = [0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0];
        assert_eq!(ErspanHeader::parse_type3(&b).unwrap_err(), Error::truncated(Layer::Erspan, 20, 13));
    }
}
