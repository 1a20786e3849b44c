//! What real fabrics do every day and is not loss (docs/analysis.md, "PSN sequence",
//! "Reordering", "QP reuse", "Doubled mirrors", "Management traffic"): both sides issuing
//! requests, READs between WRITEs, adaptive-routing reordering, a SPAN that sees each packet
//! twice, reused QP numbers, CM exchanges at the management traffic class. Each capture is
//! built by hand, and the report and the per-frame verdicts are checked against what happened.

use crate::common;

use common::capture::*;
use rocescope::generate::encode::{self, RoceFrame};
use rocescope_parsers::ext::{ExtHeaders, Reth};
use serde_json::{Value, json};

const C: Side = Side { n: 3, qpn: 0x300 };
const D: Side = Side { n: 4, qpn: 0x400 };
fn write_first(from: Side, to: Side, psn: u32, pmtu: usize, len: u32) -> RoceFrame {
    frame(
        from,
        to,
        0x06,
        psn,
        ExtHeaders { reth: Some(Reth { va: 0, rkey: 1, dma_len: len }), ..ExtHeaders::default() },
        pmtu,
    )
}

/// A 4 KiB RDMA WRITE at PMTU 1024: FIRST, MIDDLE, MIDDLE, LAST (AckReq on the last).
fn write_4k(from: Side, to: Side, psn: u32) -> Vec<RoceFrame> {
    let mut last = frame(from, to, 0x08, psn + 3, ExtHeaders::default(), 1024);
    last.bth.ack_req = true;
    vec![
        write_first(from, to, psn, 1024, 4096),
        frame(from, to, 0x07, psn + 1, ExtHeaders::default(), 1024),
        frame(from, to, 0x07, psn + 2, ExtHeaders::default(), 1024),
        last,
    ]
}

#[test]
fn both_sides_writing_and_reading_on_one_connection_is_no_loss() {
    let mut c = Capture::new();
    let (mut a, mut b) = (1_000u32, 0x50_0000u32);
    let mut t = T0;
    for _ in 0..30 {
        c.add(t, &write_only(A, B, a, true));
        c.add(t + US, &read_request(B, A, b, 2048));
        for (i, r) in read_responses(A, B, b, 2, 1024).iter().enumerate() {
            c.add(t + (2 + i as i64) * US, r);
        }
        c.add(t + 4 * US, &write_only(B, A, b + 2, true));
        c.add(t + 5 * US, &ack(B, A, a, 0x1F));
        c.add(t + 6 * US, &ack(A, B, b + 2, 0x1F));
        a += 1;
        b += 3;
        t += 10 * US;
    }
    let r = c.analyze(&[]);
    for f in flows(&r) {
        assert_eq!(counts(f), [0, 0, 0, 0], "flow {}", f["id"]);
    }
    let ab = flow(&r, 1, 0x200);
    assert_eq!((&ab["requests"]["sequenced"], &ab["responses"]["sequenced"]), (&json!(30), &json!(60)));
    assert_eq!(ab["responses"]["first_psn"], json!(0x50_0000));
    assert_eq!(flow(&r, 2, 0x100)["read_requests"], json!(30));
    assert!(!codes(&r).iter().any(|c| c.starts_with("PSN") || c.starts_with("RETRANSMIT")), "{:?}", codes(&r));
}

/// 10 rounds of a 4 KiB WRITE then a 4 KiB READ from A to B, B answering each READ with four
/// responses; `lose` drops B's second response to the READ of that round, and A then re-issues
/// the READ.
fn writes_and_reads(lose: Option<u32>) -> Capture {
    let mut c = Capture::new();
    let mut psn = 100u32;
    let mut t = T0;
    for round in 0..10 {
        for (i, w) in write_4k(A, B, psn).iter().enumerate() {
            c.add(t + i as i64 * US, w);
        }
        c.add(t + 5 * US, &ack(B, A, psn + 3, 0x1F));
        let read = psn + 4;
        c.add(t + 6 * US, &read_request(A, B, read, 4096));
        let responses = read_responses(B, A, read, 4, 1024);
        for (i, r) in responses.iter().enumerate() {
            if lose != Some(round) || i != 1 {
                c.add(t + (7 + i as i64) * US, r);
            }
        }
        if lose == Some(round) {
            // the requester saw the response sequence break and reads the whole range again
            c.add(t + 20 * US, &read_request(A, B, read, 4096));
            for (i, r) in responses.iter().enumerate() {
                c.add(t + (21 + i as i64) * US, r);
            }
        }
        psn += 8;
        t += 40 * US;
    }
    c
}

