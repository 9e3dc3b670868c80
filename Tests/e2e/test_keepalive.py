"""Connection reuse: client keep-alive, upstream keep-alive, pipelining, HTTP/1.0 clients."""

import json

import pytest

import origin as origin_mod
from helpers import (RawConn, curl, entries, entries_for, proxy_curl_args,
                     request_bytes)

N = 4


def _urls(origin, tag):
    return [origin.url(f"/json?{tag}={i}&h=host") for i in range(N)]


def _curl_many(px_args, urls):
    args = [*px_args, "-w", "%{num_connects}\n"]
    for u in urls:
        args += ["-o", "/dev/null", u]
    r = curl(*args)
    assert r.rc == 0, r.err
    return [int(x) for x in r.out.split()]


@pytest.mark.parametrize("mode", ["http", "tunnel", "socks5"])
def test_one_client_connection_one_upstream_connection(mode, origin, harrec):
    px = harrec.start()
    connects = _curl_many(proxy_curl_args(mode, px), _urls(origin, mode))
    assert connects == [1] + [0] * (N - 1), f"curl did not reuse its proxy connection: {connects}"
    st = origin.stats()
    assert st["requests"] == N
    assert st["connections"] == 1, f"{N} sequential requests used {st['connections']} upstream " \
                                   f"connections (keep-alive to the origin not reused)"
    har = px.stop()
    es = entries_for(har, f"/json?{mode}=")
    assert len(es) == N
    assert len({e.get("connection") for e in es}) == 1, \
        f"entries on one connection have different 'connection': {[e.get('connection') for e in es]}"
    assert es[0].get("connection"), "entry.connection must be set"


def test_pipelined_requests_answered_in_order(origin, harrec):
    px = harrec.start()
    host = f"127.0.0.1:{origin.port}"
    reqs = [request_bytes("GET", origin.url("/json?p=0&h=host"), host),
            request_bytes("GET", origin.url("/bytes?n=70000&seed=3"), host),
            request_bytes("GET", origin.url("/chunked?n=5000&chunks=4&seed=1"), host),
            request_bytes("HEAD", origin.url("/head"), host),
            request_bytes("GET", origin.url("/json?p=4&h=host"), host)]
    with RawConn(port=px.http_port) as c:
        c.send(b"".join(reqs))  # all in one send
        rs = [c.read_response("HEAD" if i == 3 else "GET") for i in range(len(reqs))]
    assert [r.status for r in rs] == [200] * 5
    assert json.loads(rs[0].body)["args"][0] == ["p", "0"]
    assert rs[1].body == origin_mod.make_bytes(70000, 3)
    assert rs[2].body == origin_mod.make_bytes(5000, 1)
    assert rs[3].body == b"" and rs[3].header("content-length") == str(origin_mod.HEAD_LEN)
    assert json.loads(rs[4].body)["args"][0] == ["p", "4"]
    har = px.stop()
    assert len(entries(har)) == 5
    assert len({e.get("connection") for e in entries(har)}) == 1


def test_pipelined_post_bodies(origin, harrec):
    px = harrec.start()
    host = f"127.0.0.1:{origin.port}"
    b1, b2 = b"first body", origin_mod.make_bytes(30000, 11)
    data = (request_bytes("POST", origin.url("/echo"), host,
                          [("Content-Length", str(len(b1)))], b1)
            + request_bytes("POST", origin.url("/echo"), host,
                            [("Transfer-Encoding", "chunked")],
                            b"%x\r\n%s\r\n0\r\n\r\n" % (len(b2), b2))
            + request_bytes("GET", origin.url("/status/200"), host))
    with RawConn(port=px.http_port) as c:
        c.send(data)
        r1, r2, r3 = (c.read_response("POST"), c.read_response("POST"), c.read_response())
    assert (r1.body, r2.body, r3.body) == (b1, b2, b"status 200\n")
    px.stop()


def test_connection_close_from_client(origin, harrec):
    px = harrec.start()
    with RawConn(port=px.http_port) as c:
        c.send(request_bytes("GET", origin.url("/status/200"), f"127.0.0.1:{origin.port}",
                             [("Connection", "close")]))
        r = c.read_response()
        assert r.body == b"status 200\n"
        assert c.closed_within(2), "the proxy kept the connection after Connection: close"
    px.stop()


def test_http10_client(origin, harrec):
    """An HTTP/1.0 client gets a response it can parse: no chunked coding, and the connection
    closes (or is kept alive with a Content-Length) when it did not ask for keep-alive."""
    px = harrec.start()
    r = curl("-0", "-x", px.http_proxy, origin.url("/chunked?n=30000&chunks=5&seed=3"))
    assert r.rc == 0 and r.out == origin_mod.make_bytes(30000, 3), r.err
    with RawConn(port=px.http_port) as c:
        c.send(request_bytes("GET", origin.url("/chunked?n=20000&chunks=4&seed=5"),
                             f"127.0.0.1:{origin.port}", version="HTTP/1.0"))
        head = c.read_head()
        assert head.version in ("HTTP/1.0", "HTTP/1.1") and head.status == 200
        assert "chunked" not in (head.header("transfer-encoding") or "").lower(), \
            "chunked transfer coding sent to an HTTP/1.0 client"
        if head.header("content-length") is not None:
            body = c._exact(int(head.header("content-length")))
            assert c.closed_within(2), "HTTP/1.0 request without keep-alive: connection must close"
        else:
            body = c.read_until_close()
        assert body == origin_mod.make_bytes(20000, 5)
    har = px.stop()
    es = entries_for(har, "/chunked?n=20000")
    assert len(es) == 1 and es[0]["request"]["httpVersion"] == "HTTP/1.0"


def test_http10_keepalive_client(origin, harrec):
    px = harrec.start()
    host = f"127.0.0.1:{origin.port}"
    with RawConn(port=px.http_port) as c:
        c.send(request_bytes("GET", origin.url("/bytes?n=100"), host,
                             [("Connection", "keep-alive")], version="HTTP/1.0"))
        r = c.read_response()
        assert r.body == origin_mod.make_bytes(100, 0)
        if (r.header("connection") or "").lower() == "keep-alive":
            c.send(request_bytes("GET", origin.url("/bytes?n=50"), host,
                                 [("Connection", "keep-alive")], version="HTTP/1.0"))
            assert c.read_response().body == origin_mod.make_bytes(50, 0)
        else:
            assert c.closed_within(2)
    px.stop()


def test_many_clients_in_parallel(origin, harrec):
    import concurrent.futures as cf
    px = harrec.start()

    def one(i):
        r = curl("-x", px.http_proxy, origin.url(f"/bytes?n={1000 + i}&seed={i}"))
        return r.rc == 0 and r.out == origin_mod.make_bytes(1000 + i, i)

    with cf.ThreadPoolExecutor(16) as ex:
        ok = list(ex.map(one, range(64)))
    assert all(ok), f"{ok.count(False)} of 64 parallel transfers failed"
    har = px.stop()
    assert len(entries(har)) == 64
