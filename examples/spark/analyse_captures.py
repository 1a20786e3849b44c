#!/usr/bin/env python3
"""Captures analysed on Spark's executors with rocescope, their frames queried with Spark SQL.

    spark-submit examples/spark/analyse_captures.py --rocescope /opt/rocescope/rocescope \\
        --dataset /data/roce --reports /data/roce-reports \\
        tap1=/cap/tap1-0001.pcap tap1=/cap/tap1-0002.pcap tap2=/cap/tap2-0001.pcap

Each capture (NAME=FILE, its rotated files in rotation order) is one task. On an executor,
rocescope exports the capture's files one after another into the Parquet dataset (partition
capture=NAME), each run going on from the state the run before saved (`export --resume`), so
that each file is read once, and leaves the capture's report (NAME.json) and state
(NAME.state, for the capture's next files) in the reports directory. The driver then
reads the frames with Spark SQL and prints, per capture, the report's headline numbers
recomputed from them beside the report's own; it exits with status 1 when any differ.

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
    ("retransmitted", "count(rocescope_analysis_retransmission)", lambda r: sum(f["retransmitted"] for f in r["flows"])),
]


def run(args):
    """Runs rocescope; its standard output."""
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def analyse_capture(rocescope, dataset, reports, name, files):
    """On an executor: the capture's files exported one after another into the dataset, each
    run going on from the state the one before saved, so each file is read once; then the
    report of the saved analysis."""
    state = os.path.join(reports, f"{name}.state")
    for i, path in enumerate(files):
        resume = ["--resume", state] if i > 0 else []
        run([rocescope, "export", "-q", "--dataset", dataset, "--capture-name", name, path, "--state", state, *resume])
    report = run([rocescope, "analyze", "-q", "--json", "--resume", state])
    with open(os.path.join(reports, f"{name}.json"), "w") as out:
        out.write(report)
    return name, json.loads(report)


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
    tasks = spark.sparkContext.parallelize(list(captures.items()), len(captures))
    results = dict(tasks.map(lambda c: analyse_capture(rocescope, dataset, reports, c[0], c[1])).collect())

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
