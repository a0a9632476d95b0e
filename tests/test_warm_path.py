"""A warm `zeroopt scan` (every file a cache hit) prints what a cold one prints, and loads none of
what only an analysis, a rewrite or a help page needs: its time is start-up and bookkeeping."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Loaded only to analyse a file, rewrite one, or lay out help and usage errors.
NOT_ON_THE_WARM_PATH = (
    "zeroopt.scan.file_analysis",
    "zeroopt.rules",
    "zeroopt.analysis.dataflow",
    "zeroopt.patcher",
    "libcst",
    "typer.rich_utils",
    "rich.markdown",
)

SOURCE = """\
import torch


def f(n):
    x = torch.zeros(n)
    x.fill_(1.0)
    return x


def g(n, k):
    y = torch.zeros(n)
    y[:k] = 1
    return y.sum()
"""


def _scan(root: Path, *args: str) -> tuple[dict[str, object], set[str]]:
    """The JSON report (its timing dropped) and the modules the process imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "zeroopt", "scan", ".", "-f", "json", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "ZEROOPT_CACHE_DIR"},
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = json.loads(done.stdout)
    report["summary"].pop("seconds")
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return report, imported


@pytest.mark.slow
def test_warm_scan_equals_cold_and_loads_no_analysis(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .m import *\n")
    (tmp_path / "pkg" / "m.py").write_text(SOURCE)
    (tmp_path / "pkg" / "other.py").write_text("from .m import f\n")
    for p in tmp_path.rglob("*.py"):  # old enough for the stat shortcut of the cache
        os.utime(p, (1_600_000_000, 1_600_000_000))
    cold, _ = _scan(tmp_path, "--no-cache")
    filled, _ = _scan(tmp_path, "--cache-dir", "c")
    warm, imported = _scan(tmp_path, "--cache-dir", "c")
    assert cold["findings"] and cold == filled == warm
    loaded = sorted(m for m in imported if m.startswith(NOT_ON_THE_WARM_PATH))
    assert not loaded, loaded
