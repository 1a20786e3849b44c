//! The `packets` command: decode every frame and write the packet list, decode trees, hex
//! dumps or JSON lines.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use crate::analyze::frame::FrameSummary;
use crate::analyze::{Analyzer, Config, Verdict};
use crate::capture::{Inputs, LinkType, Record};
use crate::cli::{
    EXIT_NO_INPUT, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, ExportFormat, PacketsArgs, PacketsFormat, report_damage,
    report_unreadable,
};
use crate::decode::{Decoder, Packet};
use crate::display_filter::DisplayFilter;
use crate::fields::Frame;
use crate::filter::Filter;
use crate::output::fields::FieldExport;
use crate::output::{Clock, hexdump, jsonl::FrameJson, tree, write_list_line};

pub fn run(args: &PacketsArgs) -> ExitCode {
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 1);
    report_unreadable(&unreadable);
    let filter =
        Filter { qps: args.qps.clone(), opcodes: args.opcodes.clone(), ips: args.ips.clone(), only: args.only };
    let decoder = Decoder::new(&args.roce_ports);
    let display = match args.display_filter.as_deref().map(DisplayFilter::compile).transpose() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rocescope: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let writer = match FrameWriter::new(args) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("rocescope: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let stdout = io::stdout().lock();
    let mut list = Listing {
        out: BufWriter::with_capacity(1 << 16, stdout),
        writer,
        display,
        first_ts_ns: None,
        // The analysis sees every frame, shown or not, so that sequence classes are right.
        analyzer: Analyzer::with_verdicts(Config::default()),
        waiting: VecDeque::new(),
        spare: Vec::new(),
        shown: 0,
        limit: args.count,
    };
    let mut frames = 0u64;
    let mut damaged = 0usize;
    let mut result = list.header();
    while let Some(frame) = inputs.next_frame() {
        if result.is_err() {
            break;
        }
        frames += 1;
        let packet = decoder.decode(&frame.record);
        list.analyzer.observe(&FrameSummary::of(frame.number, &packet));
        result = list.take(frame.number, &frame.record, &packet, filter.matches(&packet), &decoder);
        if result.is_err() || list.is_full() {
            break;
        }
        if inputs.has_damage() {
            damaged += take_damage(&mut inputs);
        }
    }
    damaged += take_damage(&mut inputs);
    let result = result.and_then(|()| list.finish(&decoder));
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return ExitCode::from(EXIT_OK),
        Err(e) => {
            eprintln!("rocescope: cannot write the output: {e}");
            return ExitCode::from(EXIT_OUTPUT);
        }
        Ok(()) => {}
    }
    if frames == 0 && (!unreadable.is_empty() || damaged > 0) {
        return ExitCode::from(EXIT_NO_INPUT);
    }
    ExitCode::from(EXIT_OK)
}

/// A frame kept until its verdict is final, with its own copy of the bytes when it is shown.
struct Waiting {
    number: u64,
    ts_ns: i64,
    orig_len: u32,
    link_type: LinkType,
    offset: u64,
    /// The captured bytes; `None` for a frame the filters hide.
    data: Option<Vec<u8>>,
}

impl Waiting {
    fn record(&self) -> Option<Record<'_>> {
        let data = self.data.as_deref()?;
        Some(Record {
            ts_ns: self.ts_ns,
            orig_len: self.orig_len,
            data,
            link_type: self.link_type,
            offset: self.offset,
        })
    }
}

/// The listing: frames written in order once the analysis has decided their verdicts.
struct Listing<W: Write> {
    out: W,
    writer: FrameWriter,
    /// `-Y`: a frame is shown only when it matches.
    display: Option<DisplayFilter>,
    /// The time of the capture's first frame (Wireshark's relative times count from it).
    first_ts_ns: Option<i64>,
    analyzer: Analyzer,
    waiting: VecDeque<Waiting>,
    /// Byte buffers of frames written, for reuse.
    spare: Vec<Vec<u8>>,
    shown: u64,
    limit: Option<u64>,
}

