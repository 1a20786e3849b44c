//! Incast: how many senders converge on one receiver (docs/analysis.md, "Incast"). At each
//! data packet to a receiver R at time t, R's fan-in is the number of distinct source
//! addresses with data packets to R in (t − W_i, t]; an incast period is a maximal run of R's
//! data packets at which the fan-in is at least K. During a period the receiver's CE-marked
//! data packets, the CNPs it sends and the PFC or PAUSE frames from its link's MACs are
//! counted.
//!
//! Fan-in spans host pairs, so this is capture-wide state: it takes [`IncastEvent`]s in
//! capture order, from the analysis itself or, when the analysis is split by host pair, from
//! every shard merged in frame order.

use crate::analyze::combining::{Combine, Refused, Seam};
use crate::analyze::id::FrameNumber;
use crate::analyze::renumber::Renumber;
use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::CongestionConfig;
use crate::analyze::timeline::Timeline;
use crate::decode::Endpoint;
use rocescope_parsers::ethernet::MacAddr;

/// Receivers tracked at most; data packets to further ones are not looked at.
pub const MAX_RECEIVERS: usize = 65_536;
/// Incast periods kept at most; further ones are counted.
pub const MAX_PERIODS: usize = 10_000;
/// Senders listed per period at most.
pub const SENDERS_LISTED: usize = 64;
/// Receivers whose fan-in over time is kept for the report's charts (the first ones), and
/// the bins of each.
pub const FAN_IN_CHARTED: usize = 256;
const FAN_IN_BINS: usize = 128;

/// What the incast analysis takes from one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub enum IncastEvent {
    /// A data packet from `source` to `receiver`, CE-marked or not, with its Ethernet
    /// addresses: the destination is the receiver's NIC, the source the switch port that
    /// delivers to it (when captured on the receiver's link).
    Data { receiver: Endpoint, source: Endpoint, ce: bool, dst_mac: Option<MacAddr>, src_mac: Option<MacAddr> },
    /// A CNP the host `from` sent.
    Cnp { from: Endpoint },
    /// A PFC frame pausing some priority, or a PAUSE frame, from `from`.
    Pause { from: MacAddr },
}

/// An event with the frame it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Timed {
    pub frame: FrameNumber,
    pub ts_ns: i64,
    pub event: IncastEvent,
}

/// An incast period of one receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, Renumber)]
pub struct IncastPeriod {
    pub receiver: Endpoint,
    pub first_frame: FrameNumber,
    pub start_ns: i64,
    pub end_ns: i64,
    pub peak_fan_in: usize,
    /// The senders counted in its fan-in (the first [`SENDERS_LISTED`]).
    pub senders: Vec<Endpoint>,
    /// During the period: the receiver's CE-marked data packets, the CNPs it sent, and the
    /// pausing frames from its link's MACs.
    pub ce_marks: u64,
    pub cnps: u64,
    pub pauses: u64,
}

/// Events counted towards a period: while it lasts, and those since its last packet, which
/// count only if it goes on.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize, Renumber)]
struct Signs {
    ce_marks: u64,
    cnps: u64,
    pauses: u64,
}

impl Signs {
    fn add(&mut self, other: Signs) {
        self.ce_marks += other.ce_marks;
        self.cnps += other.cnps;
        self.pauses += other.pauses;
    }
}

/// Link MACs remembered per receiver.
const MACS_KEPT: usize = 4;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, Renumber)]
struct Receiver {
    address: Endpoint,
    /// Runs of data packets of one sender in the last W_i, oldest first: (time of the run's
    /// latest packet, sender). A packet from the sender of the newest run only moves its time.
    recent: VecDeque<(i64, Endpoint)>,
    /// The runs in `recent` per sender: the senders of the fan-in.
    senders: FxHashMap<Endpoint, u32>,
    /// The link MACs seen beside it (the first [`MACS_KEPT`]).
    macs: [Option<MacAddr>; MACS_KEPT],
    /// Its largest fan-in over time, for the first [`FAN_IN_CHARTED`] receivers.
    over_time: Option<Timeline>,
    max_fan_in: usize,
    max_fan_in_at: (i64, FrameNumber),
    open: Option<IncastPeriod>,
    pending: Signs,
}

