//! Mirror-duplicate detection: a frame whose ICRC-covered bytes equal those of a frame of the
//! same flow seen at most `window` earlier, while its TTL / hop limit or a MAC address differs
//! (the same packet seen at a second tap). In a doubled mirror (a session that sees every
//! packet twice, byte for byte: [`DoublingProbe`]), the first byte-identical copy of a frame
//! within the span window is its duplicate too.
//!
//! Recent frames are remembered in four-way set-associative tables, one per host-pair
//! partition ([`crate::analyze::partition`]), each indexed by a hash of (flow, content signature): one
//! memory access per frame, and memory that depends on neither the capture size nor the number of flows (a partition's
//! table is allocated when its first frame comes, and grows, to 384 KiB at most, while frames
//! pushed out of full sets crowd its overflow list). A frame pushed out of its set while still
//! inside the window waits in that list until it leaves the window, so below
//! [`OVERFLOW_KEPT`] waiting frames none inside the window is forgotten, whatever came between
//! two copies, and what the window finds does not depend on how its tables grew.
//! Keeping the tables apart per partition makes the result the same however partitions are
//! spread over threads.

use rocescope_parsers::ethernet::MacAddr;

use crate::analyze::id::FlowKey;
use crate::analyze::partition::{self, PARTITIONS, canonical};
use crate::analyze::renumber::Renumber;

/// Sets in a partition's table (a power of two), of [`WAYS`] slots each.
pub const SETS: usize = 1 << 12;
/// Slots per set.
pub const WAYS: usize = 4;

/// What a flow's resends tell the copy check: a frame that matches another view's frame at
/// least a retransmission timer (`timer_ns`) later is a resend, not a copy, when its flow was
/// silent that long before it (a bond's other port after a failover) or it comes through the
/// view such a resend came by (`view`, which the check sets then); a second tap's copy
/// trails its packet by less.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resends {
    pub silent: bool,
    pub view: Option<u32>,
    pub timer_ns: i64,
}

/// What distinguishes two copies of one packet seen at different taps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct TapView {
    pub ttl: u8,
    pub src_mac: Option<MacAddr>,
    pub dst_mac: Option<MacAddr>,
}

/// The bytes of a frame the ICRC does not cover, or masks, that a copy could differ in: with
/// the content signature they stand for the whole frame from its Ethernet header on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
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
/// byte-identical copy was seen; `ts_ns` is `i64::MIN` in an empty slot. 24 bytes: a set of
/// four takes a cache line and a half.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, Renumber)]
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

/// The partition of a packet's flow, and its key in that partition's table: a hash of the
/// flow's key and the packet's content signature (the same whichever thread analyses it).
fn slot_key(flow: &FlowKey, signature: u32) -> (usize, u64) {
    let hosts = partition::mix(canonical(flow.src) ^ (u128::from(flow.dst_qp) << 64), canonical(flow.dst));
    (partition::of_hosts(flow.src, flow.dst), hosts.rotate_left(32) ^ u64::from(signature))
}

/// A 64-bit fingerprint folded to `bits` bits (collisions only hide a duplicate).
fn fold(x: u64, bits: u32) -> u32 {
    ((x ^ (x >> 32)) as u32) & (u32::MAX >> (32 - bits))
}

/// The slots of one set: a frame's key goes to one set and takes any of its slots.
type Set = [Slot; WAYS];

/// One partition's sets: [`INITIAL_SETS`] at first, doubled (up to [`SETS`]) while more than
/// one frame in [`CROWDED`] of the table's slots waits beside it. A frame that finds its set
/// full of frames still inside the window takes the place of the oldest, which waits in the
/// table's overflow list until it leaves the window: below [`OVERFLOW_KEPT`] frames waiting
/// beside a largest table, no frame inside the window is forgotten, and what the window finds
/// does not depend on how large its tables have grown (a merge of analyses made apart relies
/// on that). A partition with few frames in a window keeps a small, cache-resident table and
/// a busy one gets the room it needs.
#[derive(Debug, serde::Serialize, serde::Deserialize, Renumber)]
struct Table {
    sets: Vec<Set>,
    /// log2 of the number of sets.
    bits: u32,
    /// Frames pushed out of full sets while inside the window, oldest first.
    overflow: Vec<Slot>,
    /// The top bytes of the keys waiting beside, as a set of bits: a frame whose byte is not
    /// in it is not looked for there.
    waiting: [u64; 4],
}

/// Sets a partition's table starts with.
pub const INITIAL_SETS: usize = 1 << 7;

/// A table grows when more than one in this many of its slots' worth of frames waits in its
/// overflow list.
pub const CROWDED: usize = 64;

