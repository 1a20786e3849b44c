//! The SES header the PDS `next_hdr` selects (../shared/uet-facts.md §3): a request (standard
//! 44 bytes, small 20, medium 32; the standard one followed by the rendezvous, atomic or
//! compare-and-swap extension its opcode calls for) or a response (12, or 20 with data).

use crate::emit::be24_bytes;
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

// A request's flag bits, as masks on its byte 1 (../shared/uet-facts.md §3.1).

/// Delivery complete.
pub const DC: u8 = 0x20;
/// Initiator error.
pub const IE: u8 = 0x10;
/// Relative addressing.
pub const REL: u8 = 0x08;
/// Header data present.
pub const HD: u8 = 0x04;
/// End of message.
pub const EOM: u8 = 0x02;
/// Start of message.
pub const SOM: u8 = 0x01;

/// The 6 bits of the opcode in byte 0, and of the flags (a response's return code) in byte 1;
/// the version and a response's list take the 2 bits above.
const LOW_6: u8 = 0x3F;
/// A 14-bit length in 16 bits.
const LENGTH_14: u16 = 0x3FFF;
/// A 12-bit PID on FEP or resource index in 16 bits.
const LOW_12: u16 = 0x0FFF;

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
    /// The PDS `next_hdr` that announces it.
    pub fn next_header(self) -> u8 {
        match self {
            RequestFormat::Small => NEXT_REQUEST_SMALL,
            RequestFormat::Medium => NEXT_REQUEST_MEDIUM,
            RequestFormat::Standard => NEXT_REQUEST_STANDARD,
        }
    }

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
        Some(((word >> 24) as u8, (word >> 12) as u16 & LOW_12, word as u16 & LOW_12))
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
        let opcode = byte_at(bytes, 0) & LOW_6;
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
        byte_at(self.bytes, 0) & LOW_6
    }

    pub fn version(&self) -> u8 {
        byte_at(self.bytes, 1) >> 6
    }

    /// The flag bits: [`DC`], [`IE`], [`REL`], [`HD`], [`EOM`], [`SOM`].
    pub fn flags(&self) -> u8 {
        byte_at(self.bytes, 1) & LOW_6
    }

    /// Delivery complete.
    pub fn dc(&self) -> bool {
        self.flags() & DC != 0
    }

    /// Initiator error.
    pub fn ie(&self) -> bool {
        self.flags() & IE != 0
    }

    /// Relative addressing.
    pub fn rel(&self) -> bool {
        self.flags() & REL != 0
    }

    /// Header data present.
    pub fn hd(&self) -> bool {
        self.flags() & HD != 0
    }

    pub fn eom(&self) -> bool {
        self.flags() & EOM != 0
    }

    pub fn som(&self) -> bool {
        self.flags() & SOM != 0
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
            _ => u32::from(be16_at(self.bytes, 2) & LENGTH_14),
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
        be16_at(self.bytes, 8) & LOW_12
    }

    /// 12 bits.
    pub fn resource_index(&self) -> u16 {
        be16_at(self.bytes, 10) & LOW_12
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
            .then(|| (be16_at(self.bytes, 34) & LENGTH_14, be32_at(self.bytes, 36)))
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
    /// The PDS `next_hdr` that announces it.
    pub fn next_header(self) -> u8 {
        match self {
            ResponseFormat::Plain => NEXT_RESPONSE,
            ResponseFormat::Data => NEXT_RESPONSE_DATA,
            ResponseFormat::DataSmall => NEXT_RESPONSE_DATA_SMALL,
        }
    }

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
        byte_at(self.bytes, 0) & LOW_6
    }

    pub fn version(&self) -> u8 {
        byte_at(self.bytes, 1) >> 6
    }

    /// [`super::names::return_code`].
    pub fn return_code(&self) -> u8 {
        byte_at(self.bytes, 1) & LOW_6
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
            ResponseFormat::Data => Some(be16_at(self.bytes, 10) & LENGTH_14),
            ResponseFormat::DataSmall => Some(be16_at(self.bytes, 2) & LENGTH_14),
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

/// A request header's fields, to write one ([`SesRequestRepr::emit`]) or to read one whole
/// ([`SesRequestRepr::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SesRequestRepr {
    /// 6 bits.
    pub opcode: u8,
    /// 2 bits.
    pub version: u8,
    /// The flag bits ([`DC`] .. [`SOM`]). A medium request's HD and a standard request's SOM
    /// are written as its fields say, whatever this holds.
    pub flags: u8,
    pub ri_generation: u8,
    /// 24 bits.
    pub job_id: u32,
    /// 12 bits.
    pub pid_on_fep: u16,
    /// 12 bits.
    pub resource_index: u16,
    pub fields: RequestFields,
}

