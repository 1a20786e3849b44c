//! Display filters select exactly the frames tshark selects: every operator, presence, sets,
//! ranges, CIDR, MAC addresses, slices, bitwise tests, fields that occur more than once in a
//! frame (the ERSPAN and VXLAN captures), PFC fields and CM fields, on every reference and real
//! RoCE capture (concatenated into one file with mergecap; skipped where tshark or ../shared is
//! absent).

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const FILTERS: &[&str] = &[
    "infiniband",
    "!infiniband && ip",
    "not infiniband",
    "infiniband.bth.opcode == 17",
    "infiniband.bth.opcode eq 0x11",
    "infiniband.bth.opcode != 17",
    "infiniband.bth.opcode ne 17 and udp",
    "infiniband.bth.psn > 3306400",
    "infiniband.bth.psn >= 3306400 and infiniband.bth.psn <= 3306410",
    "infiniband.bth.psn lt 100 or infiniband.bth.psn gt 16000000",
    "infiniband.bth.psn le 5 || infiniband.bth.psn ge 43990",
    "infiniband.bth.opcode in {4, 5, 6}",
    "infiniband.bth.opcode in {0x0c, 0x0d, 0x10}",
    "infiniband.bth.opcode in {0..5}",
    "infiniband.bth.opcode in {0x06..0x0b, 0x11}",
    "infiniband.bth.destqp == 0x000001",
    "infiniband.bth.destqp == 1",
    "infiniband.bth.a == 1",
    "infiniband.bth.a == True",
    "infiniband.bth.se == 0 && infiniband.bth.m",
    "infiniband.reth && !infiniband.atomiceth",
    "infiniband.reth.dmalen > 1000",
    "infiniband.reth.r_key",
    "infiniband.aeth",
    "infiniband.aeth.syndrome & 0x60",
    "infiniband.deth.srcqp == 0x1",
    "infiniband.immdt || infiniband.ieth",
    "infiniband.bth[0:1] == 11",
    "infiniband.bth[4] & 0x40",
    "infiniband.bth[5:3] == 00:00:01",
    "infiniband.bth contains ff:ff",
    "infiniband.bth[9-11] == 00:00:00",
    "ip.addr == 10.2.0.1",
    "ip.addr == 10.0.0.0/8",
    "ip.src == 10.9.0.0/16 && ip.dst == 10.9.0.1",
    "ip.src != 10.9.0.11",
    "ip.src ~= 10.9.0.11",
    "ip.addr any_ne 10.9.0.1",
    "ip.ttl < 64",
    "ip.proto == 021",
    "ip.proto == \"UDP\"",
    "ip.proto == \"udp\" && eth.type == IPv4",
    "eth.type == \"IPv6\" || eth.type == \"MAC Control\"",
    "len(eth.src) == 6 && len(infiniband.bth) == 12",
    "len(infiniband.bth) != 12",
    "count(ip.src) == 2",
    "count(ip.addr) > 2",
    "count(vlan.id) == 0 && ip",
    "count(infiniband.bth.psn) == 1 && count(infiniband.bth.destqp) >= 1",
    "ip.src#1 == 10.9.0.11",
    "ip.src#2 == 10.9.0.1",
    "ip.addr#2 == 10.9.0.2",
    "ip.src#2",
    "ip.src#3 || udp.port#2 == 4791",
    "ip.src#[1-2] == 10.9.0.1",
    "ip.src#[0-1] == 10.9.0.1",
    "ip.src#[2:1] == 10.9.0.11",
    "ip.src#[2:] == 10.9.0.1",
    "ip.src#[-1] == 10.9.0.1 && ip.src#[-2]",
    "ip.src#[-1:1] == 10.9.0.11",
    "ip.addr#[1,2] == 10.9.0.2 && udp.port#[-1] == 4791",
    "infiniband.bth matches \"^\\\\x0a\"",
    "infiniband.bth ~ \"^[\\\\x06-\\\\x08]\" && !(eth.src[0:1] matches \"\\\\x02\")",
    "ip.dsfield.dscp == 26",
    "infiniband.bth.opcode == 17 && ip.dsfield.dscp != 26",
    "ip.dsfield.ecn == 3",
    "ip.dsfield.ecn in {1, 2}",
    "ip.flags.df",
    "ipv6.addr == fd00:0:0:9::1",
    "ipv6.src == fd00::/8",
    "ipv6.flow != 0",
    "eth.dst[0:3] == 01:80:c2",
    "eth.addr == 02:00:00:02:00:01",
    "eth.src == 02-00-00-02-00-01",
    "eth.type == 0x8808",
    "vlan.id == 100",
    "vlan.priority == 3 && vlan",
    "erspan && ip.src == 10.9.0.1 && udp.dstport == 4791",
    "macc.cbfc.enbv.c3 == 1",
    "macc.cbfc.pause_time.c3 > 0",
    "macc.opcode == 0x0101",
    "macc.cbfc.enbv.c0 || macc.cbfc.pause_time.c7 > 0",
    "erspan.spanid == 7 && gre.proto == 0x88be",
    "erspan.version == 1 && erspan.truncated == 0",
    "infiniband.aeth.syndrome.opcode == 3 && infiniband.aeth.syndrome.error_code == 0",
    "infiniband.aeth.syndrome.opcode == 1 && infiniband.aeth.syndrome.timer > 10",
    "infiniband.aeth.syndrome.credit_count >= 8",
    "infiniband.grh.tclass == 0 && infiniband.grh.paylen > 100",
    "infiniband.mad.attributeid == 0x0010 && infiniband.cm.req.transpsvctype == 0",
    "infiniband.cm.req.prim_localgid_ipv4 == 192.168.65.5",
    "infiniband.cm.rep.tgtackdelay > 0 || infiniband.cm.drsp.localcommid",
    "ip.frag_offset == 0 && !ip.flags.rb",
    "macc.pause_time",
    "udp.port == 4791",
    "udp.srcport in {49152..65535}",
    "udp.dstport != 4791",
    "frame.number <= 10",
    "(ip.ttl == 64 || ip.ttl == 63) && !(infiniband.bth.opcode in {0x11, 0x81})",
    "infiniband.mad.attributeid == 0x0010",
    "infiniband.cm.req.localqpn == 0x11 or infiniband.cm.rep.localqpn",
    "infiniband.mad.method == 0x03 && infiniband.mad.mgmtclass == 7",
    // protocols as fields: their bytes
    "frame contains 12:b7",
    "frame contains \"abc\"",
    "len(frame) > 300",
    "len(ip) == 20",
    "len(udp) == 8 && len(eth) == 14",
    "len(infiniband) > 40",
    "len(infiniband) == 20",
    "ip[0] == 45",
    "udp[2:2] == 12:b7",
    "frame[12:2] == 81:00",
    "infiniband[0] == 0x0a",
    // the capture's own fields
    "frame.time_delta > 0.001",
    "frame.time_delta_displayed < 0.00001",
    "frame.protocols contains \"vlan\"",
];

