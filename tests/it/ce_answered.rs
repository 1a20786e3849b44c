//! Which CE marks a CNP answers (docs/analysis.md, "Which marks a CNP answers"): by the CNP's
//! own addressing, paired or not, and timed only where its addressee is known (the pairing, a
//! host's QP table, the DETHs). NCCL's lock-step QPs whose CNPs travel on unpaired flows of
//! ACKs, a UD flow answered at its DETH source QP, a mark seen before pairing answered by the
//! CNP right after it, CNPs to one QP of two, a mirrored CNP and a CNP before any mark.

use crate::common;

use common::capture::{self, Capture, Side, T0, US, ack, codes, flow, frame, write_only};
use rocescope::generate::encode::RoceFrame;
use rocescope_parsers::ext::{Deth, ExtHeaders};
use rocescope_parsers::opcode::CNP;
use serde_json::{Value, json};

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

fn finding<'r>(r: &'r Value, code: &str) -> Option<&'r Value> {
    r["findings"].as_array().expect("findings").iter().find(|f| f["code"] == json!(code))
}

/// The count and flows of the `CE_WITHOUT_CNP` finding, if it was raised.
fn unanswered(r: &Value) -> Option<(u64, Vec<u64>)> {
    let e = &finding(r, "CE_WITHOUT_CNP")?["evidence"];
    let flows = e["flows"].as_array().expect("flows").iter().map(|f| f.as_u64().expect("an id")).collect();
    Some((e["count"].as_u64().expect("a count"), flows))
}

/// (count, min, max) of a flow's `ce_to_cnp_ns`.
fn ce_to_cnp(f: &Value) -> (Value, Value, Value) {
    let d = &f["ce_to_cnp_ns"];
    (d["count"].clone(), d["min"].clone(), d["max"].clone())
}

fn id(f: &Value) -> u64 {
    f["id"].as_u64().expect("an id")
}

const HOST_S: u8 = 1;
const HOST_D: u8 = 2;

/// NCCL between host 1 (QPs 0x100 + i) and host 2 (QPs 0x200 + i): four RC QPs that start at
/// PSN 0 and send 8 WRITEs each in lock-step, 2 µs apart (QP i 100 ns after QP i − 1), each
/// ACKed 1.5 µs later, so that every ACK fits every QP and no flow is paired. The WRITEs of
/// PSN 4 are CE-marked; with `answered`, host 2 sends each QP a CNP 1.4 µs after its mark.
/// Host 3 (QP 0x300) sends host 2's QP 0x2FF one marked WRITE, which host 2 answers.
fn nccl(answered: bool) -> Capture {
    let mut c = Capture::new();
    for i in 0..4u32 {
        let (s, d) = (Side { n: HOST_S, qpn: 0x100 + i }, Side { n: HOST_D, qpn: 0x200 + i });
        for psn in 0..8u32 {
            let t = T0 + i64::from(psn) * 2 * US + i64::from(i) * 100;
            let write = write_only(s, d, psn, true);
            c.add(t, &if psn == 4 { marked(write) } else { write });
            c.add(t + 3 * US / 2, &ack(d, s, psn, 0x1F));
            if psn == 4 && answered {
                c.add(t + 1_400, &cnp(d, s));
            }
        }
    }
    let (e, d) = (Side { n: 3, qpn: 0x300 }, Side { n: HOST_D, qpn: 0x2FF });
    c.add(T0 + 30 * US, &marked(write_only(e, d, 0, false)));
    c.add(T0 + 31 * US, &cnp(d, e));
    c.by_time();
    c
}

#[test]
fn nccl_qps_whose_cnps_travel_on_unpaired_flows_are_answered() {
    let r = nccl(true).analyze(&[]);
    for i in 0..4u32 {
        let (data, acks) = (flow(&r, HOST_S, 0x200 + i), flow(&r, HOST_D, 0x100 + i));
        assert_eq!(
            (&data["pairing"], &acks["pairing"], &acks["pairing_candidates"]),
            (&Value::Null, &Value::Null, &json!(4))
        );
        assert_eq!((&data["ce"], &acks["cnps"]), (&json!(1), &json!(1)), "QP {i}");
        // which QP of host 1 each CNP went to is not known: its mark is answered, not timed
        assert_eq!(ce_to_cnp(data).0, json!(0), "QP {i}: no time from a guess");
    }
    // one QP each way between hosts 3 and 2, unpaired: the CNP's QP may be one the capture
    // lacks, so it is not timed either
    assert_eq!(ce_to_cnp(flow(&r, 3, 0x2FF)).0, json!(0));
    assert!(codes(&r).contains(&"PAIRING_AMBIGUOUS".to_string()));
    assert_eq!(unanswered(&r), None, "{:?}", codes(&r));
    // the receiver sent host 1 no CNP (host 3 its own): host 1's four marks are unanswered
    let r = nccl(false).analyze(&[]);
    let data: Vec<u64> = (0..4).map(|i| id(flow(&r, HOST_S, 0x200 + i))).collect();
    assert_eq!(unanswered(&r), Some((4, data)));
    let message = finding(&r, "CE_WITHOUT_CNP").and_then(|f| f["message"].as_str()).expect("a message");
    assert!(message.starts_with("4 CE-marked packets on flows whose receivers sent no CNP"), "{message}");
}

