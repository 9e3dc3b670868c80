"""Chromium against a reverse listener, as a debug build pointed at `https://localhost:PORT` would
be: no proxy settings, only harrec's CA trusted (its SPKI), nginx with `http2` as the upstream.

The page, served through the listener, fetches a body over h2, sees nginx's early 405 to a POST,
follows a redirect the upstream made absolute (pointed back at the listener), keeps a cookie whose
Domain named the upstream (made host-only), and opens a WebSocket to a second listener in front of
a TLS WebSocket server. Like test_chromium.py, the whole scenario runs in a network namespace with
only loopback (`unshare -n`, this file's `__main__`), so Chromium's background requests go nowhere.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAGE = """<!doctype html>
<html><head><title>loading</title></head><body><div id="out">{}</div><script>
const params = new URLSearchParams(location.search);
const out = {};
const show = () => { document.getElementById("out").textContent = JSON.stringify(out); };
fetch("/bytes?n=150000&seed=21").then(r => r.arrayBuffer()).then(b => { out.fetched = b.byteLength; show(); });
fetch("/static/page.html", {method: "POST", body: new Uint8Array(300000)}).then(
  r => { out.post = r.status; show(); }, e => { out.post = "error " + e; show(); });
fetch("/redirect?to=" + encodeURIComponent(params.get("upstream") + "/json?from=redirect")).then(
  r => { out.redirected = r.url; show(); }, e => { out.redirected = "error " + e; show(); });
fetch("/set-cookie").then(() => fetch("/json?h=cookie")).then(r => r.json()).then(
  j => { out.cookie = (j.headers.find(h => h[0].toLowerCase() === "cookie") || ["", ""])[1]; show(); },
  e => { out.cookie = "error " + e; show(); });
const ws = new WebSocket("wss://localhost:" + params.get("ws") + "/chat");
ws.onopen = () => ws.send("hello from chromium");
ws.onmessage = (event) => { out.ws = event.data; show(); ws.close(1000, "done"); };
ws.onerror = () => { out.ws = "error"; show(); };
</script></body></html>
"""

STATE = "document.getElementById('out') ? document.getElementById('out').textContent : '{}'"


def done(state: dict) -> bool:
    return all(key in state for key in ("fetched", "post", "redirected", "cookie", "ws"))


def scenario(workdir: Path, pki: Path, harrec_bin: str) -> dict:
    """Runs inside the namespace; returns what the test checks."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_chromium import _drive, page_servers, start_chromium, stop_chromium
    origin, nginx, ws = page_servers(workdir, pki, PAGE)
    from conftest import Harrec
    from helpers import free_port
    # The upstream by address, so the origin's `Domain=127.0.0.1` cookies name it.
    upstream = f"https://127.0.0.1:{nginx.h2_port}"
    ws_port = free_port()
    (workdir / "harrec").mkdir()
    px = Harrec(workdir / "harrec", harrec_bin)
    px.start("--no-redact", "--ca-dir", str(workdir / "ca"), "--upstream-ca", str(pki / "ca.pem"),
             "--reverse", upstream, "--reverse", f"{ws_port}=https://localhost:{ws.port}", ports=("--http", "0"))
    while not (workdir / "ca" / "harrec-ca.pem").exists():
        time.sleep(0.05)
    chrome, debug_port = start_chromium(workdir, workdir / "ca" / "harrec-ca.pem", [])
    try:
        url = f"https://localhost:{px.http_port}/static/page.html?ws={ws_port}&upstream={upstream}"
        state = asyncio.run(_drive(debug_port, url, timeout=30, expression=STATE, done=done)) \
            if debug_port else {"error": "no DevTools port"}
        har = px.stop(validate=False)
    finally:
        stop_chromium(chrome)
    ws.stop()
    nginx.stop()
    origin.stop()
    return {"state": state, "har_path": str(px.har_path), "upstream": upstream, "listener": px.http_port,
            "ws_upstream": f"wss://localhost:{ws.port}", "entries": len(har["log"]["entries"]),
            "stderr": px.stderr_text[-4000:]}


def test_chromium_without_proxy_settings_against_a_reverse_listener(test_pki, tmp_path):
    import origin as origin_mod
    from conftest import HARREC_BIN, validate_har_file
    from helpers import content_bytes, entries
    from test_chromium import run_in_namespace

    result = run_in_namespace(__file__, str(tmp_path), str(test_pki), HARREC_BIN)
    state, upstream, listener = result["state"], result["upstream"], f"https://localhost:{result['listener']}"
    assert state.get("fetched") == 150000, f"{state}\n{result['stderr']}"
    assert state.get("post") == 405, f"nginx's early answer reached the page: {state}"
    assert state.get("redirected") == f"{listener}/json?from=redirect", state
    assert state.get("cookie", "").startswith("session=abc123"), f"the cookie was kept and sent back: {state}"
    assert state.get("ws") == "hello from chromium", state

    har = validate_har_file(Path(result["har_path"]))
    es = entries(har)
    by_url = {e["request"]["url"]: e for e in es if e["request"]["method"] == "GET"}
    page = next(e for url, e in by_url.items() if url.startswith(f"{upstream}/static/page.html?"))
    assert page["request"]["httpVersion"] == "http/2.0", "Chromium spoke h2 to the listener"
    fetched = by_url[f"{upstream}/bytes?n=150000&seed=21"]
    assert content_bytes(fetched["response"]["content"]) == origin_mod.make_bytes(150_000, 21)
    assert f"{upstream}/json?from=redirect" in by_url
    assert all(e["request"]["url"].startswith((upstream, result["ws_upstream"])) for e in es), [e["request"]["url"] for e in es]
    (chat,) = [e for e in es if e["request"]["url"].startswith(result["ws_upstream"])]
    messages = [(m["type"], m["data"]) for m in chat["_webSocketMessages"] if m["opcode"] == 1]
    assert messages == [("send", "hello from chromium"), ("receive", "hello from chromium")]


if __name__ == "__main__":
    work = Path(tempfile.mkdtemp(dir=sys.argv[1]))
    print(json.dumps(scenario(work, Path(sys.argv[2]), sys.argv[3])))
