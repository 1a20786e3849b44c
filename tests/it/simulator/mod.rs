//! A small packet-level fabric simulator whose ground truth is the oracle of the property tests
//! in `simulator_properties.rs`: the project's executable definition of what the analysis must
//! say (docs/analysis.md).
//!
//! The path of every RC QP is `sender → switch → tap → receiver`, and back the same way:
//!
//! - the **switch** (before the tap) drops packets (the tap never sees them), CE-marks ECT
//!   packets (DCQCN's congestion point) and reorders: a packet overtaken by those after it,
//!   delivered at most [`Fabric::reorder_max_ns`] late, so that at the tap it appears late;
//! - the **tap** records a copy of what passes, and may miss a data frame (a mirror that drops
//!   copies: the packet still reaches the receiver);
//! - the **link after the tap** drops packets the tap did see (the receiver never gets them);
//! - responses (ACKs, NAKs, CNPs) are dropped before or after the tap alike;
//! - the switch may pause a sending host with PFC on the data's priority (802.1Qbb): the tap
//!   records the XOFF and the XON (or the quanta expire), and the host sends no data between.
//!
//! A receiver may not be ready for a SEND: it answers with an RNR NAK, and its sender waits the
//! NAK's RNR timer before it sends again from that PSN (IBA §9.7.5.2.8).
//!
//! A QP writes 64-byte WRITE ONLY packets or, at its own PMTU, messages of several packets
//! (WRITEs or SENDs); or it READs, one READ outstanding, its responses lost like data and read
//! again from the first missing one (IBA §9.7.5.1.5); or it is UD, sending datagrams nothing
//! acknowledges.
//!
//! The mirror may also see every packet twice (a SPAN of the switch's ingress and egress), sit
//! on one spine of two ECMP paths (seeing some QPs' data, some QPs' responses), or cut every
//! frame to a snap length (the capture's, applied when it is written).
//!
//! Every hop takes [`HOP_NS`], so the receiver sees the packets in the order the tap does.
//! Senders and receivers follow IBA chapter 9 ([`Sender`], [`Receiver`]). The simulator
//! returns the tap's frames in time order, each with what really happened to it ([`What`]),
//! and [`truth`] derives from them, by docs/analysis.md's definitions, what the report must
//! say of each QP ([`QpTruth`]). Where the analysis must infer what happened (was a copy the
//! late original or a resend?), the truth takes what happened; where docs/analysis.md's rules
//! infer it from what follows and may conclude otherwise, [`truth`] says so ([`Doubt`]): those
//! are the known disagreements, which the properties set apart.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};

use crate::common::capture::{Side, T0, US, ack, frame, nak, read_request, read_responses, rnr_nak, write_only};
use rocescope::generate::encode::{self, RoceFrame};
use rocescope_parsers::ext::{Deth, ExtHeaders, Reth};

/// One hop's latency: sender → tap, tap → receiver, and back.
pub const HOP_NS: i64 = US;
/// How long a receiver takes to answer a packet with a NAK, a duplicate's ACK or a CNP.
const ANSWER_NS: i64 = 500;
/// NICs coalesce CNPs: at most one per QP in this window (DCQCN's notification point).
pub const CNP_WINDOW_NS: i64 = 50 * US;
/// The analysis's default reorder window (`--reorder-window-us 20`).
pub const REORDER_WINDOW_NS: i64 = 20 * US;
/// The simulation gives up this long after it began (a fabric that never recovers).
const HORIZON_NS: i64 = 50_000 * US;

/// How a QP recovers from loss: IBA's go-back-N (the receiver discards what follows a gap,
/// NAKs the PSN it expects once, the sender resends from it), or selective repeat (the
/// receiver keeps what follows a gap and NAKs each missing PSN in turn, the sender resends the
/// NAKed PSN alone), as NICs with adaptive routing do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    GoBackN,
    Selective,
}

/// One QP from host `from` to host `to`: RC WRITEs, SENDs or READs, or UD SENDs.
#[derive(Debug, Clone)]
pub struct Qp {
    pub from: u8,
    pub to: u8,
    /// The first PSN (0 for every QP of an NCCL-style fabric).
    pub first_psn: u32,
    pub packets: u32,
    /// Every `ack_every`-th packet (and the last) asks for an ACK (AckReq).
    pub ack_every: u32,
    /// How long the responder waits before sending a coalesced ACK.
    pub ack_delay_ns: i64,
    /// Its path MTU in bytes (0: every packet a 64-byte WRITE ONLY).
    pub pmtu: u32,
    /// Packets per message: a FIRST, MIDDLEs and a LAST of `pmtu` bytes each (the LAST half
    /// that), or an ONLY; the last message ends with the QP's last packet.
    pub message: u32,
    /// Its messages are SENDs, not WRITEs.
    pub sends: bool,
    /// Its messages are RDMA READs, one outstanding at a time: a READ request of `message`
    /// PSNs, answered by as many READ responses on the responder's flow.
    pub reads: bool,
    /// A UD QP: SEND ONLY datagrams whose DETH names the sending QP, neither acknowledged nor
    /// resent (IBA chapter 9), a CE mark answered by a CNP to that QP.
    pub ud: bool,
}

/// A random fabric: what the simulator is asked to model. Probabilities are in per mille, per
/// packet.
#[derive(Debug, Clone)]
pub struct Fabric {
    /// Drives every random decision per packet.
    pub seed: u64,
    pub qps: Vec<Qp>,
    pub recovery: Recovery,
    /// Data packets the switch drops (the tap never sees them).
    pub drop_before_tap: u16,
    /// Data packets lost after the tap (the tap sees them, the receiver does not).
    pub drop_after_tap: u16,
    /// ACKs, NAKs and CNPs lost, half before and half after the tap.
    pub drop_responses: u16,
    /// First transmissions the switch holds back, to be overtaken.
    pub reorder: u16,
    pub reorder_max_ns: i64,
    /// CE marks the switch sets on ECT packets.
    pub ce_mark: u16,
    /// Data frames the mirror misses (the receiver still gets them).
    pub mirror_miss: u16,
    /// From a NAK at the tap to the resend at the tap, when the sender gets the NAK.
    pub nak_reaction_ns: i64,
    /// The sender's retransmission timeout: nothing acknowledged for this long since its last
    /// progress or resend.
    pub rto_ns: i64,
    /// A SPAN that sees each packet twice, at the switch's ingress and egress: every frame the
    /// tap records has a second copy this long after it (0: none), with a TTL one less or,
    /// where `double_mac`, a routing switch's source MAC.
    pub double_ns: i64,
    pub double_mac: bool,
    /// A mirror on one spine of two ECMP paths: each QP's data, and apart its responses, take
    /// the tap's spine or the other at random.
    pub one_spine: bool,
    /// The capture keeps this many bytes of each frame (0: all of it).
    pub snaplen: u32,
    /// Each QP's first READ, and its responses, pass cleanly: the PMTU its responses show
    /// tells how many PSNs it took before its requester sends again.
    pub first_read_clean: bool,
    /// SEND messages (their FIRST or ONLY packet, arriving in sequence) the receiver is not
    /// ready for: it answers with an RNR NAK (IBA §9.7.5.2.8).
    pub rnr: u16,
    /// Send slots at which the switch pauses the sending host's data priority with a PFC
    /// XOFF (802.1Qbb), for [`PAUSE_MIN_NS`]–[`PAUSE_MAX_NS`].
    pub pause: u16,
}

/// The PFC priority of the data: untagged DSCP 26, the QoS plan's data DSCP, is priority 3
/// (docs/analysis.md's `--data-dscp`, `--data-pcp`).
pub const DATA_PRIORITY: u8 = 3;
/// How long a pause lasts: shorter than the analysis's `--min-ack-timeout-us`, so that the
/// silence it makes alone is no timeout.
pub const PAUSE_MIN_NS: i64 = 20 * US;
pub const PAUSE_MAX_NS: i64 = 150 * US;
/// 802.1Qbb: a quantum is 512 bit times, 5.12 ns at the analysis's default 100 Gb/s.
pub fn quanta_ns(quanta: u16) -> i64 {
    i64::from(quanta) * 512 / 100
}

/// The RNR timer codes the receivers send, and their delays (IBA §9.7.5.2.8; the code table
/// is in ../shared/protocol-facts.md §4.1).
const RNR_TIMERS: [(u8, i64); 3] = [(0x09, 240 * US), (0x0A, 320 * US), (0x0B, 480 * US)];

/// A frame the tap recorded: a RoCE packet, or a MAC control frame.
#[derive(Debug, Clone)]
pub enum Frame {
    Roce(Box<RoceFrame>),
    Control(Vec<u8>),
}

