#!/usr/bin/env python3
"""Times rocescope against `cat` and tshark on the repository's benchmark captures.

Needs GNU time (/usr/bin/time, Debian package `time`). Builds the release binary, generates the captures with `rocescope generate --benchmark` (once,
into target/bench/), warms the page cache, then runs each command several times (`cat` and `analyze` in turn) and prints the
median wall time, throughput, frames per second, peak RSS and the ratios the performance
targets are stated in. Usage:

    scripts/bench.py [--size 1G] [--runs 5] [--no-tshark]
    scripts/bench.py --compare [REV] [--size 1G] [--runs 7]
    scripts/bench.py --ledger [--size 1G] [--runs 5]

With --compare, builds REV (default: origin/main if there is one, else main; the landed build)
in a worktree of its own under target/bench/ and the working tree, runs each figure's command
with the two binaries in turn, and prints both medians, their ratio (working tree / landed) and
whether the working tree is more than 5 % slower (then it exits with status 1): a change's
cost is seen before it is submitted. With --ledger, prints what three commands cost per frame
on one thread, in turn, and how much above the floor: the floor (walk and CRC), the general
decoder with the ICRC on every frame (`analyze --threads 1 -Y 'frame.number == 0'`: every
frame decoded whole, as a filter needs, none analysed), and the analysis
(`analyze --json --threads 1`: plain RoCEv2 frames by the fast path), on the mixed capture
and on the one of 64-byte frames. Where perf works, it then splits
`analyze --json --threads 1` by feature (read, decode, ICRC, summary, flow lookup, PSN, mirror
duplicates, congestion control, native InfiniBand, report): each one's share of the samples
of `perf record --call-graph dwarf`, counting what its functions call (FEATURES names them),
times the time per frame. Results are recorded in docs/performance.md.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "rocescope")
BENCH_DIR = os.path.join(ROOT, "target", "bench")
# the floor: map the capture, walk its record headers, CRC every frame (scripts/floor.rs)
FLOOR = os.path.join(ROOT, "target", "release", "examples", "floor")


def run_once(argv):
    """Runs argv with stdout to /dev/null; returns (seconds, peak RSS in MiB).

    The RSS comes from GNU time, which execs the command itself: the ru_maxrss of a child
    forked from this script would include the script's own memory from before the exec."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdout=null, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
    stderr = proc.stderr.decode(errors="replace").strip().splitlines()
    if proc.returncode != 0 or not stderr:
        sys.exit(f"failed: {' '.join(argv)}\n{chr(10).join(stderr)}")
    return elapsed, int(stderr[-1]) / 1024


def measure(argv, runs):
    times, rss = [], 0.0
    for _ in range(runs):
        t, r = run_once(argv)
        times.append(t)
        rss = max(rss, r)
    return statistics.median(times), min(times), rss


def measure_interleaved(argvs, runs):
    """Runs the commands in turn, `runs` rounds: a drift of the machine's speed then weighs on
    each of them alike, so their ratios hold even when the absolute times move."""
    times, rss = [[] for _ in argvs], [0.0 for _ in argvs]
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            t, r = run_once(argv)
            times[i].append(t)
            rss[i] = max(rss[i], r)
    return [(statistics.median(t), min(t), r) for t, r in zip(times, rss)]


BROWSE_FILTER = "infiniband.bth.opcode == 17"


def browse_times(path, runs):
    """Median seconds, in a tmux terminal, until `rocescope browse` shows its first screen,
    until its status line has the full count (indexing done), from `G` until the last frame is
    selected, and from Enter on a display filter (`BROWSE_FILTER`) until the status line has
    its count (no longer `filtering`); None without tmux."""
    if not shutil.which("tmux"):
        return None
    first, full, filtered, last = [], [], [], []
    counts = re.compile(r"Packets: (\d+) · Displayed: (\d+)")

    def screen_of(session):
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout

    def until(session, start, done):
        while time.monotonic() - start < 60:
            screen = screen_of(session)
            if done(screen):
                return time.monotonic() - start
            time.sleep(0.005)
        return float("inf")

    for i in range(runs):
        session = f"bench-browse-{os.getpid()}-{i}"
        start = time.monotonic()
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "45", f"{BIN} browse {path}"], check=True)
        first.append(until(session, start, lambda s: "Packets: " in s))
        full.append(until(session, start, lambda s: "Packets: " in s and "indexing" not in s))
        total = counts.search(screen_of(session))
        start = time.monotonic()
        subprocess.run(["tmux", "send-keys", "-t", session, "G"], check=True)
        last.append(until(session, start, lambda s: total is not None and f"· Frame {total.group(1)}" in s))
        subprocess.run(["tmux", "send-keys", "-t", session, "/", BROWSE_FILTER], check=True)
        start = time.monotonic()
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)

        def counted(s):
            m = counts.search(s)
            return m is not None and m.group(1) != m.group(2) and "filtering" not in s

        filtered.append(until(session, start, counted))
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    med = statistics.median
    return med(first), med(full), med(last), med(filtered)


