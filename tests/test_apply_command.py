"""`zeroopt apply` end to end through the CLI: modes, exit codes, patches, reports.

Uses the conftest fake engine (every `torch.zeros(` line is a safe ZO001 finding with a fix,
every `torch.empty(` an unsafe ZO002) so the command is tested apart from the dataflow analysis;
one test at the end runs the real engine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroopt.cli.app import app
from zeroopt.scan import file_analysis

SAFE = "import torch\n\ndef f():\n    x = torch.zeros(4)\n    x.fill_(1)\n    return x.sum()\n"
UNSAFE_EMPTY = "import torch\n\ndef g():\n    y = torch.empty(4)\n    return y.sum()\n"
FLAGS = ["--no-cache", "--jobs", "1"]  # the fake engine lives in this process only

Project = Callable[..., Path]


def run(*args: str) -> tuple[int, str, str]:
    code, out, err = run_bytes(*args)
    return code, out.decode(), err


def run_bytes(*args: str) -> tuple[int, bytes, str]:
    """stdout as bytes: the runner's text view turns CRLF into LF, a patch must keep it."""
    result = CliRunner().invoke(app, ["apply", *FLAGS, *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout_bytes, result.stderr


def test_in_place_rewrites_and_reports(project: Project, fake_engine: list[str]) -> None:
    f = project("pkg/m.py", SAFE)
    other = project("pkg/other.py", "x = 1  # nothing to do\n")
    code, out, err = run(".")
    assert code == 0, err
    assert f.read_text() == SAFE.replace("torch.zeros", "torch.empty")
    assert other.read_text() == "x = 1  # nothing to do\n"
    assert "pkg/m.py: rewrote 1 call(s)" in out
    assert "Rewrote 1 call(s) in 1 file(s)" in out


def test_exit_non_zero_on_fix_then_idempotent(project: Project, fake_engine: list[str]) -> None:
    f = project("m.py", SAFE)
    assert run("--exit-non-zero-on-fix", "m.py")[0] == 1
    once = f.read_bytes()
    # (the fake engine calls every torch.empty unsafe, so look at ZO001 only)
    code, out, _ = run("--exit-non-zero-on-fix", "--select", "ZO001", "m.py")
    assert code == 0 and f.read_bytes() == once
    assert "Rewrote 0 call(s) in 0 file(s)" in out


def test_check_changes_nothing_and_fails_while_work_remains(
    project: Project, fake_engine: list[str]
) -> None:
    f = project("m.py", SAFE)
    assert run("--check", "m.py")[0] == 1
    assert f.read_text() == SAFE
    assert run("m.py")[0] == 0
    assert "torch.empty(4)" in f.read_text()
    # (the fake engine calls every torch.empty unsafe, so look at ZO001 only)
    assert run("--check", "--select", "ZO001", "m.py")[0] == 0


def test_unfixable_actionable_findings_fail(project: Project, fake_engine: list[str]) -> None:
    project("m.py", SAFE + UNSAFE_EMPTY)
    code, _, err = run("m.py")
    assert code == 1  # the zeros was fixed, the unsafe torch.empty remains
    assert "remaining" in err and "ZO002" in err
    # (the fake engine calls every torch.empty unsafe, so look at ZO001 only)
    assert run("--check", "--select", "ZO001", "m.py")[0] == 0  # selection applies


def test_select_and_ignore(project: Project, fake_engine: list[str]) -> None:
    f = project("m.py", SAFE)
    assert run("--ignore", "ZO001", "m.py")[0] == 0
    assert f.read_text() == SAFE
    assert run("--select", "ZO002,ZO001", "m.py")[0] == 0
    assert "torch.empty(4)" in f.read_text()


def test_dry_run_writes_nothing(project: Project, fake_engine: list[str]) -> None:
    f = project("m.py", SAFE)
    code, out, _ = run("--dry-run", "m.py")
    assert code == 0 and f.read_text() == SAFE
    assert "m.py: would rewrite 1 call(s)" in out


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, check=False)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_from_a_subdirectory_applies_at_the_repository_root(
    project: Project, fake_engine: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    f = project("src/pkg/m.py", SAFE.replace("\n", "\r\n"))
    root: Path = project.root  # type: ignore[attr-defined]
    assert _git(root, "init", "-q").returncode == 0
    monkeypatch.chdir(root / "src")
    code, raw, err = run_bytes("--diff", "pkg")
    out = raw.decode()
    assert code == 1  # something would change
    assert f.read_bytes() == SAFE.replace("\n", "\r\n").encode()
    assert "diff --git a/src/pkg/m.py b/src/pkg/m.py" in out
    assert "would rewrite 1 call(s)" in err  # diagnostics stay off stdout
    assert b"\r\n" in raw
    (root / "fix.patch").write_bytes(raw)
    done = _git(root, "apply", "fix.patch")
    assert done.returncode == 0, done.stderr.decode()
    assert (
        f.read_bytes() == SAFE.replace("torch.zeros", "torch.empty").replace("\n", "\r\n").encode()
    )
    code, out, _ = run("--diff", "--select", "ZO001", "pkg")
    assert (code, out) == (0, "")  # nothing left to do: exit 0 and an empty diff


def test_patch_file_leaves_sources(project: Project, fake_engine: list[str]) -> None:
    f = project("m.py", SAFE)
    code, _, err = run("--patch", "out.patch", "m.py")
    assert code == 1 and f.read_text() == SAFE  # changes pending, as with --diff
    patch = (project.root / "out.patch").read_text()  # type: ignore[attr-defined]
    assert "-    x = torch.zeros(4)\n+    x = torch.empty(4)\n" in patch
    assert patch.startswith("# zeroopt apply: 1 rewrite(s) in 1 file(s)\n")
    assert "wrote 1 file diff(s) to out.patch" in err


def test_json_report(project: Project, fake_engine: list[str]) -> None:
    project("m.py", SAFE)
    code, out, _ = run("--format", "json", "--diff", "m.py")
    data = json.loads(out)
    assert code == 1
    assert data["version"] == 1 and data["mode"] == "diff"
    assert data["summary"] == {
        "files_changed": 1,
        "fixes": 1,
        "skipped": 0,
        "remaining": 0,
        "errors": 0,
    }
    (site,) = data["files"][0]["sites"]
    assert site == {
        "line": 4,
        "col": 9,
        "call": "torch.zeros",
        "verdict": "safe",
        "status": "applied",
        "detail": "torch.empty(4)",
    }
    assert data["diff"].startswith("# zeroopt apply")


def test_read_only_file_is_an_error(project: Project, fake_engine: list[str]) -> None:
    f = project("m.py", SAFE)
    f.chmod(0o444)
    try:
        code, _, err = run("m.py")
        assert code == 1  # a file that cannot be rewritten, as scan's unreadable files
        assert "read-only" in err and f.read_text() == SAFE
    finally:
        f.chmod(0o644)


def test_bad_verified_report_is_a_usage_error(project: Project, fake_engine: list[str]) -> None:
    project("m.py", SAFE)
    project("scan.json", json.dumps({"version": 1, "findings": []}))
    code, _, err = run("--verified", "scan.json", "m.py")
    assert code == 2 and "not a `zeroopt verify" in err


def test_with_the_real_engine(project: Project) -> None:
    """Once the dataflow analysis lands, the canonical safe buffer is rewritten for real."""
    probe = file_analysis.analyse_source(SAFE, "probe.py")
    if not probe.findings:
        pytest.skip("the engine is still a placeholder that reports no findings")
    f = project("m.py", SAFE)
    assert run("--exit-non-zero-on-fix", "m.py")[0] == 1
    assert f.read_text() == SAFE.replace("torch.zeros", "torch.empty")
    assert run("--check", "m.py")[0] == 0


def test_lowercase_rule_codes_are_accepted_as_by_scan(
    project: Project, fake_engine: list[str]
) -> None:
    f = project("m.py", SAFE + UNSAFE_EMPTY)
    code, _, err = run("--select", "zo001", "m.py")
    assert code == 0, err  # the unsafe empty (ZO002) is not selected
    assert "torch.empty(4)\n    x.fill_" in f.read_text()
    f.write_text(SAFE)
    code, _, err = run("--ignore", "zo001", "--check", "m.py")
    assert code == 0 and f.read_text() == SAFE, err


def test_file_errors_exit_1_as_in_scan(project: Project, fake_engine: list[str]) -> None:
    project("bad.py", "import torch\nx = torch.zeros(\nBOOM\n")
    code, _, err = run("bad.py")
    assert code == 1 and "bad.py" in err
    code, _, err = run("missing.py")
    assert code == 1 and "missing.py" in err


def test_warns_when_no_python_file_was_found(project: Project) -> None:
    (project.root / "empty").mkdir()  # type: ignore[attr-defined]
    code, _, err = run("empty")
    assert code == 0 and "warning: No Python files found" in err
