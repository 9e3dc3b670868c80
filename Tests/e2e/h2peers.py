"""HTTP/2 peers made with python's `h2` (hyper-h2, independent of nghttp2) for the HTTP/2 tests.

H2Server: an origin over TLS (ALPN h2) or cleartext with prior knowledge, one thread per
connection. Paths:
  /bytes?n=N&seed=S   N bytes of origin.make_bytes(N, S), sent as the client's windows allow
  /trailers           "payload" then trailers grpc-status: 0, grpc-message: ok
  /echo               the request body back; request trailers come back as x-echo-<name> trailers
  /reset              RST_STREAM with ENHANCE_YOUR_CALM (0xb) instead of a response
  /goaway             200 "bye", then a graceful GOAWAY naming this stream, then the close

H2Client: a client over an already connected socket (a CONNECT or SOCKS5 tunnel), TLS with ALPN
h2 or cleartext prior knowledge. It records per stream the response head, body, trailers and
reset code, and whether a GOAWAY came; `stall` names streams whose data it does not acknowledge
(a slow reader).
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from urllib.parse import parse_qs, urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

import origin as origin_mod


class H2Server:
    def __init__(self, tls_context: ssl.SSLContext | None = None, require_alpn: bool = True, speak_first: bool = True):
        """`require_alpn=False`: speak h2 even when the handshake chose no protocol, as gRPC
        servers do (python's ssl accepts a client that offers only http/1.1 without ALPN).
        `speak_first=False`: send SETTINGS only after the client's first bytes arrived."""
        self.tls_context = tls_context
        self.require_alpn = require_alpn
        self.speak_first = speak_first
        if tls_context is not None:
            tls_context.set_alpn_protocols(["h2"])
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        self.connections = 0
        self.rejected_http1 = 0
        self.errors: list[str] = []

    def start(self) -> "H2Server":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self):
        self.stopping = True
        self.sock.close()

    def _accept(self):
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve_safely, args=(conn,), daemon=True).start()

    def _serve_safely(self, conn):
        try:
            self._serve(conn)
        except Exception as error:  # noqa: BLE001 (reported to the test through .errors)
            self.errors.append(repr(error))
        finally:
            conn.close()

    def _serve(self, raw):
        sock = raw
        if self.tls_context is not None:
            sock = self.tls_context.wrap_socket(raw, server_side=True)
            if sock.selected_alpn_protocol() != "h2" and self.require_alpn:
                self.errors.append(f"ALPN {sock.selected_alpn_protocol()!r}")
                return
        h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        h2conn.initiate_connection()
        if self.speak_first:
            sock.sendall(h2conn.data_to_send())
        requests: dict[int, dict] = {}
        pending: dict[int, dict] = {}  # stream -> {"data": bytes, "trailers": list | None}
        closing = False
        while True:
            self._flush_pending(h2conn, pending)
            out = h2conn.data_to_send()
            if out:
                sock.sendall(out)
            if closing and not pending:
                return
            readable, _, _ = select.select([sock], [], [], 0.5)
            if not readable and not (hasattr(sock, "pending") and sock.pending()):
                continue
            data = sock.recv(65536)
            if not data:
                return
            try:
                events = h2conn.receive_data(data)
            except h2.exceptions.ProtocolError as error:
                if data[:4] == b"PRI ":
                    self.errors.append(repr(error))
                else:
                    # HTTP/1 bytes to an h2-only server: rejected, as such a server does.
                    self.rejected_http1 += 1
                sock.sendall(h2conn.data_to_send())
                time.sleep(0.2)  # let the peer read the frames before the close resets them
                return
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    requests[event.stream_id] = {"headers": dict(event.headers), "body": b"", "trailers": []}
                    if event.stream_ended is not None:
                        closing |= self._respond(h2conn, event.stream_id, requests.pop(event.stream_id), pending)
                elif isinstance(event, h2.events.DataReceived):
                    if event.stream_id in requests:
                        requests[event.stream_id]["body"] += event.data
                    h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.TrailersReceived):
                    if event.stream_id in requests:
                        requests[event.stream_id]["trailers"] = list(event.headers)
                elif isinstance(event, h2.events.StreamEnded):
                    if event.stream_id in requests:
                        closing |= self._respond(h2conn, event.stream_id, requests.pop(event.stream_id), pending)
                elif isinstance(event, h2.events.StreamReset):
                    pending.pop(event.stream_id, None)
                    requests.pop(event.stream_id, None)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return

    def _respond(self, conn, stream_id, request, pending) -> bool:
        """Starts the response; True when the connection should close after it."""
        url = urlsplit(request["headers"][":path"])
        query = parse_qs(url.query)
        if url.path == "/reset":
            conn.reset_stream(stream_id, h2.errors.ErrorCodes.ENHANCE_YOUR_CALM)
            return False
        if url.path == "/goaway":
            conn.send_headers(stream_id, [(":status", "200"), ("content-length", "3")])
            conn.send_data(stream_id, b"bye", end_stream=True)
            conn.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=stream_id)
            return True
        if url.path == "/trailers":
            conn.send_headers(stream_id, [(":status", "200"), ("content-type", "application/grpc")])
            pending[stream_id] = {"data": b"payload", "trailers": [("grpc-status", "0"), ("grpc-message", "ok")]}
            return False
        if url.path == "/echo":
            trailers = [(f"x-echo-{name}", value) for name, value in request["trailers"]] or None
            conn.send_headers(stream_id, [(":status", "200"), ("content-type", "application/octet-stream")])
            pending[stream_id] = {"data": request["body"], "trailers": trailers}
            return False
        if url.path == "/bytes":
            n = int(query.get("n", ["1024"])[0])
            seed = int(query.get("seed", ["0"])[0])
            conn.send_headers(stream_id, [(":status", "200"), ("content-length", str(n))])
            pending[stream_id] = {"data": origin_mod.make_bytes(n, seed), "trailers": None}
            return False
        conn.send_headers(stream_id, [(":status", "404"), ("content-length", "0")], end_stream=True)
        return False

    @staticmethod
    def _flush_pending(conn, pending):
        for stream_id in list(pending):
            item = pending[stream_id]
            while item["data"]:
                window = min(conn.local_flow_control_window(stream_id), conn.max_outbound_frame_size)
                if window <= 0:
                    break
                chunk, item["data"] = item["data"][:window], item["data"][window:]
                conn.send_data(stream_id, chunk)
            if not item["data"]:
                if item["trailers"]:
                    conn.send_headers(stream_id, item["trailers"], end_stream=True)
                else:
                    conn.end_stream(stream_id)
                del pending[stream_id]