#[test]
fn writes_and_reads_interleaved_on_one_qp_are_no_loss() {
    let r = writes_and_reads(None).analyze(&[]);
    for f in flows(&r) {
        assert_eq!(counts(f), [0, 0, 0, 0], "flow {}", f["id"]);
    }
    assert_eq!(flow(&r, 2, 0x100)["responses"]["sequenced"], json!(40));
    assert_eq!(flow(&r, 2, 0x100)["messages"], json!(10), "ten READ responses of 4 KiB");
}

#[test]
fn a_lost_read_response_and_the_reissued_read() {
    let c = writes_and_reads(Some(4));
    let r = c.analyze(&[]);
    let responses = flow(&r, 2, 0x100);
    assert_eq!(
        (
            &responses["gaps"],
            &responses["missing_psns"],
            &responses["retransmitted"],
            &responses["retransmit_episodes"]
        ),
        (&json!(1), &json!(1), &json!(4), &json!(1))
    );
    assert_eq!(responses["responses"]["missing_psns"], json!(1));
    let requests = flow(&r, 1, 0x200);
    assert_eq!((&requests["gaps"], &requests["retransmitted"]), (&json!(0), &json!(1)));
    let episodes = r["retransmit_episodes"].as_array().unwrap();
    let reread = episodes.iter().find(|e| e["space"] == json!("responses")).expect("a response episode");
    assert_eq!((&reread["trigger"], &reread["packets"]), (&json!("reread"), &json!(4)));
    // the re-issued READ's trigger is the gap in its responses, not a missing NAK
    let reissued = episodes.iter().find(|e| e["space"] == json!("requests")).expect("the re-issued READ");
    let frames = frames_of(&c);
    let gap = frames.iter().find(|f| f["seq_class"] == json!("gap")).expect("the gap");
    assert_eq!((&reissued["trigger"], &reissued["trigger_frame"]), (&json!("response_gap"), &gap["frame"]));
    assert!(!codes(&r).iter().any(|c| c == "RETRANSMIT_NO_NAK"), "{:?}", codes(&r));
    assert_eq!(count_class(&frames, "retransmission"), 5);
    assert_eq!(count_class(&frames, "gap"), 1);
}

#[test]
fn swaps_and_a_three_deep_displacement_are_reordering_not_loss() {
    let mut order: Vec<u32> = (1..=60).collect();
    for i in [9usize, 19, 39, 49] {
        order.swap(i, i + 1);
    }
    // PSN 30 three places late: 29, 31, 32, 33, 30, 34
    order.retain(|&p| p != 30);
    let at = order.iter().position(|&p| p == 33).unwrap() + 1;
    order.insert(at, 30);
    let mut c = Capture::new();
    stream(&mut c, A, B, &order, T0);
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [0, 0, 0, 5]);
    assert_eq!((&f["reorder_events"], &f["reorder_depth_max"]), (&json!(5), &json!(4)));
    assert_eq!(f["reorder_delay_us_max"], json!(3.0), "30 came 3 µs after 31");
    assert_eq!(codes(&r), vec!["REORDERING"]);
    let frames = frames_of(&c);
    assert_eq!((count_class(&frames, "late_arrival"), count_class(&frames, "ahead")), (5, 5));
    assert_eq!(count_class(&frames, "gap") + count_class(&frames, "retransmission"), 0);
}

#[test]
fn reordering_and_a_real_loss_recovered_by_go_back_n() {
    let mut order: Vec<u32> = (1..=20).filter(|&p| p != 15).collect();
    order.swap(4, 5); // 6 before 5
    let mut c = Capture::new();
    stream(&mut c, A, B, &order, T0);
    c.add(T0 + 16 * US, &nak(B, A, 15));
    stream(&mut c, A, B, &(15..=25).collect::<Vec<_>>(), T0 + 30 * US);
    let r = c.by_time().analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [1, 1, 6, 1], "15 missing, 15..20 resent, 5 late");
    let e = &r["retransmit_episodes"][0];
    assert_eq!(
        (&e["trigger"], &e["pattern"], &e["first_psn"]),
        (&json!("nak_psn_seq_err"), &json!("go_back_n"), &json!(15))
    );
    assert_eq!(f["reorder_naks"], json!(0));
}

