#!/usr/bin/env python3
"""Writes a large HAR with mixed JSON bodies and planted secrets, for scripts/bench-redact.

usage: make_big_har.py OUT.har [--mb 100] [--seed 1]

Entries look like a mobile app's API traffic: a bearer JWT in Authorization, session cookies,
JSON responses of 2-60 KB (lists of records with emails, URLs, ids, nested objects, tokens under
sensitive keys), urlencoded and JSON request bodies, some base64 text bodies and binary bodies.
"""
import base64, json, random, sys

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

def jwt(rng):
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": f"user-{rng.randrange(10**6)}", "email": f"u{rng.randrange(999)}@corp.example.org",
                              "iat": 1700000000 + rng.randrange(10**6)}).encode())
    return f"{head}.{body}.{b64url(rng.randbytes(32))}"

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()

def record(rng, i):
    return {
        "id": i, "uuid": "%08x-%04x-4%03x-a%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12), rng.getrandbits(12), rng.getrandbits(48)),
        "name": " ".join(rng.choice(WORDS) for _ in range(3)),
        "email": f"{rng.choice(WORDS)}.{rng.choice(WORDS)}{rng.randrange(100)}@example-mail.com",
        "avatarUrl": f"https://cdn.example.com/avatars/{i}.png?size=64&sig={rng.getrandbits(64):x}",
        "score": rng.random() * 100, "active": rng.random() < 0.5, "tags": rng.sample(WORDS, 3),
        "address": {"street": f"{rng.randrange(999)} {rng.choice(WORDS).title()} St", "city": rng.choice(WORDS).title(), "zip": f"{rng.randrange(10**5):05d}"},
        "description": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(5, 40))),
    }

def entry(rng, n, token, cookie):
    path = rng.choice(["/v1/users", "/v1/projects", "/v1/messages", "/v1/feed", "/v1/search"])
    count = rng.randrange(3, 120)
    body = {"data": [record(rng, n * 1000 + k) for k in range(count)], "page": n, "next": f"https://api.example.com{path}?page={n+1}&access_token={token[:20]}"}
    if n % 7 == 0:
        body["session"] = {"refresh_token": b64url(rng.randbytes(24)), "expires_in": 3600}
    text = json.dumps(body, indent=2 if n % 3 == 0 else None)
    content = {"size": len(text.encode()), "mimeType": "application/json", "text": text}
    if n % 29 == 0:
        content = {"size": len(text.encode()), "mimeType": "application/json", "text": base64.b64encode(text.encode()).decode(), "encoding": "base64"}
    if n % 31 == 0:
        blob = rng.randbytes(2048)
        content = {"size": len(blob), "mimeType": "image/png", "text": base64.b64encode(blob).decode(), "encoding": "base64"}
    req = {
        "method": "GET" if n % 4 else "POST", "url": f"https://api.example.com{path}?page={n}&limit=50",
        "httpVersion": "HTTP/1.1",
        "cookies": [{"name": "sid", "value": cookie}],
        "headers": [{"name": "Host", "value": "api.example.com"}, {"name": "Authorization", "value": f"Bearer {token}"},
                    {"name": "Cookie", "value": f"sid={cookie}; theme=dark"}, {"name": "Accept", "value": "application/json"}],
        "queryString": [{"name": "page", "value": str(n)}, {"name": "limit", "value": "50"}],
        "headersSize": -1, "bodySize": 0,
    }
    if n % 4 == 0:
        post = json.dumps({"query": "find " + rng.choice(WORDS), "password": f"pw-{rng.getrandbits(40):x}", "client": {"id": n, "api_key": b64url(rng.randbytes(16))}})
        req["postData"] = {"mimeType": "application/json", "text": post}
        req["bodySize"] = len(post.encode())
    return {
        "startedDateTime": "2026-11-30T10:%02d:%02d.%03dZ" % ((n // 60000) % 60, (n // 1000) % 60, n % 1000),
        "time": 12.5, "request": req,
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                     "headers": [{"name": "Content-Type", "value": "application/json"}, {"name": "Set-Cookie", "value": f"sid={cookie}; Path=/; HttpOnly"}],
                     "content": content, "redirectURL": "", "headersSize": -1, "bodySize": content["size"]},
        "cache": {}, "timings": {"send": 0.5, "wait": 10.0, "receive": 2.0}, "serverIPAddress": "10.1.2.3",
    }

def main():
    # The output path comes first; anything option-like there (`--help`) gets the usage instead of
    # a 100 MB file of that name.
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    out = sys.argv[1]
    mb = float(sys.argv[sys.argv.index("--mb") + 1]) if "--mb" in sys.argv else 100
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    rng = random.Random(seed)
    target = int(mb * 1_000_000)
    tokens = [jwt(rng) for _ in range(20)]
    cookies = [b64url(rng.randbytes(18)) for _ in range(20)]
    entries, size, n = [], 200, 0
    while size < target:
        e = entry(rng, n, rng.choice(tokens), rng.choice(cookies))
        size += len(json.dumps(e)) + 2
        entries.append(e)
        n += 1
    har = {"log": {"version": "1.2", "creator": {"name": "make_big_har", "version": "1"}, "entries": entries}}
    with open(out, "w") as f:
        json.dump(har, f, indent=1)
    print(f"{out}: {n} entries")

if __name__ == "__main__":
    main()