/// The fields of each format after the 12 bytes all share (../shared/uet-facts.md §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFields {
    /// `request_length`: 14 bits.
    Small {
        request_length: u16,
        buffer_offset: u64,
    },
    Medium {
        request_length: u16,
        placed: Placed,
        initiator: u32,
        memory_key: u64,
    },
    Standard(StandardFields),
}

/// What a medium request's bytes 12 to 20 hold; header data sets HD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    BufferOffset(u64),
    HeaderData(u64),
}

/// A standard request's fields after the common ones, and its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardFields {
    pub message_id: u16,
    pub buffer_offset: u64,
    pub initiator: u32,
    pub memory_key: u64,
    pub packet: MessagePacket,
    pub request_length: u32,
    /// Written after the header; a parser finds it when the opcode calls for it.
    pub extension: Option<ExtensionRepr>,
}

/// What a standard request's bytes 32 to 40 hold; the first packet sets SOM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessagePacket {
    /// The message's first packet: its header data (read back only with HD).
    First { header_data: u64 },
    /// A later packet: its payload's length (14 bits) and its offset in the message.
    Later { payload_length: u16, message_offset: u32 },
}

/// A standard request's extension ([`Extension`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionRepr {
    /// 24 bytes; the read's resource index generation, PID on FEP (12 bits) and resource index
    /// (12 bits).
    Rendezvous { eager_length: u32, read_resource: (u8, u16, u16), read_offset: u64, read_memory_key: u64 },
    /// 4 bytes, 36 with the compare and swap operands (a compare-and-swap `opcode`'s).
    Atomic { opcode: u8, datatype: u8, semantic_control: u8, compare_swap: Option<([u8; 16], [u8; 16])> },
}

impl SesRequestRepr {
    pub fn format(&self) -> RequestFormat {
        match self.fields {
            RequestFields::Small { .. } => RequestFormat::Small,
            RequestFields::Medium { .. } => RequestFormat::Medium,
            RequestFields::Standard(_) => RequestFormat::Standard,
        }
    }

    /// Reads a header whole; a field the view does not show reads as 0.
    pub fn of(request: &SesRequest<'_>) -> Self {
        let fields = match request.format() {
            RequestFormat::Small => RequestFields::Small {
                request_length: request.request_length() as u16,
                buffer_offset: request.buffer_offset().unwrap_or(0),
            },
            RequestFormat::Medium => RequestFields::Medium {
                request_length: request.request_length() as u16,
                placed: match request.header_data() {
                    Some(data) => Placed::HeaderData(data),
                    None => Placed::BufferOffset(request.buffer_offset().unwrap_or(0)),
                },
                initiator: request.initiator().unwrap_or(0),
                memory_key: request.memory_key().unwrap_or(0),
            },
            RequestFormat::Standard => RequestFields::Standard(StandardFields::of(request)),
        };
        SesRequestRepr {
            opcode: request.opcode(),
            version: request.version(),
            flags: request.flags(),
            ri_generation: request.ri_generation(),
            job_id: request.job_id(),
            pid_on_fep: request.pid_on_fep(),
            resource_index: request.resource_index(),
            fields,
        }
    }