#[test]
fn a_receiver_that_naks_a_late_packet() {
    // 10 is 1.5 µs late; the receiver NAKs it 0.5 µs before it arrives and the requester
    // goes back to 10 though nothing was lost
    let mut c = Capture::new();
    let order: Vec<u32> = (1..=14).filter(|&p| p != 10).collect();
    stream(&mut c, A, B, &order, T0);
    let eleven = T0 + 9 * US;
    c.add(eleven + US, &nak(B, A, 10));
    c.add(eleven + 3 * US / 2, &write_only(A, B, 10, false));
    stream(&mut c, A, B, &(10..=20).collect::<Vec<_>>(), T0 + 30 * US);
    let r = c.by_time().analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [0, 0, 5, 1], "nothing missing; 10..14 resent");
    assert_eq!((&f["reorder_naks"], &f["reorder_events"]), (&json!(1), &json!(1)));
    assert_eq!(r["retransmit_episodes"][0]["trigger"], json!("nak_psn_seq_err"));
    let found = codes(&r);
    assert!(found.contains(&"REORDER_NAKS".to_string()), "{found:?}");
    assert!(!found.iter().any(|c| c == "PSN_GAP" || c == "NAK_PSN_SEQUENCE"), "the NAK reported no loss: {found:?}");
}

#[test]
fn a_selective_resend_12_us_after_its_nak_is_a_retransmission() {
    let mut c = Capture::new();
    let order: Vec<u32> = (1..=12).filter(|&p| p != 10).collect();
    stream(&mut c, A, B, &order, T0);
    let eleven = T0 + 9 * US;
    c.add(eleven + US / 2, &nak(B, A, 10));
    c.add(eleven + US / 2 + 12 * US, &write_only(A, B, 10, false));
    c.add(eleven + 13 * US, &write_only(A, B, 13, false));
    let r = c.by_time().analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [1, 1, 1, 0]);
    let e = &r["retransmit_episodes"][0];
    assert_eq!((&e["trigger"], &e["pattern"]), (&json!("nak_psn_seq_err"), &json!("selective")));
}

#[test]
fn a_late_packet_just_outside_the_reorder_window_is_a_retransmission() {
    let mut c = Capture::new();
    stream(&mut c, A, B, &[1, 2, 3, 4, 6, 7], T0);
    // the gap opened at 6 (T0 + 4 µs); 5 comes 21 µs later
    c.add(T0 + 25 * US, &write_only(A, B, 5, false));
    c.add(T0 + 26 * US, &write_only(A, B, 8, false));
    let f = flow(&c.analyze(&[]), 1, 0x200).clone();
    assert_eq!(counts(&f), [1, 1, 1, 0]);
    // and 20 µs after it, inside the window, it is late
    let mut c = Capture::new();
    stream(&mut c, A, B, &[1, 2, 3, 4, 6, 7], T0);
    c.add(T0 + 24 * US, &write_only(A, B, 5, false));
    c.add(T0 + 25 * US, &write_only(A, B, 8, false));
    assert_eq!(counts(flow(&c.analyze(&[]), 1, 0x200)), [0, 0, 0, 1]);
    // --reorder-window-us moves the line
    assert_eq!(counts(flow(&c.analyze(&["--reorder-window-us", "10"]), 1, 0x200)), [1, 1, 1, 0]);
}

#[test]
fn a_one_way_capture_tells_go_back_n_from_a_late_burst() {
    let mut c = Capture::new();
    // A → B: 8, 9 and 10 lost; go-back-N resends them 8 µs after the gap, then 11.. again
    let sent: Vec<u32> = (1..=18).filter(|p| !(8..=10).contains(p)).collect();
    stream(&mut c, A, B, &sent, T0);
    let gap_at = T0 + 7 * US;
    stream(&mut c, A, B, &(8..=20).collect::<Vec<_>>(), gap_at + 8 * US);
    // C → D: 8, 9 and 10 arrive 4 µs late
    let mut order: Vec<u32> = (1..=20).filter(|p| !(8..=10).contains(p)).collect();
    let at = order.iter().position(|&p| p == 14).unwrap() + 1;
    for (i, p) in [8, 9, 10].iter().enumerate() {
        order.insert(at + i, *p);
    }
    stream(&mut c, C, D, &order, T0 + MS);
    let r = c.analyze(&[]);
    let ab = flow(&r, 1, 0x200);
    assert_eq!(counts(ab), [1, 3, 11, 0], "8..18 resent, 8..10 missing");
    let cd = flow(&r, 3, 0x400);
    assert_eq!(counts(cd), [0, 0, 0, 3]);
    assert_eq!(cd["reorder_events"], json!(1));
    assert_eq!(r["retransmit_episodes"][0]["trigger"], json!("no_nak"));
}

