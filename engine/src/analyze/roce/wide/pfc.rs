//! PFC (802.1Qbb) and 802.3x PAUSE accounting per (source MAC, priority).
//!
//! For each enabled class a time > 0 is an XOFF and 0 an XON. A pause lasts quanta × 512 bit
//! times at the link speed. A pause period starts with an XOFF while the priority is not
//! paused; each XOFF arriving strictly before the current expiry extends it to the new XOFF's
//! expiry; an XON ends it at its own timestamp. A period lasts from its first XOFF to
//! min(XON, last expiry); a storm is a period of at least the storm threshold.
//!
//! The paused-time timeline is per channel (a priority, or PAUSE), not per source: a channel
//! is paused at an instant when at least one source's period is in force then, so it holds
//! the union of the sources' periods ([`InForce`]), at most the time a bin spans.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

use rocescope_parsers::ethernet::MacAddr;

use crate::analyze::timeline::Timeline;

/// Pause accounting of one (source MAC, priority).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, Renumber)]
pub struct PauseStats {
    pub xoff: u64,
    pub xon: u64,
    pub paused_ns: u64,
    pub longest_pause_ns: u64,
    pub storm: bool,
    /// Periods that reached the storm threshold.
    pub storm_periods: u64,
    pub first_frame: FrameNumber,
    pub first_ts_ns: i64,
    /// Start of the first storm period.
    pub first_storm_frame: Option<FrameNumber>,
}

/// One pause source's accounting, and the period it is in.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct PauseSource {
    pub stats: PauseStats,
    period: Option<Period>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
struct Period {
    start_ns: i64,
    start_frame: FrameNumber,
    expiry_ns: i64,
}

/// A pause period that ended: when, the XOFF that began it, and whether it was a storm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Closed {
    pub start_ns: i64,
    pub end_ns: i64,
    pub start_frame: FrameNumber,
    pub storm: bool,
}

/// A pause period of one source on a channel (a PFC priority, or [`PAUSE_CHANNEL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct PausePeriod {
    pub channel: u8,
    /// The pausing MAC: with the channel, the key of the source in [`PauseTracker`]'s `pfc`
    /// (or, on [`PAUSE_CHANNEL`], `pause`), as the report names its pause sources.
    pub source: MacAddr,
    pub period: Closed,
}

impl PauseSource {
    fn xoff(&mut self, frame: FrameNumber, ts_ns: i64, pause_ns: i64, storm_ns: i64) -> Option<Closed> {
        self.stats.xoff += 1;
        match &mut self.period {
            Some(p) if ts_ns < p.expiry_ns => {
                p.expiry_ns = ts_ns.saturating_add(pause_ns);
                None
            }
            _ => {
                let closed = self.close(None, storm_ns);
                self.period =
                    Some(Period { start_ns: ts_ns, start_frame: frame, expiry_ns: ts_ns.saturating_add(pause_ns) });
                closed
            }
        }
    }

    /// The expiry of the open period.
    fn expiry(&self) -> Option<i64> {
        self.period.map(|p| p.expiry_ns)
    }

    fn xon(&mut self, ts_ns: i64, storm_ns: i64) -> Option<Closed> {
        self.stats.xon += 1;
        if self.period.is_some_and(|p| ts_ns < p.expiry_ns) { self.close(Some(ts_ns), storm_ns) } else { None }
    }

    /// Ends the open period at `end_ns`, or at its expiry.
    fn close(&mut self, end_ns: Option<i64>, storm_ns: i64) -> Option<Closed> {
        let p = self.period.take()?;
        let end = end_ns.map_or(p.expiry_ns, |e| e.min(p.expiry_ns));
        let length = u64::try_from(end - p.start_ns).unwrap_or(0);
        let stats = &mut self.stats;
        stats.paused_ns += length;
        stats.longest_pause_ns = stats.longest_pause_ns.max(length);
        let storm = length >= u64::try_from(storm_ns).unwrap_or(u64::MAX);
        if storm {
            stats.storm = true;
            stats.storm_periods += 1;
            stats.first_storm_frame.get_or_insert(p.start_frame);
        }
        Some(Closed { start_ns: p.start_ns, end_ns: end, start_frame: p.start_frame, storm })
    }
}