    /// Writes the header and its extension through `put`; each field keeps its low bits, the
    /// reserved bits are 0.
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        let second = match self.fields {
            RequestFields::Small { request_length, .. } | RequestFields::Medium { request_length, .. } => {
                request_length & LENGTH_14
            }
            RequestFields::Standard(s) => s.message_id,
        };
        put(&[self.opcode & LOW_6, (self.version << 6) | self.written_flags()]);
        put(&second.to_be_bytes());
        put(&[self.ri_generation]);
        put(&be24_bytes(self.job_id));
        put(&(self.pid_on_fep & LOW_12).to_be_bytes());
        put(&(self.resource_index & LOW_12).to_be_bytes());
        match &self.fields {
            RequestFields::Small { buffer_offset, .. } => put(&buffer_offset.to_be_bytes()),
            RequestFields::Medium { placed, initiator, memory_key, .. } => {
                let (Placed::BufferOffset(value) | Placed::HeaderData(value)) = placed;
                put(&value.to_be_bytes());
                put(&initiator.to_be_bytes());
                put(&memory_key.to_be_bytes());
            }
            RequestFields::Standard(s) => s.emit(put),
        }
    }

    /// `flags` with the bit that says what a field holds (HD, SOM) set from that field.
    fn written_flags(&self) -> u8 {
        let (bit, set) = match &self.fields {
            RequestFields::Small { .. } => (0, false),
            RequestFields::Medium { placed, .. } => (HD, matches!(placed, Placed::HeaderData(_))),
            RequestFields::Standard(s) => (SOM, matches!(s.packet, MessagePacket::First { .. })),
        };
        let flags = self.flags & LOW_6 & !bit;
        if set { flags | bit } else { flags }
    }
}

impl StandardFields {
    fn of(request: &SesRequest<'_>) -> Self {
        let packet = match request.continuation() {
            Some((payload_length, message_offset)) => MessagePacket::Later { payload_length, message_offset },
            None => MessagePacket::First { header_data: request.header_data().unwrap_or(0) },
        };
        StandardFields {
            message_id: request.message_id().unwrap_or(0),
            buffer_offset: request.buffer_offset().unwrap_or(0),
            initiator: request.initiator().unwrap_or(0),
            memory_key: request.memory_key().unwrap_or(0),
            packet,
            request_length: request.request_length(),
            extension: request.extension().map(|e| ExtensionRepr::of(&e)),
        }
    }

    fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&self.buffer_offset.to_be_bytes());
        put(&self.initiator.to_be_bytes());
        put(&self.memory_key.to_be_bytes());
        match self.packet {
            MessagePacket::First { header_data } => put(&header_data.to_be_bytes()),
            MessagePacket::Later { payload_length, message_offset } => {
                put(&[0, 0]);
                put(&(payload_length & LENGTH_14).to_be_bytes());
                put(&message_offset.to_be_bytes());
            }
        }
        put(&self.request_length.to_be_bytes());
        if let Some(extension) = &self.extension {
            extension.emit(put);
        }
    }
}

impl ExtensionRepr {
    pub fn of(extension: &Extension<'_>) -> Self {
        let operand = |b: &[u8]| <[u8; 16]>::try_from(b).unwrap_or([0; 16]);
        match extension {
            Extension::Rendezvous(_) => ExtensionRepr::Rendezvous {
                eager_length: extension.eager_length().unwrap_or(0),
                read_resource: extension.read_resource().unwrap_or((0, 0, 0)),
                read_offset: extension.read_offset().unwrap_or(0),
                read_memory_key: extension.read_memory_key().unwrap_or(0),
            },
            Extension::Atomic(_) => ExtensionRepr::Atomic {
                opcode: extension.atomic_opcode().unwrap_or(0),
                datatype: extension.atomic_datatype().unwrap_or(0),
                semantic_control: extension.semantic_control().unwrap_or(0),
                compare_swap: extension.compare_swap().map(|(c, s)| (operand(c), operand(s))),
            },
        }
    }

    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        match self {
            ExtensionRepr::Rendezvous {
                eager_length,
                read_resource: (generation, pid, index),
                read_offset,
                read_memory_key,
            } => {
                let resource = u32::from(*generation) << 24 | u32::from(pid & LOW_12) << 12 | u32::from(index & LOW_12);
                put(&eager_length.to_be_bytes());
                put(&resource.to_be_bytes());
                put(&read_offset.to_be_bytes());
                put(&read_memory_key.to_be_bytes());
            }
            ExtensionRepr::Atomic { opcode, datatype, semantic_control, compare_swap } => {
                put(&[*opcode, *datatype, *semantic_control, 0]);
                if let Some((compare, swap)) = compare_swap {
                    put(compare);
                    put(swap);
                }
            }
        }
    }
}