#[test]
fn a_qp_number_reused_twice_is_three_flows() {
    let mut c = Capture::new();
    let mut t = T0;
    for start in [5_000u32, 1_000, 0xFF_F000] {
        for i in 0..32 {
            c.add(t + i64::from(i) * US, &write_only(A, B, start + i, i % 8 == 7));
            if i % 8 == 7 {
                c.add(t + i64::from(i) * US + US / 2, &ack(B, A, start + i, 0x1F));
            }
        }
        t += 50 * MS;
    }
    let r = c.analyze(&[]);
    let data: Vec<&Value> = flows(&r).iter().filter(|f| f["dst_qp"] == json!(0x200)).collect();
    assert_eq!(data.len(), 3);
    for (i, f) in data.iter().enumerate() {
        assert_eq!(counts(f), [0, 0, 0, 0], "incarnation {i}");
        assert_eq!((&f["packets"], &f["pairing"]), (&json!(32), &json!("psn")));
        assert_eq!(f["previous_flow"], if i == 0 { Value::Null } else { data[i - 1]["id"].clone() });
    }
    assert_eq!(flows(&r).iter().filter(|f| f["dst_qp"] == json!(0x100)).count(), 3, "the ACK flows too");
    assert_eq!(codes(&r), vec!["QP_REUSED"]);
}

/// WRITEs from A to B, one per PSN of `psns`, 1 µs apart from `t`, every 8th asking for the ACK
/// B sends 0.5 µs later when `acked`.
fn acked_writes(c: &mut Capture, psns: impl IntoIterator<Item = u32>, t: i64, acked: bool) {
    for (i, psn) in psns.into_iter().enumerate() {
        let at = t + i as i64 * US;
        let asks = acked && i % 8 == 7;
        c.add(at, &write_only(A, B, psn, asks));
        if asks {
            c.add(at + US / 2, &ack(B, A, psn, 0x1F));
        }
    }
}

#[test]
fn a_job_restarted_at_psn_0_on_the_same_qp_numbers_is_a_new_connection() {
    // NCCL connects without CM and starts at PSN 0: the job restarted 60 s later on the same
    // QP numbers sends PSN 0 again, which two ACKs acknowledged
    let mut c = Capture::new();
    acked_writes(&mut c, 0..40, T0, true);
    acked_writes(&mut c, 0..40, T0 + 60_000 * MS, true);
    let r = c.analyze(&[]);
    let data: Vec<&Value> = flows(&r).iter().filter(|f| f["dst_qp"] == json!(0x200)).collect();
    assert_eq!(data.len(), 2);
    for (i, f) in data.iter().enumerate() {
        assert_eq!(counts(f), [0, 0, 0, 0], "connection {i}");
        assert_eq!((&f["packets"], &f["retransmit_episodes"]), (&json!(40), &json!(0)), "connection {i}");
        assert!(
            f["fct_us_max"].as_f64().is_some_and(|us| us < 100.0),
            "no completion spans the two: {}",
            f["fct_us_max"]
        );
    }
    assert_eq!(data[1]["previous_flow"], data[0]["id"]);
    assert_eq!(codes(&r), vec!["QP_REUSED"]);
}

#[test]
fn a_new_first_psn_far_ahead_after_everything_was_acknowledged_is_a_new_connection() {
    let mut c = Capture::new();
    acked_writes(&mut c, 1_000..1_040, T0, true);
    acked_writes(&mut c, 5_001_000..5_001_040, T0 + 1_000 * MS, true);
    let r = c.analyze(&[]);
    let data: Vec<&Value> = flows(&r).iter().filter(|f| f["dst_qp"] == json!(0x200)).collect();
    assert_eq!(data.len(), 2);
    assert!(data.iter().all(|f| counts(f) == [0, 0, 0, 0]));
    assert_eq!(codes(&r), vec!["QP_REUSED"]);
}

