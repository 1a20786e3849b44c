//! The congestion-control scenarios (docs/samples.md): senders that react to CNPs or do not,
//! one that recovers slowly, an eight-sender incast, and messages of several sizes with loss
//! and coalesced ACKs.

use rocescope_parsers::ext::{Aeth, ExtHeaders};
use rocescope_parsers::psn::psn_add;

use super::encode;
use super::scenarios::{
    ACK_32_CREDITS, Conn, Endpoint, MS, Scenario, T0, US, endpoint, read_request, read_responses, write_message,
};
use crate::generate::scenarios::Container;

/// A sender's stream from `from_us` until `to_us` (µs from the scenario's start), with a CNP
/// from the receiver at each of `cnps_at`.
struct Stream<'a> {
    conn: &'a Conn,
    from_us: i64,
    to_us: i64,
    cnps_at: &'a [i64],
}

impl Stream<'_> {
    /// Writes RDMA WRITEs of four 64-byte packets from `psn`, one packet every `spacing(t)` µs,
    /// each message ACKed 3 µs after its last packet, the packet just before each CNP
    /// CE-marked, and the CNPs; the next PSN.
    fn write(&self, s: &mut Scenario, mut psn: u32, spacing: impl Fn(i64) -> i64) -> u32 {
        let (mut t, mut msn) = (self.from_us, 0);
        while t < self.to_us {
            let packets = write_message(self.conn, psn, 256, 64, 0x7f00_0000_0000 + u64::from(psn) * 256);
            let mut last = t;
            for mut f in packets {
                let next = t + spacing(t);
                if self.cnps_at.iter().any(|&c| (t..next).contains(&c)) {
                    f.l3 = f.l3.with_qos(26, 3);
                }
                s.push(T0 + t * US, f.encode());
                (last, t) = (t, next);
            }
            psn = psn_add(psn, 4);
            msn += 1;
            s.push(T0 + (last + 3) * US, self.conn.ack(false, psn_add(psn, 0xFF_FFFF), msn, ACK_32_CREDITS).encode());
        }
        for &c in self.cnps_at {
            s.push(T0 + c * US, self.conn.cnp(false).encode());
        }
        psn
    }
}

/// Is `t` within `length` µs after `delay` µs past one of `starts`?
fn within(t: i64, starts: &[i64], delay: i64, length: i64) -> bool {
    starts.iter().any(|&b| (b + delay..b + delay + length).contains(&t))
}

/// Two senders to one receiver get CNP bursts (two CNPs 40 µs apart) at the same moments:
/// 10.0.0.1 halves its rate 5 µs after each burst's first CNP for 150 µs and recovers; 10.0.0.2
/// never slows down (DCQCN_NO_REACTION).
pub fn dcqcn_reaction() -> Scenario {
    let receiver = endpoint(9, 0x000909);
    let reacting = Conn { a: endpoint(1, 0x0A0101), b: Endpoint { qpn: 0x000901, ..receiver }, vlan: None };
    let deaf = Conn { a: endpoint(2, 0x0A0202), b: Endpoint { qpn: 0x000902, ..receiver }, vlan: None };
    let mut s = Scenario::pcap("dcqcn_reaction.pcap");
    let bursts = [400, 800, 1200, 1600, 2000];
    let cnps: Vec<i64> = bursts.iter().flat_map(|&b| [b, b + 40]).collect();
    let stream = Stream { conn: &reacting, from_us: 0, to_us: 2400, cnps_at: &cnps };
    stream.write(&mut s, 0x10_0000, |t| if within(t, &bursts, 5, 150) { 16 } else { 8 });
    let deaf_bursts: Vec<i64> = bursts.iter().map(|b| b + 4).collect();
    let deaf_cnps: Vec<i64> = deaf_bursts.iter().flat_map(|&b| [b, b + 40]).collect();
    let stream = Stream { conn: &deaf, from_us: 0, to_us: 2400, cnps_at: &deaf_cnps };
    stream.write(&mut s, 0x20_0000, |_| 8);
    s.sorted()
}

/// A sender that halves its rate after each CNP and takes 1.5 ms to get it back, bursts
/// 2.5 ms apart (DCQCN_SLOW_RECOVERY).
pub fn dcqcn_slow_recovery() -> Scenario {
    let conn = Conn { a: endpoint(5, 0x0A0505), b: endpoint(6, 0x000606), vlan: None };
    let mut s = Scenario::pcap("dcqcn_slow_recovery.pcap");
    let bursts = [500, 3000, 5500, 8000];
    let stream = Stream { conn: &conn, from_us: 0, to_us: 10_000, cnps_at: &bursts };
    stream.write(&mut s, 0x30_0000, |t| if within(t, &bursts, 5, 1500) { 32 } else { 16 });
    s.sorted()
}

