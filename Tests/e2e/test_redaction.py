"""Redaction end to end (issue 5): a session through the proxy written with the default export
holds none of its secrets; --raw-out keeps them, --no-redact warns, a bad --redact-rules file
stops `record` before it listens; `harrec redact` and `redact --check` exit codes and output."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import validate_har_file
from helpers import HARREC_BIN, REPO, curl, entries_for, har_header, proxy_curl_args

FIXTURES = REPO / "Fixtures" / "redaction"

BEARER = "e2e-bearer-7Hq2Lw9Zx4"
SID = "e2e-sid-Kp3Vb8Rt"
EMAIL = "e2e.user@acme-mail.com"
JSON_TOKEN = "e2e-json-token-Qz81Mm"
PASSWORD = "e2e-pass-W0rd77"
SET_COOKIE_VALUE = "abc123"  # origin.py's /set-cookie session cookie
SECRETS = [BEARER, SID, EMAIL, JSON_TOKEN, PASSWORD]


def run(*args, timeout=30):
    p = subprocess.run([HARREC_BIN, *map(str, args)], capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def drive_session(px, origin):
    """The scripted app session: bearer + cookies, a Set-Cookie, a JSON login with an email
    and a token in the response body (/echo returns the body it got)."""
    http = proxy_curl_args("http", px)
    base = origin.base_url
    r = curl(*http, "-H", f"Authorization: Bearer {BEARER}", "-H", f"Cookie: sid={SID}; theme=dark",
             base + "/json")
    assert r.rc == 0, r.err
    assert BEARER.encode() in r.out, "the origin echoes the request headers (the body must be redacted too)"
    r = curl(*http, base + "/set-cookie")
    assert r.rc == 0, r.err
    body = json.dumps({"user": {"email": EMAIL, "name": "E2E"}, "access_token": JSON_TOKEN,
                       "password": PASSWORD, "expires_in": 3600})
    r = curl(*http, "-H", "Content-Type: application/json", "--data-binary", body, base + "/echo?login=1")
    assert r.rc == 0 and json.loads(r.out)["access_token"] == JSON_TOKEN, (r.rc, r.err)


@pytest.fixture(scope="module")
def recorded(origin_module, harrec_module):
    """One redacted session with a raw copy: (px, redacted bytes, raw path)."""
    raw_dir = harrec_module.basedir
    raw = raw_dir / "raw-session.har"
    px = harrec_module.start("--raw-out", raw)
    drive_session(px, origin_module)
    px.stop()  # exit 0, `harrec validate` and the JSON schema on the redacted file
    return px, px.har_path.read_bytes(), raw


def test_default_export_holds_no_secret(recorded):
    px, data, _ = recorded
    text = data.decode("utf-8")
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} is in the redacted HAR"
    assert f"session={SET_COOKIE_VALUE};" not in text and f'"value": "{SET_COOKIE_VALUE}"' not in text
    assert "user1@example.com" in text
    assert "Bearer redacted-" in text


def test_redacted_entries_keep_their_shape(recorded):
    px, data, _ = recorded
    har = json.loads(data)
    e = entries_for(har, "/json")[0]
    assert har_header(e["request"], "Authorization").startswith("Bearer redacted-")
    cookie = har_header(e["request"], "Cookie")
    assert cookie.startswith("sid=redacted-") and "; theme=redacted-" in cookie
    assert [c["name"] for c in e["request"]["cookies"]] == ["sid", "theme"]
    assert e["request"]["cookies"][0]["value"] == cookie.split(";")[0].split("=", 1)[1]
    echoed = json.loads(e["response"]["content"]["text"])  # still JSON
    headers = {k.lower(): v for k, v in echoed["headers"]}
    assert headers["authorization"] == har_header(e["request"], "Authorization")
    assert headers["cookie"] == cookie, "the echoed cookie correlates with the header"
    sc = entries_for(har, "/set-cookie")[0]["response"]
    values = [h["value"] for h in sc["headers"] if h["name"].lower() == "set-cookie"]
    assert values[0].startswith("session=redacted-") and "; Path=/; Domain=127.0.0.1;" in values[0]
    assert [c["value"] for c in sc["cookies"]] == [v.split(";")[0].split("=", 1)[1] for v in values]
    login = entries_for(har, "/echo", "POST")[0]
    sent = json.loads(login["request"]["postData"]["text"])
    got = json.loads(login["response"]["content"]["text"])
    assert sent == got, "the same secrets got the same placeholders in request and response"
    assert got["user"]["email"] == "user1@example.com" and got["expires_in"] == 3600
    assert got["access_token"].startswith("redacted-") and got["password"].startswith("redacted-")
    assert login["response"]["content"]["size"] == len(login["response"]["content"]["text"].encode())
    assert login["request"]["bodySize"] == len(login["request"]["postData"]["text"].encode())
    assert har_header(login["request"], "Content-Length") == str(login["request"]["bodySize"])


def test_summary_is_printed(recorded):
    px, _, _ = recorded
    text = px.stderr_text
    assert "harrec: redacted " in text and "authorization-header" in text and "json-keys" in text, text
    for secret in SECRETS:
        assert secret not in text


def test_raw_out_keeps_the_secrets_and_check_flags_them(recorded):
    _, _, raw = recorded
    text = raw.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret in text, f"{secret!r} missing from --raw-out"
    validate_har_file(raw)
    rc, out, err = run("redact", "--check", raw)
    assert rc == 1, (rc, out, err)
    assert "authorization-header" in out and "cookies" in out and "json-keys" in out and "email" in out, out
    assert "log.entries[" in out and "chars)" in out
    for secret in SECRETS:
        assert secret not in out + err, f"--check printed {secret!r}"


def test_check_passes_on_the_redacted_file(recorded):
    px, _, _ = recorded
    rc, out, err = run("redact", "--check", px.har_path)
    assert rc == 0, (out, err)
    assert "no secrets found" in out


def test_no_redact_warns_and_keeps_secrets(origin, harrec):
    px = harrec.start("--no-redact")
    assert px.wait_for_stderr(r"warning: --no-redact") is not None, px.stderr_text
    drive_session(px, origin)
    px.stop()
    for secret in SECRETS:
        assert secret in px.har_text


@pytest.mark.parametrize("option", ["--rules", "--redact-rules"])
def test_bad_rules_file_stops_before_listening(tmp_path, option):
    """`--rules` is the name redact and generate use too; `--redact-rules` stays as the older name."""
    rules = tmp_path / "rules.json"
    rules.write_text('{\n  "headers": ["X-Device"],\n  "disabel": ["email"]\n}\n')
    out = tmp_path / "never.har"
    p = subprocess.run([HARREC_BIN, "record", "--http", "0", "--socks", "0", "--out", str(out),
                        option, str(rules)], capture_output=True, timeout=15,
                       stdin=subprocess.DEVNULL)
    err = p.stderr.decode()
    assert p.returncode != 0
    assert "line 3" in err and "disabel" in err, err
    assert "listening on" not in err
    assert not out.exists()


def test_redact_cli_writes_and_summarizes(recorded, tmp_path):
    _, _, raw = recorded
    out = tmp_path / "cli.har"
    rc, stdout, err = run("redact", raw, "--out", out)
    assert rc == 0, err
    assert "harrec: redacted" in err and "header" in err and "cookie" in err and "body" in err, err
    text = out.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in text and secret not in err + stdout
    validate_har_file(out)
    rc, stdout, _ = run("redact", "--check", out)
    assert rc == 0, stdout
    # Idempotent: redacting the redacted file gives the same bytes.
    again = tmp_path / "again.har"
    assert run("redact", out, "-o", again, "--quiet")[0] == 0
    assert again.read_bytes() == out.read_bytes()


def test_redact_cli_usage_errors(recorded, tmp_path):
    _, _, raw = recorded
    rc, _, err = run("redact", raw)
    assert rc != 0 and "--out" in err
    rc, _, err = run("redact", "--check", raw, "--out", tmp_path / "x.har")
    assert rc != 0 and not (tmp_path / "x.har").exists()
    bad = tmp_path / "bad.json"
    bad.write_text('{"patterns": [\n {"name": "x", "regex": "(oops"}\n]}')
    target = tmp_path / "y.har"
    rc, _, err = run("redact", raw, "--out", target, "--rules", bad)
    assert rc != 0 and "line 2" in err and "patterns[0].regex" in err, err
    assert not target.exists()
    rc, _, err = run("redact", tmp_path / "missing.har", "--out", target)
    assert rc != 0 and not target.exists()


@pytest.mark.no_event_loop
def test_internal_suffix_option(tmp_path):
    har = {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [{
        "startedDateTime": "2026-12-01T05:58:05.000Z", "time": 1,
        "request": {"method": "GET", "url": "https://billing.acme/x", "httpVersion": "HTTP/1.1", "cookies": [],
                    "headers": [{"name": "Host", "value": "billing.acme"}], "queryString": [],
                    "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                     "content": {"size": 0, "mimeType": "x-unknown"}, "redirectURL": "", "headersSize": -1,
                     "bodySize": 0},
        "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}]}}
    src = tmp_path / "in.har"
    src.write_text(json.dumps(har))
    rc, _, _ = run("redact", "--check", src)
    assert rc == 0, "not internal without the suffix"
    out = tmp_path / "out.har"
    rc, _, err = run("redact", src, "--out", out, "--internal-suffix", ".acme")
    assert rc == 0, err
    e = json.loads(out.read_text())["log"]["entries"][0]
    assert e["request"]["url"] == "https://internal-1.example.invalid/x"
    assert e["request"]["headers"][0]["value"] == "internal-1.example.invalid"
    rc, out_text, _ = run("redact", "--check", src, "--internal-suffix", "acme")
    assert rc == 1 and "internal-host" in out_text


@pytest.mark.no_event_loop
@pytest.mark.parametrize("name", ["headers-urls", "bodies", "websocket", "login-flow", "rules-example",
                                  "mitmproxy-12.3.1-sample"])
def test_cli_matches_golden_fixtures(name, tmp_path):
    """The CLI (parallel streaming writer) gives the golden bytes the engine tests check."""
    out = tmp_path / f"{name}.har"
    args = ["redact", FIXTURES / f"{name}.in.har", "--out", out, "--quiet"]
    rules = FIXTURES / f"{name}.json"
    if rules.exists():
        args += ["--rules", rules]
    rc, _, err = run(*args)
    assert rc == 0, err
    assert out.read_bytes() == (FIXTURES / f"{name}.out.har").read_bytes()
    rc, stdout, _ = run("redact", "--check", out, *(["--rules", rules] if rules.exists() else []))
    assert rc == 0, stdout


@pytest.mark.no_event_loop
def test_redact_streams_a_large_binary_body_as_the_whole_body_is_redacted(tmp_path):
    """Issue 34: `harrec redact` leaves a 12 MB base64 response body, and the same bytes uploaded,
    in the file and redacts them a window at a time as it writes. Both come out the same (that a
    window at a time is the whole body's redaction, byte for byte, is DeferredBodyTests' property):
    the planted address and key are gone, the length is kept, and a second run changes nothing."""
    import base64
    import random
    body = bytearray(random.Random(8).randbytes(12 << 20))
    plants = [b"\x01mail ann.lee@corp-mail.net now\x02", b"\x01key=sk_live_4eC39HqLyjWDarjtT1zdp7dc;\x02"]
    for k, at in enumerate(range(1 << 20, 12 << 20, (1 << 20) + 4099)):
        body[at:at + len(plants[k % 2])] = plants[k % 2]
    text = base64.b64encode(bytes(body)).decode()
    entry = {"startedDateTime": "2026-12-07T10:00:00.000Z", "time": 1,
             "request": {"method": "POST", "url": "https://api.test/upload", "httpVersion": "HTTP/1.1", "cookies": [],
                         "headers": [], "queryString": [], "headersSize": -1, "bodySize": len(body),
                         "postData": {"mimeType": "application/octet-stream", "text": text, "encoding": "base64"}},
             "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                          "content": {"size": len(body), "mimeType": "application/octet-stream", "text": text,
                                      "encoding": "base64"},
                          "redirectURL": "", "headersSize": -1, "bodySize": len(body)},
             "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}
    src, out, again = tmp_path / "in.har", tmp_path / "out.har", tmp_path / "again.har"
    src.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [entry]}}))
    code, _, err = run("redact", src, "--out", out, timeout=120)
    assert code == 0, err
    written = json.loads(out.read_text())["log"]["entries"][0]
    sent = base64.b64decode(written["request"]["postData"]["text"])
    got = base64.b64decode(written["response"]["content"]["text"])
    assert len(got) == len(body) and got != bytes(body)
    assert got == sent, "the upload and the download of the same bytes differ"
    for secret in (b"ann.lee@corp-mail.net", b"sk_live_4eC39HqLyjWDarjtT1zdp7dc"):
        assert secret not in got
    assert run("redact", out, "--out", again, timeout=120)[0] == 0
    assert again.read_bytes() == out.read_bytes()
