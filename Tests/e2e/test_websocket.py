"""WebSocket recording end to end (docs/guide/http2-and-websockets.md).

Real peers: the `websockets` library as client (its own proxy support: `socks5h://` through
python-socks and `http://` CONNECT) and as server (helpers.WSServer, ws:// and wss:// with the
test PKI's certificate; harrec gets --upstream-ca and the client trusts only the harrec CA), plus
a hand-written client and server (helpers.RawWSServer, ws_frame) for what `websockets` refuses to
send (invalid UTF-8 text) and for byte-exact checks, also through the plain HTTP proxy
(absolute-form upgrade).

Every case checks transparency (each peer received exactly what the other sent, closes
included) and the HAR: one entry per WebSocket (101, `_resourceType: "websocket"`, ws:// or
wss:// URL), `_webSocketMessages` in order with type ("send" = client to server), opcode and
data (text as is, binary base64, close "<code> <reason>"), sane times, no ping/pong unless
--record-ws-control; px.stop() runs `harrec validate` and the JSON Schema. `test_direct_*` run
the same cases without harrec, so a failure elsewhere can be blamed on harrec.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
import time
from dataclasses import dataclass, field

import pytest
import python_socks  # noqa: F401  (websockets' SOCKS support; fail loudly if missing)
import websockets
from websockets.asyncio.client import connect as websockets_connect
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory

from helpers import (OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT, RawConn, TLSClient,
                     client_context, entries, har_header, split_message, tunnel, ws_accept,
                     ws_close_payload, ws_event, ws_close_event, ws_frame, ws_har_event,
                     ws_message, ws_parse_frames, ws_text, ws_upgrade_request)

CASE_TIMEOUT = 40.0  # seconds for one test's whole asyncio part (10,000 messages included)
MANY = 10_000


def run(coro, timeout: float = CASE_TIMEOUT):
    """Runs a coroutine in a fresh event loop, bounded by timeout."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


# ---------------------------------------------------------------- client side

@dataclass
class Target:
    """Where a client connects: a server, the host it names, and how (via None = direct,
    "socks5h" = harrec's SOCKS5 port with the host name sent, "connect" = CONNECT on its HTTP
    port)."""
    srv: object
    host: str
    via: str | None = None
    px: object = None
    cafile: object = None
    compression: str | None = "deflate"

    def url(self, path: str) -> str:
        return self.srv.url(self.host, path)

    def proxy(self):
        if self.via is None:
            return None
        if self.via == "socks5h":
            return f"socks5h://127.0.0.1:{self.px.socks_port}"
        if self.via == "connect":
            return f"http://127.0.0.1:{self.px.http_port}"
        raise ValueError(self.via)

    def connect(self, path: str):
        kw = dict(proxy=self.proxy(), compression=self.compression, max_size=None,
                  ping_interval=None, open_timeout=10, close_timeout=5)
        if self.srv.scheme == "wss":
            kw["ssl"] = client_context(self.cafile)
        return websockets_connect(self.url(path), **kw)


class Peer:
    """The client's side of one WebSocket: what it sent and received (ws_event tuples) and its
    own view of the interleaving (`order`, (direction, event) pairs as in the HAR)."""

    def __init__(self, ws, path: str):
        self.ws = ws
        self.path = path
        self.sent: list = []
        self.received: list = []
        self.order: list = []
        self.request_headers = list(ws.request.headers.raw_items())
        self.response_headers = list(ws.response.headers.raw_items())
        self.close_sent = None
        self.close_rcvd = None
        self.close_code = None

    async def send(self, msg):
        await self.ws.send(msg)
        ev = ws_event(msg)
        self.sent.append(ev)
        self.order.append(("send", ev))

    async def cmd(self, **kw):
        await self.send(json.dumps(kw))

    async def recv(self):
        msg = await self.ws.recv()
        ev = ws_event(msg)
        self.received.append(ev)
        self.order.append(("receive", ev))
        return msg

    async def echo(self, msg):
        await self.send(msg)
        got = await self.recv()
        assert ws_event(got) == ws_event(msg), f"{self.path}: echo differs from what was sent"

    async def send_fragments(self, parts, ping: bool = False, control: list | None = None):
        """One message in len(parts) frames; with ping, an awaited ping between frames (the
        pings and pongs are appended to `control` as HAR events when given)."""
        async def gen():
            for i, part in enumerate(parts):
                if i and ping:
                    data = f"client-frag-ping-{i}".encode()
                    await (await self.ws.ping(data))
                    if control is not None:
                        control.extend([("send", ("ping", data)), ("receive", ("pong", data))])
                yield part
        await self.ws.send(gen())
        whole = "".join(parts) if isinstance(parts[0], str) else b"".join(parts)
        ev = ws_event(whole)
        self.sent.append(ev)
        self.order.append(("send", ev))

    async def close(self, code: int, reason: str):
        await self.ws.close(code, reason)
        self.finish()

    async def expect_closed(self):
        """The peer (or the network) ends the connection: recv raises ConnectionClosed."""
        try:
            msg = await asyncio.wait_for(self.ws.recv(), 10)
        except websockets.ConnectionClosed:
            pass
        else:
            raise AssertionError(f"{self.path}: expected the connection to close, got {msg!r:.100}")
        await asyncio.wait_for(self.ws.wait_closed(), 10)
        self.finish()

    def finish(self):
        p = self.ws.protocol
        self.close_sent = ws_close_event(p.close_sent)
        self.close_rcvd = ws_close_event(p.close_rcvd)
        self.close_code = self.ws.close_code
        closes = []
        if self.close_sent:
            closes.append(("send", self.close_sent))
        if self.close_rcvd:
            closes.append(("receive", self.close_rcvd))
        if len(closes) == 2 and p.close_rcvd_then_sent:
            closes.reverse()
        self.order += closes

    def har_sends(self):
        return self.sent + ([self.close_sent] if self.close_sent else [])

    def har_receives(self):
        return self.received + ([self.close_rcvd] if self.close_rcvd else [])