impl Frame {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Frame::Roce(f) => f.encode(),
            Frame::Control(bytes) => bytes.clone(),
        }
    }

    /// The RoCE payload's length (0 for a MAC control frame).
    pub fn payload_len(&self) -> usize {
        match self {
            Frame::Roce(f) => f.payload.len(),
            Frame::Control(_) => 0,
        }
    }
}

/// What really happened to a frame the tap recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// A WRITE of QP `qp`, PSN offset `off` from its first PSN: a resend or the first
    /// transmission, held back `held_ns` by the switch, CE-marked, reaching the receiver.
    Data {
        qp: usize,
        off: u32,
        /// The PSNs it consumes: 1, or a READ's responses.
        span: u32,
        resend: bool,
        held_ns: i64,
        ce: bool,
        delivered: bool,
    },
    /// A READ response at offset `off`: sent again (a re-read), reaching the requester.
    Response {
        qp: usize,
        off: u32,
        resend: bool,
        delivered: bool,
    },
    /// An ACK naming offset `off` (every offset up to it acknowledged).
    Ack {
        qp: usize,
        off: u32,
    },
    /// A PSN-sequence NAK naming offset `off`; `heard`: the sender got it.
    Nak {
        qp: usize,
        off: u32,
        heard: bool,
    },
    /// An RNR NAK naming offset `off`, the packet the receiver was not ready for.
    RnrNak {
        qp: usize,
        off: u32,
        heard: bool,
    },
    /// A PFC frame from the switch to `host` for [`DATA_PRIORITY`]: an XOFF of `quanta`, or
    /// (0) the XON that ends its pause.
    Pfc {
        host: u8,
        quanta: u16,
    },
    Cnp {
        qp: usize,
    },
    /// The second copy of a doubled mirror (a frame of QP `qp`).
    Copy {
        qp: usize,
    },
    /// The datagram that keeps the capture going after the traffic.
    Tail,
}

impl What {
    /// The QP whose frame it is.
    pub fn qp(&self) -> Option<usize> {
        match *self {
            What::Data { qp, .. } | What::Ack { qp, .. } | What::Nak { qp, .. } | What::Cnp { qp } => Some(qp),
            What::Response { qp, .. } | What::RnrNak { qp, .. } => Some(qp),
            What::Copy { qp } => Some(qp),
            What::Tail | What::Pfc { .. } => None,
        }
    }
}

/// The tap's recording, in time order, and what the senders did.
pub struct Run {
    pub frames: Vec<(i64, Frame, What)>,
    /// Per QP: it is UD, its packets not sequenced.
    pub datagrams: Vec<bool>,
    /// Per QP: retransmission timeouts that fired.
    pub timeouts: Vec<u32>,
    /// Per QP: every PSN acknowledged in the end.
    pub completed: Vec<bool>,
    /// Per QP: go-back-N resends the switch dropped (offset, time sent), and those the
    /// mirror missed.
    pub lost_resends: Vec<Vec<(u32, i64)>>,
    pub missed_resends: Vec<Vec<(u32, i64)>>,
    /// Per QP: go-back-N resends a NAK naming a later PSN called off (the receiver had them).
    pub skipped_forward: Vec<Vec<u32>>,
    /// Per QP: whether its data, and its responses, take the tap's spine ([`Fabric::one_spine`]).
    pub tapped: Vec<(bool, bool)>,
}

/// The requester's side of QP `i` (the QPN its responder sends ACKs to).
pub fn requester(q: &Qp, i: usize) -> Side {
    Side { n: q.from, qpn: 0x1000 + i as u32 }
}

/// The responder's side of QP `i` (the QPN its WRITEs go to).
pub fn responder(q: &Qp, i: usize) -> Side {
    Side { n: q.to, qpn: 0x2000 + i as u32 }
}

pub fn psn(q: &Qp, off: u32) -> u32 {
    q.first_psn.wrapping_add(off) & 0xFF_FFFF
}

/// splitmix64: small, and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn per_mille(&mut self, p: u16) -> bool {
        self.next() % 1000 < u64::from(p)
    }

    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// The requester of one QP (IBA §9.7.4, §9.7.7).
#[derive(Default)]
struct Sender {
    /// New packets sent so far (the next new offset).
    sent: u32,
    /// The lowest offset not acknowledged.
    una: u32,
    /// Offsets to resend, in order. A resend is committed when the sender acts on its NAK or
    /// timeout: an ACK that comes while it is under way does not call it back (NICs queue
    /// resends in hardware).
    resend: VecDeque<u32>,
    /// A send slot is scheduled.
    busy: bool,
    /// The retransmission timer counts from here (last progress, resend, or first send).
    timer_from: i64,
    timer_gen: u64,
    /// A READ is re-issued for a gap in its responses, once until they progress.
    reread: bool,
    /// It waits out an RNR NAK's timer until then, its transport timer stopped (IBA
    /// §9.7.5.2.8).
    rnr_until: i64,
    /// The end of the go-back-N pass the last RNR NAK began, until it is resent.
    rnr_pass: Option<u32>,
}

/// The responder of one QP (IBA §9.7.5): the PSN it expects and what it has NAKed.
#[derive(Default)]
struct Receiver {
    expected: u32,
    /// A NAK names `expected` and is not answered yet (IBA: one NAK per sequence error).
    naked: bool,
    /// Selective repeat: packets kept beyond a gap.
    kept: BTreeSet<u32>,
    ack_pending: bool,
    last_cnp: Option<i64>,
    /// READ responses: the next one may leave then; those below `responded` were sent before.
    free_at: i64,
    responded: u32,
    /// It sent an RNR NAK naming `expected`: what follows is dropped, unanswered, until the
    /// requester sends that PSN again.
    rnr: bool,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// The sender of QP may send a packet.
    Slot(usize),
    /// A data packet reaches the receiver.
    Arrive {
        qp: usize,
        off: u32,
        ce: bool,
    },
    /// The receiver's coalesced ACK is due.
    AckDue(usize),
    /// The responder sends the READ response at `off` of a READ from `from`.
    Respond {
        qp: usize,
        off: u32,
        from: u32,
    },
    /// A READ response reaches the requester.
    Response(usize, u32),
    /// A response reaches the sender.
    Ack(usize, u32),
    Nak(usize, u32),
    /// An RNR NAK naming `off` reaches the sender, who waits `delay` before resending.
    RnrNak {
        qp: usize,
        off: u32,
        delay: i64,
    },
    /// The switch ends the pause of `host` with an XON.
    Xon(u8),
    /// The sender acts on a NAK, its reaction time after the NAK reached it.
    React(usize, u32),
    Timer(usize, u64),
}

struct Sim<'f> {
    f: &'f Fabric,
    rng: Rng,
    now: i64,
    queue: BinaryHeap<Reverse<(i64, u64, usize)>>,
    events: Vec<Event>,
    senders: Vec<Sender>,
    receivers: Vec<Receiver>,
    /// Per host: its data is paused until then.
    paused_until: [i64; 256],
    run: Run,
}

impl Fabric {
    /// Runs the fabric until every QP has everything acknowledged, and returns the tap's
    /// recording.
    pub fn simulate(&self) -> Run {
        let n = self.qps.len();
        let mut sim = Sim {
            f: self,
            rng: Rng(self.seed),
            now: T0,
            queue: BinaryHeap::new(),
            events: Vec::new(),
            senders: (0..n).map(|_| Sender::default()).collect(),
            receivers: (0..n).map(|_| Receiver::default()).collect(),
            paused_until: [T0; 256],
            run: Run {
                frames: Vec::new(),
                datagrams: self.qps.iter().map(|q| q.ud).collect(),
                timeouts: vec![0; n],
                completed: vec![false; n],
                lost_resends: vec![Vec::new(); n],
                missed_resends: vec![Vec::new(); n],
                skipped_forward: vec![Vec::new(); n],
                tapped: vec![(true, true); n],
            },
        };
        if self.one_spine {
            // drawn apart, so that the fabric's other draws are the same with one spine or two
            let mut spine = Rng(!self.seed);
            sim.run.tapped.iter_mut().for_each(|t| *t = (spine.per_mille(500), spine.per_mille(500)));
        }
        for qp in 0..n {
            // QPs take turns: each sends every µs, QP i at i × 1/n µs
            sim.senders[qp].busy = true;
            sim.at(T0 + qp as i64 * US / n as i64, Event::Slot(qp));
        }
        while let Some(Reverse((t, _, index))) = sim.queue.pop() {
            if t > T0 + HORIZON_NS {
                break;
            }
            sim.now = t;
            sim.handle(sim.events[index]);
        }
        sim.finish()
    }
}

