//! What production fabrics do every day that simpler rules misread as loss (docs/analysis.md,
//! "PSN sequence", "READ responses", "Pairing", "Retransmit episodes", "Reordering"): UD QPs
//! with many peers, READs whose first response is overtaken, NCCL's QPs that all start at
//! PSN 0, overlapping selective-repeat recoveries, and hardware resends faster than any fixed
//! reaction time. Each capture is built by hand with its truth, and the report is checked
//! against what happened.

use crate::common;

use common::capture::*;
use rocescope::generate::encode::RoceFrame;
use rocescope_parsers::ext::{Deth, ExtHeaders};
use serde_json::{Value, json};

/// A UD SEND ONLY of 256 bytes from `from`'s QP `src_qp` to `to`'s QP `to.qpn`.
fn ud_send(from: Side, to: Side, src_qp: u32, psn: u32) -> RoceFrame {
    let deth = Some(Deth { qkey: 0x1111_0000, src_qp });
    frame(from, to, 0x64, psn, ExtHeaders { deth, ..ExtHeaders::default() }, 256)
}

fn no_loss_findings(codes: &[String]) -> bool {
    !codes.iter().any(|c| c.starts_with("PSN") || c.starts_with("RETRANSMI") || c.starts_with("CAPTURE"))
}

#[test]
fn ud_qps_with_many_peers_are_never_loss() {
    const E: Side = Side { n: 5, qpn: 0x500 };
    let mut c = Capture::new();
    let mut t = T0;
    // A's UD QP 0x111 numbers its datagrams across B and E: each peer sees every other PSN
    for psn in 0..40u32 {
        let to = if psn % 2 == 0 { B } else { E };
        c.add(t, &ud_send(A, to, 0x111, psn));
        t += US;
    }
    // two UD QPs of C, whose PSN counters are unrelated, send into B's QP
    for i in 0..30u32 {
        c.add(t, &ud_send(C, B, 0x333, 0xFF_FFF0u32.wrapping_add(i) & 0xFF_FFFF));
        c.add(t + US / 2, &ud_send(C, B, 0x334, 7 + 3 * i));
        t += US;
    }
    let r = c.analyze(&[]);
    for f in flows(&r) {
        assert_eq!(counts(f), [0, 0, 0, 0], "flow {}", f["id"]);
        assert_eq!((&f["sequenced"], &f["retransmit_episodes"]), (&json!(0), &json!(0)), "flow {}", f["id"]);
    }
    let to_b = flow(&r, 1, 0x200);
    assert_eq!((&to_b["transport"], &to_b["packets"], &to_b["messages"]), (&json!("UD"), &json!(20), &json!(20)));
    assert_eq!(to_b["src_qps"], json!({"0x000111": 20}));
    let from_c = flow(&r, 3, 0x200);
    assert_eq!(from_c["src_qps"], json!({"0x000333": 30, "0x000334": 30}));
    assert_eq!(r["retransmit_episodes"], json!([]));
    assert!(no_loss_findings(&codes(&r)), "{:?}", codes(&r));
}

const C: Side = Side { n: 3, qpn: 0x300 };

/// The retransmit episodes of a report.
fn episodes(r: &serde_json::Value) -> &Vec<serde_json::Value> {
    r["retransmit_episodes"].as_array().expect("episodes")
}

/// A 4 KiB READ from A at `psn` whose four responses (PMTU 1024) B returns in `order`
/// (offsets from `psn`), 1 µs apart from `t`.
fn read_overtaken(c: &mut Capture, psn: u32, order: &[u32], t: i64, with_request: bool) {
    if with_request {
        c.add(t, &read_request(A, B, psn, 4096));
    }
    let responses = read_responses(B, A, psn, 4, 1024);
    for (i, &k) in order.iter().enumerate() {
        c.add(t + (1 + i as i64) * US, &responses[k as usize]);
    }
}

