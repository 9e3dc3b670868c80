"""Failures: malformed client requests, upstream failures, cut responses."""

import re
import socket
import time

import pytest

import origin as origin_mod
from helpers import (RawConn, Socks5Error, curl, entries, entries_for, one_entry,
                     socks5_handshake)

# ---------------------------------------------------------------- malformed requests -> 400


def _target(origin):
    return origin.url("/echo"), f"127.0.0.1:{origin.port}"


MALFORMED = {
    "cl_and_te": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\nContent-Length: 5\r\n"
                               f"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n").encode(),
    "bad_chunk_size": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\n"
                                    f"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"
                                    ).encode(),
    "bad_chunk_terminator": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\n"
                                          f"Transfer-Encoding: chunked\r\n\r\n"
                                          f"5\r\nhelloXX0\r\n\r\n").encode(),
    "obs_fold": lambda u, h: (f"GET {u} HTTP/1.1\r\nHost: {h}\r\nX-Folded: a\r\n b\r\n\r\n"
                              ).encode(),
    "nul_in_header": lambda u, h: (f"GET {u} HTTP/1.1\r\nHost: {h}\r\nX-Nul: a\0b\r\n\r\n"
                                   ).encode(),
    "header_block_over_64k": lambda u, h: (f"GET {u} HTTP/1.1\r\nHost: {h}\r\n"
                                           f"X-Big: {'a' * 70000}\r\n\r\n").encode(),
    "many_headers_over_64k": lambda u, h: (f"GET {u} HTTP/1.1\r\nHost: {h}\r\n"
                                           + "".join(f"X-H{i}: {'b' * 60}\r\n"
                                                     for i in range(1200)) + "\r\n").encode(),
    "two_content_lengths": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\nContent-Length: 5"
                                         f"\r\nContent-Length: 6\r\n\r\nhello!").encode(),
    "bad_content_length": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\n"
                                        f"Content-Length: 12abc\r\n\r\nhello").encode(),
    "negative_content_length": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\n"
                                             f"Content-Length: -5\r\n\r\nhello").encode(),
    "space_before_colon": lambda u, h: (f"GET {u} HTTP/1.1\r\nHost : {h}\r\n\r\n").encode(),
    "unknown_transfer_coding": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\n"
                                             f"Transfer-Encoding: gzip\r\n\r\nxx").encode(),
    "bad_request_line": lambda u, h: (f"GET {u} HTTP/1.1 extra\r\nHost: {h}\r\n\r\n").encode(),
    "control_char_in_target": lambda u, h: (f"GET {u}\x01x HTTP/1.1\r\nHost: {h}\r\n\r\n"
                                            ).encode(),
    "huge_chunk_size": lambda u, h: (f"POST {u} HTTP/1.1\r\nHost: {h}\r\n"
                                     f"Transfer-Encoding: chunked\r\n\r\n"
                                     f"ffffffffffffffffffffffff\r\nhello\r\n").encode(),
}


@pytest.fixture(scope="module")
def shared(origin_module, harrec_module):
    px = harrec_module.start()
    yield origin_module, px
    if px.alive():
        px.stop()


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_request_gets_400_and_close(name, shared):
    origin, px = shared
    before = origin.stats()["requests"]
    data = MALFORMED[name](*_target(origin))
    with RawConn(port=px.http_port, timeout=5) as c:
        try:
            c.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the proxy may stop reading early (header block too big); it must still answer
        try:
            r = c.read_head()
        except (ConnectionResetError, EOFError) as e:
            pytest.fail(f"{name}: no 400 response, connection dropped ({e})")
        assert r.version == "HTTP/1.1" and r.status == 400, f"{name}: got {r.status} {r.reason}"
        assert r.reason == "Bad Request"
        assert (r.header("content-type") or "").startswith("text/plain")
        body = c._exact(int(r.header("content-length"))) if r.header("content-length") else b""
        text = body.decode("utf-8")
        assert text.strip() and "\n" not in text.strip(), f"{name}: body must be one line: {text!r}"
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), f"{name}: control chars in body"
        assert c.closed_within(2), f"{name}: connection not closed after 400"
    time.sleep(0.05)
    assert origin.stats()["requests"] == before, f"{name}: a malformed request reached the origin"
    assert px.alive()


