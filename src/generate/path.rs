//! One path captured at several taps (`analyze --tap`): host A writes to host B on two
//! connections (priorities 3 and 5), B acknowledges every fourth packet; every copy of every
//! packet is followed through the hops between the taps, each hop with its delay, and the
//! plan's faults: one hop drops some packets (which A sends again 150 µs later, or with
//! go-back-N from the hole on, B discarding the packets behind the hole), one marks CE, one
//! rewrites DSCP on priority 5, one tap misses some copies, each tap has its own clock.
//! The truth of what happened on each hop is kept beside the captures, for the tests.

use rocescope_parsers::ext::ExtHeaders;

use super::encode::{self, L2};
use super::scenarios::{Conn, Container, Rng, Scenario, T0, US, endpoint};
use crate::output::packet::capture_file::Interface;

/// What the path does.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The taps' names, from A's side to B's; the third, when there are four, is a switch's
    /// ERSPAN mirror.
    pub taps: Vec<&'static str>,
    /// Per tap: its clock minus A's host's (the first tap's), and how fast it runs (ppm).
    pub offsets_ns: Vec<i64>,
    pub drift_ppm: Vec<f64>,
    /// Per hop: its smallest delay; each copy waits up to `jitter_ns` more.
    pub delays_ns: Vec<i64>,
    pub jitter_ns: u64,
    /// Data packets A sends, one every `interval_ns`.
    pub packets: u32,
    pub interval_ns: i64,
    /// The hop that drops one data packet in `drop_one_in`, the hop that marks every fourth
    /// data packet CE, the hop that rewrites DSCP 26 to 0 on priority 5.
    pub drop_hop: usize,
    pub drop_one_in: u64,
    pub mark_hop: usize,
    pub rewrite_hop: usize,
    /// The tap that misses one copy in `miss_one_in` (never the first or last).
    pub missing_tap: usize,
    pub miss_one_in: u64,
    /// One data packet in this many reaches the last tap and is lost after it (in B's NIC):
    /// A sends it again.
    pub lost_after_one_in: u64,
    /// Go-back-N (IBA §9.7.5.1.3) when above 0: after a hole in a connection's packets (one
    /// dropped on the drop hop, or lost after the last tap) B discards the connection's next
    /// `go_back_n` packets, NAKing the first that reaches it, and A then resends the hole and
    /// every packet after it, one after the other. At 0, A resends each lost packet alone,
    /// 150 µs later, and B takes every packet that reaches it.
    pub go_back_n: u32,
}

impl Plan {
    /// Four taps over two seconds: A's host, the leaf (+50 ms), the spine (−50 ms, 20 ppm fast,
    /// an ERSPAN mirror), B's host (+20 ms); the spine-side hop drops 1 %, the last hop marks a
    /// quarter, the first rewrites DSCP on priority 5, the leaf misses 0.5 % of copies.
    pub fn four_taps() -> Plan {
        Plan {
            taps: vec!["host_a", "leaf", "spine", "host_b"],
            offsets_ns: vec![0, 50_000_000, -50_000_000, 20_000_000],
            drift_ppm: vec![0.0, 0.0, 20.0, 0.0],
            delays_ns: vec![2_000, 5_000, 3_000],
            jitter_ns: 400,
            packets: 20_000,
            interval_ns: 100 * US,
            drop_hop: 1,
            drop_one_in: 100,
            mark_hop: 2,
            rewrite_hop: 0,
            missing_tap: 1,
            miss_one_in: 200,
            lost_after_one_in: 400,
            go_back_n: 0,
        }
    }

    /// Three taps: A's host, the switch (−50 ms), B's host (+50 ms, 20 ppm fast); the first hop
    /// drops and rewrites, the second marks, the switch misses.
    pub fn three_taps() -> Plan {
        Plan {
            taps: vec!["host_a", "switch", "host_b"],
            offsets_ns: vec![0, -50_000_000, 50_000_000],
            drift_ppm: vec![0.0, 0.0, 20.0],
            delays_ns: vec![4_000, 6_000],
            drop_hop: 0,
            mark_hop: 1,
            rewrite_hop: 0,
            missing_tap: 1,
            ..Plan::four_taps()
        }
    }

