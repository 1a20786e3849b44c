//! `analyze --counters` on generated runs whose truth is known: what the receiver's NIC did
//! (its counters) and what a mirror copied of it (the capture). Healthy; a receiver dropping for
//! lack of buffers; a mirror dropping 2 % of copies; CNPs on a priority the mirror does not
//! copy; PFC frames that never reach the capture; pauses on a priority the data does not use.
//! Every verdict, difference and finding is exact.

use crate::common::capture::{Capture, Side, T0, US, ack, frame, write_only};
use rocescope::generate::encode::{self, L2, L3};
use rocescope_parsers::ext::ExtHeaders;
use serde_json::Value;

const SENDER: Side = Side { n: 1, qpn: 0x100 };
const RECEIVER: Side = Side { n: 3, qpn: 0x200 };
const HOST: &str = "10.0.0.3";
/// Data packets of the run; every tenth (from the sixth) is CE-marked and answered by a CNP,
/// every tenth (from the tenth) asks for the ACK that follows it.
const PACKETS: u32 = 5_000;
const XOFFS: u64 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Data { ce: bool },
    Cnp,
    Ack,
    Nak,
    Pfc,
}

/// A run as it was on the wire, with the receiver NIC's own counts.
struct Run {
    frames: Vec<(i64, Vec<u8>, Kind)>,
    nic: Vec<(&'static str, u64)>,
}

fn data(psn: u32, ce: bool) -> Vec<u8> {
    let mut f = write_only(SENDER, RECEIVER, psn, psn % 10 == 9);
    f.l2 = f.l2.tagged(3, 100);
    f.l3 = f.l3.with_qos(26, if ce { 3 } else { 2 });
    f.encode()
}

fn cnp() -> Vec<u8> {
    let mut f = frame(RECEIVER, SENDER, 0x81, 0, ExtHeaders::default(), 0);
    f.bth.becn = true;
    f.l2 = L2::new(f.l2.src, f.l2.dst).tagged(6, 100);
    f.l3 = L3::v4([10, 0, 0, RECEIVER.n], [10, 0, 0, SENDER.n]).with_qos(48, 0);
    f.encode()
}

fn tagged(mut f: encode::RoceFrame) -> Vec<u8> {
    f.l2 = f.l2.tagged(3, 100);
    f.encode()
}

/// XOFF frames from the receiver's MAC pausing `priority`, each followed by an XON.
fn pauses(frames: &mut Vec<(i64, Vec<u8>, Kind)>, priority: usize) {
    let mac = [2, 0, 0, 0, 0, RECEIVER.n];
    let mut quanta = [0u16; 8];
    quanta[priority] = 0xFFFF;
    for k in 0..XOFFS as i64 {
        let t = T0 + (1_000 * k + 500) * US + 100;
        frames.push((t, encode::pfc_frame(mac, 1 << priority, quanta), Kind::Pfc));
        frames.push((t + 20 * US, encode::pfc_frame(mac, 1 << priority, [0; 8]), Kind::Pfc));
    }
}

/// The run: a packet a µs; with `nic_drops`, the receiver's NIC drops PSN 1000 for lack of a
/// buffer (the wire carries it), takes 1001–1004 out of sequence, NAKs, and the sender resends
/// 1000–1004.
fn run(pause_priority: usize, nic_drops: bool) -> Run {
    let mut frames = Vec::new();
    for psn in 0..PACKETS {
        let t = T0 + i64::from(psn) * US;
        let ce = psn % 10 == 5;
        frames.push((t, data(psn, ce), Kind::Data { ce }));
        if ce {
            frames.push((t + 300, cnp(), Kind::Cnp));
        }
        if psn % 10 == 9 {
            frames.push((t + 500, tagged(ack(RECEIVER, SENDER, psn, 0x1F)), Kind::Ack));
        }
        if nic_drops && psn == 1004 {
            frames.push((t + 200, tagged(ack(RECEIVER, SENDER, 1000, 0x60)), Kind::Nak));
            for (i, again) in (1000..=1004).enumerate() {
                frames.push((
                    t + 400 + 50 * i as i64,
                    data(again, again % 10 == 5),
                    Kind::Data { ce: again % 10 == 5 },
                ));
            }
        }
    }
    pauses(&mut frames, pause_priority);
    frames.sort_by_key(|(t, _, _)| *t);
    let marked = frames.iter().filter(|(_, _, k)| *k == Kind::Data { ce: true }).count() as u64;
    let nic = vec![
        ("np_cnp_sent", u64::from(PACKETS / 10)),
        ("np_ecn_marked_roce_packets", marked),
        ("out_of_sequence", if nic_drops { 4 } else { 0 }),
        ("packet_seq_err", 0),
        ("duplicate_request", 0),
        ("local_ack_timeout_err", 0),
        (
            ["tx_prio0_pause", "tx_prio1_pause", "tx_prio2_pause", "tx_prio3_pause", "tx_prio4_pause"][pause_priority],
            XOFFS,
        ),
        ("rx_out_of_buffer", u64::from(nic_drops)),
    ];
    Run { frames, nic }
}

/// The report of what the mirror `keeps` of `run` (given each frame's index and kind), with the
/// receiver's counters.
fn mirrored(run: &Run, keeps: impl Fn(usize, Kind) -> bool) -> Value {
    mirrored_with_args(run, keeps, &[])
}

/// [`mirrored`] with `extra` arguments too (`--link`).
fn mirrored_with_args(run: &Run, keeps: impl Fn(usize, Kind) -> bool, extra: &[&str]) -> Value {
    let mut c = Capture::new();
    for (i, (t, bytes, kind)) in run.frames.iter().enumerate() {
        if keeps(i, *kind) {
            c.add_bytes(*t, bytes.clone());
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, delta: u64| {
        let path = dir.path().join(name);
        let text: String = run.nic.iter().map(|(n, d)| format!("     {n}: {}\n", 1_000 + delta * d)).collect();
        std::fs::write(&path, format!("NIC statistics:\n{text}")).expect("write a snapshot");
        path
    };
    let (before, after) = (write("before.txt", 0), write("after.txt", 1));
    let arg = format!("{HOST}={},{}", before.display(), after.display());
    c.analyze(&[&["--counters", arg.as_str()], extra].concat())
}

fn row<'a>(report: &'a Value, counter: &str) -> (&'a str, Option<u64>, Option<i64>) {
    let rows = report["counters"][0]["rows"].as_array().expect("rows");
    let r = rows.iter().find(|r| r["counter"] == counter).unwrap_or_else(|| panic!("no row {counter}"));
    (r["verdict"].as_str().expect("a verdict"), r["capture"].as_u64(), r["difference"].as_i64())
}

fn findings<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"].as_array().expect("findings").iter().filter(|f| f["code"] == code).collect()
}

const COUNTER_CODES: [&str; 5] =
    ["NIC_RX_DROPS", "LINK_ERRORS", "COUNTERS_DISAGREE", "PAUSE_NOT_IN_CAPTURE", "SWITCH_QUEUE_DROPS"];

#[test]
fn a_healthy_run_agrees_on_every_row() {
    let report = mirrored(&run(3, false), |_, _| true);
    for (counter, delta) in run(3, false).nic.iter().filter(|(n, _)| *n != "rx_out_of_buffer") {
        assert_eq!(row(&report, counter), ("agrees", Some(*delta), Some(0)), "{counter}");
    }
    assert_eq!(row(&report, "rx_out_of_buffer").0, "not_visible");
    for code in COUNTER_CODES {
        assert!(findings(&report, code).is_empty(), "{code}");
    }
}

#[test]
fn a_receiver_dropping_for_lack_of_buffers_disagrees_on_its_sequence_counters() {
    let report = mirrored(&run(3, true), |_, _| true);
    // the wire had no gap; the receiver took 4 packets out of sequence after the one it dropped
    assert_eq!(row(&report, "out_of_sequence"), ("capture_saw_fewer", Some(0), Some(4)));
    // the resends were no duplicates to the receiver, which had discarded their first copies
    assert_eq!(row(&report, "duplicate_request"), ("capture_saw_more", Some(5), Some(-5)));
    assert_eq!(row(&report, "np_cnp_sent").0, "agrees");
    let drops = findings(&report, "NIC_RX_DROPS");
    assert_eq!((drops.len(), &drops[0]["evidence"]["count"]), (1, &Value::from(1)));
    let disagree = findings(&report, "COUNTERS_DISAGREE");
    assert_eq!(disagree.len(), 1, "{disagree:?}");
    let message = disagree[0]["message"].as_str().expect("a message");
    assert!(
        message
            .starts_with("10.0.0.3: PSN sequence counters and the capture disagree (likely receive drops in the NIC)"),
        "{message}"
    );
}

#[test]
fn a_mirror_dropping_two_percent_of_copies_shows_fewer_cnps_and_marks() {
    let run = run(3, false);
    // one frame in 50, scattered by a multiplicative hash over the run's repeating pattern
    let keeps = |i: usize, _| !((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32).is_multiple_of(50);
    let dropped =
        |kind: Kind| run.frames.iter().enumerate().filter(|(i, f)| !keeps(*i, f.2) && f.2 == kind).count() as i64;
    let (cnps, marked) = (dropped(Kind::Cnp), dropped(Kind::Data { ce: true }));
    assert!(cnps > 2 && marked > 2, "the run drops more than the tolerance: {cnps} CNPs, {marked} marked");
    let report = mirrored(&run, keeps);
    assert_eq!(row(&report, "np_cnp_sent"), ("capture_saw_fewer", Some(500 - cnps as u64), Some(cnps)));
    assert_eq!(
        row(&report, "np_ecn_marked_roce_packets"),
        ("capture_saw_fewer", Some(500 - marked as u64), Some(marked))
    );
    // the data copies the mirror dropped were acknowledged: no gap at the receiver
    assert_eq!(row(&report, "out_of_sequence"), ("agrees", Some(0), Some(0)));
    assert_eq!(row(&report, "duplicate_request").0, "agrees");
    let disagree = findings(&report, "COUNTERS_DISAGREE");
    let families: Vec<&str> = disagree.iter().filter_map(|f| f["message"].as_str()).collect();
    assert_eq!(families.len(), 2, "{families:?}");
    assert!(families.iter().all(|m| m.contains("(likely a mirror dropping copies)")), "{families:?}");
    assert_eq!(findings(&report, "CAPTURE_LOSS").len(), 1);
}

#[test]
fn cnps_on_a_priority_the_mirror_does_not_copy_are_named() {
    let run = run(3, false);
    let report = mirrored(&run, |_, kind| kind != Kind::Cnp);
    assert_eq!(row(&report, "np_cnp_sent"), ("capture_saw_fewer", Some(0), Some(500)));
    assert_eq!(row(&report, "np_ecn_marked_roce_packets").0, "agrees");
    let disagree = findings(&report, "COUNTERS_DISAGREE");
    assert_eq!(disagree.len(), 1);
    let message = disagree[0]["message"].as_str().expect("a message");
    assert!(
        message.contains("CNPs counters and the capture disagree (likely a priority the mirror does not copy)"),
        "{message}"
    );
    assert!(disagree[0]["cause"].as_str().is_some_and(|c| c.contains("priority of their own")));
}

#[test]
fn pfc_that_never_reaches_the_capture_is_pause_not_in_capture() {
    let run = run(3, false);
    let report = mirrored(&run, |_, kind| kind != Kind::Pfc);
    assert_eq!(row(&report, "tx_prio3_pause"), ("capture_saw_fewer", Some(0), Some(XOFFS as i64)));
    let pauses = findings(&report, "PAUSE_NOT_IN_CAPTURE");
    assert_eq!((pauses.len(), &pauses[0]["evidence"]["count"]), (1, &Value::from(XOFFS)));
    assert!(findings(&report, "COUNTERS_DISAGREE").is_empty(), "the pauses are PAUSE_NOT_IN_CAPTURE's");
}

/// The troubleshooting table's entries of `report` by symptom (its first words), each with the
/// codes of the findings it explains.
fn troubleshooting<'a>(report: &'a Value, symptom: &str) -> Vec<&'a Value> {
    let rows = report["troubleshooting"].as_array().map(Vec::as_slice).unwrap_or_default();
    rows.iter().filter(|r| r["symptom"].as_str().is_some_and(|s| s.starts_with(symptom))).collect()
}