@dataclass
class Result:
    """One WebSocket of a scenario: its path (unique on its server), URL, client side, and
    whether the client's `order` is the wire order (each side waited for the other)."""
    name: str
    path: str
    url: str
    peer: Peer
    lockstep: bool = True
    aborted: bool = False
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------- scenarios

MIXED = [
    "hello", "", b"", b"\x00\xff\x80 binary", "Grüße, 世界 😀",
    'JSON-hostile: "quotes" \\ backslash </script> tab\t nl\n nul\x00 del\x7f',
    *[ws_message(kind, n, n) for n in (125, 126, 127, 65535, 65536) for kind in ("text", "binary")],
]
# A binary frame header announcing 256 bytes followed by 10: the server aborts TCP after it.
PARTIAL_FRAME = (bytes([0x82, 0x7E, 0x01, 0x00]) + b"0123456789").hex()


async def sc_mixed(t: Target, tag: str) -> Result:
    path = f"/ws/mixed?{tag}"
    async with t.connect(path) as ws:
        p = Peer(ws, path)
        for m in MIXED:
            await p.echo(m)
        await p.close(1000, "normal closure")
    return Result("mixed", path, t.url(path), p)


async def sc_big(t: Target, tag: str) -> Result:
    path = f"/ws/big?{tag}"
    async with t.connect(path) as ws:
        p = Peer(ws, path)
        await p.echo(ws_message("binary", 1 << 20, 7))
        await p.echo(ws_message("text", 1 << 20, 8))
        await p.close(1001, "going away")
    return Result("big", path, t.url(path), p)


async def sc_fragmented(t: Target, tag: str) -> Result:
    path = f"/ws/fragmented?{tag}"
    async with t.connect(path) as ws:
        p = Peer(ws, path)
        text = ws_text(3000, 11)
        await p.send_fragments(split_message(text, [1, 2, 3, 500, 0, 700] + [100] * 6), ping=True)
        await p.recv()
        data = ws_message("binary", 70000, 12)
        await p.send_fragments(split_message(data, [65536, 0, 1, 3000]), ping=True)
        await p.recv()
        await p.cmd(op="fragments", kind="text", sizes=[10, 0, 200, 3000, 5], seed=13, ping=True)
        await p.recv()
        await p.cmd(op="fragments", kind="binary", sizes=[126, 65536, 1], seed=14, ping=True)
        await p.recv()
        await p.close(4000, "custom reason, é")
    return Result("fragmented", path, t.url(path), p)


async def sc_server_close(t: Target, tag: str) -> Result:
    path = f"/ws/server-close?{tag}"
    async with t.connect(path) as ws:
        p = Peer(ws, path)
        await p.cmd(op="send", n=3, kind="binary", size=200, seed=20)
        for _ in range(3):
            await p.recv()
        await p.cmd(op="close", code=4001, reason="server says bye")
        await p.expect_closed()
    assert p.close_rcvd == ("close", "4001 server says bye"), p.close_rcvd
    assert p.order[-2][0] == "receive", "the server initiated the close"
    return Result("server_close", path, t.url(path), p)


async def sc_abort(t: Target, tag: str) -> Result:
    path = f"/ws/abort?{tag}"
    async with t.connect(path) as ws:
        p = Peer(ws, path)
        await p.cmd(op="send", n=2, kind="text", size=50, seed=30)
        for _ in range(2):
            await p.recv()
        await p.cmd(op="abort", raw=PARTIAL_FRAME)
        await p.expect_closed()
    assert p.close_rcvd is None and p.close_code == 1006, (p.close_rcvd, p.close_code)
    return Result("abort", path, t.url(path), p, aborted=True)