/// The union of one channel's pauses over its sources, added to the paused-time timeline in
/// time order as the channel's pause frames come: between two of them no source's period
/// changes, so the channel is paused from the first until the second or until the latest
/// expiry of the periods open, whichever is earlier. An XOFF refresh moves its source's expiry,
/// an XON removes it: a pause in force is counted once, whatever refreshes it and however many
/// sources pause the channel at once. A frame earlier than the channel's latest one (a capture
/// out of time order) counts from that latest one.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct InForce {
    /// The union is in the timeline up to here, the channel's latest pause frame.
    until_ns: Option<i64>,
    /// The expiry of each source's open period, with the number of sources of that expiry
    /// (at most one entry per source: bounded by [`MAX_SOURCES`]).
    expiries: BTreeMap<i64, u32>,
}

impl InForce {
    /// Adds the union up to `ts_ns`, the time of a pause frame of `channel`, to `paused`.
    fn advance(&mut self, ts_ns: i64, paused: &mut Timeline, channel: usize) {
        if let (Some(from), Some((&expiry, _))) = (self.until_ns, self.expiries.last_key_value()) {
            paused.add_span(from, ts_ns.min(expiry), channel);
        }
        self.until_ns = Some(self.until_ns.map_or(ts_ns, |until| until.max(ts_ns)));
    }

    /// A pause frame of `source` on `channel` at `ts_ns`, which `apply` applies to the source:
    /// the union is added up to it first, then the source's expiry moved.
    fn frame<R>(
        &mut self,
        paused: &mut Timeline,
        channel: usize,
        ts_ns: i64,
        source: &mut PauseSource,
        apply: impl FnOnce(&mut PauseSource) -> R,
    ) -> R {
        self.advance(ts_ns, paused, channel);
        let before = source.expiry();
        let applied = apply(source);
        self.moved(before, source.expiry());
        applied
    }

    /// A source's open period went from expiring at `before` to `after` (`None`: no period open).
    fn moved(&mut self, before: Option<i64>, after: Option<i64>) {
        if before == after {
            return;
        }
        if let Some(b) = before
            && let std::collections::btree_map::Entry::Occupied(mut e) = self.expiries.entry(b)
        {
            match *e.get() > 1 {
                true => *e.get_mut() -= 1,
                false => drop(e.remove()),
            }
        }
        if let Some(a) = after {
            *self.expiries.entry(a).or_default() += 1;
        }
    }

    /// Adds the pauses still in force until they expire, no frame coming to end them.
    fn finish(&mut self, paused: &mut Timeline, channel: usize) {
        if let Some((&expiry, _)) = self.expiries.last_key_value() {
            self.advance(expiry, paused, channel);
        }
        self.expiries.clear();
    }

    /// The expiries after `at_ns`: the pauses in force after that instant.
    fn after(&self, at_ns: i64) -> impl Iterator<Item = (&i64, &u32)> {
        self.expiries.range(at_ns.saturating_add(1)..)
    }
}

/// Pause sources (a MAC address and, for PFC, a priority) tracked at most; frames from further
/// sources are counted in `not_kept` only.
pub const MAX_SOURCES: usize = 4096;

/// Bins of the paused-time timeline.
pub const TIMELINE_BINS: usize = 256;
/// The timeline's channel of 802.3x PAUSE (channels 0–7 are the PFC priorities).
pub const PAUSE_CHANNEL: usize = 8;
/// Storm periods kept for the charts (the first ones).
pub const STORMS_KEPT: usize = 64;
/// Pause periods kept for joining with the flows' resends (the first ones to end).
pub const PERIODS_KEPT: usize = 1 << 16;