#[test]
fn pauses_on_a_priority_the_data_does_not_use_join_the_troubleshooting_table() {
    let run = run(4, false);
    let report = mirrored(&run, |_, _| true);
    assert_eq!(row(&report, "tx_prio4_pause").0, "agrees");
    let other = findings(&report, "PFC_OTHER_PRIORITY");
    assert_eq!(other.len(), 1);
    let rows = troubleshooting(&report, "pauses on one priority while the RoCE data travels on another");
    assert_eq!(rows.len(), 1, "{:?}", report["troubleshooting"]);
    assert!(rows[0]["cause"].as_str().is_some_and(|c| c.starts_with("PFC on the wrong priority")));
    assert!(rows[0]["action"].as_str().is_some_and(|a| a.starts_with("Align the DSCP-to-priority maps")));
    assert!(rows[0]["codes"].as_array().expect("codes").contains(&Value::from("PFC_OTHER_PRIORITY")));
    let index = rows[0]["findings"][0].as_u64().expect("an index") as usize;
    assert_eq!(report["findings"][index]["code"], "PFC_OTHER_PRIORITY");
    // the finding keeps its own cause
    assert!(other[0]["cause"].as_str().is_some_and(|c| !c.contains("Troubleshooting")));
    // where the data's priority pauses, the entry joins nothing
    let healthy = mirrored(&self::run(3, false), |_, _| true);
    assert!(troubleshooting(&healthy, "pauses").is_empty(), "{:?}", healthy["troubleshooting"]);
}

