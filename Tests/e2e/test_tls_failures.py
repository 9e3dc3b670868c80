"""TLS interception: upstream verification failures, clients that reject harrec's CA, hosts that
are not intercepted (--ignore-hosts, --intercept-hosts, --no-intercept), --insecure-upstream,
non-TLS tunnel bytes, a ClientHello cut into tiny TCP segments and a ClientHello without SNI.

See test_tls.py for the two authorities (test CA for the origin, harrec CA for the clients)."""

from __future__ import annotations

import ipaddress
import random
import re
import socket
import ssl
import threading
import time

import pytest

import origin as origin_mod
from helpers import (RawConn, TLSClient, check_timings, client_context, curl, entries,
                     one_entry, openssl_x509, pem_certs, request_bytes, s_client, tunnel)

PROXY_KINDS = {
    "connect": lambda px: ["-x", px.http_proxy],
    "socks5h": lambda px: ["--socks5-hostname", f"127.0.0.1:{px.socks_port}"],
}


def get(url, cafile, proxy_args, *args):
    """curl through harrec; returns (curl exit, body, HTTP status or 0)."""
    r = curl(*proxy_args, "--cacert", str(cafile), *args, "-w", "\n%{http_code}", url,
             max_time=15)
    body, _, code = r.out.rpartition(b"\n")
    return r.rc, body, int(code or 0), r.err