/// Pause state of every source seen, up to [`MAX_SOURCES`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, Renumber)]
pub struct PauseTracker {
    /// Link speed in Gb/s: one quantum lasts 512 / speed nanoseconds.
    link_gbps: u64,
    storm_ns: i64,
    pub pfc: FxHashMap<(MacAddr, u8), PauseSource>,
    /// 802.3x PAUSE, per source MAC.
    pub pause: FxHashMap<MacAddr, PauseSource>,
    /// PFC and PAUSE frames (counted once each) from sources beyond [`MAX_SOURCES`].
    pub not_kept: u64,
    /// The periods that ended.
    pub ended: Ended,
    /// Per priority (and [`PAUSE_CHANNEL`]), the union of the sources' pauses in force.
    in_force: [InForce; PAUSE_CHANNEL + 1],
}

/// The pause periods that ended, over all sources.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Ended {
    /// Paused time per priority (and [`PAUSE_CHANNEL`]) over time: the union of the sources'
    /// pauses ([`InForce`]), at most each bin's width.
    pub paused: Timeline,
    /// The first storm periods: (priority or [`PAUSE_CHANNEL`], start, end).
    pub storms: Vec<(usize, i64, i64)>,
    /// The first [`PERIODS_KEPT`] periods, each with its source, in order of their start once
    /// finished.
    pub periods: Vec<PausePeriod>,
    /// Periods beyond [`PERIODS_KEPT`].
    pub periods_not_kept: u64,
}

impl Ended {
    /// Records a period of `source` on `channel` that ended.
    fn record(&mut self, channel: usize, source: MacAddr, closed: Option<Closed>) {
        let Some(c) = closed else { return };
        if c.storm && self.storms.len() < STORMS_KEPT {
            self.storms.push((channel, c.start_ns, c.end_ns));
        }
        if self.periods.len() < PERIODS_KEPT {
            self.periods.push(PausePeriod { channel: channel as u8, source, period: c });
        } else {
            self.periods_not_kept += 1;
        }
    }

    /// Goes on as `end` went on from `start`: its periods after those `start` held (a period
    /// open at the boundary included, whenever it began); an error where `end`'s periods do
    /// not begin with `start`'s.
    fn graft(&mut self, start: &Ended, end: Ended, seam: &Seam) -> Result<(), Refused> {
        let before = start.periods.len();
        if end.periods.get(..before) != Some(&start.periods[..]) {
            return Err("pause periods that do not go on from the part's start".into());
        }
        self.paused.graft(&start.paused, end.paused, seam)?;
        for storm in end.storms.into_iter().filter(|s| s.1 >= seam.at_ns) {
            if self.storms.len() < STORMS_KEPT {
                self.storms.push(storm);
            }
        }
        for p in end.periods.into_iter().skip(before) {
            if self.periods.len() < PERIODS_KEPT {
                self.periods.push(p);
            } else {
                self.periods_not_kept += 1;
            }
        }
        self.periods_not_kept += end.periods_not_kept.saturating_sub(start.periods_not_kept);
        Ok(())
    }

    /// Puts the periods in order of their start, whatever order their sources closed in.
    fn sort(&mut self) {
        self.storms.sort_by_key(|s| (s.1, s.0));
        self.periods.sort_by_key(|p| (p.period.start_ns, p.channel, p.period.start_frame, p.source));
    }
}

impl PauseTracker {
    pub fn new(link_gbps: u64, storm_ns: i64) -> Self {
        PauseTracker {
            link_gbps: link_gbps.max(1),
            storm_ns,
            pfc: FxHashMap::default(),
            pause: FxHashMap::default(),
            not_kept: 0,
            ended: Ended {
                paused: Timeline::new(TIMELINE_BINS, PAUSE_CHANNEL + 1),
                storms: Vec::new(),
                periods: Vec::new(),
                periods_not_kept: 0,
            },
            in_force: Default::default(),
        }
    }

    /// Pause length of `quanta` at the link speed, in whole nanoseconds.
    pub fn quanta_ns(&self, quanta: u16) -> i64 {
        (u64::from(quanta) * 512 / self.link_gbps) as i64
    }

