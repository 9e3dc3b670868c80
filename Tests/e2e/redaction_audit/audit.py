#!/usr/bin/env python3
"""Audits a redacted HAR against the corpus manifest (see corpus.py).

    python3 Tests/e2e/redaction_audit/audit.py IN.har OUT.har MANIFEST.json [--json REPORT.json]

`audit(in_har, out_har, manifest, out_raw=None) -> report` finds:

survivors      plants still present in the output. Values of 8+ bytes are searched in every
               decoded view of the whole output (raw bytes, every string, percent-decoded,
               form-decoded, HTML-unescaped, JSON-unescaped, base64/base64url runs, JSON inside
               strings, SSE/NDJSON lines, recursively); shorter ones only at their location
               (the JSON leaf / form or query parameter their `inner` route leads to, else their
               `context` text, or the value, in the views of the location string).
damaged        look-alikes that changed: a JSON leaf (`exact`) must stay equal, any other must
               stay present (its `context`, else its value) at its location.
broken_json    JSON that parsed in the input and does not in the output, by id: the HAR path of
               the string, then `#sse3` / `#line2` for a JSON line, then `>a.b` for JSON inside a
               JSON string (recursively).
tallies        per kind and per kind class: planted, survived (and look-alikes, damaged).
"""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from decoded_views import MAX_DEPTH, DecodedViews, b64_decode, as_text  # noqa: E402

MIN_GLOBAL = 8

class Views(DecodedViews):
    """Every decoded view of some strings, deduplicated; `find` says which views hold a needle."""

    def __init__(self):
        self.items: list = []   # (label, bytes)
        self.index: set = set()
        self._blob = None

    def _add(self, label: str, data: bytes, depth: int = 0) -> bool:
        if data in self.index:
            return False
        self.index.add(data)
        self.items.append((label, data))
        self._blob = None
        return True

    def walk(self, v, label: str, depth: int = 0):
        super().walk(v, label, depth)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            self._add(f"{label} (number)", json.dumps(v).encode(), depth)

    def find(self, needle: str, limit: int = 3) -> list:
        """Labels of the views holding needle (the most direct first)."""
        if self._blob is None:
            starts, chunks, pos = [], [], 0
            for _, data in self.items:
                starts.append(pos)
                chunks.append(data)
                pos += len(data) + 2
            self._blob = (b"\0\0".join(chunks), starts)
        blob, starts = self._blob
        nb = needle.encode("utf-8", "surrogatepass")
        found, pos = [], blob.find(nb)
        while pos >= 0 and len(found) < 50:
            i = bisect.bisect_right(starts, pos) - 1
            found.append(self.items[i][0])
            nxt = starts[i + 1] if i + 1 < len(starts) else len(blob)
            pos = blob.find(nb, nxt)
        found.sort(key=lambda lb: (lb.count(" -> "), len(lb)))
        return found[:limit]


def har_views(har: dict, raw: bytes | None = None) -> Views:
    v = Views()
    if raw is not None:
        v._add("raw file bytes", raw)
    for i, e in enumerate(har["log"]["entries"]):
        v.walk(e, f"entries[{i}]")
    return v


def value_views(x) -> Views:
    v = Views()
    if isinstance(x, str):
        v.text("location", x)
    else:
        v.walk(x, "location")
    return v


# ---------------------------------------------------------------- manifest routes

class Unresolved(Exception):
    pass


def at_path(entry, path):
    cur = entry
    for k in path:
        try:
            cur = cur[k]
        except (KeyError, IndexError, TypeError):
            raise Unresolved(f"no {k!r} on the way to {path}")
    return cur


def sse_payloads(text: str) -> list:
    return [ln[5:].lstrip() for ln in text.split("\n") if ln.startswith("data:")]


def resolve(entry, path, inner=None):
    cur = at_path(entry, path)
    for step in inner or []:
        op = step[0]
        if not isinstance(cur, str):
            raise Unresolved(f"{op} step on a non-string")
        if op == "json":
            try:
                cur = json.loads(cur)
            except ValueError:
                raise Unresolved("not JSON any more")
            cur = at_path(cur, step[1])
        elif op == "b64":
            d = b64_decode(cur)
            if d is None:
                raise Unresolved("not base64 any more")
            cur = d.decode("utf-8", "replace")
        elif op in ("form", "query"):
            q = urlsplit(cur).query if op == "query" else cur
            vals = [v for k, v in parse_qsl(q, keep_blank_values=True) if k == step[1]]
            if not vals:
                raise Unresolved(f"no parameter {step[1]}")
            cur = vals[0]
        elif op == "sse":
            pl = sse_payloads(cur)
            if step[1] >= len(pl):
                raise Unresolved(f"no SSE data line {step[1]}")
            cur = pl[step[1]]
        else:
            raise ValueError(f"unknown step {op}")
    return cur