class StreamResult:
    def __init__(self):
        self.status: int | None = None
        self.headers: list = []
        self.body = bytearray()
        self.trailers: list = []
        self.reset_code: int | None = None
        self.ended = False

    @property
    def done(self) -> bool:
        return self.ended or self.reset_code is not None


class H2Client:
    def __init__(self, sock: socket.socket, authority: str, tls_context: ssl.SSLContext | None = None,
                 server_hostname: str | None = None):
        if tls_context is not None:
            tls_context.set_alpn_protocols(["h2", "http/1.1"])
            sock = tls_context.wrap_socket(sock, server_hostname=server_hostname)
            self.alpn = sock.selected_alpn_protocol()
        else:
            self.alpn = None
        self.sock = sock
        self.scheme = "https" if tls_context is not None else "http"
        self.authority = authority
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.streams: dict[int, StreamResult] = {}
        self.goaway: h2.events.ConnectionTerminated | None = None
        self.closed = False
        self.stall: set[int] = set()
        self.unacknowledged: dict[int, int] = {}

    def request(self, method: str, path: str, body: bytes | None = None, trailers=None, headers=()) -> int:
        stream_id = self.conn.get_next_available_stream_id()
        head = [(":method", method), (":scheme", self.scheme), (":authority", self.authority), (":path", path),
                *headers]
        self.conn.send_headers(stream_id, head, end_stream=body is None and not trailers)
        if body is not None or trailers:
            data = body or b""
            while data:
                window = min(self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size)
                if window <= 0:
                    self._io(0.5)
                    continue
                self.conn.send_data(stream_id, data[:window])
                data = data[window:]
            if trailers:
                self.conn.send_headers(stream_id, trailers, end_stream=True)
            else:
                self.conn.end_stream(stream_id)
        self.streams[stream_id] = StreamResult()
        return stream_id

    def acknowledge(self, stream_id: int):
        """A stalled stream's reader catches up."""
        self.stall.discard(stream_id)
        owed = self.unacknowledged.pop(stream_id, 0)
        if owed:
            self.conn.increment_flow_control_window(owed, stream_id=stream_id)

    def run(self, until, timeout: float = 20.0):
        deadline = time.time() + timeout
        while not until(self):
            if self.closed or time.time() > deadline:
                return False
            self._io(0.2)
        self.sock.sendall(self.conn.data_to_send())
        return True

    def _io(self, wait: float):
        out = self.conn.data_to_send()
        if out:
            self.sock.sendall(out)
        readable, _, _ = select.select([self.sock], [], [], wait)
        if not readable and not (hasattr(self.sock, "pending") and self.sock.pending()):
            return
        try:
            data = self.sock.recv(65536)
        except (ConnectionError, ssl.SSLError):
            data = b""
        if not data:
            self.closed = True
            return
        for event in self.conn.receive_data(data):
            stream = self.streams.get(getattr(event, "stream_id", None) or 0)
            if isinstance(event, h2.events.ResponseReceived) and stream:
                stream.headers = list(event.headers)
                stream.status = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived) and stream:
                stream.body += event.data
                if event.stream_id in self.stall:
                    # A slow reader of this stream only: the connection's window reopens, the
                    # stream's stays closed (as a browser with one stalled download does).
                    self.unacknowledged[event.stream_id] = self.unacknowledged.get(event.stream_id, 0) + event.flow_controlled_length
                    if event.flow_controlled_length:
                        self.conn.increment_flow_control_window(event.flow_controlled_length)
                else:
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.TrailersReceived) and stream:
                stream.trailers = list(event.headers)
            elif isinstance(event, h2.events.StreamEnded) and stream:
                stream.ended = True
            elif isinstance(event, h2.events.StreamReset) and stream:
                stream.reset_code = int(event.error_code)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.goaway = event
        out = self.conn.data_to_send()
        if out:
            self.sock.sendall(out)

    def close(self):
        try:
            self.conn.close_connection()
            self.sock.sendall(self.conn.data_to_send())
        except OSError:
            pass
        self.sock.close()
