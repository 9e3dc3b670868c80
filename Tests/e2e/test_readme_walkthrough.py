"""The README's shell steps, run as a newcomer would type them.

Every ```sh block of README.md after the Quick start is read in order and each command runs, in a
fresh directory, with three substitutions so tests can run in parallel: the ports 8888, 8889, 8080
and 9000 become free ones, `harrec` is $HARREC_BIN, and the CA lives in the test's directory. A
reverse-mode recorder (`--reverse`) runs beside the forward one, on its own port.
Long-running commands (`python3 -m http.server`, `harrec record`, `harrec replay FILE`) start in
the background; "Press Ctrl-C" is the SIGINT a recorder gets before the next command that reads
its HAR, and the origin stops before a replay starts (as the README says).

Commands that cannot run here are listed in NOT_RUN with the reason: traffic leaves loopback, or
the command is the Quick start's (run by CI itself). Any other command must succeed, a README
step that fails fails this test, and the test then checks what the README promises of the result:
the recorded and redacted HARs, the generated Swift, and the replay's answers.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

from helpers import HARREC_BIN, free_port

ROOT = Path(__file__).resolve().parents[2]

# Command prefixes not run, with why.
NOT_RUN = {
    "scripts/run": "the Quick start's own command; CI runs scripts/test, which builds the same binary",
    "scripts/test": "the Quick start's own command; this test is part of it",
    "scripts/install": "links into /usr/local/bin; CI builds the same binary",
    "detect-secrets": "scans a fixtures/ folder of the reader's project",
}
# Commands whose traffic leaves loopback (tests reach only 127.0.0.0/8 and ::1).
OFF_LOOPBACK = re.compile(r"https?://(?!127\.0\.0\.1|localhost|\[::1\])[a-z]")


def wait_for_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port} after {timeout} s")


def readme_commands() -> list[str]:
    """Each command line of README.md's ```sh blocks after the Quick start, comments dropped."""
    text = (ROOT / "README.md").read_text()
    text = text.split("## Quick start", 1)[1]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            command = line.split("  #")[0].split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
            if command:
                commands.append(command)
    return commands


