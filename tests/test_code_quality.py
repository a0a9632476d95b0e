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
SUBPACKAGES = (
    "scan",
    "analysis",
    "rules",
    "patcher",
    "runtime_checks",
    "report",
    "cli",
    "fixtures",
)


def _tool(module: str) -> None:
    pytest.importorskip(module, reason=f"{module} is a test dependency ('.[test]')")


def test_ruff_check_is_clean() -> None:
    _tool("ruff")
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
    assert ruff is not None
    done = subprocess.run(
        [ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
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


MAX_LINES = 800


def _tracked_python_files() -> list[str]:
    """Every .py file git tracks in the checkout: the package, tests, bench and fixtures alike."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("the size check reads the tracked files from git")
    done = subprocess.run([git, "ls-files", "-z", "*.py"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [name for name in done.stdout.split("\0") if name and (ROOT / name).is_file()]


def _too_long(root: Path, names: list[str]) -> list[str]:
    # Bytes, not text: the hostile-input corpus holds files that are not UTF-8 on purpose.
    sizes = ((name, len((root / name).read_bytes().splitlines())) for name in names)
    return [f"{name}: {n} lines" for name, n in sizes if n > MAX_LINES]


def test_no_module_is_over_800_lines() -> None:
    """One idea per module: a file past 800 lines holds more than one and is split at its seam."""
    names = _tracked_python_files()
    assert "tests/test_code_quality.py" in names
    over = _too_long(ROOT, names)
    assert not over, f"over {MAX_LINES} lines:\n" + "\n".join(over)


def test_the_size_check_names_a_long_file(tmp_path: Path) -> None:
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    assert _too_long(tmp_path, ["long.py", "short.py"]) == [f"long.py: {MAX_LINES + 1} lines"]