    fn update(
        source: &mut PauseSource,
        frame: FrameNumber,
        ts_ns: i64,
        pause_ns: i64,
        storm_ns: i64,
    ) -> Option<Closed> {
        if source.stats.xoff + source.stats.xon == 0 {
            source.stats.first_frame = frame;
            source.stats.first_ts_ns = ts_ns;
        }
        if pause_ns > 0 { source.xoff(frame, ts_ns, pause_ns, storm_ns) } else { source.xon(ts_ns, storm_ns) }
    }

    fn full(&self) -> bool {
        self.pfc.len() + self.pause.len() >= MAX_SOURCES
    }

    /// The source `key`, created when new unless the tracker is `full`.
    fn source<K: std::hash::Hash + Eq>(
        map: &mut FxHashMap<K, PauseSource>,
        key: K,
        full: bool,
    ) -> Option<&mut PauseSource> {
        if full && !map.contains_key(&key) {
            return None;
        }
        Some(map.entry(key).or_default())
    }

    pub fn observe_pfc(
        &mut self,
        frame: FrameNumber,
        ts_ns: i64,
        src: MacAddr,
        pfc: &rocescope_parsers::mac_control::Pfc,
    ) {
        let mut refused = false;
        for priority in 0..8u8 {
            if let Some(quanta) = pfc.pause_quanta(priority) {
                let (pause_ns, full) = (self.quanta_ns(quanta), self.full());
                match Self::source(&mut self.pfc, (src, priority), full) {
                    Some(source) => {
                        let (channel, storm_ns) = (usize::from(priority), self.storm_ns);
                        let closed =
                            self.in_force[channel].frame(&mut self.ended.paused, channel, ts_ns, source, |s| {
                                Self::update(s, frame, ts_ns, pause_ns, storm_ns)
                            });
                        self.ended.record(channel, src, closed);
                    }
                    None => refused = true,
                }
            }
        }
        self.not_kept += u64::from(refused);
    }

    pub fn observe_pause(&mut self, frame: FrameNumber, ts_ns: i64, src: MacAddr, quanta: u16) {
        let (pause_ns, full) = (self.quanta_ns(quanta), self.full());
        match Self::source(&mut self.pause, src, full) {
            Some(source) => {
                let storm_ns = self.storm_ns;
                let closed =
                    self.in_force[PAUSE_CHANNEL].frame(&mut self.ended.paused, PAUSE_CHANNEL, ts_ns, source, |s| {
                        Self::update(s, frame, ts_ns, pause_ns, storm_ns)
                    });
                self.ended.record(PAUSE_CHANNEL, src, closed);
            }
            None => self.not_kept += 1,
        }
    }

    /// Closes every open period at its expiry.
    pub fn finish(&mut self) {
        for (channel, in_force) in self.in_force.iter_mut().enumerate() {
            in_force.finish(&mut self.ended.paused, channel);
        }
        let storm_ns = self.storm_ns;
        // by source, so that the periods' order does not depend on the hash maps'
        let mut pfc: Vec<_> = self.pfc.iter_mut().map(|((mac, p), s)| ((*mac, usize::from(*p)), s)).collect();
        pfc.sort_by_key(|((mac, priority), _)| (mac.0, *priority));
        for ((mac, priority), source) in pfc {
            self.ended.record(priority, mac, source.close(None, storm_ns));
        }
        let mut pause: Vec<_> = self.pause.iter_mut().collect();
        pause.sort_by_key(|(mac, _)| mac.0);
        for (mac, source) in pause {
            self.ended.record(PAUSE_CHANNEL, *mac, source.close(None, storm_ns));
        }
        self.ended.sort();
    }
}

impl PauseTracker {
    /// Each channel's union added up to `until`, its sources' open periods in force.
    fn in_force_of_sources(&mut self, until: [Option<i64>; PAUSE_CHANNEL + 1]) {
        self.in_force = until.map(|until_ns| InForce { until_ns, expiries: BTreeMap::new() });
        for ((_, priority), source) in &self.pfc {
            self.in_force[usize::from(*priority)].moved(None, source.expiry());
        }
        for source in self.pause.values() {
            self.in_force[PAUSE_CHANNEL].moved(None, source.expiry());
        }
    }

