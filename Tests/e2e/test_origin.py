"""Checks of the test origin itself and of the direct half of every pass-through case.

These need no proxy: they pin down what the origin sends, so a failure in the proxied tests can
be blamed on the proxy and not on the origin or the test's expectations."""

import json
import subprocess
import sys
import time

import pytest

import origin as origin_mod
from helpers import (CASES, CASE_IDS, E2E_DIR, MODES, RawConn, curl, mode_host, request_bytes,
                     run_case, sha256)

# The test origin alone, without harrec: nothing for the poll(2) run (conftest.py).
pytestmark = pytest.mark.no_event_loop


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_case_direct(case, origin, payloads):
    run_case(case, origin.base_url, payloads)


@pytest.mark.parametrize("case", [c for c in CASES if c.name in ("json", "bytes_1mib", "gzip_raw")],
                         ids=lambda c: c.name)
def test_case_direct_localhost(case, origin, payloads):
    # socks5h cases use http://localhost:PORT; the origin must answer there too.
    run_case(case, f"http://{mode_host('socks5h')}:{origin.port}", payloads)


def test_json_echo(origin):
    r = curl("-H", "X-One: 1", "-H", "X-One: 2", f"{origin.base_url}/json?a=1&b=x%20y&a=")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["method"] == "GET" and doc["target"] == "/json?a=1&b=x%20y&a="
    assert doc["args"] == [["a", "1"], ["b", "x y"], ["a", ""]]
    assert [v for k, v in doc["headers"] if k == "X-One"] == ["1", "2"]


def test_keepalive_and_pipelining(origin):
    host = f"127.0.0.1:{origin.port}"
    reqs = b"".join(request_bytes("GET", f"/json?i={i}", host) for i in range(3))
    with RawConn(port=origin.port) as c:
        c.send(reqs)
        got = [c.read_response() for _ in range(3)]
    assert [json.loads(r.body)["args"] for r in got] == [[["i", str(i)]] for i in range(3)]
    assert {r.header("x-origin-conn") for r in got} == {"1"}
    assert [r.header("x-origin-req") for r in got] == ["1", "2", "3"]
    assert origin.stats()["connections"] == 1 and origin.stats()["requests"] == 3


def test_curl_reuses_connection(origin):
    r = curl("-w", "%{num_connects}\n", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
             origin.url("/json?1"), origin.url("/json?2"), origin.url("/json?3"))
    assert r.rc == 0, r.err
    assert r.out.split() == [b"1", b"0", b"0"]
    assert origin.stats()["connections"] == 1


def test_expect_100_continue(origin):
    body = b"x" * 5000
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("POST", "/echo", f"127.0.0.1:{origin.port}",
                             [("Content-Length", "5000"), ("Expect", "100-continue")]))
        interim = c.read_head()
        assert interim.status == 100
        c.send(body)
        r = c.read_response("POST")
    assert r.status == 200 and r.body == body
    assert r.header("x-request-framing") == "content-length"


def test_chunked_request_body(origin):
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("POST", "/echo", "x", [("Transfer-Encoding", "chunked"),
                                                   ("Content-Type", "text/x-e2e")])
               + b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n")
        r = c.read_response("POST")
    assert r.body == b"hello world" and r.header("content-type") == "text/x-e2e"
    assert r.header("x-request-framing") == "chunked"


def test_chunked_response_and_trailer(origin):
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("GET", "/chunked?n=5000&chunks=3&seed=4&trailer=1&ext=1", "x"))
        r = c.read_response()
    assert r.body == origin_mod.make_bytes(5000, 4)
    assert r.trailers == [("X-Body-Sha256", sha256(r.body))]


def test_http10_gets_no_chunking(origin):
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("GET", "/chunked?n=3000&chunks=3", "x", version="HTTP/1.0"))
        r = c.read_response()
        assert c.closed_within(2)
    assert r.header("transfer-encoding") is None and r.header("content-length") == "3000"
    assert r.body == origin_mod.make_bytes(3000, 0)


