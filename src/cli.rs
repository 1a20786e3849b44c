//! The command line (clap). Help texts are written to read like a manual page.

use std::path::PathBuf;

use crate::analyze::Config;
use crate::analyze::fabric::policy::FabricPolicy;
use crate::analyze::roce::analyzer::head::{HEAD_FRAMES, MAX_HEAD_FRAMES};
use crate::analyze::roce::congestion::CongestionConfig;
use crate::analyze::roce::flow::sequence::ReorderConfig;
use crate::analyze::roce::wide::policy::Policy;
use crate::commands::exit::help_section;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::analyze::finding::Severity;
use crate::analyze::path::{self, Tap};
use crate::decode::{Decoder, TimeSource, UET_IP_PROTOCOL};
use crate::filter::{Filter, Only, OpcodeSelector};
use crate::generate::bench::BenchKind;
use crate::output::packet::TimeFormat;

/// An enum of the library that the command line takes by name. The library types stay free of
/// clap: this trait and [`choice`] make them arguments.
trait Choice: Copy + Send + Sync + 'static {
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
    fn help(self) -> &'static str {
        ""
    }
    /// Other names taken for the value (tshark's spellings).
    fn aliases(self) -> &'static [&'static str] {
        &[]
    }
}

/// Makes a library enum with `ALL` and `name()` a [`Choice`]; a method named after it gives
/// each value's help.
macro_rules! choice {
    ($t:ty $(, $help:ident)? $(; aliases $aliases:ident)?) => {
        impl Choice for $t {
            const ALL: &'static [Self] = &<$t>::ALL;
            fn name(self) -> &'static str {
                <$t>::name(self)
            }
            $(fn help(self) -> &'static str {
                self.$help()
            })?
            $(fn aliases(self) -> &'static [&'static str] {
                self.$aliases()
            })?
        }
    };
}

choice!(Only, describe);
choice!(TimeFormat, describe; aliases tshark_names);
choice!(Severity, describe);
choice!(BenchKind, describe);
choice!(TimeSource, describe);

/// The value parser of a [`Choice`]: its names, with their help, are the possible values.
fn choice<T: Choice>() -> impl TypedValueParser<Value = T> {
    let values = T::ALL.iter().map(|v| PossibleValue::new(v.name()).help(v.help()).aliases(v.aliases()));
    PossibleValuesParser::new(values).map(|name| {
        let named = |v: &T| v.name() == name || v.aliases().contains(&name.as_str());
        T::ALL.iter().copied().find(named).expect("clap admits only the possible values")
    })
}

#[derive(Debug, Parser)]
#[command(
    name = "rocescope",
    version,
    about = "Analyze RoCE / RoCEv2 packet captures",
    long_about = "rocescope decodes RoCE (RDMA over Converged Ethernet) packet captures: Ethernet with any \
VLAN/QinQ tags, Linux cooked and raw-IP captures, native InfiniBand (link type 247, ERF), IPv4 and IPv6, \
RoCEv2 on UDP 4791 and RoCEv1, ERSPAN I/II/III, VXLAN, GRE, NVIDIA Spectrum (GRE 0x8949) and MPLS mirror \
encapsulations, Arista timestamp headers, Metamako trailers, VN-Tag and E-tag, every InfiniBand transport \
header, RDMA CM messages, PFC and PAUSE frames. It verifies the ICRC of every RoCE packet.\n\n\
Captures may be pcap or pcapng, optionally gzip- or zstd-compressed; the format is recognised by \
its magic number. A file named '-' is standard input. Several files are merged by timestamp into \
one stream of numbered frames.",
    after_help = help_section(&[0, 1, 2, 3, 4])
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List and decode every frame, like Wireshark's packet list
    #[command(
        long_about = "List every frame of the captures, one line each: number, time, source, destination, \
protocol, length and a summary of the RoCE headers with the ICRC verdict. -V prints the full decode \
tree instead, -x adds a hex dump, and --format jsonl writes one JSON object per frame (schema in \
docs/jsonl-schema.md).",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope packets capture.pcapng\n",
                "    rocescope packets -V -c 1 --opcode 0x81 capture.pcap\n",
                "    rocescope packets --only errors --qp 0x12a capture.pcap.gz\n",
                "    rocescope packets --format jsonl capture.pcap | jq 'select(.icrc == \"bad\")'\n\n",
            ),
            help_section(&[0, 1, 2, 3])
        )
    )]
    Packets(PacketsArgs),
    /// Reconstruct per-QP flows and explain loss, retransmission, congestion, PFC and marking
    #[command(
        long_about = "Analyse the captures in one streaming pass: per-QP flows (one direction of one QP) \
paired into connections, each direction's requests and READ responses sequenced apart, PSN gaps, \
late arrivals (reordering) and retransmit episodes with their trigger (NAK, RNR NAK, re-issued READ, \
timeout, or no NAK in the capture), reused QP numbers, mirror copies, \
ECN marks and CNPs, PFC and PAUSE per source and priority with pause storms, DSCP/PCP/ECN marking \
against the fabric's policy, and findings with their likely cause and first action. Prints a \
summary; --json prints the report as JSON (docs/report-schema.md); --out writes it as files. \
Definitions of every counter are in docs/analysis.md.",
        after_help = format!(
            "{}{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope analyze capture.pcap\n",
                "    rocescope analyze --json tap1.pcapng tap2.pcapng > report.json\n",
                "    rocescope analyze --link-speed 400G --policy fabric.toml --fail-on warning capture.pcap\n\n",
            ),
            policy_file_help(),
            help_section(&[0, 1, 2, 3, 4])
        )
    )]
    Analyze(AnalyzeArgs),
    /// Merge the states of a capture's files analysed apart into the report of one run of them all
    #[command(
        long_about = "Merge the saved analyses of the parts of a capture (rotated files, or a capture cut at \
any frame), each made on its own with `analyze FILE --state PART.state`, into the report one `analyze` of \
every file gives, key by key: the parts are put in the order of their first frames' times whatever the \
order they are named in, and each part's first frames, which its state keeps, are analysed again after \
the parts before it; of a longer part, what its own analysis did after them is added where the two \
analyses have met by then, and the merge is refused otherwise, with the reason (it is exact or not \
made). With --state the merged analysis is saved, to merge again (merges run as a tree). \
docs/scale.md says more.",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    for f in cap_*.pcap; do rocescope analyze -q \"$f\" --state \"$f.state\" > /dev/null & done; wait\n",
                "    rocescope merge cap_*.pcap.state --json > report.json\n",
                "    rocescope merge a.state b.state --state ab.state && rocescope merge ab.state c.state\n\n",
            ),
            help_section(&[0, 1, 2, 3, 4])
        )
    )]
    Merge(MergeArgs),
    /// Check the QoS configuration of a fabric's hosts and switches against each other
    #[command(
        long_about = "Read the QoS configuration of the fabric's hosts and switches, NAME=FILE each (NAME a \
host's IP address as its RoCE packets carry it, or a switch's name; several files per NAME; each file's \
format recognised by its content: mlnx_qos, show_gids, NCCL settings, mlxconfig, the NIC's ECN sysfs, \
ip link; SONiC config_db.json, Cumulus `nv config show -o yaml`, Arista EOS running-config), derive the \
marking policy they give with the file and line of each value, and check them against each other: \
DSCP maps, PFC priorities, ECN marking and thresholds, the CNPs' class, NCCL_IB_TC, the GID index, \
trust, MTU and the PFC watchdog. `analyze --config` reads the same files beside a capture and checks the \
capture's marking too. docs/fabric.md says more.",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope fabric 10.0.0.1=host1-qos.txt 10.0.0.1=host1-nccl.env leaf1=leaf1.yaml\n",
                "    rocescope fabric --json --fail-on error 10.0.0.1=host1.txt leaf1=config_db.json\n\n",
            ),
            help_section(&[0, 2, 3, 4])
        )
    )]
    Fabric(FabricArgs),
    /// Write the frames into a pcapng file with the analysis as packet comments, for Wireshark
    #[command(
        long_about = "Write every input frame, unchanged, into one pcapng file, with a packet comment on \
each frame the analysis has something to say about (a record of the per-frame analysis fields that are \
set, 'rocescope/1 analysis.flow=7 analysis.seq_class=gap analysis.gap=1 analysis.missing_psns=3', the \
findings that name the frame, and short phrases: 'rocescope.analysis.gap missing_psns=3: …', \
'rocescope.icrc.status=bad: …') and a section comment that summarises the findings. In Wireshark, \
frame.comment contains \"rocescope.analysis.retransmission\" then finds every retransmission; with \
the plugin of `rocescope wireshark-plugin` the records are fields (rocescope.analysis.retransmission) \
and expert items (docs/wireshark-plugin.md).",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope annotate capture.pcap -o annotated.pcapng\n",
                "    tshark -r annotated.pcapng -Y 'frame.comment contains \"rocescope.analysis.gap\"'\n\n",
            ),
            help_section(&[0, 1, 2, 3])
        )
    )]
    Annotate(AnnotateArgs),
    /// Print or install the Wireshark plugin that shows annotate's comments as fields
    #[command(
        long_about = "Print the Lua post-dissector that reads the records `rocescope annotate` writes in \
packet comments and shows them in Wireshark as fields named as rocescope's own \
(rocescope.analysis.gap, rocescope.analysis.missing_psns, rocescope.icrc.status, …) and the findings \
that name a frame as expert items (error, warning, note). --install writes it into the personal Lua \
plugin folder instead (~/.local/lib/wireshark/plugins; %APPDATA%\\Wireshark\\plugins on Windows) and \
prints where. docs/wireshark-plugin.md says more.",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope wireshark-plugin > rocescope.lua\n",
                "    tshark -X lua_script:rocescope.lua -r annotated.pcapng -Y rocescope.analysis.gap\n",
                "    rocescope wireshark-plugin --install\n\n",
            ),
            help_section(&[0, 2, 3])
        )
    )]
    WiresharkPlugin(WiresharkPluginArgs),
    /// Write the frames and the report's tables as a Parquet dataset for Spark, DuckDB, Trino
    #[command(
        long_about = "Write the captures as a Hive-partitioned Parquet dataset that the engines a fabric team \
already runs (Spark, DuckDB, Trino, ClickHouse) read directly: DIR/frames/capture=NAME/date=YYYY-MM-DD/ \
holds one row per frame, one column per field of the field registry (the name with '.' replaced by '_': \
infiniband_bth_psn), the analysis's per-frame fields included; DIR/flows, retransmit_episodes, findings, pfc, \
cnp_bursts, incast, uet_pdcs (with UET packets) and captures hold the report's tables, each under capture=NAME with the capture's time \
range as columns. Files are zstd-compressed, a row group of at most 1,048,576 rows each, sorted by time, the \
dataset's schema version in their metadata (docs/scale.md). Exporting a capture again replaces its \
partitions, and only its own.",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope export --dataset /data/roce tap1-*.pcapng\n",
                "    rocescope export --dataset /data/roce --capture-name rack12 -e frame.time_epoch -e infiniband.bth.psn cap.pcap\n",
                "    duckdb -c \"SELECT count(*) FROM read_parquet('/data/roce/frames/**/*.parquet', hive_partitioning = true)\"\n\n",
            ),
            help_section(&[0, 1, 2, 3])
        )
    )]
    Export(ExportArgs),
    /// Browse the frames in the terminal: packet list, decode tree, bytes, display filters
    #[command(
        long_about = "Open the captures in a full-screen terminal browser with Wireshark's three panes: the packet list (coloured like Wireshark's rules, with the analysis's flags), the selected frame's decode tree from the field registry (sections collapse and expand) and its bytes. `/` opens a display filter, checked as it is typed; `:` goes to a frame; `c`, `e` and `p` show the flows, the findings and PFC, `l` follows a QP as a ladder; `m` marks frames and `w` writes them into a file; `?` lists the keys (docs/browse.md). The first screen shows while the files are still indexed, with the progress in the status line. Reads capture files in place; compressed and piped input is kept in a temporary file as it is read. Needs a terminal."
    )]
    Browse(BrowseArgs),
    /// List every field by its display-filter name, type and base, like `tshark -G fields`
    #[command(long_about = "List the field registry, one field a line, tab-separated as `tshark -G fields` \
