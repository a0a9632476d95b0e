"""Function summaries across the modules of the scanned tree (analysis/summaries.py), methods
under the closed-world assumption (analysis/methods.py), and the per-file cache that must follow
the modules a summary was computed from."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from zeroopt.scan.config import ConfigError, load_config
from zeroopt.scan.runner import ScanReport, scan

HELPERS = """\
import torch


def fill_all(p):
    p.fill_(1.0)


def peek(p):
    return p[0].item()
"""

USER = """\
import torch
from pkg.helpers import fill_all, peek
from pkg import helpers


def written(n):
    b = torch.zeros(n)
    fill_all(b)
    return b


def through_the_module(n):
    b = torch.zeros(n)
    helpers.fill_all(b)
    return b


def read_first(n):
    b = torch.zeros(n)
    x = peek(b)
    b.fill_(x)
    return b
"""


def _tree(project: Callable[..., Path], helpers: str = HELPERS) -> None:
    project("pkg/__init__.py", "")
    project("pkg/helpers.py", helpers)
    project("pkg/user.py", USER)


def _scan(use_cache: bool = False) -> ScanReport:
    return scan(["."], load_config(["."]), jobs=1, use_cache=use_cache)


def _verdicts(report: ScanReport, path: str = "pkg/user.py") -> dict[int, str]:
    return {f.line: str(f.verdict) for f in report.findings if f.path == path}


def _old(root: Path) -> None:
    for p in root.rglob("*.py"):
        os.utime(p, (1_600_000_000, 1_600_000_000))


def test_imported_functions_are_summarised(project: Callable[..., Path]) -> None:
    _tree(project)
    report = _scan()
    assert _verdicts(report) == {7: "safe", 13: "safe", 19: "unsafe"}
    unsafe = next(f for f in report.findings if f.line == 19)
    assert "read by `pkg.helpers.peek`" in unsafe.message
    safe = next(f for f in report.findings if f.line == 7)
    assert any("summary of `pkg.helpers.fill_all`" in e.text for e in safe.evidence)


def test_a_rebound_imported_name_is_not_summarised(project: Callable[..., Path]) -> None:
    """`fill_all` bound twice in its module: which one runs depends on the order: unknown."""
    _tree(project, HELPERS + "\n\nfill_all = print\n")
    assert _verdicts(_scan())[7] == "unproven"


def test_cache_follows_the_summarised_module(project: Callable[..., Path]) -> None:
    root = Path.cwd()
    _tree(project)
    _old(root)
    assert _verdicts(_scan(use_cache=True))[7] == "safe"
    warm = _scan(use_cache=True)
    assert warm.analysed == 0 and _verdicts(warm)[7] == "safe"
    # The helper now writes one element only: user.py is analysed again although unchanged.
    (root / "pkg/helpers.py").write_text(HELPERS.replace("p.fill_(1.0)", "p[:1].fill_(1.0)"))
    _old(root)
    changed = _scan(use_cache=True)
    assert changed.analysed >= 1 and _verdicts(changed)[7] == "unproven"


METHODS = """\
import torch


class Base:
    def _fill(self, p):
        p.fill_(1.0)

    def forward(self, n):
        b = torch.zeros(n)
        self._fill(b)
        return b
"""


def test_a_subclass_in_another_module_overrides_the_method(project: Callable[..., Path]) -> None:
    root = Path.cwd()
    project("pkg/__init__.py", "")
    project("pkg/base.py", METHODS)
    _old(root)
    assert _verdicts(_scan(use_cache=True), "pkg/base.py") == {9: "safe"}
    # A new file derives from Base through an import alias and overrides `_fill`: the cached
    # result of the unchanged base.py no longer holds.
    project(
        "pkg/sub.py",
        "from pkg.base import Base as B\n\n\nclass Sub(B):\n    def _fill(self, p):\n"
        "        p[:1].fill_(1.0)\n",
    )
    _old(root)
    assert _verdicts(_scan(use_cache=True), "pkg/base.py") == {9: "unproven"}


def test_closed_world_can_be_turned_off(project: Callable[..., Path]) -> None:
    project("pkg/__init__.py", "")
    project("pkg/base.py", METHODS)
    assert _verdicts(_scan(), "pkg/base.py") == {9: "safe"}
    (Path.cwd() / "pyproject.toml").write_text("[tool.zeroopt]\nclosed-world = false\n")
    assert _verdicts(_scan(), "pkg/base.py") == {9: "unproven"}


def test_closed_world_setting_is_validated(project: Callable[..., Path]) -> None:
    (Path.cwd() / "pyproject.toml").write_text('[tool.zeroopt]\nclosed-world = "no"\n')
    with pytest.raises(ConfigError, match="closed-world must be true or false"):
        load_config(["."])


RAISES_AFTER_WRITING = """\
import torch


def fill_then_fail(p):
    p.fill_(1.0)
    raise ValueError("after the write")


def caught(n):
    b = torch.zeros(n)
    try:
        fill_then_fail(b)
    except ValueError:
        pass
    return b.sum()
"""


def test_a_callee_raising_after_it_wrote_is_no_evidence_of_a_read(
    project: Callable[..., Path],
) -> None:
    """The handler's read sees what the callee wrote before raising: not `unsafe` (the zeros and
    a poisoned buffer give the same result, run below)."""
    project("pkg/__init__.py")
    project("pkg/user.py", RAISES_AFTER_WRITING)
    assert _verdicts(_scan()) == {10: "unproven"}
    import torch

    namespace: dict[str, object] = {}
    exec(compile(RAISES_AFTER_WRITING, "user.py", "exec"), namespace)
    zeros = namespace["caught"](4)  # type: ignore[operator]
    namespace["torch"] = type("T", (), {"zeros": staticmethod(lambda n: torch.full((n,), 9.0))})
    assert torch.equal(zeros, namespace["caught"](4))  # type: ignore[operator]


COPIES_METHODS = """\
from pkg.user import Own


class Other:
    def put(self, p):
        pass


for key, value in list(vars(Own).items()):
    if not key.startswith("__") and key != "put":
        setattr(Other, key, value)
"""

OWN_RUN = """\
import torch


class Own:
    def run(self, n):
        b = torch.zeros(n)
        self.put(b)
        return b

    def put(self, t):
        t.fill_(7.0)
"""


def test_a_file_copying_methods_out_of_the_class_keeps_self_unknown(
    project: Callable[..., Path],
) -> None:
    """`vars(Own)` in another file copies `run` onto a class whose `put` writes nothing: that
    file never spells `run`, yet `self.put` in `Own.run` may be `Other.put`."""
    project("pkg/__init__.py")
    project("pkg/user.py", OWN_RUN)
    assert _verdicts(_scan()) == {6: "safe"}
    project("pkg/copier.py", COPIES_METHODS)
    assert _verdicts(_scan()) == {6: "unproven"}
