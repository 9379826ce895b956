"""WebSocket client frames for the Realtime benchmarks (bench/realtime.py, bench/realtime-abuse.py)."""

import os


def masked_frame(payload, opcode=0x1, length=None):
    """A client frame (RFC 6455: always masked). `length` makes the header claim another length than the payload's
    (an attacker announcing a frame it never sends whole)."""
    mask = os.urandom(4)
    length = len(payload) if length is None else length
    header = bytes([0x80 | opcode])
    if length < 126:
        header += bytes([0x80 | length])
    elif length < 65536:
        header += bytes([0x80 | 126]) + length.to_bytes(2, "big")
    else:
        header += bytes([0x80 | 127]) + length.to_bytes(8, "big")
    size = len(payload)
    repeated = (mask * (size // 4 + 1))[:size]
    body = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(size, "big") if size else b""
    return header + mask + body
