#!/usr/bin/env python3
"""A deterministic HTTP/1.1 origin server for harrec's end-to-end tests.

Standard library only (brotli / zstandard are used when importable; their endpoints answer 501
otherwise). A small threaded socket server, not http.server, so that framing is exact: keep-alive,
pipelining, chunked request bodies, `Expect: 100-continue`, HTTP/1.0 clients and the deliberately
broken responses below all behave precisely as documented.

Run it alone:        python3 origin.py --port 0      -> prints "origin listening on 127.0.0.1:PORT"
Or in a thread:      srv = OriginServer().start(); ...; srv.stop()

HTTPS: OriginServer(tls=server_tls_context(CERT, KEY)) (or `origin.py --tls-cert C --tls-key K`)
serves the same endpoints over TLS (1.2 and 1.3, ALPN http/1.1 only). The handshake runs on the
connection's thread; each connection's SNI, version, ALPN or handshake error is kept in
`tls_log()`, and /stats then also counts `tls_handshakes` and `tls_errors`. A TLS connection ends
with a close_notify (except /reset), so close-delimited bodies end cleanly. The certificates
come from certs/make-test-pki.sh (see conftest.py's `test_pki`).

It listens on 127.0.0.1 and, when it can get the same port, on ::1 too (so "localhost" works
whichever address a resolver returns first). Every response carries `X-Origin-Conn` (the id of the
TCP connection it was served on, from 1) and `X-Origin-Req` (the request's number on that
connection, from 1), which lets tests see upstream connection reuse.

Endpoints (query parameters in brackets; all bodies are deterministic):
  /json[?h=a,b&...]        JSON describing the request as seen here: method, target, path, query,
                           args, version, headers (all, or only those named in h), body_len.
  /bytes?n=N[&seed=S&ct=T] N pseudo-random bytes (make_bytes(N, S)), Content-Length.
  /chunked?n=N&chunks=K[&seed=S&trailer=1&ext=1]
                           the same bytes, chunked in K chunks; trailer=1 adds a trailer
                           X-Body-Sha256; ext=1 adds chunk extensions. HTTP/1.0 clients get
                           Content-Length instead.
  /gzip /deflate /br /zstd JSON_DOC (~24 KB) with that Content-Encoding (deflate = zlib-wrapped).
                           /br, /zstd answer 501 if the Python module is missing.
  /slow?ms=M&chunks=K      K chunks (SLOW_CHUNK(i)) M ms apart, chunked (close-delimited to 1.0).
  /close-delimited?n=N     200, Connection: close, no Content-Length, no chunking; body ends at close.
  /status/NNN              that status (200..599); 204 and 304 without body; 1xx is refused (400).
  /head                    GET: 12345 bytes (make_bytes(12345, 7)); HEAD: same headers, no body.
                           (HEAD works on every endpoint: headers only.)
  /echo  (POST, PUT)       the request body byte-exact with the request Content-Type
                           (X-Request-Framing, X-Request-Body-Sha256 describe what arrived).
                           Chunked request bodies and `Expect: 100-continue` are supported.
  /set-cookie              two Set-Cookie headers (SET_COOKIES), body "cookies set\n".
  /redirect[?to=URL]       302 with Location URL (default REDIRECT_LOCATION).
  /reset                   reads the request, then closes with SO_LINGER 0 (TCP RST).
  /close-mid-body          Content-Length 1000, sends 100 bytes, closes.
  /bad-response            a garbage status line, then close.
  /bad-framing             Content-Length and Transfer-Encoding: chunked together, then close.
  /hang                    reads the request and never answers; closes when the client goes
                           away, the server stops, or after 30 s.
  /stats                   JSON: connections accepted, requests served (this one included), bad
                           requests, currently open connections.
Anything else: 404.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import json
import random
import select
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import zlib
from http import HTTPStatus
from urllib.parse import parse_qsl, urlsplit

try:  # optional: /br answers 501 without it
    import brotli  # type: ignore
except ImportError:  # pragma: no cover
    brotli = None
try:  # optional: /zstd answers 501 without it
    import zstandard  # type: ignore
except ImportError:  # pragma: no cover
    zstandard = None

SERVER_NAME = "harrec-e2e-origin"
MAX_HEAD = 256 * 1024  # far above harrec's 64 KiB limit, so the proxy's limit is what tests see
MAX_BODY = 64 * 1024 * 1024
IDLE_TIMEOUT = 30.0
HANG_LIMIT = 30.0
TLS_HANDSHAKE_TIMEOUT = 10.0  # a TLS client that stalls mid-handshake is dropped after this
REDIRECT_LOCATION = "/json?from=redirect"
HEAD_LEN = 12345
CLOSE_MID_BODY_DECLARED = 1000
CLOSE_MID_BODY_SENT = 100
BAD_RESPONSE = b"HTTP/1.1 2x0 Garbage Status\r\nContent-Length: 5\r\n\r\nhello"
BAD_FRAMING = (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n"
               b"Content-Type: text/plain\r\n\r\n5\r\nhello\r\n0\r\n\r\n")

# The two cookies /set-cookie sets, as header values and as a HAR cookie should parse them.
SET_COOKIES = [
    "session=abc123; Path=/; Domain=127.0.0.1; Expires=Wed, 21 Oct 2037 07:28:00 GMT; "
    "HttpOnly; Secure; SameSite=Lax",
    "prefs=compact; Path=/app; Domain=127.0.0.1; Expires=Thu, 01 Jan 2037 00:00:00 GMT; "
    "Secure; SameSite=Strict",
]
EXPECTED_COOKIES = [
    {"name": "session", "value": "abc123", "path": "/", "domain": "127.0.0.1",
     "expires": "2037-10-21T07:28:00", "httpOnly": True, "secure": True, "sameSite": "Lax"},
    {"name": "prefs", "value": "compact", "path": "/app", "domain": "127.0.0.1",
     "expires": "2037-01-01T00:00:00", "httpOnly": False, "secure": True, "sameSite": "Strict"},
]


@functools.lru_cache(maxsize=64)
def make_bytes(n: int, seed: int = 0) -> bytes:
    """N deterministic pseudo-random bytes for a seed (same on every run and machine)."""
    return random.Random(seed).randbytes(n) if n > 0 else b""


def _make_json_doc() -> bytes:
    rng = random.Random(1234)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa"]
    items = []
    for i in range(140):
        items.append({
            "id": i,
            "name": " ".join(rng.choice(words) for _ in range(3)),
            "score": rng.randint(0, 100000) / 100,
            "tags": [rng.choice(words) for _ in range(rng.randint(1, 4))],
            "active": rng.random() < 0.5,
            "note": "caf\u00e9 \u2713 " + rng.choice(words),
        })
    return (json.dumps({"kind": "harrec-e2e-doc", "items": items}, ensure_ascii=False,
                       indent=1) + "\n").encode("utf-8")


JSON_DOC = _make_json_doc()  # ~24 KB of UTF-8 JSON, the decoded body of /gzip /deflate /br /zstd


@functools.lru_cache(maxsize=None)
def encoded_doc(encoding: str) -> bytes | None:
    """JSON_DOC compressed with a Content-Encoding, or None if the codec is unavailable."""
    if encoding == "gzip":
        return gzip.compress(JSON_DOC, compresslevel=6, mtime=0)
    if encoding == "deflate":
        return zlib.compress(JSON_DOC, 6)
    if encoding == "br":
        return brotli.compress(JSON_DOC) if brotli is not None else None
    if encoding == "zstd":
        return zstandard.ZstdCompressor(level=3).compress(JSON_DOC) if zstandard else None
    raise ValueError(encoding)


def chunk_sizes(n: int, k: int) -> list[int]:
    """How /chunked splits N bytes into K (non-empty) chunks."""
    k = max(1, min(k, n)) if n > 0 else 0
    if k == 0:
        return []
    base, extra = divmod(n, k)
    return [base + (1 if i < extra else 0) for i in range(k)]


def slow_chunk(i: int) -> bytes:
    return b"slow chunk %04d\n" % i


def slow_body(k: int) -> bytes:
    return b"".join(slow_chunk(i) for i in range(k))


def status_body(code: int) -> bytes:
    return b"" if code in (204, 304) else b"status %d\n" % code


class BadRequest(Exception):
    pass


class ClientGone(Exception):
    pass


def _reason(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "Status"


def _is_token(s: str) -> bool:
    return bool(s) and all(c.isalnum() or c in "!#$%&'*+-.^_`|~" for c in s) and s.isascii()


class Request:
    def __init__(self, method, target, version, headers):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers  # list of (name, value) in received order
        self.body = b""
        self.framing = "none"
        parts = urlsplit(target)
        self.path = parts.path or "/"
        self.query = parts.query
        self.args = parse_qsl(parts.query, keep_blank_values=True)

    def header(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    def arg(self, name, default=None):
        for k, v in self.args:
            if k == name:
                return v
        return default

    def int_arg(self, name, default, lo=0, hi=MAX_BODY):
        try:
            v = int(self.arg(name, default))
        except (TypeError, ValueError):
            raise BadRequest(f"bad integer parameter {name}")
        if not lo <= v <= hi:
            raise BadRequest(f"parameter {name} out of range")
        return v

    @property
    def head_only(self):
        return self.method == "HEAD"

    @property
    def http10(self):
        return self.version == "HTTP/1.0"

    def wants_keep_alive(self):
        tokens = {t.strip().lower() for v in self.header_all("connection") for t in v.split(",")}
        if self.http10:
            return "keep-alive" in tokens
        return "close" not in tokens


class Connection:
    def __init__(self, server: "OriginServer", sock: socket.socket, conn_id: int):
        self.server = server
        self.sock = sock
        self.conn_id = conn_id
        self.buf = bytearray()
        self.req_no = 0
        sock.settimeout(IDLE_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # ---- reading ----
    def _fill(self):
        try:
            data = self.sock.recv(65536)
        except (socket.timeout, OSError):
            raise ClientGone()
        if not data:
            raise ClientGone()
        self.buf += data

    def _read_line(self, limit=MAX_HEAD) -> bytes:
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            if len(self.buf) > limit:
                raise BadRequest("line too long")
            self._fill()

    def _read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def read_request(self) -> Request | None:
        # Wait for the head (returns None on a clean close between requests).
        while True:
            i = self.buf.find(b"\r\n\r\n")
            if i >= 0:
                break
            if len(self.buf) > MAX_HEAD:
                raise BadRequest("header block too large")
            try:
                self._fill()
            except ClientGone:
                if self.buf:
                    raise BadRequest("connection closed inside the request head")
                return None
        head = bytes(self.buf[:i])
        del self.buf[:i + 4]
        lines = head.split(b"\r\n")
        try:
            method, target, version = lines[0].decode("ascii").split(" ")
        except (UnicodeDecodeError, ValueError):
            raise BadRequest("bad request line")
        if not _is_token(method) or version not in ("HTTP/1.0", "HTTP/1.1") or not target:
            raise BadRequest("bad request line")
        headers = []
        for raw in lines[1:]:
            if raw[:1] in (b" ", b"\t"):
                raise BadRequest("obs-fold")
            if b"\0" in raw or b"\r" in raw or b"\n" in raw:
                raise BadRequest("control character in header")
            name, sep, value = raw.partition(b":")
            try:
                name_s = name.decode("ascii")
            except UnicodeDecodeError:
                raise BadRequest("bad header name")
            if not sep or not _is_token(name_s):
                raise BadRequest("bad header name")
            headers.append((name_s, value.strip(b" \t").decode("latin-1")))
        req = Request(method, target, version, headers)
        te = req.header_all("transfer-encoding")
        cl = req.header_all("content-length")
        if te and cl:
            raise BadRequest("both Content-Length and Transfer-Encoding")
        if te:
            codings = [t.strip().lower() for v in te for t in v.split(",")]
            if codings != ["chunked"]:
                raise BadRequest("unsupported transfer coding")
            req.framing = "chunked"
        elif cl:
            if len(set(cl)) != 1 or not cl[0].isdigit():
                raise BadRequest("bad Content-Length")
            length = int(cl[0])
            if length > MAX_BODY:
                raise BadRequest("body too large")
            req.framing = "content-length"
        # Expect: 100-continue -> interim response before reading the body.
        expect = (req.header("expect") or "").lower()
        has_body = req.framing == "chunked" or (req.framing == "content-length" and length > 0)
        if expect == "100-continue" and not req.http10 and has_body:
            self.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        if req.framing == "chunked":
            req.body = self._read_chunked_body()
        elif req.framing == "content-length":
            req.body = self._read_exact(length)
        return req

    def _read_chunked_body(self) -> bytes:
        body = bytearray()
        while True:
            line = self._read_line(limit=4096)
            size_s = line.split(b";", 1)[0].strip()
            try:
                if not size_s or any(c not in b"0123456789abcdefABCDEF" for c in size_s):
                    raise ValueError
                size = int(size_s, 16)
            except ValueError:
                raise BadRequest("bad chunk size")
            if len(body) + size > MAX_BODY:
                raise BadRequest("body too large")
            if size == 0:
                while self._read_line(limit=MAX_HEAD) != b"":  # trailer fields
                    pass
                return bytes(body)
            body += self._read_exact(size)
            if self._read_exact(2) != b"\r\n":
                raise BadRequest("bad chunk terminator")

    # ---- writing ----
    def send(self, data: bytes):
        try:
            self.sock.sendall(data)
        except OSError:
            raise ClientGone()

    def head_bytes(self, req, code, headers, close, reason=None) -> bytes:
        version = "HTTP/1.1"
        lines = [f"{version} {code} {reason or _reason(code)}", f"Server: {SERVER_NAME}",
                 f"X-Origin-Conn: {self.conn_id}", f"X-Origin-Req: {self.req_no}"]
        lines += [f"{k}: {v}" for k, v in headers]
        if close:
            lines.append("Connection: close")
        elif req is not None and req.http10:
            lines.append("Connection: keep-alive")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def respond(self, req, code, body=b"", ctype="text/plain", headers=(), close=False,
                length=True) -> bool:
        """A complete response with Content-Length. Returns whether to keep the connection."""
        close = close or not req.wants_keep_alive()
        hdrs = list(headers)
        if ctype and code not in (204, 304):
            hdrs.insert(0, ("Content-Type", ctype))
        if length and code not in (204, 304) and not (100 <= code < 200):
            hdrs.append(("Content-Length", str(len(body))))
        data = self.head_bytes(req, code, hdrs, close)
        if not req.head_only and code not in (204, 304):
            data += body
        self.send(data)
        return not close

    def send_chunked(self, req, code, chunks, ctype="application/octet-stream", headers=(),
                     trailers=(), ext=False, delay=0.0) -> bool:
        """Chunked response (close-delimited for an HTTP/1.0 client)."""
        if req.http10:
            data = self.head_bytes(req, code, [("Content-Type", ctype), *headers], close=True)
            self.send(data)
            if not req.head_only:
                for i, c in enumerate(chunks):
                    if delay and i:
                        time.sleep(delay)
                    self.send(c)
            return False
        close = not req.wants_keep_alive()
        hdrs = [("Content-Type", ctype), *headers, ("Transfer-Encoding", "chunked")]
        if trailers:
            hdrs.append(("Trailer", ", ".join(k for k, _ in trailers)))
        self.send(self.head_bytes(req, code, hdrs, close))
        if req.head_only:
            return not close
        for i, c in enumerate(chunks):
            if delay and i:
                time.sleep(delay)
            e = b";note=e2e;x=\"quoted\"" if ext else b""
            self.send(b"%x%s\r\n%s\r\n" % (len(c), e, c))
        tail = b"0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in trailers) + b"\r\n"
        self.send(tail)
        return not close

    # ---- TLS ----
    def _tls_handshake(self) -> bool:
        """Server-side TLS handshake (HTTPS origins only); False (logged) if it failed."""
        srv = self.server
        srv._sni.value = None
        self.sock.settimeout(TLS_HANDSHAKE_TIMEOUT)
        try:
            tls_sock = srv.tls.wrap_socket(self.sock, server_side=True)
        except (ssl.SSLError, OSError, ValueError) as e:
            srv._tls_event(self, sni=srv._sni.value, error=e)
            return False
        self.sock = tls_sock
        self.sock.settimeout(IDLE_TIMEOUT)
        srv._tls_event(self, sni=srv._sni.value, version=tls_sock.version(),
                       alpn=tls_sock.selected_alpn_protocol())
        return True

    def _tls_close_notify(self):
        """Sends close_notify without waiting for the peer's (never blocks)."""
        if not isinstance(self.sock, ssl.SSLSocket) or self.sock.fileno() < 0:
            return
        try:
            self.sock.settimeout(0.0)
            self.sock.unwrap()
        except (ssl.SSLError, OSError, ValueError):
            pass

    # ---- main loop ----
    def serve(self):
        try:
            if self.server.tls is not None and not self._tls_handshake():
                return
            while not self.server.stopping.is_set():
                try:
                    req = self.read_request()
                except BadRequest as e:
                    self.server._count("bad_requests")
                    self.req_no += 1
                    body = f"origin: bad request: {e}\n".encode()
                    self.send(self.head_bytes(None, 400, [("Content-Type", "text/plain"),
                                                          ("Content-Length", str(len(body)))],
                                              close=True) + body)
                    return
                if req is None:
                    return
                self.req_no += 1
                self.server._log(self, req)
                try:
                    keep = self.server.dispatch(self, req)
                except BadRequest as e:
                    keep = self.respond(req, 400, f"origin: {e}\n".encode(), close=True)
                if not keep:
                    return
        except ClientGone:
            return
        finally:
            self.server._closed(self)
            self._tls_close_notify()
            try:
                self.sock.close()
            except OSError:
                pass


