#!/usr/bin/env python3
"""Sends every frame of a classic pcap file out of an interface through a raw packet socket,
in order, with a short pause between frames. Used by tests/it/live_capture.rs inside a network
namespace of its own.

    replay.py IFACE FILE.pcap
"""

import socket
import struct
import sys
import time


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    order = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    at = 24
    while at + 16 <= len(data):
        incl = struct.unpack(order + "I", data[at + 8 : at + 12])[0]
        yield data[at + 16 : at + 16 + incl]
        at += 16 + incl


def main():
    iface, path = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    sent = 0
    for frame in frames(path):
        s.send(frame)
        sent += 1
        time.sleep(0.0005)
    print(sent)


if __name__ == "__main__":
    main()
