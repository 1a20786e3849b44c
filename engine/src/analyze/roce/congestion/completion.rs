//! Message completion times of an RC request flow (docs/analysis.md, "Message completion
//! time"): a message is the packets from a FIRST to its LAST, or an ONLY (a READ: its request);
//! it starts when its first packet is first sent, and completes at the first ACK on the peer
//! flow at or after its last PSN (a SEND or WRITE), or at its last READ response (a READ).
//!
//! The analysis hands over request packets once it has decided they were sent for the first
//! time, so a resent packet never starts a message or adds to its size, and a late arrival
//! takes its place by PSN. A message's last packet may be decided after the ACK that covers
//! it has come (it waited for a reorder window): the flow remembers the peer's last ACKs for
//! that.

use crate::analyze::combining::Combine;
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use std::collections::VecDeque;

use rocescope_parsers::opcode::Position;
use rocescope_parsers::psn::psn_diff;

use crate::analyze::histogram::FineHistogram;

/// Messages awaiting completion a flow tracks at most; further ones are counted incomplete.
pub const OPEN_KEPT: usize = 4096;
/// The peer's ACKs a flow remembers for messages whose last packet is decided late.
const ACKS_KEPT: usize = 64;

#[derive(Debug, Clone, PartialEq, Copy, serde::Serialize, serde::Deserialize, Renumber)]
struct Message {
    first_psn: u32,
    /// Set once its LAST (or ONLY) is seen, with that packet's frame.
    last: Option<(u32, FrameNumber)>,
    start_ns: i64,
    bytes: u64,
    read: bool,
}

/// A completed message: its completion time and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Completed {
    pub fct_ns: u64,
    pub bytes: u64,
}

/// A request packet sent for the first time, as messages see it.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct RequestPacket {
    pub frame: FrameNumber,
    pub ts_ns: i64,
    pub psn: u32,
    pub position: Position,
    pub payload: u64,
    /// A READ request's DMA length.
    pub read: Option<u32>,
}

/// The messages of an RC request flow.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct Completions {
    /// Messages awaiting completion, by first PSN.
    #[combine(end)]
    open: VecDeque<Message>,
    /// The peer's last ACKs: PSN, time, frame.
    #[combine(end)]
    acks: VecDeque<(u32, i64, FrameNumber)>,
    pub fct_ns: FineHistogram,
    /// Messages beyond [`OPEN_KEPT`] awaiting completion, not tracked.
    #[combine(sum)]
    pub not_tracked: u64,
}

impl Completions {
    /// A request packet sent for the first time; the message it completes, if an ACK already
    /// covered it.
    pub fn request(&mut self, p: RequestPacket) -> Option<Completed> {
        match p.position {
            Position::First | Position::Only => {
                if self.open.len() >= OPEN_KEPT {
                    self.not_tracked += 1;
                    return None;
                }
                let last = (p.position == Position::Only).then_some((p.psn, p.frame));
                let bytes = p.read.map_or(p.payload, u64::from);
                let message = Message { first_psn: p.psn, last, start_ns: p.ts_ns, bytes, read: p.read.is_some() };
                let at = self.open.iter().rposition(|m| psn_diff(m.first_psn, p.psn) < 0).map_or(0, |i| i + 1);
                self.open.insert(at, message);
            }
            Position::Middle | Position::Last => {
                let m = self.open.iter_mut().rev().find(|m| m.last.is_none() && psn_diff(p.psn, m.first_psn) >= 0)?;
                m.bytes += p.payload;
                if p.position == Position::Middle {
                    return None;
                }
                m.last = Some((p.psn, p.frame));
            }
        }
        if p.read.is_some() || self.acks.is_empty() {
            return None;
        }
        self.covered_already(p.psn)
    }

    /// Completes the message ending at `psn` if an ACK after it already covered it.
    fn covered_already(&mut self, psn: u32) -> Option<Completed> {
        let i = self.open.iter().rposition(|m| !m.read && m.last.is_some_and(|(l, _)| l == psn))?;
        let (_, frame) = self.open[i].last?;
        let &(_, ts_ns, _) = self.acks.iter().find(|&&(a, _, f)| f > frame && psn_diff(a, psn) >= 0)?;
        let m = self.open.remove(i)?;
        Some(self.complete(m, ts_ns))
    }

    fn complete(&mut self, m: Message, end_ns: i64) -> Completed {
        let fct_ns = u64::try_from(end_ns - m.start_ns).unwrap_or(0);
        self.fct_ns.record(fct_ns);
        Completed { fct_ns, bytes: m.bytes }
    }

