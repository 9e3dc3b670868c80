#!/usr/bin/env python3
"""Writes the http2 fuzz target's seeds: a client's frames (after the connection preface) made by
python's `h2` library, an implementation independent of nghttp2. First byte: the harness's flags
(0x80 = answer each request) and chunking seed."""
import os
import sys

import h2.config
import h2.connection

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "http2")


def client():
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    c.initiate_connection()
    return c


def frames(c):
    data = c.data_to_send()
    assert data.startswith(PREFACE)
    return data[len(PREFACE):]


def request(c, sid, path="/", method="GET", end=True, extra=()):
    c.send_headers(sid, [(":method", method), (":scheme", "https"), (":authority", "api.test"), (":path", path), *extra],
                   end_stream=end)


seeds = {}
c = client(); request(c, 1); seeds["get"] = frames(c)
c = client(); request(c, 1, "/upload", "POST", end=False, extra=[("content-type", "application/json")])
c.send_data(1, b'{"a":1}'); c.send_data(1, b"x" * 3000, end_stream=False)
c.send_headers(1, [("grpc-status", "0")], end_stream=True); seeds["post-trailers"] = frames(c)
c = client()
for sid in (1, 3, 5, 7):
    request(c, sid, f"/item/{sid}")
c.reset_stream(3, 8); c.ping(b"12345678"); c.increment_flow_control_window(65535); seeds["many-reset-ping"] = frames(c)
c = client(); request(c, 1, extra=[("x-big", "v" * 20000)]); seeds["continuation"] = frames(c)
c = client(); request(c, 1); c.close_connection(); seeds["goaway"] = frames(c)
c = client(); request(c, 1, end=False); c.send_data(1, b"abc", pad_length=10); c.end_stream(1); seeds["padded"] = frames(c)

os.makedirs(OUT, exist_ok=True)
for i, (name, data) in enumerate(sorted(seeds.items())):
    with open(os.path.join(OUT, f"seed-{name}"), "wb") as f:
        f.write(bytes([0x80 | (i * 9 % 64)]) + data)
print(f"wrote {len(seeds)} seeds to {OUT}", file=sys.stderr)


# proxy-session seeds: cleartext h2 with prior knowledge inside a CONNECT tunnel, as the program
# Fuzz/proxy-session.swift reads (flags byte, then ops: 0x00 client chunk, 0x06 upstream 1
# connected, 0x03 upstream 1 chunk; a chunk is a length byte and up to 255 bytes).
def program_chunks(op, data):
    out = b""
    for start in range(0, len(data), 255):
        piece = data[start:start + 255]
        out += bytes([op, len(piece)]) + piece
    return out


def h2c_exchange(server_first, reverse_flags=None):
    c = client()
    request(c, 1, "/h2c", "POST", end=False, extra=[("content-type", "text/plain")])
    c.send_data(1, b"hello", end_stream=True)
    request(c, 3, "/second")
    client_bytes = c.data_to_send()
    s = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    s.initiate_connection()
    server_settings = s.data_to_send()
    s.receive_data(client_bytes)
    s.send_headers(1, [(":status", "200"), ("content-type", "text/plain")])
    s.send_data(1, b"world", end_stream=False)
    s.send_headers(1, [("grpc-status", "0")], end_stream=True)
    s.reset_stream(3, 0xB)
    response = s.data_to_send()
    connect = b"CONNECT a.test:8080 HTTP/1.1\r\nHost: a.test:8080\r\n\r\n"
    program = bytes([0x00]) + program_chunks(0x00, connect) + bytes([0x06])
    if reverse_flags is not None:
        # A reverse listener's session: the client's preface first, then the upstream connects.
        return (bytes([reverse_flags]) + program_chunks(0x00, client_bytes) + bytes([0x06])
                + program_chunks(0x03, server_settings) + program_chunks(0x03, response))
    if server_first:
        program += program_chunks(0x03, server_settings)
    program += program_chunks(0x00, client_bytes)
    if not server_first:
        program += program_chunks(0x03, server_settings)
    return program + program_chunks(0x03, response)


SESSION_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proxy-session")
for name, server_first in (("h2c-tunnel", False), ("h2c-tunnel-server-first", True)):
    with open(os.path.join(SESSION_OUT, name), "wb") as f:
        f.write(h2c_exchange(server_first))
# The harness's flags: 0x80 a reverse listener, with 0x08 one upstream (else two, by prefix).
for name, flags in (("reverse-h2c", 0x88), ("reverse-h2c-several-upstreams", 0x80)):
    with open(os.path.join(SESSION_OUT, name), "wb") as f:
        f.write(h2c_exchange(False, reverse_flags=flags))
print(f"wrote 4 h2c seeds to {SESSION_OUT}", file=sys.stderr)
