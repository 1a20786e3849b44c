//! PSN sequence tracking for one flow, with exactly the definitions of docs/analysis.md:
//!
//! The first sequenced PSN p sets the expected PSN e = p + 1 (mod 2^24). For each later PSN p:
//! p == e is in order (e = p + 1); 0 < (p − e) mod 2^24 < 2^23 is a gap (gaps += 1,
//! missing += (p − e) mod 2^24, e = p + 1); anything else is behind e, a retransmission
//! (e unchanged). A maximal run of retransmissions is one episode; only an in-order or gap
//! packet ends it. An RDMA READ request consumes ⌈dma_len / PMTU⌉ PSNs (at least 1); with the
//! PMTU unknown, a next PSN that any PMTU from 256 to 4096 bytes explains is in order.

use rocescope_parsers::psn::{PSN_HALF, psn_add, psn_forward_distance};

/// How a sequenced packet relates to the flow's expected PSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqClass {
    First,
    InOrder,
    /// PSNs were skipped; `missing` of them.
    Gap {
        missing: u32,
    },
    Retransmission,
}

impl SeqClass {
    pub fn name(self) -> &'static str {
        match self {
            SeqClass::First => "first",
            SeqClass::InOrder => "in_order",
            SeqClass::Gap { .. } => "gap",
            SeqClass::Retransmission => "retransmission",
        }
    }
}

/// The IBA path MTUs a READ's response count can be based on.
const PMTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// PSNs an RDMA READ of `dma_len` bytes consumes at `pmtu`.
pub fn read_psns(dma_len: u32, pmtu: u32) -> u32 {
    dma_len.div_ceil(pmtu.max(1)).max(1)
}

/// Sequence state of one flow.
#[derive(Debug, Clone, Default)]
pub struct Sequence {
    expected: Option<u32>,
    /// After a READ with an unknown PMTU: the expected PSNs each PMTU would give.
    read_alternatives: Option<[u32; 5]>,
    in_episode: bool,
    pub first_psn: Option<u32>,
    pub sequenced: u64,
    pub gaps: u64,
    pub missing_psns: u64,
    pub retransmitted: u64,
    pub retransmit_episodes: u64,
}

/// What [`Sequence::observe`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    pub class: SeqClass,
    /// This retransmission starts a new episode.
    pub episode_start: bool,
    /// This in-order or gap packet ends the episode that was running.
    pub episode_end: bool,
    /// The expected PSN before this packet (None for the first).
    pub expected_before: Option<u32>,
}

impl Sequence {
    /// The highest PSN sent so far (e − 1).
    pub fn highest(&self) -> Option<u32> {
        self.expected.map(|e| psn_add(e, 0xFF_FFFF))
    }

    pub fn expected(&self) -> Option<u32> {
        self.expected
    }

    /// Classifies the sequenced PSN `psn`. `read` is the DMA length and, if known, the PMTU
    /// when the packet is an RDMA READ request.
    pub fn observe(&mut self, psn: u32, read: Option<(u32, Option<u32>)>) -> Observation {
        self.sequenced += 1;
        if let (Some(alternatives), Some(e)) = (self.read_alternatives.take(), self.expected)
            && alternatives.contains(&psn)
            && psn != e
        {
            self.expected = Some(psn);
        }
        let expected_before = self.expected;
        let class = match self.expected {
            None => {
                self.first_psn = Some(psn);
                SeqClass::First
            }
            Some(e) if psn == e => SeqClass::InOrder,
            Some(e) => {
                let ahead = psn_forward_distance(psn, e);
                if ahead < PSN_HALF {
                    self.gaps += 1;
                    self.missing_psns += u64::from(ahead);
                    SeqClass::Gap { missing: ahead }
                } else {
                    SeqClass::Retransmission
                }
            }
        };
        let mut observation = Observation { class, episode_start: false, episode_end: false, expected_before };
        if class == SeqClass::Retransmission {
            self.retransmitted += 1;
            if !self.in_episode {
                self.in_episode = true;
                self.retransmit_episodes += 1;
                observation.episode_start = true;
            }
            return observation;
        }
        observation.episode_end = std::mem::take(&mut self.in_episode);
        self.expected = Some(match read {
            Some((dma_len, Some(pmtu))) => psn_add(psn, read_psns(dma_len, pmtu)),
            Some((dma_len, None)) => {
                self.read_alternatives = Some(PMTUS.map(|m| psn_add(psn, read_psns(dma_len, m))));
                psn_add(psn, read_psns(dma_len, 4096))
            }
            None => psn_add(psn, 1),
        });
        observation
    }

