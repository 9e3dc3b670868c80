#!/usr/bin/env python3
"""Writes the raw golden inputs of Fixtures/redaction (the *.in.har files except the mitmproxy
sample, which is a copy of a real mitmproxy 12.3.1 recording). The credentials are fake.

    python3 Fixtures/redaction/make_inputs.py

The expected outputs (*.out.har) come from the engine and were reviewed by hand:
    HARREC_UPDATE_GOLDEN=1 swift test --filter RedactionTests.GoldenTests
then read `git diff Fixtures/redaction` before committing.

Files:
- headers-urls.in.har   Authorization/Proxy-Authorization, Cookie, Set-Cookie, named and
                        name-contains secret headers, query parameters in url/queryString,
                        Referer/Location/Origin URLs, URL userinfo, internal hosts in url/Host/
                        serverIPAddress, private IPv4/IPv6, a urlencoded form (params + text).
- bodies.in.har         JSON keys in every case style (types and formatting kept), JSON nested
                        in strings, text secrets (JWT, bearer, AWS, GitHub, Slack, Stripe, Google,
                        PEM, emails), base64 text bodies, a binary body, a multipart form,
                        truncated JSON.
- websocket.in.har      _webSocketMessages: JSON and text messages, nested JSON, binary.
- login-flow.in.har     the same secrets across entries: a token from /login in later
                        Authorization headers, query strings and a refresh form; a cookie set
                        then sent; an email in several responses.
- rules-example.in.har  redacted with rules-example.json (extra header/param/key/pattern/suffix,
                        allow-list, a disabled rule).
"""

import base64
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = "2026-12-01T05:58:%02d.000Z"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(header: dict, payload: dict, sig: bytes = b"not-a-real-signature") -> str:
    enc = lambda d: b64url(json.dumps(d, separators=(",", ":")).encode())
    return f"{enc(header)}.{enc(payload)}.{b64url(sig)}"


def entry(i, method, url, req_headers=(), req_body=None, req_b64=False, status=200,
          resp_headers=(), resp_body=None, resp_b64=False, resp_bytes=None, server_ip="93.184.215.14",
          extra=None):
    from urllib.parse import urlsplit, parse_qsl
    headers = [{"name": n, "value": v} for n, v in req_headers]
    cookies = []
    for n, v in req_headers:
        if n.lower() == "cookie":
            for piece in v.split(";"):
                piece = piece.strip()
                if piece:
                    k, _, val = piece.partition("=")
                    cookies.append({"name": k, "value": val})
    request = {"method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": cookies,
               "headers": headers,
               "queryString": [{"name": k, "value": v}
                               for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)],
               "headersSize": -1, "bodySize": 0}
    if req_body is not None:
        mime, text = req_body
        raw = text.encode()
        headers += [{"name": "Content-Type", "value": mime}, {"name": "Content-Length", "value": str(len(raw))}]
        post = {"mimeType": mime}
        if mime.startswith("application/x-www-form-urlencoded"):
            post["params"] = [{"name": k, "value": v} for k, v in parse_qsl(text, keep_blank_values=True)]
        post["text"] = base64.b64encode(raw).decode() if req_b64 else text
        if req_b64:
            post["encoding"] = "base64"
        request["postData"] = post
        request["bodySize"] = len(raw)
    rheaders = [{"name": n, "value": v} for n, v in resp_headers]
    rcookies = []
    for n, v in resp_headers:
        if n.lower() == "set-cookie":
            first, *attrs = [p.strip() for p in v.split(";")]
            k, _, val = first.partition("=")
            c = {"name": k, "value": val}
            for a in attrs:
                an, _, av = a.partition("=")
                if an.lower() == "path":
                    c["path"] = av
                elif an.lower() == "domain":
                    c["domain"] = av
            c["httpOnly"] = any(a.lower() == "httponly" for a in attrs)
            c["secure"] = any(a.lower() == "secure" for a in attrs)
            rcookies.append(c)
    content = {"size": 0, "mimeType": "x-unknown"}
    body_size = 0
    if resp_body is not None or resp_bytes is not None:
        mime = resp_body[0] if resp_body is not None else resp_bytes[0]
        raw = resp_body[1].encode() if resp_body is not None else resp_bytes[1]
        rheaders += [{"name": "Content-Type", "value": mime}, {"name": "Content-Length", "value": str(len(raw))}]
        content = {"size": len(raw), "mimeType": mime}
        if resp_b64 or resp_bytes is not None:
            content["text"] = base64.b64encode(raw).decode()
            content["encoding"] = "base64"
        else:
            content["text"] = resp_body[1]
        body_size = len(raw)
    location = next((v for n, v in resp_headers if n.lower() == "location"), "")
    response = {"status": status, "statusText": "OK" if status < 300 else "Found" if status == 302 else "Other",
                "httpVersion": "HTTP/1.1", "cookies": rcookies, "headers": rheaders, "content": content,
                "redirectURL": location, "headersSize": -1, "bodySize": body_size}
    timings = {"blocked": 0.5, "dns": -1, "connect": 1.25, "send": 0.25, "wait": 3, "receive": 1, "ssl": -1}
    e = {"startedDateTime": BASE % i, "time": 6, "request": request, "response": response, "cache": {},
         "timings": timings}
    if server_ip is not None:
        e["serverIPAddress"] = server_ip
    if extra:
        e.update(extra)
    return e


