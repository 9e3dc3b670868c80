"""The journal (issue 13): kill -9 loses nothing that completed a second earlier, `harrec recover`
writes the HAR from what a crashed run left, a torn journal loses only its torn record, and a
crashed run's journal is never overwritten."""

import base64
import json
import random
import re
import shutil
import signal
import stat
import struct
import subprocess
import time
from pathlib import Path

from conftest import validate_har_file
from helpers import HARREC_BIN, content_bytes, curl, entries, vmrss_kib

MAGIC = bytes([0x9E, 0x68, 0x72, 0x6A])
HEADER = 17


def run_harrec(*args, timeout=120):
    return subprocess.run([HARREC_BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def fetch_many(proxy: str, urls: list[str], workdir: Path):
    """One curl for every URL (keep-alive through the proxy), bodies discarded."""
    config = workdir / "urls.curl"
    config.write_text("".join(f'url = "{u}"\noutput = "/dev/null"\n' for u in urls))
    p = subprocess.run(["curl", "-q", "-sS", "--max-time", "120", "-x", proxy, "-K", str(config)],
                       capture_output=True, timeout=180)
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")


def records(journal: bytes) -> list[tuple[int, int, int]]:
    """(offset, end, kind) of each record of a whole journal, from its frames."""
    found, at = [], 0
    while at < len(journal):
        assert journal[at:at + 4] == MAGIC, f"no record at {at}"
        kind = journal[at + 4]
        (length,) = struct.unpack_from("<Q", journal, at + 5)
        end = at + HEADER + length
        found.append((at, end, kind))
        at = end
    return found


def crash(px):
    """kill -9, as the OOM killer or a power cut would."""
    px.proc.send_signal(signal.SIGKILL)
    px.proc.wait(10)
    px._join_readers()


def test_kill9_after_1000_exchanges_then_recover(origin, harrec, tmp_path):
    px = harrec.start("-q")
    urls = [origin.url(f"/json?n={i}") for i in range(1000)]
    fetch_many(px.http_proxy, urls, tmp_path)
    # The promise: an exchange that completed more than a second before the kill is on disk.
    time.sleep(1.1)
    crash(px)
    journal_dir = Path(str(px.har_path) + ".journal")
    assert journal_dir.is_dir() and not px.har_path.exists()
    assert stat.S_IMODE(journal_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE((journal_dir / "records").stat().st_mode) == 0o600

    # A new recording to the same file refuses to start, naming the way out.
    again = run_harrec("record", "--http", "0", "--out", px.har_path, timeout=20)
    assert again.returncode == 2, again.stderr
    assert f"harrec recover {px.har_path}" in again.stderr
    assert journal_dir.is_dir()

    rec = run_harrec("recover", px.har_path)
    assert rec.returncode == 0, rec.stderr
    assert re.search(r"recovered 1000 entries to .*; no torn records", rec.stderr), rec.stderr
    har = validate_har_file(px.har_path)
    got = sorted(int(e["request"]["url"].rsplit("=", 1)[1]) for e in entries(har))
    assert got == list(range(1000))
    assert all(e["response"]["status"] == 200 for e in entries(har))
    assert not journal_dir.exists(), "the journal is removed once the HAR is written"
    # Recovery leaves a HAR exactly as a clean stop writes it: redacted by default.
    assert stat.S_IMODE(px.har_path.stat().st_mode) == 0o644


def test_torn_journal_keeps_every_whole_record(origin, harrec, tmp_path):
    px = harrec.start("-q")
    fetch_many(px.http_proxy, [origin.url(f"/bytes?n={300 + i * 97}&seed={i}") for i in range(60)], tmp_path)
    time.sleep(1.1)
    crash(px)
    journal = (Path(str(px.har_path) + ".journal") / "records").read_bytes()
    frames = records(journal)
    assert sum(1 for f in frames if f[2] == 2) == 60
    rng = random.Random(13)
    cuts = [len(journal), len(journal) - 1, frames[1][0] + 3] + [rng.randrange(HEADER, len(journal)) for _ in range(8)]
    for n, cut in enumerate(cuts):
        har = tmp_path / f"cut{n}.har"
        (tmp_path / f"cut{n}.har.journal").mkdir()
        (tmp_path / f"cut{n}.har.journal" / "records").write_bytes(journal[:cut])
        rec = run_harrec("recover", har, "--no-redact")
        assert rec.returncode == 0, rec.stderr
        whole = [f for f in frames if f[1] <= cut]
        flows = sum(1 for f in whole if f[2] == 2)
        torn = cut > (whole[-1][1] if whole else 0)
        assert f"recovered {flows} entries" in rec.stderr, (cut, rec.stderr)
        assert ("dropped 1 torn record" in rec.stderr) == torn, (cut, rec.stderr)
        recovered = entries(validate_har_file(har))
        assert len(recovered) == flows
        # Raw output holds secrets: private.
        assert stat.S_IMODE(har.stat().st_mode) == 0o600


def test_damaged_record_in_the_middle_loses_only_itself(origin, harrec, tmp_path):
    px = harrec.start("-q")
    fetch_many(px.http_proxy, [origin.url(f"/json?i={i}") for i in range(20)], tmp_path)
    time.sleep(1.1)
    crash(px)
    path = Path(str(px.har_path) + ".journal") / "records"
    journal = bytearray(path.read_bytes())
    frames = records(bytes(journal))
    victim = frames[10]
    journal[victim[0] + HEADER + 5] ^= 0xFF
    path.write_bytes(bytes(journal))
    rec = run_harrec("recover", px.har_path)
    assert rec.returncode == 0, rec.stderr
    assert "recovered 19 entries" in rec.stderr and "dropped 1 torn record" in rec.stderr, rec.stderr


def test_sighup_writes_the_har(origin, harrec):
    px = harrec.start()
    assert curl("-x", px.http_proxy, origin.url("/json")).rc == 0
    har = px.stop(sig=signal.SIGHUP)
    assert len(entries(har)) == 1
    assert not Path(str(px.har_path) + ".journal").exists()


def test_keep_journal_and_a_second_recorder(origin, harrec, tmp_path):
    px = harrec.start("--keep-journal")
    # Another recorder on the same file is refused while the first runs.
    other = run_harrec("record", "--http", "0", "--out", px.har_path, timeout=20)
    assert other.returncode == 2 and "another harrec is recording" in other.stderr, other.stderr
    assert curl("-x", px.http_proxy, origin.url("/json")).rc == 0
    har = px.stop()
    assert len(entries(har)) == 1
    assert Path(str(px.har_path) + ".journal").is_dir()
    assert "the journal is kept" in px.stderr_text
    # The kept journal writes the same HAR again (after the first is moved away).
    first = px.har_path.read_bytes()
    px.har_path.unlink()
    rec = run_harrec("recover", px.har_path)
    assert rec.returncode == 0, rec.stderr
    again = px.har_path.read_bytes()
    assert again.replace(b"\r", b"") == first.replace(b"\r", b"")


def test_kill9_during_the_export_then_recover(origin, harrec, tmp_path):
    """The journal outlives an export that never finished."""
    px = harrec.start("-q")
    fetch_many(px.http_proxy, [origin.url(f"/bytes?n={1 << 20}&seed={i}&ct=text/plain") for i in range(40)], tmp_path)
    px.proc.send_signal(signal.SIGINT)
    # Killed as soon as the export has begun writing its temporary file.
    deadline = time.time() + 20
    while time.time() < deadline and px.proc.poll() is None:
        if any(p.name.startswith("session.har.tmp-") for p in px.har_path.parent.iterdir()):
            break
        time.sleep(0.005)
    if px.proc.poll() is None:
        crash(px)
    assert Path(str(px.har_path) + ".journal").is_dir()
    rec = run_harrec("recover", px.har_path)
    assert rec.returncode == 0, rec.stderr
    assert len(entries(validate_har_file(px.har_path))) == 40
    leftovers = [p.name for p in px.har_path.parent.iterdir() if ".tmp-" in p.name]
    assert leftovers == [], f"recover cleans a dead export's temporary file: {leftovers}"


def test_signals_during_a_long_export(origin, harrec, tmp_path):
    """During the export one signal prints progress, the next stops it and keeps the journal."""
    px = harrec.start("-q")
    fetch_many(px.http_proxy, [origin.url(f"/bytes?n={3 << 20}&seed={i}&ct=text/plain") for i in range(30)], tmp_path)
    px.proc.send_signal(signal.SIGINT)
    assert px.wait_for_stderr(r"writing the HAR from the journal", 20), px.stderr_text
    px.proc.send_signal(signal.SIGINT)
    assert px.wait_for_stderr(r"press Ctrl-C again to stop, the journal is kept", 10), px.stderr_text
    px.proc.send_signal(signal.SIGINT)
    assert px.proc.wait(20) == 1, px.stderr_text
    px._join_readers()
    assert "the journal is kept: harrec recover" in px.stderr_text
    assert not px.har_path.exists()
    assert Path(str(px.har_path) + ".journal").is_dir()
    rec = run_harrec("recover", px.har_path, "--no-redact")
    assert rec.returncode == 0 and "recovered 30 entries" in rec.stderr, rec.stderr


def test_memory_does_not_grow_with_the_recording(origin, harrec, tmp_path):
    """Bodies live in the journal: RSS after 1 GB recorded is within 96 MB of RSS after 100 MB
    (kept in memory, the second 900 MB would show up in full). The bound is the journal writer's
    queue (JournalWriter.maximumPendingBytes, 64 MiB, full while the disk lags behind 10 MB bodies)
    plus 32 MiB for bodies in flight and the allocator."""
    px = harrec.start("-q")
    size = 10 << 20

    def fetch(count, first_seed):
        fetch_many(px.http_proxy, [origin.url(f"/bytes?n={size}&seed={first_seed + i}") for i in range(count)], tmp_path)

    fetch(10, 0)
    time.sleep(0.5)
    after_100mb = vmrss_kib(px.proc.pid)
    fetch(90, 10)
    time.sleep(0.5)
    after_1gb = vmrss_kib(px.proc.pid)
    journal = Path(str(px.har_path) + ".journal") / "records"
    assert journal.stat().st_size >= 100 * size
    crash(px)
    shutil.rmtree(Path(str(px.har_path) + ".journal"))
    grown = (after_1gb - after_100mb) / 1024
    assert grown < 96, f"RSS grew {grown:.0f} MiB from 100 MB to 1 GB recorded ({after_100mb} -> {after_1gb} KiB)"


def test_bodies_in_flight_go_to_the_journal_as_they_arrive(origin, harrec, tmp_path):
    """Issue 34: a body in flight is not held whole. Four 40 MB downloads at once, each paced by
    its client (curl --limit-rate), and a 30 MB upload beside them: RSS while they cross stays
    within 100 MB of the idle recorder's (held whole, the 190 MB would show), so does the
    export's at stop (each body streamed from the journal into the HAR), and the HAR holds
    every body byte for byte, also as `harrec recover` reads it after kill -9 (both unredacted:
    random bytes hold the odd `x@y.zz` that redaction masks in a binary body)."""
    import hashlib
    from helpers import PeakRSS
    from origin import make_bytes
    px = harrec.start("-q", "--no-redact")
    idle = vmrss_kib(px.proc.pid)
    size = 40 << 20
    upload = make_bytes(30 << 20, 99)
    (tmp_path / "up.bin").write_bytes(upload)
    with PeakRSS(px.proc.pid, interval=0.02) as peak:
        downloads = [subprocess.Popen(["curl", "-q", "-sS", "--max-time", "120", "-x", px.http_proxy, "--limit-rate", "16M",
                                       "-o", "/dev/null", origin.url(f"/bytes?n={size}&seed={k}")]) for k in range(4)]
        up = subprocess.run(["curl", "-q", "-sS", "--max-time", "120", "-x", px.http_proxy, "--limit-rate", "16M",
                             "-o", "/dev/null", "--data-binary", f"@{tmp_path / 'up.bin'}",
                             "-H", "Content-Type: application/octet-stream", origin.url("/echo")], timeout=180)
        assert all(d.wait(timeout=180) == 0 for d in downloads) and up.returncode == 0
    grown = (peak.kib - idle) / 1024
    assert grown < 100, f"RSS grew {grown:.0f} MiB with 190 MB in flight ({idle} -> {peak.kib} KiB)"

    def check(har):
        bodies = {e["request"]["url"]: e for e in entries(har)}
        for k in range(4):
            entry = bodies[origin.url(f"/bytes?n={size}&seed={k}")]
            got = content_bytes(entry["response"]["content"])
            assert hashlib.sha256(got).digest() == hashlib.sha256(make_bytes(size, k)).digest(), f"download {k}"
        posted = bodies[origin.url("/echo")]["request"]["postData"]
        assert base64.b64decode(posted["text"]) == upload if posted.get("encoding") == "base64" else posted["text"].encode() == upload

    time.sleep(1.2)  # on disk: the journal writer flushes every 0.2 s
    journal = Path(str(px.har_path) + ".journal")
    copy = tmp_path / "crashed.har"
    shutil.copytree(journal, Path(str(copy) + ".journal"))
    # The export at stop leaves each body in the journal and streams it into the HAR (held
    # whole, two 40 MB bodies built at once would add over 200 MB).
    before = vmrss_kib(px.proc.pid)
    with PeakRSS(px.proc.pid, interval=0.01) as export_peak:
        har = px.stop()
    grown = (export_peak.kib - before) / 1024
    assert grown < 100, f"the export grew RSS by {grown:.0f} MiB ({before} -> {export_peak.kib} KiB)"
    check(har)
    recovered = run_harrec("recover", copy, "--no-redact", timeout=300)
    assert recovered.returncode == 0, recovered.stderr
    check(json.loads(copy.read_text()))


def test_an_exchange_cut_by_kill9_is_recovered_from_its_parts(origin, harrec, tmp_path):
    """Issue 34: kill -9 while a download and an upload cross (each paced by curl) loses neither:
    `harrec recover` builds each from the snapshot journaled with its first body part and the
    parts after it. Each entry says the recording stopped, and its body is a byte-exact prefix
    of what crossed, at least the parts already on disk."""
    from origin import make_bytes
    px = harrec.start("-q", "--no-redact")
    size = 64 << 20
    upload = make_bytes(8 << 20, 5)
    (tmp_path / "up.bin").write_bytes(upload)
    curl_args = ["curl", "-q", "-sS", "--max-time", "60", "-x", px.http_proxy, "--limit-rate", "2M", "-o", "/dev/null"]
    download = subprocess.Popen(curl_args + [origin.url(f"/bytes?n={size}&seed=3")], stderr=subprocess.DEVNULL)
    up = subprocess.Popen(curl_args + ["--data-binary", f"@{tmp_path / 'up.bin'}", "-H", "Content-Type: application/octet-stream",
                                       origin.url("/echo")], stderr=subprocess.DEVNULL)
    journal = Path(str(px.har_path) + ".journal") / "records"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not journal.exists() or journal.stat().st_size < 6 << 20):
        time.sleep(0.1)
    time.sleep(0.5)  # the writer syncs at least every 0.2 s
    crash(px)
    for client in (download, up):
        client.kill()
        client.wait(10)
    rec = run_harrec("recover", px.har_path, "--no-redact", timeout=120)
    assert rec.returncode == 0, rec.stderr
    har = json.loads(Path(px.har_path).read_text())
    validate_har_file(Path(px.har_path))
    by_url = {e["request"]["url"]: e for e in entries(har)}
    got = by_url[origin.url(f"/bytes?n={size}&seed=3")]
    assert "recording stopped" in got.get("_error", ""), got.get("_error")
    assert got["response"]["status"] == 200
    body = content_bytes(got["response"]["content"])
    assert len(body) >= 1 << 20 and body == make_bytes(size, 3)[:len(body)], len(body)
    sent = by_url[origin.url("/echo")]
    assert "recording stopped" in sent.get("_error", ""), sent.get("_error")
    post = sent["request"]["postData"]
    posted = base64.b64decode(post["text"]) if post.get("encoding") == "base64" else post["text"].encode("latin-1")
    assert len(posted) >= 1 << 20 and posted == upload[:len(posted)], len(posted)


def test_a_large_binary_body_is_redacted_as_it_is_written(origin, harrec, tmp_path):
    """Issue 34: a 12 MB binary response body stays in the journal and is redacted a window at a
    time as the HAR is written. It comes out exactly as the same bytes held whole do: the
    request's copy of them, sent to /echo. Both lose the planted address and key at their length."""
    from origin import make_bytes
    px = harrec.start("-q")
    body = bytearray(make_bytes(12 << 20, 11))
    plants = [b"\x01mail ann.lee@corp-mail.net now\x02", b"\x01key=sk_live_4eC39HqLyjWDarjtT1zdp7dc;\x02"]
    for k, at in enumerate(range(1 << 20, 12 << 20, (1 << 20) + 4099)):
        body[at:at + len(plants[k % 2])] = plants[k % 2]
    (tmp_path / "b.bin").write_bytes(bytes(body))
    p = subprocess.run(["curl", "-q", "-sS", "--max-time", "60", "-x", px.http_proxy, "-o", "/dev/null",
                        "--data-binary", f"@{tmp_path / 'b.bin'}", "-H", "Content-Type: application/octet-stream",
                        origin.url("/echo")], capture_output=True, timeout=90)
    assert p.returncode == 0, p.stderr
    har = px.stop()
    (entry,) = [e for e in entries(har) if e["request"]["url"] == origin.url("/echo")]
    sent = base64.b64decode(entry["request"]["postData"]["text"])
    got = content_bytes(entry["response"]["content"])
    assert entry["response"]["content"]["size"] == len(body)
    assert len(got) == len(body) and got != bytes(body)
    assert got == sent, "the window-at-a-time redaction differs from the whole body's"
    for secret in (b"ann.lee@corp-mail.net", b"sk_live_4eC39HqLyjWDarjtT1zdp7dc"):
        assert secret not in got