prints it: F, label, name, type, protocol, base, bitmask, description. The names are Wireshark's \
wherever Wireshark has the field; fields of rocescope's own are under rocescope.*. Use them with \
`packets -T fields -e NAME`. A PREFIX lists the fields whose names begin with it (`rocescope fields \
infiniband.bth`).")]
    Fields(FieldsArgs),
    /// Write the deterministic sample captures (the ones in samples/)
    #[command(long_about = "Write the sample captures that ship in samples/, built by rocescope's own \
deterministic frame generator (every run writes identical bytes). See docs/samples.md for what \
each scenario contains.")]
    Generate(GenerateArgs),
    /// Capture live from an interface and analyse as frames arrive (needs the `live` build)
    #[command(
        long_about = "Capture from an interface that receives RoCE traffic — the port a switch mirrors \
(SPAN or ERSPAN) to, or an RDMA device libpcap can sniff — and analyse every frame as it arrives with \
the engine of `analyze`: a rolling summary every --interval (flows' CE marks, CNPs, NAKs, PSN gaps, \
resends, pauses, and the packets libpcap lost), then the full report on Ctrl-C, at --duration or \
after --count frames. With -w the frames are also written to a capture file (rotated with -C or -G \
like tcpdump), and the final report equals `rocescope analyze` of that file. Needs a build with \
`--features live` (libpcap) and root or the CAP_NET_RAW and CAP_NET_ADMIN capabilities.",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope capture -i ens1f0 -w mirror.pcapng --duration 60s\n",
                "    rocescope capture -i ens1f0 --json --interval 5s | jq .\n",
                "    rocescope capture -i mlx5_0 -c 100000 -w rdma.pcap\n\n",
            ),
            help_section(&[0, 1, 2, 3, 4])
        )
    )]
    Capture(CaptureArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        long_about = "Print the completion script of SHELL on standard output, generated from the command \
line's own definition, so it completes every command, option and possible value of this build. \
Where to put it for each shell: README.md, \"Install\".",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope completions bash > ~/.local/share/bash-completion/completions/rocescope\n",
                "    rocescope completions zsh > ~/.zfunc/_rocescope\n",
                "    rocescope completions fish > ~/.config/fish/completions/rocescope.fish\n\n",
            ),
            help_section(&[0, 2, 3])
        )
    )]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), or write one page per command with --out
    #[command(
        long_about = "Print rocescope(1), the manual page of the command line, in roff on standard output \
(read it with `rocescope man | man -l -`). With --out DIR, write instead one page per command into \
DIR: rocescope.1 and rocescope-COMMAND.1 for each command (rocescope-analyze.1, …), for a man \
directory such as /usr/local/share/man/man1.",
        after_help = format!(
            "{}{}",
            concat!(
                "EXAMPLES:\n",
                "    rocescope man | man -l -\n",
                "    rocescope man --out /usr/local/share/man/man1\n\n",
            ),
            help_section(&[0, 2, 3])
        )
    )]
    Man(ManArgs),
}

/// Output format of `packets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PacketsFormat {
    /// Human-readable packet list (or decode tree with -V).
    Text,
    /// One JSON object per line, per frame.
    Jsonl,
}