def write(name, entries):
    har = {"log": {"version": "1.2", "creator": {"name": "make_inputs.py", "version": "1"}, "entries": entries}}
    (HERE / name).write_text(json.dumps(har, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


ACCESS_JWT = jwt({"alg": "RS256", "typ": "JWT", "kid": "2024-key"},
                 {"sub": "u-8812", "email": "mia.chen@acme-corp.com", "name": "Mia Chen", "iat": 1764568685})
ID_JWT = jwt({"alg": "ES256"}, {"sub": "u-8812", "aud": "mobile-app"})
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq3Xk2s0bFakeFakeFakeFakeFakeFakeFake\n"
       "Qm9ndXNLZXlGb3JUZXN0c09ubHlOb3RSZWFs\n-----END RSA PRIVATE KEY-----\n")


def headers_urls():
    return [
        entry(0, "GET", "https://api.example.com/v1/orders?page=2&access_token=at-5f1e0c9b77&api_key=ak-310ff2&sig=9f8e7d&q=barcode+scanner",
              req_headers=[("Host", "api.example.com"), ("Authorization", "Bearer sk-opaque-4b1d9e62c0a7"),
                           ("Proxy-Authorization", "Basic cHJveHl1c2VyOnByb3h5cGFzcw=="),
                           ("Cookie", "sid=s%3A9d8c7b6a5f; theme=dark; _ga=GA1.2.1234567890.1700000000"),
                           ("X-Api-Key", "xk-77aa88bb99"), ("X-CSRF-Token", "csrf-0c0ffee0"),
                           ("X-Amz-Security-Token", "FwoGZXIvYXdzEFakeSessionToken"),
                           ("X-Refresh-Token", "rt-header-1234"), ("X-Request-Id", "req-42"),
                           ("Referer", "https://app.example.com/callback?code=oauth-code-777&state=s1"),
                           ("Origin", "https://app.example.com"), ("User-Agent", "demo/1.0")],
              resp_headers=[("Set-Cookie", "sid=s%3Anew-session-321; Path=/; Domain=.example.com; HttpOnly; Secure; SameSite=Lax"),
                            ("Set-Cookie", "prefs=compact; Path=/app"),
                            ("X-Served-By", "web-3.prod.internal (10.12.0.7)")],
              resp_body=("application/json", '{"orders": [], "page": 2}')),
        entry(1, "GET", "https://deploy:hunter2@git.corp:8443/repo.git/info/refs?service=git-upload-pack",
              req_headers=[("Host", "git.corp:8443")],
              status=302,
              resp_headers=[("Location", "https://sso.corp/login?next=%2Frepo&token=sso-tok-55")],
              resp_body=("text/plain", "redirecting to sso.corp"), server_ip="10.12.0.9"),
        entry(2, "POST", "https://auth.example.com/oauth/token",
              req_headers=[("Host", "auth.example.com"), ("Origin", "https://admin:pw@console.example.com")],
              req_body=("application/x-www-form-urlencoded",
                        "grant_type=password&username=mia.chen%40acme-corp.com&password=Tr0ub4dor%263&client_id=web&client_secret=cs-9a8b7c"),
              resp_body=("application/json", '{"error": "invalid_grant"}'), status=400),
        entry(3, "GET", "http://[fd12:3456:789a::10]:8080/metrics?key=mk-1",
              req_headers=[("Host", "[fd12:3456:789a::10]:8080")],
              resp_body=("text/plain", "up 1\nnode 192.168.40.2\nlink fe80::1%eth0\npublic 8.8.8.8\n"),
              server_ip="fd12:3456:789a::10"),
        entry(4, "GET", "https://api.corp.example.com/public?encode=utf8&made=1",
              req_headers=[("Host", "api.corp.example.com")],
              resp_body=("application/json", '{"tokenizer": "bpe", "barcode": "4006381333931"}'),
              server_ip="203.0.113.50"),
    ]


def bodies():
    login_req = ('{\n  "username": "mia.chen@acme-corp.com",\n  "password": "Tr0ub4dor&3",\n'
                 '  "rememberMe": true,\n  "device": {"id": "dev-1", "pushToken": "apns-token-ffee"}\n}')
    login_resp = ('{"access_token":"' + ACCESS_JWT + '","token_type":"Bearer","expires_in":3600,'
                  '"refresh-token":"rt-31a7c9","id_token":"' + ID_JWT + '","user":{"id":8812,'
                  '"email":"mia.chen@acme-corp.com","sessionId":  912837465,"passwordPolicy":"strong",'
                  '"apiKey":null,"clientSecret":false}}')
    nested = json.dumps({"event": "sync",
                         "payload": json.dumps({"authToken": "nested-tok-42", "count": 3,
                                                "inner": json.dumps({"password": "deep-pw"})}),
                         "note": "plain"})
    text_secrets = ("aws AKIAIOSFODNN7EXAMPLE / ASIAY34FZKBOKMUTVV7A\n"
                    "gh ghp_1234567890abcdefghijklmnopqrstuvwxyz and github_pat_11AAAAAAA0123456789_abcdefghijklmnopqrstuv\n"
                    "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\n"
                    "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_live_51H8xyzABCDEFGHIJ\n"
                    "google AIzaSyD-1234567890abcdefghijklmnopqrstu\n"
                    "curl -H 'Authorization: Bearer cli-bearer-0987654321' https://api.example.com\n"
                    "jwt " + ACCESS_JWT + "\n"
                    "mail ops@acme-corp.com, MIA.CHEN@ACME-CORP.COM\n"
                    "db postgres://app:db-pass-1@db1.internal:5432/app\n" + PEM)
    b64_json = json.dumps({"token": "b64-body-token-9", "email": "noah@acme-corp.com", "caf\u00e9": "\u2713"},
                          ensure_ascii=False)
    boundary = "----harrecForm7MA4YWxkTrZu0gW"
    multipart = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nmia\r\n"
                 f"--{boundary}\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nmp-secret-pw\r\n"
                 f"--{boundary}\r\nContent-Disposition: form-data; name=\"profile\"\r\nContent-Type: application/json\r\n\r\n"
                 "{\"bio\": \"write to mia.chen@acme-corp.com\", \"api_key\": \"pk-55\"}\r\n"
                 f"--{boundary}\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n"
                 "\u0089PNG binary-ish token=not-touched\r\n"
                 f"--{boundary}--\r\n")
    truncated = '{"items": [{"id": 1, "owner": "liam@acme-corp.com", "access_token": "trunc-tok-77", "refresh_token": "trunc-rt-'
    png = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + bytes(range(256)) + b"AKIAIOSFODNN7EXAMPLE"
    return [
        entry(0, "POST", "https://api.example.com/login", req_headers=[("Host", "api.example.com")],
              req_body=("application/json", login_req), resp_body=("application/json; charset=utf-8", login_resp)),
        entry(1, "POST", "https://api.example.com/events", req_headers=[("Host", "api.example.com")],
              req_body=("application/json", nested), resp_body=("text/plain; charset=utf-8", text_secrets)),
        entry(2, "GET", "https://api.example.com/profile.json", req_headers=[("Host", "api.example.com")],
              req_body=("application/json", '{"password":"b64-req-pw"}'), req_b64=True,
              resp_body=("application/json", b64_json), resp_b64=True),
        entry(3, "GET", "https://cdn.example.com/avatar.png", req_headers=[("Host", "cdn.example.com")],
              resp_bytes=("image/png", png)),
        entry(4, "POST", "https://api.example.com/upload", req_headers=[("Host", "api.example.com")],
              req_body=(f"multipart/form-data; boundary={boundary}", multipart),
              resp_body=("application/json", truncated), extra={"comment": "response body cut off by --max-body"}),
    ]