/// Frames waiting beside a table of [`SETS`] sets at most; beyond, the oldest is forgotten.
pub const OVERFLOW_KEPT: usize = 4096;

impl Table {
    fn new() -> Self {
        let sets = vec![[Slot::default(); WAYS]; INITIAL_SETS];
        Table { sets, bits: INITIAL_SETS.trailing_zeros(), overflow: Vec::new(), waiting: [0; 4] }
    }

    /// The set of `key`: Fibonacci hashing, whose top bits spread flows and signatures.
    fn index(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// The slot remembering `key`, in its set (at `index`) or waiting beside.
    fn find(&mut self, index: usize, key: u64) -> Option<&mut Slot> {
        let Table { sets, overflow, waiting, .. } = self;
        let in_set = sets.get_mut(index)?.iter_mut().find(|s| s.key == key && s.ts_ns != i64::MIN);
        match in_set {
            Some(slot) => Some(slot),
            None if Self::may_wait(waiting, key) => overflow.iter_mut().find(|s| s.key == key),
            None => None,
        }
    }

    /// Is `key`'s top byte among those of the keys waiting beside?
    fn may_wait(waiting: &[u64; 4], key: u64) -> bool {
        let byte = (key >> 56) as usize;
        waiting.get(byte / 64).is_some_and(|w| w & (1 << (byte % 64)) != 0)
    }

    /// Notes the keys waiting beside again.
    fn note_waiting(&mut self) {
        self.waiting = [0; 4];
        for slot in &self.overflow {
            let byte = (slot.key >> 56) as usize;
            if let Some(w) = self.waiting.get_mut(byte / 64) {
                *w |= 1 << (byte % 64);
            }
        }
    }

    /// Remembers `fresh` in its set, in the place of the oldest frame there; one still inside
    /// the window (`since`: the oldest time inside) waits beside. Returns the frames inside the
    /// window forgotten (beyond [`OVERFLOW_KEPT`]).
    fn insert(&mut self, index: usize, fresh: Slot, since: i64) -> u64 {
        let Some(set) = self.sets.get_mut(index) else { return 0 };
        let oldest = (1..WAYS).fold(0, |o, w| if set[w].ts_ns < set[o].ts_ns { w } else { o });
        let pushed = std::mem::replace(&mut set[oldest], fresh);
        if pushed.ts_ns < since {
            return 0;
        }
        self.overflow.retain(|s| s.ts_ns >= since);
        self.overflow.push(pushed);
        if self.overflow.len() * CROWDED > self.sets.len() && self.sets.len() < SETS {
            self.grow(since);
        }
        let beyond = self.overflow.len().saturating_sub(OVERFLOW_KEPT);
        self.overflow.drain(..beyond);
        self.note_waiting();
        beyond as u64
    }

    /// Doubles the sets and places every frame again, those waiting beside too; what finds
    /// its set full waits beside.
    fn grow(&mut self, since: i64) {
        let doubled = vec![[Slot::default(); WAYS]; self.sets.len() * 2];
        let old = std::mem::replace(&mut self.sets, doubled);
        self.bits += 1;
        let waiting = std::mem::take(&mut self.overflow);
        let mut frames: Vec<Slot> =
            old.iter().flatten().chain(&waiting).filter(|s| s.ts_ns != i64::MIN).copied().collect();
        frames.sort_by_key(|s| s.ts_ns);
        for slot in frames {
            let index = self.index(slot.key);
            let free = self.sets.get_mut(index).and_then(|set| set.iter_mut().find(|s| s.ts_ns == i64::MIN));
            match free {
                Some(free) => *free = slot,
                None if slot.ts_ns >= since => self.overflow.push(slot),
                None => {}
            }
        }
    }
}

#[derive(Debug, serde::Serialize, serde::Deserialize, Renumber)]
pub struct DuplicateWindow {
    window_ns: i64,
    /// In a doubled mirror: how far apart a frame and its byte-identical copy may be.
    span_window_ns: Option<i64>,
    /// Each partition's table, once it has had a frame.
    tables: Vec<Option<Table>>,
    /// Frames still inside the window pushed out by new ones (a copy of one goes unseen).
    lost: u64,
}

impl DuplicateWindow {
    pub fn new(window_ns: i64) -> Self {
        DuplicateWindow { window_ns, span_window_ns: None, tables: (0..PARTITIONS).map(|_| None).collect(), lost: 0 }
    }

    /// The capture is a doubled mirror: byte-identical copies within `span_window_ns` count.
    pub fn doubled(&mut self, span_window_ns: i64) {
        self.span_window_ns = Some(span_window_ns);
    }

