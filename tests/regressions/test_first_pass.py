"""A read on the first pass through a `for` loop (analysis/dataflow/first_pass.py): the loop body
reads part of the buffer before writing it, so its first pass reads memory nobody wrote, although
from the second pass on a write has run. Each case is executed with the allocation poisoned.

The near misses must not be `unsafe`: a body that writes before it reads, a read after the loop
(the copy that runs each loop once knows nothing of the sizes a single pass implies), a loop over
an empty iterable the analysis cannot tell apart, and a body whose read is of a part written
before the loop.
"""

from __future__ import annotations

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
        "nibbles_packed_by_or_into_a_column",
        expect=UNSAFE,
        why="each column is OR-ed with its own previous value: the first pass ORs into zeros.",
        source=r"""
import torch


def pack(to_pack):
    n = to_pack.shape[1] // 8
    packed = torch.zeros(to_pack.shape[0], n, dtype=torch.int32)  # <- site
    for c in range(n):
        for i in range(8):
            col = to_pack[:, c * 8 + i].to(torch.int32) & 0x0F
            packed[:, c] = torch.bitwise_or(packed[:, c], torch.bitwise_left_shift(col, i * 4))
    return packed
""",
        scenario=r"""
def run():
    return pack(torch.arange(32, dtype=torch.int32).reshape(2, 16))
""",
    ),
    Case(
        "row_accumulated_through_its_index",
        expect=UNSAFE,
        why="`out[i] = out[i] + x`: row i is read before it is written, on its only pass.",
        source=r"""
import torch


def rows(xs):
    out = torch.zeros(len(xs), 3)  # <- site
    for i, x in enumerate(xs):
        out[i] = out[i] + x
    return out
""",
        scenario=r"""
def run():
    return rows([torch.ones(3), torch.full((3,), 2.0)])
""",
    ),
]

NEAR_MISSES = [
    Case(
        "body_writes_the_row_before_reading_it",
        source=r"""
import torch


def rows(xs):
    out = torch.zeros(len(xs), 3)  # <- site
    for i, x in enumerate(xs):
        out[i] = x
        out[i] = out[i] * 2
    return out
""",
    ),
    Case(
        "read_after_a_covering_loop",
        source=r"""
import torch


def fill():
    out = torch.zeros(4)  # <- site
    for i in range(4):
        out[i] = i
    return out.sum()
""",
    ),
    Case(
        "read_of_a_part_written_before_the_loop",
        source=r"""
import torch


def run_sum(xs):
    out = torch.zeros(4)  # <- site
    out.fill_(1)
    for x in xs:
        out[:2] = out[:2] + x
    return out
""",
    ),
]

# The copy keeps every branch of the body, but the first pass need not take them: these never
# read memory nobody wrote (every poisoned run gives the zeros result), so no `unsafe`.
NEVER_READ_UNWRITTEN = [
    Case(
        "prefix_sum_whose_first_pass_takes_the_other_branch",
        why="`i == 0` on the first pass: it writes `out[0]`; later passes read only written rows.",
        source=r"""
import torch


def prefix(x):
    n = x.shape[0]
    out = torch.zeros(n)  # <- site
    for i in range(n):
        if i == 0:
            out[0] = x[0]
        else:
            out[i] = out[i - 1] + x[i]
    return out
""",
        scenario=r"""
def run():
    return prefix(torch.arange(1.0, 6.0))
""",
    ),
    Case(
        "first_pass_continues_before_the_read",
        source=r"""
import torch


def prefix(x):
    n = x.shape[0]
    out = torch.zeros(n)  # <- site
    for i in range(n):
        if i == 0:
            out[0] = x[0]
            continue
        out[i] = out[i - 1] + x[i]
    return out
""",
        scenario=r"""
def run():
    return prefix(torch.arange(1.0, 6.0))
""",
    ),
    Case(
        "flag_set_by_the_first_pass",
        source=r"""
import torch


def rows(xs):
    out = torch.zeros(len(xs), 3)  # <- site
    prev = None
    for i, x in enumerate(xs):
        if prev is not None:
            out[i] = out[i - 1] + x
        else:
            out[i] = x
        prev = x
    return out
""",
        scenario=r"""
def run():
    return rows([torch.ones(3), torch.full((3,), 2.0), torch.full((3,), 3.0)])
""",
    ),
    Case(
        "forward_substitution_inner_loop_empty_on_the_first_row",
        why="`for j in range(i)` runs no pass while `i == 0`: `y[j]` is read only once written.",
        source=r"""
import torch


def forward(L, b):
    n = b.shape[0]
    y = torch.zeros(n)  # <- site
    for i in range(n):
        s = torch.tensor(0.0)
        for j in range(i):
            s = s + L[i, j] * y[j]
        y[i] = (b[i] - s) / L[i, i]
    return y
""",
        scenario=r"""
def run():
    L = torch.tril(torch.arange(1.0, 17.0).reshape(4, 4))
    return forward(L, torch.arange(1.0, 5.0))
""",
    ),
    Case(
        "read_through_an_index_list_empty_on_the_first_pass",
        source=r"""
import torch


def running(x):
    n = x.shape[0]
    out = torch.zeros(n)  # <- site
    for i in range(n):
        out[i] = x[i] + out[list(range(i))].sum()
    return out
""",
        scenario=r"""
def run():
    return running(torch.arange(1.0, 6.0))
""",
    ),
    Case(
        "slice_up_to_the_index_empty_on_the_first_pass",
        why="`out[:i]` is empty while `i == 0`, and holds only written rows after: the join of "
        "the loop head made it a read before any write.",
        source=r"""
import torch


def running(x):
    n = x.shape[0]
    out = torch.zeros(n)  # <- site
    for i in range(n):
        out[i] = x[i] + out[:i].sum()
    return out
""",
        scenario=r"""
def run():
    return running(torch.arange(1.0, 6.0))
""",
    ),
    Case(
        "narrowed_window_of_written_rows",
        source=r"""
import torch


def window(x, k):
    n = x.shape[0]
    out = torch.zeros(n)  # <- site
    for i in range(n):
        out[i] = x[i] + out.narrow(0, max(0, i - k), min(i, k)).sum()
    return out
""",
        scenario=r"""
def run():
    return window(torch.arange(1.0, 7.0), 2)
""",
    ),
    Case(
        "while_loop_reads_the_rows_it_wrote",
        source=r"""
import torch


def running(x):
    n = x.shape[0]
    out = torch.zeros(n)  # <- site
    i = 0
    while i < n:
        out[i] = x[i] + out[:i].sum()
        i += 1
    return out
""",
        scenario=r"""
def run():
    return running(torch.arange(1.0, 6.0))
""",
    ),
    Case(
        "loop_over_an_empty_literal",
        source=r"""
import torch


def f(x):
    out = torch.zeros(3)  # <- site
    for i in []:
        out[i] = out[i] + 1
    out.copy_(x)
    return out
""",
        scenario=r"""
def run():
    return f(torch.ones(3))
""",
    ),
]


@pytest.mark.parametrize("case", params(NEVER_READ_UNWRITTEN))
def test_first_pass_that_never_reads_unwritten_memory(case: Case, tmp_path: Path) -> None:
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts and Verdict.UNSAFE not in verdicts, (case.name, line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (case.name, base, differences)


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("case", params(NEAR_MISSES))
def test_near_miss_is_not_unsafe(case: Case) -> None:
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts, (case.name, line)
        assert Verdict.UNSAFE not in verdicts, (case.name, line, verdicts)