impl Sim<'_> {
    fn at(&mut self, t: i64, e: Event) {
        let seq = self.events.len() as u64;
        self.events.push(e);
        self.queue.push(Reverse((t, seq, seq as usize)));
    }

    /// The tap records a frame, and a doubled mirror its copy from the switch's egress.
    fn tap(&mut self, t: i64, frame: RoceFrame, what: What) {
        let qp = what.qp().expect("a QP's frame");
        let (data, responses) = self.run.tapped[qp];
        let on_the_taps_spine = if matches!(what, What::Data { .. }) { data } else { responses };
        if !on_the_taps_spine {
            return;
        }
        self.run.frames.push((t, Frame::Roce(Box::new(frame.clone())), what));
        if self.f.double_ns > 0 {
            let mut copy = frame;
            if self.f.double_mac {
                copy.l2.src = [2, 0, 0, 0, 0, 0xEE];
            } else {
                copy.l3.ttl -= 1;
            }
            self.run.frames.push((t + self.f.double_ns, Frame::Roce(Box::new(copy)), What::Copy { qp }));
        }
    }

    fn handle(&mut self, e: Event) {
        match e {
            Event::Slot(qp) => self.slot(qp),
            Event::Arrive { qp, off, ce } => self.arrive(qp, off, ce),
            Event::AckDue(qp) => self.ack_due(qp),
            Event::Respond { qp, off, from } => self.read_response(qp, off, from),
            Event::Response(qp, off) => self.response_arrives(qp, off),
            Event::Ack(qp, off) => self.acknowledged(qp, off + 1),
            Event::Nak(qp, off) => {
                let react = (self.f.nak_reaction_ns - 2 * HOP_NS).max(0);
                self.at(self.now + react, Event::React(qp, off));
            }
            Event::RnrNak { qp, off, delay } => self.rnr_wait(qp, off, delay),
            Event::Xon(host) => self.xon(host),
            Event::React(qp, off) => self.react(qp, off),
            Event::Timer(qp, generation) => self.timeout(qp, generation),
        }
    }

    /// A send slot: resends first, then new packets.
    fn slot(&mut self, qp: usize) {
        let q = &self.f.qps[qp];
        if q.reads {
            return self.read_slot(qp);
        }
        if self.held(qp) {
            return;
        }
        let s = &mut self.senders[qp];
        let (off, resend) = if let Some(o) = s.resend.pop_front() {
            (o, true)
        } else if s.sent < q.packets {
            if s.una == s.sent {
                s.timer_from = self.now;
            }
            s.sent += 1;
            if q.ud {
                // nothing to wait for
                s.una = s.sent;
            }
            (s.sent - 1, false)
        } else {
            s.busy = false;
            return;
        };
        if resend {
            s.timer_from = self.now;
        }
        // a resend of a pass an RNR NAK began is go-back-N whatever the recovery
        let rnr_pass = resend && s.rnr_pass.is_some_and(|end| off < end);
        if rnr_pass && off + 1 >= s.rnr_pass.unwrap_or(0) {
            s.rnr_pass = None;
        }
        self.transmit(qp, off, resend, rnr_pass);
        self.arm_timer(qp);
        self.at(self.now + US, Event::Slot(qp));
    }

    /// Whether the sender may not send now: it waits out an RNR NAK, or the switch paused its
    /// host (then, at some slots, the switch pauses it now). Its next slot is when it may.
    fn held(&mut self, qp: usize) -> bool {
        let host = self.f.qps[qp].from;
        if self.f.pause > 0 && self.now >= self.paused_until[usize::from(host)] && self.rng.per_mille(self.f.pause) {
            self.pause(host);
        }
        let until = self.senders[qp].rnr_until.max(self.paused_until[usize::from(host)]);
        if self.now < until {
            self.at(until, Event::Slot(qp));
        }
        self.now < until
    }

    /// The switch pauses what `host` sends on [`DATA_PRIORITY`] (802.1Qbb PFC, the frame of
    /// IEEE 802.3 Annex 31D: a time in quanta of 512 bit times per enabled priority, 0 an XON):
    /// with the longest quanta ended by an XON, or with quanta that expire. The host sends no
    /// data meanwhile; its transport timers run on (IBA §9.7.6.1.1).
    fn pause(&mut self, host: u8) {
        let ns = self.rng.between(PAUSE_MIN_NS, PAUSE_MAX_NS);
        let by_xon = self.rng.per_mille(500);
        let quanta = if by_xon { u16::MAX } else { (ns * 100 / 512) as u16 };
        let until = if by_xon { self.now + ns } else { self.now + quanta_ns(quanta) };
        self.paused_until[usize::from(host)] = until;
        self.pfc(self.now, host, quanta);
        if by_xon {
            self.at(until, Event::Xon(host));
        }
    }

    fn xon(&mut self, host: u8) {
        self.pfc(self.now, host, 0);
    }

    /// The tap records a PFC frame from the switch's port to `host`: `quanta` for the data's
    /// priority alone (0: an XON).
    fn pfc(&mut self, t: i64, host: u8, quanta: u16) {
        let mut times = [0; 8];
        times[usize::from(DATA_PRIORITY)] = quanta;
        let bytes = encode::pfc_frame([2, 0, 0, 0, 0xEE, host], 1 << DATA_PRIORITY, times);
        self.run.frames.push((t, Frame::Control(bytes), What::Pfc { host, quanta }));
    }

    /// A packet leaves the sender: the switch may drop, mark or hold it back, the tap may
    /// miss it, the link after the tap may lose it.
    fn transmit(&mut self, qp: usize, off: u32, resend: bool, rnr_pass: bool) {
        let (f, q) = (self.f, &self.f.qps[qp]);
        // the first packet of a QP passes cleanly: a capture whose first packet of a flow was
        // overtaken or lost starts mid-stream, where the analysis cannot know what came before
        // (docs/analysis.md, "Reordering": the prelude)
        let first = off == 0 && !resend;
        // a re-issued READ lost or missed is no PSN a pass skipped
        let go_back_n = resend && (f.recovery == Recovery::GoBackN || rnr_pass) && !q.reads;
        if !first && self.rng.per_mille(f.drop_before_tap) {
            if go_back_n {
                self.run.lost_resends[qp].push((off, self.now));
            }
            return;
        }
        let ce = self.rng.per_mille(f.ce_mark);
        // only first transmissions are held back: a resend overtaken by a later resend would
        // make both copies of a PSN late, which nothing can tell apart
        let held_ns = if !first && !resend && self.rng.per_mille(f.reorder) {
            self.rng.between(3 * US / 2, f.reorder_max_ns)
        } else {
            0
        };
        let at_tap = self.now + HOP_NS + held_ns;
        let delivered = !self.rng.per_mille(f.drop_after_tap) || first && q.reads && f.first_read_clean;
        let mut w = request(q, qp, off);
        if ce {
            w.l3 = w.l3.with_qos(26, 3);
        }
        // (the mirror misses no READ request)
        let span = if q.reads { message_end(q, off) - off } else { 1 };
        if first || q.reads || !self.rng.per_mille(f.mirror_miss) {
            self.tap(at_tap, w, What::Data { qp, off, span, resend, held_ns, ce, delivered });
        } else if go_back_n {
            self.run.missed_resends[qp].push((off, self.now));
        }
        if delivered {
            self.at(at_tap + HOP_NS, Event::Arrive { qp, off, ce });
        }
    }

    /// A response leaves the receiver at `self.now + ANSWER_NS` (or `delay`): lost before the
    /// tap, seen there, lost after it, or reaching the sender.
    fn respond(&mut self, delay: i64, frame: RoceFrame, what: What, then: Option<Event>) {
        let lost = self.rng.per_mille(self.f.drop_responses);
        let before = lost && self.rng.per_mille(500);
        let at_tap = self.now + delay + HOP_NS;
        if !before {
            let what = match what {
                What::Nak { qp, off, .. } => What::Nak { qp, off, heard: !lost },
                What::RnrNak { qp, off, .. } => What::RnrNak { qp, off, heard: !lost },
                w => w,
            };
            self.tap(at_tap, frame, what);
        }
        if let (false, Some(e)) = (lost, then) {
            self.at(at_tap + HOP_NS, e);
        }
    }

    /// The receiver gets a packet (IBA §9.7.5.1): in order it is accepted, a duplicate is
    /// acknowledged again, one ahead is a PSN sequence error. A CE mark is answered by a CNP
    /// to the sender's QP, at most one per [`CNP_WINDOW_NS`].
    fn arrive(&mut self, qp: usize, off: u32, ce: bool) {
        let q = &self.f.qps[qp];
        if ce && self.receivers[qp].last_cnp.is_none_or(|t| self.now - t >= CNP_WINDOW_NS) {
            self.receivers[qp].last_cnp = Some(self.now);
            let mut cnp = frame(responder(q, qp), requester(q, qp), 0x81, 0, ExtHeaders::default(), 0);
            cnp.l3 = cnp.l3.with_qos(48, 0);
            self.respond(ANSWER_NS, cnp, What::Cnp { qp }, None);
        }
        let expected = self.receivers[qp].expected;
        if q.ud {
            // a datagram: no PSN checked, nothing answered
        } else if q.reads && off <= expected {
            // a READ, or one re-issued: (re)sent from its PSN on (IBA §9.7.5.1.5)
            let r = &mut self.receivers[qp];
            r.expected = expected.max(message_end(q, off));
            let begin = r.free_at.max(self.now + ANSWER_NS);
            r.free_at = begin + i64::from(message_end(q, off) - off) * US;
            for (k, o) in (off..message_end(q, off)).enumerate() {
                self.at(begin + k as i64 * US, Event::Respond { qp, off: o, from: off });
            }
        } else if off == expected && self.not_ready(qp, off) {
            self.send_rnr_nak(qp, off);
        } else if off == expected {
            self.accept(qp, off);
        } else if off < expected {
            // a duplicate: IBA §9.7.5.1.2, acknowledged again (when it asks for an ACK)
            if ack_req(q, off) {
                self.send_ack(qp, ANSWER_NS);
            }
        } else if self.receivers[qp].rnr {
            // after an RNR NAK: dropped until the PSN it named comes again
        } else {
            self.sequence_error(qp, off);
        }
    }

    /// Whether the receiver has no receive WQE for the SEND message that begins at `off`
    /// (its FIRST or ONLY packet, in sequence, with nothing kept beyond a gap). The QP's first
    /// packet is always received (the capture's prelude, as in [`Sim::transmit`]).
    fn not_ready(&mut self, qp: usize, off: u32) -> bool {
        let (q, r) = (&self.f.qps[qp], &self.receivers[qp]);
        let first_of_message = off.is_multiple_of(q.message.max(1));
        let in_sequence = r.kept.is_empty() && (!r.naked || r.rnr);
        self.f.rnr > 0 && q.sends && off > 0 && first_of_message && in_sequence && self.rng.per_mille(self.f.rnr)
    }

    /// An RNR NAK naming the packet not accepted, with the time the requester must wait
    /// before it sends it again (IBA §9.7.5.2.8: AETH syndrome 001 and a 5-bit timer code).
    fn send_rnr_nak(&mut self, qp: usize, off: u32) {
        let q = &self.f.qps[qp];
        let (timer, delay) = RNR_TIMERS[self.rng.between(0, RNR_TIMERS.len() as i64 - 1) as usize];
        let r = &mut self.receivers[qp];
        (r.rnr, r.naked) = (true, true);
        let f = rnr_nak(responder(q, qp), requester(q, qp), psn(q, off), timer);
        let (what, then) = (What::RnrNak { qp, off, heard: true }, Event::RnrNak { qp, off, delay });
        self.respond(ANSWER_NS, f, what, Some(then));
    }

    /// The expected PSN arrived: accept it and whatever selective repeat kept after it.
    fn accept(&mut self, qp: usize, off: u32) {
        let q = &self.f.qps[qp];
        let r = &mut self.receivers[qp];
        let mut wants_ack = ack_req(q, off);
        r.expected = off + 1;
        (r.naked, r.rnr) = (false, false);
        while r.kept.remove(&r.expected) {
            wants_ack |= ack_req(q, r.expected);
            r.expected += 1;
        }
        // selective repeat: the next PSN still missing is NAKed in its turn
        let still_missing = !r.kept.is_empty();
        if wants_ack && !r.ack_pending {
            r.ack_pending = true;
            self.at(self.now + q.ack_delay_ns, Event::AckDue(qp));
        }
        if still_missing {
            self.send_nak(qp);
        }
    }

    /// A PSN ahead of the expected one: one NAK naming the expected PSN until it arrives
    /// (IBA §9.7.5.1.1); go-back-N discards the packet, selective repeat keeps it.
    fn sequence_error(&mut self, qp: usize, off: u32) {
        if self.f.recovery == Recovery::Selective {
            self.receivers[qp].kept.insert(off);
        }
        if !self.receivers[qp].naked {
            self.send_nak(qp);
        }
    }

    fn send_nak(&mut self, qp: usize) {
        let q = &self.f.qps[qp];
        let r = &mut self.receivers[qp];
        r.naked = true;
        let off = r.expected;
        let f = nak(responder(q, qp), requester(q, qp), psn(q, off));
        self.respond(ANSWER_NS, f, What::Nak { qp, off, heard: true }, Some(Event::Nak(qp, off)));
    }

    fn ack_due(&mut self, qp: usize) {
        self.receivers[qp].ack_pending = false;
        self.send_ack(qp, 0);
    }

    /// An ACK naming the last PSN received in order: it acknowledges every PSN up to it.
    fn send_ack(&mut self, qp: usize, delay: i64) {
        let q = &self.f.qps[qp];
        let Some(off) = self.receivers[qp].expected.checked_sub(1) else { return };
        let f = ack(responder(q, qp), requester(q, qp), psn(q, off), 0x1F);
        self.respond(delay, f, What::Ack { qp, off }, Some(Event::Ack(qp, off)));
    }

    /// Every offset before `upto` is acknowledged (an ACK, or a NAK: IBA §9.7.5.1.1, a NAK
    /// acknowledges the PSNs before the one it names).
    fn acknowledged(&mut self, qp: usize, upto: u32) {
        let s = &mut self.senders[qp];
        if upto > s.una {
            s.una = upto;
            s.timer_from = self.now;
            self.arm_timer(qp);
        }
    }

    /// The sender acts on a NAK naming `off`: go-back-N starts again from it, resending up to
    /// the highest PSN sent (IBA §9.7.5.2.1), selective repeat resends it alone.
    fn react(&mut self, qp: usize, off: u32) {
        self.acknowledged(qp, off);
        let s = &mut self.senders[qp];
        if off >= s.sent {
            return;
        }
        match self.f.recovery {
            Recovery::GoBackN => {
                // a NAK naming a PSN after those still to resend calls them off
                let skipped = s.resend.iter().take_while(|&&o| o < off).copied();
                self.run.skipped_forward[qp].extend(skipped);
                s.resend = (off..s.sent).collect();
            }
            Recovery::Selective if !s.resend.contains(&off) => s.resend.push_back(off),
            Recovery::Selective => {}
        }
        self.wake(qp);
    }

    /// An RNR NAK naming `off` reaches the sender: it acknowledges the PSNs before `off`, and
    /// the sender waits `delay`, its transport timer stopped, then sends again from `off`,
    /// go-back-N whatever its recovery (IBA §9.7.5.2.8).
    fn rnr_wait(&mut self, qp: usize, off: u32, delay: i64) {
        self.acknowledged(qp, off);
        let s = &mut self.senders[qp];
        if off >= s.sent {
            return;
        }
        let skipped = s.resend.iter().take_while(|&&o| o < off).copied();
        self.run.skipped_forward[qp].extend(skipped);
        s.resend = (off..s.sent).collect();
        s.rnr_pass = Some(s.sent);
        s.rnr_until = self.now + delay;
        s.timer_from = s.rnr_until;
        self.arm_timer(qp);
        self.wake(qp);
    }

    /// A send slot of a reading QP: a READ re-issued from its first missing response, or the
    /// next READ once the last one's responses have all come.
    fn read_slot(&mut self, qp: usize) {
        if self.held(qp) {
            return;
        }
        let q = &self.f.qps[qp];
        let s = &mut self.senders[qp];
        let again = s.resend.pop_front().map(|o| o.max(s.una)).filter(|&o| o < s.sent);
        s.resend.clear();
        let (off, resend) = match again {
            Some(o) => (o, true),
            None if s.una == s.sent && s.sent < q.packets => (s.sent, false),
            None => {
                s.busy = false;
                return;
            }
        };
        s.timer_from = self.now;
        s.sent = s.sent.max(message_end(q, off));
        self.transmit(qp, off, resend, false);
        self.arm_timer(qp);
        self.at(self.now + US, Event::Slot(qp));
    }

    /// The responder sends a READ response: lost, seen at the tap or not, as data packets are
    /// (never held back, CE-marked or missed by the mirror; the first passes cleanly).
    fn read_response(&mut self, qp: usize, off: u32, from: u32) {
        let (f, q) = (self.f, &self.f.qps[qp]);
        let r = &mut self.receivers[qp];
        let resend = off < r.responded;
        r.responded = r.responded.max(off + 1);
        let first = (off == 0 || f.first_read_clean && off < message_end(q, 0)) && !resend;
        if !first && self.rng.per_mille(f.drop_before_tap) {
            return;
        }
        let delivered = first || !self.rng.per_mille(f.drop_after_tap);
        let end = message_end(q, off);
        let mut response =
            read_responses(responder(q, qp), requester(q, qp), psn(q, from), end - from, q.pmtu as usize)
                .swap_remove((off - from) as usize);
        if off + 1 == end {
            response.payload.truncate(q.pmtu as usize / 2);
        }
        let at_tap = self.now + HOP_NS;
        self.tap(at_tap, response, What::Response { qp, off, resend, delivered });
        if delivered {
            self.at(at_tap + HOP_NS, Event::Response(qp, off));
        }
    }

    /// A READ response reaches the requester: the next one it awaits completes the READ so
    /// far; one after it shows a gap, and the requester re-issues the READ from the first
    /// missing response (IBA §9.7.5.1.5) once it reacts, discarding the rest.
    fn response_arrives(&mut self, qp: usize, off: u32) {
        let s = &mut self.senders[qp];
        if off == s.una {
            s.reread = false;
            self.acknowledged(qp, off + 1);
            if self.senders[qp].una == self.senders[qp].sent {
                self.wake(qp);
            }
        } else if off > s.una && !s.reread {
            s.reread = true;
            let (react, una) = ((self.f.nak_reaction_ns - 2 * HOP_NS).max(0), s.una);
            self.at(self.now + react, Event::React(qp, una));
        }
    }

    /// The timer restarts at every progress and every resend (IBA §9.7.6.1.1, C9-140); when
    /// it expires the sender resends from the oldest PSN not acknowledged.
    fn arm_timer(&mut self, qp: usize) {
        let s = &mut self.senders[qp];
        s.timer_gen += 1;
        if s.una < s.sent {
            let (t, generation) = (s.timer_from.max(s.rnr_until) + self.f.rto_ns, s.timer_gen);
            self.at(t, Event::Timer(qp, generation));
        }
    }

    fn timeout(&mut self, qp: usize, generation: u64) {
        let s = &mut self.senders[qp];
        if generation != s.timer_gen || s.una >= s.sent {
            return;
        }
        self.run.timeouts[qp] += 1;
        match self.f.recovery {
            Recovery::GoBackN => s.resend = (s.una..s.sent).collect(),
            Recovery::Selective => s.resend.push_front(s.una),
        }
        s.timer_from = self.now;
        self.arm_timer(qp);
        self.wake(qp);
    }

    fn wake(&mut self, qp: usize) {
        if !self.senders[qp].busy {
            self.senders[qp].busy = true;
            self.at(self.now, Event::Slot(qp));
        }
    }

    /// The frames in time order (those at one time in the order they were recorded), and a
    /// datagram 1 ms after the last: the capture goes on after the traffic, so every reorder
    /// window and every wait for a second copy ends inside it (where the capture ends first,
    /// docs/analysis.md lets the NAK reaction time guess).
    fn finish(mut self) -> Run {
        for (qp, q) in self.f.qps.iter().enumerate() {
            self.run.completed[qp] = self.senders[qp].una >= q.packets;
        }
        self.run.frames.sort_by_key(|(t, _, _)| *t);
        let last = self.run.frames.last().map_or(T0, |(t, _, _)| *t);
        let deth = ExtHeaders { deth: Some(Deth { qkey: 0x1111, src_qp: 0x7FF }), ..ExtHeaders::default() };
        let tail = frame(Side { n: 9, qpn: 0x7FF }, Side { n: 1, qpn: 0x7FF }, 0x64, 0, deth, 64);
        self.run.frames.push((last + 1000 * US, Frame::Roce(Box::new(tail)), What::Tail));
        self.run
    }
}

