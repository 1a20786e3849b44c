//! The analysis's state saved mid-capture and read back goes on exactly as if it had never
//! stopped: for every sample and every reference and real capture, cut at several frames
//! (inside retransmit episodes, pause storms and CM exchanges among them), the report of the
//! first part's analysis saved, loaded and given the rest equals the report of one run, key by
//! key; and a saved state read back and saved again is the same bytes.

use crate::common;

use std::path::{Path, PathBuf};

use rocescope::analyze::frame::FrameSummary;
use rocescope::analyze::{Analyzer, Config, STATE_MAGIC, STATE_VERSION, SavedRun, assemble, decompressed_limit};
use rocescope::capture::Inputs;
use rocescope::decode::Decoder;

/// Every frame of `path`, summarised as the analysis takes them.
fn summaries(path: &Path) -> Vec<FrameSummary> {
    let (mut inputs, errors) = Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty(), "{errors:?}");
    let decoder = Decoder::new(&[]);
    let mut frames = Vec::new();
    while let Some(frame) = inputs.next_frame() {
        frames.push(FrameSummary::of(frame.number, &decoder.decode(&frame.record)));
    }
    frames
}

/// `analyzer` saved, as a run that read no files.
fn saved(analyzer: Analyzer) -> Vec<u8> {
    let run = SavedRun {
        analyzer,
        frames_read: 0,
        first_ts_ns: None,
        display_filter: None,
        inputs: Vec::new(),
        output: Vec::new(),
    };
    let mut bytes = Vec::new();
    run.save(&mut bytes).expect("saved");
    bytes
}

fn read_back(bytes: &[u8]) -> SavedRun {
    SavedRun::load(bytes, bytes.len() as u64).expect("read back")
}

/// The report, as JSON, of an analysis given `frames`, saved and read back after each frame
/// whose index is in `cuts`.
fn report(frames: &[FrameSummary], cuts: &[usize]) -> serde_json::Value {
    let mut analyzer = Analyzer::new(Config::default());
    for (i, frame) in frames.iter().enumerate() {
        if cuts.contains(&i) {
            analyzer = read_back(&saved(analyzer)).analyzer;
        }
        analyzer.observe(frame);
    }
    analyzer.finish();
    let mut report = serde_json::to_value(assemble::report(&analyzer, Vec::new(), None)).expect("JSON");
    // the tool's version is the same either way; nothing else is left out
    report.as_object_mut().expect("an object").remove("tool");
    report
}

#[test]
fn a_state_saved_and_read_back_goes_on_as_one_run() {
    for path in common::samples_and_shared_captures() {
        let frames = summaries(&path);
        let whole = report(&frames, &[]);
        let n = frames.len();
        // a cut after the first frame, at every tenth, and before the last
        let cuts: Vec<usize> = [1, n / 10, n / 4, n / 3, n / 2, 2 * n / 3, 9 * n / 10, n.saturating_sub(1)]
            .into_iter()
            .filter(|&c| c > 0 && c < n)
            .collect();
        for &cut in &cuts {
            assert_eq!(report(&frames, &[cut]), whole, "{} cut before frame {}", path.display(), cut + 1);
        }
        assert_eq!(report(&frames, &cuts), whole, "{} cut at {cuts:?}", path.display());
    }
}

#[test]
fn a_state_read_back_saves_again_and_bad_ones_are_refused() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/congestion_ecn_cnp.pcap");
    let frames = summaries(&path);
    let half = frames.len() / 2;
    let mut analyzer = Analyzer::new(Config::default());
    frames[..half].iter().for_each(|f| analyzer.observe(f));
    let saved = saved(analyzer);
    let again = self::saved(read_back(&saved).analyzer);
    assert_eq!(again, saved, "a state read back and saved again is the same bytes");
    let mut twice = read_back(&again).analyzer;
    frames[half..].iter().for_each(|f| twice.observe(f));
    twice.finish();
    let mut report = serde_json::to_value(assemble::report(&twice, Vec::new(), None)).expect("JSON");
    report.as_object_mut().expect("an object").remove("tool");
    assert_eq!(report, self::report(&frames, &[]));
    let refused =
        |bytes: &[u8]| SavedRun::load(bytes, bytes.len() as u64).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused(b"RSC").contains("too short"));
    assert!(refused(b"PCAPSTATE\x01\x00\x00\x00").contains("not a saved analysis"));
    let mut other_version = saved.clone();
    other_version[8] = 99;
    assert!(refused(&other_version).contains("format 99"));
    assert!(refused(&saved[..saved.len() / 2]).contains("damaged"));
    let mut wrong_sum = saved.clone();
    wrong_sum[12] ^= 1;
    assert!(refused(&wrong_sum).contains("checksum does not match"));
    let limited = SavedRun::load_at_most(&saved[..], 64).err().map(|e| e.to_string()).unwrap_or_default();
    let declared = u64::try_from(zstd::decode_all(&saved[16..]).expect("zstd").len()).expect("size");
    assert_eq!(
        limited,
        format!(
            "declares {declared} bytes once decompressed, more than the 64 bytes a state file of its size may hold: a compression bomb, not a state rocescope saved"
        )
    );
}