def server_tls_context(certfile, keyfile, alpn=("http/1.1",)) -> ssl.SSLContext:
    """A server-side SSLContext for an HTTPS OriginServer (TLS 1.2+; ALPN offers only `alpn`).
    Give each OriginServer its own context: the server installs its SNI callback on it."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(certfile), str(keyfile))
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    return ctx


class OriginServer:
    """Threaded origin server. start() returns self; .port, .base_url, .stats(), .requests().
    With tls= (an ssl.SSLContext, e.g. server_tls_context()) it serves HTTPS; see tls_log()."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, ipv6: bool = True,
                 tls: ssl.SSLContext | None = None):
        self.host = host
        self.tls = tls
        self.scheme = "https" if tls is not None else "http"
        self._tls_log: list[dict] = []
        self._sni = threading.local()  # the SNI seen by the handshake running on this thread
        if tls is not None:
            tls.sni_callback = self._on_sni
        self.want_port = port
        self.want_ipv6 = ipv6
        self.port = None
        self.listeners: list[socket.socket] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.counters: dict[str, int] = {}
        self._stats = {"connections": 0, "requests": 0, "bad_requests": 0, "open": 0}
        if tls is not None:
            self._stats.update(tls_handshakes=0, tls_errors=0)
        self._requests: list[dict] = []
        self._conns: set[Connection] = set()
        self._next_id = 0
        self.threads: list[threading.Thread] = []

    # ---- lifecycle ----
    def _bind(self, family, host, port):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            s.bind((host, port))
            s.listen(128)
        except OSError:
            s.close()
            raise
        return s

    def start(self) -> "OriginServer":
        for _attempt in range(20):
            v4 = self._bind(socket.AF_INET, self.host, self.want_port)
            port = v4.getsockname()[1]
            listeners = [v4]
            if self.want_ipv6 and self.host == "127.0.0.1" and socket.has_ipv6:
                try:
                    listeners.append(self._bind(socket.AF_INET6, "::1", port))
                except OSError:
                    if self.want_port == 0:
                        v4.close()
                        continue  # that port is taken on ::1: try another one
            break
        else:
            raise RuntimeError("could not bind 127.0.0.1 and ::1 on one port")
        self.listeners = listeners
        self.port = port
        for ls in self.listeners:
            t = threading.Thread(target=self._accept_loop, args=(ls,), daemon=True,
                                 name=f"origin-accept-{port}")
            t.start()
            self.threads.append(t)
        return self

    @property
    def has_ipv6(self) -> bool:
        return any(s.family == socket.AF_INET6 for s in self.listeners)

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def url_for(self, host: str, path: str = "") -> str:
        """The URL of path with another host name or address: 'localhost', '127.0.0.1', '::1'."""
        h = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{h}:{self.port}{path}"

    def localhost_url(self, path: str = "") -> str:
        return self.url_for("localhost", path)

    def stop(self):
        self.stopping.set()
        for ls in self.listeners:
            try:
                ls.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            ls.close()
        with self.lock:
            conns = list(self._conns)
        for c in conns:
            try:  # the plain socket call: never an SSL shutdown racing the connection's thread
                socket.socket.shutdown(c.sock, socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _accept_loop(self, ls):
        while not self.stopping.is_set():
            try:
                sock, _addr = ls.accept()
            except OSError:
                return
            with self.lock:
                self._next_id += 1
                self._stats["connections"] += 1
                self._stats["open"] += 1
                conn = Connection(self, sock, self._next_id)
                self._conns.add(conn)
            threading.Thread(target=conn.serve, daemon=True,
                             name=f"origin-conn-{conn.conn_id}").start()

    # ---- bookkeeping ----
    def _count(self, key):
        with self.lock:
            self._stats[key] += 1

    def _closed(self, conn):
        with self.lock:
            if conn in self._conns:
                self._conns.discard(conn)
                self._stats["open"] -= 1

    def _log(self, conn, req):
        with self.lock:
            self._stats["requests"] += 1
            self._requests.append({
                "conn": conn.conn_id, "req_no": conn.req_no, "method": req.method,
                "target": req.target, "version": req.version, "path": req.path,
                "headers": list(req.headers), "framing": req.framing,
                "body_len": len(req.body), "body_sha256": hashlib.sha256(req.body).hexdigest(),
                "time": time.time(),
            })

    def _on_sni(self, _sslobj, server_name, _ctx):
        self._sni.value = server_name  # None when the ClientHello has no SNI
        return None

    def _tls_event(self, conn, sni=None, version=None, alpn=None, error=None):
        rec = {"conn": conn.conn_id, "sni": sni, "version": version, "alpn": alpn,
               "error": None if error is None else f"{type(error).__name__}: {error}",
               "reason": getattr(error, "reason", None), "time": time.time()}
        with self.lock:
            self._stats["tls_errors" if error is not None else "tls_handshakes"] += 1
            self._tls_log.append(rec)

    def tls_log(self) -> list[dict]:
        """One record per TLS connection: conn, sni, version, alpn, error (None if it worked)."""
        with self.lock:
            return list(self._tls_log)

    def wait_for_tls(self, count: int = 1, timeout: float = 5.0) -> list[dict]:
        """tls_log() once it has at least count records (or whatever it has after timeout)."""
        deadline = time.time() + timeout
        while time.time() < deadline and len(self.tls_log()) < count:
            time.sleep(0.02)
        return self.tls_log()

    def stats(self) -> dict:
        with self.lock:
            return dict(self._stats)

    def requests(self) -> list[dict]:
        with self.lock:
            return list(self._requests)

    def wait_for_request(self, path: str, timeout: float = 5.0) -> dict | None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            for r in self.requests():
                if r["path"] == path:
                    return r
            time.sleep(0.02)
        return None

    # ---- endpoints ----
    def dispatch(self, c: Connection, req: Request) -> bool:
        p = req.path
        if p.startswith("/status/"):
            return self.h_status(c, req)
        h = ROUTES.get(p)
        if h is None:
            return c.respond(req, 404, b"not found\n")
        return h(self, c, req)

    def h_json(self, c, req):
        sel = req.arg("h")
        headers = req.headers
        if sel is not None:
            names = {n.strip().lower() for n in sel.split(",") if n.strip()}
            headers = [(k, v) for k, v in headers if k.lower() in names]
        doc = {"method": req.method, "target": req.target, "path": req.path,
               "query": req.query, "args": [[k, v] for k, v in req.args],
               "version": req.version, "headers": [[k, v] for k, v in headers],
               "body_len": len(req.body)}
        body = (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
        return c.respond(req, 200, body, "application/json")

    def h_bytes(self, c, req):
        n = req.int_arg("n", 1024)
        seed = req.int_arg("seed", 0, hi=2**31)
        ctype = req.arg("ct", "application/octet-stream")
        return c.respond(req, 200, make_bytes(n, seed), ctype)

    def h_chunked(self, c, req):
        n = req.int_arg("n", 4096)
        k = req.int_arg("chunks", 4, lo=1, hi=100000)
        seed = req.int_arg("seed", 0, hi=2**31)
        data = make_bytes(n, seed)
        chunks, pos = [], 0
        for size in chunk_sizes(n, k):
            chunks.append(data[pos:pos + size])
            pos += size
        trailers = [("X-Body-Sha256", hashlib.sha256(data).hexdigest())] \
            if req.arg("trailer") == "1" else []
        if req.http10:
            return c.respond(req, 200, data, "application/octet-stream")
        return c.send_chunked(req, 200, chunks, trailers=trailers, ext=req.arg("ext") == "1")

    def _encoded(self, c, req, enc):
        body = encoded_doc(enc)
        if body is None:
            return c.respond(req, 501, f"{enc} module not available\n".encode())
        return c.respond(req, 200, body, "application/json; charset=utf-8",
                         headers=[("Content-Encoding", enc), ("Vary", "Accept-Encoding")])

    def h_gzip(self, c, req):
        return self._encoded(c, req, "gzip")

    def h_deflate(self, c, req):
        return self._encoded(c, req, "deflate")

    def h_br(self, c, req):
        return self._encoded(c, req, "br")

    def h_zstd(self, c, req):
        return self._encoded(c, req, "zstd")

    def h_slow(self, c, req):
        ms = req.int_arg("ms", 100, hi=10000)
        k = req.int_arg("chunks", 5, lo=1, hi=1000)
        return c.send_chunked(req, 200, [slow_chunk(i) for i in range(k)], ctype="text/plain",
                              delay=ms / 1000.0)

    def h_close_delimited(self, c, req):
        n = req.int_arg("n", 4096)
        seed = req.int_arg("seed", 0, hi=2**31)
        c.send(c.head_bytes(req, 200, [("Content-Type", "application/octet-stream")], close=True))
        if not req.head_only:
            c.send(make_bytes(n, seed))
        return False

    def h_status(self, c, req):
        try:
            code = int(req.path[len("/status/"):])
        except ValueError:
            raise BadRequest("bad status")
        if not 200 <= code <= 599:
            return c.respond(req, 400, b"status must be 200..599 (1xx is not a final status)\n")
        headers = [("ETag", '"e2e-etag"')] if code == 304 else []
        return c.respond(req, code, status_body(code), headers=headers)

    def h_counter(self, c, req):
        """How many times this origin answered /counter with this `k`: repeats differ."""
        key = req.arg("k", "")
        with self.lock:
            self.counters[key] = self.counters.get(key, 0) + 1
            n = self.counters[key]
        return c.respond(req, 200, json.dumps({"k": key, "n": n}).encode() + b"\n", "application/json")

    def h_head(self, c, req):
        return c.respond(req, 200, make_bytes(HEAD_LEN, 7), "application/octet-stream")

    def h_echo(self, c, req):
        if req.method not in ("POST", "PUT"):
            return c.respond(req, 405, b"POST or PUT\n", headers=[("Allow", "POST, PUT")])
        return c.respond(req, 200, req.body, req.header("content-type", "application/octet-stream"),
                         headers=[("X-Request-Framing", req.framing),
                                  ("X-Request-Body-Sha256", hashlib.sha256(req.body).hexdigest())])

    def h_set_cookie(self, c, req):
        return c.respond(req, 200, b"cookies set\n",
                         headers=[("Set-Cookie", v) for v in SET_COOKIES])

    def h_redirect(self, c, req):
        to = req.arg("to", REDIRECT_LOCATION)
        return c.respond(req, 302, b"redirecting\n", headers=[("Location", to)])

    def h_reset(self, c, req):
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.sock.close()
        raise ClientGone()

    def h_close_mid_body(self, c, req):
        head = c.head_bytes(req, 200, [("Content-Type", "application/octet-stream"),
                                       ("Content-Length", str(CLOSE_MID_BODY_DECLARED))],
                            close=False)
        c.send(head + make_bytes(CLOSE_MID_BODY_DECLARED, 3)[:CLOSE_MID_BODY_SENT])
        time.sleep(0.05)
        return False

    def h_bad_response(self, c, req):
        c.send(BAD_RESPONSE)
        return False

    def h_bad_framing(self, c, req):
        c.send(BAD_FRAMING)
        return False

    def h_hang(self, c, req):
        deadline = time.time() + HANG_LIMIT
        while time.time() < deadline and not self.stopping.is_set():
            r, _, _ = select.select([c.sock], [], [], 0.2)
            if r:
                try:
                    if not c.sock.recv(65536):
                        break  # the client went away
                except OSError:
                    break
        return False

    def h_stats(self, c, req):
        body = (json.dumps(self.stats()) + "\n").encode()
        return c.respond(req, 200, body, "application/json")


ROUTES = {
    "/json": OriginServer.h_json,
    "/bytes": OriginServer.h_bytes,
    "/chunked": OriginServer.h_chunked,
    "/gzip": OriginServer.h_gzip,
    "/deflate": OriginServer.h_deflate,
    "/br": OriginServer.h_br,
    "/zstd": OriginServer.h_zstd,
    "/slow": OriginServer.h_slow,
    "/close-delimited": OriginServer.h_close_delimited,
    "/head": OriginServer.h_head,
    "/counter": OriginServer.h_counter,
    "/echo": OriginServer.h_echo,
    "/set-cookie": OriginServer.h_set_cookie,
    "/redirect": OriginServer.h_redirect,
    "/reset": OriginServer.h_reset,
    "/close-mid-body": OriginServer.h_close_mid_body,
    "/bad-response": OriginServer.h_bad_response,
    "/bad-framing": OriginServer.h_bad_framing,
    "/hang": OriginServer.h_hang,
    "/stats": OriginServer.h_stats,
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--no-ipv6", action="store_true")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", help="the private key of --tls-cert (PEM)")
    args = ap.parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    tls = server_tls_context(args.tls_cert, args.tls_key) if args.tls_cert else None
    srv = OriginServer(args.host, args.port, ipv6=not args.no_ipv6, tls=tls).start()
    print(f"origin listening on {args.host}:{srv.port}" + (" (HTTPS)" if tls else ""), flush=True)
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    done.wait()
    srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
