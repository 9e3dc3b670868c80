"""Recording a phone: `record --device` listens on a LAN address with credentials it makes, prints
the phone's proxy settings and a QR code for the setup page, and serves that page and the CA
(PEM, DER and an iOS profile) without credentials. The "phone" is a network namespace joined to
this machine by a veth pair, so no traffic leaves the machine. The profile is checked with
plistlib against openssl's DER of the CA; the QR code with zbarimg.
"""

from __future__ import annotations

import json
import os
import plistlib
import re
import subprocess
import uuid

import pytest

from helpers import HARREC_BIN, curl, entries, need_tool


def ca_der(ca_pem) -> bytes:
    return subprocess.run(["openssl", "x509", "-in", str(ca_pem), "-outform", "der"], capture_output=True, check=True).stdout


def zbar(png) -> str:
    need_tool("zbarimg")
    out = subprocess.run(["zbarimg", "-q", "--raw", str(png)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_ca_export_mobileconfig_and_show_qr(harrec_tls, tmp_path):
    px = harrec_tls.start()  # creates the CA
    px.stop(validate=False)
    env = dict(os.environ, HARREC_CA_DIR=str(px.ca_dir))
    profiles = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.mobileconfig"
        subprocess.run([HARREC_BIN, "ca", "export", "--mobileconfig", str(path)], env=env, check=True, capture_output=True)
        profiles.append(path.read_bytes())
    assert profiles[0] == profiles[1], "the same CA gives the same profile"
    profile = plistlib.loads(profiles[0])
    assert profile["PayloadType"] == "Configuration"
    payload = profile["PayloadContent"][0]
    assert payload["PayloadType"] == "com.apple.security.root"
    assert payload["PayloadContent"] == ca_der(px.ca_pem)
    uuid.UUID(payload["PayloadUUID"]), uuid.UUID(profile["PayloadUUID"])
    assert payload["PayloadUUID"] != profile["PayloadUUID"]

    png = tmp_path / "qr.png"
    url = "http://192.0.2.7:9000/harrec/"
    shown = subprocess.run([HARREC_BIN, "ca", "show", "--qr", "--url", url, "--qr-png", str(png)], env=env,
                           capture_output=True, text=True, check=True)
    assert "█" in shown.stderr and url in shown.stderr
    assert zbar(png) == url


@pytest.fixture
def phone():
    """A network namespace "phone" on 10.213.X.2, reaching this machine at 10.213.X.1."""
    need_tool("ip")
    tag = os.getpid() % 200 + 20
    ns, host_if, phone_if = f"harrec-phone-{tag}", f"hr{tag}h", f"hr{tag}p"
    host_ip, phone_ip = f"10.213.{tag}.1", f"10.213.{tag}.2"
    def run(*args):
        subprocess.run(args, check=True, capture_output=True)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    subprocess.run(["ip", "link", "del", host_if], capture_output=True)
    run("ip", "netns", "add", ns)
    try:
        run("ip", "link", "add", host_if, "type", "veth", "peer", "name", phone_if)
        run("ip", "link", "set", phone_if, "netns", ns)
        run("ip", "addr", "add", f"{host_ip}/24", "dev", host_if)
        run("ip", "link", "set", host_if, "up")
        run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{phone_ip}/24", "dev", phone_if)
        run("ip", "netns", "exec", ns, "ip", "link", "set", phone_if, "up")
        run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        yield ns, host_ip
    finally:
        subprocess.run(["ip", "link", "del", host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def phone_curl(ns, *args) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, "curl", "-s", "--max-time", "10", *args], capture_output=True, timeout=30)


def test_device_mode_from_a_phone_on_the_lan(harrec_tls, origin, phone, tmp_path):
    ns, host_ip = phone
    png = tmp_path / "setup.png"
    px = harrec_tls.start("--no-redact", "--device", "--listen", host_ip, "--qr-png", str(png), ports=("--http", "0"))
    line = px.wait_for_stderr(r"Username harrec\s+Password [a-z2-9]{12}$")
    assert line, px.stderr_text
    password = line.rsplit(" ", 1)[1]
    port = px.http_port
    assert px.wait_for_stderr(rf"HTTP proxy listening on {re.escape(host_ip)}:{port}$")
    assert px.wait_for_stderr(rf"Server {re.escape(host_ip)}\s+Port {port}")
    setup = f"http://{host_ip}:{port}/harrec/"
    assert zbar(png) == setup

    # The phone, before its proxy is set: the setup page and the CA, no credentials.
    page = phone_curl(ns, setup)
    assert page.returncode == 0 and b"/harrec/ca.mobileconfig" in page.stdout and b"Certificate Trust Settings" in page.stdout
    profile = phone_curl(ns, "-D", "-", f"{setup}ca.mobileconfig")
    head, _, body = profile.stdout.partition(b"\r\n\r\n")
    assert b"Content-Type: application/x-apple-aspen-config" in head
    assert plistlib.loads(body)["PayloadContent"][0]["PayloadContent"] == ca_der(px.ca_pem)
    assert phone_curl(ns, f"{setup}ca.crt").stdout == ca_der(px.ca_pem)
    # A mark, or any proxying, needs the credentials harrec printed.
    assert phone_curl(ns, "-o", "/dev/null", "-w", "%{http_code}", f"{setup}mark?name=x").stdout == b"407"
    target = f"http://127.0.0.1:{origin.port}/json?from=phone"
    assert phone_curl(ns, "-o", "/dev/null", "-w", "%{http_code}", "-x", f"http://{host_ip}:{port}", target).stdout == b"407"
    ok = phone_curl(ns, "-x", f"http://harrec:{password}@{host_ip}:{port}", target)
    assert ok.returncode == 0 and b'"target": "/json?from=phone"' in ok.stdout
    har = px.stop()
    assert [e["request"]["url"] for e in entries(har) if e["response"]["status"] == 200] == [target]
    assert password not in px.har_text


@pytest.fixture
def mac_and_phone():
    """Two network namespaces joined by a veth pair: a "mac" whose only network is that link
    (10.214.X.1), so `--device` has one address to find, and a "phone" (10.214.X.2)."""
    need_tool("ip")
    tag = os.getpid() % 200 + 20
    mac, phone = f"harrec-mac-{tag}", f"harrec-phone2-{tag}"
    mac_ip, phone_ip = f"10.214.{tag}.1", f"10.214.{tag}.2"

    def run(*args):
        subprocess.run(args, check=True, capture_output=True)
    for ns in (mac, phone):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    run("ip", "netns", "add", mac)
    run("ip", "netns", "add", phone)
    try:
        run("ip", "-n", mac, "link", "add", "lan0", "type", "veth", "peer", "name", "wifi0", "netns", phone)
        for ns, ifname, ip in ((mac, "lan0", mac_ip), (phone, "wifi0", phone_ip)):
            run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", ifname)
            run("ip", "-n", ns, "link", "set", ifname, "up")
            run("ip", "-n", ns, "link", "set", "lo", "up")
        yield mac, phone, mac_ip
    finally:
        for ns in (mac, phone):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_device_mode_finds_the_lan_address_by_itself(mac_and_phone, tmp_path):
    """No --listen: harrec picks the machine's LAN address, prints it, and the phone reaches the
    setup page there, and a mark with the printed credentials."""
    mac, phone, mac_ip = mac_and_phone
    proc = subprocess.Popen(["ip", "netns", "exec", mac, HARREC_BIN, "record", "--device", "--http", "0", "--no-redact",
                             "--ca-dir", str(tmp_path / "ca"), "--out", str(tmp_path / "s.har")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        port = password = None
        for line in proc.stderr:
            lines.append(line)
            if m := re.search(r"HTTP proxy listening on ([0-9.]+):(\d+)$", line.strip()):
                assert m.group(1) == mac_ip, "".join(lines)
                port = int(m.group(2))
            if m := re.search(r"Username harrec\s+Password ([a-z2-9]{12})$", line.strip()):
                password = m.group(1)
            if port and password:
                break
        assert port and password, "".join(lines)
        setup = f"http://{mac_ip}:{port}/harrec/"
        page = phone_curl(phone, setup)
        assert page.returncode == 0 and b"/harrec/ca.mobileconfig" in page.stdout, page
        marked = phone_curl(phone, "-x", f"http://harrec:{password}@{mac_ip}:{port}", "-w", "\n%{http_code}",
                            "http://harrec/mark?name=from%20the%20phone")
        assert marked.stdout.endswith(b"\n200"), marked
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode == 0
    har = json.loads((tmp_path / "s.har").read_text())
    assert [page["title"] for page in har["log"]["pages"]] == ["from the phone"]