#[test]
fn what_a_sender_may_still_resend_after_silence_is_the_same_connection() {
    // a jump ahead while 33..=39 await their ACK: the capture missed 20 ms of the flow
    let mut c = Capture::new();
    acked_writes(&mut c, 0..39, T0, true);
    acked_writes(&mut c, 5_000..5_040, T0 + 20 * MS, true);
    let r = c.analyze(&[]);
    assert_eq!(flows(&r).iter().filter(|f| f["dst_qp"] == json!(0x200)).count(), 1);
    assert_eq!(flow(&r, 1, 0x200)["gaps"], json!(1));
    // the last ACK (of 39) lost after the tap: the sender times out and resends 32..=39,
    // which only that ACK covered
    let mut c = Capture::new();
    acked_writes(&mut c, 0..40, T0, true);
    acked_writes(&mut c, 32..40, T0 + 20 * MS, false);
    let r = c.analyze(&[]);
    assert_eq!(flows(&r).iter().filter(|f| f["dst_qp"] == json!(0x200)).count(), 1);
    assert_eq!(counts(flow(&r, 1, 0x200)), [0, 0, 8, 0]);
}

/// WRITEs 1..=20 from A to B, 1 µs apart, 10 lost before the tap; B NAKs 10 when 11 arrives
/// and A goes back to 10 once 20 is sent, resending `first_pass`; B NAKs `again` when the
/// pass shows it lacks it, and A resends from it 5 µs later, going on to 25.
fn go_back_n_twice(first_pass: &[u32], again: u32) -> Capture {
    let mut c = Capture::new();
    // another connection's traffic before, so that resends are not most of the capture's
    // frames (which a doubled mirror's copies would be)
    let other = Side { n: 3, qpn: 0x300 };
    stream(&mut c, other, B, &(1..=100).collect::<Vec<_>>(), T0 - 200 * US);
    stream(&mut c, A, B, &(1..=20).filter(|&p| p != 10).collect::<Vec<_>>(), T0);
    let nak_at = T0 + 10 * US + US / 2;
    c.add(nak_at, &nak(B, A, 10));
    let pass_at = T0 + 20 * US;
    stream(&mut c, A, B, first_pass, pass_at);
    let second_nak = pass_at + first_pass.len() as i64 * US;
    c.add(second_nak, &nak(B, A, again));
    let second: Vec<u32> = (again..=25).collect();
    stream(&mut c, A, B, &second, second_nak + 5 * US);
    c.by_time();
    c
}

#[test]
fn a_go_back_n_whose_resend_was_lost_again_is_go_back_n() {
    // 12's resend is lost before the tap: the first pass skips it, B NAKs 12, and the second
    // pass begins at it
    let first: Vec<u32> = (10..=20).filter(|&p| p != 12).collect();
    let r = go_back_n_twice(&first, 12).analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [1, 2, 10 + 9, 0], "10 and 12's resend missing");
    let e = &r["retransmit_episodes"];
    assert_eq!(e.as_array().map(Vec::len), Some(1));
    assert_eq!(
        (&e[0]["pattern"], &e[0]["trigger"], &e[0]["packets"]),
        (&json!("go_back_n"), &json!("nak_psn_seq_err"), &json!(19))
    );
    // two passes, the second for 15's resend lost after the tap
    let first: Vec<u32> = (10..=20).collect();
    let r = go_back_n_twice(&first, 15).analyze(&[]);
    assert_eq!(counts(flow(&r, 1, 0x200)), [1, 1, 11 + 6, 0]);
    let e = &r["retransmit_episodes"];
    assert_eq!((e.as_array().map(Vec::len), &e[0]["pattern"]), (Some(1), &json!("go_back_n")));
}

/// WRITEs 1..=20 from A to B, 1 µs apart, 16 ACKed; 17..=20 lost after the tap, and A resends
/// them on its own timer `silence` after 20.
fn resent_on_a_timer(silence: i64) -> Capture {
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=20).collect::<Vec<_>>(), T0);
    c.add(T0 + 17 * US, &ack(B, A, 16, 0x1F));
    stream(&mut c, A, B, &(17..=20).collect::<Vec<_>>(), T0 + 19 * US + silence);
    c.by_time();
    c
}

