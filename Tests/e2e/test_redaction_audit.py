"""The redaction audit as a ratchet: an independent planted corpus (redaction_audit/corpus.py:
LLM, OAuth + PKCE, push, ad ids, payments, signed storage URLs, SOAP/SAML, CSV, GraphQL, SSE,
WebSocket, multipart, docs and JS bundles, telemetry, magic links, KYC, orders, OTP, recovery
codes, seed phrases, ~300 vendor token formats under generic keys; look-alikes that must stay)
is redacted, then audited (redaction_audit/audit.py).

Fixtures/redaction/audit-known.json lists, per seed, the plants known to survive, the
look-alikes known to be damaged and the JSON known to break. A test fails when anything NOT
listed fails (a regression), and when something listed no longer fails (an improvement: make
it permanent with `scripts/redaction-audit --update-known`).

Also: `redact --check` flags the input, and the output passes `harrec validate` (known problems,
listed under invalid_har, are ratcheted the same way).
HARREC_BIN selects the binary (default .build/release/harrec, else .build/debug/harrec).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE / "redaction_audit"))
import audit as audit_mod  # noqa: E402
import corpus  # noqa: E402
from conftest import schema_validator, validate_har_file  # noqa: E402

# Files in, files out: no proxy, so nothing for the poll(2) run (conftest.py).
pytestmark = pytest.mark.no_event_loop

SEEDS = [1, 2]
KNOWN = REPO / "Fixtures" / "redaction" / "audit-known.json"
UPDATE = "run `scripts/redaction-audit --update-known`"


def harrec_bin() -> str:
    env = os.environ.get("HARREC_BIN")
    if env:
        return env
    release = REPO / ".build" / "release" / "harrec"
    return str(release if release.exists() else REPO / ".build" / "debug" / "harrec")


BIN = harrec_bin()


def run(*args, timeout=120):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")


class Case:
    def __init__(self, seed: int, workdir: Path):
        self.seed = seed
        self.har, self.manifest = corpus.build(seed)
        self.inp, self.out = workdir / "in.har", workdir / "out.har"
        self.inp.write_text(json.dumps(self.har, indent=1, ensure_ascii=False), encoding="utf-8")
        (workdir / "manifest.json").write_text(json.dumps(self.manifest, indent=1, ensure_ascii=False), encoding="utf-8")
        self.redact = run("redact", self.inp, "--out", self.out, "-q")
        self._report = None

    @property
    def report(self) -> dict:
        if self._report is None:
            assert self.redact[0] == 0 and self.out.exists(), f"harrec redact failed (exit {self.redact[0]}):\n{self.redact[1][-3000:]}"
            raw = self.out.read_bytes()
            self._report = audit_mod.audit(self.har, json.loads(raw), self.manifest, raw)
        return self._report


@pytest.fixture(scope="module", params=SEEDS, ids=[f"seed{s}" for s in SEEDS])
def case(request, tmp_path_factory):
    return Case(request.param, tmp_path_factory.mktemp(f"redaction-audit-{request.param}"))


@pytest.fixture(scope="module")
def known():
    assert KNOWN.exists(), f"{KNOWN.relative_to(REPO)} is missing: {UPDATE}"
    return json.loads(KNOWN.read_text(encoding="utf-8"))["seeds"]


def test_corpus_is_deterministic_large_and_consistent(case):
    har2, man2 = corpus.build(case.seed)
    assert json.dumps(har2) == json.dumps(case.har) and man2 == case.manifest, "corpus.build is not deterministic"
    plants, las = case.manifest["plants"], case.manifest["lookalikes"]
    assert len(plants) >= 300 and len({p["kind"] for p in plants}) >= 150 and len(las) >= 150
    assert len({r["id"] for r in plants + las}) == len(plants) + len(las), "ids are not unique"
    # the manifest is right about the input: every plant and look-alike is where it says
    entries = case.har["log"]["entries"]
    wrong = [r["id"] for r in plants + las
             if not audit_mod.present_at(entries[r["entry"]], r, exact_leaf=r.get("exact", False))[0]]
    assert not wrong, f"manifest records not found at their location in the input: {wrong[:20]}"


def test_check_flags_the_input(case):
    rc, out = run("redact", "--check", case.inp)
    assert rc != 0, f"redact --check exited {rc} on the planted input:\n{out[-2000:]}"


def test_output_is_valid_har(case, known):
    """`harrec validate` accepts the output (and the HAR JSON Schema too), except for problems
    listed under invalid_har in audit-known.json (ratcheted like the rest)."""
    assert case.redact[0] == 0, case.redact[1][-3000:]
    listed = set((known.get(str(case.seed)) or {}).get("invalid_har", []))
    if not listed:
        validate_har_file(case.out, BIN)
        return
    rc, out = run("validate", case.out)
    now = set(audit_mod.validate_problems(out)) if rc != 0 else set()
    if rc != 0 and not now:
        now = {"(unparsed harrec validate failure)"}
    new, fixed = sorted(now - listed), sorted(listed - now)
    assert not new, f"seed {case.seed}: new harrec validate problems on the output:\n{out[-3000:]}"
    assert not fixed, f"seed {case.seed}: listed validate problems are gone: {fixed} -- {UPDATE}"
    errors = [e for e in schema_validator().iter_errors(json.loads(case.out.read_text(encoding="utf-8")))
              if json_path(e.absolute_path) not in listed]
    assert not errors, f"seed {case.seed}: the output does not match the HAR JSON Schema at " \
                       f"{json_path(errors[0].absolute_path)}: {errors[0].message[:300]}"


def json_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (("." if out else "") + str(p))
    return out


def ratchet(case, known, key: str, what: str):
    rep = case.report
    now = set(audit_mod.known_entry(rep)[key])
    seed_known = known.get(str(case.seed))
    assert seed_known is not None, f"seed {case.seed} is not in {KNOWN.relative_to(REPO)}: {UPDATE}"
    listed = set(seed_known.get(key, []))
    new, fixed = sorted(now - listed), sorted(listed - now)
    details = {s["id"]: s for s in rep["survivors"]} | {d["id"]: d for d in rep["damaged"]}
    msg = []
    if new:
        msg.append(f"seed {case.seed}: {len(new)} new {what} (not in {KNOWN.name}):")
        for i in new[:40]:
            d = details.get(i)
            if d and "found" in d:
                msg.append(f"  {i}: {str(d['value'])[:60]!r} at {d['location']} (found in {d['found'][0][:80]})")
            elif d:
                msg.append(f"  {i}: {str(d['value'])[:60]!r} at {d['location']} is now {str(d.get('now'))[:60]!r}")
            else:
                msg.append(f"  {i}")
    if fixed:
        msg.append(f"seed {case.seed}: {len(fixed)} listed {what} no longer fail(s): {', '.join(fixed[:40])}"
                   f" -- {UPDATE} to lock in the improvement")
    assert not msg, "\n".join(msg) + (f"\n(if intended, {UPDATE})" if new else "")


def test_no_new_surviving_plants(case, known):
    ratchet(case, known, "survivors", "surviving plants")


def test_no_new_damaged_lookalikes(case, known):
    ratchet(case, known, "damaged", "damaged look-alikes")


def test_no_new_broken_json(case, known):
    ratchet(case, known, "broken_json", "broken JSON units")