    /// Four taps as [`Plan::four_taps`] over 0.8 s, with go-back-N recovery: B discards the four
    /// packets of the connection after each hole, and A resends from the hole; the leaf misses
    /// one copy in twenty (resends among them).
    pub fn go_back_n() -> Plan {
        Plan { packets: 8_000, go_back_n: 4, miss_one_in: 20, ..Plan::four_taps() }
    }

    /// The sample of `samples/path/`: four taps over 0.2 s, offsets without drift.
    pub fn sample() -> Plan {
        Plan {
            drift_ppm: vec![0.0; 4],
            packets: 1_000,
            interval_ns: 200 * US,
            drop_one_in: 50,
            miss_one_in: 100,
            lost_after_one_in: 100,
            ..Plan::four_taps()
        }
    }
}

/// The files of `samples/path/`, one per tap of [`Plan::sample`].
pub const PATH_SAMPLE_FILES: [&str; 4] =
    ["path/host_a.pcapng", "path/leaf.pcapng", "path/spine.pcapng", "path/host_b.pcapng"];

/// What happened on each hop and at each tap, as the tests expect the report to say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Truth {
    /// Per hop, forward then reverse (as the report lists them): copies seen at both ends,
    /// dropped, marked CE, re-marked.
    pub hops: Vec<HopTruth>,
    /// Per tap: copies it missed.
    pub missed: Vec<u64>,
    /// Packets sent, resends included: what the union of the taps holds once each.
    pub sent: u64,
    /// Data packets that reached the last tap, were lost after it and were sent again.
    pub lost_after: u64,
    /// Data packets that reached the last tap and that B discarded behind a hole (go-back-N):
    /// sent again, but not lost.
    pub discarded: u64,
    /// The data packets dropped on a hop and those lost after the last tap: (destination QP,
    /// PSN) of each, in the order sent.
    pub dropped_packets: Vec<(u32, u32)>,
    pub lost_after_packets: Vec<(u32, u32)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HopTruth {
    pub from: &'static str,
    pub to: &'static str,
    pub matched: u64,
    pub lost: u64,
    pub ce_added: u64,
    pub dscp_rewritten: u64,
}

/// The captures, one per tap, and the truth.
pub struct PathSet {
    pub captures: Vec<Scenario>,
    pub truth: Truth,
}

/// How long after a dropped packet A sends it again: between two of its connection's packets
/// (200 µs apart), so that no hop's jitter reorders the two.
const RESEND_AFTER_NS: i64 = 150 * US;

/// Go-back-N: how long after the last packet B discards A resends from the hole (the NAK's
/// round trip), and how far apart the resends are (more than a hop's jitter, so that none
/// overtakes another).
const GO_BACK_AFTER_NS: i64 = 20 * US;
const GO_BACK_SPACING_NS: i64 = 2 * US;

/// The AETH syndrome of a NAK for a PSN sequence error.
const NAK_PSN_SEQUENCE_ERROR: u8 = 0x60;

/// A packet sent: its frame as it leaves its host, its way, and which data packet it is.
struct Copy {
    frame: encode::RoceFrame,
    /// From A to B.
    forward: bool,
    data_index: Option<u32>,
    /// Go-back-N: did it reach B (its last tap)?
    reached: bool,
}