#[test]
fn the_first_read_response_may_overtake_the_first_of_its_read() {
    // CM pairs the QPs and gives the path MTU; the connection's first READ has its MIDDLE
    // before its FIRST (a sprayed fabric), as do two later READs
    let mut c = Capture::new();
    cm_exchange(&mut c, T0, 10, 0x100, 1000, 0x200, 0x9000);
    let mut t = T0 + 10 * US;
    for (i, order) in [[1, 0, 2, 3], [0, 1, 2, 3], [0, 2, 1, 3]].iter().enumerate() {
        read_overtaken(&mut c, 1000 + 4 * i as u32, order, t, true);
        t += 10 * US;
    }
    let r = c.analyze(&[]);
    let responses = flow(&r, 2, 0x100);
    assert_eq!(responses["pairing"], json!("cm"));
    assert_eq!(counts(&responses["responses"]), [0, 0, 0, 2], "two responses overtaken, none lost");
    assert_eq!(
        (&responses["responses"]["first_psn"], &responses["responses"]["sequenced"]),
        (&json!(1000), &json!(12))
    );
    assert_eq!(responses["messages"], json!(3));
    assert_eq!(episodes(&r).len(), 0);
    assert!(no_loss_findings(&codes(&r)), "{:?}", codes(&r));
}

#[test]
fn responses_whose_read_the_capture_lacks_start_at_the_first_and_may_be_overtaken() {
    // the capture begins after the READ request: its MIDDLE overtook its FIRST
    let mut c = Capture::new();
    read_overtaken(&mut c, 500, &[1, 0, 2, 3], T0, false);
    let r = c.analyze(&[]);
    let responses = flow(&r, 2, 0x100);
    assert_eq!(counts(&responses["responses"]), [0, 0, 0, 1]);
    assert_eq!(responses["responses"]["first_psn"], json!(501), "anchored at the first response seen");
    assert!(no_loss_findings(&codes(&r)), "{:?}", codes(&r));
}

#[test]
fn a_capture_whose_first_packet_overtook_its_predecessor() {
    // p + 1, p + 2, then p: no NAK, no second copy of p
    let mut c = Capture::new();
    stream(&mut c, A, B, &[101, 102, 100, 103, 104, 105], T0);
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [0, 0, 0, 1]);
    assert_eq!((&f["reorder_events"], &f["first_psn"]), (&json!(1), &json!(101)));
    assert_eq!(codes(&r), vec!["REORDERING"]);
    // the same start inside a go-back-N resend is a retransmission still
    let mut c = Capture::new();
    stream(&mut c, A, B, &[101, 102, 100, 101, 102].into_iter().chain(103..140).collect::<Vec<_>>(), T0);
    let r = c.analyze(&[]);
    assert_eq!(counts(flow(&r, 1, 0x200)), [0, 0, 3, 0]);
    assert_eq!(episodes(&r)[0]["first_psn"], json!(100));
}

/// `psns` WRITEs from A to B 1 µs apart, without those of `lost`; B NAKs each lost PSN h
/// 0.5 µs after h + 1 arrives, and A resends h alone `reaction` after its NAK. Returns the
/// capture in time order.
fn selective_repeat(psns: std::ops::RangeInclusive<u32>, lost: &[u32], reaction: i64) -> Capture {
    let mut c = Capture::new();
    let first = *psns.start();
    let at = |psn: u32| T0 + i64::from(psn - first) * US;
    for psn in psns.filter(|p| !lost.contains(p)) {
        c.add(at(psn), &write_only(A, B, psn, false));
    }
    for &h in lost {
        let nak_at = at(h + 1) + US / 2;
        c.add(nak_at, &nak(B, A, h));
        c.add(nak_at + reaction, &write_only(A, B, h, false));
    }
    c.by_time();
    c
}