#[test]
fn resends_on_the_nics_timer_are_timeouts() {
    // an adaptive retransmission timer fires after 200–800 µs, not the IB formula's
    // milliseconds
    let r = resent_on_a_timer(300 * US).analyze(&[]);
    let e = &r["retransmit_episodes"][0];
    assert_eq!((&e["trigger"], &e["idle_before_ns"]), (&json!("timeout"), &json!(300_000)));
    let found = codes(&r);
    assert!(
        found.contains(&"RETRANSMIT_TIMEOUT".to_string()) && !found.contains(&"RETRANSMIT_NO_NAK".to_string()),
        "{found:?}"
    );
    // 50 µs of silence is too short for a timer: the NAK is not in the capture
    let r = resent_on_a_timer(50 * US).analyze(&[]);
    assert_eq!(r["retransmit_episodes"][0]["trigger"], json!("no_nak"));
}

/// 1..=40 from A at 1 µs, 16 acknowledged; the switch pauses `priority` for 300 µs from 41
/// µs; A's timer fires while it is paused, and when the pause ends it sends 41..=44, queued
/// before, then 17..=44 again: 1 µs of silence before the resend.
fn resent_on_a_timer_during_a_pause(priority: u8) -> Capture {
    let switch = [2, 0, 0, 0, 0xEE, 1];
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=40).collect::<Vec<_>>(), T0);
    c.add(T0 + 17 * US, &ack(B, A, 16, 0x1F));
    let mut xoff = [0u16; 8];
    xoff[usize::from(priority)] = 0xFFFF;
    c.add_bytes(T0 + 41 * US, encode::pfc_frame(switch, 1 << priority, xoff));
    c.add_bytes(T0 + 341 * US, encode::pfc_frame(switch, 1 << priority, [0; 8]));
    stream(&mut c, A, B, &(41..=44).collect::<Vec<_>>(), T0 + 342 * US);
    stream(&mut c, A, B, &(17..=44).collect::<Vec<_>>(), T0 + 347 * US);
    c.by_time();
    c
}

#[test]
fn a_timeout_while_pfc_paused_the_sender_is_a_timeout() {
    // untagged data at the plan's DSCP 26 travels on the plan's priority 3
    let r = resent_on_a_timer_during_a_pause(3).analyze(&[]);
    let e = &r["retransmit_episodes"][0];
    assert_eq!(
        (&e["trigger"], &e["trigger_frame"], &e["idle_before_ns"], &e["pattern"]),
        (&json!("timeout"), &json!(42), &json!(2_000), &json!("go_back_n"))
    );
    let found = codes(&r);
    assert!(
        found.contains(&"RETRANSMIT_TIMEOUT".to_string()) && !found.contains(&"RETRANSMIT_NO_NAK".to_string()),
        "{found:?}"
    );
    // a pause of another priority held other traffic: the NAK is not in the capture
    let r = resent_on_a_timer_during_a_pause(5).analyze(&[]);
    assert_eq!(
        (&r["retransmit_episodes"][0]["trigger"], &r["retransmit_episodes"][0]["trigger_frame"]),
        (&json!("no_nak"), &json!(null))
    );
    // data of another DSCP, untagged: its priority is not known
    let r = resent_on_a_timer_during_a_pause(3).analyze(&["--data-dscp", "24"]);
    assert_eq!(r["retransmit_episodes"][0]["trigger"], json!("no_nak"));
}

