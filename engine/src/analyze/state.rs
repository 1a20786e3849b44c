//! The analysis's state saved, to go on with it later or elsewhere: the file starts with
//! [`STATE_MAGIC`] and the format's version ([`STATE_VERSION`], little-endian `u32`), then the
//! whole [`Analyzer`] as it stands, unfinished, in postcard's encoding, zstd-compressed. Its
//! size is the analysis's own, bounded as the analysis is (flows, held packets, the recent
//! frames of the mirror-duplicate window), never a record per packet.

use std::io::{self, Read, Write};

use super::{Analyzer, saved};

pub const STATE_MAGIC: &[u8; 8] = b"RSCSTATE";
/// Raised whenever the saved state's shape changes; a state of another version is refused.
pub const STATE_VERSION: u32 = 1;

/// zstd's level for the state: fast, the state is written once per capture file.
const LEVEL: i32 = 3;

impl Analyzer {
    /// Writes the state, as it stands, to `out`.
    pub fn save(&self, mut out: impl Write) -> io::Result<()> {
        out.write_all(STATE_MAGIC)?;
        out.write_all(&STATE_VERSION.to_le_bytes())?;
        let encoded = saved::saving(|| postcard::to_stdvec(self)).map_err(io::Error::other)?;
        zstd::stream::copy_encode(&encoded[..], out, LEVEL)
    }

    /// Reads a state [`Analyzer::save`] wrote; an error says what is wrong with it.
    pub fn load(mut input: impl Read) -> io::Result<Analyzer> {
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