#[test]
fn overlapping_selective_repeat_recoveries_each_take_their_own_nak() {
    // 20 losses 15 PSNs apart, each resent 16 µs after its NAK: the next loss's NAK comes
    // before the resend of the one before
    let lost: Vec<u32> = (1..=20).map(|i| 15 * i).collect();
    let c = selective_repeat(1..=340, &lost, 16 * US);
    let r = c.analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [20, 20, 20, 0]);
    assert_eq!((&f["retransmit_episodes"], &f["reorder_naks"]), (&json!(20), &json!(0)));
    let frames = frames_of(&c);
    let episodes = episodes(&r);
    assert_eq!(episodes.len(), 20);
    for (e, &h) in episodes.iter().zip(&lost) {
        assert_eq!((&e["first_psn"], &e["packets"]), (&json!(h), &json!(1)));
        assert_eq!((&e["trigger"], &e["pattern"]), (&json!("nak_psn_seq_err"), &json!("selective")), "{e}");
        let trigger = &frames[e["trigger_frame"].as_u64().expect("a NAK") as usize - 1];
        assert_eq!((&trigger["psn"], &trigger["opcode"]), (&json!(h), &json!(0x11)), "the NAK naming {h}");
        assert_eq!((&e["nak_to_resend_ns"], &e["decided_by"]), (&json!(16_000), &json!("copies")));
    }
    let found = codes(&r);
    assert!(!found.iter().any(|c| c == "RETRANSMIT_NO_NAK" || c == "REORDER_NAKS"), "{found:?}");
}

#[test]
fn a_same_rack_resend_faster_than_the_nak_reaction_time_is_a_resend() {
    // a selective resend 3 µs after its NAK, the capture going on past a reorder window after
    // the NAK
    let c = selective_repeat(1..=80, &[20, 40], 3 * US);
    let r = c.analyze(&[]);
    assert_eq!(counts(flow(&r, 1, 0x200)), [2, 2, 2, 0]);
    assert!(
        episodes(&r).iter().all(|e| e["decided_by"] == json!("copies") && e["trigger"] == json!("nak_psn_seq_err"))
    );
    let found = codes(&r);
    assert!(found.contains(&"PSN_GAP".to_string()) && !found.contains(&"REORDER_NAKS".to_string()), "{found:?}");
    // go-back-N 3 µs after the NAK: the resent PSN, then those after it again
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=12).filter(|&p| p != 8).collect::<Vec<_>>(), T0);
    let nak_at = T0 + 7 * US + US / 2;
    c.add(nak_at, &nak(B, A, 8));
    stream(&mut c, A, B, &(8..=30).collect::<Vec<_>>(), nak_at + 3 * US);
    let r = c.by_time().analyze(&[]);
    assert_eq!(counts(flow(&r, 1, 0x200)), [1, 1, 5, 0], "8 missing; 8..12 resent");
    let e = &episodes(&r)[0];
    assert_eq!((&e["pattern"], &e["decided_by"], &e["packets"]), (&json!("go_back_n"), &json!("copies"), &json!(5)));
}

#[test]
fn a_late_original_and_its_resend_are_two_copies_after_the_nak() {
    // 20 arrives 2 µs after its NAK, and the resend 3 µs after it: the receiver NAKed a
    // packet that was only late
    let mut c = selective_repeat(1..=60, &[20], 3 * US);
    let nak_at = T0 + 20 * US + US / 2;
    c.add(nak_at + 2 * US, &write_only(A, B, 20, false));
    let r = c.by_time().analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [0, 0, 1, 1]);
    assert_eq!(f["reorder_naks"], json!(1));
    assert_eq!(episodes(&r)[0]["decided_by"], json!("psn"), "the second copy repeats a PSN seen");
    assert!(codes(&r).contains(&"REORDER_NAKS".to_string()), "{:?}", codes(&r));
}

