"""The harrec CA: `harrec ca init|show|export`, the CA directory (--ca-dir, $HARREC_CA_DIR,
~/.harrec), file modes, refusal of a group/world-readable key, and the key never being printed
(docs/guide/https-and-devices.md)."""

from __future__ import annotations

import os
import re
import ssl
import stat
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from helpers import (CA_CERT_NAME, CA_KEY_NAME, FINGERPRINT_RE, HARREC_BIN,
                     assert_no_key_material, curl, openssl_x509, sha256_fingerprint, x509_field,
                     x509_time)


def run(*args, ca_dir=None, env=None, umask=None, timeout=30) -> subprocess.CompletedProcess:
    """Runs `harrec ARGS`; the output (stdout and stderr) must never hold the CA key of ca_dir."""
    if not (os.path.isfile(HARREC_BIN) and os.access(HARREC_BIN, os.X_OK)):
        pytest.fail(f"harrec binary not found at {HARREC_BIN}")
    pre = (lambda: os.umask(umask)) if umask is not None else None
    p = subprocess.run([HARREC_BIN, *map(str, args)], capture_output=True, timeout=timeout,
                       env=env, preexec_fn=pre, stdin=subprocess.DEVNULL)
    if ca_dir is not None:
        assert_no_key_material(Path(ca_dir) / CA_KEY_NAME, p.stdout, p.stderr,
                               what=f"output of harrec {' '.join(map(str, args))}")
    return p


def text(p) -> str:
    return p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")


def init(d, *extra, **kw):
    p = run("ca", "init", "--ca-dir", d, *extra, ca_dir=d, **kw)
    assert p.returncode == 0, f"harrec ca init failed ({p.returncode}):\n{text(p)}"
    return p


def init_lines(p, d):
    """The two lines `ca init` prints; returns the fingerprint."""
    lines = text(p).splitlines()
    assert f"harrec: CA certificate: {Path(d) / CA_CERT_NAME}" in lines, lines
    fps = [ln for ln in lines if ln.startswith("harrec: SHA-256 fingerprint: ")]
    assert len(fps) == 1, lines
    fp = fps[0].split(": ", 2)[2]
    assert FINGERPRINT_RE.fullmatch(fp), fp
    return fp


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ---------------------------------------------------------------- ca init

@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_init_creates_ca_with_private_modes(umask, tmp_path):
    d = tmp_path / "ca"
    p = init(d, umask=umask)
    fp = init_lines(p, d)
    cert, key = d / CA_CERT_NAME, d / CA_KEY_NAME
    assert mode(d) == 0o700, oct(mode(d))
    assert mode(key) == 0o600, oct(mode(key))
    assert mode(cert) == 0o644, oct(mode(cert))
    assert fp == sha256_fingerprint(cert.read_text())
    # a second init: same output, nothing rewritten
    before = {f: (f.read_bytes(), os.stat(f).st_mtime_ns, os.stat(f).st_ino) for f in (cert, key)}
    p2 = init(d, umask=umask)
    assert init_lines(p2, d) == fp
    assert p2.stdout == p.stdout, "`ca init` on an existing CA must print the same lines"
    for f, (data, mtime, ino) in before.items():
        assert (f.read_bytes(), os.stat(f).st_mtime_ns, os.stat(f).st_ino) == (data, mtime, ino), \
            f"second init rewrote {f.name}"


