//! The `annotate` command: every input frame, unchanged, into one pcapng file, with a packet
//! comment on each frame the analysis has something to say about and a section comment that
//! summarises the findings, for reading in Wireshark (`frame.comment contains
//! "rocescope.analysis.retransmission"`, or as fields with the plugin of
//! `rocescope wireshark-plugin`, which reads the comments' records: docs/wireshark-plugin.md).
//!
//! The comments are written as the frames' verdicts become final; the section comment and the
//! findings' records on the frames they name need the whole analysis and are known only at the
//! end, so the packets go to a scratch file first and the output is its header, the interfaces
//! and then those packets, a finding's record added to each frame it names. The output is
//! written under a temporary name and renamed when complete.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
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
    EnhancedPacket, Interface, read_block, with_comment_added, write_enhanced_packet, write_interface,
    write_section_header,
};
use crate::output::wireshark::Record;
use crate::pipeline::{self, Stage, Step};

/// What the analysis says of a frame, as a packet comment: a record (docs/wireshark-plugin.md)
/// of every per-frame analysis field that is set, then a phrase a line for each that is worth
/// a word; `None` when it says nothing (no flow, no verdict, nothing wrong with the frame).
pub fn comment(packet: &DecodedFrame<'_>, verdict: &crate::analyze::Verdict) -> Option<String> {
    let mut record = Record::default();
    if let Some(flow) = verdict.flow {
        record.value("analysis.flow", flow.get());
    }
    sequence(&mut record, verdict);
    integrity(&mut record, packet);
    (!record.is_empty()).then(|| record.text())
}

/// The verdicts of the analysis: the sequence class and what it found of the frame.
fn sequence(record: &mut Record, verdict: &crate::analyze::Verdict) {
    if let Some(class) = verdict.seq {
        record.value("analysis.seq_class", class.name());
    }
    match verdict.seq {
        Some(SeqClass::Gap { missing }) => {
            record.flag("analysis.gap");
            record.value("analysis.missing_psns", missing);
            record.phrase(&format!(
                "rocescope.analysis.gap missing_psns={missing}: {missing} PSNs before it never arrived"
            ));
        }
        Some(SeqClass::Retransmission) => {
            record.flag("analysis.retransmission");
            record.phrase("rocescope.analysis.retransmission: a PSN sent again");
        }
        Some(SeqClass::LateArrival) => {
            record.flag("analysis.late_arrival");
            record.phrase("rocescope.analysis.late_arrival: reordered, arrived after later PSNs, not resent");
        }
        Some(SeqClass::Ahead) => {
            record.flag("analysis.ahead");
            record.phrase("rocescope.analysis.ahead: overtook PSNs that all arrived late (a reorder event)");
        }
        _ => {}
    }
    if verdict.capture_missed > 0 {
        let missed = verdict.capture_missed;
        record.value("analysis.capture_missed", missed);
        record.phrase(&format!(
            "rocescope.analysis.capture_missed={missed}: the responder received them, the capture missed them"
        ));
    }
    if verdict.lost_before_tap {
        record.flag("analysis.lost_before_tap");
        record.phrase("rocescope.analysis.lost_before_tap: a resend whose original never reached the tap");
    }
    if verdict.mirror_duplicate {
        record.flag("analysis.mirror_duplicate");
        record.phrase("rocescope.analysis.mirror_duplicate: a second copy of a packet seen at another tap");
    }
}

/// The frame's own checks where they failed or could not be made: its CRCs, its decoding.
fn integrity(record: &mut Record, packet: &DecodedFrame<'_>) {
    match &packet.body {
        Body::Roce(r) => {
            let checks = [("icrc.status", Some(r.icrc)), ("vcrc.status", r.vcrc.map(|v| v.status))];
            for (key, status) in checks.into_iter().filter_map(|(key, status)| Some((key, status?))) {
                let why = match status {
                    IcrcStatus::Bad => "the CRC does not match the bytes",
                    IcrcStatus::Unverifiable => "the capture does not hold the whole CRC",
                    IcrcStatus::Ok => continue,
                };
                unsound(record, key, status.name(), why);
            }
        }
        Body::Uet(u) => {
            let why = match u.crc {
                UetCrc::NoVariant { .. } => "the CRC32C trailer matches none of its four readings",
                UetCrc::Unchecked => "encrypted, cut, or without an IP header",
                UetCrc::Matched(_) => return,
            };
            unsound(record, "uet.crc.status", u.crc.name(), why);
        }
        Body::Malformed(m) => {
            record.value("malformed", m.error);
            record.value("malformed.layer", m.error.layer.name());
            record.phrase(&format!("rocescope.malformed={}: {}", m.error.layer.name(), m.error));
        }
        _ => {}
    }
}

