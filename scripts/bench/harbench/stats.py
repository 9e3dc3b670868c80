"""Statistics: medians, percentiles, and measurements in interleaved rounds (every peer once per
round, back to back, so a burst of load from the host's other tenants spoils one round, not one
peer)."""

import time

from .proc import Failure, log, prog

def median(values):
    values = sorted(values)
    n = len(values)
    if n == 0:
        return None
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


MEDIAN_KEYS = ("rps", "p50_ms", "p99_ms", "rss_kib", "peak_kib", "exit_ms", "reported_ms")


def median_results(rounds):
    """One row per (peer, workload): the median of each measured number over the rounds that
    did not fail; the HAR columns come from the round with the median req/s."""
    groups = {}
    for current in rounds:
        for r in current:
            groups.setdefault((r["peer"], r["workload"]), []).append(r)
    out = []
    for (peer, w), rs in groups.items():
        ok = [r for r in rs if "failed" not in r]
        if not ok:
            out.append(rs[0])
            continue
        ok_sorted = sorted(ok, key=lambda r: r.get("rps", 0))
        row = dict(ok_sorted[len(ok_sorted) // 2])
        for key in MEDIAN_KEYS:
            vals = [r[key] for r in ok if r.get(key) is not None]
            if vals:
                row[key] = median(vals)
        row["errors"] = sum(r.get("errors", 0) for r in ok)
        row["rounds_ok"] = len(ok)
        if len(ok) < len(rs):
            row["export_note"] = (row.get("export_note", "") +
                                  f" {len(rs) - len(ok)} of {len(rs)} rounds failed").strip()
        out.append(row)
    return out


def run_rounds(count, title, runs, measure_one, label=str):
    """Measures every (peer, workload) of `runs`, in that order, `count` times. Returns the rounds
    (a list of result rows per round, each tagged with its round number) and whether any
    measurement failed; a failed one is logged and kept as a row with "failed"."""
    rounds, failed = [], False
    for number in range(1, count + 1):
        log(f"--- {title} {number} of {count}")
        current = []
        for peer, w in runs:
            try:
                r = measure_one(peer, w)
            except Failure as e:
                failed = True
                log(f"{prog()}: {label(peer)} /{w} ({title}): {e}")
                r = {"peer": peer, "workload": w, "failed": str(e)}
            r["round"] = number
            current.append(r)
            time.sleep(0.5)
        rounds.append(current)
    return rounds, failed

def percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]