#[derive(Debug, Args)]
pub struct PacketsArgs {
    /// Capture files (pcap or pcapng, optionally .gz or .zst); '-' reads standard input
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Print the full decode tree of every frame: each layer, each field with its meaning
    #[arg(short = 'V', long)]
    pub verbose: bool,

    /// Print a hex dump of every frame
    #[arg(short = 'x', long)]
    pub hex: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = PacketsFormat::Text)]
    pub format: PacketsFormat,

    /// One JSON object per frame, a line each: --format jsonl, spelt as the other commands
    /// spell JSON output
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// tshark's output format: `fields` prints the -e fields of every frame, one line each;
    /// `json` and `ek` print every field, or the -e ones, as tshark's -T json and -T ek do
    #[arg(short = 'T', value_enum, value_name = "FORMAT")]
    pub export: Option<ExportFormat>,

    /// A field to print with -T, by its display-filter name (repeatable; `rocescope fields`
    /// lists them)
    #[arg(short = 'e', value_name = "FIELD", id = "export_fields", requires = "export")]
    pub export_fields: Vec<String>,

    /// A -T fields option, as tshark's: header=y|n, separator=/t|/s|<char>, occurrence=f|l|a,
    /// aggregator=,|/s|<char>, quote=d|s|n (repeatable)
    #[arg(short = 'E', value_name = "OPTION=VALUE", requires = "export")]
    pub export_options: Vec<String>,

    /// Only frames that match this display filter, in Wireshark's syntax
    /// ('infiniband.bth.opcode == 17 && ip.dsfield.dscp != 26'; docs/display-filters.md)
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,

    #[command(flatten)]
    pub choice: FrameChoice,

    /// Only one class of frames
    #[arg(long, value_parser = choice::<Only>())]
    pub only: Option<Only>,

    /// Stop after showing N frames (at least 1)
    #[arg(short = 'c', long = "count", value_name = "N", value_parser = frame_count)]
    pub count: Option<u64>,

    /// Write each frame's output as soon as it is decided, as tshark's -l (always so on a
    /// terminal): for a capture read from a pipe (`tcpdump -w - | rocescope packets -l -`)
    #[arg(short = 'l', long = "line-buffered")]
    pub line_buffered: bool,

    /// Time column: since the capture's first frame (whatever the filters hide), since the
    /// previous frame listed, epoch seconds, or UTC
    #[arg(short = 't', long = "time", value_parser = choice::<TimeFormat>(), default_value = "relative")]
    pub time: TimeFormat,

    #[command(flatten)]
    pub ports: DecodePorts,

    #[command(flatten)]
    pub times: Times,

    /// Threads to use: 1 does everything on one thread; more read (and decompress)
    /// compressed and piped inputs ahead on a thread of their own. The output is the same
    /// for any number
    #[arg(long, value_name = "N", default_value_t = default_threads(), value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
}

#[derive(Debug, Args)]
pub struct AnnotateArgs {
    /// Capture files (pcap or pcapng, optionally .gz or .zst), merged by timestamp; '-' is stdin
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The annotated pcapng file to write
    #[arg(short = 'o', long = "output", value_name = "OUT.pcapng")]
    pub output: PathBuf,

    #[command(flatten)]
    pub analysis: AnalysisOptions,

    #[command(flatten)]
    pub times: Times,
}

#[derive(Debug, Args)]
pub struct WiresharkPluginArgs {
    /// Write it into the personal Lua plugin folder instead of printing it
    #[arg(long)]
    pub install: bool,
}

#[derive(Debug, Args)]
pub struct BrowseArgs {
    /// Capture files (pcap or pcapng, optionally .gz or .zst), merged by timestamp; '-' is stdin
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Open with this display filter applied (Wireshark's syntax; `/` changes it)
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,

    #[command(flatten)]
    pub analysis: AnalysisOptions,

    #[command(flatten)]
    pub times: Times,
}

/// tshark's `-T` output formats rocescope writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The -e fields of each frame, separated by tabs (or -E separator)
    Fields,
    /// One JSON array of the frames, each its layers and fields (or the -e fields)
    Json,
    /// Elasticsearch's bulk format: an index line, then the frame's fields on one line
    Ek,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Capture files (pcap or pcapng, optionally .gz or .zst), merged by timestamp; '-' is stdin
    #[arg(required_unless_present_any = ["resume", "taps"], value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// A tap on one path, NAME=FILE (rotated files of one capture: NAME=FILE,FILE,...; one
    /// interface of a pcapng file that holds several taps: NAME=FILE#IFACE, by its name or
    /// index; a file whose name holds '#' ends with one: NAME=run#3.pcap#); give two or more,
    /// in the order a request passes them, from the requester's side to the responder's. The
    /// report, of every packet once, gains a `path` section: each tap's clock, and where packets
    /// were lost, marked CE, re-marked or delayed. Not with FILE arguments
    #[arg(long = "tap", value_name = "NAME=FILE", value_parser = parse_tap, conflicts_with_all = ["files", "resume", "state", "packets", "count"])]
    pub taps: Vec<Tap>,

    /// With --tap: how much later than at one tap a packet's copy may be at the next, in
    /// microseconds
    #[arg(long, value_name = "US", default_value_t = path::DEFAULT_WINDOW_US, requires = "taps")]
    pub path_window_us: u64,

    /// With --tap: a tap's clock minus the first tap's, in nanoseconds, instead of the offset
    /// estimated from the packets both see (repeat for more taps)
    #[arg(long = "tap-offset", value_name = "NAME=NS", value_parser = parse_tap_offset, requires = "taps")]
    pub tap_offsets: Vec<(String, i64)>,

    /// A host's counters before and after the capture, HOST=BEFORE,AFTER (HOST its IP address
    /// in the capture; each file the output of `ethtool -S IFACE` and of the loop over the RDMA
    /// device's hw_counters, with an optional `time: RFC3339` line; at most 16 MiB): every
    /// counter's delta beside what the capture saw of the same thing (repeat for more hosts)
    #[arg(long = "counters", value_name = "HOST=BEFORE,AFTER", value_parser = parse_counters)]
    pub counters: Vec<CounterFiles>,

    /// With --counters: the capture is of HOST's own link (a mirror of its switch port, a tap on
    /// its cable), so HOST's received pause counters pair with the pause frames of its link
    /// partner even when the capture holds no pause frame from HOST's MAC (which shows the link
    /// otherwise; repeat for more hosts)
    #[arg(long = "link", value_name = "HOST", requires = "counters")]
    pub links: Vec<std::net::IpAddr>,

    /// A switch's counters before and after the capture, NAME=BEFORE,AFTER (each file the
    /// output of SONiC's `show pfc counters` and `show queue counters`, with an optional `time:
    /// RFC3339` line; at most 16 MiB): every port's PFC frames and every queue's packets and
    /// drops, with their deltas (repeat for more switches)
    #[arg(long = "switch-counters", value_name = "NAME=BEFORE,AFTER", value_parser = parse_switch_counters)]
    pub switch_counters: Vec<SwitchCounterFiles>,

    #[command(flatten)]
    pub accounts: HostAccountFiles,

    /// A device's QoS configuration, NAME=FILE (NAME a host's IP address in the capture, or a
    /// switch's name; repeat for more files and devices; formats in `rocescope fabric --help`):
    /// the marking policy comes from them, with the file and line of each value, and they are
    /// checked against each other and the capture
    #[arg(long = "config", value_name = "NAME=FILE", value_parser = parse_device_file)]
    pub configs: Vec<DeviceFile>,

    /// Print the report as one JSON document on stdout instead of the summary
    #[arg(long)]
    pub json: bool,

    /// Analyse only the frames that match this display filter, in Wireshark's syntax (one
    /// host pair, one QP, …; rocescope.analysis.* fields cannot be used here)
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,

