//! `rocescope packets` as a user drives it: the list, filters, decode tree, hex dump, time
//! formats, help text, and a reader that goes away.

mod common;

use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name).to_str().expect("UTF-8").to_string()
}

#[test]
fn packet_list_lines_read_like_wireshark() {
    let out = common::run_ok(&["packets", &sample("rc_write_healthy.pcap")]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 24);
    assert_eq!(
        lines[0],
        "     1 0.000000000        10.0.0.1 → 10.0.0.2        RDMA-CM     322 CM ConnectRequest QPN=0x000101 StartPSN=4096 MTU=1024 retry=7 rnr_retry=7 ack_timeout=14 ICRC ok"
    );
    assert_eq!(
        lines[3],
        "     4 0.000200000        10.0.0.1 → 10.0.0.2        RoCEv2     1098 RC RDMA WRITE First QP=0x000202 PSN=4096 len=3000 ICRC ok"
    );
    assert_eq!(
        lines[6],
        "     7 0.000214000        10.0.0.2 → 10.0.0.1        RoCEv2       62 ACK QP=0x000101 PSN=4098 MSN=1 credits=32 ICRC ok"
    );
}

#[test]
fn pfc_cnp_nak_and_bad_icrc_summaries() {
    let pfc = common::run_ok(&["packets", "--only", "pfc", "-c", "1", &sample("pfc_storm.pcap")]);
    assert!(pfc.trim_end().ends_with("PFC          60 PFC P3 XOFF 65535 quanta"), "{pfc}");
    let cnp = common::run_ok(&["packets", "--opcode", "CNP", "-c", "1", &sample("congestion_ecn_cnp.pcap")]);
    assert!(cnp.contains("CNP QP=0x000111 ICRC ok"), "{cnp}");
    let nak = common::run_ok(&["packets", "--opcode", "0x11", &sample("loss_go_back_n.pcap")]);
    assert!(nak.contains("NAK PSN sequence error QP=0x000411 PSN=16777210 MSN=1 ICRC ok"), "{nak}");
    let bad = common::run_ok(&["packets", "--only", "errors", &sample("bad_icrc.pcap")]);
    assert_eq!(bad.lines().count(), 3);
    assert!(bad.lines().all(|l| l.ends_with("ICRC bad")));
}

#[test]
fn filters_combine() {
    let count = |args: &[&str]| common::run_ok(args).lines().count();
    let file = sample("congestion_ecn_cnp.pcap");
    let all = count(&["packets", &file]);
    let qp = count(&["packets", "--qp", "0x000301", &file]);
    let qp_dec = count(&["packets", "--qp", "769", &file]);
    assert_eq!(qp, qp_dec);
    assert!(qp > 0 && qp < all);
    let ip = count(&["packets", "--ip", "10.0.0.1", &file]);
    assert!(ip > qp, "--ip matches both directions");
    let writes = count(&["packets", "--opcode", "rdma write", &file]);
    let firsts = count(&["packets", "--opcode", "0x06", &file]);
    assert_eq!(writes, firsts * 8, "messages of 8 MTU-256 packets: FIRST, 6 MIDDLE, LAST");
    assert_eq!(count(&["packets", "--qp", "0x000301", "--opcode", "0x06", &file]), firsts / 2);
    assert_eq!(count(&["packets", "--only", "cm", &sample("rc_write_healthy.pcap")]), 3);
    assert_eq!(count(&["packets", "-c", "5", &file]), 5);
}

