#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs (fuzz/seeds/TARGET/) from the repository's samples and,
where present, the reference captures in ../shared/reference-captures. Deterministic: the same
inputs give the same files.

    fuzz/seed.py

seeds/capture and seeds/pipeline get whole small captures (and gzip/zstd copies of one);
seeds/state gets the analyses of a few samples, saved unfinished (`analyze --state`, by the
binary $ROCESCOPE or target/debug/rocescope);
seeds/state also gets a compression bomb (run-length zstd blocks that inflate 32,000 times);
seeds/filter gets display filters: the grammar's every form, Wireshark operators rocescope
refuses, a long run of one operator and nesting past the limit;
seeds/frame and seeds/parsers get single frames (the frame target's first byte selects the
link type: 0 is Ethernet, 1 LINKTYPE_INFINIBAND, 7 ERF) and, for the parsers, the same frame from its IP and UDP headers on;
seeds/plain_path the Ethernet ones of those frames, after a selector byte of 0 (the default
decoder, the frame captured whole).
"""

import gzip
import hashlib
import os
import shutil
import struct
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "seeds")
MAX_CAPTURE = 8 * 1024  # captures larger than this are cut to their first records
FRAMES_PER_CAPTURE = 12
# the frame target's selector byte for a pcap link type
SELECTORS = {1: 0, 247: 1, 197: 7}


def put(target, data):
    path = os.path.join(CORPUS, target, hashlib.sha1(data).hexdigest()[:16])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def pcap_records(data):
    """(header, frames) of a classic pcap file, or None for anything else."""
    if len(data) < 24:
        return None
    magic = data[:4]
    order = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\xa1\xb2\x3c\x4d": ">"}.get(magic)
    if order is None:
        return None
    frames, at = [], 24
    while at + 16 <= len(data):
        incl = struct.unpack(order + "I", data[at + 8 : at + 12])[0]
        frames.append((at, data[at + 16 : at + 16 + incl]))
        at += 16 + incl
    return data[:24], frames


def seed_capture(path):
    with open(path, "rb") as f:
        data = f.read()
    parsed = pcap_records(data)
    if parsed and len(data) > MAX_CAPTURE:
        header, frames = parsed
        end = next((at for at, _ in frames if at > MAX_CAPTURE), len(data))
        data = data[:end]
    put("capture", data)
    put("pipeline", data)
    if not parsed:
        return
    header, frames = parsed
    order = "<" if header[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    selector = SELECTORS.get(struct.unpack(order + "I", header[20:24])[0], 0)
    seen = set()
    for _, frame in frames:
        kind = frame[12:14] + frame[23:24] + frame[42:43]  # EtherType, IP protocol, BTH opcode
        if kind in seen or len(seen) >= FRAMES_PER_CAPTURE:
            continue
        seen.add(kind)
        put("frame", bytes([selector]) + frame)
        if selector == 0:
            put("plain_path", bytes([0]) + frame)
        for start in (0, 14, 34, 42):
            put("parsers", frame[start:])


# samples whose saved analyses make the state target's seeds: small, and between them
# retransmissions, reordering, both sides requesting, pauses and native InfiniBand
STATE_SAMPLES = ["loss_go_back_n.pcap", "reordering.pcap", "bidirectional_read_write.pcap", "pfc_storm.pcap", "ib_go_back_n.pcap"]


def seed_state(path):
    """The analysis of `path` saved unfinished: a state file, as the state target reads one.
    Returns its header (magic and format), which the binary writes as it reads them."""
    rocescope = os.environ.get("ROCESCOPE", os.path.join(ROOT, "target", "debug", "rocescope"))
    state = os.path.join(CORPUS, "state.tmp")
    subprocess.run([rocescope, "analyze", "-q", path, "--state", state], check=True, stdout=subprocess.DEVNULL)
    with open(state, "rb") as f:
        saved = f.read()
    put("state", saved)
    os.remove(state)
    return saved[:12]


def state_bomb(header, blocks):
    """A state file of `header` (a saved state's magic and format, so that it reaches the
    inflating) whose zstd frame is `blocks` run-length blocks of 128 KiB (RFC 8878 3.1.1),
    declaring no content size: it inflates 32,000 times."""
    head = header + bytes(4) + bytes([0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3])
    body = b"".join(struct.pack("<I", (i + 1 == blocks) | 1 << 1 | (128 << 10) << 3)[:3] + b"\0" for i in range(blocks))
    return head + body


FILTER_SEEDS = [
    "infiniband.bth.opcode == 12",
    "eth.dst[0:3] == 01:80:c2 && !(udp.port in {4791, 4789}) || ip.addr == 10.0.0.0/8",
    "ip.dsfield.dscp in {26, 48..63} and not rocescope.cnp",
    "infiniband.bth[4] & 0x40 ^^ ip.dsfield.ecn == 3",
    "frame.time_relative > 0.5 or frame.number <= 10",
    'rocescope.icrc.status == "bad" || eth.src ~= aa:bb:cc:dd:ee:ff',
    "ipv6.addr == fe80::1/64 && infiniband.deth.srcqp != 0x1",
    "vlan.id == 100 && mpls.label == 16 && erspan.spanid eq 3",
    "rocescope.analysis.retransmission || rocescope.analysis.flow in {1, 2}",
    'infiniband.bth.pns == 3',
    'ip.src matches "10" || upper(ip.src) == 4 || a === 1 || b !== 2 || ${x} || c + 1',
    'rocescope.icrc.status matches "^(ok|bad)$" || infiniband.bth ~ "^\\\\x0a" || rocescope.malformed matches "("',
    "len(eth.src) == 6 && count(ip.addr) > 2 || ip.src#2 == 10.9.0.1 || ip.addr#2 || udp.port#0",
    'ip.proto == "UDP" && eth.type == IPv4 || ip.dsfield.dscp in {AF31, CS6}',
    "(" * 200 + "eth" + ")" * 200,
    "!" * 300 + "ip",
    " || ".join(f"infiniband.bth.destqp == {qp}" for qp in range(2000)),
]


# the targets whose seeds this script writes; the others' seeds (counters, tap) are written by hand
GENERATED = ["capture", "pipeline", "state", "filter", "frame", "plain_path", "parsers"]


def main():
    for target in GENERATED:
        shutil.rmtree(os.path.join(CORPUS, target), ignore_errors=True)
    sources = [os.path.join(ROOT, "samples", n) for n in sorted(os.listdir(os.path.join(ROOT, "samples"))) if n.endswith((".pcap", ".pcapng"))]
    shared = os.path.join(ROOT, "..", "shared", "reference-captures")
    if os.path.isdir(shared):
        sources += [os.path.join(shared, n) for n in sorted(os.listdir(shared)) if n.endswith((".pcap", ".pcapng"))]
    for path in sources:
        seed_capture(path)
    small = os.path.join(shared, "encap_vlan.pcap")
    if os.path.exists(small):
        with open(small, "rb") as f:
            data = f.read()
        put("capture", gzip.compress(data, mtime=0))
        if shutil.which("zstd"):
            put("capture", subprocess.run(["zstd", "-c", "-q"], input=data, capture_output=True, check=True).stdout)
    headers = [seed_state(os.path.join(ROOT, "samples", name)) for name in STATE_SAMPLES]
    put("state", state_bomb(headers[0], 16_000))
    for text in FILTER_SEEDS:
        put("filter", text.encode())
    for target in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, target))
        size = sum(os.path.getsize(os.path.join(CORPUS, target, n)) for n in files)
        print(f"{target}: {len(files)} files, {size // 1024} KiB")


if __name__ == "__main__":
    main()
