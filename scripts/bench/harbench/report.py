"""Tables, ratios and targets (scripts/bench/targets.json)."""

import json
import os

from .install import BENCH_DIR

def print_grid(header, rows, right_from=None):
    """Prints a header, a dashed rule and the rows in aligned columns, two spaces apart; columns
    from index `right_from` on are right-aligned (numbers), the others left-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    right = len(header) if right_from is None else right_from
    line = lambda cells: "  ".join(c.rjust(w) if i >= right else c.ljust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)

def print_rows(hdr, rows, left=2):
    widths = [max(len(hdr[i]), *(len(r[i]) for r in rows)) if rows else len(hdr[i])
              for i in range(len(hdr))]
    line = lambda cells: "  ".join(c.ljust(w) if i < left else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(hdr))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))



def load_targets(script):
    """The targets of one script as (key, label, unit, cmp, threshold) tuples; cmp "info" has no
    threshold (the ratio is printed, no PASS/MISS)."""
    with open(os.path.join(BENCH_DIR, "targets.json")) as f:
        data = json.load(f)
    return [(t["key"], t["label"], t["unit"], t["cmp"], t["threshold"]) for t in data[script]]


def verdict(value, cmp, threshold):
    """"PASS"/"MISS" against a target, "" for an informational ratio or a missing value."""
    if value is None or cmp == "info" or threshold is None:
        return ""
    return "PASS" if (value >= threshold if cmp == ">=" else value <= threshold) else "MISS"


def target_text(cmp, threshold, unit):
    return "(info)" if cmp == "info" or threshold is None else f"{cmp} {threshold:g}{unit}"


def ratio(a, b):
    """a / b when both are known and b > 0, else None."""
    return a / b if a is not None and b else None
