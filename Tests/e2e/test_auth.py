"""--proxy-auth USER:PASS: HTTP 407 + Proxy-Authenticate, Basic credentials, CONNECT, SOCKS5
username/password (RFC 1929). Credentials never reach the origin, the HAR or stderr."""

import base64
import socket

import pytest

from helpers import (RawConn, Socks5Error, curl, entries, har_header, json_body, request_bytes,
                     socks5_handshake)

USER = "e2e-user"
PASSWORD = "s3cr3t-Pa55w0rd"
CREDS = f"{USER}:{PASSWORD}"
TOKEN = base64.b64encode(CREDS.encode()).decode()


@pytest.fixture
def authed(harrec):
    return harrec.start("--proxy-auth", CREDS)


def _no_secrets(px, origin):
    for r in origin.requests():
        names = [k.lower() for k, _ in r["headers"]]
        assert "proxy-authorization" not in names, f"Proxy-Authorization reached the origin: {r}"
        assert all(PASSWORD not in v and TOKEN not in v for _, v in r["headers"])
    har = px.stop()
    for e in entries(har):
        assert har_header(e["request"], "Proxy-Authorization") is None, e["request"]["url"]
    for where, text in (("HAR", px.har_text), ("stderr", px.stderr_text)):
        assert PASSWORD not in text, f"the password appears in the {where}"
        assert TOKEN not in text, f"the Basic token appears in the {where}"
    return har


def test_407_without_credentials(authed, origin):
    with RawConn(port=authed.http_port) as c:
        c.send(request_bytes("GET", origin.url("/json"), f"127.0.0.1:{origin.port}"))
        r = c.read_response()
    assert r.status == 407
    assert (r.header("proxy-authenticate") or "").lower().startswith("basic"), r.headers
    assert origin.stats()["requests"] == 0
    _no_secrets(authed, origin)


def test_wrong_credentials(authed, origin):
    r = curl("-x", authed.http_proxy, "-U", f"{USER}:wrong", "-o", "/dev/null",
             "-w", "%{http_code}", origin.url("/json"))
    assert r.out == b"407"
    assert origin.stats()["requests"] == 0
    _no_secrets(authed, origin)


def test_http_with_credentials(authed, origin):
    r = curl("-x", authed.http_proxy, "-U", CREDS, origin.url("/json?auth=1"))
    assert r.rc == 0, r.err
    doc = json_body(r.out)
    assert "proxy-authorization" not in [k.lower() for k, _ in doc["headers"]]
    r = curl("-x", f"http://{CREDS}@127.0.0.1:{authed.http_port}", origin.url("/json?auth=2"))
    assert r.rc == 0 and json_body(r.out)["args"] == [["auth", "2"]]
    har = _no_secrets(authed, origin)
    assert len([e for e in entries(har) if "/json?auth=" in e["request"]["url"]]) == 2


def test_connect_with_and_without_credentials(authed, origin):
    r = curl("-x", authed.http_proxy, "--proxytunnel", origin.url("/json"))
    assert r.rc != 0, "CONNECT without credentials must fail"
    with RawConn(port=authed.http_port) as c:
        c.send(f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\nHost: 127.0.0.1:{origin.port}"
               f"\r\n\r\n".encode())
        assert c.read_head().status == 407
    assert origin.stats()["connections"] == 0
    r = curl("-x", authed.http_proxy, "-U", CREDS, "--proxytunnel", origin.url("/json?t=1"))
    assert r.rc == 0 and json_body(r.out)["args"] == [["t", "1"]], r.err
    _no_secrets(authed, origin)


def test_socks5_with_credentials(authed, origin):
    r = curl("--socks5", f"{CREDS}@127.0.0.1:{authed.socks_port}", origin.url("/json?s=1"))
    assert r.rc == 0 and json_body(r.out)["args"] == [["s", "1"]], r.err
    with socket.create_connection(("127.0.0.1", authed.socks_port), timeout=5) as s:
        socks5_handshake(s, "127.0.0.1", origin.port, USER, PASSWORD)
        s.sendall(request_bytes("GET", "/json?s=2", f"127.0.0.1:{origin.port}",
                                [("Connection", "close")]))
        c = RawConn(sock=s)
        assert json_body(c.read_response().body)["args"] == [["s", "2"]]
    _no_secrets(authed, origin)


def test_socks5_without_or_wrong_credentials(authed, origin):
    r = curl("--socks5", f"127.0.0.1:{authed.socks_port}", origin.url("/json"))
    assert r.rc != 0, "SOCKS5 without credentials must fail"
    with socket.create_connection(("127.0.0.1", authed.socks_port), timeout=5) as s:
        with pytest.raises(Socks5Error, match="no acceptable method"):
            socks5_handshake(s, "127.0.0.1", origin.port)  # offers only "no auth"
    with socket.create_connection(("127.0.0.1", authed.socks_port), timeout=5) as s:
        with pytest.raises(Socks5Error, match="authentication failed|closed"):
            socks5_handshake(s, "127.0.0.1", origin.port, USER, "wrong")
    assert origin.stats()["connections"] == 0
    _no_secrets(authed, origin)
