//! Extended transport headers (IBA §9.3 and Table 39): RDETH, DETH, XRCETH, FETH, RETH,
//! AtomicETH, AETH, AtomicAckETH, ImmDt, IETH. Each is a small value decoded with nom's
//! big-endian number parsers; [`ExtHeaders::parse`] reads exactly the set an opcode names.

use nom::Parser;
use nom::number::complete::{be_u8, be_u24, be_u32, be_u64};

use crate::emit::{be24_bytes, join};
use crate::error::{Error, Layer, NomError, split_bytes};
use crate::opcode::{ExtHeader, ExtSet};

/// Reliable Datagram ETH: the end-to-end context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rdeth {
    pub ee_context: u32,
}

/// Datagram ETH: Q_Key and the sender's QP (UD and RD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Deth {
    pub qkey: u32,
    pub src_qp: u32,
}

/// XRC ETH: the destination XRC shared receive queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Xrceth {
    pub xrc_srq: u32,
}

/// Flush ETH (IBA memory placement extensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feth {
    pub raw: u32,
}

impl Feth {
    /// Placement type bits (bit 0 global visibility, bit 1 persistence).
    pub fn placement_type(&self) -> u8 {
        (self.raw & 0x0F) as u8
    }

    /// Selectivity: 0 = the range in the RETH, 1 = the whole memory region.
    pub fn selectivity(&self) -> u8 {
        ((self.raw >> 4) & 0x03) as u8
    }
}

/// RDMA ETH: remote virtual address, R_Key and DMA length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
}

/// Atomic ETH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicEth {
    pub va: u64,
    pub rkey: u32,
    /// Swap data (COMPARE_SWAP) or add data (FETCH_ADD).
    pub swap_add: u64,
    pub compare: u64,
}

/// ACK ETH: syndrome and message sequence number (IBA §9.3.5, Table 44).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Aeth {
    pub syndrome: u8,
    pub msn: u32,
}

/// NAK codes (IBA Table 45).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NakCode {
    PsnSequenceError,
    InvalidRequest,
    RemoteAccessError,
    RemoteOperationalError,
    InvalidRdRequest,
    Reserved(u8),
}

impl NakCode {
    pub fn from_value(value: u8) -> NakCode {
        match value {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            v => NakCode::Reserved(v),
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            NakCode::PsnSequenceError => "PSN sequence error",
            NakCode::InvalidRequest => "invalid request",
            NakCode::RemoteAccessError => "remote access error",
            NakCode::RemoteOperationalError => "remote operational error",
            NakCode::InvalidRdRequest => "invalid RD request",
            NakCode::Reserved(_) => "reserved NAK code",
        }
    }
}

/// The meaning of an AETH syndrome: bits 6:5 select the class, bits 4:0 its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AethKind {
    /// ACK; `credits` is `None` for the code 0x1F, "invalid / unlimited".
    Ack {
        credit_code: u8,
        credits: Option<u32>,
    },
    /// Receiver not ready; the requester waits `delay_us` before retrying.
    RnrNak {
        timer_code: u8,
        delay_us: u32,
    },
    Nak(NakCode),
    /// Syndrome class 0b10 is reserved.
    Reserved,
}

/// ACK credit count per 5-bit credit code (IBA Table 46).
const CREDITS: [u32; 31] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144,
    8192, 12288, 16384, 24576, 32768,
];

/// RNR NAK timer per 5-bit code, in microseconds (IBA Table 47). Code 0 is the longest.
const RNR_DELAY_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840, 5_120, 7_680,
    10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840, 245_760, 327_680, 491_520,
];

impl Aeth {
    pub fn kind(&self) -> AethKind {
        let value = self.syndrome & 0x1F;
        match (self.syndrome >> 5) & 0x03 {
            0 => AethKind::Ack { credit_code: value, credits: CREDITS.get(usize::from(value)).copied() },
            1 => AethKind::RnrNak {
                timer_code: value,
                delay_us: RNR_DELAY_US.get(usize::from(value)).copied().unwrap_or(0),
            },
            3 => AethKind::Nak(NakCode::from_value(value)),
            _ => AethKind::Reserved,
        }
    }
}

/// AtomicAck ETH: the remote data before the atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicAckEth {
    pub orig: u64,
}

/// Invalidate ETH: the R_Key to invalidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ieth {
    pub rkey: u32,
}

