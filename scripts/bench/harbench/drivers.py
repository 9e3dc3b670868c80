"""Load drivers: wrk (plain HTTP, direct or through a proxy), the Go load generator
(scripts/bench/loadgen: HTTP/1.1 or HTTP/2, https through CONNECT), and small Python clients."""

import http.client
import json
import re
import subprocess
import threading

from .install import BENCH_DIR
from .proc import Failure

import os

WRK_LUA = os.path.join(BENCH_DIR, "wrk.lua")
WRK_GRACE_S = 60              # on top of the wrk duration
WRK_REQUEST_TIMEOUT = "5s"    # per-request timeout inside wrk (mitmproxy can be slow)
EXPORT_TIMEOUT_S = 300        # bound on drive_requests' threads
LOADGEN_GRACE_S = 120         # on top of the loadgen duration

UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def parse_wrk_text(out):
    """Fallback parse of wrk's own report (used when the Lua done() line is missing)."""
    res = {}
    m = re.search(r"Requests/sec:\s*([\d.]+)", out)
    if m:
        res["rps"] = float(m.group(1))
    for pct, key in (("50", "p50_ms"), ("99", "p99_ms")):
        m = re.search(rf"^\s*{pct}(?:\.0+)?%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)
        if m:
            res[key] = float(m.group(1)) * UNIT_MS[m.group(2)]
    m = re.search(r"(\d+) requests in", out)
    if m:
        res["requests"] = int(m.group(1))
    errs = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errs += sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errs += int(m.group(1))
    res["errors"] = errs
    return res



def run_wrk(wrk, args, connect_port, target_url, duration, what, lua=None, expect_non_2xx=False):
    """wrk -t -c -d --latency with scripts/bench/wrk.lua (or `lua`), straight to target_url
    (connect_port None) or through the proxy at connect_port (wrk sends the absolute URL).
    expect_non_2xx: the workload answers with errors on purpose (bench-replay's unmatched row)."""
    url = target_url if connect_port is None else f"http://127.0.0.1:{connect_port}/"
    threads = max(1, min(args.threads, args.connections))
    cmd = [wrk, "-t", str(threads), "-c", str(args.connections), "-d", f"{duration}s", "--latency",
           "--timeout", WRK_REQUEST_TIMEOUT, "-s", lua or WRK_LUA, "-H", "Accept-Encoding: gzip", url]
    if connect_port is not None:
        cmd += ["--", target_url]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + WRK_GRACE_S,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Failure(f"wrk ({what}) did not finish within {duration + WRK_GRACE_S} s")
    if r.returncode != 0:
        raise Failure(f"wrk ({what}) exited {r.returncode}: {(r.stderr or r.stdout).strip()[-500:]}")
    m = re.search(r"^BENCH_RESULT (.*)$", r.stdout, re.M)
    if m:
        kv = dict(x.split("=", 1) for x in m.group(1).split())
        n = int(kv["requests"])
        dur_s = int(kv["duration_us"]) / 1e6
        res = {"requests": n, "rps": n / dur_s if dur_s > 0 else 0.0,
               "p50_ms": float(kv["p50_us"]) / 1000, "p99_ms": float(kv["p99_us"]) / 1000,
               "p90_ms": float(kv["p90_us"]) / 1000, "max_ms": float(kv["max_us"]) / 1000,
               "bytes": int(kv["bytes"]),
               "errors": sum(int(kv[k]) for k in kv if k.startswith("err_")),
               "errors_detail": {k[4:]: int(kv[k]) for k in kv if k.startswith("err_") and int(kv[k])}}
    else:
        res = parse_wrk_text(r.stdout)
        if "rps" not in res or "p99_ms" not in res:
            raise Failure(f"cannot parse wrk output ({what}):\n{r.stdout[-1500:]}")
    if res.get("requests", 0) == 0:
        raise Failure(f"wrk ({what}) completed no requests:\n{r.stdout[-1500:]}")
    status_errors = res.get("errors_detail", {}).get("status", 0)
    if status_errors * 2 > res["requests"] and not expect_non_2xx:
        raise Failure(f"wrk ({what}): {status_errors} of {res['requests']} responses were not 2xx/3xx")
    res["raw"] = r.stdout
    return res


def http_get(port, path, host_header=None, timeout=2.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Accept-Encoding": "gzip"}
        if host_header:
            headers["Host"] = host_header
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, resp.getheader("Content-Encoding"), data
    finally:
        conn.close()


def drive_requests(port, target, host, count, clients):
    """Sends exactly `count` absolute-form GETs through the proxy at `port` over `clients`
    keep-alive connections; returns (ok, errors). target: a URL, or a function of the request's
    number giving its URL."""
    lock = threading.Lock()
    state = {"next": 0, "ok": 0, "errors": 0}

    def worker():
        conn = None
        while True:
            with lock:
                if state["next"] >= count:
                    break
                n = state["next"]
                state["next"] += 1
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", target(n) if callable(target) else target,
                             headers={"Host": host, "Accept-Encoding": "gzip"})
                resp = conn.getresponse()
                resp.read()
                good = resp.status == 200
                if resp.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException):
                good = False
                if conn is not None:
                    conn.close()
                conn = None
            with lock:
                state["ok" if good else "errors"] += 1
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=EXPORT_TIMEOUT_S)
    return state["ok"], state["errors"]




def run_loadgen(loadgen, url, what, proxy_port=None, cafile=None, connections=16, streams=1,
                h2=False, close=False, duration=None, requests=None, warmup=0.0, timeout_s=10):
    """Runs scripts/bench/loadgen once; returns its JSON (rps, p50_ms, p90_ms, p99_ms, max_ms,
    ok, errors, status, protocols, connects, last_error). duration (s) or requests bounds it."""
    cmd = [loadgen, "-url", url, "-c", str(connections), "-timeout", f"{timeout_s}s"]
    if proxy_port is not None:
        cmd += ["-proxy", f"http://127.0.0.1:{proxy_port}"]
    if cafile:
        cmd += ["-cacert", cafile]
    if h2:
        cmd += ["-h2", "-streams", str(streams)]
    if close:
        cmd.append("-close")
    if requests:
        cmd += ["-requests", str(requests)]
        bound = LOADGEN_GRACE_S * 5
    else:
        cmd += ["-duration", f"{duration}s"]
        bound = duration + LOADGEN_GRACE_S
    if warmup:
        cmd += ["-warmup", f"{warmup}s"]
        bound += warmup
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=bound, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Failure(f"loadgen ({what}) did not finish within {bound:.0f} s")
    if r.returncode != 0:
        raise Failure(f"loadgen ({what}) exited {r.returncode}: {(r.stderr or r.stdout).strip()[-500:]}")
    try:
        res = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise Failure(f"loadgen ({what}): no JSON in its output: {r.stdout[-500:]}")
    return res
