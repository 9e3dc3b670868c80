"""Python clients through harrec: httpx via the HTTP proxy and via SOCKS5 (httpx[socks]),
python-socks for a raw SOCKS5 tunnel, and hand-made SOCKS5 handshakes (IPv4, IPv6, domain)."""

import socket

import httpx
import pytest
import socksio  # noqa: F401  (httpx's SOCKS support; fail loudly if missing)
from python_socks.sync import Proxy

import origin as origin_mod
from helpers import RawConn, entries, entries_for, json_body, request_bytes, socks5_handshake


def _client(proxy_url):
    return httpx.Client(proxy=proxy_url, trust_env=False, timeout=10)


@pytest.mark.parametrize("kind", ["http", "socks5"])
def test_httpx(kind, origin, harrec):
    px = harrec.start()
    url = px.http_proxy if kind == "http" else px.socks_proxy
    with _client(url) as c:
        r = c.get(origin.url("/json?httpx=1"), headers={"X-Py": "yes"})
        assert r.status_code == 200
        doc = r.json()
        assert ["X-Py", "yes"] in [list(h) for h in doc["headers"]]
        r = c.get(origin.url("/bytes?n=300000&seed=21"))
        assert r.content == origin_mod.make_bytes(300000, 21)
        r = c.get(origin.url("/gzip"))  # httpx decodes gzip itself
        assert r.content == origin_mod.JSON_DOC
        r = c.get(origin.url("/br"))
        assert r.content == origin_mod.JSON_DOC
        body = origin_mod.make_bytes(100000, 22)
        r = c.post(origin.url("/echo"), content=body)
        assert r.content == body
        r = c.post(origin.url("/echo"), content=iter([body[:50000], body[50000:]]))  # chunked
        assert r.content == body and r.headers["x-request-framing"] == "chunked"
        r = c.head(origin.url("/head"))
        assert r.status_code == 200 and r.content == b""
        r = c.get(origin.url("/redirect"), follow_redirects=True)
        assert r.status_code == 200 and r.json()["args"] == [["from", "redirect"]]
    har = px.stop()
    assert len(entries(har)) == 9
    assert len(entries_for(har, "/json")) == 2


def test_httpx_keepalive_upstream(origin, harrec):
    px = harrec.start()
    with _client(px.http_proxy) as c:
        for i in range(5):
            assert c.get(origin.url(f"/json?i={i}")).status_code == 200
    assert origin.stats()["connections"] == 1
    px.stop()


def test_http_proxy_localhost_name(origin, harrec):
    """The proxy resolves 'localhost' itself (to 127.0.0.1 or ::1; the origin has both)."""
    px = harrec.start()
    with _client(px.http_proxy) as c:
        r = c.get(f"http://localhost:{origin.port}/json?h=host")
        assert r.status_code == 200 and r.json()["headers"] == [["Host", f"localhost:{origin.port}"]]
    har = px.stop()
    assert entries(har)[0]["request"]["url"] == f"http://localhost:{origin.port}/json?h=host"
    assert entries(har)[0]["serverIPAddress"] in ("127.0.0.1", "::1")


def test_python_socks(origin, harrec):
    px = harrec.start()
    proxy = Proxy.from_url(px.socks_proxy)
    s = proxy.connect(dest_host="127.0.0.1", dest_port=origin.port, timeout=5)
    try:
        c = RawConn(sock=s)
        host = f"127.0.0.1:{origin.port}"
        c.send(request_bytes("GET", "/json?ps=1", host) + request_bytes("GET", "/bytes?n=999", host))
        assert json_body(c.read_response().body)["args"] == [["ps", "1"]]
        assert c.read_response().body == origin_mod.make_bytes(999, 0)
    finally:
        s.close()
    har = px.stop()
    urls = [e["request"]["url"] for e in entries(har)]
    assert urls == [origin.url("/json?ps=1"), origin.url("/bytes?n=999")]
    assert len({e["connection"] for e in entries(har)}) == 1


@pytest.mark.parametrize("atyp,host", [(1, "127.0.0.1"), (4, "::1"), (3, "localhost"),
                                       (3, "127.0.0.1")])
def test_socks5_address_types(atyp, host, origin, harrec):
    px = harrec.start()
    with socket.create_connection(("127.0.0.1", px.socks_port), timeout=5) as s:
        reply = socks5_handshake(s, host, origin.port, atyp=atyp)
        assert reply[1] == 0
        hosthdr = f"[{host}]:{origin.port}" if ":" in host else f"{host}:{origin.port}"
        s.sendall(request_bytes("GET", "/json?h=host", hosthdr, [("Connection", "close")]))
        r = RawConn(sock=s).read_response()
        assert json_body(r.body)["headers"] == [["Host", hosthdr]]
    har = px.stop()
    (e,) = entries(har)
    assert e["request"]["url"] == f"http://{hosthdr}/json?h=host"