/// The offset after the last packet of the message `off` is in.
pub fn message_end(q: &Qp, off: u32) -> u32 {
    let m = q.message.max(1);
    (off / m * m + m).min(q.packets)
}

/// The request of QP `i` at offset `off`: a 64-byte WRITE ONLY where the QP has no PMTU, else
/// the FIRST, a MIDDLE, the LAST or the ONLY packet of one of its messages, or a READ from
/// `off` to its message's end.
pub fn request(q: &Qp, i: usize, off: u32) -> RoceFrame {
    let (from, to, psn, ack_req) = (requester(q, i), responder(q, i), psn(q, off), ack_req(q, off));
    if q.ud {
        let deth = Deth { qkey: 0x1111_1111, src_qp: from.qpn };
        return frame(from, to, 0x64, psn, ExtHeaders { deth: Some(deth), ..ExtHeaders::default() }, 64);
    }
    if q.reads {
        return read_request(from, to, psn, (message_end(q, off) - off - 1) * q.pmtu + q.pmtu / 2);
    }
    if q.pmtu == 0 {
        return write_only(from, to, psn, ack_req);
    }
    let (k, pmtu) = (off % q.message, q.pmtu as usize);
    let packets = q.message.min(q.packets - (off - k));
    // FIRST, MIDDLE, LAST, ONLY
    let position = match (k == 0, k + 1 == packets) {
        (true, false) => 0,
        (false, false) => 1,
        (false, true) => 2,
        (true, true) => 3,
    };
    let opcode = if q.sends { [0x00, 0x01, 0x02, 0x04][position] } else { [0x06, 0x07, 0x08, 0x0A][position] };
    let dma_len = (packets - 1) * q.pmtu + q.pmtu / 2;
    let reth = (!q.sends && (position == 0 || position == 3)).then_some(Reth { va: 0, rkey: 1, dma_len });
    let payload = if position < 2 { pmtu } else { pmtu / 2 };
    let mut f = frame(from, to, opcode, psn, ExtHeaders { reth, ..ExtHeaders::default() }, payload);
    f.bth.ack_req = ack_req;
    f
}

