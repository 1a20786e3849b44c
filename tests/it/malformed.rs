//! The malformed corpus (tests/malformed/, described case by case in its README): captures that
//! are damaged, lie, or carry broken frames. Each either decodes as much as is there or is
//! counted as malformed with its layer and reason, and the run goes on. The files are built
//! here; `UPDATE_MALFORMED=1 cargo test --test it malformed::` rewrites them.

use crate::common;

use std::path::PathBuf;

use rocescope::generate::encode::{BthRepr, L2, L3, RoceFrame};
use rocescope_parsers::ext::{ExtHeaders, Reth};
use serde_json::{Value, json};

const T0_SEC: u32 = 1_700_000_000;
/// Byte offsets of the layers in [`write_first`]'s frame.
const ETH: usize = 0;
const IP: usize = 14;
const UDP: usize = 34;
const BTH: usize = 42;
const RETH: usize = 54;
const PAYLOAD: usize = 70;
const ICRC: usize = 134;
const FRAME_LEN: usize = 138;

/// An RDMA WRITE FIRST of 64 payload bytes: Ethernet, IPv4, UDP, BTH, RETH, payload, ICRC.
fn write_first(psn: u32) -> Vec<u8> {
    RoceFrame {
        l2: L2::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]),
        l3: L3::v4([10, 0, 0, 1], [10, 0, 0, 2]),
        udp_sport: 0xC001,
        udp_dport: 4791,
        bth: BthRepr::new(0x06, 0x200, psn),
        ext: ExtHeaders { reth: Some(Reth { va: 0x1000, rkey: 7, dma_len: 128 }), ..ExtHeaders::default() },
        payload: vec![0x5A; 64],
    }
    .encode()
}

/// One pcap record: (seconds, microseconds, captured bytes, length on the wire).
struct Rec {
    sec: u32,
    usec: u32,
    data: Vec<u8>,
    orig_len: u32,
}

fn rec(i: u32, data: Vec<u8>) -> Rec {
    let orig_len = data.len() as u32;
    Rec { sec: T0_SEC, usec: i * 10, data, orig_len }
}

/// A little-endian microsecond pcap file.
fn pcap(link_type: u32, snaplen: u32, records: &[Rec]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xA1B2_C3D4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    for word in [0u32, 0, snaplen, link_type] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for r in records {
        for word in [r.sec, r.usec, r.data.len() as u32, r.orig_len] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&r.data);
    }
    out
}

/// A good frame, the broken one, and a good one after it.
fn sandwich(broken: Vec<u8>) -> Vec<u8> {
    pcap(1, 65535, &[rec(0, write_first(1)), rec(1, broken), rec(2, write_first(2))])
}

/// `write_first` with `edit` applied to its bytes (the ICRC is left as it was).
fn edited(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut f = write_first(1);
    edit(&mut f);
    f
}

fn set_u16(f: &mut [u8], at: usize, value: u16) {
    f[at..at + 2].copy_from_slice(&value.to_be_bytes());
}

/// pcapng: a section header, one Ethernet interface, then `blocks` as they are.
fn pcapng(blocks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let shb: [u32; 7] = [0x0A0D_0D0A, 28, 0x1A2B_3C4D, 0x0000_0001, 0xFFFF_FFFF, 0xFFFF_FFFF, 28];
    shb.iter().for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    let idb: [u32; 5] = [1, 20, 1, 0, 20]; // link type 1, snaplen 0
    idb.iter().for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    blocks.iter().for_each(|b| out.extend_from_slice(b));
    out
}

/// An enhanced packet block of `frame`, with `claimed` as its length fields when given.
fn epb(frame: &[u8], claimed: Option<u32>) -> Vec<u8> {
    let padded = frame.len().div_ceil(4) * 4;
    let len = claimed.unwrap_or(32 + padded as u32);
    let mut b = Vec::new();
    for w in [6u32, len, 0, 0x0006_0A0B, 0x0C0D_0E0F, frame.len() as u32, frame.len() as u32] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    b.extend_from_slice(frame);
    b.resize(28 + padded, 0);
    b.extend_from_slice(&len.to_le_bytes());
    b
}

