"""Tree-wide facts (scan/tree_facts.py): built once per scan in the parent and read by the forked
workers, with the same verdicts as a scan in one process, and built again when any file of the
tree changes, also in a warm scan that analyses only the files whose cached results relied on
the whole tree."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from zeroopt.analysis import methods
from zeroopt.scan.config import load_config
from zeroopt.scan.runner import MP_CONTEXT, ScanReport, scan

pytestmark = pytest.mark.skipif(MP_CONTEXT is None, reason="workers are forked on Linux only")

# `self._fill(b)` is resolved under the closed world: safe while nothing in the tree stores an
# attribute `_fill`, binds one under a computed name or overrides it.
MODULE = """\
import torch


class Base{i}:
    def _fill(self, p):
        p.fill_(1.0)

    def forward(self, n):
        b = torch.zeros(n)
        self._fill(b)
        return b
"""
FILES = 8  # enough that the scan uses a pool of two workers, each with several files
# Binds an attribute by a constant name: `bound_names` parses it, and it changes no verdict.
PATCH = "def patch(obj, v):\n    setattr(obj, 'other', v)\n"


def _tree(project: Callable[..., Path]) -> None:
    project("pkg/__init__.py", "")
    for i in range(FILES):
        project(f"pkg/m{i}.py", MODULE.format(i=i))
    project("pkg/patch.py", PATCH)


def _scan(jobs: int, use_cache: bool = False) -> ScanReport:
    return scan(["."], load_config(["."]), jobs=jobs, use_cache=use_cache)


def _verdicts(report: ScanReport) -> dict[str, str]:
    return {f.path: str(f.verdict) for f in report.findings}


def _old(root: Path) -> None:
    for p in root.rglob("*.py"):
        os.utime(p, (1_600_000_000, 1_600_000_000))


def test_workers_read_the_facts_built_once(
    project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`bound_names` parses pkg/patch.py once per scan, whichever process asks and however many
    workers judge `self._fill`; the verdicts are those of a scan in one process."""
    _tree(project)
    log = tmp_path / "bound_names.log"
    inner = methods.bound_names

    def logged(tree: object) -> dict[str, int]:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        return inner(tree)  # type: ignore[arg-type]

    monkeypatch.setattr(methods, "bound_names", logged)
    pooled = _scan(jobs=2)
    assert pooled.analysed == FILES
    assert _verdicts(pooled) == {f"pkg/m{i}.py": "safe" for i in range(FILES)}
    assert len(log.read_text().split()) == 1
    log.unlink()
    assert _verdicts(_scan(jobs=1)) == _verdicts(pooled)
    assert len(log.read_text().split()) == 1  # one process: built there, lazily


def test_an_edit_anywhere_rebuilds_the_facts_in_a_warm_scan(project: Callable[..., Path]) -> None:
    root = Path.cwd()
    _tree(project)
    _old(root)
    cold = _scan(jobs=2, use_cache=True)
    assert set(_verdicts(cold).values()) == {"safe"}
    warm = _scan(jobs=2, use_cache=True)
    assert warm.analysed == 0 and _verdicts(warm) == _verdicts(cold)
    # A file without allocations (never analysed itself) now stores an attribute `_fill`: every
    # cached result that relied on the tree is analysed again, against the facts of the new
    # tree, not those built for the old one.
    (root / "pkg/patch.py").write_text(PATCH + "\n\ndef swap(obj):\n    obj._fill = print\n")
    _old(root)
    edited = _scan(jobs=2, use_cache=True)
    assert edited.analysed == FILES
    assert _verdicts(edited) == {f"pkg/m{i}.py": "unproven" for i in range(FILES)}
    assert all(
        "pkg/patch.py assigns an attribute `_fill`" in f.message
        or any("pkg/patch.py assigns an attribute `_fill`" in e.text for e in f.evidence)
        for f in edited.findings
    )
    assert _scan(jobs=2, use_cache=True).analysed == 0
