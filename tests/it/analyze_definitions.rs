//! Each analysis definition (docs/analysis.md) on small hand-built captures.

use crate::common;

use std::path::PathBuf;

use common::capture::*;
use rocescope::generate::encode::{self, L2};
use rocescope_parsers::ext::{ExtHeaders, Reth};
use serde_json::{Value, json};

#[test]
fn gaps_and_retransmissions_across_the_psn_wrap() {
    let mut c = Capture::new();
    let psns = [0xFF_FFFD, 0xFF_FFFE, 0xFF_FFFF, 1, 2, 0, 1, 2, 3];
    for (i, psn) in psns.iter().enumerate() {
        c.add(T0 + i as i64 * US, &write_only(A, B, *psn, false));
    }
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(
        (&f["gaps"], &f["missing_psns"], &f["retransmitted"], &f["retransmit_episodes"]),
        (&json!(1), &json!(1), &json!(3), &json!(1))
    );
    assert_eq!((&f["first_psn"], &f["highest_psn"]), (&json!(0xFF_FFFD), &json!(3)));
    let e = &r["retransmit_episodes"][0];
    assert_eq!((&e["first_psn"], &e["last_psn"], &e["highest_sent_psn"]), (&json!(0), &json!(2), &json!(2)));
    // 1 µs of silence is far too short for an ACK timeout: the NAK is not in the capture
    assert_eq!((&e["pattern"], &e["trigger"]), (&json!("go_back_n"), &json!("no_nak")));
    assert_eq!(e["gap_to_recovery_ns"], json!(2 * US), "PSN 0 was seen missing at the gap 2 µs earlier");
}

#[test]
fn a_nak_on_the_peer_flow_makes_the_resend_go_back_n_after_nak() {
    let mut c = Capture::new();
    for (i, psn) in [10, 11, 13, 14].iter().enumerate() {
        c.add(T0 + i as i64 * US, &write_only(A, B, *psn, false));
    }
    c.add(T0 + 5 * US, &ack(B, A, 12, 0x60)); // NAK, PSN sequence error, expected 12
    for (i, psn) in [12, 13, 14, 15].iter().enumerate() {
        c.add(T0 + (10 + i as i64) * US, &write_only(A, B, *psn, false));
    }
    let r = c.analyze(&[]);
    let e = &r["retransmit_episodes"][0];
    assert_eq!(
        (&e["trigger"], &e["trigger_frame"], &e["nak_to_resend_ns"]),
        (&json!("nak_psn_seq_err"), &json!(5), &json!(5 * US))
    );
    // 12 was the hole; 12, 13 and 14 are all behind the expected PSN 15, and reach the
    // highest PSN sent: go-back-N. 15 is new and ends the episode.
    assert_eq!((&e["first_psn"], &e["packets"], &e["pattern"]), (&json!(12), &json!(3), &json!("go_back_n")));
    assert_eq!(e["end_frame"], json!(8));
}

