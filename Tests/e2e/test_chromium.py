"""Chromium through harrec (issue 16), headless, with harrec as its proxy for loopback too.

Chromium trusts nothing but the harrec CA's key (`--ignore-certificate-errors-spki-list`, which it
checks against the certificates the server sends): the page loading proves the CA goes out after
the leaf. The page comes from nginx with `http2`, so Chromium speaks h2 through harrec; its script
fetches a body and opens a WebSocket to a python `websockets` server over TLS, which must stay on
HTTP/1.1 (harrec never advertises RFC 8441's extended CONNECT) and be recorded with its messages.

Chromium makes background requests to Google hosts that no flag fully stops, and harrec would
look those names up. So the whole scenario (origin, nginx, the WebSocket server, harrec and
Chromium) runs in a network namespace of its own with only loopback (`unshare -n`, run as this
file's `__main__`): nothing can leave the machine, and the test checks what did reach harrec.
The browser is driven over the DevTools protocol, so the page's asynchronous results are read
when they are there rather than at a fixed time.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PAGE = """<!doctype html>
<html><head><title>loading</title></head><body><div id="ws">pending</div><div id="post">pending</div><script>
const port = new URLSearchParams(location.search).get("ws");
fetch("/bytes?n=150000&seed=21").then(r => r.arrayBuffer()).then(b => {
  document.title = "fetched " + b.byteLength;
});
// nginx answers a POST to a static file with 405 before reading the 300 KB body, then
// RST_STREAM(NO_ERROR) (RFC 9113 §8.1): the page must see the 405.
fetch("/static/page.html", {method: "POST", body: new Uint8Array(300000)}).then(
  r => { document.getElementById("post").textContent = "post " + r.status; },
  e => { document.getElementById("post").textContent = "post error " + e; });
const ws = new WebSocket("wss://localhost:" + port + "/chat");
ws.onopen = () => ws.send("hello from chromium");
ws.onmessage = (event) => { document.getElementById("ws").textContent = "echo:" + event.data; ws.close(1000, "done"); };
ws.onerror = () => { document.getElementById("ws").textContent = "ws error"; };
</script></body></html>
"""


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def spki_sha256(pem_path: Path) -> str:
    """base64(SHA-256(SubjectPublicKeyInfo)), the form --ignore-certificate-errors-spki-list takes."""
    pubkey = subprocess.run(["openssl", "x509", "-in", str(pem_path), "-pubkey", "-noout"],
                            capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pubkey,
                         capture_output=True, check=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


# ------------------------------------------------------------------ the scenario (in the namespace)

STATE = ("JSON.stringify({title: document.title, "
         "ws: (document.getElementById('ws') || {}).textContent || '', "
         "post: (document.getElementById('post') || {}).textContent || ''})")


def page_done(state: dict) -> bool:
    return state.get("title", "").startswith("fetched") and state.get("ws", "").startswith("echo:") \
        and state.get("post", "pending") != "pending"


async def _drive(debug_port: int, url: str, timeout: float, expression: str = STATE, done=page_done) -> dict:
    """Navigates the browser's page to `url`, then reads `expression` (JSON) until `done` says the
    page's asynchronous work is over, or `timeout`."""
    page = await DevToolsPage.open(debug_port)
    try:
        await page.call("Page.navigate", url=url)
        deadline = time.time() + timeout
        state = {}
        while time.time() < deadline:
            value = await page.evaluate(expression)
            state = json.loads(value) if value else {}
            if done(state):
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)  # let the WebSocket close go through
        return state
    finally:
        await page.close()


async def _import_in_devtools(debug_port: int, har_text: str) -> list:
    """Chromium's own DevTools HAR importer (the Network panel's "Import HAR", bundled in the
    browser) run on the file: the requests it builds, with the protocol it shows."""
    import websockets

    request = urllib.request.Request(
        f"http://127.0.0.1:{debug_port}/json/new?devtools://devtools/bundled/devtools_app.html", method="PUT")
    with urllib.request.urlopen(request, timeout=10) as response:
        target = json.load(response)
    async with websockets.connect(target["webSocketDebuggerUrl"], max_size=None) as cdp:
        await cdp.send(json.dumps({"id": 1, "method": "Runtime.evaluate", "params": {
            "awaitPromise": True, "returnByValue": True,
            "expression": "(async () => { const har = await import('./models/har/har.js');"
                          f" const log = new har.HARFormat.HARRoot(JSON.parse({json.dumps(har_text)})).log;"
                          " return har.Importer.Importer.requestsFromHARLog(log).map(r =>"
                          " [r.url(), r.protocol, r.statusCode, r.resourceSize]); })()"}}))
        while True:
            reply = json.loads(await cdp.recv())
            if reply.get("id") == 1:
                result = reply.get("result", {})
                if "exceptionDetails" in result:
                    return [["exception", json.dumps(result["exceptionDetails"])[:500]]]
                return result.get("result", {}).get("value") or []


