"""Writes whose literal slice leaves a constant part alone (analysis/dataflow/const_gaps.py):
`x[:-1] = v` never writes the last position, `m[:, 0] = 1` never writes column 1, `x[2:7] = v`
never writes position 7. A certain read of such a position, where the allocation's size shows it
exists for every value of its names (`n + 1` has a last position; `n` alone may be 0), is
`unsafe`.

`CASES` must be `unsafe`, and executed with zeros and with poison they must differ.
`NEAR_MISSES` must NOT be `unsafe`: a size that may be 0, a later write that covers the part, a
write whose union is unknown, a read of only the written part, an `out=` view that PyTorch may
grow. Those whose `covered` is true read no unwritten position at run time, so poisoning them
changes nothing either.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_execution,
    check_verdict,
    params,
    poisoned_runs,
    site_verdicts,
)

UNSAFE = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "last_position_never_written_then_summed",
        why="`buf[:-1] = x` never writes the last position of `zeros(n + 1)`; `sum` reads it.",
        source=r"""
import torch


def f(x, n: int):
    buf = torch.zeros(n + 1)  # <- site
    buf[:-1] = x
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 3)
""",
        expect=UNSAFE,
    ),
    Case(
        "last_position_read_by_index",
        why="`ends[:-1] = lens` leaves the last slot; `ends[-1].item()` reads it.",
        source=r"""
import torch


def f(lens, bs: int):
    ends = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    ends[:-1] = torch.cumsum(lens, 0)
    return torch.tensor(ends[-1].item())
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2]), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "other_column_of_an_index_write",
        why=(
            "`m[:, 0] = 1` writes column 0 only; `k + 2` columns always include column 1, "
            "and `m.sum()` reads it."
        ),
        source=r"""
import torch


def f(n: int, k: int):
    m = torch.zeros(n + 1, k + 2)  # <- site
    m[:, 0] = 1
    return m.sum()
""",
        scenario=r"""
def run():
    return f(2, 1)
""",
        expect=UNSAFE,
    ),
    Case(
        "tail_beyond_a_literal_slice",
        why=(
            "`buf[2:7] = x` on `zeros(n + 8)` never writes position 7 nor the last one; "
            "`buf[-1]` reads the last (at least index 7)."
        ),
        source=r"""
import torch


def f(x, n: int):
    buf = torch.zeros(n + 8)  # <- site
    buf[2:7] = x
    return buf[-1] * 2
""",
        scenario=r"""
def run():
    return f(torch.ones(5), 1)
""",
        expect=UNSAFE,
    ),
    Case(
        "both_branches_leave_the_last_position",
        why="Each branch writes all but the last position; the view `buf[1:]` holds it.",
        source=r"""
import torch


def f(x, n: int, flag: bool):
    buf = torch.zeros(n + 2)  # <- site
    if flag:
        buf[:-1] = x
    else:
        buf[1:-1] = x[1:]
    return buf[1:].sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 2, True), f(torch.ones(3), 2, False)
""",
        expect=UNSAFE,
    ),
    Case(
        "offsets_written_through_out_view",
        why=(
            "`torch.cumsum(..., out=cu[2:])` writes from row 2 on (a resized `out` keeps its "
            "offset); `cu[1]` reads row 1."
        ),
        source=r"""
import torch


def f(lens, bs: int):
    cu = torch.zeros(bs + 2, dtype=torch.float32)  # <- site
    torch.cumsum(lens, 0, out=cu[2:])
    return cu[1] + 1
""",
        scenario=r"""
def run():
    return f(torch.tensor([1.0, 2.0]), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "empty_last_position_read_by_the_guard",
        why=(
            "The guard (ZO002) proves the read too: `torch.empty(n + 1)` with `buf[:-1]` "
            "written reads its last position uninitialised in `buf.sum()`."
        ),
        source=r"""
import torch


def f(x, n: int):
    buf = torch.empty(n + 1)  # <- site
    buf[:-1] = x
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 3)
""",
        expect=UNSAFE,
    ),
]


@dataclass(frozen=True)
class NearMiss:
    name: str
    source: str
    why: str
    scenario: str = ""
    covered: bool = False  # no unwritten position is read at run time: poison changes nothing

    def case(self) -> Case:
        return Case(self.name, self.source, self.scenario, self.why)


NEAR_MISSES = [
    NearMiss(
        "size_may_be_zero",
        why="`zeros(n)` may have no position at all (n == 0): nothing is read.",
        source=r"""
