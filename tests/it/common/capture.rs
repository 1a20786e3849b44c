//! Hand-built captures for the analysis tests: two sides of a connection, the frames they
//! exchange, and running `analyze --json` on the capture.

use std::path::{Path, PathBuf};

use rocescope::generate::encode::{self, BthRepr, L2, L3, RoceFrame};
use rocescope::output::packet::capture_file::CaptureWriter;
use rocescope_parsers::ext::{Aeth, Deth, ExtHeaders, Reth};
use serde_json::{Value, json};

pub const MS: i64 = 1_000_000;
pub const T0: i64 = 1_700_000_000_000_000_000;
pub const US: i64 = 1_000;

/// One side of a connection: its MAC, IP and the QPN its peer sends to.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    pub n: u8,
    pub qpn: u32,
}

pub fn frame(from: Side, to: Side, opcode: u8, psn: u32, ext: ExtHeaders, payload: usize) -> RoceFrame {
    RoceFrame {
        l2: L2::new([2, 0, 0, 0, 0, from.n], [2, 0, 0, 0, 0, to.n]),
        l3: L3::v4([10, 0, 0, from.n], [10, 0, 0, to.n]),
        udp_sport: 0xC000 + u16::from(from.n),
        udp_dport: 4791,
        bth: BthRepr::new(opcode, to.qpn, psn),
        ext,
        payload: vec![7; payload],
    }
}

pub fn write_only(from: Side, to: Side, psn: u32, ack_req: bool) -> RoceFrame {
    let mut f = frame(
        from,
        to,
        0x0A,
        psn,
        ExtHeaders { reth: Some(Reth { va: 0, rkey: 1, dma_len: 64 }), ..ExtHeaders::default() },
        64,
    );
    f.bth.ack_req = ack_req;
    f
}

pub fn ack(from: Side, to: Side, psn: u32, syndrome: u8) -> RoceFrame {
    frame(from, to, 0x11, psn, ExtHeaders { aeth: Some(Aeth { syndrome, msn: 1 }), ..ExtHeaders::default() }, 0)
}

pub struct Capture {
    dir: tempfile::TempDir,
    pub frames: Vec<(i64, Vec<u8>)>,
    /// The pcap file's link type (1, Ethernet, unless set).
    pub link_type: u32,
}

impl Capture {
    pub fn new() -> Self {
        Capture { dir: tempfile::tempdir().expect("temp dir"), frames: Vec::new(), link_type: 1 }
    }

    /// An empty capture of another link type.
    pub fn of_link_type(link_type: u32) -> Self {
        Capture { link_type, ..Capture::new() }
    }

    pub fn add(&mut self, ts: i64, f: &RoceFrame) -> &mut Self {
        self.frames.push((ts, f.encode()));
        self
    }

    /// Puts the frames in time order (frames added at one time keep their order).
    pub fn by_time(&mut self) -> &mut Self {
        self.frames.sort_by_key(|(ts, _)| *ts);
        self
    }

    pub fn add_bytes(&mut self, ts: i64, bytes: Vec<u8>) -> &mut Self {
        self.frames.push((ts, bytes));
        self
    }

    pub fn write(&self) -> PathBuf {
        let path = self.dir.path().join("capture.pcap");
        let mut w =
            CaptureWriter::pcap(std::fs::File::create(&path).expect("create"), self.link_type, 65535, true, false)
                .expect("header");
        for (ts, bytes) in &self.frames {
            w.packet(0, *ts, bytes).expect("record");
        }
        w.finish().expect("flush");
        path
    }

    pub fn analyze(&self, extra: &[&str]) -> Value {
        analyze_file(&self.write(), extra)
    }
}

pub fn analyze_file(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["analyze", "--json"];
    args.extend_from_slice(extra);
    args.push(path.to_str().expect("UTF-8"));
    serde_json::from_str(&super::run_ok(&args)).expect("JSON report")
}

