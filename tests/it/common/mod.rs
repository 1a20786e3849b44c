//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

pub mod capture;
pub mod split;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The `shared/` folder that sits beside the checkout, if present; `ROCESCOPE_SHARED` names
/// another (CI names one that is not there, to run the tests as a fresh clone does).
pub fn shared_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ROCESCOPE_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    };
    dir.is_dir().then_some(dir)
}

/// A folder under `shared/`, or `None` with a message saying the test is skipped.
pub fn shared_subdir(name: &str) -> Option<PathBuf> {
    match shared_dir().map(|d| d.join(name)).filter(|d| d.is_dir()) {
        Some(dir) => Some(dir),
        None => {
            eprintln!("SKIPPED: ../shared/{name} is not beside the checkout");
            None
        }
    }
}

pub fn rocescope() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocescope"))
}

/// Runs rocescope with `args`, asserting success, and returns stdout.
pub fn run_ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "rocescope {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

pub fn run(args: &[&str]) -> Output {
    rocescope().args(args).output().expect("rocescope runs")
}

/// `packets --format jsonl` of a file, parsed.
pub fn jsonl(path: &std::path::Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let path = path.to_str().expect("UTF-8 path");
    let mut args = vec!["packets", "--format", "jsonl"];
    args.extend_from_slice(extra);
    args.push(path);
    run_ok(&args).lines().map(|l| serde_json::from_str(l).expect("valid JSON line")).collect()
}

/// tshark's opcode, PSN and destination QP per frame, one tab-separated line each (empty
/// fields where it decoded no BTH); `None` when tshark is not installed.
pub fn tshark_bth_fields(path: &std::path::Path) -> Option<String> {
    let out = Command::new("tshark")
        .args(["--disable-protocol", "tftp", "-r"])
        .arg(path)
        .args([
            "-T",
            "fields",
            "-e",
            "infiniband.bth.opcode",
            "-e",
            "infiniband.bth.psn",
            "-e",
            "infiniband.bth.destqp",
        ])
        .output()
        .ok()?;
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).expect("UTF-8"))
}

/// rocescope's opcode, PSN and destination QP per frame, in tshark's field format.
pub fn rocescope_bth_fields(path: &std::path::Path) -> String {
    jsonl(path, &[])
        .iter()
        .map(|f| {
            let n = |k: &str| f[k].as_u64().map(|v| v.to_string()).unwrap_or_default();
            let qp = f["dst_qp"].as_u64().map(|q| format!("0x{q:06x}")).unwrap_or_default();
            format!("{}\t{}\t{}\n", n("opcode"), n("psn"), qp)
        })
        .collect()
}

/// Sample frames in formats tshark 4.0 does not decode, which its comparisons leave out:
/// (sample, frame number, why).
pub const TSHARK_MISREADS_FRAMES: &[(&str, u64, &str)] = &[
    ("encapsulations.pcapng", 9, "ERSPAN II with GRE's sequence bit clear: tshark reads it as type I, 8 bytes off"),
    (
        "encapsulations.pcapng",
        13,
        "an Ethernet pseudowire's control word: tshark's heuristic takes it for the start of an Ethernet header \
         (00:00:00 is a registered OUI)",
    ),
];

/// Samples in a format tshark 4.0 has no dissector for, whose frames its comparisons leave out:
/// (sample, why).
pub const TSHARK_UNDECODED_SAMPLES: &[(&str, &str)] =
    &[("mirror_spectrum.pcap", "GRE protocol 0x8949: tshark has no dissector for NVIDIA Spectrum's mirror header")];

/// Is frame `number` of `file` one tshark 4.0 does not decode ([`TSHARK_MISREADS_FRAMES`],
/// [`TSHARK_UNDECODED_SAMPLES`])?
pub fn tshark_misreads(file: &std::path::Path, number: u64) -> bool {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    TSHARK_MISREADS_FRAMES.iter().any(|(sample, frame, _)| *sample == name && *frame == number)
        || TSHARK_UNDECODED_SAMPLES.iter().any(|(sample, _)| *sample == name)
}

/// The link type in a little-endian classic pcap file's header (as the samples are); `None`
/// for another file.
pub fn pcap_link_type(path: &std::path::Path) -> Option<u32> {
    let bytes = std::fs::read(path).expect("the capture reads");
    let magic = bytes.get(..4)?;
    if magic != [0xD4, 0xC3, 0xB2, 0xA1] && magic != [0x4D, 0x3C, 0xB2, 0xA1] {
        return None;
    }
    Some(u32::from_le_bytes(bytes.get(20..24)?.try_into().ok()?))
}

