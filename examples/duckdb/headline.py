#!/usr/bin/env python3
"""The report's headline numbers recomputed in SQL from a rocescope dataset, with DuckDB.

    rocescope export --dataset DIR capture.pcapng
    python3 examples/duckdb/headline.py DIR

For every capture in the dataset, prints each number as the SQL over the frames computes it
beside the one the analysis reported (the `captures` table), and exits with status 1 when any
of them differ. Needs DuckDB's Python package (pip install duckdb).
"""

import sys

import duckdb

# Each headline number: its name, and its SQL over the frames of one capture.
HEADLINE = [
    ("frames", "count(*)"),
    ("roce_packets", "count(*) FILTER (WHERE rocescope_frame_kind = 'roce')"),
    ("malformed", "count(*) FILTER (WHERE rocescope_frame_kind = 'malformed')"),
    ("mirror_duplicates", "count(rocescope_analysis_mirror_duplicate)"),
    ("cnps", "count(rocescope_cnp)"),
    # CE marks are counted on RoCEv2 packets, whose ECN is the IPv4 or IPv6 header's
    (
        "ce_marks",
        "count(*) FILTER (WHERE rocescope_frame_kind = 'roce' AND rocescope_roce_version = 2"
        " AND coalesce(ip_dsfield_ecn, ipv6_tclass_ecn) = 3)",
    ),
    ("icrc_bad", "count(*) FILTER (WHERE rocescope_icrc_status = 'bad')"),
    ("gaps", "count(rocescope_analysis_gap)"),
    # a gap's missing PSNs count those the capture alone missed; the report's do not
    (
        "missing_psns",
        "coalesce(sum(rocescope_analysis_missing_psns), 0) - coalesce(sum(rocescope_analysis_capture_missed), 0)",
    ),
    # the flows' retransmissions: RoCE frames (a UET PDC's resends are marked too)
    ("retransmitted", "count(rocescope_analysis_retransmission) FILTER (WHERE rocescope_frame_kind = 'roce')"),
]


def main(root):
    con = duckdb.connect()
    con.sql(f"CREATE VIEW frames AS SELECT * FROM read_parquet('{root}/frames/**/*.parquet', hive_partitioning = true)")
    con.sql(
        f"CREATE VIEW captures AS SELECT * FROM read_parquet('{root}/captures/**/*.parquet', hive_partitioning = true)"
    )
    computed = ", ".join(f"{sql} AS {name}" for name, sql in HEADLINE)
    by_sql = {row[0]: row[1:] for row in con.sql(f"SELECT capture, {computed} FROM frames GROUP BY capture").fetchall()}
    names = ", ".join(name for name, _ in HEADLINE)
    reported = {row[0]: row[1:] for row in con.sql(f"SELECT capture, {names} FROM captures").fetchall()}
    agree = True
    for capture in sorted(reported):
        print(f"{capture}")
        for (name, _), sql, report in zip(HEADLINE, by_sql.get(capture, [None] * len(HEADLINE)), reported[capture]):
            mark = "" if sql == report else "   <- differs"
            agree &= sql == report
            print(f"  {name:<18} {sql!s:>12} {report!s:>12}{mark}")
    return 0 if agree else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