def needle_of(rec) -> str:
    v = rec["value"]
    return v if isinstance(v, str) else json.dumps(v)


def present_at(entry, rec, exact_leaf: bool) -> tuple:
    """(present, how) for a record at its own location in `entry`."""
    try:
        target = resolve(entry, rec["path"], rec.get("inner"))
    except Unresolved as e:
        return False, f"location gone ({e})"
    val = rec["value"]
    if not isinstance(val, str) or exact_leaf:
        if target == val and type(target) is type(val):
            return True, "leaf unchanged"
        if not isinstance(val, str):
            if isinstance(target, str) and json.dumps(val) == target.strip():
                return True, "leaf unchanged (as a string)"
            return False, f"leaf is now {json.dumps(target, ensure_ascii=False)[:80]}"
    needle = rec.get("context") or needle_of(rec)
    if isinstance(target, str) and needle in target:
        return True, "verbatim at the location"
    labels = value_views(target).find(needle)
    if labels:
        return True, f"at the location ({labels[0]})"
    return False, "not at the location"


# ---------------------------------------------------------------- JSON units

def json_units(s: str, uid: str, out: dict):
    """Registers every JSON unit of string s: the whole string, SSE data lines and NDJSON
    lines, and (recursively) JSON inside their string values. out[id] = parsed OK."""
    st = s.strip()
    if st[:1] in ("{", "["):
        try:
            v = json.loads(st)
            out[uid] = True
            _inner_units(v, uid, out)
            return
        except ValueError:
            if "\n" not in st:
                out[uid] = False
                return
    if "\n" in st:
        sse_i = line_i = 0
        for line in st.split("\n"):
            ln = line.strip()
            if ln.startswith("data:"):
                p = ln[5:].strip()
                if p[:1] in ("{", "["):
                    key = f"{uid}#sse{sse_i}"
                    try:
                        v = json.loads(p)
                        out[key] = True
                        _inner_units(v, key, out)
                    except ValueError:
                        out[key] = False
                sse_i += 1
            elif ln[:1] in ("{", "[") and ln[-1:] in ("}", "]"):
                key = f"{uid}#line{line_i}"
                try:
                    v = json.loads(ln)
                    out[key] = True
                    _inner_units(v, key, out)
                except ValueError:
                    out[key] = False
                line_i += 1


def _inner_units(v, uid, out, keys=()):
    if isinstance(v, dict):
        for k, x in v.items():
            _inner_units(x, uid, out, keys + (str(k),))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _inner_units(x, uid, out, keys + (str(i),))
    elif isinstance(v, str):
        st = v.strip()
        if st[:1] in ("{", "[") and st[-1:] in ("}", "]"):
            key = f"{uid}>{'.'.join(keys)}"
            try:
                inner = json.loads(st)
            except ValueError:
                return  # never was JSON
            out[key] = True
            _inner_units(inner, key, out)


def har_json_units(har: dict) -> dict:
    out: dict = {}

    def walk(v, label):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{label}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{label}[{i}]")
        elif isinstance(v, str):
            json_units(v, label, out)

    for i, e in enumerate(har["log"]["entries"]):
        e2 = e
        content = e.get("response", {}).get("content", {})
        if content.get("encoding") == "base64" and isinstance(content.get("text"), str):
            d = b64_decode(content["text"])
            t = as_text(d) if d is not None else None
            if t is not None:
                json_units(t, f"entries[{i}].response.content.text(base64)", out)
        walk(e2, f"entries[{i}]")
    return out


# ---------------------------------------------------------------- the audit

