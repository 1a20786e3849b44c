//! DCQCN's reaction point as a capture shows it: the CNPs addressed to a data flow, grouped in
//! bursts, and the flow's data rate before and after each burst, then its recovery
//! (docs/analysis.md, "Sender reaction to CNPs").
//!
//! Rates are compared over windows of one width W, so a ratio of rates is a ratio of bytes:
//! a burst reacted when the bytes after it are at most 0.9 of those before, and recovered at
//! the first data packet whose last W holds at least 0.9 of the bytes before.

use crate::analyze::combining::Combine;
use crate::analyze::id::{FlowId, FrameNumber};
use crate::analyze::renumber::Renumber;
use std::collections::VecDeque;

use serde::Serialize;

use super::CongestionConfig;

/// A CNP burst of a data flow: what the stream gave, before the capture's bounds decide
/// whether it was measured ([`CnpBurst::outcome`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Renumber)]
pub struct CnpBurst {
    /// The data flow the CNPs were addressed to (its number in the analysis).
    pub flow: FlowId,
    /// The frame of its first CNP.
    pub first_frame: FrameNumber,
    /// t₀ and t₁: its first and last CNP.
    pub start_ns: i64,
    pub end_ns: i64,
    pub cnps: u32,
    /// The flow's data bytes in [t₀ − W, t₀) and in [t₀ + D, t₀ + D + W).
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// x: when the flow's rate was back at 0.9 of the rate before, if it was before the next
    /// burst (only sought after a reaction).
    pub recovered_ns: Option<i64>,
}

/// What a burst shows, within the capture's first and last frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No data before it, or its windows are not all inside the capture.
    NotMeasured,
    /// r > 0.9: the sender did not slow down.
    NotReacted,
    Recovered,
    NotRecovered,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::NotMeasured => "not_measured",
            Outcome::NotReacted => "not_reacted",
            Outcome::Recovered => "recovered",
            Outcome::NotRecovered => "not_recovered",
        }
    }
}

/// r ≤ 0.9, as bytes (the windows have one width).
fn reacted(bytes_before: u64, bytes_after: u64) -> bool {
    bytes_after * 10 <= bytes_before * 9
}

impl CnpBurst {
    /// Is the burst measured in a capture from `first_ns` to `last_ns`?
    pub fn measured(&self, first_ns: i64, last_ns: i64, c: &CongestionConfig) -> bool {
        self.bytes_before > 0
            && first_ns <= self.start_ns - c.window_ns
            && last_ns >= self.start_ns + c.delay_ns + c.window_ns
    }

    /// r = rate after / rate before, when there was data before.
    pub fn ratio(&self) -> Option<f64> {
        (self.bytes_before > 0).then(|| self.bytes_after as f64 / self.bytes_before as f64)
    }

    pub fn outcome(&self, first_ns: i64, last_ns: i64, c: &CongestionConfig) -> Outcome {
        if !self.measured(first_ns, last_ns, c) {
            Outcome::NotMeasured
        } else if !reacted(self.bytes_before, self.bytes_after) {
            Outcome::NotReacted
        } else if self.recovered_ns.is_some() {
            Outcome::Recovered
        } else {
            Outcome::NotRecovered
        }
    }

    /// x − t₁, once recovered.
    pub fn recovery_ns(&self) -> Option<i64> {
        self.recovered_ns.map(|x| x - self.end_ns)
    }
}

/// A data flow's reaction state: its recent data packets and its last bursts.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize, Renumber, Combine)]
pub struct Reaction {
    /// The flow's data packets of the last W, and those exactly W old: (time, payload bytes).
    #[combine(end)]
    recent: VecDeque<(i64, u32)>,
    #[combine(end)]
    recent_bytes: u64,
    /// The last burst, while it may grow, gather its rate after or recover.
    #[combine(end)]
    open: Option<CnpBurst>,
    /// The burst before it, while its window after is not over (the next burst may start
    /// before it is).
    #[combine(end)]
    closing: Option<CnpBurst>,
    /// Bursts whose windows are over, for the analysis to list ([`Reaction::take_done`]).
    #[combine(end)]
    done: Vec<CnpBurst>,
    /// Bursts seen, kept in the analysis's list or not.
    #[combine(sum)]
    pub bursts: u64,
}

impl Reaction {
    /// A data packet of the flow at `ts_ns` carrying `bytes` of payload.
    pub fn data(&mut self, ts_ns: i64, bytes: u32, c: &CongestionConfig) {
        let bytes64 = u64::from(bytes);
        self.recent.push_back((ts_ns, bytes));
        self.recent_bytes += bytes64;
        while let Some(&(_, b)) = self.recent.front().filter(|(t, _)| *t < ts_ns - c.window_ns) {
            self.recent.pop_front();
            self.recent_bytes -= u64::from(b);
        }
        for burst in self.closing.iter_mut().chain(self.open.iter_mut()) {
            let after = burst.start_ns + c.delay_ns;
            if (after..after + c.window_ns).contains(&ts_ns) {
                burst.bytes_after += bytes64;
            }
        }
        if let Some(closing) = self.closing.take_if(|b| ts_ns >= b.start_ns + c.delay_ns + c.window_ns) {
            self.done.push(closing);
        }
        let Some(burst) = &mut self.open else { return };
        let searching = burst.recovered_ns.is_none()
            && burst.bytes_before > 0
            && ts_ns >= burst.end_ns + c.delay_ns + c.window_ns
            && reacted(burst.bytes_before, burst.bytes_after);
        if searching {
            // the bytes in (x − W, x]: leave out those exactly W old
            let edge: u64 =
                self.recent.iter().take_while(|(t, _)| *t == ts_ns - c.window_ns).map(|(_, b)| u64::from(*b)).sum();
            if (self.recent_bytes - edge) * 10 >= burst.bytes_before * 9 {
                burst.recovered_ns = Some(ts_ns);
            }
        }
    }

