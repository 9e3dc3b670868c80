"""Malformed-input robustness: a few thousand seeded random / mutated HTTP requests and SOCKS5
handshakes over raw sockets against one running harrec.

Each input is sent, the write side is shut down, and within 1 s harrec must answer with some
bytes or close (EOF or RST). harrec must stay up throughout, and a normal request must work at
the end. Bounded to about 60 s. Seed and count: HARREC_FUZZ_SEED, HARREC_FUZZ_COUNT.

Loopback only, by construction: every host an input can name is 127.0.0.1, ::1 or localhost,
with the origin's port or a refused one. Mutations never touch the bytes that name a host
(absolute-form prefix `http://127.0.0.1:PORT/`, the Host header, CONNECT authority, SOCKS5
address), never produce 0x05 inside an HTTP input (it would be read as SOCKS5), and SOCKS5
mutations keep lengths so no address field shifts. A final check discards any HTTP input whose
request line could name another host."""

import concurrent.futures as cf
import os
import random
import re
import socket
import struct
import threading
import time

import pytest

import origin as origin_mod
from helpers import curl

SEED = int(os.environ.get("HARREC_FUZZ_SEED", "20240501"))
COUNT = int(os.environ.get("HARREC_FUZZ_COUNT", "3000"))
WORKERS = 16
ANSWER_TIMEOUT = 1.0
TOTAL_BUDGET = 55.0

SAFE_PATHS = ["json", "json?a=1&b=%20", "bytes?n=10", "chunked?n=100&chunks=3", "echo", "gzip",
              "head", "close-delimited?n=10", "nothing-here", "redirect"]
METHODS = ["GET", "POST", "PUT", "HEAD", "DELETE", "OPTIONS", "PATCH", "TRACE", "BREW", "G(T",
           "get", "", "POST\x00"]
VERSIONS = ["HTTP/1.1", "HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "HTTP/0.9", "http/1.1", "HTTP/1.1x",
            "HTTP/", "HTTP/1.1 ", ""]
HEADER_NAMES = ["X-A", "Content-Length", "Transfer-Encoding", "Connection", "Expect", "Cookie",
                "Accept-Encoding", "Upgrade", "TE", "Proxy-Authorization", "Keep-Alive",
                "Content-Type", "X-Long", "Trailer", "X\x00Y", "", " X-Space", "X-Tab\t"]
HEADER_VALUES = ["1", "0", "-1", "10", "99999999999999999999999", "chunked", "chunked, gzip",
                 "gzip", "close", "keep-alive", "100-continue", "a=b; c=d", "\x00", "\xff\xfe",
                 "x" * 3000, "", " ", "identity", "Basic Zm9vOmJhcg==", "h2c", "trailers"]
TOKENS = [b"\r\n", b"\n", b"\r", b"\x00", b" ", b"\t", b":", b"\xff", b"\x7f", b"0", b"9", b"-1",
          b"ffffffffffffffffffff", b"chunked", b"Transfer-Encoding: chunked\r\n",
          b"Content-Length: 10\r\n", b"Content-Length: 99999999999999999999\r\n",
          b"Expect: 100-continue\r\n", b"Connection: close\r\n", b"%00", b"%", b";", b",",
          b'"', b"\x80", b"\xc3\x28", b"A" * 100, b"\r\n\r\n", b"0\r\n\r\n"]
FORBIDDEN_IN_RANDOM = set(b"\x05/\\@")


def _rand_byte(rng):
    while True:
        b = rng.randrange(256)
        if b not in FORBIDDEN_IN_RANDOM:
            return b


def _mutate(rng, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3, 5])):
        op = rng.randrange(5)
        pos = rng.randrange(len(b) + 1)
        if op == 0:
            b[pos:pos] = rng.choice(TOKENS)
        elif op == 1 and b:
            del b[pos:pos + rng.randrange(1, 8)]
        elif op == 2 and b and pos < len(b):
            b[pos] = _rand_byte(rng)
        elif op == 3 and b:
            b[pos:pos] = b[pos:pos + rng.randrange(1, 16)]
        elif op == 4:
            b[pos:pos] = bytes(_rand_byte(rng) for _ in range(rng.randrange(1, 6)))
    return bytes(b)


def _body(rng):
    kind = rng.randrange(5)
    payload = bytes(rng.choice(b"abcdefgh0123\r\n") for _ in range(rng.randrange(0, 200)))
    if kind == 0:
        return [("Content-Length", str(len(payload)))], payload
    if kind == 1:
        return [("Content-Length", str(len(payload) + rng.randrange(1, 50)))], payload
    if kind == 2:
        return [("Transfer-Encoding", "chunked")], b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload),
                                                                           payload)
    if kind == 3:
        return [("Transfer-Encoding", "chunked")], b"%x\r\n%s" % (len(payload) + 3, payload)
    return [], b""