/// Filters tshark 4.0 cannot read (it has no `xor`), with the equivalent it can.
const REWRITTEN: &[(&str, &str)] = &[
    (
        "frame.len > 300 xor infiniband.bth.a == 1",
        "(frame.len > 300 && !(infiniband.bth.a == 1)) || (!(frame.len > 300) && infiniband.bth.a == 1)",
    ),
    (
        "frame.len > 300 ^^ infiniband.bth.se == True",
        "(frame.len > 300 && !(infiniband.bth.se == 1)) || (!(frame.len > 300) && infiniband.bth.se == 1)",
    ),
];

fn tools_available() -> bool {
    let mergecap = Command::new("mergecap").arg("-h").output().is_ok_and(|o| o.status.success());
    if !mergecap {
        eprintln!("SKIPPED: mergecap is not installed");
    }
    common::tshark_available() && mergecap
}

/// Every reference and real RoCE capture, concatenated (frame numbers follow the files).
fn merged(dir: &Path) -> Option<PathBuf> {
    let files = common::shared_captures();
    if files.is_empty() {
        return None;
    }
    let out = dir.join("all.pcapng");
    let status = Command::new("mergecap").arg("-a").arg("-w").arg(&out).args(&files).status().expect("mergecap runs");
    assert!(status.success());
    Some(out)
}