    /// Is the packet with content `signature` of flow `flow` a mirror duplicate? Remembers it
    /// when it is not. A resend through another view is no copy ([`Resends`]).
    pub fn check(
        &mut self,
        flow: &FlowKey,
        signature: u32,
        ts_ns: i64,
        outside: &Outside,
        resends: &mut Resends,
    ) -> bool {
        let (partition, key) = slot_key(flow, signature);
        let full_view = outside.view.fingerprint();
        let view = fold(full_view, 32);
        // only a doubled mirror compares the other uncovered bytes
        let rest = if self.span_window_ns.is_some() { fold(outside.fingerprint(full_view), 31) } else { 0 };
        let fresh = Slot { key, ts_ns, view, outside: rest };
        let (window_ns, span_window_ns) = (self.window_ns, self.span_window_ns);
        let Some(table) = self.tables.get_mut(partition) else { return false };
        let table = table.get_or_insert_with(Table::new);
        let index = table.index(key);
        if let Some(hit) = table.find(index, key) {
            let age = ts_ns.saturating_sub(hit.ts_ns);
            if (0..=window_ns).contains(&age) && hit.view != view {
                let resend = age >= resends.timer_ns && (resends.silent || resends.view == Some(view));
                if !resend {
                    return true;
                }
                resends.view = Some(view);
            }
            let identical = hit.view == view && hit.outside == fresh.outside;
            if identical && span_window_ns.is_some_and(|w| (0..=w).contains(&age)) {
                hit.outside |= COPIED;
                return true;
            }
            *hit = fresh;
            return false;
        }
        let since = ts_ns.saturating_sub(window_ns.max(span_window_ns.unwrap_or(0)));
        self.lost += table.insert(index, fresh, since);
        false
    }
}

/// RoCE frames the doubled-mirror decision looks at (the first ones of the capture).
pub const PROBE_FRAMES: usize = 10_000;

/// The doubled-mirror decision: the RoCE frames looked at, those with a byte-identical copy
/// (another tap's, or the same session's second), and the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Doubling {
    pub frames: usize,
    pub with_identical_copy: usize,
    pub doubled: bool,
}

/// Decides whether a capture is a doubled mirror: more than half of its first
/// [`PROBE_FRAMES`] RoCE frames have a byte-identical copy within the span window (either
/// before or after them, among those frames).
#[derive(Debug, serde::Serialize, serde::Deserialize, Renumber)]
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

impl DuplicateWindow {
    /// Frames pushed out while still inside the window so far.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Endpoint;
    use std::net::IpAddr;

    const A: Outside = Outside {
        view: TapView { ttl: 64, src_mac: Some(MacAddr([2, 0, 0, 0, 0, 1])), dst_mac: None },
        tos: Some(0x68),
        pcp: None,
        orig_len: 100,
    };
    const B: Outside = Outside { view: TapView { ttl: 63, ..A.view }, ..A };

    /// A flow between two hosts, to QP `qp`.
    fn qp(qp: u32) -> FlowKey {
        let host = |address: [u8; 4]| Endpoint::Ip(IpAddr::from(address));
        FlowKey { src: host([10, 0, 0, 1]), dst: host([10, 0, 0, 2]), dst_qp: qp }
    }

    /// A flow from host `host` of 10.1.0.0/16, and its partition.
    fn from_host(host: u32) -> (FlowKey, usize) {
        let key = FlowKey { src: Endpoint::Ip(IpAddr::from((10 << 24 | 1 << 16 | host).to_be_bytes())), ..qp(1) };
        (key, partition::of_hosts(key.src, key.dst))
    }

    #[test]
    fn a_copy_from_another_tap_within_the_window_is_a_duplicate() {
        let mut w = DuplicateWindow::new(1_000_000);
        assert!(!w.check(&qp(1), 0xAB, 0, &A, &mut Resends::default()));
        assert!(w.check(&qp(1), 0xAB, 1_000, &B, &mut Resends::default()));
        // the same bytes with the same TTL and MACs: a real resend, not a mirror copy
        assert!(!w.check(&qp(1), 0xAB, 2_000, &A, &mut Resends::default()));
        // another flow, or too late
        assert!(!w.check(&qp(2), 0xAB, 2_500, &B, &mut Resends::default()));
        assert!(!w.check(&qp(1), 0xAB, 2_000 + 1_000_001, &B, &mut Resends::default()));
        // a packet through another port after a timer's silence is not a copy, nor are those
        // after it through that port; a copy that trails by less than the timer still is
        let mut resends = Resends { silent: true, view: None, timer_ns: 200_000 };
        for signature in [0x11, 0x12, 0x13] {
            assert!(!w.check(&qp(3), signature, 0, &A, &mut Resends::default()));
        }
        assert!(!w.check(&qp(3), 0x11, 500_000, &B, &mut resends));
        assert!(resends.view.is_some(), "the port remembered");
        resends.silent = false;
        assert!(!w.check(&qp(3), 0x12, 500_001, &B, &mut resends), "the same port");
        assert!(w.check(&qp(3), 0x11, 501_000, &A, &mut resends), "another view's copy of the resend");
        assert!(!w.check(&qp(3), 0x20, 600_000, &A, &mut Resends::default()));
        assert!(w.check(&qp(3), 0x20, 602_000, &B, &mut resends), "2 µs behind through that port: a copy");
    }

