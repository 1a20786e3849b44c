//! The trailer Metamako (Arista 7130) taps and packet brokers append to the frames they
//! timestamp, read from the frame's end: the original FCS (4 bytes), optional extensions
//! (TLVs), seconds (4), nanoseconds (4), flags (1: bit 0 original FCS valid, bit 1 extensions
//! present), device ID (2) and port (1); a new FCS may follow (`../shared/mirror-formats.md`).
//! Nothing marks the trailer: as Wireshark's `metamako` heuristic does, one is taken only when
//! its timestamp is plausible: nanoseconds below 10^9, at least an hour after the epoch, and
//! within 30 days of the frame's capture time.
//!
//! Each extension is a 32-bit header word, with the extension's data words before it: tag
//! (bits 4:0), last (bit 5), length in words (bits 7:6; with tag 0x1F, a secondary header,
//! bits 15:6 hold the length less one). They are walked back from the seconds, to the one
//! marked last. Tag 0 holds an ingress sequence number in the header word's middle 16 bits.

use crate::error::be32;

/// Bytes of a trailer with no extensions and no new FCS.
pub const MIN_LEN: usize = 16;
/// The largest gap between a trailer's time and the frame's capture time (Wireshark's default).
pub const MAX_CAPTURE_SKEW_SECS: i64 = 30 * 24 * 3600;
/// Trailer times before this are not plausible (Wireshark's default bound).
pub const MIN_SECS: u32 = 3600;

const FLAG_HAS_EXTENSIONS: u8 = 0x02;
/// An extension's tag that says its header is a secondary one (a longer length).
const TAG_SECONDARY: u32 = 0x1F;
const TAG_SEQUENCE_NUMBER: u32 = 0;

/// A Metamako trailer view: from the original FCS through the port ID.
#[derive(Debug, Clone, Copy)]
pub struct MetamakoTrailer<'a> {
    bytes: &'a [u8],
    /// The extensions' bytes (between the original FCS and the seconds).
    extensions: &'a [u8],
    /// A new FCS after the trailer.
    pub new_fcs: Option<&'a [u8]>,
}

/// A big-endian word at `at` in `bytes`, if there.
fn word_at(bytes: &[u8], at: usize) -> Option<u32> {
    match bytes.get(at..at.checked_add(4)?) {
        Some(&[a, b, c, d]) => Some(be32([a, b, c, d])),
        _ => None,
    }
}

impl<'a> MetamakoTrailer<'a> {
    /// The trailer at the end of `bytes` (what follows a frame's packet), without a new FCS
    /// after it or else with one; `capture_secs` is the frame's capture time in seconds.
    pub fn find(bytes: &'a [u8], capture_secs: i64) -> Option<Self> {
        [0, 4].into_iter().find_map(|fcs| Self::ending_at(bytes, bytes.len().checked_sub(fcs)?, capture_secs))
    }

    /// The trailer whose port ID is the byte before `end`, when its timestamp is plausible.
    fn ending_at(bytes: &'a [u8], end: usize, capture_secs: i64) -> Option<Self> {
        let seconds_at = end.checked_sub(12)?;
        let (seconds, nanoseconds) = (word_at(bytes, seconds_at)?, word_at(bytes, seconds_at + 4)?);
        let plausible = nanoseconds < 1_000_000_000
            && seconds >= MIN_SECS
            && i64::from(seconds).abs_diff(capture_secs) <= MAX_CAPTURE_SKEW_SECS.unsigned_abs();
        if !plausible {
            return None;
        }
        let flags = *bytes.get(seconds_at + 8)?;
        let extensions_start =
            if flags & FLAG_HAS_EXTENSIONS != 0 { Self::extensions_start(bytes, seconds_at) } else { seconds_at };
        let start = extensions_start.checked_sub(4)?;
        Some(MetamakoTrailer {
            bytes: bytes.get(start..end)?,
            extensions: bytes.get(extensions_start..seconds_at)?,
            new_fcs: bytes.get(end..).filter(|fcs| !fcs.is_empty()),
        })
    }

    /// Where the extensions before `seconds_at` start: walked back header by header to the
    /// one marked last, never past the bytes there are.
    fn extensions_start(bytes: &[u8], seconds_at: usize) -> usize {
        let mut at = seconds_at;
        while at >= 4 {
            let Some(header) = word_at(bytes, at - 4) else { break };
            at -= 4;
            let words = if header & 0x1F == TAG_SECONDARY { ((header >> 6) & 0x3FF) + 1 } else { (header >> 6) & 3 };
            at -= 4 * (words as usize).min(at / 4);
            if header & 0x20 != 0 {
                break;
            }
        }
        at
    }

    /// From the original FCS through the port ID (a new FCS left out).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    fn word(&self, at: usize) -> u32 {
        word_at(self.bytes, at).unwrap_or(0)
    }

    /// The frame's FCS as it arrived at the tap.
    pub fn original_fcs(&self) -> u32 {
        self.word(0)
    }

    pub fn extensions(&self) -> &'a [u8] {
        self.extensions
    }

    fn tail(&self) -> usize {
        self.bytes.len().saturating_sub(12)
    }

    pub fn seconds(&self) -> u32 {
        self.word(self.tail())
    }

    pub fn nanoseconds(&self) -> u32 {
        self.word(self.tail() + 4)
    }

    /// The time the tap received the frame, in nanoseconds since the epoch.
    pub fn time_ns(&self) -> i64 {
        i64::from(self.seconds()) * 1_000_000_000 + i64::from(self.nanoseconds())
    }

    pub fn flags(&self) -> u8 {
        (self.word(self.tail() + 8) >> 24) as u8
    }

    pub fn device_id(&self) -> u16 {
        (self.word(self.tail() + 8) >> 8) as u16
    }

    pub fn port(&self) -> u8 {
        self.word(self.tail() + 8) as u8
    }

    /// The ingress sequence number of a tag-0 extension, the one nearest the seconds first.
    pub fn sequence_number(&self) -> Option<u16> {
        let mut at = self.extensions.len();
        while at >= 4 {
            let header = word_at(self.extensions, at - 4)?;
            if header & 0x1F == TAG_SEQUENCE_NUMBER {
                return Some((header >> 8) as u16);
            }
            let words = if header & 0x1F == TAG_SECONDARY { ((header >> 6) & 0x3FF) + 1 } else { (header >> 6) & 3 };
            at = (at - 4).checked_sub(4 * words as usize)?;
        }
        None
    }
}

