"""Command-line options every bench script shares."""

import argparse


def parser(prog, doc):
    """An ArgumentParser whose description is the docstring's first line and whose epilog is the
    rest of it (each script documents its options and environment there)."""
    return argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog="\n".join(doc.split("\n")[2:]))


def add_peer_option(ap, peers, default=None):
    ap.add_argument("--only", default=",".join(default or peers),
                    help="comma-separated subset of: " + ", ".join(peers))


def add_common(ap, keep_what="HARs, logs, conf"):
    """--skip-install, --no-build, --json FILE, --keep-tmp."""
    ap.add_argument("--skip-install", action="store_true", help="install nothing; fail if missing")
    ap.add_argument("--no-build", action="store_true", help="use the existing .build/release/harrec")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--keep-tmp", action="store_true", help=f"keep the temp dir ({keep_what})")


def parse_peers(ap, only, peers, aliases=None):
    """The peers named in --only (aliases allowed), in the canonical order of `peers`; ap.error
    on an unknown name or an empty selection."""
    chosen = []
    for p in only.split(","):
        p = p.strip().lower()
        if not p:
            continue
        p = (aliases or {}).get(p, p)
        if p not in peers:
            ap.error(f"unknown peer {p!r} (peers: {', '.join(peers)})")
        if p not in chosen:
            chosen.append(p)
    out = [p for p in peers if p in chosen]
    if not out:
        ap.error("nothing to run")
    return out
