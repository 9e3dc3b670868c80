"""Nothing a client sent through the proxy is missing from the HAR: requests harrec answers itself
(400, 407) and tunnels it cannot open (CONNECT and SOCKS5 to a refused port) are entries with
`_error`, `_refused: true` and the response the client received. --no-record-errors turns it off.
The generator skips them (they are harrec's answers, not a server's)."""

import subprocess

import pytest

from helpers import HARREC_BIN, RawConn, closed_port_socket, curl, entries


def _refused(har):
    return [e for e in entries(har) if e.get("_refused") is True]


def test_refusals_are_recorded_with_what_the_client_received(harrec, tmp_path):
    closed = closed_port_socket()
    port = closed.getsockname()[1]
    px = harrec.start()
    # 1. A malformed request: 400, as raw bytes.
    with RawConn(port=px.http_port, timeout=5) as c:
        c.send(b"POST http://a.test/upload HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n")
        r = c.read_head()
        body400 = c._exact(int(r.header("content-length")))
    assert r.status == 400
    # 2. CONNECT to a refused port, by curl: 502.
    cr = curl("-sS", "-p", "-x", px.http_proxy, f"http://127.0.0.1:{port}/", "-o", "/dev/null")
    assert cr.rc != 0
    # 3. SOCKS5 to the same port, by curl: reply 5 (refused), no HTTP response.
    cr = curl("-sS", "--socks5", f"127.0.0.1:{px.socks_port}", f"http://127.0.0.1:{port}/", "-o", "/dev/null")
    assert cr.rc != 0
    har = px.stop()
    refused = _refused(har)
    assert len(refused) == 3, [(e["request"]["method"], e["request"]["url"]) for e in entries(har)]
    bad, connect, socks = refused
    assert (bad["request"]["method"], bad["request"]["url"]) == ("POST", "http://a.test/upload")
    assert bad["response"]["status"] == 400
    assert bad["response"]["content"]["text"].encode() == body400, "the body the client received"
    assert bad["_error"].startswith("bad request: ")
    assert (connect["request"]["method"], connect["request"]["url"]) == ("CONNECT", f"http://127.0.0.1:{port}/")
    assert connect["response"]["status"] == 502
    assert "cannot connect to 127.0.0.1" in connect["_error"]
    assert socks["request"]["httpVersion"] == "SOCKS5"
    assert socks["response"]["status"] == 0
    assert socks["_error"].endswith("(SOCKS5 reply 5)"), socks["_error"]

    # The generator makes no mock of harrec's own answers: with only those, nothing to generate.
    out = tmp_path / "gen"
    p = subprocess.run([HARREC_BIN, "generate", str(px.har_path), "--scenario", "refusals", "--out", str(out),
                        "--fixtures", str(tmp_path / "fixtures")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "nothing to generate: none of the 3 entries" in p.stderr, p.stderr
    closed.close()


def test_407_is_recorded_without_the_credentials(harrec, origin):
    px = harrec.start("--proxy-auth", "user:secret-pass")
    cr = curl("-sS", "-x", px.http_proxy, "-U", "user:wrong-pass", origin.url("/json"), "-o", "/dev/null", "-w", "%{http_code}")
    assert cr.out == b"407"
    har = px.stop()
    (e,) = _refused(har)
    assert e["response"]["status"] == 407
    assert e["_error"] == "proxy authentication required"
    names = [h["name"].lower() for h in e["request"]["headers"]]
    assert "proxy-authorization" not in names, names
    assert b"wrong-pass" not in px.har_path.read_bytes() and b"d3JvbmctcGFzcw" not in px.har_path.read_bytes()


def test_no_record_errors_turns_it_off(harrec):
    closed = closed_port_socket()
    px = harrec.start("--no-record-errors")
    assert curl("-sS", "-p", "-x", px.http_proxy, f"http://127.0.0.1:{closed.getsockname()[1]}/").rc != 0
    with RawConn(port=px.http_port, timeout=5) as c:
        c.send(b"GET /origin-form-to-a-proxy HTTP/1.1\r\nHost: a.test\r\n\r\n")
        assert c.read_head().status == 400
    har = px.stop()
    assert entries(har) == []
    closed.close()
