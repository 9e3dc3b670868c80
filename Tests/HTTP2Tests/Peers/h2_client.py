#!/usr/bin/env python3
"""An HTTP/2 client made with python's `h2` (independent of nghttp2), driven over stdin/stdout by
HTTP2PeerTests: each line in is the server's bytes as hex ("" when it sent nothing), each line
out is the client's bytes as hex. The client opens three streams (a GET, a POST with a body in
two DATA frames, a POST with trailers); after the server's bytes stop, it prints one JSON line
with what it received per stream, prefixed with "RESULT ".
"""
import json
import sys

import h2.config
import h2.connection
import h2.events

conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
conn.initiate_connection()
base = [(":scheme", "https"), (":authority", "api.test")]
conn.send_headers(1, [(":method", "GET"), *base, (":path", "/a?x=1"), ("accept", "*/*")], end_stream=True)
conn.send_headers(3, [(":method", "POST"), *base, (":path", "/upload"), ("content-type", "application/json")])
conn.send_data(3, b'{"items": [1, 2, ')
conn.send_data(3, b"3]}", end_stream=True)
conn.send_headers(5, [(":method", "POST"), *base, (":path", "/grpc"), ("te", "trailers")])
conn.send_data(5, b"\x00\x00\x00\x00\x02hi")
conn.send_headers(5, [("grpc-timeout", "1S")], end_stream=True)

got = {}
idle = 0
while True:
    sys.stdout.write(conn.data_to_send().hex() + "\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    data = bytes.fromhex(line.strip())
    if not data:
        idle += 1
        if idle >= 2:
            break
        continue
    idle = 0
    for event in conn.receive_data(data):
        if isinstance(event, h2.events.ResponseReceived):
            got.setdefault(event.stream_id, {})["headers"] = [list(h) for h in event.headers]
        elif isinstance(event, h2.events.DataReceived):
            s = got.setdefault(event.stream_id, {})
            s["body"] = s.get("body", "") + event.data.hex()
            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.TrailersReceived):
            got.setdefault(event.stream_id, {})["trailers"] = [list(h) for h in event.headers]
        elif isinstance(event, h2.events.StreamEnded):
            got.setdefault(event.stream_id, {})["ended"] = True
sys.stdout.write("RESULT " + json.dumps(got) + "\n")
sys.stdout.flush()