/// A NIC that NAKs a late packet, answered by a busy sender 28 µs later: WRITEs 1 µs apart,
/// 50 arriving 1.5 µs behind 51, B NAKing 50 when 51 arrives and A going back to 50 28 µs after
/// the NAK (50..=55 again, then 56..=60). `shown` adds what the flow shows of its round trips
/// before: `Nothing`, `Acks` (PSNs 4, 8 … 24 ACKed 25 µs after they are sent) or `Resend` (10
/// seen, lost after the tap, NAKed and resent 28 µs later). `resend_seen`: the capture holds the resend.
fn late_original_answered_slowly(shown: RoundTrips, resend_seen: bool) -> Capture {
    let mut c = Capture::new();
    let at = |psn: u32| T0 + i64::from(psn) * US;
    for psn in (1..=55).filter(|&p| p != 50) {
        c.add(at(psn), &write_only(A, B, psn, shown == RoundTrips::Acks && psn % 4 == 0 && psn <= 24));
        if shown == RoundTrips::Acks && psn % 4 == 0 && psn <= 24 {
            c.add(at(psn) + 25 * US, &ack(B, A, psn, 0x1F));
        }
    }
    if shown == RoundTrips::Resend {
        // 10 reached the tap and was lost after it; B NAKs it when 11 arrives, and A resends
        // 10 alone 28 µs later
        c.add(at(11) + US / 2, &nak(B, A, 10));
        c.add(at(11) + US / 2 + 28 * US, &write_only(A, B, 10, false));
    }
    let nak_at = at(51) + US / 2;
    c.add(nak_at, &nak(B, A, 50));
    c.add(nak_at + US, &write_only(A, B, 50, false));
    let resend: Vec<u32> = if resend_seen { (50..=60).collect() } else { (56..=60).collect() };
    stream(&mut c, A, B, &resend, nak_at + 28 * US);
    c.by_time();
    c
}

#[derive(PartialEq, Clone, Copy)]
enum RoundTrips {
    Nothing,
    Acks,
    Resend,
}

#[test]
fn a_late_original_naked_and_resent_slower_than_the_reorder_window_is_late() {
    for shown in [RoundTrips::Acks, RoundTrips::Resend] {
        let r = late_original_answered_slowly(shown, true).analyze(&[]);
        let f = flow(&r, 1, 0x200);
        let earlier = u64::from(shown == RoundTrips::Resend);
        assert_eq!(counts(f), [0, 0, 6 + earlier, 1], "50 late, then 50..=55 resent");
        assert_eq!(f["reorder_naks"], json!(1));
        let found = codes(&r);
        assert!(found.contains(&"REORDER_NAKS".to_string()), "{found:?}");
        assert!(!found.iter().any(|c| c == "PSN_GAP"), "{found:?}");
        let e = episodes(&r).last().expect("the go-back-N");
        assert_eq!((&e["first_psn"], &e["pattern"], &e["packets"]), (&json!(50), &json!("go_back_n"), &json!(6)));
    }
    // with nothing measured, one reorder window is all a copy waits: the late original is
    // taken for the resend, unless --reorder-window-us covers the sender's answer
    let c = late_original_answered_slowly(RoundTrips::Nothing, true);
    assert_eq!(counts(flow(&c.analyze(&[]), 1, 0x200)), [1, 1, 7, 0]);
    assert_eq!(counts(flow(&c.analyze(&["--reorder-window-us", "30"]), 1, 0x200)), [0, 0, 6, 1]);
}

#[test]
fn a_copy_sooner_after_its_nak_than_the_sender_ever_answered_is_the_late_original() {
    // the capture misses the resend: no second copy, but 1 µs after the NAK is sooner than
    // half the 28 µs this sender has shown
    let r = late_original_answered_slowly(RoundTrips::Resend, false).analyze(&[]);
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [0, 0, 1, 1], "10 resent; 50 late");
    assert_eq!(f["reorder_naks"], json!(1));
}

/// NCCL's connection between A and B striped over `qps` RC QPs that all start at PSN 0 and
/// advance in lock-step (A's QP 0x100 + i receives the ACKs of B's QP 0x200 + i), 40 WRITEs
/// each, every one ACKed 1.5 µs later. QP 1 loses PSN 10: B NAKs it when 11 arrives, and A
/// goes back to 10 in its next slot.
fn nccl(qps: u32) -> Capture {
    nccl_seen(qps, |_| true, |_| true)
}