#[test]
fn a_resend_through_a_bonds_other_port_is_a_retransmission() {
    // 17..=20 lost when A's first port failed; A resends them 500 µs later through its other
    // port (another source MAC), within the mirror window of the originals
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=20).collect::<Vec<_>>(), T0);
    c.add(T0 + 17 * US, &ack(B, A, 16, 0x1F));
    for (i, psn) in (17..=20u32).enumerate() {
        let mut resend = write_only(A, B, psn, false);
        resend.l2.src = [2, 0, 0, 0, 0, 0x81];
        c.add(T0 + 519 * US + i as i64 * US, &resend);
    }
    let r = c.by_time().analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!((counts(f), &f["mirror_duplicates"]), ([0, 0, 4, 0], &json!(0)));
    assert_eq!(r["retransmit_episodes"][0]["trigger"], json!("timeout"));
    // a second tap's copies (another MAC) 2 µs behind every packet are copies still
    let mut c = Capture::new();
    for psn in 1..=20u32 {
        let mut copy = write_only(A, B, psn, false);
        copy.l2.src = [2, 0, 0, 0, 0, 0x81];
        c.add(T0 + i64::from(psn) * US, &write_only(A, B, psn, false));
        c.add(T0 + i64::from(psn) * US + 2 * US, &copy);
    }
    let f = flow(&c.by_time().analyze(&[]), 1, 0x200).clone();
    assert_eq!((counts(&f), &f["mirror_duplicates"]), ([0, 0, 0, 0], &json!(20)));
    // and after an idle 2 ms, the first packet seen at the second tap alone (the first tap
    // missed it) leaves the second tap's later copies copies
    let mut c = Capture::new();
    for psn in (1..=10u32).chain(11..=20) {
        let t = T0 + i64::from(psn) * 5 * US + if psn > 10 { 2 * MS } else { 0 };
        let mut copy = write_only(A, B, psn, false);
        copy.l2.src = [2, 0, 0, 0, 0, 0x81];
        if psn != 11 {
            c.add(t, &write_only(A, B, psn, false));
        }
        c.add(t + 2 * US, &copy);
    }
    let f = flow(&c.by_time().analyze(&[]), 1, 0x200).clone();
    assert_eq!((counts(&f), &f["mirror_duplicates"]), ([0, 0, 0, 0], &json!(19)));
}

/// Every frame of `c` twice, the copy byte for byte `delay(i)` later.
fn doubled(c: &Capture, delay: impl Fn(usize) -> i64) -> Capture {
    let mut d = Capture::new();
    for (i, (ts, bytes)) in c.frames.iter().enumerate() {
        d.add_bytes(*ts, bytes.clone());
        d.add_bytes(*ts + delay(i), bytes.clone());
    }
    d.frames.sort_by_key(|(ts, _)| *ts);
    d
}

#[test]
fn a_span_that_sees_every_packet_twice_without_loss() {
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=40).collect::<Vec<_>>(), T0);
    for i in 0..5 {
        c.add(T0 + (8 * i + 8) * US - US / 3, &ack(B, A, 8 * i as u32 + 8, 0x1F));
    }
    let d = doubled(&c, |i| 600 + (i as i64 % 7) * 6_500);
    let r = d.analyze(&[]);
    assert_eq!(r["capture"]["doubled_mirror"]["doubled"], json!(true));
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [0, 0, 0, 0]);
    assert_eq!((&f["packets"], &f["mirror_duplicates"]), (&json!(40), &json!(40)));
    assert_eq!((&flow(&r, 2, 0x100)["acks"], &r["totals"]["mirror_duplicates"]), (&json!(5), &json!(45)));
    assert_eq!(codes(&r), vec!["MIRROR_DUPLICATES"]);
    // the same capture seen once is no doubled mirror
    assert_eq!(c.analyze(&[])["capture"]["doubled_mirror"]["doubled"], json!(false));
}

#[test]
fn a_span_that_sees_every_packet_twice_with_a_loss_and_go_back_n() {
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=20).filter(|&p| p != 15).collect::<Vec<_>>(), T0);
    c.add(T0 + 15 * US, &nak(B, A, 15));
    stream(&mut c, A, B, &(15..=25).collect::<Vec<_>>(), T0 + 30 * US);
    c.by_time();
    let d = doubled(&c, |i| 600 + (i as i64 % 4) * 700);
    let r = d.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [1, 1, 6, 0], "15 missing, 15..20 resent once each");
    assert_eq!(f["mirror_duplicates"], json!(30), "19 packets and 11 resends, each seen twice");
    let naks = flow(&r, 2, 0x100);
    assert_eq!((&naks["naks_psn_seq_err"], &naks["mirror_duplicates"]), (&json!(1), &json!(1)));
    assert_eq!(r["retransmit_episodes"].as_array().unwrap().len(), 1);
    let frames = frames_of(&d);
    assert_eq!(frames.iter().filter(|f| f["mirror_duplicate"] == json!(true)).count(), 31);
    assert_eq!(count_class(&frames, "retransmission"), 6);
}