/// A UD SEND ONLY from QP `src_qp` of host 1 to QP `dst_qp` of host 2.
fn datagram(src_qp: u32, dst_qp: u32, psn: u32) -> RoceFrame {
    let deth = Deth { qkey: 0x1111, src_qp };
    let to = Side { n: HOST_D, qpn: dst_qp };
    frame(Side { n: HOST_S, qpn: src_qp }, to, 0x64, psn, ExtHeaders { deth: Some(deth), ..ExtHeaders::default() }, 256)
}

#[test]
fn a_ud_flow_is_answered_by_cnps_to_its_deth_source_qp() {
    let (d, to_qp) = (Side { n: HOST_D, qpn: 0 }, |qpn| Side { n: HOST_S, qpn });
    let mut c = Capture::new();
    // UD QP 0x151 → 0x251 marked first, then 0x150 → 0x250; an unpaired RC WRITE 0x100 → 0x200
    // marked; host 2 answers QP 0x150 alone, twice
    c.add(T0, &marked(datagram(0x151, 0x251, 7)));
    c.add(T0 + US, &marked(datagram(0x150, 0x250, 3)));
    c.add(T0 + 2 * US, &marked(write_only(to_qp(0x100), Side { qpn: 0x200, ..d }, 0, false)));
    c.add(T0 + 2 * US + 400, &cnp(d, to_qp(0x150)));
    c.add(T0 + 9 * US, &marked(datagram(0x150, 0x250, 4)));
    c.add(T0 + 9 * US + 1_400, &cnp(d, to_qp(0x150)));
    let r = c.analyze(&[]);
    let answered = flow(&r, HOST_S, 0x250);
    assert_eq!(
        (&answered["transport"], &answered["src_qp"], &answered["ce"]),
        (&json!("UD"), &json!(0x150), &json!(2))
    );
    // from each mark to the CNP to its DETH source QP; the earlier mark of 0x151 is not its
    assert_eq!(ce_to_cnp(answered), (json!(2), json!(1_400), json!(1_400)));
    let (other, rc) = (flow(&r, HOST_S, 0x251), flow(&r, HOST_S, 0x200));
    assert_eq!((ce_to_cnp(other).0, ce_to_cnp(rc).0), (json!(0), json!(0)));
    assert_eq!(flow(&r, HOST_D, 0x150)["cnps"], json!(2));
    // the CNPs went to a QP known as a UD sender's: not to 0x151, nor to the RC flow's
    assert_eq!(unanswered(&r), Some((2, vec![id(other), id(rc)])));
}

#[test]
fn a_mark_before_pairing_is_answered_by_the_first_cnp_after_it() {
    let (s, d) = (Side { n: HOST_S, qpn: 0x100 }, Side { n: HOST_D, qpn: 0x200 });
    let mut c = Capture::new();
    // the marked WRITE, its CNP 1.4 µs later, and only then the ACK that pairs the flows; a
    // second CNP 200 µs after the mark, with an unmarked WRITE between
    c.add(T0, &marked(write_only(s, d, 0, true)));
    c.add(T0 + 1_400, &cnp(d, s));
    c.add(T0 + 5 * US, &ack(d, s, 0, 0x1F));
    c.add(T0 + 100 * US, &write_only(s, d, 1, false));
    c.add(T0 + 200 * US, &cnp(d, s));
    let r = c.analyze(&[]);
    let data = flow(&r, HOST_S, d.qpn);
    assert_eq!((&data["pairing"], &data["from_peer"]["cnps"]), (&json!("psn"), &json!(2)));
    assert_eq!(ce_to_cnp(data), (json!(1), json!(1_400), json!(1_400)));
    assert_eq!(unanswered(&r), None);
}

