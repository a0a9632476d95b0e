"""`zeroopt scan --since REF`: findings on changed lines only, every empty there judged.

Each test builds a real git repository, commits a base, changes it, and runs the real command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zeroopt.scan.changed_lines import hunk_lines

pytestmark = [
    pytest.mark.slow,  # the command line, run in a subprocess, in each test
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

# One function per verdict, each a zeros that the change below turns into an empty.
BASE = """\
import torch


def written(x):
    out = torch.zeros(4)
    out.copy_(x)
    return out.sum()


def accumulated(x):
    acc = torch.zeros(4)
    acc += x
    return acc


def opaque(x, kernel):
    buf = torch.zeros(4)
    kernel(buf, x)
    return buf.sum()


def old_unsafe(x):
    old = torch.empty(4)
    return old.max()
"""
CHANGED = BASE.replace("torch.zeros(", "torch.empty(")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        NO_COLOR="1",
    )
    return env


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def zeroopt(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zeroopt", "scan", *args, "--no-cache"],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def scan_json(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = zeroopt(repo, *args, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / "mod.py").write_text(BASE)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_every_changed_empty_is_judged_and_undecided_ones_fail(repo: Path) -> None:
    (repo / "mod.py").write_text(CHANGED)
    code, data = scan_json(repo, ".", "--since", "HEAD")
    got = {(f["line"], f["rule"], f["verdict"]) for f in data["findings"]}
    assert got == {
        (line_of(CHANGED, "out = torch.empty"), "ZO002", "safe"),
        (line_of(CHANGED, "acc = torch.empty"), "ZO002", "unsafe"),
        (line_of(CHANGED, "buf = torch.empty"), "ZO002", "unproven"),
    }
    assert code == 1
    # The unchanged unsafe empty is not on a changed line; without --since it is reported.
    _, whole = scan_json(repo, ".")
    assert line_of(CHANGED, "old = torch.empty") in {f["line"] for f in whole["findings"]}
    # Without --since ZO002 reports only what it shows read: the safe and unproven empties
    # stay silent there.
    assert {f["verdict"] for f in whole["findings"]} == {"unsafe"}


def test_undecided_sites_say_how_to_decide_them(repo: Path) -> None:
    (repo / "mod.py").write_text(CHANGED)
    _, data = scan_json(repo, "mod.py", "--since", "HEAD")
    (unproven,) = [f for f in data["findings"] if f["verdict"] == "unproven"]
    (decide,) = [e for e in unproven["evidence"] if e["kind"] == "decide"]
    assert "zeroopt scan mod.py --since HEAD --format json > zeroopt-since.json" in decide["text"]
    assert "zeroopt verify SCENARIO --sites zeroopt-since.json" in decide["text"]
    assert f"mod.py:{unproven['line']}:{unproven['col']}" in decide["text"]
    # Handed to an opaque callable: the contract that would decide it is named too.
    assert "[tool.zeroopt.contracts]" in decide["text"] and "`kernel`" in decide["text"]
    assert "to decide:" in unproven["message"]
    for f in data["findings"]:
        if f["verdict"] != "unproven":
            assert all(e["kind"] != "decide" for e in f["evidence"])
    unsafe = next(f for f in data["findings"] if f["verdict"] == "unsafe")
    assert any(e["kind"] == "read" and "acc += x" in e["text"] for e in unsafe["evidence"])


def test_only_safe_rewrites_pass(repo: Path) -> None:
    (repo / "mod.py").write_text(BASE.replace("out = torch.zeros(", "out = torch.empty("))
    code, data = scan_json(repo, ".", "--since", "HEAD")
    assert [(f["rule"], f["verdict"]) for f in data["findings"]] == [("ZO002", "safe")]
    assert code == 0


def test_staged_untracked_and_unchanged_files(repo: Path) -> None:
    (repo / "mod.py").write_text(BASE.replace("acc = torch.zeros(", "acc = torch.empty("))
    git(repo, "add", "mod.py")  # staged, not committed: still a change against HEAD
    (repo / "new.py").write_text("import torch\n\ndef f():\n    return torch.empty(3).sum()\n")
    (repo / "ignored.py").write_text("import torch\n\ndef f():\n    return torch.empty(3)\n")
    (repo / ".gitignore").write_text("ignored.py\n")
    code, data = scan_json(repo, ".", "--since", "HEAD")
    got = sorted((f["path"], f["line"], f["verdict"]) for f in data["findings"])
    assert got == [
        ("mod.py", line_of(BASE, "acc = torch.zeros"), "unsafe"),
        ("new.py", 4, "unsafe"),
    ]
    assert code == 1
    # Against the commit itself after committing, nothing changed: nothing to report.
    (repo / "new.py").unlink()
    git(repo, "commit", "-q", "-am", "change")
    code, data = scan_json(repo, ".", "--since", "HEAD")
    assert data["findings"] == [] and code == 0
    code, data = scan_json(repo, ".", "--since", "HEAD~1")
    assert [f["verdict"] for f in data["findings"]] == ["unsafe"] and code == 1


def test_a_repository_without_commits_is_all_new(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "mod.py").write_text(CHANGED)
    git(tmp_path, "add", "mod.py")
    code, data = scan_json(tmp_path, ".", "--since", "HEAD")
    assert len(data["findings"]) == 4 and code == 1


def test_every_format_carries_the_verdicts(repo: Path) -> None:
    (repo / "mod.py").write_text(CHANGED)
    sarif = zeroopt(repo, ".", "--since", "HEAD", "--format", "sarif")
    assert sarif.returncode == 1
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["ZO002"] * 3
    lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results}
    assert lines == {line_of(CHANGED, w) for w in ("out = ", "acc = ", "buf = ")}
    github = zeroopt(repo, ".", "--since", "HEAD", "--format", "github")
    assert github.returncode == 1
    annotated = [line for line in github.stdout.splitlines() if line.startswith("::")]
    assert len(annotated) == 3 and sum("zeroopt verify" in a for a in annotated) == 1
    text = zeroopt(repo, ".", "--since", "HEAD", "--show-evidence")
    assert text.returncode == 1 and "unproven" in text.stdout


def test_usage_errors(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    done = zeroopt(repo, ".", "--since", "no-such-ref")
    assert done.returncode == 2 and "no-such-ref" in done.stderr
    outside = tmp_path_factory.mktemp("not-a-repo")
    (outside / "f.py").write_text(CHANGED)
    done = zeroopt(outside, ".", "--since", "HEAD")
    assert done.returncode == 2 and "git repository" in done.stderr


def test_hunk_lines() -> None:
    diff = b"@@ -3 +3 @@\n-a\n+b\n@@ -10,0 +11,2 @@\n+c\n+d\n@@ -20,2 +22,0 @@\n-e\n-f\n"
    assert hunk_lines(diff) == frozenset({3, 11, 12})


def test_empty_strided_is_judged(repo: Path) -> None:
    (repo / "strided.py").write_text(
        "import torch\n\n"
        "def f(x):\n"
        "    a = torch.empty_strided((2, 3), (1, 2))\n"
        "    a.copy_(x)\n"
        "    b = torch.empty_strided((2, 3), (1, 2))\n"
        "    return a + b.sum()\n"
    )
    code, data = scan_json(repo, "strided.py", "--since", "HEAD")
    got = [(f["line"], f["call"], f["verdict"]) for f in data["findings"]]
    assert got == [(4, "torch.empty_strided", "safe"), (6, "torch.empty_strided", "unsafe")]
    assert code == 1


def test_a_verified_site_is_recorded_with_a_suppression(repo: Path) -> None:
    text = BASE.replace("buf = torch.zeros(4)", "buf = torch.empty(4)  # zeroopt: ignore[ZO002]")
    (repo / "mod.py").write_text(text)
    code, data = scan_json(repo, ".", "--since", "HEAD")
    assert data["findings"] == [] and code == 0
