"""Counterexamples to the dispatch of a private method that returns a buffer
(analysis/returned_methods.py): a subclass that binds the method's name only under a condition
(`if`, `try`) or deletes it keeps the base's def for its own `self._alloc(...)`; that call reads
the buffer unwritten and must count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_BASE = r"""
import torch


class Base:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b
"""

_SCENARIO = "def run():\n    return Base().run(2), Over().go()\n"


def _case(name: str, body: str, why: str) -> Case:
    source = (
        _BASE
        + f"\n\nclass Over(Base):\n{body}\n    def go(self):\n        return self._alloc(3) + 1\n"
    )
    return Case(name, why=why, source=source, scenario=_SCENARIO)


CASES = [
    _case(
        "override_bound_under_a_false_condition",
        "    if torch.__version__ == '':\n        def _alloc(self, n):\n            return torch.ones(n)\n",
        "the subclass's `_alloc` is defined under a condition that does not hold: `self._alloc(3)` "
        "in it runs Base's def and reads the zeros.",
    ),
    _case(
        "override_bound_in_a_try_that_fails",
        "    try:\n        import zeroopt_absent_module  # noqa: F401\n\n"
        "        def _alloc(self, n):\n            return torch.ones(n)\n"
        "    except ImportError:\n        pass\n",
        "the override is defined after an import that fails: Base's def runs at `self._alloc(3)`.",
    ),
    _case(
        "override_deleted_in_the_class_body",
        "    def _alloc(self, n):\n        return torch.ones(n)\n\n    del _alloc\n",
        "the override is deleted before the class is made: Base's def runs.",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
