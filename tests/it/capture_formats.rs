//! Capture containers and damaged files: every pcap flavour, pcapng with several interfaces,
//! compressed files, several files merged by time, and files that are cut, lie, or are not
//! captures at all.

use crate::common;

use std::io::Write;
use std::path::Path;

use rocescope::generate::scenarios::{self, T0};
use rocescope::output::packet::capture_file::{CaptureWriter, Interface};
use serde_json::{Value, json};

/// The frames of the healthy-connection sample.
fn frames() -> Vec<(i64, Vec<u8>)> {
    scenarios::rc_write_healthy().frames.into_iter().map(|f| (f.ts_ns, f.bytes)).collect()
}

fn write_pcap(path: &Path, nanos: bool, big_endian: bool, snaplen: u32) {
    let mut w = CaptureWriter::pcap(std::fs::File::create(path).expect("create"), 1, snaplen, nanos, big_endian)
        .expect("header");
    for (ts, bytes) in frames() {
        w.packet(0, ts, &bytes).expect("record");
    }
    w.finish().expect("flush");
}

/// Decoded fields that do not depend on the container.
fn decoded(path: &Path) -> Vec<Value> {
    common::jsonl(path, &[])
        .into_iter()
        .map(|mut f| {
            f.as_object_mut().expect("object").remove("ts_ns");
            f
        })
        .collect()
}

#[test]
fn every_pcap_flavour_and_pcapng_decode_the_same() {
    let dir = tempfile::tempdir().expect("temp dir");
    let reference = dir.path().join("us_le.pcap");
    write_pcap(&reference, false, false, 65535);
    let expected = decoded(&reference);
    assert_eq!(expected.len(), frames().len());
    for (name, nanos, big_endian) in
        [("ns_le.pcap", true, false), ("us_be.pcap", false, true), ("ns_be.pcap", true, true)]
    {
        let path = dir.path().join(name);
        write_pcap(&path, nanos, big_endian, 65535);
        assert_eq!(decoded(&path), expected, "{name}");
    }
    let ng = dir.path().join("ns.pcapng");
    let mut w = CaptureWriter::pcapng(
        std::fs::File::create(&ng).expect("create"),
        &[Interface { link_type: 1, snaplen: 0, tsresol: 9, name: None }],
    )
    .expect("header");
    for (ts, bytes) in frames() {
        w.packet(0, ts, &bytes).expect("block");
    }
    w.finish().expect("flush");
    assert_eq!(decoded(&ng), expected, "pcapng");
}

#[test]
fn timestamps_keep_their_resolution() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ns = dir.path().join("ns.pcap");
    let us = dir.path().join("us.pcap");
    let mut w = CaptureWriter::pcap(std::fs::File::create(&ns).expect("create"), 1, 65535, true, true).expect("header");
    w.packet(0, T0 + 123_456_789, &frames()[0].1).expect("record");
    w.finish().expect("flush");
    let mut w =
        CaptureWriter::pcap(std::fs::File::create(&us).expect("create"), 1, 65535, false, false).expect("header");
    w.packet(0, T0 + 123_456_789, &frames()[0].1).expect("record");
    w.finish().expect("flush");
    assert_eq!(common::jsonl(&ns, &[])[0]["ts_ns"], json!(T0 + 123_456_789));
    assert_eq!(common::jsonl(&us, &[])[0]["ts_ns"], json!(T0 + 123_456_000));
}

#[test]
fn pcapng_interfaces_keep_their_link_types_and_resolutions() {
    let frames = common::jsonl(&common_sample("encapsulations.pcapng"), &[]);
    // frame 20 is on the Linux cooked v2 interface (ns), 21 on the raw IP one (µs)
    assert_eq!(frames[19]["src_ip"], json!("10.0.0.1"));
    assert_eq!(frames[19]["src_mac"], Value::Null);
    assert_eq!(frames[19]["ts_ns"], json!(T0 + 19 * 10_001_i64));
    assert_eq!(frames[20]["ts_ns"], json!((T0 + 20 * 10_001_i64) / 1000 * 1000));
    assert_eq!(frames[20]["icrc"], json!("ok"));
    // the simple packet block takes the timestamp of the packet before it
    assert_eq!(frames[21]["ts_ns"], frames[20]["ts_ns"]);
}

fn common_sample(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
}