    /// Is an episode running (the last sequenced packet was a retransmission)?
    pub fn in_episode(&self) -> bool {
        self.in_episode
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(psns: &[u32]) -> (Vec<SeqClass>, Sequence) {
        let mut s = Sequence::default();
        let c = psns.iter().map(|&p| s.observe(p, None).class).collect();
        (c, s)
    }

    #[test]
    fn in_order_gap_and_retransmission() {
        let (c, s) = classes(&[10, 11, 15, 16, 12, 13, 14, 15, 16, 17]);
        use SeqClass::*;
        assert_eq!(
            c,
            vec![
                First,
                InOrder,
                Gap { missing: 3 },
                InOrder,
                Retransmission,
                Retransmission,
                Retransmission,
                Retransmission,
                Retransmission,
                InOrder
            ]
        );
        assert_eq!((s.sequenced, s.gaps, s.missing_psns, s.retransmitted, s.retransmit_episodes), (10, 1, 3, 5, 1));
    }

    #[test]
    fn wraps_at_2_to_the_24() {
        let (c, s) = classes(&[0xFF_FFFE, 0xFF_FFFF, 0, 2, 0xFF_FFFF]);
        use SeqClass::*;
        assert_eq!(c, vec![First, InOrder, InOrder, Gap { missing: 1 }, Retransmission]);
        assert_eq!(s.highest(), Some(2));
    }

    #[test]
    fn half_the_space_ahead_is_behind() {
        // exactly 2^23 ahead of e is not a gap (0 < d < 2^23 is), so it is a retransmission
        let (c, _) = classes(&[0, 1 + PSN_HALF]);
        assert_eq!(c[1], SeqClass::Retransmission);
        let (c, _) = classes(&[0, PSN_HALF]);
        assert_eq!(c[1], SeqClass::Gap { missing: PSN_HALF - 1 });
    }

    #[test]
    fn episodes_end_only_on_new_packets() {
        let mut s = Sequence::default();
        let obs: Vec<Observation> = [5, 6, 7, 5, 6, 8, 6].iter().map(|&p| s.observe(p, None)).collect();
        assert!(obs[3].episode_start && !obs[4].episode_start);
        assert!(obs[5].episode_end);
        assert!(obs[6].episode_start);
        assert_eq!(s.retransmit_episodes, 2);
        assert!(s.in_episode());
    }

    #[test]
    fn read_requests_consume_their_response_psns() {
        let mut s = Sequence::default();
        s.observe(100, Some((4096, Some(1024))));
        assert_eq!(s.observe(104, None).class, SeqClass::InOrder);
        // PMTU unknown: 3000 bytes is 12 PSNs at 256, 1 at 4096; 3 (at 1024) is in order
        let mut s = Sequence::default();
        s.observe(100, Some((3000, None)));
        assert_eq!(s.observe(103, None).class, SeqClass::InOrder);
        let mut s = Sequence::default();
        s.observe(100, Some((3000, None)));
        assert_eq!(s.observe(101, None).class, SeqClass::InOrder);
        let mut s = Sequence::default();
        s.observe(100, Some((3000, None)));
        assert_eq!(s.observe(105, None).class, SeqClass::Gap { missing: 4 });
        // a zero-length READ consumes one PSN
        assert_eq!(read_psns(0, 1024), 1);
        assert_eq!(read_psns(1025, 1024), 2);
    }
}