def capture(name, kind, size):
    path = os.path.join(BENCH_DIR, name)
    if not os.path.exists(path):
        subprocess.run([BIN, "generate", "--benchmark", kind, "--size", size, path], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # into the page cache
    return path


def frames_of(path):
    out = subprocess.run([BIN, "analyze", "--json", path], check=True, capture_output=True).stdout
    import json

    return json.loads(out)["totals"]["frames"]


def landed_binary(rev):
    """Builds `rev` in a worktree under target/bench/ (target directory of its own); its binary."""
    tree = os.path.join(BENCH_DIR, "landed")
    target = os.path.join(BENCH_DIR, "landed-target")
    git = lambda *a, **k: subprocess.run(["git", *a], cwd=ROOT, check=True, **k)  # noqa: E731
    commit = git("rev-parse", "--verify", f"{rev}^{{commit}}", capture_output=True, text=True).stdout.strip()
    if not os.path.exists(tree):
        git("worktree", "add", "--detach", tree, commit, stdout=subprocess.DEVNULL)
    subprocess.run(["git", "checkout", "--quiet", "--detach", commit], cwd=tree, check=True)
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=tree, env=env, check=True)
    return os.path.join(target, "release", "rocescope"), commit[:10]


def default_landed():
    """origin/main when the repository has it, else main."""
    probe = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "origin/main"], cwd=ROOT, capture_output=True)
    return "origin/main" if probe.returncode == 0 else "main"


def compare(rev, size, runs):
    """The working tree against the landed build `rev`, figure by figure, the two in turn."""
    old, commit = landed_binary(rev)
    mixed = capture(f"mixed_{size}.pcap", "mixed", size)
    small = capture("small_400M.pcap", "small", "400M")
    number = ["-T", "fields", "-e", "frame.number"]
    figures = [
        ("analyze --json", mixed, ["analyze", "--json", mixed]),
        ("analyze --json --threads 1", mixed, ["analyze", "--json", "--threads", "1", mixed]),
        ("analyze --json (64-byte frames)", small, ["analyze", "--json", small]),
        ("packets -T fields -e frame.number", mixed, ["packets", *number, mixed]),
    ]
    print(f"landed: {rev} ({commit}); working tree: {ROOT}; {os.cpu_count()} cores; median of {runs}, the two in turn\n")
    print("| figure | capture | landed s | working tree s | ratio | landed RSS MiB | working tree RSS MiB | more than 5 % slower |")
    print("|---|---|---|---|---|---|---|---|")
    slower = 0
    for label, path, argv in figures:
        (t_old, _, rss_old), (t_new, _, rss_new) = measure_interleaved([[old, *argv], [BIN, *argv]], runs)
        ratio = t_new / t_old
        slower += ratio > 1.05
        print(
            f"| `{label}` | {os.path.basename(path)} | {t_old:.3f} | {t_new:.3f} | {ratio:.3f} | "
            f"{rss_old:.1f} | {rss_new:.1f} | {'YES' if ratio > 1.05 else 'no'} |"
        )
    return 1 if slower else 0


