"""HAR files: counting entries, and harrec's own report of what it wrote."""

import json
import mmap
import os
import re

JSON_LOAD_LIMIT = 512 << 20   # larger HARs are counted by scanning instead of json.load

def count_har_entries(path):
    """Returns (entries, exact). Big files are scanned for entry keys instead of json.load."""
    size = os.path.getsize(path)
    if size <= JSON_LOAD_LIMIT:
        with open(path, "rb") as f:
            doc = json.load(f)
        return len(doc["log"]["entries"]), True
    # Keys are unescaped quotes; the same word inside a JSON string body is preceded by '\'.
    pat = re.compile(rb'(?<!\\)"request"\s*:')
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return sum(1 for _ in pat.finditer(mm)), False


# harrec prints "harrec: wrote N entries to FILE" and then "harrec: HAR written in X ms".
HARREC_WROTE = re.compile(r"harrec: wrote (\d+) entries to .*\n(?:.*\n)*?harrec: HAR written in (\d+(?:\.\d+)?) ms")



def harrec_reported(logf_text):
    """(entries, ms) from harrec's last "wrote N entries ... HAR written in X ms", or None."""
    m = None
    for m in HARREC_WROTE.finditer(logf_text):
        pass
    return (int(m.group(1)), float(m.group(2))) if m else None
