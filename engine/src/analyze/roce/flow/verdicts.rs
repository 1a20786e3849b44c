//! Per-frame verdicts in frame order. A frame's verdict is final at once for most frames; a
//! late-arrival candidate waits for its run to end, and a frame that opened a gap waits for its
//! holes' fate (at most one reorder window of capture time), so verdicts leave in frame order
//! only up to the oldest one still open.

use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use std::collections::VecDeque;

use crate::analyze::id::FlowId;
use crate::analyze::seq_class::SeqClass;

/// What the analysis concluded about one frame (for per-packet output).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Verdict {
    pub flow: Option<FlowId>,
    pub seq: Option<SeqClass>,
    pub mirror_duplicate: bool,
    /// Of the PSNs missing before a gap's frame, those the responder acknowledged by the time
    /// the gap settled: missed by the capture only.
    pub capture_missed: u32,
    /// A UET PSN whose first appearance at the tap is a resend: the original never reached it.
    pub lost_before_tap: bool,
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, Renumber)]
struct Slot {
    frame: FrameNumber,
    verdict: Verdict,
    open: bool,
}

/// The verdicts not yet handed out.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct VerdictLedger {
    slots: VecDeque<Slot>,
}

impl VerdictLedger {
    /// A new frame's verdict, open until [`VerdictLedger::decide`] when `open`.
    pub fn push(&mut self, frame: FrameNumber, verdict: Verdict, open: bool) {
        self.slots.push_back(Slot { frame, verdict, open });
    }

    fn slot_mut(&mut self, frame: FrameNumber) -> Option<&mut Slot> {
        // Frames are numbered consecutively, so the slot is found by its distance from the
        // front; a search covers anything else.
        let index = frame.get().checked_sub(self.slots.front()?.frame.get()).and_then(|d| usize::try_from(d).ok());
        match index {
            Some(i) if self.slots.get(i).is_some_and(|s| s.frame == frame) => self.slots.get_mut(i),
            _ => self.slots.iter_mut().find(|s| s.frame == frame),
        }
    }

    /// Sets a frame's sequence class; `open` keeps the verdict waiting (a gap not settled).
    pub fn decide(&mut self, frame: FrameNumber, class: SeqClass, open: bool) {
        if let Some(slot) = self.slot_mut(frame) {
            slot.verdict.seq = Some(class);
            slot.open = open;
        }
    }

    /// Updates a frame's verdict, if it is still held.
    pub fn amend(&mut self, frame: FrameNumber, update: impl FnOnce(&mut Verdict)) {
        if let Some(slot) = self.slot_mut(frame) {
            update(&mut slot.verdict);
        }
    }

    /// Marks a frame's verdict as waiting for a decision.
    pub fn hold(&mut self, frame: FrameNumber) {
        if let Some(slot) = self.slot_mut(frame) {
            slot.open = true;
        }
    }

    /// Updates the newest frame's verdict.
    pub fn amend_last(&mut self, update: impl FnOnce(&mut Verdict)) {
        if let Some(slot) = self.slots.back_mut() {
            update(&mut slot.verdict);
        }
    }

    /// The oldest verdict, when it is final.
    pub fn pop_final(&mut self) -> Option<(u64, Verdict)> {
        match self.slots.front() {
            Some(s) if !s.open => self.slots.pop_front().map(|s| (s.frame.get(), s.verdict)),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_leave_in_frame_order_once_final() {
        let mut l = VerdictLedger::default();
        l.push(FrameNumber::new(1), Verdict::default(), false);
        l.push(FrameNumber::new(2), Verdict::default(), true);
        l.push(FrameNumber::new(3), Verdict::default(), false);
        assert_eq!(l.pop_final().map(|(f, _)| f), Some(1));
        assert!(l.pop_final().is_none(), "frame 2 is still open");
        l.decide(FrameNumber::new(2), SeqClass::LateArrival, false);
        let (frame, v) = l.pop_final().unwrap();
        assert_eq!((frame, v.seq), (2, Some(SeqClass::LateArrival)));
        assert_eq!(l.pop_final().map(|(f, _)| f), Some(3));
        assert!(l.is_empty());
    }
}