def recv_exact(s, n, timeout=5.0) -> bytes:
    s.settimeout(timeout)
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError(f"closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def eof_within(s, timeout=5.0) -> bool:
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except (socket.timeout, TimeoutError):
        return False


# ---------------------------------------------------------------- upstream verification

@pytest.mark.parametrize("kind", list(PROXY_KINDS))
@pytest.mark.parametrize("bad", ["self_signed", "wrong_host"])
def test_upstream_certificate_rejected(bad, kind, request, harrec_tls):
    o = request.getfixturevalue(f"https_origin_{bad}")
    px = harrec_tls.start()
    url = o.localhost_url(f"/json?bad={bad}")
    rc, body, code, err = get(url, px.ca_pem, PROXY_KINDS[kind](px))
    assert rc == 0, f"the client must get harrec's 502 over TLS, not a TLS error: {rc} {err}"
    assert code == 502, (code, body[:300])
    assert b"certificate verify failed" in body, f"502 body must name the reason: {body[:300]!r}"
    assert o.stats()["requests"] == 0, "nothing may reach an origin that failed verification"
    log = o.wait_for_tls(1)
    assert log and log[0]["error"], f"the origin saw a completed handshake: {log}"
    line = px.wait_for_stderr(rf" GET {re.escape(url)} 502 error: .*certificate verify failed", 5)
    assert line, f"no live line 'GET {url} 502 error: ...':\n{px.stderr_text}"
    har = px.stop()
    e = one_entry(har, f"/json?bad={bad}")
    assert e["request"]["url"] == url
    assert e["response"]["status"] == 502, "the entry shows the 502 the client got"
    err = e.get("_error", "")
    assert "certificate verify failed" in err, err
    if bad == "self_signed":
        assert re.search(r"self[- ]signed", err, re.I), err
    else:
        assert re.search(r"mismatch", err, re.I), f"_error must name the host mismatch: {err}"
    assert "localhost" in err, f"_error should name the host: {err}"


def test_system_trust_store_does_not_know_the_test_ca(https_origin, harrec_tls):
    """Without --upstream-ca the test origin is untrusted: the anchor really comes from the flag."""
    px = harrec_tls.start(upstream_ca=False)
    rc, body, code, err = get(https_origin.localhost_url("/json?noanchor=1"), px.ca_pem,
                              ["-x", px.http_proxy])
    assert (rc, code) == (0, 502), (rc, code, err)
    har = px.stop()
    e = one_entry(har, "/json?noanchor=1")
    assert e["response"]["status"] == 502 and "certificate verify failed" in e.get("_error", "")


def test_upstream_ca_repeatable(https_origin, harrec_tls, test_pki):
    px = harrec_tls.start("--upstream-ca", test_pki / "wrong-host.pem", upstream_ca=False)
    rc, _, code, err = get(https_origin.localhost_url("/json?one=1"), px.ca_pem,
                           ["-x", px.http_proxy])
    assert code == 502, "an unrelated anchor must not verify the origin"
    px.stop()
    px = harrec_tls.start("--upstream-ca", test_pki / "wrong-host.pem",
                          "--upstream-ca", test_pki / "ca.pem", upstream_ca=False)
    rc, _, code, err = get(https_origin.localhost_url("/json?two=1"), px.ca_pem,
                           ["-x", px.http_proxy])
    assert (rc, code) == (0, 200), (rc, code, err)
    px.stop()


def test_insecure_upstream(https_origin_self_signed, https_origin_wrong_host, harrec_tls):
    px = harrec_tls.start("--insecure-upstream", upstream_ca=False)
    assert px.wait_for_stderr(r"^harrec: warning:", 5), \
        f"--insecure-upstream must print a 'harrec: warning:' line:\n{px.stderr_text}"
    urls = []
    for o in (https_origin_self_signed, https_origin_wrong_host):
        url = o.localhost_url("/bytes?n=70000&seed=4")
        rc, body, code, err = get(url, px.ca_pem, ["-x", px.http_proxy])
        assert (rc, code) == (0, 200), (rc, code, err)
        assert body == origin_mod.make_bytes(70000, 4)
        urls.append(url)
    har = px.stop()
    assert sorted(e["request"]["url"] for e in entries(har)) == sorted(urls)
    for e in entries(har):
        assert e["response"]["status"] == 200 and "_error" not in e
        assert e["timings"].get("ssl", -1) >= 0
        check_timings(e)


# ---------------------------------------------------------------- clients that reject harrec's CA

HINT_RE = r"\blocalhost\b.*harrec ca show|harrec ca show.*\blocalhost\b"


def _ca_hint_lines(px):
    """Lines naming the host and the fix (not the start-up note about a newly created CA)."""
    return [ln for ln in px.stderr_lines if re.search(HINT_RE, ln)]


def test_client_without_harrec_ca(https_origin, harrec_tls):
    o = https_origin
    px = harrec_tls.start()
    # curl with only the system trust store: harrec's leaf is unknown to it (exit 60)
    r = curl("-x", px.http_proxy, o.localhost_url("/json?untrusted=1"))
    assert r.rc == 60, f"curl without the harrec CA must fail verification: {r.rc} {r.err}"
    line = px.wait_for_stderr(HINT_RE, 5)
    assert line, f"no line naming localhost and `harrec ca show` on stderr:\n{px.stderr_text}"
    time.sleep(0.2)
    assert len(_ca_hint_lines(px)) == 1, px.stderr_text
    # a Python client that trusts another CA (sends an 'unknown CA' alert): a second hint
    s = tunnel("connect", px, "localhost", o.port)
    with pytest.raises(ssl.SSLCertVerificationError):
        TLSClient(s, client_context(harrec_tls.pki / "ca.pem"), "localhost").handshake()
    s.close()
    deadline = time.time() + 5
    while len(_ca_hint_lines(px)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    assert len(_ca_hint_lines(px)) == 2, px.stderr_text
    # harrec goes on serving
    rc, body, code, err = get(o.localhost_url("/json?trusted=1"), px.ca_pem, ["-x", px.http_proxy])
    assert (rc, code) == (0, 200), (rc, code, err)
    assert px.alive()
    har = px.stop()
    # Each rejection is an entry for its tunnel (no response, the reason and the hint), then the
    # exchange that worked.
    tunnel_url = f"https://localhost:{o.port}/"
    assert [(e["request"]["method"], e["request"]["url"]) for e in entries(har)] == [
        ("CONNECT", tunnel_url), ("CONNECT", tunnel_url), ("GET", o.localhost_url("/json?trusted=1"))]
    for e in entries(har)[:2]:
        assert e["response"]["status"] == 0 and "harrec ca show" in e["_error"], e


def test_client_that_stops_mid_handshake(https_origin, harrec_tls):
    """A client that reads harrec's server flight and just closes (no alert), like an app that
    gives up on an untrusted certificate: logged with the hint, harrec keeps running."""
    o = https_origin
    px = harrec_tls.start()
    s = tunnel("connect", px, "localhost", o.port)
    ctx = client_context(px.ca_pem)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    s.sendall(outgoing.read())
    s.settimeout(5)
    assert s.recv(65536)[:1] == b"\x16", "harrec must answer the ClientHello with a handshake"
    time.sleep(0.1)
    s.close()
    line = px.wait_for_stderr(HINT_RE, 5)
    assert line, f"no line naming localhost and `harrec ca show` on stderr:\n{px.stderr_text}"
    rc, _, code, err = get(o.localhost_url("/json?after=1"), px.ca_pem, ["-x", px.http_proxy])
    assert (rc, code) == (0, 200), (rc, code, err)
    har = px.stop()
    first = entries(har)[0]
    assert first["request"]["method"] == "CONNECT" and "closed the TLS handshake for localhost" in first["_error"], first


# ---------------------------------------------------------------- hosts that are not intercepted

SELECTION = [
    # id, record args, {host: intercepted?}
    ("ignore", ["--ignore-hosts", "^localhost:"], {"localhost": False, "127.0.0.1": True}),
    ("ignore-case-insensitive", ["--ignore-hosts", r"^LOCALHOST:\d+$"],
     {"localhost": False, "127.0.0.1": True}),
    ("intercept-only", ["--intercept-hosts", r"^127\.0\.0\.1:"],
     {"localhost": False, "127.0.0.1": True}),
    ("ignore-wins", ["--intercept-hosts", "^localhost:", "--intercept-hosts", r"^127\.0\.0\.1:",
                     "--ignore-hosts", "^localhost:"], {"localhost": False, "127.0.0.1": True}),
    ("no-intercept", ["--no-intercept"], {"localhost": False, "127.0.0.1": False}),
]


@pytest.mark.parametrize("args,expect", [(a, e) for _, a, e in SELECTION],
                         ids=[i for i, _, _ in SELECTION])
def test_host_selection(args, expect, https_origin, harrec_tls, test_pki):
    o = https_origin
    px = harrec_tls.start(*args, require_ca=any(expect.values()))
    want = origin_mod.make_bytes(150000, 31)
    for host, intercepted in expect.items():
        url = o.url_for(host, f"/bytes?n=150000&seed=31&host={host}")
        good, bad = (px.ca_pem, test_pki / "ca.pem") if intercepted else \
            (test_pki / "ca.pem", px.ca_pem)
        rc, body, code, err = get(url, good, ["-x", px.http_proxy])
        assert (rc, code) == (0, 200), f"{host}: {rc} {code} {err}"
        assert body == want, f"{host}: body differs"
        if good != bad and bad.exists():
            rc, _, _, err = get(url, bad, ["-x", px.http_proxy])
            assert rc == 60, (f"{host}: {'intercepted' if intercepted else 'tunnelled'} TLS "
                              f"accepted a certificate from the wrong CA ({rc} {err})")
        if not intercepted:
            line = px.wait_for_stderr(rf"^\S+ tunnel {re.escape(host)}:{o.port}\b", 5)
            assert line, f"no live line '... tunnel {host}:{o.port}':\n{px.stderr_text}"
    har = px.stop()
    urls = [e["request"]["url"] for e in entries(har)]
    for host, intercepted in expect.items():
        mine = [u for u in urls if f"host={host}" in u]
        if intercepted:
            assert len(mine) == 1, urls  # the wrong-CA attempt never sent its request
            assert all(u.startswith(f"https://{host}:{o.port}/") for u in mine), urls
        else:
            assert mine == [], f"a tunnelled host has HAR entries: {mine}"


def test_ignored_host_keeps_origin_certificate(https_origin, harrec_tls, test_pki):
    """End-to-end TLS: the client sees the origin's own leaf (issued by the test CA)."""
    px = harrec_tls.start("--ignore-hosts", "^localhost:")
    p = s_client("-proxy", f"127.0.0.1:{px.http_port}", "-connect",
                 f"localhost:{https_origin.port}", "-servername", "localhost", "-CAfile",
                 test_pki / "ca.pem", "-verify_hostname", "localhost")
    assert "Verify return code: 0 (ok)" in p.stdout, p.stdout + p.stderr
    leaf = pem_certs(p.stdout)[0]
    assert leaf.strip() == (test_pki / "server.pem").read_text().strip()
    px.stop()


# ---------------------------------------------------------------- opaque tunnel bytes

@pytest.mark.parametrize("kind", ["connect", "socks5"])
@pytest.mark.parametrize("first", [b"\x00\x01garbage", b"\x16\x03\x01\x00\x05hello"],
                         ids=["binary", "tls-record-not-clienthello"])
def test_non_tls_bytes_relayed(first, kind, echo_server, harrec_tls):
    """Not a ClientHello and not HTTP: an opaque tunnel, byte for byte in both directions
    (the second payload is a complete TLS handshake record whose message is no ClientHello)."""
    px = harrec_tls.start()
    s = tunnel(kind, px, "127.0.0.1", echo_server.port)
    s.sendall(first)
    assert recv_exact(s, len(first)) == first
    more = origin_mod.make_bytes(300000, 41)
    sender = threading.Thread(target=s.sendall, args=(more,), daemon=True)
    sender.start()
    assert recv_exact(s, len(more)) == more
    sender.join(5)
    s.shutdown(socket.SHUT_WR)
    assert eof_within(s), "half-close was not forwarded (or the close not relayed back)"
    s.close()
    assert bytes(echo_server.received[0]) == first + more
    line = px.wait_for_stderr(rf"^\S+ tunnel 127\.0\.0\.1:{echo_server.port}\b", 5)
    assert line, px.stderr_text
    px.stop()


# ---------------------------------------------------------------- ClientHello edge cases

@pytest.mark.parametrize("kind", ["connect", "socks5"])
def test_client_hello_split_into_tiny_segments(kind, https_origin, harrec_tls):
    o = https_origin
    px = harrec_tls.start()
    s = tunnel(kind, px, "localhost", o.port)
    rng = random.Random(7)
    sizes = [1] + [rng.randint(1, 7) for _ in range(400)]
    t = TLSClient(s, client_context(px.ca_pem), "localhost")
    t.handshake(split=sizes, delay=0.002)
    assert len(t.first_flight) > 200 and t.first_flight[0] == 0x16
    issuer = dict(x[0] for x in t.getpeercert()["issuer"])
    assert issuer.get("commonName", "").startswith("harrec CA"), issuer
    with RawConn(sock=t) as c:
        c.send(request_bytes("GET", f"/json?split={kind}&h=host", f"localhost:{o.port}"))
        r = c.read_response()
    assert r.status == 200
    assert r.body.count(b"localhost") == 1
    har = px.stop()
    e = one_entry(har, f"/json?split={kind}")
    assert e["request"]["url"] == o.localhost_url(f"/json?split={kind}&h=host")
    assert e["response"]["status"] == 200 and e["timings"].get("ssl", -1) >= 0


@pytest.mark.parametrize("ip", ["127.0.0.1", "::1"])
def test_client_hello_without_sni_to_ip_target(ip, https_origin, harrec_tls):
    o = https_origin
    assert o.has_ipv6 or ip != "::1", "the HTTPS origin needs ::1"
    px = harrec_tls.start()
    if ip == "127.0.0.1":
        p = s_client("-proxy", f"127.0.0.1:{px.http_port}", "-connect", f"{ip}:{o.port}",
                     "-noservername", "-CAfile", px.ca_pem, "-verify_ip", ip)
        assert "Verify return code: 0 (ok)" in p.stdout, p.stdout + p.stderr
        ext = openssl_x509(pem_certs(p.stdout)[0], "-ext", "subjectAltName")
        assert re.search(r"IP Address:127\.0\.0\.1\b", ext), ext
    # Python sends no SNI for an IP literal and checks the IP SAN
    s = tunnel("connect", px, ip, o.port)
    t = TLSClient(s, client_context(px.ca_pem), ip).handshake()
    assert ip.encode() not in t.first_flight, "the ClientHello carries the IP (SNI?)"
    sans = t.getpeercert()["subjectAltName"]
    ips = {ipaddress.ip_address(v.strip()) for k, v in sans if k == "IP Address"}
    assert ipaddress.ip_address(ip) in ips, sans
    hostport = f"[{ip}]:{o.port}" if ":" in ip else f"{ip}:{o.port}"
    with RawConn(sock=t) as c:
        c.send(request_bytes("GET", "/json?nosni=1", hostport))
        assert c.read_response().status == 200
    har = px.stop()
    e = one_entry(har, "/json?nosni=1")
    assert e["request"]["url"] == o.url_for(ip, "/json?nosni=1")
    assert e["serverIPAddress"] == ip
    assert e["timings"].get("ssl", -1) >= 0
