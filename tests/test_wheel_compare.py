"""bench/wheel_compare.py: what it reads out of two wheel scans (the sites whose verdict moved)
and out of one (counts, non-trivial `safe`, first obstacles outside tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "wheel_compare.py"


def _finding(
    path: str, line: int, verdict: str, message: str, evidence: Any = ()
) -> dict[str, Any]:
    return {
        "path": path, "line": line, "col": 4, "rule": "ZO001", "verdict": verdict,
        "message": message, "evidence": list(evidence),
    }  # fmt: skip


def _run(tmp_path: Path, *scans: dict[str, Any]) -> str:
    paths = []
    for i, scan in enumerate(scans):
        p = tmp_path / f"scan{i}.json"
        p.write_text(json.dumps(scan))
        paths.append(str(p))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *paths], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_lists_only_the_sites_whose_verdict_moved(tmp_path: Path) -> None:
    before = {"findings": [
        _finding("a/x.py", 3, "unproven", "cannot prove `b` is written before it is read (line 4): passed to `f`"),
        _finding("a/y.py", 9, "safe", "`c` is written in full"),
        _finding("a/z.py", 1, "unsafe", "read"),
    ]}  # fmt: skip
    after = {"findings": [
        _finding("a/x.py", 3, "unsafe", "`b` may be read before it is written"),
        _finding("a/y.py", 9, "safe", "`c` is written in full (other words)"),
    ]}  # fmt: skip
    out = _run(tmp_path, before, after).splitlines()
    assert out[0].startswith("unproven -> unsafe   a/x.py:3 ZO001")
    assert out[1].startswith("  unsafe -> -        a/z.py:1 ZO001")
    assert out[2] == "unproven -> unsafe: 1, unsafe -> -: 1"
    assert len(out) == 3  # a/y.py kept its verdict; its message changed only


def test_counts_and_groups_first_obstacles_outside_tests(tmp_path: Path) -> None:
    scan = {"findings": [
        _finding("p/a.py", 1, "safe", "ok", ["`x` has no elements"]),
        _finding("p/a.py", 2, "safe", "ok"),
        _finding("p/b.py", 5, "unproven", "cannot prove `u` is written before it is read (line 6): passed to `g`"),
        _finding("p/b.py", 8, "unproven", "cannot prove `v` is written before it is read (line 12): passed to `h`"),
        _finding("p/tests/test_b.py", 1, "unproven", "cannot prove `w` is written before it is read (line 2): passed to `k`"),
    ]}  # fmt: skip
    out = _run(tmp_path, scan)
    assert "ZO001 safe           2" in out
    assert "ZO001 safe without a zero-element buffer: 1" in out
    assert "unproven outside tests: 2; first obstacles:" in out
    assert "     2 passed to `X`" in out