/// Whether the packet at `off` asks for an ACK: every `ack_every`-th, and the last.
pub fn ack_req(q: &Qp, off: u32) -> bool {
    off % q.ack_every.max(1) == q.ack_every.max(1) - 1 || off + 1 == q.packets
}

/// What the report must say of one QP: its data flow's PSN-sequence counters and what its
/// responder's flow carried, derived from the tap's frames and what really happened to them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct QpTruth {
    pub packets: u64,
    pub gaps: u64,
    pub missing_psns: u64,
    pub capture_missed: u64,
    pub retransmitted: u64,
    pub late_arrivals: u64,
    pub retransmit_episodes: u64,
    pub reorder_events: u64,
    pub reorder_naks: u64,
    pub ce: u64,
    /// On the responder's flow.
    pub naks: u64,
    pub rnr_naks: u64,
    pub cnps: u64,
    pub responses: Responses,
    /// What began each retransmit episode of the requests, in order.
    pub began: Vec<Began>,
}

/// What began a retransmit episode of the requests (docs/analysis.md, "Retransmit episodes":
/// `trigger` and `trigger_frame`, the frames numbered from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Began {
    /// The NAK, or the RNR NAK, the episode answers: the latest one no earlier episode
    /// answered naming its first resent PSN, else the latest naming an earlier PSN that no ACK
    /// had covered by then.
    Nak(usize),
    RnrNak(usize),
    /// No NAK, and less silence than the analysis's ACK timeout before it, but a pause of the
    /// data's priority (any host's) lasted into that timeout before it: a `timeout` whose
    /// `trigger_frame` is the XOFF that began the pause.
    Paused(usize),
    /// Within a µs of the ACK timeout's edge: `timeout` or `no_nak`, paused or not.
    Edge,
    /// A `timeout` after the silence, a `no_nak`, a READ re-issued after a gap in its
    /// responses.
    Other,
}

/// The analysis's ACK timeout (`--min-ack-timeout-us 200`).
pub const MIN_ACK_TIMEOUT_NS: i64 = 200 * US;

/// A NAK or RNR NAK at the tap, and when an ACK first covered the PSN it names.
struct Logged {
    index: usize,
    ts: i64,
    off: u32,
    rnr: bool,
    acked: Option<i64>,
}

/// The pauses of [`DATA_PRIORITY`] at the tap, every host's joined where they overlap:
/// (start, end, the index of the first XOFF). A pause ends at its XON or when its quanta
/// expire.
fn pauses(run: &Run) -> Vec<(i64, i64, usize)> {
    let mut periods = Vec::new();
    for (index, (ts, _, what)) in run.frames.iter().enumerate() {
        if let What::Pfc { host, quanta } = *what
            && quanta > 0
        {
            let xon = run.frames[index..].iter().find(|(_, _, w)| *w == What::Pfc { host, quanta: 0 });
            let expiry = ts + quanta_ns(quanta);
            periods.push((*ts, xon.map_or(expiry, |(t, _, _)| (*t).min(expiry)), index));
        }
    }
    let mut joined: Vec<(i64, i64, usize)> = Vec::new();
    for p in periods {
        match joined.last_mut() {
            Some(last) if p.0 <= last.1 => last.1 = last.1.max(p.1),
            _ => joined.push(p),
        }
    }
    joined
}