fn numbers(text: &str) -> BTreeSet<u64> {
    text.lines().map(|l| l.trim().parse().expect("a frame number")).collect()
}

fn tshark_selects(file: &Path, filter: &str) -> BTreeSet<u64> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(["--disable-protocol", "tftp", "-Y", filter, "-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark runs");
    assert!(out.status.success(), "tshark refused {filter:?}: {}", String::from_utf8_lossy(&out.stderr));
    numbers(&String::from_utf8_lossy(&out.stdout))
}

fn rocescope_selects(file: &Path, filter: &str) -> BTreeSet<u64> {
    common::frames_selected(file, filter).into_iter().collect()
}

#[test]
fn display_filters_select_the_frames_tshark_selects() {
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(file) = merged(dir.path()) else { return };
    // tshark decodes RoCE on either UDP port; rocescope, as RoCEv2 does, on the destination
    // port only: frames tshark takes for RoCE with another destination port are left out
    let either_port = tshark_selects(&file, "infiniband && udp && !(udp.dstport == 4791)");
    // tshark also decodes IP over InfiniBand in UD SEND payloads, which rocescope leaves as
    // payload: the IP headers inside those frames are not compared
    let ipoib = tshark_selects(&file, "infiniband && (ip || ipv6 || arp)");
    let either_port: BTreeSet<u64> = either_port.union(&ipoib).copied().collect();
    assert!(FILTERS.len() + REWRITTEN.len() >= 40);
    let mut selected = 0;
    let pairs = FILTERS.iter().map(|f| (*f, *f)).chain(REWRITTEN.iter().copied());
    for (filter, for_tshark) in pairs {
        let theirs: BTreeSet<u64> = tshark_selects(&file, for_tshark).difference(&either_port).copied().collect();
        let ours: BTreeSet<u64> = rocescope_selects(&file, filter).difference(&either_port).copied().collect();
        let only_ours: Vec<&u64> = ours.difference(&theirs).collect();
        let only_theirs: Vec<&u64> = theirs.difference(&ours).collect();
        assert!(
            only_ours.is_empty() && only_theirs.is_empty(),
            "{filter}: only rocescope selects {only_ours:?}, only tshark {only_theirs:?}"
        );
        selected += ours.len();
    }
    assert!(selected > 1000, "the filters selected only {selected} frames");
}