/// A check that did not pass: its status field (`icrc.status=bad`) and why, as a phrase.
fn unsound(record: &mut Record, key: &str, status: &str, why: &str) {
    record.value(key, status);
    record.phrase(&format!("rocescope.{key}={status}: {why}"));
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
    /// The frames with records of their own.
    with_records: u64,
}

impl FrameSink for Annotator {
    fn write(&mut self, frame: Decided<'_, '_>) -> io::Result<()> {
        let tsresol = self.tsresol.get(frame.file).copied().unwrap_or(9);
        let interface = self.interfaces.index(frame.file, frame.record.link_type, tsresol);
        let note = comment(frame.packet, frame.verdict);
        self.with_records += u64::from(note.is_some());
        let packet = EnhancedPacket {
            interface,
            ts_ns: frame.record.ts_ns,
            captured: frame.record.data,
            orig_len: frame.record.orig_len,
        };
        write_enhanced_packet(&mut self.body, &packet, tsresol, note.as_deref())
    }
}

/// The section comment: the frames with records of their own, those the findings name (the two
/// may overlap), then the findings, one a line.
fn summary(report: &Report, records: u64, named: usize) -> String {
    let mut s = format!(
        "rocescope {} analysis: {} frames, {records} with analysis records, {named} named by findings (frame.comment contains \"rocescope/\"; rocescope wireshark-plugin reads them as fields); {} findings",
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

/// The records of the findings that name frames (their exemplars), by frame number: the
/// finding's code and severity, and its message as the phrase.
fn finding_records(report: &Report) -> BTreeMap<u64, Vec<String>> {
    let mut records: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for finding in &report.findings {
        let mut record = Record::default();
        record.value("finding", finding.code);
        record.value("finding.severity", finding.severity.name());
        record.phrase(&format!("{} ({}): {}", finding.code, finding.severity.name(), finding.message));
        for frame in &finding.evidence.frames {
            records.entry(frame.get()).or_default().push(record.text());
        }
    }
    records
}

/// Writes the output: header, interfaces, then the scratch file's packets, each a frame a
/// finding names with the finding's record added to its comment; named when whole.
fn assemble(
    out: &Path,
    findings: &BTreeMap<u64, Vec<String>>,
    section: &str,
    interfaces: &[Interface],
    body: &Path,
) -> io::Result<()> {
    let (atomic, file) = AtomicFile::create_at(out)?;
    let mut file = BufWriter::new(file);
    write_section_header(&mut file, Some(section))?;
    for iface in interfaces {
        write_interface(&mut file, iface)?;
    }
    let mut packets = BufReader::new(File::open(body)?);
    let mut number = 0u64;
    while let Some(block) = read_block(&mut packets)? {
        number += 1;
        match findings.get(&number) {
            Some(records) => file.write_all(&with_comment_added(&block, &records.join("\n"))?)?,
            None => file.write_all(&block)?,
        }
    }
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
    let annotator = Annotator { body, interfaces: Interfaces::default(), tsresol, with_records: 0 };
    let mut stage =
        Annotating { analyzer: Analyzer::with_verdicts(config), ordered: InOrder::new(annotator, None, None) };
    let ran = pipeline::run(&mut inputs, &decoder, &mut stage, &|_| {});
    let (damage, Annotating { analyzer, ordered }) = (ran.damage, stage);
    let written = ran.result.and_then(|()| {
        let report = assemble::report_of_files(&analyzer, inputs.readers(), &damage);
        let findings = finding_records(&report);
        let section = summary(&report, ordered.sink.with_records, findings.len());
        assemble(&args.output, &findings, &section, &ordered.sink.interfaces.described, &body_path)
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
