#!/usr/bin/env python3
"""WebSocket load generator and sink/echo server for scripts/bench-ws. Python 3 stdlib only.

    ws_load.py server --port P [--procs N] --stats FILE [--lifetime S]
    ws_load.py client --connect HOST:PORT --target HOST:PORT [--proxy none|connect|absolute]
                      --run TAG [--connections N] [--size BYTES] [--duration S] [--messages N]
                      [--warmup N] [--batch N] [--echo]

server: a raw WebSocket server on 127.0.0.1:P (N processes sharing one listening socket). A plain
GET answers `200 ok`; a GET with `Upgrade: websocket` on /ws/TAG/CID[?echo=1] gets a 101 and then
the server only reads: it skips over frames (headers parsed, payloads never copied out or
unmasked), counts complete data messages, answers pings with pongs and a close with a close. With
echo=1 it sends one pre-built unmasked text frame of the same size back for every data message it
counts (flow-controlled: it stops reading while its send buffer is full). When a connection ends it
appends one JSON line to FILE: {"run", "cid", "recv", "t_first", "t_last", "echoed", "close",
"t_close", "bytes"} (times are time.monotonic(), CLOCK_MONOTONIC, comparable across processes).
Each server process exits by itself after --lifetime seconds (default 3600).

client: N connections, one process each (so no GIL is shared between connections); each opens
TCP to --connect, optionally `CONNECT TARGET` (connect) or an absolute-form upgrade request
(absolute) through an HTTP proxy, does the upgrade handshake (no extensions, so no compression),
sends --warmup text messages and a ping and waits for the pong (everything before it has arrived),
then all connections start together (a barrier) and each writes pre-built masked text frames of
--size bytes, --batch frames per sendall, until --duration seconds or --messages messages, then
(echo: once every echo has arrived) a close frame, and waits for the server's close. A reader
thread per connection counts the messages coming back (echo). Prints `GO <monotonic>` when the
barrier opens and, at the end, one line `RESULT <json>` with per-connection counts and times (and
the CPU seconds each worker used during the measured part).

Payloads are letters and digits only (no quote, backslash or brace), so a HAR of these messages can
be counted exactly with a regular expression.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import multiprocessing
import os
import socket
import sys
import threading
import time
import traceback

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
HEAD_LIMIT = 65536            # longest HTTP head accepted (request or response)
RECV_CHUNK = 262144           # bytes per recv
HANDSHAKE_TIMEOUT_S = 30      # connect + CONNECT + upgrade + warm-up pong
BARRIER_TIMEOUT_S = 120       # all connections ready
DRAIN_TIMEOUT_S = 300         # after the last write: until the server's close arrives
CLOSE_1000 = b"\x03\xe8"
ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def payload(size, salt):
    """size bytes of letters and digits (deterministic per salt)."""
    out = bytearray()
    i = salt
    while len(out) < size:
        out += ALPHABET[i % len(ALPHABET):] + ALPHABET[:i % len(ALPHABET)]
        i += 7
    return bytes(out[:size])


def xor_mask(data, mask):
    if not data:
        return b""
    n = len(data)
    m = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(m, "big")).to_bytes(n, "big")


def frame(data, opcode=1, mask=None):
    """One complete frame (FIN set); masked when a 4-byte mask is given (client to server)."""
    n = len(data)
    mbit = 0x80 if mask else 0
    if n < 126:
        head = bytes([0x80 | opcode, mbit | n])
    elif n < 65536:
        head = bytes([0x80 | opcode, mbit | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, mbit | 127]) + n.to_bytes(8, "big")
    if mask:
        return head + mask + xor_mask(data, mask)
    return head + data


def scan(buf, pos, end):
    """Skips over complete frames in buf[pos:end]. Returns (pos, data_messages, control) where
    control is None or (opcode, unmasked payload) of the control frame it stopped after. Payloads
    of data frames are never copied: only headers are read."""
    count = 0
    while end - pos >= 2:
        b1 = buf[pos + 1]
        ln = b1 & 0x7F
        if ln == 126:
            if end - pos < 4:
                break
            ln = (buf[pos + 2] << 8) | buf[pos + 3]
            hl = 4
        elif ln == 127:
            if end - pos < 10:
                break
            ln = int.from_bytes(buf[pos + 2:pos + 10], "big")
            hl = 10
        else:
            hl = 2
        if b1 & 0x80:
            hl += 4
        fend = pos + hl + ln
        if fend > end:
            break
        b0 = buf[pos]
        if b0 & 0x08:  # control frame (opcode 8..15)
            data = bytes(buf[pos + hl:fend])
            if b1 & 0x80:
                data = xor_mask(data, bytes(buf[pos + hl - 4:pos + hl]))
            return fend, count, (b0 & 0x0F, data)
        if b0 & 0x80:  # FIN: a message ends here (text, binary or last continuation)
            count += 1
        pos = fend
    return pos, count, None


def accept_for(key):
    return base64.b64encode(hashlib.sha1(key + GUID).digest())


def parse_head(head):
    lines = head.split(b"\r\n")
    start = lines[0].decode("latin-1")
    headers = {}
    for line in lines[1:]:
        k, sep, v = line.partition(b":")
        if sep:
            headers[k.strip().lower().decode("latin-1")] = v.strip()
    return start, headers


# ---------------------------------------------------------------------------------------------
# Server

class ServerConn(asyncio.Protocol):
    stats_fd = None
    frames = {}  # size -> pre-built unmasked echo frame

    def connection_made(self, transport):
        self.t = transport
        self.buf = bytearray()
        self.ws = False
        self.done = False
        self.run, self.cid, self.echo = "?", -1, False
        self.recv = self.echoed = self.bytes = 0
        self.t_first = self.t_last = self.t_close = None
        self.close_seen = False
        self.echo_frame = b""
        try:
            transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, AttributeError):
            pass

    def pause_writing(self):
        self.t.pause_reading()

    def resume_writing(self):
        self.t.resume_reading()

    def data_received(self, data):
        if self.done:
            return
        self.buf += data
        if not self.ws:
            self.http()
            if not self.ws:
                return
        self.bytes += len(data)
        buf, pos, end, now = self.buf, 0, len(self.buf), None
        while True:
            pos, cnt, ctl = scan(buf, pos, end)
            if cnt:
                now = now or time.monotonic()
                if not self.recv:
                    self.t_first = now
                self.recv += cnt
                self.t_last = now
                if self.echo:
                    self.t.write(self.echo_frame * cnt)
                    self.echoed += cnt
            if ctl is None:
                break
            op, data = ctl
            if op == 9:
                self.t.write(frame(data, 10))
            elif op == 8:
                self.close_seen = True
                self.t_close = time.monotonic()
                self.t.write(frame(data[:2] if len(data) >= 2 else b"", 8))
                self.finish()
                self.t.close()  # flushes what is buffered, then closes
                return
        if pos:
            del buf[:pos]

    def http(self):
        while not self.ws:
            i = self.buf.find(b"\r\n\r\n")
            if i < 0:
                if len(self.buf) > HEAD_LIMIT:
                    self.t.close()
                return
            head = bytes(self.buf[:i])
            del self.buf[:i + 4]
            start, headers = parse_head(head)
            parts = start.split()
            target = parts[1] if len(parts) > 1 else "/"
            if "://" in target:  # absolute form (a proxy that forwards it as is)
                target = "/" + target.split("://", 1)[1].partition("/")[2]
            if headers.get("upgrade", b"").lower() != b"websocket":
                self.t.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
                continue
            path, _, query = target.partition("?")
            bits = path.strip("/").split("/")
            if len(bits) >= 3 and bits[0] == "ws":
                self.run = bits[1]
                try:
                    self.cid = int(bits[2])
                except ValueError:
                    pass
            qs = dict(p.partition("=")[::2] for p in query.split("&") if p)
            self.echo = qs.get("echo") == "1"
            size = int(qs.get("size", "1024") or 1024)
            if self.echo:
                if size not in ServerConn.frames:
                    ServerConn.frames[size] = frame(payload(size, 3), 1)
                self.echo_frame = ServerConn.frames[size]
            key = headers.get("sec-websocket-key", b"")
            self.t.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                         b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept_for(key) + b"\r\n\r\n")
            self.ws = True

    def finish(self):
        if self.done:
            return
        self.done = True
        if not self.ws:
            return
        line = json.dumps({"run": self.run, "cid": self.cid, "recv": self.recv, "t_first": self.t_first,
                           "t_last": self.t_last, "echoed": self.echoed, "close": self.close_seen,
                           "t_close": self.t_close, "bytes": self.bytes, "pid": os.getpid()}) + "\n"
        os.write(ServerConn.stats_fd, line.encode())

    def connection_lost(self, exc):
        self.finish()


def serve(sock, lifetime):
    async def main():
        loop = asyncio.get_running_loop()
        server = await loop.create_server(ServerConn, sock=sock, backlog=1024)
        stop = loop.create_future()
        loop.call_later(lifetime, lambda: stop.done() or stop.set_result(None))
        async with server:
            await stop
    asyncio.run(main())


def cmd_server(a):
    ServerConn.stats_fd = os.open(a.stats, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", a.port))
    sock.listen(1024)
    sock.setblocking(False)
    for _ in range(a.procs - 1):
        if os.fork() == 0:
            try:
                serve(sock, a.lifetime)
            finally:
                os._exit(0)
    print(f"READY {sock.getsockname()[1]}", flush=True)
    serve(sock, a.lifetime)
    return 0


# ---------------------------------------------------------------------------------------------
# Client

def read_head(sock, what):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError(f"connection closed before the {what} answer")
        buf += chunk
        if len(buf) > HEAD_LIMIT:
            raise ConnectionError(f"{what} answer too long")
    head, _, rest = buf.partition(b"\r\n\r\n")
    status, headers = parse_head(head)
    return status, headers, rest


def open_ws(a, cid):
    host, port = a.connect.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=HANDSHAKE_TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if a.proxy == "connect":
        sock.sendall(f"CONNECT {a.target} HTTP/1.1\r\nHost: {a.target}\r\n\r\n".encode())
        status, _, rest = read_head(sock, "CONNECT")
        if status.split()[1:2] != ["200"]:
            raise ConnectionError(f"CONNECT refused: {status}")
        if rest:
            raise ConnectionError("bytes after the CONNECT answer")
    path = f"/ws/{a.run}/{cid}?size={a.size}" + ("&echo=1" if a.echo else "")
    if a.proxy == "absolute":
        path = f"http://{a.target}{path}"
    key = base64.b64encode(os.urandom(16))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {a.target}\r\nUpgrade: websocket\r\n"
                 f"Connection: Upgrade\r\nSec-WebSocket-Key: {key.decode()}\r\n"
                 f"Sec-WebSocket-Version: 13\r\nUser-Agent: harrec-bench-ws\r\n\r\n".encode())
    status, headers, rest = read_head(sock, "upgrade")
    if status.split()[1:2] != ["101"]:
        raise ConnectionError(f"upgrade refused: {status}")
    if headers.get("sec-websocket-accept") != accept_for(key):
        raise ConnectionError("bad Sec-WebSocket-Accept")
    return sock, rest


class Reader(threading.Thread):
    def __init__(self, sock, leftover):
        super().__init__(daemon=True)
        self.sock, self.buf = sock, bytearray(leftover)
        self.recv = 0
        self.target = 1 << 62  # reached is set once recv >= target
        self.reached = threading.Event()
        self.t_first = self.t_last = self.t_close = None
        self.pongs = threading.Semaphore(0)
        self.closed = threading.Event()
        self.error = None
        self.close_data = None

    def run(self):
        buf = self.buf
        try:
            while True:
                pos, end = 0, len(buf)
                now = time.monotonic()
                while True:
                    pos, cnt, ctl = scan(buf, pos, end)
                    if cnt:
                        if not self.recv:
                            self.t_first = now
                        self.recv += cnt
                        self.t_last = now
                        if self.recv >= self.target:
                            self.reached.set()
                    if ctl is None:
                        break
                    op, data = ctl
                    if op == 10:
                        self.pongs.release()
                    elif op == 8:
                        self.t_close = now
                        self.close_data = data
                        return
                if pos:
                    del buf[:pos]
                chunk = self.sock.recv(RECV_CHUNK)
                if not chunk:
                    self.error = "connection closed without a close frame"
                    return
                buf += chunk
        except OSError as e:
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.closed.set()
            self.reached.set()
            self.pongs.release()


def worker(a, cid, barrier, q):
    res = {"cid": cid, "sent": 0, "warm": a.warmup}
    sock = None
    try:
        mask = os.urandom(4)
        fr = frame(payload(a.size, 1), 1, mask)
        sock, rest = open_ws(a, cid)
        sock.settimeout(max(DRAIN_TIMEOUT_S, a.duration + DRAIN_TIMEOUT_S))
        rd = Reader(sock, rest)
        rd.start()
        sock.sendall(fr * a.warmup + frame(b"warm", 9, mask))
        if not rd.pongs.acquire(timeout=HANDSHAKE_TIMEOUT_S) or rd.closed.is_set():
            raise ConnectionError(f"no pong after the warm-up ({rd.error or 'timeout'})")
        res["warm_recv"] = rd.recv
        barrier.wait(BARRIER_TIMEOUT_S)
        cpu0 = time.process_time()
        t0 = time.monotonic()
        res["t_start"] = t0
        deadline = t0 + a.duration
        limit = a.messages if a.messages > 0 else (1 << 62)
        batch = fr * a.batch
        sent = 0
        while sent < limit:
            if time.monotonic() >= deadline:
                break
            k = min(a.batch, limit - sent)
            sock.sendall(batch if k == a.batch else fr * k)
            sent += k
        res["sent"] = sent
        res["t_send_end"] = time.monotonic()
        if a.echo:
            # Close only once every echo is in: a proxy may drop what the server sends after the
            # client's close (mitmproxy does), and that would count as lost.
            want = a.warmup + sent
            rd.target = want
            if rd.recv < want:
                rd.reached.wait(DRAIN_TIMEOUT_S)
            if rd.recv < want:
                res["error"] = f"only {rd.recv} of {want} echoes arrived ({rd.error or 'timeout'})"
        sock.sendall(frame(CLOSE_1000, 8, mask))
        if not rd.closed.wait(DRAIN_TIMEOUT_S):
            res.setdefault("error", f"no close frame from the server within {DRAIN_TIMEOUT_S} s")
        elif rd.error:
            res.setdefault("error", rd.error)
        res["cpu_s"] = time.process_time() - cpu0
        res.update({"recv": rd.recv, "t_first_recv": rd.t_first, "t_last_recv": rd.t_last,
                    "t_close": rd.t_close})
    except BaseException as e:  # reported, never raised: the parent must hear from every worker
        res["error"] = f"{type(e).__name__}: {e}"
        if not isinstance(e, (OSError, threading.BrokenBarrierError)):
            res["trace"] = traceback.format_exc()[-800:]
        try:
            barrier.abort()
        except Exception:
            pass
    finally:
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
        q.put(res)


def cmd_client(a):
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(a.connections + 1)
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(a, cid, barrier, q), daemon=True)
             for cid in range(a.connections)]
    t_begin = time.monotonic()
    for p in procs:
        p.start()
    go = None
    try:
        barrier.wait(BARRIER_TIMEOUT_S + HANDSHAKE_TIMEOUT_S)
        go = time.monotonic()
        print(f"GO {go:.6f}", flush=True)
    except threading.BrokenBarrierError:
        pass
    results = []
    deadline = time.monotonic() + a.duration + DRAIN_TIMEOUT_S + BARRIER_TIMEOUT_S + 60
    while len(results) < a.connections:
        try:
            results.append(q.get(timeout=max(1.0, deadline - time.monotonic())))
        except Exception:
            break
        if time.monotonic() > deadline:
            break
    for p in procs:
        p.join(5)
        if p.is_alive():
            p.kill()
    results.sort(key=lambda r: r["cid"])
    out = {"run": a.run, "connections": a.connections, "size": a.size, "echo": a.echo,
           "warmup": a.warmup, "batch": a.batch, "go": go, "t_begin": t_begin, "t_end": time.monotonic(),
           "frame_bytes": len(frame(payload(a.size, 1), 1, b"\0\0\0\0")), "conns": results,
           "missing": a.connections - len(results)}
    print("RESULT " + json.dumps(out), flush=True)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="ws_load.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--procs", type=int, default=2)
    s.add_argument("--stats", required=True)
    s.add_argument("--lifetime", type=float, default=3600.0)
    c = sub.add_parser("client")
    c.add_argument("--connect", required=True, help="HOST:PORT to open TCP to (proxy or server)")
    c.add_argument("--target", required=True, help="HOST:PORT of the WebSocket server")
    c.add_argument("--proxy", choices=["none", "connect", "absolute"], default="none")
    c.add_argument("--run", required=True)
    c.add_argument("--connections", type=int, default=8)
    c.add_argument("--size", type=int, default=1024)
    c.add_argument("--duration", type=float, default=10.0)
    c.add_argument("--messages", type=int, default=0, help="per connection; 0 = until --duration")
    c.add_argument("--warmup", type=int, default=200)
    c.add_argument("--batch", type=int, default=64, help="frames per sendall")
    c.add_argument("--echo", action="store_true")
    a = ap.parse_args(argv)
    if a.cmd == "server":
        return cmd_server(a)
    if min(a.connections, a.batch) < 1 or a.size < 0 or a.warmup < 0 or a.duration <= 0:
        ap.error("bad counts")
    return cmd_client(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