#[test]
fn gzip_and_zstd_captures_are_read_transparently() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = common_sample("rc_write_healthy.pcap");
    let bytes = std::fs::read(&plain).expect("sample");
    let gz = dir.path().join("capture.pcap.gz");
    let mut enc =
        flate2::write::GzEncoder::new(std::fs::File::create(&gz).expect("create"), flate2::Compression::default());
    enc.write_all(&bytes).expect("gzip");
    enc.finish().expect("gzip end");
    let zst = dir.path().join("capture.bin"); // the extension does not matter
    std::fs::write(&zst, zstd::encode_all(&bytes[..], 3).expect("zstd")).expect("write");
    let expected = common::jsonl(&plain, &[]);
    assert_eq!(common::jsonl(&gz, &[]), expected);
    assert_eq!(common::jsonl(&zst, &[]), expected);
}

/// The bytes a decompressor gives from `compressed` before it meets the damage.
fn decompressed_prefix(mut decoder: impl std::io::Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = decoder.read(&mut chunk) {
        out.extend_from_slice(&chunk[..n]);
    }
    out
}

/// The message-sizes sample compressed as gzip, and as zstd in 8 KiB blocks (as a compressor
/// writing a live capture flushes them), each cut in the middle.
fn compressed_and_cut(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>, &'static str)> {
    let bytes = std::fs::read(common_sample("message_sizes.pcap")).expect("sample");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).expect("gzip");
    let gz = gz.finish().expect("gzip end");
    let mut zst = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("zstd");
    for block in bytes.chunks(8 << 10) {
        zst.write_all(block).expect("zstd");
        zst.flush().expect("zstd block");
    }
    let zst = zst.finish().expect("zstd end");
    let gz_cut = &gz[..gz.len() / 2];
    let zst_cut = &zst[..zst.len() / 2];
    let gz_prefix = decompressed_prefix(flate2::read::GzDecoder::new(gz_cut));
    let zst_prefix = decompressed_prefix(zstd::stream::read::Decoder::new(zst_cut).expect("zstd"));
    [("cut.pcap.gz", gz_cut, gz_prefix, "gzip"), ("cut.pcap.zst", zst_cut, zst_prefix, "zstd")]
        .into_iter()
        .map(|(name, cut, prefix, kind)| {
            let path = dir.join(name);
            std::fs::write(&path, cut).expect("write");
            (path, prefix, kind)
        })
        .collect()
}

#[test]
fn a_compressed_capture_cut_midway_is_read_up_to_the_damage() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole = common::jsonl(&common_sample("message_sizes.pcap"), &[]).len();
    for (path, prefix, kind) in compressed_and_cut(dir.path()) {
        // the decompressed bytes before the damage, as an uncompressed file cut there
        let plain = dir.path().join(format!("{kind}-prefix.pcap"));
        std::fs::write(&plain, &prefix).expect("write");
        let expected = common::jsonl(&plain, &[]);
        assert!(expected.len() > whole / 4 && expected.len() < whole, "{kind}: {} of {whole}", expected.len());
        if common::tshark_available() {
            let tshark = std::process::Command::new("tshark").arg("-r").arg(&plain).output().expect("tshark");
            let listed = String::from_utf8_lossy(&tshark.stdout).lines().count();
            assert_eq!(listed, expected.len(), "{kind}: tshark reads as many frames before the damage");
        }
        let out = common::run(&["packets", "--format", "jsonl", path.to_str().unwrap()]);
        assert!(out.status.success(), "{kind}: damage after some frames is not a failure");
        let frames: Vec<Value> =
            String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(frames, expected, "{kind}: every frame before the damage");
        let failure = format!(
            "{kind} stream: {} after {} decompressed bytes",
            if kind == "gzip" { "incomplete deflate stream" } else { "incomplete frame" },
            prefix.len()
        );
        // where the prefix ends inside a record, the damage is there, as in the plain file
        let plain_out = common::run(&["packets", plain.to_str().unwrap()]);
        let plain_warning = String::from_utf8(plain_out.stderr).unwrap();
        let damage = match plain_warning.trim().strip_suffix("; the rest of this file is skipped") {
            Some(cut_record) => {
                let at = cut_record.split_once(": at byte offset ").expect("offset").1;
                format!("at byte offset {at}: {failure}")
            }
            None => format!("at byte offset {}: {failure}", prefix.len()),
        };
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr.trim(),
            format!("rocescope: warning: {}: {damage}; the rest of this file is skipped", path.display())
        );
        let report: Value =
            serde_json::from_str(&common::run_ok(&["analyze", "--json", path.to_str().unwrap()])).expect("report");
        assert_eq!(report["totals"]["frames"].as_u64(), Some(expected.len() as u64), "{kind}: analyze reads them too");
        let reported = &report["inputs"][0]["damage"];
        let at = reported["offset"].as_u64().expect("offset");
        assert_eq!(format!("at byte offset {at}: {}", reported["message"].as_str().unwrap()), damage);
    }
}

