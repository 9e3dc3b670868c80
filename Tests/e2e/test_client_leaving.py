"""A client that leaves before its exchange ended (issue 33, item 7): harrec notices at once in
every state, records the exchange once with what was delivered, and closes the upstream."""

from __future__ import annotations

import os
import re
import socket
import struct
import time

import pytest

import origin as origin_mod
from helpers import entries


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def get(px, url: str, rcvbuf: int | None = None) -> socket.socket:
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", px.http_port))
    host = url.split("/")[2]
    s.sendall(f"GET {url} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return s


def leave(s: socket.socket, how: str):
    if how == "reset":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


@pytest.mark.parametrize("how", ["close", "reset"])
def test_a_slow_reader_that_leaves_is_recorded_and_its_upstream_closed(origin, harrec, how):
    """harrec is paused writing to a client that stopped reading; the client then leaves."""
    px = harrec.start("--no-redact")
    baseline = open_fds(px.proc.pid)
    n = origin_mod.MAX_BODY
    s = get(px, origin.url(f"/bytes?n={n}&seed=1"), rcvbuf=64 * 1024)
    received = 0
    while received < 1 << 20:
        chunk = s.recv(65536)
        assert chunk
        received += len(chunk)
    time.sleep(1.0)  # harrec's writes fill the socket buffers and pause
    left_at = time.time()
    leave(s, how)
    assert wait_until(lambda: origin.stats()["open"] == 0, 2.0), "the upstream connection was closed within 2 s"
    assert wait_until(lambda: open_fds(px.proc.pid) <= baseline, 2.0), "no descriptor left behind"
    har = px.stop()
    (e,) = entries(har)
    assert e["response"]["status"] == 200
    assert "client" in e["_error"] and ("closed" in e["_error"] or "reset" in e["_error"]), e["_error"]
    assert received <= e["response"]["bodySize"] < n, "what was delivered, not what was announced"
    assert time.time() - left_at < 30


@pytest.mark.parametrize("how", ["close", "reset", "half-close"])
@pytest.mark.parametrize("stall", ["head", "body"])
def test_a_client_that_gives_up_on_a_silent_upstream(origin, harrec, how, stall):
    """The upstream is silent (no head yet, or a body that trickles): the client gives up after
    a second. harrec notices at once, closes the upstream (it was held until the upstream timeout,
    with an `_error` blaming the upstream), and records when the client gave up."""
    px = harrec.start("--no-redact")
    baseline = open_fds(px.proc.pid)
    path = "/hang" if stall == "head" else "/slow?ms=3000&chunks=5"
    s = get(px, origin.url(path))
    s.settimeout(5)
    if stall == "body":
        assert s.recv(65536).startswith(b"HTTP/1.1 200"), "the head and the first chunk came"
    time.sleep(1.0)
    if how == "half-close":
        s.shutdown(socket.SHUT_WR)  # nginx reads this as the client giving up, and so does harrec
    else:
        leave(s, how)
    # The trickling origin notices only at its next write, 3 s later: harrec's descriptors tell.
    assert wait_until(lambda: open_fds(px.proc.pid) <= baseline + (1 if how == "half-close" else 0), 2.0), \
        "the upstream connection was closed within 2 s"
    if stall == "head":
        assert wait_until(lambda: origin.stats()["open"] == 0, 2.0), "the origin saw its connection close"
    if how == "half-close":
        while chunk := s.recv(65536):  # what was on its way, then harrec's side ends too
            assert chunk.startswith(b"10\r\nslow chunk") or chunk.startswith(b"HTTP/1.1 200"), chunk
        s.close()
    assert wait_until(lambda: open_fds(px.proc.pid) <= baseline, 2.0), "no descriptor left behind"
    har = px.stop()
    (e,) = entries(har)
    # A close with unread bytes in the socket (a chunk on its way) is a reset on the wire.
    verb = {"reset": "reset", "half-close": "closed", "close": "(closed|reset)"}[how]
    assert re.match(f"client {verb} the connection after 1\\.\\d s$", e["_error"]), e["_error"]
    assert "upstream" not in e["_error"]
    if stall == "head":
        assert e["response"]["status"] == 0, "no response reached the client"
    else:
        assert e["response"]["status"] == 200 and 0 < e["response"]["bodySize"]
    # harrec times the exchange from when it read the request, which on a loaded machine comes a
    # little after the client sent it: the client left 1 s after sending, so about 1 s, never 0
    # and never the upstream timeout.
    assert 900 <= e["time"] < 2500, "the entry lasts until the client gave up"


@pytest.mark.parametrize("kind", ["connect", "socks5"])
def test_an_https_client_that_gives_up_is_recorded(https_origin, harrec_tls, kind):
    """The same inside an intercepted tunnel (TLS both ways), opened with CONNECT or SOCKS5."""
    import ssl
    from helpers import tunnel
    px = harrec_tls.start("--no-redact")
    sock = tunnel(kind, px, "localhost", https_origin.port)
    tls = ssl.create_default_context(cafile=str(px.ca_pem)).wrap_socket(sock, server_hostname="localhost")
    tls.sendall(f"GET /hang HTTP/1.1\r\nHost: localhost:{https_origin.port}\r\n\r\n".encode())
    time.sleep(1.0)
    tls.close()
    assert wait_until(lambda: https_origin.stats()["open"] == 0, 2.0), "the upstream connection was closed within 2 s"
    har = px.stop()
    (e,) = [e for e in entries(har) if e["request"]["method"] == "GET"]
    # (`close` with harrec's unread session tickets in the buffer is a reset.)
    assert re.match(r"client (closed|reset) the connection after 1\.\d s$", e["_error"]), e["_error"]


@pytest.mark.parametrize("stall", ["head", "body"])
def test_a_socks5_client_that_gives_up_on_plain_http_is_recorded(origin, harrec, stall):
    """A SOCKS5 client speaking plain HTTP through the tunnel gives up after a second: recorded
    at once with when it left, and the upstream closed."""
    from helpers import tunnel
    px = harrec.start("--no-redact")
    baseline = open_fds(px.proc.pid)
    s = tunnel("socks5", px, "127.0.0.1", origin.port)
    path = "/hang" if stall == "head" else "/slow?ms=3000&chunks=5"
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{origin.port}\r\n\r\n".encode())
    if stall == "body":
        s.settimeout(5)
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
    time.sleep(1.0)
    s.close()
    assert wait_until(lambda: open_fds(px.proc.pid) <= baseline, 2.0), "the upstream connection was closed within 2 s"
    har = px.stop()
    (e,) = [e for e in entries(har) if path.split("?")[0] in e["request"]["url"]]
    assert re.match(r"client (closed|reset) the connection after 1\.\d s$", e["_error"]), e["_error"]
    assert e["response"]["status"] == (0 if stall == "head" else 200)


def test_a_recorded_give_up_is_generated_as_a_timeout_and_replayed_as_silence(origin, harrec, tmp_path):
    """What the client saw, again: `harrec generate` makes the give-up a `.timedOut` failure
    after the recorded time, and `harrec replay` answers nothing (other requests go on)."""
    import subprocess
    from helpers import HARREC_BIN, curl
    px = harrec.start("--no-redact")
    s = get(px, origin.url("/hang"))
    time.sleep(1.0)
    s.close()
    assert curl("-x", px.http_proxy, "-o", "/dev/null", origin.url("/json")).rc == 0
    har = px.stop()
    gave_up = next(e for e in entries(har) if "/hang" in e["request"]["url"])
    assert gave_up["_error"].startswith("client closed the connection after 1.")

    gen = subprocess.run([HARREC_BIN, "generate", str(px.har_path), "--scenario", "gaveUp", "--out", str(tmp_path / "gen"),
                          "--fixtures", str(tmp_path / "fixtures"), "--latency", "recorded"],
                         capture_output=True, text=True, timeout=60)
    assert gen.returncode == 0, gen.stderr
    source = next((tmp_path / "gen").glob("GaveUp*Scenario.swift")).read_text()
    assert "response: .failure(.timedOut, delay: 1." in source, source

    rp = harrec.start(replay=px.har_path)
    silent = get(rp, origin.url("/hang"))
    silent.settimeout(1.5)
    with pytest.raises(TimeoutError):
        silent.recv(1)  # nothing, as the recorded client got nothing before it gave up
    silent.close()
    r = curl("-x", rp.http_proxy, "-w", "%{http_code}", "-o", "/dev/null", origin.url("/json"))
    assert r.out == b"200", "the rest of the recording is served"
    assert rp.finish() == 0
