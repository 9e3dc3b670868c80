"""Issue 34: a HAR larger than the address space harrec may use (`ulimit -v`, RLIMIT_AS) is
validated, redacted and replayed all the same: the file is read a window at a time when it
cannot be mapped whole, and each entry when it is needed. An older harrec read such a file into one
buffer and ended with "failed to allocate"."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import resource
import os
import subprocess
import time

import pytest

from helpers import HARREC_BIN, curl, stop_process

LIMIT = 192 << 20  # bytes of address space; the HAR below is larger
BODIES = 16
BODY_BYTES = 10 << 20
EMAIL = "dana.whitfield@corp-mail.net"
TOKEN = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run(*args, limit=True, timeout=120):
    p = subprocess.run([HARREC_BIN, *map(str, args)], capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, preexec_fn=limited if limit else None)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def start_replay(src, limit):
    """`harrec replay src` on a free port under `limit` bytes of address space: the process and
    its HTTP port, once it listens."""
    proc = subprocess.Popen([HARREC_BIN, "replay", str(src), "--http", "0", "--socks", "0", "--no-intercept"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    port, seen, deadline = None, b"", time.monotonic() + 60
    while port is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
        m = re.search(rb"HTTP proxy listening on 127\.0\.0\.1:(\d+)", line)
        port = int(m.group(1)) if m else None
    if not port:
        stop_process(proc)
    assert port, seen.decode("utf-8", "replace")
    return proc, port


def entry(i, url, mime, text, encoding=None, size=None):
    content = {"size": size if size is not None else len(text), "mimeType": mime, "text": text}
    if encoding:
        content["encoding"] = encoding
    return {"startedDateTime": f"2026-12-07T10:00:{i:02d}.000Z", "time": 1,
            "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                        "queryString": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                         "headers": [{"name": "Content-Type", "value": mime}], "content": content,
                         "redirectURL": "", "headersSize": -1, "bodySize": content["size"]},
            "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}


def write_har(path):
    """16 binary downloads of 10 MiB (base64: 224 MB of file) and a JSON answer with an email and
    a key in it; returns the binary bodies' sha256 by URL."""
    rng = random.Random(34)
    shas = {}
    with open(path, "w") as f:
        f.write('{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [')
        for i in range(BODIES):
            body = rng.randbytes(BODY_BYTES)
            url = f"http://files.test/blob/{i}"
            shas[url] = hashlib.sha256(body).hexdigest()
            f.write(json.dumps(entry(i, url, "application/octet-stream", base64.b64encode(body).decode(), "base64",
                                     len(body))) + ",")
        profile = json.dumps({"user": {"email": EMAIL, "api_key": TOKEN, "plan": "pro"}})
        f.write(json.dumps(entry(BODIES, "https://api.test/profile", "application/json", profile)))
        f.write("]}}")
    return shas


def test_a_har_larger_than_the_address_space_is_validated_redacted_and_replayed(tmp_path):
    src = tmp_path / "big.har"
    shas = write_har(src)
    assert src.stat().st_size > LIMIT * 1.05

    code, out, err = run("validate", src)
    assert code == 0, err
    assert f"valid HAR 1.2 ({BODIES + 1} entries)" in out

    # Redacted under the limit as without it, byte for byte.
    limited_out, free_out = tmp_path / "limited.har", tmp_path / "free.har"
    code, _, err = run("redact", src, "--out", limited_out)
    assert code == 0, err
    code, _, err = run("redact", src, "--out", free_out, limit=False)
    assert code == 0, err
    assert limited_out.read_bytes() == free_out.read_bytes()
    redacted = limited_out.read_bytes()
    assert EMAIL.encode() not in redacted and TOKEN.encode() not in redacted
    # `--check` reads the binary bodies through a window at a time too: clean on the output, and
    # on the input it names the planted values in the one JSON answer.
    code, out, err = run("redact", "--check", limited_out)
    assert code == 0, out + err
    code, out, err = run("redact", "--check", src)
    assert code == 1, out + err
    assert "($.user.email)  email" in out and "($.user.api_key)" in out, out

    # Replayed under the limit: the largest body, byte for byte, streamed from the file.
    proc, port = start_replay(src, LIMIT)
    try:
        url = "http://files.test/blob/7"
        r = curl("-x", f"http://127.0.0.1:{port}", url, max_time=60)
        assert r.rc == 0, r.err
        assert hashlib.sha256(r.out).hexdigest() == shas[url]
    finally:
        stop_process(proc)




def write_small_har(path, scheme):
    """60,000 small JSON answers (69 MB); returns their bodies."""
    rng = random.Random(7)
    bodies = []
    with open(path, "w") as f:
        f.write('{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [')
        for i in range(60_000):
            body = json.dumps({"id": i, "owner": f"user{i}@corp-mail.net" if i % 50 == 0 else "n/a",
                               "desc": "x" * rng.randint(50, 400)})
            bodies.append(body)
            f.write(("," if i else "") + json.dumps(entry(0, f"{scheme}://api.test/items/{i}", "application/json", body)))
        f.write("]}}")
    return bodies