#[test]
fn rnr_naks_and_selective_resends() {
    let mut c = Capture::new();
    c.add(T0, &write_only(A, B, 100, true));
    c.add(T0 + US, &ack(B, A, 100, 0x2E)); // RNR NAK, timer code 14 = 1.28 ms
    c.add(T0 + 1_300 * US, &write_only(A, B, 100, true));
    c.add(T0 + 1_301 * US, &ack(B, A, 100, 0x1F));
    let r = c.analyze(&[]);
    assert_eq!(flow(&r, 2, 0x100)["rnr_naks"], json!(1));
    let e = &r["retransmit_episodes"][0];
    assert_eq!(
        (&e["trigger"], &e["rnr_delay_us"], &e["pattern"]),
        (&json!("rnr_nak"), &json!(1280), &json!("go_back_n"))
    );
    // selective: only the hole is resent, the packets after it are not; 30 µs of silence
    // with no NAK is no timeout, and 30 µs is past the reorder window, so 3 was resent
    let mut c = Capture::new();
    for (i, psn) in [1, 2, 4, 5].iter().enumerate() {
        c.add(T0 + i as i64 * US, &write_only(A, B, *psn, false));
    }
    c.add(T0 + 33 * US, &write_only(A, B, 3, false));
    c.add(T0 + 34 * US, &write_only(A, B, 6, false));
    let r = c.analyze(&[]);
    let e = &r["retransmit_episodes"][0];
    assert_eq!(
        (&e["pattern"], &e["trigger"], &e["idle_before_ns"]),
        (&json!("selective"), &json!("no_nak"), &json!(30 * US))
    );
    assert_eq!((&flow(&r, 1, 0x200)["missing_psns"], &flow(&r, 1, 0x200)["late_arrivals"]), (&json!(1), &json!(0)));
    // the same after 2 ms of silence: the requester's ACK timer expired
    let mut c = Capture::new();
    for (i, psn) in [1, 2, 4, 5].iter().enumerate() {
        c.add(T0 + i as i64 * US, &write_only(A, B, *psn, false));
    }
    c.add(T0 + 2_003 * US, &write_only(A, B, 3, false));
    let r = c.analyze(&[]);
    let e = &r["retransmit_episodes"][0];
    assert_eq!((&e["trigger"], &e["idle_before_ns"]), (&json!("timeout"), &json!(2_000 * US)));
}

#[test]
fn two_interleaved_connections_between_one_host_pair_pair_by_psn() {
    let (a2, b2) = (Side { n: 1, qpn: 0x111 }, Side { n: 2, qpn: 0x222 });
    let mut c = Capture::new();
    for i in 0..8u32 {
        let t = T0 + i64::from(i) * 4 * US;
        c.add(t, &write_only(A, B, 0x1000 + i, true));
        c.add(t + US, &write_only(a2, b2, 0x9000 + i, true));
        c.add(t + 2 * US, &ack(b2, a2, 0x9000 + i, 0x1F));
        c.add(t + 3 * US, &ack(B, A, 0x1000 + i, 0x1F));
    }
    let r = c.analyze(&[]);
    for (fwd, rev) in [((1, 0x200), (2, 0x100)), ((1, 0x222), (2, 0x111))] {
        let f = flow(&r, fwd.0, fwd.1);
        let b = flow(&r, rev.0, rev.1);
        assert_eq!((&f["peer"], &b["peer"]), (&b["id"], &f["id"]));
        assert_eq!(f["pairing"], json!("psn"));
        assert_eq!(f["src_qp"], json!(rev.1));
        assert_eq!(f["ack_latency_ns"]["count"], json!(8));
    }
    assert_eq!(flow(&r, 1, 0x200)["ack_latency_ns"]["p50"], json!(3 * US));
    assert_eq!(flow(&r, 1, 0x222)["ack_latency_ns"]["p50"], json!(US));
}

#[test]
fn overlapping_psn_ranges_are_not_paired_by_guess() {
    let (a2, b2) = (Side { n: 1, qpn: 0x111 }, Side { n: 2, qpn: 0x222 });
    let mut c = Capture::new();
    for i in 0..4u32 {
        c.add(T0 + i64::from(i) * 4 * US, &write_only(A, B, 0x50 + i, false));
        c.add(T0 + i64::from(i) * 4 * US + US, &write_only(a2, b2, 0x50 + i, false));
    }
    c.add(T0 + 20 * US, &ack(B, A, 0x52, 0x1F));
    let r = c.analyze(&[]);
    assert_eq!(flow(&r, 2, 0x100)["pairing"], Value::Null, "both forward flows hold PSN 0x52");
}

