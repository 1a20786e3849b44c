//! The field registry speaks Wireshark's language: its fields have tshark's names, types, bases
//! and bitmasks (`tshark -G fields`), and `packets -T fields` prints every registry field that
//! tshark also has exactly as tshark prints it, byte for byte, on every reference and real
//! capture (skipped where tshark or ../shared is absent).

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// `tshark -G fields`: name → (type, base, bitmask) of fields, ("P") of protocols.
fn tshark_glossary() -> HashMap<String, Vec<String>> {
    let out = Command::new("tshark").args(["-G", "fields"]).output().expect("tshark runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            match c.as_slice() {
                ["F", _, name, ty, _, base, mask, ..] => {
                    Some((name.to_string(), vec![ty.to_string(), base.to_string(), mask.to_string()]))
                }
                ["P", _, name, ..] => Some((name.to_string(), vec!["P".to_string()])),
                _ => None,
            }
        })
        .collect()
}

/// The registry as `rocescope fields` lists it: (name, columns as in the glossary).
fn registry() -> Vec<(String, Vec<String>)> {
    common::run_ok(&["fields"])
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            match c.as_slice() {
                ["F", _, name, ty, _, base, mask, ..] => {
                    (name.to_string(), vec![ty.to_string(), base.to_string(), mask.to_string()])
                }
                ["P", _, name, ..] => (name.to_string(), vec!["P".to_string()]),
                _ => panic!("unexpected glossary line {l:?}"),
            }
        })
        .collect()
}

/// Fields whose values tshark 4.0 gets wrong, and rocescope does not copy.
const TSHARK_MISREADS: &[&str] = [
    // IBA 12.6.5: the Primary Flow Label is the top 20 bits of the 32-bit word at byte 88 of
    // the REQ (0x20438 in softroce_cm_write_read.pcap); tshark 4.0 reads it from 24 bits and
    // shows 0x00204
    "infiniband.cm.req.prim_flowlabel",
]
.as_slice();

/// Protocols the registry declares from a Wireshark newer than the tshark 4.0 the tests run:
/// their fields are Wireshark's (`packet-uet.c`), but no tshark here has them to compare.
const NEWER_THAN_TSHARK: &[&str] = &["uet"];

fn newer_than_tshark(name: &str) -> bool {
    NEWER_THAN_TSHARK.iter().any(|p| name == *p || name.strip_prefix(p).is_some_and(|rest| rest.starts_with('.')))
}

/// Fields that name what tshark's heuristics make of a frame (`frame.protocols` holds
/// `rpcordma` where tshark takes a SEND's payload for RPC-over-RDMA), or what its dissection
/// says where it throws (the Info column's `[Malformed Packet]`): compared frame by frame, with
/// those frames left out, in `capture_fields_print_as_tshark_prints_them`.
const HEURISTIC: &[&str] = &["frame.protocols", "_ws.col.Protocol", "_ws.col.Info"];