/// A receiver's fan-in, as the report shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReceiverFanIn {
    pub receiver: Endpoint,
    pub max_fan_in: usize,
    /// When and at which frame the maximum was first reached.
    pub max_fan_in_ns: i64,
    pub max_fan_in_frame: FrameNumber,
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, Renumber)]
pub struct Incast {
    receivers: Vec<Receiver>,
    by_address: FxHashMap<Endpoint, usize>,
    /// The receiver of the last data packet.
    last: Option<(Endpoint, usize)>,
    /// The receivers each link MAC is seen beside.
    by_mac: FxHashMap<MacAddr, Vec<usize>>,
    pub periods: Vec<IncastPeriod>,
    pub periods_not_kept: u64,
    /// Data packets to receivers beyond [`MAX_RECEIVERS`].
    pub untracked_packets: u64,
}

impl Incast {
    pub fn observe(&mut self, e: Timed, c: &CongestionConfig) {
        match e.event {
            IncastEvent::Data { receiver, source, ce, dst_mac, src_mac } => {
                let Some(r) = self.receiver(receiver, [dst_mac, src_mac]) else {
                    self.untracked_packets += 1;
                    return;
                };
                let closed = self.receivers[r].data(e, source, ce, c);
                self.keep(closed);
            }
            IncastEvent::Cnp { from } => {
                if let Some(&r) = self.by_address.get(&from) {
                    self.receivers[r].sign(e.ts_ns, Signs { cnps: 1, ..Signs::default() });
                }
            }
            IncastEvent::Pause { from } => {
                for &r in self.by_mac.get(&from).map_or(&[][..], Vec::as_slice) {
                    self.receivers[r].sign(e.ts_ns, Signs { pauses: 1, ..Signs::default() });
                }
            }
        }
    }

    /// The receiver at `address`, new if need be, and the link MACs seen beside it.
    fn receiver(&mut self, address: Endpoint, macs: [Option<MacAddr>; 2]) -> Option<usize> {
        let r = match (self.last, self.by_address.get(&address)) {
            (Some((a, r)), _) if a == address => r,
            (_, Some(&r)) => r,
            _ if self.receivers.len() >= MAX_RECEIVERS => return None,
            _ => {
                let charted = self.receivers.len() < FAN_IN_CHARTED;
                self.receivers.push(Receiver::new(address, charted));
                self.by_address.insert(address, self.receivers.len() - 1);
                self.receivers.len() - 1
            }
        };
        self.last = Some((address, r));
        for mac in macs.into_iter().flatten() {
            let known = &mut self.receivers[r].macs;
            if known.contains(&Some(mac)) {
                continue;
            }
            if let Some(slot) = known.iter_mut().find(|m| m.is_none()) {
                *slot = Some(mac);
                self.by_mac.entry(mac).or_default().push(r);
            }
        }
        Some(r)
    }

    fn keep(&mut self, closed: Option<IncastPeriod>) {
        let Some(period) = closed else { return };
        if self.periods.len() >= MAX_PERIODS {
            self.periods_not_kept += 1;
        } else {
            self.periods.push(period);
        }
    }

    /// Ends every open period, and lists the periods by start.
    pub fn finish(&mut self) {
        let open: Vec<IncastPeriod> = self.receivers.iter_mut().filter_map(|r| r.open.take()).collect();
        for period in open {
            self.keep(Some(period));
        }
        self.periods.sort_by_key(|p| p.first_frame);
    }

    /// The fan-in over time of every receiver that keeps it (the first ones).
    pub fn over_time_all(&self) -> Vec<(Endpoint, &Timeline)> {
        self.receivers.iter().filter_map(|r| Some((r.address, r.over_time.as_ref()?))).collect()
    }

    /// Every receiver's maximum fan-in, in order of their first data packet.
    pub fn fan_in(&self) -> Vec<ReceiverFanIn> {
        let fan_in = |r: &Receiver| ReceiverFanIn {
            receiver: r.address,
            max_fan_in: r.max_fan_in,
            max_fan_in_ns: r.max_fan_in_at.0,
            max_fan_in_frame: r.max_fan_in_at.1,
        };
        self.receivers.iter().map(fan_in).collect()
    }
}

impl Receiver {
    fn new(address: Endpoint, charted: bool) -> Self {
        Receiver {
            over_time: charted.then(|| Timeline::of_maxima(FAN_IN_BINS, 1)),
            address,
            recent: VecDeque::new(),
            senders: FxHashMap::default(),
            macs: [None; MACS_KEPT],
            max_fan_in: 0,
            max_fan_in_at: (0, FrameNumber::default()),
            open: None,
            pending: Signs::default(),
        }
    }