    /// An ACK on the peer flow: the SEND and WRITE messages it completes.
    pub fn ack(&mut self, psn: u32, ts_ns: i64, frame: FrameNumber, done: &mut dyn FnMut(Completed)) {
        if self.acks.len() == ACKS_KEPT {
            self.acks.pop_front();
        }
        self.acks.push_back((psn, ts_ns, frame));
        let covered = |m: &Message| !m.read && m.last.is_some_and(|(l, _)| psn_diff(psn, l) >= 0);
        while let Some(i) = self.open.iter().position(covered) {
            if let Some(m) = self.open.remove(i) {
                done(self.complete(m, ts_ns));
            }
        }
    }

    /// The last READ response packet (LAST or ONLY) at `psn`, sent for the first time: the
    /// READ it completes, the one whose responses began last at or before `psn`.
    pub fn read_response_end(&mut self, psn: u32, ts_ns: i64) -> Option<Completed> {
        let i = self.open.iter().rposition(|m| m.read && psn_diff(psn, m.first_psn) >= 0)?;
        let m = self.open.remove(i)?;
        Some(self.complete(m, ts_ns))
    }

    /// The flow was paired after its peer's first responses: the ACKs of the messages awaited
    /// may have come unlinked before, so they are no longer timed (incomplete).
    pub fn untrack_awaited(&mut self) {
        self.not_tracked += self.open.len() as u64;
        self.open.clear();
    }

    /// Messages not completed: those still awaited, and those not tracked.
    pub fn incomplete(&self) -> u64 {
        self.open.len() as u64 + self.not_tracked
    }
}

impl Completions {
    /// What decides how its later packets and ACKs are taken.
    pub fn context(&self) -> impl PartialEq + '_ {
        (&self.open, &self.acks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(frame: FrameNumber, psn: u32, position: Position) -> RequestPacket {
        RequestPacket { frame, ts_ns: frame.get() as i64 * 1_000, psn, position, payload: 1_000, read: None }
    }

    #[test]
    fn a_coalesced_ack_completes_every_message_it_covers() {
        let mut c = Completions::default();
        for (frame, psn, position) in [(1, 10, Position::First), (2, 11, Position::Last), (3, 12, Position::Only)] {
            assert_eq!(c.request(packet(FrameNumber::new(frame), psn, position)), None);
        }
        let mut done = Vec::new();
        c.ack(12, 9_000, FrameNumber::new(4), &mut |m| done.push(m));
        assert_eq!(done, [Completed { fct_ns: 8_000, bytes: 2_000 }, Completed { fct_ns: 6_000, bytes: 1_000 }]);
        assert_eq!((c.incomplete(), c.fct_ns.count()), (0, 2));
    }

    #[test]
    fn an_ack_before_the_last_psn_completes_nothing_and_a_late_last_finds_its_ack() {
        let mut c = Completions::default();
        c.request(packet(FrameNumber::new(1), 10, Position::First));
        c.request(packet(FrameNumber::new(2), 11, Position::Middle));
        let mut done = Vec::new();
        c.ack(11, 3_000, FrameNumber::new(3), &mut |m| done.push(m));
        assert!(done.is_empty());
        // the LAST came at frame 4, the ACK covering it at frame 5, the LAST decided after
        c.ack(12, 6_000, FrameNumber::new(5), &mut |m| done.push(m));
        assert!(done.is_empty());
        assert_eq!(
            c.request(packet(FrameNumber::new(4), 12, Position::Last)),
            Some(Completed { fct_ns: 5_000, bytes: 3_000 })
        );
    }

    #[test]
    fn a_read_completes_at_its_last_response_not_at_an_ack() {
        let mut c = Completions::default();
        c.request(RequestPacket { read: Some(8_192), ..packet(FrameNumber::new(1), 100, Position::Only) });
        c.request(packet(FrameNumber::new(2), 102, Position::Only));
        let mut done = Vec::new();
        c.ack(102, 5_000, FrameNumber::new(3), &mut |m| done.push(m));
        assert_eq!(done, [Completed { fct_ns: 3_000, bytes: 1_000 }]);
        assert_eq!(c.incomplete(), 1);
        // its two responses are PSNs 100 and 101; the LAST at 101
        assert_eq!(c.read_response_end(101, 7_000), Some(Completed { fct_ns: 6_000, bytes: 8_192 }));
        assert_eq!(c.incomplete(), 0);
    }
}
