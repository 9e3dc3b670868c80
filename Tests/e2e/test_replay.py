"""`harrec replay SESSION.har` (issue 17): the recorder's front end serving a HAR with the real
origin stopped. Real clients (curl, python) through the HTTP and SOCKS5 ports, http and https
(trusting harrec's CA); responses byte-identical to the recording and repeats in recorded order;
599 with HARMocking's diagnosis for what matches nothing; resets, latency, host maps, pages,
recorded failures, and the exit summary with --strict.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import HARREC_BIN, content_bytes, curl, entries


def record(harrec_tls, origin, https_origin, marks=False):
    """Records a small session: repeats that differ, JSON POSTs told apart by body, binary and
    compressed bodies, over http and https. Returns (px, har path, har)."""
    px = harrec_tls.start("--no-redact")
    base, secure = origin.base_url, https_origin.base_url
    for _ in range(3):
        assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{base}/counter?k=a").rc == 0
    for n in (1, 2):
        assert curl("-x", px.http_proxy, "-o", "/dev/null", "-H", "Content-Type: application/json",
                    "--data-binary", json.dumps({"n": n}), f"{base}/echo").rc == 0
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{base}/bytes?n=5000&seed=3").rc == 0
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{base}/gzip").rc == 0
    if marks:
        assert curl("-x", px.http_proxy, "-o", "/dev/null", "http://harrec/mark?name=second").rc == 0
    for _ in range(2):
        assert curl("-x", px.http_proxy, "--cacert", px.ca_pem, "-o", "/dev/null",
                    f"{secure}/counter?k=s").rc == 0
    har = px.stop()
    origin.stop()
    https_origin.stop()
    return px, px.har_path, har


def replay(harrec, px, har_path, *args):
    return harrec.start("--ca-dir", px.ca_dir, *args, replay=har_path)


def recorded_bodies(har, path_part):
    return [content_bytes(e["response"]["content"]) for e in entries(har) if path_part in e["request"]["url"]]


def test_replay_serves_the_recording_to_real_clients_with_the_origin_stopped(harrec, harrec_tls, origin, https_origin):
    px, har_path, har = record(harrec_tls, origin, https_origin)
    base, secure = origin.base_url, https_origin.base_url
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", origin.port), timeout=1).close()
    rp = replay(harrec, px, har_path)

    # Repeats in recorded order through both ports; the last one repeats.
    counters = recorded_bodies(har, "/counter?k=a")
    assert [json.loads(b)["n"] for b in counters] == [1, 2, 3]
    got = [curl("-x", rp.http_proxy, f"{base}/counter?k=a").out,
           curl("--socks5-hostname", f"127.0.0.1:{rp.socks_port}", f"{base}/counter?k=a").out,
           curl("-x", rp.socks_proxy, f"{base}/counter?k=a").out,
           curl("-x", rp.http_proxy, f"{base}/counter?k=a").out]
    assert got == counters + [counters[-1]]

    # JSON bodies told apart by value (key spacing differs from the recording), byte-exact answers.
    echo = recorded_bodies(har, "/echo")
    r = curl("-x", rp.http_proxy, "-H", "Content-Type: application/json", "--data-binary", '{ "n" : 2 }', f"{base}/echo")
    assert r.out == echo[1]
    # Binary and decoded bodies, byte for byte, from a python client.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": rp.http_proxy}))
    with opener.open(f"{base}/bytes?n=5000&seed=3", timeout=10) as response:
        assert response.read() == recorded_bodies(har, "/bytes")[0]
        assert response.headers["Content-Type"] == "application/octet-stream"
    with opener.open(f"{base}/gzip", timeout=10) as response:
        assert response.read() == recorded_bodies(har, "/gzip")[0]
        assert response.headers.get("Content-Encoding") is None, "the recorded body is served decoded"

    # https through CONNECT and SOCKS5, the client trusting harrec's CA.
    secure_bodies = recorded_bodies(har, "/counter?k=s")
    r1 = curl("-x", rp.http_proxy, "--cacert", px.ca_pem, f"{secure}/counter?k=s")
    r2 = curl("-x", rp.socks_proxy.replace("socks5", "socks5h"), "--cacert", px.ca_pem, f"{secure}/counter?k=s")
    assert (r1.rc, r2.rc) == (0, 0), r1.err + r2.err
    assert [r1.out, r2.out] == secure_bodies
    assert rp.wait_for_stderr(r"GET https://127\.0\.0\.1:\d+/counter\?k=s 200 replayed")

    assert rp.finish() == 0
    assert "harrec replay: served 9 requests" in rp.stderr_text
    assert "harrec replay: 1 recorded item was never served:\n  #4 POST /echo" in rp.stderr_text, rp.stderr_text


def test_unmatched_requests_get_599_with_the_diagnosis_and_strict_fails(harrec, harrec_tls, origin, https_origin):
    px, har_path, _ = record(harrec_tls, origin, https_origin)
    rp = replay(harrec, px, har_path, "--strict")
    r = curl("-x", rp.http_proxy, "-w", "\n%{http_code}", f"{origin.base_url}/counter?k=zzz")
    body, status = r.out.rsplit(b"\n", 1)
    assert status == b"599"
    text = body.decode()
    assert f"harrec replay: no response for GET {origin.base_url}/counter?k=zzz" in text
    assert "Nearest candidates:" in text and 'query item "k": expected "a", got "zzz"' in text
    assert "--ignore-query k" in text
    assert rp.wait_for_stderr(r"/counter\?k=zzz 599 no recorded response: Nearest candidates")
    assert rp.finish() == 1, "--strict: something went unserved and a request matched nothing"
    assert "1 request matched nothing (answered 599):" in rp.stderr_text
    assert f"  GET {origin.base_url}/counter?k=zzz" in rp.stderr_text
    assert "9 recorded items were never served:" in rp.stderr_text and "  #4 POST /echo" in rp.stderr_text


def test_ignore_query_matches_any_value(harrec, harrec_tls, origin, https_origin):
    px, har_path, har = record(harrec_tls, origin, https_origin)
    rp = replay(harrec, px, har_path, "--ignore-query", "k")
    r = curl("-x", rp.http_proxy, f"{origin.base_url}/counter?k=other")
    assert r.out == recorded_bodies(har, "/counter?k=a")[0]


def test_resets_restart_the_queues(harrec, harrec_tls, origin, https_origin):
    px, har_path, har = record(harrec_tls, origin, https_origin)
    counters = recorded_bodies(har, "/counter?k=a")
    rp = replay(harrec, px, har_path, "--reset-on", "POST /echo")
    url = f"{origin.base_url}/counter?k=a"
    assert curl("-x", rp.http_proxy, url).out == counters[0]
    assert curl("-x", rp.http_proxy, url).out == counters[1]
    r = subprocess.run([HARREC_BIN, "replay", "--reset", "--proxy", f"127.0.0.1:{rp.http_port}"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "replay queues restarted" in r.stdout, r.stderr
    assert curl("-x", rp.http_proxy, url).out == counters[0]
    assert curl("-x", rp.http_proxy, url).out == counters[1]
    assert curl("-x", rp.http_proxy, "http://harrec/reset").out == b"harrec: replay queues restarted\n"
    assert curl("-x", rp.http_proxy, url).out == counters[0]
    # --reset-on: served, then every queue restarts.
    curl("-x", rp.http_proxy, "-H", "Content-Type: application/json", "--data-binary", '{"n":1}', f"{origin.base_url}/echo")
    assert curl("-x", rp.http_proxy, url).out == counters[0]
    assert rp.wait_for_stderr(r"replay queues restarted \(POST ")
    assert rp.finish() == 0


def test_reset_without_a_replay_fails_clearly(closed_port):
    r = subprocess.run([HARREC_BIN, "replay", "--reset", "--proxy", f"127.0.0.1:{closed_port}"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and "no replay at" in r.stderr


def test_host_map_serves_another_address_from_the_recorded_host(harrec, harrec_tls, origin, https_origin, closed_port):
    px, har_path, har = record(harrec_tls, origin, https_origin)
    rp = replay(harrec, px, har_path, "--host-map", f"127.0.0.1=localhost:{closed_port}")
    r = curl("-x", rp.http_proxy, f"http://localhost:{closed_port}/counter?k=a")
    assert r.out == recorded_bodies(har, "/counter?k=a")[0]
    r = curl("-x", rp.http_proxy, "-w", "%{http_code}", "-o", "/dev/null", f"http://localhost:{closed_port + 1}/counter?k=a")
    assert r.out == b"599", "another port is not mapped"


def test_page_serves_one_scenario(harrec, harrec_tls, origin, https_origin):
    px, har_path, har = record(harrec_tls, origin, https_origin, marks=True)
    assert [p["title"] for p in har["log"]["pages"]] == ["second"]
    rp = replay(harrec, px, har_path, "--page", "second")
    r = curl("-x", rp.http_proxy, "--cacert", px.ca_pem, f"{https_origin.base_url}/counter?k=s")
    assert r.out == recorded_bodies(har, "/counter?k=s")[0]
    r = curl("-x", rp.http_proxy, "-w", "%{http_code}", "-o", "/dev/null", f"{origin.base_url}/counter?k=a")
    assert r.out == b"599", "entries before the page are not served"
    assert "(page second)" in curl("-x", rp.http_proxy, f"{origin.base_url}/counter?k=a").out.decode()
    bad = subprocess.run([HARREC_BIN, "replay", str(har_path), "--page", "nope", "--http", "0"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "nope" in bad.stderr


def test_recorded_latency_and_recorded_failures(harrec, harrec_tls, origin):
    px = harrec_tls.start("--no-redact")
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/slow?ms=150&chunks=3").rc == 0
    r = curl("-x", px.http_proxy, "-w", "%{http_code}", "-o", "/dev/null", f"{origin.base_url}/reset")
    assert r.out == b"502", "the origin reset the connection while recording"
    har = px.stop()
    origin.stop()
    slow = next(e for e in entries(har) if "/slow" in e["request"]["url"])
    recorded_ms = slow["timings"]["wait"] + slow["timings"]["receive"]
    assert recorded_ms >= 250
    failed = next(e for e in entries(har) if e["request"]["url"].endswith("/reset"))
    assert failed["response"]["status"] == 502 and failed["_error"], "the entry shows harrec's 502"
    assert failed["response"]["content"]["text"] == f"harrec: {failed['_error']}\n"

    timed = {}
    for latency in ("none", "recorded"):
        rp = replay(harrec, px, px.har_path, "--latency", latency)
        start = time.monotonic()
        r = curl("-x", rp.http_proxy, f"{origin.base_url}/slow?ms=150&chunks=3")
        timed[latency] = time.monotonic() - start
        assert r.out == content_bytes(slow["response"]["content"])
        # What the client saw when recording, it sees again: harrec's 502 with the reason.
        r = curl("-x", rp.http_proxy, "-w", "\n%{http_code}", f"{origin.base_url}/reset")
        assert r.rc == 0 and r.out == f"harrec: {failed['_error']}\n\n502".encode(), (r.rc, r.out, r.err)
        assert rp.finish() == 0
    # A lower bound only (the recorded time is a floor for a replay that honours it).
    assert timed["recorded"] >= recorded_ms / 1000 * 0.9, timed


def test_responses_cut_short_replay_as_the_client_saw_them(harrec, harrec_tls, origin, https_origin):
    """An upstream that closed mid-body, and a client that gave up mid-body: curl saw the head
    and part of the body, then a broken transfer (exit 18) or its own timeout (exit 28). The
    replay gives it the same bytes and the same end. curl offers h2 over https; the recording
    spoke HTTP/1.1 with that origin, and so does the replay."""
    px = harrec_tls.start("--no-redact")
    cut_url, tls_cut_url = f"{origin.base_url}/close-mid-body", f"{https_origin.base_url}/close-mid-body"
    stall_url = f"{origin.base_url}/slow?ms=3000&chunks=3"

    def run(proxy):
        return {"http": curl("-x", proxy, cut_url),
                "https": curl("-x", proxy, "--cacert", px.ca_pem, "-w", "%{http_version}", tls_cut_url),
                "gave up": curl("-x", proxy, stall_url, max_time=1.5)}

    recorded = run(px.http_proxy)
    assert [r.rc for r in recorded.values()] == [18, 18, 28], {k: (r.rc, r.err) for k, r in recorded.items()}
    assert recorded["https"].out.endswith(b"1.1")
    assert len(recorded["http"].out) == 100 and recorded["gave up"].out, "part of each body arrived"
    har = px.stop()
    origin.stop()
    https_origin.stop()
    cut = [e for e in entries(har) if "/close-mid-body" in e["request"]["url"]]
    assert [e["response"]["status"] for e in cut] == [200, 200] and all("mid-body" in e["_error"] for e in cut)
    (stalled,) = [e for e in entries(har) if "/slow" in e["request"]["url"]]
    assert stalled["response"]["status"] == 200 and stalled["_error"].startswith("client closed the connection after")

    rp = replay(harrec, px, px.har_path)
    replayed = run(rp.http_proxy)
    for name, r in replayed.items():
        assert (r.rc, r.out) == (recorded[name].rc, recorded[name].out), (name, r.rc, r.err, recorded[name].err)
    assert rp.finish() == 0


def test_bad_har_and_bad_options_fail_before_listening(harrec, tmp_path):
    bad = tmp_path / "bad.har"
    bad.write_text("{not json")
    for args, needle in [([str(bad)], "is not a HAR file"), ([str(tmp_path / "missing.har")], "cannot read"),
                         ([str(bad), "--latency", "fast"], ""), ([str(bad), "--reset-on", "GET"], "")]:
        r = subprocess.run([HARREC_BIN, "replay", *args, "--http", "0"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (args, r.stderr)
        assert needle in r.stderr


CONSISTENCY_TABLE = Path(__file__).resolve().parent.parent / "HARMockingTests" / "Fixtures" / "replay-consistency.json"


def test_the_shared_consistency_table_through_harrec_replay(harrec, tmp_path):
    """The table HARMockingTests' ReplayConsistencyTests runs through HARReplayProtocol: the same
    requests give the same outcomes here (599 stands for UnmatchedRequestError, a closed
    connection for the recorded failure)."""
    table = json.loads(CONSISTENCY_TABLE.read_text())
    har = tmp_path / "table.har"
    har.write_text(json.dumps(table["har"]))
    rp = harrec.start(replay=har)
    assert len(table["steps"]) > 10
    for number, step in enumerate(table["steps"], 1):
        if step.get("reset"):
            assert curl("-x", rp.http_proxy, "http://harrec/reset").rc == 0
            continue
        what = f"step {number}: {step['method']} {step['url']}"
        conn = http.client.HTTPConnection("127.0.0.1", rp.http_port, timeout=10)
        body = step.get("body")
        headers = {"Host": step["url"].split("/")[2]}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(step["method"], step["url"], body=body.encode() if body is not None else None, headers=headers)
            response = conn.getresponse()
            status, data = response.status, response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            status, data = None, None
        finally:
            conn.close()
        expect = step["expect"]
        if expect == "failure":
            assert status is None, f"{what}: a recorded failure closes the connection, got {status}"
        elif "unmatched" in expect:
            assert status == 599, what
            assert expect["unmatched"] in data.decode(), f"{what}: {data.decode()}"
        else:
            assert (status, data) == (expect["status"], base64.b64decode(expect["body_base64"])), what
    assert rp.finish() == 0


def query_har(tmp_path: Path) -> Path:
    """`/q` recorded before `/q?v=1` and `/q?v=2` (issue 33): a HAR written by hand."""
    def entry(url, text):
        return {"startedDateTime": "2026-12-06T00:00:00.000Z", "time": 1,
                "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                            "queryString": [], "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                             "headers": [{"name": "Content-Type", "value": "text/plain"}],
                             "content": {"size": len(text), "mimeType": "text/plain", "text": text},
                             "redirectURL": "", "headersSize": -1, "bodySize": len(text)},
                "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
    har = {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"},
                   "entries": [entry("http://replay.test/q", "plain"), entry("http://replay.test/q?v=1", "one"),
                               entry("http://replay.test/q?v=2", "two")]}}
    path = tmp_path / "query.har"
    path.write_text(json.dumps(har))
    return path


def fetch(rp, url):
    r = curl("-x", rp.http_proxy, "-w", "\n%{http_code}", url)
    body, status = r.out.rsplit(b"\n", 1)
    return int(status), body.decode()


def test_query_items_match_exactly_by_default(harrec, tmp_path):
    rp = harrec.start(replay=query_har(tmp_path))
    assert fetch(rp, "http://replay.test/q?v=2") == (200, "two")
    assert fetch(rp, "http://replay.test/q?v=1") == (200, "one")
    assert fetch(rp, "http://replay.test/q") == (200, "plain")
    status, text = fetch(rp, "http://replay.test/q?v=3")
    assert status == 599, "never recorded"
    status, text = fetch(rp, "http://replay.test/q?v=1&extra=9")
    assert status == 599, text
    assert 'query item "extra=9": not in the recorded request' in text
    assert "--ignore-query extra, or with --match-query subset" in text
    assert ".present" not in text and "unlistedQueryItems" not in text, "the advice names flags, not Swift"
    assert rp.finish() == 0


def test_match_query_subset_prefers_the_most_specific_item(harrec, tmp_path):
    rp = harrec.start("--match-query", "subset", replay=query_har(tmp_path))
    assert fetch(rp, "http://replay.test/q?extra=9&v=1") == (200, "one")
    assert fetch(rp, "http://replay.test/q?v=2&x=1") == (200, "two")
    assert fetch(rp, "http://replay.test/q?v=3") == (200, "plain")
    assert rp.finish() == 0
    bad = subprocess.run([HARREC_BIN, "replay", str(query_har(tmp_path)), "--match-query", "loose"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "--match-query is exact or subset, not 'loose'" in bad.stderr


def large_body_har(path: Path, count: int, size: int) -> list[bytes]:
    """A HAR of `count` binary downloads of `size` bytes each (base64 in the file) and one small
    text answer, written by hand. Returns the bodies."""
    bodies = [bytes((k * 7 + i) & 0xFF for i in range(256)) * (size // 256) for k in range(count)]
    def entry(url, content):
        return {"startedDateTime": "2026-12-06T00:00:00.000Z", "time": 1,
                "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                            "queryString": [], "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                             "headers": [{"name": "Content-Type", "value": content["mimeType"]}], "content": content,
                             "redirectURL": "", "headersSize": -1, "bodySize": content["size"]},
                "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
    items = [entry(f"http://files.test/blob/{k}", {"size": size, "mimeType": "application/octet-stream",
                                                    "encoding": "base64", "text": base64.b64encode(body).decode()})
             for k, body in enumerate(bodies)]
    items.append(entry("http://files.test/small", {"size": 5, "mimeType": "text/plain", "text": "small"}))
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": items}}))
    return bodies


def test_large_bodies_stay_in_the_file_until_served(harrec, tmp_path):
    """Issue 34: a replay holds no large response body; each is read from the HAR when served,
    byte-exact. Memory after loading 12 x 3 MB bodies is within 25 MB of loading one small
    entry's HAR. A HAR replaced by renaming is still the one loaded; one truncated in place
    gives a 502 that says so, and the replay goes on."""
    from helpers import vmrss_kib
    small = tmp_path / "small.har"
    large_body_har(small, 0, 0)
    baseline = harrec.start(replay=small)
    base_kib = vmrss_kib(baseline.proc.pid)
    assert baseline.finish() == 0

    har = tmp_path / "large.har"
    bodies = large_body_har(har, 12, 3 << 20)
    assert har.stat().st_size > 12 * 4 << 20
    rp = harrec.start(replay=har)
    loaded_kib = vmrss_kib(rp.proc.pid)
    assert loaded_kib - base_kib < 25 << 10, f"RSS {loaded_kib} KiB after loading, {base_kib} KiB for a small HAR"
    for k in (11, 0, 11):
        assert curl("-x", rp.http_proxy, f"http://files.test/blob/{k}").out == bodies[k]
    assert fetch(rp, "http://files.test/small") == (200, "small")

    # Replaced by renaming (as harrec writes a HAR): the loaded file is still read.
    other = tmp_path / "other.har"
    large_body_har(other, 0, 0)
    os.replace(other, har)
    assert curl("-x", rp.http_proxy, "http://files.test/blob/3").out == bodies[3]
    assert rp.finish() == 0

    # Truncated in place while replaying: a 502 naming the item, not a crash.
    bodies = large_body_har(har, 4, 2 << 20)
    rp = harrec.start(replay=har)
    with open(har, "r+b") as f:
        f.truncate(har.stat().st_size // 2)
    status, text = fetch(rp, "http://files.test/blob/3")
    assert status == 502 and "could not be read again from the HAR (entry 4)" in text, (status, text)
    assert curl("-x", rp.http_proxy, "http://files.test/blob/0").out == bodies[0]
    assert fetch(rp, "http://files.test/small") == (200, "small")
    assert rp.finish() == 0


def streamed_body_har(path: Path) -> tuple[bytes, bytes]:
    """A HAR with a 64 MB binary download (base64) over http and a 12 MB JSON answer full of
    escapes (quotes, non-ASCII, surrogate pairs as `\\ud83d\\ude00`) over https, recorded as
    HTTP/2. Returns the two bodies."""
    binary = bytes((i * 131 + (i >> 10)) & 0xFF for i in range(1 << 20)) * 64
    records = [{"id": i, "name": f"caf\u00e9 \"{i}\" \\ \U0001F600", "tab": "\t"} for i in range(120_000)]
    text = json.dumps(records)  # ASCII, with \uXXXX escapes for the rest
    def entry(url, version, content):
        return {"startedDateTime": "2026-12-07T00:00:00.000Z", "time": 1,
                "request": {"method": "GET", "url": url, "httpVersion": version, "cookies": [], "headers": [],
                            "queryString": [], "headersSize": -1, "bodySize": 0},
                "response": {"status": 200, "statusText": "OK", "httpVersion": version, "cookies": [],
                             "headers": [{"name": "Content-Type", "value": content["mimeType"]}], "content": content,
                             "redirectURL": "", "headersSize": -1, "bodySize": -1},
                "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
    items = [entry("http://files.test/video.bin", "HTTP/1.1",
                   {"size": len(binary), "mimeType": "application/octet-stream", "encoding": "base64",
                    "text": base64.b64encode(binary).decode()}),
             entry("https://api.test/catalog.json", "HTTP/2", {"size": len(text), "mimeType": "application/json", "text": text})]
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": items}}))
    return binary, text.encode()


def test_a_large_body_streams_from_the_file_as_the_client_takes_it(harrec, tmp_path):
    """Issue 34: a body left in the HAR file is read a piece at a time as the client takes it,
    over HTTP/1.1, TLS and HTTP/2 (streams multiplexed): byte-exact, with memory while serving
    within 40 MB of the loaded replay (the 64 MB body was held three times over before). A file
    truncated in place while a slow client downloads cuts that answer short, which the client
    sees, and the live log says why."""
    from helpers import PeakRSS, vmrss_kib
    har = tmp_path / "streamed.har"
    binary, text = streamed_body_har(har)
    rp = harrec.start(replay=har)
    loaded = vmrss_kib(rp.proc.pid)
    with PeakRSS(rp.proc.pid) as peak:
        assert curl("-x", rp.http_proxy, "http://files.test/video.bin", max_time=60).out == binary
        # A slow reader: the pieces wait for it.
        slow = curl("-x", rp.http_proxy, "--limit-rate", "40M", "http://files.test/video.bin", max_time=60)
        assert slow.rc == 0 and slow.out == binary
        h2 = curl("-x", rp.http_proxy, "-k", "--http2", "-w", "\n%{http_version}", "https://api.test/catalog.json",
                  max_time=60)
        assert h2.rc == 0 and h2.out.rsplit(b"\n", 1) == [text, b"2"], h2.err
        # Three streams at once on one connection, at different speeds of the client's windows.
        outs = [tmp_path / f"par{k}.json" for k in range(3)]
        par = curl("-x", rp.http_proxy, "-k", "--http2", "-Z", "--limit-rate", "20M",
                   *[a for o in outs for a in ("-o", str(o), "https://api.test/catalog.json")], max_time=60)
        assert par.rc == 0, par.err
        assert all(o.read_bytes() == text for o in outs)
    assert peak.kib - loaded < 40 << 10, f"RSS peaked at {peak.kib} KiB serving, {loaded} KiB once loaded"

    # Truncated in place while a slow client downloads: its answer is cut; the next is served.
    slow = subprocess.Popen(["curl", "-q", "-sS", "--max-time", "60", "-x", rp.http_proxy, "--limit-rate", "8M",
                             "-o", str(tmp_path / "cut.bin"), "http://files.test/video.bin"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    with open(har, "r+b") as f:
        f.truncate(har.stat().st_size // 4)
    assert slow.wait(timeout=60) == 18, slow.stderr.read()  # curl: partial file
    assert (tmp_path / "cut.bin").stat().st_size < len(binary)
    assert rp.finish() == 0
    assert "could not be read again from the HAR" in rp.stderr_text + rp.stdout_data.decode(errors="replace")


FOREIGN_HAR = Path(__file__).resolve().parents[2] / "Fixtures" / "har" / "mitmproxy-12.3.1-sample.har"


@pytest.mark.parametrize("writer", ["mitmproxy", "chrome"])
def test_a_failure_recorded_inside_the_response_is_replayed_as_one(harrec, tmp_path, writer):
    """mitmproxy 12 and Chrome DevTools write a failed request's `_error` in `response`, not beside
    it: the replay fails that request as recorded (the connection closes, no answer), not with 599."""
    har = json.loads(FOREIGN_HAR.read_text())
    failed = next(e for e in har["log"]["entries"] if e["request"]["url"].endswith("/refused"))
    assert failed["response"]["status"] == 0 and "_error" in failed["response"] and "_error" not in failed
    if writer == "chrome":
        failed["response"]["_error"] = "net::ERR_CONNECTION_REFUSED"
        failed["response"]["httpVersion"] = ""
    path = tmp_path / f"{writer}.har"
    path.write_text(json.dumps(har))
    rp = harrec.start(replay=path)
    r = curl("-x", rp.http_proxy, "-w", "%{http_code}", "http://127.0.0.1:1/refused")
    assert r.rc == 52 and r.out == b"000", (r.rc, r.out, r.err)  # an empty reply: no 599, no answer
    assert fetch(rp, "http://127.0.0.1:18080/small.json")[0] == 200
    assert rp.finish() == 0
    assert "/refused closed (a recorded failure, item #6 GET /refused)" in rp.stderr_text
