//! Pairing and owners from what the hosts know (issue 51): `analyze --qps HOST=FILE` (iproute2's
//! `rdma resource show qp`, text or `-j`, with or without `-d`) and `--nccl-log HOST=FILE`.
//!
//! The captures are an NCCL ring of 8 ranks, rank r on host 10.0.0.(r+1), connection
//! r → r+1 (mod 8) striped over 4 RC QPs that all start at PSN 0 and send in lock-step, so
//! that from packets alone most flows can never be paired. Every QP number says whose it is:
//! host h sends stripe i from its QP 0x100·h + 0x10 + i ([`send_qp`]) and receives stripe i on
//! its QP 0x100·h + 0x20 + i ([`recv_qp`]); stripes 0 and 1 are on mlx5_0, 2 and 3 on mlx5_1. So
//! the true peer of every flow, and the owner of every QP, follow from the flow's key alone,
//! and the tables and logs below are written from the same description.

use std::collections::BTreeSet;

use crate::common;

use common::capture::{Capture, Side, T0, US, ack, flow, flows, frame, nak, write_only};
use rocescope::generate::encode::RoceFrame;
use rocescope_parsers::ext::{Deth, ExtHeaders};
use rocescope_parsers::opcode::CNP;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// The ring

const RANKS: u8 = 8;
const STRIPES: u32 = 4;
/// WRITEs per QP (PSN 0 ..).
const WRITES: u32 = 40;
/// The PSNs whose WRITE is CE-marked on every QP (each answered by a CNP 1.4 µs later).
const MARKED: [u32; 2] = [4, 24];
/// The QP that loses a WRITE: rank 0's connection (host 1 → host 2), stripe 1.
const LOSSY: (u8, u32) = (0, 1);
/// The PSN lost before the tap on the lossy QP: host 2 NAKs it when 11 arrives, host 1 goes
/// back to it in its next slot.
const LOST: u32 = 10;
/// The ring communicator's commId, as NCCL prints it.
const COMM_ID: &str = "0x7a3f9c0011223344";
/// The tables' `time:` line: one second before the capture's first frame (T0).
const BEFORE_CAPTURE: &str = "2023-11-14T22:13:19Z";
/// A `time:` line after the capture's last frame.
const AFTER_CAPTURE: &str = "2023-11-14T22:13:21Z";

fn host_of_rank(rank: u8) -> u8 {
    rank + 1
}
fn next(h: u8) -> u8 {
    h % RANKS + 1
}
fn prev(h: u8) -> u8 {
    (h + RANKS - 2) % RANKS + 1
}
fn ip(h: u8) -> String {
    format!("10.0.0.{h}")
}
/// Host h's QP sending stripe i to the next host.
fn send_qp(h: u8, i: u32) -> u32 {
    0x100 * u32::from(h) + 0x10 + i
}
/// Host h's QP receiving stripe i from the previous host.
fn recv_qp(h: u8, i: u32) -> u32 {
    0x100 * u32::from(h) + 0x20 + i
}
fn device(i: u32) -> &'static str {
    if i < 2 { "mlx5_0" } else { "mlx5_1" }
}
/// The pid of host h's ring process.
fn pid(h: u8) -> u32 {
    4301 + 10 * u32::from(h)
}
/// The command of host h's ring process.
fn command(h: u8) -> &'static str {
    if h == 8 { "pt_main_thread" } else { "python3" }
}
/// Host 1's and host 2's UD QPs (the rows say UD; [`with_datagrams`] adds their traffic).
fn ud_qp(h: u8) -> u32 {
    0x100 * u32::from(h) + 0xF0
}
/// Host 3's QP in state ERR (its row's rqpn is host 4's [`ERR_PEER_QP`]).
const ERR_QP: u32 = 0x3E0;
const ERR_PEER_QP: u32 = 0x4E0;

fn marked(mut f: RoceFrame) -> RoceFrame {
    f.l3 = f.l3.with_qos(26, 3);
    f
}