import torch


def f(x, n: int):
    buf = torch.zeros(n)  # <- site
    buf[:-1] = x
    return buf[-1:].sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(0), 0)
""",
        covered=True,
    ),
    NearMiss(
        "other_column_may_not_exist",
        why="`k + 1` columns: column 1 exists only when k >= 1.",
        source=r"""
import torch


def f(n: int, k: int):
    m = torch.zeros(n + 1, k + 1)  # <- site
    m[:, 0] = 1
    return m.sum()
""",
        scenario=r"""
def run():
    return f(2, 0)
""",
        covered=True,
    ),
    NearMiss(
        "later_full_write",
        why="`buf.fill_(1)` writes every position before the read.",
        source=r"""
import torch


def f(x, n: int):
    buf = torch.zeros(n + 1)  # <- site
    buf[:-1] = x
    buf.fill_(1)
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 3)
""",
        covered=True,
    ),
    NearMiss(
        "loop_write_reaches_the_part",
        why="The loop writes `buf[i]` for every i, the last position included.",
        source=r"""
import torch


def f(x, n: int):
    buf = torch.zeros(n + 1)  # <- site
    buf[:-1] = x
    for i in range(n + 1):
        buf[i] = i
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 3)
""",
        covered=True,
    ),
    NearMiss(
        "read_of_the_written_part_only",
        why=(
            "`buf[0]` is written by `buf[:-1] = x` whenever n >= 1; at n == 0 it is the last "
            "position, so only `unproven`."
        ),
        source=r"""
import torch


def f(x, n: int):
    buf = torch.zeros(n + 1)  # <- site
    buf[:-1] = x
    return buf[0] * 2
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 3)
""",
        covered=True,
    ),
    NearMiss(
        "out_view_may_grow",
        why=(
            "PyTorch resizes an `out=` view to the result: `out=buf[:-1]` with n + 1 results "
            "writes the last position too."
        ),
        source=r"""
import warnings

import torch


def f(x, n: int):
    buf = torch.zeros(n + 1)  # <- site
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.cumsum(x, 0, out=buf[:-1])
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4), 3)
""",
        covered=True,
    ),
    NearMiss(
        "read_modify_write_whose_result_is_overwritten",
        why=(
            "`clamp_` reads the last position, but what it computes lands in the buffer itself, "
            "and `buf[1:] = 2.5` overwrites it: the unwritten value is never observed."
        ),
        source=r"""
import torch


def f(n: int):
    buf = torch.zeros(n + 2)  # <- site
    buf[:-1] = -1.5
    buf.clamp_(min=0)
    buf[1:] = 2.5
    return buf
""",
        scenario=r"""
def run():
    return f(3)
""",
        covered=True,
    ),
    NearMiss(
        "out_view_of_one_element_may_grow",
        why=(
            "`out=buf[0]` is resized to the two results from its storage offset: `buf[1]` is "
            "written too (the literal intervals of uncovered.py bound an `out=` view only from "
            "its start)."
        ),
        source=r"""
import warnings

import torch


def f(x):
    buf = torch.zeros(2)  # <- site
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.cumsum(x, 0, out=buf[0])
    return buf[1] * 2
""",
        scenario=r"""
def run():
    return f(torch.ones(2))
""",
        covered=True,
    ),
    NearMiss(
        "branches_leave_different_positions",
        why="One branch leaves position 0, the other the last: no position is left by both.",
        source=r"""
import torch


def f(x, n: int, flag: bool):
    buf = torch.zeros(n + 2)  # <- site
    if flag:
        buf[1:] = x
    else:
        buf[:-1] = x
    return buf.sum()
""",
    ),
    NearMiss(
        "write_in_a_loop_the_allocation_is_not_in",
        why="A write repeated by a loop the allocation is not in never counts (its union).",
        source=r"""
import torch


def f(x, n: int):
    buf = torch.zeros(n + 1)  # <- site
    for _ in range(2):
        buf[:-1] = x
    return buf.sum()
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("miss", [pytest.param(m, id=m.name) for m in NEAR_MISSES])
def test_near_miss_is_not_unsafe(miss: NearMiss, tmp_path: Path) -> None:
    case = miss.case()
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts, f"{case.name}: no finding at line {line}"
        assert Verdict.UNSAFE not in verdicts, (line, verdicts)
    if miss.covered:
        base, differences = poisoned_runs(case, tmp_path)
        assert all(d is None for d in differences.values()), (base, differences)
