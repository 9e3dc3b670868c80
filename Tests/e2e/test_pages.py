"""Scenario markers while recording (issue 17): `harrec mark NAME` and requests to the reserved
host `http://harrec/` through the proxy start HAR pages; entries get the `pageref` of the page
current when their request started; the reserved host is answered by harrec, never forwarded and
never an entry, and serves the CA certificate. Pages survive kill -9 through the journal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from helpers import HARREC_BIN, curl, entries


def mark(px, name, env=None):
    return subprocess.run([HARREC_BIN, "mark", name, "--proxy", f"127.0.0.1:{px.http_port}"],
                          capture_output=True, text=True, timeout=30, env=env)


def by_url_tail(har):
    return [(e.get("pageref"), e["request"]["url"].rsplit("/", 1)[1]) for e in entries(har)]


def test_marks_start_pages_and_entries_follow_them(harrec_tls, origin, test_pki):
    px = harrec_tls.start("--no-redact")
    base = origin.base_url
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{base}/json?step=before").rc == 0
    r = mark(px, "log in")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == 'harrec: scenario "log in" starts now'
    for step in ("a", "b"):
        assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{base}/json?step={step}").rc == 0
    # Any client can mark through the proxy, here with a name that needs percent-encoding.
    r = curl("-x", px.http_proxy, "http://harrec/mark?name=operator%20answers%20%E2%9C%93")
    assert r.rc == 0 and "starts now" in r.out.decode()
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{base}/json?step=c").rc == 0
    assert px.wait_for_stderr(r"=+ scenario: log in =+"), px.stderr_text
    har = px.stop()
    pages = har["log"]["pages"]
    assert [(p["id"], p["title"]) for p in pages] == [("page_1", "log in"), ("page_2", "operator answers \u2713")]
    assert all(p["pageTimings"] == {"onContentLoad": -1, "onLoad": -1} for p in pages)
    assert pages[0]["startedDateTime"] < pages[1]["startedDateTime"]
    assert by_url_tail(har) == [(None, "json?step=before"), ("page_1", "json?step=a"), ("page_1", "json?step=b"),
                                ("page_2", "json?step=c")]
    assert not any("harrec/" in e["request"]["url"] for e in entries(har)), "the reserved host is never an entry"
    paths = [r["path"] for r in origin.requests()]
    assert len(paths) == 4 and "/mark" not in paths, f"the origin saw only the four requests: {paths}"


def test_reserved_host_serves_the_ca_and_needs_proxy_credentials(harrec_tls):
    px = harrec_tls.start("--no-redact", "--proxy-auth", "ann:s3cret-pw")
    r = mark(px, "x", env={k: v for k, v in os.environ.items() if k != "HARREC_PROXY_AUTH"})
    assert r.returncode == 1 and "407" in r.stderr, r.stderr
    r = mark(px, "checkout", env={**os.environ, "HARREC_PROXY_AUTH": "ann:s3cret-pw"})
    assert r.returncode == 0, r.stderr
    r = curl("-x", px.http_proxy, "--proxy-user", "ann:s3cret-pw", "http://harrec/ca.pem")
    assert r.rc == 0 and r.out == px.ca_pem.read_bytes(), "the CA certificate, byte for byte"
    assert b"PRIVATE" not in r.out
    r = curl("-x", px.http_proxy, "--proxy-user", "ann:s3cret-pw", "-w", "%{http_code}", "-o", "/dev/null",
             "http://harrec/nothing-here")
    assert r.out.decode() == "404"
    har = px.stop()
    assert [p["title"] for p in har["log"]["pages"]] == ["checkout"]
    assert "s3cret-pw" not in px.stderr_text


def test_mark_without_a_recorder_fails_clearly(closed_port):
    r = subprocess.run([HARREC_BIN, "mark", "x", "--proxy", f"127.0.0.1:{closed_port}"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1
    assert "no recorder at" in r.stderr and "refused" in r.stderr.lower()


def test_pages_survive_kill_9(harrec_tls, origin):
    px = harrec_tls.start("--no-redact")
    assert mark(px, "first").returncode == 0
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json?k=1").rc == 0
    assert mark(px, "second").returncode == 0
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json?k=2").rc == 0
    time.sleep(1.0)  # the journal writer syncs at least every 500 ms
    px.proc.send_signal(signal.SIGKILL)
    px.proc.wait(10)
    r = subprocess.run([HARREC_BIN, "recover", str(px.har_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    import json
    har = json.loads(px.har_path.read_text())
    assert [p["title"] for p in har["log"]["pages"]] == ["first", "second"]
    assert by_url_tail(har) == [("page_1", "json?k=1"), ("page_2", "json?k=2")]


def test_page_titles_are_redacted_like_any_other_text(harrec_tls, origin):
    """Default redaction covers page titles: an email in a scenario name does not survive."""
    px = harrec_tls.start()
    assert mark(px, "support chat with ann.lee@acmemail.io").returncode == 0
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json").rc == 0
    har = px.stop()
    (page,) = har["log"]["pages"]
    assert "ann.lee@acmemail.io" not in px.har_text
    assert page["title"].startswith("support chat with ") and page["title"] != "support chat with ann.lee@acmemail.io"


def test_generate_one_page(harrec_tls, origin, tmp_path):
    px = harrec_tls.start()
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json?s=0").rc == 0
    assert mark(px, "browse feed").returncode == 0
    for i in (1, 2):
        assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json?s={i}").rc == 0
    assert mark(px, "log in").returncode == 0
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json?s=3").rc == 0
    px.stop()
    out = tmp_path / "gen"
    r = subprocess.run([HARREC_BIN, "generate", str(px.har_path), "--page", "browse feed", "--out", str(out),
                        "--fixtures", str(out / "fx")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    source = (out / "BrowseFeedHTTPScenario.swift").read_text()
    assert "(2 responses)" in source
    assert '.equals("s", "1")' in source and '.equals("s", "2")' in source and '.equals("s", "3")' not in source
    r = subprocess.run([HARREC_BIN, "generate", str(px.har_path), "--page", "checkout", "--out", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and 'no page titled "checkout"' in r.stderr and '"log in" (page_2)' in r.stderr


def test_mark_through_socks5(harrec_tls, origin):
    """A SOCKS5 client reaches http://harrec/ too (curl resolves nothing: the proxy gets the name)."""
    px = harrec_tls.start("--no-redact")
    r = curl("--socks5-hostname", f"127.0.0.1:{px.socks_port}", "http://harrec/mark?name=from%20socks")
    assert r.rc == 0 and "starts now" in r.out.decode(), r.err
    assert curl("--socks5-hostname", f"127.0.0.1:{px.socks_port}", "-o", "/dev/null", f"{origin.base_url}/json").rc == 0
    har = px.stop()
    assert [p["title"] for p in har["log"]["pages"]] == ["from socks"]
    assert [e.get("pageref") for e in entries(har)] == ["page_1"]


def test_the_reserved_host_over_https(harrec_tls, origin):
    """`https://harrec/` (issue 33, item 5): a CONNECT or SOCKS5 tunnel to harrec:443 is
    intercepted with a leaf from harrec's CA and answered by harrec, with no DNS lookup; the
    mark starts a page, and nothing about it is an entry."""
    px = harrec_tls.start("--no-redact")
    r = curl("-x", px.http_proxy, "--cacert", px.ca_pem, "-w", "\n%{http_code}", "https://harrec/ca.pem")
    assert r.rc == 0, r.err
    pem, status = r.out.rsplit(b"\n", 1)
    assert status == b"200" and pem == open(px.ca_pem, "rb").read()
    r = curl("--socks5-hostname", f"127.0.0.1:{px.socks_port}", "--cacert", px.ca_pem,
             "https://harrec/mark?name=over%20tls")
    assert r.rc == 0 and "starts now" in r.out.decode(), r.err
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json").rc == 0
    har = px.stop()
    assert "DNS" not in px.stderr_text, px.stderr_text
    assert [p["title"] for p in har["log"]["pages"]] == ["over tls"]
    assert [(e.get("pageref"), e["request"]["url"].endswith("/json")) for e in entries(har)] == [("page_1", True)]