def test_proxy_still_works_after_malformed(shared):
    origin, px = shared
    r = curl("-x", px.http_proxy, origin.url("/status/200"))
    assert r.rc == 0 and r.out == b"status 200\n"


# ---------------------------------------------------------------- upstream failures -> 502


def _assert_502_entry(har, path_prefix, status=(502,)):
    """The entry shows what the client got: harrec's own 502 (issue 33, item 2), its body naming
    the reason, and `_error` with the same reason."""
    e = one_entry(har, path_prefix)
    assert e["response"]["status"] in status, f"{path_prefix}: HAR status {e['response']['status']}"
    err = e.get("_error")
    assert isinstance(err, str) and err.strip(), f"{path_prefix}: entry needs _error"
    assert not re.search(r"[\x00-\x1f\x7f]", err)
    if e["response"]["status"] == 502:
        assert e["response"]["content"]["text"] == f"harrec: {err}\n", e["response"]
        assert e["response"]["statusText"] == "Bad Gateway"
    return e


def _live_line_502(px, url):
    return px.wait_for_stderr(r" GET " + re.escape(url) + r" 502 error: \S", timeout=3)


def test_upstream_refused(harrec, closed_port):
    px = harrec.start()
    url = f"http://127.0.0.1:{closed_port}/refused"
    r = curl("-x", px.http_proxy, "-o", "/dev/null", "-w", "%{http_code}", url)
    assert r.rc == 0 and r.out == b"502", (r.out, r.err)
    assert _live_line_502(px, url), px.stderr_text
    har = px.stop()
    _assert_502_entry(har, "/refused")


def test_upstream_refused_socks(harrec, closed_port):
    """SOCKS5 CONNECT to a refused port: the proxy answers with a failure reply code."""
    px = harrec.start()
    r = curl("--socks5", f"127.0.0.1:{px.socks_port}", f"http://127.0.0.1:{closed_port}/x")
    assert r.rc != 0
    with socket.create_connection(("127.0.0.1", px.socks_port), timeout=5) as s:
        with pytest.raises(Socks5Error, match="reply code [1-8]"):
            socks5_handshake(s, "127.0.0.1", closed_port)
    px.stop()


def test_connect_tunnel_refused(harrec, closed_port):
    px = harrec.start()
    with RawConn(port=px.http_port) as c:
        c.send(f"CONNECT 127.0.0.1:{closed_port} HTTP/1.1\r\nHost: 127.0.0.1:{closed_port}"
               f"\r\n\r\n".encode())
        r = c.read_head()
        assert r.status == 502
    px.stop()


def test_request_to_the_proxy_itself_is_refused_not_looped(harrec):
    """A request whose target is harrec's own listener would come back in as a new request:
    it gets one 502 naming the loop, and the HAR holds exactly that one exchange (the CONNECT
    to the listener as a refused tunnel)."""
    px = harrec.start()
    for port in (px.http_port, px.socks_port):
        url = f"http://127.0.0.1:{port}/self"
        r = curl("-x", px.http_proxy, "-sS", "-w", "\n%{http_code}", url)
        assert r.rc == 0, r.err
        assert r.out.endswith(b"502"), r.out
        assert b"own listener" in r.out, r.out
    with RawConn(port=px.http_port) as c:
        c.send(f"CONNECT 127.0.0.1:{px.http_port} HTTP/1.1\r\nHost: 127.0.0.1:{px.http_port}\r\n\r\n".encode())
        assert c.read_head().status == 502
    har = px.stop()
    mine = entries_for(har, "/self")
    assert len(mine) == 2, [e["request"]["url"] for e in entries(har)]
    for e in mine:
        assert e["response"]["status"] == 502
        assert "own listener" in e.get("_error", ""), e.get("_error")
    tunnels = [e for e in entries(har) if e["request"]["method"] == "CONNECT"]
    assert len(tunnels) == 1 and tunnels[0]["_refused"] is True and "own listener" in tunnels[0]["_error"], tunnels
    assert len(entries(har)) == 3, "the refused requests did not reach the proxy a second time"