/// What began an episode whose first resent PSN is `off`, at `ts`, `idle` after the flow's
/// previous packet: the NAK it answers, taken out of `unanswered`, else the ACK timeout's
/// silence, else the pause that held it.
fn began(unanswered: &mut Vec<Logged>, paused: &[(i64, i64, usize)], off: u32, ts: i64, idle: Option<i64>) -> Began {
    let answer = |n: &Logged| if n.rnr { Began::RnrNak(n.index + 1) } else { Began::Nak(n.index + 1) };
    if let Some(i) = unanswered.iter().rposition(|n| n.off == off) {
        let b = answer(&unanswered[i]);
        unanswered.retain(|n| n.off != off);
        return b;
    }
    let open = |n: &Logged| n.ts <= ts && n.acked.is_none_or(|a| a > ts);
    if let Some(i) = unanswered.iter().rposition(|n| n.off < off && open(n)) {
        return answer(&unanswered.remove(i));
    }
    let edge = |x: i64| (x - MIN_ACK_TIMEOUT_NS).abs() <= US;
    if idle.is_some_and(edge) {
        return Began::Edge;
    }
    if idle.is_some_and(|i| i >= MIN_ACK_TIMEOUT_NS) {
        return Began::Other;
    }
    let Some(&(_, end, xoff)) = paused.iter().take_while(|p| p.0 < ts).last() else { return Began::Other };
    if edge(ts - end) {
        Began::Edge
    } else if end > ts - MIN_ACK_TIMEOUT_NS {
        Began::Paused(xoff + 1)
    } else {
        Began::Other
    }
}

/// A QP's READ responses on its responder's flow (`responses.*` there), and of its request
/// flow's retransmit episodes, whether each began with a READ re-issued after the tap saw a
/// gap in its responses (trigger `response_gap`; listed only where the tap saw responses).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Responses {
    pub packets: u64,
    pub gaps: u64,
    pub missing_psns: u64,
    pub retransmitted: u64,
    pub late_arrivals: u64,
    pub reorder_events: u64,
    pub retransmit_episodes: u64,
    /// Of those, the episodes whose trigger is `reread`.
    pub rereads: u64,
    pub after_gap: Vec<bool>,
}

impl QpTruth {
    /// What no decision of the analysis moves from one counter to another: the packets and
    /// what the responder's flow carried, the tap's jumps ahead (each a gap or a reorder
    /// event) and the PSNs seen again behind the expected one (each a resend or a late
    /// arrival).
    pub fn conserved(&self) -> [u64; 6] {
        [
            self.packets,
            self.ce,
            self.naks,
            self.cnps,
            self.gaps + self.reorder_events,
            self.retransmitted + self.late_arrivals,
        ]
    }

    /// The holes the tap's jumps skipped (each missing, missed by the capture or filled late),
    /// with the go-back-N resends lost before the tap, which count as missing.
    pub fn holes(&self) -> u64 {
        self.missing_psns + self.capture_missed + self.late_arrivals
    }
}

/// A first appearance of a hole where docs/analysis.md's rules for telling a late original
/// from a resend ("Reordering": (a), (b), (c), the copies after a NAK) decide from what
/// follows it, and may say other than what happened. `simulator_properties.rs` compares only
/// the conserved sums of a QP with a doubt, and shows the doubts apart in an ignored test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubt {
    /// Within a µs of the end of its gap's reorder window, or followed by the packet that
    /// decides (b) there: either side of (a), or of (b).
    WindowEdge(u32),
    /// A late original followed by a PSN seen before (a go-back-N resend of an earlier PSN,
    /// begun by a NAK before its gap): (b) makes it a resend.
    LateThenOldPsn(u32),
    /// A late original no NAK named, with resends of earlier PSNs within its gap's window
    /// (before or after it):
    /// (c) makes it a resend where a NAK after its gap named an earlier PSN that came again
    /// (docs: "go-back-N has started from n", though a selective resend covers nothing after
    /// it), and so does a NAKed earlier hole's copy in its run ("the first appearances of later
    /// holes wait with it").
    LateAmongResends(u32),
    /// A late original after a NAK naming it, copied again later than one reorder window after
    /// the NAK, or never: how long the copy waits depends on the round trips the flow has
    /// shown, and with no second copy in the wait it is taken for the resend (the docs' "What
    /// the copies cannot tell").
    LateCopiedLate(u32),
    /// A resend no NAK after its gap named (nor one before it followed by its PSN), followed
    /// by new PSNs or by nothing within the window: (b) holds and it is taken for late.
    ResendThenNewPsn(u32),
    /// A resend after a NAK naming it, copied again within eight reorder windows of the NAK
    /// (another NAK's go-back-N): the second copy may make it the late original.
    ResendCopiedAgain(u32),
    /// A go-back-N resend lost before the tap where its pass did not go on past it.
    LostResendUnseen(u32),
    /// A go-back-N resend the mirror missed (the receiver got it): a PSN its pass skipped.
    MissedResend(u32),
    /// A go-back-N resend called off by a NAK naming a later PSN: a PSN its pass skipped.
    SkippedForward(u32),
    /// A copy the copies decide after the retransmissions that follow it: a resend so decided
    /// is an episode of its own (docs: "a retransmission so decided is a retransmit episode
    /// of its own"), a late original ends the episode around it late. Only the number of
    /// episodes is in doubt.
    DecidedAfterLaterResends(u32),
    /// A hole the capture missed whose gap a NAK named, that a later ACK covers: missing by
    /// the docs' rule, though a NAK naming a later PSN acknowledges it (IBA §9.7.5.1.1); the
    /// analysis keeps it captured when the ACK came before the NAK.
    NakedGapAcked(u32),
    /// A packet the switch held back, seen between two resends: a new packet ends the
    /// retransmit episode (docs: "only a new packet ... ends it"), and the episode after it
    /// has no NAK left to answer (its NAK was the first part's), so it is `no_nak` though the
    /// NAK is in the capture. No count is in doubt.
    HeldSplitsResends(u32),
    /// A resend after a NAK naming it, within its gap's window, with no second copy, sooner
    /// after the NAK than half a NAK-to-resend delay the flow showed before (a sender held by
    /// a pause): the copies rule may take it for the late original.
    ResendSoonerThanShown(u32),
    /// A READ response, the first appearance of a hole, at its reorder window's end, or
    /// followed there by the response that decides (b): late or re-read either way.
    ResponseAtWindowEdge(u32),
}

impl Doubt {
    /// Whether only the number of retransmit episodes is in doubt.
    pub fn episodes_only(&self) -> bool {
        matches!(self, Doubt::DecidedAfterLaterResends(_))
    }

    /// Whether only `missing_psns` is in doubt, by no more than the go-back-N resends lost
    /// before the tap.
    pub fn lost_resend(&self) -> bool {
        matches!(self, Doubt::LostResendUnseen(_))
    }

    /// Whether no count is in doubt, only what an episode's trigger is.
    pub fn trigger_only(&self) -> bool {
        matches!(self, Doubt::HeldSplitsResends(_))
    }
}

/// A gap at the tap (docs/analysis.md, "The request sequence"): the frame that opened it, its
/// holes, and whether a NAK named one of them.
struct Gap {
    index: usize,
    ts: i64,
    holes: Vec<u32>,
    naked: bool,
}

/// How the tap's first appearance of a PSN, or a later one, is classed.
#[derive(Clone, Copy, PartialEq)]
enum Class {
    New,
    Late,
    Retransmission,
}

/// One data frame of the QP at the tap.
struct Seen {
    index: usize,
    ts: i64,
    off: u32,
    class: Class,
    /// Its PSN had been seen before.
    again: bool,
    /// The switch held it back.
    held: bool,
    /// The first appearance of a hole: its gap.
    hole_of: Option<usize>,
    /// A READ re-issued from a response the tap saw skipped, and not since.
    after_gap: bool,
}