/// [`nccl`] as a mirror on one spine of an ECMP fabric sees it: QP i's WRITEs where
/// `data_seen(i)`, its ACKs and NAKs where `acks_seen(i)`.
fn nccl_seen(qps: u32, data_seen: impl Fn(u32) -> bool, acks_seen: impl Fn(u32) -> bool) -> Capture {
    let mut c = Capture::new();
    for i in 0..qps {
        let (a, b) = (Side { n: 1, qpn: 0x100 + i }, Side { n: 2, qpn: 0x200 + i });
        let sent: Vec<u32> = if i == 1 { (0..10).chain([11]).chain(10..38).collect() } else { (0..40).collect() };
        let mut acked = None;
        for (slot, &psn) in sent.iter().enumerate() {
            let t = T0 + slot as i64 * 2 * US + i64::from(i) * 100;
            if data_seen(i) {
                c.add(t, &write_only(a, b, psn, true));
            }
            let in_order = acked.map_or(psn == 0, |last: u32| psn == last + 1);
            if in_order {
                if acks_seen(i) {
                    c.add(t + 3 * US / 2, &ack(b, a, psn, 0x1F));
                }
                acked = Some(psn);
            } else if psn > acked.map_or(0, |l| l + 1) && acks_seen(i) {
                c.add(t + US / 2, &nak(b, a, acked.map_or(0, |l| l + 1)));
            }
        }
    }
    c.by_time();
    c
}

#[test]
fn nccl_qps_that_all_start_at_psn_0_are_paired_from_their_evidence() {
    for qps in [2, 4, 8] {
        let r = nccl(qps).analyze(&[]);
        let lossy = flow(&r, 1, 0x201);
        assert_eq!((&lossy["pairing"], &lossy["peer"]), (&json!("nak"), &flow(&r, 2, 0x101)["id"]), "{qps} QPs");
        assert_eq!(counts(lossy), [1, 1, 2, 0], "{qps} QPs: 10 lost, 10 and 11 resent");
        let e = &episodes(&r)[0];
        assert_eq!((&e["trigger"], &e["pattern"]), (&json!("nak_psn_seq_err"), &json!("go_back_n")), "{qps} QPs");
        assert!(lossy["ack_latency_ns"]["count"].as_u64().is_some_and(|n| n > 20), "{qps} QPs: ACKs measured");
        for i in (0..qps).filter(|&i| i != 1) {
            let data = flow(&r, 1, 0x200 + i);
            assert_eq!(counts(data), [0, 0, 0, 0], "{qps} QPs: QP {i}");
            // lock-step QPs whose ACKs all fit each other's PSNs: no guess, not even when the
            // QP with the loss is paired and one candidate is left (it may answer a QP the
            // capture lacks)
            let acks = flow(&r, 2, 0x100 + i);
            assert_eq!((&acks["pairing"], &acks["pairing_candidates"]), (&Value::Null, &json!(qps - 1)), "QP {i}");
            assert_eq!(data["ack_latency_ns"]["count"], json!(0), "QP {i}: no stranger's ACKs");
        }
        let found = codes(&r);
        assert!(!found.iter().any(|c| c == "RETRANSMIT_NO_NAK"), "{qps} QPs: {found:?}");
        assert!(found.iter().any(|c| c == "PAIRING_AMBIGUOUS"), "{qps} QPs: {found:?}");
    }
}