def test_ca_certificate_profile(tmp_path):
    """Issue 3: CA:TRUE pathlen:0 critical, keyUsage keyCertSign+cRLSign critical, SKI, ten
    years, subject `harrec CA (hostname, date)`, ECDSA P-256 by default; passes -x509_strict."""
    d = tmp_path / "ca"
    init(d)
    pem = (d / CA_CERT_NAME).read_text()
    t = openssl_x509(pem, "-text")
    assert re.search(r"Basic Constraints: critical\s+CA:TRUE, pathlen:0", t), t
    assert re.search(r"Key Usage: critical\s+Certificate Sign, CRL Sign", t), t
    assert "Subject Key Identifier" in t
    assert re.search(r"ASN1 OID: prime256v1|NIST CURVE: P-256", t), "default key is not P-256"
    assert re.search(r"Signature Algorithm: ecdsa-with-SHA256", t)
    subject = x509_field(openssl_x509(pem, "-subject"), "subject")
    # openssl quotes a CN holding a comma: CN = "harrec CA (host, 2025-01-31)"
    assert re.search(r"CN = \"?harrec CA \(.+, \d{4}-\d{2}-\d{2}\)\"?(,|$)", subject), subject
    assert x509_field(openssl_x509(pem, "-issuer"), "issuer") == subject
    dates = openssl_x509(pem, "-dates")
    nb, na = (x509_time(x509_field(dates, k)) for k in ("notBefore", "notAfter"))
    now = datetime.now(timezone.utc)
    assert nb <= now and now - nb <= timedelta(days=3), nb
    assert timedelta(days=3640) <= na - nb <= timedelta(days=3660), na - nb
    p = subprocess.run(["openssl", "verify", "-x509_strict", "-CAfile", str(d / CA_CERT_NAME),
                        str(d / CA_CERT_NAME)], capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stdout + p.stderr


def test_init_rsa(tmp_path):
    d = tmp_path / "ca-rsa"
    init_lines(init(d, "--key-type", "rsa"), d)
    t = openssl_x509((d / CA_CERT_NAME).read_text(), "-text")
    assert "rsaEncryption" in t and "(2048 bit)" in t, t
    assert mode(d / CA_KEY_NAME) == 0o600


# ---------------------------------------------------------------- ca show / export

def test_show(tmp_path):
    d = tmp_path / "ca"
    fp = init_lines(init(d), d)
    p = run("ca", "show", "--ca-dir", d, ca_dir=d)
    assert p.returncode == 0, text(p)
    out = p.stdout.decode()
    lines = out.splitlines()
    assert f"path: {d / CA_CERT_NAME}" in lines, out
    subj = [ln for ln in lines if ln.startswith("subject: ")]
    assert subj and "harrec CA" in subj[0], out
    assert f"sha256: {fp}" in lines, out
    for needle in ("simctl", "update-ca-certificates", "--cacert", "SSL_CERT_FILE"):
        assert needle in out, f"`harrec ca show` does not mention {needle}:\n{out}"
    assert re.search(r"android", out, re.I), "no Android instructions"
    assert str(d / CA_CERT_NAME) in out.split("sha256:", 1)[1], "instructions should name the path"


def test_show_and_export_do_not_create_a_ca(tmp_path):
    """Only `ca init` and `record` create the CA: show/export on an empty place say how to."""
    d = tmp_path / "none"
    for args in (("ca", "show"), ("ca", "export"), ("ca", "export", "--format", "der")):
        p = run(*args, "--ca-dir", d, ca_dir=d)
        assert p.returncode == 1, text(p)
        assert "harrec ca init" in p.stderr.decode(), text(p)
        assert p.stdout == b"", text(p)
    assert not d.exists(), "show/export created the CA directory"


def test_export(tmp_path):
    d = tmp_path / "ca"
    fp = init_lines(init(d), d)
    pem = (d / CA_CERT_NAME).read_text()
    der = ssl.PEM_cert_to_DER_cert(pem)
    out = tmp_path / "ca.der"
    p = run("ca", "export", "--ca-dir", d, "--format", "der", "--out", out, ca_dir=d)
    assert p.returncode == 0, text(p)
    assert out.read_bytes() == der
    assert sha256_fingerprint(out.read_bytes(), inform="DER") == fp  # openssl parses it as DER
    p = run("ca", "export", "--ca-dir", d, ca_dir=d)  # default: PEM to stdout
    assert p.returncode == 0, text(p)
    assert p.stdout.startswith(b"-----BEGIN CERTIFICATE-----\n"), p.stdout[:80]
    assert p.stdout.strip() == pem.encode().strip()
    p = run("ca", "export", "--ca-dir", d, "--format", "pem", "--out", tmp_path / "x.pem",
            ca_dir=d)
    assert p.returncode == 0 and (tmp_path / "x.pem").read_text().strip() == pem.strip()
    p = run("ca", "export", "--ca-dir", d, "--format", "der", ca_dir=d)
    assert p.returncode == 0 and p.stdout == der


# ---------------------------------------------------------------- key file protection

@pytest.mark.parametrize("bad_mode", [0o644, 0o640, 0o604])
def test_readable_key_is_refused(bad_mode, tmp_path):
    d = tmp_path / "ca"
    init(d)
    key = d / CA_KEY_NAME
    data = key.read_bytes()
    os.chmod(key, bad_mode)
    for args in (("ca", "show", "--ca-dir", d), ("ca", "init", "--ca-dir", d)):
        p = run(*args, ca_dir=d)
        cmd = " ".join(map(str, args))
        assert p.returncode == 1, \
            f"harrec {cmd} with a {oct(bad_mode)} key: exit {p.returncode}\n{text(p)}"
        assert "chmod 600" in text(p), text(p)
    try:
        p = run("record", "--http", "0", "--socks", "0", "--out", tmp_path / "x.har",
                "--ca-dir", d, ca_dir=d, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`harrec record` kept running with a {oct(bad_mode)} CA key")
    assert p.returncode == 1 and "chmod 600" in text(p), text(p)
    assert key.read_bytes() == data and mode(key) == bad_mode, "harrec must not touch the key"
    os.chmod(key, 0o600)
    assert run("ca", "show", "--ca-dir", d, ca_dir=d).returncode == 0


def test_key_never_in_any_output(tmp_path, harrec_tls, https_origin):
    """Every command that touches the CA, including failures and a recording session with an
    intercepted exchange: no output contains the key (the runner and harrec_tls check it)."""
    d = tmp_path / "ca"
    init(d)
    for args in (("ca", "show"), ("ca", "export"), ("ca", "export", "--format", "der"),
                 ("ca", "init"), ("ca", "show", "--help"), ("ca", "--help")):
        run(*args, "--ca-dir", d, ca_dir=d)
    os.chmod(d / CA_KEY_NAME, 0o644)
    run("ca", "show", "--ca-dir", d, ca_dir=d)
    os.chmod(d / CA_KEY_NAME, 0o600)
    px = harrec_tls.start(ca_dir=d)
    r = curl("-x", px.http_proxy, "--cacert", px.ca_pem, https_origin.localhost_url("/json?k=1"))
    assert r.rc == 0, r.err
    px.stop()
    assert_no_key_material(d / CA_KEY_NAME, px.har_text, what="the HAR")


# ---------------------------------------------------------------- where the CA lives

def test_ca_dir_env_var(tmp_path, monkeypatch, harrec):
    env_dir, flag_dir, rec_dir = tmp_path / "env-ca", tmp_path / "flag-ca", tmp_path / "rec-ca"
    monkeypatch.setenv("HARREC_CA_DIR", str(env_dir))
    p = run("ca", "init", ca_dir=env_dir)
    assert p.returncode == 0, text(p)
    fp = init_lines(p, env_dir)
    assert mode(env_dir) == 0o700 and mode(env_dir / CA_KEY_NAME) == 0o600
    p = run("ca", "show", ca_dir=env_dir)
    assert p.returncode == 0 and f"sha256: {fp}" in p.stdout.decode().splitlines(), text(p)
    # --ca-dir wins over the variable
    p = init(flag_dir)
    assert init_lines(p, flag_dir) != fp
    # record uses the variable too, and creates the CA there
    monkeypatch.setenv("HARREC_CA_DIR", str(rec_dir))
    px = harrec.start()
    assert (rec_dir / CA_CERT_NAME).exists() and mode(rec_dir / CA_KEY_NAME) == 0o600, \
        f"record did not create the CA in $HARREC_CA_DIR:\n{px.stderr_text}"
    px.stop()
    assert_no_key_material(rec_dir / CA_KEY_NAME, px.stderr_text, bytes(px.stdout_data))


def test_default_ca_dir_is_home_dot_harrec(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HARREC_CA_DIR"}
    env["HOME"] = str(home)
    d = home / ".harrec"
    p = run("ca", "init", env=env, ca_dir=d)
    assert p.returncode == 0, text(p)
    init_lines(p, d)
    assert mode(d) == 0o700 and mode(d / CA_KEY_NAME) == 0o600 and mode(d / CA_CERT_NAME) == 0o644


def test_record_creates_then_reuses_ca(harrec_tls, tmp_path):
    d = tmp_path / "fresh-ca"
    assert not d.exists()
    px = harrec_tls.start(ca_dir=d)
    assert mode(d) == 0o700 and mode(d / CA_KEY_NAME) == 0o600 and mode(d / CA_CERT_NAME) == 0o644
    fp = sha256_fingerprint((d / CA_CERT_NAME).read_text())
    px.stop()
    px = harrec_tls.start(ca_dir=d)
    assert sha256_fingerprint((d / CA_CERT_NAME).read_text()) == fp, "record replaced the CA"
    px.stop()
    p = run("ca", "show", "--ca-dir", d, ca_dir=d)
    assert f"sha256: {fp}" in p.stdout.decode().splitlines(), text(p)
