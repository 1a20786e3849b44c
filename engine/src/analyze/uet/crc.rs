//! The UET packets whose CRC32C trailer matched each reading of it, and those that matched
//! none, by their first frames: the evidence of `UET_CRC_BAD` (docs/analysis.md, "UET"). The
//! capture-wide accounting keeps them; the UET report names the bad ones.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::finding::EVIDENCE_KEPT;
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;

/// The first frames (at most [`EVIDENCE_KEPT`]) of the UET packets whose CRC32C trailer
/// matched each reading, and of those that matched none: which are bad is known only once the
/// capture's reading is (docs/analysis.md, "UET").
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct UetCrcFrames {
    /// By reading, in the order of [`crate::analyze::counts::UetCrcCounts`]: crc32c_le, crc32c_be, crc32c_raw_le,
    /// crc32c_raw_be.
    pub readings: [Vec<FrameNumber>; 4],
    pub no_variant: Vec<FrameNumber>,
}

impl UetCrcFrames {
    /// Keeps `frame` in `list` unless it holds enough already.
    pub fn keep(list: &mut Vec<FrameNumber>, frame: FrameNumber) {
        if list.len() < EVIDENCE_KEPT {
            list.push(frame);
        }
    }

    fn lists_mut(&mut self) -> impl Iterator<Item = &mut Vec<FrameNumber>> {
        self.readings.iter_mut().chain(std::iter::once(&mut self.no_variant))
    }

    fn into_lists(self) -> impl Iterator<Item = Vec<FrameNumber>> {
        self.readings.into_iter().chain(std::iter::once(self.no_variant))
    }
}

/// The first frames of `list` and `more` together.
fn first_of(list: &mut Vec<FrameNumber>, more: impl IntoIterator<Item = FrameNumber>) {
    list.extend(more);
    list.sort_unstable();
    list.dedup();
    list.truncate(EVIDENCE_KEPT);
}

impl Combine for UetCrcFrames {
    /// The first frames of both.
    fn add(&mut self, other: &Self) -> Result<(), Refused> {
        for (mine, theirs) in self.lists_mut().zip(other.clone().into_lists()) {
            first_of(mine, theirs);
        }
        Ok(())
    }

    /// The first frames of this one and of those `end` kept beyond `start`'s.
    fn graft(&mut self, start: &Self, end: Self, _: &Seam) -> Result<(), Refused> {
        for ((mine, before), after) in self.lists_mut().zip(start.clone().into_lists()).zip(end.into_lists()) {
            first_of(mine, after.into_iter().filter(|f| !before.contains(f)));
        }
        Ok(())
    }
}
