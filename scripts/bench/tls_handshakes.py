#!/usr/bin/env python3
"""TLS handshakes through an HTTP proxy (CONNECT), for scripts/bench-https. Python 3 stdlib only.

    tls_handshakes.py handshakes --proxy-port P --target HOST:PORT --cafile CA.pem
                      --count N (--name NAME | --prefix PREFIX [--domain D] [--start I])
                      [--clients C] [--raw]
    tls_handshakes.py resume --proxy-port P --target HOST:PORT --cafile CA.pem --name NAME

handshakes: N times: TCP connect to 127.0.0.1:P, `CONNECT HOST:PORT`, then a TLS handshake with
SNI = NAME (the same every time: a cached leaf) or PREFIX0001.D, PREFIX0002.D, ... from index I (a
new name every time: one leaf issuance each), verified against CA.pem with check_hostname on; then
close. C threads share the N handshakes. Latency = TCP connect to handshake done. Prints one JSON object:
{"ok", "errors", "t_start", "t_end" (time.monotonic(), CLOCK_MONOTONIC, comparable with the caller's),
"wall_s", "lat_ms": {"mean", "p50", "p90", "p99", "max"}, "error_samples": [...]} (--raw: plus
"lat_list_ms", every latency, sorted).

resume: two connections with a request each (`Connection: close`); the second offers the first's
TLS session. Prints {"version", "resumed", "status"}: does the proxy resume client TLS sessions?

Runs as its own process so its threads never share a GIL with the benchmark's measuring code.
"""

import argparse
import json
import socket
import ssl
import sys
import threading
import time

IO_TIMEOUT_S = 30


def connect_tunnel(proxy_port, target):
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=IO_TIMEOUT_S)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("proxy closed the connection before answering CONNECT")
            buf += chunk
            if len(buf) > 65536:
                raise ConnectionError("CONNECT answer too long")
        head, _, rest = buf.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status.split()
        if len(parts) < 2 or parts[1] != "200":
            raise ConnectionError(f"CONNECT refused: {status}")
        if rest:
            raise ConnectionError("bytes after the CONNECT answer")
        return s
    except BaseException:
        s.close()
        raise


def percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def cmd_handshakes(a):
    ctx = ssl.create_default_context(cafile=a.cafile)
    ctx.check_hostname = True
    ctx.verify_mode = ssl.CERT_REQUIRED
    if a.name:
        names = [a.name] * a.count
    else:
        width = max(4, len(str(a.start + a.count - 1)))
        names = [f"{a.prefix}{i:0{width}d}.{a.domain}" for i in range(a.start, a.start + a.count)]
    lock = threading.Lock()
    state = {"next": 0, "ok": 0, "errors": 0}
    lat = []
    samples = []

    def worker():
        while True:
            with lock:
                i = state["next"]
                if i >= len(names):
                    return
                state["next"] = i + 1
            name = names[i]
            t0 = time.monotonic()
            raw = None
            try:
                raw = connect_tunnel(a.proxy_port, a.target)
                tls = ctx.wrap_socket(raw, server_hostname=name, do_handshake_on_connect=False)
                raw = tls
                tls.do_handshake()
                dt = time.monotonic() - t0
                good = True
            except (OSError, ssl.SSLError, ConnectionError) as e:
                good = False
                msg = f"{name}: {type(e).__name__}: {e}"
            finally:
                if raw is not None:
                    try:
                        raw.close()
                    except OSError:
                        pass
            with lock:
                if good:
                    state["ok"] += 1
                    lat.append(dt)
                else:
                    state["errors"] += 1
                    if len(samples) < 5:
                        samples.append(msg)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(max(1, a.clients))]
    t_start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_end = time.monotonic()
    lat.sort()
    ms = [x * 1000 for x in lat]
    out = {"ok": state["ok"], "errors": state["errors"], "t_start": t_start, "t_end": t_end,
           "wall_s": t_end - t_start,
           "lat_ms": {"mean": sum(ms) / len(ms) if ms else None, "p50": percentile(ms, 50),
                      "p90": percentile(ms, 90), "p99": percentile(ms, 99),
                      "max": ms[-1] if ms else None},
           "error_samples": samples}
    if a.raw:
        out["lat_list_ms"] = [round(x, 4) for x in ms]
    print(json.dumps(out))
    return 0


def cmd_resume(a):
    ctx = ssl.create_default_context(cafile=a.cafile)

    def one(session):
        raw = connect_tunnel(a.proxy_port, a.target)
        tls = ctx.wrap_socket(raw, server_hostname=a.name, session=session)
        try:
            tls.sendall(f"GET /small.json HTTP/1.1\r\nHost: {a.target}\r\nConnection: close\r\n\r\n"
                        .encode())
            data = b""
            while True:
                chunk = tls.recv(65536)
                if not chunk:
                    break
                data += chunk
            status = data.split(b"\r\n", 1)[0].decode("latin-1")
            return tls.version(), tls.session_reused, tls.session, status
        finally:
            tls.close()

    try:
        version, _, session, _ = one(None)
        _, reused, _, status = one(session)
        print(json.dumps({"version": version, "resumed": bool(reused), "status": status}))
    except (OSError, ssl.SSLError, ConnectionError) as e:
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["handshakes", "resume"])
    ap.add_argument("--proxy-port", type=int, required=True)
    ap.add_argument("--target", required=True, help="CONNECT target HOST:PORT")
    ap.add_argument("--cafile", required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--name", help="one SNI name for every handshake")
    ap.add_argument("--prefix", default="h", help="distinct names: PREFIX0001.DOMAIN, ...")
    ap.add_argument("--domain", default="bench.localhost")
    ap.add_argument("--start", type=int, default=1, help="first index of the distinct names")
    ap.add_argument("--raw", action="store_true", help="also print every latency (lat_list_ms)")
    ap.add_argument("--clients", type=int, default=4)
    a = ap.parse_args(argv)
    if a.mode == "resume":
        if not a.name:
            ap.error("resume needs --name")
        return cmd_resume(a)
    return cmd_handshakes(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