/// The registry fields tshark has, that have values to print (not protocols), and that tshark
/// reads correctly.
fn shared_fields() -> Vec<String> {
    registry()
        .into_iter()
        .filter(|(n, c)| !n.starts_with("rocescope.") && c[0] != "P" && !TSHARK_MISREADS.contains(&n.as_str()))
        .filter(|(n, _)| !HEURISTIC.contains(&n.as_str()))
        .filter(|(n, _)| !newer_than_tshark(n))
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn the_registry_has_tsharks_names_types_bases_and_bitmasks() {
    if !common::tshark_available() {
        return;
    }
    let tshark = tshark_glossary();
    let mut wrong = Vec::new();
    for (name, columns) in registry() {
        if name.starts_with("rocescope.") {
            assert!(!tshark.contains_key(&name), "{name} exists in Wireshark");
            continue;
        }
        if newer_than_tshark(&name) {
            assert!(!tshark.contains_key(&name), "{name}: this tshark has the protocol now; compare it");
            continue;
        }
        // tshark's columns are fields of no protocol: `-G fields` lists none of them
        if name.starts_with("_ws.col.") {
            continue;
        }
        if tshark.get(&name) != Some(&columns) {
            wrong.push(format!("{name}: {columns:?}, tshark {:?}", tshark.get(&name)));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// tshark's `-T fields` output of `fields` for `file`. Its TFTP dissector is off: tshark picks
/// the lower UDP port, and a RoCE NIC whose source port is 69 would be decoded as TFTP. It
/// runs in UTC, as rocescope prints `frame.time`.
fn tshark_fields(file: &Path, fields: &[String], options: &[&str]) -> String {
    let mut args = vec!["-r".to_string(), file.display().to_string(), "--disable-protocol".into(), "tftp".into()];
    args.extend(["-T".into(), "fields".into()]);
    for o in options {
        args.extend(["-E".into(), o.to_string()]);
    }
    for f in fields {
        args.extend(["-e".into(), f.clone()]);
    }
    let out = Command::new("tshark").env("TZ", "UTC").args(&args).output().expect("tshark runs");
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn rocescope_fields(file: &Path, fields: &[String], options: &[&str]) -> String {
    let mut args = vec!["packets".to_string(), "-T".into(), "fields".into()];
    for o in options {
        args.extend(["-E".into(), o.to_string()]);
    }
    for f in fields {
        args.extend(["-e".into(), f.clone()]);
    }
    args.push(file.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run_ok(&args)
}

#[test]
fn field_export_prints_every_shared_field_as_tshark_does() {
    if !common::tshark_available() {
        return;
    }
    let fields = shared_fields();
    assert!(fields.len() >= 60, "{} fields", fields.len());
    let dstport = fields.iter().position(|f| f == "udp.dstport").expect("udp.dstport");
    let slid = fields.iter().position(|f| f == "infiniband.lrh.slid").expect("infiniband.lrh.slid");
    let mut compared = 0;
    for file in common::shared_captures() {
        let theirs = tshark_fields(&file, &fields, &[]);
        let ours = rocescope_fields(&file, &fields, &[]);
        let tshark_malformed: Vec<bool> =
            tshark_fields(&file, &["_ws.malformed".into()], &[]).lines().map(|l| !l.is_empty()).collect();
        assert_eq!(theirs.lines().count(), ours.lines().count(), "{}: frames", file.display());
        for (number, (t, o)) in theirs.lines().zip(ours.lines()).enumerate() {
            let (t, o): (Vec<&str>, Vec<&str>) = (t.split('\t').collect(), o.split('\t').collect());
            // tshark decodes RoCE on either UDP port; rocescope, as RoCEv2 does, on the
            // destination port only (a decoy with source port 4791 is not RoCE)
            let native = !t[slid].is_empty();
            let not_roce = !native && t[dstport].rsplit(',').next() != Some("4791");
            for (i, field) in fields.iter().enumerate() {
                if not_roce && field.starts_with("infiniband") {
                    continue;
                }
                // tshark decodes IP over InfiniBand in a native packet's UD payload, which
                // rocescope leaves as payload
                if native && !["frame.", "erf.", "infiniband."].iter().any(|p| field.starts_with(p)) {
                    continue;
                }
                // where tshark's dissection throws (an empty SEND handed to its RPC-over-RDMA
                // heuristic), it never reaches the ICRC that rocescope shows
                if tshark_malformed[number] && field == "infiniband.invariant.crc" && t[i].is_empty() {
                    continue;
                }
                assert_eq!(o[i], t[i], "{} frame {}: {field}", file.display(), number + 1);
                compared += 1;
            }
        }
    }
    if !common::shared_captures().is_empty() {
        assert!(compared > 10_000, "only {compared} values compared");
    }
}

#[test]
fn export_options_behave_as_tsharks() {
    if !common::tshark_available() {
        return;
    }
    let Some(dir) = common::shared_subdir("reference-captures") else { return };
    let fields: Vec<String> =
        ["frame.number", "ip.src", "eth.addr", "udp.port", "infiniband.reth.va"].map(String::from).to_vec();
    for file in ["encap_erspan2.pcap", "opcode_zoo.pcap"] {
        let file = dir.join(file);
        for options in [
            vec!["header=y"],
            vec!["separator=/s", "occurrence=f"],
            vec!["occurrence=l", "aggregator=/s"],
            vec!["separator=;", "aggregator=|", "quote=d"],
            vec!["quote=s", "header=y", "separator=,"],
            // tshark reads these by their first letter
            vec!["header=yes", "quote=double", "occurrence=last"],
            vec!["header=nope"],
        ] {
            assert_eq!(
                rocescope_fields(&file, &fields, &options),
                tshark_fields(&file, &fields, &options),
                "{} with {options:?}",
                file.display()
            );
        }
    }
}

#[test]
fn an_unknown_field_is_a_usage_error_that_suggests_the_nearest() {
    let out = common::run(&["packets", "-T", "fields", "-e", "infiniband.bth.pns", "samples/bad_icrc.pcap"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("infiniband.bth.pns") && err.contains("did you mean infiniband.bth.psn"), "{err}");
}

/// What tshark 4.0 makes of a frame that rocescope decodes otherwise, by design: a payload
/// its heuristics take for RPC over RDMA, EoIB, DNS, a pseudowire without control word or
/// LLC; IP over InfiniBand in a UD payload, TCP and IPv6 extension headers, which rocescope
/// does not decode; RoCE on the source port only; UET and NVIDIA Spectrum mirror headers,
/// which tshark 4.0 does not know.
fn tshark_guesses(theirs: &str, ours: &str) -> bool {
    tshark_heuristics(theirs, ours) || ["uet", "rocescope.spectrum"].iter().any(|p| ours.contains(p))
}

/// The frames of [`tshark_guesses`] but those of protocols tshark 4.0 does not know: its
/// Info column is a guess's (`Standard query 0x1234` for DNS, TCP's relative sequence
/// numbers, an ICMPv6 reply's `(request in 36)`), which rocescope does not make.
fn tshark_heuristics(theirs: &str, ours: &str) -> bool {
    ["rpcordma", "eoib", "pweth", ":dns", ":llc", "infiniband:ethertype", ":tcp", "ipv6.hopopts"]
        .iter()
        .any(|p| theirs.contains(p))
        || (theirs.contains("infiniband") && !ours.contains("infiniband"))
}

/// Why tshark's Info column of a frame is not compared, or `None`: frames whose Info is one
/// of tshark's guesses ([`tshark_heuristics`]), and those where tshark's dissection threw
/// (`[Malformed Packet]`) on a frame rocescope decodes: tshark 4.0 checks a RoCEv2 packet's
/// length against an LRH it does not have (`Invalid Packet Length from LRH!`), reads DC
/// headers into IBA's Reliable Datagram opcodes, and fails on an InfiniBand link packet.
fn info_left_out(theirs_chain: &str, ours_chain: &str, theirs_info: &str) -> Option<&'static str> {
    if tshark_heuristics(theirs_chain, ours_chain) {
        return Some("tshark's heuristics");
    }
    theirs_info.contains("[Malformed Packet]").then_some("tshark's dissection threw")
}

fn tshark_filtered(file: &Path, fields: &[String], filter: &str) -> String {
    let mut args = vec!["-r".to_string(), file.display().to_string(), "--disable-protocol".into(), "tftp".into()];
    args.extend(["-Y".into(), filter.into(), "-T".into(), "fields".into()]);
    for f in fields {
        args.extend(["-e".into(), f.clone()]);
    }
    let out = Command::new("tshark").env("TZ", "UTC").args(&args).output().expect("tshark runs");
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn capture_fields_print_as_tshark_prints_them() {
    if !common::tshark_available() {
        return;
    }
    let fields: Vec<String> = [
        "frame.number",
        "frame.time",
        "frame.time_delta",
        "frame.time_delta_displayed",
        "frame.protocols",
        "_ws.col.Protocol",
        "_ws.col.Info",
    ]
    .map(String::from)
    .to_vec();
    let (chain, info) = (4, 6);
    let (mut compared, mut infos_compared) = (0, 0);
    for file in common::samples_and_shared_captures() {
        let filter = "frame.number > 2 && frame.number != 5 && !(frame.number in {8..11})";
        for filter in [None, Some(filter)] {
            let (theirs, ours) = match filter {
                None => (tshark_fields(&file, &fields, &[]), rocescope_fields(&file, &fields, &[])),
                Some(filter) => {
                    let path = file.display().to_string();
                    let mut args = vec!["packets", "-Y", filter, "-T", "fields"];
                    fields.iter().for_each(|f| args.extend(["-e", f.as_str()]));
                    args.push(&path);
                    (tshark_filtered(&file, &fields, filter), common::run_ok(&args))
                }
            };
            // a link type tshark does not read (native InfiniBand without ERF)
            if theirs.is_empty() {
                continue;
            }
            assert_eq!(theirs.lines().count(), ours.lines().count(), "{} {filter:?}: frames", file.display());
            for (t, o) in theirs.lines().zip(ours.lines()) {
                let (t, o): (Vec<&str>, Vec<&str>) = (t.split('\t').collect(), o.split('\t').collect());
                // tshark 4.0 shows no time for a pcapng packet block of an interface whose
                // timestamp resolution it does not read
                if t[1].is_empty() {
                    continue;
                }
                if info_left_out(t[chain], o[chain], t[info]).is_none() {
                    assert_eq!(o[info], t[info], "{} {filter:?} frame {}: _ws.col.Info", file.display(), t[0]);
                    infos_compared += 1;
                }
                if tshark_guesses(t[chain], o[chain]) {
                    continue;
                }
                assert_eq!(o[..info], t[..info], "{} {filter:?}", file.display());
                compared += 1;
            }
        }
    }
    assert!(compared > 500, "only {compared} frames compared");
    assert!(infos_compared > 500, "only {infos_compared} Info columns compared");
}

/// Why tshark's item of `protocol` in a frame is not compared, or `None`: tshark's frame item
/// names the pcapng or ERF interface, which rocescope does not keep; tshark names some MAC
/// addresses (a vendor's `HuaweiTe_bf:2c:8f`, a well-known `MAC-specific-ctrl-proto-01`),
/// rocescope repeats the address; tshark 4.0 looks for no Metamako trailer unless its heuristic
/// is enabled.
fn item_left_out(protocol: &str, theirs: &str) -> Option<&'static str> {
    match protocol {
        "frame" if theirs.contains(" on interface ") => Some("the capture interface"),
        "eth" if names_an_address(theirs) => Some("a name from tshark's manuf or well-known addresses"),
        "metamako" => Some("tshark's Metamako heuristic is off"),
        _ => None,
    }
}

/// Does tshark's Ethernet item (`Src: name (address)`) name an address?
fn names_an_address(item: &str) -> bool {
    item.split(": ").skip(1).any(|part| match part.split_once(" (") {
        Some((name, rest)) => !rest.starts_with(name),
        None => false,
    })
}

/// `-e PROTOCOL` prints the protocol's item as tshark does (its text, or its abbreviation),
/// one for each instance, on every capture; rocescope's own protocols, and UET, which this
/// tshark does not know, are not compared.
#[test]
fn protocol_fields_print_their_items_as_tshark_does() {
    if !common::tshark_available() {
        return;
    }
    let protocols: Vec<String> = registry()
        .into_iter()
        .filter(|(n, c)| c[0] == "P" && !n.starts_with("rocescope.") && !newer_than_tshark(n))
        .map(|(n, _)| n)
        .collect();
    assert!(protocols.len() >= 15, "{protocols:?}");
    let mut fields = vec!["frame.protocols".to_string()];
    fields.extend(protocols.iter().cloned());
    let mut compared = 0;
    for file in common::samples_and_shared_captures() {
        let (theirs, ours) = (tshark_fields(&file, &fields, &[]), rocescope_fields(&file, &fields, &[]));
        // a link type tshark does not read (native InfiniBand without ERF)
        if theirs.is_empty() {
            continue;
        }
        assert_eq!(theirs.lines().count(), ours.lines().count(), "{}: frames", file.display());
        for (number, (t, o)) in theirs.lines().zip(ours.lines()).enumerate() {
            let (t, o): (Vec<&str>, Vec<&str>) = (t.split('\t').collect(), o.split('\t').collect());
            if tshark_guesses(t[0], o[0]) {
                continue;
            }
            for (i, protocol) in protocols.iter().enumerate() {
                let (t, o) = (t[i + 1], o[i + 1]);
                if item_left_out(protocol, t).is_some() {
                    continue;
                }
                assert_eq!(o, t, "{} frame {}: {protocol}", file.display(), number + 1);
                compared += usize::from(!t.is_empty());
            }
        }
    }
    assert!(compared > 10_000, "only {compared} items compared");
}

/// tshark 4.0's display filters read no column (`-Y '_ws.col.Info contains "Write"'` selects
/// nothing); rocescope's read the text it prints.
#[test]
fn the_info_column_filters_on_the_text_it_prints() {
    let file = "samples/pfc_storm.pcap";
    let infos = common::run_ok(&["packets", "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Info", file]);
    // a filter, and what it says of an Info column
    type Case = (&'static str, fn(&str) -> bool);
    let cases: [Case; 3] = [
        ("_ws.col.Info contains \"Write\"", |info| info.contains("Write")),
        ("_ws.col.Info matches \"^RC RDMA Write (First|Last)\"", |info| {
            info.starts_with("RC RDMA Write First") || info.starts_with("RC RDMA Write Last")
        }),
        ("_ws.col.Info == \"Class Based Flow Control [CBFC] Pause\"", |info| {
            info == "Class Based Flow Control [CBFC] Pause"
        }),
    ];
    for (filter, holds) in cases {
        let expected: Vec<u64> = infos
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(_, info)| holds(info))
            .map(|(number, _)| number.parse().expect("a frame number"))
            .collect();
        assert!(!expected.is_empty(), "{filter}: no frame to select");
        assert_eq!(common::frames_selected(Path::new(file), filter), expected, "{filter}");
    }
}

#[test]
fn misspelled_capture_fields_suggest_their_neighbours() {
    for (typed, meant) in [
        ("frame.protocol", "frame.protocols"),
        ("frame.time_delta_display", "frame.time_delta_displayed"),
        ("_ws.col.Inf", "_ws.col.Info"),
        ("_ws.col.protocol", "_ws.col.Protocol"),
    ] {
        let out = common::run(&["packets", "-T", "fields", "-e", typed, "samples/bad_icrc.pcap"]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("did you mean {meant}?")), "{typed}: {err}");
        let out = common::run(&["packets", "-Y", &format!("{typed} == 1"), "samples/bad_icrc.pcap"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("did you mean {meant}?")), "{typed}: {err}");
    }
}

#[test]
fn protocols_as_fields_select_the_frames_tshark_selects() {
    if !common::tshark_available() {
        return;
    }
    let number = vec!["frame.number".to_string()];
    for file in ["samples/rc_write_healthy.pcap", "samples/pfc_storm.pcap", "samples/mirror_erspan.pcap"] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        for filter in [
            "frame contains 00:00:02:02",
            "len(frame) > 100",
            "len(ip) == 20",
            "len(udp) == 8",
            "len(infiniband) > 40",
            "ip[0] == 45",
            "frame.time_delta > 0.000005",
            "frame.time_delta_displayed < 0.000005",
            "frame.protocols contains \"data\"",
        ] {
            let ours: Vec<String> = common::frames_selected(&file, filter).iter().map(u64::to_string).collect();
            let theirs: Vec<String> = tshark_filtered(&file, &number, filter).lines().map(String::from).collect();
            assert_eq!(ours, theirs, "{} {filter}", file.display());
        }
    }
}
