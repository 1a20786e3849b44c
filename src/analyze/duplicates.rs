//! Mirror-duplicate detection: a frame whose ICRC-covered bytes equal those of a frame of the
//! same flow seen at most `window` earlier, while its TTL / hop limit or a MAC address differs
//! (the same packet seen at a second tap).
//!
//! Recent frames are remembered in a fixed direct-mapped table indexed by a hash of (flow,
//! content signature): one memory access per frame, and memory that depends on neither the
//! capture size nor the number of flows. A frame is forgotten when its slot is taken by
//! another, so a second copy is recognised as long as fewer than about
//! [`SLOTS`] frames came between the two copies (some 5 ms of a 100 Gb/s link at 1 KiB
//! frames, far more than the 1 ms window).

use rocescope_parsers::ethernet::MacAddr;

/// Sets in the table (a power of two), of two slots each.
pub const SETS: usize = 1 << 13;

/// What distinguishes two copies of one packet seen at different taps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TapView {
    pub ttl: u8,
    pub src_mac: Option<MacAddr>,
    pub dst_mac: Option<MacAddr>,
}

impl TapView {
    /// A compact fingerprint of the view (collisions only hide a duplicate, never invent one
    /// that has the same content).
    fn fingerprint(&self) -> u64 {
        let mac = |m: Option<MacAddr>| {
            m.map_or(0, |MacAddr(b)| u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]]))
        };
        (mac(self.src_mac).wrapping_mul(31) ^ mac(self.dst_mac)).wrapping_mul(0x100_0000_01B3) ^ u64::from(self.ttl)
    }
}

/// One remembered frame: its (flow, signature) key, when it was seen, and its view's
/// fingerprint; `ts_ns` is `i64::MIN` in an empty slot.
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: u64,
    ts_ns: i64,
    view: u64,
}

impl Default for Slot {
    fn default() -> Self {
        Slot { key: 0, ts_ns: i64::MIN, view: 0 }
    }
}

#[derive(Debug)]
pub struct DuplicateWindow {
    window_ns: i64,
    sets: Box<[[Slot; 2]]>,
}

impl DuplicateWindow {
    pub fn new(window_ns: i64) -> Self {
        DuplicateWindow { window_ns, sets: vec![[Slot::default(); 2]; SETS].into_boxed_slice() }
    }

    /// Is the packet with content `signature` in flow `flow` a mirror duplicate? Remembers it
    /// when it is not.
    pub fn check(&mut self, flow: u32, signature: u32, ts_ns: i64, view: TapView) -> bool {
        let key = (u64::from(flow) << 32) | u64::from(signature);
        // Fibonacci hashing spreads flows and signatures over the table.
        let index = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SETS.trailing_zeros())) as usize;
        let Some(set) = self.sets.get_mut(index) else { return false };
        let view = view.fingerprint();
        let [a, b] = set;
        let (hit, other) = if a.key == key && a.ts_ns != i64::MIN { (a, b) } else { (b, a) };
        if hit.key == key && hit.ts_ns != i64::MIN {
            let age = ts_ns.saturating_sub(hit.ts_ns);
            if (0..=self.window_ns).contains(&age) && hit.view != view {
                return true;
            }
            *hit = Slot { key, ts_ns, view };
            return false;
        }
        // A new key replaces the older of the two.
        let victim = if hit.ts_ns <= other.ts_ns { hit } else { other };
        *victim = Slot { key, ts_ns, view };
        false
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
    fn copies_are_found_among_many_frames_in_between() {
        let mut w = DuplicateWindow::new(1_000_000);
        let mut found = 0;
        for i in 0..100_000u32 {
            w.check(i % 64, i.wrapping_mul(2_654_435_761), i64::from(i) * 10, A);
            if i >= 1_000 {
                let earlier = i - 1_000;
                found += u32::from(w.check(earlier % 64, earlier.wrapping_mul(2_654_435_761), i64::from(i) * 10, B));
            }
        }
        // a copy 1,000 frames later is recognised with near certainty
        assert!(found > 99_000 - 100, "{found}");
    }
}