/// A trailer's fields, to write one ([`MetamakoRepr::emit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetamakoRepr {
    /// As [`MetamakoTrailer::original_fcs`] reads it: the FCS's bytes as they were on the
    /// wire, read big-endian.
    pub original_fcs: u32,
    /// An ingress sequence number, written as a tag-0 extension marked last (the extensions
    /// flag set with it).
    pub sequence_number: Option<u16>,
    pub seconds: u32,
    pub nanoseconds: u32,
    /// Flags other than the extensions flag (bit 0: the original FCS was valid).
    pub flags: u8,
    pub device_id: u16,
    pub port: u8,
}

impl MetamakoRepr {
    /// Writes the trailer through `put`, from the original FCS through the port ID (a new
    /// FCS after it is the caller's).
    pub fn emit(&self, mut put: impl FnMut(&[u8])) {
        put(&self.original_fcs.to_be_bytes());
        if let Some(n) = self.sequence_number {
            // tag 0, marked last, no data words: the number in the header word's middle bytes
            put(&((u32::from(n) << 8) | 0x20).to_be_bytes());
        }
        put(&self.seconds.to_be_bytes());
        put(&self.nanoseconds.to_be_bytes());
        let extensions = if self.sequence_number.is_some() { FLAG_HAS_EXTENSIONS } else { 0 };
        put(&[(self.flags & !FLAG_HAS_EXTENSIONS) | extensions]);
        put(&self.device_id.to_be_bytes());
        put(&[self.port]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14T22:13:20Z
    const CAPTURED: i64 = 1_700_000_000;

    /// A trailer: original FCS, `extensions`, the time, flags, device 0x0102, port 7.
    fn trailer(extensions: &[u8], seconds: u32, nanoseconds: u32, flags: u8) -> Vec<u8> {
        let mut t = vec![0xDE, 0xAD, 0xBE, 0xEF];
        t.extend_from_slice(extensions);
        t.extend_from_slice(&seconds.to_be_bytes());
        t.extend_from_slice(&nanoseconds.to_be_bytes());
        t.extend_from_slice(&[flags, 0x01, 0x02, 7]);
        t
    }

    #[test]
    fn a_capture_time_at_the_ends_of_i64_finds_no_trailer_and_no_overflow() {
        let bytes = trailer(&[], CAPTURED as u32, 123, 0x01);
        for capture_secs in [i64::MIN, i64::MAX] {
            assert!(MetamakoTrailer::find(&bytes, capture_secs).is_none());
        }
    }

    #[test]
    fn a_plain_trailer_after_padding_and_before_a_new_fcs() {
        let mut bytes = vec![0; 6];
        bytes.extend(trailer(&[], CAPTURED as u32 - 5, 123, 0x01));
        let t = MetamakoTrailer::find(&bytes, CAPTURED).unwrap();
        assert_eq!((t.original_fcs(), t.seconds(), t.nanoseconds(), t.flags()), (0xDEADBEEF, 1_699_999_995, 123, 1));
        assert_eq!((t.device_id(), t.port(), t.as_bytes().len(), t.new_fcs), (0x0102, 7, 16, None));
        assert_eq!(t.time_ns(), 1_699_999_995_000_000_123);
        bytes.extend_from_slice(&[1, 2, 3, 4]);
        let t = MetamakoTrailer::find(&bytes, CAPTURED).unwrap();
        assert_eq!((t.nanoseconds(), t.new_fcs), (123, Some(&[1, 2, 3, 4][..])));
    }

    #[test]
    fn extensions_are_walked_back_to_the_last_one() {
        // a sequence number 0x0A0B (tag 0, marked last), after a 1-word tag-2 extension
        let extensions = [0x00, 0x0A, 0x0B, 0x20, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x42];
        let bytes = trailer(&extensions, CAPTURED as u32, 0, 0x03);
        let t = MetamakoTrailer::find(&bytes, CAPTURED).unwrap();
        assert_eq!((t.extensions(), t.as_bytes().len(), t.sequence_number()), (&extensions[..], 28, Some(0x0A0B)));
    }

    #[test]
    fn implausible_times_are_not_trailers() {
        let far = CAPTURED as u32 + 31 * 24 * 3600;
        for bytes in [trailer(&[], CAPTURED as u32, 1_000_000_000, 0), trailer(&[], far, 0, 0), trailer(&[], 10, 0, 0)]
        {
            assert!(MetamakoTrailer::find(&bytes, CAPTURED).is_none());
        }
        assert!(MetamakoTrailer::find(&[0; 15], CAPTURED).is_none());
        // extensions claimed, none there: no room for the original FCS
        assert!(MetamakoTrailer::find(&trailer(&[], CAPTURED as u32, 0, 0x02)[4..], CAPTURED).is_none());
    }
}
