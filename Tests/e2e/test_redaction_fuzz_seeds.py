"""The redaction fuzzer's regression seeds through the command line: every seed in
Fixtures/fuzz/redaction/regression-* becomes a HAR (scripts/minimize-redaction-finding builds the
entry Tests/RedactionTests/FuzzInput.swift builds), and `harrec redact` run on it and again on its
output gives the same entry. The unit tests (FuzzRegressionTests) check the same seeds through
`RedactionEngine.redact`; this checks the file path (`redact` over a mapped file, every core),
and the minimizer's --check mode that a session uses on new findings."""

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import HARREC_BIN, REPO

# Files in, files out: no proxy, so nothing for the poll(2) run (conftest.py).
pytestmark = pytest.mark.no_event_loop

SCRIPT = REPO / "scripts" / "minimize-redaction-finding"


def test_every_regression_seed_is_a_fixed_point_of_the_cli():
    seeds = sorted(str(p) for p in (REPO / "Fixtures" / "fuzz" / "redaction").glob("regression-*"))
    assert len(seeds) >= 20, seeds
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check", *seeds], capture_output=True, text=True,
                          env={"HARREC_BIN": HARREC_BIN, "PATH": "/usr/bin:/bin"}, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(seeds)
    assert all(line.endswith(": fixed point") for line in lines), proc.stdout


def test_a_finding_that_is_a_fixed_point_is_not_minimized(tmp_path):
    seed = REPO / "Fixtures" / "fuzz" / "redaction" / "regression-card-code-after-placeholder"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(seed), str(tmp_path / "out")], capture_output=True,
                          text=True, env={"HARREC_BIN": HARREC_BIN, "PATH": "/usr/bin:/bin"}, timeout=60)
    assert proc.returncode == 1
    assert "fixed point, nothing to minimize" in proc.stdout
    assert not (tmp_path / "out").exists()