# The analysis's features, each by the functions whose samples (themselves and what they call)
# it takes: its share of `analyze --threads 1`'s samples under `perf record --call-graph dwarf`
# is the largest inclusive share among the functions named (inlined ones included).
FEATURES = [
    ("read the records", ["Inputs::next_frame"]),
    ("decode: the fast path, or every layer (the ICRC included)", ["Decoder>::plain_roce", "Decoder::decode"]),
    ("  of which the ICRC", ["rocescope_parsers::icrc::"]),
    ("frame summary", ["FrameSummary::of_plain", "FrameSummary::of"]),
    ("analysis of the frame (all of what follows)", ["Analyzer::process"]),
    ("  flow lookup", ["FlowTable::get_or_insert"]),
    ("  the flow's counters", ["Flow>::count_packet"]),
    ("  PSN sequencing, episodes, pairing", ["observe_sequenced"]),
    ("  mirror duplicates", ["wide::duplicates::"]),
    ("  congestion control (reaction, completion, incast)", ["observe_congestion"]),
    ("  native InfiniBand (LRH, VCRC)", ["decode::Decoder::native", "rocescope_parsers::vcrc::"]),
    ("report and JSON", ["analyze::report::", "output::json"]),
]


def feature_shares(argv):
    """Each FEATURES row's share (0–1) of argv's samples, or None without a working perf."""
    data = os.path.join(BENCH_DIR, "ledger.perf")
    record = ["perf", "record", "-q", "-F", "2000", "-e", "cpu-clock", "--call-graph", "dwarf,16384", "-o", data, *argv]
    with open(os.devnull, "wb") as null:
        if not shutil.which("perf") or subprocess.run(record, stdout=null, stderr=null).returncode != 0:
            return None
    report = ["perf", "report", "-i", data, "--children", "--sort", "symbol", "--stdio", "-g", "none"]
    lines = subprocess.run(report, capture_output=True, text=True).stdout.splitlines()
    rows = [m.groups() for m in map(re.compile(r"^\s+([0-9.]+)%\s+[0-9.]+%\s+\[\.\]\s+(.*)$").match, lines) if m]
    # a name that ends in a word matches where that word ends: `FrameSummary::of` is not
    # `FrameSummary::of_record`; one that ends in `::` matches whatever follows
    pattern = lambda n: re.escape(n) + (r"(?!\w)" if re.search(r"\w$", n) else "")  # noqa: E731
    named = lambda symbol, names: any(re.search(pattern(n), symbol) for n in names)  # noqa: E731
    return [max((float(pct) / 100 for pct, symbol in rows if named(symbol, names)), default=0.0) for _, names in FEATURES]


