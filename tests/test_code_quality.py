"""The code stays ruff- and mypy-clean: the checks run here so that a red CI says so.

mypy needs the package under its real name: the repository root is the package `zeroopt`, so the
check links the root as `zeroopt` into a temporary directory on MYPYPATH and checks every
installed subpackage by module name (checking files by path would name them after the checkout's
folder and resolve none of the `zeroopt.*` imports).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = ("scan", "analysis", "rules", "patcher", "runtime_checks", "report", "cli", "fixtures")


def _tool(module: str) -> None:
    pytest.importorskip(module, reason=f"{module} is a test dependency ('.[test]')")


def test_ruff_check_is_clean() -> None:
    _tool("ruff")
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
    assert ruff is not None
    done = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_is_clean(tmp_path: Path) -> None:
    _tool("mypy")
    (tmp_path / "zeroopt").symlink_to(ROOT, target_is_directory=True)
    args = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    args += ["--cache-dir", str(tmp_path / "cache")]
    for name in SUBPACKAGES:
        args += ["-p", f"zeroopt.{name}"]
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
