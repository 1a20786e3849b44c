//! Property tests: every header the generator builds decodes back to the values it was built
//! from (through any mirror encapsulation); a capture split into two files analyses as the
//! whole does; one thread or several give the same report; reordering within the reorder
//! window is never loss; display filters never panic, whatever their text or the frame. (PSN arithmetic's properties are
//! in `parsers/src/psn.rs`.)

use crate::common;

use std::net::IpAddr;

use proptest::prelude::*;
use rocescope::analyze::Analyzer;
use rocescope::analyze::frame::FrameSummary;
use rocescope::capture::{CaptureReader, Inputs, LinkType, Record};
use rocescope::decode::{Body, Decoder, EncapKind, IcrcStatus, Network};
use rocescope::generate::all_scenarios;
use rocescope::generate::encode::{self, Addresses, BthRepr, L2, L3, RoceFrame};
use rocescope::output::packet::capture_file::CaptureWriter;
use rocescope_parsers::ext::{Aeth, AtomicAckEth, AtomicEth, Deth, ExtHeaders, Feth, Ieth, Rdeth, Reth, Xrceth};
use rocescope_parsers::mac_control::MacControl;
use rocescope_parsers::opcode;

fn decode(frame: &[u8]) -> rocescope::decode::DecodedFrame<'_> {
    let record =
        Record { ts_ns: 0, orig_len: frame.len() as u32, data: frame, link_type: LinkType::ETHERNET, offset: 0 };
    Decoder::default().decode(&record)
}

/// Every opcode the opcode table defines.
fn defined_opcodes() -> Vec<u8> {
    (0..=255u8).filter(|op| opcode::info(*op).is_some()).collect()
}

fn u24() -> impl Strategy<Value = u32> {
    0..(1u32 << 24)
}

prop_compose! {
    /// A value for every extended header; the encoder writes those the opcode calls for.
    fn any_ext()(
        ee_context in u24(), qkey in any::<u32>(), src_qp in u24(), xrc_srq in u24(), feth in any::<u32>(),
        va in any::<u64>(), rkey in any::<u32>(), dma_len in any::<u32>(), swap_add in any::<u64>(),
        compare in any::<u64>(), syndrome in any::<u8>(), msn in u24(), orig in any::<u64>(), imm in any::<u32>(),
        inv_rkey in any::<u32>(),
    ) -> ExtHeaders {
        ExtHeaders {
            rdeth: Some(Rdeth { ee_context }),
            deth: Some(Deth { qkey, src_qp }),
            xrceth: Some(Xrceth { xrc_srq }),
            feth: Some(Feth { raw: feth }),
            reth: Some(Reth { va, rkey, dma_len }),
            atomic_eth: Some(AtomicEth { va, rkey, swap_add, compare }),
            aeth: Some(Aeth { syndrome, msn }),
            atomic_ack_eth: Some(AtomicAckEth { orig }),
            imm: Some(imm),
            ieth: Some(Ieth { rkey: inv_rkey }),
        }
    }
}

/// The headers of `all` that `opcode` carries.
fn carried(opcode: u8, all: ExtHeaders) -> ExtHeaders {
    opcode::info(opcode).map_or_else(ExtHeaders::default, |i| all.only(i.ext))
}

prop_compose! {
    fn any_l3()(kind in 0..3u8, a in any::<[u8; 16]>(), b in any::<[u8; 16]>(), dscp in 0..64u8, ecn in 0..4u8,
                ttl in any::<u8>(), flow_label in 0..(1u32 << 20)) -> L3 {
        let v4 = |x: [u8; 16]| [x[0], x[1], x[2], x[3]];
        let addresses = match kind {
            0 => Addresses::V4 { src: v4(a), dst: v4(b) },
            1 => Addresses::V6 { src: a, dst: b },
            _ => Addresses::Grh { sgid: a, dgid: b },
        };
        L3 { addresses, dscp, ecn, ttl, flow_label: if kind == 0 { 0 } else { flow_label } }
    }
}