/// Walks the tap's frames of QP `qp` as docs/analysis.md defines the counters, deciding what
/// the analysis has to infer (was a first appearance of a hole the late original or a resend;
/// did the responder get a hole) from what really happened. `paired`: the analysis knows the
/// QP's two flows for a pair; responses of a flow not paired are linked to no request flow
/// (docs: "Pairing the two directions of a connection"), so its NAKs name no hole and its ACKs
/// cover none.
pub fn truth(run: &Run, qp: usize, paired: bool) -> (QpTruth, Vec<Doubt>) {
    let mut t = QpTruth::default();
    let mut expected: Option<u32> = None;
    let mut first: HashMap<u32, usize> = HashMap::new();
    let mut gap_of: HashMap<u32, usize> = HashMap::new();
    let (mut gaps, mut data, mut acks) = (Vec::<Gap>::new(), Vec::<Seen>::new(), Vec::new());
    // NAKs the analysis links to the flow, and those of them that name a hole
    let (mut naks, mut hole_naks) = (Vec::new(), Vec::new());
    // READ responses: the next one, and those a gap skipped that have not appeared since
    let (mut next_response, mut skipped) = (None::<u32>, BTreeSet::new());
    // the NAKs and RNR NAKs of a paired flow that no episode answered yet, and the pauses
    let (mut unanswered, paused) = (Vec::<Logged>::new(), pauses(run));
    let doubted;
    (t.responses, doubted) = responses_truth(run, qp);
    for (index, (ts, _, what)) in run.frames.iter().enumerate() {
        match *what {
            // a UD datagram: counted and checked for marks, never sequenced (docs: "PSN
            // sequence")
            What::Data { qp: q, ce, .. } if q == qp && run.datagrams[qp] => {
                t.packets += 1;
                t.ce += u64::from(ce);
            }
            What::Data { qp: q, off, span, resend, held_ns, ce, .. } if q == qp => {
                t.packets += 1;
                t.ce += u64::from(ce);
                let again = first.contains_key(&off);
                let mut hole_of = None;
                let class = match expected {
                    None => Class::New,
                    Some(e) if off >= e => {
                        if off > e {
                            gap_of.extend((e..off).map(|h| (h, gaps.len())));
                            gaps.push(Gap { index, ts: *ts, holes: (e..off).collect(), naked: false });
                        }
                        Class::New
                    }
                    // the first appearance of a hole: the late original within the reorder
                    // window (held back by the switch), else a resend
                    Some(_) => match gap_of.get(&off) {
                        Some(&g) if !again => {
                            hole_of = Some(g);
                            let late = !resend && held_ns > 0 && ts - gaps[g].ts <= REORDER_WINDOW_NS;
                            if late { Class::Late } else { Class::Retransmission }
                        }
                        _ => Class::Retransmission,
                    },
                };
                // docs: `response_gap`, a response skipped from the resent PSN on, among those
                // requested so far, that has not appeared since
                let requested_end = expected.map_or(off + 1, |e| e.max(off + 1));
                let after_gap = skipped.iter().any(|&h| (off..requested_end).contains(&h));
                expected = Some(expected.map_or(off + span, |e| e.max(off + span)));
                if class == Class::Retransmission && data.last().is_none_or(|d: &Seen| d.class != Class::Retransmission)
                {
                    let idle = data.last().map(|d: &Seen| ts - d.ts);
                    t.began.push(began(&mut unanswered, &paused, off, *ts, idle));
                }
                first.entry(off).or_insert(data.len());
                data.push(Seen { index, ts: *ts, off, class, again, held: held_ns > 0, hole_of, after_gap });
            }
            // the responses' PSNs a gap skipped and that have not appeared since
            What::Response { qp: q, off, .. } if q == qp => {
                if let Some(e) = next_response.filter(|&e| off > e) {
                    skipped.extend(e..off);
                }
                skipped.remove(&off);
                next_response = Some(next_response.map_or(off + 1, |e| e.max(off + 1)));
            }
            What::Ack { qp: q, off } if q == qp && paired => {
                acks.push((index, off));
                let covered = unanswered.iter_mut().filter(|n| n.off <= off && n.acked.is_none());
                covered.for_each(|n| n.acked = Some(*ts));
            }
            What::RnrNak { qp: q, off, .. } if q == qp => {
                t.rnr_naks += 1;
                unanswered.extend(Some(Logged { index, ts: *ts, off, rnr: true, acked: None }).filter(|_| paired));
            }
            What::Nak { qp: q, off, .. } if q == qp => {
                t.naks += 1;
                unanswered.extend(Some(Logged { index, ts: *ts, off, rnr: false, acked: None }).filter(|_| paired));
                naks.extend(Some((index, *ts, off)).filter(|_| paired));
                // a NAK naming a hole of a gap the tap has seen open
                if let Some(&g) = gap_of.get(&off).filter(|_| paired) {
                    gaps[g].naked = true;
                    hole_naks.push(off);
                }
            }
            What::Cnp { qp: q } if q == qp => t.cnps += 1,
            _ => {}
        }
    }
    let class_of = |off: u32| first.get(&off).map(|&i| data[i].class);
    // a maximal run of retransmissions is one episode (docs: "Retransmit episodes")
    let mut in_episode = false;
    for d in &data {
        t.late_arrivals += u64::from(d.class == Class::Late);
        t.retransmitted += u64::from(d.class == Class::Retransmission);
        t.retransmit_episodes += u64::from(d.class == Class::Retransmission && !in_episode);
        if d.class == Class::Retransmission && !in_episode && t.responses.packets > 0 {
            t.responses.after_gap.push(d.after_gap);
        }
        in_episode = d.class == Class::Retransmission;
    }
    t.reorder_naks = hole_naks.iter().filter(|&&off| class_of(off) == Some(Class::Late)).count() as u64;
    let mut doubts: Vec<Doubt> = doubted.map(Doubt::ResponseAtWindowEdge).into_iter().collect();
    for gap in &gaps {
        let mut lacking = 0;
        for &h in &gap.holes {
            let acked = acks.iter().any(|&(i, a)| i > gap.index && a >= h);
            if gap.naked && acked && class_of(h).is_none() {
                doubts.push(Doubt::NakedGapAcked(h));
            }
            match class_of(h) {
                Some(Class::Late) => continue,
                // the responder got it: a later ACK covers it, no NAK named a PSN of its gap,
                // and it was never resent (docs: "Capture loss or network loss")
                None if !gap.naked && acked => t.capture_missed += 1,
                _ => t.missing_psns += 1,
            }
            lacking += 1;
        }
        // a gap all of whose holes came late is a reorder event
        t.gaps += u64::from(lacking > 0);
        t.reorder_events += u64::from(lacking == 0);
    }
    if data.is_empty() {
        // the data took the other spine: the tap has only the responses
        return (t, Vec::new());
    }
    // a go-back-N resend lost before the tap is missing too (docs: "Retransmit episodes",
    // `pattern`: a PSN a pass skipped)
    t.missing_psns += run.lost_resends[qp].len() as u64;
    doubts.extend((0..data.len()).filter_map(|k| doubt(&data, k, &gaps, &naks)));
    let resent = |d: Option<&Seen>| d.is_some_and(|d| d.class == Class::Retransmission);
    let split = |k: usize| data[k].held && resent(data.get(k - 1)) && resent(data.get(k + 1));
    doubts.extend((1..data.len()).filter(|&k| split(k)).map(|k| Doubt::HeldSplitsResends(data[k].off)));
    doubts.extend(passes(run, qp, &data));
    (t, doubts)
}

/// The READ responses of QP `qp` at the tap, counted by docs/analysis.md's rules ("READ
/// responses"): one READ is outstanding at a time and its responses are never held back, so
/// a response ahead of the next is a gap, one behind it a re-read's; the first appearance of
/// a hole is nevertheless a late arrival where (a) and (b) say so ("Reordering": within the
/// reorder window of its gap, and the first response after the run of holes' first
/// appearances a new PSN or none within the window). With the hole, if any, whose decision
/// lies within a µs of the window's end.
fn responses_truth(run: &Run, qp: usize) -> (Responses, Option<u32>) {
    let seen: Vec<(i64, u32)> = run
        .frames
        .iter()
        .filter_map(|(ts, _, w)| match *w {
            What::Response { qp: q, off, .. } if q == qp => Some((*ts, off)),
            _ => None,
        })
        .collect();
    let (mut r, mut doubt) = (Responses { packets: seen.len() as u64, ..Responses::default() }, None);
    // the gaps: when they opened, their holes, how many came late
    let (mut gaps, mut gap_of) = (Vec::<(i64, u32, u32)>::new(), HashMap::<u32, usize>::new());
    let (mut next, mut appeared, mut rereading) = (None::<u32>, BTreeSet::new(), false);
    for (k, &(ts, off)) in seen.iter().enumerate() {
        let hole = next.is_some_and(|e| off < e) && !appeared.contains(&off);
        let late = hole && {
            let g = gap_of[&off];
            let since_gap = |t: i64| t - gaps[g].0;
            let first_of_hole = |&&(_, o): &&(i64, u32)| next.is_some_and(|e| o < e) && !appeared.contains(&o);
            let after = seen[k + 1..].iter().find(|x| !first_of_hole(x) || x.1 == off);
            if (since_gap(ts) - REORDER_WINDOW_NS).abs() <= US
                || after.is_some_and(|&(t, _)| (since_gap(t) - REORDER_WINDOW_NS).abs() <= US)
            {
                doubt = Some(off);
            }
            let new = |&(t, o): &(i64, u32)| since_gap(t) > REORDER_WINDOW_NS || next.is_none_or(|e| o >= e);
            since_gap(ts) <= REORDER_WINDOW_NS && after.is_none_or(new)
        };
        if let Some(e) = next.filter(|&e| off > e) {
            gap_of.extend((e..off).map(|h| (h, gaps.len())));
            gaps.push((ts, off - e, 0));
        }
        let behind = next.is_some_and(|e| off < e) && !late;
        if late {
            r.late_arrivals += 1;
            gaps[gap_of[&off]].2 += 1;
        }
        r.retransmitted += u64::from(behind);
        r.retransmit_episodes += u64::from(behind && !rereading);
        rereading = behind;
        appeared.insert(off);
        next = Some(next.map_or(off + 1, |e| e.max(off + 1)));
    }
    for (_, holes, late) in gaps {
        r.gaps += u64::from(late < holes);
        r.reorder_events += u64::from(late == holes);
        r.missing_psns += u64::from(holes - late);
    }
    r.rereads = r.retransmit_episodes;
    (r, doubt)
}

