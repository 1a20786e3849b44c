//! `rocescope packets` as a user drives it: the list, filters, decode tree, hex dump, time
//! formats, help text, and a reader that goes away.

use crate::common;

use std::collections::HashMap;
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
        "Frame 1: 322 bytes on wire, 322 bytes captured\n    Arrival time: 2023-11-14T22:13:20.000000000Z\n",
        "Ethernet II, Src: 02:00:00:00:00:01, Dst: 02:00:00:00:00:02\n",
        "    Type: IPv4 (0x0800) [eth.type]\n",
        "Internet Protocol Version 4, Src: 10.0.0.1, Dst: 10.0.0.2\n",
        // CM MADs travel at the NIC's management class
        "    Differentiated Services Codepoint: CS0 (0) [ip.dsfield.dscp]\n",
        "    Explicit Congestion Notification: Not-ECT (0) [ip.dsfield.ecn]\n",
        "    Identification: 0x0000 (0) [ip.id]\n",
        "User Datagram Protocol, Src Port: 49409, Dst Port: 4791\n",
        "Base Transport Header\n    Opcode: UD SEND Only (100) [infiniband.bth.opcode]\n",
        "    Destination Queue Pair: 0x000001 [infiniband.bth.destqp]\n",
        "Datagram Extended Transport Header\n    Queue Key: 0x0000000080010000 [infiniband.deth.q_key]\n    Source Queue Pair: 0x00000001 [infiniband.deth.srcqp]\n",
        "    Attribute ID: 0x0010 [infiniband.mad.attributeid]\n",
        "CM ConnectRequest\n    Local Communication ID: 0x11110001 [infiniband.cm.req]\n",
        "    Local QPN: 0x000101 [infiniband.cm.req.localqpn]\n",
        "    Starting PSN: 0x001000 [infiniband.cm.req.startpsn]\n",
        "    Path Packet Payload MTU: 1024 bytes (0x03) [infiniband.cm.req.pppmtu]\n",
        "    Primary Local ACK Timeout: 67.109 ms (0x0e) [infiniband.cm.req.prim_localacktout]\n",
        "Payload\n    Payload length: 256 [rocescope.payload.len]\n    Payload bytes captured: 256 [rocescope.payload.cap_len]\n",
        "Invariant CRC\n    Invariant CRC: 0x1d83c0af [infiniband.invariant.crc]\n    ICRC status: ok [rocescope.icrc.status]\n    Computed ICRC: 0x1d83c0af [rocescope.icrc.computed]\n",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    let data = common::run_ok(&["packets", "-V", "--opcode", "0x06", "-c", "1", &sample("rc_write_healthy.pcap")]);
    for expected in [
        "    Differentiated Services Codepoint: AF31 (26) [ip.dsfield.dscp]\n",
        "    Explicit Congestion Notification: ECT(0) (2) [ip.dsfield.ecn]\n",
        "    DMA Length: 3000 (0x00000bb8) [infiniband.reth.dmalen]\n",
    ] {
        assert!(data.contains(expected), "missing {expected:?} in\n{data}");
    }
    let ack = common::run_ok(&["packets", "-V", "-Y", "infiniband.aeth", "-c", "1", &sample("rc_write_healthy.pcap")]);
    assert!(ack.contains("    Syndrome: ACK, 32 credits (10) [infiniband.aeth.syndrome]\n    Reserved: 0 [infiniband.aeth.syndrome.reserved]\n    OpCode: Ack (0) [infiniband.aeth.syndrome.opcode]\n    Credit Count: ACK, 32 credits (10) [infiniband.aeth.syndrome.credit_count]\n"), "{ack}");
    let erspan = common::run_ok(&["packets", "-V", "-c", "6", &sample("encapsulations.pcapng")]);
    for expected in [
        // wire order: the mirror's outer headers, the tunnel, then the mirrored frame
        "Internet Protocol Version 4, Src: 192.0.2.1, Dst: 192.0.2.100\n",
        "    Protocol: GRE (47) [ip.proto]\n",
        "Generic Routing Encapsulation\n    Protocol Type: ERSPAN III (0x22eb) [gre.proto]\nEncapsulated Remote Switch Packet ANalysis\n    Version: 2 [erspan.version]\n",
        "    Truncated: 1 [erspan.truncated]\n",
        "Payload\n    Payload length: 512 [rocescope.payload.len]\n    Payload bytes captured: 90 [rocescope.payload.cap_len]\nInvariant CRC\n    ICRC status: unverifiable [rocescope.icrc.status]\n",
    ] {
        assert!(erspan.contains(expected), "missing {expected:?} in\n{erspan}");
    }
    let vxlan = common::run_ok(&["packets", "-V", "-Y", "vxlan", &sample("encapsulations.pcapng")]);
    assert!(
        vxlan.contains("Virtual eXtensible Local Area Network\n    VXLAN Network Identifier (VNI): 5001 [vxlan.vni]\n"),
        "{vxlan}"
    );
    let fcs = common::run_ok(&["packets", "-V", "--ip", "10.0.0.1", &sample("encapsulations.pcapng")]);
    assert!(
        fcs.contains(
            "Trailer\n    Trailer: 215938ba [rocescope.trailer]\n    Ethernet FCS: True [rocescope.trailer.fcs]\n"
        ),
        "{fcs}"
    );
    let pfc = common::run_ok(&["packets", "-V", "--only", "pfc", "-c", "1", &sample("pfc_storm.pcap")]);
    for expected in [
        "MAC Control\n    Opcode: Class Based Flow Control [CBFC] Pause (0x0101) [macc.opcode]\n",
        "    C3: True [macc.cbfc.enbv.c3]\n    C4: False [macc.cbfc.enbv.c4]\n",
        "    C3: 65535 [macc.cbfc.pause_time.c3]\n",
    ] {
        assert!(pfc.contains(expected), "missing {expected:?} in\n{pfc}");
    }
}

