"""Wrong `safe` verdicts found by an adversarial pass over the mechanisms that produce `safe`,
each executed: poisoning the allocation changes the result.

- A helper of the tree that changes its argument's layout in place (`t.t_()`,
  `t.transpose_(0, 1)`) was summarised as neutral for the buffer (analysis/summaries.py
  UNTOUCHED: only metadata), so the caller went on reading its own indices as the allocation's
  layout: `x[:2] = 1` after `tr(x)` on `zeros(2, 3)` writes two of the three rows of the
  transposed buffer, and a loop `for i in range(n): x[i] = ...; tr(x)` writes rows and columns
  in turn. An in-place layout change is recorded (BufferOutcome.relayouts) and makes the
  summary UNKNOWN: the call is a hand-off.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

CASES = [
    Case(
        "helper_transposes_in_place_before_a_slice_write",
        why="`tr(out)` transposes `out` in place to 3 x 2: `out[:2]` then writes two of its "
        "three rows, though the allocation's first dimension is 2.",
        source=r"""
import torch


def tr(t):
    t.t_()


def f():
    out = torch.zeros(2, 3)  # <- site
    tr(out)
    out[:2] = 1.0
    return out.sum()
""",
        scenario="def run():\n    return f()\n",
    ),
    Case(
        "helper_transposes_in_place_in_a_row_loop",
        why="Each pass writes row i and then transposes the buffer in place: rows 0 and 2 and "
        "column 1 are written, elements (1, 0) and (1, 2) never are.",
        source=r"""
import torch


def tr(t):
    t.t_()


def f(n: int):
    out = torch.zeros(n, n)  # <- site
    for i in range(n):
        out[i] = torch.arange(n) * 1.0
        tr(out)
    return out.sum()
""",
        scenario="def run():\n    return f(3)\n",
    ),
    Case(
        "method_transposes_in_place_in_a_row_loop",
        why="The same through a private method: `self._tr(out)` swaps the buffer's dimensions "
        "in place between the row writes.",
        source=r"""
import torch


class M:
    def __init__(self, n: int):
        self.n = n

    def _tr(self, t):
        t.transpose_(0, 1)

    def f(self):
        n = self.n
        out = torch.zeros(n, n)  # <- site
        for i in range(n):
            out[i] = torch.arange(n) * 1.0
            self._tr(out)
        return out.sum()
""",
        scenario="def run():\n    return M(3).f()\n",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
