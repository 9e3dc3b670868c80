"""The origin: nginx on loopback serving /small.json (~100 B) and /big.json (24 KB JSON sent
gzip-encoded), over plain HTTP or TLS (a throw-away test PKI from certs/make-test-pki.sh)."""

import gzip
import http.client
import json
import os
import random
import ssl
import time

from .drivers import http_get
from .install import BENCH_DIR, REPO
from .proc import Failure, run_logged, spawn, tail

NGINX_TEMPLATE = os.path.join(BENCH_DIR, "nginx.conf.in")
NGINX_HTTPS_TEMPLATE = os.path.join(BENCH_DIR, "nginx-https.conf.in")
NGINX_H2_TEMPLATE = os.path.join(BENCH_DIR, "nginx-h2.conf.in")
MAKE_PKI = os.path.join(REPO, "certs", "make-test-pki.sh")


def make_payloads(docroot):
    small = {"id": 12345, "name": "harrec-bench", "ok": True, "ts": "2024-05-01T12:00:00Z",
             "tags": ["http", "bench"], "count": 42}
    small_b = json.dumps(small, separators=(",", ":")).encode() + b"\n"

    rng = random.Random(20240501)
    first = ["Ada", "Grace", "Linus", "Margaret", "Ken", "Barbara", "Dennis", "Frances", "Alan",
             "Radia", "Tim", "Hedy", "Edsger", "Sophie", "Donald", "Katherine"]
    last = ["Lovelace", "Hopper", "Torvalds", "Hamilton", "Thompson", "Liskov", "Ritchie", "Allen",
            "Turing", "Perlman", "Berners-Lee", "Lamarr", "Dijkstra", "Wilson", "Knuth", "Johnson"]
    cities = ["Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Lyon", "Austin", "Melbourne"]
    products = ["USB-C cable", "Mechanical keyboard", "Noise-cancelling headphones", "Desk lamp",
                "Laptop stand", "27\" monitor", "Webcam", "Ergonomic mouse", "Dock", "SSD 1TB"]
    statuses = ["pending", "paid", "shipped", "delivered", "refunded"]
    orders = []
    body = b""
    i = 0
    while True:
        i += 1
        items = []
        for _ in range(rng.randint(1, 4)):
            items.append({"sku": f"SKU-{rng.randint(10000, 99999)}", "name": rng.choice(products),
                          "quantity": rng.randint(1, 3),
                          "unit_price": {"amount": rng.randint(299, 49999), "currency": "EUR"}})
        fn, ln = rng.choice(first), rng.choice(last)
        orders.append({
            "id": f"ord_{rng.getrandbits(48):012x}", "number": 100000 + i,
            "status": rng.choice(statuses),
            "created_at": f"2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}T"
                          f"{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}Z",
            "customer": {"id": rng.randint(1, 10 ** 6), "name": f"{fn} {ln}",
                         "email": f"{fn.lower()}.{ln.lower()}@example.com",
                         "address": {"city": rng.choice(cities), "zip": f"{rng.randint(10000, 99999)}",
                                     "country": rng.choice(["DE", "PT", "JP", "CA", "KE", "FR"])}},
            "items": items,
            "total": {"amount": sum(x["quantity"] * x["unit_price"]["amount"] for x in items),
                      "currency": "EUR"},
            "tags": rng.sample(["gift", "express", "b2b", "first-order", "promo", "fragile"], 2),
            "note": None if rng.random() < 0.7 else "Leave at the front desk, please.",
        })
        doc = {"data": orders, "meta": {"page": 1, "per_page": len(orders), "total": 4812,
                                        "next": "/orders?page=2"}}
        candidate = json.dumps(doc, separators=(",", ":")).encode() + b"\n"
        if len(candidate) > 24 * 1024:
            break
        body = candidate
    gz = gzip.compress(body, compresslevel=9, mtime=0)
    with open(os.path.join(docroot, "small.json"), "wb") as f:
        f.write(small_b)
    with open(os.path.join(docroot, "big.json.gz"), "wb") as f:
        f.write(gz)
    for name in ("small.json", "big.json.gz"):
        os.chmod(os.path.join(docroot, name), 0o644)
    return len(small_b), len(body), len(gz)


def tls_context(cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = True
    return ctx


def https_get(port, path, cafile, origin=None, timeout=3.0):
    """GET https://localhost:ORIGIN/path, directly (origin None: port is nginx) or through the
    proxy at `port` with CONNECT localhost:ORIGIN. Returns (status, content-encoding, body)."""
    ctx = tls_context(cafile)
    if origin is None:
        conn = http.client.HTTPSConnection("localhost", port, timeout=timeout, context=ctx)
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=ctx)
        conn.set_tunnel("localhost", origin)
    try:
        conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, resp.getheader("Content-Encoding"), data
    finally:
        conn.close()


def make_pki(tmp):
    pki = os.path.join(tmp, "pki")
    run_logged(["sh", MAKE_PKI, pki, "localhost", "127.0.0.1"], "certs/make-test-pki.sh", 120)
    for f in ("ca.pem", "server.pem", "server-key.pem"):
        if not os.path.exists(os.path.join(pki, f)):
            raise Failure(f"make-test-pki.sh did not write {f}")
    return pki




def start_origin(nginx, tmp, port, pki=None, template=None):
    """Starts nginx on 127.0.0.1:port (TLS with pki's server.pem when pki is given) and waits
    until both documents answer as expected. Returns (proc, (small B, big B, big gzip B))."""
    template = template or (NGINX_HTTPS_TEMPLATE if pki else NGINX_TEMPLATE)
    prefix = os.path.join(tmp, "nginx")
    docroot = os.path.join(tmp, "www")
    for d in (prefix, docroot):
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o755)
    sizes = make_payloads(docroot)
    with open(template) as f:
        conf = f.read()
    subst = {"@PREFIX@": prefix, "@DOCROOT@": docroot, "@PORT@": str(port)}
    if pki:
        subst.update({"@CERT@": os.path.join(pki, "server.pem"), "@KEY@": os.path.join(pki, "server-key.pem")})
    for k, v in subst.items():
        conf = conf.replace(k, v)
    conf_path = os.path.join(prefix, "nginx.conf")
    with open(conf_path, "w") as f:
        f.write(conf)
    logf = os.path.join(tmp, "logs", "nginx.log")
    proc = spawn([nginx, "-p", prefix + "/", "-c", conf_path, "-e", os.path.join(prefix, "error.log")],
                 logf)
    cafile = os.path.join(pki, "ca.pem") if pki else None
    get = (lambda path: https_get(port, path, cafile)) if pki else (lambda path: http_get(port, path))
    deadline = time.monotonic() + 15
    while True:
        if proc.poll() is not None:
            raise Failure(f"nginx exited ({proc.returncode}):\n{tail(logf)}\n"
                          f"{tail(os.path.join(prefix, 'error.log'))}")
        try:
            st, _, data = get("/small.json")
            st2, enc, data2 = get("/big.json")
            if st == 200 and len(data) == sizes[0] and st2 == 200 and enc == "gzip" \
                    and len(data2) == sizes[2]:
                break
            raise Failure(f"nginx answers unexpectedly: {st} {len(data)} B, {st2} {enc} {len(data2)} B")
        except (OSError, http.client.HTTPException):
            pass
        if time.monotonic() > deadline:
            raise Failure(f"nginx did not come up in 15 s:\n{tail(os.path.join(prefix, 'error.log'))}")
        time.sleep(0.1)
    return proc, sizes