/// A response header's fields, to write one ([`SesResponseRepr::emit`]) or to read one whole
/// ([`SesResponseRepr::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SesResponseRepr {
    /// 2 bits.
    pub list: u8,
    /// 6 bits.
    pub opcode: u8,
    /// 2 bits.
    pub version: u8,
    /// 6 bits.
    pub return_code: u8,
    pub ri_generation: u8,
    /// 24 bits.
    pub job_id: u32,
    pub fields: ResponseFields,
}

/// The fields of each format (../shared/uet-facts.md §3.4); `payload_length` is 14 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFields {
    Plain { message_id: u16, modified_length: u32 },
    Data { message_id: u16, read_message_id: u16, payload_length: u16, modified_length: u32, message_offset: u32 },
    DataSmall { payload_length: u16, original_request_psn: u32 },
}

impl SesResponseRepr {
    pub fn format(&self) -> ResponseFormat {
        match self.fields {
            ResponseFields::Plain { .. } => ResponseFormat::Plain,
            ResponseFields::Data { .. } => ResponseFormat::Data,
            ResponseFields::DataSmall { .. } => ResponseFormat::DataSmall,
        }
    }

    pub fn of(response: &SesResponse<'_>) -> Self {
        let (read_message_id, message_offset) = response.read().unwrap_or((0, 0));
        let fields = match response.format() {
            ResponseFormat::Plain => ResponseFields::Plain {
                message_id: response.message_id().unwrap_or(0),
                modified_length: response.modified_length().unwrap_or(0),
            },
            ResponseFormat::Data => ResponseFields::Data {
                message_id: response.message_id().unwrap_or(0),
                read_message_id,
                payload_length: response.payload_length().unwrap_or(0),
                modified_length: response.modified_length().unwrap_or(0),
                message_offset,
            },
            ResponseFormat::DataSmall => ResponseFields::DataSmall {
                payload_length: response.payload_length().unwrap_or(0),
                original_request_psn: response.original_request_psn().unwrap_or(0),
            },
        };
        SesResponseRepr {
            list: response.list(),
            opcode: response.opcode(),
            version: response.version(),
            return_code: response.return_code(),
            ri_generation: response.ri_generation(),
            job_id: response.job_id(),
            fields,
        }
    }

    /// Writes the header through `put`; each field keeps its low bits, the reserved bits are 0.
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        let second = match self.fields {
            ResponseFields::Plain { message_id, .. } | ResponseFields::Data { message_id, .. } => message_id,
            ResponseFields::DataSmall { payload_length, .. } => payload_length & LENGTH_14,
        };
        put(&[(self.list << 6) | (self.opcode & LOW_6), (self.version << 6) | (self.return_code & LOW_6)]);
        put(&second.to_be_bytes());
        put(&[self.ri_generation]);
        put(&be24_bytes(self.job_id));
        match self.fields {
            ResponseFields::Plain { modified_length, .. } => put(&modified_length.to_be_bytes()),
            ResponseFields::Data { read_message_id, payload_length, modified_length, message_offset, .. } => {
                put(&read_message_id.to_be_bytes());
                put(&(payload_length & LENGTH_14).to_be_bytes());
                put(&modified_length.to_be_bytes());
                put(&message_offset.to_be_bytes());
            }
            ResponseFields::DataSmall { original_request_psn, .. } => put(&original_request_psn.to_be_bytes()),
        }
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

    /// `repr`'s bytes, checked to read back as `repr` with nothing left.
    fn emitted_request(repr: SesRequestRepr) -> Vec<u8> {
        let mut b = Vec::new();
        repr.emit(|part| b.extend_from_slice(part));
        let (r, rest) = SesRequest::parse(repr.format(), &b).unwrap();
        assert_eq!((rest.len(), r.header_len()), (0, b.len()));
        assert_eq!(SesRequestRepr::of(&r), repr);
        b
    }

    fn request(flags: u8, fields: RequestFields) -> SesRequestRepr {
        SesRequestRepr {
            opcode: 0x05,
            version: 1,
            flags,
            ri_generation: 7,
            job_id: 42,
            pid_on_fep: 5,
            resource_index: 9,
            fields,
        }
    }

