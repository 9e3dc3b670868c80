"""HTTP/2 on a reverse listener: h2 over the listener's TLS (the client gets what the upstream
picks in ALPN), and h2c with prior knowledge on a plain listener (the upstream is asked for h2).
Clients without proxy settings: curl, httpx. Upstreams: nginx with h2 over TLS, h2c only, and
HTTP/1.1 only (test_http2's NginxH2, proxying to origin.py).

Each case checks the protocol the client reports, the bytes, that entries carry the upstream's
URLs, redirects and harrec's own paths; then `harrec replay --reverse` answers over h2 too.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

import origin as origin_mod
from helpers import content_bytes, curl, entries, free_port, har_header
from test_http2 import nginx_h2  # noqa: F401 (the fixture: nginx with h2, h2c and HTTP/1.1 listeners)


@pytest.fixture
def nginx(nginx_h2):  # noqa: F811
    return nginx_h2


def versions(r) -> list[str]:
    return r.out.decode().split()


def test_h2_over_the_listeners_tls_to_an_h2_upstream(harrec, harrec_tls, nginx, tmp_path):
    upstream = f"https://localhost:{nginx.h2_port}"
    px = harrec_tls.start("--no-redact", "--reverse", upstream, ports=("--http", "0"))
    listener = f"https://localhost:{px.http_port}"
    ca = str(px.ca_pem)
    # Two URLs in one run: two streams on one connection.
    r = curl("--http2", "--cacert", ca, "-w", "%{http_version}\\n", "-o", str(tmp_path / "a.bin"),
             f"{listener}/bytes?n=300000&seed=3", "-o", str(tmp_path / "b.json"), f"{listener}/json?h=x-seen-host", max_time=30)
    assert r.rc == 0 and versions(r) == ["2", "2"], (r.err, px.stderr_text)
    assert (tmp_path / "a.bin").read_bytes() == origin_mod.make_bytes(300000, 3)
    # The authority nginx got (it passes it on as X-Seen-Host): the upstream's, not the listener's.
    seen = json.loads((tmp_path / "b.json").read_bytes())
    assert seen["headers"] == [["X-Seen-Host", f"localhost:{nginx.h2_port}"]], seen
    # An absolute redirect to the upstream points back at the listener.
    r = curl("--http2", "--cacert", ca, "-i", f"{listener}/redirect?to={upstream}/json")
    assert f"location: {listener}/json".encode() in r.out.lower(), r.out
    # harrec's own paths, over h2 too.
    r = curl("--http2", "--cacert", ca, "-w", "\\n%{http_version}", f"{listener}/harrec/mark?name=after%20mark")
    assert b"after mark" in r.out and r.out.endswith(b"\n2"), r.out
    assert curl("--http2", "--cacert", ca, "-o", "/dev/null", f"{listener}/bytes?n=10&seed=1").rc == 0
    har = px.stop()
    es = entries(har)
    assert [e["request"]["url"] for e in es] == [
        f"{upstream}/bytes?n=300000&seed=3", f"{upstream}/json?h=x-seen-host", f"{upstream}/redirect?to={upstream}/json",
        f"{upstream}/bytes?n=10&seed=1"]
    assert {e["request"]["httpVersion"] for e in es} == {"http/2.0"}
    assert es[0]["connection"] == es[1]["connection"], "one client connection, one upstream connection"
    assert har_header(es[2]["response"], "location") == f"{upstream}/json", "the HAR keeps what the upstream sent"
    assert content_bytes(es[0]["response"]["content"]) == origin_mod.make_bytes(300000, 3)
    assert [p["title"] for p in har["log"]["pages"]] == ["after mark"]
    assert es[3]["pageref"] == har["log"]["pages"][0]["id"]

    # The replay answers over h2 the same way, offline.
    rp = harrec.start("--ca-dir", px.ca_dir, "--reverse", upstream, replay=px.har_path, ports=("--http", "0"))
    again = f"https://localhost:{rp.http_port}"
    r = curl("--http2", "--cacert", ca, "-w", "%{http_version}", "-o", str(tmp_path / "c.bin"), f"{again}/bytes?n=300000&seed=3")
    assert r.rc == 0 and r.out == b"2", (r.err, rp.stderr_text)
    assert (tmp_path / "c.bin").read_bytes() == origin_mod.make_bytes(300000, 3)
    r = curl("--http2", "--cacert", ca, "-i", f"{again}/redirect?to={upstream}/json")
    assert f"location: {again}/json".encode() in r.out.lower(), r.out
    assert rp.finish() == 0


def test_a_client_offering_h2_gets_http1_from_an_http1_upstream(harrec_tls, nginx):
    upstream = f"https://localhost:{nginx.h1_port}"
    px = harrec_tls.start("--no-redact", "--reverse", upstream, ports=("--http", "0"))
    r = curl("--http2", "--cacert", str(px.ca_pem), "-w", "%{http_version}", "-o", "/dev/null",
             f"https://localhost:{px.http_port}/bytes?n=1000&seed=2")
    assert r.rc == 0 and r.out == b"1.1", (r.err, px.stderr_text)
    (e,) = entries(px.stop())
    assert e["request"]["url"] == f"{upstream}/bytes?n=1000&seed=2" and e["response"]["httpVersion"] == "HTTP/1.1"


@pytest.mark.parametrize("kind", ["h2-over-tls", "h2c"])
def test_h2c_prior_knowledge_on_a_plain_listener(harrec, harrec_tls, nginx, kind):
    upstream = f"https://localhost:{nginx.h2_port}" if kind == "h2-over-tls" else f"http://127.0.0.1:{nginx.h2c_port}"
    px = harrec_tls.start("--no-redact", "--reverse", upstream, ports=("--http", "0"))
    listener = f"http://127.0.0.1:{px.http_port}"

    async def run():
        async with httpx.AsyncClient(http1=False, http2=True, timeout=30) as client:
            got = await asyncio.gather(*(client.get(f"{listener}/bytes?n={1000 + i}&seed={i}") for i in range(20)))
            return [(g.http_version, g.status_code, g.content) for g in got]

    got = asyncio.run(run())
    assert got == [("HTTP/2", 200, origin_mod.make_bytes(1000 + i, i)) for i in range(20)], px.stderr_text
    r = curl("--http2-prior-knowledge", "-i", f"{listener}/redirect?to={upstream}/json")
    assert r.rc == 0 and f"location: {listener}/json".encode() in r.out.lower(), r.out
    es = entries(px.stop())
    assert sorted(e["request"]["url"] for e in es[:20]) == sorted(f"{upstream}/bytes?n={1000 + i}&seed={i}" for i in range(20))
    assert {e["request"]["httpVersion"] for e in es} == {"http/2.0"}
    assert len({e["connection"] for e in es[:20]}) == 1, "httpx multiplexed its 20 requests"
    assert all("_error" not in e for e in es)

    # The replay takes h2c with prior knowledge the same way.
    rp = harrec.start("--ca-dir", px.ca_dir, "--reverse", upstream, replay=px.har_path, ports=("--http", "0"))
    r = curl("--http2-prior-knowledge", "-w", "\n%{http_version}", f"http://127.0.0.1:{rp.http_port}/bytes?n=1005&seed=5")
    assert r.rc == 0 and r.out == origin_mod.make_bytes(1005, 5) + b"\n2", (r.out[-20:], rp.stderr_text)
    assert rp.finish() == 0


def test_h2c_to_an_upstream_without_h2_fails_with_the_reason(harrec_tls, nginx):
    # nginx's HTTP/1.1-only TLS port: ALPN picks http/1.1, and the client's streams are HTTP/2.
    upstream = f"https://localhost:{nginx.h1_port}"
    px = harrec_tls.start("--no-redact", "--reverse", upstream, ports=("--http", "0"))
    r = curl("--http2-prior-knowledge", "-i", f"http://127.0.0.1:{px.http_port}/json")
    assert b" 502" in r.out.split(b"\r\n", 1)[0] and b"does not speak HTTP/2" in r.out, r.out
    (e,) = entries(px.stop())
    assert e["response"]["status"] == 502 and "does not speak HTTP/2" in e["_error"]


def test_a_listener_with_several_upstreams_stays_on_http1(harrec_tls, nginx, origin):
    px = harrec_tls.start("--no-redact", "--reverse", f"https://localhost:{nginx.h2_port}",
                          "--reverse", f"/auth=http://127.0.0.1:{origin.port}", ports=("--http", "0"))
    # Over TLS, ALPN says http/1.1; h2c streams get a 505 that says why.
    r = curl("--http2", "--cacert", str(px.ca_pem), "-w", "%{http_version}", "-o", "/dev/null",
             f"https://localhost:{px.http_port}/auth/json")
    assert r.rc == 0 and r.out == b"1.1", r.err
    r = curl("--http2-prior-knowledge", "-i", f"http://127.0.0.1:{px.http_port}/json")
    assert b" 505" in r.out.split(b"\r\n", 1)[0] and b"--reverse PORT=URL" in r.out, r.out
    es = entries(px.stop())
    assert es[0]["request"]["url"] == f"http://127.0.0.1:{origin.port}/auth/json"
    assert es[1]["response"]["status"] == 505