def audit(in_har: dict, out_har: dict, manifest: dict, out_raw: bytes | None = None) -> dict:
    out_entries = out_har["log"]["entries"]
    views = har_views(out_har, out_raw)
    survivors, damaged = [], []
    kinds = defaultdict(lambda: {"planted": 0, "survived": 0})
    classes = defaultdict(lambda: {"planted": 0, "survived": 0, "kinds": set(), "surviving_kinds": set()})
    for p in manifest["plants"]:
        kinds[p["kind"]]["planted"] += 1
        c = classes[p["class"]]
        c["planted"] += 1
        c["kinds"].add(p["kind"])
        needle = needle_of(p)
        where = []
        if len(needle.encode("utf-8")) >= MIN_GLOBAL:
            where = views.find(needle)
        else:
            entry = out_entries[p["entry"]] if p["entry"] < len(out_entries) else {}
            ok, how = present_at(entry, p, exact_leaf=False)
            if ok:
                where = [f"{p['location']}: {how}"]
        if where:
            survivors.append({"id": p["id"], "kind": p["kind"], "class": p["class"], "value": p["value"],
                              "location": p["location"], "found": where})
            kinds[p["kind"]]["survived"] += 1
            c["survived"] += 1
            c["surviving_kinds"].add(p["kind"])
    la_kinds = defaultdict(lambda: {"count": 0, "damaged": 0})
    for la in manifest["lookalikes"]:
        la_kinds[la["kind"]]["count"] += 1
        entry = out_entries[la["entry"]] if la["entry"] < len(out_entries) else {}
        ok, how = present_at(entry, la, exact_leaf=la.get("exact", False))
        if not ok:
            la_kinds[la["kind"]]["damaged"] += 1
            try:
                now = resolve(entry, la["path"], la.get("inner"))
                now = now if isinstance(now, (int, float)) else str(now)
                if isinstance(now, str) and len(now) > 160:
                    now = now[:160] + "..."
            except Unresolved:
                now = None
            damaged.append({"id": la["id"], "kind": la["kind"], "value": la["value"], "location": la["location"],
                            "why": how, "now": now})
    before, after = har_json_units(in_har), har_json_units(out_har)
    broken = sorted(k for k, ok in before.items() if ok and not after.get(k, False))
    return {
        "seed": manifest.get("seed"),
        "plants": len(manifest["plants"]),
        "kinds": len(kinds),
        "lookalikes": len(manifest["lookalikes"]),
        "json_units": sum(1 for ok in before.values() if ok),
        "survivors": survivors,
        "damaged": damaged,
        "broken_json": broken,
        "by_kind": {k: dict(v) for k, v in sorted(kinds.items())},
        "by_class": {k: {"planted": v["planted"], "survived": v["survived"], "kinds": len(v["kinds"]),
                         "surviving_kinds": sorted(v["surviving_kinds"])} for k, v in sorted(classes.items())},
        "lookalike_kinds": {k: dict(v) for k, v in sorted(la_kinds.items())},
    }


def validate_problems(output: str) -> list:
    """The JSON paths `harrec validate` complains about (lines "log.entries[4].request.url: ...")."""
    paths = set()
    for line in output.splitlines():
        m = re.match(r"(log(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*): ", line.strip())
        if m:
            paths.add(m.group(1))
    return sorted(paths)


def known_entry(report: dict) -> dict:
    """What audit-known.json records for one seed (invalid_har: `harrec validate` problems of
    the output, when the report has them)."""
    out = {"survivors": sorted(s["id"] for s in report["survivors"]),
           "damaged": sorted(d["id"] for d in report["damaged"]),
           "broken_json": sorted(report["broken_json"])}
    if "invalid_har" in report:
        out["invalid_har"] = sorted(report["invalid_har"])
    return out


def format_report(report: dict, verbose: bool = True) -> str:
    lines = [f"seed {report['seed']}: {report['plants']} plants of {report['kinds']} kinds, "
             f"{report['lookalikes']} look-alikes, {report['json_units']} JSON units"]
    lines.append(f"  {'class':<12} {'kinds':>5} {'planted':>8} {'survived':>9}  surviving kinds")
    for cls, c in report["by_class"].items():
        sk = ", ".join(k.split(".", 1)[1] if "." in k else k for k in c["surviving_kinds"])
        if len(sk) > 100:
            sk = sk[:100] + "..."
        lines.append(f"  {cls:<12} {c['kinds']:>5} {c['planted']:>8} {c['survived']:>9}  {sk}")
    tp = sum(c["planted"] for c in report["by_class"].values())
    ts = sum(c["survived"] for c in report["by_class"].values())
    lines.append(f"  {'total':<12} {report['kinds']:>5} {tp:>8} {ts:>9}")
    if verbose and report["survivors"]:
        lines.append("  survivors:")
        for s in report["survivors"]:
            v = str(s["value"])
            lines.append(f"    {s['id']:<48} {v[:40]!r:<44} {s['location']}  [{s['found'][0][:70]}]")
    lines.append(f"  damaged look-alikes: {len(report['damaged'])}")
    for d in report["damaged"]:
        lines.append(f"    {d['id']:<36} {str(d['value'])[:40]!r:<44} {d['location']} -> {str(d['now'])[:60]!r} ({d['why'][:60]})")
    lines.append(f"  broken JSON: {len(report['broken_json'])}")
    for b in report["broken_json"]:
        lines.append(f"    {b}")
    if "invalid_har" in report:
        lines.append(f"  harrec validate on the output: {len(report['invalid_har'])} problem(s)")
        for line in report.get("validate_output", "").splitlines():
            if line.startswith("log"):
                lines.append(f"    {line[:200]}")
    return "\n".join(lines)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="Audit a redacted HAR against a corpus manifest.")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("manifest")
    ap.add_argument("--json", help="write the full report here")
    a = ap.parse_args(argv)
    raw = Path(a.output).read_bytes()
    rep = audit(json.loads(Path(a.input).read_text(encoding="utf-8")), json.loads(raw),
                json.loads(Path(a.manifest).read_text(encoding="utf-8")), raw)
    print(format_report(rep))
    if a.json:
        Path(a.json).write_text(json.dumps(rep, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