#[test]
fn several_files_merge_by_timestamp() {
    let dir = tempfile::tempdir().expect("temp dir");
    let all = frames();
    let (even, odd): (Vec<_>, Vec<_>) = all.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    for (name, part) in [("even.pcap", &even), ("odd.pcap", &odd)] {
        let mut w =
            CaptureWriter::pcap(std::fs::File::create(dir.path().join(name)).expect("create"), 1, 65535, false, false)
                .expect("header");
        for (_, (ts, bytes)) in part.iter() {
            w.packet(0, *ts, bytes).expect("record");
        }
        w.finish().expect("flush");
    }
    let merged = common::run_ok(&[
        "packets",
        "--format",
        "jsonl",
        dir.path().join("odd.pcap").to_str().unwrap(),
        dir.path().join("even.pcap").to_str().unwrap(),
    ]);
    let psns: Vec<Value> = merged.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["ts_ns"].clone()).collect();
    let expected: Vec<Value> = all.iter().map(|(ts, _)| json!(ts)).collect();
    assert_eq!(psns, expected);
    let numbers: Vec<u64> =
        merged.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["frame"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (1..=all.len() as u64).collect::<Vec<_>>());
}

#[test]
fn standard_input_is_read_with_a_dash() {
    let sample = std::fs::read(common_sample("bad_icrc.pcap")).expect("sample");
    let mut child = common::rocescope()
        .args(["packets", "--format", "jsonl", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().expect("stdin").write_all(&sample).expect("feed");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 30);
}

/// A pcap file of the healthy sample cut `cut` bytes before its end.
fn truncated_copy(dir: &Path, cut: usize) -> (std::path::PathBuf, usize) {
    let bytes = std::fs::read(common_sample("rc_write_healthy.pcap")).expect("sample");
    let path = dir.join("cut.pcap");
    std::fs::write(&path, &bytes[..bytes.len() - cut]).expect("write");
    (path, bytes.len() - cut)
}

#[test]
fn a_file_cut_mid_record_is_read_up_to_the_damage() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, _) = truncated_copy(dir.path(), 10);
    let out = common::run(&["packets", path.to_str().unwrap()]);
    assert!(out.status.success(), "damage after some frames is not a failure");
    let listed = String::from_utf8(out.stdout).unwrap().lines().count();
    assert_eq!(listed, frames().len() - 1);
    let stderr = String::from_utf8(out.stderr).unwrap();
    // the last record (a 62-byte ACK) starts 16 + 62 bytes before the end of the whole file
    let offset = std::fs::metadata(common_sample("rc_write_healthy.pcap")).unwrap().len() - 78;
    assert_eq!(
        stderr.trim(),
        format!(
            "rocescope: warning: {}: at byte offset {offset}: file ends inside a record (68 of 78 bytes present); the rest of this file is skipped",
            path.display()
        )
    );
}

/// A copy of the sample `name` in `dir` as `copy`, the little-endian word at `at` set to `word`.
fn patched_sample(dir: &Path, name: &str, at: usize, word: u32, copy: &str) -> std::path::PathBuf {
    let mut bytes = std::fs::read(common_sample(name)).expect("sample");
    bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
    let path = dir.join(copy);
    std::fs::write(&path, &bytes).expect("write");
    path
}

#[test]
fn a_record_claiming_an_absurd_length_is_rejected_without_reading_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    // the first record's captured length (bytes 24+8..24+12) claims 2 GiB
    let path = patched_sample(dir.path(), "bad_icrc.pcap", 32, 0x8000_0000, "absurd.pcap");
    let out = common::run(&["packets", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "nothing could be read");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(&format!("{}: at byte offset 24: record claims", path.display())), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);
}

