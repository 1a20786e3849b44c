//! An analysis saved to go on later ([`SavedRun`]): the file starts with [`STATE_MAGIC`], the
//! format's version ([`STATE_VERSION`], little-endian `u32`) and the CRC-32 of the saved run's
//! encoding (little-endian `u32`: a damaged file is refused whole), then the saved run in
//! postcard's encoding, zstd-compressed. Its size is the analysis's own, bounded as the
//! analysis is (flows, held packets, the recent frames of the mirror-duplicate window, the
//! first frames held until the doubled-mirror decision), never a record per packet.

use std::io::{self, Read, Write};

use crate::analyze::roce::analyzer::Analyzer;
use crate::analyze::roce::report::inputs::InputReport;

pub const STATE_MAGIC: &[u8; 8] = b"RSCSTATE";
/// Raised whenever the saved state's shape changes; a state of another version is refused.
/// Version 1 held the analyzer alone; version 2 had no head ([`crate::analyze::roce::analyzer::head`]);
/// version 5 kept a flow's runtime state among its reported fields; version 6 had no UET
/// analysis, no UET counts and no `capture_only_gaps`; version 7 kept a UET PDC's PSNs from a
/// fixed origin, not in a sliding window; version 8 kept no CE marks of a UET PDC's PSNs and no
/// counts of its ACKs' ECN echoes compared with them, no count of frames cut inside their
/// headers, no flow's first mirror duplicate, and a path MTU per host pair; version 11 kept
/// no flow's first MACs; version 12 no hosts' QP tables; version 14 no union of the pauses in
/// force per priority; version 15 kept no source of a pause period.
pub const STATE_VERSION: u32 = 16;

/// zstd's level for the state: fast, the state is written once per run.
const LEVEL: i32 = 3;

/// A saved run decompresses to at most this many bytes: more than any analysis within its
/// bounds holds, so that a damaged or hostile file cannot take the memory without end.
pub const MAX_STATE_BYTES: u64 = 4 << 30;
/// A saved run may decompress to this many bytes whatever its compressed size.
pub const STATE_BYTES_ALWAYS_READ: u64 = 64 << 20;
/// Beyond [`STATE_BYTES_ALWAYS_READ`], a saved run decompresses to at most this many times
/// its compressed size. States compress 4.6–12× (docs/scale.md); a file that inflates far
/// more (a zstd bomb: a 129 KB file of run-length blocks inflates to 4 GiB) is refused before
/// it takes the memory.
pub const MAX_STATE_RATIO: u64 = 64;

/// The most a state file of `stored` bytes may decompress to.
pub fn decompressed_limit(stored: u64) -> u64 {
    stored.saturating_mul(MAX_STATE_RATIO).clamp(STATE_BYTES_ALWAYS_READ, MAX_STATE_BYTES)
}

/// An analysis that has read some files of a capture and can go on with the next ones: the
/// analyzer as it stands, unfinished, and what the report of the whole capture needs of the
/// files already read.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SavedRun {
    pub analyzer: Analyzer,
    /// Frames read so far, analysed or not (`-Y`): the next file's first frame is numbered
    /// after them.
    pub frames_read: u64,
    /// When the capture's first frame was captured (`frame.time_relative` in a display filter).
    pub first_ts_ns: Option<i64>,
    /// The display filter that chose the frames analysed.
    pub display_filter: Option<String>,
    /// The files read so far, in the order they were named.
    pub inputs: Vec<InputReport>,
    /// Where the command's output stands, for the run that goes on to carry on with it (an
    /// export's dataset); opaque to the analysis, empty for `analyze`.
    pub output: Vec<u8>,
}

impl SavedRun {
    /// Writes the saved run to `out`.
    pub fn save(&self, mut out: impl Write) -> io::Result<()> {
        let encoded = postcard::to_stdvec(self).map_err(io::Error::other)?;
        out.write_all(STATE_MAGIC)?;
        out.write_all(&STATE_VERSION.to_le_bytes())?;
        out.write_all(&crc32fast::hash(&encoded).to_le_bytes())?;
        // one frame that declares its decompressed size, checked before it is inflated
        out.write_all(&zstd::bulk::compress(&encoded, LEVEL)?)
    }

    /// Reads what [`SavedRun::save`] wrote into a file of `stored` bytes; an error says what
    /// is wrong with it. It decompresses to at most [`decompressed_limit`] of `stored`.
    pub fn load(input: impl Read, stored: u64) -> io::Result<SavedRun> {
        SavedRun::load_at_most(input, decompressed_limit(stored))
    }

    /// [`SavedRun::load`], refusing a state that declares or decompresses to more than
    /// `limit` bytes; it takes at most about twice `limit` of memory before it refuses.
    pub fn load_at_most(mut input: impl Read, limit: u64) -> io::Result<SavedRun> {
        let mut head = Vec::with_capacity(16);
        (&mut input).take(16).read_to_end(&mut head)?;
        if head.len() >= 8 && &head[..8] != STATE_MAGIC {
            return Err(invalid("not a saved analysis (its first bytes are not RSCSTATE)"));
        }
        if head.len() < 16 {
            return Err(invalid("too short to be a saved analysis"));
        }
        let version = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if version != STATE_VERSION {
            return Err(invalid(&format!(
                "a saved analysis of format {version}; this rocescope reads format {STATE_VERSION}"
            )));
        }
        let mut frame_head = Vec::with_capacity(FRAME_HEADER_MAX);
        (&mut input).take(FRAME_HEADER_MAX as u64).read_to_end(&mut frame_head)?;
        let declared = zstd::zstd_safe::get_frame_content_size(&frame_head).ok().flatten();
        if let Some(declared) = declared.filter(|d| *d > limit) {
            return Err(too_large(&format!("declares {declared} bytes once decompressed, more"), limit));
        }
        let mut encoded = Vec::with_capacity(declared.map_or(0, |d| d as usize));
        let input = io::Cursor::new(frame_head).chain(input);
        let decoder = zstd::stream::read::Decoder::new(input).map_err(|e| invalid(&format!("damaged: {e}")))?;
        decoder
            .take(limit.saturating_add(1))
            .read_to_end(&mut encoded)
            .map_err(|e| invalid(&format!("damaged: {e}")))?;
        if encoded.len() as u64 > limit {
            return Err(too_large("decompresses to more", limit));
        }
        if crc32fast::hash(&encoded).to_le_bytes() != [head[12], head[13], head[14], head[15]] {
            return Err(invalid("damaged: its checksum does not match its contents"));
        }
        postcard::from_bytes(&encoded).map_err(|e| invalid(&format!("damaged: {e}")))
    }
}

/// The longest zstd frame header (RFC 8878, 3.1.1.1): magic, descriptor, window, dictionary
/// and content size.
const FRAME_HEADER_MAX: usize = 18;

fn too_large(what: &str, limit: u64) -> io::Error {
    invalid(&format!(
        "{what} than the {limit} bytes a state file of its size may hold: a compression bomb, not a state rocescope saved"
    ))
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}