    /// Also write the report into DIR (created if missing): report.json, index.html, and the
    /// flows, retransmit episodes, findings and PFC tables as CSV and Parquet
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page (findings, flows, charts)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Also write the analysis's timeline as a Chrome trace (Perfetto, chrome://tracing): flows,
    /// retransmit episodes, pauses and counters in µs since the capture's first frame
    /// (docs/trace.md); `-` writes it on stdout instead of the summary
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// No progress bar (it is shown on standard error only when that is a terminal)
    #[arg(long, short)]
    pub quiet: bool,

    /// Colour the summary's findings: auto (when standard output is a terminal and NO_COLOR
    /// is not set), always or never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColourChoice::Auto)]
    pub color: ColourChoice,

    /// With --out: also write a per-packet table (packets.csv, packets.parquet)
    #[arg(long, requires = "out")]
    pub packets: bool,

    /// Also save the analysis, unfinished, into FILE once the inputs end, for a later run to
    /// go on from with --resume (the capture's next rotated files, say)
    #[arg(long, value_name = "FILE", conflicts_with = "packets")]
    pub state: Option<PathBuf>,

    /// With --state: how many of its first frames the saved analysis keeps for `rocescope
    /// merge`, which analyses them again after the parts before it (about 70 bytes each while
    /// analysing, 5 in the state); a part with more merges where the two analyses have met by
    /// the end of those frames
    #[arg(long, value_name = "N", requires = "state", default_value_t = HEAD_FRAMES, value_parser = clap::value_parser!(u64).range(1..=MAX_HEAD_FRAMES as u64).map(|n| n as usize))]
    pub keep_frames: usize,

    /// Go on from the analysis a --state saved: the files continue that capture (their frames
    /// numbered after its frames) and the report covers every file, as one run of them all
    /// would; the analysis options and -Y must be those it was saved with. With no FILE, the
    /// saved analysis's report
    #[arg(long, value_name = "STATE", conflicts_with = "packets")]
    pub resume: Option<PathBuf>,

    // --qp, --ip and --opcode: analyse only the frames `packets` would show (not with --state
    // or --resume, whose saved analysis records -Y only)
    #[command(flatten)]
    pub choice: FrameChoice,

    /// Analyse only the first N frames of the inputs (in time order; at least 1)
    #[arg(short = 'c', long = "count", value_name = "N", value_parser = frame_count, conflicts_with_all = ["state", "resume"])]
    pub count: Option<u64>,

    #[command(flatten)]
    pub analysis: AnalysisOptions,

    #[command(flatten)]
    pub times: Times,

    /// Exit with status 4 when a finding of this severity or worse is found
    #[arg(long, value_parser = choice::<Severity>(), value_name = "SEVERITY")]
    pub fail_on: Option<Severity>,

    /// Threads to use: 1 does everything on one thread; with more, one capture file (not
    /// compressed, without --packets) is read and analysed by all N at once, each reading a part
    /// of the file and analysing the host pairs given to it; several files are read by one
    /// thread beside N analysing; other inputs are decoded on one thread and analysed on
    /// another (3 or more also read compressed and piped inputs ahead). The output is the same
    /// for any number
    #[arg(long, value_name = "N", default_value_t = default_threads(), value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The states to merge, saved by `analyze --state` (or by merge --state), in any order
    #[arg(required = true, value_name = "STATE")]
    pub states: Vec<PathBuf>,

    /// Print the report as one JSON document on stdout instead of the summary
    #[arg(long)]
    pub json: bool,

    /// Also write the report into DIR (created if missing): report.json, index.html, and the
    /// flows, retransmit episodes, findings and PFC tables as CSV and Parquet
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page (findings, flows, charts)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Also save the merged analysis, unfinished, into FILE: a state to merge again, or to go
    /// on from with `analyze --resume`
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,

    /// Colour the summary's findings: auto (when standard output is a terminal and NO_COLOR
    /// is not set), always or never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColourChoice::Auto)]
    pub color: ColourChoice,

    /// Exit with status 4 when a finding of this severity or worse is found
    #[arg(long, value_parser = choice::<Severity>(), value_name = "SEVERITY")]
    pub fail_on: Option<Severity>,

    /// The QP tables the states were saved with (their owners join the report), and NCCL logs
    #[command(flatten)]
    pub accounts: HostAccountFiles,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Capture files (pcap or pcapng, optionally .gz or .zst), merged by timestamp; '-' is stdin
    #[arg(required_unless_present = "resume", value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// The dataset's directory (created if missing)
    #[arg(long, value_name = "DIR")]
    pub dataset: PathBuf,

    /// The capture's name, its partition in every table (default: the first file's name
    /// without its extensions)
    #[arg(long, value_name = "NAME")]
    pub capture_name: Option<String>,

    /// A field to write as a column of the frames, by its display-filter name (repeatable;
    /// the default set is in docs/scale.md; frame.number and frame.time_epoch, with the exact
    /// time as frame_time_epoch_ns, are always there)
    #[arg(short = 'e', value_name = "FIELD")]
    pub fields: Vec<String>,

    /// Export and analyse only the frames that match this display filter (Wireshark's syntax;
    /// rocescope.analysis.* fields cannot be used here)
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,

    /// No progress bar (it is shown on standard error only when that is a terminal)
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub times: Times,

    /// Threads to use: 1 reads, decodes, fills the frames' columns and analyses on one thread;
    /// more do the analysis on a second (the files are written on a thread of their own)
    #[arg(long, value_name = "N", default_value_t = default_threads(), value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,

    /// Also save the analysis, unfinished, into FILE once the inputs end, with where the
    /// capture's frames stand in the dataset, for a later export to go on from with --resume
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,

    /// Go on from the export a --state saved: the files continue that capture, their frames
    /// are added to its partition (and the rows the saved run could not settle written again
    /// with their final verdicts), and the per-run tables cover every file; the options, -Y,
    /// -e and --capture-name must be those it was saved with
    #[arg(long, value_name = "STATE")]
    pub resume: Option<PathBuf>,

    #[command(flatten)]
    pub analysis: AnalysisOptions,
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Interface to capture on (see `ip link`; an RDMA device where libpcap supports it)
    #[arg(short = 'i', long, value_name = "IFACE")]
    pub interface: String,

    /// Analyse only the frames that match this display filter (Wireshark's syntax); -w still
    /// writes every captured frame
    #[arg(short = 'Y', long = "display-filter", value_name = "FILTER")]
    pub display_filter: Option<String>,

    /// BPF filter; the default keeps RoCEv2 (UDP 4791), RoCEv1, MAC control (PFC, PAUSE),
    /// GRE (ERSPAN) and VXLAN, tagged or not
    #[arg(short = 'f', long, value_name = "EXPRESSION")]
    pub filter: Option<String>,

    /// Bytes captured of each frame
    #[arg(short = 's', long, value_name = "BYTES", default_value_t = 65535)]
    pub snaplen: u32,

    /// Do not put the interface into promiscuous mode
    #[arg(long)]
    pub no_promisc: bool,

    /// Also write the frames to FILE: pcapng when the name ends in .pcapng, else pcap with
    /// nanosecond timestamps
    #[arg(short = 'w', long, value_name = "FILE")]
    pub write: Option<PathBuf>,

    /// With -w, start a new file after MB megabytes (1,000,000 bytes): FILE, FILE.1, FILE.2, …
    #[arg(short = 'C', long, value_name = "MB", requires = "write", value_parser = clap::value_parser!(u64).range(1..))]
    pub file_size: Option<u64>,

    /// With -w, start a new file every SECONDS
    #[arg(short = 'G', long, value_name = "SECONDS", requires = "write", value_parser = clap::value_parser!(u64).range(1..))]
    pub rotate_seconds: Option<u64>,

    /// Stop after this long: seconds (8, 0.5) as tcpdump and tshark take them, or with a unit (30s, 5m, 1h)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,

