"""Buffers returned to callers, judged at the calls (analysis/returned.py): the closed world over
callers follows the `closed-world` setting, and a cached result that relied on the other files of
the tree is dropped when a file that may call the function appears."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from zeroopt.scan.config import load_config
from zeroopt.scan.runner import ScanReport, scan

ALLOC = """\
import torch


def _alloc(n):
    return torch.zeros(n)


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t
"""


def _scan(use_cache: bool = False) -> ScanReport:
    return scan(["."], load_config(["."]), jobs=1, use_cache=use_cache)


def _verdict(report: ScanReport) -> str:
    (finding,) = [f for f in report.findings if f.path == "pkg/alloc.py"]
    return str(finding.verdict)


def _old(root: Path) -> None:
    for p in root.rglob("*.py"):
        os.utime(p, (1_600_000_000, 1_600_000_000))


def test_a_new_module_that_imports_the_function_drops_the_cached_result(
    project: Callable[..., Path],
) -> None:
    root = Path.cwd()
    project("pkg/__init__.py", "")
    project("pkg/alloc.py", ALLOC)
    _old(root)
    first = _scan(use_cache=True)
    assert _verdict(first) == "safe"
    assert any(e.kind == "assumption" and "closed world over callers" in e.text
               for f in first.findings for e in f.evidence)  # fmt: skip
    project("pkg/reader.py", "from pkg.alloc import _alloc\n\n\ndef peek():\n"
            "    return _alloc(3).sum()\n")  # fmt: skip
    _old(root)
    again = _scan(use_cache=True)
    assert _verdict(again) == "unsafe"  # the new caller reads it first (returned_modules.py)
    (finding,) = [f for f in again.findings if f.path == "pkg/alloc.py"]
    assert "`peek` (pkg/reader.py:5)" in finding.message


def test_an_unrelated_module_with_the_same_name_keeps_it_safe(
    project: Callable[..., Path],
) -> None:
    project("pkg/__init__.py", "")
    project("pkg/alloc.py", ALLOC)
    project("pkg/other.py", "def _alloc(n):\n    return n\n\n\ndef g():\n    return _alloc(2)\n")
    assert _verdict(_scan()) == "safe"


def test_closed_world_off_leaves_it_unproven(project: Callable[..., Path]) -> None:
    project("pkg/__init__.py", "")
    project("pkg/alloc.py", ALLOC)
    (Path.cwd() / "pyproject.toml").write_text("[tool.zeroopt]\nclosed-world = false\n")
    assert _verdict(_scan()) == "unproven"