async def sc_many(t: Target, tag: str) -> Result:
    """MANY small messages each way, client sending and receiving concurrently."""
    path = f"/ws/many?{tag}"
    msgs = [f"m{i:05d}" if i % 2 == 0 else f"b{i:05d}".encode() for i in range(MANY)]
    async with t.connect(path) as ws:
        p = Peer(ws, path)

        async def sender():
            for m in msgs:
                await p.ws.send(m)
                p.sent.append(ws_event(m))

        async def receiver():
            for _ in range(MANY):
                p.received.append(ws_event(await p.ws.recv()))
        await asyncio.gather(sender(), receiver())
        await p.close(1000, "many done")
    assert p.received == [ws_event(m) for m in msgs]
    return Result("many", path, t.url(path), p, lockstep=False)


SCENARIOS = [sc_mixed, sc_big, sc_fragmented, sc_server_close, sc_abort, sc_many]


async def run_scenarios(t: Target, scenarios=SCENARIOS, tag="x") -> list[Result]:
    """Every scenario on its own WebSocket, all at the same time."""
    return list(await asyncio.gather(*(sc(t, tag) for sc in scenarios)))


# ---------------------------------------------------------------- checks

def _short(v, n=160):
    r = repr(v)
    return r if len(r) <= n else r[:n] + f"... ({len(r)} chars)"


def assert_events(got: list, want: list, what: str):
    if got == want:
        return
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise AssertionError(f"{what}: first difference at #{i} of {len(got)} (want "
                                 f"{len(want)}): got {_short(g)}, want {_short(w)}")
    longer = got if len(got) > len(want) else want
    raise AssertionError(f"{what}: got {len(got)} events, want {len(want)}; first extra: "
                         f"{_short(longer[min(len(got), len(want))])}")


def check_transparency(srv, res: Result) -> object:
    """Both peers saw exactly what the other sent (messages, closes, upgrade headers)."""
    c = srv.finished(res.path)
    p = res.peer
    assert_events(c.received, p.sent, f"{res.name}: server received vs client sent")
    assert_events(p.received, c.sent, f"{res.name}: client received vs server sent")
    assert c.close_rcvd == p.close_sent, \
        f"{res.name}: the server got close {c.close_rcvd}, the client sent {p.close_sent}"
    assert p.close_rcvd == c.close_sent, \
        f"{res.name}: the client got close {p.close_rcvd} (code {p.close_code}), the server " \
        f"sent {c.close_sent}"
    for what, server_side, client_side in (("upgrade request", c.request_headers,
                                             p.request_headers),
                                            ("101 response", c.response_headers,
                                             p.response_headers)):
        assert end_to_end(server_side) == end_to_end(client_side), \
            f"{res.name}: {what} headers changed on the way:\n{server_side}\nvs {client_side}"
        hop = {k.lower(): v.lower() for k, v in server_side if k.lower() in HOP_BY_HOP}
        assert hop.get("upgrade") == "websocket" and "upgrade" in hop.get("connection", ""), \
            f"{res.name}: {what} lost Upgrade/Connection on the way: {server_side}"
    return c


HOP_BY_HOP = ("connection", "upgrade", "keep-alive", "proxy-connection")


def end_to_end(headers) -> list:
    """Headers without the hop-by-hop ones (a proxy rewrites Connection/Upgrade of an upgrade;
    everything else must arrive in the same order)."""
    return [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]


def ws_entry(har, url: str) -> dict:
    found = [e for e in entries(har) if e["request"]["url"] == url]
    assert len(found) == 1, (f"expected exactly one HAR entry for {url}, got {len(found)}: "
                             f"{[e['request']['url'] for e in entries(har)]}")
    e = found[0]
    assert e["request"]["method"] == "GET"
    assert e["response"]["status"] == 101, f"{url}: status {e['response']['status']}"
    assert e.get("_resourceType") == "websocket", f"{url}: _resourceType {e.get('_resourceType')}"
    assert isinstance(e.get("_webSocketMessages"), list), f"{url}: no _webSocketMessages list"
    assert (har_header(e["request"], "upgrade") or "").lower() == "websocket"
    key = har_header(e["request"], "sec-websocket-key")
    assert key and har_header(e["response"], "sec-websocket-accept") == ws_accept(key)
    return e


def check_message_shape(e: dict, t0: float, t1: float, control: bool = False):
    """Chrome's keys, epoch-second times in [t0, t1] in order, no ping/pong unless control."""
    last = 0.0
    for i, m in enumerate(e["_webSocketMessages"]):
        assert m.get("type") in ("send", "receive"), f"message #{i}: type {m.get('type')!r}"
        assert isinstance(m.get("time"), (int, float)) and not isinstance(m["time"], bool), m
        assert t0 - 1 <= m["time"] <= t1 + 1, f"message #{i}: time {m['time']} not in the test"
        assert m["time"] >= last - 0.002, f"message #{i}: time {m['time']} before {last}"
        last = max(last, m["time"])
        assert isinstance(m.get("data"), str), f"message #{i}: data must be a string"
        allowed = (OP_TEXT, OP_BINARY, OP_CLOSE) + ((OP_PING, OP_PONG) if control else ())
        assert m.get("opcode") in allowed, f"message #{i}: opcode {m.get('opcode')}"


