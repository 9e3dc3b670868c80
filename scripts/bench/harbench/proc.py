"""Processes the benchmarks start (each in its own session, so its pid is its process group id:
on exit exactly those groups are signalled), ports, /proc readings (RSS, peak RSS, CPU seconds)."""

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

STOP_TIMEOUT_S = 10           # non-recording peers / cleanup
CLK_TCK = os.sysconf("SC_CLK_TCK")

# The name log lines and failures start with; a script sets it with set_prog().
PROG = ["bench"]


def set_prog(name):
    PROG[0] = name


def prog():
    return PROG[0]


class Failure(Exception):
    """A peer failed to start, wrk failed, or a prerequisite is missing."""


class Interrupted(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


STARTED = []


def spawn(cmd, logfile, **kw):
    out = open(logfile, "ab")
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, **kw)
    finally:
        out.close()
    STARTED.append(proc)
    return proc


def signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def wait_exit(proc, timeout):
    """Waits up to timeout seconds; returns the time.monotonic() of exit, or None on timeout.
    Uses a pidfd so the exit is seen at once (Popen.wait(timeout) polls with sleeps)."""
    if proc.returncode is not None:
        return time.monotonic()
    fd = None
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
        finally:
            os.close(fd)
        if not ready:
            return None
        t = time.monotonic()
        proc.wait()
        return t
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return None
    return time.monotonic()


def stop(proc, sig=signal.SIGTERM, timeout=STOP_TIMEOUT_S):
    """Stops proc's whole process group: sig to the leader, then SIGKILL to the group."""
    if proc.poll() is None:
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass
        if wait_exit(proc, timeout) is None:
            signal_group(proc, signal.SIGKILL)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
    signal_group(proc, signal.SIGKILL)  # leftover children (proxy.py workers, nginx worker)


def cleanup():
    for proc in reversed(STARTED):
        if proc.poll() is None:
            signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + 5
    for proc in reversed(STARTED):
        left = max(0.0, deadline - time.monotonic())
        try:
            proc.wait(left)
        except subprocess.TimeoutExpired:
            pass
        signal_group(proc, signal.SIGKILL)
        try:
            proc.wait(2)
        except subprocess.TimeoutExpired:
            pass


def on_signal(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


def sudo_prefix():
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo"):
        return ["sudo"]
    return []


def run_logged(cmd, what, timeout, env=None, cwd=None):
    logf = tempfile.NamedTemporaryFile(prefix="harrec-bench-", suffix=".log", delete=False)
    try:
        rc = subprocess.run(cmd, stdout=logf, stderr=subprocess.STDOUT, timeout=timeout, env=env,
                            cwd=cwd, stdin=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        rc = None
    logf.close()
    with open(logf.name, "rb") as f:
        out = f.read().decode("utf-8", "replace")
    os.unlink(logf.name)
    if rc != 0:
        tail = "\n".join(out.splitlines()[-30:])
        raise Failure(f"{what} failed ({'timeout' if rc is None else 'exit ' + str(rc)}):\n{tail}")
    return out


def port_open(port):
    """Whether something accepts connections on 127.0.0.1:port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def port_free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tail(path, n=15):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-n:])
    except OSError:
        return ""


def process_tree(pid):
    """pid and all its live descendants."""
    children = _children_map()
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo.extend(children.get(p, []))
    return seen


def rss_kib_tree(pid):
    """VmRSS of pid plus all its descendants, in KiB (proxy.py runs worker processes)."""
    tree = process_tree(pid)
    total = 0
    for p in tree:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total, len(tree)


def wait_exit_peak(proc, timeout):
    """Like wait_exit, and also the process's peak RSS (VmHWM, KiB) as last read before it
    exited: every 10 ms, so the export's peak is seen however short it is."""
    deadline = time.monotonic() + timeout
    peak = None
    fd = os.pidfd_open(proc.pid)
    try:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{proc.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            peak = max(peak or 0, int(line.split()[1]))
            except OSError:
                pass
            ready, _, _ = select.select([fd], [], [], 0.01)
            if ready:
                t = time.monotonic()
                proc.wait()
                return t, peak
    finally:
        os.close(fd)
    return None, peak


def prewarm_page_cache(directory, size=1 << 30):
    """Writes and deletes a 1 GiB file once before measuring. On a fresh VM, memory the guest has
    never touched is slow to fault in, so whichever peer writes its HAR first would pay for it;
    touching it once up front makes the export comparison fair for every peer."""
    path = os.path.join(directory, "prewarm.bin")
    block = b"\0" * (4 << 20)
    with open(path, "wb") as f:
        for _ in range(size // len(block)):
            f.write(block)
    os.unlink(path)


def version_of(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        text = (r.stdout + r.stderr).strip().splitlines()
        return text[0].strip() if text else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"



def _children_map():
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return children


def cpu_s_tree(pid):
    """utime + stime of pid and its descendants (all threads), in seconds."""
    if pid is None:
        return None
    total = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        except (OSError, ValueError, IndexError):
            pass
    return total / CLK_TCK


def host_cpu():
    """(busy, total) jiffies over all cores, from /proc/stat."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return sum(vals) - idle, sum(vals)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"



def install_signal_handlers():
    """SIGINT, SIGTERM and SIGHUP raise Interrupted (main() then stops what it started)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)


def ignore_signals():
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)


def wait_port(port, proc, logf, what, timeout=60, host="127.0.0.1"):
    """Waits until `port` accepts a TCP connection; fails when proc exits or after timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise Failure(f"{what} exited ({proc.returncode}) during start-up:\n{tail(logf)}")
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise Failure(f"{what} not listening on {port} within {timeout} s:\n{tail(logf)}")
        time.sleep(0.1)


def run_main(name, keep_tmp, run):
    """The frame of every script's main(): sets the log prefix, turns SIGINT/SIGTERM/SIGHUP into
    Interrupted, runs run(box) and returns its exit status; a Failure gives 1, an interruption 130
    (Linux only: 2 elsewhere). Afterwards it stops every process started (cleanup) and removes
    box["tmp"] (the script's temp dir) unless keep_tmp."""
    set_prog(name)
    if not sys.platform.startswith("linux"):
        log(f"{name}: Linux only (/proc, pidfd)")
        return 2
    install_signal_handlers()
    box = {"tmp": None}
    try:
        return run(box)
    except Failure as e:
        log(f"{name}: {e}")
        return 1
    except Interrupted as e:
        log(f"{name}: interrupted ({e}); stopping everything")
        return 130
    finally:
        ignore_signals()
        cleanup()
        tmp = box["tmp"]
        if tmp and not keep_tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp:
            log(f"{name}: kept {tmp}")