/// Every file of the corpus, by name.
fn corpus() -> Vec<(&'static str, Vec<u8>)> {
    let good = |n| rec(n, write_first(n + 1));
    let mut cut_everywhere = vec![good(0)];
    for (i, cut) in CUTS.iter().enumerate() {
        let mut r = rec(i as u32 + 1, write_first(1)[..*cut].to_vec());
        r.orig_len = FRAME_LEN as u32;
        cut_everywhere.push(r);
    }
    let whole = pcap(1, 65535, &[good(0), good(1), good(2)]);
    vec![
        ("empty.pcap", Vec::new()),
        ("wrong_magic.pcap", b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00,\x00\x00\x00\x00".to_vec()),
        ("pcapng_bad_block_length.pcapng", pcapng(&[epb(&write_first(1), None), epb(&write_first(2), Some(13))])),
        (
            "pcapng_block_length_below_minimum.pcapng",
            pcapng(&[epb(&write_first(1), None), {
                // a process information block (type 0x80000001) of length 4: found by fuzzing, it made
                // the pcapng parser subtract past zero
                [0x8000_0001u32, 4, 4].iter().flat_map(|w| w.to_le_bytes()).collect()
            }]),
        ),
        (
            "pcapng_block_claims_4gib.pcapng",
            pcapng(&[epb(&write_first(1), None), epb(&write_first(2), Some(0xFFFF_FFFC))]),
        ),
        ("pcapng_timestamp_past_2262.pcapng", {
            // two PAUSE frames whose 64-bit microsecond timestamps are beyond what nanoseconds
            // in an i64 hold (found by the pipeline fuzz target: adding the pause overflowed)
            let pause = rocescope::generate::encode::pause_frame([2, 0, 0, 0, 0, 9], 0xFFFF);
            let mut bytes = pcapng(&[epb(&pause, None), epb(&pause, None)]);
            for block in [48, 48 + 92] {
                bytes[block + 12..block + 20].copy_from_slice(&[0xFF; 8]);
            }
            bytes
        }),
        ("record_longer_than_snaplen.pcap", pcap(1, 64, &[good(0), good(1)])),
        ("timestamps_backwards_and_past_2038.pcap", {
            let mut r = vec![good(0), good(1), good(2), good(3)];
            r[1].sec = T0_SEC - 1;
            r[3].sec = 0x8000_0000; // a negative time to a reader that takes the field as signed
            pcap(1, 65535, &r)
        }),
        ("unknown_link_type.pcap", pcap(147, 65535, &[good(0), good(1)])),
        ("cut_at_every_header_boundary.pcap", pcap(1, 65535, &cut_everywhere)),
        ("runt_frames.pcap", pcap(1, 65535, &[good(0), rec(1, write_first(1)[..UDP + 4].to_vec()), good(2)])),
        ("ipv4_ihl_below_5.pcap", sandwich(edited(|f| f[IP] = 0x44))),
        ("ip_total_length_larger_than_frame.pcap", sandwich(edited(|f| set_u16(f, IP + 2, 1500)))),
        ("ip_total_length_smaller_than_frame.pcap", sandwich(edited(|f| set_u16(f, IP + 2, (BTH + 6 - IP) as u16)))),
        ("udp_length_larger_than_ip_payload.pcap", sandwich(edited(|f| set_u16(f, UDP + 4, 1000)))),
        ("udp_length_below_header.pcap", sandwich(edited(|f| set_u16(f, UDP + 4, 4)))),
        ("bth_reserved_opcode.pcap", sandwich(edited(|f| f[BTH] = 0x1F))),
        (
            "padcnt_larger_than_payload.pcap",
            sandwich({
                // an RDMA WRITE ONLY with no payload that claims 3 pad bytes
                let mut f = RoceFrame {
                    l2: L2::new([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]),
                    l3: L3::v4([10, 0, 0, 1], [10, 0, 0, 2]),
                    udp_sport: 0xC001,
                    udp_dport: 4791,
                    bth: BthRepr::new(0x0A, 0x200, 1),
                    ext: ExtHeaders { reth: Some(Reth { va: 0, rkey: 7, dma_len: 0 }), ..ExtHeaders::default() },
                    payload: Vec::new(),
                }
                .encode();
                f[BTH + 1] |= 3 << 4;
                f
            }),
        ),
        ("truncated_final_record.pcap", whole[..whole.len() - 20].to_vec()),
    ]
}

/// Where [`CUTS`]'s frames are cut: inside and at the end of every header.
const CUTS: [usize; 17] = [
    0,
    6,
    ETH + 13,
    IP,
    IP + 10,
    UDP - 1,
    UDP,
    UDP + 4,
    BTH - 1,
    BTH,
    BTH + 6,
    RETH,
    RETH + 8,
    PAYLOAD,
    100,
    ICRC,
    FRAME_LEN - 1,
];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/malformed")
}