#[test]
fn single_message_incast_flows_are_timed_alike_on_any_thread_count() {
    // five hosts send host 9 one marked WRITE each (never ACKed); host 9 answers each sender's
    // QP 1 + n µs after its mark; the senders' QP tables say which QP sends each WRITE
    let receiver = Side { n: 9, qpn: 0x900 };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut tables = Vec::new();
    for n in 1..=5u8 {
        let table = dir.path().join(format!("host{n}.qps"));
        let row = format!(
            "link mlx5_0/1 lqpn {} rqpn {} type RC state RTS sq-psn 1 pid 7 comm w \n",
            0x100 + u32::from(n),
            receiver.qpn
        );
        std::fs::write(&table, row).expect("a table");
        tables.push(format!("10.0.0.{n}={}", table.display()));
    }
    let qps: Vec<&str> = tables.iter().flat_map(|t| ["--qps", t.as_str()]).collect();
    let mut c = Capture::new();
    for n in 1..=5u8 {
        let from = Side { n, qpn: 0x100 + u32::from(n) };
        let t = T0 + i64::from(n) * 100;
        c.add(t, &marked(write_only(from, receiver, 0, false)));
        c.add(t + (1 + i64::from(n)) * US, &cnp(receiver, from));
    }
    c.by_time();
    let file = c.write();
    let r = capture::analyze_file(&file, &qps);
    for n in 1..=5u8 {
        let after = (1 + i64::from(n)) * US;
        assert_eq!(ce_to_cnp(flow(&r, n, receiver.qpn)), (json!(1), json!(after), json!(after)), "host {n}");
    }
    assert_eq!(unanswered(&r), None);
    // without the tables each CNP's QP may be one the capture lacks: answered, not timed
    let untabled = capture::analyze_file(&file, &[]);
    assert!((1..=5u8).all(|n| ce_to_cnp(flow(&untabled, n, receiver.qpn)).0 == json!(0)));
    assert_eq!(unanswered(&untabled), None);
    let path = file.to_str().expect("UTF-8");
    let run = |threads: &str| common::run_ok(&[&["analyze", "--json", "--threads", threads, path][..], &qps].concat());
    let one = run("1");
    for threads in ["2", "4"] {
        assert!(run(threads) == one, "--threads {threads}");
    }
}

/// Two RC QPs from host 1 to host 2, each sending three WRITEs, the second CE-marked (QP 1's
/// mark first); `paired`: from distinct PSNs (0.. and 1000..), each ACKed; host 2 sends CNPs to
/// QP 0 alone.
fn two_qps(paired: bool) -> Value {
    let mut c = Capture::new();
    for i in 0..2u32 {
        let (s, d) = (Side { n: HOST_S, qpn: 0x100 + i }, Side { n: HOST_D, qpn: 0x200 + i });
        for k in 0..3u32 {
            let t = T0 + i64::from(k) * 10 * US + (1 - i64::from(i)) * 500;
            let write = write_only(s, d, i * 1000 + k, paired);
            c.add(t, &if k == 1 { marked(write) } else { write });
            if paired {
                c.add(t + 2 * US, &ack(d, s, i * 1000 + k, 0x1F));
            }
        }
    }
    let to_qp0 = (Side { n: HOST_D, qpn: 0x200 }, Side { n: HOST_S, qpn: 0x100 });
    c.add(T0 + 11_900, &cnp(to_qp0.0, to_qp0.1));
    c.by_time();
    c.analyze(&[])
}

#[test]
fn cnps_to_one_of_two_qps_answer_that_qp_alone() {
    // paired: the CNP to QP 0x100 is QP 0's; QP 1's mark is unanswered
    let r = two_qps(true);
    let (qp0, qp1) = (flow(&r, HOST_S, 0x200), flow(&r, HOST_S, 0x201));
    assert_eq!((&qp0["pairing"], &qp1["pairing"]), (&json!("psn"), &json!("psn")));
    assert_eq!((ce_to_cnp(qp0), ce_to_cnp(qp1).0), ((json!(1), json!(1_400), json!(1_400)), json!(0)));
    assert_eq!(unanswered(&r), Some((1, vec![id(qp1)])));
    // unpaired: which QP the CNP went to is not known, so both flows count as answered and
    // neither is timed (the host pair's earliest waiting mark, QP 1's, is not the one answered)
    let r = two_qps(false);
    let (qp0, qp1) = (flow(&r, HOST_S, 0x200), flow(&r, HOST_S, 0x201));
    assert_eq!((&qp0["pairing"], &qp1["pairing"]), (&Value::Null, &Value::Null));
    assert_eq!((ce_to_cnp(qp0).0, ce_to_cnp(qp1).0), (json!(0), json!(0)));
    assert_eq!(unanswered(&r), None);
}