pub fn flow(report: &Value, src: u8, dst_qp: u32) -> &Value {
    let ip = format!("10.0.0.{src}");
    report["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .rev()
        .find(|f| f["src_ip"] == json!(ip) && f["dst_qp"] == json!(dst_qp))
        .unwrap_or_else(|| panic!("no flow {ip} → {dst_qp}"))
}

pub const A: Side = Side { n: 1, qpn: 0x100 };
pub const B: Side = Side { n: 2, qpn: 0x200 };

/// CM ConnectRequest / ConnectReply for A (QPN `a_qpn`, PSN `a_psn`) and B, sent as NICs
/// send them: to QP 1 at DSCP 0, Not-ECT.
pub fn cm_exchange(c: &mut Capture, t: i64, comm_id: u32, a_qpn: u32, a_psn: u32, b_qpn: u32, b_psn: u32) {
    let gsi = |from: Side, to: Side, psn: u32, mad: Vec<u8>| {
        let mut f = frame(
            from,
            Side { qpn: 1, ..to },
            0x64,
            psn,
            ExtHeaders { deth: Some(Deth { qkey: 0x8001_0000, src_qp: 1 }), ..ExtHeaders::default() },
            0,
        );
        f.payload = mad;
        f.l3 = f.l3.with_qos(0, 0);
        f
    };
    let req = encode::cm_mad(
        0x10,
        1,
        &[(0, &comm_id.to_be_bytes()), (32, &encode::u24(a_qpn)), (44, &encode::u24(a_psn)), (50, &[0x37])],
    );
    let rep = encode::cm_mad(
        0x13,
        1,
        &[
            (0, &(comm_id + 1).to_be_bytes()),
            (4, &comm_id.to_be_bytes()),
            (12, &encode::u24(b_qpn)),
            (20, &encode::u24(b_psn)),
        ],
    );
    c.add(t, &gsi(A, B, comm_id, req));
    c.add(t + US, &gsi(B, A, comm_id, rep));
}

/// An RDMA READ request of `len` bytes.
pub fn read_request(from: Side, to: Side, psn: u32, len: u32) -> RoceFrame {
    let mut f = frame(
        from,
        to,
        0x0C,
        psn,
        ExtHeaders { reth: Some(Reth { va: 0x1000, rkey: 7, dma_len: len }), ..ExtHeaders::default() },
        0,
    );
    f.bth.ack_req = true;
    f
}

/// The READ responses to a READ at `psn` of `packets` packets of `pmtu` bytes.
pub fn read_responses(from: Side, to: Side, psn: u32, packets: u32, pmtu: usize) -> Vec<RoceFrame> {
    (0..packets)
        .map(|i| {
            let opcode = match (i, packets) {
                (_, 1) => 0x10,
                (0, _) => 0x0D,
                (i, n) if i + 1 == n => 0x0F,
                _ => 0x0E,
            };
            let aeth = (opcode != 0x0E).then_some(Aeth { syndrome: 0x1F, msn: 1 });
            frame(from, to, opcode, psn + i, ExtHeaders { aeth, ..ExtHeaders::default() }, pmtu)
        })
        .collect()
}

/// A NAK (PSN sequence error) naming the expected PSN `psn`.
pub fn nak(from: Side, to: Side, psn: u32) -> RoceFrame {
    ack(from, to, psn, 0x60)
}

/// The frames of `packets --format jsonl` on a capture.
pub fn frames_of(c: &Capture) -> Vec<Value> {
    super::jsonl(&c.write(), &[])
}

/// How many frames of `frames` have the sequence class `class`.
pub fn count_class(frames: &[Value], class: &str) -> usize {
    frames.iter().filter(|f| f["seq_class"] == json!(class)).count()
}

/// The sequence counters of a flow (or of one of its PSN spaces).
pub fn counts(f: &Value) -> [u64; 4] {
    ["gaps", "missing_psns", "retransmitted", "late_arrivals"].map(|k| f[k].as_u64().unwrap_or(u64::MAX))
}

pub fn flows(r: &Value) -> &Vec<Value> {
    r["flows"].as_array().expect("flows")
}

pub fn codes(r: &Value) -> Vec<String> {
    r["findings"].as_array().expect("findings").iter().map(|f| f["code"].as_str().unwrap_or("").to_string()).collect()
}

/// WRITE packets 1 µs apart from `from` to `to`, one per PSN of `order`.
pub fn stream(c: &mut Capture, from: Side, to: Side, order: &[u32], t0: i64) {
    for (i, psn) in order.iter().enumerate() {
        c.add(t0 + i as i64 * US, &write_only(from, to, *psn, false));
    }
}

/// An RNR NAK naming `psn`, the request the responder had no receive WQE for, with the RNR
/// timer code `timer` (AETH syndrome 001 and the code in its low 5 bits).
pub fn rnr_nak(from: Side, to: Side, psn: u32, timer: u8) -> RoceFrame {
    ack(from, to, psn, 0x20 | (timer & 0x1F))
}
