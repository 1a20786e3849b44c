//! The Wireshark plugin (`rocescope wireshark-plugin`), run by tshark over `annotate`'s output,
//! shows every per-frame analysis field with the values `packets` gives it, selects the frames
//! `packets -Y` selects, raises an expert item of the finding's severity on each frame a finding
//! names, and says nothing of comments that are not rocescope's or of a version it does not know.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rocescope::analyze::finding::ALL as FINDING_KINDS;
use rocescope::output::packet::capture_file::{
    EnhancedPacket, Interface, write_enhanced_packet, write_interface, write_section_header,
};

/// Every per-frame field the comments carry, as `packets -T fields` and the plugin name them:
/// each field of the analysis (the registry's `rocescope.analysis.*`, so that a new one has to
/// reach the plugin), the ICRC, VCRC and UET CRC verdicts and a malformed frame's error.
fn fields() -> Vec<&'static str> {
    let analysis = rocescope_engine::fields::all().map(|f| f.name).filter(|n| n.starts_with("rocescope.analysis."));
    let verdicts = [
        "rocescope.icrc.status",
        "rocescope.vcrc.status",
        "rocescope.uet.crc.status",
        "rocescope.malformed",
        "rocescope.malformed.layer",
    ];
    analysis.chain(verdicts).collect()
}

/// A filter of value comparisons and presences over the plugin's fields.
const FILTER: &str = "rocescope.analysis.missing_psns >= 2 || rocescope.analysis.seq_class == \"ahead\" \
    || rocescope.analysis.flow == 2 || rocescope.analysis.retransmission || rocescope.analysis.late_arrival \
    || rocescope.analysis.mirror_duplicate || rocescope.icrc.status == \"bad\" || rocescope.malformed";