fn path(name: &str) -> String {
    dir().join(name).to_str().expect("UTF-8").to_owned()
}

#[test]
fn the_corpus_is_up_to_date() {
    let update = std::env::var_os("UPDATE_MALFORMED").is_some();
    for (name, bytes) in corpus() {
        let file = dir().join(name);
        if update {
            std::fs::write(&file, &bytes).expect("write");
        }
        let stored = std::fs::read(&file).unwrap_or_default();
        assert!(
            stored == bytes,
            "{name} differs from its builder; run UPDATE_MALFORMED=1 cargo test --test it malformed::"
        );
    }
}

/// `analyze --json` of a corpus file: exit code, report (if any) and standard error.
fn analyze(name: &str) -> (Option<i32>, Option<Value>, String) {
    let out = common::run(&["analyze", "--json", &path(name)]);
    let report = serde_json::from_slice(&out.stdout).ok();
    (out.status.code(), report, String::from_utf8(out.stderr).expect("UTF-8"))
}

/// The JSON line of every frame of a corpus file.
fn frames(name: &str) -> Vec<Value> {
    common::jsonl(&dir().join(name), &[])
}

fn stderr_line(name: &str, message: &str) -> String {
    format!("rocescope: warning: {}: {message}; the rest of this file is skipped\n", path(name))
}

#[test]
fn unreadable_files_are_one_line_errors_and_exit_1() {
    for (name, message) in
        [("empty.pcap", "empty file"), ("wrong_magic.pcap", "not a pcap or pcapng capture (magic 47 49 46 38)")]
    {
        let (code, report, stderr) = analyze(name);
        assert_eq!((code, report.is_none()), (Some(1), true), "{name}");
        assert_eq!(stderr, format!("rocescope: {}: {message}\n", path(name)));
    }
}

#[test]
fn damaged_files_are_analysed_up_to_the_damage() {
    for (name, offset, message, frames) in [
        ("pcapng_bad_block_length.pcapng", 220, "unreadable pcapng block: block length 13 is not a multiple of 4", 1),
        (
            "pcapng_block_length_below_minimum.pcapng",
            220,
            "unreadable pcapng block: block length 4 is below the 12-byte minimum",
            1,
        ),
        (
            "pcapng_block_claims_4gib.pcapng",
            220,
            "record claims 4294967288 bytes, more than the 16777216-byte limit; the file is damaged",
            1,
        ),
        ("truncated_final_record.pcap", 332, "file ends inside a record (134 of 154 bytes present)", 2),
    ] {
        let (code, report, stderr) = analyze(name);
        let r = report.expect("a report");
        assert_eq!(code, Some(0), "{name}: damage after some frames is not a failure");
        assert_eq!(stderr, stderr_line(name, &format!("at byte offset {offset}: {message}")));
        assert_eq!(r["inputs"][0]["damage"], json!({"offset": offset, "message": message}), "{name}");
        assert_eq!((&r["totals"]["frames"], &r["icrc"]["ok"]), (&json!(frames), &json!(frames)), "{name}");
        assert!(r["findings"].as_array().is_some_and(|f| f.iter().any(|f| f["code"] == json!("CAPTURE_DAMAGED"))));
    }
}