def check_har_messages(e: dict, res: Result, server=None):
    """The recorded messages are the peers' messages (closes included) in order: sends are what
    the client sent, receives what the server sent (its WSServerConn, when given)."""
    msgs = e["_webSocketMessages"]
    if res.aborted:
        # a cut frame is not a complete message; allow it only as an explicitly marked extra
        while msgs and (msgs[-1].get("_truncated") or msgs[-1].get("_note")):
            msgs = msgs[:-1]
    got = [ws_har_event(m) for m in msgs]
    p = res.peer
    assert_events([ev for d, ev in got if d == "send"], p.har_sends(), f"{res.url}: sends")
    receives = p.har_receives() if server is None else \
        server.sent + ([server.close_sent] if server.close_sent else [])
    assert_events([ev for d, ev in got if d == "receive"], receives, f"{res.url}: receives")
    if res.lockstep:
        assert_events(got, p.order, f"{res.url}: _webSocketMessages")
    assert e.get("_webSocketOpen") is not True, f"{res.url}: closed WebSocket marked open"


def check_ws_result(har, px, res: Result, t0: float, t1: float, srv=None):
    c = check_transparency(srv, res) if srv is not None else None
    e = ws_entry(har, res.url)
    check_message_shape(e, t0, t1)
    check_har_messages(e, res, c)
    ext = dict((k.lower(), v) for k, v in res.peer.response_headers).get("sec-websocket-extensions")
    assert har_header(e["response"], "sec-websocket-extensions") == ext
    check_live_lines(px, res.url, e)
    return e


LIVE_UPGRADE = r"^(127\.0\.0\.1:\d+) GET {url} 101 websocket$"
LIVE_CLOSED = r"^(127\.0\.0\.1:\d+) websocket {url} closed: (\d+) sent, (\d+) received$"


def wait_closed_line(px, url: str, timeout: float = 10.0) -> str:
    ln = px.wait_for_stderr(LIVE_CLOSED.format(url=re.escape(url)), timeout)
    assert ln, f"no live line '... websocket {url} closed: N sent, M received'; stderr:\n" \
               f"{px.stderr_text[-3000:]}"
    return ln


def check_live_lines(px, url: str, e: dict):
    up = px.wait_for_stderr(LIVE_UPGRADE.format(url=re.escape(url)), 1)
    assert up, f"no live line 'CLIENT GET {url} 101 websocket'; stderr:\n{px.stderr_text[-3000:]}"
    m = re.match(LIVE_CLOSED.format(url=re.escape(url)), wait_closed_line(px, url, 1))
    assert m.group(1) == re.match(LIVE_UPGRADE.format(url=re.escape(url)), up).group(1)
    sent, received = int(m.group(2)), int(m.group(3))
    msgs = e["_webSocketMessages"]
    data_s = sum(1 for x in msgs if x["type"] == "send" and x["opcode"] in (OP_TEXT, OP_BINARY))
    data_r = sum(1 for x in msgs if x["type"] == "receive" and x["opcode"] in (OP_TEXT, OP_BINARY))
    all_s = sum(1 for x in msgs if x["type"] == "send")
    all_r = sum(1 for x in msgs if x["type"] == "receive")
    assert sent in (data_s, all_s) and received in (data_r, all_r), \
        f"{url}: live counts {sent}/{received}, HAR has {data_s}/{data_r} messages " \
        f"({all_s}/{all_r} with closes)"


def servers_for(scheme, ws_server, wss_server, compression="deflate", extensions=None):
    factory = wss_server if scheme == "wss" else ws_server
    return factory.start(compression=compression, extensions=extensions)


HOST = {"ws": "127.0.0.1", "wss": "localhost"}


# ---------------------------------------------------------------- direct halves (no harrec)

@pytest.mark.parametrize("compression", [None, "deflate"], ids=["plain", "deflate"])
@pytest.mark.parametrize("scheme", ["ws", "wss"])
def test_direct_scenarios(scheme, compression, ws_server, wss_server, test_pki):
    srv = servers_for(scheme, ws_server, wss_server, compression)
    t = Target(srv, HOST[scheme], cafile=test_pki / "ca.pem", compression=compression)
    for res in run(run_scenarios(t)):
        check_transparency(srv, res)
        if compression:
            assert "permessage-deflate" in dict(res.peer.response_headers).get(
                "Sec-WebSocket-Extensions", ""), res.peer.response_headers


# ---------------------------------------------------------------- through harrec

MATRIX = [(via, scheme, comp) for via in ("socks5h", "connect") for scheme in ("ws", "wss")
          for comp in (None, "deflate")]


@pytest.mark.parametrize("via,scheme,compression", MATRIX,
                         ids=[f"{v}-{s}-{c or 'plain'}" for v, s, c in MATRIX])