/// The decode tree comes from the field registry: each value `-T fields` prints for a frame is
/// a line of its tree, once per occurrence, on every bundled sample.
#[test]
fn the_decode_tree_lists_every_field_the_frame_has() {
    // protocols and headers head their sections; aliases of other fields are not lines
    const HEADINGS_AND_ALIASES: &[&str] = &[
        "infiniband.bth",
        "infiniband.rdeth",
        "infiniband.deth",
        "infiniband.reth",
        "infiniband.atomiceth",
        "infiniband.aeth",
        "infiniband.atomicacketh",
        "infiniband.grh",
        "infiniband.lrh",
        "uet.tss",
        "uet.pds",
        "uet.ses",
        "eth.addr",
        "ip.addr",
        "ipv6.addr",
        "udp.port",
        "ip.version",
        // the frame's heading shows its time; a column is no field of the tree
        "frame.time",
        "_ws.col.Protocol",
        "_ws.col.Info",
    ];
    // Wireshark adds these twice per header (the header item, then its value)
    const DOUBLED: &[&str] = &["infiniband.immdt", "infiniband.ieth"];
    let names: Vec<String> = common::run_ok(&["fields"])
        .lines()
        .filter_map(|l| l.strip_prefix("F\t").and_then(|l| l.split('\t').nth(1)).map(str::to_string))
        .filter(|n| !HEADINGS_AND_ALIASES.contains(&n.as_str()))
        .collect();
    let mut export = vec!["packets", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"];
    for n in &names {
        export.extend(["-e", n.as_str()]);
    }
    let mut lines_checked = 0;
    for sample in common::samples() {
        let file = sample.to_str().expect("UTF-8").to_string();
        let values = common::run_ok(&[export.as_slice(), &[file.as_str()]].concat());
        let trees = common::run_ok(&["packets", "-V", &file]);
        let trees: Vec<&str> = trees.split("\n\n").filter(|t| !t.is_empty()).collect();
        assert_eq!(values.lines().count(), trees.len(), "{file}");
        for (frame, (row, tree)) in values.lines().zip(&trees).enumerate() {
            // the lines of the tree that end in ` [NAME]`, per NAME
            let mut lines_of: HashMap<&str, usize> = HashMap::new();
            for line in tree.lines() {
                if let Some(name) = line.strip_suffix(']').and_then(|l| l.rsplit_once(" [")).map(|(_, n)| n) {
                    *lines_of.entry(name).or_default() += 1;
                }
            }
            for (name, value) in names.iter().zip(row.split('\t')) {
                let occurrences = if value.is_empty() { 0 } else { value.split('|').count() };
                let expected = if DOUBLED.contains(&name.as_str()) { occurrences / 2 } else { occurrences };
                let lines = lines_of.get(name.as_str()).copied().unwrap_or(0);
                assert_eq!(lines, expected, "{file} frame {}: {name} = {value:?}\n{tree}", frame + 1);
                lines_checked += lines;
            }
        }
    }
    assert!(lines_checked > 10_000, "{lines_checked} lines");
}

/// A pcap file of one Ethernet frame: `tags` 802.1Q tags (`tpid` for every other one when
/// given), then an IPv4 header of zeros.
fn vlan_stack(dir: &std::path::Path, tags: u16, other_tpid: Option<u16>) -> String {
    let mut frame = vec![2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4];
    for vid in 0..tags {
        let tpid = match other_tpid {
            Some(tpid) if vid % 2 == 0 => tpid,
            _ => 0x8100,
        };
        frame.extend_from_slice(&tpid.to_be_bytes());
        frame.extend_from_slice(&(vid % 4096).to_be_bytes());
    }
    frame.extend_from_slice(&[0x08, 0x00, 0x45]);
    frame.extend_from_slice(&[0; 19]);
    let path = dir.join(format!("vlan_{tags}.pcap"));
    let file = std::fs::File::create(&path).expect("create");
    let mut w =
        rocescope::output::packet::capture_file::CaptureWriter::pcap(file, 1, 262_144, false, false).expect("header");
    w.packet(0, 0, &frame).expect("record");
    w.finish().expect("flush");
    path.to_str().expect("UTF-8").to_string()
}

#[test]
fn a_deep_stack_shows_its_first_sections_and_counts_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tree = common::run_ok(&["packets", "-V", &vlan_stack(dir.path(), 60_000, None)]);
    let headings: Vec<&str> = tree.lines().filter(|l| !l.starts_with(' ')).collect();
    let tags: Vec<&str> = headings.iter().copied().filter(|l| l.starts_with("802.1Q Virtual LAN")).collect();
    assert_eq!(tags.len(), 32);
    assert_eq!(tags[31], "802.1Q Virtual LAN, PRI: 0, DEI: False, ID: 31");
    let at = headings.iter().position(|l| l.starts_with('[')).expect("the line that counts the rest");
    assert_eq!(headings[at], "[59968 more headers of this kind not shown: the tree shows the first 32]");
    assert!(headings[at - 1].ends_with("ID: 31") && headings[at + 1] == "[Malformed frame]", "{headings:?}");
    // the 32nd tag's fields are its own, not the first tag's
    let tag_32: Vec<&str> = tree.lines().skip_while(|l| !l.ends_with("ID: 31")).skip(1).take(4).collect();
    assert_eq!(tag_32[2], "    ID: 31 [vlan.id]");
    // a tag of another TPID between 802.1Q tags: each kind up to 32
    let tree = common::run_ok(&["packets", "-V", &vlan_stack(dir.path(), 100, Some(0x88a8))]);
    let other = tree.lines().filter(|l| l.starts_with("VLAN tag, TPID 0x88a8")).count();
    let dot1q = tree.lines().filter(|l| l.starts_with("802.1Q Virtual LAN")).count();
    assert_eq!((other, dot1q), (32, 32));
    assert_eq!(tree.lines().filter(|l| l.contains("more headers of this kind not shown")).count(), 1);
    assert!(tree.contains("[36 more headers of this kind not shown"), "{tree}");
    // a shallow stack is shown whole
    let tree = common::run_ok(&["packets", "-V", &vlan_stack(dir.path(), 32, None)]);
    assert_eq!(tree.lines().filter(|l| l.starts_with("802.1Q Virtual LAN")).count(), 32);
    assert!(!tree.contains("not shown"));
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
        "rocescope analysis\n    Flow: 0 [rocescope.analysis.flow]\n    Sequence class: ahead [rocescope.analysis.seq_class]\n    Ahead of late arrivals: True [rocescope.analysis.ahead]",
        "    Sequence class: late_arrival [rocescope.analysis.seq_class]\n    Late arrival: True [rocescope.analysis.late_arrival]",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    let out = common::run_ok(&["packets", "-V", "-c", "2", &sample("mirror_erspan.pcap")]);
    assert!(out.contains("    Mirror duplicate: True [rocescope.analysis.mirror_duplicate]"), "{out}");
}