/// A CNP from `from` to the QP `to.qpn` of host `to.n`.
fn cnp(from: Side, to: Side) -> RoceFrame {
    let mut f = frame(from, to, CNP, 0, ExtHeaders::default(), 0);
    f.l3 = f.l3.with_qos(48, 0);
    f
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Pkt {
    Write,
    Ack,
    Cnp,
}

/// The ring as a tap sees it: packets of kind `Pkt` of rank r's stripe i about PSN `psn` where
/// `seen(kind, r, i, psn)`. Rank r's QP i sends its WRITEs (ACK requested) 2 µs apart, QP i
/// 100 ns after QP i − 1 (rank r 10 ns after rank r − 1); the receiver ACKs each 1.5 µs later
/// and sends a CNP to the sending QP 1.4 µs after each mark ([`MARKED`]). On the lossy QP
/// ([`LOSSY`]) PSN [`LOST`] never reaches the tap: 11 comes in its slot, the receiver NAKs 10
/// 0.5 µs later, the sender goes back to 10 in its next slot (go-back-N).
fn ring_seen(seen: impl Fn(Pkt, u8, u32, u32) -> bool) -> Capture {
    let mut c = Capture::new();
    for r in 0..RANKS {
        let (s, d) = (host_of_rank(r), next(host_of_rank(r)));
        for i in 0..STRIPES {
            let (tx, rx) = (Side { n: s, qpn: send_qp(s, i) }, Side { n: d, qpn: recv_qp(d, i) });
            let sent: Vec<u32> = if (r, i) == LOSSY {
                (0..LOST).chain([LOST + 1]).chain(LOST..WRITES - 2).collect()
            } else {
                (0..WRITES).collect()
            };
            let mut acked: Option<u32> = None;
            for (slot, &psn) in sent.iter().enumerate() {
                let t = T0 + slot as i64 * 2 * US + i64::from(i) * 100 + i64::from(r) * 10;
                let expected = acked.map_or(0, |a| a + 1);
                let mark = MARKED.contains(&psn) && psn == expected;
                if seen(Pkt::Write, r, i, psn) {
                    let w = write_only(tx, rx, psn, true);
                    c.add(t, &if mark { marked(w) } else { w });
                }
                if psn == expected {
                    if mark && seen(Pkt::Cnp, r, i, psn) {
                        c.add(t + 1_400, &cnp(rx, tx));
                    }
                    if seen(Pkt::Ack, r, i, psn) {
                        c.add(t + 3 * US / 2, &ack(rx, tx, psn, 0x1F));
                    }
                    acked = Some(psn);
                } else if psn > expected && seen(Pkt::Ack, r, i, psn) {
                    c.add(t + US / 2, &nak(rx, tx, expected));
                }
            }
        }
    }
    c.by_time();
    c
}

/// The whole ring, every packet at the tap.
fn ring() -> Capture {
    ring_seen(|_, _, _, _| true)
}

/// The ring at one of two spines of an ECMP fabric: per connection r, stripe i goes by its
/// `j = (i + r) % 4`: j = 0: the WRITEs and CNPs here, the ACKs took the other spine (the ACK
/// flow holds CNPs only); j = 1: everything here; j = 2: the WRITEs took the other spine (the
/// ACK flow has no peer in the capture); j = 3: the WRITEs of PSN < 20 here, the ACKs and CNPs
/// of PSN ≥ 20 (a path changed mid-capture). The lossy QP is j = 1.
fn spine() -> Capture {
    ring_seen(|kind, r, i, psn| match ((i + u32::from(r)) % 4, kind) {
        (0, Pkt::Ack) => false,
        (2, Pkt::Write) => false,
        (3, Pkt::Write) => psn < 20,
        (3, Pkt::Ack | Pkt::Cnp) => psn >= 20,
        _ => true,
    })
}

/// A UD SEND ONLY from host `from`'s UD QP to host `to`'s.
fn datagram(from: u8, to: u8, psn: u32) -> RoceFrame {
    let deth = Deth { qkey: 0x1111_0000, src_qp: ud_qp(from) };
    let (f, t) = (Side { n: from, qpn: ud_qp(from) }, Side { n: to, qpn: ud_qp(to) });
    frame(f, t, 0x64, psn, ExtHeaders { deth: Some(deth), ..ExtHeaders::default() }, 256)
}

/// The ring plus four datagrams each way between host 1's and host 2's UD QPs.
fn with_datagrams(mut c: Capture) -> Capture {
    for k in 0..4u32 {
        c.add(T0 + 5 * US + i64::from(k) * 3 * US + 7, &datagram(1, 2, 100 + k));
        c.add(T0 + 6 * US + i64::from(k) * 3 * US + 7, &datagram(2, 1, 200 + k));
    }
    c.by_time();
    c
}

/// The ring plus RC traffic on host 3's ERR QP: host 4 WRITEs to it, host 3 ACKs from it to
/// host 4's QP [`ERR_PEER_QP`] (PSNs 500.., 50 µs after T0).
fn with_err_qp_traffic(mut c: Capture) -> Capture {
    let (h4, h3) = (Side { n: 4, qpn: ERR_PEER_QP }, Side { n: 3, qpn: ERR_QP });
    for k in 0..5u32 {
        let t = T0 + 50 * US + i64::from(k) * 2 * US + 3;
        c.add(t, &write_only(h4, h3, 500 + k, true));
        c.add(t + 3 * US / 2, &ack(h3, h4, 500 + k, 0x1F));
    }
    c.by_time();
    c
}

// ---------------------------------------------------------------------------------------------
// The tables, as `rdma resource show qp` prints them

#[derive(Debug, Clone)]
struct Row {
    dev: &'static str,
    lqpn: u32,
    rqpn: Option<u32>,
    ty: &'static str,
    state: &'static str,
    rq_psn: Option<u32>,
    sq_psn: u32,
    path_mig: bool,
    pdn: Option<u32>,
    pid: Option<u32>,
    comm: String,
}

/// An RC row of host h's ring process.
fn rc_row(h: u8, dev: &'static str, lqpn: u32, rqpn: u32, state: &'static str) -> Row {
    Row {
        dev,
        lqpn,
        rqpn: Some(rqpn),
        ty: "RC",
        state,
        rq_psn: Some(0),
        sq_psn: WRITES,
        path_mig: true,
        pdn: Some(3),
        pid: Some(pid(h)),
        comm: command(h).to_string(),
    }
}

/// A UD row of host h's ring process: no rqpn, no rq-psn, no path-mig-state.
fn ud_row(h: u8, lqpn: u32) -> Row {
    Row { rqpn: None, ty: "UD", rq_psn: None, path_mig: false, ..rc_row(h, "mlx5_0", lqpn, 0, "RTS") }
}

/// The kernel's GSI QP of a device: `comm [ib_core]`, no pid.
fn gsi_row(dev: &'static str) -> Row {
    Row {
        dev,
        lqpn: 1,
        rqpn: None,
        ty: "GSI",
        state: "RTS",
        rq_psn: None,
        sq_psn: 0,
        path_mig: false,
        pdn: None,
        pid: None,
        comm: "[ib_core]".to_string(),
    }
}

/// Host h's table: per device, the kernel's GSI QP, then the ring's sending QPs (rqpn: the next
/// host's receiving QP of the stripe) and receiving QPs (rqpn: the previous host's sending QP);
/// host 1 and 2 also a UD QP, host 3 also a QP in state ERR.
fn ring_rows(h: u8) -> Vec<Row> {
    let mut rows = Vec::new();
    for dev in ["mlx5_0", "mlx5_1"] {
        rows.push(gsi_row(dev));
        let stripes = || (0..STRIPES).filter(|&i| device(i) == dev);
        rows.extend(stripes().map(|i| rc_row(h, dev, send_qp(h, i), recv_qp(next(h), i), "RTS")));
        rows.extend(stripes().map(|i| rc_row(h, dev, recv_qp(h, i), send_qp(prev(h), i), "RTS")));
        if dev == "mlx5_0" && h <= 2 {
            rows.push(ud_row(h, ud_qp(h)));
        }
        if dev == "mlx5_1" && h == 3 {
            rows.push(rc_row(h, dev, ERR_QP, ERR_PEER_QP, "ERR"));
        }
    }
    rows
}

/// How many rows of host h's table name ring QPs (the rows the ring capture shows).
const RING_ROWS: u64 = 2 * STRIPES as u64;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    /// `rdma resource show qp`
    Text,
    /// `rdma -d resource show qp`: the same rows (`-d` adds nothing for QPs), here with a `time:`
    /// line
    TextDetails,
    /// `rdma -j resource show qp`: one array
    Json,
    /// `rdma -jd resource show qp`, here with a `time:` line
    JsonDetails,
}

const FORMS: [Form; 4] = [Form::Text, Form::TextDetails, Form::Json, Form::JsonDetails];

/// One row as the rdma tool prints it: each value followed by a space.
fn text_row(r: &Row) -> String {
    let mut s = format!("link {}/1 lqpn {} ", r.dev, r.lqpn);
    if let Some(q) = r.rqpn {
        s += &format!("rqpn {q} ");
    }
    s += &format!("type {} state {} ", r.ty, r.state);
    if let Some(p) = r.rq_psn {
        s += &format!("rq-psn {p} ");
    }
    s += &format!("sq-psn {} ", r.sq_psn);
    if r.path_mig {
        s += "path-mig-state MIGRATED ";
    }
    if let Some(p) = r.pdn {
        s += &format!("pdn {p} ");
    }
    if let Some(p) = r.pid {
        s += &format!("pid {p} ");
    }
    s + &format!("comm {} ", r.comm)
}

/// One row as `rdma -j` prints it, its keys in the tool's order.
fn json_row(r: &Row) -> String {
    let ifindex = if r.dev == "mlx5_0" { 2 } else { 3 };
    let mut keys = vec![
        format!("\"ifindex\":{ifindex}"),
        format!("\"ifname\":\"{}\"", r.dev),
        "\"port\":1".to_string(),
        format!("\"lqpn\":{}", r.lqpn),
    ];
    if let Some(q) = r.rqpn {
        keys.push(format!("\"rqpn\":{q}"));
    }
    keys.push(format!("\"type\":\"{}\"", r.ty));
    keys.push(format!("\"state\":\"{}\"", r.state));
    if let Some(p) = r.rq_psn {
        keys.push(format!("\"rq-psn\":{p}"));
    }
    keys.push(format!("\"sq-psn\":{}", r.sq_psn));
    if r.path_mig {
        keys.push("\"path-mig-state\":\"MIGRATED\"".to_string());
    }
    if let Some(p) = r.pdn {
        keys.push(format!("\"pdn\":{p}"));
    }
    if let Some(p) = r.pid {
        keys.push(format!("\"pid\":{p}"));
    }
    keys.push(format!("\"comm\":\"{}\"", r.comm));
    format!("{{{}}}", keys.join(","))
}

