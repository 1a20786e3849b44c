//! The first frames of a part of a capture analysed on its own (`analyze --state` with no
//! `--resume`), kept with its state so that a merge can analyse them after the parts before it
//! ([`crate::analyze::combine::parts`]): a part's classification of its first packets depends on what came
//! before it, which only the merge knows.

use crate::analyze::frame::FrameSummary;

/// Frames a head holds by default, as many as the analysis holds at a capture's start until
/// the doubled-mirror decision ([`crate::analyze::PROBE_HELD`]); a part with more keeps its first ones.
pub const HEAD_FRAMES: usize = 65_536;

/// Frames a head may be asked to hold at most (`analyze --keep-frames`).
pub const MAX_HEAD_FRAMES: usize = 1 << 20;

/// The frames a part analysed, from its first, up to its bound.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Head {
    /// Frames kept at most.
    limit: usize,
    /// Frames kept: their count, and their summaries one after another in postcard's
    /// encoding (about a quarter of their size in memory).
    frames: usize,
    encoded: Vec<u8>,
    /// Frames the part analysed beyond those kept.
    more: u64,
}

impl Default for Head {
    fn default() -> Self {
        Head::keeping(HEAD_FRAMES)
    }
}

impl Head {
    /// A head that keeps the first `limit` frames (at most [`MAX_HEAD_FRAMES`]).
    pub fn keeping(limit: usize) -> Self {
        Head { limit: limit.min(MAX_HEAD_FRAMES), frames: 0, encoded: Vec::new(), more: 0 }
    }

    /// Keeps the frame analysed next, while the head is within its bound; true for the
    /// first frame beyond it.
    pub fn record(&mut self, frame: &FrameSummary) -> bool {
        if self.frames < self.limit && self.more == 0 {
            match postcard::to_extend(frame, std::mem::take(&mut self.encoded)) {
                Ok(more) => (self.frames, self.encoded) = (self.frames + 1, more),
                Err(_) => (self.frames, self.more) = (0, 1),
            }
            return false;
        }
        self.more = self.more.saturating_add(1);
        self.more == 1
    }

    /// Does the head hold every frame the part analysed?
    pub fn is_whole(&self) -> bool {
        self.more == 0
    }

    /// Frames the part analysed beyond those kept.
    pub fn unkept(&self) -> u64 {
        self.more
    }

    /// Counts `frames` analysed beyond those kept (a part merged after this one's without
    /// its every frame).
    pub fn skip(&mut self, frames: u64) {
        self.more = self.more.saturating_add(frames);
    }

    /// The frames kept, in order; an error if their encoding is damaged.
    pub fn frames(&self) -> Result<Vec<FrameSummary>, postcard::Error> {
        let mut decoded = Vec::with_capacity(self.frames.min(self.limit));
        let mut rest = &self.encoded[..];
        while !rest.is_empty() {
            let (frame, after) = postcard::take_from_bytes::<FrameSummary>(rest)?;
            decoded.push(frame);
            rest = after;
        }
        Ok(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::frame::{Content, LinkKind};

    fn frame(number: u64) -> FrameSummary {
        FrameSummary {
            number: crate::analyze::id::FrameNumber::new(number),
            ts_ns: number as i64 * 100,
            orig_len: 60,
            caplen: 60,
            encaps: [Some("vxlan"), None, None, None],
            mirror_truncated: false,
            truncated_copy: false,
            vlan_tags: 1,
            marks: Default::default(),
            hardware_time: false,
            src: None,
            dst: None,
            dscp: Some(26),
            ecn: Some(3),
            outer_ce: true,
            erf_lost: 0,
            link: LinkKind::Decoded,
            content: Content::Other,
        }
    }

    #[test]
    fn a_head_keeps_every_frame_up_to_its_bound_and_none_beyond() {
        let mut head = Head::default();
        for n in 1..=HEAD_FRAMES as u64 {
            head.record(&frame(n));
        }
        assert!(head.is_whole());
        let frames = head.frames().expect("read back");
        assert_eq!(frames.len(), HEAD_FRAMES);
        let last = frames.last().expect("a frame");
        assert_eq!(
            (last.number.get(), last.ts_ns, last.dscp),
            (HEAD_FRAMES as u64, HEAD_FRAMES as i64 * 100, Some(26))
        );
        assert_eq!(last.encaps[0], Some("vxlan"));
        head.record(&frame(HEAD_FRAMES as u64 + 1));
        head.record(&frame(HEAD_FRAMES as u64 + 2));
        assert!(!head.is_whole());
        assert_eq!(head.frames().expect("read back").len(), HEAD_FRAMES, "the first frames stay");
    }

    #[test]
    fn a_damaged_head_is_an_error() {
        let mut head = Head::default();
        head.record(&frame(1));
        head.encoded.truncate(head.encoded.len() - 3);
        assert!(head.frames().is_err());
    }
}