#[test]
fn acks_that_fitted_no_flow_pair_once_the_flow_they_answer_starts_requesting() {
    // B's ACKs to QP 0x100 come before any request of A to QP 0x200, whose flow an ACK of
    // A's opened first: they fit nothing; then A's WRITEs begin, and the next ACK in their
    // range pairs
    let mut c = Capture::new();
    c.add(T0, &ack(A, B, 7, 0));
    for i in 0..3 {
        c.add(T0 + (1 + i) * US, &ack(B, A, 50, 0));
    }
    for (i, psn) in (48..53u32).enumerate() {
        c.add(T0 + 10 * US + i as i64 * US, &write_only(A, B, psn, psn == 52));
    }
    c.add(T0 + 20 * US, &ack(B, A, 52, 0));
    let r = c.analyze(&[]);
    let acks = flow(&r, 2, 0x100);
    assert_eq!((&acks["pairing"], &acks["peer"]), (&json!("psn"), &flow(&r, 1, 0x200)["id"]));
}

#[test]
fn a_sole_candidate_whose_psns_other_qps_share_is_not_paired() {
    // a spine mirror sees the WRITEs of QPs 0 and 1 and the ACKs of QPs 1 and 3: QP 3's
    // WRITEs and QP 0's ACKs took the other spine. QP 1's ACKs pair by its NAK; QP 3's fit
    // QP 0's PSNs alone once QP 1 is paired, but QP 0's range is QP 1's too
    let r = nccl_seen(4, |i| i <= 1, |i| i == 1 || i == 3).analyze(&[]);
    let lossy = flow(&r, 1, 0x201);
    assert_eq!((&lossy["pairing"], &lossy["peer"]), (&json!("nak"), &flow(&r, 2, 0x101)["id"]));
    let strangers = flow(&r, 2, 0x103);
    assert_eq!((&strangers["pairing"], &strangers["pairing_candidates"]), (&Value::Null, &json!(1)));
    let unanswered = flow(&r, 1, 0x200);
    assert_eq!((&unanswered["peer"], &unanswered["from_peer"]), (&Value::Null, &Value::Null));
    assert_eq!(unanswered["ack_latency_ns"]["count"], json!(0), "no stranger's ACKs");
    assert!(codes(&r).contains(&"PAIRING_AMBIGUOUS".to_string()), "{:?}", codes(&r));
    // one QP between two hosts whose ranges nothing shares pairs by its PSNs
    let r = nccl_seen(1, |_| true, |_| true).analyze(&[]);
    assert_eq!(flow(&r, 2, 0x100)["pairing"], json!("psn"));
}

#[test]
fn qps_that_take_turns_on_the_same_psns_are_not_paired_by_range() {
    // the same QPs, each sending its 8 WRITEs only once the one before was ACKed: every ACK
    // names a PSN one unpaired QP alone has sent so far, but the QPs share their PSNs, so the
    // QP answered may be one the capture lacks; only the first, before any other QP shared
    // its PSNs, is paired
    let mut c = Capture::new();
    for i in 0..4u32 {
        let (a, b) = (Side { n: 1, qpn: 0x100 + i }, Side { n: 2, qpn: 0x200 + i });
        for psn in 0..8u32 {
            let t = T0 + i64::from(i * 8 + psn) * 2 * US;
            c.add(t, &write_only(a, b, psn, true));
            c.add(t + US, &ack(b, a, psn, 0x1F));
        }
    }
    let r = c.analyze(&[]);
    let first = flow(&r, 2, 0x100);
    assert_eq!((&first["peer"], &first["pairing"]), (&flow(&r, 1, 0x200)["id"], &json!("psn")));
    for i in 1..4u32 {
        // QP i's ACKs fit its own QP and every unpaired one before it (their PSNs reach past)
        let acks = flow(&r, 2, 0x100 + i);
        assert_eq!((&acks["peer"], &acks["pairing_candidates"]), (&Value::Null, &json!(i)), "QP {i}");
    }
    assert!(codes(&r).contains(&"PAIRING_AMBIGUOUS".to_string()));
}