/// Compressions rocescope does not remove and other capture formats are named, with what to
/// do: the first bytes of each as their tools write them.
#[test]
fn an_xz_bzip2_lz4_snoop_or_zip_file_says_what_it_is_and_what_to_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&str, &[u8], &str); 5] = [
        (
            "c.pcap.xz",
            &[0xfd, b'7', b'z', b'X', b'Z', 0, 0, 4],
            "it is xz-compressed, which rocescope does not read: decompress it (`xz -dk FILE`)",
        ),
        ("c.pcap.bz2", b"BZh91AY&SY", "it is bzip2-compressed"),
        ("c.pcap.lz4", &[0x04, 0x22, 0x4d, 0x18, 0x64, 0x40], "it is lz4-compressed"),
        (
            "c.snoop",
            b"snoop\0\0\0\0\0\0\x02\0\0\0\x04",
            "it is a snoop capture (Solaris), which rocescope does not read: convert it (`editcap -F pcapng FILE OUT.pcapng`)",
        ),
        ("c.zip", b"PK\x03\x04\x14\0", "it is a zip archive"),
    ];
    for (name, bytes, advice) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        let out = common::run(&["packets", path.to_str().unwrap()]);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!("rocescope: {}: not a pcap or pcapng capture (magic ", path.display())),
            "{stderr}"
        );
        assert!(stderr.contains(advice), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1);
    }
}

#[test]
fn inputs_that_cannot_be_read_get_one_line_each_and_exit_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "this is not a capture\n").expect("write");
    let empty = dir.path().join("empty.pcap");
    std::fs::write(&empty, "").expect("write");
    let missing = dir.path().join("missing.pcap");
    for (path, message) in [
        (&text, "not a pcap or pcapng capture (magic 74 68 69 73)"),
        (&empty, "empty file"),
        (&missing, "no such file"),
        (&dir.path().to_path_buf(), "is a directory"),
    ] {
        let out = common::run(&["packets", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{message}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("rocescope: {}: {message}\n", path.display()));
        assert!(out.stdout.is_empty());
    }
    // one good file among bad ones: success, with the bad ones named
    let out = common::run(&["packets", missing.to_str().unwrap(), common_sample("bad_icrc.pcap").to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 30);
}

#[test]
fn a_pcapng_block_with_a_bad_length_is_damage() {
    let dir = tempfile::tempdir().expect("temp dir");
    // the section header block is 28 bytes, three interface blocks follow (20, 32, 20 bytes),
    // then the first packet block at 100: give it a length that is not a multiple of 4
    let path = patched_sample(dir.path(), "encapsulations.pcapng", 104, 13, "bad_block.pcapng");
    let out = common::run(&["packets", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "rocescope: warning: {}: at byte offset 100: unreadable pcapng block",
            path.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_packet_block_claiming_more_than_it_holds_is_damage_named_by_its_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    // the first packet block, at 100, is 180 bytes long: its captured length (at 120) claims 60000
    let path = patched_sample(dir.path(), "encapsulations.pcapng", 120, 60_000, "caplen.pcapng");
    let out = common::run(&["packets", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "nothing before it");
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "rocescope: warning: {}: at byte offset 100: unreadable pcapng block: an enhanced packet block of 180 bytes claims a captured length of 60000, more than the 148 it holds; the rest of this file is skipped\n",
            path.display()
        )
    );
}

/// A pcapng file of the healthy-connection sample's frames, captured on `interface`.
fn pcapng_on(path: &Path, interface: &str) {
    let iface = Interface { link_type: 1, snaplen: 65535, tsresol: 9, name: Some(interface.to_string()) };
    let mut w = CaptureWriter::pcapng(std::fs::File::create(path).expect("create"), &[iface]).expect("header");
    for (ts, bytes) in frames() {
        w.packet(0, ts, &bytes).expect("block");
    }
    w.finish().expect("flush");
}

#[test]
fn a_capture_on_an_rdma_device_says_its_resends_may_be_missing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let finding = |interface: &str| {
        let path = dir.path().join(format!("{interface}.pcapng"));
        pcapng_on(&path, interface);
        let r = common::capture::analyze_file(&path, &[]);
        assert_eq!(r["inputs"][0]["interfaces"], json!([interface]));
        r["findings"].as_array().expect("findings").iter().find(|f| f["code"] == json!("RDMA_DEVICE_CAPTURE")).cloned()
    };
    let on_mlx5 = finding("mlx5_0").expect("a finding on mlx5_0");
    assert_eq!(on_mlx5["severity"], json!("info"));
    assert_eq!(
        on_mlx5["message"],
        json!("captured on the RDMA device mlx5_0: outbound retransmissions may be missing from the capture")
    );
    assert!(finding("rxe0").is_some());
    // a network interface, a mirror port: no such note
    assert!(finding("ens1f0np0").is_none());
    assert!(finding("eth0").is_none());
    // Wireshark's capinfos reads the name as rocescope writes it
    let path = dir.path().join("mlx5_0.pcapng");
    if let Ok(out) = std::process::Command::new("capinfos").arg(&path).output() {
        assert!(String::from_utf8_lossy(&out.stdout).contains("Name = mlx5_0"), "{out:?}");
    }
}