#[test]
fn a_misspelled_name_is_refused_with_the_names_and_tshark_habits_get_the_rocescope_spelling() {
    let file = sample("rc_write_healthy.pcap");
    let out = common::run(&["packets", "--opcode", "wirte", &file]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: invalid value 'wirte' for '--opcode <OPCODE>': no opcode's name holds WIRTE (did you mean WRITE?); an opcode is a number (0x0a) or part of its name, of the words ACKNOWLEDGE, "),
        "{stderr}"
    );
    // tshark's -t names
    let absolute = common::run_ok(&["packets", "-c", "1", "-t", "absolute", &file]);
    assert_eq!(common::run_ok(&["packets", "-c", "1", "-t", "ad", &file]), absolute);
    assert_eq!(
        common::run_ok(&["packets", "-c", "1", "-t", "e", &file]),
        common::run_ok(&["packets", "-c", "1", "-t", "epoch", &file])
    );
    for (args, tip) in [
        (
            &["packets", "-r", file.as_str()][..],
            "tip: rocescope reads the capture files named as arguments: `rocescope packets FILE` (tshark's -r FILE)",
        ),
        (&["analyze", "-V", file.as_str()][..], "tip: the decode tree is `rocescope packets -V FILE`"),
        (
            &["packets", "-d", "udp.port==4792,infiniband", file.as_str()][..],
            "tip: tshark's -d udp.port==4792,infiniband is `--roce-port 4792` here",
        ),
        (
            &["packets", "-q", file.as_str()][..],
            "tip: the statistics without the packet list are `rocescope analyze FILE` (`-q` there hides its progress bar)",
        ),
        (
            &["packets", "-o", "tcp.desegment:FALSE", file.as_str()][..],
            "tip: rocescope has no preferences: RoCEv2's UDP ports are `--roce-port PORT`, the marking policy is `--policy FILE`",
        ),
    ] {
        let out = common::run(args);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.lines().any(|l| l.trim() == tip), "{stderr}");
        assert!(!stderr.contains("use '--"), "clap's own tip is replaced: {stderr}");
    }
    // tshark refuses a count of zero, and so does rocescope
    let out = common::run(&["packets", "-c", "0", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 frames: give a count of at least 1"));
}

#[test]
fn fields_with_a_prefix_lists_the_fields_whose_names_begin_with_it() {
    let all = common::run_ok(&["fields"]);
    let name = |line: &str| line.split('\t').nth(2).unwrap_or_default().to_string();
    let expected: Vec<&str> = all.lines().filter(|l| name(l).starts_with("infiniband.bth")).collect();
    let listed = common::run_ok(&["fields", "infiniband.bth"]);
    assert_eq!(listed.lines().collect::<Vec<_>>(), expected);
    assert!(expected.len() > 10 && expected.len() < all.lines().count());
    assert_eq!(common::run_ok(&["fields", "no.such.protocol"]), "");
}

#[test]
fn every_possible_value_in_the_help_says_what_it_is() {
    use clap::CommandFactory;
    for command in rocescope::cli::Cli::command().get_subcommands().map(|c| c.get_name().to_string()) {
        let help = common::run_ok(&[&command, "--help"]);
        // clap lists a value as `- NAME: DESCRIPTION`; one without a description ends at its colon
        let bare: Vec<&str> = help.lines().map(str::trim).filter(|l| l.starts_with("- ") && l.ends_with(':')).collect();
        assert!(bare.is_empty(), "{command}: values without a description: {bare:?}");
    }
}
