//! `packets -T json` and `-T ek` against tshark 4.0's on every reference capture and sample:
//! with `-e` byte for byte; without, every field rocescope writes is where tshark writes it
//! (the same protocol object and subtree) with the same value (skipped where tshark or
//! ../shared is absent).

use crate::common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Fields every reference capture has or lacks in ways both tools agree on.
const FIELDS: &[&str] = &[
    "frame.number",
    "frame.time_epoch",
    "frame.time_relative",
    "eth.src",
    "ip.src",
    "ip.addr",
    "ip.dsfield.dscp",
    "ip.flags.df",
    "udp.port",
    "infiniband.bth.opcode",
    "infiniband.bth.psn",
    "infiniband.bth.destqp",
    "infiniband.bth.se",
    "infiniband.reth.va",
    "infiniband.aeth.syndrome",
    "infiniband.invariant.crc",
];

/// Frames the two decode apart, left out by a display filter both take: (capture, filter).
const DIFFERENT: &[(&str, &str)] = &[(
    "opcode_zoo.pcap",
    // 8: tshark's RPC-over-RDMA heuristic throws on an empty SEND before the ICRC; 42: a
    // decoy from UDP source port 4791, which tshark decodes as RoCE and RoCEv2 does not
    "!(frame.number in {8, 42})",
)];

/// Values tshark 4.0 gets wrong or does not reach: (capture and frame, or every frame, field).
const TSHARK_MISREADS: &[(Option<(&str, usize)>, &str)] = &[
    // its RPC-over-RDMA heuristic throws on an empty SEND before the ICRC
    (Some(("opcode_zoo.pcap", 8)), "infiniband.invariant.crc"),
    // IBA 12.6.5: the Primary Flow Label is the top 20 bits of the word at byte 88 of the
    // REQ; tshark 4.0 reads 24 bits (tests/it/wireshark_fields.rs)
    (None, "infiniband.cm.req.prim_flowlabel"),
    // its heuristics name what some payloads may be (`rpcordma`, `infiniband.eoib`):
    // `capture_fields_print_as_tshark_prints_them` in tests/it/wireshark_fields.rs compares
    // the chains of the other frames
    (None, "frame.protocols"),
];

fn tshark(file: &Path, args: &[&str]) -> String {
    let out = Command::new("tshark")
        .args(["--disable-protocol", "tftp", "-r"])
        .arg(file)
        .args(args)
        .output()
        .expect("tshark runs");
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn rocescope(file: &Path, args: &[&str]) -> String {
    let mut all = vec!["packets"];
    all.extend_from_slice(args);
    all.push(file.to_str().expect("UTF-8 path"));
    common::run_ok(&all)
}

fn with_fields(format: &'static str) -> Vec<&'static str> {
    let mut args = vec!["-T", format];
    for f in FIELDS {
        args.extend(["-e", f]);
    }
    args
}

#[test]
fn json_and_ek_with_fields_are_tsharks_byte_for_byte() {
    if !common::tshark_available() {
        return;
    }
    let Some(dir) = common::shared_subdir("reference-captures") else { return };
    let mut compared = 0;
    for entry in std::fs::read_dir(dir).expect("listing") {
        let file = entry.expect("entry").path();
        if !file.extension().is_some_and(|e| e == "pcap" || e == "pcapng") {
            continue;
        }
        for format in ["json", "ek"] {
            let mut args = with_fields(format);
            if let Some((_, filter)) = DIFFERENT.iter().find(|(name, _)| file.ends_with(name)) {
                args.extend(["-Y", filter]);
            }
            let (ours, theirs) = (rocescope(&file, &args), tshark(&file, &args));
            if let Some((line, (o, t))) = ours.lines().zip(theirs.lines()).enumerate().find(|(_, (o, t))| o != t) {
                panic!("{} -T {format}, line {}: rocescope {o:?}, tshark {t:?}", file.display(), line + 1);
            }
            assert_eq!(ours.len(), theirs.len(), "{} -T {format}", file.display());
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared} outputs compared");
}

#[test]
fn json_of_no_frames_is_an_empty_array() {
    let file = Path::new("samples/rc_write_healthy.pcap");
    let ours = rocescope(file, &["-T", "json", "-Y", "frame.number == 0"]);
    assert_eq!(ours, "[]\n");
    if common::tshark_available() {
        assert_eq!(ours, tshark(file, &["-T", "json", "-Y", "frame.number == 0"]));
    }
}

/// Parses tshark's JSON, whose objects may repeat a key, into (path, key, value) triples:
/// the path the protocol and subtree keys above the value.
fn triples(text: &str) -> Vec<Vec<(String, String, String)>> {
    /// A value whose objects keep their repeated keys (as an array of [key, value] pairs).
    struct Tree(Value);
    impl<'de> serde::Deserialize<'de> for Tree {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Tree;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON value")
                }
                fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
                    Ok(Tree(Value::String(v.to_string())))
                }
                fn visit_unit<E>(self) -> Result<Tree, E> {
                    Ok(Tree(Value::Null))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                    let mut items = Vec::new();
                    while let Some(Tree(v)) = seq.next_element()? {
                        items.push(v);
                    }
                    Ok(Tree(Value::Array(items)))
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
                    let mut pairs = Vec::new();
                    while let Some((k, Tree(v))) = map.next_entry::<String, Tree>()? {
                        pairs.push(Value::Array(vec![Value::String(k), v]));
                    }
                    Ok(Tree(Value::Object([("pairs".to_string(), Value::Array(pairs))].into_iter().collect())))
                }
            }
            d.deserialize_any(Visit)
        }
    }
    fn walk(node: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
        for pair in node["pairs"].as_array().into_iter().flatten() {
            let (key, value) = (pair[0].as_str().unwrap_or_default(), &pair[1]);
            match value {
                Value::String(v) => out.push((path.to_string(), key.to_string(), v.clone())),
                _ => walk(value, &format!("{path}/{key}"), out),
            }
        }
    }
    let Tree(packets) = serde_json::from_str(text).expect("valid JSON");
    packets
        .as_array()
        .expect("an array of packets")
        .iter()
        .map(|packet| {
            let source =
                packet["pairs"].as_array().expect("pairs").iter().find(|p| p[0] == "_source").expect("_source");
            let layers = source[1]["pairs"][0][1].clone();
            let mut found = Vec::new();
            walk(&layers, "", &mut found);
            found
        })
        .collect()
}

