#!/usr/bin/env python3
"""Seed inputs for the stateful fuzz targets, hand-encoded as docs/protocol.md describes the
frames, so libFuzzer starts from conversations that get past the hello.

  fuzz_seeds.py TARGET DIR     (fuzz_console_protocol, fuzz_serve_protocol; others: none)
"""
import os
import struct
import sys


def frame(body):
    return struct.pack(">I", len(body)) + body


def varint(n):
    return bytes([n & 0x7f | 0x80, n >> 7]) if n > 0x7f else bytes([n])


def msg(field, inner):
    return varint(field << 3 | 2) + varint(len(inner)) + inner


HELLO = frame(msg(1, b"\x08\x02"))   # hello{protocol_version: 2}
BEAT = frame(msg(15, b"\x08\x01"))   # heartbeat{sequence: 1}


def console_protocol():
    """sluiced's session: byte 0 is the fake app daemon's behaviour and the chunk size
    (daemons/fuzz_console_protocol.cc), then control frames."""
    launch = frame(msg(5, b"\x0a\x03app\x12\x01x"))          # launch{application_id, topology_text}
    entry = b"\x0a\x01b\x12\x03a:1"
    wiring = frame(msg(7, bytes([0x0a, len(entry)]) + entry))  # wiring{peers: {b: a:1}}
    start = frame(msg(9, b"\x12\x01w"))                      # start_unit{payload: w}
    abort = frame(msg(13, b"\x0a\x01r"))                     # abort{reason: r}
    stop = frame(msg(14, b""))                               # shutdown{}
    return [b"\x00" + HELLO, b"\x04" + HELLO + launch + wiring + start + BEAT + abort + stop,
            b"\x01" + HELLO + launch + launch + start, b"\xfe" + HELLO + BEAT + start + launch + stop]


def serve_protocol():
    """sluice serve's session: byte 0 turns submits down (bit 0) and sets the chunk size
    (console/fuzz_serve_protocol.cc)."""
    submit = frame(msg(18, b"\x0a\x07count=3"))              # submit{work: "count=3"}
    stop = frame(msg(22, b""))                               # stop{}
    return [b"\x00" + HELLO, b"\x04" + HELLO + submit + BEAT + BEAT, b"\x01" + HELLO + submit,
            b"\xfe" + HELLO + stop + BEAT + submit]


SEEDS = {"fuzz_console_protocol": console_protocol, "fuzz_serve_protocol": serve_protocol}

if __name__ == "__main__":
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for i, seed in enumerate(SEEDS.get(target, lambda: [])()):
        with open(os.path.join(out, f"seed{i}"), "wb") as f:
            f.write(seed)