#[test]
fn a_reused_qpn_starts_new_flows_at_the_new_connection() {
    let mut c = Capture::new();
    cm_exchange(&mut c, T0, 10, 0x100, 0x1000, 0x200, 0x8000);
    for i in 0..4 {
        c.add(T0 + (10 + i) * US, &write_only(A, B, 0x1000 + i as u32, i == 3));
    }
    c.add(T0 + 20 * US, &ack(B, A, 0x1003, 0x1F));
    // the same QPNs, a new connection with another starting PSN
    cm_exchange(&mut c, T0 + 100 * US, 20, 0x100, 0x70_0000, 0x200, 0x9000);
    for i in 0..4 {
        c.add(T0 + (110 + i) * US, &write_only(A, B, 0x70_0000 + i as u32, i == 3));
    }
    c.add(T0 + 120 * US, &ack(B, A, 0x70_0003, 0x1F));
    let r = c.analyze(&[]);
    let data: Vec<&Value> = r["flows"].as_array().unwrap().iter().filter(|f| f["dst_qp"] == json!(0x200)).collect();
    assert_eq!(data.len(), 2, "one flow per connection");
    for f in &data {
        assert_eq!(
            (&f["packets"], &f["gaps"], &f["retransmitted"], &f["pairing"]),
            (&json!(4), &json!(0), &json!(0), &json!("cm"))
        );
    }
    assert_eq!(r["connections"].as_array().unwrap().len(), 2);
    assert_eq!(r["connections"][1]["active_start_psn"], json!(0x70_0000));
}

#[test]
fn reads_consume_their_response_psns() {
    let read = |psn, len| {
        let mut f = frame(
            A,
            B,
            0x0C,
            psn,
            ExtHeaders { reth: Some(Reth { va: 0, rkey: 1, dma_len: len }), ..ExtHeaders::default() },
            0,
        );
        f.bth.ack_req = true;
        f
    };
    // PMTU unknown: a 3000-byte READ is 1 to 12 PSNs; the next request at +3 (PMTU 1024) is in order
    let mut c = Capture::new();
    c.add(T0, &read(500, 3000)).add(T0 + US, &write_only(A, B, 503, false));
    assert_eq!(flow(&c.analyze(&[]), 1, 0x200)["gaps"], json!(0));
    // PMTU known from the flow's own MIDDLE packets (256 bytes): 3000 bytes is 12 PSNs
    let mut c = Capture::new();
    c.add(
        T0,
        &frame(
            A,
            B,
            0x06,
            10,
            ExtHeaders { reth: Some(Reth { va: 0, rkey: 1, dma_len: 768 }), ..ExtHeaders::default() },
            256,
        ),
    );
    c.add(T0 + US, &frame(A, B, 0x07, 11, ExtHeaders::default(), 256));
    c.add(T0 + 2 * US, &frame(A, B, 0x08, 12, ExtHeaders::default(), 256));
    c.add(T0 + 3 * US, &read(13, 3000)).add(T0 + 4 * US, &write_only(A, B, 25, false));
    let r = c.analyze(&[]);
    assert_eq!((&flow(&r, 1, 0x200)["gaps"], &flow(&r, 1, 0x200)["pmtu"]), (&json!(0), &json!(256)));
    assert_eq!(flow(&r, 1, 0x200)["read_requests"], json!(1));
}

#[test]
fn timestamps_going_backwards_are_counted_and_never_make_negative_times() {
    let mut c = Capture::new();
    c.add(T0 + 10 * US, &write_only(A, B, 1, true));
    c.add(T0 + 5 * US, &ack(B, A, 1, 0x1F)); // the ACK is stamped before its request
    c.add(T0 + 20 * US, &write_only(A, B, 2, false));
    let r = c.analyze(&[]);
    assert_eq!(r["capture"]["non_monotonic_timestamps"], json!(1));
    assert_eq!(flow(&r, 1, 0x200)["ack_latency_ns"]["max"], json!(0));
    assert!(r["findings"].as_array().unwrap().iter().any(|f| f["code"] == json!("TIMESTAMPS_BACKWARDS")));
}