_WS = set(b" \t\r\n\x0b\x0c\x00")


def http_input(rng, origin_port, closed_port):
    """One HTTP request built from (bytes, mutable) segments, some mutated, then joined. The
    method never holds whitespace and is followed by an immutable SP and an immutable host-naming
    target, so however a parser splits the request line, the target names 127.0.0.1:PORT."""
    port = origin_port if rng.random() < 0.85 else closed_port
    authority = f"127.0.0.1:{port}"
    form = rng.choices(["absolute", "origin", "connect", "asterisk"], [70, 12, 12, 6])[0]
    method = b"CONNECT" if form == "connect" else rng.choice(METHODS).encode("latin-1")
    if rng.random() < 0.3:
        method = _mutate(rng, method)
    method = bytes(b for b in method if b not in _WS)
    segs = [(method + b" ", False)]
    if form == "connect":
        segs += [(authority.encode() + b" ", False)]
    elif form == "absolute":
        segs += [(f"http://{authority}/".encode(), False), (rng.choice(SAFE_PATHS).encode(), True),
                 (b" ", True)]
    elif form == "origin":
        segs += [(b"/", False), (rng.choice(SAFE_PATHS).encode(), True), (b" ", True)]
    else:
        segs += [(b"* ", False)]
    segs += [(rng.choice(VERSIONS).encode(), True), (b"\r\n", True),
             (f"Host: {authority}\r\n".encode(), False)]
    headers = [(rng.choice(HEADER_NAMES), rng.choice(HEADER_VALUES))
               for _ in range(rng.randrange(0, 6))]
    bh, body = _body(rng)
    headers += bh
    rng.shuffle(headers)
    segs += [("".join(f"{k}: {v}\r\n" for k, v in headers).encode("latin-1"), True),
             (b"\r\n", True), (body, True)]
    if form == "connect" and rng.random() < 0.5:
        segs.append((b"GET /json HTTP/1.1\r\nHost: " + authority.encode() + b"\r\n\r\n", True))
    if rng.random() < 0.15:  # a second, pipelined request
        segs.append((f"GET http://{authority}/json HTTP/1.1\r\nHost: {authority}\r\n\r\n"
                     .encode(), False))
    out = bytearray()
    for data, mutable in segs:
        if mutable and rng.random() < 0.35:
            data = _mutate(rng, data)
        out += data
    if rng.random() < 0.1:  # truncate anywhere
        out = out[:rng.randrange(len(out) + 1)]
    out = bytes(out).replace(b"\x05", b"\x06")
    return out if _loopback_only(out, method, authority) else None


def _loopback_only(data: bytes, method: bytes, authority: str) -> bool:
    """The request line starts `METHOD SP TARGET` with an unmutated host-naming TARGET (or
    is cut short before naming any host), and nothing after it looks like a URL."""
    line = data.split(b"\n", 1)[0]
    head = method + b" "
    if not line.startswith(head):
        return len(line) <= len(head) and head.startswith(line)
    rest = line[len(head):]
    for allowed in (f"http://{authority}/".encode(), f"{authority} ".encode(), b"/", b"* "):
        if rest.startswith(allowed):
            return not re.search(rb"[A-Za-z][A-Za-z0-9+.\-]*:/|//|@|\\", rest[len(allowed):])
    return authority.encode().startswith(rest) or f"http://{authority}/".encode().startswith(rest)


