"""What the benchmarks need, installed unless --skip-install: Debian packages (apt-get), the
mitmproxy/proxy.py venv, harrec ($HARREC_BIN or `swift build -c release`), and the two Go programs
under scripts/bench/ (the Martian peer and the load generator) built from Debian's Go sources into
the cache directory."""

import os
import re
import shutil
import subprocess

from .proc import Failure, log, prog, run_logged, sudo_prefix

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BENCH_DIR = os.path.join(REPO, "scripts", "bench")
INSTALL_TIMEOUT_S = 1800
BUILD_TIMEOUT_S = 3600


def cache_dir():
    """${HARREC_BENCH_CACHE:-~/.cache/harrec-bench}: the venv, the Go builds."""
    return os.environ.get("HARREC_BENCH_CACHE") or os.path.expanduser("~/.cache/harrec-bench")


def find_nginx():
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None)


def apt_install(packages, skip_install):
    """apt-get install the Debian packages (a list) unless --skip-install."""
    if not packages:
        return
    if skip_install:
        raise Failure(f"missing {' '.join(packages)} (--skip-install given)")
    if not shutil.which("apt-get"):
        raise Failure(f"missing {' '.join(packages)} and apt-get is not available")
    # RUNLEVEL=1 keeps invoke-rc.d from starting the system nginx service on port 80.
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive", RUNLEVEL="1")
    log(f"{prog()}: apt-get install -y {' '.join(packages)}")
    run_logged(sudo_prefix() + ["apt-get", "update", "-q"], "apt-get update", INSTALL_TIMEOUT_S, env)
    run_logged(sudo_prefix() + ["apt-get", "install", "-y", "-q", "--no-install-recommends"]
               + list(packages), "apt-get install", INSTALL_TIMEOUT_S, env)


# Debian package of each tool the benchmarks run.
TOOL_PACKAGES = {"nginx": "nginx-light", "wrk": "wrk", "curl": "curl", "openssl": "openssl",
                 "valgrind": "valgrind"}


def ensure_tools(names, skip_install):
    """Returns {name: path} for the tools (keys of TOOL_PACKAGES), installing what is missing."""
    def find(name):
        return find_nginx() if name == "nginx" else shutil.which(name)
    missing = [TOOL_PACKAGES[n] for n in names if not find(n)]
    apt_install(missing, skip_install)
    paths = {n: find(n) for n in names}
    lost = [n for n, p in paths.items() if not p]
    if lost:
        raise Failure(f"{', '.join(lost)} still missing after install")
    return paths


def ensure_system_tools(skip_install):
    """nginx and wrk (bench-http, bench-cpu, bench-replay)."""
    t = ensure_tools(["nginx", "wrk"], skip_install)
    return t["nginx"], t["wrk"]


def ensure_tls_tools(skip_install):
    """nginx, curl 7.68+ and openssl (bench-https, bench-h2)."""
    from .proc import version_of
    t = ensure_tools(["nginx", "curl", "openssl"], skip_install)
    ver = version_of([t["curl"], "--version"])
    m = re.match(r"curl (\d+)\.(\d+)", ver)
    if not m or (int(m.group(1)), int(m.group(2))) < (7, 68):
        raise Failure(f"curl 7.68+ needed (-Z --parallel-immediate, -w %{{stderr}}); found: {ver}")
    return t["nginx"], t["curl"]


