"""Unified diffs: byte-exact round trips through real `git apply` and `patch -p1`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import unidiff

from zeroopt.patcher.diff import FileChange, file_diff, make_patch, quote_path, split_lines

GIT = shutil.which("git")
PATCH = shutil.which("patch")

CASES = {
    "plain.py": (
        b"import torch\nx = torch.zeros(3)\ny = 1\n",
        b"import torch\nx = torch.empty(3)\ny = 1\n",
    ),
    "crlf.py": (
        b"import torch\r\nx = torch.zeros(3)\r\n",
        b"import torch\r\nx = torch.empty(3)\r\n",
    ),
    "nonl.py": (b"import torch\nx = torch.zeros(3)", b"import torch\nx = torch.empty(3)"),
    "bom.py": (
        b"\xef\xbb\xbfimport torch\nx = torch.zeros(3)\n",
        b"\xef\xbb\xbfimport torch\nx = torch.empty(3)\n",
    ),
    "pkg/latin1.py": (
        b"# -*- coding: latin-1 -*-\ns = '\xe9'; x = torch.zeros(3)\n",
        b"# -*- coding: latin-1 -*-\ns = '\xe9'; x = torch.empty(3)\n",
    ),
    "pkg/with space.py": (b"a\nb = zeros(1)\n", b"a\nb = empty(1)\n"),
    "pkg/\xe9t\xe9.py": (b"a\nb = zeros(1)\n", b"a\nb = empty(1)\n"),
    "cr-in-line.py": (b"s = 'a\rb'\nx = zeros(1)\n", b"s = 'a\rb'\nx = empty(1)\n"),
    "long.py": (
        b"".join(b"line %d\n" % i for i in range(40)) + b"x = zeros(1)\n" + b"tail\n" * 20,
        b"".join(b"line %d\n" % i for i in range(40)) + b"x = empty(1)\n" + b"tail\n" * 20,
    ),
}


def _changes() -> list[FileChange]:
    return [FileChange(path, old, new) for path, (old, new) in CASES.items()]


def _checkout(root: Path) -> None:
    for path, (old, _new) in CASES.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(old)


def _assert_applied(root: Path) -> None:
    for path, (_old, new) in CASES.items():
        assert (root / path).read_bytes() == new, path


HEADER = [
    "zeroopt apply: 9 rewrite(s)",
    "diff --git a/evil b/evil",  # a comment that looks like a header must stay a comment
    "--- a/evil",
    "+++ b/evil",
    "@@ -1 +1 @@",
    "multi\nline\r\nevidence",
]


def test_split_lines_only_on_lf() -> None:
    assert split_lines(b"a\r\nb\rc\nd") == [b"a\r\n", b"b\rc\n", b"d"]
    assert split_lines(b"") == []


def test_no_newline_marker_and_structure() -> None:
    text = file_diff(FileChange("nonl.py", *CASES["nonl.py"]))
    assert text.endswith(b"+x = torch.empty(3)\n\\ No newline at end of file\n")
    assert text.count(b"\\ No newline at end of file") == 2
    assert text.startswith(b"diff --git a/nonl.py b/nonl.py\n--- a/nonl.py\n+++ b/nonl.py\n@@ ")


def test_unchanged_files_are_left_out() -> None:
    assert file_diff(FileChange("same.py", b"x\n", b"x\n")) == b""
    assert make_patch([FileChange("same.py", b"x\n", b"x\n")], ["header"]) == b""


def test_quote_path_like_git() -> None:
    assert quote_path("a/b.py") == b"a/b.py"
    assert quote_path("\xe9.py") == b'"\\303\\251.py"'
    assert quote_path('q"\\.py') == b'"q\\"\\\\.py"'


def test_patch_parses_as_a_unified_diff() -> None:
    patch = make_patch(_changes(), HEADER).decode("latin-1")
    parsed = unidiff.PatchSet(patch)
    assert len(parsed) == len(CASES)
    assert all(f.added == 1 and f.removed == 1 for f in parsed)


def _git(root: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(
        [GIT or "git", *args], cwd=root, input=stdin, capture_output=True, env=env, check=False
    )


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_round_trip_through_git_apply(tmp_path: Path) -> None:
    _checkout(tmp_path)
    assert _git(tmp_path, "init", "-q").returncode == 0
    patch = make_patch(_changes(), HEADER)
    (tmp_path / "fix.patch").write_bytes(patch)
    check = _git(tmp_path, "apply", "--check", "fix.patch")
    assert check.returncode == 0, check.stderr.decode()
    applied = _git(tmp_path, "apply", "fix.patch")
    assert applied.returncode == 0, applied.stderr.decode()
    _assert_applied(tmp_path)
    # and reversed, it gives back the original bytes
    reverse = _git(tmp_path, "apply", "-R", "fix.patch")
    assert reverse.returncode == 0, reverse.stderr.decode()
    for path, (old, _new) in CASES.items():
        assert (tmp_path / path).read_bytes() == old


@pytest.mark.skipif(PATCH is None, reason="patch is not installed")
def test_round_trip_through_patch_p1(tmp_path: Path) -> None:
    _checkout(tmp_path)
    patch = make_patch(_changes(), HEADER)
    done = subprocess.run(
        [PATCH or "patch", "-p1", "--batch", "--no-backup-if-mismatch"],
        cwd=tmp_path,
        input=patch,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout.decode("latin-1") + done.stderr.decode("latin-1")
    _assert_applied(tmp_path)
    assert not list(tmp_path.rglob("*.orig")) and not list(tmp_path.rglob("*.rej"))
