"""The `callers-closed` setting (analysis/returned.py): off by default, read from
`[tool.zeroopt]`, validated, part of the cache key, and stated in the evidence of every verdict
that depends on it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from zeroopt.scan.config import ConfigError, load_config
from zeroopt.scan.runner import ScanReport, scan

MAKER = """\
import torch


def make(n):
    buf = torch.zeros(n)
    return buf, n


def use(n):
    b, m = make(n)
    b.fill_(1.0)
    return b * m
"""


def _scan(use_cache: bool = False) -> ScanReport:
    return scan(["."], load_config(["."]), jobs=1, use_cache=use_cache)


def test_public_callers_are_open_by_default(project: Callable[..., Path]) -> None:
    project("pkg/__init__.py", "")
    project("pkg/maker.py", MAKER)
    (finding,) = [f for f in _scan().findings if f.path == "pkg/maker.py"]
    assert str(finding.verdict) == "unproven"
    assert "`make` is a public function: callers outside the tree may read it" in finding.message


def test_callers_closed_judges_public_functions_and_says_so(project: Callable[..., Path]) -> None:
    project("pkg/__init__.py", "")
    project("pkg/maker.py", MAKER)
    assert [str(f.verdict) for f in _scan(use_cache=True).findings] == ["unproven"]
    (Path.cwd() / "pyproject.toml").write_text("[tool.zeroopt]\ncallers-closed = true\n")
    (finding,) = _scan(use_cache=True).findings  # the cached result is not reused
    assert str(finding.verdict) == "safe"
    assert "as element 0 of a tuple" in finding.message
    notes = [e.text for e in finding.evidence if e.kind == "assumption"]
    assert notes and "callers-closed = true" in notes[0]
    assert "no code outside the scanned tree calls it" in notes[0]


def test_an_assumption_up_the_chain_is_in_the_evidence(project: Callable[..., Path]) -> None:
    """`_mk` is private, but its display is returned again by the public `up`: the verdict
    relies on `up`'s callers being closed as well, and says so."""
    project(
        "chain.py",
        "import torch\n\n\ndef _mk(n):\n    buf = torch.zeros(n)\n    return buf, n\n\n\n"
        "def up(n):\n    return _mk(n)\n\n\n"
        "def use(n):\n    b, m = up(n)\n    b.fill_(1.0)\n    return b * m\n",
    )
    (Path.cwd() / "pyproject.toml").write_text("[tool.zeroopt]\ncallers-closed = true\n")
    (finding,) = _scan().findings
    assert str(finding.verdict) == "safe"
    (note,) = [e.text for e in finding.evidence if e.kind == "assumption"]
    assert "`_mk` is private to its module" in note
    assert "`up` is public, but no code outside the scanned tree calls it" in note


def test_callers_closed_setting_is_validated(project: Callable[..., Path]) -> None:
    (Path.cwd() / "pyproject.toml").write_text('[tool.zeroopt]\ncallers-closed = "yes"\n')
    with pytest.raises(ConfigError, match="callers-closed must be true or false"):
        load_config(["."])