    /// A data packet to this receiver; the period it ends, if it ends one.
    fn data(&mut self, e: Timed, source: Endpoint, ce: bool, c: &CongestionConfig) -> Option<IncastPeriod> {
        // did the source enter the fan-in with this packet?
        let mut entered = false;
        match self.recent.back_mut() {
            Some((t, s)) if *s == source => *t = e.ts_ns,
            _ => {
                self.recent.push_back((e.ts_ns, source));
                let runs = self.senders.entry(source).or_default();
                entered = *runs == 0;
                *runs += 1;
            }
        }
        while let Some(&(_, s)) = self.recent.front().filter(|(t, _)| *t <= e.ts_ns - c.incast_window_ns) {
            self.recent.pop_front();
            if let Some(n) = self.senders.get_mut(&s) {
                *n -= 1;
                if *n == 0 {
                    self.senders.remove(&s);
                }
            }
        }
        let fan_in = self.senders.len();
        if let Some(t) = &mut self.over_time {
            t.add(e.ts_ns, 0, fan_in as u64);
        }
        if fan_in > self.max_fan_in {
            (self.max_fan_in, self.max_fan_in_at) = (fan_in, (e.ts_ns, e.frame));
        }
        if fan_in < c.incast_senders {
            self.pending = Signs::default();
            return self.open.take();
        }
        let address = self.address;
        let opening = self.open.is_none();
        let period = self.open.get_or_insert_with(|| IncastPeriod {
            receiver: address,
            first_frame: e.frame,
            start_ns: e.ts_ns,
            end_ns: e.ts_ns,
            peak_fan_in: 0,
            senders: Vec::new(),
            ce_marks: 0,
            cnps: 0,
            pauses: 0,
        });
        period.end_ns = e.ts_ns;
        period.peak_fan_in = period.peak_fan_in.max(fan_in);
        // the senders of the fan-in when it opens, in the order of their packets in the
        // window, and each that enters while it lasts
        if opening {
            self.recent.iter().for_each(|(_, s)| period.list(*s));
        } else if entered {
            period.list(source);
        }
        let mut signs = std::mem::take(&mut self.pending);
        signs.ce_marks += u64::from(ce);
        period.count(signs);
        None
    }

    /// A CNP from the receiver or a pause from its link at `ts_ns`: counted in the open period
    /// if it is within it, or if the period goes on past it.
    fn sign(&mut self, ts_ns: i64, signs: Signs) {
        match &mut self.open {
            Some(p) if ts_ns <= p.end_ns => p.count(signs),
            Some(_) => self.pending.add(signs),
            None => {}
        }
    }
}

impl IncastPeriod {
    /// This period, as it went on: `later` is how a period that began at `start` (its own
    /// state then, in another analysis) went on; an error where its greatest fan-in cannot be
    /// told or its senders' list could not list the later ones.
    fn went_on(&self, start: &IncastPeriod, later: &IncastPeriod) -> Result<IncastPeriod, &'static str> {
        if start.senders.len() >= SENDERS_LISTED && self.senders.len() < SENDERS_LISTED {
            return Err("an incast period's senders");
        }
        let mut period = IncastPeriod {
            end_ns: later.end_ns,
            peak_fan_in: crate::analyze::combining::later_max(self.peak_fan_in, start.peak_fan_in, later.peak_fan_in)?,
            ce_marks: self.ce_marks + later.ce_marks.saturating_sub(start.ce_marks),
            cnps: self.cnps + later.cnps.saturating_sub(start.cnps),
            pauses: self.pauses + later.pauses.saturating_sub(start.pauses),
            ..self.clone()
        };
        later.senders.iter().skip(start.senders.len()).for_each(|s| period.list(*s));
        Ok(period)
    }

    /// Lists a sender of its fan-in (the first [`SENDERS_LISTED`]).
    fn list(&mut self, sender: Endpoint) {
        if self.senders.len() < SENDERS_LISTED && !self.senders.contains(&sender) {
            self.senders.push(sender);
        }
    }

    fn count(&mut self, s: Signs) {
        self.ce_marks += s.ce_marks;
        self.cnps += s.cnps;
        self.pauses += s.pauses;
    }
}