def ledger(size, runs):
    """Nanoseconds per frame of each command on one thread, and above the floor (see the module's help)."""
    mixed = capture(f"mixed_{size}.pcap", "mixed", size)
    small = capture("small_400M.pcap", "small", "400M")
    stages = [
        ("walk the records, CRC every frame (the floor)", lambda p: [FLOOR, p, "1"]),
        (
            "the general decoder on every frame, ICRC (analyze -Y keeping no frame: a filter takes no fast path)",
            lambda p: [BIN, "analyze", "--json", "--threads", "1", "-Y", "frame.number == 0", p],
        ),
        ("decode (fast path), summary, analysis, report (analyze --json --threads 1)", lambda p: [BIN, "analyze", "--json", "--threads", "1", p]),
    ]
    print(f"{os.cpu_count()} cores; one thread; median of {runs}, the commands in turn\n")
    print("| command | " + " | ".join(f"{os.path.basename(p)}: ns/frame (above the floor)" for p in (mixed, small)) + " |")
    print("|---|---|---|")
    columns = []
    for path in (mixed, small):
        frames = frames_of(path)
        times = [t / frames * 1e9 for t, _, _ in measure_interleaved([argv(path) for _, argv in stages], runs)]
        columns.append([(t, t - times[0]) for t in times])
    for i, (label, _) in enumerate(stages):
        cells = [f"{c[i][0]:.1f} ({c[i][1]:.1f})" for c in columns]
        print(f"| {label} | " + " | ".join(cells) + " |")
    shares = [feature_shares([BIN, "analyze", "--json", "--threads", "1", p]) for p in (mixed, small)]
    if None in shares:
        print("\n(perf is missing or refused: no split by feature)")
        return
    # ns per frame: a feature's share of the samples of the whole analysis, times its time per frame
    totals = [c[-1][0] for c in columns]
    print("\n| feature, in `analyze --json --threads 1` (perf samples, inclusive) | " + " | ".join(f"{os.path.basename(p)}: ns/frame (share)" for p in (mixed, small)) + " |")
    print("|---|---|---|")
    for i, (label, _) in enumerate(FEATURES):
        cells = [f"{share[i] * total:.1f} ({share[i] * 100:.1f} %)" for share, total in zip(shares, totals)]
        print(f"| {label} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="1G", help="size of the mixed capture (default 1G)")
    parser.add_argument("--runs", type=int, default=None, help="runs per command (default 5; 7 with --compare)")
    parser.add_argument("--no-tshark", action="store_true", help="skip the tshark comparison")
    parser.add_argument("--compare", nargs="?", const="", metavar="REV", help="compare with the landed build REV")
    parser.add_argument("--ledger", action="store_true", help="what each stage costs per frame")
    args = parser.parse_args()

    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "floor"], cwd=ROOT, check=True)
    os.makedirs(BENCH_DIR, exist_ok=True)
    if args.compare is not None:
        sys.exit(compare(args.compare or default_landed(), args.size, args.runs or 7))
    if args.ledger:
        return ledger(args.size, args.runs or 5)
    args.runs = args.runs or 5
    threads = os.cpu_count() or 1
    mixed = capture(f"mixed_{args.size}.pcap", "mixed", args.size)
    size_bytes = os.path.getsize(mixed)
    double_size = f"{2 * size_bytes}"
    double = capture(f"mixed_{args.size}_x2.pcap", "mixed", double_size)
    small = capture("small_400M.pcap", "small", "400M")
    frames = {p: frames_of(p) for p in (mixed, double, small)}

    rows = []

    def add_row(label, path, measured):
        median, best, rss = measured
        size = os.path.getsize(path)
        rows.append((label, path, median, best, size / median / 1e9, frames[path] / median, rss))
        return median, rss

    def row(label, path, argv, runs=args.runs):
        return add_row(label, path, measure(argv, runs))

    # cat, the floor and analyze alternate, so that their ratios are measured under the same
    # conditions
    page = os.path.join(BENCH_DIR, "report.html")
    paired = measure_interleaved(
        [
            ["cat", mixed],
            [FLOOR, mixed, str(threads)],
            [FLOOR, mixed, "1"],
            [BIN, "analyze", "--json", mixed],
            [BIN, "analyze", "--json", "--threads", "1", mixed],
            [BIN, "analyze", "--json", "--html", page, mixed],
        ],
        args.runs,
    )
    cat, _ = add_row("cat FILE > /dev/null", mixed, paired[0])
    floor, _ = add_row(f"floor FILE {threads} (map, walk headers, CRC every frame)", mixed, paired[1])
    floor1, _ = add_row("floor FILE 1", mixed, paired[2])
    analyze, rss = add_row("rocescope analyze --json", mixed, paired[3])
    analyze1, _ = add_row("rocescope analyze --json --threads 1", mixed, paired[4])
    with_html, _ = add_row("rocescope analyze --json --html FILE", mixed, paired[5])
    jsonl, _ = row("rocescope packets --format jsonl", mixed, [BIN, "packets", "--format", "jsonl", mixed], runs=3)
    # display filters and field export, each beside its baseline in turn
    five_terms = "infiniband.bth.opcode == 6 && ip.dsfield.dscp == 26 && udp.dstport == 4791 && infiniband.bth.psn > 100 && !rocescope.cnp"
    number = ["-T", "fields", "-e", "frame.number"]
    filtered = measure_interleaved(
        [
            [BIN, "packets", *number, mixed],
            [BIN, "packets", "-Y", five_terms, *number, mixed],
            [BIN, "analyze", "--json", "-Y", "ip.addr == 10.0.0.0/8", mixed],
        ],
        args.runs,
    )
    packets_base, _ = add_row("rocescope packets -T fields -e frame.number", mixed, filtered[0])
    packets_y, _ = add_row("rocescope packets -Y (five terms) -T fields -e frame.number", mixed, filtered[1])
    analyze_y, _ = add_row("rocescope analyze --json -Y 'ip.addr == 10.0.0.0/8'", mixed, filtered[2])
    five = ["-e", "frame.number", "-e", "ip.src", "-e", "ip.dst", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn"]
    export, _ = row("rocescope packets -T fields (five fields)", mixed, [BIN, "packets", "-T", "fields", *five, mixed])
    _, rss2 = row("rocescope analyze --json (2x capture)", double, [BIN, "analyze", "--json", double], runs=3)
    small_time, _ = row("rocescope analyze --json (64-byte frames)", small, [BIN, "analyze", "--json", small])
    browse = browse_times(mixed, runs=3)
    tshark = None
    fields = ["-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e", "infiniband.bth.destqp"]
    same_fields, _ = row("rocescope packets -T fields (opcode, PSN, QP)", mixed, [BIN, "packets", "-T", "fields", *fields, mixed])
    if not args.no_tshark and shutil.which("tshark"):
        tshark, _ = row("tshark -T fields (opcode, PSN, QP)", mixed, ["tshark", "-r", mixed, "-T", "fields", *fields], runs=1)

    print(f"machine: {os.cpu_count()} cores; mixed capture {size_bytes / 1e9:.2f} GB, {frames[mixed]} frames\n")
    print("| command | capture | median s | best s | GB/s | frames/s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for label, path, median, best, gbps, fps, rss_mib in rows:
        print(f"| `{label}` | {os.path.basename(path)} | {median:.3f} | {best:.3f} | {gbps:.2f} | {fps / 1e6:.2f} M | {rss_mib:.1f} |")
    print()
    checks = [
        (f"analyze ≤ 1.3 × the floor ({threads} threads)", analyze / floor, analyze <= 1.3 * floor),
        ("analyze ≤ 2× cat", analyze / cat, analyze <= 2 * cat),
        ("analyze --threads 1 / the floor on 1 thread", analyze1 / floor1, True),
        (f"--threads {threads} ≥ 1.8 × faster than --threads 1", analyze1 / analyze, analyze1 >= 1.8 * analyze),
        ("analyze --threads 1 / cat", analyze1 / cat, True),
        ("analyze --html ≤ 1.1 × analyze --json", with_html / analyze, with_html <= 1.1 * analyze),
        ("64-byte frames ≥ 9 M frames/s", frames[small] / small_time / 1e6, frames[small] / small_time >= 9e6),
        ("packets --format jsonl ≥ 500 k frames/s", frames[mixed] / jsonl / 1e3, frames[mixed] / jsonl >= 5e5),
        ("packets -Y (five terms) ≤ 1.3 × packets", packets_y / packets_base, packets_y <= 1.3 * packets_base),
        ("analyze -Y ≤ 1.2 × analyze (separate runs)", analyze_y / analyze, analyze_y <= 1.2 * analyze),
        ("-T fields, five fields ≥ 1 M frames/s", frames[mixed] / export / 1e6, frames[mixed] / export >= 1e6),
        ("peak RSS ≤ 32 MiB", rss, rss <= 32),
        ("RSS of the 2× capture ≤ 1.1 × RSS", rss2 / rss, rss2 <= 1.1 * rss),
    ]
    if browse:
        print(
            f"rocescope browse, 1 GB capture, in tmux (median of 3): first screen {browse[0]:.3f} s, full count {browse[1]:.3f} s, "
            f"G to the last frame {browse[2]:.3f} s, filter `{BROWSE_FILTER}` counted {browse[3]:.3f} s\n"
        )
        checks.append(("browse: first screen < 1 s", browse[0], browse[0] < 1))
        checks.append(("browse: full count ≤ 3 s", browse[1], browse[1] <= 3))
        checks.append(("browse: G to the last frame < 1 s", browse[2], browse[2] < 1))
    if tshark:
        checks.append(("tshark -T fields / packets -T fields, the same fields, ≥ 100", tshark / same_fields, tshark >= 100 * same_fields))
        checks.append(("tshark -T fields / analyze", tshark / analyze, True))
    print("| target | value | met |")
    print("|---|---|---|")
    for name, value, ok in checks:
        print(f"| {name} | {value:.2f} | {'yes' if ok else 'NO'} |")


if __name__ == "__main__":
    main()
