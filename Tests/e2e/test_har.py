"""The HAR harrec writes: one scripted session through every kind of client path, then many
checks of what was recorded."""

import base64
import re
from datetime import timezone
from collections import Counter
from pathlib import Path

import pytest

import origin as origin_mod
from helpers import (RawConn, check_timings, content_bytes, curl, entries, entries_for,
                     har_header, one_entry, parse_iso, proxy_curl_args, request_bytes)

QUERY = "/json?a=1&b=x%20y&c=%E2%9C%93&d=&a=2"
POST_TEXT = ("line of text \u2713 caf\u00e9\n" * 500)
ENCODINGS = ("gzip", "deflate", "br", "zstd")


@pytest.fixture(scope="module")
def recorded(origin_module, harrec_module, tmp_path_factory):
    """Runs the scripted session once; returns (har, info). --no-redact: this module checks that
    headers, cookies and bodies are recorded exactly as sent (test_redaction.py covers the
    default, redacted export)."""
    o = origin_module
    px = harrec_module.start("--no-redact")
    host = f"127.0.0.1:{o.port}"
    base = o.base_url
    http = proxy_curl_args("http", px)
    expected = []  # (method, url) of every exchange the HAR must hold
    info = {"origin": o, "px": px}

    def run(*args, method="GET", url, px_args=http, rc=0):
        r = curl(*px_args, *args, url)
        assert r.rc == rc, f"{url}: curl exit {r.rc}: {r.err}"
        expected.append((method, url))
        return r

    run("-H", "Cookie: c1=v1; c2=v2", "-H", "X-Custom: yes", url=base + QUERY)
    # three requests on one client connection
    ka = [base + f"/json?ka={i}" for i in range(3)]
    r = curl(*http, "-w", "%{num_connects}\n", *sum((["-o", "/dev/null", u] for u in ka), []))
    assert r.rc == 0 and r.out.split() == [b"1", b"0", b"0"], (r.out, r.err)
    expected += [("GET", u) for u in ka]
    for enc in ENCODINGS:
        run(url=base + "/" + enc)
    run(url=base + "/bytes?n=4096&seed=9")
    run(url=base + "/chunked?n=3000&chunks=3&seed=2")
    tmp = tmp_path_factory.mktemp("har-post")
    text_file = Path(tmp) / "post.txt"
    text_file.write_bytes(POST_TEXT.encode("utf-8"))
    run("--data-binary", f"@{text_file}", "-H", "Content-Type: text/plain; charset=utf-8",
        method="POST", url=base + "/echo?text=1")
    run("--data-binary", "name=J%C3%BCrgen&x=1%202", method="POST", url=base + "/echo?form=1")
    run(url=base + "/set-cookie")
    run(url=base + "/redirect")
    run("-I", method="HEAD", url=base + "/head")
    run(url=base + "/status/204")
    run(url=base + "/status/304")
    run("-0", url=base + "/json?v=10")
    run(url=base + "/json?via=socks5", px_args=proxy_curl_args("socks5", px))
    run(url=base + "/json?via=tunnel", px_args=proxy_curl_args("tunnel", px))
    run(url=base + "/close-delimited?n=5000&seed=4")
    # a raw request whose head we know byte for byte
    raw_url = base + "/json?raw=1"
    head = request_bytes("GET", raw_url, host, [("X-Raw", "exact"), ("Accept", "*/*")])
    with RawConn(port=px.http_port) as c:
        c.send(head)
        resp = c.read_response()
    assert resp.status == 200
    expected.append(("GET", raw_url))
    info["raw_head"] = head
    info["raw_url"] = raw_url
    info["expected"] = expected
    har = px.stop()
    return har, info


def test_log_basics(recorded):
    har, _ = recorded
    log = har["log"]
    assert log["version"] == "1.2"
    assert log["creator"]["name"] and log["creator"]["version"]


def test_every_exchange_exactly_once(recorded):
    har, info = recorded
    got = Counter((e["request"]["method"], e["request"]["url"]) for e in entries(har))
    want = Counter(info["expected"])
    assert got == want, f"missing: {want - got}; unexpected: {got - want}"


def test_entries_sorted_by_start(recorded):
    har, _ = recorded
    times = [parse_iso(e["startedDateTime"]) for e in entries(har)]
    assert times == sorted(times)
    for e in entries(har):
        assert parse_iso(e["startedDateTime"]).tzinfo is not None, "startedDateTime needs a zone"


def test_no_errors_on_good_exchanges(recorded):
    har, _ = recorded
    for e in entries(har):
        assert "_error" not in e, f"{e['request']['url']}: {e['_error']}"
        assert e["response"]["status"] > 0