#[test]
fn loss_of_ecn_capable_data_without_marks_joins_ecn_under_tuning() {
    let sample = |name: &str| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name);
    // ECT(0) data, 3 PSNs lost, no CE mark anywhere
    let lossy = crate::common::capture::analyze_file(&sample("loss_go_back_n.pcap"), &[]);
    let rows = troubleshooting(&lossy, "loss or out-of-sequence growth with no ECN marks");
    assert_eq!(rows.len(), 1, "one entry, once");
    assert!(rows[0]["cause"].as_str().is_some_and(|c| c.starts_with("ECN under-tuning")));
    assert_eq!(rows[0]["codes"], serde_json::json!(["PSN_GAP", "RETRANSMISSION", "NAK_PSN_SEQUENCE"]));
    let explained = rows[0]["findings"].as_array().expect("findings");
    let codes: Vec<&Value> =
        explained.iter().map(|i| &lossy["findings"][i.as_u64().expect("an index") as usize]["code"]).collect();
    assert_eq!(codes, ["PSN_GAP", "RETRANSMISSION", "NAK_PSN_SEQUENCE"]);
    // the marking run: CE marks, so no entry
    let marked = crate::common::capture::analyze_file(&sample("congestion_ecn_cnp.pcap"), &[]);
    assert!(marked.get("troubleshooting").is_none(), "{:?}", marked["troubleshooting"]);
}