    /// The MACs that sent pause frames since `start`, this tracker at an earlier point.
    pub fn sources_since(&self, start: &PauseTracker) -> rustc_hash::FxHashSet<MacAddr> {
        let frames = |s: &PauseSource| s.stats.xoff + s.stats.xon;
        let before_pfc = |k: &(MacAddr, u8)| start.pfc.get(k).map_or(0, frames);
        let before_pause = |k: &MacAddr| start.pause.get(k).map_or(0, frames);
        let pfc = self.pfc.iter().filter(|(k, s)| frames(s) > before_pfc(k)).map(|((mac, _), _)| *mac);
        let pause = self.pause.iter().filter(|(k, s)| frames(s) > before_pause(k)).map(|(mac, _)| *mac);
        pfc.chain(pause).collect()
    }
}

/// Pause frames have no host pair: a split analysis gives them all to one shard, so the others'
/// trackers are empty, and nothing is added (refused otherwise). Grafted, it goes on as `end`
/// went on from `start`, both numbered as this tracker: each source's counts added and its open
/// period taken, each channel's union going on as the part's where the part paused the channel;
/// refused where a source's pause state differs from `start`'s, where pauses in force after
/// the seam on a channel the part paused differ from `start`'s (a pause from before the part,
/// which the part's own union did not count), or where an extreme cannot be told.
impl Combine for PauseTracker {
    fn add(&mut self, other: &PauseTracker) -> Result<(), Refused> {
        let empty = other.pfc.is_empty() && other.pause.is_empty() && other.not_kept == 0;
        match empty && other.ended.periods.is_empty() && other.ended.periods_not_kept == 0 {
            true => Ok(()),
            false => Err("pause frames in more than one shard".into()),
        }
    }

    fn graft(&mut self, start: &PauseTracker, end: PauseTracker, seam: &Seam) -> Result<(), Refused> {
        fn source<K: std::hash::Hash + Eq + Copy>(
            mine: &mut FxHashMap<K, PauseSource>,
            start: &FxHashMap<K, PauseSource>,
            end: FxHashMap<K, PauseSource>,
        ) -> Result<(), &'static str> {
            for (key, e) in end {
                let empty = PauseSource::default();
                let s = start.get(&key).unwrap_or(&empty);
                if e.stats.xoff + e.stats.xon == s.stats.xoff + s.stats.xon {
                    continue;
                }
                let m = mine.entry(key).or_insert_with(|| PauseSource {
                    stats: PauseStats {
                        first_frame: e.stats.first_frame,
                        first_ts_ns: e.stats.first_ts_ns,
                        ..PauseStats::default()
                    },
                    period: None,
                });
                if m.period != s.period {
                    return Err("a pause period open when the part's kept frames end");
                }
                m.period = e.period;
                let (m, s, e) = (&mut m.stats, &s.stats, e.stats);
                m.longest_pause_ns =
                    crate::analyze::combining::later_max(m.longest_pause_ns, s.longest_pause_ns, e.longest_pause_ns)?;
                m.xoff += e.xoff - s.xoff;
                m.xon += e.xon - s.xon;
                m.paused_ns += e.paused_ns.saturating_sub(s.paused_ns);
                m.storm_periods += e.storm_periods.saturating_sub(s.storm_periods);
                m.storm |= e.storm_periods > s.storm_periods;
                m.first_storm_frame = m.first_storm_frame.or(e.first_storm_frame);
            }
            Ok(())
        }
        if end.not_kept > start.not_kept || end.pfc.len() + end.pause.len() >= MAX_SOURCES {
            return Err("the pause sources' bound".into());
        }
        // a channel's union goes on as the part's where the part paused it after the seam:
        // the pauses in force after the seam must be the same here as at the part's start;
        // this one's union is added up to the seam, the part's after it
        let mut until = self.in_force.each_ref().map(|f| f.until_ns);
        for (channel, (s, e)) in start.in_force.iter().zip(&end.in_force).enumerate() {
            if e != s {
                let mine = &mut self.in_force[channel];
                if !mine.after(seam.at_ns).eq(s.after(seam.at_ns)) {
                    return Err("a pause in force when the part's kept frames end".into());
                }
                mine.advance(seam.at_ns, &mut self.ended.paused, channel);
                until[channel] = e.until_ns;
            }
        }
        source(&mut self.pfc, &start.pfc, end.pfc)?;
        source(&mut self.pause, &start.pause, end.pause)?;
        if self.pfc.len() + self.pause.len() >= MAX_SOURCES {
            return Err("the pause sources' bound".into());
        }
        self.in_force_of_sources(until);
        self.ended.graft(&start.ended, end.ended, seam)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_parsers::mac_control::Pfc;

