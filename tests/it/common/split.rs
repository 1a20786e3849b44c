//! A capture cut into consecutive files, as a capture host's rotation cuts it: each part a
//! pcapng file of the frames between two cuts, their times (to the nanosecond), captured bytes
//! and lengths on the wire kept, one interface per link type of the capture.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use rocescope::capture::Inputs;
use rocescope::output::packet::capture_file::{
    EnhancedPacket, Interface, write_enhanced_packet, write_interface, write_section_header,
};

/// A frame of the capture: its interface (link type's index), time, length and bytes.
struct Frame {
    interface: usize,
    ts_ns: i64,
    orig_len: u32,
    data: Vec<u8>,
}

/// Every frame of `path`, and the link types they have, in order of first use.
fn frames(path: &Path) -> (Vec<Frame>, Vec<u32>) {
    let (mut inputs, errors) = Inputs::open(&[path.to_path_buf()], false);
    assert!(errors.is_empty(), "{errors:?}");
    let (mut frames, mut link_types) = (Vec::new(), Vec::new());
    while let Some(frame) = inputs.next_frame() {
        let r = frame.record;
        let interface = match link_types.iter().position(|&l| l == r.link_type.0) {
            Some(i) => i,
            None => {
                link_types.push(r.link_type.0);
                link_types.len() - 1
            }
        };
        frames.push(Frame { interface, ts_ns: r.ts_ns, orig_len: r.orig_len, data: r.data.to_vec() });
    }
    (frames, link_types)
}

/// The frames of `path` cut before each frame index `cuts` gives for its number of frames
/// (ascending; those not strictly inside the capture are left out) into files
/// `NAME-0.pcapng`, `NAME-1.pcapng`, … in `dir`, where NAME is `path`'s stem.
pub fn split(path: &Path, dir: &Path, cuts: impl FnOnce(usize) -> Vec<usize>) -> Vec<PathBuf> {
    let (frames, link_types) = frames(path);
    let n = frames.len();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let inside = cuts(n).into_iter().filter(|&c| 0 < c && c < n);
    let bounds: Vec<usize> = std::iter::once(0).chain(inside).chain([n]).collect();
    let interfaces: Vec<Interface> =
        link_types.iter().map(|&l| Interface { link_type: l as u16, snaplen: 0, tsresol: 9, name: None }).collect();
    bounds
        .windows(2)
        .enumerate()
        .map(|(i, range)| {
            let part = dir.join(format!("{stem}-{i}.pcapng"));
            let mut out = BufWriter::new(File::create(&part).expect("part created"));
            write_section_header(&mut out, None).expect("written");
            interfaces.iter().for_each(|iface| write_interface(&mut out, iface).expect("written"));
            for f in &frames[range[0]..range[1]] {
                let packet = EnhancedPacket {
                    interface: f.interface as u32,
                    ts_ns: f.ts_ns,
                    captured: &f.data,
                    orig_len: f.orig_len,
                };
                write_enhanced_packet(&mut out, &packet, 9, None).expect("written");
            }
            part
        })
        .collect()
}

/// Where a capture of `n` frames is cut into three files: after its first frame and at its
/// half, at its thirds, and at its half and before its last frame.
pub const CUTS: [fn(usize) -> Vec<usize>; 3] =
    [|n| vec![1, n / 2], |n| vec![n / 3, 2 * n / 3], |n| vec![n / 2, n.saturating_sub(1)]];

/// The frames just after which a cut leaves the analysis most to carry across, by kind (each
/// a frame number: the cut falls between it and the next frame): inside a retransmit episode
/// (after a resend followed by another), inside a pause (after a PFC frame that pauses),
/// between a CM exchange and its data (after its last message), and between a request and
/// its ACK (after the first packet that asks for one).
pub fn boundaries(path: &Path) -> Vec<(&'static str, usize)> {
    let frames = super::jsonl(path, &[]);
    let resend = |f: &serde_json::Value| f["seq_class"] == "retransmission";
    let episode = frames.windows(2).position(|w| resend(&w[0]) && resend(&w[1])).map(|i| i + 1);
    let pausing = |f: &serde_json::Value| f["pfc"]["quanta"].as_array().is_some_and(|q| q.iter().any(|n| n != 0));
    let pause = frames.iter().position(pausing).map(|i| i + 1);
    let cm = frames.iter().rposition(|f| !f["cm"].is_null()).map(|i| i + 1);
    let request = frames.iter().position(|f| f["ack_req"] == 1).map(|i| i + 1);
    let found = [("a retransmit episode", episode), ("a pause", pause), ("after CM", cm), ("before an ACK", request)];
    found.into_iter().filter_map(|(kind, at)| at.filter(|&at| at < frames.len()).map(|at| (kind, at))).collect()
}

/// 250 MB of the benchmark's traffic in `dir`, and the frame of the first resend of its first
/// retransmit episode, which comes after frame 200,000 and is followed by more resends.
pub fn benchmark_with_episode(dir: &Path) -> (PathBuf, usize) {
    let capture = dir.join("mixed.pcap");
    let path = capture.to_str().expect("a UTF-8 path");
    super::run_ok(&["generate", "--benchmark", "mixed", "--size", "250M", path]);
    let resends = super::frames_selected(&capture, "rocescope.analysis.retransmission");
    let first = *resends.first().expect("a retransmission") as usize;
    assert!(first > 200_000 && resends.len() > 1, "the episode goes on after the cut: {resends:?}");
    (capture, first)
}

/// Cuts every sample and shared capture in two after each frame [`boundaries`] finds, and
/// hands `check` the capture, the kind of cut, the frame it follows and the two parts; asserts
/// that every kind of cut was made.
pub fn at_boundaries(dir: &Path, mut check: impl FnMut(&Path, &str, usize, &[PathBuf])) {
    let mut kinds = std::collections::BTreeSet::new();
    for path in super::samples_and_shared_captures() {
        for (kind, after) in boundaries(&path) {
            check(&path, kind, after, &split(&path, dir, |_| vec![after]));
            kinds.insert(kind);
        }
    }
    assert_eq!(kinds.len(), 4, "every kind of cut was made: {kinds:?}");
}

/// Cuts every sample and shared capture into three parts at each of the [`CUTS`], and hands
/// `check` the parts and a phrase that says where the capture was cut.
pub fn in_three(dir: &Path, mut check: impl FnMut(&[PathBuf], &str)) {
    for path in super::samples_and_shared_captures() {
        for cuts in CUTS {
            let parts = split(&path, dir, cuts);
            if parts.len() == 3 {
                check(&parts, &format!("{} cut at {:?} of its frames", path.display(), cuts(100)));
            }
        }
    }
}
