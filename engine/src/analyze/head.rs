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
    /// Every frame the part analysed so far, in order, numbered from 1 at its first frame.
    Whole(Vec<FrameSummary>),
    /// The part analysed more than [`HEAD_FRAMES`] frames: none is kept.
    TooLong,
}

impl Default for Head {
    fn default() -> Self {
        Head::Whole(Vec::new())
    }
}

impl Head {
    /// Keeps the frame analysed next, while the head is within its bound.
    pub fn record(&mut self, frame: &FrameSummary) {
        if let Head::Whole(frames) = self {
            if frames.len() < HEAD_FRAMES {
                frames.push(*frame);
            } else {
                *self = Head::TooLong;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::frame::{Content, LinkKind};

    fn frame(number: u64) -> FrameSummary {
        FrameSummary {
            number,
            ts_ns: 0,
            orig_len: 60,
            caplen: 60,
            encaps: Default::default(),
            mirror_truncated: false,
            truncated_copy: false,
            vlan_tags: 0,
            marks: Default::default(),
            hardware_time: false,
            src: None,
            dst: None,
            dscp: None,
            ecn: None,
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
        let Head::Whole(frames) = &head else { panic!("within the bound") };
        assert_eq!(frames.len(), HEAD_FRAMES);
        assert_eq!(frames.last().map(|f| f.number), Some(HEAD_FRAMES as u64));
        head.record(&frame(HEAD_FRAMES as u64 + 1));
        assert!(matches!(head, Head::TooLong));
        head.record(&frame(HEAD_FRAMES as u64 + 2));
        assert!(matches!(head, Head::TooLong));
    }
}
