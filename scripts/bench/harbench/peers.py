"""The recording peers beside harrec: their command lines, their CA certificates, and stopping a
recording peer with SIGINT and counting what its HAR holds.

Martian (scripts/bench/martian, Google's Martian proxy with its HAR logger and MITM) writes its
HAR on SIGINT/SIGTERM, as harrec and mitmproxy's hardump do. It records HTTP/1.1 only: its HTTP/2
support is a frame relay that bypasses its modifiers (so nothing would be recorded), and it does
not proxy WebSockets (it relays the 101 answer, then no frame)."""

import http.client
import os
import signal
import time

from .har import count_har_entries, harrec_reported
from .origin import https_get
from .proc import Failure, free_port, spawn, stop, tail, wait_exit

EXPORT_TIMEOUT_S = 300        # SIGINT -> exit, HAR of many big entries included
STARTUP_TIMEOUT_S = 60        # mitmdump generates its CA on first start

MARTIAN_NO_WS = ("Martian 3.3 does not proxy WebSockets: it passes the origin's 101 answer back, "
                 "but no frame after it (its proxy has no Upgrade handling; a client's first frame "
                 "never reaches the origin)")
MARTIAN_NO_H2 = ("Martian records no HTTP/2: its h2 support relays frames past its HAR logger; "
                 "its column is HTTP/1.1 through the same interception (ALPN http/1.1)")


def harrec_command(harrec, port, har, *extra):
    return [harrec, "record", "--http", str(port), "--socks", "0", "--out", har, "--quiet", *extra]


def mitmdump_command(mitmdump, port, har, confdir=None, insecure=False):
    cmd = [mitmdump, "-q", "--listen-host", "127.0.0.1", "--listen-port", str(port),
           "--set", f"hardump={har}"]
    if insecure:
        cmd.append("--ssl-insecure")
    if confdir:
        cmd += ["--set", f"confdir={confdir}"]
    return cmd


def martian_command(martian, port, har, ca_dir, upstream_ca=None, insecure=False, h2=False):
    """The Martian peer; ca_dir holds (or gets) martian-ca.pem and martian-ca-key.pem."""
    os.makedirs(ca_dir, exist_ok=True)
    cmd = [martian, "-addr", f"127.0.0.1:{port}", "-har", har,
           "-ca-cert", martian_cafile(ca_dir), "-ca-key", os.path.join(ca_dir, "martian-ca-key.pem")]
    if upstream_ca:
        cmd += ["-upstream-ca", upstream_ca]
    if insecure:
        cmd.append("-insecure")
    if h2:
        cmd.append("-h2")
    return cmd


def martian_cafile(ca_dir):
    return os.path.join(ca_dir, "martian-ca.pem")


def mitmproxy_cafile(confdir):
    return os.path.join(confdir, "mitmproxy-ca-cert.pem")


def harrec_cafile(ca_dir):
    return os.path.join(ca_dir, "harrec-ca.pem")


def ca_ready(path):
    try:
        with open(path) as f:
            return "-----END CERTIFICATE-----" in f.read()
    except OSError:
        return False


def sigint_and_count(proc, har, logf, res, keep, timeout=EXPORT_TIMEOUT_S):
    """SIGINT, wait for exit (HAR written), count entries into res: exit_ms, exit_code,
    har_bytes, entries, entries_exact, reported_entries/reported_ms (harrec), export_note."""
    t0 = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    t_exit = wait_exit(proc, timeout)
    if t_exit is None:
        res["export_note"] = f"no exit {timeout}s after SIGINT (killed)"
        stop(proc, signal.SIGKILL, 5)
    else:
        res["exit_ms"] = (t_exit - t0) * 1000
        res["exit_code"] = proc.returncode
    if os.path.exists(har) and os.path.getsize(har) > 0:
        res["har_bytes"] = os.path.getsize(har)
        try:
            res["entries"], res["entries_exact"] = count_har_entries(har)
        except (ValueError, KeyError, TypeError, OSError) as e:
            res["export_note"] = f"HAR unreadable: {str(e)[:80]}"
        if not keep:
            os.unlink(har)
    else:
        res.setdefault("export_note", "no HAR written")
        res.pop("exit_ms", None)
    said = harrec_reported(tail(logf, 50))
    if said:
        res["reported_entries"], res["reported_ms"] = said


