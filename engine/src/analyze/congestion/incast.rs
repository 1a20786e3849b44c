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

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::CongestionConfig;
use rocescope_parsers::ethernet::MacAddr;

/// Receivers tracked at most; data packets to further ones are not looked at.
pub const MAX_RECEIVERS: usize = 65_536;
/// Incast periods kept at most; further ones are counted.
pub const MAX_PERIODS: usize = 10_000;
/// Senders listed per period at most.
pub const SENDERS_LISTED: usize = 64;

/// What the incast analysis takes from one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncastEvent {
    /// A data packet from `source` to `receiver`, CE-marked or not, with its Ethernet
    /// addresses: the destination is the receiver's NIC, the source the switch port that
    /// delivers to it (when captured on the receiver's link).
    Data { receiver: IpAddr, source: IpAddr, ce: bool, dst_mac: Option<MacAddr>, src_mac: Option<MacAddr> },
    /// A CNP the host `from` sent.
    Cnp { from: IpAddr },
    /// A PFC frame pausing some priority, or a PAUSE frame, from `from`.
    Pause { from: MacAddr },
}

/// An event with the frame it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    pub frame: u64,
    pub ts_ns: i64,
    pub event: IncastEvent,
}

/// An incast period of one receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IncastPeriod {
    pub receiver: IpAddr,
    pub first_frame: u64,
    pub start_ns: i64,
    pub end_ns: i64,
    pub peak_fan_in: usize,
    /// The senders counted in its fan-in (the first [`SENDERS_LISTED`]).
    pub senders: Vec<IpAddr>,
    /// During the period: the receiver's CE-marked data packets, the CNPs it sent, and the
    /// pausing frames from its link's MACs.
    pub ce_marks: u64,
    pub cnps: u64,
    pub pauses: u64,
}

/// Events counted towards a period: while it lasts, and those since its last packet, which
/// count only if it goes on.
#[derive(Debug, Clone, Copy, Default)]
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

#[derive(Debug, Clone)]
struct Receiver {
    address: IpAddr,
    /// Data packets of the last W_i: (time, sender).
    recent: VecDeque<(i64, IpAddr)>,
    /// Those packets per sender.
    senders: FxHashMap<IpAddr, u32>,
    max_fan_in: usize,
    max_fan_in_at: (i64, u64),
    open: Option<IncastPeriod>,
    pending: Signs,
}

/// A receiver's fan-in, as the report shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReceiverFanIn {
    pub receiver: IpAddr,
    pub max_fan_in: usize,
    /// When and at which frame the maximum was first reached.
    pub max_fan_in_ns: i64,
    pub max_fan_in_frame: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Incast {
    receivers: Vec<Receiver>,
    by_address: FxHashMap<IpAddr, usize>,
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
    fn receiver(&mut self, address: IpAddr, macs: [Option<MacAddr>; 2]) -> Option<usize> {
        let r = match self.by_address.get(&address) {
            Some(&r) => r,
            None if self.receivers.len() >= MAX_RECEIVERS => return None,
            None => {
                self.receivers.push(Receiver::new(address));
                self.by_address.insert(address, self.receivers.len() - 1);
                self.receivers.len() - 1
            }
        };
        for mac in macs.into_iter().flatten() {
            let beside = self.by_mac.entry(mac).or_default();
            if !beside.contains(&r) && beside.len() < SENDERS_LISTED {
                beside.push(r);
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
    fn new(address: IpAddr) -> Self {
        Receiver {
            address,
            recent: VecDeque::new(),
            senders: FxHashMap::default(),
            max_fan_in: 0,
            max_fan_in_at: (0, 0),
            open: None,
            pending: Signs::default(),
        }
    }

    /// A data packet to this receiver; the period it ends, if it ends one.
    fn data(&mut self, e: Timed, source: IpAddr, ce: bool, c: &CongestionConfig) -> Option<IncastPeriod> {
        while let Some(&(t, s)) = self.recent.front().filter(|(t, _)| *t <= e.ts_ns - c.incast_window_ns) {
            debug_assert!(t <= e.ts_ns);
            self.recent.pop_front();
            if let Some(n) = self.senders.get_mut(&s) {
                *n -= 1;
                if *n == 0 {
                    self.senders.remove(&s);
                }
            }
        }
        self.recent.push_back((e.ts_ns, source));
        *self.senders.entry(source).or_default() += 1;
        let fan_in = self.senders.len();
        if fan_in > self.max_fan_in {
            (self.max_fan_in, self.max_fan_in_at) = (fan_in, (e.ts_ns, e.frame));
        }
        if fan_in < c.incast_senders {
            self.pending = Signs::default();
            return self.open.take();
        }
        let address = self.address;
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
        for s in self.senders.keys() {
            if period.senders.len() < SENDERS_LISTED && !period.senders.contains(s) {
                period.senders.push(*s);
            }
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
    fn count(&mut self, s: Signs) {
        self.ce_marks += s.ce_marks;
        self.cnps += s.cnps;
        self.pauses += s.pauses;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, n])
    }

    fn data(frame: u64, us: i64, source: u8) -> Timed {
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
            incast.observe(data(frame, us, source), &c);
        }
        // at 130 µs sender 1's packets (0, 10) are out of (30, 130]
        incast.observe(data(7, 130, 2), &c);
        incast.finish();
        let fan_in = incast.fan_in();
        assert_eq!((fan_in[0].max_fan_in, fan_in[0].max_fan_in_frame), (4, 5));
        assert_eq!(incast.periods.len(), 1);
        let p = &incast.periods[0];
        assert_eq!((p.first_frame, p.start_ns, p.end_ns, p.peak_fan_in), (5, 40_000, 50_000, 4));
        assert_eq!(p.senders.len(), 4);
    }

    #[test]
    fn signs_after_the_last_packet_of_a_period_count_only_if_it_goes_on() {
        let c = CongestionConfig { incast_senders: 2, ..CongestionConfig::default() };
        let mut incast = Incast::default();
        incast.observe(data(1, 0, 1), &c);
        incast.observe(data(2, 10, 2), &c);
        let cnp = |frame, us: i64| Timed { frame, ts_ns: us * 1_000, event: IncastEvent::Cnp { from: ip(100) } };
        incast.observe(cnp(3, 10), &c); // at the period's last packet: counted
        incast.observe(cnp(4, 15), &c); // after it: pending
        incast.observe(data(5, 20, 1), &c); // the period goes on: counted
        incast.observe(cnp(6, 25), &c); // pending, and the period ends at 200 µs
        incast.observe(data(7, 200, 1), &c);
        incast.finish();
        assert_eq!(incast.periods.len(), 1);
        assert_eq!((incast.periods[0].end_ns, incast.periods[0].cnps), (20_000, 2));
    }
}