#[test]
fn analysis_fields_agree_with_the_report() {
    let Some(dir) = common::shared_subdir("reference-captures") else { return };
    let count = |file: &Path, filter: &str| rocescope_selects(file, filter).len() as u64;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("listing")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    files.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/reordering.pcap"));
    for file in files {
        let report: serde_json::Value =
            serde_json::from_str(&common::run_ok(&["analyze", "--json", file.to_str().expect("UTF-8")])).expect("JSON");
        let sum = |key: &str| {
            report["flows"].as_array().expect("flows").iter().map(|f| f[key].as_u64().unwrap_or(0)).sum::<u64>()
        };
        let name = file.display();
        assert_eq!(count(&file, "rocescope.analysis.retransmission"), sum("retransmitted"), "{name}: retransmissions");
        assert_eq!(count(&file, "rocescope.analysis.gap"), sum("gaps"), "{name}: gaps");
        assert_eq!(count(&file, "rocescope.analysis.late_arrival"), sum("late_arrivals"), "{name}: late arrivals");
        assert_eq!(count(&file, "rocescope.analysis.ahead"), sum("reorder_events"), "{name}: reorder events");
        assert_eq!(
            count(&file, "rocescope.analysis.mirror_duplicate"),
            sum("mirror_duplicates"),
            "{name}: mirror duplicates"
        );
        let missing: u64 = common::run_ok(&[
            "packets",
            "-Y",
            "rocescope.analysis.gap",
            "-T",
            "fields",
            "-e",
            "rocescope.analysis.missing_psns",
            file.to_str().expect("UTF-8"),
        ])
        .lines()
        .map(|l| l.parse::<u64>().expect("a count"))
        .sum();
        // a gap's frame counts every PSN the capture lacks, those only the capture missed too
        assert_eq!(missing, sum("missing_psns") + sum("capture_missed"), "{name}: missing PSNs");
        assert_eq!(
            count(&file, "rocescope.icrc.status == \"bad\""),
            report["icrc"]["bad"].as_u64().unwrap_or(0),
            "{name}: bad ICRCs"
        );
        assert_eq!(count(&file, "rocescope.cnp"), report["cnps"].as_u64().unwrap_or(0), "{name}: CNPs");
    }
}

#[test]
fn a_bad_filter_is_a_one_line_usage_error_that_says_where() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/bad_icrc.pcap");
    for (filter, expected) in [
        (
            "infiniband.bth.pns == 3",
            "column 1: unknown field \"infiniband.bth.pns\" (did you mean infiniband.bth.psn?)",
        ),
        ("ip.addr == 10.0.0.300", "column 12: \"10.0.0.300\" is not an IPv4 address or network"),
        ("(ip.ttl == 64", "expected ')'"),
        ("ip.src contains 0a", "contains needs a byte or string field"),
    ] {
        let out = common::run(&["packets", "-Y", filter, sample.to_str().expect("UTF-8")]);
        assert_eq!(out.status.code(), Some(2), "{filter}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(expected) && err.contains(filter), "{filter}: {err}");
    }
}

/// The longest argument Linux passes to a program (`MAX_ARG_STRLEN`, the terminating NUL
/// included): the longest filter a command line carries.
const LONGEST_ARGUMENT: usize = 128 << 10;

#[test]
fn filters_as_long_as_a_command_line_carries_run_or_are_refused_with_the_limit() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/bad_icrc.pcap");
    let sample = sample.to_str().expect("UTF-8");
    // 5,000 frame numbers, one per term (as a script lists QPs or hosts): frames 1-30 match
    let numbers: Vec<String> = (1..=5000).map(|n| format!("frame.number == {n}")).collect();
    let listed = numbers.join(" || ");
    assert!(listed.len() < LONGEST_ARGUMENT);
    assert_eq!(common::run_ok(&["packets", "-Y", &listed, sample]).lines().count(), 30);
    // 18,000 terms joined by &&
    let every = vec!["eth"; 18_000].join(" && ");
    assert!(every.len() < LONGEST_ARGUMENT);
    let report: serde_json::Value =
        serde_json::from_str(&common::run_ok(&["analyze", "--json", "-Y", &every, sample])).expect("JSON");
    assert_eq!(report["totals"]["frames"], serde_json::json!(30));
    // 65,000 parentheses deep, and 130,000 nots: refused at the 129th
    let deep = format!("{}eth{}", "(".repeat(65_000), ")".repeat(65_000));
    let nots = format!("{}eth", "!".repeat(130_000));
    for (command, filter) in [("packets", &deep), ("analyze", &nots)] {
        assert!(filter.len() < LONGEST_ARGUMENT);
        let out = common::run(&[command, "-Y", filter, sample]);
        assert_eq!(out.status.code(), Some(2), "{command}: a usage error, not a crash");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.ends_with(
            " characters): column 129: parentheses and \"not\" nest more than 128 deep, rocescope's limit\n"
        ));
        assert!(err.len() < 300, "the filter is quoted by its start: {err}");
    }
}

