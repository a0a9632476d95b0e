"""False `unsafe` verdicts of the index-write pattern (analysis/dataflow/gaps.py): an index made
by a helper of the tree, which may return every position (`arange(n)`), is no index that "need
not pick every position" by construction. Each case writes every element at run time (poison
changes nothing) and must not be `unsafe`; the guard would fail a correct program on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, poisoned_runs, site_verdicts
from tests.regressions.test_partial_coverage import NearMiss

CASES: list[Case] = []  # no wrong `safe` here: false `unsafe` verdicts, near misses below

FULL_INDEX_FROM_HELPERS = [
    NearMiss(
        "index_from_a_module_helper_returning_arange",
        why="`_every(n)` returns `torch.arange(n)`: `m[idx] = 1.0` writes every element.",
        source=r"""
import torch


def _every(n):
    return torch.arange(n)


def f(n):
    m = torch.zeros(n)  # <- site
    idx = _every(n)
    m[idx] = 1.0
    return m.sum()
""",
        scenario=r"""
def run():
    return f(5)
""",
        covered=True,
    ),
    NearMiss(
        "scatter_index_from_a_method_returning_a_permutation",
        why="`self._order(n)` returns `torch.arange(n).flip(0)`, a permutation: the scatter "
        "writes every element.",
        source=r"""
import torch


class Mixer:
    def _order(self, n):
        return torch.arange(n).flip(0)

    def mix(self, src):
        n = src.shape[0]
        m = torch.zeros(n)  # <- site
        m.scatter_(0, self._order(n), src)
        return m.sum()
""",
        scenario=r"""
def run():
    return Mixer().mix(torch.ones(4))
""",
        covered=True,
    ),
]


@pytest.mark.parametrize("miss", [pytest.param(m, id=m.name) for m in FULL_INDEX_FROM_HELPERS])
def test_index_from_a_helper_is_not_unsafe(miss: NearMiss, tmp_path: Path) -> None:
    case = miss.case()
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts, f"{case.name}: no finding at line {line}"
        assert Verdict.UNSAFE not in verdicts, (line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (base, differences)