    const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
    const MS: i64 = 1_000_000;

    fn xoff(priority: u8, quanta: u16) -> Pfc {
        let mut q = [0u16; 8];
        q[usize::from(priority)] = quanta;
        Pfc { class_enable: 1 << priority, quanta: q }
    }

    #[test]
    fn a_period_open_where_a_part_ends_is_kept_when_it_closes_in_the_next() {
        let mut whole = PauseTracker::new(100, 100 * MS);
        whole.observe_pfc(FrameNumber::new(1), 0, MAC, &xoff(3, 0xFFFF));
        whole.observe_pfc(FrameNumber::new(2), MS / 10, MAC, &xoff(3, 0));
        whole.observe_pfc(FrameNumber::new(3), 2 * MS, MAC, &xoff(3, 0xFFFF));
        // a part's kept frames end here, the second period open
        let start = whole.clone();
        let mut end = whole.clone();
        end.observe_pfc(FrameNumber::new(4), 2 * MS + MS / 10, MAC, &xoff(3, 0));
        let seam = Seam { at_ns: 2 * MS + 1, ..Seam::default() };
        whole.graft(&start, end, &seam).expect("grafts");
        let starts: Vec<i64> = whole.ended.periods.iter().map(|p| p.period.start_ns).collect();
        assert_eq!(starts, [0, 2 * MS], "the period begun before the boundary, closed after it");
        // periods that do not go on from the start's are refused
        let mut other = PauseTracker::new(100, 100 * MS);
        other.observe_pfc(FrameNumber::new(1), 0, MAC, &xoff(3, 0xFFFF));
        other.observe_pfc(FrameNumber::new(2), 5, MAC, &xoff(3, 0));
        assert!(whole.clone().graft(&start, other, &seam).is_err());
    }

    /// At 512 Gb/s a quantum lasts 1 ns.
    const QUANTUM_NS: u64 = 512;

    /// The paused nanoseconds of each 1 µs bin of `channel` from 0.
    fn paused_per_us(t: &PauseTracker, channel: usize) -> Vec<u64> {
        assert_eq!((t.ended.paused.start_ns(), t.ended.paused.width_ns()), (Some(0), 1_000));
        t.ended.paused.series(channel).into_iter().map(|(_, v)| v).collect()
    }

    #[test]
    fn a_priority_is_paused_while_any_source_pauses_it_counted_once() {
        const OTHER: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
        let mut t = PauseTracker::new(QUANTUM_NS, 100 * MS);
        let frames = [
            (0, MAC, 10_000),       // MAC paused until 10 µs,
            (4_000, MAC, 10_000),   // refreshed until 14 µs
            (8_000, OTHER, 20_000), // OTHER paused until 28 µs
            (12_000, MAC, 10_000),  // MAC refreshed until 22 µs,
            (16_000, MAC, 0),       // and ended at 16 µs
            (40_000, MAC, 5_000),   // a new pause, until 45 µs
        ];
        for (i, &(ts, src, quanta)) in frames.iter().enumerate() {
            t.observe_pfc(FrameNumber::new(i as u64 + 1), ts, src, &xoff(3, quanta));
        }
        t.finish();
        let paused_ns = |src| t.pfc[&(src, 3)].stats.paused_ns;
        assert_eq!((paused_ns(MAC), paused_ns(OTHER)), (16_000 + 5_000, 20_000), "each source's own");
        // the union: [0, 28 µs) and [40 µs, 45 µs), each bin at most its width
        let mut union = vec![1_000; 28];
        union.extend([0; 12].into_iter().chain([1_000; 5]));
        assert_eq!(paused_per_us(&t, 3), union);
    }

