"""Shutdown with exchanges in flight, --max-body truncation, start-up and CLI contract."""

import base64
import json
import re
import signal
import subprocess
import time

import pytest

import origin as origin_mod
from helpers import HARREC_BIN, background_curl, content_bytes, curl, entries, one_entry


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_shutdown_with_inflight_request(sig, origin, harrec):
    px = harrec.start()
    assert curl("-x", px.http_proxy, origin.url("/status/200")).rc == 0
    client = background_curl("-x", px.http_proxy, origin.url("/hang"))
    try:
        assert origin.wait_for_request("/hang", 5), "the /hang request never reached the origin"
        t0 = time.time()
        har = px.stop(sig=sig, timeout=10)
        took = time.time() - t0
        assert took < 3.5, f"exit took {took:.1f} s; in-flight exchanges get at most 2 s"
    finally:
        client.kill()
        client.wait()
    hang = one_entry(har, "/hang")
    assert hang.get("_error"), "the aborted in-flight exchange must have _error"
    assert hang["response"]["status"] == 0
    assert one_entry(har, "/status/200")["response"]["status"] == 200
    assert re.search(r"^harrec: wrote 2 entries to .*session\.har$", px.stderr_text, re.M), \
        px.stderr_text


def test_shutdown_lets_short_inflight_finish(origin, harrec):
    """An exchange that completes within the 2 s grace period is recorded complete."""
    px = harrec.start()
    client = background_curl("-x", px.http_proxy, origin.url("/slow?ms=200&chunks=5"))
    try:
        assert origin.wait_for_request("/slow", 5)
        har = px.stop()
        out, _ = client.communicate(timeout=10)
    finally:
        client.kill()
    assert out == origin_mod.slow_body(5)
    e = one_entry(har, "/slow")
    assert "_error" not in e and content_bytes(e["response"]["content"]) == origin_mod.slow_body(5)


def test_shutdown_idle_and_empty(harrec):
    px = harrec.start()
    t0 = time.time()
    har = px.stop()
    assert time.time() - t0 < 2
    assert entries(har) == []
    assert re.search(r"^harrec: wrote 0 entries to ", px.stderr_text, re.M)


def test_har_written_atomically(origin, harrec):
    px = harrec.start()
    curl("-x", px.http_proxy, origin.url("/json"))
    px.stop()
    assert sorted(p.name for p in px.har_path.parent.iterdir()) == ["session.har"], \
        "temporary files left beside the HAR"


def test_max_body_truncation(origin, harrec):
    px = harrec.start("--max-body", "1000")
    r = curl("-x", px.http_proxy, origin.url("/bytes?n=5000&seed=12"))
    assert r.rc == 0 and r.out == origin_mod.make_bytes(5000, 12), "the client gets every byte"
    body = origin_mod.make_bytes(8000, 13)
    r = curl("-x", px.http_proxy, "--data-binary", "@-", origin.url("/echo"), input=body)
    assert r.rc == 0 and r.out == body
    r = curl("-x", px.http_proxy, origin.url("/bytes?n=800&seed=1"))
    assert r.rc == 0
    har = px.stop()
    c = one_entry(har, "/bytes?n=5000")["response"]["content"]
    assert c.get("_truncated") is True
    assert base64.b64decode(c["text"]) == origin_mod.make_bytes(5000, 12)[:1000]
    assert c["size"] >= 1000
    small = one_entry(har, "/bytes?n=800")["response"]["content"]
    assert not small.get("_truncated", False)
    assert base64.b64decode(small["text"]) == origin_mod.make_bytes(800, 1)


def test_startup_lines(harrec, tmp_path):
    px = harrec.start()
    lines = px.stderr_lines[:3]
    assert lines[0] == f"harrec: HTTP proxy listening on 127.0.0.1:{px.http_port}"
    assert lines[1] == f"harrec: SOCKS5 proxy listening on 127.0.0.1:{px.socks_port}"
    line = px.wait_for_stderr(r"^harrec: recording to ", 5)
    assert line == f"harrec: recording to {px.har_path} (Ctrl-C to stop)"
    assert px.http_port != px.socks_port
    px.stop()


