#!/usr/bin/env python3
"""Captures a real WebSocket conversation between python `websockets` peers (compression on)
through a byte-for-byte TCP relay on 127.0.0.1, for WebSocketTests.

Writes python-websockets-<name>.json: the 101 response's Sec-WebSocket-Extensions value, the raw
bytes after the handshake in each direction (hex), and the messages each side sent, in order.
Run from this directory: python3 capture.py   (tested with websockets 17.4)
"""
import asyncio, base64, json, sys
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory, ServerPerMessageDeflateFactory)

BIG_TEXT = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(120))

# What the client sends, then what the server sends back (as a reply to each).
CLIENT_MESSAGES = [
    "hello", b"\x00\x01\x02binary\xff", "", BIG_TEXT, "hello again, hello again",
    ["frag", "mented ", "text"],  # fragmented message (send() of an iterable)
    bytes(range(256)) * 8,
    "héllo wörld ✓ 🎉",
]

def describe(m):
    if isinstance(m, list):
        m = "".join(m)
    if isinstance(m, str):
        return {"opcode": 1, "data": base64.b64encode(m.encode()).decode()}
    return {"opcode": 2, "data": base64.b64encode(m).decode()}

def reply(m):
    if isinstance(m, list):
        return ["re:", *m]
    if isinstance(m, str):
        return "re: " + m
    return b"re:" + m

async def capture(name, server_ext, client_ext):
    c2s, s2c = bytearray(), bytearray()

    async def handler(ws):
        async for m in ws:
            original = next(x for x in CLIENT_MESSAGES if describe(x) == describe(m))
            await ws.send(reply(original))
        # the client closes with 1000 "bye"

    async with serve(handler, "127.0.0.1", 0, extensions=server_ext, compression=None) as server:
        sport = server.sockets[0].getsockname()[1]

        async def relay(reader, writer):
            ur, uw = await asyncio.open_connection("127.0.0.1", sport)
            async def pipe(r, w, sink):
                while data := await r.read(65536):
                    sink += data
                    w.write(data)
                    await w.drain()
                w.close()
            await asyncio.gather(pipe(reader, uw, c2s), pipe(ur, writer, s2c))

        relay_server = await asyncio.start_server(relay, "127.0.0.1", 0)
        rport = relay_server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{rport}/", extensions=client_ext, compression=None,
                           max_size=None) as ws:
            for m in CLIENT_MESSAGES:
                await ws.send(m)
                await ws.recv()
            pong = await ws.ping(b"ping-1")
            await pong
            await ws.close(1000, "bye")
        await asyncio.sleep(0.2)
        relay_server.close()

    def split(raw):
        head, _, rest = bytes(raw).partition(b"\r\n\r\n")
        return head.decode("latin-1"), rest
    _, c2s_frames = split(c2s)
    response_head, s2c_frames = split(s2c)
    ext = [l.split(":", 1)[1].strip() for l in response_head.split("\r\n")
           if l.lower().startswith("sec-websocket-extensions:")]
    out = {
        "generator": f"capture.py, websockets {__import__('websockets').__version__}",
        "extensions": ", ".join(ext),
        "clientToServer": c2s_frames.hex(),
        "serverToClient": s2c_frames.hex(),
        "clientMessages": [describe(m) for m in CLIENT_MESSAGES],
        "serverMessages": [describe(reply(m)) for m in CLIENT_MESSAGES],
        "clientControl": ["ping:ping-1", "close:1000:bye"],
    }
    with open(f"python-websockets-{name}.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(name, out["extensions"], len(c2s_frames), len(s2c_frames), file=sys.stderr)

async def main():
    await capture("default", [ServerPerMessageDeflateFactory()], [ClientPerMessageDeflateFactory()])
    await capture("no-context-takeover",
                  [ServerPerMessageDeflateFactory(server_no_context_takeover=True,
                                                  client_no_context_takeover=True,
                                                  server_max_window_bits=10, client_max_window_bits=9)],
                  [ClientPerMessageDeflateFactory(client_max_window_bits=True)])

asyncio.run(main())
