//! An analysis saved to go on later ([`SavedRun`]): the file starts with [`STATE_MAGIC`] and
//! the format's version ([`STATE_VERSION`], little-endian `u32`), then the saved run in
//! postcard's encoding, zstd-compressed. Its size is the analysis's own, bounded as the
//! analysis is (flows, held packets, the recent frames of the mirror-duplicate window, the
//! first frames held until the doubled-mirror decision), never a record per packet.

use std::io::{self, Read, Write};

use super::report::InputReport;
use super::{Analyzer, saved};

pub const STATE_MAGIC: &[u8; 8] = b"RSCSTATE";
/// Raised whenever the saved state's shape changes; a state of another version is refused.
/// Version 1 held the analyzer alone.
pub const STATE_VERSION: u32 = 2;

/// zstd's level for the state: fast, the state is written once per run.
const LEVEL: i32 = 3;

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
        out.write_all(STATE_MAGIC)?;
        out.write_all(&STATE_VERSION.to_le_bytes())?;
        let encoded = saved::saving(|| postcard::to_stdvec(self)).map_err(io::Error::other)?;
        zstd::stream::copy_encode(&encoded[..], out, LEVEL)
    }

    /// Reads what [`SavedRun::save`] wrote; an error says what is wrong with it.
    pub fn load(mut input: impl Read) -> io::Result<SavedRun> {
        let mut head = [0u8; 12];
        input.read_exact(&mut head).map_err(|_| invalid("too short to be a saved analysis"))?;
        if &head[..8] != STATE_MAGIC {
            return Err(invalid("not a saved analysis (its first bytes are not RSCSTATE)"));
        }
        let version = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if version != STATE_VERSION {
            return Err(invalid(&format!(
                "a saved analysis of format {version}; this rocescope reads format {STATE_VERSION}"
            )));
        }
        let encoded = zstd::stream::decode_all(input).map_err(|e| invalid(&format!("damaged: {e}")))?;
        postcard::from_bytes(&encoded).map_err(|e| invalid(&format!("damaged: {e}")))
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}