    fn standard_fields(packet: MessagePacket, extension: Option<ExtensionRepr>) -> RequestFields {
        RequestFields::Standard(StandardFields {
            message_id: 0x1234,
            buffer_offset: 0x1000,
            initiator: 0xAABB,
            memory_key: 0x55,
            packet,
            request_length: 65536,
            extension,
        })
    }

    #[test]
    fn small_and_medium_requests_round_trip() {
        let b = emitted_request(request(SOM | EOM, RequestFields::Small { request_length: 128, buffer_offset: 9 }));
        let (r, _) = SesRequest::parse(RequestFormat::Small, &b).unwrap();
        assert_eq!(
            (r.opcode(), r.version(), r.request_length(), r.buffer_offset(), r.job_id()),
            (5, 1, 128, Some(9), 42)
        );
        for (placed, hd) in [(Placed::HeaderData(0xFEED), true), (Placed::BufferOffset(0x2000), false)] {
            let fields = RequestFields::Medium { request_length: 512, placed, initiator: 0xAB01, memory_key: 0x5500 };
            let b = emitted_request(request(SOM | EOM | if hd { HD } else { 0 }, fields));
            let (r, _) = SesRequest::parse(RequestFormat::Medium, &b).unwrap();
            assert_eq!((r.hd(), r.initiator(), r.memory_key(), r.pid_on_fep()), (hd, Some(0xAB01), Some(0x5500), 5));
        }
    }

    #[test]
    fn standard_requests_round_trip_first_and_later_packets() {
        let b = emitted_request(request(
            DC | HD | EOM | SOM,
            standard_fields(MessagePacket::First { header_data: 0x77 }, None),
        ));
        let (r, _) = SesRequest::parse(RequestFormat::Standard, &b).unwrap();
        assert_eq!(
            (r.dc(), r.message_id(), r.header_data(), r.request_length()),
            (true, Some(0x1234), Some(0x77), 65536)
        );
        let later = MessagePacket::Later { payload_length: 1024, message_offset: 4096 };
        let b = emitted_request(request(IE | REL, standard_fields(later, None)));
        let (r, _) = SesRequest::parse(RequestFormat::Standard, &b).unwrap();
        assert_eq!((r.som(), r.ie(), r.rel(), r.continuation()), (false, true, true, Some((1024, 4096))));
    }

    #[test]
    fn extensions_round_trip() {
        let cas = ExtensionRepr::Atomic {
            opcode: 0x0D,
            datatype: 7,
            semantic_control: 1,
            compare_swap: Some(([0x11; 16], [0x22; 16])),
        };
        let atomic = ExtensionRepr::Atomic { opcode: 0x02, datatype: 7, semantic_control: 2, compare_swap: None };
        let rendezvous = ExtensionRepr::Rendezvous {
            eager_length: 256,
            read_resource: (3, 5, 7),
            read_offset: 64,
            read_memory_key: 9,
        };
        for (opcode, extension, len) in [(0x03, cas, 80), (0x04, atomic, 48), (0x06, rendezvous, 68)] {
            let repr = SesRequestRepr {
                opcode,
                ..request(SOM, standard_fields(MessagePacket::First { header_data: 0 }, Some(extension)))
            };
            assert_eq!(emitted_request(repr).len(), len);
        }
    }

    #[test]
    fn responses_round_trip() {
        let fields = [
            ResponseFields::Plain { message_id: 0x1234, modified_length: 256 },
            ResponseFields::Data {
                message_id: 3,
                read_message_id: 4,
                payload_length: 1024,
                modified_length: 8,
                message_offset: 2048,
            },
            ResponseFields::DataSmall { payload_length: 64, original_request_psn: 1000 },
        ];
        for fields in fields {
            let repr = SesResponseRepr {
                list: 1,
                opcode: 2,
                version: 0,
                return_code: 1,
                ri_generation: 2,
                job_id: 42,
                fields,
            };
            let mut b = Vec::new();
            repr.emit(|part| b.extend_from_slice(part));
            let Some((Ses::Response(r), rest)) = Ses::parse(repr.format().next_header(), PdsType::Ack, &b).unwrap()
            else {
                panic!("response")
            };
            assert_eq!((rest.len(), r.list(), r.return_code(), r.job_id()), (0, 1, 1, 42));
            assert_eq!(SesResponseRepr::of(&r), repr);
        }
    }
}