#[test]
fn a_troubleshooting_entry_is_printed_once_for_the_findings_it_explains() {
    let sample = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/loss_go_back_n.pcap");
    let text = crate::common::run_ok(&["analyze", sample.to_str().expect("UTF-8")]);
    // three findings, one entry: its cause and action once, each finding naming it
    assert_eq!(text.matches("ECN under-tuning").count(), 1, "{text}");
    assert_eq!(text.matches("Lower the ECN marking thresholds").count(), 1, "{text}");
    assert_eq!(text.matches("see:    troubleshooting [1]").count(), 3, "{text}");
    let section = &text[text.find("Troubleshooting (1)").expect("the entries")..];
    assert!(section.contains("loss or out-of-sequence growth with no ECN marks"), "{section}");
    assert!(section.contains("for:    PSN_GAP, RETRANSMISSION, NAK_PSN_SEQUENCE"), "{section}");
}

#[test]
fn received_pauses_pair_with_the_link_partners_frames_and_paused_time() {
    // the receiver's RoCE frames go to 02:00:00:00:00:01, its link partner here: XOFFs of
    // priority 3 from that MAC, each ended 20 µs later by an XON
    let mut run = run(3, false);
    let partner = [2, 0, 0, 0, 0, SENDER.n];
    let mut quanta = [0u16; 8];
    quanta[3] = 0xFFFF;
    for k in 0..3i64 {
        let t = T0 + (1_000 * k + 700) * US + 100;
        run.frames.push((t, encode::pfc_frame(partner, 1 << 3, quanta), Kind::Pfc));
        run.frames.push((t + 20 * US, encode::pfc_frame(partner, 1 << 3, [0; 8]), Kind::Pfc));
    }
    run.frames.sort_by_key(|(t, _, _)| *t);
    run.nic.extend([("rx_prio3_pause", 3), ("rx_prio3_pause_duration", 60), ("tx_prio3_pause_duration", 100)]);
    let report = mirrored(&run, |_, _| true);
    assert_eq!(row(&report, "rx_prio3_pause"), ("agrees", Some(3), Some(0)));
    assert_eq!(row(&report, "rx_prio3_pause_duration"), ("agrees", Some(60), Some(0)), "3 pauses of 20 µs");
    assert_eq!(row(&report, "tx_prio3_pause_duration"), ("agrees", Some(100), Some(0)), "5 pauses of 20 µs");
    assert_eq!(row(&report, "tx_prio3_pause"), ("agrees", Some(XOFFS), Some(0)), "the host's own are apart");
}

