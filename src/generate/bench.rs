//! Benchmark captures, streamed to disk frame by frame (never held in memory):
//!
//! - `mixed`: 64 RC connections (8 senders × 8 receivers) writing 8-packet RDMA WRITE messages
//!   of 1 KiB payloads at about 100 Gb/s, packets of all connections interleaved; every
//!   message is acknowledged; 1 % of data packets CE-marked and answered by CNPs (at most one
//!   per 50 µs per QP); a go-back-N loss episode (3 packets lost before the tap, a NAK, the
//!   resend) every 200,000 data packets; a PFC XOFF/XON pair on priority 3 every millisecond.
//! - `small`: the same 64 connections as ACK and CNP frames only (62 and 74 bytes).
//! - `random-qpn`: the same hosts, but every frame goes to a random destination QP — SEND
//!   ONLY packets and ACKs of 58 and 62 bytes — so nearly every frame opens a new flow: the
//!   test of the analysis's memory bounds.
//!
//! The output is a pure function of the kind and the size.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use rocescope_parsers::ext::{Aeth, ExtHeaders, Reth};
use rocescope_parsers::opcode::CNP;
use rocescope_parsers::psn::psn_add;

use super::encode::{self, BthRepr, L2, L3, RoceFrame};
use super::scenarios::{Rng, T0};
use crate::output::packet::capture_file::CaptureWriter;

/// Kinds of benchmark capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchKind {
    Mixed,
    Small,
    RandomQpn,
}

impl BenchKind {
    pub const ALL: [BenchKind; 3] = [BenchKind::Mixed, BenchKind::Small, BenchKind::RandomQpn];

    pub fn name(self) -> &'static str {
        match self {
            BenchKind::Mixed => "mixed",
            BenchKind::Small => "small",
            BenchKind::RandomQpn => "random-qpn",
        }
    }

    /// What the capture holds, for the command's help.
    pub fn describe(self) -> &'static str {
        match self {
            BenchKind::Mixed => {
                "64 RC connections of 1 KiB WRITEs with CE marks, CNPs, go-back-N losses and PFC frames"
            }
            BenchKind::Small => "ACK and CNP frames only: the most frames a byte",
            BenchKind::RandomQpn => "small frames to a random destination QP each: as many flows as the capture holds",
        }
    }
}

const CONNECTIONS: u32 = 64;
const PAYLOAD: usize = 1024;
const MESSAGE_PACKETS: u32 = 8;
/// Nanoseconds between frames: a 1082-byte frame at 100 Gb/s.
const SLOT_NS: i64 = 87;
const LOSS_EVERY: u64 = 200_000;
const PFC_EVERY_NS: i64 = 1_000_000;

struct Connection {
    sender: u8,
    receiver: u8,
    sender_qpn: u32,
    receiver_qpn: u32,
    next_psn: u32,
    /// Position in the current message.
    position: u32,
    msn: u32,
    last_cnp: Option<i64>,
    /// PSNs to resend (go-back-N after a NAK), in order.
    resend: std::collections::VecDeque<u32>,
}

impl Connection {
    /// The next new PSN and its position in its message.
    fn advance(&mut self) -> (u32, u32) {
        let (psn, position) = (self.next_psn, self.position);
        self.next_psn = psn_add(psn, 1);
        self.position = (position + 1) % MESSAGE_PACKETS;
        (psn, position)
    }

    /// The position in its message of an already sent `psn` (messages start at multiples of
    /// the message length from the connection's first PSN).
    fn position_of(&self, psn: u32) -> u32 {
        let message_start = self.next_psn.wrapping_sub(self.position);
        psn.wrapping_sub(message_start) % MESSAGE_PACKETS
    }

    fn l2(from: u8, to: u8) -> L2 {
        L2::new([2, 0, 0, 0, 1, from], [2, 0, 0, 0, 1, to])
    }

    fn frame(&self, to_receiver: bool, opcode: u8, psn: u32, ext: ExtHeaders, payload: usize) -> RoceFrame {
        let (from, to, qpn) = if to_receiver {
            (self.sender, self.receiver, self.receiver_qpn)
        } else {
            (self.receiver, self.sender, self.sender_qpn)
        };
        RoceFrame {
            l2: Self::l2(from, to),
            l3: L3::v4([10, 1, 0, from], [10, 1, 0, to]),
            udp_sport: 0xC000 | (qpn as u16 & 0x3FFF),
            udp_dport: 4791,
            bth: BthRepr::new(opcode, qpn, psn),
            ext,
            payload: vec![(psn & 0xFF) as u8; payload],
        }
    }

    /// The data packet with `psn` at message position `position`.
    fn data(&self, psn: u32, position: u32) -> RoceFrame {
        let (opcode, ext) = match position {
            0 => (
                0x06,
                ExtHeaders {
                    reth: Some(Reth { va: 0x1000, rkey: 7, dma_len: PAYLOAD as u32 * MESSAGE_PACKETS }),
                    ..ExtHeaders::default()
                },
            ),
            p if p + 1 == MESSAGE_PACKETS => (0x08, ExtHeaders::default()),
            _ => (0x07, ExtHeaders::default()),
        };
        let mut f = self.frame(true, opcode, psn, ext, PAYLOAD);
        f.bth.ack_req = position + 1 == MESSAGE_PACKETS;
        f
    }