def start_chromium(workdir: Path, ca_pem: Path, extra: list[str]):
    """Headless Chromium trusting only `ca_pem`'s key, with DevTools on a free port: the process
    and that port (None when it did not say)."""
    chrome = subprocess.Popen(
        [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *extra,
         f"--ignore-certificate-errors-spki-list={spki_sha256(ca_pem)}",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--no-first-run", "--disable-extensions",
         "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
         f"--user-data-dir={workdir / 'profile'}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in chrome.stderr:
        if "DevTools listening on ws://" in line:
            return chrome, int(line.split("ws://127.0.0.1:")[1].split("/")[0])
    return chrome, None


class DevToolsPage:
    """The browser's page over the DevTools protocol: `call` a method, `evaluate` an expression
    (its value), `until` an expression is truthy (its value, or None after `timeout`)."""

    def __init__(self, cdp):
        self.cdp = cdp
        self.ids = iter(range(1, 1_000_000))

    @classmethod
    async def open(cls, debug_port: int):
        import websockets
        with urllib.request.urlopen(f"http://127.0.0.1:{debug_port}/json/list", timeout=10) as response:
            page = next(t for t in json.load(response) if t.get("type") == "page")
        return cls(await websockets.connect(page["webSocketDebuggerUrl"], max_size=None))

    async def call(self, method, **params):
        message_id = next(self.ids)
        await self.cdp.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(await self.cdp.recv())
            if reply.get("id") == message_id:
                return reply.get("result", {})

    async def evaluate(self, expression):
        reply = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return reply.get("result", {}).get("value")

    async def until(self, expression, timeout=15):
        # A DOM node comes back by value as {} (falsy here): ask for `node !== null`, not the node.
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        return None

    async def close(self):
        await self.cdp.close()


def run_in_namespace(script: str, *args: str) -> dict:
    """Runs `script`'s `__main__` (a Chromium scenario) in a network namespace with only
    loopback; returns the JSON it printed last."""
    import pytest
    if chromium_path() is None:
        pytest.fail("chromium not found: run scripts/install-deps --test")
    if subprocess.run(["unshare", "-n", "true"]).returncode != 0:
        pytest.fail("`unshare -n` is not permitted here; the Chromium test needs a network namespace of its own")
    r = subprocess.run(["unshare", "-n", sys.executable, script, *args], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def stop_chromium(chrome):
    chrome.send_signal(signal.SIGTERM)
    try:
        chrome.wait(10)
    except subprocess.TimeoutExpired:
        chrome.kill()


def page_servers(workdir: Path, pki: Path, page: str):
    """In the namespace: loopback up, origin.py, nginx (h2) in front of it serving `page` as
    /static/page.html, and a TLS WebSocket server; the three, to stop."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    import origin as origin_mod
    from helpers import WSServer
    from test_http2 import NginxH2

    origin = origin_mod.OriginServer().start()
    nginx = NginxH2(workdir / "nginx", pki, origin.port)
    (nginx.static_dir / "page.html").write_text(page)
    ws_tls = origin_mod.server_tls_context(pki / "server.pem", pki / "server-key.pem", alpn=None)
    ws = WSServer(tls=ws_tls, compression=None).start()
    return origin, nginx, ws


def scenario(workdir: Path, pki: Path, harrec_bin: str) -> dict:
    """Runs inside the namespace; returns what the test checks."""
    origin, nginx, ws = page_servers(workdir, pki, PAGE)
    from conftest import Harrec
    (workdir / "harrec").mkdir()
    px = Harrec(workdir / "harrec", harrec_bin)
    px.start("--no-redact", "--ca-dir", str(workdir / "ca"), "--upstream-ca", str(pki / "ca.pem"))
    while not (workdir / "ca" / "harrec-ca.pem").exists():
        time.sleep(0.05)
    chrome, debug_port = start_chromium(workdir, workdir / "ca" / "harrec-ca.pem", [
        f"--proxy-server=http://127.0.0.1:{px.http_port}",
        "--proxy-bypass-list=<-loopback>",  # Chromium bypasses proxies for loopback unless told
    ])
    imported = []
    try:
        url = f"https://localhost:{nginx.h2_port}/static/page.html?ws={ws.port}"
        state = asyncio.run(_drive(debug_port, url, timeout=30)) if debug_port else {"error": "no DevTools port"}
        har = px.stop(validate=False)
        if debug_port:
            imported = asyncio.run(_import_in_devtools(debug_port, px.har_path.read_text()))
    finally:
        stop_chromium(chrome)
    ws.stop()
    nginx.stop()
    origin.stop()
    return {"state": state, "har_path": str(px.har_path), "entries": len(har["log"]["entries"]), "imported": imported,
            "stderr": px.stderr_text[-4000:]}


# ------------------------------------------------------------------ the test (outside)

def test_chromium_speaks_h2_through_harrec_and_keeps_websockets_on_http1(test_pki, tmp_path):
    import origin as origin_mod
    from conftest import HARREC_BIN, validate_har_file
    from helpers import content_bytes, entries
    from test_http2 import check_with_mitmdump

    result = run_in_namespace(__file__, str(tmp_path), str(test_pki), HARREC_BIN)
    state = result["state"]
    assert state.get("title") == "fetched 150000", f"{state}\n{result['stderr']}"
    assert state.get("ws") == "echo:hello from chromium", f"{state}\n{result['stderr']}"
    assert state.get("post") == "post 405", f"nginx's early answer reached the page: {state}\n{result['stderr']}"

    har = validate_har_file(Path(result["har_path"]))
    es = entries(har)
    hosts = {e["request"]["url"].split("/")[2].rsplit(":", 1)[0] for e in es}
    outside = hosts - {"localhost", "127.0.0.1", "[::1]"}
    # Only Chromium's own background requests may name other hosts, and none of them got out.
    for e in es:
        if e["request"]["url"].split("/")[2].rsplit(":", 1)[0] in outside:
            assert e.get("_error"), e["request"]["url"]
    by_path = {e["request"]["url"].split("/", 3)[3].split("?")[0]: e for e in es
               if e["request"]["url"].split("/")[2].startswith("localhost") and e["request"]["method"] == "GET"}
    page = by_path["static/page.html"]
    (early,) = [e for e in es if e["request"]["method"] == "POST" and e["request"]["url"].endswith("/static/page.html")]
    assert early["response"]["status"] == 405 and "_error" not in early, early.get("_error")
    assert early["request"]["httpVersion"] == "http/2.0"
    assert page["request"]["httpVersion"] == "http/2.0", "Chromium chose h2 through harrec"
    fetched = by_path["bytes"]
    assert fetched["request"]["httpVersion"] == "http/2.0"
    assert content_bytes(fetched["response"]["content"]) == origin_mod.make_bytes(150_000, 21)
    assert fetched["connection"] == page["connection"], "one h2 connection for the page and its fetch"
    chat = by_path["chat"]
    assert chat["request"]["httpVersion"] == "HTTP/1.1", "WebSockets stay on HTTP/1.1"
    assert chat["response"]["status"] == 101
    messages = [(m["type"], m["data"]) for m in chat["_webSocketMessages"] if m["opcode"] == 1]
    assert messages == [("send", "hello from chromium"), ("receive", "hello from chromium")]
    check_with_mitmdump(Path(result["har_path"]), len(es))
    # Chromium's DevTools imports the same file and shows the h2 entries as h2.
    imported = {row[0]: row for row in result["imported"]}
    assert len(imported) == len(es), result["imported"]
    page_url = page["request"]["url"]
    assert imported[page_url][1] == "h2" and imported[page_url][2] == 200
    assert imported[fetched["request"]["url"]][3] == 150_000
    assert imported[chat["request"]["url"]][1] == "http/1.1"


if __name__ == "__main__":
    work = Path(tempfile.mkdtemp(dir=sys.argv[1]))
    print(json.dumps(scenario(work, Path(sys.argv[2]), sys.argv[3])))
