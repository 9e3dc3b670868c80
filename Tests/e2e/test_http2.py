"""HTTP/2 end to end (issue 16): real clients through harrec's CONNECT and SOCKS5 to a local nginx
with `http2` on its TLS listener, nginx proxying to origin.py (so every origin endpoint is served
over h2). A second nginx listener speaks only HTTP/1.1, and a third h2c with prior knowledge.

For every case: the protocol the client reports, byte-identical bodies, one HAR entry per stream,
and a HAR that mitmproxy 12's `mitmdump -nr` reads (installed by scripts/install-deps --test).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import httpx
import pytest

import origin as origin_mod
from helpers import CA_CERT_NAME, content_bytes, curl, entries, free_port, need_tool, stop_process


NGINX_CONF = """
worker_processes 1;
daemon off;
{user}
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    client_max_body_size 0;
    # Bodies stream through both ways, as they do through harrec.
    proxy_http_version 1.1;
    proxy_request_buffering off;
    proxy_buffering off;
    # The authority the client asked for, since proxy_pass sends the origin's own as Host.
    proxy_set_header X-Seen-Host $http_host;
    http2_max_concurrent_streams 128;
    server {{
        listen 127.0.0.1:{h2_port} ssl http2;
        location / {{ proxy_pass http://127.0.0.1:{origin_port}; }}
        location /static/ {{ alias {static}/; }}
    }}
    server {{
        listen 127.0.0.1:{h1_port} ssl;
        location / {{ proxy_pass http://127.0.0.1:{origin_port}; }}
    }}
    server {{
        # h2c with prior knowledge only (no TLS, no upgrade).
        listen 127.0.0.1:{h2c_port} http2;
        location / {{ proxy_pass http://127.0.0.1:{origin_port}; }}
    }}
}}
"""


def mitmdump_path() -> str:
    path = os.environ.get("HARREC_MITMDUMP") or os.path.join(
        os.environ.get("HARREC_TOOLS", os.path.expanduser("~/.cache/harrec/tools")), "mitmproxy-12", "bin", "mitmdump")
    if not os.access(path, os.X_OK):
        pytest.fail(f"mitmdump not found at {path}: run scripts/install-deps --test (or set HARREC_MITMDUMP)")
    return path


class NginxH2:
    def __init__(self, tmp: Path, pki: Path, origin_port: int):
        self.prefix = tmp / "nginx"
        self.pki = pki
        self.prefix.mkdir(parents=True, exist_ok=True)
        self.static_dir = tmp / "static"
        self.static_dir.mkdir(exist_ok=True)
        self.h2_port, self.h1_port, self.h2c_port = free_port(), free_port(), free_port()
        conf = NGINX_CONF.format(user="user root;" if os.geteuid() == 0 else "", prefix=self.prefix,
                                 cert=pki / "server.pem", key=pki / "server-key.pem",
                                 h2_port=self.h2_port, h1_port=self.h1_port, h2c_port=self.h2c_port, origin_port=origin_port,
                                 static=self.static_dir)
        (self.prefix / "nginx.conf").write_text(conf)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(nginx, os.X_OK):
            pytest.fail("nginx not found: run scripts/install-deps --test")
        self.proc = subprocess.Popen([nginx, "-p", f"{self.prefix}/", "-c", str(self.prefix / "nginx.conf"),
                                      "-e", str(self.prefix / "error.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cafile = pki / "ca.pem"
        deadline = time.time() + 15
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"nginx exited: {self.proc.stderr.read().decode()}")
            r = subprocess.run(["curl", "-s", "--http2", "--cacert", str(cafile), "-o", "/dev/null",
                                "-w", "%{http_version}", f"https://localhost:{self.h2_port}/bytes?n=1"],
                               capture_output=True, text=True)
            if r.stdout == "2":
                break
            if time.time() > deadline:
                pytest.fail(f"nginx did not answer over h2: {r.stdout!r} {r.stderr}")
            time.sleep(0.1)

    def stop(self):
        stop_process(self.proc)


@pytest.fixture(scope="module")
def nginx_h2(test_pki, tmp_path_factory):
    origin = origin_mod.OriginServer().start()
    server = NginxH2(tmp_path_factory.mktemp("nginx-h2"), test_pki, origin.port)
    yield server
    server.stop()
    origin.stop()


def proxy_args(mode: str, px) -> list[str]:
    return ["-x", px.http_proxy] if mode == "connect" else ["--socks5-hostname", f"127.0.0.1:{px.socks_port}"]


def check_with_mitmdump(har_path: Path, expected_lines: int):
    """mitmproxy's HAR reader accepts the file and shows every entry."""
    r = subprocess.run([mitmdump_path(), "-n", "-r", str(har_path), "--flow-detail", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    requests = [line for line in r.stdout.splitlines() if line.startswith("127.0.0.1:")]
    assert len(requests) == expected_lines, r.stdout
    return r.stdout


@pytest.mark.parametrize("mode", ["connect", "socks5"])
def test_curl_http2_through_harrec(harrec_tls, nginx_h2, tmp_path, mode):
    need_tool("curl")
    px = harrec_tls.start("--no-redact")
    ca = str(px.ca_pem)
    upload = origin_mod.make_bytes(700_000, 17)
    (tmp_path / "upload.bin").write_bytes(upload)
    base = f"https://localhost:{nginx_h2.h2_port}"
    # Two URLs in one curl run share one connection: two streams.
    r = curl("--http2", *proxy_args(mode, px), "--cacert", ca, "-w", "%{http_version} %{http_code}\\n",
             "-o", str(tmp_path / "a.bin"), f"{base}/bytes?n=1048576&seed=5",
             "-o", str(tmp_path / "b.bin"), f"{base}/json?h=user-agent", max_time=30)
    assert r.rc == 0, r.err
    assert r.out.decode().split("\n")[:2] == ["2 200", "2 200"], "curl reports HTTP/2 through harrec"
    assert (tmp_path / "a.bin").read_bytes() == origin_mod.make_bytes(1048576, 5)
    r = curl("--http2", *proxy_args(mode, px), "--cacert", ca, "-w", "%{http_version} %{http_code}",
             "--data-binary", f"@{tmp_path / 'upload.bin'}", "-H", "Content-Type: application/octet-stream",
             "-o", str(tmp_path / "echo.bin"), f"{base}/echo", max_time=30)
    assert r.rc == 0, r.err + px.stderr_text
    assert r.out.decode() == "2 200"
    assert (tmp_path / "echo.bin").read_bytes() == upload, "the upload came back byte for byte"

    har = px.stop()
    es = entries(har)
    assert len(es) == 3, [e["request"]["url"] for e in es]
    for e in es:
        assert e["request"]["httpVersion"] == "http/2.0"
        assert e["response"]["httpVersion"] == "http/2.0"
        assert e["request"]["headersSize"] == -1 and e["response"]["headersSize"] == -1
        assert not any(h["name"].startswith(":") for h in e["request"]["headers"] + e["response"]["headers"])
        assert "_error" not in e
    by_path = {e["request"]["url"].split(str(nginx_h2.h2_port))[1]: e for e in es}
    big = by_path["/bytes?n=1048576&seed=5"]
    assert content_bytes(big["response"]["content"]) == origin_mod.make_bytes(1048576, 5)
    echo = by_path["/echo"]
    assert content_bytes(echo["response"]["content"]) == upload
    assert echo["request"]["postData"]["mimeType"] == "application/octet-stream"
    # The first two were streams of one connection; the first one paid for its setup.
    assert big["connection"] == by_path["/json?h=user-agent"]["connection"]
    assert echo["connection"] != big["connection"]
    setups = [e for e in (big, by_path["/json?h=user-agent"]) if e["timings"]["ssl"] >= 0]
    assert len(setups) == 1
    out = check_with_mitmdump(px.har_path, 3)
    assert "HTTP/2" in out


def test_curl_http1_1_stays_http1(harrec_tls, nginx_h2, tmp_path):
    px = harrec_tls.start("--no-redact")
    r = curl("--http1.1", "-x", px.http_proxy, "--cacert", str(px.ca_pem), "-w", "%{http_version}",
             "-o", "/dev/null", f"https://localhost:{nginx_h2.h2_port}/bytes?n=1000")
    assert r.out.decode() == "1.1"
    har = px.stop()
    assert [e["request"]["httpVersion"] for e in entries(har)] == ["HTTP/1.1"]


def test_h2_client_and_http1_only_upstream_agree_on_http1(harrec_tls, nginx_h2, tmp_path):
    """ALPN goes to the upstream first: an h2 client of an HTTP/1.1-only server gets HTTP/1.1,
    as it would without the proxy."""
    px = harrec_tls.start("--no-redact")
    r = curl("--http2", "-x", px.http_proxy, "--cacert", str(px.ca_pem), "-w", "%{http_version}",
             "-o", str(tmp_path / "x.bin"), f"https://localhost:{nginx_h2.h1_port}/bytes?n=5000&seed=3")
    assert r.out.decode() == "1.1", r.err
    assert (tmp_path / "x.bin").read_bytes() == origin_mod.make_bytes(5000, 3)
    har = px.stop()
    assert [e["request"]["httpVersion"] for e in entries(har)] == ["HTTP/1.1"]


def test_no_http2_flag_keeps_http1(harrec_tls, nginx_h2):
    px = harrec_tls.start("--no-redact", "--no-http2")
    r = curl("--http2", "-x", px.http_proxy, "--cacert", str(px.ca_pem), "-w", "%{http_version}",
             "-o", "/dev/null", f"https://localhost:{nginx_h2.h2_port}/bytes?n=10")
    assert r.out.decode() == "1.1"
    px.stop()


@pytest.mark.parametrize("proxy_kind", ["http", "socks5"])
def test_httpx_100_concurrent_streams_on_one_connection(harrec_tls, nginx_h2, proxy_kind):
    px = harrec_tls.start("--no-redact")
    proxy = px.http_proxy if proxy_kind == "http" else px.socks_proxy
    base = f"https://localhost:{nginx_h2.h2_port}"

    async def run():
        limits = httpx.Limits(max_connections=1)
        verify = ssl.create_default_context(cafile=str(px.ca_pem))
        async with httpx.AsyncClient(http2=True, proxy=proxy, verify=verify, limits=limits,
                                     timeout=60) as client:
            async def one(i):
                r = await client.get(f"{base}/bytes?n={1000 + i * 997}&seed={i}")
                return i, r.http_version, r.status_code, r.content
            return await asyncio.gather(*(one(i) for i in range(100)))

    results = asyncio.run(run())
    for i, version, status, body in results:
        assert version == "HTTP/2" and status == 200
        assert body == origin_mod.make_bytes(1000 + i * 997, i), f"stream {i}"
    har = px.stop()
    es = entries(har)
    assert len(es) == 100, "one entry per stream"
    assert len({e["connection"] for e in es}) == 1, "all streams of one connection"
    for e in es:
        query = e["request"]["url"].split("?")[1]
        n, seed = (int(part.split("=")[1]) for part in query.split("&"))
        assert content_bytes(e["response"]["content"]) == origin_mod.make_bytes(n, seed)
        assert e["request"]["httpVersion"] == "http/2.0"
    check_with_mitmdump(px.har_path, 100)


# ---------------------------------------------------------------- Go's net/http (golang-go)

GOPEER_DIR = Path(__file__).resolve().parent / "gopeer"


@pytest.fixture(scope="session")
def gopeer(tmp_path_factory) -> str:
    """gopeer/main.go built once per session with Debian's Go (standard library only)."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("go not found: run scripts/install-deps --test")
    out = tmp_path_factory.mktemp("gopeer") / "gopeer"
    env = dict(os.environ, GOCACHE=str(out.parent / "cache"), GOPATH=str(out.parent / "gopath"),
               GO111MODULE="off", CGO_ENABLED="0")
    r = subprocess.run([go, "build", "-o", str(out), str(GOPEER_DIR / "main.go")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return str(out)


def pattern(n: int, seed: int) -> bytes:
    """gopeer server's /bytes body."""
    return bytes((i * 31 + seed) % 251 for i in range(n))


def go_client(gopeer: str, proxy: str, ca: Path, *urls, n=1, post: Path | None = None) -> list[dict]:
    args = [gopeer, "client", "-proxy", proxy, "-ca", str(ca), "-n", str(n)]
    if post is not None:
        args += ["-post", str(post)]
    r = subprocess.run([*args, *urls], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


@pytest.mark.parametrize("proxy_kind", ["http", "socks5"])
def test_go_client_speaks_h2_through_harrec(harrec_tls, nginx_h2, gopeer, proxy_kind):
    px = harrec_tls.start("--no-redact")
    proxy = px.http_proxy if proxy_kind == "http" else px.socks_proxy
    url = f"https://localhost:{nginx_h2.h2_port}/bytes?n=100000&seed=7"
    results = go_client(gopeer, proxy, px.ca_pem, url, n=20)
    assert len(results) == 20
    expected = hashlib.sha256(origin_mod.make_bytes(100_000, 7)).hexdigest()
    for result in results:
        assert result["proto"] == "HTTP/2.0" and result["status"] == 200
        assert result["sha256"] == expected
    har = px.stop()
    es = entries(har)
    assert len(es) == 20
    assert {e["request"]["httpVersion"] for e in es} == {"http/2.0"}
    assert len({e["connection"] for e in es}) == 1, "Go multiplexed its 20 requests on one connection"


def test_go_server_and_client_through_harrec(harrec_tls, test_pki, gopeer, tmp_path):
    """Go on both ends: Go's h2 server (it answers h2 only, and serves http/1.1 clients without
    ALPN) and Go's client, plus curl --http1.1 to the same server."""
    server = subprocess.Popen([gopeer, "server", "-cert", str(test_pki / "server.pem"), "-key", str(test_pki / "server-key.pem")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("PORT "), server.stderr.read()
        port = int(line.split()[1])
        px = harrec_tls.start("--no-redact")
        base = f"https://localhost:{port}"
        upload = tmp_path / "upload.bin"
        upload.write_bytes(origin_mod.make_bytes(400_000, 12))
        got = go_client(gopeer, px.http_proxy, px.ca_pem, f"{base}/bytes?n=300000&seed=3", n=3)
        assert [(g["proto"], g["len"]) for g in got] == [("HTTP/2.0", 300_000)] * 3
        assert {g["sha256"] for g in got} == {hashlib.sha256(pattern(300_000, 3)).hexdigest()}
        (echo,) = go_client(gopeer, px.http_proxy, px.ca_pem, f"{base}/echo", post=upload)
        assert echo["proto"] == "HTTP/2.0" and echo["sha256"] == hashlib.sha256(upload.read_bytes()).hexdigest()
        r = curl("--http1.1", "-x", px.http_proxy, "--cacert", str(px.ca_pem), "-w", "%{http_version}",
                 "-o", str(tmp_path / "c.bin"), f"{base}/bytes?n=1000&seed=1")
        assert r.rc == 0 and r.out.decode() == "1.1", r.err
        assert (tmp_path / "c.bin").read_bytes() == pattern(1000, 1)
        har = px.stop()
    finally:
        server.terminate()
        server.wait(5)
    es = entries(har)
    assert len(es) == 5
    versions = sorted(e["response"]["httpVersion"] for e in es)
    assert versions.count("http/2.0") == 4, versions
    echo_entry = next(e for e in es if e["request"]["url"].endswith("/echo"))
    assert content_bytes(echo_entry["request"]["postData"]) == upload.read_bytes()
    assert content_bytes(echo_entry["response"]["content"]) == upload.read_bytes()
    check_with_mitmdump(px.har_path, 5)


def test_h2_entries_are_redacted_like_any_other(harrec_tls, nginx_h2, tmp_path):
    """Default redaction on h2 entries: lowercase header names (HTTP/2 requires them), the token in
    the query and the cookie are replaced; the raw values appear nowhere in the file."""
    px = harrec_tls.start()
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJoMi11c2VyLTQyIn0.c2lnbmF0dXJlLWgyLXRlc3Q"
    secret = "h2SessionSecretValue981273"
    r = curl("--http2", "-x", px.http_proxy, "--cacert", str(px.ca_pem), "-o", "/dev/null", "-w", "%{http_version}",
             "-H", f"Authorization: Bearer {token}", "-H", f"Cookie: session={secret}",
             f"https://localhost:{nginx_h2.h2_port}/json?access_token={secret}")
    assert r.out.decode() == "2", r.err
    har = px.stop()
    (entry,) = entries(har)
    assert entry["request"]["httpVersion"] == "http/2.0"
    assert token not in px.har_text and secret not in px.har_text
    auth = next(h["value"] for h in entry["request"]["headers"] if h["name"] == "authorization")
    assert auth.startswith("Bearer ") and token not in auth


def test_many_streams_under_a_small_descriptor_limit(test_pki, nginx_h2, tmp_path):
    """HTTP/2 soak at `ulimit -n 40`: 8 connections with up to 100 streams each in flight, 1,200
    requests in all. Streams cost no descriptors, so every one succeeds byte for byte, the HAR has
    one entry per stream on 8 connections, and harrec's memory stays bounded."""
    import re
    import resource
    import signal
    import threading

    from conftest import LISTEN_RE, validate_har_file
    from helpers import HARREC_BIN, vmrss_kib

    har_path = tmp_path / "soak.har"
    proc = subprocess.Popen(
        [HARREC_BIN, "record", "--http", "0", "--socks", "0", "--out", str(har_path), "--no-redact", "--quiet",
         "--ca-dir", str(tmp_path / "ca"), "--upstream-ca", str(test_pki / "ca.pem")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40)))
    lines, port = [], []
    ready = threading.Event()

    def read():
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            lines.append(line)
            m = LISTEN_RE.match(line)
            if m and m.group(1) == "HTTP":
                port.append(int(m.group(2)))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    assert ready.wait(15) and port, "\n".join(lines)
    proxy = f"http://127.0.0.1:{port[0]}"
    base = f"https://localhost:{nginx_h2.h2_port}"
    verify = ssl.create_default_context(cafile=str(tmp_path / "ca" / CA_CERT_NAME))
    rss_before = vmrss_kib(proc.pid)

    async def client(c):
        gate = asyncio.Semaphore(100)
        async with httpx.AsyncClient(http2=True, proxy=proxy, verify=verify, limits=httpx.Limits(max_connections=1),
                                     timeout=120) as session:
            async def one(i):
                n, seed = 1024 + (i * 7919) % 65536, c * 1000 + i
                async with gate:
                    r = await session.get(f"{base}/bytes?n={n}&seed={seed}")
                return r.http_version, r.status_code, r.content == origin_mod.make_bytes(n, seed)
            return await asyncio.gather(*(one(i) for i in range(150)))

    async def run():
        return await asyncio.gather(*(client(c) for c in range(8)))

    results = [r for per_client in asyncio.run(run()) for r in per_client]
    assert len(results) == 1200
    assert all(r == ("HTTP/2", 200, True) for r in results), [r for r in results if r != ("HTTP/2", 200, True)][:5]
    rss_after = vmrss_kib(proc.pid)
    assert rss_after - rss_before < 64 * 1024, (rss_before, rss_after)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0, "\n".join(lines)
    har = validate_har_file(har_path)
    es = entries(har)
    assert len(es) == 1200 and not any("_error" in e for e in es)
    assert len({e["connection"] for e in es}) == 8
    assert not any(re.search(r"Too many open files", line) for line in lines)


@pytest.mark.parametrize("expect", ["100-continue", "none"])
@pytest.mark.parametrize("client_version", ["--http2", "--http1.1"])
@pytest.mark.parametrize("mode", ["connect", "socks5"])
def test_an_early_answer_reaches_the_client_with_the_body_sent(harrec_tls, nginx_h2, tmp_path, client_version, mode, expect):
    """A POST to a static file: nginx answers 405 before it reads the body and, over h2, ends the
    upload with RST_STREAM(NO_ERROR) (RFC 9113 §8.1). The client gets the 405 (curl exited 92
    with only the reset), and the entry is that 405 without an error, with the request body
    that reached harrec: byte for byte a prefix of the upload, its size in `bodySize`. curl asks
    `Expect: 100-continue` first (nginx answers before any body is sent); without it the body
    goes out at once."""
    px = harrec_tls.start("--no-redact")
    expect_args = ["-H", "Expect: 100-continue"] if expect == "100-continue" else ["-H", "Expect:"]
    (nginx_h2.static_dir / "page.txt").write_bytes(b"static\n")
    upload = origin_mod.make_bytes(70_000, 5)
    (tmp_path / "up.bin").write_bytes(upload)
    direct = curl(client_version, "--cacert", str(nginx_h2.pki / "ca.pem"), "--data-binary", f"@{tmp_path / 'up.bin'}",
                  "-o", str(tmp_path / "direct.bin"), "-w", "%{http_code}", f"https://localhost:{nginx_h2.h2_port}/static/page.txt")
    assert (direct.rc, direct.out) == (0, b"405"), direct.err
    for _ in range(3):
        r = curl(client_version, *proxy_args(mode, px), *expect_args, "--cacert", str(px.ca_pem), "--data-binary", f"@{tmp_path / 'up.bin'}",
                 "-o", str(tmp_path / "answer.bin"), "-w", "%{http_code}", f"https://localhost:{nginx_h2.h2_port}/static/page.txt")
        assert r.rc == 0, f"curl exit {r.rc}: {r.err}" + px.stderr_text
        assert r.out.decode() == "405"
        assert (tmp_path / "answer.bin").read_bytes() == (tmp_path / "direct.bin").read_bytes()
    har = px.stop()
    es = entries(har)
    assert len(es) == 3, [e["request"]["url"] for e in es]
    for e in es:
        assert e["response"]["status"] == 405
        assert content_bytes(e["response"]["content"]) == (tmp_path / "direct.bin").read_bytes()
        assert "_error" not in e, e.get("_error")
        sent = content_bytes(e["request"]["postData"]) if "postData" in e["request"] else b""
        assert upload.startswith(sent), "what reached harrec, byte for byte"
        assert e["request"]["bodySize"] == len(sent)


@pytest.mark.parametrize("size", [70_000, 2_000_000])
def test_go_client_gets_an_early_answer(harrec_tls, nginx_h2, gopeer, tmp_path, size):
    """Go's HTTP/2 client (it failed 30 of 30 with only the reset): ten uploads at once get
    nginx's 405. An upload larger than harrec's stream window is stopped after the answer with
    RST_STREAM(NO_ERROR), as nginx stops it; Go keeps the answer."""
    (nginx_h2.static_dir / "page.txt").write_bytes(b"static\n")
    upload = tmp_path / "up.bin"
    upload.write_bytes(origin_mod.make_bytes(size, 9))
    url = f"https://localhost:{nginx_h2.h2_port}/static/page.txt"
    direct = go_client(gopeer, "", nginx_h2.pki / "ca.pem", url, post=upload)
    px = harrec_tls.start("--no-redact")
    got = go_client(gopeer, px.http_proxy, px.ca_pem, url, n=10, post=upload)
    assert [(g["proto"], g["status"], g["sha256"]) for g in got] == [("HTTP/2.0", 405, direct[0]["sha256"])] * 10
    har = px.stop()
    es = entries(har)
    assert len(es) == 10
    for e in es:
        assert e["response"]["status"] == 405 and "_error" not in e
        sent = content_bytes(e["request"]["postData"]) if "postData" in e["request"] else b""
        assert upload.read_bytes().startswith(sent) and e["request"]["bodySize"] == len(sent)


def test_an_upload_past_a_window_after_the_answer_is_stopped(harrec_tls, nginx_h2):
    """A raw HTTP/2 client (python h2) that keeps uploading after nginx answered: harrec reads
    and drops up to one stream window, then stops it as nginx does: the whole 405, then
    RST_STREAM(NO_ERROR), in that order."""
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    from helpers import tunnel
    (nginx_h2.static_dir / "page.txt").write_bytes(b"static\n")
    px = harrec_tls.start("--no-redact")
    sock = tunnel("connect", px, "localhost", nginx_h2.h2_port)
    context = ssl.create_default_context(cafile=str(px.ca_pem))
    context.set_alpn_protocols(["h2"])
    tls = context.wrap_socket(sock, server_hostname="localhost")
    tls.settimeout(10)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    conn.send_headers(1, [(":method", "POST"), (":scheme", "https"), (":authority", f"localhost:{nginx_h2.h2_port}"),
                          (":path", "/static/page.txt")])
    seen: list[str] = []
    sent = 0
    deadline = time.time() + 20
    while "StreamReset" not in seen and time.time() < deadline:
        # Upload as fast as the windows allow, never ending the stream.
        try:
            while (window := min(conn.local_flow_control_window(1), conn.max_outbound_frame_size)) > 0:
                conn.send_data(1, b"u" * window)
                sent += window
        except h2.exceptions.StreamClosedError:
            pass
        tls.sendall(conn.data_to_send())
        for event in conn.receive_data(tls.recv(65536)):
            if isinstance(event, h2.events.ResponseReceived):
                seen.append(f"status {dict(event.headers)[':status']}")
            elif isinstance(event, h2.events.StreamEnded):
                seen.append("StreamEnded")
            elif isinstance(event, h2.events.StreamReset):
                seen.append("StreamReset")
                assert event.error_code == 0, "NO_ERROR: stop sending, nothing failed"
        tls.sendall(conn.data_to_send())
    tls.close()
    assert seen == ["status 405", "StreamEnded", "StreamReset"], seen
    assert sent > 256 * 1024, "harrec read past the answer (one window) before it stopped the upload"
    har = px.stop()
    (e,) = entries(har)
    assert e["response"]["status"] == 405 and "_error" not in e


@pytest.mark.parametrize("size", [8, 70_000])
def test_httpx_gets_early_answers(harrec_tls, nginx_h2, size):
    """httpx over h2 (it failed 19 of 30 with an 8-byte body): thirty POSTs to a static file,
    ten at a time on one connection, each get nginx's 405."""
    (nginx_h2.static_dir / "page.txt").write_bytes(b"static\n")
    px = harrec_tls.start("--no-redact")
    url = f"https://localhost:{nginx_h2.h2_port}/static/page.txt"
    body = origin_mod.make_bytes(size, 4)

    async def run():
        verify = ssl.create_default_context(cafile=str(px.ca_pem))
        async with httpx.AsyncClient(http2=True, proxy=px.http_proxy, verify=verify,
                                     limits=httpx.Limits(max_connections=1), timeout=30) as client:
            results = []
            for _ in range(3):
                rs = await asyncio.gather(*(client.post(url, content=body) for _ in range(10)))
                results += [(r.http_version, r.status_code) for r in rs]
            return results

    assert asyncio.run(run()) == [("HTTP/2", 405)] * 30
    har = px.stop()
    es = entries(har)
    assert len(es) == 30 and all(e["response"]["status"] == 405 and "_error" not in e for e in es)
