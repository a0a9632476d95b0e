from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from zeroopt.scan.config import load_config
from zeroopt.scan.discovery import discover
from zeroopt.scan.runner import scan


def _displays(paths: list[str], **kw: object) -> list[str]:
    cfg = load_config(paths, **kw)  # type: ignore[arg-type]
    return [f.display for f in discover(paths, cfg).files]


def test_recurses_sorted_deduplicated(project: Callable[..., Path]) -> None:
    for rel in ("pkg/b.py", "pkg/a.py", "pkg/sub/c.pyi", "pkg/notes.txt", "pkg/d.pyx"):
        project(rel)
    assert _displays(["pkg", "pkg/a.py", "./pkg/sub/../a.py"]) == [
        "pkg/a.py",
        "pkg/b.py",
        "pkg/sub/c.pyi",
    ]


def test_default_and_configured_excludes(project: Callable[..., Path]) -> None:
    project("pyproject.toml", '[tool.zeroopt]\nextend-exclude = ["*_pb2.py", "pkg/skip/*.py"]\n')
    for rel in ("pkg/a.py", ".venv/lib/x.py", "build/y.py", "pkg/m_pb2.py", "pkg/skip/s.py"):
        project(rel)
    assert _displays(["."]) == ["pkg/a.py"]
    # Named explicitly: scanned anyway (as ruff does), unless --force-exclude.
    assert _displays(["pkg/m_pb2.py"]) == ["pkg/m_pb2.py"]
    assert _displays(["pkg/m_pb2.py"], force_exclude=True) == []
    # A directory named explicitly is walked even if its own name is excluded.
    assert _displays(["build"]) == ["build/y.py"]


def test_gitignore_without_git(project: Callable[..., Path]) -> None:
    project(".gitignore", "ignored/\n*_skip.py\n/top.py\n!keep_skip.py\n")
    for rel in (
        "a.py",
        "ignored/x.py",
        "b_skip.py",
        "keep_skip.py",
        "top.py",
        "sub/top.py",
        "sub/.gitignore",
        "sub/local.py",
    ):
        project(rel)
    project("sub/.gitignore", "local.py\n")
    assert _displays(["."]) == ["a.py", "keep_skip.py", "sub/top.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_gitignore_in_git_work_tree(project: Callable[..., Path]) -> None:
    root = Path.cwd()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    project(".gitignore", "out/\n")
    project("a.py")
    project("out/gen.py")
    project("deep/b.py")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("deep/\n")
    assert _displays(["."]) == ["a.py"]
    assert _displays(["out/gen.py"]) == ["out/gen.py"]  # explicit still wins
    assert _displays(["out"]) == ["out/gen.py"]  # so does an ignored directory named explicitly


def test_symlink_loops_do_not_hang(project: Callable[..., Path], fake_engine: list[str]) -> None:
    root = Path.cwd()
    project("pkg/a.py", "import torch\nx = torch.zeros(3)\n")
    os.symlink(root / "pkg", root / "pkg" / "again")  # a directory loop
    os.symlink("loop.py", root / "pkg" / "loop.py")  # a file loop
    report = scan(["pkg"], load_config(["pkg"]), jobs=1, use_cache=False)
    assert [f.path for f in report.findings] == ["pkg/a.py"]
    (error,) = report.errors
    assert error.path == "pkg/loop.py" and "symlink loop" in error.message


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads chmod 000 files and directories",
)
def test_unreadable_file_and_directory(
    project: Callable[..., Path], fake_engine: list[str]
) -> None:
    root = Path.cwd()
    project("ok.py", "import torch\nx = torch.zeros(3)\n")
    secret = project("secret.py", "import torch\nx = torch.zeros(3)\n")
    project("locked/inner.py", "x = 1\n")
    secret.chmod(0)
    (root / "locked").chmod(0)
    try:
        report = scan(["."], load_config(["."]), jobs=1, use_cache=False)
    finally:
        secret.chmod(0o644)
        (root / "locked").chmod(0o755)
    assert [f.path for f in report.findings] == ["ok.py"]
    messages = {e.path: e.message for e in report.errors}
    assert "permission denied" in messages["secret.py"]
    assert "locked" in messages and "cannot read directory" in messages["locked"]


def test_missing_path_is_an_error_entry(project: Callable[..., Path]) -> None:
    cfg = load_config(["nope.py"])
    found = discover(["nope.py"], cfg)
    assert found.files == [] and found.errors[0].path == "nope.py"


def test_display_paths_relative_to_cwd_or_as_given(
    project: Callable[..., Path], tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "o.py"
    outside.parent.mkdir()
    outside.write_text("")
    project("in.py")
    root = Path.cwd()
    cfg = load_config(["."])
    files = discover([str(root / "in.py"), "../elsewhere/o.py"], cfg).files
    assert sorted(f.display for f in files) == ["../elsewhere/o.py", "in.py"]


def test_read_errors_become_entries_even_as_root(
    project: Callable[..., Path], fake_engine: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same plumbing as the chmod test, by injection, so it also runs under root."""
    import zeroopt.scan.runner as runner

    root = Path.cwd()
    project("ok.py", "import torch\nx = torch.zeros(3)\n")
    project("secret.py", "import torch\nx = torch.zeros(3)\n")
    project("locked/inner.py", "x = 1\n")
    real_read, real_scandir = runner._read, os.scandir

    def deny_read(path: str) -> bytes:
        if path.endswith("secret.py"):
            raise PermissionError(13, "Permission denied", path)
        return real_read(path)

    def deny_scandir(path: str | os.PathLike[str] = ".") -> object:
        if os.fspath(path) == str(root / "locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(runner, "_read", deny_read)
    monkeypatch.setattr(os, "scandir", deny_scandir)
    report = scan(["."], load_config(["."]), jobs=1, use_cache=False)
    assert [f.path for f in report.findings] == ["ok.py"]
    messages = {e.path: e.message for e in report.errors}
    assert messages["secret.py"] == "cannot read: permission denied"
    assert "cannot read directory" in messages["locked"]
