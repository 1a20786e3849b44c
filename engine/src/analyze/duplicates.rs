//! Mirror-duplicate detection: a frame whose ICRC-covered bytes equal those of a frame of the
//! same flow seen at most `window` earlier, while its TTL / hop limit or a MAC address differs
//! (the same packet seen at a second tap). In a doubled mirror (a session that sees every
//! packet twice, byte for byte: [`DoublingProbe`]), the first byte-identical copy of a frame
//! within the span window is its duplicate too.
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

/// The bytes of a frame the ICRC does not cover, or masks, that a copy could differ in: with
/// the content signature they stand for the whole frame from its Ethernet header on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outside {
    pub view: TapView,
    /// DSCP and ECN (the IP traffic class byte).
    pub tos: Option<u8>,
    pub pcp: Option<u8>,
    pub orig_len: u32,
}

impl Outside {
    /// A fingerprint of these bytes, given that of the view.
    fn fingerprint(&self, view: u64) -> u64 {
        let tos = self.tos.map_or(0x100, u64::from);
        let pcp = self.pcp.map_or(0x10, u64::from);
        (view.wrapping_mul(0x100_0000_01B3) ^ (tos << 40) ^ (pcp << 52)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ u64::from(self.orig_len)
    }

    /// A key standing for the frame's bytes: equal for byte-identical frames, and different
    /// for all others but with a chance of 2^-64.
    pub fn identity(&self, signature: u32) -> u64 {
        self.fingerprint(self.view.fingerprint()) ^ (u64::from(signature) << 16).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
    }
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

/// One remembered frame: its (flow, signature) key, when it was seen, its view's fingerprint,
/// and the fingerprint of its other uncovered bytes with [`COPIED`] set once its
/// byte-identical copy was seen; `ts_ns` is `i64::MIN` in an empty slot. 24 bytes, so that a
/// set of two slots takes less than a cache line.
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: u64,
    ts_ns: i64,
    view: u32,
    outside: u32,
}

/// The bit of [`Slot::outside`] that says the frame's byte-identical copy was seen.
const COPIED: u32 = 1 << 31;

impl Default for Slot {
    fn default() -> Self {
        Slot { key: 0, ts_ns: i64::MIN, view: 0, outside: 0 }
    }
}

/// A 64-bit fingerprint folded to `bits` bits (collisions only hide a duplicate).
fn fold(x: u64, bits: u32) -> u32 {
    ((x ^ (x >> 32)) as u32) & (u32::MAX >> (32 - bits))
}

#[derive(Debug)]
pub struct DuplicateWindow {
    window_ns: i64,
    /// In a doubled mirror: how far apart a frame and its byte-identical copy may be.
    span_window_ns: Option<i64>,
    sets: Box<[[Slot; 2]]>,
}

impl DuplicateWindow {
    pub fn new(window_ns: i64) -> Self {
        DuplicateWindow { window_ns, span_window_ns: None, sets: vec![[Slot::default(); 2]; SETS].into_boxed_slice() }
    }

    /// The capture is a doubled mirror: byte-identical copies within `span_window_ns` count.
    pub fn doubled(&mut self, span_window_ns: i64) {
        self.span_window_ns = Some(span_window_ns);
    }

    /// Is the packet with content `signature` in flow `flow` a mirror duplicate? Remembers it
    /// when it is not.
    pub fn check(&mut self, flow: u32, signature: u32, ts_ns: i64, outside: &Outside) -> bool {
        let key = (u64::from(flow) << 32) | u64::from(signature);
        // Fibonacci hashing spreads flows and signatures over the table.
        let index = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SETS.trailing_zeros())) as usize;
        let Some(set) = self.sets.get_mut(index) else { return false };
        let full_view = outside.view.fingerprint();
        let view = fold(full_view, 32);
        // only a doubled mirror compares the other uncovered bytes
        let rest = if self.span_window_ns.is_some() { fold(outside.fingerprint(full_view), 31) } else { 0 };
        let fresh = Slot { key, ts_ns, view, outside: rest };
        let [a, b] = set;
        let (hit, other) = if a.key == key && a.ts_ns != i64::MIN { (a, b) } else { (b, a) };
        if hit.key == key && hit.ts_ns != i64::MIN {
            let age = ts_ns.saturating_sub(hit.ts_ns);
            if (0..=self.window_ns).contains(&age) && hit.view != view {
                return true;
            }
            let identical = hit.view == view && hit.outside == fresh.outside;
            if identical && self.span_window_ns.is_some_and(|w| (0..=w).contains(&age)) {
                hit.outside |= COPIED;
                return true;
            }
            *hit = fresh;
            return false;
        }
        // A new key replaces the older of the two.
        let victim = if hit.ts_ns <= other.ts_ns { hit } else { other };
        *victim = fresh;
        false
    }
}

/// RoCE frames the doubled-mirror decision looks at (the first ones of the capture).
pub const PROBE_FRAMES: usize = 10_000;