def test_the_unspecified_address_is_the_proxy_itself_too(harrec):
    """`0.0.0.0` and `0` reach the loopback address harrec listens on (issue 33, item 8): a GET,
    a CONNECT and a SOCKS5 CONNECT to them are refused as loops, each once."""
    px = harrec.start()
    for host in ("0.0.0.0", "0"):
        r = curl("-x", px.http_proxy, "-sS", "-w", "\n%{http_code}", f"http://{host}:{px.http_port}/unspecified")
        assert r.rc == 0, r.err
        assert r.out.endswith(b"502") and b"own listener" in r.out, r.out
    with RawConn(port=px.http_port) as c:
        c.send(f"CONNECT 0.0.0.0:{px.http_port} HTTP/1.1\r\nHost: 0.0.0.0:{px.http_port}\r\n\r\n".encode())
        assert c.read_head().status == 502
    r = curl("--socks5", f"127.0.0.1:{px.socks_port}", "-sS", "--max-time", "10", f"http://0.0.0.0:{px.socks_port}/socks")
    assert r.rc != 0, "the SOCKS5 CONNECT is refused, no tunnel to harrec itself"
    har = px.stop()
    mine = entries_for(har, "/unspecified")
    assert len(mine) == 2, [e["request"]["url"] for e in entries(har)]
    assert all("own listener" in e.get("_error", "") for e in mine), mine
    assert not [e for e in entries(har) if e["response"]["status"] == 400], "no request came back in as a new one"
    tunnels = [e for e in entries(har) if e["request"]["method"] == "CONNECT"]
    assert len(tunnels) == 2 and all("own listener" in t.get("_error", "") for t in tunnels), tunnels


# A DNS label longer than 63 bytes fails inside the resolver library before any query is sent, so
# this test exercises the DNS-failure path without sending traffic beyond loopback (checked with
# strace: no socket is opened to the configured nameserver). A name like "nonexistent.invalid"
# would send a real query to the machine's resolver.
UNRESOLVABLE_HOST = "a" * 64 + ".invalid"


def test_unknown_host(harrec):
    px = harrec.start()
    url = f"http://{UNRESOLVABLE_HOST}/"
    r = curl("-x", px.http_proxy, "-o", "/dev/null", "-w", "%{http_code}", url)
    assert r.rc == 0 and r.out == b"502", (r.out, r.err)
    har = px.stop()
    e = one_entry(har, "/")
    assert e["request"]["url"] == url and e["response"]["status"] == 502
    assert re.search(r"dns|resolv", e.get("_error", ""), re.I), f"_error should mention DNS: {e}"


@pytest.mark.parametrize("path,statuses", [("/reset", (502,)), ("/bad-response", (502,)),
                                           ("/bad-framing", (502,))])
def test_bad_upstream_response(path, statuses, origin, harrec):
    px = harrec.start()
    url = origin.url(path)
    r = curl("-x", px.http_proxy, "-o", "/dev/null", "-w", "%{http_code}", url)
    assert r.rc == 0 and r.out == b"502", (path, r.out, r.err)
    assert _live_line_502(px, url), px.stderr_text
    har = px.stop()
    _assert_502_entry(har, path, statuses)


def test_close_mid_body(origin, harrec):
    px = harrec.start()
    r = curl("-x", px.http_proxy, origin.url("/close-mid-body"))
    assert r.rc == 18, f"curl should see a cut transfer (exit 18), got {r.rc}: {r.err}"
    assert r.out == origin_mod.make_bytes(origin_mod.CLOSE_MID_BODY_DECLARED, 3)[
        :origin_mod.CLOSE_MID_BODY_SENT]
    # the proxy itself still works
    assert curl("-x", px.http_proxy, origin.url("/status/200")).out == b"status 200\n"
    har = px.stop()
    e = one_entry(har, "/close-mid-body")
    assert e["response"]["status"] == 200, "the status was sent before the cut"
    assert e.get("_error"), "a cut response needs _error"


def test_close_mid_body_through_tunnel(origin, harrec):
    px = harrec.start()
    r = curl("-x", px.http_proxy, "--proxytunnel", origin.url("/close-mid-body"))
    assert r.rc == 18, r.err
    px.stop()


def test_failures_then_success_same_connection(origin, harrec, closed_port):
    """A 502 keeps (or cleanly closes) the client connection; the next request works."""
    px = harrec.start()
    r = curl("-x", px.http_proxy, "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_code}\n",
             f"http://127.0.0.1:{closed_port}/a", origin.url("/status/200"))
    assert r.rc == 0 and r.out.split() == [b"502", b"200"], (r.out, r.err)
    har = px.stop()
    assert len(entries(har)) == 2
    assert entries_for(har, "/status/200")[0]["response"]["status"] == 200
