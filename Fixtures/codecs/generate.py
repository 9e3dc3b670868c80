#!/usr/bin/env python3
"""Regenerates the codec fixtures with the real CLI tools (gzip, brotli, zstd) and Python zlib.

Run from this directory: python3 generate.py. Outputs are deterministic for a given tool version
(gzip -n drops the name and timestamp)."""
import subprocess, zlib

def run(cmd, data):
    return subprocess.run(cmd, input=data, stdout=subprocess.PIPE, check=True).stdout

def write(name, data):
    with open(name, "wb") as f:
        f.write(data)

def lcg_block():
    # 4 KiB of pseudo-random bytes: x = (1103515245 x + 12345) mod 2^31, byte = (x >> 16) & 0xFF.
    x, out = 1, bytearray()
    for _ in range(4096):
        x = (1103515245 * x + 12345) % (1 << 31)
        out.append((x >> 16) & 0xFF)
    return bytes(out)

inputs = {
    "empty": b"",
    "small": ("harrec small fixture: Hello, HAR! \u00e9\u00e8 \u2713\n" * 3).encode("utf-8"),
    # 1 MiB: a 4 KiB pseudo-random block repeated 256 times (random-looking, still compressible).
    "large": lcg_block() * 256,
}

for name, data in inputs.items():
    write(f"{name}.txt", data) if name != "large" else None
    write(f"{name}.gz", run(["gzip", "-9", "-n", "-c"], data))
    write(f"{name}.br", run(["brotli", "-q", "11", "-c"], data))
    write(f"{name}.zst", run(["zstd", "-19", "-q", "-c"], data))
    c = zlib.compressobj(9, zlib.DEFLATED, 15); write(f"{name}.zlib", c.compress(data) + c.flush())
    c = zlib.compressobj(9, zlib.DEFLATED, -15); write(f"{name}.deflate", c.compress(data) + c.flush())

small = inputs["small"]
# Two gzip members back to back (RFC 1952 §2.2).
write("multi-member.gz", run(["gzip", "-n", "-c"], b"first member\n") + run(["gzip", "-n", "-c"], b"second member\n"))
# Two zstd frames, the second without a content size (streamed from stdin with --no-content-size).
write("multi-frame.zst", run(["zstd", "-q", "-c"], b"frame one\n") + run(["zstd", "-q", "-c", "--no-content-size"], b"frame two\n"))
write("no-content-size.zst", run(["zstd", "-q", "-c", "--no-content-size"], small))
# A frame declaring a 16 MiB window (beyond the 8 MiB RFC 9659 allows for HTTP).
write("window-16MiB.zst", run(["zstd", "-q", "-c", "--long=24", "--no-content-size"], small))
# Content-Encoding: gzip, br  (gzip applied first, then brotli).
write("small.gz.br", run(["brotli", "-c"], run(["gzip", "-n", "-c"], small)))
# Bombs: 10 MiB of zeros for gzip/deflate (deflate tops out near 1032:1), 100 MiB for br/zstd.
zeros10 = bytes(10 * 1024 * 1024)
zeros100 = bytes(100 * 1024 * 1024)
write("bomb-10MiB.gz", run(["gzip", "-9", "-n", "-c"], zeros10))
c = zlib.compressobj(9, zlib.DEFLATED, -15); write("bomb-10MiB.deflate", c.compress(zeros10) + c.flush())
write("bomb-100MiB.br", run(["brotli", "-q", "11", "-c"], zeros100))
write("bomb-100MiB.zst", run(["zstd", "-19", "-q", "-c"], zeros100))
# permessage-deflate style: two messages from one raw-deflate context, each sync-flushed
# (ending in 00 00 FF FF), the second referring back into the first.
c = zlib.compressobj(9, zlib.DEFLATED, -15)
write("pmd-1.deflate", c.compress(b"hello hello hello websocket message one") + c.flush(zlib.Z_SYNC_FLUSH))
write("pmd-2.deflate", c.compress(b"hello websocket message one, again") + c.flush(zlib.Z_SYNC_FLUSH))

def fnv1a64(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h

print("large fnv1a64 = 0x%016x, length = %d" % (fnv1a64(inputs["large"]), len(inputs["large"])))
