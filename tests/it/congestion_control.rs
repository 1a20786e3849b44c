//! Congestion control on hand-built captures (docs/analysis.md, "Congestion control"): CNP
//! bursts and the sender's reaction at the edges of their definitions, message completion by
//! a coalesced ACK and by a READ's last response, and fan-in counted per source address.

use crate::common;

use common::capture::{self, A, B, Capture, Side, T0, US, ack, frame, read_request, read_responses, write_only};
use rocescope_parsers::ext::ExtHeaders;
use rocescope_parsers::opcode::CNP;
use serde_json::{Value, json};

/// A CNP from B to A's QP: one of the data flow A → B's.
fn cnp(c: &mut Capture, us: i64) {
    c.add(T0 + us * US, &frame(B, A, CNP, 0, ExtHeaders::default(), 0));
}

fn outcomes(report: &Value) -> Vec<String> {
    let bursts = report["congestion"]["cnp_bursts"].as_array().expect("bursts");
    bursts.iter().map(|b| b["outcome"].as_str().expect("an outcome").to_string()).collect()
}

#[test]
fn cnp_bursts_are_measured_within_the_capture_and_cut_short_by_the_next() {
    // A writes 64 bytes every 4 µs, every 8 µs in [505, 700) and [1005, 1150) µs; B ACKs every
    // tenth packet, and sends CNPs at 50 µs (too early to be measured), at 500 and 600 µs
    // (exactly W apart: two bursts, the second starting before the first could recover) and
    // at 1000 µs (the rate halves, then comes back)
    let mut c = Capture::new();
    let (mut t, mut psn) = (0, 0x100);
    while t < 2_000 {
        c.add(T0 + t * US, &write_only(A, B, psn, psn % 10 == 9));
        if psn % 10 == 9 {
            c.add(T0 + t * US + 500, &ack(B, A, psn, 0x1F));
        }
        psn += 1;
        t += if (505..700).contains(&t) || (1005..1150).contains(&t) { 8 } else { 4 };
    }
    for us in [50, 500, 600, 1000] {
        cnp(&mut c, us);
    }
    let report = c.by_time().analyze(&[]);
    assert_eq!(outcomes(&report), ["not_measured", "not_recovered", "not_reacted", "recovered"]);
    let bursts = &report["congestion"]["cnp_bursts"];
    // [400, 500): 25 packets of 64 bytes; [510, 610): 12
    assert_eq!(bursts[1]["rate_before_bps"], json!(25 * 64 * 10_000));
    assert_eq!(bursts[1]["reaction_ratio"], json!(0.48));
    assert_eq!(bursts[2]["reaction_ratio"], json!(1.0));
    // (x − 100, x] first holds 23 packets (0.9 × 25 rounded up) at x = 1232 µs
    assert_eq!(bursts[3]["recovered_ns"], json!(T0 + 1_232 * US));
    assert_eq!(bursts[3]["recovery_us"], json!(232.0));
    let flow = capture::flow(&report, 1, B.qpn);
    assert_eq!(flow["cnp_bursts"], json!(4));
    assert_eq!(flow["reactions_measured"], json!(3));
    assert_eq!((&flow["reacted"], &flow["recovered"], &flow["not_recovered"]), (&json!(2), &json!(1), &json!(1)));
    assert_eq!(flow["reaction_ratio_p50"], json!(0.48));
    assert_eq!(flow["recovery_us_max"], json!(232.0));
    // a wider W joins the bursts at 500 and 600 µs and takes the one at 50 µs in
    let wider = c.analyze(&["--cc-window-us", "150"]);
    assert_eq!(outcomes(&wider).len(), 3);
}

#[test]
fn a_coalesced_ack_completes_every_message_it_covers() {
    let mut c = Capture::new();
    // a two-packet SEND (PSNs 10, 11), a SEND ONLY (12), one ACK for both at 10 µs
    c.add(T0, &frame(A, B, 0x00, 10, ExtHeaders::default(), 1024));
    c.add(T0 + US, &frame(A, B, 0x02, 11, ExtHeaders::default(), 512));
    c.add(T0 + 2 * US, &frame(A, B, 0x04, 12, ExtHeaders::default(), 100));
    // an ACK short of the last PSN completes nothing: it only pairs the flows
    c.add(T0 + 3 * US, &ack(B, A, 10, 0x1F));
    c.add(T0 + 10 * US, &ack(B, A, 12, 0x1F));
    // a WRITE never ACKed, and one whose start the capture missed (a LAST alone)
    c.add(T0 + 20 * US, &write_only(A, B, 13, true));
    c.add(T0 + 21 * US, &frame(A, B, 0x08, 14, ExtHeaders::default(), 64));
    let report = c.analyze(&[]);
    let flow = capture::flow(&report, 1, B.qpn);
    assert_eq!((&flow["messages_completed"], &flow["messages_incomplete"]), (&json!(2), &json!(1)));
    assert_eq!((&flow["fct_us_p50"], &flow["fct_us_max"]), (&json!(8.0), &json!(10.0)));
    let completion = &report["congestion"]["completion"];
    assert_eq!(completion["all"]["messages"], json!(2));
    // 1536 and 100 bytes: both at most 4 KiB
    assert_eq!(
        completion["by_size"][0],
        json!({"class": "le_4k", "messages": 2, "p50_us": 8.0, "p99_us": 10.0, "max_us": 10.0})
    );
}

