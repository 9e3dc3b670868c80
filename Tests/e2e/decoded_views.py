"""Decoded views of HAR strings, shared by the two planted-corpus judges
(`test_redaction_planted.py` and `redaction_audit/audit.py`): a string is expanded into its
percent-decoded, form-decoded, HTML-unescaped and JSON-unescaped forms, the JSON documents and
SSE/NDJSON lines inside it, and the base64/base64url runs in it (text, or the printable runs of
bytes), recursively to `MAX_DEPTH` levels. Each judge keeps the views its own way (`_add`)."""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from urllib.parse import unquote, unquote_plus

MAX_DEPTH = 5       # decoding levels (e.g. body -> base64 -> JSON -> string -> percent-decoded)

B64_RUNS = [re.compile(r"[A-Za-z0-9+/]{16,}={0,2}"), re.compile(r"[A-Za-z0-9_-]{16,}={0,2}"),
            re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")]
PRINTABLE_RUN = re.compile(rb"[\x20-\x7e\t\r\n]{12,}")
JSON_STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def b64_decode(text: str) -> bytes | None:
    s = text.rstrip("=").replace("-", "+").replace("_", "/")
    if len(s) % 4 == 1:
        s = s[:-1]
    try:
        return base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def as_text(data: bytes) -> str | None:
    try:
        t = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return t if all(c >= " " or c in "\t\r\n" for c in t) else None


class DecodedViews:
    """Expands strings into their decoded views; a subclass keeps them (`_add` returns True when
    the bytes are new and should be expanded further)."""

    def _add(self, label: str, data: bytes, depth: int) -> bool:
        raise NotImplementedError

    def text(self, label: str, s: str, depth: int = 0):
        if not self._add(label, s.encode("utf-8", "surrogatepass"), depth) or depth >= MAX_DEPTH:
            return
        derived = []
        if PERCENT_ESCAPE.search(s):
            cur = s
            for _ in range(3):
                nxt = unquote(cur)
                if nxt == cur:
                    break
                derived.append(("percent-decoded", nxt))
                cur = nxt
        if "+" in s and "=" in s and s.lstrip()[:1] not in ("{", "["):
            derived.append(("form-decoded", unquote_plus(s)))
        if "&" in s:
            derived.append(("HTML-unescaped", html.unescape(s)))
        if "\\" in s:
            parts = []
            for m in JSON_STRING_LITERAL.finditer(s):
                try:
                    parts.append(json.loads(m.group(0)))
                except ValueError:
                    pass
            if parts:
                derived.append(("JSON-unescaped literals", "\n".join(parts)))
            derived.append(("backslash-n as newline", s.replace("\\n", "\n")))
        for tag, d in derived:
            if d != s:
                self.text(f"{label} -> {tag}", d, depth + 1)
        self._json_in(label, s, depth)
        self._base64_in(label, s, depth)

    def _json_in(self, label, s, depth):
        st = s.strip()
        cands = []
        if st[:1] in ("{", "["):
            cands.append(("JSON", st))
        if "\n" in st or st.startswith("data:"):
            for i, line in enumerate(st.split("\n")):
                ln = line.strip()
                tag = f"line {i}"
                if ln.startswith("data:"):
                    ln, tag = ln[5:].strip(), f"SSE data line {i}"
                if ln[:1] in ("{", "["):
                    cands.append((f"{tag} JSON", ln))
                elif "{" in ln and "}" in ln:
                    cands.append((f"{tag} embedded JSON", ln[ln.index("{"):ln.rindex("}") + 1]))
        elif "{" in st and "}" in st and st[:1] not in ("{", "["):
            cands.append(("embedded JSON", st[st.index("{"):st.rindex("}") + 1]))
        for tag, c in cands:
            try:
                v = json.loads(c)
            except ValueError:
                continue
            self.walk(v, f"{label} -> {tag}", depth + 1)

    def _base64_in(self, label, s, depth):
        seen = set()
        for rx in B64_RUNS:
            for m in rx.finditer(s):
                r = m.group(0)
                if r in seen:
                    continue
                seen.add(r)
                dec = b64_decode(r)
                if dec is None or len(dec) < 6:
                    continue
                self.data(f"{label} -> base64 run", dec, depth + 1)

    def data(self, label: str, data: bytes, depth: int):
        t = as_text(data)
        if t is not None:
            self.text(label, t, depth)
            return
        if not self._add(label + " (bytes)", data, depth) or depth >= MAX_DEPTH:
            return
        for m in PRINTABLE_RUN.finditer(data):
            self.text(f"{label} -> printable run", m.group(0).decode("ascii"), depth + 1)

    def walk(self, v, label: str, depth: int = 0):
        if isinstance(v, str):
            self.text(label, v, depth)
        elif isinstance(v, dict):
            for k, x in v.items():
                self.text(f"{label}.{{key}}", k, depth)
                self.walk(x, f"{label}.{k}", depth)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                self.walk(x, f"{label}[{i}]", depth)