/// A state file whose zstd frame is `blocks` run-length blocks of 128 KiB of zeros (4 bytes
/// each): a compression bomb of 32 Ki times its size. With `declared`, the frame header says
/// how large it inflates; without, only inflating it tells.
fn bomb(blocks: u32, declared: bool) -> Vec<u8> {
    const BLOCK: u32 = 128 << 10;
    let mut bytes = STATE_MAGIC.to_vec();
    bytes.extend_from_slice(&STATE_VERSION.to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    // RFC 8878 3.1.1: magic, frame header descriptor (an 8-byte content size, or none), and a
    // window descriptor of 128 KiB (exponent 7)
    bytes.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, if declared { 0xc0 } else { 0x00 }, 7 << 3]);
    if declared {
        bytes.extend_from_slice(&(u64::from(blocks) * u64::from(BLOCK)).to_le_bytes());
    }
    for i in 0..blocks {
        // a block header (last-block bit, type 1 = RLE, the size it regenerates), then the byte
        let header = u32::from(i + 1 == blocks) | (1 << 1) | (BLOCK << 3);
        bytes.extend_from_slice(&header.to_le_bytes()[..3]);
        bytes.push(0);
    }
    bytes
}

#[test]
fn a_compression_bomb_is_refused_before_it_takes_the_memory() {
    // 31,250 blocks: 129 kB inflating to 3.8 GiB
    for declared in [false, true] {
        let bytes = bomb(31_250, declared);
        assert!(bytes.len() < 130_000);
        let refused = SavedRun::load(&bytes[..], bytes.len() as u64).err().map(|e| e.to_string()).unwrap_or_default();
        let said = if declared { "declares 4096000000 bytes once decompressed, more" } else { "decompresses to more" };
        assert_eq!(
            refused,
            format!(
                "{said} than the 67108864 bytes a state file of its size may hold: a compression bomb, not a state rocescope saved"
            )
        );
    }
    // the bound grows with the file: 64 times its size beyond 64 MiB
    assert_eq!(decompressed_limit(1_000), 64 << 20);
    assert_eq!(decompressed_limit(10 << 20), 640 << 20);
    assert_eq!(decompressed_limit(1 << 40), 4 << 30);
}

/// `rocescope ARGS` with its address space limited to `mib` MiB (`ulimit -v`): a run that
/// needs more fails to allocate and aborts.
fn run_within(mib: u64, args: &[&str]) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib << 10))
        .arg(env!("CARGO_BIN_EXE_rocescope"))
        .args(args)
        .output()
        .expect("sh")
}

#[test]
fn merge_and_resume_refuse_a_bomb_within_bounded_memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bomb.state");
    std::fs::write(&path, bomb(31_250, false)).expect("write");
    let sample = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/bad_icrc.pcap");
    let (state, sample) = (path.to_str().unwrap(), sample.to_str().unwrap());
    // a healthy run fits in the bound: it is no bound on the analysis, only on the bomb
    let healthy = run_within(1024, &["analyze", "--json", sample]);
    assert!(healthy.status.success(), "{}", String::from_utf8_lossy(&healthy.stderr));
    for args in [&["merge", state][..], &["analyze", "--resume", state, sample][..]] {
        let out = run_within(1024, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: refused, not aborted");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr,
            format!(
                "rocescope: cannot read the saved analysis {state}: decompresses to more than the 67108864 bytes a state file of its size may hold: a compression bomb, not a state rocescope saved\n"
            )
        );
    }
}