#[test]
fn json_without_fields_puts_every_value_where_tshark_does() {
    if !common::tshark_available() {
        return;
    }
    let files = common::shared_captures();
    if files.is_empty() {
        return;
    }
    let mut compared = 0;
    let mut differences = Vec::new();
    for file in files {
        if common::pcap_link_type(&file) == Some(247) {
            // LINKTYPE_INFINIBAND, which tshark 4.0 does not read
            continue;
        }
        let theirs = triples(&tshark(&file, &["-T", "json"]));
        let ours = triples(&rocescope(&file, &["-T", "json"]));
        assert_eq!(ours.len(), theirs.len(), "{}: frames", file.display());
        for (number, (o, t)) in ours.iter().zip(&theirs).enumerate() {
            if common::tshark_misreads(&file, number as u64 + 1) {
                continue;
            }
            let misread = |key: &str| {
                TSHARK_MISREADS.iter().any(|(frame, field)| {
                    *field == key && frame.is_none_or(|(name, n)| file.ends_with(name) && n == number + 1)
                })
            };
            let shared = |(path, key, _): &&(String, String, String)| {
                !key.starts_with("rocescope.") && !path.contains("rocescope") && !misread(key)
            };
            for triple in o.iter().filter(shared) {
                if t.contains(triple) {
                    compared += 1;
                } else if !differences.iter().any(|(p, k, _)| p == &triple.0 && k == &triple.1) {
                    let at = t.iter().filter(|(_, k, _)| k == &triple.1).map(|(p, _, v)| format!("{p}: {v}"));
                    let example = format!(
                        "{} frame {}: {}; tshark: {:?}",
                        file.display(),
                        number + 1,
                        triple.2,
                        at.collect::<Vec<_>>()
                    );
                    differences.push((triple.0.clone(), triple.1.clone(), example));
                }
            }
        }
    }
    assert!(differences.is_empty(), "fields not where tshark has them: {differences:#?}");
    assert!(compared > 5_000, "only {compared} values compared");
}

#[test]
fn ek_without_fields_flattens_the_json_layers() {
    let file = Path::new("samples/rc_write_healthy.pcap");
    let ek = rocescope(file, &["-T", "ek", "-c", "1"]);
    let lines: Vec<Value> = ek.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["index"]["_type"], "doc");
    let layers = &lines[1]["layers"];
    assert_eq!(layers["frame"]["frame_frame_number"], "1");
    assert_eq!(layers["ip"]["ip_ip_flags_df"], true);
    assert!(layers["infiniband"]["infiniband_infiniband_bth_psn"].is_string(), "{layers}");
    assert_eq!(layers["ip"]["ip_ip_addr"].as_array().map(Vec::len), Some(2), "{layers}");
    if common::tshark_available() {
        let theirs: Vec<Value> =
            tshark(file, &["-T", "ek", "-c", "1"]).lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
        assert_eq!(lines[0], theirs[0]);
        assert_eq!(lines[1]["timestamp"], theirs[1]["timestamp"]);
        for (protocol, fields) in layers.as_object().expect("layers") {
            for (key, value) in fields.as_object().expect("fields") {
                if key.contains("rocescope") {
                    continue;
                }
                assert_eq!(&theirs[1]["layers"][protocol][key], value, "{protocol}.{key}");
            }
        }
    }
}
