"""Shared helpers for harrec's end-to-end tests: curl, raw sockets, SOCKS5, HAR access, and the
table of pass-through cases (used by test_passthrough.py through the proxy and by test_origin.py
directly, so the direct half of every case is checked even without a proxy)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import struct
import subprocess
import time
from collections import namedtuple
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

import origin as origin_mod

E2E_DIR = Path(__file__).resolve().parent
REPO = E2E_DIR.parent.parent
HARREC_BIN = os.environ.get("HARREC_BIN") or str(REPO / ".build" / "debug" / "harrec")
SCHEMA_PATH = E2E_DIR / "har-1.2.schema.json"

# No test may be routed through a proxy from the environment (and NO_PROXY would make curl ignore
# -x for 127.0.0.1). Applied to this process, so curl and every subprocess inherit it.
for _v in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
           "no_proxy", "NO_PROXY", "socks_proxy", "SOCKS_PROXY", "CURL_HOME"):
    os.environ.pop(_v, None)
os.environ["CURL_HOME"] = "/nonexistent"  # no ~/.curlrc


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


CurlResult = namedtuple("CurlResult", "rc out err")


def curl(*args, max_time: float = 10, input: bytes | None = None) -> CurlResult:
    """Runs `curl -sS --max-time 10 ARGS`; returns (exit code, stdout bytes, stderr text)."""
    cmd = ["curl", "-q", "-sS", "--max-time", str(max_time), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, input=input, timeout=max_time + 20)
    return CurlResult(p.returncode, p.stdout, p.stderr.decode("utf-8", "replace"))


def background_curl(*args) -> subprocess.Popen:
    """Starts curl without waiting (stdout and stderr piped), for exchanges still in flight when
    the test acts."""
    return subprocess.Popen(["curl", "-q", "-sS", "--max-time", "20", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def thread_cpu_ns(pid: int) -> dict[str, tuple[str, int]]:
    """Thread id -> (thread name, nanoseconds on CPU) for every live thread of `pid`
    (schedstat counts nanoseconds, where /proc/PID/stat counts 10 ms ticks)."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                found[tid] = (name, int(f.read().split()[0]))
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended while we looked
    return found


def vmrss_kib(pid: int) -> int:
    """The resident set size of process `pid`, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class PeakRSS:
    """The highest VmRSS of process `pid` while the block runs, sampled every `interval` seconds
    on a thread: `with PeakRSS(pid) as peak: ...`, then `peak.kib`."""

    def __init__(self, pid: int, interval: float = 0.01):
        self.pid, self.interval = pid, interval
        self.kib = vmrss_kib(pid)
        self._sampling = True
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while self._sampling:
            try:
                self.kib = max(self.kib, vmrss_kib(self.pid))
            except (FileNotFoundError, ProcessLookupError, AssertionError):
                return
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._sampling = False
        self._thread.join()
        return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a peer that needs a fixed port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_port_socket() -> socket.socket:
    """A bound, not listening TCP socket on 127.0.0.1: connecting to its port is refused, and the
    port stays unusable by anyone else while the socket lives."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    return s


# ---------------------------------------------------------------- raw HTTP over a socket

@dataclass
class RawResponse:
    version: str
    status: int
    reason: str
    headers: list
    raw_head: bytes
    body: bytes = b""
    trailers: list = field(default_factory=list)
    interim: list = field(default_factory=list)  # 1xx responses before this one

    def header(self, name, default=None):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return default

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]


class RawConn:
    """A plain TCP client that speaks HTTP/1.1 by hand (for pipelining, malformed input, exact
    head sizes). `buf` holds bytes received but not consumed yet."""

    def __init__(self, host="127.0.0.1", port=None, timeout=5.0, sock=None):
        self.sock = sock or socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.buf = bytearray()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data: bytes):
        self.sock.sendall(data)

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        if not data:
            return False
        self.buf += data
        return True

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise EOFError("connection closed while reading a line")
        i = self.buf.index(b"\r\n")
        line = bytes(self.buf[:i])
        del self.buf[:i + 2]
        return line

    def _exact(self, n) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise EOFError(f"connection closed with {n - len(self.buf)} body bytes missing")
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def read_head(self) -> RawResponse:
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                raise EOFError(f"connection closed inside a response head: {bytes(self.buf)[:200]!r}")
        i = self.buf.index(b"\r\n\r\n")
        raw = bytes(self.buf[:i + 4])
        del self.buf[:i + 4]
        lines = raw[:-4].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise ValueError(f"bad status line {lines[0]!r}")
        headers = []
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            headers.append((k.strip(), v.strip()))
        return RawResponse(parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "",
                           headers, raw)

    def read_response(self, method="GET", keep_interim=True) -> RawResponse:
        interim = []
        while True:
            r = self.read_head()
            if 100 <= r.status < 200 and r.status != 101:
                interim.append(r)
                continue
            break
        r.interim = interim
        if method == "HEAD" or r.status in (204, 304) or r.status == 101:
            return r
        te = ",".join(r.header_all("transfer-encoding")).lower()
        if "chunked" in te:
            body = bytearray()
            while True:
                size = int(self._line().split(b";")[0].strip(), 16)
                if size == 0:
                    while True:
                        ln = self._line()
                        if not ln:
                            break
                        k, _, v = ln.decode("latin-1").partition(":")
                        r.trailers.append((k.strip(), v.strip()))
                    break
                body += self._exact(size)
                assert self._exact(2) == b"\r\n", "bad chunk terminator from proxy"
            r.body = bytes(body)
        elif r.header("content-length") is not None:
            r.body = self._exact(int(r.header("content-length")))
        else:
            r.body = self.read_until_close()
        return r

    def read_until_close(self, timeout=5.0) -> bytes:
        """Reads until EOF (or RST); raises socket.timeout if the peer keeps it open."""
        deadline = time.time() + timeout
        while True:
            self.sock.settimeout(max(0.05, deadline - time.time()))
            try:
                if not self._fill():
                    break
            except ConnectionResetError:
                break
        data = bytes(self.buf)
        self.buf.clear()
        return data

    def closed_within(self, timeout=2.0) -> bool:
        """True if the peer closes (EOF or RST) within timeout; extra bytes are discarded."""
        try:
            self.read_until_close(timeout)
            return True
        except (socket.timeout, TimeoutError):
            return False