/// A copy, in `dir`, of a LINKTYPE_INFINIBAND capture with each packet in an ERF record as
/// `ibdump` writes them: tshark 4.0 reads ERF but not link type 247.
pub fn infiniband_as_erf(path: &std::path::Path, dir: &std::path::Path) -> PathBuf {
    use rocescope::generate::encode::erf_record;
    use rocescope::output::packet::capture_file::CaptureWriter;
    let (mut inputs, errors) = rocescope_engine::capture::Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty(), "{errors:?}");
    let copy = dir.join(path.file_name().expect("a file name"));
    let file = std::io::BufWriter::new(std::fs::File::create(&copy).expect("the copy is created"));
    let mut w = CaptureWriter::pcap(file, 197, 65535, true, false).expect("a pcap header");
    while let Some(frame) = inputs.next_frame() {
        let record = erf_record(frame.record.ts_ns, 21, 0, frame.record.data);
        w.packet(0, frame.record.ts_ns, &record).expect("a record");
    }
    w.finish().expect("the copy is written");
    copy
}

/// Is tshark installed? Says the test is skipped when it is not.
pub fn tshark_available() -> bool {
    let found = Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: tshark is not installed");
    }
    found
}

/// The Wireshark plugin `wireshark-plugin` prints, written into `dir` for `tshark -X
/// lua_script:`.
pub fn wireshark_plugin(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("rocescope.lua");
    std::fs::write(&path, run_ok(&["wireshark-plugin"])).expect("write the plugin");
    path
}

/// The bundled samples (`samples/`, not the taps of `samples/path/`), sorted.
pub fn samples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("samples/").map(|e| e.expect("entry").path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

/// The bundled samples, then the captures under `shared/` where that folder is there.
pub fn samples_and_shared_captures() -> Vec<PathBuf> {
    let mut files = samples();
    files.extend(shared_captures());
    files
}

/// The reference and real captures under `shared/` (RoCE and native InfiniBand), sorted.
pub fn shared_captures() -> Vec<PathBuf> {
    let dirs = ["reference-captures", "captures/real"].into_iter().filter_map(shared_subdir);
    dirs.flat_map(|dir| captures_in(&dir)).collect()
}

/// The pcap and pcapng files in `dir`, sorted.
pub fn captures_in(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("listing")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    found.sort();
    found
}

/// The numbers of the frames of `file` that `packets -Y filter` shows.
pub fn frames_selected(file: &std::path::Path, filter: &str) -> Vec<u64> {
    let file = file.to_str().expect("UTF-8 path");
    run_ok(&["packets", "-Y", filter, "-T", "fields", "-e", "frame.number", file])
        .lines()
        .map(|l| l.trim().parse().expect("a frame number"))
        .collect()
}

/// `reports/NAME.json`, `.txt` and `.html`: what `analyze ARGS` (run from the repository's root)
/// prints as JSON, prints as text and writes with `--html`, kept up to date; with
/// `UPDATE_REPORTS` set, written instead of compared.
pub fn reports_kept_up_to_date(name: &str, args: &[&str]) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("UPDATE_REPORTS").is_some();
    let scratch = tempfile::tempdir().expect("temp dir");
    let page = scratch.path().join(format!("{name}.html"));
    let page_arg = page.to_str().expect("UTF-8").to_string();
    for (ext, extra) in [("json", vec!["--json"]), ("txt", vec![]), ("html", vec!["-q", "--html", page_arg.as_str()])] {
        let out =
            rocescope().current_dir(&root).arg("analyze").args(args).args(&extra).output().expect("rocescope runs");
        assert!(out.status.success(), "analyze {args:?} {extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        let produced = if ext == "html" { std::fs::read(&page).expect("the page") } else { out.stdout };
        let kept = root.join("reports").join(format!("{name}.{ext}"));
        if update {
            std::fs::write(&kept, &produced).expect("write the report");
        } else {
            assert!(
                std::fs::read(&kept).ok().as_deref() == Some(produced.as_slice()),
                "{} is out of date (regenerate with UPDATE_REPORTS=1 cargo test --test it)",
                kept.display()
            );
        }
    }
}
