//! Mirror-duplicate detection: a frame whose ICRC-covered bytes equal those of a frame of the
//! same flow seen at most `window` earlier, while its TTL / hop limit or a MAC address differs
//! (the same packet seen at a second tap). Remembers only the frames inside the window, so
//! memory follows the packet rate, not the capture size.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use rocescope_parsers::ethernet::MacAddr;

/// What distinguishes two copies of one packet seen at different taps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapView {
    pub ttl: u8,
    pub src_mac: Option<MacAddr>,
    pub dst_mac: Option<MacAddr>,
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    ts_ns: i64,
    view: TapView,
}

#[derive(Debug)]
pub struct DuplicateWindow {
    window_ns: i64,
    seen: FxHashMap<u64, Seen>,
    order: VecDeque<(i64, u64)>,
}

impl DuplicateWindow {
    pub fn new(window_ns: i64) -> Self {
        DuplicateWindow { window_ns, seen: FxHashMap::default(), order: VecDeque::new() }
    }

    /// Is the packet with content `signature` in flow `flow` a mirror duplicate? Records it
    /// when it is not.
    pub fn check(&mut self, flow: u32, signature: u32, ts_ns: i64, view: TapView) -> bool {
        while let Some(&(oldest, key)) = self.order.front() {
            if oldest >= ts_ns.saturating_sub(self.window_ns) {
                break;
            }
            self.order.pop_front();
            if self.seen.get(&key).is_some_and(|s| s.ts_ns == oldest) {
                self.seen.remove(&key);
            }
        }
        let key = (u64::from(flow) << 32) | u64::from(signature);
        if let Some(earlier) = self.seen.get(&key) {
            let age = ts_ns.saturating_sub(earlier.ts_ns);
            if (0..=self.window_ns).contains(&age) && earlier.view != view {
                return true;
            }
        }
        self.seen.insert(key, Seen { ts_ns, view });
        self.order.push_back((ts_ns, key));
        false
    }

    /// Frames currently remembered.
    pub fn remembered(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: TapView = TapView { ttl: 64, src_mac: Some(MacAddr([2, 0, 0, 0, 0, 1])), dst_mac: None };
    const B: TapView = TapView { ttl: 63, ..A };

    #[test]
    fn a_copy_from_another_tap_within_the_window_is_a_duplicate() {
        let mut w = DuplicateWindow::new(1_000_000);
        assert!(!w.check(1, 0xAB, 0, A));
        assert!(w.check(1, 0xAB, 1_000, B));
        // the same bytes with the same TTL and MACs: a real resend, not a mirror copy
        assert!(!w.check(1, 0xAB, 2_000, A));
        // another flow, or too late
        assert!(!w.check(2, 0xAB, 2_500, B));
        assert!(!w.check(1, 0xAB, 2_000 + 1_000_001, B));
    }

    #[test]
    fn old_frames_are_forgotten() {
        let mut w = DuplicateWindow::new(1_000);
        for i in 0..10_000u32 {
            w.check(1, i, i64::from(i) * 100, A);
        }
        assert!(w.remembered() <= 11, "{}", w.remembered());
    }
}