#[test]
fn ce_marks_cnps_and_their_reaction_time() {
    let mut c = Capture::new();
    let mut marked = write_only(A, B, 1, true);
    marked.l3 = marked.l3.with_qos(26, 3);
    let mut cnp = frame(B, A, 0x81, 0, ExtHeaders::default(), 0);
    cnp.bth.becn = true;
    cnp.l3 = cnp.l3.with_qos(48, 0);
    c.add(T0, &marked).add(T0 + 2 * US, &ack(B, A, 1, 0x1F)).add(T0 + 7 * US, &cnp);
    c.add(T0 + 60 * US, &cnp);
    let r = c.analyze(&[]);
    let data = flow(&r, 1, 0x200);
    assert_eq!((&data["ce"], &data["from_peer"]["cnps"]), (&json!(1), &json!(2)));
    assert_eq!(data["ce_to_cnp_ns"]["p50"], json!(7 * US));
    assert_eq!(data["first_frames"]["ce"], json!(1));
    assert_eq!(flow(&r, 2, 0x100)["cnp_spacing_ns"]["min"], json!(53 * US));
    // the same marks with no CNP at all
    let mut c = Capture::new();
    c.add(T0, &marked).add(T0 + 2 * US, &ack(B, A, 1, 0x1F));
    let r = c.analyze(&[]);
    let codes: Vec<&Value> = r["findings"].as_array().unwrap().iter().map(|f| &f["code"]).collect();
    assert!(codes.contains(&&json!("CE_WITHOUT_CNP")), "{codes:?}");
}

#[test]
fn link_speed_storm_threshold_and_fail_on() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/pfc_storm.pcap");
    let r = analyze_file(&sample, &["--link-speed", "25G"]);
    let other = r["pfc"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["src_mac"] == json!("02:00:00:00:ff:02") && p["priority"] == json!(3))
        .unwrap();
    assert_eq!(other["longest_pause_ns"], json!(1_342_156), "65535 quanta at 25G");
    let r = analyze_file(&sample, &["--pfc-storm-ms", "150"]);
    assert!(
        r["pfc"].as_array().unwrap().iter().all(|p| p["storm"] == json!(false)),
        "the 120 ms period is below 150 ms"
    );
    let s = sample.to_str().unwrap();
    assert_eq!(common::run(&["analyze", "--fail-on", "error", s]).status.code(), Some(4));
    let healthy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/rc_write_healthy.pcap");
    assert_eq!(common::run(&["analyze", "--fail-on", "info", healthy.to_str().unwrap()]).status.code(), Some(0));
    assert_eq!(common::run(&["analyze", "--link-speed", "fast", s]).status.code(), Some(2));
}

