"""HTTP/2 frames end to end with a python `h2` origin and client (independent of nghttp2) through
harrec's CONNECT and SOCKS5 (issue 16): trailers both ways, RST_STREAM, GOAWAY with a graceful
drain, a slow reader on one stream, and cleartext h2 with prior knowledge inside tunnels.
"""

from __future__ import annotations

import ssl
import time

import pytest

import origin as origin_mod
from h2peers import H2Client, H2Server
from helpers import content_bytes, curl, entries, har_header, tunnel, vmrss_kib
from test_http2 import check_with_mitmdump


@pytest.fixture
def h2_origin(test_pki):
    server = H2Server(origin_mod.server_tls_context(test_pki / "server.pem", test_pki / "server-key.pem")).start()
    yield server
    server.stop()
    assert not server.errors, server.errors


@pytest.fixture
def h2c_origin():
    server = H2Server(None).start()
    yield server
    server.stop()
    assert not server.errors, server.errors


def tls_client(px, kind, port) -> H2Client:
    sock = tunnel(kind, px, "localhost", port)
    sock.settimeout(20)
    client = H2Client(sock, f"localhost:{port}", ssl.create_default_context(cafile=str(px.ca_pem)), "localhost")
    assert client.alpn == "h2", "the origin speaks h2, so the client was offered h2"
    return client


def by_path(har) -> dict:
    """Entries by path and query (one per path in these tests)."""
    return {"/" + e["request"]["url"].split("/", 3)[3]: e for e in entries(har)}


@pytest.mark.parametrize("kind", ["connect", "socks5"])
def test_trailers_reset_and_goaway(harrec_tls, h2_origin, kind):
    px = harrec_tls.start("--no-redact")
    client = tls_client(px, kind, h2_origin.port)
    upload = origin_mod.make_bytes(300_000, 8)
    trailers = client.request("GET", "/trailers", headers=[("te", "trailers")])
    echo = client.request("POST", "/echo", body=upload, trailers=[("x-sum", "42")])
    reset = client.request("GET", "/reset")
    assert client.run(lambda c: all(s.done for s in c.streams.values()))
    s = client.streams
    assert s[trailers].status == 200 and bytes(s[trailers].body) == b"payload"
    assert s[trailers].trailers == [("grpc-status", "0"), ("grpc-message", "ok")]
    assert bytes(s[echo].body) == upload, "the upload went through and came back byte for byte"
    assert s[echo].trailers == [("x-echo-x-sum", "42")], "request trailers reached the origin"
    assert s[reset].reset_code == 0xB, "the origin's RST_STREAM code is passed on"

    goaway = client.request("GET", "/goaway")
    assert client.run(lambda c: c.streams[goaway].done and c.goaway is not None)
    assert bytes(s[goaway].body) == b"bye", "the stream in flight finishes after the GOAWAY"
    assert client.goaway.error_code == 0, "a graceful drain"
    client.close()

    har = px.stop()
    es = by_path(har)
    assert sorted(es) == ["/echo", "/goaway", "/reset", "/trailers"]
    assert es["/trailers"]["response"]["_trailers"] == [{"name": "grpc-status", "value": "0"},
                                                       {"name": "grpc-message", "value": "ok"}]
    assert content_bytes(es["/trailers"]["response"]["content"]) == b"payload"
    assert es["/echo"]["request"]["_trailers"] == [{"name": "x-sum", "value": "42"}]
    assert content_bytes(es["/echo"]["response"]["content"]) == upload
    assert es["/reset"]["_error"] == "upstream reset the stream (ENHANCE_YOUR_CALM)"
    assert "_error" not in es["/goaway"] and "_error" not in es["/echo"]
    assert len({e["connection"] for e in es.values()}) == 1
    assert har_header(es["/trailers"]["request"], "te") == "trailers"
    check_with_mitmdump(px.har_path, 4)