prop_compose! {
    fn any_roce_frame()(
        opcode in prop::sample::select(defined_opcodes()),
        src in any::<[u8; 6]>(), dst in any::<[u8; 6]>(),
        vlans in prop::collection::vec((0..8u8, 0..4096u16), 0..3),
        l3 in any_l3(), udp_sport in any::<u16>(),
        solicited in any::<bool>(), mig_req in any::<bool>(), pkey in any::<u16>(), fecn in any::<bool>(),
        becn in any::<bool>(), dest_qp in u24(), ack_req in any::<bool>(), psn in u24(),
        ext in any_ext(), payload_len in 0..300usize, fill in any::<u8>(),
    ) -> RoceFrame {
        let l2 = vlans.iter().fold(L2::new(src, dst), |l2, (pcp, vid)| l2.tagged(*pcp, *vid));
        let payload_len = if opcode::info(opcode).is_some_and(|i| i.payload) { payload_len } else { 0 };
        RoceFrame {
            l2, l3, udp_sport, udp_dport: 4791,
            bth: BthRepr { opcode, solicited, mig_req, pad_count: 0, tver: 0, pkey, fecn, becn, dest_qp, ack_req, psn },
            ext: carried(opcode, ext),
            payload: vec![fill; payload_len],
        }
    }
}

/// Wraps a frame in a mirror encapsulation: 0 none, 1 ERSPAN II, 2 ERSPAN III, 3 VXLAN, 4 GRE.
fn wrap(kind: u8, id: u16, inner: &[u8]) -> Vec<u8> {
    let outer = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    let (src, dst) = ([192, 0, 2, 1], [192, 0, 2, 2]);
    match kind {
        1 => encode::erspan2(&outer, src, dst, id & 0x3FF, Some(u32::from(id)), inner),
        2 => encode::erspan3(&outer, src, dst, id & 0x3FF, u32::from(id), false, inner),
        3 => encode::vxlan(&outer, src, dst, u32::from(id), inner),
        4 => encode::gre_ethernet(&outer, src, dst, u32::from(id), inner),
        _ => inner.to_vec(),
    }
}

proptest! {
    #[test]
    fn roce_frames_decode_to_the_fields_they_were_built_from(f in any_roce_frame(), encap in 0..5u8, id in any::<u16>()) {
        let bytes = wrap(encap, id, &f.encode());
        let p = decode(&bytes);
        // the mirror encapsulation, with its identifier
        let kinds: Vec<_> = p.encaps.iter().map(|e| e.kind).collect();
        match (encap, kinds.as_slice()) {
            (0, []) | (1, [EncapKind::Erspan2(_)]) | (2, [EncapKind::Erspan3(_)]) => {}
            (3, [EncapKind::Vxlan { vni }]) => prop_assert_eq!(*vni, u32::from(id)),
            (4, [EncapKind::Gre { key, .. }]) => prop_assert_eq!(*key, Some(u32::from(id))),
            (kind, other) => prop_assert!(false, "encapsulation {} decoded as {:?}", kind, other),
        }
        // Ethernet and VLAN tags
        let eth = p.eth.expect("Ethernet");
        prop_assert_eq!((eth.header.source().0, eth.header.destination().0), (f.l2.src, f.l2.dst));
        let tags: Vec<(u8, u16)> = eth.vlans.iter().map(|t| (t.pcp(), t.vid())).collect();
        let built: Vec<(u8, u16)> = f.l2.vlans.iter().map(|(_, pcp, vid)| (*pcp, *vid)).collect();
        prop_assert_eq!(tags, built);
        // the network layer
        let net = p.net.expect("network layer");
        prop_assert_eq!(net.ttl(), Some(f.l3.ttl));
        match (f.l3.addresses, net) {
            (Addresses::V4 { src, dst }, Network::Ipv4(_)) => {
                prop_assert_eq!((p.src_ip(), p.dst_ip()), (Some(IpAddr::from(src)), Some(IpAddr::from(dst))));
                prop_assert_eq!((net.dscp(), net.ecn()), (Some(f.l3.dscp), Some(f.l3.ecn)));
            }
            (Addresses::V6 { src, dst }, Network::Ipv6(ip)) => {
                prop_assert_eq!((ip.source(), ip.destination(), ip.flow_label()), (src, dst, f.l3.flow_label));
                prop_assert_eq!((net.dscp(), net.ecn()), (Some(f.l3.dscp), Some(f.l3.ecn)));
            }
            (Addresses::Grh { sgid, dgid }, Network::Grh(grh)) => {
                let g = grh.fields();
                prop_assert_eq!((g.source(), g.destination(), g.flow_label()), (sgid, dgid, f.l3.flow_label));
                prop_assert_eq!(g.traffic_class(), (f.l3.dscp << 2) | f.l3.ecn);
            }
            (built, decoded) => prop_assert!(false, "{:?} decoded as {:?}", built, decoded),
        }
        if !matches!(f.l3.addresses, Addresses::Grh { .. }) {
            let udp = p.udp.expect("UDP");
            prop_assert_eq!((udp.source_port(), udp.destination_port()), (f.udp_sport, 4791));
        }
        // BTH, extended headers, payload and ICRC
        let Body::Roce(roce) = &p.body else { return Err(TestCaseError::fail(format!("not RoCE: {:?}", p.body))) };
        let bth = roce.ib.bth;
        let b = f.bth;
        prop_assert_eq!(
            (bth.opcode(), bth.solicited(), bth.mig_req(), bth.pkey(), bth.fecn(), bth.becn()),
            (b.opcode, b.solicited, b.mig_req, b.pkey, b.fecn, b.becn)
        );
        prop_assert_eq!((bth.dest_qp(), bth.ack_req(), bth.psn()), (b.dest_qp, b.ack_req, b.psn));
        prop_assert_eq!(usize::from(bth.pad_count()), (4 - f.payload.len() % 4) % 4);
        prop_assert_eq!(roce.ib.ext(), Some(f.ext));
        prop_assert_eq!(roce.ib.payload_len, f.payload.len());
        prop_assert_eq!(roce.icrc, IcrcStatus::Ok);
    }

    #[test]
    fn pfc_and_pause_frames_decode_to_their_fields(src in any::<[u8; 6]>(), enable in any::<u8>(),
                                                    quanta in any::<[u16; 8]>(), pause in any::<u16>()) {
        let pfc = encode::pfc_frame(src, enable, quanta);
        match decode(&pfc).body {
            Body::MacControl(MacControl::Pfc(p)) => {
                prop_assert_eq!((p.class_enable, p.quanta), (u16::from(enable), quanta));
                for priority in 0..8u8 {
                    let expected = (enable >> priority & 1 == 1).then_some(quanta[usize::from(priority)]);
                    prop_assert_eq!(p.pause_quanta(priority), expected);
                }
            }
            other => prop_assert!(false, "PFC decoded as {:?}", other),
        }
        match decode(&encode::pause_frame(src, pause)).body {
            Body::MacControl(MacControl::Pause { quanta }) => prop_assert_eq!(quanta, pause),
            other => prop_assert!(false, "PAUSE decoded as {:?}", other),
        }
    }
}