/// The extended headers of one packet; each is present exactly when the opcode calls for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtHeaders {
    pub rdeth: Option<Rdeth>,
    pub deth: Option<Deth>,
    pub xrceth: Option<Xrceth>,
    pub feth: Option<Feth>,
    pub reth: Option<Reth>,
    pub atomic_eth: Option<AtomicEth>,
    pub aeth: Option<Aeth>,
    pub atomic_ack_eth: Option<AtomicAckEth>,
    /// Immediate data, as sent (opaque, 32 bits).
    pub imm: Option<u32>,
    pub ieth: Option<Ieth>,
}

type R<'a, T> = nom::IResult<&'a [u8], T, NomError<'a>>;

/// Decodes one header of kind `kind` at the start of `input`.
fn decode_one<'a, T>(input: &'a [u8], parser: fn(&'a [u8]) -> R<'a, T>) -> Option<T> {
    parser(input).ok().map(|(_, v)| v)
}

/// Decoders of single headers, for callers that need one header of a packet: given the bytes
/// after the BTH and the opcode's header set, decode just that header.
pub mod single {
    use super::*;

    fn at(set: ExtSet, kind: ExtHeader, after_bth: &[u8]) -> Option<&[u8]> {
        after_bth.get(set.offset_of(kind)?..)
    }

    pub fn aeth(set: ExtSet, after_bth: &[u8]) -> Option<Aeth> {
        decode_one(at(set, ExtHeader::Aeth, after_bth)?, super::aeth)
    }

    pub fn reth(set: ExtSet, after_bth: &[u8]) -> Option<Reth> {
        decode_one(at(set, ExtHeader::Reth, after_bth)?, super::reth)
    }

    pub fn deth(set: ExtSet, after_bth: &[u8]) -> Option<Deth> {
        decode_one(at(set, ExtHeader::Deth, after_bth)?, super::deth)
    }
}

fn rdeth(i: &[u8]) -> R<'_, Rdeth> {
    let (i, (_, ee_context)) = (be_u8, be_u24).parse_complete(i)?;
    Ok((i, Rdeth { ee_context }))
}

fn deth(i: &[u8]) -> R<'_, Deth> {
    let (i, (qkey, _, src_qp)) = (be_u32, be_u8, be_u24).parse_complete(i)?;
    Ok((i, Deth { qkey, src_qp }))
}

fn xrceth(i: &[u8]) -> R<'_, Xrceth> {
    let (i, (_, xrc_srq)) = (be_u8, be_u24).parse_complete(i)?;
    Ok((i, Xrceth { xrc_srq }))
}

fn reth(i: &[u8]) -> R<'_, Reth> {
    let (i, (va, rkey, dma_len)) = (be_u64, be_u32, be_u32).parse_complete(i)?;
    Ok((i, Reth { va, rkey, dma_len }))
}

fn atomic_eth(i: &[u8]) -> R<'_, AtomicEth> {
    let (i, (va, rkey, swap_add, compare)) = (be_u64, be_u32, be_u64, be_u64).parse_complete(i)?;
    Ok((i, AtomicEth { va, rkey, swap_add, compare }))
}

fn aeth(i: &[u8]) -> R<'_, Aeth> {
    let (i, (syndrome, msn)) = (be_u8, be_u24).parse_complete(i)?;
    Ok((i, Aeth { syndrome, msn }))
}

fn feth(i: &[u8]) -> R<'_, Feth> {
    let (i, raw) = be_u32(i)?;
    Ok((i, Feth { raw }))
}

fn atomic_ack_eth(i: &[u8]) -> R<'_, AtomicAckEth> {
    let (i, orig) = be_u64(i)?;
    Ok((i, AtomicAckEth { orig }))
}

fn ieth(i: &[u8]) -> R<'_, Ieth> {
    let (i, rkey) = be_u32(i)?;
    Ok((i, Ieth { rkey }))
}

fn cnp_reserved(i: &[u8]) -> R<'_, ()> {
    let (i, _) = nom::bytes::complete::take(16usize)(i)?;
    Ok((i, ()))
}

/// Runs `parser` on `input` and stores its value in `slot`.
fn read_into<'a, T>(
    input: &'a [u8],
    parser: fn(&'a [u8]) -> R<'a, T>,
    slot: &mut Option<T>,
) -> Result<&'a [u8], nom::Err<NomError<'a>>> {
    let (rest, value) = parser(input)?;
    *slot = Some(value);
    Ok(rest)
}

