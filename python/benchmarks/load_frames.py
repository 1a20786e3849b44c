#!/usr/bin/env python3
"""Loads a capture's frames into a polars DataFrame with one tool, for timing from outside
(docs/python.md has the figures and the commands):

    python3 python/benchmarks/load_frames.py rocescope CAPTURE
    python3 python/benchmarks/load_frames.py pyshark CAPTURE
    python3 python/benchmarks/load_frames.py scapy CAPTURE

Each builds the same columns (frame number, time, IP addresses, UDP source port, the BTH's
opcode, destination QP and PSN) and prints the rows and columns it loaded, and how far its
peak memory rose beyond the resident size before loading and the frame's own size. pyshark drives the
tshark that is installed; scapy decodes the BTH with its contrib module `roce`.
"""

import sys

import polars as pl

FIELDS = [
    "frame.number",
    "frame.time_relative",
    "ip.src",
    "ip.dst",
    "udp.srcport",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
]


def with_rocescope(path):
    import rocescope

    return rocescope.packets(path, fields=FIELDS)


def with_pyshark(path):
    import pyshark

    columns = {name: [] for name in FIELDS}
    capture = pyshark.FileCapture(path, keep_packets=False)
    first_ts = None
    for packet in capture:
        ts = float(packet.sniff_timestamp)
        first_ts = ts if first_ts is None else first_ts
        ip = getattr(packet, "ip", None)
        udp = getattr(packet, "udp", None)
        ib = getattr(packet, "infiniband", None)
        columns["frame.number"].append(int(packet.number))
        columns["frame.time_relative"].append(ts - first_ts)
        columns["ip.src"].append(ip.src if ip else None)
        columns["ip.dst"].append(ip.dst if ip else None)
        columns["udp.srcport"].append(int(udp.srcport) if udp else None)
        for name, attribute in (("opcode", "infiniband.bth.opcode"), ("destqp", "infiniband.bth.destqp"), ("psn", "infiniband.bth.psn")):
            value = ib.get_field_value(attribute) if ib else None
            columns[attribute].append(int(value, 0) if value is not None else None)
    capture.close()
    return pl.DataFrame(columns)


def with_scapy(path):
    from scapy.all import IP, UDP, PcapReader, load_contrib

    load_contrib("roce")
    from scapy.contrib.roce import BTH

    columns = {name: [] for name in FIELDS}
    first_ts = None
    for number, packet in enumerate(PcapReader(path), start=1):
        ts = float(packet.time)
        first_ts = ts if first_ts is None else first_ts
        ip = packet.getlayer(IP)
        udp = packet.getlayer(UDP)
        bth = packet.getlayer(BTH)
        columns["frame.number"].append(number)
        columns["frame.time_relative"].append(ts - first_ts)
        columns["ip.src"].append(ip.src if ip else None)
        columns["ip.dst"].append(ip.dst if ip else None)
        columns["udp.srcport"].append(udp.sport if udp else None)
        columns["infiniband.bth.opcode"].append(bth.opcode if bth else None)
        columns["infiniband.bth.destqp"].append(bth.dqpn if bth else None)
        columns["infiniband.bth.psn"].append(bth.psn if bth else None)
    return pl.DataFrame(columns)


def resident_bytes():
    """The process's resident size now (Linux)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS"))


if __name__ == "__main__":
    import resource

    tool, path = sys.argv[1], sys.argv[2]
    before = resident_bytes()
    frame = {"rocescope": with_rocescope, "pyshark": with_pyshark, "scapy": with_scapy}[tool](path)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    size = frame.estimated_size()
    print(f"{tool}: {frame.height} rows, {frame.width} columns, {size / 2**20:.1f} MiB")
    print(f"peak {(peak - before - size) / 2**20:.1f} MiB above the resident size before loading, beside the frame")
