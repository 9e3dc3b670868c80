"""Reverse mode: `harrec record --reverse URL --http PORT` is an ordinary server in front of URL.
A client with no proxy settings and no CA (curl, python's websockets) talks to it; entries carry
the upstream's URLs, redirects and cookies are pointed back at the listener, harrec's own paths
live under /harrec/, and `harrec replay --reverse` serves the recording the same way offline.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
import websockets

from helpers import HARREC_BIN, content_bytes, curl, entries, free_port, har_header


def test_reverse_records_the_upstreams_urls_for_a_client_without_proxy_settings(harrec_tls, https_origin, origin, tmp_path):
    secure = f"https://localhost:{https_origin.port}"
    plain_port = free_port()
    px = harrec_tls.start("--no-redact", "--reverse", secure, "--reverse", f"{plain_port}=http://127.0.0.1:{origin.port}",
                          ports=("--http", "0"))
    listener = f"http://127.0.0.1:{px.http_port}"
    assert px.wait_for_stderr(rf"reverse proxy listening on http://127\.0\.0\.1:{plain_port} for http://127\.0\.0\.1:{origin.port}")

    # The upstream sees its own Host; the client never configured a proxy or trusted a CA.
    seen = json.loads(curl(f"{listener}/json?h=host&a=1").out)
    assert seen["headers"] == [["Host", f"localhost:{https_origin.port}"]]
    assert seen["target"] == "/json?h=host&a=1"

    # An absolute redirect to the upstream comes back to the listener: curl follows it over
    # plain http (it could not verify the upstream's certificate, so a leak would fail here).
    target = f"{secure}/json?from=absolute"
    r = curl("-L", "-w", "\n%{url_effective}", f"{listener}/redirect?to={target.replace('?', '%3F').replace('=', '%3D')}")
    assert r.rc == 0, r
    assert r.out.decode().rsplit("\n", 1)[1] == f"{listener}/json?from=absolute"

    # Cookies for the upstream's domain become the listener's, and not Secure over plain http:
    # curl's jar keeps them and sends them back.
    jar = tmp_path / "jar.txt"
    plain = f"http://127.0.0.1:{plain_port}"
    assert curl("-c", str(jar), "-o", "/dev/null", f"{plain}/set-cookie").rc == 0
    echoed = json.loads(curl("-b", str(jar), f"{plain}/json?h=cookie").out)
    assert any(name == "Cookie" and "session=abc123" in value for name, value in echoed["headers"]), echoed

    # harrec's own paths: a mark starts a page.
    assert b"second" in curl(f"{listener}/harrec/mark?name=second").out
    assert curl("-o", "/dev/null", f"{listener}/bytes?n=3000&seed=4").rc == 0

    har = px.stop()
    urls = [e["request"]["url"] for e in entries(har)]
    assert urls[0] == f"{secure}/json?h=host&a=1"
    assert f"{secure}/redirect?to={target.replace('?', '%3F').replace('=', '%3D')}" in urls
    assert f"{secure}/json?from=absolute" in urls
    assert f"http://127.0.0.1:{origin.port}/set-cookie" in urls
    assert not any(u.startswith(listener) or u.startswith(plain) for u in urls), urls
    redirect = next(e for e in entries(har) if "/redirect" in e["request"]["url"])
    assert har_header(redirect["response"], "Location") == target, "the HAR keeps what the upstream sent"
    assert har_header(redirect["request"], "Host") == f"localhost:{https_origin.port}"
    cookie_entry = next(e for e in entries(har) if e["request"]["url"].endswith("/set-cookie"))
    assert any("Domain=127.0.0.1" in h["value"] for h in cookie_entry["response"]["headers"] if h["name"] == "Set-Cookie")
    assert [p["title"] for p in har["log"]["pages"]] == ["second"]
    last = entries(har)[-1]
    assert last["request"]["url"] == f"{secure}/bytes?n=3000&seed=4" and last["pageref"] == har["log"]["pages"][0]["id"]
    assert len(content_bytes(last["response"]["content"])) == 3000


def test_the_reverse_listener_speaks_tls_with_harrecs_ca_too(harrec, harrec_tls, origin):
    upstream = f"http://127.0.0.1:{origin.port}"
    px = harrec_tls.start("--no-redact", "--reverse", upstream, ports=("--http", "0"))
    port = px.http_port
    # By address (no server name: the leaf names the listener's address) and by name.
    by_ip = curl("--cacert", str(px.ca_pem), f"https://127.0.0.1:{port}/json?tls=ip")
    assert by_ip.rc == 0 and b'"target": "/json?tls=ip"' in by_ip.out, by_ip
    by_name = curl("--cacert", str(px.ca_pem), "-i", f"https://localhost:{port}/redirect?to={upstream}/json")
    assert by_name.rc == 0 and f"Location: https://localhost:{port}/json".encode() in by_name.out, by_name.out
    assert curl(f"http://127.0.0.1:{port}/json?plain=1").rc == 0, "plain HTTP on the same port"
    har = px.stop()
    urls = [e["request"]["url"] for e in entries(har)]
    assert urls == [f"{upstream}/json?tls=ip", f"{upstream}/redirect?to={upstream}/json", f"{upstream}/json?plain=1"], urls
    origin.stop()
    # The replay answers the same way over TLS (HTTP/1.1 even when the client offers h2).
    rp = harrec.start("--ca-dir", px.ca_dir, "--reverse", upstream, replay=px.har_path, ports=("--http", "0"))
    again = curl("--cacert", str(px.ca_pem), f"https://127.0.0.1:{rp.http_port}/json?tls=ip")
    assert again.rc == 0 and again.out == by_ip.out
    assert rp.finish() == 0


def test_no_rewrite_back_leaves_the_upstreams_references(harrec_tls, origin):
    px = harrec_tls.start("--no-redact", "--no-rewrite-back", "--reverse", f"http://127.0.0.1:{origin.port}", ports=("--http", "0"))
    r = curl("-i", f"http://127.0.0.1:{px.http_port}/redirect?to=http://127.0.0.1:{origin.port}/json")
    assert f"Location: http://127.0.0.1:{origin.port}/json".encode() in r.out
    px.stop()


def test_websocket_through_a_reverse_listener(harrec_tls, ws_server):
    srv = ws_server.start(compression=None)
    px = harrec_tls.start("--no-redact", "--reverse", f"http://127.0.0.1:{srv.port}", ports=("--http", "0"))

    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{px.http_port}/chat", compression=None) as ws:
            await ws.send("hello over reverse")
            return await ws.recv()

    assert asyncio.run(talk()) == "hello over reverse"
    har = px.stop()
    ws_entry = next(e for e in entries(har) if "/chat" in e["request"]["url"])
    assert ws_entry["request"]["url"] == f"ws://127.0.0.1:{srv.port}/chat"
    texts = [(m["type"], m["data"]) for m in ws_entry["_webSocketMessages"] if m["opcode"] == 1]
    assert texts == [("send", "hello over reverse"), ("receive", "hello over reverse")]


def test_replay_reverse_serves_the_recording_offline(harrec, harrec_tls, origin):
    upstream = f"http://127.0.0.1:{origin.port}"
    px = harrec_tls.start("--no-redact", "--reverse", upstream, ports=("--http", "0"))
    recorded = curl(f"http://127.0.0.1:{px.http_port}/bytes?n=2000&seed=9").out
    assert len(recorded) == 2000
    assert curl("-o", "/dev/null", f"http://127.0.0.1:{px.http_port}/redirect?to={upstream}/json").rc == 0
    px.stop()
    origin.stop()

    rp = harrec.start("--ca-dir", px.ca_dir, "--reverse", upstream, replay=px.har_path, ports=("--http", "0"))
    listener = f"http://127.0.0.1:{rp.http_port}"
    assert curl(f"{listener}/bytes?n=2000&seed=9").out == recorded
    r = curl("-i", f"{listener}/redirect?to={upstream}/json")
    assert f"Location: {listener}/json".encode() in r.out, r.out
    missing = curl("-i", f"{listener}/never-recorded")
    assert missing.out.startswith(b"HTTP/1.1 599 "), missing.out
    assert rp.finish() == 0


def test_bad_reverse_upstreams_are_refused_with_a_reason(tmp_path):
    for bad, words in [("ftp://example.com", "http[s]://"), ("https://api.example.com/v1", "scheme://host[:port] only"),
                       ("api.example.com", "http[s]://")]:
        p = subprocess.run([HARREC_BIN, "record", "--out", str(tmp_path / "x.har"), "--reverse", bad, "--http", "0"],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 2, (bad, p.stderr)
        assert f"--reverse {bad}" in p.stderr and words.replace("[s]", "") in p.stderr.replace("[s]", ""), p.stderr
    p = subprocess.run([HARREC_BIN, "record", "--out", str(tmp_path / "x.har"), "--no-intercept", "--reverse", "https://a.test"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2 and "leave out --no-intercept" in p.stderr, p.stderr


URLSESSION_CLIENT = r'''
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What an app's debug build does against the listener: a GET, a redirect followed, a cookie kept
// and sent back, a JSON POST. Prints one JSON line of what it saw.
let base = CommandLine.arguments[1]
let upstream = CommandLine.arguments[2]
let session = URLSession(configuration: .default)
var seen: [String: String] = [:]

func run(_ request: URLRequest) -> (Int, String, String) {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result = (0, "", "")
    session.dataTask(with: request) { data, response, error in
        let http = response as? HTTPURLResponse
        result = (http?.statusCode ?? 0, http?.url?.absoluteString ?? "\(String(describing: error))",
                  String(decoding: data ?? Data(), as: UTF8.self))
        done.signal()
    }.resume()
    done.wait()
    return result
}

let get = run(URLRequest(url: URL(string: base + "/json?from=urlsession")!))
seen["get"] = "\(get.0) \(get.2.contains("\"target\": \"/json?from=urlsession\""))"
let redirected = run(URLRequest(url: URL(string: base + "/redirect?to=" + upstream + "/json%3Ffrom%3Dredirect")!))
seen["redirected"] = redirected.1
_ = run(URLRequest(url: URL(string: base + "/set-cookie")!))
let cookie = run(URLRequest(url: URL(string: base + "/json?h=cookie")!))
seen["cookie"] = cookie.2
var post = URLRequest(url: URL(string: base + "/echo")!)
post.httpMethod = "POST"
post.setValue("application/json", forHTTPHeaderField: "Content-Type")
post.httpBody = Data(#"{"item":42}"#.utf8)
let echoed = run(post)
seen["post"] = "\(echoed.0) \(echoed.2)"
print(String(decoding: try JSONSerialization.data(withJSONObject: seen), as: UTF8.self))
'''


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_urlsession_against_a_reverse_listener(harrec_tls, origin, tmp_path, tls):
    """Foundation's URLSession (libcurl underneath on Linux) as an app's debug build: no proxy, the
    base URL pointed at the listener, plain or over TLS. On Linux URLSession trusts only the system
    store, so for TLS harrec's CA is installed there as a user would, but in a mount namespace of the
    client's own: the bundle with the CA added is bind-mounted over the system one."""
    upstream = f"http://127.0.0.1:{origin.port}"
    px = harrec_tls.start("--no-redact", "--reverse", upstream, ports=("--http", "0"))
    script = tmp_path / "client.swift"
    script.write_text(URLSESSION_CLIENT)
    listener = f"{'https://localhost' if tls else 'http://127.0.0.1'}:{px.http_port}"
    command = ["swift", str(script), listener, upstream]
    if tls:
        system = Path("/etc/ssl/certs/ca-certificates.crt")
        bundle = tmp_path / "bundle.crt"
        bundle.write_bytes(system.read_bytes() + b"\n" + px.ca_pem.read_bytes())
        command = ["unshare", "-m", "sh", "-c", f'mount --bind "{bundle}" {system} && exec "$0" "$@"', *command]
    r = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert seen["get"] == "200 true", seen
    assert seen["redirected"] == f"{listener}/json?from=redirect", "the redirect came back to the listener"
    assert "session=abc123" in seen["cookie"], f"the cookie was kept and sent back: {seen}"
    assert seen["post"] == '200 {"item":42}', seen
    urls = [e["request"]["url"] for e in entries(px.stop())]
    assert urls[0] == f"{upstream}/json?from=urlsession" and f"{upstream}/echo" in urls, urls
    assert all(u.startswith(upstream) for u in urls), urls