impl Receiver {
    /// What decides how its later packets, CNPs and pauses are taken, at `now_ns`: the runs
    /// still inside the window, its link MACs, whether a period is open and what waits for
    /// it (an open period goes on alike whenever it began).
    fn context(&self, now_ns: i64, window_ns: i64) -> impl PartialEq + '_ {
        let live: Vec<_> = self.recent.iter().filter(|(t, _)| *t > now_ns - window_ns).collect();
        (live, self.open.is_some(), (self.pending.ce_marks, self.pending.cnps, self.pending.pauses))
    }

    /// All it holds but its charts: equal in two receivers that took the same frames.
    fn everything(&self) -> impl PartialEq + '_ {
        let pending = (self.pending.ce_marks, self.pending.cnps, self.pending.pauses);
        (&self.recent, self.macs, &self.open, pending, self.max_fan_in, self.max_fan_in_at)
    }

    /// Do its link MACs and `other`'s take the same pauses from `pausing`, the MACs that sent
    /// pauses later on (they are the first ones seen, so they no longer change once all kept)?
    fn same_links(&self, other: &Receiver, pausing: &rustc_hash::FxHashSet<MacAddr>) -> bool {
        let full = |r: &Receiver| r.macs.iter().all(Option::is_some);
        let takes = |r: &Receiver, mac: &MacAddr| r.macs.contains(&Some(*mac));
        self.macs == other.macs
            || (full(self) && full(other) && pausing.iter().all(|m| takes(self, m) == takes(other, m)))
    }

    fn is_quiet(&self) -> bool {
        self.open.is_none() && self.pending.ce_marks + self.pending.cnps + self.pending.pauses == 0
    }
}

/// Incast spans host pairs: never added (a shard lists the frames it looks at, for the split to
/// merge in frame order). Grafted, it goes on as `end` went on from `start`, both numbered as
/// this one; refused where a receiver's state differs from `start`'s at the seam, or a maximum
/// cannot be told.
impl Combine for Incast {
    fn add(&mut self, _: &Incast) -> Result<(), Refused> {
        Err("incast, which spans host pairs".into())
    }