def recorded_too_little(res, answered, fraction=0.9):
    """A recording peer whose HAR holds fewer than `fraction` of the answered requests did not
    do the job: returns why (the caller reports the peer as failed, not as fast), else None."""
    entries = res.get("entries")
    if entries is None:
        return f"recorded nothing ({res.get('export_note', 'no HAR')})"
    if answered and entries < fraction * answered:
        return f"HAR holds {entries} entries for {answered} answered requests"
    return None


# ---------------------------------------------------------------------------------------------
# Intercepting peers behind CONNECT (bench-https, bench-h2)

def tls_peer_cafile(peer, ctx):
    return {"direct": os.path.join(ctx["pki"], "ca.pem"),
            "harrec": harrec_cafile(os.path.join(ctx["tmp"], "ca")),
            "martian": martian_cafile(os.path.join(ctx["tmp"], "martian")),
            "mitmproxy": mitmproxy_cafile(os.path.join(ctx["tmp"], "mitm"))}[peer]


def tls_peer_command(peer, ctx, port, har, insecure):
    upstream_ca = os.path.join(ctx["pki"], "ca.pem")
    if peer == "harrec":
        return harrec_command(ctx["harrec"], port, har, "--ca-dir", os.path.join(ctx["tmp"], "ca"),
                              *(["--insecure-upstream"] if insecure else ["--upstream-ca", upstream_ca]))
    if peer == "martian":
        # Martian verifies the origin against the test CA, as harrec does.
        return martian_command(ctx["martian"], port, har, os.path.join(ctx["tmp"], "martian"),
                              upstream_ca=None if insecure else upstream_ca, insecure=insecure)
    if peer == "mitmproxy":
        return mitmdump_command(ctx["mitmdump"], port, har, os.path.join(ctx["tmp"], "mitm"), insecure=True)
    raise ValueError(peer)


def start_tls_peer(peer, ctx, tag, label, insecure=False, startup_timeout=STARTUP_TIMEOUT_S):
    """Starts an intercepting peer (harrec, martian or mitmproxy) on a free port and waits until a
    GET of /small.json through CONNECT, verified against the peer's CA, answers. ctx: tmp, pki,
    origin_port, sizes and the peer's binary (harrec, martian, mitmdump). Returns
    (proc, port, har, logf)."""
    port = free_port()
    har = os.path.join(ctx["tmp"], "har", f"{peer}-{tag}.har")
    logf = os.path.join(ctx["tmp"], "logs", f"{peer}-{tag}.log")
    proc = spawn(tls_peer_command(peer, ctx, port, har, insecure), logf)
    cafile = tls_peer_cafile(peer, ctx)
    deadline = time.monotonic() + startup_timeout
    last = "no answer"
    while True:
        if proc.poll() is not None:
            raise Failure(f"{label} exited ({proc.returncode}) during start-up:\n{tail(logf)}")
        if not ca_ready(cafile):
            last = f"no CA certificate at {cafile} yet"
        else:
            try:
                st, _, data = https_get(port, "/small.json", cafile, origin=ctx["origin_port"])
                if st == 200 and len(data) == ctx["sizes"][0]:
                    break
                last = f"status {st}, {len(data)} bytes"
            except (OSError, http.client.HTTPException) as e:
                last = str(e) or type(e).__name__
        if time.monotonic() > deadline:
            raise Failure(f"{label} not ready within {startup_timeout} s ({last}):\n{tail(logf)}")
        time.sleep(0.2)
    return proc, port, har, logf
