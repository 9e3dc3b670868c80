"""Several event loops (--threads): connections spread over every loop, every exchange is recorded
once, shutdown waits for and aborts exchanges on every loop, and bad --threads values fail."""

import signal
import subprocess
import threading
import time

import pytest

import origin as origin_mod
from helpers import HARREC_BIN, RawConn, background_curl, content_bytes, entries, request_bytes, thread_cpu_ns

LOOPS = 3
CLIENTS = 12
REQUESTS_PER_CLIENT = 25


def _loop_threads(pid: int) -> dict[str, int]:
    """Thread name -> nanoseconds on CPU, for harrec's loop threads (the main thread is loop 0)."""
    found = {}
    for tid, (name, on_cpu_ns) in thread_cpu_ns(pid).items():
        if name.startswith("harrec-loop-") or tid == str(pid):
            found["loop-0" if tid == str(pid) else name.removeprefix("harrec-")] = on_cpu_ns
    return found


def test_connections_spread_over_every_loop(origin, harrec):
    px = harrec.start("--threads", str(LOOPS))
    # Each loop thread names itself once it runs, which may be just after "listening".
    deadline = time.monotonic() + 5
    while len(before := _loop_threads(px.proc.pid)) < LOOPS and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sorted(before) == [f"loop-{i}" for i in range(LOOPS)], \
        f"expected {LOOPS} loop threads named harrec-loop-N, found {sorted(before)}"

    host = f"127.0.0.1:{origin.port}"
    failures = []

    def client(index):
        try:
            with RawConn(port=px.http_port, timeout=10) as c:
                for r in range(REQUESTS_PER_CLIENT):
                    n = 1000 + 97 * index + r
                    c.send(request_bytes("GET", origin.url(f"/bytes?n={n}&seed={index}&c={index}&r={r}"), host))
                    resp = c.read_response()
                    if resp.status != 200 or resp.body != origin_mod.make_bytes(n, index):
                        failures.append(f"client {index} request {r}: status {resp.status}, "
                                        f"{len(resp.body)} bytes")
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(f"client {index}: {e!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not failures, failures[:5]
    after = _loop_threads(px.proc.pid)
    idle = [name for name in before if after.get(name, 0) <= before[name]]
    assert not idle, f"loops that served nothing while {CLIENTS} connections ran: {idle}"

    har = px.stop()
    es = entries(har)
    assert len(es) == CLIENTS * REQUESTS_PER_CLIENT
    keys = set()
    for e in es:
        q = {p["name"]: p["value"] for p in e["request"]["queryString"]}
        keys.add((q["c"], q["r"]))
        n, seed = int(q["n"]), int(q["seed"])
        assert content_bytes(e["response"]["content"]) == origin_mod.make_bytes(n, seed)
    assert len(keys) == CLIENTS * REQUESTS_PER_CLIENT, "an exchange is missing or recorded twice"
    # One upstream connection per client connection, whichever loop served it.
    assert len({e["connection"] for e in es}) == CLIENTS


def _wait_for_requests(origin, count, timeout=5.0):
    deadline = time.time() + timeout
    while origin.stats()["requests"] < count and time.time() < deadline:
        time.sleep(0.02)


def test_graceful_shutdown_waits_on_every_loop(origin, harrec):
    """Short exchanges in flight on every loop finish and are recorded complete."""
    px = harrec.start("--threads", str(LOOPS))
    clients = [background_curl("-x", px.http_proxy, origin.url(f"/slow?ms=150&chunks=4&i={i}"))
               for i in range(LOOPS * 2)]
    try:
        _wait_for_requests(origin, len(clients))
        har = px.stop()
        outs = [c.communicate(timeout=10)[0] for c in clients]
    finally:
        for c in clients:
            c.kill()
    assert outs == [origin_mod.slow_body(4)] * len(clients)
    es = entries(har)
    assert len(es) == len(clients)
    for e in es:
        assert "_error" not in e, e.get("_error")
        assert content_bytes(e["response"]["content"]) == origin_mod.slow_body(4)


def test_second_sigint_aborts_on_every_loop(origin, harrec):
    px = harrec.start("--threads", str(LOOPS))
    clients = [background_curl("-x", px.http_proxy, origin.url(f"/hang?i={i}")) for i in range(LOOPS * 2)]
    try:
        _wait_for_requests(origin, len(clients))
        px.proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        t0 = time.time()
        har = px.stop(sig=signal.SIGINT, timeout=10)
        took = time.time() - t0
    finally:
        for c in clients:
            c.kill()
            c.wait()
    assert took < 1.5, f"the second SIGINT took {took:.1f} s to end harrec"
    es = entries(har)
    assert len(es) == len(clients)
    for e in es:
        assert e["response"]["status"] == 0 and "aborted" in e["_error"], e.get("_error")


@pytest.mark.parametrize("value", ["0", "17", "two", "-1"])
def test_bad_threads_value(value, tmp_path):
    p = subprocess.run([HARREC_BIN, "record", "--http", "0", "--out", str(tmp_path / "x.har"),
                        "--threads", value], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "--threads needs a number from 1 to 16" in p.stderr
    assert not (tmp_path / "x.har").exists()