    /// Stop after N frames (at least 1)
    #[arg(short = 'c', long, value_name = "N", value_parser = frame_count)]
    pub count: Option<u64>,

    /// Time between two rolling summaries: seconds (2, 0.5) or with a unit (500ms, 1m)
    #[arg(long, value_name = "DURATION", default_value = "1", value_parser = parse_duration)]
    pub interval: std::time::Duration,

    /// One JSON object per interval instead of a text line, and the final report as JSON
    #[arg(long)]
    pub json: bool,

    /// Serve the rolling counters for Prometheus at http://ADDR/metrics (e.g. 0.0.0.0:9464),
    /// updated every interval
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,

    /// Exit with status 4 when a finding of this severity or worse is found
    #[arg(long, value_parser = choice::<Severity>(), value_name = "SEVERITY")]
    pub fail_on: Option<Severity>,

    /// With -w FILE: snapshot the counters of RDMA device DEV (its ports' hw_counters and
    /// counters, its network device's statistics) at the start and the end, into
    /// FILE.counters-before.txt and FILE.counters-after.txt, for analyze --counters
    #[arg(long = "counters", value_name = "DEV", requires = "write")]
    pub counters: Option<String>,

    /// Where sysfs is mounted, for --counters and for the RDMA device and port that label the
    /// --metrics series (a copy of its tree, in tests)
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub sysfs_root: PathBuf,

    /// With -w FILE: take this host's QP table at the start and the end, into
    /// FILE.qps-before.txt and FILE.qps-after.txt, for analyze --qps
    #[arg(long = "qps", requires = "write")]
    pub qps: bool,

    /// With --qps: the command that prints the QP table (its words split at spaces, run
    /// without a shell)
    #[arg(long = "qps-cmd", value_name = "CMD", default_value = "rdma -j -d resource show qp", requires = "qps")]
    pub qps_cmd: String,

    #[command(flatten)]
    pub analysis: AnalysisOptions,

    #[command(flatten)]
    pub times: Times,
}

/// Frames chosen by QP, opcode and address, shared by `packets` and `analyze`.
#[derive(Debug, Args)]
pub struct FrameChoice {
    /// Only frames of this QP: BTH destination QP, DETH source QP, or a QPN in a CM message
    /// (decimal or 0x-hex; repeatable)
    #[arg(long = "qp", value_name = "QPN", value_parser = crate::filter::parse_qpn)]
    pub qps: Vec<u32>,

    /// Only RoCE packets with this opcode: a number (0x06) or part of a name (WRITE, rc_ack)
    /// (repeatable)
    #[arg(long = "opcode", value_name = "OPCODE")]
    pub opcodes: Vec<OpcodeSelector>,

    /// Only frames from or to this IP address (or RoCEv1 GID) (repeatable)
    #[arg(long = "ip", value_name = "ADDR")]
    pub ips: Vec<std::net::IpAddr>,
}

impl FrameChoice {
    /// The frames chosen, with `only` a class of them.
    pub fn filter(&self, only: Option<Only>) -> Filter {
        Filter { qps: self.qps.clone(), opcodes: self.opcodes.clone(), ips: self.ips.clone(), only }
    }

    /// Was a choice made?
    pub fn chooses(&self) -> bool {
        !(self.qps.is_empty() && self.opcodes.is_empty() && self.ips.is_empty())
    }
}

/// Which times the frames have, shared by `packets`, `analyze`, `export`, `annotate`,
/// `browse` and `capture`.
#[derive(Debug, Args)]
pub struct Times {
    /// Frame times: the capture file's, or the hardware timestamps devices on the way put in
    /// the frames (used only when every frame has one, or, capturing live, where a frame has
    /// one; docs/decoding.md)
    #[arg(long, value_parser = choice::<TimeSource>(), default_value = "capture", value_name = "SOURCE")]
    pub time_source: TimeSource,
}

/// How frames are analysed, shared by `analyze` and `capture`.
#[derive(Debug, Args)]
pub struct AnalysisOptions {
    /// Link speed for PFC pause quanta (512 bit times each), in Gb/s: 10G, 25G, 40G, 50G, 100G, 200G,
    /// 400G, 800G
    #[arg(long, value_name = "SPEED", default_value_t = defaults().link_gbps, value_parser = parse_link_speed)]
    pub link_speed: u64,

    /// A priority paused without a break for at least this long is a pause storm
    #[arg(long, value_name = "MS", default_value_t = in_units(defaults().pfc_storm_ns, MS))]
    pub pfc_storm_ms: u64,

    /// Copies of a packet at most this far apart, from another tap, are mirror duplicates
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().mirror_window_ns, US))]
    pub mirror_window_us: u64,

    /// A PSN a gap skipped that arrives at most this long after the gap is a late arrival
    /// (reordering), not a retransmission, unless a resend had begun
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().reorder.window_ns, US))]
    pub reorder_window_us: u64,

    /// Where the capture ends before the copies after a NAK can tell: a copy of the NAKed PSN
    /// this long after the NAK is a resend, an earlier one was late
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().reorder.nak_reaction_ns, US))]
    pub nak_reaction_us: u64,

    /// In a mirror that sees every packet twice, byte-identical copies at most this far apart
    /// are one packet
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().span_window_ns, US))]
    pub span_window_us: u64,

    /// A flow idle this long whose next PSN cannot be a retransmission is a new connection on
    /// a reused QP number
    #[arg(long, value_name = "MS", default_value_t = in_units(defaults().qp_reuse_idle_ns, MS))]
    pub qp_reuse_idle_ms: u64,

    /// A resend with no NAK before it is a timeout only after at least this much silence, or
    /// when a PFC pause on its priority held the sender within this time before it (else
    /// `no_nak`); a packet after such a silence, or as late as this after its match, is a
    /// resend, not another tap's copy
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().min_ack_timeout_ns, US))]
    pub min_ack_timeout_us: u64,

    /// CNPs to a flow less than this apart are one burst; the width of the windows its data
    /// rate is measured in before and after a burst, and over which it recovers
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().congestion.window_ns, US))]
    pub cc_window_us: u64,

    /// How long after a burst's first CNP the rate after it is measured (the sender's
    /// reaction time)
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().congestion.delay_ns, US))]
    pub cc_delay_us: u64,

    /// A median recovery after CNPs slower than this is slow (finding DCQCN_SLOW_RECOVERY)
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().congestion.recovery_ns, US))]
    pub cc_recovery_us: u64,

    /// A p99 completion time of messages of at most 64 KiB above this is high (finding
    /// HIGH_TAIL_LATENCY)
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().congestion.fct_p99_ns, US))]
    pub fct_p99_us: u64,

    /// A receiver's fan-in counts the senders with data packets to it in this last window
    #[arg(long, value_name = "US", default_value_t = in_units(defaults().congestion.incast_window_ns, US))]
    pub incast_window_us: u64,

    /// A fan-in of at least this many senders is incast (finding INCAST)
    #[arg(long, value_name = "N", default_value_t = defaults().congestion.incast_senders as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub incast_senders: u64,

    /// Expected DSCP of management packets (QP 0 and 1: MADs, RDMA CM); not checked by default
    #[arg(long, value_name = "DSCP", value_parser = clap::value_parser!(u8).range(0..64))]
    pub cm_dscp: Option<u8>,

    /// Track at most this many flows; packets of further flows are counted in the capture-wide
    /// totals only, and the report says how many there were (finding LIMITS_REACHED)
    #[arg(long, value_name = "N", default_value_t = defaults().max_flows)]
    pub max_flows: usize,

    /// Marking policy from a TOML file (see below); the flags override it
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    #[arg(long, help = format!("Expected DSCP of RoCE data (default {}, or the policy file's)", Policy::default().data_dscp), value_name = "DSCP", value_parser = clap::value_parser!(u8).range(0..64))]
    pub data_dscp: Option<u8>,

    #[arg(long, help = format!("Expected DSCP of CNPs (default {}, or the policy file's)", Policy::default().cnp_dscp), value_name = "DSCP", value_parser = clap::value_parser!(u8).range(0..64))]
    pub cnp_dscp: Option<u8>,

    #[arg(long, help = format!("Expected 802.1p priority of VLAN-tagged data (default {}, or the policy file's)", Policy::default().data_pcp), value_name = "PCP", value_parser = clap::value_parser!(u8).range(0..8))]
    pub data_pcp: Option<u8>,

    #[arg(long, help = format!("Expected 802.1p priority of VLAN-tagged CNPs (default {}, or the policy file's)", Policy::default().cnp_pcp), value_name = "PCP", value_parser = clap::value_parser!(u8).range(0..8))]
    pub cnp_pcp: Option<u8>,

    #[arg(long, help = format!("The priority PFC may pause (default {}, or the policy file's)", Policy::default().lossless_priority), value_name = "PRIORITY", value_parser = clap::value_parser!(u8).range(0..8))]
    pub lossless_priority: Option<u8>,

    /// Do not require RoCE data to be ECN-capable
    #[arg(long)]
    pub allow_not_ect: bool,

    #[command(flatten)]
    pub ports: DecodePorts,
}