    #[test]
    fn overlapping_periods_of_two_sources_on_a_priority_keep_their_own_sources() {
        const OTHER: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
        let mut t = PauseTracker::new(QUANTUM_NS, 100 * MS);
        t.observe_pfc(FrameNumber::new(1), 0, MAC, &xoff(3, 10_000)); // MAC until 10 µs
        t.observe_pfc(FrameNumber::new(2), 4_000, OTHER, &xoff(3, 20_000)); // OTHER until 24 µs
        t.observe_pfc(FrameNumber::new(3), 6_000, MAC, &xoff(3, 0)); // MAC ends at 6 µs
        t.finish();
        let period = |source, start_ns, end_ns, start_frame| PausePeriod {
            channel: 3,
            source,
            period: Closed { start_ns, end_ns, start_frame: FrameNumber::new(start_frame), storm: false },
        };
        assert_eq!(t.ended.periods, [period(MAC, 0, 6_000, 1), period(OTHER, 4_000, 24_000, 2)]);
    }

    #[test]
    fn a_pause_in_force_when_the_timeline_ends_counts_until_it_expires_and_xon_ends_it() {
        let mut t = PauseTracker::new(QUANTUM_NS, 100 * MS);
        t.observe_pause(FrameNumber::new(1), 0, MAC, 1_500);
        t.observe_pause(FrameNumber::new(2), 1_000, MAC, 2_500); // until 3.5 µs
        t.observe_pfc(FrameNumber::new(3), 500, MAC, &xoff(1, 5_000)); // until 5.5 µs
        t.observe_pfc(FrameNumber::new(4), 4_200, MAC, &xoff(1, 0));
        t.finish();
        assert_eq!(paused_per_us(&t, PAUSE_CHANNEL), [1_000, 1_000, 1_000, 500, 0]);
        assert_eq!(paused_per_us(&t, 1), [500, 1_000, 1_000, 1_000, 200]);
    }

    #[test]
    fn a_part_goes_on_with_the_union_unless_a_pause_before_it_is_in_force_after_its_kept_frames() {
        const OTHER: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
        let mut whole = PauseTracker::new(QUANTUM_NS, 100 * MS);
        whole.observe_pfc(FrameNumber::new(1), 0, MAC, &xoff(3, 10_000)); // until 10 µs
        // a part whose kept frames (none of them pauses) end at `at_ns`, then OTHER pauses
        let part = |at_ns: i64| {
            let start = PauseTracker::new(QUANTUM_NS, 100 * MS);
            let mut end = start.clone();
            end.observe_pfc(FrameNumber::new(2), at_ns + 1_000, OTHER, &xoff(3, 3_000));
            (start, end, Seam { at_ns, ..Seam::default() })
        };
        let (start, end, seam) = part(4_000);
        let refused = whole.clone().graft(&start, end, &seam).expect_err("MAC's pause goes on after the seam");
        assert_eq!(refused.reason(), "a pause in force when the part's kept frames end");
        let (start, end, seam) = part(12_000);
        whole.graft(&start, end, &seam).expect("grafts");
        whole.finish();
        let mut union = vec![1_000; 10];
        union.extend([0; 3].into_iter().chain([1_000; 3]));
        assert_eq!(paused_per_us(&whole, 3), union);
    }

    #[test]
    fn a_pause_at_the_end_of_time_expires_there() {
        // pcapng timestamps past 2262 are read as i64::MAX nanoseconds; found by fuzzing
        let mut t = PauseTracker::new(100, 100 * MS);
        t.observe_pause(FrameNumber::new(1), i64::MAX - 10, MAC, 0xFFFF);
        t.observe_pause(FrameNumber::new(2), i64::MAX, MAC, 0xFFFF);
        t.finish();
        let s = &t.pause.get(&MAC).unwrap().stats;
        assert_eq!((s.xoff, s.paused_ns), (2, 10));
    }