/// Go-back-N resends the analysis cannot see lost, or takes for lost: a lost resend is seen
/// only as a PSN its pass skipped, so the pass must go on past it; a resend the mirror missed
/// looks the same.
fn passes(run: &Run, qp: usize, data: &[Seen]) -> Vec<Doubt> {
    // the resends the tap saw just before and after it, below and above it
    let resent = |d: &&Seen| d.class == Class::Retransmission && d.again;
    let skipped = |&(off, sent): &(u32, i64)| {
        let before = data.iter().rev().find(|d| d.ts <= sent + HOP_NS).filter(resent);
        let after = data.iter().find(|d| d.ts > sent + HOP_NS).filter(resent);
        before.is_some_and(|d| d.off < off) && after.is_some_and(|d| d.off > off)
    };
    let unseen = run.lost_resends[qp].iter().filter(|l| !skipped(l)).map(|&(o, _)| Doubt::LostResendUnseen(o));
    let missed = run.missed_resends[qp].iter().map(|&(o, _)| Doubt::MissedResend(o));
    unseen.chain(missed).chain(run.skipped_forward[qp].iter().map(|&o| Doubt::SkippedForward(o))).collect()
}

/// Whether a NAK before `data[k]` was answered (its PSN's next copy at the tap) more than
/// `slower_than` after it: the flow showed a NAK-to-resend delay that long (a sender a pause
/// or an RNR wait held).
fn answered_slower(data: &[Seen], k: usize, naks: &[(usize, i64, u32)], slower_than: i64) -> bool {
    let copy_after = |i: usize, n: u32| data[..k].iter().find(|e| e.off == n && e.index > i);
    naks.iter()
        .filter(|&&(i, _, _)| i < data[k].index)
        .any(|&(i, t, n)| copy_after(i, n).is_some_and(|e| e.ts - t > slower_than))
}

/// Whether the first appearance of a hole, `data[k]`, is one docs/analysis.md's rules decide
/// from what follows it, perhaps otherwise than what happened ([`Doubt`]).
fn doubt(data: &[Seen], k: usize, gaps: &[Gap], naks: &[(usize, i64, u32)]) -> Option<Doubt> {
    let (d, margin, window) = (&data[k], US, REORDER_WINDOW_NS);
    let gap = &gaps[d.hole_of?];
    let since_gap = d.ts - gap.ts;
    if (since_gap - window).abs() <= margin {
        return Some(Doubt::WindowEdge(d.off));
    }
    if since_gap > window {
        return None;
    }
    // NAKs after the gap opened, before this appearance
    let mut after_gap = naks.iter().filter(|&&(i, _, _)| gap.index < i && i < d.index);
    let own_nak = after_gap.clone().filter(|&&(_, _, n)| n == d.off).map(|&(_, t, _)| t).next_back();
    // a copy of PSN `n` after frame `i`, before this one: go-back-N has begun from `n`
    let copied = |n: u32, i: usize| data[..k].iter().any(|e| e.off == n && e.index > i);
    let resend_begun = after_gap.any(|&(i, _, n)| n < d.off && copied(n, i));
    // resends of earlier PSNs within the gap's window
    let in_window = |e: &&Seen| e.index != d.index && (0..=window + margin).contains(&(e.ts - gap.ts));
    let among_resends = data.iter().filter(in_window).any(|e| e.class == Class::Retransmission && e.off < d.off);
    let second_copy = data[k + 1..].iter().find(|e| e.off == d.off).map(|e| e.ts);
    // the first packet after the run of first appearances of holes, within the window ((b);
    // one at the window's edge may come either side of it)
    let next = data[k + 1..].iter().find(|e| e.hole_of.is_none());
    if next.is_some_and(|e| (e.ts - gap.ts - window).abs() <= margin) {
        return Some(Doubt::WindowEdge(d.off));
    }
    let old_next = next.is_some_and(|e| e.again && e.ts - gap.ts <= window);
    match (d.class, own_nak) {
        (Class::Late, Some(nak)) if second_copy.is_none_or(|c| c - nak > window - margin) => {
            Some(Doubt::LateCopiedLate(d.off))
        }
        (Class::Late, None) if old_next => Some(Doubt::LateThenOldPsn(d.off)),
        (Class::Late, None) if among_resends => Some(Doubt::LateAmongResends(d.off)),
        (Class::Late, Some(nak))
            if data.get(k + 1).is_some_and(|e| e.class == Class::Retransmission && e.ts - nak <= 8 * window) =>
        {
            Some(Doubt::DecidedAfterLaterResends(d.off))
        }
        (Class::Late, _) => None,
        (_, Some(nak)) if second_copy.is_some_and(|c| c - nak <= 8 * window + margin) => {
            Some(Doubt::ResendCopiedAgain(d.off))
        }
        (_, Some(nak))
            if data.get(k + 1).is_some_and(|e| e.class == Class::Retransmission && e.ts - nak <= 8 * window) =>
        {
            Some(Doubt::DecidedAfterLaterResends(d.off))
        }
        (_, None) if !resend_begun && !old_next => Some(Doubt::ResendThenNewPsn(d.off)),
        (_, Some(nak)) if answered_slower(data, k, naks, 2 * (d.ts - nak)) => Some(Doubt::ResendSoonerThanShown(d.off)),
        _ => None,
    }
}

impl Run {
    /// The tap's frames of QP `qp`, for a failure message.
    pub fn trace_of(&self, qp: usize) -> String {
        let mine = |w: &What| w.qp().is_none_or(|q| q == qp);
        let lines = self.frames.iter().enumerate().filter(|(_, (_, _, w))| mine(w));
        let at = |ts: i64| format!("{:>9.3}", (ts - T0) as f64 / 1000.0);
        let shown: Vec<String> = lines.map(|(i, (ts, _, w))| format!("#{:<5}{} {w:?}", i + 1, at(*ts))).collect();
        format!(
            "lost resends {:?}, missed resends {:?}\n{}",
            self.lost_resends[qp],
            self.missed_resends[qp],
            shown.join("\n")
        )
    }

    /// The tap's frames one a line, with what really happened to them: printed when a
    /// property fails.
    pub fn trace(&self, fabric: &Fabric) -> String {
        let at = |ts: i64| format!("{:>9.3}", (ts - T0) as f64 / 1000.0);
        let line = |(ts, _, what): &(i64, Frame, What)| match *what {
            What::Data { qp, off, resend, held_ns, ce, delivered, .. } => format!(
                "{} QP{qp} data off {off} psn {}{}{}{}{}",
                at(*ts),
                psn(&fabric.qps[qp], off),
                if resend { " RESEND" } else { "" },
                if held_ns > 0 { format!(" held {held_ns} ns") } else { String::new() },
                if ce { " CE" } else { "" },
                if delivered { "" } else { " LOST-AFTER-TAP" },
            ),
            What::Response { qp, off, resend, delivered } => format!(
                "{}   QP{qp} READ response off {off} psn {}{}{}",
                at(*ts),
                psn(&fabric.qps[qp], off),
                if resend { " RESEND" } else { "" },
                if delivered { "" } else { " LOST-AFTER-TAP" },
            ),
            What::Ack { qp, off } => format!("{}   QP{qp} ACK off {off}", at(*ts)),
            What::Nak { qp, off, heard } => {
                format!("{}   QP{qp} NAK off {off}{}", at(*ts), if heard { "" } else { " LOST-AFTER-TAP" })
            }
            What::RnrNak { qp, off, heard } => {
                format!("{}   QP{qp} RNR NAK off {off}{}", at(*ts), if heard { "" } else { " LOST-AFTER-TAP" })
            }
            What::Pfc { host, quanta: 0 } => format!("{} PFC XON to host {host}", at(*ts)),
            What::Pfc { host, quanta } => format!("{} PFC XOFF {quanta} quanta to host {host}", at(*ts)),
            What::Cnp { qp } => format!("{}   QP{qp} CNP", at(*ts)),
            What::Copy { qp } => format!("{}     QP{qp} second copy", at(*ts)),
            What::Tail => format!("{} tail", at(*ts)),
        };
        self.frames.iter().enumerate().map(|(i, f)| format!("#{:<5}{}", i + 1, line(f))).collect::<Vec<_>>().join("\n")
    }
}
