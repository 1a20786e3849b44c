//! The bundled samples are exactly what `rocescope generate` writes, decode cleanly, and agree
//! with tshark frame by frame (opcode, PSN, destination QP) where tshark is installed.

use crate::common;

use std::path::PathBuf;

use serde_json::json;

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn sample_files() -> Vec<PathBuf> {
    common::captures_in(&samples_dir())
}

#[test]
fn samples_are_up_to_date_with_the_generator() {
    let dir = tempfile::tempdir().expect("temp dir");
    common::run_ok(&["generate", dir.path().to_str().expect("UTF-8")]);
    let mut generated: Vec<_> = std::fs::read_dir(dir.path())
        .expect("listing")
        .map(|e| e.expect("entry").file_name())
        .filter(|name| name != "path")
        .collect();
    generated.sort();
    let committed: Vec<_> = sample_files().iter().map(|p| p.file_name().expect("name").to_owned()).collect();
    assert_eq!(generated, committed, "samples/ does not hold exactly the generated files");
    for name in generated {
        let fresh = std::fs::read(dir.path().join(&name)).expect("generated file");
        let kept = std::fs::read(samples_dir().join(&name)).expect("committed file");
        assert!(
            fresh == kept,
            "samples/{} differs from `rocescope generate`: regenerate the samples",
            name.to_string_lossy()
        );
    }
    for name in rocescope::generate::path::PATH_SAMPLE_FILES {
        let fresh = std::fs::read(dir.path().join(name)).expect("generated tap");
        let kept = std::fs::read(samples_dir().join(name)).expect("committed tap");
        assert!(fresh == kept, "samples/{name} differs from `rocescope generate`: regenerate the samples");
    }
}

/// (file, RoCE packets, bad ICRC, unverifiable ICRC, PFC, PAUSE) per sample, from
/// docs/samples.md.
const EXPECTED: &[(&str, usize, usize, usize, usize, usize)] = &[
    ("bad_icrc.pcap", 30, 3, 0, 0, 0),
    ("bidirectional_read_write.pcap", 111, 0, 0, 0, 0),
    ("congestion_ecn_cnp.pcap", 384, 0, 0, 0, 0),
    ("dcqcn_reaction.pcap", 710, 0, 0, 0, 0),
    ("dcqcn_slow_recovery.pcap", 554, 0, 0, 0, 0),
    ("encapsulations.pcapng", 21, 0, 1, 0, 1),
    ("ib_crc_errors.pcap", 26, 1, 0, 0, 0),
    ("ib_go_back_n.pcap", 22, 0, 0, 0, 0),
    ("ib_rc_grh.pcap", 14, 0, 0, 0, 0),
    ("incast.pcap", 613, 0, 0, 2, 0),
    ("loss_go_back_n.pcap", 40, 0, 0, 0, 0),
    ("message_sizes.pcap", 900, 0, 893, 0, 0),
    ("mirror_arista_timestamp.pcap", 15, 0, 0, 0, 0),
    ("mirror_erspan.pcap", 50, 0, 0, 0, 0),
    ("mirror_spectrum.pcap", 22, 0, 0, 0, 0),
    ("mirror_truncated.pcap", 17, 0, 13, 0, 0),
    ("opcodes.pcap", 85, 0, 0, 0, 0),
    ("pfc_storm.pcap", 50, 0, 0, 404, 2),
    ("rc_write_healthy.pcap", 24, 0, 0, 0, 0),
    ("reordering.pcap", 96, 0, 0, 0, 0),
    // no RoCE: Ultra Ethernet Transport (tests/it/uet.rs)
    ("uet.pcap", 0, 0, 0, 0, 0),
    ("uet_sprayed.pcap", 0, 0, 0, 0, 0),
    ("uet_trimmed.pcap", 0, 0, 0, 0, 0),
];