#[test]
fn a_go_back_n_resend_slower_than_the_reorder_window_is_one_episode() {
    // 11..13 lost; the NAK names 11; the sender, sharing its port with many QPs, resends 11,
    // 12, 13 and 14 over 28 µs (more than the reorder window after the gap)
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=10).chain([14]).collect::<Vec<_>>(), T0);
    let gap_at = T0 + 10 * US;
    c.add(gap_at + 2 * US, &nak(B, A, 11));
    for (psn, after) in [(11, 5_500), (12, 11_000), (13, 22_000), (14, 28_000), (15, 29_000), (16, 30_000)] {
        c.add(gap_at + after, &write_only(A, B, psn, false));
    }
    // another QP's packets every 0.5 µs: capture time passes the gap's window between the
    // resends
    for i in 0..100u32 {
        c.add(T0 + i64::from(i) * US / 2, &write_only(C, Side { n: 4, qpn: 0x400 }, i, false));
    }
    let r = c.by_time().analyze(&[]);
    assert_eq!(counts(flow(&r, 1, 0x200)), [1, 3, 4, 0]);
    let episodes = episodes(&r);
    assert_eq!(episodes.len(), 1, "{episodes:?}");
    let e = &episodes[0];
    assert_eq!(
        (&e["trigger"], &e["pattern"], &e["packets"]),
        (&json!("nak_psn_seq_err"), &json!("go_back_n"), &json!(4))
    );
}

/// Two lock-step NCCL QPs from A to B, 30 WRITEs from PSN 0 each, 2 µs apart: QP 0's 17 and
/// QP 1's 16 are lost after the tap, and B NAKs each; QP 1's resend of 16 is lost before the
/// tap, so at the tap QP 1's go-back-N begins at 17, just before QP 0's.
#[test]
fn a_resend_another_qps_go_back_n_may_have_reached_the_tap_with_pairs_nothing() {
    let mut c = Capture::new();
    for (i, lost) in [(0u32, 17u32), (1, 16)] {
        let (a, b) = (Side { n: 1, qpn: 0x100 + i }, Side { n: 2, qpn: 0x200 + i });
        for psn in 0..30u32 {
            let t = T0 + i64::from(psn) * 2 * US + i64::from(i) * 100;
            c.add(t, &write_only(a, b, psn, true));
            if psn < lost {
                c.add(t + 3 * US / 2, &ack(b, a, psn, 0x1F));
            } else if psn == lost + 1 {
                c.add(t + US / 2, &nak(b, a, lost));
            }
        }
        let resent = if i == 1 { 17..30 } else { lost..30 };
        for (k, psn) in resent.enumerate() {
            c.add(T0 + 70 * US + k as i64 * 2 * US + 100 - i64::from(i) * 100, &write_only(a, b, psn, true));
        }
    }
    let r = c.by_time().analyze(&[]);
    // QP 1's resend from 17 came first and fits QP 0's NAK of 17 exactly, but QP 1's NAK of
    // 16 may be what it answers: neither NAK pairs a QP
    for i in 0..2u32 {
        let acks = flow(&r, 2, 0x100 + i);
        assert_eq!(acks["pairing"], Value::Null, "QP {i}: {}", acks["peer"]);
        let data = flow(&r, 1, 0x200 + i);
        assert_eq!(counts(data), [0, 0, 13, 0], "QP {i}");
    }
    let triggers: Vec<&Value> = episodes(&r).iter().map(|e| &e["trigger"]).collect();
    assert_eq!(triggers, vec![&json!("no_nak"), &json!("no_nak")], "the NAKs belong to no flow known");
}