def test_status_and_head(origin):
    for code in (204, 304):
        with RawConn(port=origin.port) as c:
            c.send(request_bytes("GET", f"/status/{code}", "x"))
            r = c.read_response()
            assert r.status == code and r.header("content-length") is None
            c.send(request_bytes("GET", "/status/200", "x"))  # nothing was left on the wire
            assert c.read_response().body == b"status 200\n"
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("HEAD", "/head", "x") + request_bytes("GET", "/status/201", "x"))
        r = c.read_response("HEAD")
        assert r.header("content-length") == str(origin_mod.HEAD_LEN) and r.body == b""
        assert c.read_response().status == 201
    assert curl(origin.url("/status/101"), "-o", "/dev/null", "-w", "%{http_code}").out == b"400"


def test_close_delimited(origin):
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("GET", "/close-delimited?n=777", "x"))
        r = c.read_response()
    assert r.header("content-length") is None and r.header("connection") == "close"
    assert r.body == origin_mod.make_bytes(777, 0)


def test_set_cookie_and_redirect(origin):
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("GET", "/set-cookie", "x") + request_bytes("GET", "/redirect", "x"))
        r1, r2 = c.read_response(), c.read_response()
    assert r1.header_all("set-cookie") == origin_mod.SET_COOKIES
    assert r2.status == 302 and r2.header("location") == origin_mod.REDIRECT_LOCATION


def test_failure_modes(origin):
    host = f"127.0.0.1:{origin.port}"
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("GET", "/reset", host))
        with pytest.raises(ConnectionResetError):
            c.sock.recv(100)
    with RawConn(port=origin.port) as c:
        c.send(request_bytes("GET", "/close-mid-body", host))
        head = c.read_head()
        assert head.header("content-length") == "1000"
        assert len(c.read_until_close()) == 100
    for path, raw in (("/bad-response", origin_mod.BAD_RESPONSE),
                      ("/bad-framing", origin_mod.BAD_FRAMING)):
        with RawConn(port=origin.port) as c:
            c.send(request_bytes("GET", path, host))
            assert c.read_until_close() == raw
    assert curl(origin.url("/bad-response")).rc != 0


def test_hang(origin):
    with RawConn(port=origin.port, timeout=1) as c:
        c.send(request_bytes("GET", "/hang", "x"))
        assert not c.closed_within(1.0)
    # the origin notices the client going away
    deadline = time.time() + 3
    while origin.stats()["open"] and time.time() < deadline:
        time.sleep(0.05)
    assert origin.stats()["open"] == 0


def test_slow_timing(origin):
    t0 = time.time()
    r = curl(origin.url("/slow?ms=100&chunks=4"))
    assert r.out == origin_mod.slow_body(4) and time.time() - t0 >= 0.3


def test_stats_endpoint(origin):
    curl(origin.url("/json"), origin.url("/json"))
    r = curl(origin.url("/stats"))
    assert json.loads(r.out) == {"connections": 2, "requests": 3, "bad_requests": 0, "open": 1}


def test_origin_rejects_bad_framing(origin):
    with RawConn(port=origin.port) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        assert c.read_response().status == 400
    assert origin.stats()["bad_requests"] == 1


def test_ipv6_and_localhost(origin):
    assert origin.has_ipv6
    r = curl("-g", f"http://[::1]:{origin.port}/status/200")
    assert r.out == b"status 200\n", r.err
    assert curl(f"http://localhost:{origin.port}/status/200").out == b"status 200\n"


def test_standalone_cli():
    p = subprocess.Popen([sys.executable, str(E2E_DIR / "origin.py"), "--port", "0"],
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().strip()
        assert line.startswith("origin listening on 127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])
        assert curl(f"http://127.0.0.1:{port}/status/200").out == b"status 200\n"
    finally:
        p.send_signal(2)
        assert p.wait(5) == 0


def test_modes_known():
    assert MODES == ["http", "tunnel", "socks5", "socks5h"]
