"""TLS interception end to end (docs/guide/https-and-devices.md).

The HTTPS test origin (origin.py with tls=) has a certificate from the *test CA*
(certs/make-test-pki.sh), which harrec gets with --upstream-ca; clients trust only the *harrec CA*
(<ca-dir>/harrec-ca.pem). A body that arrives intact through harrec therefore proves that harrec
terminated TLS with its own leaf and verified the origin with the test CA.

Every `test_direct_*` test checks the origin and the client machinery without harrec, so a
failure in the proxied tests can be blamed on harrec.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import httpx
import pytest
import socksio  # noqa: F401  (httpx's SOCKS support; fail loudly if missing)

import origin as origin_mod
from helpers import (PY_TLS_CLIENT, RawConn, TLSClient, check_timings, client_context,
                     content_bytes, curl, entries, one_entry, openssl_x509, pem_certs,
                     python313, request_bytes, s_client, sha256, x509_field, x509_time)

POST_BODY = origin_mod.make_bytes(1_000_000, 91)  # < 1 MiB: curl sends no Expect: 100-continue


@dataclass
class TLSCase:
    name: str
    path: str
    args: tuple = ()
    expected: bytes | None = None  # None: compare with the direct run only

    def curl_args(self, post_file):
        return [a.replace("{post}", str(post_file)) for a in self.args]


TLS_CASES = [
    TLSCase("json", "/json?tls=1&h=host,user-agent,accept"),
    TLSCase("bytes_1mib", "/bytes?n=1048576&seed=5", expected=origin_mod.make_bytes(1048576, 5)),
    TLSCase("gzip_raw", "/gzip?raw=1", expected=origin_mod.encoded_doc("gzip")),
    TLSCase("gzip_compressed", "/gzip?decoded=1", ("--compressed",), expected=origin_mod.JSON_DOC),
    TLSCase("chunked", "/chunked?n=100000&chunks=7&seed=2&trailer=1&ext=1",
            expected=origin_mod.make_bytes(100000, 2)),
    TLSCase("post_1mb", "/echo?post=1", ("--data-binary", "@{post}", "-H",
                                         "Content-Type: application/octet-stream"),
            expected=POST_BODY),
]

# How curl reaches the origin through harrec, and the host it names in the URL.
TLS_MODES = {
    "connect": (lambda px: ["-x", px.http_proxy], "localhost"),
    "socks5h": (lambda px: ["--socks5-hostname", f"127.0.0.1:{px.socks_port}"], "localhost"),
    "socks5_ip": (lambda px: ["--socks5", f"127.0.0.1:{px.socks_port}"], "127.0.0.1"),
    "connect_ipv6": (lambda px: ["-x", px.http_proxy], "::1"),
}


@pytest.fixture(scope="module")
def post_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("tls-post") / "post-1mb.bin"
    p.write_bytes(POST_BODY)
    return p


def tls_curl(url, cafile, *args, proxy_args=(), max_time=20):
    return curl(*proxy_args, "--cacert", str(cafile), *map(str, args), url, max_time=max_time)


def run_direct_cases(o, host, test_pki, post_file) -> dict:
    """Each case straight to the HTTPS origin, trusting the test CA; returns name -> body."""
    out = {}
    for case in TLS_CASES:
        r = tls_curl(o.url_for(host, case.path), test_pki / "ca.pem", *case.curl_args(post_file))
        assert r.rc == 0, f"direct {case.name}: curl exit {r.rc}: {r.err}"
        if case.expected is not None:
            assert r.out == case.expected, f"direct {case.name}: not the origin's known bytes"
        out[case.name] = r.out
    return out


def check_tls_entry(e, url, ip=None):
    """An intercepted exchange: https URL, 200, no _error, ssl timed and inside connect."""
    assert e["request"]["url"] == url
    assert e["response"]["status"] == 200, e["response"]
    assert "_error" not in e, e.get("_error")
    assert e["request"]["httpVersion"] == "HTTP/1.1"  # ALPN: harrec offers only http/1.1
    t = e["timings"]
    assert t.get("ssl", -1) >= 0, f"{url}: timings.ssl must be measured on a new connection: {t}"
    assert t["connect"] >= t["ssl"], f"{url}: timings.connect must include ssl: {t}"
    check_timings(e)
    if ip is not None:
        assert e.get("serverIPAddress") == ip, e.get("serverIPAddress")
    else:
        assert e.get("serverIPAddress") in ("127.0.0.1", "::1"), e.get("serverIPAddress")
    assert isinstance(e.get("connection"), str) and e["connection"], "entry.connection must be set"


# ---------------------------------------------------------------- direct halves (no harrec)

def test_direct_https_origin(https_origin, https_origin_self_signed, https_origin_wrong_host,
                             test_pki, post_file):
    o = https_origin
    for host in ("localhost", "127.0.0.1", "::1"):
        assert o.has_ipv6 or host != "::1", "the HTTPS origin needs ::1 for the IPv6 cases"
        run_direct_cases(o, host, test_pki, post_file)
    log = o.tls_log()
    assert all(r["error"] is None for r in log), log
    assert {r["sni"] for r in log} == {"localhost", None}  # curl sends no SNI for IP literals
    assert {r["alpn"] for r in log} == {"http/1.1"}
    # keep-alive and close-delimited bodies over TLS (close_notify ends the body cleanly)
    r = tls_curl(o.localhost_url("/close-delimited?n=200000&seed=8"), test_pki / "ca.pem")
    assert r.rc == 0 and r.out == origin_mod.make_bytes(200000, 8), r.err
    # the origin's certificates are what the failure tests rely on
    for bad, hint in ((https_origin_self_signed, "self-signed"),
                      (https_origin_wrong_host, "localhost")):
        r = tls_curl(bad.localhost_url("/json"), test_pki / "ca.pem")
        assert r.rc == 60, f"curl accepted the {hint} certificate: {r.rc} {r.err}"
        assert bad.stats()["requests"] == 0


def test_direct_keepalive(https_origin, test_pki):
    urls = [https_origin.localhost_url(f"/json?ka={i}") for i in range(4)]
    args = ["-w", "%{num_connects}\n"] + sum((["-o", "/dev/null", u] for u in urls[:-1]), [])
    r = tls_curl(urls[-1], test_pki / "ca.pem", *args, "-o", "/dev/null")
    assert r.rc == 0, r.err
    assert [int(x) for x in r.out.split()] == [1, 0, 0, 0]
    st = https_origin.stats()
    assert st["connections"] == 1 and st["tls_handshakes"] == 1 and st["requests"] == 4


def test_direct_python313_strict(https_origin, test_pki):
    doc = run_py313("direct", 0, "localhost", https_origin.port, test_pki / "ca.pem",
                    "/bytes?n=50000&seed=13")
    assert doc["strict"] is True and doc["python"].startswith("3.13")
    assert doc["body_sha256"] == sha256(origin_mod.make_bytes(50000, 13))


def test_direct_split_client_hello(https_origin, test_pki):
    s = socket.create_connection(("127.0.0.1", https_origin.port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = TLSClient(s, client_context(test_pki / "ca.pem"), "localhost")
    t.handshake(split=[1, 3, 7, 2, 5, 4, 6], delay=0.001)
    assert len(t.first_flight) > 100 and t.first_flight[0] == 0x16
    with RawConn(sock=t) as c:
        c.send(request_bytes("GET", "/json?split=direct", f"localhost:{https_origin.port}"))
        assert c.read_response().status == 200
    assert https_origin.tls_log()[0]["sni"] == "localhost"


def test_direct_s_client_inspection(https_origin, test_pki):
    p = s_client("-connect", f"localhost:{https_origin.port}", "-servername", "localhost",
                 "-CAfile", test_pki / "ca.pem", "-verify_hostname", "localhost")
    assert "Verify return code: 0 (ok)" in p.stdout, p.stdout + p.stderr
    leaf = pem_certs(p.stdout)[0]
    ext = openssl_x509(leaf, "-ext", "subjectAltName,extendedKeyUsage,keyUsage")
    assert "DNS:localhost" in ext and "TLS Web Server Authentication" in ext
    assert x509_field(openssl_x509(leaf, "-issuer"), "issuer") == \
        x509_field(openssl_x509((test_pki / "ca.pem").read_text(), "-subject"), "subject")


# ---------------------------------------------------------------- curl through harrec

@pytest.mark.parametrize("mode", list(TLS_MODES))
def test_curl_bodies_identical(mode, https_origin, harrec_tls, test_pki, post_file):
    o = https_origin
    px_args_of, host = TLS_MODES[mode]
    direct = run_direct_cases(o, host, test_pki, post_file)
    n_direct = len(o.tls_log())
    px = harrec_tls.start()
    px_args = px_args_of(px)
    for case in TLS_CASES:
        r = tls_curl(o.url_for(host, case.path), px.ca_pem, *case.curl_args(post_file),
                     proxy_args=px_args)
        assert r.rc == 0, f"{mode} {case.name}: curl exit {r.rc}: {r.err}"
        assert sha256(r.out) == sha256(direct[case.name]), \
            f"{mode} {case.name}: body differs from direct ({len(r.out)} vs " \
            f"{len(direct[case.name])} bytes)"
    conns_before_wrong_ca = o.stats()["connections"]
    # The client really talks to harrec's leaf: the origin's own CA does not verify it.
    r = tls_curl(o.url_for(host, "/json?wrong-ca=1"), test_pki / "ca.pem", proxy_args=px_args)
    assert r.rc == 60, f"a client trusting only the test CA accepted harrec's leaf ({r.rc})"
    har = px.stop()

    ip = None if host == "localhost" else host
    for case in TLS_CASES:
        method = "POST" if case.name.startswith("post") else "GET"
        e = one_entry(har, case.path, method)
        check_tls_entry(e, o.url_for(host, case.path), ip)
    b = one_entry(har, "/bytes?n=1048576")
    assert content_bytes(b["response"]["content"]) == origin_mod.make_bytes(1048576, 5)
    assert b["response"]["bodySize"] == 1048576
    g = one_entry(har, "/gzip?raw=1")["response"]
    assert content_bytes(g["content"]) == origin_mod.JSON_DOC, "HAR text is the decoded body"
    assert g["bodySize"] == len(origin_mod.encoded_doc("gzip"))
    p = one_entry(har, "/echo?post=1", "POST")
    assert p["request"]["bodySize"] == len(POST_BODY)
    assert content_bytes(p["response"]["content"]) == POST_BODY
    # upstream: harrec verified the origin and (for names) sent SNI = the target host
    # (the wrong-CA attempt may have started an upstream handshake that harrec then dropped)
    upstream = [r for r in o.tls_log()[n_direct:] if r["conn"] <= conns_before_wrong_ca]
    assert len(upstream) == len(TLS_CASES), upstream
    assert all(r["error"] is None for r in upstream), upstream
    if host == "localhost":
        assert {r["sni"] for r in upstream} == {"localhost"}, upstream


@pytest.mark.parametrize("mode", ["connect", "socks5h"])
def test_keepalive_inside_tunnel(mode, https_origin, harrec_tls):
    o = https_origin
    px = harrec_tls.start()
    px_args = TLS_MODES[mode][0](px)
    urls = [o.localhost_url(f"/json?ka-{mode}={i}") for i in range(4)]
    args = ["-w", "%{num_connects}\n"] + sum((["-o", "/dev/null", u] for u in urls), [])
    r = tls_curl(o.localhost_url("/stats"), px.ca_pem, *args, proxy_args=px_args)
    assert r.rc == 0, r.err
    lines = r.out.decode().splitlines()
    # curl prints the -w line after each transfer; /stats (the last URL) goes to stdout
    connects = [int(x) for x in lines if x.isdigit()]
    assert connects == [1, 0, 0, 0, 0], f"curl did not reuse its tunnel: {connects}"
    stats = json.loads(next(ln for ln in lines if ln.startswith("{")))
    assert stats["connections"] == 1 and stats["tls_handshakes"] == 1, \
        f"5 requests in one tunnel used {stats['connections']} upstream connections: {stats}"
    assert stats["requests"] == 5
    har = px.stop()
    es = sorted(entries(har), key=lambda e: e["startedDateTime"])
    assert [e["request"]["url"] for e in es] == urls + [o.localhost_url("/stats")]
    assert len({e["connection"] for e in es}) == 1, [e["connection"] for e in es]
    check_tls_entry(es[0], urls[0])
    for e in es[1:]:  # reused: no new connect/ssl (-1), or measured and consistent
        t = e["timings"]
        assert t.get("ssl", -1) == -1 or t["connect"] >= t["ssl"], t
        check_timings(e)


# ---------------------------------------------------------------- Python clients

@pytest.mark.parametrize("kind", ["http", "socks5"])
def test_httpx(kind, https_origin, harrec_tls):
    o = https_origin
    px = harrec_tls.start()
    proxy = px.http_proxy if kind == "http" else px.socks_proxy
    with httpx.Client(proxy=proxy, verify=client_context(px.ca_pem), trust_env=False,
                      timeout=15) as c:
        r = c.get(o.localhost_url("/json?httpx=1"), headers={"X-Py": "yes"})
        assert r.status_code == 200 and ["X-Py", "yes"] in r.json()["headers"]
        r = c.get(o.localhost_url("/bytes?n=300000&seed=21"))
        assert r.content == origin_mod.make_bytes(300000, 21)
        assert c.get(o.localhost_url("/gzip")).content == origin_mod.JSON_DOC
        body = origin_mod.make_bytes(100000, 22)
        assert c.post(o.localhost_url("/echo?cl=1"), content=body).content == body
        r = c.post(o.localhost_url("/echo?chunked=1"), content=iter([body[:50000], body[50000:]]))
        assert r.content == body and r.headers["x-request-framing"] == "chunked"
        r = c.head(o.localhost_url("/head"))
        assert r.status_code == 200 and r.content == b""
    assert o.stats()["connections"] == 1, "httpx's requests share one upstream connection"
    har = px.stop()
    es = entries(har)
    assert len(es) == 6
    assert all(e["request"]["url"].startswith(f"https://localhost:{o.port}/") for e in es)
    assert len({e["connection"] for e in es}) == 1
    check_tls_entry(one_entry(har, "/json?httpx=1"), o.localhost_url("/json?httpx=1"))


def run_py313(mode, proxy_port, host, port, cafile, path) -> dict:
    p = subprocess.run([python313(), "-c", PY_TLS_CLIENT, mode, str(proxy_port), host, str(port),
                        str(cafile), path], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, f"python3.13 client failed ({p.returncode}):\n{p.stdout}{p.stderr}"
    return json.loads(p.stdout)


def test_python313_strict_client(https_origin, harrec_tls):
    """Python 3.13 sets VERIFY_X509_STRICT (keyUsage in the CA, AKI in the leaf, ...): harrec's
    CA and leaf must pass it."""
    px = harrec_tls.start()
    doc = run_py313("connect", px.http_port, "localhost", https_origin.port, px.ca_pem,
                    "/bytes?n=50000&seed=13")
    assert doc["strict"] is True and doc["python"].startswith("3.13")
    assert doc["status"].startswith("HTTP/1.1 200")
    assert doc["body_sha256"] == sha256(origin_mod.make_bytes(50000, 13))
    assert ["DNS", "localhost"] in doc["san"]
    har = px.stop()
    check_tls_entry(one_entry(har, "/bytes?n=50000"), https_origin.localhost_url(
        "/bytes?n=50000&seed=13"))


# ---------------------------------------------------------------- the leaf, with openssl

def _leaf_checks(leaf: str, px, san: str):
    ext = openssl_x509(leaf, "-ext", "subjectAltName,extendedKeyUsage,keyUsage")
    assert re.search(r"Subject Alternative Name:.*\n\s+(.*, )?" + re.escape(san) + r"(,|\n|$)",
                     ext), ext
    assert "TLS Web Server Authentication" in ext, ext
    assert "Digital Signature" in ext, ext
    dates = openssl_x509(leaf, "-dates")
    nb, na = (x509_time(x509_field(dates, k)) for k in ("notBefore", "notAfter"))
    now = datetime.now(timezone.utc)
    assert timedelta(days=1) <= now - nb <= timedelta(days=3), f"notBefore {nb} is not now-2d"
    assert na - nb <= timedelta(days=397), f"validity {na - nb} > 397 days"
    assert na > now + timedelta(days=1), f"notAfter {na}"
    issuer = x509_field(openssl_x509(leaf, "-issuer"), "issuer")
    ca_subject = x509_field(openssl_x509(px.ca_pem.read_text(), "-subject"), "subject")
    assert issuer == ca_subject, f"leaf issuer {issuer!r} is not the harrec CA {ca_subject!r}"
    text = openssl_x509(leaf, "-text")
    assert re.search(r"Signature Algorithm: (ecdsa-with-SHA256|sha256WithRSAEncryption)", text)
    assert "Authority Key Identifier" in text, "leaf without AKI"
    assert "CA:TRUE" not in text
    serial = int(x509_field(openssl_x509(leaf, "-serial"), "serial"), 16)
    assert serial.bit_length() >= 48, f"serial {serial:x} is too short to be 64 random bits"
    return serial


def _verify_leaf_strictly(leaf: str, px, tmp_path, *args):
    f = tmp_path / "leaf.pem"
    f.write_text(leaf)
    p = subprocess.run(["openssl", "verify", "-x509_strict", "-purpose", "sslserver",
                        "-CAfile", str(px.ca_pem), *args, str(f)],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, f"openssl verify -x509_strict rejects the leaf: {p.stdout}{p.stderr}"


def test_openssl_s_client_leaf(https_origin, harrec_tls, tmp_path):
    px = harrec_tls.start()
    common = ["-proxy", f"127.0.0.1:{px.http_port}", "-connect", f"localhost:{https_origin.port}",
              "-servername", "localhost", "-CAfile", px.ca_pem, "-verify_hostname", "localhost"]
    p = s_client(*common, "-alpn", "h2,http/1.1")
    out = p.stdout + p.stderr
    assert "Verify return code: 0 (ok)" in p.stdout, out
    assert re.search(r"New, TLSv1\.[23], Cipher is", p.stdout), out
    assert "ALPN protocol: h2" not in p.stdout, "harrec must not select h2"
    certs = pem_certs(p.stdout)
    leaf = certs[0]
    serial1 = _leaf_checks(leaf, px, "DNS:localhost")
    # The chain is the leaf, then harrec's CA (for clients that allow by the CA's key, such as
    # Chrome's --ignore-certificate-errors-spki-list), byte for byte the CA file.
    assert len(certs) == 2, f"expected leaf + CA, got {len(certs)} certificates"
    assert certs[1].strip() == open(px.ca_pem).read().strip(), "the second certificate is not harrec's CA"
    _verify_leaf_strictly(leaf, px, tmp_path, "-verify_hostname", "localhost")
    # TLS 1.2 works too, and the leaf is the cached one (same serial) for the same host
    p = s_client(*common, "-tls1_2")
    assert "Verify return code: 0 (ok)" in p.stdout, p.stdout + p.stderr
    assert re.search(r"New, TLSv1\.2, Cipher is", p.stdout), p.stdout
    assert _leaf_checks(pem_certs(p.stdout)[0], px, "DNS:localhost") == serial1
    px.stop()


def test_sni_names_the_leaf(https_origin, harrec_tls):
    """CONNECT to an IP, SNI localhost: the leaf is for the SNI name."""
    px = harrec_tls.start()
    p = s_client("-proxy", f"127.0.0.1:{px.http_port}", "-connect",
                 f"127.0.0.1:{https_origin.port}", "-servername", "localhost", "-CAfile",
                 px.ca_pem, "-verify_hostname", "localhost")
    assert "Verify return code: 0 (ok)" in p.stdout, p.stdout + p.stderr
    _leaf_checks(pem_certs(p.stdout)[0], px, "DNS:localhost")
    px.stop()