/// tshark with the plugin loaded over `file`, asserting that it ran without complaint on
/// standard error (where a plugin that cannot load says so).
fn tshark(plugin: &Path, file: &Path, args: &[&str]) -> String {
    let out: Output = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", plugin.display()))
        .arg("-r")
        .arg(file)
        .args(args)
        .output()
        .expect("tshark runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let complaints: Vec<&str> = stderr.lines().filter(|l| !l.contains("Running as user")).collect();
    assert!(out.status.success() && complaints.is_empty(), "tshark over {}: {stderr}", file.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `-T fields` arguments for frame.number and `fields`.
fn field_args<'a>(fields: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["-T", "fields", "-e", "frame.number"];
    for field in fields {
        args.extend(["-e", field]);
    }
    args
}

/// A `-T fields` table with each value as the comments carry it: booleans as 1, the checks
/// that passed (`ok`), which the comments leave out, as nothing.
fn normalised(table: &str) -> Vec<String> {
    let cell = |value: &str| match value {
        "True" | "1" => "1".to_string(),
        "ok" => String::new(),
        other => other.to_string(),
    };
    table.lines().map(|line| line.split('\t').map(cell).collect::<Vec<_>>().join("\t")).collect()
}

fn annotated(input: &Path, dir: &Path) -> PathBuf {
    let out = dir.join(format!("{}.pcapng", input.file_name().expect("a name").to_string_lossy()));
    common::run_ok(&["annotate", input.to_str().expect("UTF-8"), "-o", out.to_str().expect("UTF-8")]);
    out
}

/// The severity name of a `_ws.expert.severity` value, as tshark prints it (its number or
/// its name, by version).
fn severity_of(value: &str) -> &str {
    match value {
        "8388608" | "Error" => "error",
        "6291456" | "Warning" | "Warn" => "warning",
        "4194304" | "Note" => "info",
        other => other,
    }
}

/// The findings' codes and severities on each frame they name, per the analysis's report.
fn findings_by_frame(input: &Path) -> BTreeMap<u64, Vec<(String, String)>> {
    let report = common::capture::analyze_file(input, &[]);
    let mut named: BTreeMap<u64, Vec<(String, String)>> = BTreeMap::new();
    for finding in report["findings"].as_array().expect("findings") {
        let code = finding["code"].as_str().expect("a code").to_string();
        let severity = finding["severity"].as_str().expect("a severity").to_string();
        for frame in finding["evidence"]["frames"].as_array().expect("frames") {
            named.entry(frame.as_u64().expect("a frame number")).or_default().push((code.clone(), severity.clone()));
        }
    }
    named.values_mut().for_each(|v| v.sort());
    named
}

/// The expert items' messages and severities tshark prints, each list joined by this.
const AGGREGATOR: char = '\u{1f}';

/// The plugin's expert items on a frame, from tshark's `_ws.expert.message` and
/// `_ws.expert.severity` of it: the code their text begins with and their severity.
fn experts(messages: &str, severities: &str) -> Vec<(String, String)> {
    assert!(!messages.contains("Lua Error"), "{messages}");
    let mut found: Vec<(String, String)> = messages
        .split(AGGREGATOR)
        .zip(severities.split(AGGREGATOR))
        .filter_map(|(message, severity)| {
            let code = message.split(" (").next().unwrap_or_default();
            FINDING_KINDS.iter().any(|k| k.code == code).then(|| (code.to_string(), severity_of(severity).to_string()))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_plugin_shows_what_packets_shows_for_every_capture() {
    if !common::tshark_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let plugin = common::wireshark_plugin(dir.path());
    let names = fields();
    assert!(names.contains(&"rocescope.analysis.retransmission"), "{names:?}");
    let fields = field_args(&names);
    let mut with_experts = fields.clone();
    with_experts.extend(["-e", "_ws.expert.message", "-e", "_ws.expert.severity"]);
    let aggregator = format!("aggregator={AGGREGATOR}");
    with_experts.extend(["-E", &aggregator]);
    let malformed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let mut inputs = common::samples_and_shared_captures();
    inputs.extend(["cut_at_every_header_boundary.pcap", "runt_frames.pcap"].map(|name| malformed.join(name)));
    for input in inputs {
        let out = annotated(&input, dir.path());
        let name = input.display();
        let mut ours = vec!["packets"];
        ours.extend_from_slice(&fields);
        ours.push(input.to_str().expect("UTF-8"));
        let expected = normalised(&common::run_ok(&ours));
        let mut expert_items = BTreeMap::new();
        let mut shown = Vec::new();
        for line in tshark(&plugin, &out, &with_experts).lines() {
            // the frame's fields, then the two columns of its expert items
            let cells: Vec<&str> = line.split('\t').collect();
            let (own, [messages, severities]) = cells.split_at(cells.len().saturating_sub(2)) else {
                panic!("{name}: no expert columns in {line:?}");
            };
            let items = experts(messages, severities);
            if !items.is_empty() {
                expert_items.insert(own.first().and_then(|n| n.parse::<u64>().ok()).expect("a frame number"), items);
            }
            shown.extend(normalised(&own.join("\t")));
        }
        for (theirs, ours) in shown.iter().zip(&expected) {
            assert_eq!(theirs, ours, "{name}: frame.number and {names:?}");
        }
        assert_eq!(shown.len(), expected.len(), "{name}: frames");
        assert_eq!(expert_items, findings_by_frame(&input), "{name}: expert items");

        let selected: Vec<u64> = tshark(&plugin, &out, &["-Y", FILTER, "-T", "fields", "-e", "frame.number"])
            .lines()
            .map(|l| l.trim().parse().expect("a frame number"))
            .collect();
        assert_eq!(selected, common::frames_selected(&input, FILTER), "{name}: -Y {FILTER}");
    }
}

/// A pcapng of one small frame per comment (`None`: no comment).
fn commented_capture(path: &Path, comments: &[Option<&str>]) {
    let mut bytes = Vec::new();
    write_section_header(&mut bytes, None).expect("header");
    write_interface(&mut bytes, &Interface { link_type: 1, snaplen: 0, tsresol: 9, name: None }).expect("interface");
    let frame = [0u8; 60];
    for (at, comment) in comments.iter().enumerate() {
        let packet = EnhancedPacket { interface: 0, ts_ns: at as i64 * 1000, captured: &frame, orig_len: 60 };
        write_enhanced_packet(&mut bytes, &packet, 9, *comment).expect("packet");
    }
    std::fs::write(path, bytes).expect("write the capture");
}

/// The frames on which the plugin shows anything: a field of its protocol, an expert item, or
/// the error Wireshark shows in the tree of a frame on which a Lua dissector failed.
const ANYTHING: &str =
    "rocescope || rocescope.expert.error || rocescope.expert.warning || rocescope.expert.info || _ws.lua.error";

#[test]
fn the_plugin_says_nothing_of_other_comments_or_other_versions() {
    if !common::tshark_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let plugin = common::wireshark_plugin(dir.path());
    let uncommented = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/reordering.pcap");
    assert_eq!(tshark(&plugin, &uncommented, &["-Y", ANYTHING]), "", "a capture without comments");

    let foreign = dir.path().join("foreign.pcapng");
    commented_capture(
        &foreign,
        &[
            None,
            Some("checked by hand: retransmission?"),
            Some("rocescope/2 analysis.gap=1 finding=PSN_GAP finding.severity=warning\nPSN_GAP (warning): later"),
            Some("rocescope/1x analysis.gap=1"),
            Some("rocescope 0.1 analysis: 3 frames"),
            Some("rocescope/1 analysis.flow=abc analysis.gap=yes finding.severity=fatal"),
        ],
    );
    let shown = tshark(&plugin, &foreign, &["-Y", ANYTHING, "-T", "fields", "-e", "frame.number"]);
    assert_eq!(shown, "6\n", "only the record of version 1 shows, and none of its values");
    let fields = field_args(&fields()[..3]);
    assert_eq!(tshark(&plugin, &foreign, &fields).lines().nth(5), Some("6\t\t\t"));

    let mixed = dir.path().join("mixed.pcapng");
    commented_capture(
        &mixed,
        &[Some("rocescope/2 analysis.flow=9\nrocescope/1 analysis.flow=5 analysis.gap=1\nphrase")],
    );
    assert_eq!(tshark(&plugin, &mixed, &fields), "1\t5\t\t1\n", "the record of version 1 only");
}

#[cfg(unix)]
#[test]
fn install_writes_the_plugin_into_the_personal_lua_plugin_folder() {
    let home = tempfile::tempdir().expect("temp dir");
    let out =
        common::rocescope().args(["wireshark-plugin", "--install"]).env("HOME", home.path()).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let path = home.path().join(".local/lib/wireshark/plugins/rocescope.lua");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), path.display().to_string());
    assert_eq!(std::fs::read_to_string(&path).expect("installed"), common::run_ok(&["wireshark-plugin"]));

    let not_a_folder = home.path().join("file");
    std::fs::write(&not_a_folder, "").expect("write a file");
    for home in [Path::new(""), not_a_folder.as_path()] {
        let out = common::rocescope().args(["wireshark-plugin", "--install"]).env("HOME", home).output().expect("runs");
        assert_eq!(out.status.code(), Some(3), "HOME={}", home.display());
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot install the plugin"), "HOME={}", home.display());
    }
}
