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


def test_socks_refusals_and_a_407d_connect_are_entries(harrec):
    """A SOCKS4 attempt and a SOCKS5 client without the credentials harrec needs get entries
    (issue 33, item 3), and a 407'd CONNECT is written as every tunnel entry is."""
    px = harrec.start("--proxy-auth", "user:secret-pass")
    with RawConn(port=px.socks_port, timeout=5) as c:
        c.send(bytes([4, 1, 0, 80, 127, 0, 0, 1]) + b"me\x00")  # SOCKS4 CONNECT 127.0.0.1:80
        assert c.sock.recv(8)[:2] == bytes([0, 0x5B]), "SOCKS4's 'rejected' reply"
    with RawConn(port=px.socks_port, timeout=5) as c:
        c.send(bytes([5, 1, 0]))  # SOCKS5, no authentication offered
        assert c.sock.recv(2) == bytes([5, 0xFF])
    with RawConn(port=px.http_port, timeout=5) as c:
        c.send(b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
        assert c.read_head().status == 407
    har = px.stop()
    refused = _refused(har)
    assert [(e["request"]["method"], e["request"]["httpVersion"]) for e in refused] == [
        ("CONNECT", "SOCKS4"), ("CONNECT", "SOCKS5"), ("CONNECT", "HTTP/1.1")], refused
    socks4, socks5, connect = refused
    assert "SOCKS4 is not supported" in socks4["_error"] and socks4["response"]["status"] == 0
    assert "no acceptable SOCKS5 authentication method" in socks5["_error"]
    assert connect["request"]["url"] == "https://a.test:443/" and connect["response"]["status"] == 407


def test_a_client_that_rejects_the_certificate_is_an_entry(harrec_tls, https_origin):
    """The first hour's most common problem: a client that does not trust harrec's CA. Its tunnel
    is an entry with the reason, and nothing else is recorded for it."""
    px = harrec_tls.start("--no-redact")
    url = https_origin.localhost_url("/json")
    r = curl("-sS", "-x", px.http_proxy, url)  # curl's own trust store lacks harrec's CA
    assert r.rc == 60, (r.rc, r.err)
    har = px.stop()
    (e,) = entries(har)
    assert (e["request"]["method"], e["request"]["url"]) == ("CONNECT", f"https://localhost:{https_origin.port}/")
    assert e["response"]["status"] == 0 and "_refused" not in e
    assert "rejected harrec's certificate for localhost" in e["_error"], e["_error"]
    assert "harrec ca show" in e["_error"]
