#!/usr/bin/env python3
"""An independent permessage-deflate peer for WebSocketTests: Python's zlib (not harrec's
deflater) compresses a few messages as raw DEFLATE (wbits -N), Z_SYNC_FLUSH, tail 00 00 FF FF
removed (RFC 7692 §7.2.1), for window bits 9..15, with context takeover and without (a fresh
compressor per message). Writes python-zlib.json. Run from this directory: python3 zlib_peer.py
"""
import base64, json, zlib

MESSAGES = [
    b"hello hello hello hello",
    b"",
    "".join(f"row {i % 37}: status=ok value={i * 7 % 101}\n" for i in range(300)).encode(),
    b"hello hello hello hello",  # repeats the first: back-references under context takeover
    bytes(range(256)) * 4,
]

cases = []
for bits in range(9, 16):
    for takeover in (True, False):
        comp = zlib.compressobj(6, zlib.DEFLATED, -bits)
        payloads = []
        for m in MESSAGES:
            if not takeover:
                comp = zlib.compressobj(6, zlib.DEFLATED, -bits)
            data = comp.compress(m) + comp.flush(zlib.Z_SYNC_FLUSH)
            assert data.endswith(b"\x00\x00\xff\xff")
            payloads.append(base64.b64encode(data[:-4]).decode())
        cases.append({"windowBits": bits, "contextTakeover": takeover, "payloads": payloads})

with open("python-zlib.json", "w") as f:
    json.dump({"generator": f"zlib_peer.py, zlib {zlib.ZLIB_VERSION}",
               "messages": [base64.b64encode(m).decode() for m in MESSAGES],
               "cases": cases}, f, indent=1)
    f.write("\n")