#[test]
fn odd_but_readable_containers_are_read_as_they_are() {
    // the snap length is what the writer meant to keep; records up to 256 KiB are read anyway
    let (_, r, stderr) = analyze("record_longer_than_snaplen.pcap");
    let r = r.expect("report");
    assert_eq!((&r["totals"]["roce_packets"], &r["icrc"]["ok"], stderr.as_str()), (&json!(2), &json!(2), ""));
    // a time before the previous frame is counted; seconds past 2^31 are a time after 2038
    let (_, r, _) = analyze("timestamps_backwards_and_past_2038.pcap");
    let r = r.expect("report");
    assert_eq!(r["capture"]["non_monotonic_timestamps"], json!(1));
    assert_eq!(r["capture"]["last_ts_ns"], json!(0x8000_0000i64 * 1_000_000_000 + 30_000));
    assert!(r["findings"].as_array().is_some_and(|f| f.iter().any(|f| f["code"] == json!("TIMESTAMPS_BACKWARDS"))));
    // a time past 2262 is held as the largest time there is, and pauses end there
    let (_, r, _) = analyze("pcapng_timestamp_past_2262.pcapng");
    let r = r.expect("report");
    assert_eq!((&r["capture"]["last_ts_ns"], &r["totals"]["pause_frames"]), (&json!(i64::MAX), &json!(2)));
    assert_eq!((&r["pause"][0]["xoff"], &r["pause"][0]["paused_ns"]), (&json!(2), &json!(0)));
    // frames of a link type rocescope does not decode are counted, as "other"
    let (_, r, _) = analyze("unknown_link_type.pcap");
    let r = r.expect("report");
    assert_eq!((&r["totals"]["frames"], &r["totals"]["non_roce"]), (&json!(2), &json!(2)));
    assert!(frames("unknown_link_type.pcap").iter().all(|f| f["kind"] == json!("other")));
}

#[test]
fn a_frame_cut_anywhere_decodes_as_far_as_it_goes() {
    let lines = frames("cut_at_every_header_boundary.pcap");
    assert_eq!(lines.len(), 1 + CUTS.len());
    for (line, cut) in lines.iter().skip(1).zip(CUTS) {
        let expected_layer = match cut {
            c if c < IP => Some(("ethernet", 14)),
            c if c < UDP => Some(("ipv4", 20)),
            c if c < BTH => Some(("udp", 8)),
            c if c < RETH => Some(("bth", 12)),
            _ => None,
        };
        match expected_layer {
            Some((layer, needs)) => {
                let start = [(ETH, "ethernet"), (IP, "ipv4"), (UDP, "udp"), (BTH, "bth")]
                    .iter()
                    .find(|(_, l)| *l == layer)
                    .map_or(0, |(at, _)| *at);
                let reason = format!("{layer}: truncated, needs {needs} bytes, {} available", cut - start);
                assert_eq!(line["error"], json!({"layer": layer, "reason": reason}), "cut at {cut}");
            }
            // the BTH is whole: a RoCE packet whose ICRC cannot be checked
            None => {
                assert_eq!((&line["kind"], &line["icrc"]), (&json!("roce"), &json!("unverifiable")), "cut at {cut}")
            }
        }
    }
    let (_, r, _) = analyze("cut_at_every_header_boundary.pcap");
    let r = r.expect("report");
    // every frame cut before its headers ended was cut by the snap length: cut, not malformed
    assert_eq!(
        (&r["totals"]["malformed"], &r["totals"]["headers_cut"], &r["capture"]["snaplen_cut"]),
        (&json!(0), &json!(11), &json!(17))
    );
    let codes: Vec<&str> =
        r["findings"].as_array().expect("findings").iter().filter_map(|f| f["code"].as_str()).collect();
    assert!(!codes.contains(&"MALFORMED_FRAMES") && !codes.contains(&"NO_ROCE"), "{codes:?}");
    let truncated = r["findings"].as_array().and_then(|f| f.iter().find(|f| f["code"] == "TRUNCATED_FRAMES"));
    let message = truncated.and_then(|f| f["message"].as_str()).unwrap_or_default();
    assert!(message.contains("; 11 frames cut inside their headers"), "{message}");
}