impl AnalysisOptions {
    /// The marking policy: defaults, then the policy file, then the fabric's configurations'
    /// policy (`--config`), then the flags.
    fn policy(&self, fabric: Option<&FabricPolicy>) -> Result<Policy, String> {
        let mut p = match &self.policy {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
                toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.message()))?
            }
            None => Policy::default(),
        };
        if let Some(fabric) = fabric {
            fabric.apply_to(&mut p);
        }
        p.data_dscp = self.data_dscp.unwrap_or(p.data_dscp);
        p.cnp_dscp = self.cnp_dscp.unwrap_or(p.cnp_dscp);
        p.data_pcp = self.data_pcp.unwrap_or(p.data_pcp);
        p.cnp_pcp = self.cnp_pcp.unwrap_or(p.cnp_pcp);
        p.lossless_priority = self.lossless_priority.unwrap_or(p.lossless_priority);
        p.require_ect &= !self.allow_not_ect;
        p.cm_dscp = self.cm_dscp.or(p.cm_dscp);
        Ok(p)
    }

    /// The analysis's configuration; an error names the policy file that cannot be used.
    pub fn config(&self) -> Result<Config, String> {
        self.config_with(None)
    }

    /// The analysis's configuration, its marking policy given by the fabric's configurations
    /// where `fabric` is (`analyze --config`) and no flag says otherwise.
    pub fn config_with(&self, fabric: Option<&FabricPolicy>) -> Result<Config, String> {
        Ok(Config {
            link_gbps: self.link_speed,
            pfc_storm_ns: ns(self.pfc_storm_ms, MS),
            mirror_window_ns: ns(self.mirror_window_us, US),
            policy: self.policy(fabric).map_err(|e| format!("policy file {e}"))?,
            max_flows: self.max_flows,
            reorder: ReorderConfig {
                window_ns: ns(self.reorder_window_us, US),
                nak_reaction_ns: ns(self.nak_reaction_us, US),
            },
            span_window_ns: ns(self.span_window_us, US),
            qp_reuse_idle_ns: ns(self.qp_reuse_idle_ms, MS),
            min_ack_timeout_ns: ns(self.min_ack_timeout_us, US),
            congestion: CongestionConfig {
                window_ns: ns(self.cc_window_us, US).max(1),
                delay_ns: ns(self.cc_delay_us, US),
                recovery_ns: ns(self.cc_recovery_us, US),
                fct_p99_ns: ns(self.fct_p99_us, US),
                incast_window_ns: ns(self.incast_window_us, US).max(1),
                incast_senders: usize::try_from(self.incast_senders).unwrap_or(usize::MAX),
            },
            time_source: TimeSource::Capture,
        })
    }
}

/// Nanoseconds in a microsecond and in a millisecond, the units the options take.
const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// `value` units of `unit` nanoseconds, saturating.
fn ns(value: u64, unit: u64) -> i64 {
    i64::try_from(value.saturating_mul(unit)).unwrap_or(i64::MAX)
}

/// The analysis's defaults: declared once, in the engine ([`Config::default`]); the options'
/// defaults and help are read from them.
fn defaults() -> Config {
    Config::default()
}

/// `ns` nanoseconds in whole `unit`s (a default is a whole number of the option's unit; a test
/// holds the options' defaults to the engine's).
fn in_units(ns: i64, unit: u64) -> u64 {
    u64::try_from(ns).unwrap_or(0) / unit
}

/// The marking policy file's keys with their defaults, for the help of `analyze`.
fn policy_file_help() -> String {
    let p = Policy::default();
    format!(
        "POLICY FILE (TOML, every key optional):\n    data_dscp = {}\n    cnp_dscp = {}\n    data_pcp = {}\n    cnp_pcp = {}\n    require_ect = {}\n    lossless_priority = {}\n    cm_dscp = 48          # management packets (QP 0/1); not checked when absent\n\n",
        p.data_dscp, p.cnp_dscp, p.data_pcp, p.cnp_pcp, p.require_ect, p.lossless_priority
    )
}

/// Every core of the machine.
fn default_threads() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(1))
}

/// `--tap NAME=FILE[,FILE...][#IFACE]`: the interface follows the last `#`; a trailing `#`
/// names none, so that a file whose name holds `#` is given as `leaf=run#3.pcap#`.
pub fn parse_tap(s: &str) -> Result<Tap, String> {
    let (name, files) = s.split_once('=').ok_or_else(|| format!("{s:?}: say NAME=FILE (leaf=leaf.pcap)"))?;
    let (files, interface) = match files.rsplit_once('#') {
        Some((files, "")) => (files, None),
        Some((files, interface)) => (files, Some(interface.to_string())),
        None => (files, None),
    };
    let files: Vec<PathBuf> = files.split(',').filter(|f| !f.is_empty()).map(PathBuf::from).collect();
    if name.is_empty() || files.is_empty() {
        return Err(format!("{s:?}: a tap needs a name and at least one file (leaf=leaf.pcap)"));
    }
    Ok(Tap { name: name.to_string(), files, interface })
}

/// `--counters HOST=BEFORE,AFTER`: the host and its two snapshot files.
#[derive(Debug, Clone)]
pub struct CounterFiles {
    pub host: std::net::IpAddr,
    pub before: PathBuf,
    pub after: PathBuf,
}

pub fn parse_counters(s: &str) -> Result<CounterFiles, String> {
    let (host, before, after) = snapshot_pair(s, "HOST=BEFORE,AFTER (10.0.0.2=before.txt,after.txt)")?;
    let host = host.parse().map_err(|_| format!("{s:?}: {host:?} is not an IP address"))?;
    Ok(CounterFiles { host, before, after })
}

/// What the hosts say of their QPs, shared by `analyze` and `merge`.
#[derive(Debug, Clone, Default, Args)]
pub struct HostAccountFiles {
    /// A host's QP table, HOST=FILE (HOST its IP address in the capture; FILE what `rdma
    /// resource show qp` prints, as text or with -j, with an optional `time: RFC3339` line; at
    /// most 16 MiB): the two directions of each connection it lists are paired exactly, and
    /// each flow names its QPs' owners; HOST@DEV=FILE takes the rows of RDMA device DEV alone,
    /// for a host with an address per device (repeat for more hosts)
    #[arg(long = "qps", value_name = "HOST[@DEV]=FILE", value_parser = parse_host_file)]
    pub qp_tables: Vec<HostFile>,