def test_timings(recorded):
    har, _ = recorded
    for e in entries(har):
        check_timings(e)


def test_server_ip_and_connection(recorded):
    har, _ = recorded
    for e in entries(har):
        assert e.get("serverIPAddress") == "127.0.0.1", e["request"]["url"]
        assert isinstance(e.get("connection"), str) and e["connection"], e["request"]["url"]
    ka = entries_for(har, "/json?ka=")
    assert len(ka) == 3 and len({e["connection"] for e in ka}) == 1


def test_query_string_decoded(recorded):
    har, info = recorded
    e = one_entry(har, QUERY)
    assert e["request"]["url"] == info["origin"].base_url + QUERY
    assert [(q["name"], q["value"]) for q in e["request"]["queryString"]] == [
        ("a", "1"), ("b", "x y"), ("c", "\u2713"), ("d", ""), ("a", "2")]
    assert one_entry(har, "/gzip")["request"]["queryString"] == []


def test_request_headers_and_cookies(recorded):
    har, _ = recorded
    req = one_entry(har, QUERY)["request"]
    assert req["method"] == "GET" and req["httpVersion"] == "HTTP/1.1"
    assert har_header(req, "X-Custom") == "yes"
    assert har_header(req, "Host") is not None
    assert [(c["name"], c["value"]) for c in req["cookies"]] == [("c1", "v1"), ("c2", "v2")]
    assert req["bodySize"] == 0


def test_raw_request_head_size(recorded):
    har, info = recorded
    e = one_entry(har, "/json?raw=1")
    req = e["request"]
    assert req["headersSize"] == len(info["raw_head"]), \
        "request.headersSize must be the byte length of the head the client sent, CRLFCRLF included"
    assert [(h["name"], h["value"]) for h in req["headers"]] == [
        ("Host", f"127.0.0.1:{info['origin'].port}"), ("X-Raw", "exact"), ("Accept", "*/*")]
    assert req["bodySize"] == 0
    assert e["response"]["headersSize"] > 0 or e["response"]["headersSize"] == -1


def test_response_basics(recorded):
    har, _ = recorded
    e = one_entry(har, QUERY)
    resp = e["response"]
    assert resp["status"] == 200 and resp["statusText"] == "OK"
    assert resp["httpVersion"] == "HTTP/1.1"
    assert har_header(resp, "Server") == origin_mod.SERVER_NAME
    assert resp["content"]["mimeType"].startswith("application/json")
    body = content_bytes(resp["content"])
    assert resp["content"]["size"] == len(body)
    assert resp["bodySize"] == len(body)
    assert resp["redirectURL"] == ""


@pytest.mark.parametrize("enc", ENCODINGS)
def test_encoded_bodies_decoded(recorded, enc):
    har, _ = recorded
    resp = one_entry(har, "/" + enc)["response"]
    c = resp["content"]
    assert har_header(resp, "Content-Encoding") == enc
    assert content_bytes(c) == origin_mod.JSON_DOC, f"{enc}: content.text is not the decoded body"
    assert c["size"] == len(origin_mod.JSON_DOC), "content.size = decoded length"
    assert resp["bodySize"] == len(origin_mod.encoded_doc(enc)), "bodySize = bytes on the wire"
    if "compression" in c:
        assert c["compression"] == len(origin_mod.JSON_DOC) - len(origin_mod.encoded_doc(enc))
    assert c["mimeType"].startswith("application/json")


def test_binary_body_base64(recorded):
    har, _ = recorded
    resp = one_entry(har, "/bytes?n=4096")["response"]
    c = resp["content"]
    assert c.get("encoding") == "base64"
    assert base64.b64decode(c["text"]) == origin_mod.make_bytes(4096, 9)
    assert c["size"] == 4096 and resp["bodySize"] == 4096
    assert c["mimeType"] == "application/octet-stream"


def test_chunked_body(recorded):
    har, _ = recorded
    resp = one_entry(har, "/chunked?n=3000")["response"]
    assert content_bytes(resp["content"]) == origin_mod.make_bytes(3000, 2)
    assert resp["content"]["size"] == 3000


def test_close_delimited_body(recorded):
    har, _ = recorded
    resp = one_entry(har, "/close-delimited")["response"]
    assert content_bytes(resp["content"]) == origin_mod.make_bytes(5000, 4)
    assert resp["content"]["size"] == 5000 and resp["bodySize"] == 5000