#[test]
fn analyze_with_a_filter_analyses_only_the_matching_frames() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/reordering.pcap");
    let sample = sample.to_str().expect("UTF-8");
    let report = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["analyze", "--json"];
        all.extend_from_slice(args);
        all.push(sample);
        serde_json::from_str(&common::run_ok(&all)).expect("JSON")
    };
    let whole = report(&[]);
    let keys = ["src_ip", "dst_ip", "dst_qp", "packets", "gaps", "retransmitted", "late_arrivals", "reorder_naks"];
    let pick = |f: &serde_json::Value| keys.map(|k| f[k].clone());
    let expected: Vec<_> = whole["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .filter(|f| f["src_ip"] == "10.0.0.3" || f["dst_ip"] == "10.0.0.3")
        .map(pick)
        .collect();
    for threads in ["1", "2"] {
        let one_pair = report(&["-Y", "ip.addr == 10.0.0.3", "--threads", threads]);
        let flows: Vec<_> = one_pair["flows"].as_array().expect("flows").iter().map(pick).collect();
        assert_eq!(flows, expected, "--threads {threads}");
        assert_eq!(one_pair["totals"]["frames"], serde_json::json!(31));
    }
    // a filter on ICRC results works with the ICRC left to the analysis thread too
    let bad = report(&["-Y", "rocescope.icrc.status == \"ok\"", "--threads", "2"]);
    assert_eq!(bad["totals"]["frames"], whole["totals"]["frames"]);
    let out = common::run(&["analyze", "-Y", "rocescope.analysis.gap", sample]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot choose the frames it analyses"));
}

#[test]
fn rocescope_fields_say_what_wireshark_cannot() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // malformed frames, with the layer and the reason
    for file in ["tests/malformed/cut_at_every_header_boundary.pcap", "tests/malformed/bth_reserved_opcode.pcap"] {
        let file = root.join(file);
        let malformed: Vec<u64> = common::jsonl(&file, &[])
            .iter()
            .filter(|f| f["kind"] == "malformed")
            .map(|f| f["frame"].as_u64().expect("a number"))
            .collect();
        assert!(!malformed.is_empty());
        assert_eq!(common::frames_selected(&file, "rocescope.malformed"), malformed, "{}", file.display());
        let reasons = common::run_ok(&[
            "packets",
            "-Y",
            "rocescope.malformed",
            "-T",
            "fields",
            "-e",
            "rocescope.malformed",
            "-e",
            "rocescope.malformed.layer",
            file.to_str().expect("UTF-8"),
        ]);
        for line in reasons.lines() {
            let (reason, layer) = line.split_once('\t').expect("two fields");
            assert!(reason.starts_with(&format!("{layer}: ")), "{line}");
        }
    }
    // the XRCETH, which Wireshark does not decode, and CNPs
    let opcodes = root.join("samples/opcodes.pcap");
    let xrc = common::run_ok(&[
        "packets",
        "-Y",
        "rocescope.xrceth.xrc_srq == 0x77",
        "-T",
        "fields",
        "-e",
        "infiniband.bth.opcode",
        opcodes.to_str().expect("UTF-8"),
    ]);
    let opcodes_seen: Vec<u64> = xrc.lines().map(|l| l.parse().expect("an opcode")).collect();
    assert!(!opcodes_seen.is_empty() && opcodes_seen.iter().all(|op| (0xA0..=0xBF).contains(op)), "{opcodes_seen:?}");
    assert_eq!(common::frames_selected(&opcodes, "rocescope.cnp"), vec![62]);
    assert_eq!(
        common::frames_selected(&opcodes, "rocescope.bth.becn == 1"),
        common::frames_selected(&opcodes, "infiniband.bth[4] & 0x40")
    );
}