def test_slow_reader_on_one_stream(harrec_tls, h2_origin):
    """A client that stops reading one stream: harrec holds about one window of it (not the
    body), the other streams go on, and the body arrives whole once the reader catches up."""
    px = harrec_tls.start("--no-redact")
    client = tls_client(px, "connect", h2_origin.port)
    size = 12_000_000
    slow = client.request("GET", f"/bytes?n={size}&seed=3")
    client.stall = {slow}
    assert client.run(lambda c: len(c.streams[slow].body) >= 60_000)
    time.sleep(1.0)
    client.run(lambda c: False, timeout=1.0)
    stalled_at = len(client.streams[slow].body)
    assert stalled_at <= 65_535, "python h2's stream window is 65,535 bytes; nothing more arrives"
    rss_stalled = vmrss_kib(px.proc.pid)

    fast = client.request("GET", "/trailers")
    assert client.run(lambda c: c.streams[fast].done, timeout=10), "the other stream is not stalled"
    assert bytes(client.streams[fast].body) == b"payload"
    client.run(lambda c: False, timeout=1.0)
    assert len(client.streams[slow].body) == stalled_at
    assert vmrss_kib(px.proc.pid) - rss_stalled < 8 * 1024, "harrec does not buffer the stalled body"

    client.acknowledge(slow)
    assert client.run(lambda c: c.streams[slow].done, timeout=60)
    assert bytes(client.streams[slow].body) == origin_mod.make_bytes(size, 3)
    client.close()
    har = px.stop()
    big = by_path(har)[f"/bytes?n={size}&seed=3"]
    assert content_bytes(big["response"]["content"]) == origin_mod.make_bytes(size, 3)


@pytest.mark.parametrize("kind", ["connect", "socks5"])
def test_h2c_prior_knowledge_in_a_tunnel(harrec_tls, h2c_origin, kind):
    px = harrec_tls.start("--no-redact")
    sock = tunnel(kind, px, "127.0.0.1", h2c_origin.port)
    sock.settimeout(20)
    client = H2Client(sock, f"127.0.0.1:{h2c_origin.port}")
    got = client.request("GET", "/bytes?n=300000&seed=4")
    echo = client.request("POST", "/echo", body=b"hello h2c", trailers=[("x-t", "1")])
    assert client.run(lambda c: all(s.done for s in c.streams.values()))
    assert bytes(client.streams[got].body) == origin_mod.make_bytes(300_000, 4)
    assert bytes(client.streams[echo].body) == b"hello h2c"
    assert client.streams[echo].trailers == [("x-echo-x-t", "1")]
    client.close()
    if kind == "connect":
        # curl's prior knowledge through a CONNECT tunnel.
        r = curl("--http2-prior-knowledge", "--proxytunnel", "-x", px.http_proxy, "-w", "%{http_version}",
                 "-o", "/dev/null", f"http://127.0.0.1:{h2c_origin.port}/bytes?n=5000&seed=1")
        assert r.rc == 0 and r.out.decode() == "2", r.err
    har = px.stop()
    es = by_path(har)
    assert "/bytes?n=300000&seed=4" in es, [e["request"]["url"] for e in entries(har)]
    assert es["/bytes?n=300000&seed=4"]["request"]["url"] == f"http://127.0.0.1:{h2c_origin.port}/bytes?n=300000&seed=4"
    assert content_bytes(es["/bytes?n=300000&seed=4"]["response"]["content"]) == origin_mod.make_bytes(300_000, 4)
    assert all(e["request"]["httpVersion"] == "http/2.0" for e in es.values())
    assert es["/echo"]["request"]["_trailers"] == [{"name": "x-t", "value": "1"}]
    check_with_mitmdump(px.har_path, len(es))


@pytest.fixture(params=["speaks-first", "answers-first"])
def h2_only_origin(test_pki, request):
    """An h2-only origin that either sends its SETTINGS right after the handshake or only once
    the client's first bytes (here: an HTTP/1 request) arrived."""
    server = H2Server(origin_mod.server_tls_context(test_pki / "server.pem", test_pki / "server-key.pem"),
                      require_alpn=False, speak_first=request.param == "speaks-first").start()
    yield server
    server.stop()
    assert not server.errors, server.errors


