//! The `analyze` command: read every input in one streaming pass, analyse, and print the
//! summary or the JSON report.

use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::accounts;
use super::exit::{Failure, Outcome};
use super::fabric;
use super::passes;
use super::refuse_input;
use super::reporting::{self, Reporting};
use super::saved_run::{resume, run_so_far, save_state};
use crate::analyze::assemble::Joined;
use crate::analyze::counters::{self, HostMacs, HostSnapshots, SwitchSnapshots};
use crate::analyze::fabric::policy::fabric_policy;
use crate::analyze::frame::FrameSummary;
use crate::analyze::identity::known::KnownQps;
use crate::analyze::path;
use crate::analyze::roce::report::inputs::InputReport;
use crate::analyze::roce::wide::facts::UndecodedLinkFrames;
use crate::analyze::{Analyzer, SavedRun, assemble};
use crate::capture::CaptureError;
use crate::capture::interfaces::{InterfaceLookup, look_up_interface};
use crate::capture::{Frame as InputFrame, Inputs};
use crate::cli::{AnalyzeArgs, SwitchCounterFiles, report_damage, report_undecoded, report_unreadable};
use crate::decode::{Decoder, Endpoint};
use crate::display_filter::Selection;
use crate::ordered::InOrder;
use crate::output::atomic::Written;
#[cfg(feature = "tables")]
use crate::output::packet::table::PacketTable;
#[cfg(not(feature = "tables"))]
use crate::output::packet::table_absent::PacketTable;
use crate::pipeline::plan::Plan;
use crate::pipeline::{self, Analyse, Raw};
use crate::progress::Progress;

/// Who follows an analysis while it reads: the command's progress bar and warnings on standard
/// error, or a library's caller.
pub trait Watch: Sync {
    /// Inputs that cannot be read (the others are).
    fn unreadable(&self, errors: &[CaptureError]);
    /// Reading starts: `total` bytes, when known.
    fn reading(&self, total: Option<u64>);
    /// Bytes read so far.
    fn read(&self, bytes: u64);
    /// Reading ended: where inputs were damaged (each read up to the damage), and the link
    /// layers not decoded.
    fn ended(&self, damage: &[CaptureError], undecoded: &[UndecodedLinkFrames]);
}

/// The command's own watch: a progress bar on a terminal (not with `--quiet`), warnings on
/// standard error.
struct Terminal {
    quiet: bool,
    bar: OnceLock<Progress>,
}

impl Watch for Terminal {
    fn unreadable(&self, errors: &[CaptureError]) {
        report_unreadable(errors);
    }

    fn reading(&self, total: Option<u64>) {
        self.bar.get_or_init(|| Progress::new(total, !self.quiet));
    }

    fn read(&self, bytes: u64) {
        if let Some(bar) = self.bar.get() {
            bar.set(bytes);
        }
    }

    fn ended(&self, damage: &[CaptureError], undecoded: &[UndecodedLinkFrames]) {
        if let Some(bar) = self.bar.get() {
            bar.finish();
        }
        report_damage(damage);
        report_undecoded(undecoded);
    }
}

pub fn run(args: &AnalyzeArgs) -> Outcome {
    let Analysed { analyzer, inputs, joined, table_files } =
        analyse(args, &Terminal { quiet: args.quiet, bar: OnceLock::new() })?;
    reporting::report(&analyzer, inputs, &reporting_of(args, &joined), table_files)
}

/// An analysis done, its report still to be written.
pub struct Analysed {
    pub analyzer: Analyzer,
    pub inputs: Vec<InputReport>,
    /// What the report joins with the analysis (the path, the counters).
    pub joined: Joined,
    /// The per-packet table's files (`--out DIR --packets`), still to be committed.
    pub table_files: io::Result<Written>,
}

