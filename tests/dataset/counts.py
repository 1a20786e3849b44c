#!/usr/bin/env python3
"""Counts computed in SQL by DuckDB from a rocescope dataset, per capture, as JSON on stdout:
frames, RoCE packets, CNPs, CE marks on RoCEv2 packets, and per flow its gaps and
retransmissions. Usage: counts.py DATASET_DIR. Exits 3 when the duckdb module is missing."""

import json
import sys

try:
    import duckdb
except ImportError:
    sys.exit(3)

root = sys.argv[1]
con = duckdb.connect()
con.sql(f"CREATE VIEW frames AS SELECT * FROM read_parquet('{root}/frames/**/*.parquet', hive_partitioning = true)")
con.sql(f"CREATE VIEW captures AS SELECT * FROM read_parquet('{root}/captures/**/*.parquet', hive_partitioning = true)")
counts = {}
totals = con.sql(
    """
    SELECT capture,
           count(*) AS frames,
           count(*) FILTER (WHERE rocescope_frame_kind = 'roce') AS roce_packets,
           count(*) FILTER (WHERE rocescope_cnp) AS cnps,
           count(*) FILTER (WHERE rocescope_frame_kind = 'roce' AND rocescope_roce_version = 2
                            AND coalesce(ip_dsfield_ecn, ipv6_tclass_ecn) = 3) AS ce_marks,
           min(frame_time_epoch) = min(capture_first_ts) AS first_ts_agrees
    FROM frames JOIN captures USING (capture)
    GROUP BY capture
    """
).fetchall()
for capture, frames, roce, cnps, ce, first_ts_agrees in totals:
    counts[capture] = {
        "frames": frames,
        "roce_packets": roce,
        "cnps": cnps,
        "ce_marks": ce,
        "first_ts_agrees": first_ts_agrees,
        "flows": {},
    }
per_flow = con.sql(
    """
    SELECT capture, rocescope_analysis_flow AS flow,
           count(rocescope_analysis_gap) AS gaps,
           count(rocescope_analysis_retransmission) AS retransmitted
    FROM frames
    WHERE rocescope_analysis_flow IS NOT NULL
    GROUP BY capture, flow
    """
).fetchall()
for capture, flow, gaps, retransmitted in per_flow:
    counts[capture]["flows"][str(flow)] = {"gaps": gaps, "retransmitted": retransmitted}
json.dump(counts, sys.stdout, sort_keys=True)