/// Eight senders converge on 10.0.0.20 for 300 µs (one of them over two QPs), between periods
/// when two send; the receiver marks CE, sends CNPs and its NIC pauses priority 3 during the
/// incast (INCAST, a warning).
pub fn incast() -> Scenario {
    let receiver = endpoint(20, 0x001400);
    let conn = |n: u8, qp: u32| Conn {
        a: endpoint(n, 0x0C0000 + qp),
        b: Endpoint { qpn: 0x001400 + qp, ..receiver },
        vlan: None,
    };
    let mut s = Scenario::pcap("incast.pcap");
    // each QP's next PSN
    let mut psns: Vec<(u32, u32)> = Vec::new();
    let mut send = |s: &mut Scenario, n: u8, qp: u32, from_us: i64, to_us: i64, cnps_at: &[i64]| {
        let at = psns.iter().position(|(q, _)| *q == qp).unwrap_or_else(|| {
            psns.push((qp, 0x40_0000 + qp * 0x1000));
            psns.len() - 1
        });
        let c = conn(n, qp);
        psns[at].1 = Stream { conn: &c, from_us, to_us, cnps_at }.write(s, psns[at].1, |_| 8);
    };
    // PSNs in time order: before, during and after the incast
    for n in [11, 12] {
        send(&mut s, n, u32::from(n), i64::from(n), 300, &[]);
    }
    for n in 11..=18u8 {
        send(&mut s, n, u32::from(n), 400 + i64::from(n), 700, &[500 + i64::from(n)]);
    }
    send(&mut s, 11, 0x91, 403, 700, &[]);
    for n in [11, 12] {
        send(&mut s, n, u32::from(n), 800 + i64::from(n), 1100, &[]);
    }
    let mut quanta = [0u16; 8];
    quanta[3] = 0x0100;
    s.push(T0 + 550 * US, encode::pfc_frame(receiver.mac, 1 << 3, quanta));
    s.push(T0 + 560 * US, encode::pfc_frame(receiver.mac, 1 << 3, [0; 8]));
    s.sorted()
}

/// Messages of 2 KiB, 32 KiB, 512 KiB and 2 MiB and 64 KiB READs on one connection at MTU 4096,
/// captured with a 128-byte snap length (headers only): a packet of a 512 KiB WRITE is lost
/// and the responder NAKs; one ACK answers several WRITEs; the last 2 KiB WRITE is lost and
/// resent after a 1 ms timeout (HIGH_TAIL_LATENCY).
pub fn message_sizes() -> Scenario {
    let conn = Conn { a: endpoint(7, 0x0B0707), b: endpoint(8, 0x0B0808), vlan: None };
    let mut s =
        Scenario { container: Container::Pcap { snaplen: 128, link_type: 1 }, ..Scenario::pcap("message_sizes.pcap") };
    let mut psn = 0x50_0000;
    let mut t = 0;
    let mut msn = 0;
    for round in 0..2 {
        for _ in 0..4 {
            write_at(&conn, &mut s, &mut t, &mut psn, 2048);
        }
        write_at(&conn, &mut s, &mut t, &mut psn, 32 << 10);
        let lost = (round == 0).then_some(Lost { index: 60, msn });
        write_losing(&conn, &mut s, &mut t, &mut psn, 512 << 10, lost);
        msn += 6;
        // one ACK for the six WRITEs
        s.push(T0 + (t + 2) * US, conn.ack(false, psn_add(psn, 0xFF_FFFF), msn, ACK_32_CREDITS).encode());
        t += 5;
        if round == 0 {
            write_at(&conn, &mut s, &mut t, &mut psn, 2 << 20);
            msn += 1;
            s.push(T0 + (t + 2) * US, conn.ack(false, psn_add(psn, 0xFF_FFFF), msn, ACK_32_CREDITS).encode());
            t += 5;
        }
        s.push(T0 + t * US, read_request(&conn, true, psn, 64 << 10).encode());
        for (i, f) in read_responses(&conn, psn, 16, 4096, msn + 1).into_iter().enumerate() {
            s.push(T0 + (t + 3 + i as i64) * US, f.encode());
        }
        msn += 1;
        psn = psn_add(psn, 16);
        t += 25;
    }
    // the last WRITE is lost after the tap; the requester's timer resends it 1 ms later
    let last = write_message(&conn, psn, 2048, 4096, 0x7f00_2000_0000);
    let resent_at = t + MS / US;
    for f in &last {
        s.push(T0 + t * US, f.encode());
        s.push(T0 + resent_at * US, f.encode());
    }
    s.push(T0 + (resent_at + 3) * US, conn.ack(false, psn, msn + 1, ACK_32_CREDITS).encode());
    s.sorted()
}

/// A packet of a WRITE lost before the tap, and the MSN the responder's NAK carries.
#[derive(Clone, Copy)]
struct Lost {
    index: usize,
    msn: u32,
}

/// One RDMA WRITE of `len` bytes at MTU 4096 from `*t` µs, a packet a µs.
fn write_at(conn: &Conn, s: &mut Scenario, t: &mut i64, psn: &mut u32, len: usize) {
    write_losing(conn, s, t, psn, len, None);
}

/// One RDMA WRITE, with a packet lost: the responder NAKs at the next packet, and the
/// requester goes back to the lost one after sending the rest.
fn write_losing(conn: &Conn, s: &mut Scenario, t: &mut i64, psn: &mut u32, len: usize, lost: Option<Lost>) {
    let packets = write_message(conn, *psn, len, 4096, 0x7f00_1000_0000);
    let count = packets.len();
    let start = *t;
    for (i, f) in packets.iter().enumerate() {
        if lost.is_none_or(|l| l.index != i) {
            s.push(T0 + (start + i as i64) * US, f.encode());
        }
    }
    *t = start + count as i64;
    if let Some(Lost { index, msn }) = lost {
        let aeth = ExtHeaders { aeth: Some(Aeth { syndrome: 0x60, msn }), ..ExtHeaders::default() };
        let nak = conn.frame(false, 0x11, psn_add(*psn, index as u32), aeth, 0);
        s.push(T0 + (start + index as i64 + 1) * US + US / 2, nak.encode());
        for f in &packets[index..] {
            s.push(T0 + *t * US, f.encode());
            *t += 1;
        }
    }
    *psn = psn_add(*psn, count as u32);
}