def websocket():
    msgs = [
        {"type": "send", "time": 1796104686.456, "opcode": 1,
         "data": json.dumps({"type": "auth", "accessToken": "ws-access-123", "client": "web"})},
        {"type": "receive", "time": 1796104686.457, "opcode": 1,
         "data": json.dumps({"type": "welcome", "session": {"id": "ws-sess-9", "user": "mia.chen@acme-corp.com"}})},
        {"type": "send", "time": 1796104686.459, "opcode": 1, "data": "PING from 10.0.3.4 via api.internal"},
        {"type": "receive", "time": 1796104686.46, "opcode": 1,
         "data": json.dumps({"type": "echo", "echo": json.dumps({"password": "ws-pw-in-string"})})},
        {"type": "receive", "time": 1796104686.461, "opcode": 2, "data": base64.b64encode(b"\x00\x01token=binary").decode()},
        {"type": "send", "time": 1796104686.462, "opcode": 1, "data": "Bearer ws-bearer-abcdef12 sent"},
    ]
    return [
        entry(0, "GET", "wss://chat.example.com/socket?token=ws-url-tok-1",
              req_headers=[("Host", "chat.example.com"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                           ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
                           ("Cookie", "sid=ws-cookie-1")],
              status=101, resp_headers=[("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                        ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")],
              extra={"_resourceType": "websocket", "_webSocketMessages": msgs}),
    ]


def login_flow():
    token = "at-flow-8c1f2e9d4b"
    refresh = "rt-flow-0a9b8c7d"
    return [
        entry(0, "POST", "https://api.example.com/login", req_headers=[("Host", "api.example.com")],
              req_body=("application/json", '{"email":"ava@acme-corp.com","password":"flow-pw-1"}'),
              resp_headers=[("Set-Cookie", "session=flow-sess-77; Path=/; HttpOnly")],
              resp_body=("application/json", json.dumps({"access_token": token, "refresh_token": refresh,
                                                         "user": {"email": "ava@acme-corp.com"}}))),
        entry(1, "GET", f"https://api.example.com/me?access_token={token}",
              req_headers=[("Host", "api.example.com"), ("Authorization", f"Bearer {token}"),
                           ("Cookie", "session=flow-sess-77")],
              resp_body=("application/json", '{"email": "ava@acme-corp.com", "friends": ["ben@acme-corp.com"]}')),
        entry(2, "GET", "https://api.example.com/friends/ben@acme-corp.com",
              req_headers=[("Host", "api.example.com"), ("Authorization", f"Bearer {token}")],
              resp_body=("application/json", '{"email": "ben@acme-corp.com"}')),
        entry(3, "POST", "https://api.example.com/token",
              req_headers=[("Host", "api.example.com")],
              req_body=("application/x-www-form-urlencoded", f"grant_type=refresh_token&refresh_token={refresh}"),
              resp_body=("application/json", '{"access_token": "at-flow-second-1", "token_type": "Bearer"}')),
        entry(4, "GET", "https://api.example.com/me",
              req_headers=[("Host", "api.example.com"), ("Authorization", "Bearer at-flow-second-1")],
              resp_body=("application/json", '{"email": "ava@acme-corp.com"}')),
    ]


def rules_example():
    return [
        entry(0, "GET", "https://orders.mycorp.net/v2/orders/ORD-12345678?session_key=sk-77&otp=123456&token=demo-public-token",
              req_headers=[("Host", "orders.mycorp.net"), ("X-Device-Id", "device-abc-1"), ("X-Tenant", "tenant-42")],
              resp_body=("application/json",
                         '{"order": "ORD-12345678", "customer": "CUST-AB12CD", "pin": 4321, "deviceId": "d-9",'
                         ' "ssn": "123-45-6789", "contact": "support@example.org", "buyer": "zoe@acme-corp.com",'
                         ' "node": "10.1.2.3", "svc": "billing.svc.cluster.local"}'),
              server_ip="10.1.2.3"),
    ]


if __name__ == "__main__":
    write("headers-urls.in.har", headers_urls())
    write("bodies.in.har", bodies())
    write("websocket.in.har", websocket())
    write("login-flow.in.har", login_flow())
    write("rules-example.in.har", rules_example())
