#!/usr/bin/env python3
"""Captures analysed on Spark's executors with rocescope, a task per file, their states merged
in a tree on the driver, their frames queried with Spark SQL.

    spark-submit examples/spark/analyse_captures.py --rocescope /opt/rocescope/rocescope \\
        --dataset /data/roce --reports /data/roce-reports \\
        tap1=/cap/tap1-0001.pcap tap1=/cap/tap1-0002.pcap tap2=/cap/tap2-0001.pcap

Each capture is named NAME=FILE, its rotated files in rotation order. Every file is a task of
its own: an executor analyses it alone and saves its state (`analyze FILE --state`), all files
of all captures at once. Each capture is also a task that exports its files one after another
into the Parquet dataset (partition capture=NAME), each run going on from the state the run
before saved (`export --resume`), so that each file is read once and its frames carry the
analysis of the whole capture. The driver merges each capture's states in a tree (`rocescope
merge A B --state AB`, pairs of neighbours, then pairs of those) into the capture's report
(NAME.json) and state (NAME.state, for the capture's next files: `analyze --resume`); where a
merge is refused (a long file whose analysis has not met the files' before it, docs/scale.md),
the report comes from the export's analysis of the files one after another
(NAME.dataset.state). It then reads
the frames with Spark SQL and prints, per capture, the report's headline numbers recomputed
from them beside the report's own; it exits with status 1 when any differ.

--master sets Spark's master where spark-submit does not (local[2] to try it on one machine).
Needs pyspark and a Java runtime.
"""

import argparse
import json
import os
import subprocess
import sys

from pyspark.sql import SparkSession

# Each headline number: its name, its SQL over one capture's frames, and where the report has it.
HEADLINE = [
    ("frames", "count(*)", lambda r: r["totals"]["frames"]),
    ("roce_packets", "count(*) FILTER (WHERE rocescope_frame_kind = 'roce')", lambda r: r["totals"]["roce_packets"]),
    ("mirror_duplicates", "count(rocescope_analysis_mirror_duplicate)", lambda r: r["totals"]["mirror_duplicates"]),
    ("cnps", "count(rocescope_cnp)", lambda r: r["cnps"]),
    # CE marks are counted on RoCEv2 packets, whose ECN is the IPv4 or IPv6 header's
    (
        "ce_marks",
        "count(*) FILTER (WHERE rocescope_frame_kind = 'roce' AND rocescope_roce_version = 2"
        " AND coalesce(ip_dsfield_ecn, ipv6_tclass_ecn) = 3)",
        lambda r: r["ecn"]["ce"],
    ),
    ("gaps", "count(rocescope_analysis_gap)", lambda r: sum(f["gaps"] for f in r["flows"])),
    # the flows' retransmissions: RoCE frames (a UET PDC's resends are marked too)
    (
        "retransmitted",
        "count(rocescope_analysis_retransmission) FILTER (WHERE rocescope_frame_kind = 'roce')",
        lambda r: sum(f["retransmitted"] for f in r["flows"]),
    ),
]


def run(args):
    """Runs rocescope; its standard output."""
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def analyse_file(rocescope, reports, name, index, path):
    """On an executor: one file analysed on its own, its state saved for the merge."""
    state = os.path.join(reports, name, f"part-{index:05}.state")
    run([rocescope, "analyze", "-q", path, "--state", state])
    return state


def export_capture(rocescope, dataset, reports, name, files):
    """On an executor: the capture's files exported one after another into the dataset, each
    run going on from the state the one before saved, so that each file is read once."""
    state = os.path.join(reports, f"{name}.dataset.state")
    for i, path in enumerate(files):
        resume = ["--resume", state] if i > 0 else []
        run([rocescope, "export", "-q", "--dataset", dataset, "--capture-name", name, path, "--state", state, *resume])


def task(rocescope, dataset, reports, work):
    """On an executor: a file's analysis, or a capture's export; the state a file's leaves."""
    if work[0] == "file":
        _, name, index, path = work
        return name, index, analyse_file(rocescope, reports, name, index, path)
    _, name, files = work
    export_capture(rocescope, dataset, reports, name, files)
    return name, None, None


