#!/usr/bin/env python3
"""Regenerates the ClientHello fixtures in this directory.

Each fixture is the first bytes a real TLS client sent to a plain TCP listener on 127.0.0.1 (its
ClientHello records, nothing else), written as hex, 32 bytes a line. Clients: the openssl CLI
(s_client) and Python's ssl module. Run from anywhere: python3 Fixtures/tls/capture.py
"""
import os, socket, ssl, subprocess, threading

HERE = os.path.dirname(os.path.abspath(__file__))

def capture(name, start_client):
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
    port = srv.getsockname()[1]
    proc = start_client(port)
    conn, _ = srv.accept(); conn.settimeout(1.0)
    data = b""
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk: break
            data += chunk
    except socket.timeout:
        pass
    conn.close(); srv.close()
    if proc is not None:
        proc.kill()
    with open(os.path.join(HERE, f"{name}.hex"), "w") as f:
        for i in range(0, len(data), 32):
            f.write(data[i:i+32].hex() + "\n")
    print(name, len(data))

def sclient(*args):
    return lambda port: subprocess.Popen(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", *args],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def pyclient(sni, alpn):
    def start(port):
        def run():
            ctx = ssl.create_default_context()
            if alpn: ctx.set_alpn_protocols(alpn)
            s = socket.create_connection(("127.0.0.1", port))
            try: ctx.wrap_socket(s, server_hostname=sni)
            except Exception: pass
        threading.Thread(target=run, daemon=True).start()
        return None
    return start

capture("openssl-sni-alpn", sclient("-servername", "example.com", "-alpn", "h2,http/1.1"))
capture("openssl-no-sni", sclient("-noservername"))
capture("openssl-tls12", sclient("-servername", "tls12.example.org", "-tls1_2"))
# A long SNI and ALPN list plus a 512-byte send fragment: the ClientHello spans two records.
capture("openssl-multi-record", sclient("-servername", "a" * 60 + "." + "b" * 60 + "." + "c" * 60 + ".example",
        "-alpn", ",".join(["proto-%02d" % i for i in range(40)]), "-max_send_frag", "512"))
capture("python-sni-alpn", pyclient("api.example.com", ["h2", "http/1.1"]))
# Python sends no SNI for an IP literal.
capture("python-ip-no-sni", pyclient("127.0.0.1", None))