#[test]
fn cm_exchanges_at_the_management_traffic_class_break_no_marking_rule() {
    let mut c = Capture::new();
    cm_exchange(&mut c, T0, 10, 0x100, 0x1000, 0x200, 0x8000);
    for i in 0..8 {
        c.add(T0 + (10 + i) * US, &write_only(A, B, 0x1000 + i as u32, i == 7));
    }
    let r = c.analyze(&[]);
    let m = &r["management"];
    assert_eq!((&m["packets"], &m["dscp"], &m["ecn"]["not_ect"]), (&json!(2), &json!({"0": 2}), &json!(2)));
    assert_eq!((&r["policy"]["data_dscp_violations"], &r["policy"]["not_ect_data"]), (&json!(0), &json!(0)));
    assert!(codes(&r).is_empty(), "{:?}", codes(&r));
    let r = c.analyze(&["--cm-dscp", "48"]);
    assert_eq!(codes(&r), vec!["CM_DSCP"]);
    assert_eq!(r["policy"]["cm_dscp_violations"], json!(2));
}

#[test]
fn the_samples_of_real_traffic_show_no_false_loss() {
    let sample = |name: &str| {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name);
        analyze_file(&path, &[])
    };
    let r = sample("bidirectional_read_write.pcap");
    assert!(flows(&r).iter().all(|f| counts(f) == [0, 0, 0, 0]));
    assert_eq!(flow(&r, 1, 0x522)["responses"]["sequenced"], json!(24), "six 4 KiB READs of the host");
    assert!(codes(&r).is_empty(), "{:?}", codes(&r));
    let r = sample("reordering.pcap");
    assert_eq!(counts(flow(&r, 1, 0x622)), [0, 0, 0, 7]);
    assert_eq!(counts(flow(&r, 3, 0x644)), [0, 0, 5, 1]);
    assert_eq!(flow(&r, 3, 0x644)["reorder_naks"], json!(1));
}

/// A READ of two responses, a 16 KiB WRITE, and a READ of two: the first READ's first
/// response is lost, the requester (seeing the second where the first belonged) sends all
/// three again (IBA §9.7.5.1.5), and the responder answers them again: a re-read over both
/// READs' ranges, its PSNs apart by the WRITE's, which the responder answers with an ACK.
#[test]
fn a_re_read_over_reads_with_a_write_between_is_go_back_n() {
    let mut c = Capture::new();
    let (read1, write, read2) = (1000u32, 1002u32, 1018u32);
    let requests = |c: &mut Capture, t: i64| {
        c.add(t, &read_request(A, B, read1, 2048));
        for k in 0..4 {
            for (i, w) in write_4k(A, B, write + 4 * k).iter().enumerate() {
                c.add(t + (1 + 4 * k as i64 + i as i64) * US / 4, w);
            }
        }
        c.add(t + 5 * US, &read_request(A, B, read2, 2048));
    };
    let responses = |c: &mut Capture, t: i64, lose_first: bool| {
        for (i, r) in read_responses(B, A, read1, 2, 1024).iter().enumerate().skip(usize::from(lose_first)) {
            c.add(t + i as i64 * US / 2, r);
        }
        c.add(t + US, &ack(B, A, write + 15, 0x1F));
        for (i, r) in read_responses(B, A, read2, 2, 1024).iter().enumerate() {
            c.add(t + (2 + i as i64) * US, r);
        }
    };
    // READs answered in full before: a tenth of the capture is resent
    for k in 0..200u32 {
        let t = T0 - i64::from(200 - k) * 2 * US;
        c.add(t, &read_request(A, B, read1 - 200 + k, 1024));
        c.add(t + US, &read_responses(B, A, read1 - 200 + k, 1, 1024)[0]);
    }
    requests(&mut c, T0);
    responses(&mut c, T0 + 6 * US, true);
    requests(&mut c, T0 + 12 * US);
    responses(&mut c, T0 + 18 * US, false);
    let r = c.analyze(&[]);
    let episodes = r["retransmit_episodes"].as_array().unwrap();
    let reread = episodes.iter().find(|e| e["space"] == json!("responses")).expect("a response episode");
    assert_eq!(
        (&reread["trigger"], &reread["pattern"], &reread["first_psn"], &reread["last_psn"]),
        (&json!("reread"), &json!("go_back_n"), &json!(read1), &json!(read2 + 1))
    );
    let responses = flow(&r, 2, 0x100);
    assert_eq!(
        (&responses["responses"]["missing_psns"], &responses["responses"]["retransmitted"]),
        (&json!(1), &json!(4)),
        "the lost response, none of the WRITE's PSNs; the four responses again"
    );
}
