//! The SES header the PDS `next_hdr` selects (../shared/uet-facts.md §3): a request (standard
//! 44 bytes, small 20, medium 32; the standard one followed by the rendezvous, atomic or
//! compare-and-swap extension its opcode calls for) or a response (12, or 20 with data).

use crate::error::{Error, Layer, be16_at, be24_at, be32_at, be64_at, byte_at, split_bytes};

use super::pds::PdsType;

/// `next_hdr` values.
pub const NEXT_NONE: u8 = 0;
pub const NEXT_REQUEST_SMALL: u8 = 1;
pub const NEXT_REQUEST_MEDIUM: u8 = 2;
pub const NEXT_REQUEST_STANDARD: u8 = 3;
pub const NEXT_RESPONSE: u8 = 4;
pub const NEXT_RESPONSE_DATA: u8 = 5;
pub const NEXT_RESPONSE_DATA_SMALL: u8 = 6;

/// Request opcodes whose standard header an extension follows.
const RENDEZVOUS: [u8; 2] = [0x06, 0x0A];
const ATOMICS: [u8; 4] = [0x03, 0x04, 0x0D, 0x0E];
/// Atomic operations (CSWAP .. CSWAP_GT) whose extension carries compare and swap operands.
const COMPARE_AND_SWAP: core::ops::RangeInclusive<u8> = 0x0D..=0x12;