def socks_input(rng, origin_port, closed_port):
    port = origin_port if rng.random() < 0.85 else closed_port
    scenario = rng.randrange(6)
    if scenario == 0:  # greeting only, exactly as long as it says, maybe truncated
        n = rng.randrange(0, 256)
        g = bytes([5, n]) + bytes(rng.randrange(256) for _ in range(n))
        return g[:rng.randrange(1, len(g) + 1)]
    if scenario == 1:  # only username/password offered (not configured)
        return b"\x05\x01\x02\x01\x03usr\x03pwd"
    greeting = bytearray(b"\x05\x01\x00")
    if rng.random() < 0.3:  # same-length corruption of the greeting
        i = rng.randrange(3)
        greeting[i] = rng.randrange(256)
        if i == 1:  # keep nmethods honest so nothing shifts into the request
            greeting[1] = 1
    choice = rng.randrange(7)
    if choice == 0:
        addr = b"\x01" + socket.inet_aton("127.0.0.1")
    elif choice == 1:
        addr = b"\x04" + socket.inet_pton(socket.AF_INET6, "::1")
    elif choice == 2:
        addr = b"\x03\x09localhost"
    elif choice == 3:
        addr = bytes([rng.choice([0, 2, 5, 6, 0xFF])]) + b"\x7f\x00\x00\x01"  # bad ATYP
    elif choice == 4:
        addr = b"\x03\x00"  # empty domain
    elif choice == 5:
        addr = b"\x01" + socket.inet_aton("127.0.0.1")
        port = 0
    else:
        addr = b"\x01" + socket.inet_aton("127.0.0.1")
    head = bytearray(b"\x05\x01\x00")
    if rng.random() < 0.4:  # same-length corruption of VER / CMD / RSV
        i = rng.randrange(3)
        head[i] = rng.choice([0, 1, 2, 3, 4, 5, 0x7f, 0xff])
    req = bytes(head) + addr + struct.pack(">H", port)
    data = bytes(greeting) + req
    if scenario == 2:
        data = data[:rng.randrange(1, len(data) + 1)]
    elif scenario == 3:
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))  # tunnel junk
    elif scenario == 4:
        data += b"GET /json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    return data


def make_inputs(origin_port, closed_port, count=COUNT, seed=SEED):
    rng = random.Random(seed)
    inputs = []
    while len(inputs) < count:
        if rng.random() < 0.7:
            data = http_input(rng, origin_port, closed_port)
            kind = "http"
        else:
            data = socks_input(rng, origin_port, closed_port)
            kind = "socks"
        if data is None:
            continue
        inputs.append((len(inputs), kind, data))
    return inputs


def probe(port, data) -> str:
    """'data', 'eof', 'reset' (each fine) or 'silent' (nothing within ANSWER_TIMEOUT)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    try:
        s.settimeout(ANSWER_TIMEOUT)
        try:
            if data:
                s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            return "reset"
        try:
            got = s.recv(4096)
        except ConnectionResetError:
            return "reset"
        except (socket.timeout, TimeoutError):
            return "silent"
        return "data" if got else "eof"
    finally:
        s.close()


def test_inputs_are_deterministic_and_loopback_only():
    a = make_inputs(1111, 2222, 300)
    assert a == make_inputs(1111, 2222, 300)
    for _i, kind, data in a:
        if kind == "http":
            assert b"\x05" not in data
            line, sep, _ = data.partition(b"\n")
            if sep:  # a complete request line names our host, or none (origin-form, *)
                assert re.search(rb" (http://127\.0\.0\.1:(1111|2222)/|127\.0\.0\.1:(1111|2222) "
                                 rb"|/|\* )", line), line


def test_fuzz(origin, harrec, closed_port):
    px = harrec.start("--quiet")
    inputs = make_inputs(origin.port, closed_port)
    results = {}
    lock = threading.Lock()
    deadline = time.time() + TOTAL_BUDGET

    def one(item):
        i, kind, data = item
        if time.time() > deadline:
            return
        port = px.http_port if (i % 2 == 0) else px.socks_port  # either port serves both
        outcome = probe(port, data)
        with lock:
            results[i] = outcome

    with cf.ThreadPoolExecutor(WORKERS) as ex:
        for _ in ex.map(one, inputs):
            if not px.alive():
                break
    assert px.alive(), f"harrec died during fuzzing; stderr tail:\n" \
                       f"{chr(10).join(px.stderr_lines[-20:])}"
    done = len(results)
    assert done >= min(len(inputs), 1000), f"only {done} inputs ran within the time budget"
    silent = [i for i, o in results.items() if o == "silent"]
    if silent:
        samples = "\n".join(f"  #{i} {inputs[i][1]}: {inputs[i][2][:160]!r}" for i in silent[:8])
        pytest.fail(f"{len(silent)} of {done} connections got neither bytes nor a close within "
                    f"{ANSWER_TIMEOUT} s, e.g.:\n{samples}")
    # a normal request still works
    r = curl("-x", px.http_proxy, origin.url("/bytes?n=5000&seed=1"))
    assert r.rc == 0 and r.out == origin_mod.make_bytes(5000, 1), r.err
    r = curl("--socks5", f"127.0.0.1:{px.socks_port}", origin.url("/status/200"))
    assert r.rc == 0 and r.out == b"status 200\n", r.err
    px.stop()
    bad = [ln for ln in px.stderr_lines if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", ln)]
    assert not bad, f"raw control characters in harrec's stderr: {bad[:3]!r}"