def test_ws_scenarios(via, scheme, compression, harrec_tls, ws_server, wss_server):
    """Text/binary/empty/boundary sizes, 1 MiB, fragments with pings, client closes 1000/1001/
    4000, a server close, an abrupt close mid-frame and 10,000 messages each way, on six
    WebSockets at once through one harrec."""
    srv = servers_for(scheme, ws_server, wss_server, compression)
    px = harrec_tls.start()
    t = Target(srv, HOST[scheme], via=via, px=px, cafile=px.ca_pem, compression=compression)
    t0 = time.time()
    results = run(run_scenarios(t, tag=via))
    for res in results:
        wait_closed_line(px, res.url)
    t1 = time.time()
    har = px.stop()
    assert len(entries(har)) == len(results), [e["request"]["url"] for e in entries(har)]
    for res in results:
        e = check_ws_result(har, px, res, t0, t1, srv)
        assert e["request"]["url"].startswith(f"{scheme}://{HOST[scheme]}:{srv.port}/ws/")
        if scheme == "wss":
            assert e["timings"].get("ssl", -1) >= 0, e["timings"]


DEFLATE_VARIANTS = {
    "server_no_context_takeover": dict(server_no_context_takeover=True),
    "client_no_context_takeover": dict(client_no_context_takeover=True),
    "both_no_context_takeover": dict(server_no_context_takeover=True,
                                     client_no_context_takeover=True),
    **{f"max_window_bits_{n}": dict(server_max_window_bits=n, client_max_window_bits=n)
       for n in (9, 10, 11, 12, 13, 14, 15)},
    "window_bits_9_15_no_takeover": dict(server_max_window_bits=9, client_max_window_bits=15,
                                         client_no_context_takeover=True),
}


def deflate_expected_params(kw: dict) -> list[str]:
    out = []
    for k, v in kw.items():
        out.append(k if v is True else f"{k}={v}")
    return out


async def sc_deflate(t: Target, tag: str) -> Result:
    """Messages where context takeover and the window size matter: the same compressible text
    again and again, a long repetitive text, incompressible binary, empty and one-byte messages,
    compressed fragments, server bursts."""
    path = f"/ws/deflate?{tag}"
    doc = json.dumps({"order": 42, "status": "delivered", "items": list(range(200)),
                      "note": "Grüße " * 50})
    async with t.connect(path) as ws:
        p = Peer(ws, path)
        assert ws.protocol.extensions, "permessage-deflate was not negotiated"
        for _ in range(5):
            await p.echo(doc)
        for m in (ws_text(200_000, 40), ws_message("binary", 65536, 41), "", b"", "x", b"y",
                  doc.encode()):
            await p.echo(m)
        await p.send_fragments(split_message(doc * 3, [10, 1000, 0, 3000]))
        await p.recv()
        await p.cmd(op="send", n=5, kind="text", size=3000, seed=42)
        for _ in range(5):
            await p.recv()
        await p.cmd(op="fragments", kind="text", sizes=[100, 5000, 20000], seed=43, ping=False)
        await p.recv()
        await p.close(1000, "deflate done")
    return Result("deflate", path, t.url(path), p)


@pytest.mark.parametrize("variant", list(DEFLATE_VARIANTS))
def test_direct_deflate_variant(variant, ws_server):
    kw = DEFLATE_VARIANTS[variant]
    srv = ws_server.start(compression=None, extensions=[ServerPerMessageDeflateFactory(**kw)])
    res = run(sc_deflate(Target(srv, "127.0.0.1"), "direct"))
    check_transparency(srv, res)
    ext = dict(res.peer.response_headers)["Sec-WebSocket-Extensions"]
    for param in deflate_expected_params(kw):
        assert param in ext, f"{param} not negotiated: {ext}"


DEFLATE_MATRIX = [(v, "socks5h", "ws") for v in DEFLATE_VARIANTS] + \
                 [(v, "connect", "wss") for v in ("both_no_context_takeover", "max_window_bits_9",
                                                  "window_bits_9_15_no_takeover")]


@pytest.mark.parametrize("variant,via,scheme", DEFLATE_MATRIX,
                         ids=[f"{v}-{via}-{s}" for v, via, s in DEFLATE_MATRIX])
def test_ws_deflate_variant(variant, via, scheme, harrec_tls, ws_server, wss_server):
    kw = DEFLATE_VARIANTS[variant]
    srv = servers_for(scheme, ws_server, wss_server, None, [ServerPerMessageDeflateFactory(**kw)])
    px = harrec_tls.start()
    t = Target(srv, HOST[scheme], via=via, px=px, cafile=px.ca_pem)
    t0 = time.time()
    res = run(sc_deflate(t, variant))
    wait_closed_line(px, res.url)
    t1 = time.time()
    har = px.stop()
    e = check_ws_result(har, px, res, t0, t1, srv)
    ext = har_header(e["response"], "sec-websocket-extensions")
    for param in deflate_expected_params(kw):
        assert param in ext, f"{param} not in the recorded 101: {ext}"
    assert not any(m.get("_note") for m in e["_webSocketMessages"]), \
        [m["_note"] for m in e["_webSocketMessages"] if m.get("_note")]


