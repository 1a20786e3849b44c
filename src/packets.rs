//! The `packets` command: decode every frame and write the packet list, decode trees, hex
//! dumps or JSON lines.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use crate::analyze::frame::FrameSummary;
use crate::analyze::{Analyzer, Config, Verdict};
use crate::capture::Inputs;
use crate::cli::{EXIT_NO_INPUT, EXIT_OK, EXIT_OUTPUT, PacketsArgs, PacketsFormat, report_damage, report_unreadable};
use crate::decode::Decoder;
use crate::filter::Filter;
use crate::output::{Clock, hexdump, jsonl::FrameJson, tree, write_list_line};

pub fn run(args: &PacketsArgs) -> ExitCode {
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 1);
    report_unreadable(&unreadable);
    let filter =
        Filter { qps: args.qps.clone(), opcodes: args.opcodes.clone(), ips: args.ips.clone(), only: args.only };
    let decoder = Decoder::new(&args.roce_ports);
    let stdout = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let mut writer = FrameWriter::new(args);
    // The analysis sees every frame, shown or not, so that sequence classes are right.
    let mut analyzer = Analyzer::new(Config::default());
    let mut frames = 0u64;
    let mut shown = 0u64;
    let mut damaged = 0usize;
    let mut result = Ok(());
    while let Some(frame) = inputs.next_frame() {
        frames += 1;
        let packet = decoder.decode(&frame.record);
        let verdict = analyzer.observe(&FrameSummary::of(frame.number, &packet));
        if filter.matches(&packet) {
            shown += 1;
            result = writer.write(&mut out, frame.number, &packet, &verdict);
            if result.is_err() || args.count.is_some_and(|c| shown >= c) {
                break;
            }
        }
        if inputs.has_damage() {
            damaged += take_damage(&mut inputs);
        }
    }
    damaged += take_damage(&mut inputs);
    let result = result.and_then(|()| out.flush());
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

fn take_damage(inputs: &mut Inputs) -> usize {
    let damage = inputs.take_damage();
    report_damage(&damage);
    damage.len()
}

/// Formats frames in the chosen style, reusing its buffers from frame to frame.
struct FrameWriter {
    format: PacketsFormat,
    verbose: bool,
    hex: bool,
    clock: Clock,
    line: String,
    scratch: [String; 2],
    json: Vec<u8>,
}

impl FrameWriter {
    fn new(args: &PacketsArgs) -> Self {
        FrameWriter {
            format: args.format,
            verbose: args.verbose,
            hex: args.hex,
            clock: Clock::new(args.time),
            line: String::with_capacity(256),
            scratch: [String::new(), String::new()],
            json: Vec::with_capacity(2048),
        }
    }

    fn write(
        &mut self,
        out: &mut impl Write,
        number: u64,
        packet: &crate::decode::Packet<'_>,
        verdict: &Verdict,
    ) -> io::Result<()> {
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
