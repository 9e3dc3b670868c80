"""Limits that hold under abuse (issue 13): out of file descriptors, slowloris heads, an open proxy
on the LAN, loops through an interface address, live-log lines for cut responses, and 2,000
concurrent connections."""

import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from conftest import LISTEN_RE
from helpers import HARREC_BIN, curl, entries, one_entry


class Proc:
    """harrec started with a custom environment, resource limit or command prefix."""

    def __init__(self, args, workdir: Path, env=None, nofile=None, prefix=()):
        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.har = workdir / "session.har"
        self.proc = subprocess.Popen([*prefix, HARREC_BIN, "record", "--out", str(self.har), *map(str, args)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     cwd=workdir, env={**os.environ, **(env or {})}, preexec_fn=limit)
        self.lines: list[str] = []
        self.port = None
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            m = LISTEN_RE.match(line) or re.match(r"^harrec: HTTP proxy listening on \S+:(\d+)$", line)
            if m and self.port is None:
                self.port = int(m.groups()[-1])
                self.ready.set()
        self.ready.set()

    def wait_ready(self):
        assert self.ready.wait(15) and self.port, "\n".join(self.lines)
        return self

    @property
    def text(self):
        return "\n".join(self.lines)

    def stop(self, timeout=60):
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(timeout) == 0, self.text

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_out_of_descriptors_backs_off_instead_of_spinning(origin, tmp_path):
    """At `ulimit -n 128` with 300 connections: no busy loop, a bounded log, and service resumes
    when descriptors are free again."""
    px = Proc(["--http", "0", "-q"], tmp_path, nofile=128).wait_ready()
    clients = []
    try:
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", px.port))
            clients.append(s)
        time.sleep(0.5)
        cpu0, t0 = cpu_seconds(px.proc.pid), time.monotonic()
        time.sleep(3)
        busy = (cpu_seconds(px.proc.pid) - cpu0) / (time.monotonic() - t0)
        assert busy < 0.25, f"harrec used {busy:.0%} of a core while out of descriptors"
        failures = [line for line in px.lines if "accept failed" in line]
        assert 1 <= len(failures) <= 6, failures
        assert "Too many open files" in failures[0] and "ulimit -n" in failures[0]
        assert sum(len(line) for line in px.lines) < 20_000
    finally:
        for s in clients:
            s.close()
    # Descriptors free again: a new client is served within the longest back-off and a bit.
    t0 = time.monotonic()
    r = curl("-x", f"http://127.0.0.1:{px.port}", origin.url("/status/200"), max_time=10)
    assert r.rc == 0 and r.out == b"status 200\n", r.err
    assert time.monotonic() - t0 < 3
    px.stop()


def test_a_trickling_request_head_gets_408(tmp_path):
    px = Proc(["--http", "0", "--request-head-timeout", "2"], tmp_path).wait_ready()
    try:
        s = socket.create_connection(("127.0.0.1", px.port))
        s.settimeout(10)
        t0 = time.monotonic()
        head = b"GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nX-Slow: " + b"a" * 100
        answer = b""
        for byte in head:
            try:
                s.send(bytes([byte]))
            except OSError:
                break
            time.sleep(0.25)
            s.setblocking(False)
            try:
                answer += s.recv(4096)
            except BlockingIOError:
                pass
            finally:
                s.setblocking(True)
            if answer:
                break
        took = time.monotonic() - t0
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
        assert 2 <= took < 5, f"408 after {took:.1f} s"
        s.settimeout(5)
        rest = b""
        while chunk := s.recv(4096):
            rest += chunk
        s.close()
        assert b"did not complete within 2 s" in answer + rest
    finally:
        px.stop()
    assert any("408" in line for line in px.lines), px.text


def test_request_head_timeout_is_at_most_30_seconds(tmp_path):
    p = subprocess.run([HARREC_BIN, "record", "--out", tmp_path / "x.har", "--http", "0", "--request-head-timeout", "31"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2 and "at most 30" in p.stderr, p.stderr


def test_a_lan_listener_requires_credentials(tmp_path, origin):
    p = subprocess.run([HARREC_BIN, "record", "--out", tmp_path / "x.har", "--http", "0", "--listen", "0.0.0.0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2 and "--proxy-auth" in p.stderr, p.stderr
    assert not (tmp_path / "x.har.journal").exists()
    # From a file (not in ps output): listening, and credentials are required.
    secret = tmp_path / "auth"
    secret.write_text("alice:s3cret-pass\n")
    px = Proc(["--http", "0", "--listen", "0.0.0.0", "--proxy-auth-file", secret], tmp_path).wait_ready()
    try:
        assert curl("-x", f"http://127.0.0.1:{px.port}", "-o", "/dev/null", "-w", "%{http_code}",
                    origin.url("/status/200")).out == b"407"
        assert curl("-x", f"http://alice:s3cret-pass@127.0.0.1:{px.port}", origin.url("/status/200")).out == b"status 200\n"
        with open(f"/proc/{px.proc.pid}/cmdline", "rb") as f:
            assert b"s3cret" not in f.read()
    finally:
        px.stop()
    # From the environment.
    work = tmp_path / "env"
    work.mkdir()
    px = Proc(["--http", "0", "--listen", "0.0.0.0"], work, env={"HARREC_PROXY_AUTH": "bob:pw2"}).wait_ready()
    try:
        assert curl("-x", f"http://bob:pw2@127.0.0.1:{px.port}", origin.url("/status/200")).out == b"status 200\n"
    finally:
        px.stop()


@pytest.fixture
def netns():
    """A network namespace of the test's own; its loopback interface also has 10.77.0.1 (an
    interface address that is not 127/8, without needing the dummy or veth kernel modules)."""
    if shutil.which("ip") is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "iproute2"], check=True, capture_output=True)
    name = "harrec-" + uuid.uuid4().hex[:8]
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        for cmd in (["link", "set", "lo", "up"], ["addr", "add", "10.77.0.1/32", "dev", "lo"]):
            subprocess.run(["ip", "-n", name, *cmd], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name])


def test_a_request_to_its_own_port_on_an_interface_address_is_refused(tmp_path, netns):
    px = Proc(["--http", "0", "--listen", "0.0.0.0", "--proxy-auth", "u:p"], tmp_path,
              prefix=("ip", "netns", "exec", netns)).wait_ready()
    try:
        r = subprocess.run(["ip", "netns", "exec", netns, "curl", "-q", "-sS", "--max-time", "10",
                            "-x", f"http://u:p@127.0.0.1:{px.port}", "-w", "\n%{http_code}",
                            f"http://10.77.0.1:{px.port}/loop"], capture_output=True, timeout=30)
        assert r.stdout.decode().endswith("\n502"), r
        assert b"own listener" in r.stdout, r.stdout
    finally:
        px.stop()


def test_cut_and_stalled_responses_are_logged_as_the_client_saw_them(origin, harrec):
    px = harrec.start("--upstream-timeout", "1")
    assert curl("-x", px.http_proxy, origin.url("/close-mid-body")).rc == 18
    assert curl("-x", px.http_proxy, origin.url("/slow?ms=2500&chunks=3")).rc != 0
    har = px.stop()
    cut = px.wait_for_stderr(r"/close-mid-body ", 1)
    assert re.search(r"/close-mid-body 200 \S+ \S+ cut: ", cut), cut
    stalled = px.wait_for_stderr(r"/slow\?", 1)
    assert re.search(r"/slow\?\S+ 200 \S+ \S+ cut: upstream sent nothing for 1 s", stalled), stalled
    assert " 502" not in cut and " 504" not in stalled
    assert one_entry(har, "/slow?")["response"]["status"] == 200


class ManyConnectionsOrigin:
    """An asyncio origin on a thread with a deep backlog: the test's python origin (a thread per
    connection, backlog 128) is not built for 2,000 connections at once."""

    def __init__(self):
        import asyncio
        self.loop = asyncio.new_event_loop()
        self.started = threading.Event()
        self.connections = 0
        threading.Thread(target=self._run, daemon=True).start()
        assert self.started.wait(10)

    def _run(self):
        import asyncio
        asyncio.set_event_loop(self.loop)

        async def serve(reader, writer):
            self.connections += 1
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    if not head:
                        break
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n\r\nstatus 200\n")
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        async def main():
            self.server = await asyncio.start_server(serve, "127.0.0.1", 0, backlog=4096)
            self.port = self.server.sockets[0].getsockname()[1]
            self.started.set()
            await self.server.serve_forever()

        try:
            self.loop.run_until_complete(main())
        except BaseException:
            pass

    def close(self):
        """Stops listening and ends every connection's coroutine on the loop's thread (left
        suspended, they were collected later, during another test, as unraisable warnings)."""
        import asyncio

        async def shutdown():
            # The handlers first: closing the server ends serve_forever, and with it the loop.
            me = asyncio.current_task()
            handlers = [t for t in asyncio.all_tasks() if t is not me and t.get_coro().__name__ == "serve"]
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)
            self.server.close()

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(30)


def test_2000_concurrent_connections(harrec):
    """2,000 clients hold a keep-alive connection each through harrec's two loops, each with one
    exchange done (4,000 sockets in harrec); all are answered and recorded."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 6000
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= need, "this test needs 6,000 descriptors"
    origin = ManyConnectionsOrigin()
    px = harrec.start("-q", "--threads", "2")
    clients = []
    try:
        for _ in range(2000):
            clients.append(socket.create_connection(("127.0.0.1", px.http_port)))
        host = f"127.0.0.1:{origin.port}"
        request = f"GET http://{host}/status HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        for s in clients:
            s.sendall(request)
        answered = 0
        for s in clients:
            s.settimeout(30)
            data = b""
            while not data.endswith(b"status 200\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            answered += data.startswith(b"HTTP/1.1 200 ")
        assert answered == 2000
        # Every connection still open on both sides of harrec at once.
        assert origin.connections == 2000
        for s in clients:
            s.sendall(request)
        for s in clients:
            assert s.recv(4096).endswith(b"status 200\n")
    finally:
        for s in clients:
            s.close()
        origin.close()
    har = px.stop(timeout=60)
    assert len(entries(har)) == 4000