def test_http1_client_of_an_h2_only_server_is_translated(harrec_tls, h2_only_origin, tmp_path):
    """curl --http1.1 offers only http/1.1; the server accepts the handshake without ALPN and then
    speaks only h2 (as gRPC servers do). harrec learns it from the first bytes it gets back,
    reconnects offering h2, and translates: the client gets HTTP/1.1, the origin HTTP/2."""
    px = harrec_tls.start("--no-redact")
    base = f"https://localhost:{h2_only_origin.port}"
    r = curl("--http1.1", "-x", px.http_proxy, "--cacert", str(px.ca_pem), "-w", "%{http_version} %{http_code}",
             "-o", str(tmp_path / "a.bin"), f"{base}/bytes?n=200000&seed=6",
             "-o", str(tmp_path / "b.bin"), f"{base}/trailers")
    assert r.rc == 0, r.err + px.stderr_text
    assert r.out.decode() == "1.1 2001.1 200"
    assert (tmp_path / "a.bin").read_bytes() == origin_mod.make_bytes(200_000, 6)
    assert (tmp_path / "b.bin").read_bytes() == b"payload"
    upload = origin_mod.make_bytes(100_000, 2)
    (tmp_path / "up.bin").write_bytes(upload)
    r = curl("--http1.1", "-x", px.http_proxy, "--cacert", str(px.ca_pem), "--data-binary", f"@{tmp_path / 'up.bin'}",
             "-o", str(tmp_path / "echo.bin"), "-w", "%{http_code}", f"{base}/echo")
    assert r.out.decode() == "200", r.err
    assert (tmp_path / "echo.bin").read_bytes() == upload
    if not h2_only_origin.speak_first:
        assert h2_only_origin.rejected_http1 == 1, "one HTTP/1 request taught harrec; the rest went as h2"
    har = px.stop()
    es = by_path(har)
    big = es["/bytes?n=200000&seed=6"]
    assert big["request"]["httpVersion"] == "HTTP/1.1" and big["response"]["httpVersion"] == "http/2.0"
    assert content_bytes(big["response"]["content"]) == origin_mod.make_bytes(200_000, 6)
    assert es["/trailers"]["response"]["_trailers"] == [{"name": "grpc-status", "value": "0"},
                                                       {"name": "grpc-message", "value": "ok"}]
    assert content_bytes(es["/echo"]["response"]["content"]) == upload
    assert all("_error" not in e for e in es.values())


def test_http1_client_of_an_h2c_only_server_in_a_tunnel(harrec_tls, h2c_origin, tmp_path):
    """The h2c server sends its SETTINGS first; the client's first bytes are HTTP/1.1: harrec
    speaks h2 with prior knowledge upstream and HTTP/1.1 to the client."""
    px = harrec_tls.start("--no-redact")
    r = curl("--http1.1", "--proxytunnel", "-x", px.http_proxy, "-w", "%{http_version} %{http_code}",
             "-o", str(tmp_path / "a.bin"), f"http://127.0.0.1:{h2c_origin.port}/bytes?n=50000&seed=9")
    assert r.rc == 0, r.err + px.stderr_text
    assert r.out.decode() == "1.1 200"
    assert (tmp_path / "a.bin").read_bytes() == origin_mod.make_bytes(50_000, 9)
    har = px.stop()
    (entry,) = entries(har)
    assert entry["response"]["httpVersion"] == "http/2.0"


def test_a_recorded_stream_reset_replays_with_its_code(harrec, harrec_tls, h2_origin):
    """The origin's RST_STREAM(ENHANCE_YOUR_CALM) reached the client while recording; `harrec
    replay` resets the same stream with the same code (not INTERNAL_ERROR), and serves the rest."""
    px = harrec_tls.start("--no-redact")
    client = tls_client(px, "connect", h2_origin.port)
    reset = client.request("GET", "/reset")
    ok = client.request("GET", "/trailers", headers=[("te", "trailers")])
    assert client.run(lambda c: all(s.done for s in c.streams.values()))
    assert client.streams[reset].reset_code == 0xB
    client.close()
    px.stop()
    h2_origin.stop()

    rp = harrec.start("--ca-dir", px.ca_dir, replay=px.har_path)
    rp.ca_pem = px.ca_pem  # the same CA answers for the replay
    client = tls_client(rp, "connect", h2_origin.port)
    reset = client.request("GET", "/reset")
    ok = client.request("GET", "/trailers", headers=[("te", "trailers")])
    assert client.run(lambda c: all(s.done for s in c.streams.values()))
    assert client.streams[reset].reset_code == 0xB, "the recorded code, as the client got it"
    assert bytes(client.streams[ok].body) == b"payload"
    client.close()
    assert rp.finish() == 0