    #[test]
    fn copies_are_found_among_many_frames_in_between() {
        let mut w = DuplicateWindow::new(1_000_000);
        let mut found = 0;
        for i in 0..100_000u32 {
            w.check(&qp(i % 64), i.wrapping_mul(2_654_435_761), i64::from(i) * 10, &A, &mut Resends::default());
            if i >= 1_000 {
                let earlier = i - 1_000;
                found += u32::from(w.check(
                    &qp(earlier % 64),
                    earlier.wrapping_mul(2_654_435_761),
                    i64::from(i) * 10,
                    &B,
                    &mut Resends::default(),
                ));
            }
        }
        // a copy 1,000 frames later is recognised with near certainty
        assert!(found > 99_000 - 100, "{found}");
    }

    #[test]
    fn a_table_grows_only_while_frames_inside_the_window_are_pushed_out() {
        let mut w = DuplicateWindow::new(1_000);
        let partition = partition::of_hosts(qp(1).src, qp(1).dst);
        let sets = |w: &DuplicateWindow| w.tables[partition].as_ref().map_or(0, |t| t.sets.len());
        for i in 0..10_000u32 {
            w.check(&qp(1), i, i64::from(i) * 2_000, &A, &mut Resends::default()); // each frame outside the last one's window
        }
        assert_eq!(sets(&w), INITIAL_SETS);
        for i in 0..100_000u32 {
            w.check(&qp(2), i, 100_000_000 + i64::from(i), &A, &mut Resends::default()); // a thousand frames per window
        }
        assert!(sets(&w) > INITIAL_SETS && sets(&w) <= SETS, "{}", sets(&w));
    }

    #[test]
    fn frames_of_other_partitions_never_push_a_frame_out() {
        let mut w = DuplicateWindow::new(1_000_000);
        let (flow, partition) = from_host(0);
        assert!(!w.check(&flow, 0xAB, 0, &A, &mut Resends::default()));
        let others: Vec<FlowKey> = (1..1_000).map(from_host).filter(|(_, p)| *p != partition).map(|(k, _)| k).collect();
        for i in 0..100_000u32 {
            w.check(&others[i as usize % others.len()], i, 1, &A, &mut Resends::default());
        }
        assert!(w.check(&flow, 0xAB, 2, &B, &mut Resends::default()));
    }

    #[test]
    fn in_a_doubled_mirror_the_first_identical_copy_is_the_duplicate() {
        let mut w = DuplicateWindow::new(1_000_000);
        // not doubled: an identical copy is a resend
        assert!(!w.check(&qp(1), 0xAB, 0, &A, &mut Resends::default()));
        assert!(!w.check(&qp(1), 0xAB, 1_000, &A, &mut Resends::default()));
        w.doubled(50_000);
        assert!(!w.check(&qp(1), 0xCD, 0, &A, &mut Resends::default()));
        assert!(w.check(&qp(1), 0xCD, 10_000, &A, &mut Resends::default()), "the first copy within the span window");
        assert!(!w.check(&qp(1), 0xCD, 20_000, &A, &mut Resends::default()), "a later appearance is a resend");
        assert!(w.check(&qp(1), 0xCD, 21_000, &A, &mut Resends::default()), "whose own copy is its duplicate");
        assert!(!w.check(&qp(1), 0xEF, 0, &A, &mut Resends::default()));
        assert!(!w.check(&qp(1), 0xEF, 60_000, &A, &mut Resends::default()), "outside the span window");
        let marked = Outside { tos: Some(0x6B), ..A };
        assert!(!w.check(&qp(1), 0x12, 0, &A, &mut Resends::default()));
        assert!(
            !w.check(&qp(1), 0x12, 1_000, &marked, &mut Resends::default()),
            "a copy that differs in a masked byte is no copy"
        );
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