    /// A host's NCCL log, HOST=FILE (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET; other lines
    /// are skipped): the rank of each QP's process, and processes that fell back to sockets
    /// (repeat for more hosts)
    #[arg(long = "nccl-log", value_name = "HOST=FILE", value_parser = parse_host_file)]
    pub nccl_logs: Vec<HostFile>,
}

#[derive(Debug, Args)]
pub struct FabricArgs {
    /// The devices' configuration files, NAME=FILE each (several files per NAME)
    #[arg(required = true, value_name = "NAME=FILE", value_parser = parse_device_file)]
    pub files: Vec<DeviceFile>,

    /// Print `{"fabric": …, "findings": […]}` as one JSON document instead of the summary
    #[arg(long)]
    pub json: bool,

    /// Colour the summary's findings: auto (when standard output is a terminal and NO_COLOR
    /// is not set), always or never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColourChoice::Auto)]
    pub color: ColourChoice,

    /// Exit with status 4 when a finding of this severity or worse is found
    #[arg(long, value_parser = choice::<Severity>(), value_name = "SEVERITY")]
    pub fail_on: Option<Severity>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell whose completion script to print
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command into DIR (created if missing) instead of printing rocescope(1)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct FieldsArgs {
    /// Only the fields (and protocols) whose names begin with PREFIX (`infiniband.bth`, `rocescope.`)
    #[arg(value_name = "PREFIX")]
    pub prefix: Option<String>,
}

/// `--config NAME=FILE` (and `fabric NAME=FILE`): a device and a file of its configuration.
#[derive(Debug, Clone)]
pub struct DeviceFile {
    pub name: String,
    pub file: PathBuf,
}

pub fn parse_device_file(s: &str) -> Result<DeviceFile, String> {
    let (name, file) = s
        .split_once('=')
        .filter(|(n, f)| !n.is_empty() && !f.is_empty())
        .ok_or_else(|| format!("{s:?}: say NAME=FILE (10.0.0.1=mlnx_qos.txt, leaf1=config_db.json)"))?;
    Ok(DeviceFile { name: name.to_string(), file: PathBuf::from(file) })
}

/// `--qps HOST[@DEV]=FILE`, `--nccl-log HOST=FILE`: a host (and its RDMA device) and a file it
/// wrote.
#[derive(Debug, Clone)]
pub struct HostFile {
    pub host: std::net::IpAddr,
    pub device: Option<String>,
    pub file: PathBuf,
}

pub fn parse_host_file(s: &str) -> Result<HostFile, String> {
    let usage = || format!("{s:?}: say HOST=FILE (10.0.0.2=qps.txt), or HOST@DEV=FILE for one RDMA device");
    let (who, file) = s.split_once('=').filter(|(h, f)| !h.is_empty() && !f.is_empty()).ok_or_else(usage)?;
    let (host, device) = match who.split_once('@') {
        Some((host, device)) if !device.is_empty() => (host, Some(device.to_string())),
        Some(_) => return Err(usage()),
        None => (who, None),
    };
    let host = host.parse().map_err(|_| format!("{s:?}: {host:?} is not an IP address"))?;
    Ok(HostFile { host, device, file: PathBuf::from(file) })
}

/// `WHO=BEFORE,AFTER`'s three parts; `usage` says how, with an example.
fn snapshot_pair<'s>(s: &'s str, usage: &str) -> Result<(&'s str, PathBuf, PathBuf), String> {
    let usage = || format!("{s:?}: say {usage}");
    let (who, files) = s.split_once('=').filter(|(w, _)| !w.is_empty()).ok_or_else(usage)?;
    let (before, after) = files.split_once(',').filter(|(b, a)| !b.is_empty() && !a.is_empty()).ok_or_else(usage)?;
    Ok((who, PathBuf::from(before), PathBuf::from(after)))
}

/// Which UDP ports and IP protocol the decoder takes as RoCEv2 and UET.
#[derive(Debug, Clone, clap::Args)]
pub struct DecodePorts {
    /// Decode UDP destination PORT as RoCEv2 too, besides 4791 (repeatable)
    #[arg(long = "roce-port", value_name = "PORT")]
    pub roce_ports: Vec<u16>,

    /// Decode UDP destination PORT as Ultra Ethernet Transport too, besides 4793 (repeatable;
    /// the consortium's reference provider uses 49150)
    #[arg(long = "uet-port", value_name = "PORT")]
    pub uet_ports: Vec<u16>,

    /// The IP protocol number of native UET (its packets start with the 4-byte entropy header)
    #[arg(long = "uet-ip-protocol", value_name = "PROTOCOL", default_value_t = UET_IP_PROTOCOL)]
    pub uet_ip_protocol: u8,
}

impl DecodePorts {
    /// The decoder of these ports.
    pub fn decoder(&self) -> Decoder {
        Decoder::new(&self.roce_ports).with_uet(&self.uet_ports, self.uet_ip_protocol)
    }
}

/// `--switch-counters NAME=BEFORE,AFTER`: the switch's name and its two snapshot files.
#[derive(Debug, Clone)]
pub struct SwitchCounterFiles {
    pub name: String,
    pub before: PathBuf,
    pub after: PathBuf,
}

pub fn parse_switch_counters(s: &str) -> Result<SwitchCounterFiles, String> {
    let (name, before, after) = snapshot_pair(s, "NAME=BEFORE,AFTER (leaf1=before.txt,after.txt)")?;
    Ok(SwitchCounterFiles { name: name.to_string(), before, after })
}

/// `--tap-offset NAME=NS`.
pub fn parse_tap_offset(s: &str) -> Result<(String, i64), String> {
    let (name, ns) = s.split_once('=').ok_or_else(|| format!("{s:?}: say NAME=NS (spine=-50000000)"))?;
    let ns = ns.trim().parse().map_err(|_| format!("{s:?}: the offset is a whole number of nanoseconds"))?;
    Ok((name.to_string(), ns))
}

/// Parses a link speed such as `100G`, `25g` or `400` into Gb/s.
pub fn parse_link_speed(s: &str) -> Result<u64, String> {
    let digits = s.strip_suffix(['G', 'g']).unwrap_or(s);
    match digits.parse::<u64>() {
        Ok(g) if (1..=1600).contains(&g) => Ok(g),
        _ => Err(format!("'{s}' is not a link speed in Gb/s such as 100G")),
    }
}

/// When to colour terminal output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColourChoice {
    Auto,
    Always,
    Never,
}

impl ColourChoice {
    /// Whether to colour output written to standard output (no-color.org: a non-empty
    /// NO_COLOR turns automatic colour off).
    pub fn enabled(self) -> bool {
        match self {
            ColourChoice::Always => true,
            ColourChoice::Never => false,
            ColourChoice::Auto => {
                std::io::IsTerminal::is_terminal(&std::io::stdout())
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Directory to write the sample captures into (created if missing); with --benchmark,
    /// the capture file to write
    #[arg(value_name = "PATH", default_value = "samples")]
    pub dir: PathBuf,

    /// Write one benchmark capture of this kind instead
    #[arg(long, value_parser = choice::<BenchKind>(), value_name = "KIND")]
    pub benchmark: Option<BenchKind>,

    /// Size of the benchmark capture in bytes (suffixes K, M, G)
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = parse_size, requires = "benchmark")]
    pub size: u64,
}

/// Parses a size such as `1G`, `500M` or `4096`.
/// A duration: a number of seconds (`8`, `0.5`, as tcpdump's and tshark's durations are), or a
/// number with a unit (`30s`, `500ms`, `5m`, `1h`).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    match s.parse::<f64>() {
        Ok(seconds) => std::time::Duration::try_from_secs_f64(seconds)
            .map_err(|_| format!("'{s}' is not a duration: seconds must be zero or more")),
        Err(_) => {
            humantime::parse_duration(s).map_err(|e| format!("'{s}' is not a duration such as 8, 30s or 5m: {e}"))
        }
    }
}