#[test]
fn a_mirrored_cnp_answers_once_and_a_cnp_before_any_mark_answers_none() {
    let (s, d) = (Side { n: HOST_S, qpn: 0x100 }, Side { n: HOST_D, qpn: 0x200 });
    let mut c = Capture::new();
    c.add(T0, &write_only(s, d, 0, true)).add(T0 + 1_500, &ack(d, s, 0, 0x1F));
    // a CNP before any mark (the capture began in the middle of congestion)
    c.add(T0 + 3 * US, &cnp(d, s));
    c.add(T0 + 10 * US, &marked(write_only(s, d, 1, false)));
    c.add(T0 + 11_400, &cnp(d, s));
    c.add(T0 + 11_500, &marked(write_only(s, d, 2, false)));
    // the CNP at 11.4 µs seen again at a second tap: not a CNP, it answers nothing
    let mut copy = cnp(d, s);
    copy.l3.ttl = 63;
    c.add(T0 + 11_600, &copy);
    let r = c.analyze(&[]);
    let (data, cnps) = (flow(&r, HOST_S, d.qpn), flow(&r, HOST_D, s.qpn));
    assert_eq!((&cnps["cnps"], &cnps["mirror_duplicates"], &data["ce"]), (&json!(2), &json!(1), &json!(2)));
    assert_eq!(ce_to_cnp(data), (json!(1), json!(1_400), json!(1_400)));
    assert_eq!(unanswered(&r), None);
}

#[test]
fn parts_merged_answer_a_mark_of_an_earlier_part_as_one_run_or_are_refused() {
    // the first part: a marked WRITE from host 1 to host 2, unpaired; the second: 10,010
    // WRITEs between two other hosts (a part decides whether it is a doubled mirror on its
    // first 10,000 frames), then host 2's CNP to the WRITE's sender, unpaired; host 1's QP
    // table says which QP sends the WRITE
    let (s, d) = (Side { n: HOST_S, qpn: 0x100 }, Side { n: HOST_D, qpn: 0x200 });
    let dir = tempfile::tempdir().expect("temp dir");
    let table = dir.path().join("host1.qps");
    std::fs::write(&table, "link mlx5_0/1 lqpn 256 rqpn 512 type RC state RTS sq-psn 1 pid 7 comm w \n")
        .expect("a table");
    let qps = format!("10.0.0.1={}", table.display());
    let mut first = Capture::new();
    first.add(T0, &marked(write_only(s, d, 0, false)));
    let mut second = Capture::new();
    let (x, y) = (Side { n: 5, qpn: 0x500 }, Side { n: 6, qpn: 0x600 });
    for k in 0..10_010u32 {
        second.add(T0 + 10 * US + i64::from(k) * 100, &write_only(x, y, k, false));
    }
    let cnp_at = 10 * US + 10_010 * 100;
    second.add(T0 + cnp_at, &cnp(d, s));
    let parts = [first.write(), second.write()];
    let paths: Vec<&str> = parts.iter().map(|p| p.to_str().expect("UTF-8")).collect();
    let whole: Value = serde_json::from_str(&common::run_ok(&["analyze", "--json", "--qps", &qps, paths[0], paths[1]]))
        .expect("a JSON report");
    assert_eq!(ce_to_cnp(flow(&whole, HOST_S, d.qpn)), (json!(1), json!(cnp_at), json!(cnp_at)));
    let states = |kept: &str| -> Vec<String> {
        paths
            .iter()
            .map(|p| {
                let state = format!("{p}.{kept}.state");
                common::run_ok(&["analyze", "-q", p, "--qps", &qps, "--state", &state, "--keep-frames", kept]);
                state
            })
            .collect()
    };
    // every frame kept: the second part is analysed again after the first, as one run
    let all = states("65536");
    let merged: Value = serde_json::from_str(&common::run_ok(&["merge", "--json", "--qps", &qps, &all[0], &all[1]]))
        .expect("a JSON report");
    assert_eq!(merged, whole);
    // the CNP after the second part's kept frames would have answered a mark its own analysis
    // did not know: the merge is refused
    let few = states("10005");
    let out = common::run(&["merge", "--json", "--qps", &qps, &few[0], &few[1]]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot go on exactly") && stderr.contains("took CNPs unpaired"), "{stderr}");
}

#[test]
fn marks_whose_receiver_the_capture_never_hears_from_are_not_called_unanswered() {
    // a mirror of one direction (one spine of an ECMP fabric): host 1's marked WRITEs to host
    // 2, and nothing host 2 sent; host 3's marked WRITEs to host 2 with host 2's ACKs and no CNP
    let (s, d) = (Side { n: HOST_S, qpn: 0x100 }, Side { n: HOST_D, qpn: 0x200 });
    let (e, to_e) = (Side { n: 3, qpn: 0x300 }, Side { n: HOST_D, qpn: 0x2FF });
    let mut c = Capture::new();
    for psn in 0..4u32 {
        let t = T0 + i64::from(psn) * 2 * US;
        c.add(t, &marked(write_only(s, d, psn, true)));
        c.add(t + 500, &marked(write_only(e, to_e, psn, true)));
        c.add(t + 1_500, &ack(to_e, e, psn, 0x1F));
    }
    let r = c.analyze(&[]);
    // whether host 2 sent host 1 CNPs cannot be told; it sent host 3 none
    let heard = flow(&r, 3, 0x2FF);
    assert_eq!(unanswered(&r), Some((4, vec![id(heard)])));
}
