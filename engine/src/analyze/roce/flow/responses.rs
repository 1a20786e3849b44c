//! The response PSN space of a flow: READ responses carry the PSNs of the READ request they
//! answer (IBA §9.4.4: the responses of a READ at PSN p are p … p + n − 1, n = ⌈dma_len /
//! PMTU⌉, at least 1), in the other side's PSN space. The expected response PSN follows the
//! READ requests of the paired flow: inside the current READ it is the next PSN; when a READ's
//! response is complete (its LAST or ONLY packet), it is the first PSN of the next outstanding
//! READ. The requester's PSNs between two READs belong to its other requests, so only PSNs
//! inside outstanding READs can be missing (docs/analysis.md, "READ responses").

use std::collections::VecDeque;

use rocescope_parsers::opcode::Position;
use rocescope_parsers::psn::{psn_add, psn_diff, psn_forward_distance};

use crate::analyze::renumber::Renumber;
use crate::analyze::roce::flow::sequence::{EveryPsn, Holes, read_psns};

/// READ requests a flow remembers while their responses are awaited; the oldest is forgotten.
pub const READS_KEPT: usize = 1024;

/// A READ request whose responses have not all been seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Read {
    pub first_psn: u32,
    pub dma_len: u32,
}

/// The READ requests of a request flow awaiting responses, in PSN order.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct ReadQueue {
    reads: VecDeque<Read>,
}

impl ReadQueue {
    /// A READ request sent for the first time (a late one goes to its place in PSN order).
    pub fn push(&mut self, read: Read) {
        if self.reads.len() == READS_KEPT {
            self.reads.pop_front();
        }
        let at = self.reads.iter().rposition(|r| psn_diff(r.first_psn, read.first_psn) < 0).map_or(0, |i| i + 1);
        self.reads.insert(at, read);
    }

    pub fn front(&self) -> Option<&Read> {
        self.reads.front()
    }

    pub fn pop_front(&mut self) -> Option<Read> {
        self.reads.pop_front()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Read> {
        self.reads.iter()
    }

    /// Forgets the READs whose responses `cursor` has gone past (seen before the flows were
    /// known to be a pair, while the response space followed no READs).
    pub fn forget_answered(&mut self, cursor: &ResponseCursor) {
        let Some(high) = cursor.high else { return };
        while self.reads.front().is_some_and(|r| psn_diff(r.first_psn, high) < 0) {
            self.reads.pop_front();
        }
    }
}

/// Where a response space stands between two packets.
#[derive(Debug, Clone, PartialEq, Copy, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct ResponseCursor {
    /// Inside a multi-packet response: the next PSN and the end of the READ (exclusive), if
    /// known.
    current: Option<(u32, Option<u32>)>,
    /// The PSN after the highest response seen.
    high: Option<u32>,
}

/// The PSNs still to come of the current READ and of the outstanding ones.
pub struct OutstandingRanges {
    ranges: Vec<(u32, u32)>,
}

impl OutstandingRanges {
    fn contains(&self, psn: u32) -> bool {
        self.ranges.iter().any(|&(first, n)| psn_forward_distance(psn, first) < n)
    }
}

impl Holes for OutstandingRanges {
    fn is_hole(&self, psn: u32) -> bool {
        self.contains(psn)
    }

    fn count(&self, first: u32, span: u32) -> u32 {
        // Each range's overlap with [first, first + span), ranges taken as disjoint.
        self.ranges
            .iter()
            .map(|&(start, n)| {
                let offset = psn_forward_distance(start, first);
                if offset < span {
                    n.min(span - offset)
                } else if psn_forward_distance(first, start) < n {
                    (n - psn_forward_distance(first, start)).min(span)
                } else {
                    0
                }
            })
            .fold(0u32, u32::saturating_add)
    }
}

/// How a response packet is classified: which PSNs a jump skips, and whether a jump is in order.
pub enum ResponseRules {
    /// Ahead inside the outstanding READs: the skipped READ PSNs are missing.
    Outstanding(OutstandingRanges),
    /// A response beginning a READ the capture has no request for: in order wherever it is.
    Unknown,
    /// A jump inside a multi-packet response of an unknown READ: every PSN skipped is missing.
    Inside,
}

impl ResponseRules {
    pub fn holes(&self) -> &dyn Holes {
        match self {
            ResponseRules::Outstanding(r) => r,
            ResponseRules::Unknown | ResponseRules::Inside => &EveryPsn,
        }
    }

    pub fn ahead_in_order(&self) -> bool {
        matches!(self, ResponseRules::Unknown)
    }
}

impl ResponseCursor {
    /// The expected response PSN: the next of the current READ, the first of the next
    /// outstanding one, or the one after the highest response seen.
    pub fn expected(&self, reads: &ReadQueue) -> Option<u32> {
        self.current.map(|(next, _)| next).or_else(|| reads.front().map(|r| r.first_psn)).or(self.high)
    }