# ---------------------------------------------------------------- SIGINT with an open WebSocket

@pytest.mark.parametrize("via,scheme,compression", [("socks5h", "ws", "deflate"),
                                                    ("connect", "wss", None)])
def test_ws_open_at_sigint(via, scheme, compression, harrec_tls, ws_server, wss_server):
    srv = servers_for(scheme, ws_server, wss_server, compression)
    px = harrec_tls.start()
    t = Target(srv, HOST[scheme], via=via, px=px, cafile=px.ca_pem, compression=compression)
    path = "/ws/open-at-sigint"
    box = {}

    async def body():
        async with t.connect(path) as ws:
            p = Peer(ws, path)
            for m in ("one", b"two", ws_text(70000, 3)):
                await p.echo(m)
            await p.cmd(op="send", n=2, kind="binary", size=300, seed=50)
            for _ in range(2):
                await p.recv()
            await asyncio.sleep(0.2)  # harrec has relayed (and parsed) everything by now
            box["har"] = await asyncio.to_thread(px.stop)
            try:
                msg = await asyncio.wait_for(ws.recv(), 10)
                raise AssertionError(f"got {msg!r:.80} after harrec exited")
            except websockets.ConnectionClosed:
                pass
            return p
    t0 = time.time()
    p = run(body())
    e = ws_entry(box["har"], t.url(path))
    assert e.get("_webSocketOpen") is True, f"open WebSocket not marked: {e.get('_webSocketOpen')}"
    check_message_shape(e, t0, time.time())
    assert_events([ws_har_event(m) for m in e["_webSocketMessages"]], p.order,
                  "messages seen before SIGINT")
    assert re.search(r"^harrec: wrote 1 entries to ", px.stderr_text, re.M), px.stderr_text


# ---------------------------------------------------------------- --record-ws-control

CONTROL_CASES = [(True, "socks5h", "ws", "deflate"), (True, "connect", "wss", None),
                 (False, "socks5h", "ws", "deflate")]


@pytest.mark.parametrize("flag,via,scheme,compression", CONTROL_CASES,
                         ids=[f"{'record' if f else 'default'}-{v}-{s}" for f, v, s, _c in
                              CONTROL_CASES])
def test_ws_control_frames(flag, via, scheme, compression, harrec_tls, ws_server, wss_server):
    srv = servers_for(scheme, ws_server, wss_server, compression)
    px = harrec_tls.start(*(["--record-ws-control"] if flag else []))
    t = Target(srv, HOST[scheme], via=via, px=px, cafile=px.ca_pem, compression=compression)
    path = "/ws/control"

    async def body():
        want = []  # the exact wire order with control frames, built as the client goes
        async with t.connect(path) as ws:
            p = Peer(ws, path)
            await p.echo("a")
            want += [("send", ("text", "a")), ("receive", ("text", "a"))]
            for data in (b"client-ping", b""):
                await (await ws.ping(data))
                want += [("send", ("ping", data)), ("receive", ("pong", data))]
            await p.cmd(op="ping", data="server-ping")
            assert await p.recv() == "pinged"
            want += [p.order[-2], ("receive", ("ping", b"server-ping")),
                     ("send", ("pong", b"server-ping")), ("receive", ("text", "pinged"))]
            await ws.pong(b"unsolicited")
            want.append(("send", ("pong", b"unsolicited")))
            await p.echo(b"b")
            want += [("send", ("binary", b"b")), ("receive", ("binary", b"b"))]
            control = []
            await p.send_fragments(["x" * 10, "y" * 10, "z"], ping=True, control=control)
            await p.recv()
            want += control + p.order[-2:]
            await p.close(1000, "control done")
            want += p.order[-2:]
        return p, want
    t0 = time.time()
    p, want = run(body())
    wait_closed_line(px, t.url(path))
    t1 = time.time()
    har = px.stop()
    res = Result("control", path, t.url(path), p)
    check_transparency(srv, res)
    e = ws_entry(har, res.url)
    check_message_shape(e, t0, t1, control=flag)
    got = [ws_har_event(m) for m in e["_webSocketMessages"]]
    if flag:
        assert_events(got, want, f"{res.url}: messages with --record-ws-control")
    else:
        assert_events(got, p.order, f"{res.url}: messages without --record-ws-control")
        assert [ev for ev in want if ev[1][0] not in ("ping", "pong")] == p.order


# ---------------------------------------------------------------- hand-made frames

INVALID_FROM_CLIENT = b"caf\xe9 \x80\xbf \xf0\x28\x8c\x28 \xed\xa0\x80"  # latin-1, lone
# continuation bytes, a bad 4-byte sequence and an encoded surrogate
INVALID_FROM_SERVER = b"\xff\xfe server \xc3\x28"
RAW_BINARY = bytes(range(256)) * 2


