//! The first frames of a part of a capture analysed on its own (`analyze --state` with no
//! `--resume`), kept with its state so that a merge can analyse them after the parts before it
//! ([`super::parts`]): a part's classification of its first packets depends on what came
//! before it, which only the merge knows.

use super::frame::FrameSummary;

/// Frames a head holds at most, as many as the analysis holds at a capture's start until the
/// doubled-mirror decision ([`super::PROBE_HELD`]); a part with more keeps none.
pub const HEAD_FRAMES: usize = 65_536;

/// The frames a part analysed, from its first.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Head {
    /// Every frame the part analysed so far, in order, numbered from 1 at its first frame:
    /// their count, and their summaries one after another in postcard's encoding (about a
    /// quarter of their size in memory).
    Whole { frames: usize, encoded: Vec<u8> },
    /// The part analysed more than [`HEAD_FRAMES`] frames: none is kept.
    TooLong,
}

impl Default for Head {
    fn default() -> Self {
        Head::Whole { frames: 0, encoded: Vec::new() }
    }
}

impl Head {
    /// Keeps the frame analysed next, while the head is within its bound.
    pub fn record(&mut self, frame: &FrameSummary) {
        let Head::Whole { frames, encoded } = self else { return };
        let room = *frames < HEAD_FRAMES;
        match postcard::to_extend(frame, std::mem::take(encoded)) {
            Ok(more) if room => (*frames, *encoded) = (*frames + 1, more),
            _ => *self = Head::TooLong,
        }
    }

    /// The frames kept, in order, if the head holds every frame the part analysed; an error
    /// if their encoding is damaged.
    pub fn into_frames(self) -> Option<Result<Vec<FrameSummary>, postcard::Error>> {
        let Head::Whole { frames, encoded } = self else { return None };
        let mut decoded = Vec::with_capacity(frames.min(HEAD_FRAMES));
        let mut rest = &encoded[..];
        while !rest.is_empty() {
            let (frame, after) = match postcard::take_from_bytes::<FrameSummary>(rest) {
                Ok(read) => read,
                Err(e) => return Some(Err(e)),
            };
            decoded.push(frame);
            rest = after;
        }
        Some(Ok(decoded))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::frame::{Content, LinkKind};

    fn frame(number: u64) -> FrameSummary {
        FrameSummary {
            number,
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
        let frames = head.clone().into_frames().expect("within the bound").expect("read back");
        assert_eq!(frames.len(), HEAD_FRAMES);
        let last = frames.last().expect("a frame");
        assert_eq!((last.number, last.ts_ns, last.dscp), (HEAD_FRAMES as u64, HEAD_FRAMES as i64 * 100, Some(26)));
        assert_eq!(last.encaps[0], Some("vxlan"));
        head.record(&frame(HEAD_FRAMES as u64 + 1));
        assert!(matches!(head, Head::TooLong));
        head.record(&frame(HEAD_FRAMES as u64 + 2));
        assert!(head.into_frames().is_none());
    }

    #[test]
    fn a_damaged_head_is_an_error() {
        let mut head = Head::default();
        head.record(&frame(1));
        let Head::Whole { encoded, .. } = &mut head else { unreachable!("one frame") };
        encoded.truncate(encoded.len() - 3);
        assert!(head.into_frames().expect("whole").is_err());
    }
}
