"""--upstream-proxy: every upstream connection goes through a company proxy. Debian's squid plays
the company's HTTP proxy (open, with Basic credentials, and refusing everything), and a second
harrec plays a SOCKS5 proxy. Requests are recorded as usual, the proxy's log shows the tunnels,
a refusal is a 502 whose reason names the proxy (and an entry), and credentials appear in no
output, log or HAR.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from helpers import HARREC_BIN, curl, entries, free_port, need_tool, stop_process


class Squid:
    def __init__(self, rules: str, users: dict[str, str] | None = None):
        need_tool("squid")
        self.dir = Path(tempfile.mkdtemp(prefix="harrec-squid-", dir="/tmp"))
        # squid drops to its own user: the directory must be open to it.
        os.chmod(self.dir, 0o777)
        self.port = free_port()
        auth = ""
        if users:
            lines = []
            for user, password in users.items():
                hashed = subprocess.run(["openssl", "passwd", "-apr1", password], capture_output=True, text=True, check=True).stdout.strip()
                lines.append(f"{user}:{hashed}\n")
            (self.dir / "passwd").write_text("".join(lines))
            os.chmod(self.dir / "passwd", 0o644)
            auth = (f"auth_param basic program /usr/lib/squid/basic_ncsa_auth {self.dir}/passwd\n"
                    "acl authed proxy_auth REQUIRED\n")
        (self.dir / "squid.conf").write_text(
            f"http_port 127.0.0.1:{self.port}\npid_filename {self.dir}/squid.pid\ncache_log {self.dir}/cache.log\n"
            f"access_log stdio:{self.dir}/access.log\ncache deny all\ncoredump_dir {self.dir}\n"
            "visible_hostname harrec-test\nshutdown_lifetime 0 seconds\n" + auth + rules)
        self.proc = subprocess.Popen(["squid", "-N", "-f", str(self.dir / "squid.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            if curl("-s", "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{self.port}/", max_time=2).rc == 0:
                return
            time.sleep(0.1)
        self.stop()
        pytest.fail("squid did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def access_log(self) -> str:
        path = self.dir / "access.log"
        return path.read_text() if path.exists() else ""

    def stop(self):
        stop_process(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def squid():
    started = []

    def start(rules="http_access allow all\n", users=None):
        s = Squid(rules, users)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def test_http_and_https_through_squid_are_recorded(harrec_tls, origin, https_origin, squid):
    # As companies configure squid: CONNECT only to TLS ports, so plain http must come in absolute form.
    proxy = squid(f"acl SSL_ports port 443 {https_origin.port}\nacl CONNECT method CONNECT\n"
                  "http_access deny CONNECT !SSL_ports\nhttp_access allow all\n")
    px = harrec_tls.start("--no-redact", "--upstream-proxy", proxy.url)
    r = curl("-x", px.http_proxy, f"{origin.base_url}/json?via=squid")
    assert r.rc == 0 and b'"target": "/json?via=squid"' in r.out
    s = curl("-x", px.http_proxy, "--cacert", str(px.ca_pem), f"https://localhost:{https_origin.port}/bytes?n=1500&seed=5")
    assert s.rc == 0 and len(s.out) == 1500
    har = px.stop()
    assert [e["response"]["status"] for e in entries(har)] == [200, 200]
    log = proxy.access_log()
    assert f"GET http://127.0.0.1:{origin.port}/json" in log, log  # squid logs no query
    assert f"CONNECT localhost:{https_origin.port}" in log and f"CONNECT 127.0.0.1:{origin.port}" not in log, log


def test_squid_with_credentials_from_the_environment_and_wrong_ones(harrec_tls, origin, squid, tmp_path):
    proxy = squid("http_access allow authed\nhttp_access deny all\n", users={"corp": "s3cret-Pa55"})
    os.environ["HARREC_UPSTREAM_PROXY_AUTH"] = "corp:s3cret-Pa55"
    try:
        px = harrec_tls.start("--no-redact", "--upstream-proxy", proxy.url)
    finally:
        del os.environ["HARREC_UPSTREAM_PROXY_AUTH"]
    assert curl("-x", px.http_proxy, f"{origin.base_url}/json?authed=1").rc == 0
    har = px.stop()
    assert entries(har)[0]["response"]["status"] == 200
    assert "s3cret" not in px.stderr_text and "s3cret" not in px.har_text
    assert "corp" in proxy.access_log(), "squid saw the user"

    wrong = tmp_path / "auth.txt"
    wrong.write_text("corp:wrong\n")
    px2 = harrec_tls.start("--no-redact", "--upstream-proxy", proxy.url, "--upstream-proxy-auth-file", str(wrong))
    r = curl("-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", px2.http_proxy, f"{origin.base_url}/json?wrong=1")
    assert r.out == b"502"
    har2 = px2.stop()
    entry = entries(har2)[0]
    assert entry["response"]["status"] == 502
    assert f"upstream proxy {proxy.url} refused the request: 407" in entry["_error"], entry["_error"]
    assert "refused the credentials" in entry["_error"]
    assert "wrong" not in px2.stderr_text.replace("?wrong=1", "") and ":wrong" not in px2.har_text


def test_a_refusing_proxy(harrec_tls, origin, https_origin, squid):
    proxy = squid("http_access deny all\n")
    px = harrec_tls.start("--no-redact", "--upstream-proxy", proxy.url)
    # A tunnel it refuses is a 502 (to the client's CONNECT) that names it.
    r = curl("-s", "-x", px.http_proxy, "--cacert", str(px.ca_pem), f"https://localhost:{https_origin.port}/json")
    assert "CONNECT tunnel failed, response 502" in r.err, r
    # A plain request it refuses gets its own answer, as a client behind it would.
    plain = curl("-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", px.http_proxy, f"{origin.base_url}/json")
    assert plain.out == b"403"
    har = px.stop()
    assert [e["response"]["status"] for e in entries(har)] == [502, 403]
    assert f"upstream proxy {proxy.url} refused the CONNECT: 403 Forbidden" in entries(har)[0]["_error"]


def test_socks5_upstream_and_exclusions(harrec, harrec_tls, origin, https_origin, tmp_path):
    # A second harrec, not intercepting, is the company's SOCKS5 proxy (with credentials).
    socks = harrec.start("--no-intercept", "--proxy-auth", "team:pw-77", "--no-redact",
                         out=tmp_path / "socks.har", ports=("--socks", "0"))
    px = harrec_tls.start("--no-redact", "--upstream-proxy", f"socks5://team:pw-77@127.0.0.1:{socks.socks_port}",
                          "--no-upstream-proxy", "localhost")
    assert curl("-x", px.http_proxy, f"{origin.base_url}/json?socks=1").rc == 0
    # localhost is excluded: reached directly, not through the SOCKS5 proxy.
    assert curl("-x", px.http_proxy, "--cacert", str(px.ca_pem), f"https://localhost:{https_origin.port}/json?direct=1").rc == 0
    har = px.stop()
    assert [e["response"]["status"] for e in entries(har)] == [200, 200]
    assert px.wait_for_stderr("the --upstream-proxy URL holds a password")
    assert "pw-77" not in px.stderr_text.replace("socks5://team:pw-77@", "")
    socks_har = socks.stop()
    tunnels = [e["request"]["url"] for e in entries(socks_har)]
    assert any(f":{origin.port}" in u for u in tunnels), tunnels
    assert not any(f":{https_origin.port}" in u for u in tunnels), tunnels


def test_bad_upstream_proxy_options(tmp_path):
    for args, words in [(["--upstream-proxy", "https://p:3128"], "http://host:port or socks5://host:port"),
                        (["--no-upstream-proxy", "x.com"], "--no-upstream-proxy is for --upstream-proxy")]:
        p = subprocess.run([HARREC_BIN, "record", "--out", str(tmp_path / "x.har"), "--http", "0", *args],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2 and words in p.stderr, p.stderr
