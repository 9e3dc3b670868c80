"""harbench: what harrec's benchmark scripts (scripts/bench-*) share.

    proc     processes we start (own session each; cleanup signals exactly those), ports,
             /proc readings (RSS, peak RSS, CPU seconds), logging, Failure/Interrupted
    install  apt-get packages, the mitmproxy venv, harrec ($HARREC_BIN or swift build), the Go
             programs (Martian peer, load generator) built once into ~/.cache/harrec-bench
    origin   nginx with the two JSON documents, plain or TLS (throw-away test PKI)
    peers    harrec, mitmproxy and Martian command lines and CAs; SIGINT-and-count
    drivers  wrk, the Go load generator, small Python clients
    stats    medians, percentiles, interleaved rounds
    har      counting HAR entries
    report   aligned tables, targets (scripts/bench/targets.json), PASS/MISS
    args     the options every script shares

A script does `sys.path.insert(0, <scripts/bench>); import harbench as bh` and calls bh.NAME:
every public name of the modules is here.
"""

from .proc import *      # noqa: F401,F403
from .install import *   # noqa: F401,F403
from .drivers import *   # noqa: F401,F403
from .origin import *    # noqa: F401,F403
from .peers import *     # noqa: F401,F403
from .stats import *     # noqa: F401,F403
from .har import *       # noqa: F401,F403
from .report import *    # noqa: F401,F403
from .args import *      # noqa: F401,F403
from . import proc, install, drivers, origin, peers, stats, har, report, args  # noqa: F401