/// A table file: an optional `time:` line, then the rows in `form`.
fn table(rows: &[Row], form: Form, time: Option<&str>) -> String {
    let mut s = time.map(|t| format!("time: {t}\n")).unwrap_or_default();
    match form {
        Form::Text | Form::TextDetails => rows.iter().for_each(|r| s += &(text_row(r) + "\n")),
        Form::Json | Form::JsonDetails => {
            s += &format!("[{}]\n", rows.iter().map(json_row).collect::<Vec<_>>().join(","));
        }
    }
    s
}

/// The `time:` line a form's file carries here.
fn form_time(form: Form) -> Option<&'static str> {
    matches!(form, Form::TextDetails | Form::JsonDetails).then_some(BEFORE_CAPTURE)
}

// ---------------------------------------------------------------------------------------------
// The NCCL logs (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET)

/// The comm pointer of host h's ring process.
fn comm_ptr(h: u8) -> String {
    format!("0x55d5c8a0{h:02x}0")
}

/// A line of process `pid` (thread `tid`) on host h: `gpu-node-h:pid:tid [dev] NCCL INFO text`.
fn info(h: u8, pid: u32, tid: u32, text: &str) -> String {
    format!("gpu-node-{h}:{pid}:{tid} [0] NCCL INFO {text}")
}

/// The low half of a RoCE v2 GID for 10.0.0.h as NCCL prints it.
fn gid(h: u8) -> String {
    format!("0/{h:02X}00000AFFFF0000")
}

/// A QPN line: NCCL 2.19's wording where `old`, 2.20's otherwise.
fn qpn_line(h: u8, pid: u32, qpn: &str, ib_dev: u32, old: bool) -> String {
    let text = if old {
        format!("NET/IB: Dev {ib_dev} Port 1 qpn {qpn} mtu 5 GID 3 ({})", gid(h))
    } else {
        format!(
            "NET/IB: NCCL Dev {ib_dev} IbDev {ib_dev} Port 1 qpn {qpn} mtu 5 query_ece={{supported=0, vendor_id=0x0, \
             options=0x0, comp_mask=0x0}} GID 3 ({}) fifoRkey=0x1234 fifoLkey=0x5678",
            gid(h)
        )
    };
    info(h, pid, pid + 99, &text)
}

/// The INIT and NET lines of host h's ring process (rank h − 1 of 8): odd hosts run NCCL 2.19,
/// even hosts 2.20 (which also prints `Init START`); it creates the QPs [`send_qp`] and
/// [`recv_qp`] of every stripe, naming each one's IB device (0: mlx5_0, 1: mlx5_1).
fn ring_process(h: u8) -> Vec<String> {
    let (p, rank, old) = (pid(h), h - 1, h % 2 == 1);
    let (main, init) = (p, p + 70);
    let comm_line = |phase: &str| {
        format!(
            "comm {} rank {rank} nranks {RANKS} cudaDev 0 nvmlDev 0 busId 1b000 commId {COMM_ID} - Init {phase}",
            comm_ptr(h)
        )
    };
    let mut lines = vec![info(h, p, main, &format!("Bootstrap : Using eth0:{}<0>", ip(h)))];
    if rank == 0 {
        lines.push(info(h, p, main, "NCCL version 2.19.3+cuda12.2"));
    }
    lines.push(info(h, p, main, "cudaDriverVersion 12020"));
    lines.push(info(h, p, init, "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation"));
    lines.push(info(
        h,
        p,
        init,
        &format!("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:{}<0>", ip(h)),
    ));
    lines.push(info(h, p, init, "Using network IB"));
    if !old {
        lines.push(info(h, p, init, &comm_line("START")));
    }
    lines.push(info(h, p, init, "Setting affinity for GPU 0 to ffff,ffffffff"));
    lines.push(info(h, p, init, &format!("Channel 00/0 : {rank}[0] -> {}[0] [send] via NET/IB/0", (rank + 1) % RANKS)));
    lines.push(info(h, p, init, &format!("Channel 00/0 : {}[0] -> {rank}[0] [receive] via NET/IB/0", prev(h) - 1)));
    for i in 0..STRIPES {
        lines.push(qpn_line(h, p, &send_qp(h, i).to_string(), u32::from(device(i) == "mlx5_1"), old));
    }
    for i in 0..STRIPES {
        lines.push(qpn_line(h, p, &recv_qp(h, i).to_string(), u32::from(device(i) == "mlx5_1"), old));
    }
    lines.push(info(h, p, init, "Connected all rings"));
    lines.push(info(h, p, init, &comm_line("COMPLETE")));
    lines
}

/// Another job's rank 0 on host 1 (pid 5002, 2 ranks, IB), whose QPs 0x1A0 and 0x1A1 lead to a
/// host the capture does not show.
fn other_job_rank0() -> Vec<String> {
    let (h, p) = (1, 5002);
    vec![
        info(h, p, p, "Bootstrap : Using eth0:10.0.0.1<0>"),
        info(h, p, p + 40, "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"),
        info(h, p, p + 40, "Using network IB"),
        info(h, p, p + 40, "Channel 00/0 : 0[1] -> 1[1] [send] via NET/IB/0"),
        qpn_line(h, p, &0x1A0.to_string(), 0, true),
        qpn_line(h, p, &0x1A1.to_string(), 0, true),
        info(
            h,
            p,
            p + 40,
            "comm 0x7f3e4c001230 rank 0 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x1111222233334444 - Init COMPLETE",
        ),
    ]
}

/// The socket fallback on host 1 (pid 5003): it finds no RDMA device and runs on sockets, while
/// the other processes use IB. Its one line using NET/Socket is `Using network Socket`.
fn fallback_process() -> Vec<String> {
    let (h, p) = (1, 5003);
    vec![
        info(h, p, p, "Bootstrap : Using eth0:10.0.0.1<0>"),
        info(h, p, p + 40, "NET/IB : No device found."),
        info(h, p, p + 40, "Using network Socket"),
        info(
            h,
            p,
            p + 40,
            "comm 0x7f9a10003450 rank 0 nranks 1 cudaDev 2 nvmlDev 2 busId 3d000 commId 0x5555666677778888 - Init COMPLETE",
        ),
    ]
}