/// Reads and analyses `args`' inputs as `analyze` does (saving the state `--state` asks for),
/// `watch` following.
pub fn analyse(args: &AnalyzeArgs, watch: &dyn Watch) -> Result<Analysed, Failure> {
    if args.choice.chooses() && (args.state.is_some() || args.resume.is_some()) {
        return Err(Failure::Usage(
            "--qp, --ip and --opcode cannot choose the frames of a saved analysis, which records -Y only: say it with -Y (infiniband.bth.destqp == 0x12a, ip.addr == 10.0.0.1, infiniband.bth.opcode == 10)".into(),
        ));
    }
    reporting::check_stdout(args.json, args.trace.as_deref()).map_err(Failure::Usage)?;
    // the fabric's configurations give the marking policy the capture is judged by
    let fabric = fabric::read_configs(&args.configs, "--config")?;
    let fabric_policy = (!fabric.is_empty()).then(|| fabric_policy(&fabric));
    let mut config = args.analysis.config_with(fabric_policy.as_ref()).map_err(Failure::Usage)?;
    let decoder = args.analysis.ports.decoder();
    let taps = checked_taps(args)?;
    // the files read beside the capture are checked before any pass reads it
    let (counters, switches) = (read_counters(args)?, read_switch_counters(args)?);
    let accounts = accounts::read(&args.accounts)?;
    let known_qps = KnownQps::of(&accounts.tables);
    let tap_files: Vec<PathBuf> = taps.iter().flat_map(|t| t.files.iter().cloned()).collect();
    let files = if taps.is_empty() { &args.files } else { &tap_files };
    let plan = Plan::new(files, args.times.time_source, &taps);
    let before = passes::read_before_main(&plan, &taps, &decoder, &path_options(args))?;
    config.time_source = before.time_source;
    let decoder = decoder.with_time_source(config.time_source);
    let traced = before.traced;
    if let Some(warning) = traced.as_ref().and_then(|t| t.report.order_warning()) {
        eprintln!("rocescope: warning: {warning}");
    }
    let resumed = args
        .resume
        .as_deref()
        .map(|path| resume(path, config, args.display_filter.as_deref(), &args.files))
        .transpose()?;
    if let Some(saved) = &resumed {
        accounts::check_saved_with(saved.analyzer.known_qps(), &accounts, "--resume: the saved analysis was")?;
    }
    let mut joined = Joined { path: traced.as_ref().map(|t| t.report.clone()), counters, switches, accounts, fabric };
    reporting::warn_without_tables(&reporting_of(args, &joined));
    let (mut inputs, unreadable) = Inputs::open(files, args.threads > 2);
    if let Some(traced) = &traced {
        inputs = inputs.aligned(traced.union.clone());
    }
    watch.unreadable(&unreadable);
    if let Some(frames) = args.count {
        inputs.stop_after(frames);
    }
    reporting::prepare(&reporting_of(args, &joined), files)
        .and_then(|()| args.state.as_deref().map_or(Ok(()), |state| refuse_input(state, files, "the saved analysis")))
        .map_err(Failure::Output)?;
    let packet_table = packet_table(args)?;
    let mut selection =
        Selection::new(args.display_filter.as_deref()).map_err(Failure::Usage)?.choosing(args.choice.filter(None));
    let (analyzer, mut input_reports) = match resumed {
        Some(saved) => {
            inputs.number_from(saved.frames_read.saturating_add(1));
            selection = selection.continuing(saved.first_ts_ns);
            // an export's analysis gives each frame's verdict, which analyze does not take
            (saved.analyzer.without_verdicts(), saved.inputs)
        }
        None if packet_table.is_some() => (Analyzer::with_verdicts(config).with_known_qps(known_qps), Vec::new()),
        // a part analysed on its own keeps its first frames for a merge (`rocescope merge`)
        None if args.state.is_some() => {
            (Analyzer::new(config).with_known_qps(known_qps).keeping_head(args.keep_frames), Vec::new())
        }
        None => (Analyzer::new(config).with_known_qps(known_qps), Vec::new()),
    };
    let table = packet_table.map(|t| TableFeed { ordered: InOrder::new(t, None, None), decoder: decoder.clone() });
    let mut analysis = Analysis { analyzer, table, goes_on: args.state.is_some() };
    watch.reading(inputs.size());
    // the union of taps is read on the first tap's clock, which only the reading thread applies
    let threads = if traced.is_some() { args.threads.min(2) } else { args.threads } as usize;
    let ran =
        pipeline::analyse(&mut inputs, &decoder, &mut selection, &mut analysis, threads, &|bytes| watch.read(bytes));
    let damage = ran.damage;
    let packet_table_failed = |e: io::Error| Failure::Output(format!("cannot write the packet table: {e}"));
    ran.result.map_err(packet_table_failed)?;
    input_reports.extend(assemble::input_reports(inputs.readers(), &damage));
    let run = run_so_far(analysis.analyzer, &inputs, &selection, args.display_filter.as_ref(), input_reports);
    if let Some(path) = &args.state {
        save_state(path, &run)?;
    }
    let SavedRun { analyzer, inputs: input_reports, .. } = run;
    analysis.analyzer = analyzer;
    let Analysis { analyzer, table, .. } = analysis.finish().map_err(packet_table_failed)?;
    watch.ended(&damage, analyzer.undecoded_links());
    if analyzer.frames() == 0 && (!unreadable.is_empty() || !damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    let table_files = table.map_or(Ok(Written::default()), |t| t.ordered.sink.finish());
    let first_macs = if joined.counters.is_empty() { Default::default() } else { analyzer.first_macs_by_source() };
    for host in &mut joined.counters {
        let (own, partner) = first_macs.get(&Endpoint::Ip(host.host)).copied().unwrap_or_default();
        host.macs = HostMacs { own, partner };
    }
    Ok(Analysed { analyzer, inputs: input_reports, joined, table_files })
}

/// With `--counters HOST=BEFORE,AFTER`: each host's two snapshots, read (a file that cannot
/// be read, is too large or holds a line that is no counter is a usage error naming its line,
/// before the capture is read) and put in order (a warning when they look swapped); its MACs
/// are those of its first RoCE frame, which the analysis finds. `--link HOST` marks HOST's link
/// as the capture's (a HOST no `--counters` names is a usage error).
fn read_counters(args: &AnalyzeArgs) -> Result<Vec<HostSnapshots>, Failure> {
    if let Some(stray) = args.links.iter().find(|l| !args.counters.iter().any(|c| c.host == **l)) {
        return Err(Failure::Usage(format!(
            "--link {stray}: no --counters {stray}=BEFORE,AFTER: --link names a host whose counters are given"
        )));
    }
    let read = |file: &PathBuf| read_snapshot("--counters", file, counters::parse);
    let host = |c: &crate::cli::CounterFiles| {
        let (before, after, order) = counters::in_order(read(&c.before)?, read(&c.after)?);
        if let Some(warning) = order.warning(&format!("--counters {}", c.host)) {
            eprintln!("rocescope: warning: {warning}");
        }
        let link = args.links.contains(&c.host);
        Ok(HostSnapshots { host: c.host, macs: HostMacs::default(), link, before, after })
    };
    args.counters.iter().map(host).collect()
}

/// With `--switch-counters NAME=BEFORE,AFTER`: each switch's two snapshots, read from SONiC's
/// tables (a file that cannot be read, is too large or has a table row that is no counter is a
/// usage error naming its line; a file without a table, a warning) and put in order (a warning
/// when they look swapped).
fn read_switch_counters(args: &AnalyzeArgs) -> Result<Vec<SwitchSnapshots>, Failure> {
    let parse = |name: &str, text: &str| {
        let snapshot = counters::sonic::parse(name, text)?;
        if !counters::sonic::has_table(text) {
            eprintln!(
                "rocescope: warning: --switch-counters: {name}: no table of `show pfc counters` (Port Rx, Port Tx) or `show queue counters` (Port TxQ) in it: no counter read"
            );
        }
        Ok(snapshot)
    };
    let read = |file: &PathBuf| read_snapshot("--switch-counters", file, parse);
    let switch = |s: &SwitchCounterFiles| {
        let (before, after, order) = counters::in_order(read(&s.before)?, read(&s.after)?);
        if let Some(warning) = order.warning(&format!("--switch-counters {}", s.name)) {
            eprintln!("rocescope: warning: {warning}");
        }
        Ok(SwitchSnapshots { name: s.name.clone(), before, after })
    };
    args.switch_counters.iter().map(switch).collect()
}

/// A snapshot file of `option`, read by `parse`: a file that cannot be read, holds more than
/// [`counters::MAX_FILE_BYTES`] or is not UTF-8, or a line that is no counter, is a usage error
/// naming the file (and the line).
fn read_snapshot(
    option: &str,
    file: &std::path::Path,
    parse: impl Fn(&str, &str) -> Result<counters::Snapshot, counters::SnapshotError>,
) -> Result<counters::Snapshot, Failure> {
    let name = file.display().to_string();
    let text = counters::read_file(file).map_err(|e| Failure::Usage(format!("{option}: {name}: {e}")))?;
    parse(&name, &text).map_err(|e| Failure::Usage(format!("{option}: {e}")))
}

/// `--tap`'s taps, checked: two or more, named apart, each file read from its start twice (to
/// follow its packets, then in the union), each `#IFACE` among its files' interfaces. A file
/// named twice in one tap is read once, with a warning.
fn checked_taps(args: &AnalyzeArgs) -> Result<Vec<path::Tap>, Failure> {
    if args.taps.is_empty() {
        return Ok(Vec::new());
    }
    if args.taps.len() < 2 {
        return Err(Failure::Usage(
            "--tap: a path needs two taps or more (--tap host=host.pcap --tap leaf=leaf.pcap)".into(),
        ));
    }
    for (i, tap) in args.taps.iter().enumerate() {
        if args.taps.iter().skip(i + 1).any(|t| t.name == tap.name) {
            return Err(Failure::Usage(format!("--tap: two taps are named {:?}", tap.name)));
        }
    }
    if let Some((name, _)) = args.tap_offsets.iter().find(|(name, _)| !args.taps.iter().any(|t| t.name == *name)) {
        return Err(Failure::Usage(format!("--tap-offset {name}: no tap has that name")));
    }
    args.taps.iter().map(checked_tap).collect()
}

/// One tap, its files read once each and able to be read twice, its interface theirs.
fn checked_tap(tap: &path::Tap) -> Result<path::Tap, Failure> {
    let mut files: Vec<PathBuf> = Vec::with_capacity(tap.files.len());
    for file in &tap.files {
        if files.iter().any(|f| same_file(f, file)) {
            eprintln!("rocescope: warning: --tap {}: {} is named twice; it is read once", tap.name, file.display());
            continue;
        }
        if let Some(wanted) = &tap.interface {
            check_interface(tap, file, wanted)?;
        }
        files.push(file.clone());
    }
    Ok(path::Tap { files, ..tap.clone() })
}

/// Do `a` and `b` name one file (compared as given where either cannot be resolved)?
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// A usage error when `file` has no interface `wanted`, naming those it has, or cannot be
/// opened while the name with `#IFACE` is a file (which a trailing `#` would read). Any other
/// file that cannot be opened is left to the reading, which names it.
fn check_interface(tap: &path::Tap, file: &std::path::Path, wanted: &str) -> Result<(), Failure> {
    let whole = format!("{}#{wanted}", file.display());
    let hint = match std::path::Path::new(&whole).is_file() {
        true => format!(" (to read the file {whole}, end the tap with '#': {}={whole}#)", tap.name),
        false => String::new(),
    };
    let problem = match look_up_interface(file, wanted) {
        Ok(InterfaceLookup::Found) => return Ok(()),
        Err(_) if hint.is_empty() => return Ok(()),
        Err(e) => e.to_string(),
        Ok(InterfaceLookup::Missing { has }) => format!(
            "{} has no interface {wanted:?}; its interfaces: {}",
            file.display(),
            if has.is_empty() { "none described".to_string() } else { has.join(", ") }
        ),
    };
    Err(Failure::Usage(format!("--tap {}={}#{wanted}: {problem}{hint}", tap.name, file.display())))
}

/// The options of the path traced over `--tap`'s taps (see [`crate::analyze::path`]).
fn path_options(args: &AnalyzeArgs) -> path::Options {
    path::Options {
        window_ns: args.path_window_us.saturating_mul(1_000),
        offsets: args.tap_offsets.clone(),
        threads: args.threads as usize,
    }
}

/// The per-packet table `--out DIR --packets` writes.
#[cfg(feature = "tables")]
fn packet_table(args: &AnalyzeArgs) -> Result<Option<PacketTable>, Failure> {
    let create = |dir: &std::path::Path| {
        PacketTable::create(dir)
            .map_err(|e| Failure::Output(format!("cannot write the packet table into {}: {e}", dir.display())))
    };
    args.out.as_deref().filter(|_| args.packets).map(create).transpose()
}

/// A build without tables has no per-packet table (and refuses `--out`).
#[cfg(not(feature = "tables"))]
fn packet_table(_: &AnalyzeArgs) -> Result<Option<PacketTable>, Failure> {
    Ok(None)
}

/// Where `analyze` reports, with what the report joins with the analysis.
fn reporting_of<'a>(args: &'a AnalyzeArgs, joined: &'a Joined) -> Reporting<'a> {
    Reporting {
        joined,
        json: args.json,
        color: args.color.enabled(),
        out: args.out.as_deref(),
        html: args.html.as_deref(),
        trace: args.trace.as_deref(),
        fail_on: args.fail_on,
    }
}

/// The analysis and the per-packet table, which consume frames in order.
struct Analysis {
    analyzer: Analyzer,
    table: Option<TableFeed>,
    /// The analysis is saved once the inputs end, to go on later.
    goes_on: bool,
}

/// The per-packet table, fed each frame once its verdict is final; its decoder computes the
/// ICRC while decoding (the analysis thread's frames are decoded again for the table).
struct TableFeed {
    ordered: InOrder<PacketTable>,
    decoder: Decoder,
}

impl Analyse for Analysis {
    fn analyzer(&mut self) -> &mut Analyzer {
        &mut self.analyzer
    }

    fn wants_bytes(&self) -> bool {
        self.table.is_some()
    }

    fn goes_on(&self) -> bool {
        self.goes_on
    }

    /// A frame's bytes, for the table.
    fn bytes(&mut self, frame: &FrameSummary, raw: Raw<'_>) -> io::Result<()> {
        let Some(t) = &mut self.table else { return Ok(()) };
        let packet = t.decoder.decode(&raw.record);
        let input = InputFrame { number: frame.number.get(), file: raw.file, record: raw.record };
        t.ordered.take(&mut self.analyzer, &input, &packet, true, &t.decoder)
    }
}

impl Analysis {
    /// Ends the analysis and writes the last rows.
    fn finish(mut self) -> io::Result<Analysis> {
        match &mut self.table {
            Some(t) => t.ordered.finish(&mut self.analyzer, &t.decoder)?,
            None => self.analyzer.finish(),
        }
        Ok(self)
    }
}