def test_quiet_has_no_live_lines(origin, harrec):
    px = harrec.start("--quiet")
    assert curl("-x", px.http_proxy, origin.url("/json?q=1")).rc == 0
    px.stop()
    assert not [ln for ln in px.stderr_lines if "/json?q=1" in ln], px.stderr_text


def test_live_line_format(origin, harrec):
    px = harrec.start()
    url = origin.url("/bytes?n=1500")
    assert curl("-x", px.http_proxy, url).rc == 0
    line = px.wait_for_stderr(re.escape(url), 5)
    assert line, px.stderr_text
    assert re.fullmatch(r"127\.0\.0\.1:\d+ GET " + re.escape(url) +
                        r" 200 \d+(\.\d+)?[kMG]?B \d+(\.\d+)?(µs|us|ms|s)", line), line
    px.stop()


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", "deflate"])
def test_live_line_shows_the_decoded_size(coding, origin, harrec):
    """An encoded body's line says its decoded size beside the wire size: `4.1kB (24.0kB decoded)`."""
    px = harrec.start()
    url = origin.url(f"/{coding}")
    r = curl("-x", px.http_proxy, "-H", f"Accept-Encoding: {coding}", "-o", "/dev/null", "-w", "%{size_download}", url)
    assert r.rc == 0
    line = px.wait_for_stderr(re.escape(url), 5)
    assert line, px.stderr_text
    m = re.fullmatch(r"127\.0\.0\.1:\d+ GET " + re.escape(url) +
                     r" 200 (\d+(?:\.\d+)?)([kM]?)B \((\d+(?:\.\d+)?)([kM]?)B decoded\) \S+", line)
    assert m, line
    scale = {"": 1, "k": 1024, "M": 1 << 20}
    wire = float(m.group(1)) * scale[m.group(2)]
    decoded = float(m.group(3)) * scale[m.group(4)]
    assert abs(wire - int(r.out)) <= max(64, wire * 0.05), (line, r.out)
    assert abs(decoded - len(origin_mod.JSON_DOC)) <= len(origin_mod.JSON_DOC) * 0.05, line
    px.stop()


def test_validate_good_and_bad(harrec, origin, tmp_path):
    px = harrec.start()
    for _ in range(2):
        assert curl("-x", px.http_proxy, "-o", "/dev/null", origin.url("/json")).rc == 0
    har = px.stop()
    assert len(entries(har)) == 2
    p = subprocess.run([HARREC_BIN, "validate", str(px.har_path)], capture_output=True, text=True)
    assert p.returncode == 0
    assert p.stdout.strip() == f"{px.har_path}: valid HAR 1.2 (2 entries)"
    # HAR 1.2 asks readers to ignore a byte-order mark: the same file with one is the same HAR.
    bom = tmp_path / "bom.har"
    bom.write_bytes(b"\xef\xbb\xbf" + px.har_path.read_bytes())
    p = subprocess.run([HARREC_BIN, "validate", str(bom)], capture_output=True, text=True)
    assert (p.returncode, p.stdout.strip()) == (0, f"{bom}: valid HAR 1.2 (2 entries)"), p.stderr
    bad = tmp_path / "bad.har"
    bad.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "x"},
                                       "entries": [{"startedDateTime": "yesterday"}]}}))
    p = subprocess.run([HARREC_BIN, "validate", str(bad)], capture_output=True, text=True)
    assert p.returncode == 1
    problems = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    assert problems and all(": " in ln for ln in problems), problems
    notjson = tmp_path / "notjson.har"
    notjson.write_text("{not json")
    assert subprocess.run([HARREC_BIN, "validate", str(notjson)], capture_output=True).returncode == 1


def test_version_and_help():
    for flag in ("--version", "--help"):
        p = subprocess.run([HARREC_BIN, flag], capture_output=True, text=True, timeout=10)
        assert p.returncode == 0 and (p.stdout + p.stderr).strip(), flag


def test_bad_arguments_fail():
    p = subprocess.run([HARREC_BIN, "record", "--no-such-option"], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode != 0 and p.stderr.strip()