/// A process on host 1 (pid 5004) that prints other subsystems' INFO lines and a WARN.
fn chatty_process() -> Vec<String> {
    let (h, p) = (1, 5004);
    vec![
        info(h, p, p, "NCCL_IB_HCA set by environment to mlx5_0,mlx5_1"),
        info(h, p, p + 40, "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"),
        info(h, p, p + 40, "Using network IB"),
        info(h, p, p + 40, "Trees [0] -1/-1/-1->1->0 [1] 0/-1/-1->1->-1"),
        info(h, p, p + 40, "P2P Chunksize set to 131072"),
        format!("gpu-node-1:{p}:{} [3] NCCL WARN NET/IB : Got async event : GID table change", p + 49),
        info(h, p, p + 40, "16 coll channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer"),
        info(
            h,
            p,
            p + 40,
            "comm 0x7f3e4c009870 rank 1 nranks 2 cudaDev 3 nvmlDev 3 busId 5e000 commId 0x1111222233334444 - Init COMPLETE",
        ),
    ]
}

/// Output that is no NCCL line at all.
fn noise(h: u8) -> Vec<String> {
    vec![
        format!("[rank{}]: starting training, world size 8", h - 1),
        String::new(),
        "WARNING: Logging before InitGoogleLogging() is written to STDERR".to_string(),
        format!("epoch 0 | step 10 | loss 2.3114 | host gpu-node-{h}"),
    ]
}

/// The lines of several processes as they reach one file: one line of each in turn.
fn interleave(processes: Vec<Vec<String>>) -> String {
    let longest = processes.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    for k in 0..longest {
        for p in &processes {
            if let Some(line) = p.get(k) {
                out += line;
                out += "\n";
            }
        }
    }
    out
}

/// Host h's log: its ring process and other output; host 1's holds 4 processes (the ring's
/// rank 0, another job's two ranks, the socket fallback).
fn ring_log(h: u8) -> String {
    if h == 1 {
        interleave(vec![ring_process(1), other_job_rank0(), fallback_process(), chatty_process(), noise(1)])
    } else {
        interleave(vec![ring_process(h), noise(h)])
    }
}

/// The 1-based number of the one line of `text` containing every one of `parts`.
fn line_number(text: &str, parts: &[&str]) -> usize {
    let found: Vec<usize> =
        text.lines().enumerate().filter(|(_, l)| parts.iter().all(|p| l.contains(p))).map(|(n, _)| n + 1).collect();
    assert_eq!(found.len(), 1, "lines with {parts:?}: {found:?}");
    found[0]
}

// ---------------------------------------------------------------------------------------------
// Running analyze with the files

/// A folder of table and log files, and the arguments naming them.
struct Files {
    dir: tempfile::TempDir,
    args: Vec<String>,
}

impl Files {
    fn new() -> Self {
        Files { dir: tempfile::tempdir().expect("temp dir"), args: Vec::new() }
    }

    /// Writes `text` to `name` and returns its path.
    fn write(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.to_str().expect("UTF-8").to_string()
    }

    /// `--qps 10.0.0.h=FILE` with `text`.
    fn qps(&mut self, h: u8, text: &str) -> String {
        let path = self.write(&format!("host{h}.qps"), text);
        self.args.extend(["--qps".to_string(), format!("{}={path}", ip(h))]);
        path
    }

    /// `--nccl-log 10.0.0.h=FILE` with `text`.
    fn log(&mut self, h: u8, text: &str) -> String {
        let path = self.write(&format!("host{h}.nccl.log"), text);
        self.args.extend(["--nccl-log".to_string(), format!("{}={path}", ip(h))]);
        path
    }

    /// Every host of `hosts` tabled with its ring rows in `form`.
    fn ring_tables(mut self, hosts: impl IntoIterator<Item = u8>, form: Form) -> Self {
        for h in hosts {
            self.qps(h, &table(&ring_rows(h), form, form_time(form)));
        }
        self
    }

    /// Every host's log.
    fn ring_logs(mut self) -> Self {
        for h in 1..=RANKS {
            self.log(h, &ring_log(h));
        }
        self
    }

    fn analyze(&self, c: &Capture) -> Value {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        c.analyze(&args)
    }

    /// Runs `analyze --json ARGS capture` from the files' folder.
    fn run(&self, c: &Capture) -> std::process::Output {
        let capture = c.write();
        common::rocescope()
            .current_dir(self.dir.path())
            .args(["analyze", "--json"])
            .args(&self.args)
            .arg(&capture)
            .output()
            .expect("rocescope runs")
    }
}

fn all_hosts() -> std::ops::RangeInclusive<u8> {
    1..=RANKS
}

// ---------------------------------------------------------------------------------------------
// Reading the report

fn find(r: &Value, src: u8, dst_qp: u32) -> Option<&Value> {
    flows(r).iter().rev().find(|f| f["src_ip"] == json!(ip(src)) && f["dst_qp"] == json!(dst_qp))
}

fn host_number(v: &Value) -> u8 {
    v.as_str().and_then(|s| s.strip_prefix("10.0.0.")).and_then(|n| n.parse().ok()).expect("a ring host address")
}

/// What the fixture says a flow of the ring is.
#[derive(Debug, Clone, Copy)]
struct RingFlow {
    src: u8,
    dst: u8,
    stripe: u32,
    /// WRITEs (to a receiving QP), else ACKs, NAKs and CNPs (to a sending QP)
    data: bool,
}

impl RingFlow {
    fn of(f: &Value) -> Option<RingFlow> {
        let (src, dst, qp) = (host_number(&f["src_ip"]), host_number(&f["dst_ip"]), f["dst_qp"].as_u64()? as u32);
        (0..STRIPES).find_map(|i| {
            if qp == recv_qp(dst, i) && dst == next(src) {
                Some(RingFlow { src, dst, stripe: i, data: true })
            } else if qp == send_qp(dst, i) && src == next(dst) {
                Some(RingFlow { src, dst, stripe: i, data: false })
            } else {
                None
            }
        })
    }

    /// The other direction: to the QP that sends this flow.
    fn true_peer<'r>(&self, r: &'r Value) -> Option<&'r Value> {
        let qp = if self.data { send_qp(self.src, self.stripe) } else { recv_qp(self.src, self.stripe) };
        find(r, self.dst, qp)
    }
}

/// The ring's flows in the report, with what each is (not the datagrams' or the ERR QP's).
fn ring_flows(r: &Value) -> Vec<(&Value, RingFlow)> {
    flows(r).iter().filter_map(|f| Some((f, RingFlow::of(f)?))).collect()
}

fn id(f: &Value) -> &Value {
    &f["id"]
}

fn describe(f: &Value) -> String {
    format!("flow {} {} → {} QP {:#x}", f["id"], f["src_ip"], f["dst_ip"], f["dst_qp"].as_u64().unwrap_or(0))
}

/// Every ring flow whose true peer is in the capture is paired `how` with it; the others have no
/// peer.
fn assert_all_paired(r: &Value, how: &str) {
    for (f, rf) in ring_flows(r) {
        match rf.true_peer(r) {
            Some(peer) => assert_eq!((&f["pairing"], &f["peer"]), (&json!(how), id(peer)), "{}", describe(f)),
            None => assert_eq!(f["peer"], Value::Null, "{}: its peer is not in the capture", describe(f)),
        }
    }
}