def python_ok(py):
    try:
        r = subprocess.run([py, "-c", "import sys, venv; print(sys.version_info >= (3, 12))"],
                           capture_output=True, text=True, timeout=20)
        return r.returncode == 0 and r.stdout.strip() == "True"
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_python312():
    cands = []
    if os.environ.get("HARREC_BENCH_PYTHON"):
        cands.append(os.environ["HARREC_BENCH_PYTHON"])
    roots = []
    if shutil.which("pyenv"):
        try:
            roots.append(subprocess.run(["pyenv", "root"], capture_output=True, text=True,
                                        timeout=20).stdout.strip())
        except (OSError, subprocess.TimeoutExpired):
            pass
    roots += [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")]
    roots = [r for i, r in enumerate(roots) if r and r not in roots[:i]]
    for root in roots:
        cands.append(os.path.join(root, "versions", "3.13.0", "bin", "python3"))
    for name in ("python3.13", "python3.12", "python3.14"):
        p = shutil.which(name)
        if p:
            cands.append(p)
    for root in roots:
        vdir = os.path.join(root, "versions")
        if os.path.isdir(vdir):
            def key(v):
                return [int(x) if x.isdigit() else -1 for x in re.split(r"[.\-]", v)]
            for v in sorted(os.listdir(vdir), key=key, reverse=True):
                if re.match(r"^3\.(1[2-9]|[2-9]\d)(\.\d+)?$", v):
                    cands.append(os.path.join(vdir, v, "bin", "python3"))
    if shutil.which("python3"):
        cands.append(shutil.which("python3"))
    for c in cands:
        if os.access(c, os.X_OK) and python_ok(c):
            return c
    return None


def ensure_venv(skip_install):
    venv = venv_dir()
    mitmdump = os.path.join(venv, "bin", "mitmdump")
    proxy = os.path.join(venv, "bin", "proxy")
    vpy = os.path.join(venv, "bin", "python3")
    have = all(os.access(p, os.X_OK) for p in (mitmdump, proxy, vpy)) and python_ok(vpy)
    if have:
        return venv
    if skip_install:
        raise Failure(f"venv {venv} lacks mitmproxy/proxy.py (--skip-install given)")
    if not (os.access(vpy, os.X_OK) and python_ok(vpy)):
        py = find_python312()
        if not py:
            raise Failure("mitmproxy 12 needs Python 3.12+; none found (set HARREC_BENCH_PYTHON "
                          "or install one with pyenv)")
        if os.path.exists(venv):
            shutil.rmtree(venv)
        os.makedirs(os.path.dirname(venv), exist_ok=True)
        log(f"{prog()}: creating venv {venv} with {py}")
        run_logged([py, "-m", "venv", venv], "python -m venv", 300)
    log(f"{prog()}: pip install mitmproxy proxy.py (takes a few minutes the first time)")
    run_logged([vpy, "-m", "pip", "install", "-q", "mitmproxy", "proxy.py"], "pip install",
               INSTALL_TIMEOUT_S)
    return venv


def venv_dir():
    return os.environ.get("HARREC_BENCH_VENV") or os.path.join(cache_dir(), "venv")


def ensure_mitmdump(skip_install):
    mitmdump = os.path.join(venv_dir(), "bin", "mitmdump")
    if os.access(mitmdump, os.X_OK) and python_ok(os.path.join(venv_dir(), "bin", "python3")):
        return mitmdump
    ensure_venv(skip_install)
    if not os.access(mitmdump, os.X_OK):
        raise Failure(f"{mitmdump} missing after installing the venv")
    return mitmdump


def harrec_help(binp):
    try:
        r = subprocess.run([binp, "record", "--help"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
        return r.stdout + r.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failure(f"{binp} record --help: {e}")


def ensure_harrec(no_build, need=(), what="the options this benchmark uses"):
    """$HARREC_BIN, or .build/release/harrec (built with `swift build -c release` unless
    no_build). `need`: options `harrec record --help` must list."""
    binp = os.environ.get("HARREC_BIN")
    if binp:
        if not os.access(binp, os.X_OK):
            raise Failure(f"HARREC_BIN={binp} is not an executable")
    else:
        binp = os.path.join(REPO, ".build", "release", "harrec")
        if not no_build:
            if not shutil.which("swift"):
                raise Failure("swift not found (set HARREC_BIN to a built harrec)")
            log(f"{prog()}: swift build -c release (set HARREC_BIN or pass --no-build to skip)")
            run_logged(["swift", "build", "-c", "release"], "swift build -c release", BUILD_TIMEOUT_S,
                       cwd=REPO)
        if not os.access(binp, os.X_OK):
            raise Failure(f"{binp} not found (build it, or set HARREC_BIN)")
    if need:
        helptext = harrec_help(binp)
        for opt in need:
            if opt not in helptext:
                raise Failure(f"{binp} lacks {what} ({opt} missing from `record --help`)")
    return binp


# ---------------------------------------------------------------------------------------------
# Go programs: the Martian peer and the load generator, from Debian's Go sources (GOPATH mode:
# no module download is possible or wanted).

GO_PACKAGES = ["golang-go", "golang-github-google-martian-dev", "golang-golang-x-net-dev"]
GO_SRC = "/usr/share/gocode"
GO_PROGRAMS = {"martian": "martian-peer", "loadgen": "loadgen"}


def _go_ready():
    return (shutil.which("go") and os.path.isdir(os.path.join(GO_SRC, "src/github.com/google/martian/har"))
            and os.path.isdir(os.path.join(GO_SRC, "src/golang.org/x/net/http2")))


def ensure_go_program(name, skip_install):
    """Builds scripts/bench/NAME/main.go into the cache dir once (again when a source is newer)
    and returns the binary's path. NAME: martian (the peer) or loadgen."""
    out = os.path.join(cache_dir(), GO_PROGRAMS[name])
    src = os.path.join(BENCH_DIR, name)
    newest = max(os.path.getmtime(os.path.join(src, f)) for f in os.listdir(src) if f.endswith(".go"))
    if os.access(out, os.X_OK) and os.path.getmtime(out) >= newest:
        return out
    if not _go_ready():
        apt_install(GO_PACKAGES, skip_install)
    if not _go_ready():
        raise Failure("go or the Martian/x-net sources still missing after installing "
                      + " ".join(GO_PACKAGES))
    gopath = os.path.join(cache_dir(), "go")
    # Martian's sources say github.com/google/martian/v3; Debian ships them without the /v3.
    link = os.path.join(gopath, "src/github.com/google/martian/v3")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.islink(link):
        os.symlink(os.path.join(GO_SRC, "src/github.com/google/martian"), link)
    env = dict(os.environ, GO111MODULE="off", GOPATH=f"{gopath}:{GO_SRC}", GOFLAGS="",
               GOPROXY="off", GOCACHE=os.path.join(gopath, "cache"))
    log(f"{prog()}: building scripts/bench/{name} into {out} (once; Debian's Go sources, GOPATH mode)")
    run_logged(["go", "build", "-o", out, "."], f"go build scripts/bench/{name}", 600, env=env, cwd=src)
    return out


def martian_version():
    """The Debian version of Martian's sources the peer was built from."""
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "golang-github-google-martian-dev"],
                           capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        return r.stdout.strip() or "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"