pub fn path_set(plan: &Plan, files: &[&'static str]) -> PathSet {
    let taps = plan.taps.len();
    let hops = taps - 1;
    let mut captures: Vec<Scenario> =
        files.iter().zip(&plan.taps).map(|(&file, &tap)| nanosecond_capture(file, tap)).collect();
    let mut truth = Truth {
        hops: (0..2 * hops)
            .map(|h| {
                let (from, to) = if h < hops { (h, h + 1) } else { (2 * hops - h, 2 * hops - h - 1) };
                HopTruth { from: plan.taps[from], to: plan.taps[to], ..HopTruth::default() }
            })
            .collect(),
        missed: vec![0; taps],
        sent: 0,
        lost_after: 0,
        discarded: 0,
        dropped_packets: Vec::new(),
        lost_after_packets: Vec::new(),
    };
    let conns = [
        Conn { a: endpoint(1, 0x000101), b: endpoint(2, 0x000201), vlan: Some((3, 100)) },
        Conn { a: endpoint(1, 0x000102), b: endpoint(2, 0x000202), vlan: Some((5, 100)) },
    ];
    let mut rng = Rng::new(0x7A95);
    let mut psn = [0u32; 2];
    let mut sent = [0u32; 2];
    // go-back-N: per connection, the hole and the packets sent after it, to send again
    let mut behind: [Vec<Copy>; 2] = [Vec::new(), Vec::new()];
    // nothing is lost within the last 50 packets, nor within the path window of the end: a
    // copy lost so late may still have been on its way when the next tap stopped capturing, and
    // the report does not count it
    let window_ns = i64::try_from(crate::analyze::path::DEFAULT_WINDOW_US * 1_000).unwrap_or(i64::MAX);
    let last_drop = T0 + i64::from(plan.packets) * plan.interval_ns - (50 * plan.interval_ns).max(window_ns);
    for i in 0..plan.packets {
        let c = (i % 2) as usize;
        let t = T0 + i64::from(i) * plan.interval_ns;
        let frame = conns[c].frame(true, 0x0A, psn[c], ExtHeaders::default(), 64);
        let frame = encode::RoceFrame { ext: write_ext(), ..frame };
        psn[c] += 1;
        sent[c] += 1;
        let behind_hole = !behind[c].is_empty();
        let dropped = t < last_drop && rng.next_u64().is_multiple_of(plan.drop_one_in);
        let lost_after =
            !dropped && !behind_hole && t < last_drop && rng.next_u64().is_multiple_of(plan.lost_after_one_in);
        let copy = Copy { frame, forward: true, data_index: Some(i), reached: false };
        let arrival = travel(plan, &mut captures, &mut truth, &mut rng, &copy, t, dropped);
        truth.lost_after += u64::from(lost_after);
        let packet = (copy.frame.bth.dest_qp, copy.frame.bth.psn);
        if dropped {
            truth.dropped_packets.push(packet);
        }
        if lost_after {
            truth.lost_after_packets.push(packet);
        }
        if plan.go_back_n == 0 {
            if dropped || lost_after {
                let resend = Copy { frame: copy.frame.clone(), ..copy };
                travel(plan, &mut captures, &mut truth, &mut rng, &resend, t + RESEND_AFTER_NS, false);
            }
        } else if behind_hole || dropped || lost_after {
            let hole = behind[c].first().map(|h| h.frame.bth.psn);
            if let (Some(hole), Some(at_b)) = (hole, arrival) {
                truth.discarded += 1;
                if !behind[c].iter().skip(1).any(|b| b.reached) {
                    // the first packet past the hole that B sees: a PSN sequence error NAK
                    let nak = conns[c].ack(false, hole, hole, NAK_PSN_SEQUENCE_ERROR);
                    let nak = Copy { frame: nak, forward: false, data_index: None, reached: false };
                    travel(plan, &mut captures, &mut truth, &mut rng, &nak, at_b + US, false);
                }
            }
            behind[c].push(Copy { reached: arrival.is_some(), ..copy });
            if behind[c].len() > plan.go_back_n as usize {
                for (j, resend) in behind[c].drain(..).enumerate() {
                    let at = t + GO_BACK_AFTER_NS + j as i64 * GO_BACK_SPACING_NS;
                    travel(plan, &mut captures, &mut truth, &mut rng, &resend, at, false);
                }
            }
            continue;
        }
        if let Some(at_b) = arrival.filter(|_| sent[c] % 4 == 0) {
            let ack = conns[c].ack(false, psn[c] - 1, sent[c], 0x1F);
            travel(
                plan,
                &mut captures,
                &mut truth,
                &mut rng,
                &Copy { frame: ack, forward: false, data_index: None, reached: false },
                at_b + US,
                false,
            );
        }
    }
    PathSet { captures: captures.into_iter().map(Scenario::sorted).collect(), truth }
}

/// A pcapng file of one Ethernet interface named after its tap, with times in nanoseconds (a
/// tap's clock is only as fine as its file: microseconds would round each time down by up to
/// a microsecond, more than the delays' jitter).
fn nanosecond_capture(file: &'static str, tap: &str) -> Scenario {
    let interface = Interface { link_type: 1, snaplen: 65535, tsresol: 9, name: Some(tap.to_string()) };
    Scenario { container: Container::Pcapng { interfaces: vec![interface] }, ..Scenario::pcap(file) }
}

/// The RETH of an RDMA WRITE Only.
fn write_ext() -> ExtHeaders {
    ExtHeaders {
        reth: Some(rocescope_parsers::ext::Reth { va: 0x1000, rkey: 0x42, dma_len: 64 }),
        ..ExtHeaders::default()
    }
}

/// Sends `copy` at true time `t` from its first tap; `drop` makes the plan's drop hop drop it.
/// Returns the true time it reached its last tap.
fn travel(
    plan: &Plan,
    captures: &mut [Scenario],
    truth: &mut Truth,
    rng: &mut Rng,
    copy: &Copy,
    t: i64,
    drop: bool,
) -> Option<i64> {
    let taps = plan.taps.len();
    let hops = taps - 1;
    let order: Vec<usize> = if copy.forward { (0..taps).collect() } else { (0..taps).rev().collect() };
    truth.sent += 1;
    let mut frame = copy.frame.clone();
    let mut at = t;
    // never a dropped packet's copy: the tap before the drop must see what it loses
    let missed_here = !drop && rng.next_u64().is_multiple_of(plan.miss_one_in);
    for (k, &tap) in order.iter().enumerate() {
        let missed = missed_here && tap == plan.missing_tap;
        if missed {
            truth.missed[tap] += 1;
        } else {
            record(plan, &mut captures[tap], tap, at, &frame);
        }
        let Some(&next) = order.get(k + 1) else { return Some(at) };
        let hop = tap.min(next);
        let hop_index = if copy.forward { hop } else { 2 * hops - 1 - hop };
        if copy.forward && drop && hop == plan.drop_hop {
            truth.hops[hop_index].lost += 1;
            return None;
        }
        let before = frame.clone();
        change(plan, copy, hop, &mut frame);
        at += plan.delays_ns[hop] + (rng.next_u64() % (plan.jitter_ns + 1)) as i64;
        let next_missed = missed_here && next == plan.missing_tap;
        if !missed && !next_missed {
            let h = &mut truth.hops[hop_index];
            h.matched += 1;
            h.ce_added += u64::from(before.l3.ecn != 3 && frame.l3.ecn == 3);
            h.dscp_rewritten += u64::from(before.l3.dscp != frame.l3.dscp);
        }
    }
    Some(at)
}

/// What hop `hop` changes in a copy crossing it: a router's TTL, and the plan's marks.
fn change(plan: &Plan, copy: &Copy, hop: usize, frame: &mut encode::RoceFrame) {
    frame.l3.ttl -= 1;
    if !copy.forward {
        return;
    }
    if hop == plan.mark_hop && copy.data_index.is_some_and(|i| i % 4 == 0) {
        frame.l3.ecn = 3;
    }
    let priority = frame.l2.vlans.first().map(|v| v.1);
    if hop == plan.rewrite_hop && priority == Some(5) && frame.l3.dscp == 26 {
        frame.l3.dscp = 0;
    }
}

/// Writes the copy as tap `tap` captures it, on its clock: the third of four taps is a switch's
/// ERSPAN II mirror.
fn record(plan: &Plan, capture: &mut Scenario, tap: usize, true_ns: i64, frame: &encode::RoceFrame) {
    let drift = plan.drift_ppm[tap] * 1e-6 * (true_ns - T0) as f64;
    let ts = true_ns + plan.offsets_ns[tap] + drift.round() as i64;
    let bytes = frame.encode();
    let bytes = if plan.taps.len() == 4 && tap == 2 {
        let outer = L2::new([0x02, 0, 0, 0, 0xEE, 2], [0x02, 0, 0, 0, 0xEE, 9]);
        encode::erspan2(&outer, [192, 0, 2, 2], [192, 0, 2, 9], 7, None, &bytes)
    } else {
        bytes
    };
    capture.push(ts, bytes);
}
