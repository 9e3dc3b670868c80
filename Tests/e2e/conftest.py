"""pytest fixtures for harrec's end-to-end tests.

- `origin`:   an in-process origin server (origin.py) on an ephemeral 127.0.0.1 port (and ::1),
              new for each test, so its /stats and request log belong to that test.
- `harrec`:   a factory; `px = harrec.start(*args)` runs
              `$HARREC_BIN record --http 0 --socks 0 --out <tmp>/session.har ARGS`, waits for both
              "listening on" lines and exposes .http_port .socks_port .stderr_lines;
              `har = px.stop()` sends SIGINT, expects exit 0 within 10 s, runs `harrec validate`,
              validates against har-1.2.schema.json and returns the parsed HAR.
- `payloads`: files with the POST bodies of the pass-through cases.
Module-scoped variants (`origin_module`, `proxy_module`) serve the large read-only matrices.

Every dependency is imported at the top: a missing one fails the whole run loudly.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jsonschema  # noqa: E402  (required: HAR schema validation)

import helpers  # noqa: E402
import origin as origin_mod  # noqa: E402
from helpers import HARREC_BIN, SCHEMA_PATH  # noqa: E402

START_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0
# A reverse listener (`--reverse`) counts as the HTTP port: it is the one clients send HTTP to.
LISTEN_RE = re.compile(r"^harrec: (HTTP|SOCKS5|reverse) proxy listening on (?:http://)?[0-9.]+:(\d+)(?: for .*)?$")

_schema_validator = None

# The suite runs twice: on the platform's poller, then on poll(2) (HARREC_POLLER=poll). A test
# marked `no_event_loop` runs only commands that read and write files (redact, validate, generate,
# the docs checks), so the second run has nothing to add and deselects it (it is not counted).
# The first run proves the mark: HARREC_POLLER is set to a value harrec refuses, so a marked test
# that starts a proxy or a replay fails ("HARREC_POLLER must be epoll or poll").
POLL_RUN = os.environ.get("HARREC_POLLER") == "poll"


def pytest_configure(config):
    config.addinivalue_line("markers", "no_event_loop: runs no proxy or replay; left out of the poll(2) run")


def pytest_collection_modifyitems(config, items):
    if not POLL_RUN:
        return
    dropped = [item for item in items if item.get_closest_marker("no_event_loop")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not item.get_closest_marker("no_event_loop")]


@pytest.fixture(autouse=True)
def _no_event_loop_is_checked(request, monkeypatch):
    if request.node.get_closest_marker("no_event_loop") and not POLL_RUN:
        monkeypatch.setenv("HARREC_POLLER", "none: this test is marked no_event_loop")
    yield


def schema_validator():
    """A jsonschema validator for Tests/e2e/har-1.2.schema.json (which must exist)."""
    global _schema_validator
    assert SCHEMA_PATH.exists(), f"missing {SCHEMA_PATH}"
    if _schema_validator is None:
        schema = json.loads(SCHEMA_PATH.read_text())
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        _schema_validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return _schema_validator


def validate_har_file(path: Path, binary: str = HARREC_BIN) -> dict:
    """`harrec validate` must accept the file, and the JSON Schema too; returns the parsed HAR."""
    p = subprocess.run([binary, "validate", str(path)], capture_output=True, timeout=60)
    out = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
    assert p.returncode == 0, f"harrec validate {path} failed (exit {p.returncode}):\n{out}"
    har = json.loads(path.read_text(encoding="utf-8"))
    v = schema_validator()
    if v is not None:
        errors = sorted(v.iter_errors(har), key=lambda e: list(e.absolute_path))
        if errors:
            msgs = "\n".join(f"  /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
                             for e in errors[:20])
            pytest.fail(f"{path} does not match {SCHEMA_PATH.name} ({len(errors)} errors):\n{msgs}")
    return har


class Harrec:
    """One running `harrec record` process."""

    def __init__(self, workdir: Path, binary: str = HARREC_BIN):
        self.workdir = workdir
        self.binary = binary
        self.har_path = workdir / "session.har"
        self.proc: subprocess.Popen | None = None
        self.stderr_lines: list[str] = []
        self.stdout_data = bytearray()
        self.cond = threading.Condition()
        self.http_port: int | None = None
        self.socks_port: int | None = None
        self.har: dict | None = None
        self.har_text: str | None = None
        self.returncode: int | None = None
        self.args: list[str] = []

    # ---- start ----
    def start(self, *args, ports=("--http", "0", "--socks", "0"), out=None, replay=None) -> "Harrec":
        if not os.path.isfile(self.binary) or not os.access(self.binary, os.X_OK):
            pytest.fail(f"harrec binary not found at {self.binary}: run `swift build` or set "
                        f"HARREC_BIN")
        if out is not None:
            self.har_path = Path(out)
        if replay is not None:
            # `harrec replay FILE`: the same front end, serving FILE; `finish()` stops it.
            self.args = ["replay", str(replay), *ports, *map(str, args)]
        else:
            self.args = ["record", *ports, "--out", str(self.har_path), *map(str, args)]
        self.proc = subprocess.Popen([self.binary, *self.args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=self.workdir)
        threading.Thread(target=self._read_stderr, daemon=True).start()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        want_http = "--http" in ports
        want_socks = "--socks" in ports
        deadline = time.time() + START_TIMEOUT
        with self.cond:
            while True:
                if (self.http_port or not want_http) and (self.socks_port or not want_socks):
                    break
                if self.proc.poll() is not None and self._stderr_done:
                    self.kill()
                    pytest.fail(f"harrec exited with {self.proc.returncode} during start-up; "
                                f"stderr:\n{self.stderr_text}")
                left = deadline - time.time()
                if left <= 0:
                    self.kill()
                    pytest.fail(f"harrec did not print both 'listening on' lines within "
                                f"{START_TIMEOUT:.0f} s; stderr so far:\n{self.stderr_text}")
                self.cond.wait(min(left, 0.1))
        return self

    _stderr_done = False

    def _read_stderr(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self.cond:
                self.stderr_lines.append(line)
                m = LISTEN_RE.match(line)
                if m:
                    if m.group(1) in ("HTTP", "reverse"):
                        self.http_port = self.http_port or int(m.group(2))
                    else:
                        self.socks_port = int(m.group(2))
                self.cond.notify_all()
        with self.cond:
            self._stderr_done = True
            self.cond.notify_all()

    def _read_stdout(self):
        for raw in self.proc.stdout:
            self.stdout_data += raw

    @property
    def stderr_text(self) -> str:
        with self.cond:
            return "\n".join(self.stderr_lines)

    def wait_for_stderr(self, pattern: str, timeout: float = 5.0) -> str | None:
        """The first stderr line matching the regex, waiting up to timeout; None if none."""
        rx = re.compile(pattern)
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for ln in self.stderr_lines:
                    if rx.search(ln):
                        return ln
                left = deadline - time.time()
                if left <= 0 or self._stderr_done:
                    return None
                self.cond.wait(min(left, 0.1))

    # ---- addresses ----
    @property
    def http_proxy(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def socks_proxy(self) -> str:
        return f"socks5://127.0.0.1:{self.socks_port}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # ---- stop ----
    def stop(self, sig=signal.SIGINT, timeout: float = STOP_TIMEOUT, validate=True) -> dict:
        """SIGINT, wait, exit code 0, HAR validated (harrec validate + JSON Schema); returns it."""
        assert self.proc is not None, "harrec was not started"
        assert self.proc.poll() is None, (f"harrec died before stop() with exit "
                                          f"{self.proc.returncode}; stderr:\n{self.stderr_text}")
        self.proc.send_signal(sig)
        try:
            self.returncode = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"harrec did not exit within {timeout:.0f} s of {sig.name}; stderr:\n"
                        f"{self.stderr_text}")
        self._join_readers()
        assert self.returncode == 0, (f"harrec exited with {self.returncode} after {sig.name}; "
                                      f"stderr:\n{self.stderr_text}")
        assert self.har_path.exists(), f"no HAR at {self.har_path}; stderr:\n{self.stderr_text}"
        self.har_text = self.har_path.read_text(encoding="utf-8")
        self.har = validate_har_file(self.har_path, self.binary) if validate \
            else json.loads(self.har_text)
        return self.har

    def finish(self, sig=signal.SIGINT, timeout: float = STOP_TIMEOUT) -> int:
        """Stops a process that writes no HAR (`harrec replay`); returns its exit status."""
        assert self.proc is not None and self.proc.poll() is None, \
            f"harrec died before finish(); stderr:\n{self.stderr_text}"
        self.proc.send_signal(sig)
        try:
            self.returncode = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"harrec did not exit within {timeout:.0f} s of {sig.name}; stderr:\n{self.stderr_text}")
        self._join_readers()
        return self.returncode

    def _join_readers(self, timeout=5.0):
        deadline = time.time() + timeout
        with self.cond:
            while not self._stderr_done and time.time() < deadline:
                self.cond.wait(0.05)

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass


class HarrecFactory:
    def __init__(self, basedir: Path):
        self.basedir = basedir
        self.instances: list[Harrec] = []

    def start(self, *args, **kw) -> Harrec:
        d = self.basedir / f"harrec-{len(self.instances) + 1}"
        d.mkdir(parents=True, exist_ok=True)
        h = Harrec(d)
        self.instances.append(h)
        return h.start(*args, **kw)

    def cleanup(self):
        for h in self.instances:
            h.kill()


@pytest.fixture
def origin():
    srv = origin_mod.OriginServer().start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def origin_module():
    srv = origin_mod.OriginServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def harrec(tmp_path):
    f = HarrecFactory(tmp_path)
    yield f
    f.cleanup()


@pytest.fixture(scope="module")
def harrec_module(tmp_path_factory):
    f = HarrecFactory(tmp_path_factory.mktemp("harrec"))
    yield f
    f.cleanup()


@pytest.fixture(scope="module")
def proxy_module(harrec_module):
    """One harrec shared by a module's tests; stopped (and its HAR validated) at module end.
    --max-body keeps the HAR of the big pass-through matrix small; clients still get every byte."""
    px = harrec_module.start("--max-body", "262144")
    yield px
    if px.alive():
        px.stop()


@pytest.fixture(scope="session")
def payloads(tmp_path_factory):
    return helpers.make_payloads(tmp_path_factory.mktemp("payloads"))


@pytest.fixture
def closed_port():
    s = helpers.closed_port_socket()
    yield s.getsockname()[1]
    s.close()


# ---------------------------------------------------------------- TLS (issue 3)

@pytest.fixture(scope="session", autouse=True)
def _isolated_default_ca_dir(tmp_path_factory):
    """Every harrec started by the suite gets HARREC_CA_DIR pointing into the session's temp dir
    unless a test passes --ca-dir or overrides it, so no test ever creates or reads ~/.harrec (the
    default CA directory) of whoever runs the suite. The CA is made up front (best effort), so
    every `record` of the suite loads an existing CA, as on a machine that has ~/.harrec: the
    first one does not print the one-time "created a CA" note and test order does not matter."""
    old = os.environ.get("HARREC_CA_DIR")
    ca_dir = tmp_path_factory.mktemp("default-ca") / "ca"
    os.environ["HARREC_CA_DIR"] = str(ca_dir)
    if os.path.isfile(HARREC_BIN) and os.access(HARREC_BIN, os.X_OK):
        try:
            subprocess.run([HARREC_BIN, "ca", "init", "--ca-dir", str(ca_dir)],
                           capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            pass  # a binary without `ca` (or a broken one) fails the tests that need it
    yield
    if old is None:
        os.environ.pop("HARREC_CA_DIR", None)
    else:
        os.environ["HARREC_CA_DIR"] = old


@pytest.fixture(scope="session")
def test_pki(tmp_path_factory) -> Path:
    """certs/make-test-pki.sh output, made once per session: a Path holding ca.pem (the *test* CA,
    for --upstream-ca and direct clients), server.pem/-key.pem (localhost, 127.0.0.1, ::1),
    wrong-host.pem/-key.pem (wrong-host.invalid) and self-signed.pem/-key.pem."""
    return helpers.make_test_pki(tmp_path_factory.mktemp("pki") / "pki")


def _https_origin(pki: Path, name: str):
    ctx = origin_mod.server_tls_context(pki / f"{name}.pem", pki / f"{name}-key.pem")
    return origin_mod.OriginServer(tls=ctx).start()


@pytest.fixture
def https_origin(test_pki):
    """HTTPS origin (all origin.py endpoints) with the test CA's certificate for localhost,
    127.0.0.1 and ::1; fresh per test (its /stats and tls_log() belong to the test)."""
    srv = _https_origin(test_pki, "server")
    yield srv
    srv.stop()


@pytest.fixture
def https_origin_wrong_host(test_pki):
    """HTTPS origin whose certificate (signed by the test CA) names only wrong-host.invalid."""
    srv = _https_origin(test_pki, "wrong-host")
    yield srv
    srv.stop()


@pytest.fixture
def https_origin_self_signed(test_pki):
    """HTTPS origin with a self-signed certificate for localhost/127.0.0.1/::1."""
    srv = _https_origin(test_pki, "self-signed")
    yield srv
    srv.stop()


@pytest.fixture
def echo_server():
    """A raw TCP echo server on 127.0.0.1 (non-TLS, non-HTTP tunnel payloads)."""
    srv = helpers.TCPEchoServer().start()
    yield srv
    srv.stop()


class HarrecTLSFactory:
    """`px = harrec_tls.start(*args)` = `harrec.start("--ca-dir", <tmp>/ca, "--upstream-ca",
    <test_pki>/ca.pem, *args)`; then px.ca_dir, px.ca_pem (the harrec CA certificate, which
    `record` must have created by the time it listens) and px.ca_key. At teardown the CA key's
    bytes must not appear in any stdout/stderr of the processes started here."""

    def __init__(self, factory: HarrecFactory, pki: Path, ca_dir: Path):
        self.factory = factory
        self.pki = pki
        self.ca_dir = ca_dir
        self.instances: list[Harrec] = []

    def start(self, *args, ca_dir=None, upstream_ca=True, require_ca=True, **kw) -> Harrec:
        ca_dir = Path(ca_dir or self.ca_dir)
        extra = ["--ca-dir", str(ca_dir)]
        if upstream_ca:
            extra += ["--upstream-ca", str(self.pki / "ca.pem")]
        px = self.factory.start(*extra, *args, **kw)
        px.ca_dir = ca_dir
        px.ca_pem = ca_dir / helpers.CA_CERT_NAME
        px.ca_key = ca_dir / helpers.CA_KEY_NAME
        self.instances.append(px)
        if require_ca:
            deadline = time.time() + 2.0
            while not px.ca_pem.exists() and time.time() < deadline:
                time.sleep(0.02)
            if not px.ca_pem.exists():
                pytest.fail(f"`harrec record --ca-dir {ca_dir}` is listening but did not create "
                            f"{px.ca_pem}; stderr:\n{px.stderr_text}")
        return px

    def check_no_key_material(self):
        for px in self.instances:
            if not px.alive():
                px._join_readers(timeout=0.5)
            helpers.assert_no_key_material(px.ca_key, px.stderr_text, bytes(px.stdout_data),
                                           what=f"output of harrec {' '.join(px.args)}")


@pytest.fixture
def harrec_tls(harrec, test_pki, tmp_path):
    f = HarrecTLSFactory(harrec, test_pki, tmp_path / "ca")
    yield f
    f.check_no_key_material()


# ---------------------------------------------------------------- WebSocket (issue 4)

class WSServerFactory:
    """`srv = factory.start(compression="deflate"|None, extensions=[...])`: a started
    helpers.WSServer (plain, or TLS with the test PKI's localhost certificate); all are stopped
    at teardown."""

    def __init__(self, tls_pki: Path | None = None):
        self.tls_pki = tls_pki
        self.servers: list = []

    def start(self, compression="deflate", extensions=None) -> helpers.WSServer:
        tls = None
        if self.tls_pki is not None:
            tls = origin_mod.server_tls_context(self.tls_pki / "server.pem",
                                                self.tls_pki / "server-key.pem", alpn=None)
        srv = helpers.WSServer(tls=tls, compression=compression, extensions=extensions).start()
        self.servers.append(srv)
        return srv

    def cleanup(self):
        for srv in self.servers:
            srv.stop()


@pytest.fixture
def ws_server():
    """Factory of plain `websockets` servers (ws://) on 127.0.0.1 and ::1; see helpers.WSServer."""
    f = WSServerFactory()
    yield f
    f.cleanup()


@pytest.fixture
def wss_server(test_pki):
    """Factory of TLS `websockets` servers (wss://) with the test CA's certificate for localhost,
    127.0.0.1 and ::1 (give harrec --upstream-ca, i.e. use harrec_tls)."""
    f = WSServerFactory(tls_pki=test_pki)
    yield f
    f.cleanup()


@pytest.fixture
def raw_ws_server():
    """Factory of hand-written WebSocket servers (helpers.RawWSServer):
    `start(greeting=b"...", tls=None|SSLContext, close_after_greeting=False,
    greeting_delay=0.0)`."""
    servers = []

    class _F:
        @staticmethod
        def start(greeting=b"", tls=None, close_after_greeting=False, greeting_delay=0.0):
            srv = helpers.RawWSServer(greeting=greeting, tls=tls,
                                      close_after_greeting=close_after_greeting,
                                      greeting_delay=greeting_delay).start()
            servers.append(srv)
            return srv
    yield _F
    for srv in servers:
        srv.stop()
