//! The `packets` command: decode every frame and write the packet list, decode trees, hex
//! dumps or JSON lines.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

use super::exit::{Failure, Outcome, written};
use crate::analyze::frame::FrameSummary;
use crate::analyze::{Analyzer, Config, Verdict};
use crate::capture::{Frame as InputFrame, Inputs};
use crate::cli::{ExportFormat, PacketsArgs, PacketsFormat, report_damage, report_undecoded, report_unreadable};
use crate::decode::{DecodedFrame, Decoder};
use crate::display_filter::DisplayFilter;
use crate::fields::Frame;
use crate::filter::Filter;
use crate::ordered::{Decided, FrameSink, InOrder};
use crate::output::packet::fields::FieldExport;
use crate::output::packet::json::{JsonExport, JsonStyle};
use crate::output::packet::{Clock, hexdump, jsonl::FrameJson, tree, write_list_line, write_verdict_flag};
use crate::pipeline::{self, Stage, Step};

use super::passes;

pub fn run(args: &PacketsArgs) -> Outcome {
    let decoder = args.ports.decoder();
    let decoder = decoder.clone().with_time_source(passes::choose(&args.files, args.times.time_source, &decoder)?);
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 1);
    report_unreadable(&unreadable);
    let display = args.display_filter.as_deref().map(DisplayFilter::compile).transpose().map_err(Failure::Usage)?;
    let writer = FrameWriter::new(args).map_err(Failure::Usage)?;
    let stdout = io::stdout().lock();
    let on_terminal = io::IsTerminal::is_terminal(&stdout);
    let mut sink = ListSink {
        out: BufWriter::with_capacity(1 << 16, stdout),
        writer,
        flush_each: args.line_buffered || on_terminal,
    };
    let header = sink.header();
    let mut listing = Listing::new(sink, display, args);
    if args.line_buffered || (on_terminal && args.files.iter().any(|f| f.as_os_str() == "-")) {
        // frames arriving through a pipe are shown as they come: the doubled-mirror decision,
        // which would hold the first RoCE frames back, is not waited for
        listing.analyzer.decide_doubling();
    }
    let ran = pipeline::run(&mut inputs, &decoder, &mut listing, &|_| {});
    report_damage(&ran.damage);
    report_undecoded(listing.analyzer.undecoded_links());
    let sink = &mut listing.list.sink;
    let ended = ran.result.and_then(|()| sink.footer()).and_then(|()| sink.out.flush());
    written(header.and(ended), |e| format!("cannot write the output: {e}"))?;
    if ran.frames == 0 && (!unreadable.is_empty() || !ran.damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    Ok(())
}

/// Every frame through the analysis (so that verdicts are right), then, once its verdict is
/// final, to `sink` if the filters show it (`--qp`, `--only` and the like, then `-Y`), `-c` of
/// them at most: what `packets` lists, and what the Python module's `packets` tabulates.
pub struct Listing<S: FrameSink> {
    pub analyzer: Analyzer,
    pub list: InOrder<S>,
    filter: Filter,
}

impl<S: FrameSink> Listing<S> {
    /// The frames `args` choose, for `sink`; `display`: `args`' display filter, compiled.
    pub fn new(sink: S, display: Option<DisplayFilter>, args: &PacketsArgs) -> Listing<S> {
        Listing {
            analyzer: Analyzer::with_verdicts(Config::default()),
            list: InOrder::new(sink, display, args.count),
            filter: args.choice.filter(args.only),
        }
    }
}

impl<S: FrameSink> Stage for Listing<S> {
    fn frame(&mut self, frame: &InputFrame<'_>, packet: &DecodedFrame<'_>, decoder: &Decoder) -> io::Result<Step> {
        self.analyzer.observe(&FrameSummary::of(frame.number, packet));
        let shown = self.filter.matches(packet);
        self.list.take(&mut self.analyzer, frame, packet, shown, decoder)?;
        Ok(if self.list.is_full() { Step::Stop } else { Step::Continue })
    }

    fn finish(&mut self, decoder: &Decoder) -> io::Result<()> {
        self.list.finish(&mut self.analyzer, decoder)
    }
}

/// The packet list, JSON lines or field export on standard output.
struct ListSink<W: Write> {
    out: W,
    writer: FrameWriter,
    /// Flush after each frame (`-l`, or a terminal).
    flush_each: bool,
}

impl<W: Write> ListSink<W> {
    /// What comes before the first frame (the `-T fields -E header=y` line, `-T json`'s `[`).
    fn header(&mut self) -> io::Result<()> {
        let mut line = String::new();
        match &self.writer.export {
            Some(Export::Fields(export)) => export.write_header(&mut line),
            Some(Export::Json(export)) => export.write_header(&mut line),
            None => {}
        }
        self.out.write_all(line.as_bytes())
    }

    /// What comes after the last frame (`-T json`'s `]`).
    fn footer(&mut self) -> io::Result<()> {
        let mut line = String::new();
        if let Some(Export::Json(export)) = &self.writer.export {
            export.write_footer(&mut line);
        }
        self.out.write_all(line.as_bytes())
    }
}

impl<W: Write> FrameSink for ListSink<W> {
    fn write(&mut self, frame: Decided<'_, '_>) -> io::Result<()> {
        let Decided { number, packet, verdict, first_ts_ns, previous_ts_ns, previous_shown_ts_ns, .. } = frame;
        let shown = Shown { number, packet, verdict, first_ts_ns, previous_ts_ns, previous_shown_ts_ns };
        self.writer.write(&mut self.out, shown)?;
        if self.flush_each {
            self.out.flush()?;
        }
        Ok(())
    }
}

/// A frame to write, with its verdict and the time of the capture's first frame.
struct Shown<'p, 'a> {
    number: u64,
    packet: &'p DecodedFrame<'a>,
    verdict: &'p Verdict,
    first_ts_ns: i64,
    previous_ts_ns: Option<i64>,
    previous_shown_ts_ns: Option<i64>,
}

/// tshark's `-T` outputs.
enum Export {
    Fields(FieldExport),
    Json(JsonExport),
}

/// Formats frames in the chosen style, reusing its buffers from frame to frame.
struct FrameWriter {
    format: PacketsFormat,
    /// `-T`: the fields to print instead of the list.
    export: Option<Export>,
    verbose: bool,
    hex: bool,
    clock: Clock,
    line: String,
    scratch: [String; 2],
    json: Vec<u8>,
}

impl FrameWriter {
    fn new(args: &PacketsArgs) -> Result<Self, String> {
        let json = |style| JsonExport::new(style, &args.export_fields).map(Export::Json);
        let export = match args.export {
            Some(ExportFormat::Fields) => {
                Some(FieldExport::new(&args.export_fields, &args.export_options).map(Export::Fields)?)
            }
            Some(ExportFormat::Json) => Some(json(JsonStyle::Json)?),
            Some(ExportFormat::Ek) => Some(json(JsonStyle::Ek)?),
            None => None,
        };
        Ok(FrameWriter {
            format: if args.json { PacketsFormat::Jsonl } else { args.format },
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
        let Shown { number, packet, verdict, first_ts_ns, previous_ts_ns, previous_shown_ts_ns } = shown;
        let frame = Frame { number, packet, first_ts_ns, previous_ts_ns, previous_shown_ts_ns, verdict: Some(verdict) };
        if let Some(export) = &mut self.export {
            self.line.clear();
            match export {
                Export::Fields(export) => export.write_line(&mut self.line, &frame),
                Export::Json(export) => export.write_frame(&mut self.line, &frame),
            }
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
            tree::write_tree(&mut self.line, &frame)
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