#[test]
fn decode_tree_shows_every_layer() {
    let out = common::run_ok(&["packets", "-V", "--only", "cm", "-c", "1", &sample("rc_write_healthy.pcap")]);
    for expected in [
        "Frame 1: 322 bytes on wire, 322 bytes captured",
        "Arrival time: 2023-11-14T22:13:20.000000000Z",
        "Ethernet II, Src: 02:00:00:00:00:01, Dst: 02:00:00:00:00:02",
        "Internet Protocol Version 4, Src: 10.0.0.1, Dst: 10.0.0.2",
        // CM MADs travel at the NIC's management class
        "    DSCP: 0 (CS0)",
        "    ECN: 0 (Not-ECT)",
        "User Datagram Protocol, Src Port: 49409, Dst Port: 4791",
        "    OpCode: 0x64 UD SEND Only (UD)",
        "    Destination QP: 0x000001 (1)",
        "Datagram ETH\n    Queue Key: 0x80010000\n    Source QP: 0x000001 (1)",
        "Management Datagram (class 0x07, version 2)",
        "    Local QPN: 0x000101",
        "    Starting PSN: 4096 (0x001000)",
        "    Path MTU: 1024 (code 3)",
        "    Local ACK timeout: 14 (4.096 µs × 2^14)",
        "Payload: 256 bytes (256 captured)",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    assert!(out.lines().any(|l| l.starts_with("Invariant CRC: ") && l.ends_with(": ok")), "{out}");
    let data = common::run_ok(&["packets", "-V", "--opcode", "0x06", "-c", "1", &sample("rc_write_healthy.pcap")]);
    assert!(data.contains("    DSCP: 26 (AF31)\n") && data.contains("    ECN: 2 (ECT(0))\n"), "{data}");
    let erspan = common::run_ok(&["packets", "-V", "-c", "6", &sample("encapsulations.pcapng")]);
    for expected in [
        "Mirror encapsulation erspan3, outer Src: 192.0.2.1, Dst: 192.0.2.100",
        "    Truncated by the mirror (T): 1",
        "Invariant CRC: not captured: unverifiable",
        "Mirror encapsulation vxlan",
        "    VXLAN Network Identifier: 5001",
    ] {
        assert!(erspan.contains(expected), "missing {expected:?} in\n{erspan}");
    }
    let fcs = common::run_ok(&["packets", "-V", "--ip", "10.0.0.1", &sample("encapsulations.pcapng")]);
    assert!(fcs.contains("Trailer: 4 bytes, Ethernet FCS (valid)"), "{fcs}");
}

#[test]
fn hex_dump_follows_the_summary() {
    let out = common::run_ok(&["packets", "-x", "-c", "1", "--only", "pfc", &sample("pfc_storm.pcap")]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("PFC P3 XOFF"));
    assert_eq!(lines[1], "");
    assert_eq!(lines[2], "0000  01 80 c2 00 00 01 02 00  00 00 ff 01 88 08 01 01  ................");
    assert_eq!(lines.len(), 2 + 4 + 1);
}

#[test]
fn time_formats() {
    let file = sample("loss_go_back_n.pcap");
    let column = |fmt: &str| -> Vec<String> {
        common::run_ok(&["packets", "-t", fmt, "-c", "3", &file])
            .lines()
            .map(|l| l.split_whitespace().nth(1).expect("time").to_string())
            .collect()
    };
    assert_eq!(column("relative"), ["0.000000000", "0.000003000", "0.000006000"]);
    assert_eq!(column("delta"), ["0.000000000", "0.000003000", "0.000003000"]);
    assert_eq!(column("epoch"), ["1700000000.000000000", "1700000000.000003000", "1700000000.000006000"]);
    assert_eq!(column("absolute")[0], "2023-11-14T22:13:20.000000000Z");
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    let mut child = common::rocescope()
        .args(["packets", &sample("congestion_ecn_cnp.pcap"), &sample("pfc_storm.pcap")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 100];
    child.stdout.as_mut().expect("stdout").read_exact(&mut first).expect("some output");
    drop(child.stdout.take());
    let status = child.wait().expect("exit");
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("stderr");
    assert!(status.success(), "exit {status:?}");
    assert_eq!(stderr, "");
}

#[test]
fn help_reads_like_a_manual_page() {
    let top = common::run_ok(&["--help"]);
    assert!(top.contains("EXIT STATUS:"));
    let help = common::run_ok(&["packets", "--help"]);
    for expected in
        ["EXAMPLES:", "EXIT STATUS:", "--only <ONLY>", "--roce-port <PORT>", "--format <FORMAT>", "-V, --verbose"]
    {
        assert!(help.contains(expected), "missing {expected:?} in\n{help}");
    }
    let out = common::run(&["packets", "--qp", "0x1000000", &sample("opcodes.pcap")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a QP number"));
}

#[test]
fn extra_roce_ports() {
    // The non-RoCE decoy of the reference opcode zoo is a UDP datagram *from* port 4791 to
    // port 50000: declaring 50000 a RoCE port makes rocescope try it as RoCE.
    let Some(dir) = common::shared_subdir("reference-captures") else { return };
    let file = dir.join("opcode_zoo.pcap");
    let plain = common::jsonl(&file, &[]);
    assert_eq!(plain[41]["kind"], "other");
    let extra = common::jsonl(&file, &["--roce-port", "50000"]);
    assert_ne!(extra[41]["kind"], "other");
}

#[test]
#[cfg(not(feature = "live"))]
fn capture_without_the_live_build_says_how_to_get_it() {
    let out = common::run(&["capture", "-i", "lo"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--features live") && stderr.contains("libpcap"), "{stderr}");
}

#[test]
fn display_filters_combine_with_the_other_filters_and_keep_capture_relative_times() {
    let file = sample("opcodes.pcap");
    let count = |args: &[&str]| common::run_ok(args).lines().count();
    // -Y and --opcode must both hold
    assert_eq!(count(&["packets", "-Y", "infiniband.bth.psn < 110", &file]), 10);
    assert_eq!(count(&["packets", "-Y", "infiniband.bth.psn < 110", "--opcode", "SEND", &file]), 6);
    // the time column counts from the capture's first frame, whatever a filter hides
    let line = common::run_ok(&["packets", "-Y", "infiniband.bth.opcode == 0x81", &file]);
    assert!(line.starts_with("    62 0.000129000 "), "{line}");
    let line = common::run_ok(&["packets", "--opcode", "cnp", &file]);
    assert!(line.starts_with("    62 0.000129000 "), "{line}");
}

#[test]
fn the_decode_tree_shows_the_analysis_fields_by_name() {
    let out = common::run_ok(&["packets", "-V", "-c", "11", &sample("reordering.pcap")]);
    for expected in [
        "rocescope analysis\n    Flow: 0 [rocescope.analysis.flow]\n    Sequence class: ahead [rocescope.analysis.seq_class]\n    Ahead of late arrivals: yes [rocescope.analysis.ahead]",
        "    Sequence class: late_arrival [rocescope.analysis.seq_class]\n    Late arrival: yes [rocescope.analysis.late_arrival]",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    let out = common::run_ok(&["packets", "-V", "-c", "2", &sample("mirror_erspan.pcap")]);
    assert!(out.contains("    Mirror duplicate: yes [rocescope.analysis.mirror_duplicate]"), "{out}");
}