    fn graft(&mut self, start: &Incast, end: Incast, seam: &Seam) -> Result<(), Refused> {
        let (now_ns, window_ns, pausing) = (seam.at_ns, seam.incast_window_ns, &seam.paused_after);
        if end.untracked_packets > start.untracked_packets || end.periods_not_kept > start.periods_not_kept {
            return Err("the incast bounds".into());
        }
        let touched: rustc_hash::FxHashSet<Endpoint> = end.receivers.iter().map(|r| r.address).collect();
        if self.receivers.iter().any(|r| !touched.contains(&r.address) && !r.is_quiet()) {
            return Err("an incast period open at a receiver".into());
        }
        let start_of = |a: &Endpoint| start.by_address.get(a).and_then(|&i| start.receivers.get(i));
        let mut later_periods: Vec<IncastPeriod> = end.periods.into_iter().skip(start.periods.len()).collect();
        for e in end.receivers {
            let s = start_of(&e.address);
            if s.is_some_and(|s| s.everything() == e.everything()) {
                continue;
            }
            let Some(&i) = self.by_address.get(&e.address) else {
                if s.is_some() || self.receivers.len() >= MAX_RECEIVERS {
                    return Err("the incast receivers".into());
                }
                let charted = self.receivers.len() < FAN_IN_CHARTED;
                self.by_address.insert(e.address, self.receivers.len());
                self.receivers.push(Receiver { over_time: e.over_time.filter(|_| charted), ..e });
                continue;
            };
            let Some(mine) = self.receivers.get_mut(i) else { return Err("the incast receivers".into()) };
            let agree = match s {
                Some(s) => {
                    mine.context(now_ns, window_ns) == s.context(now_ns, window_ns) && mine.same_links(s, pausing)
                }
                None => {
                    mine.is_quiet()
                        && mine.same_links(&e, pausing)
                        && mine.recent.iter().all(|(t, _)| *t <= now_ns - window_ns)
                }
            };
            if !agree {
                return Err("a receiver's fan-in".into());
            }
            let never = (0, FrameNumber::default());
            let (start_max, start_at) = s.map_or((0, never), |s| (s.max_fan_in, s.max_fan_in_at));
            (mine.max_fan_in, mine.max_fan_in_at) = match e.max_fan_in > start_max || start_at == never {
                true if e.max_fan_in > mine.max_fan_in => (e.max_fan_in, e.max_fan_in_at),
                true => (mine.max_fan_in, mine.max_fan_in_at),
                false if mine.max_fan_in >= start_max => (mine.max_fan_in, mine.max_fan_in_at),
                false => return Err("a receiver's greatest fan-in".into()),
            };
            if let (Some(mine), Some(theirs)) = (&mut mine.over_time, &e.over_time) {
                mine.add_after(theirs, now_ns);
            }
            // the period open when the kept frames end began earlier here: it goes on from there
            let mut open = e.open;
            if let (Some(began), Some(s_open)) = (&mine.open, s.and_then(|s| s.open.as_ref())) {
                let went_on = |p: &IncastPeriod| p.receiver == e.address && p.first_frame == s_open.first_frame;
                let closed = later_periods.iter_mut().find(|p| went_on(p));
                match (open.as_mut().filter(|p| went_on(p)), closed) {
                    (Some(p), _) | (None, Some(p)) => *p = began.went_on(s_open, p)?,
                    (None, None) => return Err("an incast period".into()),
                }
            }
            (mine.recent, mine.senders, mine.open, mine.pending) = (e.recent, e.senders, open, e.pending);
        }
        self.periods.extend(later_periods);
        if self.periods.len() > MAX_PERIODS {
            return Err("the incast periods kept".into());
        }
        self.by_mac.clear();
        for (i, r) in self.receivers.iter().enumerate() {
            r.macs.iter().flatten().for_each(|mac| self.by_mac.entry(*mac).or_default().push(i));
        }
        self.last = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> Endpoint {
        Endpoint::Ip(std::net::IpAddr::from([10, 0, 0, n]))
    }

    fn data(frame: FrameNumber, us: i64, source: u8) -> Timed {
        let event =
            IncastEvent::Data { receiver: ip(100), source: ip(source), ce: false, dst_mac: None, src_mac: None };
        Timed { frame, ts_ns: us * 1_000, event }
    }

    #[test]
    fn fan_in_counts_source_addresses_in_the_window_and_periods_are_runs_at_k_or_more() {
        let c = CongestionConfig::default();
        let mut incast = Incast::default();
        // four senders within 100 µs, two packets of sender 1 (from two QPs: one address)
        for (frame, us, source) in [(1, 0, 1), (2, 10, 1), (3, 20, 2), (4, 30, 3), (5, 40, 4), (6, 50, 4)] {
            incast.observe(data(FrameNumber::new(frame), us, source), &c);
        }
        // at 130 µs sender 1's packets (0, 10) are out of (30, 130]
        incast.observe(data(FrameNumber::new(7), 130, 2), &c);
        incast.finish();
        let fan_in = incast.fan_in();
        assert_eq!((fan_in[0].max_fan_in, fan_in[0].max_fan_in_frame.get()), (4, 5));
        assert_eq!(incast.periods.len(), 1);
        let p = &incast.periods[0];
        assert_eq!((p.first_frame.get(), p.start_ns, p.end_ns, p.peak_fan_in), (5, 40_000, 50_000, 4));
        assert_eq!(p.senders.len(), 4);
    }

    #[test]
    fn signs_after_the_last_packet_of_a_period_count_only_if_it_goes_on() {
        let c = CongestionConfig { incast_senders: 2, ..CongestionConfig::default() };
        let mut incast = Incast::default();
        incast.observe(data(FrameNumber::new(1), 0, 1), &c);
        incast.observe(data(FrameNumber::new(2), 10, 2), &c);
        let cnp = |frame, us: i64| Timed { frame, ts_ns: us * 1_000, event: IncastEvent::Cnp { from: ip(100) } };
        incast.observe(cnp(FrameNumber::new(3), 10), &c); // at the period's last packet: counted
        incast.observe(cnp(FrameNumber::new(4), 15), &c); // after it: pending
        incast.observe(data(FrameNumber::new(5), 20, 1), &c); // the period goes on: counted
        incast.observe(cnp(FrameNumber::new(6), 25), &c); // pending, and the period ends at 200 µs
        incast.observe(data(FrameNumber::new(7), 200, 1), &c);
        incast.finish();
        assert_eq!(incast.periods.len(), 1);
        assert_eq!((incast.periods[0].end_ns, incast.periods[0].cnps), (20_000, 2));
    }
}