#[test]
fn a_read_completes_at_its_last_response() {
    let mut c = Capture::new();
    // a 4 KiB READ at PSN 100 (four 1024-byte responses, PSNs 100..103), then a WRITE at 104
    c.add(T0, &read_request(A, B, 100, 4096));
    c.add(T0 + US, &write_only(A, B, 104, true));
    // the WRITE's ACK comes before the READ's responses end: it completes the WRITE only
    c.add(T0 + 3 * US, &ack(B, A, 104, 0x1F));
    for (i, f) in read_responses(B, A, 100, 4, 1024).iter().enumerate() {
        c.add(T0 + (5 + i as i64) * US, f);
    }
    let report = c.analyze(&[]);
    let flow = capture::flow(&report, 1, B.qpn);
    assert_eq!((&flow["messages_completed"], &flow["messages_incomplete"]), (&json!(2), &json!(0)));
    assert_eq!((&flow["fct_us_p50"], &flow["fct_us_max"]), (&json!(2.0), &json!(8.0)));
    // the READ's size is its DMA length
    assert_eq!(report["congestion"]["completion"]["by_size"][0]["messages"], json!(2));
}

#[test]
fn fan_in_counts_source_addresses_not_qps() {
    let receiver = Side { n: 9, qpn: 0x900 };
    let mut c = Capture::new();
    // three hosts send to one receiver, the first over two QPs, a packet each every 10 µs
    for step in 0..10 {
        for (i, n) in [1u8, 1, 2, 3].into_iter().enumerate() {
            let from = Side { n, qpn: 0x100 + i as u32 };
            let to = Side { qpn: receiver.qpn + i as u32, ..receiver };
            c.add(T0 + (step * 10 + i as i64) * US, &write_only(from, to, 0x10 + step as u32, false));
        }
    }
    let report = c.analyze(&[]);
    let receivers = &report["congestion"]["incast"]["receivers"];
    assert_eq!(receivers[0]["receiver"], json!("10.0.0.9"));
    assert_eq!(receivers[0]["max_fan_in"], json!(3));
    // the third host's first packet, at 3 µs
    assert_eq!(receivers[0]["max_fan_in_frame"], json!(4));
    assert_eq!(report["congestion"]["incast"]["periods"], json!([]));
    let k3 = c.analyze(&["--incast-senders", "3"]);
    let periods = k3["congestion"]["incast"]["periods"].as_array().expect("periods");
    assert_eq!(periods.len(), 1);
    assert_eq!((&periods[0]["start_ns"], &periods[0]["end_ns"]), (&json!(T0 + 3 * US), &json!(T0 + 93 * US)));
    assert_eq!(periods[0]["peak_fan_in"], json!(3));
    let finding = k3["findings"].as_array().expect("findings").iter().find(|f| f["code"] == json!("INCAST"));
    assert_eq!(finding.map(|f| &f["severity"]), Some(&json!("info")));
}

#[test]
fn incast_at_several_receivers_is_one_finding_naming_them() {
    let mut c = Capture::new();
    // three hosts send to each of three receivers, a packet each every 10 µs; the third
    // receiver has a fourth sender
    for step in 0..10 {
        for (r, n) in [9u8, 10, 11].into_iter().enumerate() {
            let senders: &[u8] = if n == 11 { &[1, 2, 3, 4] } else { &[1, 2, 3] };
            for (i, &s) in senders.iter().enumerate() {
                let from = Side { n: s, qpn: 0x100 * u32::from(n) + i as u32 };
                let to = Side { n, qpn: 0x900 * u32::from(n) + i as u32 };
                let t = T0 + (step * 10) * US + (r * 4 + i) as i64 * 100;
                c.add(t, &write_only(from, to, 0x10 + step as u32, false));
            }
        }
    }
    c.by_time();
    let report = c.analyze(&["--incast-senders", "3"]);
    let periods = report["congestion"]["incast"]["periods"].as_array().expect("periods");
    assert_eq!(periods.len(), 3, "{periods:?}");
    let incast: Vec<&Value> =
        report["findings"].as_array().expect("findings").iter().filter(|f| f["code"] == json!("INCAST")).collect();
    assert_eq!(incast.len(), 1, "{incast:?}");
    let message = incast[0]["message"].as_str().expect("a message");
    assert!(
        message.starts_with(
            "Incast at 3 receivers (3 incast periods): 10.0.0.11 (4 senders), 10.0.0.9 (3 senders), 10.0.0.10 (3 senders); the largest, 4 senders on 10.0.0.11"
        ),
        "{message}"
    );
    assert_eq!(incast[0]["evidence"]["count"], json!(3));
    let first_frames: Vec<&Value> = periods.iter().map(|p| &p["first_frame"]).collect();
    let frames: Vec<&Value> = incast[0]["evidence"]["frames"].as_array().expect("frames").iter().collect();
    assert_eq!(frames, first_frames);
}