impl<W: Write> Listing<W> {
    fn is_full(&self) -> bool {
        self.limit.is_some_and(|c| self.shown >= c)
    }

    /// What comes before the first frame (the `-T fields -E header=y` line).
    fn header(&mut self) -> io::Result<()> {
        let mut line = String::new();
        if let Some(export) = &self.writer.export {
            export.write_header(&mut line);
        }
        self.out.write_all(line.as_bytes())
    }

    /// Takes the frame just analysed: written at once when its verdict is already final and
    /// no frame waits before it, else kept.
    fn take(
        &mut self,
        number: u64,
        record: &Record<'_>,
        packet: &Packet<'_>,
        shown: bool,
        decoder: &Decoder,
    ) -> io::Result<()> {
        self.first_ts_ns.get_or_insert(record.ts_ns);
        // a filter on the analysis's verdicts waits for them; any other is decided now
        let shown = shown && (self.filters_on_verdicts() || self.passes(number, packet, None));
        if self.waiting.is_empty() {
            match self.analyzer.next_verdict() {
                Some((n, verdict)) if n == number => {
                    return if shown { self.show(number, packet, &verdict) } else { Ok(()) };
                }
                _ => {}
            }
        }
        let data = shown.then(|| {
            let mut bytes = self.spare.pop().unwrap_or_default();
            bytes.clear();
            bytes.extend_from_slice(record.data);
            bytes
        });
        let (ts_ns, orig_len, link_type, offset) = (record.ts_ns, record.orig_len, record.link_type, record.offset);
        self.waiting.push_back(Waiting { number, ts_ns, orig_len, link_type, offset, data });
        self.write_decided(decoder)
    }

    /// Writes the waiting frames whose verdicts are final.
    fn write_decided(&mut self, decoder: &Decoder) -> io::Result<()> {
        while let Some((number, verdict)) = self.analyzer.next_verdict() {
            while let Some(w) = self.waiting.pop_front() {
                if w.number != number {
                    continue;
                }
                if let Some(record) = w.record()
                    && !self.is_full()
                {
                    self.show(number, &decoder.decode(&record), &verdict)?;
                }
                self.spare.extend(w.data);
                break;
            }
        }
        Ok(())
    }

    fn filters_on_verdicts(&self) -> bool {
        self.display.as_ref().is_some_and(DisplayFilter::uses_analysis)
    }

    /// Does the frame match the display filter (with its verdict when the filter reads it)?
    fn passes(&self, number: u64, packet: &Packet<'_>, verdict: Option<&Verdict>) -> bool {
        let Some(display) = &self.display else { return true };
        let first_ts_ns = self.first_ts_ns.unwrap_or(packet.ts_ns);
        display.matches(&Frame { number, packet, first_ts_ns, verdict })
    }

    /// Writes a frame that the other filters let through, once the display filter on its
    /// verdict (if any) agrees.
    fn show(&mut self, number: u64, packet: &Packet<'_>, verdict: &Verdict) -> io::Result<()> {
        if self.filters_on_verdicts() && !self.passes(number, packet, Some(verdict)) {
            return Ok(());
        }
        self.shown += 1;
        let first_ts_ns = self.first_ts_ns.unwrap_or(packet.ts_ns);
        self.writer.write(&mut self.out, Shown { number, packet, verdict, first_ts_ns })
    }

    /// The end of the input: every verdict is decided.
    fn finish(&mut self, decoder: &Decoder) -> io::Result<()> {
        self.analyzer.finish();
        self.write_decided(decoder)?;
        self.out.flush()
    }
}

fn take_damage(inputs: &mut Inputs) -> usize {
    let damage = inputs.take_damage();
    report_damage(&damage);
    damage.len()
}

/// A frame to write, with its verdict and the time of the capture's first frame.
struct Shown<'p, 'a> {
    number: u64,
    packet: &'p Packet<'a>,
    verdict: &'p Verdict,
    first_ts_ns: i64,
}