/// No flow is paired with anything but its true peer, and the pairing is mutual.
fn assert_no_wrong_pairing(r: &Value) {
    for (f, rf) in ring_flows(r) {
        if f["peer"].is_null() {
            assert_eq!(f["pairing"], Value::Null, "{}: a pairing without a peer", describe(f));
            continue;
        }
        let truth = rf.true_peer(r).map(id);
        assert_eq!(Some(&f["peer"]), truth, "{} (pairing {}) is paired with a stranger", describe(f), f["pairing"]);
        let peer = &flows(r)[f["peer"].as_u64().expect("an id") as usize];
        assert_eq!(&peer["peer"], id(f), "{}: the pairing is not mutual", describe(f));
    }
}

fn finding<'r>(r: &'r Value, code: &str) -> Option<&'r Value> {
    r["findings"].as_array().expect("findings").iter().find(|f| f["code"] == json!(code))
}

fn findings_of<'r>(r: &'r Value, code: &str) -> Vec<&'r Value> {
    r["findings"].as_array().expect("findings").iter().filter(|f| f["code"] == json!(code)).collect()
}

/// The `QP_TABLE_CONFLICT` findings, each a warning: (message, evidence.host).
fn conflicts(r: &Value) -> Vec<(String, String)> {
    findings_of(r, "QP_TABLE_CONFLICT")
        .into_iter()
        .map(|f| {
            assert_eq!(f["severity"], json!("warning"), "{f}");
            let host = f["evidence"]["host"].as_str().unwrap_or_else(|| panic!("no evidence.host: {f}"));
            (f["message"].as_str().unwrap_or_default().to_string(), host.to_string())
        })
        .collect()
}

fn assert_no(r: &Value, code: &str) {
    assert!(finding(r, code).is_none(), "{code}: {}", finding(r, code).unwrap_or(&Value::Null));
}

/// A flow's `owner` or `dst_owner`: `None` when absent or null; an object otherwise.
fn owner<'f>(f: &'f Value, key: &str) -> Option<&'f Map<String, Value>> {
    match f.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(other) => panic!("{}: {key} is neither an object nor null: {other}", describe(f)),
    }
}

/// What a table row says of host h's QP of stripe i.
fn table_owner(h: u8, i: u32) -> Value {
    json!({"host": ip(h), "device": device(i), "pid": pid(h), "comm": command(h)})
}

/// What host h's table and log say of its QP of stripe i.
fn full_owner(h: u8, i: u32) -> Value {
    json!({
        "host": ip(h), "device": device(i), "pid": pid(h), "comm": command(h),
        "rank": h - 1, "nranks": RANKS, "comm_id": COMM_ID,
    })
}

/// What is expected of an owner.
#[derive(Debug, Clone)]
enum Expect {
    /// nothing known: null or absent
    Nothing,
    /// exactly this object
    Exactly(Value),
    /// what host h's log alone says of its QP of stripe i: host, pid, rank, nranks, comm_id; no
    /// `comm` (the command is the table's); `device` may be told from the log's device list
    Log(u8, u32),
}

fn check_owner(f: &Value, key: &str, expect: &Expect) {
    let got = owner(f, key);
    let what = format!("{}: {key}", describe(f));
    match expect {
        Expect::Nothing => assert_eq!(got, None, "{what}"),
        Expect::Exactly(v) => assert_eq!(got.map(|o| Value::Object(o.clone())).as_ref(), Some(v), "{what}"),
        Expect::Log(h, i) => {
            let o = got.unwrap_or_else(|| panic!("{what}: no owner"));
            let expected = json!({"host": ip(*h), "pid": pid(*h), "rank": h - 1, "nranks": RANKS, "comm_id": COMM_ID});
            let mut known = o.clone();
            if let Some(dev) = known.remove("device") {
                assert_eq!(dev, json!(device(*i)), "{what}: device");
            }
            assert_eq!(Value::Object(known), expected, "{what}");
        }
    }
}

/// Checks `owner` (the QP sending the flow: on its source host) and `dst_owner` (the QP it is
/// sent to: on its destination host) of every ring flow, `of(host, stripe)` saying what is
/// expected of a QP.
fn check_owners(r: &Value, of: impl Fn(u8, u32) -> Expect) {
    for (f, rf) in ring_flows(r) {
        check_owner(f, "owner", &of(rf.src, rf.stripe));
        check_owner(f, "dst_owner", &of(rf.dst, rf.stripe));
    }
}

fn episodes(r: &Value) -> &Vec<Value> {
    r["retransmit_episodes"].as_array().expect("retransmit_episodes")
}

fn lossy_data_flow(r: &Value) -> &Value {
    let (rank, i) = LOSSY;
    let (s, d) = (host_of_rank(rank), next(host_of_rank(rank)));
    flow(r, s, recv_qp(d, i))
}

/// The lossy QP's NAK is linked to its resend: one episode, on its data flow, triggered by the
/// NAK, going back N, 1.5 µs from the NAK to the resend of PSN 10.
fn assert_nak_linked_to_resend(r: &Value) {
    let lossy = lossy_data_flow(r);
    let e = episodes(r);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (&e[0]["flow"], &e[0]["trigger"], &e[0]["pattern"], &e[0]["nak_to_resend_ns"]),
        (id(lossy), &json!("nak_psn_seq_err"), &json!("go_back_n"), &json!(1_500)),
        "{}",
        e[0]
    );
}