def merge_tree(rocescope, reports, name, states):
    """On the driver: a capture's states, in file order, merged in a tree (neighbours in
    pairs, then pairs of those) into its state NAME.state; None when a merge is refused."""
    level = 0
    try:
        while len(states) > 1:
            merged = []
            for i in range(0, len(states) - 1, 2):
                out = os.path.join(reports, name, f"merge-{level}-{i // 2:05}.state")
                run([rocescope, "merge", states[i], states[i + 1], "--state", out])
                merged.append(out)
            states = merged + states[len(states) - len(states) % 2 :]
            level += 1
        state = os.path.join(reports, f"{name}.state")
        run([rocescope, "merge", states[0], "--state", state])
        return state
    except subprocess.CalledProcessError as refused:
        print(f"{name}: {refused.stderr.strip()}", file=sys.stderr)
        return None


def report_of(rocescope, reports, name, states):
    """On the driver: the capture's report (NAME.json), from its merged state or, where the
    merge was refused, from the analysis the export made of its files one after another."""
    state = merge_tree(rocescope, reports, name, states)
    if state is None:
        print(f"{name}: reported from the export's analysis of its files one after another")
        state = os.path.join(reports, f"{name}.dataset.state")
    report = run([rocescope, "analyze", "-q", "--json", "--resume", state])
    with open(os.path.join(reports, f"{name}.json"), "w") as out:
        out.write(report)
    return json.loads(report)


def captures_of(specs):
    """NAME=FILE arguments as {NAME: [FILE, ...]}, in the order given."""
    captures = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"not NAME=FILE: {spec}")
        captures.setdefault(name, []).append(os.path.abspath(path))
    return captures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rocescope", default="rocescope", help="the rocescope binary, on every executor")
    parser.add_argument("--dataset", required=True, help="the Parquet dataset's directory, shared by the executors")
    parser.add_argument("--reports", required=True, help="where the reports and states go, shared too")
    parser.add_argument("--master", help="Spark's master, where spark-submit does not set it")
    parser.add_argument("captures", nargs="+", metavar="NAME=FILE")
    args = parser.parse_args()
    captures = captures_of(args.captures)
    dataset, reports = os.path.abspath(args.dataset), os.path.abspath(args.reports)
    os.makedirs(reports, exist_ok=True)

    builder = SparkSession.builder.appName("rocescope").config("spark.ui.showConsoleProgress", "false")
    spark = (builder.master(args.master) if args.master else builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    rocescope = args.rocescope
    for name in captures:
        os.makedirs(os.path.join(reports, name), exist_ok=True)
    work = [("file", name, i, path) for name, files in captures.items() for i, path in enumerate(files)]
    work += [("capture", name, files) for name, files in captures.items()]
    done = spark.sparkContext.parallelize(work, len(work)).map(lambda w: task(rocescope, dataset, reports, w)).collect()
    states = {name: [] for name in captures}
    for name, index, state in sorted((d for d in done if d[2] is not None), key=lambda d: (d[0], d[1])):
        states[name].append(state)
    results = {name: report_of(rocescope, reports, name, states[name]) for name in captures}

    spark.read.parquet(os.path.join(dataset, "frames")).createOrReplaceTempView("frames")
    computed = ", ".join(f"{sql} AS {name}" for name, sql, _ in HEADLINE)
    rows = spark.sql(f"SELECT capture, {computed} FROM frames GROUP BY capture").collect()
    by_sql = {row["capture"]: row for row in rows}
    agree = True
    for name in captures:
        print(name)
        for number, _, reported in HEADLINE:
            sql = by_sql[name][number] if name in by_sql else None
            report = reported(results[name])
            agree &= sql == report
            print(f"  {number:<18} {sql!s:>12} {report!s:>12}{'' if sql == report else '   <- differs'}")
    spark.stop()
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