def raw_client_frames() -> list[bytes]:
    return [
        ws_frame(OP_TEXT, b"caf\xc3", fin=False),       # the fragment ends inside "é"
        ws_frame(OP_PING, b"raw-ping"),                 # control frame between fragments
        ws_frame(OP_CONT, b"\xa9 ok", fin=False),
        ws_frame(OP_CONT, b"!", fin=True),
        ws_frame(OP_TEXT, INVALID_FROM_CLIENT),
        ws_frame(OP_BINARY, RAW_BINARY),                # 16-bit length
        ws_frame(OP_TEXT, b""),
        ws_frame(OP_CLOSE, ws_close_payload(1000, "raw bye")),
    ]


RAW_EXPECTED = [
    ("receive", ("invalid-text", INVALID_FROM_SERVER)),
    ("send", ("text", "café ok!")),
    ("send", ("invalid-text", INVALID_FROM_CLIENT)),
    ("send", ("binary", RAW_BINARY)),
    ("send", ("text", "")),
    ("send", ("close", "1000 raw bye")),
    ("receive", ("close", "1000 raw bye")),
]


def raw_ws_session(sock, target: str, host: str, greeting: bytes, frames: list[bytes]):
    """Upgrade by hand, read the server's greeting, send frames one byte per write, read until
    the server's close frame; returns (101 response, bytes received, bytes sent) after the head."""
    conn = RawConn(sock=sock, timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    conn.send(ws_upgrade_request(target, host, key))
    r = conn.read_head()
    assert r.status == 101, f"upgrade answered {r.status}: {r.raw_head!r}"
    assert r.header("sec-websocket-accept") == ws_accept(key)
    got = bytearray(conn._exact(len(greeting)))
    assert bytes(got) == greeting, f"greeting changed on the way: {bytes(got)!r}"
    sent = b"".join(frames)
    for i in range(len(sent)):
        conn.send(sent[i:i + 1])
    pending, closed = bytearray(), False
    while not closed:
        if not conn.buf:
            assert conn._fill(), \
                f"connection closed before the server's close frame: {bytes(got)!r}"
        chunk = bytes(conn.buf)
        conn.buf.clear()
        got += chunk
        pending += chunk
        closed = any(f.opcode == OP_CLOSE for f in ws_parse_frames(pending))
    conn.close()
    return r, bytes(got), sent


def _raw_greeting() -> bytes:
    return ws_frame(OP_TEXT, INVALID_FROM_SERVER, mask=False)


def _raw_open(mode, px, port, test_pki_or_ca):
    """A connected socket-like object for mode: direct, direct-tls, http (the proxy itself),
    connect, socks5, connect-tls (CONNECT, then TLS trusting test_pki_or_ca)."""
    if mode in ("direct", "direct-tls"):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    elif mode == "http":
        s = socket.create_connection(("127.0.0.1", px.http_port), timeout=10)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    else:
        s = tunnel("socks5" if mode == "socks5" else "connect", px, "127.0.0.1", port)
    if mode.endswith("tls"):  # no SNI for an IP: the leaves must name 127.0.0.1
        return TLSClient(s, client_context(test_pki_or_ca), "127.0.0.1").handshake()
    return s


def _raw_server_tls(test_pki):
    import origin as origin_mod
    return origin_mod.server_tls_context(test_pki / "server.pem", test_pki / "server-key.pem",
                                         alpn=None)


def check_raw_transparency(srv, got: bytes, sent: bytes):
    c = srv.finished(0)
    assert c["error"] is None, c["error"]
    assert bytes(c["received"]) == sent, "the server did not get the client's frames byte for byte"
    assert got == bytes(c["sent"]), "the client did not get the server's frames byte for byte"
    frames = [(f.opcode, f.payload) for f in c["frames"]]
    assert (OP_TEXT, INVALID_FROM_CLIENT) in frames
    return c


@pytest.mark.parametrize("mode", ["direct", "direct-tls"])
def test_direct_raw_frames(mode, raw_ws_server, test_pki):
    tls = _raw_server_tls(test_pki) if mode.endswith("tls") else None
    srv = raw_ws_server.start(greeting=_raw_greeting(), tls=tls)
    sock = _raw_open(mode, None, srv.port, test_pki / "ca.pem")
    host = f"127.0.0.1:{srv.port}"
    _r, got, sent = raw_ws_session(sock, "/raw", host, _raw_greeting(), raw_client_frames())
    check_raw_transparency(srv, got, sent)


@pytest.mark.parametrize("mode", ["http", "connect", "socks5", "connect-tls"])
def test_ws_invalid_utf8_and_raw_frames(mode, raw_ws_server, harrec_tls, test_pki):
    """Invalid UTF-8 text both ways (websockets refuses to send it), a fragment ending inside a
    character with a ping between fragments, all written one byte per TCP segment: relayed byte
    for byte, recorded with `_invalidUTF8` / `_encoding: "base64"`. Mode "http" is the plain
    HTTP proxy (absolute-form upgrade)."""
    tls = _raw_server_tls(test_pki) if mode.endswith("tls") else None
    srv = raw_ws_server.start(greeting=_raw_greeting(), tls=tls)
    px = harrec_tls.start()
    sock = _raw_open(mode, px, srv.port, px.ca_pem)
    host = f"127.0.0.1:{srv.port}"
    url = ("wss://" if tls else "ws://") + host + "/raw?invalid"
    target = f"http://{host}/raw?invalid" if mode == "http" else "/raw?invalid"
    t0 = time.time()
    _r, got, sent = raw_ws_session(sock, target, host, _raw_greeting(), raw_client_frames())
    c = check_raw_transparency(srv, got, sent)
    assert c["head"].startswith(b"GET /raw?invalid HTTP/1.1\r\n"), c["head"][:80]
    for h in (b"\r\nUpgrade: websocket\r\n", b"\r\nSec-WebSocket-Version: 13\r\n"):
        assert h.lower() in c["head"].lower(), f"upgrade header lost on the way: {c['head']!r}"
    wait_closed_line(px, url)
    t1 = time.time()
    har = px.stop()
    e = ws_entry(har, url)
    check_message_shape(e, t0, t1)
    assert_events([ws_har_event(m) for m in e["_webSocketMessages"]], RAW_EXPECTED,
                  f"{url}: _webSocketMessages")
    for m in e["_webSocketMessages"]:
        if m["opcode"] == OP_TEXT and m.get("_invalidUTF8"):
            assert m["_invalidUTF8"] is True and m["_encoding"] == "base64", m
        elif m["opcode"] == OP_TEXT:
            assert "_encoding" not in m and "_invalidUTF8" not in m, m
    check_live_lines(px, url, e)


@pytest.mark.parametrize("mode", ["connect", "socks5"])
def test_ws_empty_close_frame(mode, raw_ws_server, harrec_tls):
    """A close frame without a payload is recorded with data "" (both ways)."""
    srv = raw_ws_server.start()
    px = harrec_tls.start()
    sock = _raw_open(mode, px, srv.port, None)
    host = f"127.0.0.1:{srv.port}"
    url = f"ws://{host}/raw?empty-close"
    frames = [ws_frame(OP_TEXT, b"x"), ws_frame(OP_BINARY, b""), ws_frame(OP_CLOSE, b"")]
    t0 = time.time()
    _r, got, sent = raw_ws_session(sock, "/raw?empty-close", host, b"", frames)
    c = srv.finished(0)
    assert c["error"] is None and bytes(c["received"]) == sent and got == bytes(c["sent"])
    wait_closed_line(px, url)
    t1 = time.time()
    e = ws_entry(px.stop(), url)
    check_message_shape(e, t0, t1)
    assert_events([ws_har_event(m) for m in e["_webSocketMessages"]],
                  [("send", ("text", "x")), ("send", ("binary", b"")), ("send", ("close", "")),
                   ("receive", ("close", ""))], f"{url}: _webSocketMessages")


LAST_WORDS = ws_frame(OP_TEXT, b"last words", mask=False) + \
    ws_frame(OP_CLOSE, ws_close_payload(1000, "server bye"), mask=False)


@pytest.mark.parametrize("mode", ["direct-tls", "connect-tls", "connect"])
def test_ws_last_frames_before_server_close(mode, raw_ws_server, harrec_tls, test_pki):
    """The server sends its last frames and closes at once (TLS: close_notify right behind
    them, often in the same TCP segment): repeated, because whether the bytes arrive together
    is timing. Every client gets the frames; every HAR entry has them."""
    tls = _raw_server_tls(test_pki) if mode.endswith("tls") else None
    srv = raw_ws_server.start(greeting=LAST_WORDS, tls=tls, close_after_greeting=True,
                              greeting_delay=0.05)  # the frames come after the 101 was relayed
    px = None if mode.startswith("direct") else harrec_tls.start()
    cafile = test_pki / "ca.pem" if px is None else px.ca_pem
    host = f"127.0.0.1:{srv.port}"
    urls, lost = [], []
    for i in range(20):
        sock = _raw_open(mode, px, srv.port, cafile)
        conn = RawConn(sock=sock, timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        conn.send(ws_upgrade_request(f"/last?{i}", host, key))
        assert conn.read_head().status == 101
        got = conn.read_until_close(10)
        conn.close()
        if got != LAST_WORDS:
            lost.append((i, got[:40]))
        urls.append(("wss://" if tls else "ws://") + f"{host}/last?{i}")
    assert not lost, f"{len(lost)} of 20 clients did not get the server's last frames: {lost[:3]}"
    if px is None:
        return
    for url in urls:
        wait_closed_line(px, url)
    har = px.stop()
    bad = []
    for url in urls:
        got = [ws_har_event(m) for m in ws_entry(har, url)["_webSocketMessages"]]
        if got != [("receive", ("text", "last words")), ("receive", ("close", "1000 server bye"))]:
            bad.append((url, got))
    assert not bad, f"{len(bad)} of 20 entries lack the last frames: {bad[:2]}"