    fn aeth(&self, to_receiver: bool, opcode: u8, psn: u32, syndrome: u8) -> RoceFrame {
        self.frame(
            to_receiver,
            opcode,
            psn,
            ExtHeaders { aeth: Some(Aeth { syndrome, msn: self.msn }), ..ExtHeaders::default() },
            0,
        )
    }

    fn cnp(&self) -> RoceFrame {
        let mut f = self.frame(false, CNP, 0, ExtHeaders::default(), 0);
        f.bth.becn = true;
        f.l3 = f.l3.with_qos(48, 0);
        f
    }
}

fn connections() -> Vec<Connection> {
    (0..CONNECTIONS)
        .map(|i| Connection {
            sender: 1 + (i % 8) as u8,
            receiver: 101 + (i / 8) as u8,
            sender_qpn: 0x1000 + i,
            receiver_qpn: 0x2000 + i,
            next_psn: i * 0x10_0000,
            position: 0,
            msn: 0,
            last_cnp: None,
            resend: Default::default(),
        })
        .collect()
}

/// The capture being written, with its clock and size.
struct Output<W: Write> {
    writer: CaptureWriter<W>,
    ts_ns: i64,
    bytes: u64,
    frames: u64,
}

impl<W: Write> Output<W> {
    fn emit(&mut self, frame: &[u8]) -> io::Result<()> {
        self.writer.packet(0, self.ts_ns, frame)?;
        self.ts_ns += SLOT_NS;
        self.bytes += 16 + frame.len() as u64;
        self.frames += 1;
        Ok(())
    }
}

/// Writes a benchmark capture of about `target_bytes` to `path`; returns the frames written.
pub fn write_benchmark(path: &Path, kind: BenchKind, target_bytes: u64) -> io::Result<u64> {
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut out = Output { writer: CaptureWriter::pcap(file, 1, 65535, true, false)?, ts_ns: T0, bytes: 24, frames: 0 };
    let mut conns = connections();
    let mut rng = Rng::new(0xBE_4C4);
    let mut data_packets = 0u64;
    let mut next_pfc = T0 + PFC_EVERY_NS;
    let switch = [2, 0, 0, 0, 0xFF, 1];
    while out.bytes < target_bytes {
        for c in conns.iter_mut() {
            if kind == BenchKind::RandomQpn {
                let random = rng.next_u64();
                c.receiver_qpn = (random & 0xFF_FFFF) as u32;
                c.sender_qpn = ((random >> 24) & 0xFF_FFFF) as u32;
                let mut send = c.frame(true, 0x04, c.next_psn, ExtHeaders::default(), 0);
                send.bth.ack_req = true;
                out.emit(&send.encode())?;
                out.emit(&c.aeth(false, 0x11, c.next_psn, 0x1F).encode())?;
                c.next_psn = psn_add(c.next_psn, 1);
                continue;
            }
            if kind == BenchKind::Small {
                c.msn += 1;
                out.emit(&c.aeth(false, 0x11, c.next_psn, 0x1F).encode())?;
                c.next_psn = psn_add(c.next_psn, MESSAGE_PACKETS);
                if c.msn % 4 == 0 {
                    out.emit(&c.cnp().encode())?;
                }
                continue;
            }
            if out.ts_ns >= next_pfc {
                let mut quanta = [0u16; 8];
                quanta[3] = 0x100;
                out.emit(&encode::pfc_frame(switch, 1 << 3, quanta))?;
                out.emit(&encode::pfc_frame(switch, 1 << 3, [0; 8]))?;
                next_pfc += PFC_EVERY_NS;
            }
            let (psn, position) = match c.resend.pop_front() {
                Some(psn) => (psn, c.position_of(psn)),
                None => c.advance(),
            };
            data_packets += 1;
            let mut f = c.data(psn, position);
            let ce = rng.chance(1);
            if ce {
                f.l3 = f.l3.with_qos(26, 3);
            }
            out.emit(&f.encode())?;
            if ce && c.last_cnp.is_none_or(|last| out.ts_ns - last >= 50_000) {
                c.last_cnp = Some(out.ts_ns);
                out.emit(&c.cnp().encode())?;
            }
            if data_packets.is_multiple_of(LOSS_EVERY) && c.resend.is_empty() {
                // Three packets never reach the tap; the fourth reveals the gap, the
                // responder NAKs with the expected PSN, the requester goes back to it.
                let lost = [c.advance(), c.advance(), c.advance()];
                let (revealing, at) = c.advance();
                out.emit(&c.data(revealing, at).encode())?;
                out.emit(&c.aeth(false, 0x11, lost[0].0, 0x60).encode())?;
                c.resend.extend(lost.iter().map(|(p, _)| *p).chain([revealing]));
                continue;
            }
            if f.bth.ack_req && c.resend.is_empty() {
                c.msn += 1;
                out.emit(&c.aeth(false, 0x11, psn, 0x1F).encode())?;
            }
        }
    }
    out.writer.finish()?.flush()?;
    Ok(out.frames)
}