#[test]
fn the_policy_comes_from_flags_and_a_toml_file() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/congestion_ecn_cnp.pcap");
    let default = analyze_file(&sample, &[]);
    assert_eq!(default["policy"]["data_dscp_violations"], json!(3));
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("fabric.toml");
    std::fs::write(&policy, "data_dscp = 0\ncnp_dscp = 0\n").unwrap();
    let r = analyze_file(&sample, &["--policy", policy.to_str().unwrap(), "--cnp-dscp", "48"]);
    assert_eq!(r["policy"]["expected_data_dscp"], json!(0));
    assert_eq!(r["policy"]["expected_cnp_dscp"], json!(48), "a flag overrides the file");
    assert_eq!(
        r["policy"]["data_dscp_violations"],
        json!(default["totals"]["roce_v2"].as_u64().unwrap() - default["cnps"].as_u64().unwrap() - 3)
    );
    let r = analyze_file(&sample, &["--allow-not-ect"]);
    assert_eq!(r["policy"]["not_ect_data"], json!(0));
    std::fs::write(&policy, "data_dcsp = 1\n").unwrap();
    let out = common::run(&["analyze", "--policy", policy.to_str().unwrap(), sample.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown field"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn mirror_copies_count_once_per_flow() {
    let outer = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    let mut c = Capture::new();
    for i in 0..5u32 {
        let f = write_only(A, B, 40 + i, false);
        let mut copy = f.clone();
        copy.l3.ttl = 63;
        c.add_bytes(
            T0 + i64::from(i) * 10 * US,
            encode::erspan2(&outer, [192, 0, 2, 1], [192, 0, 2, 9], 1, Some(i), &f.encode()),
        );
        c.add_bytes(
            T0 + i64::from(i) * 10 * US + 2 * US,
            encode::erspan2(&outer, [192, 0, 2, 2], [192, 0, 2, 9], 2, Some(i), &copy.encode()),
        );
    }
    // a copy arriving after the window is a retransmission, not a mirror copy
    let mut late = write_only(A, B, 44, false);
    late.l3.ttl = 63;
    c.add(T0 + 3_000 * US, &late);
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!((&f["packets"], &f["mirror_duplicates"], &f["retransmitted"]), (&json!(6), &json!(5), &json!(1)));
    assert_eq!(r["totals"]["mirror_duplicates"], json!(5));
    let r = c.analyze(&["--mirror-window-us", "1"]);
    assert_eq!(r["totals"]["mirror_duplicates"], json!(0));
}

#[test]
fn flows_beyond_max_flows_are_counted_in_the_totals_only() {
    let mut c = Capture::new();
    // three flows A→B, B→A, C→A, then more packets of the first and the third
    let cside = Side { n: 3, qpn: 0x300 };
    c.add(T0, &write_only(A, B, 1, false));
    c.add(T0 + US, &ack(B, A, 1, 0));
    c.add(T0 + 2 * US, &write_only(cside, A, 7, false));
    c.add(T0 + 3 * US, &write_only(A, B, 2, false));
    c.add(T0 + 4 * US, &write_only(cside, A, 8, false));
    let r = c.analyze(&["--max-flows", "2"]);
    assert_eq!(r["config"]["max_flows"], json!(2));
    assert_eq!(r["flows"].as_array().map(Vec::len), Some(2));
    assert_eq!(flow(&r, 1, 0x200)["packets"], json!(2), "a tracked flow keeps every packet");
    assert_eq!(r["limits"]["untracked_packets"], json!(2));
    assert_eq!(r["limits"]["first_untracked_frame"], json!(3));
    assert_eq!(r["totals"]["roce_packets"], json!(5), "the totals count untracked packets");
    let finding = r["findings"].as_array().and_then(|f| f.iter().find(|f| f["code"] == json!("LIMITS_REACHED")));
    let finding = finding.expect("LIMITS_REACHED finding");
    assert_eq!((&finding["evidence"]["count"], &finding["evidence"]["frames"]), (&json!(2), &json!([3])));
    // without the limit: no finding, three flows
    let r = c.analyze(&[]);
    assert_eq!((r["flows"].as_array().map(Vec::len), &r["limits"]["untracked_packets"]), (Some(3), &json!(0)));
    assert!(r["findings"].as_array().is_some_and(|f| f.iter().all(|f| f["code"] != json!("LIMITS_REACHED"))));
}

#[test]
fn a_flow_lists_its_first_64_udp_source_ports_and_counts_the_rest() {
    let mut c = Capture::new();
    for i in 0..70u16 {
        let mut f = write_only(A, B, u32::from(i), false);
        f.udp_sport = 0xC000 + i;
        c.add(T0 + i64::from(i) * US, &f);
    }
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(f["udp_sports"].as_array().map(Vec::len), Some(64));
    assert_eq!(f["udp_sports"][63], json!(0xC000 + 63));
    assert_eq!(f["udp_sports_other_packets"], json!(6));
}

/// A→B RDMA WRITEs 10, 11, 13 and 14 a microsecond apart: PSN 12 is not in the capture.
fn stream_with_a_hole(c: &mut Capture) {
    for (i, psn) in [10, 11, 13, 14].iter().enumerate() {
        c.add(T0 + i as i64 * US, &write_only(A, B, *psn, false));
    }
}

#[test]
fn a_hole_a_later_ack_covers_was_missed_by_the_capture_only() {
    let mut c = Capture::new();
    stream_with_a_hole(&mut c);
    c.add(T0 + 5 * US, &ack(B, A, 14, 0x1F)); // a coalesced ACK up to 14: the responder has 12
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(
        (&f["gaps"], &f["missing_psns"], &f["capture_missed"], &f["requests"]["capture_missed"]),
        (&json!(1), &json!(0), &json!(1), &json!(1))
    );
    assert_eq!(f["capture_only_gaps"], 1, "the receiver had no gap");
    let codes: Vec<&Value> = r["findings"].as_array().unwrap().iter().map(|f| &f["code"]).collect();
    assert!(codes.contains(&&json!("CAPTURE_LOSS")) && !codes.contains(&&json!("PSN_GAP")), "{codes:?}");
    // the frame after the hole still shows the gap, and that the capture alone missed it
    assert_eq!(count_class(&frames_of(&c), "gap"), 1);
    let path = c.write();
    let fields = ["-T", "fields", "-e", "rocescope.analysis.missing_psns", "-e", "rocescope.analysis.capture_missed"];
    let out = common::run_ok(&[&["packets"], &fields[..], &["-c", "3", path.to_str().unwrap()]].concat());
    assert_eq!(out.lines().nth(2), Some("1\t1"));
    let list = common::run_ok(&["packets", "-c", "3", path.to_str().unwrap()]);
    assert!(list.contains("[gap: 1 PSNs missing, 1 of them only from the capture]"), "{list}");
}

#[test]
fn a_hole_naked_and_resent_is_network_loss() {
    let mut c = Capture::new();
    stream_with_a_hole(&mut c);
    c.add(T0 + 5 * US, &ack(B, A, 12, 0x60)); // NAK: the responder expected 12
    for (i, psn) in [12, 13, 14].iter().enumerate() {
        c.add(T0 + (10 + i as i64) * US, &write_only(A, B, *psn, false));
    }
    c.add(T0 + 20 * US, &ack(B, A, 14, 0x1F));
    let f = flow(&c.analyze(&[]), 1, 0x200).clone();
    assert_eq!((&f["gaps"], &f["missing_psns"], &f["capture_missed"]), (&json!(1), &json!(1), &json!(0)));
    assert_eq!(f["capture_only_gaps"], 0);
}

/// The flow of [`stream_with_a_hole`] after an ACK covering the hole, when PSN 12 then comes
/// `after_us` µs from the start.
fn covered_hole_appearing_at(after_us: i64) -> Value {
    let mut c = Capture::new();
    stream_with_a_hole(&mut c);
    c.add(T0 + 5 * US, &ack(B, A, 14, 0x1F));
    c.add(T0 + after_us * US, &write_only(A, B, 12, false));
    flow(&c.analyze(&[]), 1, 0x200).clone()
}

#[test]
fn a_covered_hole_that_is_resent_or_comes_late_is_decided_again() {
    // resent 2 ms later: the responder lacked it after all
    let f = covered_hole_appearing_at(2_000);
    assert_eq!((&f["missing_psns"], &f["capture_missed"], &f["retransmitted"]), (&json!(1), &json!(0), &json!(1)));
    assert_eq!(f["capture_only_gaps"], 0, "a gap at the receiver after all");
    // a mirror copy arriving late, within the reorder window: reordering, nothing missing
    let f = covered_hole_appearing_at(6);
    assert_eq!((&f["missing_psns"], &f["capture_missed"], &f["late_arrivals"]), (&json!(0), &json!(0), &json!(1)));
}

#[test]
fn a_capture_without_roce_says_where_roce_is_captured() {
    // DNS over UDP, as a capture on the kernel's Ethernet interface holds it
    let dns = |sport: u16| {
        let builder = etherparse::PacketBuilder::ethernet2([2; 6], [4; 6]).ipv4([10, 0, 0, 1], [10, 0, 0, 53], 64);
        let mut bytes = Vec::new();
        builder.udp(sport, 53).write(&mut bytes, &[0; 32]).expect("frame");
        bytes
    };
    let mut c = Capture::new();
    c.add_bytes(T0, dns(40_000)).add_bytes(T0 + 1_000, dns(40_001));
    let report = c.analyze(&[]);
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!((&findings[0]["code"], &findings[0]["severity"]), (&json!("NO_ROCE"), &json!("info")));
    assert_eq!(
        findings[0]["message"],
        "no RoCE packet among 2 frames: RoCEv2 is UDP destination port 4791 (--roce-port adds others)"
    );
    // one RoCE packet is something to analyse
    c.add(T0 + 2_000, &write_only(A, B, 7, false));
    assert!(codes(&c.analyze(&[])).iter().all(|code| code != "NO_ROCE"));
}

/// The frames a finding's evidence names for a code.
fn evidence_frames(r: &Value, code: &str) -> Vec<u64> {
    let finding = r["findings"].as_array().and_then(|f| f.iter().find(|f| f["code"] == code));
    let frames = finding.map(|f| f["evidence"]["frames"].clone()).unwrap_or_default();
    frames.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

/// A gap wider than the 256 PSNs whose holes are tracked one by one is counted at once; its
/// frame is named all the same, in the flow's evidence and in `PSN_GAP`'s.
#[test]
fn a_gap_too_wide_to_track_names_its_frame() {
    let mut c = Capture::new();
    for (i, psn) in [1u32, 2, 3, 1003, 1004].into_iter().enumerate() {
        c.add(T0 + i as i64 * 10 * US, &write_only(A, B, psn, false));
    }
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!((&f["gaps"], &f["missing_psns"]), (&json!(1), &json!(999)));
    assert_eq!(f["first_frames"]["gap"], json!(4));
    assert_eq!(evidence_frames(&r, "PSN_GAP"), vec![4]);
    let listed = common::frames_selected(&c.write(), "rocescope.analysis.gap");
    assert_eq!(listed, vec![4], "the frame the packet list marks");
}

/// `MIRROR_DUPLICATES` names the second copies, not the flows' first frames.
#[test]
fn mirror_duplicates_name_the_second_copies() {
    let mut c = Capture::new();
    for i in 0..3u32 {
        let f = write_only(A, B, 40 + i, false);
        let mut copy = f.clone();
        copy.l3.ttl = 63;
        c.add(T0 + i64::from(i) * 10 * US, &f);
        c.add(T0 + i64::from(i) * 10 * US + 2 * US, &copy);
    }
    let r = c.analyze(&[]);
    assert_eq!(flow(&r, 1, 0x200)["first_frames"]["mirror_duplicate"], json!(2));
    assert_eq!(evidence_frames(&r, "MIRROR_DUPLICATES"), vec![2]);
}

/// The path MTU is a QP's: one QP's WRITEs at 1024 bytes say nothing of another QP between
/// the same two hosts whose 4096-byte READs are answered at 4096 (an MPI job beside NCCL), whose
/// READs then each take one PSN, not four.
#[test]
fn a_path_mtu_learned_on_one_qp_is_not_applied_to_another() {
    let mut c = Capture::new();
    let mut t = T0;
    let mut at = |c: &mut Capture, f: &encode::RoceFrame| {
        c.add(t, f);
        t += 2 * US;
    };
    let payload = ExtHeaders::default();
    for (psn, opcode) in [(1, 0x06), (2, 0x07), (3, 0x08)] {
        at(&mut c, &frame(A, B, opcode, psn, payload, 1024));
    }
    at(&mut c, &ack(B, A, 3, 0));
    let (requester, responder) = (Side { n: 1, qpn: 0x300 }, Side { n: 2, qpn: 0x400 });
    for psn in 100..103 {
        at(&mut c, &read_request(requester, responder, psn, 4096));
        for response in read_responses(responder, requester, psn, 1, 4096) {
            at(&mut c, &response);
        }
    }
    let r = c.analyze(&[]);
    assert_eq!(flow(&r, 1, 0x200)["pmtu"], json!(1024));
    for (src, qp) in [(1, 0x400), (2, 0x300)] {
        let f = flow(&r, src, qp);
        assert_eq!((&f["retransmitted"], &f["gaps"]), (&json!(0), &json!(0)), "{src} → QP {qp:#x}");
    }
    assert_eq!(r["retransmit_episodes"], json!([]));
    assert!(!codes(&r).iter().any(|c| c == "RETRANSMISSION"), "{:?}", codes(&r));
}

/// A LAST or ONLY packet carries at most a path MTU: one of more than 2048 bytes says the QP's
/// is 4096, and a READ after it consumes its 4096-byte count of PSNs, so a request that only
/// the 1024-byte count would put in order is a gap. One of 2048 bytes says nothing.
#[test]
fn an_only_packet_of_more_than_2048_bytes_says_the_path_mtu_is_4096() {
    const SEND_ONLY: u8 = 0x04;
    let mut c = Capture::new();
    let mut t = T0;
    let mut at = |c: &mut Capture, f: &encode::RoceFrame| {
        c.add(t, f);
        t += 2 * US;
    };
    let (requester, responder) = (Side { n: 1, qpn: 0x300 }, Side { n: 2, qpn: 0x400 });
    at(&mut c, &frame(requester, responder, SEND_ONLY, 9, ExtHeaders::default(), 3000));
    // 8 KiB: 2 PSNs at 4096, 8 at 1024; the request at 18 skips 12..=17
    at(&mut c, &read_request(requester, responder, 10, 8192));
    at(&mut c, &read_request(requester, responder, 18, 64));
    at(&mut c, &frame(A, B, SEND_ONLY, 7, ExtHeaders::default(), 2048));
    let r = c.analyze(&[]);
    let reads = flow(&r, 1, 0x400);
    assert_eq!(reads["pmtu"], json!(4096));
    assert_eq!((&reads["gaps"], &reads["missing_psns"]), (&json!(1), &json!(6)), "{reads}");
    assert_eq!(flow(&r, 1, 0x200)["pmtu"], json!(null), "2048 bytes fit 2048 and 4096");
}

/// `frame` with its outer IPv4 header (after 14 bytes of Ethernet) CE-marked, its checksum
/// made again.
fn outer_ce_marked(mut frame: Vec<u8>) -> Vec<u8> {
    frame[15] |= 3;
    frame[24..26].copy_from_slice(&[0, 0]);
    let sum = frame[14..34].chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum::<u32>();
    let folded = (sum & 0xFFFF) + (sum >> 16);
    frame[24..26].copy_from_slice(&(!((folded & 0xFFFF) + (folded >> 16)) as u16).to_be_bytes());
    frame
}

/// A spine mirror of a VXLAN overlay sees the underlay's CE mark on the outer header only: the
/// packets count in `ecn.outer_ce`, and pauses beside them are not "pauses without ECN". The
/// outer header of a mirror's own tunnel (ERSPAN) is the mirror's: no underlay mark.
#[test]
fn ce_only_in_a_vxlan_overlay_s_outer_header_is_underlay_marking() {
    let outer = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    let capture = |wrap: &dyn Fn(&[u8]) -> Vec<u8>| {
        let mut c = Capture::new();
        for i in 0..4u32 {
            let inner = write_only(A, B, 10 + i, false).encode();
            c.add_bytes(T0 + i64::from(i) * 10 * US, outer_ce_marked(wrap(&inner)));
        }
        c.add_bytes(T0 + 50 * US, encode::pfc_frame([2, 0, 0, 0, 0xEE, 2], 1 << 3, [0, 0, 0, 0xFFFF, 0, 0, 0, 0]));
        c.analyze(&[])
    };
    let overlay = capture(&|inner| encode::vxlan(&outer, [192, 0, 2, 1], [192, 0, 2, 2], 100, inner));
    assert_eq!(
        (&overlay["ecn"]["ce"], &overlay["ecn"]["outer_ce"], &overlay["ecn"]["ect0"]),
        (&json!(0), &json!(4), &json!(4))
    );
    assert_eq!(flow(&overlay, 1, 0x200)["ecn"]["outer_ce"], json!(4));
    assert!(!codes(&overlay).iter().any(|c| c == "PAUSE_WITHOUT_ECN"), "{:?}", codes(&overlay));
    let mirrored = capture(&|inner| encode::erspan2(&outer, [192, 0, 2, 1], [192, 0, 2, 9], 1, Some(1), inner));
    assert_eq!(mirrored["ecn"]["outer_ce"], json!(0));
    assert!(codes(&mirrored).iter().any(|c| c == "PAUSE_WITHOUT_ECN"), "{:?}", codes(&mirrored));
}
