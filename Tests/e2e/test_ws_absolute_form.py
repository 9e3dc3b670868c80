"""A ws:// URL in absolute form through the HTTP proxy port (`GET ws://host/path` with Upgrade),
as aiohttp sends it when given an HTTP proxy: proxied and recorded like http://. wss:// in
absolute form is refused with a reason that says to use CONNECT."""

import asyncio
import base64

import aiohttp
import pytest

from helpers import RawConn, curl


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


async def aiohttp_conversation(proxy_port: int, url: str) -> list:
    got = []
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, proxy=f"http://127.0.0.1:{proxy_port}") as ws:
            await ws.send_str("hello through the proxy")
            got.append((await ws.receive(timeout=10)).data)
            await ws.send_bytes(bytes(range(256)))
            got.append((await ws.receive(timeout=10)).data)
            await ws.close(code=1000, message=b"done")
    return got


def test_aiohttp_ws_absolute_form_is_proxied_and_recorded(harrec, ws_server):
    srv = ws_server.start(compression=None)
    px = harrec.start()
    url = srv.url("127.0.0.1", "/chat?room=1")
    got = run(aiohttp_conversation(px.http_port, url))
    assert got == ["hello through the proxy", bytes(range(256))], "echoes did not come back intact"
    har = px.stop()
    entries = har["log"]["entries"]
    assert len(entries) == 1, [e["request"]["url"] for e in entries]
    e = entries[0]
    assert e["request"]["url"] == url
    assert e["response"]["status"] == 101
    msgs = e["_webSocketMessages"]
    texts = [(m["type"], m["opcode"], m["data"]) for m in msgs if m["opcode"] in (1, 2)]
    binary = base64.b64encode(bytes(range(256))).decode()
    assert texts == [("send", 1, "hello through the proxy"), ("receive", 1, "hello through the proxy"),
                     ("send", 2, binary), ("receive", 2, binary)], texts
    assert any(m["opcode"] == 8 and m["type"] == "send" for m in msgs), "the client's close frame is recorded"


@pytest.mark.parametrize("scheme", ["wss", "https"])
def test_secure_absolute_form_is_refused_with_a_reason(scheme, harrec):
    px = harrec.start()
    with RawConn(port=px.http_port, timeout=5) as c:
        c.send(f"GET {scheme}://127.0.0.1:9/x HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n".encode())
        r = c.read_head()
        body = c._exact(int(r.header("content-length")))
    assert r.status == 400
    assert f"use CONNECT for {scheme}".encode() in body, body
    px.stop()


def test_h2c_upgrade_is_answered_in_http11(harrec, origin):
    """`Upgrade: h2c` (curl --http2 on an http:// URL sends it) is not passed on: the origin sees
    a plain HTTP/1.1 request without Upgrade or HTTP2-Settings, and the client gets HTTP/1.1."""
    import json
    px = harrec.start()
    r = curl("-sS", "-x", px.http_proxy, "--http2", "-H", "Connection: Upgrade, HTTP2-Settings", "-H", "Upgrade: h2c",
             "-H", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA", "-w", "\\n%{http_version}", origin.url("/json"))
    assert r.rc == 0, r.err
    body, version = r.out.rsplit(b"\n", 1)
    assert version == b"1.1"
    seen = {pair[0].lower() for pair in json.loads(body)["headers"]}
    assert "upgrade" not in seen and "http2-settings" not in seen, seen
    har = px.stop()
    (e,) = har["log"]["entries"]
    assert e["response"]["status"] == 200 and e["response"]["httpVersion"] == "HTTP/1.1"