/// Decides whether a capture is a doubled mirror: more than half of its first
/// [`PROBE_FRAMES`] RoCE frames have a byte-identical copy within the span window (either
/// before or after them, among those frames).
#[derive(Debug)]
pub struct DoublingProbe {
    span_window_ns: i64,
    /// The last frame seen with each identity: its time and index.
    last: rustc_hash::FxHashMap<u64, (i64, usize)>,
    has_copy: Vec<bool>,
}

impl DoublingProbe {
    pub fn new(span_window_ns: i64) -> Self {
        DoublingProbe { span_window_ns, last: rustc_hash::FxHashMap::default(), has_copy: Vec::new() }
    }

    /// Takes the next RoCE frame, known by its [`Outside::identity`].
    pub fn add(&mut self, identity: u64, ts_ns: i64) {
        let index = self.has_copy.len();
        self.has_copy.push(false);
        if let Some(&(t, earlier)) = self.last.get(&identity)
            && (0..=self.span_window_ns).contains(&ts_ns.saturating_sub(t))
        {
            self.has_copy[index] = true;
            if let Some(c) = self.has_copy.get_mut(earlier) {
                *c = true;
            }
        }
        self.last.insert(identity, (ts_ns, index));
    }

    /// Has it seen the frames it decides on?
    pub fn is_complete(&self) -> bool {
        self.has_copy.len() >= PROBE_FRAMES
    }

    /// RoCE frames seen, and those with a byte-identical copy.
    pub fn counts(&self) -> (usize, usize) {
        (self.has_copy.len(), self.has_copy.iter().filter(|c| **c).count())
    }

    pub fn is_doubled(&self) -> bool {
        let (frames, copied) = self.counts();
        copied * 2 > frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Outside = Outside {
        view: TapView { ttl: 64, src_mac: Some(MacAddr([2, 0, 0, 0, 0, 1])), dst_mac: None },
        tos: Some(0x68),
        pcp: None,
        orig_len: 100,
    };
    const B: Outside = Outside { view: TapView { ttl: 63, ..A.view }, ..A };

    #[test]
    fn a_copy_from_another_tap_within_the_window_is_a_duplicate() {
        let mut w = DuplicateWindow::new(1_000_000);
        assert!(!w.check(1, 0xAB, 0, &A));
        assert!(w.check(1, 0xAB, 1_000, &B));
        // the same bytes with the same TTL and MACs: a real resend, not a mirror copy
        assert!(!w.check(1, 0xAB, 2_000, &A));
        // another flow, or too late
        assert!(!w.check(2, 0xAB, 2_500, &B));
        assert!(!w.check(1, 0xAB, 2_000 + 1_000_001, &B));
    }

    #[test]
    fn copies_are_found_among_many_frames_in_between() {
        let mut w = DuplicateWindow::new(1_000_000);
        let mut found = 0;
        for i in 0..100_000u32 {
            w.check(i % 64, i.wrapping_mul(2_654_435_761), i64::from(i) * 10, &A);
            if i >= 1_000 {
                let earlier = i - 1_000;
                found += u32::from(w.check(earlier % 64, earlier.wrapping_mul(2_654_435_761), i64::from(i) * 10, &B));
            }
        }
        // a copy 1,000 frames later is recognised with near certainty
        assert!(found > 99_000 - 100, "{found}");
    }

    #[test]
    fn in_a_doubled_mirror_the_first_identical_copy_is_the_duplicate() {
        let mut w = DuplicateWindow::new(1_000_000);
        // not doubled: an identical copy is a resend
        assert!(!w.check(1, 0xAB, 0, &A));
        assert!(!w.check(1, 0xAB, 1_000, &A));
        w.doubled(50_000);
        assert!(!w.check(1, 0xCD, 0, &A));
        assert!(w.check(1, 0xCD, 10_000, &A), "the first copy within the span window");
        assert!(!w.check(1, 0xCD, 20_000, &A), "a later appearance is a resend");
        assert!(w.check(1, 0xCD, 21_000, &A), "whose own copy is its duplicate");
        assert!(!w.check(1, 0xEF, 0, &A));
        assert!(!w.check(1, 0xEF, 60_000, &A), "outside the span window");
        let marked = Outside { tos: Some(0x6B), ..A };
        assert!(!w.check(1, 0x12, 0, &A));
        assert!(!w.check(1, 0x12, 1_000, &marked), "a copy that differs in a masked byte is no copy");
    }

    #[test]
    fn the_probe_calls_a_capture_doubled_when_most_frames_have_a_copy() {
        let mut p = DoublingProbe::new(50_000);
        for i in 0..100u64 {
            p.add(i, i as i64 * 100_000);
            p.add(i, i as i64 * 100_000 + 1_000);
        }
        assert_eq!(p.counts(), (200, 200));
        assert!(p.is_doubled() && !p.is_complete());
        let mut p = DoublingProbe::new(50_000);
        for i in 0..100u64 {
            p.add(i, i as i64 * 100_000);
            if i % 4 == 0 {
                p.add(i, i as i64 * 100_000 + 1_000);
            }
        }
        assert!(!p.is_doubled(), "{:?}", p.counts());
    }
}