    /// The ranges still expected at path MTU `pmtu`.
    fn outstanding(&self, reads: &ReadQueue, pmtu: u32) -> OutstandingRanges {
        let mut ranges: Vec<(u32, u32)> = self
            .current
            .and_then(|(next, end)| end.map(|e| (next, psn_forward_distance(e, next))))
            .into_iter()
            .collect();
        ranges.extend(reads.iter().map(|r| (r.first_psn, read_psns(r.dma_len, pmtu))));
        OutstandingRanges { ranges }
    }

    /// The rules for a response at `psn` in `position`.
    pub fn rules(&self, reads: &ReadQueue, pmtu: u32, psn: u32, position: Position) -> ResponseRules {
        let outstanding = self.outstanding(reads, pmtu);
        if outstanding.contains(psn) {
            ResponseRules::Outstanding(outstanding)
        } else if matches!(position, Position::First | Position::Only) {
            ResponseRules::Unknown
        } else {
            ResponseRules::Inside
        }
    }

    /// A response at `psn` sent for the first time: the READs it completes or skips leave the
    /// queue, and the one it belongs to becomes the current one until its LAST or ONLY packet.
    pub fn advance(&mut self, reads: &mut ReadQueue, pmtu: u32, psn: u32, position: Position) {
        let mut end = self.current.and_then(|(_, end)| end).filter(|&e| psn_forward_distance(e, psn) > 0);
        while let Some(r) = reads.front().copied() {
            if psn_diff(psn, r.first_psn) < 0 {
                break;
            }
            reads.pop_front();
            let n = read_psns(r.dma_len, pmtu);
            if psn_forward_distance(psn, r.first_psn) < n {
                end = Some(psn_add(r.first_psn, n));
            }
        }
        let next = psn_add(psn, 1);
        self.current = match position {
            Position::Last | Position::Only => None,
            Position::First | Position::Middle => Some((next, end)),
        };
        if self.high.is_none_or(|h| psn_diff(next, h) > 0) {
            self.high = Some(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(reads: &[(u32, u32)]) -> ReadQueue {
        let mut q = ReadQueue::default();
        for &(first_psn, dma_len) in reads {
            q.push(Read { first_psn, dma_len });
        }
        q
    }

    #[test]
    fn the_expected_response_follows_the_reads_and_skips_the_other_requests() {
        // READs at 100 (4 packets at 1024) and 110 (1 packet); 104..109 were WRITEs.
        let mut q = queue(&[(110, 100), (100, 4096)]);
        let mut c = ResponseCursor::default();
        assert_eq!(c.expected(&q), Some(100));
        c.advance(&mut q, 1024, 100, Position::First);
        assert_eq!(c.expected(&q), Some(101));
        for (psn, pos) in [(101, Position::Middle), (102, Position::Middle), (103, Position::Last)] {
            c.advance(&mut q, 1024, psn, pos);
        }
        assert_eq!(c.expected(&q), Some(110));
        c.advance(&mut q, 1024, 110, Position::Only);
        assert_eq!(c.expected(&q), Some(111), "after the last READ: the PSN after the highest response");
    }

    #[test]
    fn only_psns_inside_outstanding_reads_are_missing() {
        let q = queue(&[(100, 4096), (110, 2048)]);
        let mut c = ResponseCursor::default();
        let mut q2 = q.clone();
        c.advance(&mut q2, 1024, 100, Position::First);
        // at 101 the current READ still has 101..103; 110 and 111 follow
        match c.rules(&q2, 1024, 111, Position::Last) {
            ResponseRules::Outstanding(r) => {
                assert_eq!(r.count(101, 10), 4, "101, 102, 103 and 110");
                assert!(r.is_hole(103) && !r.is_hole(105));
            }
            _ => panic!("111 is inside the READ at 110"),
        }
        assert!(matches!(c.rules(&q2, 1024, 200, Position::First), ResponseRules::Unknown));
        assert!(matches!(c.rules(&q2, 1024, 200, Position::Middle), ResponseRules::Inside));
    }

    #[test]
    fn reads_answered_before_the_pairing_are_forgotten() {
        let mut q = queue(&[(10, 2048), (12, 1024), (20, 1024)]);
        let mut c = ResponseCursor::default();
        c.advance(&mut ReadQueue::default(), 1024, 12, Position::Only);
        q.forget_answered(&c);
        assert_eq!(q.front().map(|r| r.first_psn), Some(20));
    }

    #[test]
    fn a_late_read_request_takes_its_place_in_psn_order() {
        let q = queue(&[(10, 1), (30, 1), (20, 1)]);
        let firsts: Vec<u32> = q.iter().map(|r| r.first_psn).collect();
        assert_eq!(firsts, vec![10, 20, 30]);
    }
}