def request_bytes(method, target, host, headers=(), body=b"", version="HTTP/1.1") -> bytes:
    lines = [f"{method} {target} {version}", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


# ---------------------------------------------------------------- SOCKS5 by hand

class Socks5Error(Exception):
    pass


def socks5_handshake(sock, host, port, user=None, password=None, atyp=None) -> bytes:
    """RFC 1928/1929 client handshake for CONNECT. Returns the server's reply; raises
    Socks5Error if the server refuses. atyp: 1 (IPv4), 3 (domain), 4 (IPv6); default from host."""
    methods = b"\x02" if user is not None else b"\x00"
    sock.sendall(b"\x05" + bytes([len(methods)]) + methods)
    sel = _recv_exact(sock, 2)
    if sel[0] != 5 or sel[1] == 0xFF:
        raise Socks5Error(f"no acceptable method: {sel!r}")
    if sel[1] == 2:
        if user is None:
            raise Socks5Error("server wants username/password")
        u, p = user.encode(), password.encode()
        sock.sendall(b"\x01" + bytes([len(u)]) + u + bytes([len(p)]) + p)
        st = _recv_exact(sock, 2)
        if st[1] != 0:
            raise Socks5Error(f"authentication failed: {st!r}")
    elif sel[1] != 0:
        raise Socks5Error(f"unexpected method {sel[1]}")
    if atyp is None:
        try:
            socket.inet_pton(socket.AF_INET, host)
            atyp = 1
        except OSError:
            try:
                socket.inet_pton(socket.AF_INET6, host)
                atyp = 4
            except OSError:
                atyp = 3
    if atyp == 1:
        addr = socket.inet_pton(socket.AF_INET, host)
    elif atyp == 4:
        addr = socket.inet_pton(socket.AF_INET6, host)
    else:
        addr = bytes([len(host)]) + host.encode()
    sock.sendall(b"\x05\x01\x00" + bytes([atyp]) + addr + struct.pack(">H", port))
    head = _recv_exact(sock, 4)
    if head[0] != 5:
        raise Socks5Error(f"bad reply version {head!r}")
    if head[3] == 1:
        rest = _recv_exact(sock, 6)
    elif head[3] == 4:
        rest = _recv_exact(sock, 18)
    elif head[3] == 3:
        n = _recv_exact(sock, 1)
        rest = n + _recv_exact(sock, n[0] + 2)
    else:
        raise Socks5Error(f"bad reply address type {head!r}")
    if head[1] != 0:
        raise Socks5Error(f"CONNECT refused with reply code {head[1]}")
    return head + rest


def _recv_exact(sock, n) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise Socks5Error(f"connection closed after {data!r}")
        data += chunk
    return data


# ---------------------------------------------------------------- HAR access

def entries(har) -> list:
    return har["log"]["entries"]


def entries_for(har, path_prefix, method=None) -> list:
    """Entries whose URL path (+query) starts with path_prefix, e.g. '/gzip' or '/json?a=1'."""
    out = []
    for e in entries(har):
        url = e["request"]["url"]
        rest = url.split("://", 1)[-1]
        pathq = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
        if pathq.startswith(path_prefix) and (method is None or e["request"]["method"] == method):
            out.append(e)
    return out


def one_entry(har, path_prefix, method=None) -> dict:
    found = entries_for(har, path_prefix, method)
    assert len(found) == 1, (f"expected exactly one HAR entry for {path_prefix}, got {len(found)}: "
                             f"{[e['request']['url'] for e in entries(har)]}")
    return found[0]


def har_header(part, name, default=None):
    for h in part.get("headers", []):
        if h["name"].lower() == name.lower():
            return h["value"]
    return default


def content_bytes(content) -> bytes:
    """The decoded body bytes a HAR content object holds (text, base64 or not)."""
    text = content.get("text", "")
    if content.get("encoding") == "base64":
        return base64.b64decode(text)
    return text.encode("utf-8")


def parse_iso(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


TIMING_KEYS = ("blocked", "dns", "connect", "send", "wait", "receive")


def check_timings(entry):
    t = entry["timings"]
    for k in TIMING_KEYS + ("ssl",):
        if k in t:
            assert t[k] == -1 or t[k] >= 0, f"timings.{k} = {t[k]}"
    for k in ("send", "wait", "receive"):
        assert t[k] >= 0, f"timings.{k} must be >= 0, is {t[k]}"
    total = sum(t[k] for k in TIMING_KEYS if k in t and t[k] >= 0)
    ok = abs(entry["time"] - total) <= 0.05
    if not ok and t.get("ssl", -1) >= 0:  # tolerate a writer that also adds ssl
        ok = abs(entry["time"] - total - t["ssl"]) <= 0.05
    assert ok, f"time {entry['time']} != sum of timings {total} ({t})"


# ---------------------------------------------------------------- pass-through cases

PAYLOAD_BIG = 5 * 1024 * 1024
PAYLOAD_SMALL = 20000


def make_payloads(dirpath: Path) -> dict:
    """Files the POST/PUT cases send: 5 MB and 20 KB of deterministic bytes."""
    big = dirpath / "payload-5m.bin"
    small = dirpath / "payload-20k.bin"
    if not big.exists():
        big.write_bytes(origin_mod.make_bytes(PAYLOAD_BIG, 77))
    if not small.exists():
        small.write_bytes(origin_mod.make_bytes(PAYLOAD_SMALL, 78))
    return {"big": str(big), "small": str(small)}


def _head_summary(out: bytes) -> bytes:
    """For HEAD cases (curl -I): the status code, Content-Length and Content-Type only."""
    lines = out.decode("latin-1").split("\r\n")
    code = lines[0].split(" ")[1]
    keep = [code]
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        if k.strip().lower() in ("content-length", "content-type"):
            keep.append(f"{k.strip().lower()}: {v.strip()}")
    return "\n".join(keep).encode()


@dataclass
class Case:
    name: str
    path: str
    args: tuple = ()                         # curl arguments before the URL; {big} {small} filled
    expected: Callable | None = None         # (payloads) -> bytes the output must equal
    normalize: Callable | None = None        # applied to stdout before comparing
    rc: int = 0

    def curl_args(self, payloads):
        return [a.replace("{big}", payloads["big"]).replace("{small}", payloads["small"])
                for a in self.args]


def _drop_version(out: bytes) -> bytes:
    doc = json.loads(out)
    doc.pop("version", None)
    return json.dumps(doc).encode()


def _b(n, seed):
    return lambda p: origin_mod.make_bytes(n, seed)


def _file(key):
    return lambda p: Path(p[key]).read_bytes()


_enc = origin_mod.encoded_doc
WOUT = "%{http_code} %{size_download}\n"

CASES = [
    Case("json", "/json?a=1&b=x%20y&h=host,user-agent,accept"),
    Case("bytes_1mib", "/bytes?n=1048576&seed=5", expected=_b(1048576, 5)),
    Case("bytes_empty", "/bytes?n=0", expected=lambda p: b""),
    Case("chunked", "/chunked?n=100000&chunks=7&seed=2", expected=_b(100000, 2)),
    Case("chunked_trailer_ext", "/chunked?n=5000&chunks=3&seed=4&trailer=1&ext=1",
         expected=_b(5000, 4)),
    Case("chunked_many", "/chunked?n=65536&chunks=2000&seed=6", expected=_b(65536, 6)),
    Case("gzip_raw", "/gzip", expected=lambda p: _enc("gzip")),
    Case("deflate_raw", "/deflate", expected=lambda p: _enc("deflate")),
    Case("br_raw", "/br", expected=lambda p: _enc("br")),
    Case("zstd_raw", "/zstd", expected=lambda p: _enc("zstd")),
    Case("gzip_compressed", "/gzip", ("--compressed",), expected=lambda p: origin_mod.JSON_DOC),
    Case("deflate_compressed", "/deflate", ("--compressed",),
         expected=lambda p: origin_mod.JSON_DOC),
    Case("br_compressed", "/br", ("--compressed",), expected=lambda p: origin_mod.JSON_DOC),
    Case("zstd_compressed", "/zstd", ("--compressed",), expected=lambda p: origin_mod.JSON_DOC),
    Case("close_delimited", "/close-delimited?n=200000&seed=8", expected=_b(200000, 8)),
    Case("slow", "/slow?ms=50&chunks=5", expected=lambda p: origin_mod.slow_body(5)),
    Case("head", "/head", ("-I",), normalize=_head_summary,
         expected=lambda p: b"200\ncontent-type: application/octet-stream\n"
                            b"content-length: 12345"),
    Case("head_chunked", "/chunked?n=999&chunks=3", ("-I",), normalize=_head_summary,
         expected=lambda p: b"200\ncontent-type: application/octet-stream"),
    Case("status_204", "/status/204", ("-o", "/dev/null", "-w", WOUT),
         expected=lambda p: b"204 0\n"),
    Case("status_304", "/status/304", ("-o", "/dev/null", "-w", WOUT),
         expected=lambda p: b"304 0\n"),
    Case("status_404", "/status/404", ("-w", WOUT), expected=lambda p: b"status 404\n404 11\n"),
    Case("status_503", "/status/503", ("-w", WOUT), expected=lambda p: b"status 503\n503 11\n"),
    Case("redirect_not_followed", "/redirect", ("-w", WOUT),
         expected=lambda p: b"redirecting\n302 12\n"),
    Case("redirect_followed", "/redirect?to=%2Fjson%3Fh%3Dhost%2Cuser-agent%2Caccept",
         ("-L", "-w", WOUT)),
    Case("post_5mb", "/echo", ("--data-binary", "@{big}", "-H",
                               "Content-Type: application/octet-stream"), expected=_file("big")),
    Case("post_5mb_chunked", "/echo", ("--data-binary", "@{big}", "-H",
                                       "Transfer-Encoding: chunked"), expected=_file("big")),
    Case("post_expect_small", "/echo", ("--data-binary", "@{small}", "-H",
                                        "Expect: 100-continue"), expected=_file("small")),
    Case("post_no_expect_big", "/echo", ("--data-binary", "@{big}", "-H", "Expect:"),
         expected=_file("big")),
    Case("put_upload", "/echo", ("-T", "{small}"), expected=_file("small")),
    Case("post_empty", "/echo", ("-X", "POST", "-H", "Content-Length: 0"),
         expected=lambda p: b""),
    # A proxy may speak HTTP/1.1 upstream for a 1.0 client: compare all but "version".
    Case("http10_json", "/json?v=10&h=host,user-agent,accept", ("-0",),
         normalize=lambda out: _drop_version(out)),
    Case("http10_chunked", "/chunked?n=30000&chunks=5&seed=3", ("-0",), expected=_b(30000, 3)),
    Case("http10_post", "/echo", ("-0", "--data-binary", "@{small}"), expected=_file("small")),
]
CASE_IDS = [c.name for c in CASES]


def run_case(case: Case, url_base: str, payloads: dict, proxy_args=()) -> bytes:
    """Runs one case with curl (directly, or through the proxy with proxy_args); returns the
    normalized output and checks the exit code and, where known, the expected bytes."""
    r = curl(*proxy_args, *case.curl_args(payloads), url_base + case.path, max_time=30)
    assert r.rc == case.rc, f"{case.name}: curl exit {r.rc} (wanted {case.rc}): {r.err}"
    out = case.normalize(r.out) if case.normalize else r.out
    if case.expected is not None:
        want = case.expected(payloads)
        assert out == want, (f"{case.name}: output differs from the origin's known bytes "
                             f"({len(out)} vs {len(want)} bytes; {out[:120]!r})")
    return out


# Ways to reach the origin through harrec with curl.
def proxy_curl_args(mode: str, px) -> list:
    if mode == "http":
        return ["-x", f"http://127.0.0.1:{px.http_port}"]
    if mode == "tunnel":
        return ["-x", f"http://127.0.0.1:{px.http_port}", "--proxytunnel"]
    if mode == "socks5":
        return ["--socks5", f"127.0.0.1:{px.socks_port}"]
    if mode == "socks5h":
        return ["--socks5-hostname", f"127.0.0.1:{px.socks_port}"]
    if mode == "http-via-socks-port":  # "either port serves both protocols"
        return ["-x", f"http://127.0.0.1:{px.socks_port}"]
    if mode == "socks5-via-http-port":
        return ["--socks5", f"127.0.0.1:{px.http_port}"]
    raise ValueError(mode)


MODES = ["http", "tunnel", "socks5", "socks5h"]


def mode_host(mode: str) -> str:
    """socks5h sends the host name to the proxy: use 'localhost' so the proxy resolves it."""
    return "localhost" if mode == "socks5h" else "127.0.0.1"


def json_body(out: bytes) -> dict:
    return json.loads(out.decode("utf-8"))


# ---------------------------------------------------------------- TLS (issue 3)
#
# Two unrelated authorities (certs/README.md): the *test CA* from certs/make-test-pki.sh signs the
# HTTPS test origin's certificates and is given to harrec with --upstream-ca; the *harrec CA*
# (<ca-dir>/harrec-ca.pem) signs the leaves harrec shows to clients. Clients trust only the one
# that matters for the hop they verify.

import re  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import ssl  # noqa: E402
import threading  # noqa: E402

PKI_SCRIPT = REPO / "certs" / "make-test-pki.sh"
CA_CERT_NAME = "harrec-ca.pem"
CA_KEY_NAME = "harrec-ca-key.pem"
FINGERPRINT_RE = re.compile(r"(?:[0-9A-F]{2}:){31}[0-9A-F]{2}")


def need_tool(name: str) -> str:
    """The path of a command-line tool; fails the test loudly when it is missing (never a skip)."""
    path = shutil.which(name)
    if path is None:
        import pytest
        pytest.fail(f"required tool {name!r} not found on PATH")
    return path


def make_test_pki(outdir: Path) -> Path:
    """Runs certs/make-test-pki.sh OUTDIR (names localhost 127.0.0.1 ::1); returns OUTDIR."""
    need_tool("openssl")
    p = subprocess.run(["sh", str(PKI_SCRIPT), str(outdir)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, f"{PKI_SCRIPT} failed ({p.returncode}):\n{p.stdout}{p.stderr}"
    for f in ("ca.pem", "server.pem", "server-key.pem", "wrong-host.pem", "wrong-host-key.pem",
              "self-signed.pem", "self-signed-key.pem"):
        assert (outdir / f).is_file(), f"{PKI_SCRIPT} did not write {f}"
    return outdir


def python313() -> str:
    """Python 3.13 (strict X.509 checks by default): $HARREC_PY313, else pyenv's 3.13.0."""
    exe = os.environ.get("HARREC_PY313")
    if not exe:
        root = os.environ.get("PYENV_ROOT")
        if not root and shutil.which("pyenv"):
            root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        exe = str(Path(root or Path.home() / ".pyenv") / "versions" / "3.13.0" / "bin" / "python3")
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        import pytest
        pytest.fail(f"Python 3.13 not found at {exe} (set HARREC_PY313)")
    return exe


def client_context(cafile) -> ssl.SSLContext:
    """A verifying client context that trusts only cafile (hostname checks on)."""
    return ssl.create_default_context(cafile=str(cafile))


# ---- raw tunnels

def http_connect(proxy_port: int, host: str, port: int, timeout: float = 5.0) -> socket.socket:
    """A socket with an established CONNECT tunnel through the HTTP proxy (asserts 200)."""
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)  # byte by byte: nothing after the head may be consumed
        if not chunk:
            s.close()
            raise EOFError(f"proxy closed during CONNECT: {head!r}")
        head += chunk
    status = head.split(b"\r\n", 1)[0]
    if not re.match(rb"HTTP/1\.[01] 200", status):
        s.close()
        raise AssertionError(f"CONNECT {authority} refused: {status!r}")
    return s


def socks5_connect(proxy_port: int, host: str, port: int, timeout: float = 5.0,
                   atyp=None) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    socks5_handshake(s, host, port, atyp=atyp)
    return s


def tunnel(kind: str, px, host: str, port: int) -> socket.socket:
    """kind 'connect' (HTTP proxy port) or 'socks5' (SOCKS5 port, host names sent as names)."""
    if kind == "connect":
        return http_connect(px.http_port, host, port)
    if kind == "socks5":
        return socks5_connect(px.socks_port, host, port)
    raise ValueError(kind)


class TLSClient:
    """TLS client over an already connected socket (e.g. a tunnel), driven through ssl.MemoryBIO
    so a test decides how the handshake bytes are cut into TCP segments. Socket-like enough for
    RawConn: sendall, recv, settimeout, close."""

    def __init__(self, sock: socket.socket, ctx: ssl.SSLContext, server_hostname: str | None):
        self.sock = sock
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname=server_hostname)
        self.first_flight = b""

    def _flush(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def _pull(self) -> bool:
        data = self.sock.recv(65536)
        if not data:
            self.incoming.write_eof()
            return False
        self.incoming.write(data)
        return True

    def handshake(self, split=None, delay: float = 0.0):
        """Completes the handshake. split: a list of piece sizes (cycled) for the first flight
        (the ClientHello), sent with TCP_NODELAY and `delay` seconds between pieces."""
        first = True
        while True:
            try:
                self.obj.do_handshake()
                self._flush()
                return self
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError:
                self._flush()  # the alert OpenSSL queued (e.g. unknown CA), as a real client sends
                raise
            if first:
                first = False
                data = self.outgoing.read()
                self.first_flight = data
                if split:
                    pos, i = 0, 0
                    while pos < len(data):
                        n = split[i % len(split)]
                        self.sock.sendall(data[pos:pos + n])
                        pos += n
                        i += 1
                        if delay:
                            time.sleep(delay)
                else:
                    self.sock.sendall(data)
            else:
                self._flush()
            if not self._pull():
                self.obj.do_handshake()  # raises the real reason (EOF in violation of protocol)
                raise EOFError("connection closed during the TLS handshake")

    # socket-like interface
    def sendall(self, data: bytes):
        self.obj.write(data)
        self._flush()

    def recv(self, n: int) -> bytes:
        while True:
            try:
                return self.obj.read(n)
            except ssl.SSLWantReadError:
                self._flush()
                if not self._pull():
                    try:
                        return self.obj.read(n)
                    except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                        return b""
            except ssl.SSLZeroReturnError:
                return b""

    def settimeout(self, t):
        self.sock.settimeout(t)

    def getpeercert(self, binary_form=False):
        return self.obj.getpeercert(binary_form)

    def version(self):
        return self.obj.version()

    def selected_alpn_protocol(self):
        return self.obj.selected_alpn_protocol()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---- a raw TCP echo server (non-TLS, non-HTTP tunnel payloads)

class TCPEchoServer:
    """Echoes every byte back on 127.0.0.1:port; .received holds what each connection sent.
    Closes its side when the client half-closes (after echoing everything)."""

    def __init__(self):
        self.ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.received: list[bytearray] = []
        self.lock = threading.Lock()
        self.stopping = False

    def start(self) -> "TCPEchoServer":
        threading.Thread(target=self._accept, daemon=True, name="echo-accept").start()
        return self

    def _accept(self):
        while not self.stopping:
            try:
                s, _ = self.ls.accept()
            except OSError:
                return
            buf = bytearray()
            with self.lock:
                self.received.append(buf)
            threading.Thread(target=self._serve, args=(s, buf), daemon=True).start()

    def _serve(self, s, buf):
        s.settimeout(30)
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    break
                with self.lock:
                    buf += data
                s.sendall(data)
        except OSError:
            pass
        finally:
            s.close()

    def stop(self):
        self.stopping = True
        self.ls.close()


# ---- openssl CLI

def s_client(*args, timeout: float = 20) -> subprocess.CompletedProcess:
    """`openssl s_client ARGS -showcerts` with stdin /dev/null (sends nothing, closes at EOF)."""
    need_tool("openssl")
    return subprocess.run(["openssl", "s_client", "-showcerts", *map(str, args)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


PEM_CERT_RE = re.compile(r"-----BEGIN CERTIFICATE-----\n.*?\n-----END CERTIFICATE-----",
                         re.S)


def pem_certs(text: str) -> list[str]:
    return [m + "\n" for m in PEM_CERT_RE.findall(text)]


def openssl_x509(pem: str, *args, inform="PEM") -> str:
    p = subprocess.run(["openssl", "x509", "-inform", inform, "-noout", *args],
                       input=pem.encode() if isinstance(pem, str) else pem,
                       capture_output=True, timeout=20)
    assert p.returncode == 0, f"openssl x509 {' '.join(args)} failed: {p.stderr.decode()}"
    return p.stdout.decode()


def x509_field(text: str, key: str) -> str:
    """'subject=CN = x' -> 'CN = x' for key 'subject' (openssl x509 -subject/-issuer/-dates)."""
    for ln in text.splitlines():
        if ln.startswith(key + "="):
            return ln[len(key) + 1:].strip()
    raise AssertionError(f"no {key}= in {text!r}")


def x509_time(value: str) -> datetime:
    """'Nov  1 06:51:00 2025 GMT' -> aware datetime."""
    from datetime import timezone
    return datetime.strptime(" ".join(value.split()), "%b %d %H:%M:%S %Y GMT").replace(
        tzinfo=timezone.utc)


def sha256_fingerprint(pem_or_der, inform="PEM") -> str:
    out = openssl_x509(pem_or_der, "-fingerprint", "-sha256", inform=inform)
    m = FINGERPRINT_RE.search(out.upper())
    assert m, out
    return m.group(0)


# ---- the harrec CA's private key must never show up in any output

def key_secrets(key_path: Path) -> list[bytes]:
    """Byte strings that would reveal the key at key_path: every base64 line of its PEM body,
    its DER, and its private scalar (as printed by `openssl pkey -text`, in hex both cases)."""
    pem = Path(key_path).read_bytes()
    lines = [ln.strip() for ln in pem.splitlines()
             if ln.strip() and not ln.startswith(b"-----")]
    secrets = [ln for ln in lines if len(ln) >= 16]
    body = b"".join(lines)
    secrets.append(base64.b64decode(body))
    p = subprocess.run(["openssl", "pkey", "-in", str(key_path), "-noout", "-text"],
                       capture_output=True, timeout=20)
    if p.returncode == 0:
        text = p.stdout.decode()
        m = re.search(r"priv(?:ate[- ]?exponent)?:?\s*\n((?:\s+[0-9a-f:]+\n)+)", text)
        if m:
            scalar = re.sub(r"[\s:]", "", m.group(1))
            if scalar.startswith("00"):
                scalar = scalar[2:]
            scalar = scalar[:64]
            secrets += [scalar.encode(), scalar.upper().encode(), bytes.fromhex(scalar)]
    return secrets


def assert_no_key_material(key_path: Path, *outputs, what="harrec output"):
    """None of outputs (str or bytes) contains the key at key_path or a PEM private key block."""
    if not Path(key_path).exists():
        return
    secrets = key_secrets(key_path)
    for out in outputs:
        data = out.encode("utf-8", "replace") if isinstance(out, str) else bytes(out)
        assert b"PRIVATE KEY" not in data, f"{what} contains a PEM private key block"
        for s in secrets:
            assert s not in data, f"{what} contains bytes of the CA private key {key_path}"


# ---- a stdlib-only client for Python 3.13 (run with python313() -c PY_TLS_CLIENT ARGS)

PY_TLS_CLIENT = r'''
import json, socket, ssl, sys
mode, proxy_port, host, port, cafile, path = sys.argv[1:7]
port = int(port)
authority = f"{host}:{port}"
if mode == "connect":
    s = socket.create_connection(("127.0.0.1", int(proxy_port)), timeout=10)
    s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1)
        if not c:
            raise SystemExit(f"proxy closed the CONNECT: {head!r}")
        head += c
    if not head.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200")):
        raise SystemExit(f"CONNECT refused: {head!r}")
else:
    s = socket.create_connection((host, port), timeout=10)
ctx = ssl.create_default_context(cafile=cafile)
strict = bool(ctx.verify_flags & ssl.VERIFY_X509_STRICT)
t = ctx.wrap_socket(s, server_hostname=host)
t.sendall(f"GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: py313\r\n\r\n".encode())
buf = b""
while b"\r\n\r\n" not in buf:
    c = t.recv(65536)
    if not c:
        raise SystemExit(f"closed inside the response head: {buf!r}")
    buf += c
head, _, body = buf.partition(b"\r\n\r\n")
lines = head.decode("latin-1").split("\r\n")
length = None
for ln in lines[1:]:
    k, _, v = ln.partition(":")
    if k.strip().lower() == "content-length":
        length = int(v.strip())
if length is None:
    raise SystemExit(f"no Content-Length in {lines!r}")
while len(body) < length:
    c = t.recv(65536)
    if not c:
        raise SystemExit("closed inside the body")
    body += c
cert = t.getpeercert()
import hashlib
print(json.dumps({"python": sys.version.split()[0], "strict": strict, "status": lines[0],
                  "tls": t.version(), "body_sha256": hashlib.sha256(body[:length]).hexdigest(),
                  "body_len": length, "san": cert.get("subjectAltName"),
                  "issuer": cert.get("issuer")}))
t.close()
'''


# ---------------------------------------------------------------- WebSocket (issue 4)
#
# Two kinds of WebSocket peers: `WSServer` runs the `websockets` library (asyncio, in a thread of
# its own) for real-client behaviour (compression, fragmentation, closes); `RawWSServer` and the
# frame functions below speak RFC 6455 by hand for what `websockets` refuses to send or accept
# (invalid UTF-8 text) and for byte-exact checks of what was relayed.

import asyncio  # noqa: E402
import itertools  # noqa: E402

import websockets  # noqa: E402
from websockets.asyncio.server import serve as ws_serve  # noqa: E402

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def ws_accept(key: str) -> str:
    """Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 section 4.2.2)."""
    return base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()


def ws_close_payload(code: int, reason: str = "") -> bytes:
    return struct.pack(">H", code) + reason.encode("utf-8")


def _ws_mask(data: bytes, key: bytes) -> bytes:
    if not data:
        return b""
    n = len(data)
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(k, "big")).to_bytes(n, "big")


def ws_frame(opcode: int, payload: bytes = b"", fin: bool = True, mask: bool = True,
             rsv1: bool = False, mask_key: bytes | None = None) -> bytes:
    """One frame as it goes on the wire; clients mask (mask=True), servers do not."""
    b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    m = 0x80 if mask else 0
    n = len(payload)
    if n < 126:
        head = bytes([b0, m | n])
    elif n < 65536:
        head = bytes([b0, m | 126]) + struct.pack(">H", n)
    else:
        head = bytes([b0, m | 127]) + struct.pack(">Q", n)
    if not mask:
        return head + payload
    key = mask_key or os.urandom(4)
    return head + key + _ws_mask(payload, key)


@dataclass
class WSFrame:
    fin: bool
    rsv1: bool
    opcode: int
    payload: bytes  # unmasked
    masked: bool
    raw: bytes      # the frame's bytes on the wire


def ws_parse_frames(buf: bytearray) -> list[WSFrame]:
    """Removes every complete frame from the front of buf and returns them (partial ones stay)."""
    out = []
    while len(buf) >= 2:
        b0, b1 = buf[0], buf[1]
        n = b1 & 0x7F
        pos = 2
        if n == 126:
            if len(buf) < 4:
                break
            n = struct.unpack(">H", buf[2:4])[0]
            pos = 4
        elif n == 127:
            if len(buf) < 10:
                break
            n = struct.unpack(">Q", buf[2:10])[0]
            pos = 10
        masked = bool(b1 & 0x80)
        key = b""
        if masked:
            if len(buf) < pos + 4:
                break
            key = bytes(buf[pos:pos + 4])
            pos += 4
        if len(buf) < pos + n:
            break
        payload = bytes(buf[pos:pos + n])
        raw = bytes(buf[:pos + n])
        del buf[:pos + n]
        out.append(WSFrame(bool(b0 & 0x80), bool(b0 & 0x40), b0 & 0x0F,
                           _ws_mask(payload, key) if masked else payload, masked, raw))
    return out


def ws_upgrade_request(target: str, host: str, key: str, extra=()) -> bytes:
    """A client's upgrade head (target in origin-form, or absolute-form for a plain HTTP proxy)."""
    return request_bytes("GET", target, host, [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                               ("Sec-WebSocket-Key", key),
                                               ("Sec-WebSocket-Version", "13"), *extra])


def ws_text(nbytes: int, seed: int = 0) -> str:
    """A str whose UTF-8 encoding is exactly nbytes long, with 1-, 2-, 3- and 4-byte characters."""
    unit = f"ws{seed} Grüße, 世界 😀 "
    ub = unit.encode("utf-8")
    raw = (ub * (nbytes // len(ub) + 1))[:nbytes]
    text = raw.decode("utf-8", "ignore")
    text += "x" * (nbytes - len(text.encode("utf-8")))
    assert len(text.encode("utf-8")) == nbytes
    return text


def ws_message(kind: str, size: int, seed: int = 0):
    """A deterministic message: kind 'text' (str of size UTF-8 bytes) or 'binary' (bytes)."""
    return ws_text(size, seed) if kind == "text" else origin_mod.make_bytes(size, seed)


def ws_event(msg) -> tuple:
    """A received or sent message as ('text', str) or ('binary', bytes)."""
    return ("text", msg) if isinstance(msg, str) else ("binary", bytes(msg))


def ws_close_event(close) -> tuple | None:
    """A websockets Close (protocol.close_sent / close_rcvd) as ('close', 'CODE REASON')."""
    if close is None:
        return None
    return ("close", f"{close.code} {close.reason}")


@dataclass
class WSServerConn:
    """What one connection to a WSServer saw. `received` / `sent`: ws_event tuples in order
    (commands included in `received`); close_rcvd / close_sent: ws_close_event or None."""
    path: str
    request_headers: list
    response_headers: list
    received: list = field(default_factory=list)
    sent: list = field(default_factory=list)
    pings_sent: list = field(default_factory=list)
    close_rcvd: tuple | None = None
    close_sent: tuple | None = None
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)


class WSServer:
    """A `websockets` server (asyncio in its own thread) on 127.0.0.1 and ::1 (same port).

    Every path behaves the same: each message is recorded and echoed back, except a text message
    holding a JSON object with "op", which is a command (recorded, not echoed):
      {"op": "send", "n": N, "kind": "text"|"binary", "size": S, "seed": K}  N messages
      {"op": "fragments", "kind": ..., "sizes": [..], "seed": K, "ping": bool}  one message in
          len(sizes) frames (a ping, awaited, between frames when "ping")
      {"op": "ping", "data": "..."}   a ping, then (after its pong) the text message "pinged"
      {"op": "close", "code": C, "reason": R}   server-initiated close
      {"op": "abort", "raw": HEX}     writes the raw bytes (e.g. a partial frame), then aborts TCP
    `conn(path)` returns the WSServerConn of the connection whose request target is path."""

    def __init__(self, tls: ssl.SSLContext | None = None, compression: str | None = "deflate",
                 extensions=None):
        self.tls = tls
        self.compression = compression
        self.extensions = extensions
        self.scheme = "wss" if tls else "ws"
        self.port: int | None = None
        self.conns: dict[str, WSServerConn] = {}
        self.cond = threading.Condition()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def url(self, host: str, path: str) -> str:
        h = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{h}:{self.port}{path}"

    # ---- lifecycle
    def _sockets(self):
        for _attempt in range(20):
            v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            v4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            v4.bind(("127.0.0.1", 0))
            port = v4.getsockname()[1]
            v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                v6.bind(("::1", port))
            except OSError:
                v4.close()
                v6.close()
                continue
            return port, [v4, v6]
        raise RuntimeError("could not bind 127.0.0.1 and ::1 on one port")

    def start(self) -> "WSServer":
        self.port, socks = self._sockets()
        self.thread = threading.Thread(target=self._run, args=(socks,), daemon=True,
                                       name=f"ws-server-{self.port}")
        self.thread.start()
        if not self._ready.wait(10) or self._error:
            raise RuntimeError(f"WebSocket server did not start: {self._error!r}")
        return self

    def _run(self, socks):
        try:
            asyncio.run(self._main(socks))
        except BaseException as exc:  # noqa: BLE001 (reported by start())
            self._error = exc
            self._ready.set()

    async def _main(self, socks):
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        servers = []
        for s in socks:
            servers.append(await ws_serve(self._handler, sock=s, ssl=self.tls,
                                          compression=self.compression,
                                          extensions=self.extensions, max_size=None,
                                          ping_interval=None, close_timeout=5))
        self._ready.set()
        await self._stop.wait()
        for srv in servers:
            srv.close()
        for srv in servers:
            await asyncio.wait_for(srv.wait_closed(), 10)

    def stop(self):
        if self.loop is not None and self._stop is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self._stop.set)
            self.thread.join(15)

    # ---- connections
    def conn(self, path: str, timeout: float = 5.0) -> WSServerConn:
        deadline = time.time() + timeout
        with self.cond:
            while path not in self.conns:
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError(f"no WebSocket connection for {path} reached the server "
                                         f"(seen: {list(self.conns)})")
                self.cond.wait(left)
            return self.conns[path]

    def finished(self, path: str, timeout: float = 10.0) -> WSServerConn:
        """The connection's record once its handler has finished (the connection is closed)."""
        c = self.conn(path, timeout)
        assert c.done.wait(timeout), f"the server's side of {path} did not finish in {timeout} s"
        assert c.error is None, f"server handler for {path} failed: {c.error}"
        return c

    async def _handler(self, ws):
        c = WSServerConn(ws.request.path, list(ws.request.headers.raw_items()),
                         list(ws.response.headers.raw_items()))
        with self.cond:
            self.conns[c.path] = c
            self.cond.notify_all()
        try:
            async for msg in ws:
                c.received.append(ws_event(msg))
                cmd = None
                if isinstance(msg, str) and msg.startswith("{"):
                    try:
                        cmd = json.loads(msg)
                    except ValueError:
                        cmd = None
                if isinstance(cmd, dict) and "op" in cmd:
                    await self._command(ws, c, cmd)
                else:
                    await ws.send(msg)
                    c.sent.append(ws_event(msg))
        except websockets.ConnectionClosed:
            pass
        except Exception as exc:  # noqa: BLE001 (reported by finished())
            c.error = repr(exc)
        finally:
            try:
                await asyncio.wait_for(ws.wait_closed(), 10)
            except Exception as exc:  # noqa: BLE001
                c.error = c.error or f"wait_closed: {exc!r}"
            c.close_rcvd = ws_close_event(ws.protocol.close_rcvd)
            c.close_sent = ws_close_event(ws.protocol.close_sent)
            c.done.set()

    async def _command(self, ws, c: WSServerConn, cmd: dict):
        op = cmd["op"]
        if op == "send":
            for i in range(cmd["n"]):
                m = ws_message(cmd.get("kind", "text"), cmd.get("size", 16), cmd.get("seed", 0) + i)
                await ws.send(m)
                c.sent.append(ws_event(m))
        elif op == "fragments":
            whole = ws_message(cmd.get("kind", "text"), sum(cmd["sizes"]), cmd.get("seed", 0))
            parts = split_message(whole, cmd["sizes"])

            async def gen():
                for i, part in enumerate(parts):
                    if i and cmd.get("ping"):
                        data = f"server-frag-ping-{i}".encode()
                        await (await ws.ping(data))
                        c.pings_sent.append(data)
                    yield part
            await ws.send(gen())
            c.sent.append(ws_event(whole))
        elif op == "ping":
            data = cmd["data"].encode()
            await (await ws.ping(data))
            c.pings_sent.append(data)
            await ws.send("pinged")
            c.sent.append(ws_event("pinged"))
        elif op == "close":
            await ws.close(cmd["code"], cmd["reason"])
        elif op == "abort":
            ws.transport.write(bytes.fromhex(cmd["raw"]))
            await asyncio.sleep(0.3)  # let the partial frame leave before the reset
            ws.transport.abort()
        else:
            raise ValueError(f"unknown command {op!r}")


def split_message(whole, sizes):
    """Cuts a message into len(sizes) fragments: bytes by byte counts, a str by character counts
    (websockets encodes each str fragment by itself); the last fragment takes the rest."""
    out, pos = [], 0
    for n in sizes[:-1]:
        out.append(whole[pos:pos + n])
        pos += n
    out.append(whole[pos:])
    return out


class RawWSServer:
    """A hand-written WebSocket server (stdlib, a thread per connection, optional TLS) for frames
    `websockets` will not send or accept. It answers the upgrade with 101 (after the whole head),
    sends `greeting` (raw frame bytes, e.g. an invalid UTF-8 text frame) at once, answers a ping
    with a pong and a close with the same close payload (then closes). Per connection (in
    `.conns`, in accept order) it keeps `head` (the upgrade head it got), `received` (every byte
    after the head, exactly), `sent` (every byte after its 101 head) and `frames` (parsed)."""

    def __init__(self, greeting: bytes = b"", tls: ssl.SSLContext | None = None,
                 close_after_greeting: bool = False, greeting_delay: float = 0.0):
        self.greeting = greeting
        self.greeting_delay = greeting_delay  # seconds between the 101 and the greeting
        self.tls = tls
        self.close_after_greeting = close_after_greeting  # then: close_notify (TLS) and close
        self.ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.conns: list[dict] = []
        self.lock = threading.Lock()
        self.stopping = False

    def start(self) -> "RawWSServer":
        threading.Thread(target=self._accept, daemon=True, name="raw-ws-accept").start()
        return self

    def _accept(self):
        while not self.stopping:
            try:
                s, _ = self.ls.accept()
            except OSError:
                return
            c = {"head": b"", "received": bytearray(), "sent": bytearray(), "frames": [],
                 "error": None, "done": threading.Event()}
            with self.lock:
                self.conns.append(c)
            threading.Thread(target=self._serve, args=(s, c), daemon=True).start()

    def _serve(self, s, c):
        s.settimeout(15)
        try:
            if self.tls is not None:
                s = self.tls.wrap_socket(s, server_side=True)
            buf = bytearray()
            while b"\r\n\r\n" not in buf:
                data = s.recv(65536)
                if not data:
                    raise EOFError(f"closed inside the upgrade head: {bytes(buf)[:200]!r}")
                buf += data
            i = buf.index(b"\r\n\r\n") + 4
            c["head"] = bytes(buf[:i])
            del buf[:i]
            key = None
            for ln in c["head"].decode("latin-1").split("\r\n")[1:]:
                k, _, v = ln.partition(":")
                if k.strip().lower() == "sec-websocket-key":
                    key = v.strip()
            if key is None:
                raise ValueError("no Sec-WebSocket-Key in the upgrade head")
            s.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                       "Connection: Upgrade\r\n"
                       f"Sec-WebSocket-Accept: {ws_accept(key)}\r\n\r\n").encode())

            def send(data):
                s.sendall(data)
                c["sent"] += data
            if self.greeting:
                if self.greeting_delay:
                    time.sleep(self.greeting_delay)
                send(self.greeting)
            if self.close_after_greeting:
                if self.tls is not None:
                    s.setblocking(False)  # send close_notify now, do not wait for the peer's
                    try:
                        s.unwrap()
                    except (ssl.SSLWantReadError, ssl.SSLWantWriteError, OSError):
                        pass
                return
            c["received"] += buf
            pending = bytearray(buf)
            closing = False
            while not closing:
                for fr in ws_parse_frames(pending):
                    c["frames"].append(fr)
                    if fr.opcode == OP_PING:
                        send(ws_frame(OP_PONG, fr.payload, mask=False))
                    elif fr.opcode == OP_CLOSE:
                        send(ws_frame(OP_CLOSE, fr.payload, mask=False))
                        closing = True
                        break
                if closing:
                    break
                data = s.recv(65536)
                if not data:
                    break
                c["received"] += data
                pending += data
            if closing:  # the client closes TCP after our close frame; wait (bounded) for it
                s.settimeout(3)
                try:
                    while True:
                        data = s.recv(65536)
                        if not data:
                            break
                        c["received"] += data
                except OSError:
                    pass
        except Exception as exc:  # noqa: BLE001 (tests read c["error"])
            c["error"] = repr(exc)
        finally:
            try:
                s.close()
            except OSError:
                pass
            c["done"].set()

    def finished(self, index: int = 0, timeout: float = 10.0) -> dict:
        deadline = time.time() + timeout
        while True:
            with self.lock:
                if len(self.conns) > index:
                    c = self.conns[index]
                    break
            if time.time() > deadline:
                raise AssertionError("no connection reached the raw WebSocket server")
            time.sleep(0.02)
        assert c["done"].wait(max(0.1, deadline - time.time())), \
            "the raw WebSocket server's connection did not finish"
        return c

    def stop(self):
        self.stopping = True
        self.ls.close()


# ---- HAR `_webSocketMessages`

def ws_har_event(m: dict) -> tuple:
    """A HAR WebSocket message as (type, event): event ('text', str), ('binary', bytes),
    ('invalid-text', raw bytes), ('close', 'CODE REASON'), ('ping'|'pong', bytes)."""
    op, data = m["opcode"], m["data"]
    if op == OP_TEXT:
        if m.get("_invalidUTF8"):
            assert m.get("_encoding") == "base64", f"_invalidUTF8 without _encoding base64: {m}"
            return m["type"], ("invalid-text", base64.b64decode(data))
        return m["type"], ("text", data)
    if op == OP_BINARY:
        return m["type"], ("binary", base64.b64decode(data))
    if op == OP_CLOSE:
        return m["type"], ("close", data)
    if op in (OP_PING, OP_PONG):
        raw = base64.b64decode(data) if m.get("_encoding") == "base64" else data.encode("utf-8")
        return m["type"], ("ping" if op == OP_PING else "pong", raw)
    raise AssertionError(f"unexpected opcode in _webSocketMessages: {m}")


def stop_process(proc, timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not exited within timeout seconds."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