@pytest.mark.no_event_loop
def test_many_small_entries_are_redacted_in_little_address_space(tmp_path):
    """60,000 small JSON answers (69 MB) redacted and validated with 192 MiB of address space: what
    an export keeps between its passes follows the limit (an eighth of it), and a slot per entry
    costs a pointer, not an entry's 800 bytes. The output is the one made without the limit."""
    src = tmp_path / "small.har"
    write_small_har(src, "https")
    limited_out, free_out = tmp_path / "limited.har", tmp_path / "free.har"
    code, out, err = run("validate", src)
    assert code == 0, err
    assert "valid HAR 1.2 (60000 entries)" in out
    code, _, err = run("redact", src, "--out", limited_out)
    assert code == 0, err
    code, _, err = run("redact", src, "--out", free_out, limit=False)
    assert code == 0, err
    assert limited_out.read_bytes() == free_out.read_bytes()
    assert b"@corp-mail.net" not in limited_out.read_bytes()


@pytest.mark.no_event_loop
def test_an_entry_larger_than_the_address_space_is_a_clear_error(tmp_path):
    """One entry of 250 MB with 192 MiB of address space cannot be held: validate, redact and
    replay each say so, naming the bytes, and exit non-zero. None crashes, and redact writes
    nothing."""
    src, out = tmp_path / "huge.har", tmp_path / "out.har"
    text = base64.b64encode(random.Random(3).randbytes(180 << 20)).decode()
    src.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [
        entry(0, "http://files.test/huge", "text/plain", text)]}}))
    for args in (("validate", src), ("redact", src, "--out", out), ("replay", src, "--http", "0", "--no-intercept")):
        code, stdout, err = run(*args, timeout=60)
        said = stdout + err
        assert code in (1, 2), f"{args[0]}: exit {code}: {said[-600:]}"
        assert "do not fit in memory" in said, f"{args[0]}: {said[-600:]}"
        assert "Fatal error" not in said and "crashed" not in said, f"{args[0]}: {said[-600:]}"
    assert not out.exists()


def test_many_small_entries_are_replayed_in_little_address_space(tmp_path):
    """The same 60,000 answers replayed with 192 MiB of address space: past a sixteenth of the
    limit, a response's head and body stay in the file and are read when served, and each entry
    is drafted into its queue item and dropped as it is parsed. It often loads in 112 MiB, but
    not always: malloc's per-thread arenas reserve address space as the parse workers need them,
    so the limit keeps a margin (0.9.1 crashed at 160 MiB every time, 0.9.0 at 320). Every
    answer asked for is the recorded one: status, Content-Type and body."""
    src = tmp_path / "small.har"
    bodies = write_small_har(src, "http")
    proc, port = start_replay(src, 192 << 20)
    try:
        for i in (0, 1, 29_999, 59_998, 59_999):
            r = curl("-i", "-x", f"http://127.0.0.1:{port}", f"http://api.test/items/{i}", max_time=30)
            assert r.rc == 0, r.err
            head, _, body = r.out.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 "), head
            assert b"\r\nContent-Type: application/json\r\n" in head + b"\r\n", head
            assert body == bodies[i].encode(), i
        assert proc.poll() is None, "the replay ended"
    finally:
        stop_process(proc)


@pytest.mark.no_event_loop
def test_a_har_truncated_while_it_is_redacted_is_a_clear_error(tmp_path):
    """A HAR cut short while `redact` reads it: the mapped pages past the new end are gone, and a
    read there is a bus error. harrec says the file changed, exits 1 and leaves neither the output
    nor its temporary file; 0.9.0 crashed with a backtrace and left the temporary file."""
    src, out = tmp_path / "small.har", tmp_path / "out.har"
    write_small_har(src, "https")
    size = src.stat().st_size
    proc = subprocess.Popen([HARREC_BIN, "redact", str(src), "--out", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env={**os.environ, "HARREC_TRACE": "1"})
    said = b""
    try:
        # The trace's first line comes once the file is mapped and its entries found.
        said = proc.stderr.readline()
        assert b"trace: load" in said, said
        os.truncate(src, size // 2)
        said += proc.stderr.read()
        code = proc.wait(timeout=60)
    finally:
        stop_process(proc)
    text = said.decode("utf-8", "replace")
    assert code == 1, f"exit {code}: {text[-600:]}"
    assert "changed while harrec read it" in text, text[-600:]
    assert "crashed" not in text and "Fatal error" not in text, text[-600:]
    assert not out.exists()
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]