impl ExtHeaders {
    /// Parses the headers in `set`, in wire order, from the bytes after the BTH. Returns them
    /// and the bytes after the last one.
    pub fn parse(set: ExtSet, input: &[u8]) -> Result<(ExtHeaders, &[u8]), Error> {
        let needed = set.len();
        split_bytes(input, needed, Layer::ExtHeader)?;
        let truncated = |_| Error::truncated(Layer::ExtHeader, needed, input.len());
        let mut h = ExtHeaders::default();
        let mut i = input;
        for kind in set.iter() {
            i = match kind {
                ExtHeader::Rdeth => read_into(i, rdeth, &mut h.rdeth),
                ExtHeader::Deth => read_into(i, deth, &mut h.deth),
                ExtHeader::Xrceth => read_into(i, xrceth, &mut h.xrceth),
                ExtHeader::Feth => read_into(i, feth, &mut h.feth),
                ExtHeader::Reth => read_into(i, reth, &mut h.reth),
                ExtHeader::AtomicEth => read_into(i, atomic_eth, &mut h.atomic_eth),
                ExtHeader::Aeth => read_into(i, aeth, &mut h.aeth),
                ExtHeader::AtomicAckEth => read_into(i, atomic_ack_eth, &mut h.atomic_ack_eth),
                ExtHeader::ImmDt => read_into(i, be_u32, &mut h.imm),
                ExtHeader::Ieth => read_into(i, ieth, &mut h.ieth),
                ExtHeader::CnpReserved => cnp_reserved(i).map(|(rest, ())| rest),
            }
            .map_err(truncated)?;
        }
        Ok((h, i))
    }
}

/// Writing the extended headers (IBA §9.3's layouts, each field's low bits where it is
/// narrower than its type).
impl Rdeth {
    pub fn emit(&self) -> [u8; 4] {
        join(&[&[0], &be24_bytes(self.ee_context)])
    }
}

impl Deth {
    pub fn emit(&self) -> [u8; 8] {
        join(&[&self.qkey.to_be_bytes(), &[0], &be24_bytes(self.src_qp)])
    }
}

impl Xrceth {
    pub fn emit(&self) -> [u8; 4] {
        join(&[&[0], &be24_bytes(self.xrc_srq)])
    }
}

impl Feth {
    pub fn emit(&self) -> [u8; 4] {
        self.raw.to_be_bytes()
    }
}

impl Reth {
    pub fn emit(&self) -> [u8; 16] {
        join(&[&self.va.to_be_bytes(), &self.rkey.to_be_bytes(), &self.dma_len.to_be_bytes()])
    }
}

impl AtomicEth {
    pub fn emit(&self) -> [u8; 28] {
        join(&[
            &self.va.to_be_bytes(),
            &self.rkey.to_be_bytes(),
            &self.swap_add.to_be_bytes(),
            &self.compare.to_be_bytes(),
        ])
    }
}

impl Aeth {
    pub fn emit(&self) -> [u8; 4] {
        join(&[&[self.syndrome], &be24_bytes(self.msn)])
    }
}

impl AtomicAckEth {
    pub fn emit(&self) -> [u8; 8] {
        self.orig.to_be_bytes()
    }
}

impl Ieth {
    pub fn emit(&self) -> [u8; 4] {
        self.rkey.to_be_bytes()
    }
}

/// A CNP's 16 reserved bytes after its BTH (IBA A17.9.3).
const CNP_RESERVED: [u8; 16] = [0; 16];

impl ExtHeaders {
    /// The headers of these that an opcode of `set` carries.
    pub fn only(&self, set: ExtSet) -> ExtHeaders {
        let has = |kind| set.offset_of(kind).is_some();
        ExtHeaders {
            rdeth: self.rdeth.filter(|_| has(ExtHeader::Rdeth)),
            deth: self.deth.filter(|_| has(ExtHeader::Deth)),
            xrceth: self.xrceth.filter(|_| has(ExtHeader::Xrceth)),
            feth: self.feth.filter(|_| has(ExtHeader::Feth)),
            reth: self.reth.filter(|_| has(ExtHeader::Reth)),
            atomic_eth: self.atomic_eth.filter(|_| has(ExtHeader::AtomicEth)),
            aeth: self.aeth.filter(|_| has(ExtHeader::Aeth)),
            atomic_ack_eth: self.atomic_ack_eth.filter(|_| has(ExtHeader::AtomicAckEth)),
            imm: self.imm.filter(|_| has(ExtHeader::ImmDt)),
            ieth: self.ieth.filter(|_| has(ExtHeader::Ieth)),
        }
    }