class Walkthrough:
    def __init__(self, workdir: Path):
        self.dir = workdir
        self.http, self.socks, self.origin_port = free_port(), free_port(), free_port()
        self.env = dict(os.environ, HARREC_CA_DIR=str(workdir / "ca"))
        self.reverse_port = free_port()
        self.recorder: subprocess.Popen | None = None
        self.reverse_recorder: subprocess.Popen | None = None
        self.replay: subprocess.Popen | None = None
        self.origin: subprocess.Popen | None = None
        self.outputs: list[tuple[str, subprocess.CompletedProcess]] = []
        self.skipped: list[tuple[str, str]] = []

    def substitute(self, command: str) -> list[str]:
        command = (command.replace("127.0.0.1:8888", f"127.0.0.1:{self.http}")
                   .replace("127.0.0.1:8889", f"127.0.0.1:{self.socks}")
                   .replace("127.0.0.1:9000", f"127.0.0.1:{self.origin_port}")
                   .replace("127.0.0.1:8080", f"127.0.0.1:{self.reverse_port}"))
        argv = shlex.split(command)
        if argv[0] == "harrec":
            argv[0] = HARREC_BIN
            sub = argv[1] if len(argv) > 1 else ""
            if sub == "record" and "--reverse" in argv:
                argv[argv.index("--http") + 1] = str(self.reverse_port)
            elif sub == "record" or (sub == "replay" and "--reset" not in argv):
                argv += ["--http", str(self.http), "--socks", str(self.socks)]
            elif sub == "mark" or (sub == "replay" and "--reset" in argv):
                argv += ["--proxy", f"127.0.0.1:{self.http}"]
        if argv[:3] == ["python3", "-m", "http.server"]:
            argv[3] = str(self.origin_port)
            argv += ["--bind", "127.0.0.1", "--directory", str(self.dir / "site")]
        return argv

    def stop(self, proc: subprocess.Popen | None, sig=signal.SIGINT) -> None:
        if proc and proc.poll() is None:
            proc.send_signal(sig)
            proc.wait(timeout=30)

    def run(self, command: str) -> None:
        for prefix, why in NOT_RUN.items():
            if command.startswith(prefix):
                self.skipped.append((command, why))
                return
        if OFF_LOOPBACK.search(command):
            self.skipped.append((command, "traffic leaves loopback"))
            return
        argv = self.substitute(command)
        words = command.split()
        # "Press Ctrl-C": a recorder ends before its HAR is read.
        if self.recorder and any(w.endswith(".har") for w in words[2:]) and words[1] != "record":
            self.stop(self.recorder)
            assert self.recorder.returncode == 0, self.recorder.stderr.read()
            self.recorder = None
        if command.startswith("python3 -m http.server"):
            (self.dir / "site").mkdir(exist_ok=True)
            (self.dir / "site" / "hello.txt").write_text("hello from the origin\n")
            self.origin = subprocess.Popen(argv, cwd=self.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_port(self.origin_port)
        elif words[:2] == ["harrec", "record"] and "--reverse" in words:
            self.reverse_recorder = subprocess.Popen(argv, cwd=self.dir, env=self.env, stdout=subprocess.DEVNULL,
                                                     stderr=subprocess.PIPE, text=True)
            wait_for_port(self.reverse_port)
        elif words[:2] == ["harrec", "record"]:
            self.stop(self.recorder)
            self.recorder = subprocess.Popen(argv, cwd=self.dir, env=self.env, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE, text=True)
            wait_for_port(self.http)
        elif words[:2] == ["harrec", "replay"] and "--reset" not in words:
            # "Stop the Python server first: the replay connects nowhere."
            self.stop(self.origin, signal.SIGTERM)
            self.replay = subprocess.Popen(argv, cwd=self.dir, env=self.env, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.PIPE, text=True)
            wait_for_port(self.http)
        else:
            proc = subprocess.run(argv, cwd=self.dir, env=self.env, capture_output=True, timeout=120)
            self.outputs.append((command, proc))
            # curl's own exit status says whether it got an answer; a 599 is an answer.
            assert proc.returncode == 0, f"README step failed ({proc.returncode}): {command}\n{proc.stderr.decode()[-2000:]}"

    def close(self) -> None:
        for proc in (self.recorder, self.reverse_recorder, self.replay, self.origin):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()


def test_readme_steps_work_as_written(tmp_path):
    commands = readme_commands()
    assert any(c.startswith("harrec record") for c in commands) and any(c.startswith("harrec replay") for c in commands)
    walk = Walkthrough(tmp_path)
    try:
        # "Keep the recorder running": the Quick start's recorder, in prose before the first block.
        walk.run("harrec record --out session.har")
        for command in commands:
            walk.run(command)
        replay = walk.replay
        assert replay is not None and replay.poll() is None, "the README's replay is not running"
        # What the README says the replay answers for a request never recorded.
        code = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", f"http://127.0.0.1:{walk.http}",
                               f"http://127.0.0.1:{walk.origin_port}/missing"], capture_output=True, text=True, timeout=30)
        assert code.stdout == "599", code
        walk.stop(replay)
        assert replay.returncode == 0, replay.stderr.read()
        reverse = walk.reverse_recorder
        assert reverse is not None, "the README's reverse-mode recorder did not run"
        walk.stop(reverse)
        assert reverse.returncode == 0, reverse.stderr.read()
    finally:
        walk.close()
    ran = [c for c in commands if c not in {s for s, _ in walk.skipped}]
    assert len(ran) >= 10, ran
    assert {why for _, why in walk.skipped} <= set(NOT_RUN.values()) | {"traffic leaves loopback"}

    # The recording: the origin's listing through both proxies, and a page per mark.
    session = json.loads((tmp_path / "session.har").read_text())
    pages = [p["title"] for p in session["log"].get("pages", [])]
    assert "list files" in pages, pages
    urls = [e["request"]["url"] for e in session["log"]["entries"]]
    assert f"http://127.0.0.1:{walk.origin_port}/" in urls, urls
    assert all(e["response"]["status"] == 200 for e in session["log"]["entries"])

    # Reverse mode: the client asked harrec's own port; the entry has the origin's URL.
    reverse_urls = [e["request"]["url"] for e in json.loads((tmp_path / "api.har").read_text())["log"]["entries"]]
    assert reverse_urls == [f"http://127.0.0.1:{walk.origin_port}/"], reverse_urls

    # redact --check passed on the redacted copy (asserted per step); generate wrote Swift that
    # names the page's scenario type.
    generated = list(tmp_path.rglob("*.swift"))
    assert generated, "harrec generate wrote no Swift"
    assert any("ListFilesHTTPScenario" in path.read_text() for path in generated), [p.name for p in generated]

    # The replay answered the recorded listing byte for byte (the last such curl ran against it).
    listing = [proc.stdout for c, proc in walk.outputs if c.startswith("curl -x") and c.rstrip("/").endswith(":9000")]
    assert len(listing) >= 2 and b"hello.txt" in listing[0]
    assert listing[-1] == listing[0]