#[derive(Debug, Clone, Copy)]
pub enum Ses<'a> {
    Request(SesRequest<'a>),
    Response(SesResponse<'a>),
}

impl<'a> Ses<'a> {
    /// The SES header `next_header` names at the front of `input`, with what follows it; `None`
    /// when there is none (`next_hdr` 0, a control packet, whose place holds its control type,
    /// or a value not assigned).
    /// The header's bytes (a standard request's with its extension).
    pub fn as_bytes(&self) -> &'a [u8] {
        match self {
            Ses::Request(r) => r.whole,
            Ses::Response(r) => r.bytes,
        }
    }

    pub fn parse(next_header: u8, pds: PdsType, input: &'a [u8]) -> Result<Option<(Self, &'a [u8])>, Error> {
        if pds == PdsType::Control {
            return Ok(None);
        }
        let request = |format| SesRequest::parse(format, input).map(|(r, rest)| Some((Ses::Request(r), rest)));
        let response = |format| SesResponse::parse(format, input).map(|(r, rest)| Some((Ses::Response(r), rest)));
        match next_header {
            NEXT_REQUEST_SMALL => request(RequestFormat::Small),
            NEXT_REQUEST_MEDIUM => request(RequestFormat::Medium),
            NEXT_REQUEST_STANDARD => request(RequestFormat::Standard),
            NEXT_RESPONSE => response(ResponseFormat::Plain),
            NEXT_RESPONSE_DATA => response(ResponseFormat::Data),
            NEXT_RESPONSE_DATA_SMALL => response(ResponseFormat::DataSmall),
            _ => Ok(None),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFormat {
    /// "Optimized non-matching": 20 bytes.
    Small,
    /// "Small message": 32 bytes.
    Medium,
    /// 44 bytes.
    Standard,
}

impl RequestFormat {
    pub fn header_len(self) -> usize {
        match self {
            RequestFormat::Small => 20,
            RequestFormat::Medium => 32,
            RequestFormat::Standard => 44,
        }
    }
}

/// An extension that follows a standard request.
#[derive(Debug, Clone, Copy)]
pub enum Extension<'a> {
    /// RENDEZVOUS_SEND / RENDEZVOUS_TSEND, 24 bytes: eager length, the read's resource
    /// (generation, PID on FEP, resource index), read offset and read memory key.
    Rendezvous(&'a [u8]),
    /// ATOMIC, FETCHING_ATOMIC, TSEND_ATOMIC, TSEND_FETCH_ATOMIC, 4 bytes: operation, datatype,
    /// semantic control; 36 with the compare and swap operands (16 bytes each).
    Atomic(&'a [u8]),
}

impl<'a> Extension<'a> {
    pub fn eager_length(&self) -> Option<u32> {
        self.rendezvous().map(|b| be32_at(b, 0))
    }

    /// The read's resource: generation (8 bits), PID on FEP (12), resource index (12), as the
    /// reference provider lays them out (Wireshark reads the word otherwise).
    pub fn read_resource(&self) -> Option<(u8, u16, u16)> {
        let word = be32_at(self.rendezvous()?, 4);
        Some(((word >> 24) as u8, ((word >> 12) & 0x0FFF) as u16, (word & 0x0FFF) as u16))
    }

    pub fn read_offset(&self) -> Option<u64> {
        self.rendezvous().map(|b| be64_at(b, 8))
    }

    pub fn read_memory_key(&self) -> Option<u64> {
        self.rendezvous().map(|b| be64_at(b, 16))
    }

    fn rendezvous(&self) -> Option<&'a [u8]> {
        match *self {
            Extension::Rendezvous(b) => Some(b),
            Extension::Atomic(_) => None,
        }
    }

    fn atomic(&self) -> Option<&'a [u8]> {
        match *self {
            Extension::Atomic(b) => Some(b),
            Extension::Rendezvous(_) => None,
        }
    }

    /// The atomic operation ([`super::names::amo_opcode`]).
    pub fn atomic_opcode(&self) -> Option<u8> {
        self.atomic().map(|b| byte_at(b, 0))
    }

    /// The atomic datatype ([`super::names::amo_datatype`]).
    pub fn atomic_datatype(&self) -> Option<u8> {
        self.atomic().map(|b| byte_at(b, 1))
    }

    /// Semantic control: 0x01 cacheable, 0x02 CPU coherent.
    pub fn semantic_control(&self) -> Option<u8> {
        self.atomic().map(|b| byte_at(b, 2))
    }

    /// The compare and the swap operands, 16 bytes each.
    pub fn compare_swap(&self) -> Option<(&'a [u8], &'a [u8])> {
        let b = self.atomic()?;
        Some((b.get(4..20)?, b.get(20..36)?))
    }
}

/// A request header view.
#[derive(Debug, Clone, Copy)]
pub struct SesRequest<'a> {
    format: RequestFormat,
    bytes: &'a [u8],
    extension: Option<Extension<'a>>,
    /// The header and its extension.
    whole: &'a [u8],
}

impl<'a> SesRequest<'a> {
    pub fn parse(format: RequestFormat, input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_bytes(input, format.header_len(), Layer::UetSes)?;
        let opcode = byte_at(bytes, 0) & 0x3F;
        let (extension, rest) = match format {
            RequestFormat::Standard if RENDEZVOUS.contains(&opcode) => {
                let (ext, rest) = split_bytes(rest, 24, Layer::UetSes)?;
                (Some(Extension::Rendezvous(ext)), rest)
            }
            RequestFormat::Standard if ATOMICS.contains(&opcode) => {
                let operation = rest.first().copied().unwrap_or(0);
                let len = if COMPARE_AND_SWAP.contains(&operation) { 36 } else { 4 };
                let (ext, rest) = split_bytes(rest, len, Layer::UetSes)?;
                (Some(Extension::Atomic(ext)), rest)
            }
            _ => (None, rest),
        };
        let whole = input.get(..input.len() - rest.len()).unwrap_or(bytes);
        Ok((SesRequest { format, bytes, extension, whole }, rest))
    }

    pub fn format(&self) -> RequestFormat {
        self.format
    }

    pub fn extension(&self) -> Option<Extension<'a>> {
        self.extension
    }

    /// The header and its extension, in bytes.
    pub fn header_len(&self) -> usize {
        self.whole.len()
    }

    /// The operation ([`super::names::request_opcode`]), 6 bits.
    pub fn opcode(&self) -> u8 {
        byte_at(self.bytes, 0) & 0x3F
    }

    pub fn version(&self) -> u8 {
        byte_at(self.bytes, 1) >> 6
    }

    /// The flag bits: DC 0x20, IE 0x10, REL 0x08, HD 0x04, EOM 0x02, SOM 0x01.
    pub fn flags(&self) -> u8 {
        byte_at(self.bytes, 1) & 0x3F
    }

    /// Delivery complete.
    pub fn dc(&self) -> bool {
        self.flags() & 0x20 != 0
    }

    /// Initiator error.
    pub fn ie(&self) -> bool {
        self.flags() & 0x10 != 0
    }

    /// Relative addressing.
    pub fn rel(&self) -> bool {
        self.flags() & 0x08 != 0
    }

    /// Header data present.
    pub fn hd(&self) -> bool {
        self.flags() & 0x04 != 0
    }

    pub fn eom(&self) -> bool {
        self.flags() & 0x02 != 0
    }

    pub fn som(&self) -> bool {
        self.flags() & 0x01 != 0
    }

    /// The message id (standard requests).
    pub fn message_id(&self) -> Option<u16> {
        (self.format == RequestFormat::Standard).then(|| be16_at(self.bytes, 2))
    }

    /// The request's length: 14 bits at byte 2 of a small or medium request (Wireshark and the
    /// reference provider; xdp2 reads a message id there), 32 bits at byte 40 of a standard one.
    pub fn request_length(&self) -> u32 {
        match self.format {
            RequestFormat::Standard => be32_at(self.bytes, 40),
            _ => u32::from(be16_at(self.bytes, 2) & 0x3FFF),
        }
    }

    pub fn ri_generation(&self) -> u8 {
        byte_at(self.bytes, 4)
    }

    /// 24 bits.
    pub fn job_id(&self) -> u32 {
        be24_at(self.bytes, 5)
    }

    /// 12 bits.
    pub fn pid_on_fep(&self) -> u16 {
        be16_at(self.bytes, 8) & 0x0FFF
    }

    /// 12 bits.
    pub fn resource_index(&self) -> u16 {
        be16_at(self.bytes, 10) & 0x0FFF
    }

    /// The offset into the target buffer (small and standard requests, medium ones without
    /// header data); a deferrable send's restart tokens sit here.
    pub fn buffer_offset(&self) -> Option<u64> {
        (self.format != RequestFormat::Medium || !self.hd()).then(|| be64_at(self.bytes, 12))
    }

    /// Header data: a medium request's, with HD, at byte 12; a standard first packet's, with HD,
    /// at byte 32.
    pub fn header_data(&self) -> Option<u64> {
        match self.format {
            RequestFormat::Medium if self.hd() => Some(be64_at(self.bytes, 12)),
            RequestFormat::Standard if self.hd() && self.som() => Some(be64_at(self.bytes, 32)),
            _ => None,
        }
    }

    /// The initiator's id (medium and standard requests).
    pub fn initiator(&self) -> Option<u32> {
        (self.format != RequestFormat::Small).then(|| be32_at(self.bytes, 20))
    }

    /// The memory key, or the match bits of a tagged operation (medium and standard requests).
    pub fn memory_key(&self) -> Option<u64> {
        (self.format != RequestFormat::Small).then(|| be64_at(self.bytes, 24))
    }

    /// A standard request's packet after the first: its payload's length (14 bits) and its
    /// offset in the message.
    pub fn continuation(&self) -> Option<(u16, u32)> {
        (self.format == RequestFormat::Standard && !self.som())
            .then(|| (be16_at(self.bytes, 34) & 0x3FFF, be32_at(self.bytes, 36)))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormat {
    /// 12 bytes.
    Plain,
    /// 20 bytes: read data.
    Data,
    /// 12 bytes: read data of a small message.
    DataSmall,
}

impl ResponseFormat {
    pub fn header_len(self) -> usize {
        match self {
            ResponseFormat::Data => 20,
            ResponseFormat::Plain | ResponseFormat::DataSmall => 12,
        }
    }
}

/// A response header view.
#[derive(Debug, Clone, Copy)]
pub struct SesResponse<'a> {
    format: ResponseFormat,
    bytes: &'a [u8],
}

impl<'a> SesResponse<'a> {
    pub fn parse(format: ResponseFormat, input: &'a [u8]) -> Result<(Self, &'a [u8]), Error> {
        let (bytes, rest) = split_bytes(input, format.header_len(), Layer::UetSes)?;
        Ok((SesResponse { format, bytes }, rest))
    }

    pub fn format(&self) -> ResponseFormat {
        self.format
    }

    /// 0 expected list, 1 overflow list.
    pub fn list(&self) -> u8 {
        byte_at(self.bytes, 0) >> 6
    }

    /// [`super::names::response_opcode`].
    pub fn opcode(&self) -> u8 {
        byte_at(self.bytes, 0) & 0x3F
    }

    pub fn version(&self) -> u8 {
        byte_at(self.bytes, 1) >> 6
    }

    /// [`super::names::return_code`].
    pub fn return_code(&self) -> u8 {
        byte_at(self.bytes, 1) & 0x3F
    }

    /// The message answered (not in a small data response).
    pub fn message_id(&self) -> Option<u16> {
        (self.format != ResponseFormat::DataSmall).then(|| be16_at(self.bytes, 2))
    }

    pub fn ri_generation(&self) -> u8 {
        byte_at(self.bytes, 4)
    }

    pub fn job_id(&self) -> u32 {
        be24_at(self.bytes, 5)
    }

    /// The length the target modified (plain and data responses).
    pub fn modified_length(&self) -> Option<u32> {
        match self.format {
            ResponseFormat::Plain => Some(be32_at(self.bytes, 8)),
            ResponseFormat::Data => Some(be32_at(self.bytes, 12)),
            ResponseFormat::DataSmall => None,
        }
    }

    /// The data's length (14 bits; data responses).
    pub fn payload_length(&self) -> Option<u16> {
        match self.format {
            ResponseFormat::Data => Some(be16_at(self.bytes, 10) & 0x3FFF),
            ResponseFormat::DataSmall => Some(be16_at(self.bytes, 2) & 0x3FFF),
            ResponseFormat::Plain => None,
        }
    }

    /// The read request's message id and the data's offset in the message (data responses).
    pub fn read(&self) -> Option<(u16, u32)> {
        (self.format == ResponseFormat::Data).then(|| (be16_at(self.bytes, 8), be32_at(self.bytes, 16)))
    }

    /// The PSN of the request a small data response answers.
    pub fn original_request_psn(&self) -> Option<u32> {
        (self.format == ResponseFormat::DataSmall).then(|| be32_at(self.bytes, 8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A standard request's 44 bytes: `opcode`, `flags`, then the common and standard fields.
    fn standard(opcode: u8, flags: u8) -> Vec<u8> {
        let mut b = vec![opcode, flags, 0x12, 0x34, 7, 0, 0, 42, 0x00, 0x05, 0xF0, 0x09];
        b.extend_from_slice(&0x1000u64.to_be_bytes()); // buffer offset
        b.extend_from_slice(&0xAABBu32.to_be_bytes()); // initiator
        b.extend_from_slice(&0x55u64.to_be_bytes()); // memory key
        b.extend_from_slice(&0x77u64.to_be_bytes()); // header data (SOM) / continuation
        b.extend_from_slice(&65536u32.to_be_bytes()); // request length
        b
    }

    #[test]
    fn a_standard_write_reads_every_field() {
        let b = standard(0x01, 0x20 | 0x04 | 0x02 | 0x01);
        let Some((Ses::Request(r), rest)) = Ses::parse(3, PdsType::RudRequest, &b).unwrap() else { panic!("request") };
        assert!(rest.is_empty() && r.extension().is_none());
        assert_eq!((r.opcode(), r.dc(), r.hd(), r.eom(), r.som(), r.ie()), (1, true, true, true, true, false));
        assert_eq!(
            (r.message_id(), r.ri_generation(), r.job_id(), r.pid_on_fep(), r.resource_index()),
            (Some(0x1234), 7, 42, 5, 9)
        );
        assert_eq!(
            (r.buffer_offset(), r.initiator(), r.memory_key(), r.header_data()),
            (Some(0x1000), Some(0xAABB), Some(0x55), Some(0x77))
        );
        assert_eq!((r.request_length(), r.continuation(), r.header_len()), (65536, None, 44));
    }

    #[test]
    fn extensions_follow_their_opcodes() {
        let mut b = standard(0x06, 0x01);
        b.extend_from_slice(&[0, 0, 1, 0, 0x03, 0x00, 0x50, 0x07]);
        b.extend_from_slice(&[0; 16]);
        let (r, _) = SesRequest::parse(RequestFormat::Standard, &b).unwrap();
        let e = r.extension().expect("rendezvous");
        assert_eq!((e.eager_length(), e.read_resource(), r.header_len()), (Some(256), Some((3, 5, 7)), 68));
        let mut cas = standard(0x03, 0x01);
        cas.extend_from_slice(&[0x0D, 0x07, 0x01, 0]);
        cas.extend_from_slice(&[1; 32]);
        let (r, rest) = SesRequest::parse(RequestFormat::Standard, &cas).unwrap();
        let e = r.extension().expect("atomic");
        assert_eq!(
            (e.atomic_opcode(), e.atomic_datatype(), e.semantic_control(), rest.len()),
            (Some(0x0D), Some(7), Some(1), 0)
        );
        assert_eq!(e.compare_swap().map(|(c, s)| (c.len(), s.len())), Some((16, 16)));
        assert!(SesRequest::parse(RequestFormat::Standard, &cas[..50]).is_err(), "the CAS operands are cut");
    }

    #[test]
    fn small_and_medium_requests_and_responses() {
        let mut small = vec![0x01, 0x03, 0x00, 0x80, 0, 0, 0, 1, 0, 1, 0, 2];
        small.extend_from_slice(&9u64.to_be_bytes());
        let (r, _) = SesRequest::parse(RequestFormat::Small, &small).unwrap();
        assert_eq!((r.request_length(), r.message_id(), r.buffer_offset(), r.initiator()), (128, None, Some(9), None));
        let mut medium = small.clone();
        medium[1] |= 0x04; // header data in the buffer offset's place
        medium.extend_from_slice(&[0; 12]);
        let (r, _) = SesRequest::parse(RequestFormat::Medium, &medium).unwrap();
        assert_eq!((r.header_data(), r.buffer_offset(), r.initiator()), (Some(9), None, Some(0)));
        let response = [0x41, 0x01, 0x12, 0x34, 2, 0, 0, 42, 0, 0, 1, 0];
        let Some((Ses::Response(r), _)) = Ses::parse(4, PdsType::Ack, &response).unwrap() else { panic!("response") };
        assert_eq!(
            (r.list(), r.opcode(), r.return_code(), r.message_id(), r.job_id(), r.modified_length()),
            (1, 1, 1, Some(0x1234), 42, Some(256))
        );
        let (r, _) = SesResponse::parse(ResponseFormat::DataSmall, &response).unwrap();
        assert_eq!((r.payload_length(), r.original_request_psn(), r.message_id()), (Some(0x1234), Some(256), None));
        assert!(Ses::parse(2, PdsType::Control, &response).unwrap().is_none(), "a control packet's slot is its type");
        assert!(Ses::parse(0, PdsType::Ack, &response).unwrap().is_none());
    }
}