    /// A CNP addressed to the flow: it grows the open burst or starts the next (which ends
    /// the open one's search for a recovery).
    pub fn cnp(&mut self, frame: FrameNumber, ts_ns: i64, flow: FlowId, c: &CongestionConfig) {
        if let Some(burst) = self.open.as_mut().filter(|b| ts_ns - b.end_ns < c.window_ns) {
            burst.end_ns = ts_ns;
            burst.cnps += 1;
            return;
        }
        let before = ts_ns - c.window_ns..ts_ns;
        let bytes_before = self.recent.iter().filter(|(t, _)| before.contains(t)).map(|(_, b)| u64::from(*b)).sum();
        self.bursts += 1;
        let burst = CnpBurst {
            flow,
            first_frame: frame,
            start_ns: ts_ns,
            end_ns: ts_ns,
            cnps: 1,
            bytes_before,
            bytes_after: 0,
            recovered_ns: None,
        };
        if let Some(previous) = self.open.replace(burst) {
            self.done.extend(self.closing.replace(previous));
        }
    }

    /// The bursts whose windows are over since the last call.
    pub fn take_done(&mut self) -> Vec<CnpBurst> {
        std::mem::take(&mut self.done)
    }

    /// Ends the flow's bursts.
    pub fn finish(&mut self) {
        self.done.extend(self.closing.take());
        self.done.extend(self.open.take());
    }
}

impl Reaction {
    /// What decides how its later packets and CNPs are taken.
    pub fn context(&self) -> impl PartialEq + '_ {
        (&self.recent, self.recent_bytes, &self.open, &self.closing, &self.done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: i64 = 1_000;

    /// A flow sending `bytes` every `every` µs from `from` to `to` µs.
    fn send(r: &mut Reaction, from: i64, to: i64, every: i64, bytes: u32) {
        let c = CongestionConfig::default();
        let mut t = from;
        while t < to {
            r.data(t * US, bytes, &c);
            t += every;
        }
    }

    #[test]
    fn a_sender_that_halves_its_rate_reacted_and_recovers_when_it_is_back() {
        let c = CongestionConfig::default();
        let mut r = Reaction::default();
        send(&mut r, 0, 1_000, 1, 1_000);
        r.cnp(FrameNumber::new(7), 1_000 * US, FlowId::new(3), &c);
        r.cnp(FrameNumber::new(8), 1_050 * US, FlowId::new(3), &c); // 50 µs later: the same burst
        send(&mut r, 1_000, 1_400, 2, 1_000);
        send(&mut r, 1_400, 2_000, 1, 1_000);
        assert!(r.take_done().is_empty());
        r.finish();
        let [burst] = r.take_done()[..] else { panic!("one burst") };
        assert_eq!((burst.flow.get(), burst.first_frame.get(), burst.cnps, burst.end_ns), (3, 7, 2, 1_050 * US));
        // [900, 1000) µs: 100 packets; [1010, 1110): 50
        assert_eq!((burst.bytes_before, burst.bytes_after), (100_000, 50_000));
        assert_eq!(burst.outcome(0, 2_000 * US, &c), Outcome::Recovered);
        // back at 1 packet/µs from 1400: (x − 100, x] first holds 90 packets at x = 1479 µs,
        // 80 from 1400 on and 10 of every 2 µs in (1379, 1400)
        assert_eq!(burst.recovered_ns, Some(1_479 * US));
        assert_eq!(burst.recovery_ns(), Some(429 * US));
    }

    #[test]
    fn cnps_exactly_w_apart_are_two_bursts_and_the_next_cuts_the_recovery_short() {
        let c = CongestionConfig::default();
        let mut r = Reaction::default();
        send(&mut r, 0, 1_000, 1, 1_000);
        r.cnp(FrameNumber::new(1), 1_000 * US, FlowId::new(0), &c);
        send(&mut r, 1_000, 1_100, 4, 1_000);
        r.cnp(FrameNumber::new(2), 1_100 * US, FlowId::new(0), &c);
        // the first burst's window after, [1010, 1110), goes on past the second's start
        send(&mut r, 1_100, 1_200, 4, 1_000);
        let [first] = r.take_done()[..] else { panic!("the first burst, done") };
        assert_eq!(first.bytes_after, 25_000);
        assert_eq!(first.recovered_ns, None);
        assert_eq!(first.outcome(0, 2_000 * US, &c), Outcome::NotRecovered);
        assert_eq!(r.bursts, 2);
    }

    #[test]
    fn a_burst_at_the_start_of_the_capture_is_not_measured() {
        let c = CongestionConfig::default();
        let mut r = Reaction::default();
        send(&mut r, 0, 50, 1, 1_000);
        r.cnp(FrameNumber::new(1), 50 * US, FlowId::new(0), &c);
        send(&mut r, 50, 500, 1, 1_000);
        r.finish();
        let [burst] = r.take_done()[..] else { panic!("one burst") };
        assert!(burst.bytes_before > 0);
        assert_eq!(burst.outcome(0, 500 * US, &c), Outcome::NotMeasured);
        // nor one whose window after runs past the capture's end
        assert_eq!(burst.outcome(-1_000 * US, 150 * US, &c), Outcome::NotMeasured);
        assert_eq!(burst.outcome(-1_000 * US, 160 * US, &c), Outcome::NotReacted);
    }
}