    #[test]
    fn sources_beyond_the_limit_are_counted_only() {
        let mut t = PauseTracker::new(100, 100 * MS);
        for i in 0..(MAX_SOURCES as u32 + 5) {
            let [_, a, b, c] = i.to_be_bytes();
            t.observe_pause(FrameNumber::new(u64::from(i)), 0, MacAddr([2, 0, 0, a, b, c]), 0xFFFF);
        }
        assert_eq!((t.pause.len(), t.not_kept), (MAX_SOURCES, 5));
        // a known source is still tracked; PFC from a new source is refused once per frame
        t.observe_pause(FrameNumber::new(1), MS, MacAddr([2, 0, 0, 0, 0, 0]), 0);
        assert_eq!(t.pause.get(&MacAddr([2, 0, 0, 0, 0, 0])).map(|s| s.stats.xon), Some(1));
        t.observe_pfc(FrameNumber::new(2), MS, MAC, &Pfc { class_enable: 0b11, quanta: [1, 1, 0, 0, 0, 0, 0, 0] });
        assert_eq!((t.pfc.len(), t.not_kept), (0, 6));
    }

    #[test]
    fn quanta_at_100g() {
        let t = PauseTracker::new(100, 100 * MS);
        assert_eq!(t.quanta_ns(320), 1638);
        assert_eq!(t.quanta_ns(0xFFFF), 335_539);
        assert_eq!(PauseTracker::new(25, 0).quanta_ns(0xFFFF), 1_342_156);
    }

    #[test]
    fn refreshed_xoffs_form_one_period_until_xon() {
        let mut t = PauseTracker::new(100, 100 * MS);
        let mut ts = 0;
        let mut frame = 0;
        while ts < 150 * MS {
            frame += 1;
            t.observe_pfc(FrameNumber::new(frame), ts, MAC, &xoff(3, 0xFFFF));
            ts += 300_000;
        }
        t.observe_pfc(FrameNumber::new(frame + 1), 150 * MS, MAC, &xoff(3, 0));
        t.finish();
        let s = &t.pfc[&(MAC, 3)].stats;
        assert_eq!((s.xoff, s.xon, s.longest_pause_ns, s.storm, s.storm_periods), (500, 1, 150 * MS as u64, true, 1));
        assert_eq!(s.first_storm_frame.map(FrameNumber::get), Some(1));
    }

    #[test]
    fn spaced_xoffs_are_separate_short_periods() {
        let mut t = PauseTracker::new(100, 100 * MS);
        for i in 0..5 {
            t.observe_pfc(FrameNumber::new(i), i as i64 * MS, MAC, &xoff(3, 320));
        }
        t.finish();
        let s = &t.pfc[&(MAC, 3)].stats;
        assert_eq!((s.xoff, s.longest_pause_ns, s.paused_ns, s.storm), (5, 1638, 5 * 1638, false));
    }

    #[test]
    fn a_late_xon_does_not_shorten_an_expired_pause() {
        let mut t = PauseTracker::new(100, 100 * MS);
        t.observe_pfc(FrameNumber::new(1), 0, MAC, &xoff(5, 1000)); // 5120 ns
        t.observe_pfc(FrameNumber::new(2), 10_000, MAC, &xoff(5, 0));
        t.finish();
        let s = &t.pfc[&(MAC, 5)].stats;
        assert_eq!((s.xoff, s.xon, s.longest_pause_ns), (1, 1, 5120));
    }

    #[test]
    fn an_early_xon_ends_the_period() {
        let mut t = PauseTracker::new(100, 100 * MS);
        t.observe_pause(FrameNumber::new(1), 0, MAC, 0xFFFF);
        t.observe_pause(FrameNumber::new(2), 1_000, MAC, 0);
        t.finish();
        assert_eq!(t.pause[&MAC].stats.longest_pause_ns, 1_000);
        assert!(t.pfc.is_empty());
    }
}