#[test]
fn a_hole_that_opened_after_a_selective_resend_waits_with_it_and_is_late() {
    // 11 lost and NAKed; the sender resends 11 alone 9.5 µs after the NAK and goes on with
    // new PSNs; 33 then comes 0.3 µs after 34, and the wait of 11's copy for a second copy
    // (one reorder window after the NAK, nothing measured) ends before 35 comes
    let mut order: Vec<u32> = (1..=40).filter(|&p| p != 11).collect();
    let at = order.iter().position(|&p| p == 33).unwrap();
    order.swap(at, at + 1);
    let mut c = Capture::new();
    for (i, &psn) in order.iter().enumerate() {
        let late = if psn == 33 { 700 } else { 0 };
        c.add(T0 + i as i64 * US - late, &write_only(A, B, psn, false));
    }
    c.add(T0 + 11 * US + US / 2, &nak(B, A, 11));
    c.add(T0 + 21 * US, &write_only(A, B, 11, false));
    // another QP's packets every 0.5 µs: capture time passes the copy's wait before 35
    for i in 0..80u32 {
        c.add(T0 + i64::from(i) * US / 2, &write_only(C, Side { n: 4, qpn: 0x400 }, i, false));
    }
    let r = c.by_time().analyze(&[]);
    // a go-back-N from 11 would have covered 33 (had its gap opened before the resend); a
    // resend before 33's gap opened covers nothing after it
    let f = flow(&r, 1, 0x200);
    assert_eq!(counts(f), [1, 1, 1, 1]);
    assert_eq!((&f["reorder_events"], &f["retransmit_episodes"]), (&json!(1), &json!(1)));
}

#[test]
fn a_nak_of_psns_the_resender_never_sent_leaves_its_pairing_alone() {
    // QPs 0 and 1 in lock-step from PSN 0, QPs 2 and 3 from PSN 11,999,990 (before 0 in
    // serial order): QP 0 loses 17 after the tap and resends from it; QP 2's NAK of
    // 12,000,000 stays unanswered in the capture, but QP 0 never sent that PSN
    let mut c = Capture::new();
    for i in 0..4u32 {
        let (a, b) = (Side { n: 1, qpn: 0x100 + i }, Side { n: 2, qpn: 0x200 + i });
        let first = if i >= 2 { 12_000_000 - 10 } else { 0 };
        for k in 0..30u32 {
            let t = T0 + i64::from(k) * 2 * US + i64::from(i) * 100;
            c.add(t, &write_only(a, b, first + k, true));
            match (i, k) {
                (0, 18) => c.add(t + US / 2, &nak(b, a, 17)),
                (0, 17..) => &mut c,
                (2, 11) => c.add(t + US / 2, &nak(b, a, first + 10)),
                (2, 10..) => &mut c,
                _ => c.add(t + 3 * US / 2, &ack(b, a, first + k, 0x1F)),
            };
        }
    }
    let (a, b) = (Side { n: 1, qpn: 0x100 }, Side { n: 2, qpn: 0x200 });
    for (k, psn) in (17..30u32).enumerate() {
        c.add(T0 + 70 * US + k as i64 * 2 * US, &write_only(a, b, psn, true));
    }
    let r = c.by_time().analyze(&[]);
    let acks = flow(&r, 2, 0x100);
    assert_eq!((&acks["pairing"], &acks["peer"]), (&json!("nak"), &flow(&r, 1, 0x200)["id"]));
    assert_eq!(episodes(&r)[0]["trigger"], json!("nak_psn_seq_err"));
}

#[test]
fn a_nak_its_flow_acknowledged_past_sets_off_no_later_resend() {
    // 11 lost; B NAKs it and, its resend missed by the mirror, acknowledges through 20; 60 µs
    // later A resends 30..=32 with no NAK in the capture: the NAK of 11 was answered
    let mut c = Capture::new();
    stream(&mut c, A, B, &(1..=10).chain(12..=32).collect::<Vec<_>>(), T0);
    c.add(T0 + 10 * US + US / 2, &nak(B, A, 11));
    c.add(T0 + 22 * US, &ack(B, A, 20, 0x1F));
    stream(&mut c, A, B, &[30, 31, 32], T0 + 92 * US);
    let r = c.by_time().analyze(&[]);
    let triggers: Vec<(&Value, &Value)> = episodes(&r).iter().map(|e| (&e["first_psn"], &e["trigger"])).collect();
    assert_eq!(triggers, vec![(&json!(30), &json!("no_nak"))]);
}