/// The router MAC of the switch in a routed fabric: the MAC the receiver's RoCE frames go to,
/// which every port of the switch may share.
const ROUTER: [u8; 6] = [2, 0, 0, 0, 0, 0xFE];

/// `run` as the receiver's own link shows it in a routed fabric: the sender's frames arrive
/// from the switch's router MAC, the receiver's go to it (the pause frames keep their MACs).
fn routed(mut run: Run) -> Run {
    let sender = [2, 0, 0, 0, 0, SENDER.n];
    for (_, bytes, kind) in &mut run.frames {
        if *kind != Kind::Pfc {
            for at in [0..6, 6..12] {
                if bytes[at.clone()] == sender {
                    bytes[at].copy_from_slice(&ROUTER);
                }
            }
        }
    }
    run
}

/// `run` without the receiver's own pause frames, and with `xoffs` XOFFs of priority 3 from
/// `mac`, each ended 20 µs later by an XON.
fn paused_by(mut run: Run, mac: [u8; 6], xoffs: i64) -> Run {
    let own = [2, 0, 0, 0, 0, RECEIVER.n];
    run.frames.retain(|(_, bytes, kind)| *kind != Kind::Pfc || bytes[6..12] != own);
    add_xoffs(&mut run, mac, xoffs);
    run
}

fn add_xoffs(run: &mut Run, mac: [u8; 6], xoffs: i64) {
    let mut quanta = [0u16; 8];
    quanta[3] = 0xFFFF;
    for k in 0..xoffs {
        let t = T0 + (1_000 * k + 700) * US + 100;
        run.frames.push((t, encode::pfc_frame(mac, 1 << 3, quanta), Kind::Pfc));
        run.frames.push((t + 20 * US, encode::pfc_frame(mac, 1 << 3, [0; 8]), Kind::Pfc));
    }
    run.frames.sort_by_key(|(t, _, _)| *t);
}