pub fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.char_indices().last() {
        Some((i, 'K' | 'k')) => (&s[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&s[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| format!("'{s}' is not a size such as 1G"))
}

/// Tells the user about input files that could not be opened.
pub fn report_unreadable(errors: &[crate::capture::CaptureError]) {
    for e in errors {
        eprintln!("rocescope: {e}");
    }
}

/// Tells the user where input files were damaged.
pub fn report_damage(errors: &[crate::capture::CaptureError]) {
    for e in errors {
        eprintln!("rocescope: warning: {}", damage_warning(e));
    }
}

/// What a warning says of an input file damaged at some offset.
pub fn damage_warning(e: &crate::capture::CaptureError) -> String {
    format!("{e}; the rest of this file is skipped")
}

/// Tells the user, once per link layer, about frames that were not decoded.
pub fn report_undecoded(links: &[crate::analyze::roce::wide::facts::UndecodedLinkFrames]) {
    for link in links {
        eprintln!("rocescope: warning: {}", undecoded_warning(link));
    }
}

/// What a warning says of the frames of a link layer not decoded.
pub fn undecoded_warning(link: &crate::analyze::roce::wide::facts::UndecodedLinkFrames) -> String {
    let crate::analyze::roce::wide::facts::UndecodedLinkFrames { link, frames, first_frame } = *link;
    let plural = if frames == 1 { "" } else { "s" };
    format!("{frames} frame{plural} of {link} not decoded (the first is frame {first_frame})")
}

/// `-c N`: a count of frames, at least 1 (tshark refuses 0 too).
fn frame_count(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("0 frames: give a count of at least 1 (without -c, every frame)".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a count of frames")),
    }
}

/// tshark's options that rocescope spells otherwise, and how to say them here.
const TSHARK_SPELLINGS: &[(&str, &str)] = &[
    ("-r", "rocescope reads the capture files named as arguments: `rocescope packets FILE` (tshark's -r FILE)"),
    ("-R", "the display filter is -Y (rocescope's analysis always sees every frame, as tshark's -2 -R would not)"),
    ("-2", "rocescope always reads a capture in one pass; -Y chooses the frames shown"),
    (
        "-w",
        "frames are written by `rocescope annotate IN -o OUT.pcapng`, or `rocescope capture -w FILE` on an interface",
    ),
    ("-z", "the statistics are `rocescope analyze FILE`: flows, retransmissions, congestion, PFC and findings"),
    ("-G", "`rocescope fields` lists every field, as tshark's -G fields does"),
    ("-n", "rocescope resolves no names: addresses and ports are always numbers"),
    ("-V", "the decode tree is `rocescope packets -V FILE`"),
    ("-x", "the hex dump is `rocescope packets -x FILE`"),
    ("-T", "tshark's outputs are `rocescope packets -T fields|json|ek [-e FIELD] FILE`"),
    ("-e", "field export is `rocescope packets -T fields -e FIELD FILE`"),
    ("-E", "-E sets field export's format: `rocescope packets -T fields -e FIELD -E header=y FILE`"),
    ("-t", "the time format is an option of `rocescope packets` (-t relative|delta|epoch|absolute, or r, d, e, ad)"),
    (
        "-d",
        "a UDP port decoded as RoCEv2 is `--roce-port PORT` (tshark's -d udp.port==PORT,infiniband), as UET `--uet-port PORT`",
    ),
    ("-q", "the statistics without the packet list are `rocescope analyze FILE` (`-q` there hides its progress bar)"),
    (
        "-o",
        "rocescope has no preferences: RoCEv2's UDP ports are `--roce-port PORT`, the marking policy is `--policy FILE`",
    ),
];

/// tshark's `-d udp.port==PORT,infiniband` (or `-dudp.port==…`) among `arguments`, as
/// rocescope says it: `--roce-port PORT`.
fn roce_port_of_decode_as(flag: &str, arguments: &[String]) -> Option<String> {
    if flag != "-d" {
        return None;
    }
    let at = arguments.iter().position(|a| a.starts_with("-d"))?;
    let joined = arguments[at].strip_prefix("-d").filter(|rest| !rest.is_empty());
    let value = joined.or_else(|| arguments.get(at + 1).map(String::as_str))?;
    let (port, protocol) = value.strip_prefix("udp.port==")?.split_once(',')?;
    let port: u16 = port.parse().ok()?;
    let option = match protocol {
        "infiniband" | "rroce" | "roce" => "--roce-port",
        "uet" => "--uet-port",
        _ => return None,
    };
    Some(format!("tshark's -d udp.port=={port},{protocol} is `{option} {port}` here"))
}

/// The command line, parsed; where it is wrong, clap's message (exit status 2), and where the
/// mistake is a tshark habit, rocescope's spelling of it in place of clap's tip.
pub fn parse() -> Cli {
    parse_from(std::env::args().collect())
}

/// `arguments` (the program's name first) parsed as [`parse`] parses the command line.
pub fn parse_from(arguments: Vec<String>) -> Cli {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    Cli::try_parse_from(&arguments).unwrap_or_else(|mut e| {
        let unknown = match e.get(ContextKind::InvalidArg) {
            Some(ContextValue::String(arg)) if e.kind() == ErrorKind::UnknownArgument => arg.clone(),
            _ => e.exit(),
        };
        let flag: String = unknown.chars().take(2).collect();
        let spelling = roce_port_of_decode_as(&flag, &arguments)
            .or_else(|| TSHARK_SPELLINGS.iter().find(|(f, _)| *f == flag).map(|(_, spelling)| spelling.to_string()));
        if let Some(spelling) = spelling {
            e.insert(ContextKind::Suggested, ContextValue::StyledStrs(vec![spelling.into()]));
        }
        e.exit()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Every default is the engine's: `analyze` with no option judges as `packets` (which
    /// builds on `Config::default()`) does.
    #[test]
    fn the_options_defaults_are_the_engines() {
        let Command::Analyze(args) = Cli::parse_from(["rocescope", "analyze", "x.pcap"]).command else { panic!() };
        assert_eq!(args.analysis.config(), Ok(Config::default()));
        assert_eq!(args.keep_frames, HEAD_FRAMES);
        let Command::Browse(args) = Cli::parse_from(["rocescope", "browse", "x.pcap"]).command else { panic!() };
        assert_eq!(args.analysis.config(), Ok(Config::default()));
        let help = Cli::try_parse_from(["rocescope", "analyze", "--help"]).unwrap_err().to_string();
        assert!(help.contains("Expected DSCP of RoCE data (default 26, or the policy file's)"), "{help}");
        assert!(help.contains("[default: 20]") && help.contains("data_dscp = 26"), "{help}");
    }

    #[test]
    fn tsharks_decode_as_names_the_port_option() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let roce =
            roce_port_of_decode_as("-d", &args(&["rocescope", "packets", "-d", "udp.port==4792,infiniband", "x"]));
        assert_eq!(roce.as_deref(), Some("tshark's -d udp.port==4792,infiniband is `--roce-port 4792` here"));
        let joined = roce_port_of_decode_as("-d", &args(&["rocescope", "packets", "-dudp.port==4800,uet"]));
        assert_eq!(joined.as_deref(), Some("tshark's -d udp.port==4800,uet is `--uet-port 4800` here"));
        assert_eq!(roce_port_of_decode_as("-d", &args(&["rocescope", "-d", "tcp.port==80,http"])), None);
        assert_eq!(frame_count("0").unwrap_err(), "0 frames: give a count of at least 1 (without -c, every frame)");
        assert_eq!(frame_count("12"), Ok(12));
    }

    #[test]
    fn durations_are_seconds_unless_they_say_otherwise() {
        assert_eq!(parse_duration("8"), Ok(Duration::from_secs(8)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
