"""Recording filters: --skip-hosts, --record-hosts, --skip-url and --skip-content-type keep a
fixture to the app's own API. What is skipped is still proxied (a skipped host's TLS is relayed
untouched, so a client that trusts only the real server's CA still connects), never reaches the
HAR, and is marked in the live log (or left out with --quiet-skipped).
"""

from __future__ import annotations

from helpers import curl, entries


def test_skipped_traffic_is_proxied_but_not_recorded(harrec_tls, origin, https_origin, test_pki):
    px = harrec_tls.start("--no-redact", "--skip-hosts", r"^localhost:", "--skip-url", r"/status/",
                          "--skip-content-type", "image/*")
    base = origin.base_url
    assert curl("-x", px.http_proxy, f"{base}/json?kept=1").rc == 0
    image = curl("-x", px.http_proxy, f"{base}/bytes?n=777&seed=2&ct=image/png")
    assert image.rc == 0 and len(image.out) == 777
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{base}/status/204").rc == 0
    # Relayed, not intercepted: the client verifies the origin's own certificate (the test CA).
    secure = curl("-x", px.http_proxy, "--cacert", str(test_pki / "ca.pem"), f"https://localhost:{https_origin.port}/json?tls=1")
    assert secure.rc == 0, secure
    assert b'"target": "/json?tls=1"' in secure.out
    assert px.wait_for_stderr(r"GET http://127\.0\.0\.1:\d+/bytes\?n=777.* \(not recorded\)$")
    har = px.stop()
    urls = [e["request"]["url"] for e in entries(har)]
    assert urls == [f"{base}/json?kept=1"], urls
    assert not px.wait_for_stderr(r"/json\?kept=1.*not recorded", timeout=0.1)


def test_record_hosts_keeps_only_the_apps_api_and_quiet_skipped_hides_the_rest(harrec_tls, origin, https_origin, test_pki):
    px = harrec_tls.start("--no-redact", "--record-hosts", r"^127\.0\.0\.1:", "--quiet-skipped")
    assert curl("-x", px.http_proxy, "-o", "/dev/null", f"{origin.base_url}/json?api=1").rc == 0
    other = curl("-x", px.http_proxy, "--cacert", str(test_pki / "ca.pem"), f"https://localhost:{https_origin.port}/json?cdn=1")
    assert other.rc == 0, other
    har = px.stop()
    assert [e["request"]["url"] for e in entries(har)] == [f"{origin.base_url}/json?api=1"]
    assert "cdn=1" not in px.stderr_text


def test_a_bad_filter_is_refused_before_recording(harrec, tmp_path):
    import subprocess
    from helpers import HARREC_BIN
    for args, words in [(["--skip-hosts", "("], "--skip-hosts '(' is not a valid regular expression"),
                        (["--skip-content-type", "png"], "give a media type")]:
        p = subprocess.run([HARREC_BIN, "record", "--out", str(tmp_path / "x.har"), "--http", "0", *args],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2 and words in p.stderr, p.stderr