#[test]
fn samples_decode_as_documented() {
    for &(file, roce, bad, unverifiable, pfc, pause) in EXPECTED {
        let frames = common::jsonl(&samples_dir().join(file), &[]);
        let count = |key: &str, value: serde_json::Value| frames.iter().filter(|f| f[key] == value).count();
        assert_eq!(count("kind", json!("roce")), roce, "{file}: RoCE");
        assert_eq!(count("kind", json!("malformed")), 0, "{file}: malformed");
        assert_eq!(count("icrc", json!("bad")), bad, "{file}: bad ICRC");
        assert_eq!(count("icrc", json!("unverifiable")), unverifiable, "{file}: unverifiable ICRC");
        assert_eq!(count("kind", json!("pfc")), pfc, "{file}: PFC");
        assert_eq!(count("kind", json!("pause")), pause, "{file}: PAUSE");
    }
    assert_eq!(EXPECTED.len(), sample_files().len());
}

#[test]
fn every_defined_opcode_decodes_with_its_headers() {
    let frames = common::jsonl(&samples_dir().join("opcodes.pcap"), &[]);
    for f in &frames {
        let name = f["opcode_name"].as_str().expect("a name");
        let has = |key: &str| !f[key].is_null();
        assert_eq!(
            has("reth"),
            [0x06, 0x0a, 0x0b, 0x0c, 0x1c, 0x1d, 0x26, 0x2a, 0x2b, 0x46, 0x4a, 0x4b, 0x4c, 0xa6, 0xaa, 0xab, 0xac]
                .contains(&f["opcode"].as_u64().expect("opcode")),
            "{name}: RETH"
        );
        assert_eq!(
            has("src_qp"),
            name.starts_with("UD_") || (name.starts_with("RD_") && !name.contains("RESPONSE") && !name.contains("ACK")),
            "{name}: DETH"
        );
        assert_eq!(
            has("xrc_srq"),
            name.starts_with("XRC_") && !name.contains("RESPONSE") && !name.contains("ACK"),
            "{name}: XRCETH"
        );
        assert_eq!(has("imm"), name.contains("IMMEDIATE"), "{name}: ImmDt");
        assert_eq!(has("ieth_rkey"), name.contains("INVALIDATE"), "{name}: IETH");
        assert_eq!(has("atomic"), name.ends_with("COMPARE_SWAP") || name.ends_with("FETCH_ADD"), "{name}: AtomicETH");
        assert_eq!(has("atomic_ack"), name.ends_with("ATOMIC_ACKNOWLEDGE"), "{name}: AtomicAckETH");
        let expected_payload = if f["opcode"] == json!(0x81)
            || !f["atomic"].is_null()
            || !f["atomic_ack"].is_null()
            || name.ends_with("_ACKNOWLEDGE")
            || name.contains("READ_REQUEST")
            || name.ends_with("FLUSH")
            || name.ends_with("RESYNC")
        {
            0
        } else {
            8
        };
        assert_eq!(f["payload_len"], json!(expected_payload), "{name}: payload");
        assert_eq!(f["icrc"], json!("ok"), "{name}: ICRC");
    }
}

#[test]
fn samples_agree_with_tshark() {
    let dir = tempfile::tempdir().expect("temp dir");
    for path in sample_files() {
        let readable = match common::pcap_link_type(&path) {
            Some(247) => common::infiniband_as_erf(&path, dir.path()),
            _ => path.clone(),
        };
        let Some(expected) = common::tshark_bth_fields(&readable) else {
            eprintln!("SKIPPED: tshark is not installed");
            return;
        };
        let ours = common::rocescope_bth_fields(&path);
        assert_eq!(ours.lines().count(), expected.lines().count(), "{}: frames", path.display());
        let compared = |text: &str| -> Vec<String> {
            let frames = text.lines().enumerate();
            frames.filter(|(i, _)| !common::tshark_misreads(&path, *i as u64 + 1)).map(|(_, l)| l.to_string()).collect()
        };
        assert_eq!(compared(&ours), compared(&expected), "{}", path.display());
    }
}
