"""Control frames by hand, as docs/protocol.md describes them: a 4-byte big-endian length,
then an Envelope in protobuf wire format (only what the tests need: varints and
length-delimited fields)."""
import struct


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def uint_field(number, value):
    return varint(number << 3) + varint(value)


def frame(body):
    return struct.pack(">I", len(body)) + body


# Envelope field numbers (control/control.proto).
HELLO, AUTH_RESULT, LAUNCH, WIRING, START_UNIT, FAILURE, ABORT, SHUTDOWN, HEARTBEAT, EXIT_REPORT, ERROR = \
    1, 4, 5, 7, 9, 12, 13, 14, 15, 16, 17


def hello(version=2):
    return frame(field(HELLO, uint_field(1, version) + field(3, b"hand-made console")))


def parse(body):
    """Top-level protobuf fields of body: {number: [bytes or int]}."""
    out, i = {}, 0
    while i < len(body):
        key, i = _varint(body, i)
        number, wire = key >> 3, key & 7
        if wire == 2:
            n, i = _varint(body, i)
            out.setdefault(number, []).append(body[i:i + n])
            i += n
        elif wire == 0:
            v, i = _varint(body, i)
            out.setdefault(number, []).append(v)
        else:
            raise ValueError("unexpected wire type")
    return out


def _varint(b, i):
    shift = value = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, i


def split_frames(data):
    """(frame bodies, bytes left over) from a byte stream."""
    bodies = []
    while len(data) >= 4:
        (n,) = struct.unpack(">I", data[:4])
        if len(data) < 4 + n:
            break
        bodies.append(data[4:4 + n])
        data = data[4 + n:]
    return bodies, data


def first_frame(data):
    """The body of the first whole frame in data (ValueError when there is none)."""
    bodies, _ = split_frames(data)
    if not bodies:
        raise ValueError(f"no whole frame in {data[:64]!r}")
    return bodies[0]