#[test]
fn a_broken_frame_is_malformed_with_its_layer_and_reason_and_the_run_goes_on() {
    for (name, layer, reason) in [
        ("runt_frames.pcap", "udp", "udp: truncated, needs 8 bytes, 4 available"),
        ("ipv4_ihl_below_5.pcap", "ipv4", "ipv4: IHL below 5"),
        ("ip_total_length_smaller_than_frame.pcap", "udp", "udp: length larger than the IP payload"),
        ("udp_length_larger_than_ip_payload.pcap", "udp", "udp: length larger than the IP payload"),
        ("udp_length_below_header.pcap", "udp", "udp: length shorter than the header"),
        ("bth_reserved_opcode.pcap", "bth", "bth: reserved opcode"),
        ("padcnt_larger_than_payload.pcap", "bth", "bth: PadCnt larger than the payload"),
    ] {
        let lines = frames(name);
        let kinds: Vec<&Value> = lines.iter().map(|f| &f["kind"]).collect();
        assert_eq!(kinds, [&json!("roce"), &json!("malformed"), &json!("roce")], "{name}");
        assert_eq!(lines[1]["error"], json!({"layer": layer, "reason": reason}), "{name}");
        let (code, r, _) = analyze(name);
        let r = r.expect("report");
        assert_eq!(code, Some(0));
        assert_eq!(
            r["capture"]["malformed_by_layer"],
            json!([{"layer": layer, "count": 1, "first_frame": 2, "first_reason": reason}]),
            "{name}"
        );
        assert_eq!(r["icrc"]["ok"], json!(2), "{name}: the frames around it are analysed");
    }
}

#[test]
fn an_ip_total_length_beyond_the_frame_is_caught_by_the_icrc() {
    // the UDP length is consistent, so the packet decodes; the ICRC covers the IP total length
    let lines = frames("ip_total_length_larger_than_frame.pcap");
    assert_eq!((&lines[1]["kind"], &lines[1]["icrc"]), (&json!("roce"), &json!("bad")));
}

/// A mirror that cuts its copies and leaves no mark: the ERSPAN copy's record is whole, but the
/// inner IP header says the packet was longer than what is left of it, cut within its BTH. A
/// cut copy, not a malformed one; a frame captured as it is and as short is a runt, malformed.
#[test]
fn a_mirror_copy_cut_within_its_bth_with_no_mark_is_cut_not_malformed() {
    use common::capture::{A, B, Capture, T0, write_only};
    use rocescope::generate::encode;
    let outer = L2::new([2, 0, 0, 0, 0xEE, 1], [2, 0, 0, 0, 0xEE, 2]);
    let inner = write_only(A, B, 7, false).encode();
    let cut = &inner[..BTH + 6];
    let mut c = Capture::new();
    c.add_bytes(T0, encode::erspan2(&outer, [192, 0, 2, 1], [192, 0, 2, 9], 1, Some(1), cut));
    c.add_bytes(T0 + 1_000, cut.to_vec());
    let r = c.analyze(&[]);
    assert_eq!((&r["totals"]["headers_cut"], &r["totals"]["malformed"]), (&json!(1), &json!(1)));
    assert_eq!(r["capture"]["malformed_by_layer"][0]["first_frame"], json!(2), "the runt");
}