def test_post_data(recorded):
    har, _ = recorded
    e = one_entry(har, "/echo?text=1")
    req = e["request"]
    assert req["method"] == "POST"
    assert req["postData"]["mimeType"] == "text/plain; charset=utf-8"
    assert req["postData"]["text"] == POST_TEXT
    assert req["bodySize"] == len(POST_TEXT.encode("utf-8"))
    assert content_bytes(e["response"]["content"]) == POST_TEXT.encode("utf-8")


def test_post_form(recorded):
    har, _ = recorded
    pd = one_entry(har, "/echo?form=1")["request"]["postData"]
    assert pd["mimeType"] == "application/x-www-form-urlencoded"
    assert pd["text"] == "name=J%C3%BCrgen&x=1%202"
    if pd.get("params"):
        assert [(p["name"], p["value"]) for p in pd["params"]] == [("name", "J\u00fcrgen"),
                                                                   ("x", "1 2")]


def test_set_cookie_parsed(recorded):
    har, _ = recorded
    cookies = one_entry(har, "/set-cookie")["response"]["cookies"]
    assert len(cookies) == 2
    for got, want in zip(cookies, origin_mod.EXPECTED_COOKIES):
        assert got["name"] == want["name"] and got["value"] == want["value"]
        assert got.get("path") == want["path"] and got.get("domain") == want["domain"]
        exp = parse_iso(got["expires"])
        if exp.tzinfo is not None:
            exp = exp.astimezone(timezone.utc)
        assert exp.replace(tzinfo=None).isoformat() == want["expires"], got["expires"]
        assert bool(got.get("httpOnly", False)) == want["httpOnly"]
        assert bool(got.get("secure", False)) == want["secure"]
        same = got.get("sameSite", got.get("_sameSite"))
        if same is not None:
            assert same.lower() == want["sameSite"].lower()


def test_redirect_url(recorded):
    har, _ = recorded
    resp = one_entry(har, "/redirect")["response"]
    assert resp["status"] == 302
    assert resp["redirectURL"] == origin_mod.REDIRECT_LOCATION


def test_head_and_no_body_statuses(recorded):
    har, _ = recorded
    for path, method, status in (("/head", "HEAD", 200), ("/status/204", "GET", 204),
                                 ("/status/304", "GET", 304)):
        resp = one_entry(har, path, method)["response"]
        assert resp["status"] == status
        assert resp["content"]["size"] == 0 and resp["bodySize"] == 0
        assert content_bytes(resp["content"]) == b""
    head = one_entry(har, "/head")["response"]
    assert har_header(head, "Content-Length") == str(origin_mod.HEAD_LEN)


def test_http10_version_recorded(recorded):
    har, _ = recorded
    assert one_entry(har, "/json?v=10")["request"]["httpVersion"] == "HTTP/1.0"


def test_socks_and_tunnel_urls(recorded):
    har, info = recorded
    base = info["origin"].base_url
    for via in ("socks5", "tunnel"):
        e = one_entry(har, f"/json?via={via}")
        assert e["request"]["url"] == f"{base}/json?via={via}"
        assert e["response"]["status"] == 200
        doc = content_bytes(e["response"]["content"])
        assert b'"target": "/json?via=' in doc


def test_live_lines(recorded):
    _, info = recorded
    px = info["px"]
    port = info["origin"].port
    rx = re.compile(r"^127\.0\.0\.1:\d+ GET http://127\.0\.0\.1:%d/json\?ka=0 200 \S+ \S+$" % port)
    assert any(rx.match(ln) for ln in px.stderr_lines), "\n".join(px.stderr_lines[-30:])
    assert re.search(r"^harrec: wrote %d entries to " % len(info["expected"]),
                     "\n".join(px.stderr_lines), re.M), px.stderr_lines[-3:]


def test_trailers_are_recorded(harrec, origin):
    """Chunked trailers (a gRPC status travels in them) are in the HAR as `_trailers`, shaped like
    `headers`, on the response (and the request, when it sends some)."""
    import hashlib
    px = harrec.start("--no-redact")
    url = origin.url("/chunked?n=5000&chunks=3&seed=4&trailer=1")
    r = curl("-sS", "-x", px.http_proxy, url, "-o", "/dev/null")
    assert r.rc == 0, r.err
    har = px.stop()
    (e,) = har["log"]["entries"]
    trailers = e["response"]["_trailers"]
    assert [t["name"].lower() for t in trailers] == ["x-body-sha256"], trailers
    body = base64.b64decode(e["response"]["content"]["text"]) if e["response"]["content"].get("encoding") == "base64" \
        else e["response"]["content"]["text"].encode()
    assert trailers[0]["value"] == hashlib.sha256(body).hexdigest()
    assert "_trailers" not in e["request"], "a request without trailers has none"
