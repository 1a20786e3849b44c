//! The fast path for plain RoCEv2 frames (`Decoder::plain_roce`, `FrameSummary::of_plain`)
//! against the general decoder: on every frame of every sample, of the shared reference and
//! real captures where they are there, and of the generated benchmark captures, and on frames
//! altered byte by byte, a frame the fast path takes has the summary the general decoder gives
//! it, field for field, and the hosts read at their offsets for the split analysis are the
//! decoded frame's. The `plain_path` fuzz target does the same on random frames.

use crate::common;

use std::path::PathBuf;

use rocescope::analyze::frame::FrameSummary;
use rocescope::capture::{Inputs, LinkType, Record};
use rocescope::decode::Decoder;
use rocescope::generate::bench::{BenchKind, write_benchmark};

/// The decoders the fast path is compared under: the default, one with another RoCE port,
/// and one that defers ICRCs (which takes no fast path).
fn decoders() -> [Decoder; 3] {
    [Decoder::new(&[]), Decoder::new(&[4792]), Decoder::new(&[]).deferring_icrc()]
}

/// Compares the two paths on `record`; true when the fast path took it. The hosts the split
/// analysis places a frame by, read at their offsets (`Decoder::plain_hosts`), are the
/// decoded frame's too.
fn agree(decoder: &Decoder, record: &Record<'_>, what: &dyn Fn() -> String) -> bool {
    let decoded = decoder.decode(record);
    if let Some((src, dst)) = decoder.plain_hosts(record) {
        assert_eq!((decoded.src_ip(), decoded.dst_ip()), (Some(src), Some(dst)), "{}: hosts", what());
    }
    let Some(plain) = decoder.plain_roce(record) else { return false };
    assert!(decoder.plain_hosts(record).is_some(), "{}: a plain frame without plain hosts", what());
    let fast = FrameSummary::of_plain(7, record, &plain);
    let general = FrameSummary::of(7, &decoded);
    assert_eq!(format!("{fast:?}"), format!("{general:?}"), "{}", what());
    true
}

/// Every capture compared: the samples (the path samples' taps too), the shared captures and
/// the three kinds of generated benchmark capture, 2 MB each.
fn captures(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = common::samples_and_shared_captures();
    files.extend(common::captures_in(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/path")));
    for (name, kind) in [("mixed", BenchKind::Mixed), ("small", BenchKind::Small), ("qpn", BenchKind::RandomQpn)] {
        let path = dir.join(format!("{name}.pcap"));
        write_benchmark(&path, kind, 2 << 20).expect("a generated capture");
        files.push(path);
    }
    files
}

#[test]
fn the_fast_path_summarises_every_frame_it_takes_as_the_general_decoder_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut taken, mut frames, mut altered) = (0u64, 0u64, 0u64);
    for path in captures(dir.path()) {
        let (mut inputs, errors) = Inputs::open(std::slice::from_ref(&path), false);
        assert!(errors.is_empty(), "{errors:?}");
        let mut altered_here = 0;
        while let Some(frame) = inputs.next_frame() {
            frames += 1;
            let what = || format!("{} frame {}", path.display(), frame.number);
            let took: Vec<bool> = decoders().iter().map(|d| agree(d, &frame.record, &what)).collect();
            assert!(!took[2], "{}: a decoder deferring ICRCs took the fast path", what());
            taken += u64::from(took[0]);
            // the first frames the fast path takes, altered: each alteration either leaves
            // the fast path or is summarised alike
            if took[0] && altered_here < 24 {
                altered_here += 1;
                altered += alter_and_compare(&frame.record, &what);
            }
        }
    }
    // the benchmark captures alone are almost all plain RoCEv2 frames
    assert!(taken > 20_000, "the fast path took only {taken} of {frames} frames");
    assert!(altered > 100_000, "only {altered} altered frames compared");
}

/// Alters a plain frame in every way that could move it off the fast path, or keep it on
/// with other values, and compares each: every byte of its headers and the ICRC's first
/// byte XORed with four masks (0x20 alone sets IPv4's More Fragments), every opcode, the
/// frame cut short (by the snap length or not) and lengthened by a trailer, and read as
/// another link type. Returns the frames compared.
fn alter_and_compare(record: &Record<'_>, what: &dyn Fn() -> String) -> u64 {
    let original = record.data;
    let mut compared = 0;
    let mut compare = |bytes: &[u8], orig_len: u32, link_type: LinkType, how: &str| {
        let altered = Record { data: bytes, orig_len, link_type, ..*record };
        for decoder in &decoders()[..2] {
            agree(decoder, &altered, &|| format!("{} altered: {how}", what()));
        }
        compared += 1;
    };
    let headers = original.len().min(96);
    let icrc_at = original.len().saturating_sub(4);
    for at in (0..headers).chain([icrc_at]) {
        for mask in [0x01u8, 0x20, 0x80, 0xFF] {
            let mut bytes = original.to_vec();
            bytes[at] ^= mask;
            compare(&bytes, original.len() as u32, LinkType::ETHERNET, &format!("byte {at} ^ {mask:#04x}"));
        }
    }
    if let Some(bth_at) = bth_offset(original) {
        for opcode in 0..=255u8 {
            let mut bytes = original.to_vec();
            bytes[bth_at] = opcode;
            compare(&bytes, original.len() as u32, LinkType::ETHERNET, &format!("opcode {opcode:#04x}"));
        }
    }
    for cut in 1..=5 {
        let short = &original[..original.len().saturating_sub(cut)];
        compare(short, original.len() as u32, LinkType::ETHERNET, &format!("cut by {cut}, snap length"));
        compare(short, short.len() as u32, LinkType::ETHERNET, &format!("cut by {cut}"));
        let mut long = original.to_vec();
        long.extend(std::iter::repeat_n(0xA5, cut));
        compare(&long, long.len() as u32, LinkType::ETHERNET, &format!("{cut} bytes of trailer"));
    }
    compare(original, original.len() as u32 + 1, LinkType::ETHERNET, "one byte not captured");
    for link_type in [LinkType::RAW, LinkType::LINUX_SLL, LinkType::ERF] {
        compare(original, original.len() as u32, link_type, &format!("link type {}", link_type.0));
    }
    compared
}

/// Where the BTH of a plain frame starts: after the Ethernet header, its VLAN tags, the IP
/// header and UDP.
fn bth_offset(frame: &[u8]) -> Option<usize> {
    let mut at = 12;
    while matches!(frame.get(at..at + 2)?, [0x81, 0x00] | [0x88, 0xA8] | [0x91, 0x00]) {
        at += 4;
    }
    let ethertype = u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]);
    at += 2;
    let ip_len = match ethertype {
        0x0800 => usize::from(frame.get(at)? & 0x0F) * 4,
        0x86DD => 40,
        _ => return None,
    };
    Some(at + ip_len + 8)
}
