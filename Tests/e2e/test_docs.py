"""The docs cannot drift from the product (scripts/check-docs), and the release facts agree.

- docs/reference/cli.md holds `harrec help <command>` verbatim for every command;
- every ```swift block of README.md and docs/ type-checks against the package's modules, and a
  consumer's Package.swift names only products harrec has;
- the checker itself catches a broken snippet, a wrong product and drifted help text;
- README's Quick start is exactly two commands, and .ci/run runs the second;
- `harrec --version`, CHANGELOG.md's newest release and (in a git checkout) a tag agree.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import HARREC_BIN

# Files in, files out: no proxy, so nothing for the poll(2) run (conftest.py).
pytestmark = pytest.mark.no_event_loop

ROOT = Path(__file__).resolve().parents[2]


def load_check_docs():
    path = ROOT / "scripts" / "check-docs"
    loader = importlib.machinery.SourceFileLoader("check_docs", str(path))
    spec = importlib.util.spec_from_loader("check_docs", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def check_docs():
    os.environ.setdefault("HARREC_BIN", HARREC_BIN)
    return load_check_docs()


def test_cli_reference_is_harrec_help_verbatim(check_docs):
    assert check_docs.check_cli(update=False) == []


def test_cli_check_sees_drift_and_a_missing_command(check_docs, tmp_path, monkeypatch):
    text = (ROOT / "docs" / "reference" / "cli.md").read_text()
    # One changed option line, and the `mark` section gone.
    drifted = text.replace("--out <file.har>", "--output <file.har>", 1).replace("<!-- help: mark -->", "")
    assert drifted != text
    doc = tmp_path / "cli.md"
    doc.write_text(drifted)
    monkeypatch.setattr(check_docs, "CLI_DOC", str(doc))
    problems = check_docs.check_cli(update=False)
    assert any("differs" in p for p in problems), problems
    assert any("help: mark" in p for p in problems), problems
    # --update writes the binary's text back; the mark section stays missing.
    check_docs.check_cli(update=True)
    problems = check_docs.check_cli(update=False)
    assert [p for p in problems if "differs" in p] == []
    assert any("help: mark" in p for p in problems)


def test_every_swift_snippet_type_checks(check_docs):
    blocks = check_docs.swift_blocks()
    checked = [b for b in blocks if not b[3]]
    # The README alone has a manifest, an XCTest and a Swift Testing example.
    assert len([b for b in checked if b[0] == "README.md"]) >= 3
    assert len([b for b in blocks if b[3]]) <= max(2, len(blocks) // 10), "partial blocks must stay rare"
    assert check_docs.check_swift() == []


def test_swift_check_catches_a_broken_snippet(check_docs):
    modules = str(ROOT / ".build" / "debug" / "Modules")
    good = "import HARMocking\nlet center = WebSocketTriggerCenter()\n"
    # `post` is an instance method: the static call a newcomer might copy must fail.
    bad = "import HARMocking\nWebSocketTriggerCenter.post(\"x\")\n"
    assert check_docs.check_source(good, modules) == []
    errors = check_docs.check_source(bad, modules)
    assert errors and "post" in errors[0]


def test_manifest_check_knows_the_products(check_docs):
    products = check_docs.package_products()
    assert {"HARMocking", "HARMockingTesting", "harrec"} <= products
    manifest = """// swift-tools-version:5.9
import PackageDescription
let package = Package(name: "App", dependencies: [.package(url: "https://github.com/harrec/harrec.git", from: "0.6.0")],
    targets: [.testTarget(name: "AppTests", dependencies: [.product(name: "%s", package: "harrec")])])
"""
    assert check_docs.check_manifest(manifest % "HARMocking", products) == []
    assert check_docs.check_manifest(manifest % "HARMockingKit", products) != []
    assert check_docs.check_manifest("// swift-tools-version:5.9\nlet package = Package(\n", products) != []


def test_quick_start_is_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1]
    block = section.split("```", 2)[1]
    commands = [line.split("#")[0].strip() for line in block.splitlines()[1:] if line.split("#")[0].strip()]
    assert len(commands) == 2, commands
    assert commands[0].startswith("scripts/run ") and commands[1] == "scripts/test"
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"\bscripts/test\b", ci)
    for script in ("run", "test", "install"):
        assert os.access(ROOT / "scripts" / script, os.X_OK), script


def test_version_changelog_and_tag_agree():
    version = subprocess.run([HARREC_BIN, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    changelog = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, re.M)
    assert releases and releases[0] == version, (releases[:1], version)
    assert f"[{version}]:" in changelog, "the release heading needs its link"
    if shutil.which("git") and (ROOT / ".git").exists():
        tags = subprocess.run(["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True).stdout.split()
        if tags:
            # A checkout with tags (a clone has them) has one per release in the changelog.
            for release in releases[1:]:
                assert release in tags, f"CHANGELOG release {release} has no git tag"
            assert version in tags, f"harrec {version} has no git tag"


def test_the_macos_workflow_builds_and_runs_the_unit_tests():
    """The macOS workflow (run by the hosting service, not here) is valid YAML on a macOS runner
    and builds, runs HARMocking's tests and the unit tests, and checks the binary's poller refusal,
    whose wording it greps, against the source that prints it."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "macos.yml").read_text())
    (job,) = workflow["jobs"].values()
    assert job["runs-on"].startswith("macos-")
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    for command in ("swift build $SWIFT_FLAGS", "swift test $SWIFT_FLAGS --filter 'HARMockingTests", "swift test $SWIFT_FLAGS\n"):
        assert command in runs + "\n", command
    assert re.search(r"grep -q \"has no epoll\"", runs)
    listeners = (ROOT / "Sources" / "harrec" / "Listeners.swift").read_text()
    assert "has no epoll" in listeners