/// Every data flow of the full ring has its ACKs timed (every WRITE ACKed 1.5 µs later; the
/// lossy QP's some) and its two marks answered 1.4 µs after each.
fn assert_timed(r: &Value) {
    for (f, rf) in ring_flows(r).into_iter().filter(|(_, rf)| rf.data) {
        let lat = &f["ack_latency_ns"];
        assert!(lat["count"].as_u64().is_some_and(|n| n > 0), "{}: no ACK latency: {lat}", describe(f));
        if (rf.src - 1, rf.stripe) != LOSSY {
            assert_eq!((&lat["count"], &lat["min"], &lat["max"]), (&json!(WRITES), &json!(1_500), &json!(1_500)));
        }
        let cc = &f["ce_to_cnp_ns"];
        assert_eq!(
            (&cc["count"], &cc["min"], &cc["max"]),
            (&json!(2), &json!(1_400), &json!(1_400)),
            "{}",
            describe(f)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Every host's table

#[test]
fn every_flow_of_the_ring_is_paired_by_the_hosts_tables_with_its_owners_and_their_ranks() {
    let files = Files::new().ring_tables(all_hosts(), Form::Text).ring_logs();
    let r = files.analyze(&ring());
    assert_eq!((ring_flows(&r).len(), flows(&r).len()), (64, 64), "8 connections × 4 QPs × 2 directions");
    assert_all_paired(&r, "host_table");
    check_owners(&r, |h, i| Expect::Exactly(full_owner(h, i)));
    for code in ["PAIRING_AMBIGUOUS", "CE_WITHOUT_CNP", "DCQCN_NO_REACTION", "QP_TABLE_CONFLICT"] {
        assert_no(&r, code);
    }
    assert_nak_linked_to_resend(&r);
    assert_timed(&r);
    // the report says what was read (lightly: its least pinned keys)
    let tables = r["qp_tables"].as_array().expect("qp_tables");
    assert_eq!(tables.len(), usize::from(RANKS));
    let host1 = tables.iter().find(|t| t["host"] == json!("10.0.0.1")).expect("host 1's table");
    assert_eq!((&host1["rows"], &host1["rows_seen"]), (&json!(ring_rows(1).len()), &json!(RING_ROWS)));
    assert_eq!(r["nccl_logs"].as_array().expect("nccl_logs").len(), usize::from(RANKS));
}

// ---------------------------------------------------------------------------------------------
// 2. One side's tables

/// The odd hosts: every connection of the ring (h → h + 1) has exactly one of its hosts here.
fn tabled(h: u8) -> bool {
    h % 2 == 1
}

#[test]
fn one_side_s_tables_pair_every_connection_and_name_that_side_alone() {
    let tabled_hosts = || all_hosts().filter(|&h| tabled(h));
    let r = Files::new().ring_tables(tabled_hosts(), Form::Text).analyze(&ring());
    assert_all_paired(&r, "host_table");
    for code in ["PAIRING_AMBIGUOUS", "CE_WITHOUT_CNP", "QP_TABLE_CONFLICT"] {
        assert_no(&r, code);
    }
    check_owners(&r, |h, i| if tabled(h) { Expect::Exactly(table_owner(h, i)) } else { Expect::Nothing });
    assert_nak_linked_to_resend(&r);
    assert_timed(&r);
    // with every host's log too: the other side's owners are what its log says (through the
    // pairing for the flows its QPs send)
    let r = Files::new().ring_tables(tabled_hosts(), Form::Text).ring_logs().analyze(&ring());
    assert_all_paired(&r, "host_table");
    check_owners(&r, |h, i| if tabled(h) { Expect::Exactly(full_owner(h, i)) } else { Expect::Log(h, i) });
}

// ---------------------------------------------------------------------------------------------
// 3. No table

#[test]
fn without_tables_no_mark_is_unanswered_and_no_flow_is_paired_wrongly() {
    let r = ring().analyze(&[]);
    assert_no_wrong_pairing(&r);
    assert_no(&r, "CE_WITHOUT_CNP");
    assert_no(&r, "DCQCN_NO_REACTION");
    // the lossy QP pairs by its NAK's hole, which no other QP has
    assert_eq!(lossy_data_flow(&r)["pairing"], json!("nak"));
    assert_nak_linked_to_resend(&r);
    // nothing given, nothing read
    for key in ["qp_tables", "nccl_logs"] {
        assert!(r.get(key).is_none_or(Value::is_null), "{key}: {}", r[key]);
    }
}

#[test]
fn without_tables_only_flows_paired_by_evidence_are_timed() {
    for (what, c) in [("ring", ring()), ("spine", spine())] {
        let r = c.analyze(&[]);
        for (f, _) in ring_flows(&r).into_iter().filter(|(_, rf)| rf.data) {
            if f["pairing"].is_null() {
                assert_eq!(f["ack_latency_ns"]["count"], json!(0), "{what}: {}: ACK latency from a guess", describe(f));
                assert_eq!(f["ce_to_cnp_ns"]["count"], json!(0), "{what}: {}: CE→CNP from a guess", describe(f));
            } else {
                assert!(f["ack_latency_ns"]["count"].as_u64().is_some_and(|n| n > 0), "{what}: {}", describe(f));
            }
        }
        for e in episodes(&r) {
            let f = &flows(&r)[e["flow"].as_u64().expect("a flow") as usize];
            if f["pairing"].is_null() {
                assert_eq!(e["nak_to_resend_ns"], Value::Null, "{what}: {}: NAK-to-resend from a guess", describe(f));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. At a spine

#[test]
fn at_a_spine_mirror_the_tables_pair_every_flow_present_with_its_true_peer() {
    let c = spine();
    let r = Files::new().ring_tables(all_hosts(), Form::Text).analyze(&c);
    // the fixture: flows whose reverse holds only CNPs (j = 0), only ACKs of PSN ≥ 20 (j = 3),
    // and ACK flows whose reverse is not in the capture at all (j = 2)
    let without_peer = ring_flows(&r).iter().filter(|(_, rf)| rf.true_peer(&r).is_none()).count();
    assert_eq!(without_peer, usize::from(RANKS), "one ACK flow per connection has no WRITEs here");
    assert_all_paired(&r, "host_table");
    assert_no_wrong_pairing(&r);
    assert_no(&r, "QP_TABLE_CONFLICT");
    assert_nak_linked_to_resend(&r);
}

#[test]
fn at_a_spine_mirror_without_tables_no_flow_is_paired_wrongly() {
    let r = spine().analyze(&[]);
    assert_no_wrong_pairing(&r);
}

// ---------------------------------------------------------------------------------------------
// 5. The table forms and what contradicts them

#[test]
fn tables_in_text_d_j_and_jd_form_pair_and_name_alike() {
    let c = with_datagrams(ring());
    for form in FORMS {
        let r = Files::new().ring_tables(all_hosts(), form).analyze(&c);
        assert_eq!(ring_flows(&r).len(), 64, "{form:?}");
        for (f, rf) in ring_flows(&r) {
            let peer = rf.true_peer(&r).expect("the full ring has every flow's peer");
            assert_eq!((&f["pairing"], &f["peer"]), (&json!("host_table"), id(peer)), "{form:?}: {}", describe(f));
            check_owner(f, "owner", &Expect::Exactly(table_owner(rf.src, rf.stripe)));
            check_owner(f, "dst_owner", &Expect::Exactly(table_owner(rf.dst, rf.stripe)));
        }
        // the UD rows name the datagrams' QPs but pair nothing
        let ud_owner =
            |h: u8| Expect::Exactly(json!({"host": ip(h), "device": "mlx5_0", "pid": pid(h), "comm": command(h)}));
        for (src, dst) in [(1u8, 2u8), (2, 1)] {
            let f = flow(&r, src, ud_qp(dst));
            assert_eq!(f["transport"], json!("UD"), "{form:?}");
            assert_ne!(f["pairing"], json!("host_table"), "{form:?}: {}", describe(f));
            check_owner(f, "owner", &ud_owner(src));
            check_owner(f, "dst_owner", &ud_owner(dst));
        }
        assert_no(&r, "PAIRING_AMBIGUOUS");
        assert_no(&r, "QP_TABLE_CONFLICT");
        let tables = r["qp_tables"].as_array().expect("qp_tables");
        let host1 = tables.iter().find(|t| t["host"] == json!("10.0.0.1")).expect("host 1's table");
        // the ring's QPs and the UD QP
        assert_eq!((&host1["rows"], &host1["rows_seen"]), (&json!(ring_rows(1).len()), &json!(RING_ROWS + 1)));
    }
}

#[test]
fn a_qp_in_err_state_carrying_traffic_after_the_table_s_time_is_a_conflict() {
    let c = with_err_qp_traffic(ring());
    for form in [Form::Text, Form::Json] {
        // host 3's table, taken a second before the capture, says its QP 0x3E0 is in ERR
        let mut files = Files::new().ring_tables(all_hosts().filter(|&h| h != 3), form);
        files.qps(3, &table(&ring_rows(3), form, Some(BEFORE_CAPTURE)));
        let r = files.analyze(&c);
        // nothing else contradicts a table: every conflict is host 3's
        let conflicts = conflicts(&r);
        assert!(!conflicts.is_empty(), "{form:?}: no QP_TABLE_CONFLICT");
        assert!(conflicts.iter().all(|(_, host)| host == "10.0.0.3"), "{form:?}: {conflicts:?}");
        // taken after the capture: the QP may have failed after its traffic
        let mut files = Files::new().ring_tables(all_hosts().filter(|&h| h != 3), form);
        files.qps(3, &table(&ring_rows(3), form, Some(AFTER_CAPTURE)));
        assert_no(&files.analyze(&c), "QP_TABLE_CONFLICT");
    }
}

#[test]
fn a_qp_the_table_calls_ud_carrying_rc_writes_is_a_conflict() {
    // host 2's table calls its receiving QP of stripe 1 a UD QP: host 1 sends it RC WRITEs
    let mut rows = ring_rows(2);
    let row = rows.iter_mut().find(|r| r.lqpn == recv_qp(2, 1)).expect("the row");
    *row = ud_row(2, recv_qp(2, 1));
    let mut files = Files::new().ring_tables(all_hosts().filter(|&h| h != 2), Form::Text);
    files.qps(2, &table(&rows, Form::Text, None));
    let r = files.analyze(&ring());
    let conflicts = conflicts(&r);
    assert!(conflicts.iter().any(|(_, host)| host == "10.0.0.2"), "{conflicts:?}");
}

#[test]
fn two_tables_pairing_a_flow_with_different_qps_are_a_conflict() {
    // host 1's table pairs its sending QP of stripe 0 with host 2's receiving QP of stripe 1;
    // host 2's says its receiving QP of stripe 0 answers host 1's sending QP of stripe 0
    let mut rows = ring_rows(1);
    rows.iter_mut().find(|r| r.lqpn == send_qp(1, 0)).expect("the row").rqpn = Some(recv_qp(2, 1));
    let mut files = Files::new().ring_tables(all_hosts().filter(|&h| h != 1), Form::Text);
    files.qps(1, &table(&rows, Form::Text, None));
    let r = files.analyze(&ring());
    let conflicts = conflicts(&r);
    assert!(!conflicts.is_empty(), "no QP_TABLE_CONFLICT");
    assert!(conflicts.iter().all(|(_, host)| host == "10.0.0.1" || host == "10.0.0.2"), "{conflicts:?}");
}

// ---------------------------------------------------------------------------------------------
// 6. NCCL logs

#[test]
fn nccl_logs_give_the_qps_owners_their_ranks() {
    let r = Files::new().ring_logs().analyze(&ring());
    // every flow goes to a QP some log names
    for (f, rf) in ring_flows(&r) {
        check_owner(f, "dst_owner", &Expect::Log(rf.dst, rf.stripe));
    }
    // through the pairing (the lossy QP's NAK): the owner of the flows those QPs send
    let lossy = lossy_data_flow(&r);
    let (rank, i) = LOSSY;
    let (s, d) = (host_of_rank(rank), next(host_of_rank(rank)));
    assert_eq!(lossy["peer"], *id(flow(&r, d, send_qp(s, i))));
    check_owner(lossy, "owner", &Expect::Log(s, i));
    check_owner(flow(&r, d, send_qp(s, i)), "owner", &Expect::Log(d, i));
    let logs = r["nccl_logs"].as_array().expect("nccl_logs");
    let host1 = logs.iter().find(|l| l["host"] == json!("10.0.0.1")).expect("host 1's log");
    assert_eq!((&host1["processes"], &host1["warnings"]), (&json!(4), &json!(0)));
}

#[test]
fn a_process_on_sockets_while_others_use_ib_is_a_socket_fallback() {
    let mut files = Files::new().ring_tables(all_hosts(), Form::Text);
    let text = ring_log(1);
    let path = files.log(1, &text);
    for h in 2..=RANKS {
        files.log(h, &ring_log(h));
    }
    let r = files.analyze(&ring());
    let fallbacks = findings_of(&r, "NCCL_SOCKET_FALLBACK");
    assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
    let line = line_number(&text, &[":5003:", "Using network Socket"]);
    assert_eq!(
        (&fallbacks[0]["severity"], &fallbacks[0]["evidence"]["host"], &fallbacks[0]["evidence"]["lines"]),
        (&json!("error"), &json!("10.0.0.1"), &json!([format!("{path}:{line}")]))
    );
    // errors first
    assert_eq!(r["findings"][0]["severity"], json!("error"));
}

#[test]
fn no_rdma_device_and_no_ib_user_elsewhere_is_no_socket_fallback() {
    let (h, p) = (5, 6001);
    let lines = vec![
        info(h, p, p, "Bootstrap : Using eth0:10.0.0.5<0>"),
        info(h, p, p + 1, "NET/IB : No device found."),
        info(h, p, p + 1, "NET/Socket : Using [0]eth0:10.0.0.5<0>"),
        info(h, p, p + 1, "Using network Socket"),
        info(h, p, p + 1, "Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0"),
        info(
            h,
            p,
            p + 1,
            "comm 0x55d5c8a00990 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x0123456789abcdef - Init COMPLETE",
        ),
    ];
    let mut files = Files::new();
    files.log(h, &interleave(vec![lines, noise(h)]));
    let out = files.run(&ring());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert_no(&r, "NCCL_SOCKET_FALLBACK");
}

#[test]
fn a_process_listing_rdma_devices_whose_channels_go_via_sockets_falls_back() {
    // alone in the logs: it listed RDMA devices, then connected its channel over sockets
    let (h, p) = (5, 6002);
    let lines = vec![
        info(h, p, p + 1, "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.5<0>"),
        info(
            h,
            p,
            p + 1,
            "comm 0x55d5c8a00aa0 rank 4 nranks 8 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x0123456789abcdef - Init COMPLETE",
        ),
        info(h, p, p + 1, "Channel 00/0 : 4[0] -> 5[0] [send] via NET/Socket/0"),
    ];
    let mut files = Files::new();
    let text = interleave(vec![lines]);
    let path = files.log(h, &text);
    let r = files.analyze(&ring());
    let f = finding(&r, "NCCL_SOCKET_FALLBACK").expect("NCCL_SOCKET_FALLBACK");
    assert_eq!((&f["severity"], &f["evidence"]["host"]), (&json!("error"), &json!("10.0.0.5")));
    let channel = format!("{path}:{}", line_number(&text, &["via NET/Socket/0"]));
    let lines = f["evidence"]["lines"].as_array().expect("lines");
    assert!(lines.contains(&json!(channel)), "{lines:?} lacks {channel}");
    assert!(lines.iter().all(|l| l.as_str().is_some_and(|l| l.starts_with(&format!("{path}:")))), "{lines:?}");
}

/// Does `stderr` have a line naming `file` and its line `n` (`line n` or `file:n`)?
fn names_file_and_line(stderr: &str, file: &str, n: usize) -> bool {
    let ends_number = |rest: &str| !rest.starts_with(|c: char| c.is_ascii_digit());
    stderr.lines().any(|l| {
        l.contains(file)
            && (l.match_indices(&format!("line {n}")).any(|(k, m)| ends_number(&l[k + m.len()..]))
                || l.match_indices(&format!("{file}:{n}")).any(|(k, m)| ends_number(&l[k + m.len()..])))
    })
}

#[test]
fn an_unreadable_nccl_line_is_a_warning_naming_file_and_line() {
    let mut text = ring_log(2);
    text += &qpn_line(2, pid(2), "abc", 0, true);
    text += "\n";
    text += &noise(2).join("\n");
    text += "\n";
    let line = line_number(&text, &["qpn abc"]);
    let mut files = Files::new();
    files.log(2, &text);
    let out = files.run(&ring());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(names_file_and_line(&stderr, "host2.nccl.log", line), "line {line} not named: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    // the rest of the log is read
    check_owner(flow(&r, 1, recv_qp(2, 0)), "dst_owner", &Expect::Log(2, 0));
    assert_eq!(r["nccl_logs"][0]["warnings"], json!(1));
}

// ---------------------------------------------------------------------------------------------
// 7. Bad input

#[test]
fn a_malformed_table_is_exit_status_2_naming_the_file_and_line() {
    let rows = ring_rows(1);
    let good = |from: usize, to: usize| rows[from..to].iter().map(|r| text_row(r) + "\n").collect::<String>();
    let too_big = Row { lqpn: 0x100_0000, ..rows[2].clone() };
    let cases: Vec<(&str, String, usize)> = vec![
        // a line that is no QP row, after the time line and three rows
        ("no row", format!("time: {BEFORE_CAPTURE}\n{}link mlx5_0/1 this is no qp row\n{}", good(0, 3), good(3, 5)), 5),
        // a QPN above 0xFFFFFF on the third line
        ("qpn too big", format!("{}{}\n{}", good(0, 2), text_row(&too_big), good(3, 4)), 3),
        // JSON cut short
        (
            "broken json",
            {
                let full = table(&rows, Form::Json, None);
                full[..full.len() / 2].to_string() + "\n"
            },
            1,
        ),
    ];
    for (what, text, line) in cases {
        let mut files = Files::new();
        let dir = files.dir.path().to_path_buf();
        std::fs::write(dir.join("bad.qps"), &text).expect("write");
        // named as given: relative to the folder rocescope runs in
        files.args = vec!["--qps".into(), "10.0.0.1=bad.qps".into()];
        let out = files.run(&ring());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: one line: {stderr}");
        assert!(stderr.contains("bad.qps") && names_file_and_line(&stderr, "bad.qps", line), "{what}: {stderr}");
    }
}

#[test]
fn tables_and_logs_naming_hosts_and_qps_the_capture_lacks_are_fine() {
    let mut files = Files::new();
    // host 1's QPs of another job; a host the capture never shows
    let stranger = |h: u8, lqpn: u32| rc_row(h, "mlx5_0", lqpn, 0x9A0, "RTS");
    files.qps(1, &table(&[gsi_row("mlx5_0"), stranger(1, 0x1A0), stranger(1, 0x1A1)], Form::Text, None));
    files.qps(42, &table(&[stranger(42, 0x2A0)], Form::Json, Some(BEFORE_CAPTURE)));
    files.log(42, &interleave(vec![other_job_rank0()]));
    let out = files.run(&ring());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let tables = r["qp_tables"].as_array().expect("qp_tables");
    let seen: BTreeSet<String> = tables.iter().map(|t| format!("{}={}", t["host"], t["rows_seen"])).collect();
    assert_eq!(seen, BTreeSet::from(["\"10.0.0.1\"=0".to_string(), "\"10.0.0.42\"=0".to_string()]));
    assert_no_wrong_pairing(&r);
}

// ---------------------------------------------------------------------------------------------
// 8. What would settle an ambiguity

#[test]
fn pairing_ambiguous_names_a_host_whose_table_would_settle_it() {
    let r = ring().analyze(&[]);
    let f = finding(&r, "PAIRING_AMBIGUOUS").expect("PAIRING_AMBIGUOUS");
    let message = f["message"].as_str().expect("a message");
    let named: Vec<u8> = message
        .match_indices("--qps 10.0.0.")
        .filter_map(|(k, m)| {
            let rest = &message[k + m.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            rest[digits.len()..].starts_with('=').then(|| digits.parse().ok()).flatten()
        })
        .collect();
    assert!(!named.is_empty(), "no `--qps 10.0.0.N=` in {message:?}");
    assert!(named.iter().all(|n| (1..=RANKS).contains(n)), "{named:?}: not a host of the ring in {message:?}");
}

#[test]
fn a_table_of_several_devices_pairs_only_the_qp_numbers_they_do_not_share() {
    // host 1 has an address per RDMA device; rail 0 (mlx5_0, 10.0.0.1) and rail 1 (mlx5_1)
    // both have a QP 267. The capture is of rail 0: host 2's QP 300 talks to rail 0's QP 267
    let (a, b) = (Side { n: 1, qpn: 267 }, Side { n: 2, qpn: 300 });
    let mut c = Capture::new();
    for psn in 0..4u32 {
        c.add(T0 + i64::from(psn) * 2 * US, &write_only(b, a, psn, true));
        c.add(T0 + i64::from(psn) * 2 * US + US, &ack(a, b, psn, 0x1F));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let table = dir.path().join("host1.qps");
    std::fs::write(
        &table,
        "link mlx5_0/1 lqpn 267 rqpn 300 type RC state RTS sq-psn 4 pid 11 comm rail0 \n\
         link mlx5_1/1 lqpn 267 rqpn 268 type RC state RTS sq-psn 9 pid 12 comm rail1 \n",
    )
    .expect("a table");
    // the whole table: which device's QP 267 the flow is, is not known; the evidence pairs it
    let whole = c.analyze(&["--qps", &format!("10.0.0.1={}", table.display())]);
    let writes = flow(&whole, 2, 267);
    assert_ne!(writes["pairing"], json!("host_table"));
    assert_eq!(writes["dst_owner"]["host"], json!("10.0.0.1"));
    assert!(writes["dst_owner"].get("pid").is_none(), "two devices' owners: {}", writes["dst_owner"]);
    // the table of rail 0's device pairs it, and names its owner
    let rail0 = c.analyze(&["--qps", &format!("10.0.0.1@mlx5_0={}", table.display())]);
    let writes = flow(&rail0, 2, 267);
    assert_eq!((&writes["pairing"], &writes["peer"]), (&json!("host_table"), &flow(&rail0, 1, 300)["id"]));
    assert_eq!((&writes["dst_owner"]["pid"], &writes["dst_owner"]["comm"]), (&json!(11), &json!("rail0")));
}

/// `reports/qp_identity.json`, `.txt` and `.html`: host A's tap of samples/path (two QPs in
/// lock-step, which no packet pairs) with host A's QP table and NCCL log in samples/qps/
/// (regenerate with UPDATE_REPORTS=1, as the other reports).
#[test]
fn the_qp_identity_samples_report_is_up_to_date() {
    let (table, log) = ("10.0.0.1=samples/qps/10.0.0.1.json", "10.0.0.1=samples/qps/10.0.0.1.nccl.log");
    common::reports_kept_up_to_date("qp_identity", &["--qps", table, "--nccl-log", log, "samples/path/host_a.pcapng"]);
}