/// The frames of every sample scenario, in capture order.
fn sample_frames() -> Vec<Vec<(i64, Vec<u8>)>> {
    all_scenarios().into_iter().map(|s| s.frames.into_iter().map(|f| (f.ts_ns, f.bytes)).collect()).collect()
}

fn pcap_bytes(frames: &[(i64, Vec<u8>)]) -> Vec<u8> {
    let mut w = CaptureWriter::pcap(Vec::new(), 1, 65535, true, false).expect("header");
    for (ts, bytes) in frames {
        w.packet(0, *ts, bytes).expect("record");
    }
    w.finish().expect("flush")
}

/// The JSON report of analysing `files` (held in memory) together, without its `inputs`.
fn analyse(files: &[Vec<u8>]) -> serde_json::Value {
    let readers = files
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            CaptureReader::from_reader(format!("part{i}"), Box::new(std::io::Cursor::new(bytes.clone())), false)
                .expect("a capture")
        })
        .collect();
    let mut inputs = Inputs::new(readers);
    let decoder = Decoder::default();
    let mut analyzer = Analyzer::new(Default::default());
    while let Some(frame) = inputs.next_frame() {
        let packet = decoder.decode(&frame.record);
        analyzer.observe(&FrameSummary::of(frame.number, &packet));
    }
    analyzer.finish();
    let mut report =
        serde_json::to_value(rocescope::analyze::assemble::report_of_files(&analyzer, inputs.readers(), &[]))
            .expect("JSON");
    report.as_object_mut().map(|o| o.remove("inputs"));
    report
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_capture_split_in_two_files_analyses_as_the_whole(scenario in 0..10usize, at in 0.0..1.0f64) {
        let frames = &sample_frames()[scenario % sample_frames().len()];
        let cut = (frames.len() as f64 * at) as usize;
        // files are merged by timestamp, so the split is at a point in time, as rotation
        // (tcpdump -C / -G) makes it: nothing in the second file is older than the first's end
        let first_end = frames[..cut].iter().map(|(ts, _)| *ts).max();
        prop_assume!(first_end.is_none_or(|end| frames[cut..].iter().all(|(ts, _)| *ts >= end)));
        let whole = analyse(&[pcap_bytes(frames)]);
        let split = analyse(&[pcap_bytes(&frames[..cut]), pcap_bytes(&frames[cut..])]);
        prop_assert_eq!(&whole["totals"]["frames"], &serde_json::json!(frames.len()));
        prop_assert_eq!(whole, split);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn one_thread_or_several_give_the_same_report(scenario in 0..10usize, keep in prop::collection::vec(any::<bool>(), 400)) {
        // a random subset of a sample's frames, in order: losses, gaps and odd pairings
        let all = sample_frames();
        let frames: Vec<_> = all[scenario % all.len()].iter().zip(keep.iter().cycle()).filter(|(_, k)| **k).map(|(f, _)| f.clone()).collect();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("subset.pcap");
        std::fs::write(&path, pcap_bytes(&frames)).expect("write");
        let path = path.to_str().expect("UTF-8");
        let one = common::run_ok(&["analyze", "--json", "--threads", "1", path]);
        prop_assert!(one.contains(&format!("\"frames\": {}", frames.len())), "{}", one);
        for threads in ["2", "3"] {
            prop_assert_eq!(&common::run_ok(&["analyze", "--json", "--threads", threads, path]), &one);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reordering_inside_the_window_is_never_loss(
        base in u24(),
        delays in prop::collection::vec(0..8usize, 60),
    ) {
        // packet i leaves in slot i and arrives in slot i + delay, 1 µs a slot: no packet is
        // lost or sent twice, none is more than 8 µs late (the capture's first packet too may
        // have overtaken others: docs/analysis.md, "Reordering", the prelude)
        let psn = |i: usize| (base + i as u32) & 0xFF_FFFF;
        let mut order: Vec<usize> = (0..delays.len()).collect();
        order.sort_by_key(|&i| (i + delays[i], i));
        let (a, b) = (common::capture::A, common::capture::B);
        let frames: Vec<(i64, Vec<u8>)> = order
            .iter()
            .enumerate()
            .map(|(slot, &i)| (common::capture::T0 + slot as i64 * 1_000, common::capture::write_only(a, b, psn(i), false).encode()))
            .collect();
        // a packet is late when a packet sent after it arrived before it
        let late = order.iter().enumerate().filter(|&(k, &i)| order[..k].iter().any(|&j| j > i)).count();
        let r = analyse(&[pcap_bytes(&frames)]);
        let f = &r["flows"][0];
        prop_assert_eq!((&f["gaps"], &f["missing_psns"], &f["retransmitted"]), (&serde_json::json!(0), &serde_json::json!(0), &serde_json::json!(0)));
        prop_assert_eq!(&f["late_arrivals"], &serde_json::json!(late));
    }
}

/// One QP's healthy traffic: what its requester sends and its responder answers, in order.
#[derive(Debug, Clone)]
struct Connection {
    transport: u8,
    requester: common::capture::Side,
    responder: common::capture::Side,
    start_psn: u32,
    /// Operations: 0 a WRITE (a UD or UC SEND), 1 a 2 KiB READ (RC), 2 a 3 KiB READ (RC).
    ops: Vec<u8>,
}

/// The frames of a connection, in the order its two sides send them.
fn connection_frames(c: &Connection) -> Vec<Vec<u8>> {
    use common::capture::{ack, read_request, read_responses, write_only};
    let (a, b) = (c.requester, c.responder);
    let mut psn = c.start_psn;
    let mut frames = Vec::new();
    for (i, &op) in c.ops.iter().enumerate() {
        let next = |psn: u32, n: u32| (psn + n) & 0xFF_FFFF;
        match (c.transport, op) {
            (0, 1 | 2) => {
                let packets = u32::from(op) + 1;
                frames.push(read_request(a, b, psn, packets * 1024).encode());
                frames.extend(read_responses(b, a, psn, packets, 1024).iter().map(RoceFrame::encode));
                psn = next(psn, packets);
            }
            (0, _) => {
                frames.push(write_only(a, b, psn, true).encode());
                frames.push(ack(b, a, psn, 0x1F).encode());
                psn = next(psn, 1);
            }
            (1, _) => {
                let mut send = write_only(a, b, psn, false);
                send.bth.opcode = 0x2A; // UC RDMA WRITE ONLY
                frames.push(send.encode());
                psn = next(psn, 1);
            }
            _ => {
                // a UD QP numbers its datagrams across every destination: PSNs jump here
                let deth = Some(Deth { qkey: 0x1111, src_qp: a.qpn });
                let send = common::capture::frame(a, b, 0x64, psn, ExtHeaders { deth, ..ExtHeaders::default() }, 64);
                frames.push(send.encode());
                psn = next(psn, 1 + (i as u32 % 3));
            }
        }
    }
    frames
}

prop_compose! {
    /// A connection between two of four hosts; its QP numbers are set by its place.
    fn any_connection()(
        transport in 0..3u8,
        from in 1..5u8,
        step in 1..4u8,
        start_psn in prop_oneof![Just(0u32), u24(), (0xFF_FF00u32..0x100_0000)],
        ops in prop::collection::vec(0..3u8, 1..24),
    ) -> Connection {
        let to = (from - 1 + step) % 4 + 1;
        let side = |n| common::capture::Side { n, qpn: 0 };
        Connection { transport, requester: side(from), responder: side(to), start_psn, ops }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn interleaved_healthy_qps_never_show_loss(
        connections in prop::collection::vec(any_connection(), 1..7),
        picks in prop::collection::vec(any::<u16>(), 600),
    ) {
        // several QPs' healthy traffic (RC WRITEs and READs, UC, UD; any starting PSN, 0 among
        // them, as NCCL's QPs start), each in its own order, interleaved at random 1 µs apart
        let mut connections = connections;
        for (i, c) in connections.iter_mut().enumerate() {
            (c.requester.qpn, c.responder.qpn) = (0x1000 + 2 * i as u32, 0x1001 + 2 * i as u32);
        }
        let mut queues: Vec<std::collections::VecDeque<Vec<u8>>> =
            connections.iter().map(|c| connection_frames(c).into()).collect();
        let mut frames = Vec::new();
        let mut pick = picks.iter().cycle();
        while queues.iter().any(|q| !q.is_empty()) {
            let open: Vec<usize> = (0..queues.len()).filter(|&i| !queues[i].is_empty()).collect();
            let i = open[usize::from(*pick.next().unwrap_or(&0)) % open.len()];
            let bytes = queues[i].pop_front().unwrap_or_default();
            frames.push((common::capture::T0 + frames.len() as i64 * 1_000, bytes));
        }
        let r = analyse(&[pcap_bytes(&frames)]);
        for f in r["flows"].as_array().unwrap_or(&Vec::new()) {
            let lost = ["gaps", "missing_psns", "retransmitted", "retransmit_episodes"].map(|k| f[k].as_u64());
            prop_assert_eq!(lost, [Some(0); 4], "flow {}", f);
        }
        let loss = ["PSN_GAP", "RETRANSMISSION", "RETRANSMIT_NO_NAK", "RETRANSMIT_TIMEOUT", "CAPTURE_LOSS", "NAK_PSN_SEQUENCE"];
        let codes: Vec<&str> = r["findings"].as_array().into_iter().flatten().filter_map(|f| f["code"].as_str()).collect();
        prop_assert!(!codes.iter().any(|c| loss.contains(c)), "{:?}", codes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_text_compiles_to_a_filter_or_an_error_and_never_panics(text in "[ -~]{0,40}") {
        let _ = rocescope::display_filter::DisplayFilter::compile(&text);
    }

    #[test]
    fn filters_of_the_grammar_match_any_frame_without_panicking(
        field in prop::sample::select(rocescope::fields::all().map(|f| f.name).collect::<Vec<_>>()),
        op in prop::sample::select(vec!["==", "!=", "~=", "<", ">=", "contains", "&", "in"]),
        value in prop::sample::select(vec!["1", "0x80", "10.0.0.0/8", "fe80::1", "02:00:00:00:00:01", "01:80", "\"ok\"", "True", "0.5", "{1, 2..5}"]),
        slice in prop::sample::select(vec!["", "[0:2]", "[4]", "[1-3]", "[2:]"]),
        frame in prop::sample::select(sample_frames().into_iter().flatten().map(|(_, bytes)| bytes).collect::<Vec<_>>()),
    ) {
        let text = format!("{field}{slice} {op} {value}");
        if let Ok(filter) = rocescope::display_filter::DisplayFilter::compile(&text) {
            let packet = decode(&frame);
            let _ = filter.matches(&rocescope::fields::Frame::alone(1, &packet));
        }
    }
}
