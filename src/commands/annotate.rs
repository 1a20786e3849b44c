//! The `annotate` command: every input frame, unchanged, into one pcapng file, with a packet
//! comment on each frame the analysis has something to say about and a section comment that
//! summarises the findings, for reading in Wireshark (`frame.comment contains
//! "rocescope.analysis.retransmission"`).
//!
//! The comments are written as the frames' verdicts become final; the section comment, which
//! needs the whole analysis, is known only at the end, so the packets go to a scratch file
//! first and the output is its header, the interfaces and then those packets. The output is
//! written under a temporary name and renamed when complete.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::exit::{Failure, Outcome};
use crate::analyze::Analyzer;
use crate::analyze::assemble;
use crate::analyze::frame::FrameSummary;
use crate::analyze::report::Report;
use crate::analyze::seq_class::SeqClass;
use crate::capture::{Frame as InputFrame, Inputs, LinkType};
use crate::cli::{AnnotateArgs, report_damage, report_unreadable};
use crate::decode::{Body, DecodedFrame, Decoder, IcrcStatus, UetCrc};
use crate::ordered::{Decided, FrameSink, InOrder};
use crate::output::atomic::AtomicFile;
use crate::output::packet::capture_file::{
    EnhancedPacket, Interface, write_enhanced_packet, write_interface, write_section_header,
};
use crate::pipeline::{self, Stage, Step};

/// What the analysis says of a frame, as a packet comment: the analysis fields that are set,
/// then a short phrase; `None` when it says nothing.
pub fn comment(packet: &DecodedFrame<'_>, verdict: &crate::analyze::Verdict) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if verdict.mirror_duplicate {
        parts.push("rocescope.analysis.mirror_duplicate: a second copy of a packet seen at another tap".into());
    }
    match verdict.seq {
        Some(SeqClass::Gap { missing }) => {
            parts.push(format!("rocescope.analysis.gap missing_psns={missing}: {missing} PSNs before it never arrived"))
        }
        Some(SeqClass::Retransmission) => parts.push("rocescope.analysis.retransmission: a PSN sent again".into()),
        Some(SeqClass::LateArrival) => {
            parts.push("rocescope.analysis.late_arrival: reordered, arrived after later PSNs, not resent".into())
        }
        Some(SeqClass::Ahead) => {
            parts.push("rocescope.analysis.ahead: overtook PSNs that all arrived late (a reorder event)".into())
        }
        _ => {}
    }
    if verdict.lost_before_tap {
        parts.push("rocescope.analysis.lost_before_tap: a resend whose original never reached the tap".into());
    }
    match &packet.body {
        Body::Roce(r) if r.icrc == IcrcStatus::Bad => {
            parts.push("rocescope.icrc.status=bad: the invariant CRC does not match the bytes".into())
        }
        Body::Uet(u) if matches!(u.crc, UetCrc::NoVariant { .. }) => {
            parts.push("rocescope.uet.crc.status=bad: the CRC32C trailer matches none of its four readings".into())
        }
        Body::Malformed(m) => parts.push(format!("rocescope.malformed={}: {}", m.error.layer.name(), m.error)),
        _ => {}
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The output's interfaces: one per input file and link type, with that file's time
/// resolution.
#[derive(Default)]
struct Interfaces {
    keys: Vec<(usize, LinkType)>,
    described: Vec<Interface>,
}

impl Interfaces {
    fn index(&mut self, file: usize, link_type: LinkType, tsresol: u8) -> u32 {
        let key = (file, link_type);
        let at = self.keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            self.keys.push(key);
            let link = u16::try_from(link_type.0).unwrap_or(u16::MAX);
            self.described.push(Interface { link_type: link, snaplen: 0, tsresol, name: None });
            self.keys.len() - 1
        });
        at as u32
    }
}

/// The packets with their comments, into the scratch file.
struct Annotator {
    body: BufWriter<File>,
    interfaces: Interfaces,
    /// `if_tsresol` of each input file: 6 for microseconds, 9 for nanoseconds (and for pcapng
    /// files, whose interfaces may differ: nanoseconds keep every timestamp exact).
    tsresol: Vec<u8>,
    comments: u64,
}

impl FrameSink for Annotator {
    fn write(&mut self, frame: Decided<'_, '_>) -> io::Result<()> {
        let tsresol = self.tsresol.get(frame.file).copied().unwrap_or(9);
        let interface = self.interfaces.index(frame.file, frame.record.link_type, tsresol);
        let note = comment(frame.packet, frame.verdict);
        self.comments += u64::from(note.is_some());
        let packet = EnhancedPacket {
            interface,
            ts_ns: frame.record.ts_ns,
            captured: frame.record.data,
            orig_len: frame.record.orig_len,
        };
        write_enhanced_packet(&mut self.body, &packet, tsresol, note.as_deref())
    }
}