/// Formats frames in the chosen style, reusing its buffers from frame to frame.
struct FrameWriter {
    format: PacketsFormat,
    /// `-T fields`: the fields to print instead of the list.
    export: Option<FieldExport>,
    verbose: bool,
    hex: bool,
    clock: Clock,
    line: String,
    scratch: [String; 2],
    json: Vec<u8>,
}

impl FrameWriter {
    fn new(args: &PacketsArgs) -> Result<Self, String> {
        let export = match args.export {
            Some(ExportFormat::Fields) => Some(FieldExport::new(&args.export_fields, &args.export_options)?),
            None => None,
        };
        Ok(FrameWriter {
            format: args.format,
            export,
            verbose: args.verbose,
            hex: args.hex,
            clock: Clock::new(args.time),
            line: String::with_capacity(256),
            scratch: [String::new(), String::new()],
            json: Vec::with_capacity(2048),
        })
    }

    fn write(&mut self, out: &mut impl Write, shown: Shown<'_, '_>) -> io::Result<()> {
        let Shown { number, packet, verdict, first_ts_ns } = shown;
        if let Some(export) = &self.export {
            self.line.clear();
            let frame = Frame { number, packet, first_ts_ns, verdict: Some(verdict) };
            export.write_line(&mut self.line, &frame);
            return out.write_all(self.line.as_bytes());
        }
        if self.format == PacketsFormat::Jsonl {
            self.json.clear();
            FrameJson { number, packet, verdict }.write_to(&mut self.json)?;
            self.json.push(b'\n');
            return out.write_all(&self.json);
        }
        self.line.clear();
        let formatted = if self.verbose {
            tree::write_tree(&mut self.line, number, packet).and_then(|()| write_verdict_tree(&mut self.line, verdict))
        } else {
            self.clock.start_at(first_ts_ns);
            write_list_line(&mut self.line, &mut self.scratch, &mut self.clock, number, packet)
                .and_then(|()| write_verdict_flag(&mut self.line, verdict))
                .and_then(|()| self.line.write_char('\n'))
        };
        formatted.map_err(|_| io::Error::other("formatting failed"))?;
        if self.hex {
            if !self.verbose {
                self.line.push('\n');
            }
            hexdump::write_hexdump(&mut self.line, packet.data).map_err(|_| io::Error::other("formatting failed"))?;
            self.line.push('\n');
        } else if self.verbose {
            self.line.push('\n');
        }
        out.write_all(self.line.as_bytes())
    }
}

/// The analysis flag appended to a packet-list line, like Wireshark's TCP analysis flags.
fn write_verdict_flag(line: &mut String, verdict: &Verdict) -> std::fmt::Result {
    use crate::analyze::sequence::SeqClass;
    if verdict.mirror_duplicate {
        return line.write_str(" [mirror duplicate]");
    }
    match verdict.seq {
        Some(SeqClass::Gap { missing }) => write!(line, " [gap: {missing} PSNs missing]"),
        Some(SeqClass::Retransmission) => line.write_str(" [retransmission]"),
        Some(SeqClass::LateArrival) => line.write_str(" [late arrival]"),
        Some(SeqClass::Ahead) => line.write_str(" [ahead of late arrivals]"),
        _ => Ok(()),
    }
}

/// The analysis section of the decode tree.
fn write_verdict_tree(out: &mut String, verdict: &Verdict) -> std::fmt::Result {
    let Some(flow) = verdict.flow else { return Ok(()) };
    writeln!(out, "rocescope analysis")?;
    writeln!(out, "    Flow: {flow}")?;
    if verdict.mirror_duplicate {
        writeln!(out, "    Mirror duplicate of a packet seen at another tap")?;
    } else if let Some(class) = verdict.seq {
        writeln!(out, "    Sequence: {}", class.name())?;
    }
    Ok(())
}