/// `run`'s receiver counters with `counter` set to `delta` (added when absent).
fn counting(mut run: Run, counts: &[(&'static str, u64)]) -> Run {
    for &(counter, delta) in counts {
        match run.nic.iter_mut().find(|(n, _)| *n == counter) {
            Some(entry) => entry.1 = delta,
            None => run.nic.push((counter, delta)),
        }
    }
    run
}

/// Every frame of `run` with `extra` arguments too (`--link`).
fn mirrored_with(run: &Run, extra: &[&str]) -> Value {
    mirrored_with_args(run, |_, _| true, extra)
}

#[test]
fn pauses_sent_at_another_hosts_port_are_not_the_receivers_received_pauses() {
    // The capture has the receiver's traffic but none of its own pause frames: pauses sent on
    // the sender's link, by the sender itself (its MAC is the one the receiver's frames go to on
    // a switched network) or by the switch's port there (its router MAC, the receiver's partner
    // in a routed fabric). The receiver's NIC received no pause.
    let sender = [2, 0, 0, 0, 0, SENDER.n];
    for (layout, run) in
        [("switched", paused_by(run(3, false), sender, 3)), ("routed", paused_by(routed(run(3, false)), ROUTER, 3))]
    {
        let quiet = counting(run, &[("tx_prio3_pause", 0), ("rx_prio3_pause", 0), ("rx_prio3_pause_duration", 0)]);
        let report = mirrored_with(&quiet, &[]);
        assert_eq!(row(&report, "rx_prio3_pause"), ("not_visible", None, None), "{layout}");
        assert_eq!(row(&report, "rx_prio3_pause_duration"), ("not_visible", None, None), "{layout}");
        assert_eq!(row(&report, "tx_prio3_pause"), ("agrees", Some(0), Some(0)), "{layout}");
        for code in COUNTER_CODES {
            assert!(findings(&report, code).is_empty(), "{layout}: {code}");
        }
        // the receiver was paused on its own link, which the capture does not show
        let paused = counting(quiet, &[("rx_prio3_pause", 4), ("rx_prio3_pause_duration", 80)]);
        let report = mirrored_with(&paused, &[]);
        assert_eq!(row(&report, "rx_prio3_pause"), ("not_visible", None, None), "{layout}");
        assert!(findings(&report, "COUNTERS_DISAGREE").is_empty(), "{layout}");
        let pauses = findings(&report, "PAUSE_NOT_IN_CAPTURE");
        assert_eq!((pauses.len(), &pauses[0]["evidence"]["count"]), (1, &Value::from(84)), "{layout}");
        let message = pauses[0]["message"].as_str().expect("a message");
        assert_eq!(
            message,
            "10.0.0.3: pause counters grew but the capture has no pause frame of its link: rx_prio3_pause +4, rx_prio3_pause_duration +80",
            "{layout}"
        );
    }
}

#[test]
fn the_receivers_pauses_sent_where_the_capture_has_others_are_pause_not_in_capture() {
    // the receiver's 5 XOFFs never reach the capture, which has the sender's
    let run = paused_by(run(3, false), [2, 0, 0, 0, 0, SENDER.n], 3);
    let report = mirrored_with(&run, &[]);
    assert_eq!(row(&report, "tx_prio3_pause"), ("capture_saw_fewer", Some(0), Some(XOFFS as i64)));
    let pauses = findings(&report, "PAUSE_NOT_IN_CAPTURE");
    assert_eq!((pauses.len(), &pauses[0]["evidence"]["count"]), (1, &Value::from(XOFFS)));
    assert!(findings(&report, "COUNTERS_DISAGREE").is_empty(), "the pauses are PAUSE_NOT_IN_CAPTURE's");
}

#[test]
fn the_switch_pausing_the_host_on_its_own_link_agrees_or_disagrees_as_counted() {
    // the receiver's own link in a routed fabric: its 5 XOFFs, and 3 XOFFs of 20 µs from the
    // switch's port (the router MAC its RoCE frames go to)
    let mut run = routed(run(3, false));
    add_xoffs(&mut run, ROUTER, 3);
    let healthy = counting(run, &[("rx_prio3_pause", 3), ("rx_prio3_pause_duration", 60)]);
    let report = mirrored_with(&healthy, &[]);
    assert_eq!(row(&report, "rx_prio3_pause"), ("agrees", Some(3), Some(0)));
    assert_eq!(row(&report, "rx_prio3_pause_duration"), ("agrees", Some(60), Some(0)));
    assert_eq!(row(&report, "tx_prio3_pause"), ("agrees", Some(XOFFS), Some(0)));
    for code in COUNTER_CODES {
        assert!(findings(&report, code).is_empty(), "{code}");
    }
    // the NIC counted 8 received where its link shows 3
    let more = counting(healthy, &[("rx_prio3_pause", 8)]);
    let report = mirrored_with(&more, &[]);
    assert_eq!(row(&report, "rx_prio3_pause"), ("capture_saw_fewer", Some(3), Some(5)));
    let disagree = findings(&report, "COUNTERS_DISAGREE");
    assert_eq!(disagree.len(), 1, "{disagree:?}");
    let message = disagree[0]["message"].as_str().expect("a message");
    assert!(message.starts_with("10.0.0.3: PFC pauses counters and the capture disagree"), "{message}");
    assert!(message.contains("rx_prio3_pause +8 counted, 3 in the capture"), "{message}");
    assert!(findings(&report, "PAUSE_NOT_IN_CAPTURE").is_empty());
}

#[test]
fn naming_the_link_pairs_received_pauses_the_host_sent_none_beside() {
    // a mirror of the receiver's switch port: the switch paused it 3 times, and it sent no
    // pause, so nothing in the capture shows its link but the user's word
    let run = counting(
        paused_by(routed(run(3, false)), ROUTER, 3),
        &[("tx_prio3_pause", 0), ("rx_prio3_pause", 3), ("rx_prio3_pause_duration", 60)],
    );
    let unnamed = mirrored_with(&run, &[]);
    assert_eq!(row(&unnamed, "rx_prio3_pause"), ("not_visible", None, None));
    assert_eq!(findings(&unnamed, "PAUSE_NOT_IN_CAPTURE").len(), 1);
    let named = mirrored_with(&run, &["--link", HOST]);
    assert_eq!(row(&named, "rx_prio3_pause"), ("agrees", Some(3), Some(0)));
    assert_eq!(row(&named, "rx_prio3_pause_duration"), ("agrees", Some(60), Some(0)));
    for code in COUNTER_CODES {
        assert!(findings(&named, code).is_empty(), "{code}");
    }
    // named where the counters say the switch paused it 9 times: a disagreement
    let fewer = counting(run, &[("rx_prio3_pause", 9)]);
    let named = mirrored_with(&fewer, &["--link", HOST]);
    assert_eq!(row(&named, "rx_prio3_pause"), ("capture_saw_fewer", Some(3), Some(6)));
    assert_eq!(findings(&named, "COUNTERS_DISAGREE").len(), 1);
}