/// The section comment: the findings, one a line.
fn summary(report: &Report, comments: u64) -> String {
    let mut s = format!(
        "rocescope {} analysis: {} frames, {comments} with comments (frame.comment contains \"rocescope.\"); {} findings",
        env!("CARGO_PKG_VERSION"),
        report.roce.totals.frames,
        report.findings.len()
    );
    for f in &report.findings {
        let _ = write!(s, "\n{} {}: {}", f.severity.name().to_uppercase(), f.code, f.message);
    }
    s
}

/// The scratch file of `out`'s packets: beside it where it is a regular file, in the
/// temporary directory where it is a device or a FIFO (nothing is created in `/dev`).
fn scratch_name(out: &Path, suffix: &str) -> io::Result<PathBuf> {
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = crate::output::atomic::scratch_dir(out)?;
    Ok(dir.join(format!(".{name}.{}.{suffix}", std::process::id())))
}

/// Writes the output: header, interfaces, then the scratch file's packets; named when whole.
fn assemble(out: &Path, section: &str, interfaces: &[Interface], body: &Path) -> io::Result<()> {
    let (atomic, file) = AtomicFile::create_at(out)?;
    let mut file = BufWriter::new(file);
    write_section_header(&mut file, Some(section))?;
    for iface in interfaces {
        write_interface(&mut file, iface)?;
    }
    io::copy(&mut File::open(body)?, &mut file)?;
    let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
    // a device or a FIFO has nothing to sync (and some refuse)
    if file.metadata()?.is_file() {
        file.sync_all()?;
    }
    atomic.commit()
}

pub fn run(args: &AnnotateArgs) -> Outcome {
    let mut config = args.analysis.config().map_err(Failure::Usage)?;
    let decoder = args.analysis.ports.decoder();
    config.time_source = super::passes::choose(&args.files, args.times.time_source, &decoder)?;
    let decoder = decoder.with_time_source(config.time_source);
    let output = std::fs::canonicalize(&args.output).ok();
    if output.is_some() && args.files.iter().any(|f| std::fs::canonicalize(f).ok() == output) {
        let message = format!("refusing to overwrite the input {} with the annotated capture", args.output.display());
        return Err(Failure::Output(message));
    }
    let (mut inputs, unreadable) = Inputs::open(&args.files, false);
    report_unreadable(&unreadable);
    let tsresol = inputs.readers().iter().map(|r| if r.info().ts_resolution == "us" { 6 } else { 9 }).collect();
    let cannot_write = |e: io::Error| Failure::Output(format!("cannot write {}: {e}", args.output.display()));
    let body_path = scratch_name(&args.output, "packets").map_err(cannot_write)?;
    let body = File::create(&body_path)
        .map(BufWriter::new)
        .map_err(|e| Failure::Output(format!("cannot write {}: {e}", body_path.display())))?;
    let annotator = Annotator { body, interfaces: Interfaces::default(), tsresol, comments: 0 };
    let mut stage =
        Annotating { analyzer: Analyzer::with_verdicts(config), ordered: InOrder::new(annotator, None, None) };
    let ran = pipeline::run(&mut inputs, &decoder, &mut stage, &|_| {});
    let (damage, Annotating { analyzer, ordered }) = (ran.damage, stage);
    let written = ran.result.and_then(|()| {
        let report = assemble::report_of_files(&analyzer, inputs.readers(), &damage);
        assemble(&args.output, &summary(&report, ordered.sink.comments), &ordered.sink.interfaces.described, &body_path)
    });
    let _ = std::fs::remove_file(&body_path);
    report_damage(&damage);
    written.map_err(cannot_write)?;
    if analyzer.frames() == 0 && (!unreadable.is_empty() || !damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    Ok(())
}

/// Every frame through the analysis and, once decided, into the annotator.
struct Annotating {
    analyzer: Analyzer,
    ordered: InOrder<Annotator>,
}

impl Stage for Annotating {
    fn frame(&mut self, frame: &InputFrame<'_>, packet: &DecodedFrame<'_>, decoder: &Decoder) -> io::Result<Step> {
        self.analyzer.observe(&FrameSummary::of(frame.number, packet));
        self.ordered.take(&mut self.analyzer, frame, packet, true, decoder)?;
        Ok(Step::Continue)
    }

    fn finish(&mut self, decoder: &Decoder) -> io::Result<()> {
        self.ordered.finish(&mut self.analyzer, decoder)?;
        self.ordered.sink.body.flush()
    }
}