    /// Writes the headers of `set` (an opcode's), in its order, through `put`: each header
    /// `self` holds as it is, a missing one as zeros, but a missing AETH as an ACK with no
    /// credit count (syndrome 0x1F) and a CNP's reserved bytes as zeros.
    pub fn emit(&self, set: ExtSet, mut put: impl FnMut(&[u8])) {
        for kind in set.iter() {
            match kind {
                ExtHeader::Rdeth => put(&self.rdeth.unwrap_or(Rdeth { ee_context: 0 }).emit()),
                ExtHeader::Deth => put(&self.deth.unwrap_or(Deth { qkey: 0, src_qp: 0 }).emit()),
                ExtHeader::Xrceth => put(&self.xrceth.unwrap_or(Xrceth { xrc_srq: 0 }).emit()),
                ExtHeader::Feth => put(&self.feth.unwrap_or(Feth { raw: 0 }).emit()),
                ExtHeader::Reth => put(&self.reth.unwrap_or(Reth { va: 0, rkey: 0, dma_len: 0 }).emit()),
                ExtHeader::AtomicEth => {
                    let none = AtomicEth { va: 0, rkey: 0, swap_add: 0, compare: 0 };
                    put(&self.atomic_eth.unwrap_or(none).emit())
                }
                ExtHeader::Aeth => put(&self.aeth.unwrap_or(Aeth { syndrome: 0x1F, msn: 0 }).emit()),
                ExtHeader::AtomicAckEth => put(&self.atomic_ack_eth.unwrap_or(AtomicAckEth { orig: 0 }).emit()),
                ExtHeader::ImmDt => put(&self.imm.unwrap_or(0).to_be_bytes()),
                ExtHeader::Ieth => put(&self.ieth.unwrap_or(Ieth { rkey: 0 }).emit()),
                ExtHeader::CnpReserved => put(&CNP_RESERVED),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcode::info;

    fn set(opcode: u8) -> ExtSet {
        info(opcode).unwrap().ext
    }

    #[test]
    fn reth_of_rdma_write_first() {
        let b = [
            0x00, 0x00, 0x44, 0x6b, 0x00, 0x00, 0x10, 0x00, // va 0x0000446b00001000
            0xa4, 0x58, 0x9d, 0x1e, // rkey
            0x00, 0x00, 0x1f, 0x9c, // dma_len 8092
            0xAB,
        ];
        let (h, rest) = ExtHeaders::parse(set(0x06), &b).unwrap();
        assert_eq!(h.reth, Some(Reth { va: 0x0000_446b_0000_1000, rkey: 0xa458_9d1e, dma_len: 8092 }));
        assert_eq!((h.aeth, h.imm, h.deth), (None, None, None));
        assert_eq!(rest, &[0xAB]);
    }

    #[test]
    fn write_only_with_immediate_reads_reth_then_imm() {
        let mut b = vec![0; 16];
        b[15] = 8;
        b.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        let (h, rest) = ExtHeaders::parse(set(0x0B), &b).unwrap();
        assert_eq!(h.reth.unwrap().dma_len, 8);
        assert_eq!(h.imm, Some(0xdead_beef));
        assert!(rest.is_empty());
    }

    #[test]
    fn atomic_ack_reads_aeth_then_orig() {
        let b = [0x0c, 0x00, 0x00, 0x0b, 0, 0, 0, 0, 0, 0, 0x22, 0x22];
        let (h, _) = ExtHeaders::parse(set(0x12), &b).unwrap();
        assert_eq!(h.aeth, Some(Aeth { syndrome: 12, msn: 11 }));
        assert_eq!(h.atomic_ack_eth, Some(AtomicAckEth { orig: 0x2222 }));
    }

    #[test]
    fn compare_swap_atomic_eth() {
        let mut b = vec![0, 0, 0xd8, 0x14, 0, 0, 0, 0, 0xc6, 0x72, 0x2a, 0xc4];
        b.extend_from_slice(&0x1111u64.to_be_bytes());
        b.extend_from_slice(&0x2222u64.to_be_bytes());
        let (h, _) = ExtHeaders::parse(set(0x13), &b).unwrap();
        let a = h.atomic_eth.unwrap();
        assert_eq!((a.va, a.rkey, a.swap_add, a.compare), (0xd814_0000_0000, 0xc672_2ac4, 0x1111, 0x2222));
    }

    #[test]
    fn ud_deth_and_rd_rdeth() {
        let b = [0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x38, 0x79, 0x01, 0x02, 0x03, 0x04];
        let (h, rest) = ExtHeaders::parse(set(0x65), &b).unwrap();
        assert_eq!(h.deth, Some(Deth { qkey: 0x1111_1111, src_qp: 14457 }));
        assert_eq!(h.imm, Some(0x0102_0304));
        assert!(rest.is_empty());
        let b = [0xff, 0x00, 0x00, 0x07, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01];
        let (h, _) = ExtHeaders::parse(set(0x44), &b).unwrap();
        assert_eq!(h.rdeth, Some(Rdeth { ee_context: 7 }));
        assert_eq!(h.deth, Some(Deth { qkey: 0x8001_0000, src_qp: 1 }));
    }

    #[test]
    fn xrc_ieth_and_flush() {
        let b = [0x00, 0x00, 0x00, 0x05, 0x12, 0x34, 0x56, 0x78];
        let (h, _) = ExtHeaders::parse(set(0xB7), &b).unwrap();
        assert_eq!(h.xrceth, Some(Xrceth { xrc_srq: 5 }));
        assert_eq!(h.ieth, Some(Ieth { rkey: 0x1234_5678 }));
        let mut b = vec![0x00, 0x00, 0x00, 0x13];
        b.extend_from_slice(&[0; 16]);
        let (h, _) = ExtHeaders::parse(set(0x1C), &b).unwrap();
        let feth = h.feth.unwrap();
        assert_eq!((feth.placement_type(), feth.selectivity()), (3, 1));
        assert!(h.reth.is_some());
    }

    #[test]
    fn cnp_reserved_bytes_are_skipped() {
        let mut b = vec![0; 16];
        b.push(0x77);
        let (h, rest) = ExtHeaders::parse(set(0x81), &b).unwrap();
        assert_eq!(h, ExtHeaders::default());
        assert_eq!(rest, &[0x77]);
    }

    #[test]
    fn truncated_extended_headers() {
        assert_eq!(ExtHeaders::parse(set(0x13), &[0; 27]).unwrap_err(), Error::truncated(Layer::ExtHeader, 28, 27));
        assert_eq!(ExtHeaders::parse(set(0x0B), &[0; 19]).unwrap_err(), Error::truncated(Layer::ExtHeader, 20, 19));
    }

    #[test]
    fn single_headers_decode_like_the_whole_set() {
        let mut b = vec![0xff, 0, 0, 7, 0x80, 1, 0, 0, 0, 0, 0, 9]; // RDETH, DETH
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 5, 0, 0, 1, 0]); // RETH
        b.extend_from_slice(&[1, 2, 3, 4]); // ImmDt
        let set = set(0x4B);
        let (all, _) = ExtHeaders::parse(set, &b).unwrap();
        assert_eq!(single::deth(set, &b), all.deth);
        assert_eq!(single::reth(set, &b), all.reth);
        assert_eq!(single::aeth(set, &b), None);
        assert_eq!(single::reth(set, &b[..20]), None, "cut short");
    }

    #[test]
    fn aeth_syndromes() {
        let kind = |syndrome| Aeth { syndrome, msn: 0 }.kind();
        assert_eq!(kind(0x0A), AethKind::Ack { credit_code: 10, credits: Some(32) });
        assert_eq!(kind(0x08), AethKind::Ack { credit_code: 8, credits: Some(16) });
        assert_eq!(kind(0x1F), AethKind::Ack { credit_code: 31, credits: None });
        assert_eq!(kind(0x20), AethKind::RnrNak { timer_code: 0, delay_us: 655_360 });
        assert_eq!(kind(0x2E), AethKind::RnrNak { timer_code: 14, delay_us: 1_280 });
        assert_eq!(kind(0x3F), AethKind::RnrNak { timer_code: 31, delay_us: 491_520 });
        assert_eq!(kind(0x60), AethKind::Nak(NakCode::PsnSequenceError));
        assert_eq!(kind(0x62), AethKind::Nak(NakCode::RemoteAccessError));
        assert_eq!(kind(0x65), AethKind::Nak(NakCode::Reserved(5)));
        assert_eq!(kind(0x40), AethKind::Reserved);
        assert_eq!(NakCode::PsnSequenceError.describe(), "PSN sequence error");
    }
}
