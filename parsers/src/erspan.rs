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
    /// Type III: the 8-byte platform-specific sub-header, when O is set: the platform ID in
    /// its top 6 bits, then fields of that platform's.
    pub platform: Option<u64>,
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
        let (platform, rest) = if w2 & 0x0001 != 0 {
            let (sub, rest) =
                split_array::<8>(rest, Layer::Erspan).map_err(|_| Error::truncated(Layer::Erspan, 20, input.len()))?;
            (Some(u64::from_be_bytes(*sub)), rest)
        } else {
            (None, rest)
        };
        let header = ErspanHeader {
            timestamp: Some(be32([b[4], b[5], b[6], b[7]])),
            frame_type: Some(((w2 >> 10) & 0x1F) as u8),
            hw_id: Some(((w2 >> 4) & 0x3F) as u8),
            egress: Some(w2 & 0x0008 != 0),
            granularity: Some(((w2 >> 1) & 0x03) as u8),
            platform,
            ..w0
        };
        Ok((header, rest))
    }

    /// The platform sub-header's ID (its top 6 bits).
    pub fn platform_id(&self) -> Option<u8> {
        self.platform.map(|p| (p >> 58) as u8)
    }

    /// The time a type III header gives, in nanoseconds since the epoch: only an IEEE 1588
    /// timestamp (granularity 2) is one, its seconds in a platform sub-header of ID 3, 5 or 7
    /// (the second 32-bit word: "upper 32-bit timestamp", or "timestamp (seconds)") and its
    /// nanoseconds in the header. The other granularities count from no known epoch.
    pub fn time_ns(&self) -> Option<i64> {
        const IEEE_1588: u8 = 2;
        let seconds = self.platform.filter(|_| matches!(self.platform_id(), Some(3 | 5 | 7)))? as u32;
        let nanoseconds = self.timestamp.filter(|_| self.granularity == Some(IEEE_1588))?;
        Some(i64::from(seconds) * 1_000_000_000 + i64::from(nanoseconds))
    }

    /// A header of `version` (1: type II, 2: type III) for `session_id`, every other field 0
    /// or absent.
    pub fn new(version: u8, session_id: u16) -> Self {
        ErspanHeader {
            version,
            vlan: 0,
            cos: 0,
            en_or_bso: 0,
            truncated: false,
            session_id,
            index: None,
            timestamp: None,
            frame_type: None,
            hw_id: None,
            egress: None,
            granularity: None,
            platform: None,
        }
    }

    fn word0(b0: u8, b1: u8, b2: u8, b3: u8) -> (u8, ErspanHeader) {
        let hi = be16([b0, b1]);
        let lo = be16([b2, b3]);
        let header = ErspanHeader {
            vlan: hi & 0x0FFF,
            cos: (lo >> 13) as u8,
            en_or_bso: ((lo >> 11) & 0x03) as u8,
            truncated: lo & 0x0400 != 0,
            ..Self::new((hi >> 12) as u8, lo & 0x03FF)
        };
        (header.version, header)
    }
}

impl ErspanHeader {
    /// Writes the header through `put`: type II (`version` 1: 8 bytes) or type III (12 bytes,
    /// and the platform sub-header when there is one); each field keeps its low bits, a
    /// field the header lacks is 0, and type III's SGT and P bits are 0.
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        let hi = (u16::from(self.version & 0x0F) << 12) | (self.vlan & 0x0FFF);
        let lo = (u16::from(self.cos & 0x07) << 13)
            | (u16::from(self.en_or_bso & 0x03) << 11)
            | (u16::from(self.truncated) << 10)
            | (self.session_id & 0x03FF);
        put(&hi.to_be_bytes());
        put(&lo.to_be_bytes());
        if self.version == 1 {
            put(&(self.index.unwrap_or(0) & 0x000F_FFFF).to_be_bytes());
            return;
        }
        put(&self.timestamp.unwrap_or(0).to_be_bytes());
        let w2 = (u16::from(self.frame_type.unwrap_or(0) & 0x1F) << 10)
            | (u16::from(self.hw_id.unwrap_or(0) & 0x3F) << 4)
            | (u16::from(self.egress.unwrap_or(false)) << 3)
            | (u16::from(self.granularity.unwrap_or(0) & 0x03) << 1)
            | u16::from(self.platform.is_some());
        put(&[0, 0]);
        put(&w2.to_be_bytes());
        if let Some(platform) = self.platform {
            put(&platform.to_be_bytes());
        }
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
        assert_eq!((h.platform, h.platform_id()), (Some(0xEEEE_EEEE_EEEE_EEEE), Some(0x3B)));
        assert_eq!(rest, &[0x02]);
        // granularity 100 ns: no time of day
        assert_eq!(h.time_ns(), None);
    }

    #[test]
    fn an_ieee_1588_timestamp_with_its_seconds_in_platform_3() {
        // Gra 2, O 1; platform ID 3, port 9, seconds 1_700_000_000; nanoseconds 500
        let mut b = vec![0x20, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0xF4, 0x00, 0x00, 0x00, 0x05];
        b.extend_from_slice(&[0x0C, 0x00, 0x00, 0x09]);
        b.extend_from_slice(&1_700_000_000u32.to_be_bytes());
        let (h, _) = ErspanHeader::parse_type3(&b).unwrap();
        assert_eq!((h.granularity, h.platform_id()), (Some(2), Some(3)));
        assert_eq!(h.time_ns(), Some(1_700_000_000_000_000_500));
        // platform 1 carries no seconds
        b[12] = 0x04;
        assert_eq!(ErspanHeader::parse_type3(&b).unwrap().0.time_ns(), None);
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
