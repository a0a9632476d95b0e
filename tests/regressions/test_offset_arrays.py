"""Offset arrays whose first entry is the zero of the allocation: `cu = torch.zeros(n + 1)`,
`cu[1:] = cumsum(lens)` (or `cumsum(..., out=cu[1:])`) never writes element 0, and the reads that
take it are real reads of memory nobody wrote (analysis/dataflow/uncovered.py,
first_iteration.py): a slice with a negative literal end (`cu[:-1]`, element 0 once the
dimension exceeds 1), a conversion that holds the same elements (`cu[:-1].to(torch.int64)`,
`cu.long()`, copied or not) read in full, and `cu[i]` on the first iteration of
`for i in range(n)` (assuming the loop runs at least once).

`CASES` must be `unsafe`, and executed with zeros and with poison they must differ.
`NEAR_MISSES` must NOT be `unsafe`: element 0 written, a loop from 1, a skip on the first
iteration, a slice empty by construction, `cu[-1]` (the last element only), a read of what a
repeat count picks, a part of the converted copy. Those whose `covered` is true never read
element 0 at run time, so poisoning them changes nothing either.
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
        "negative_end_slice_with_a_new_axis",
        why=(
            "`offsets[:-1, None] + slots` reads offsets[0] (n >= 1), which `offsets[1:] = "
            "cumsum(...)` never writes: the zero is the first block's start."
        ),
        source=r"""
import torch


def f(counts, n: int):
    offsets = torch.zeros(n + 1, dtype=torch.long)  # <- site
    offsets[1:] = counts.cumsum(0)
    slots = torch.arange(3)
    return offsets[:-1, None] + slots
""",
        scenario=r"""
def run():
    return f(torch.tensor([2, 1]), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "negative_end_after_cumsum_out",
        why="`cumsum(lens, 0, out=cu[1:])` leaves cu[0]; `cu[:-1] * 2` reads it.",
        source=r"""
import torch


def f(lens, bs: int):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    torch.cumsum(lens, 0, out=cu[1:])
    return cu[:-1] * 2
""",
        scenario=r"""
def run():
    return f(torch.tensor([3, 4]), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "negative_end_of_a_literal_size",
        why="`x[:-2]` of a `zeros(4)` holds elements 0 and 1; only x[1:] is written.",
        source=r"""
import torch


def f(y):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    return x[:-2].sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3))
""",
        expect=UNSAFE,
    ),
    Case(
        "converted_slice_summed",
        why="`indptr[:-1].to(torch.int64)` holds indptr[0], copied or not; `.sum()` reads it.",
        source=r"""
import torch


def f(pages, n: int):
    indptr = torch.zeros(n + 1, dtype=torch.int32)  # <- site
    indptr[1:] = torch.cumsum(pages, dim=0)
    return indptr[:-1].to(torch.int64).sum()
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2, 3]), 3)
""",
        expect=UNSAFE,
    ),
    Case(
        "converted_buffer_bound_then_read",
        why="`y = cu.long()` holds every element of cu, cu[0] among them; `y + 1` reads them.",
        source=r"""
import torch


def f(lens, n: int):
    cu = torch.zeros(n + 1, dtype=torch.int32)  # <- site
    cu[1:] = torch.cumsum(lens, dim=0)
    y = cu.long()
    return y + 1
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2]), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "loop_index_item",
        why="On the first iteration of `for i in range(bs)`, `cu[i].item()` is `cu[0].item()`.",
        source=r"""
import torch


def f(lens, bs: int):
    cu = torch.zeros(bs + 1, dtype=torch.int32)  # <- site
    cu[1:] = torch.cumsum(lens, dim=0)
    starts = []
    for i in range(bs):
        starts.append(cu[i].item())
    return torch.tensor(starts)
""",
        scenario=r"""
def run():
    return f(torch.tensor([2, 3]), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "loop_index_slice_bounds",
        why=(
            "`kv[cu[i] : cu[i + 1]]` takes cu[0] as the first slice's start: with poison the "
            "first piece changes (or the slicing fails)."
        ),
        source=r"""
import torch


def f(lens, kv, bs: int):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    other = torch.zeros_like(cu)
    cu[1:] = torch.cumsum(lens, dim=0)
    other[1:] = torch.cumsum(lens, dim=0)
    parts = ()
    for i in range(0, bs):
        parts += (kv[cu[i] : cu[i + 1]], kv[other[i] : other[i + 1]])
    return torch.cat(parts)
""",
        scenario=r"""
def run():
    return f(torch.tensor([2, 1]), torch.arange(3.0), 2)
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
    covered: bool = False  # element 0 is never read unwritten at run time

    def case(self) -> Case:
        return Case(self.name, self.source, self.scenario, self.why)


NEAR_MISSES = [
    NearMiss(
        "first_element_written",
        why="`cu[0] = 0` writes the first entry: `cu[:-1] + 1` reads only written elements.",
        source=r"""
import torch


def f(lens, n: int):
    cu = torch.zeros(n + 1, dtype=torch.int64)  # <- site
    cu[0] = 0
    cu[1:] = torch.cumsum(lens, 0)
    return cu[:-1] + 1
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2]), 2)
""",
        covered=True,
    ),
    NearMiss(
        "loop_from_one",
        why="`for i in range(1, bs)` never takes i = 0: cu[0] is never read.",
        source=r"""
import torch


def f(lens, bs: int):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    t = 0
    for i in range(1, bs):
        t += cu[i].item()
    return torch.tensor(t)
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2, 3]), 3)
""",
        covered=True,
    ),
    NearMiss(
        "first_iteration_skipped",
        why="`if i == 0: continue` skips the read on the one iteration where i is 0.",
        source=r"""
import torch


def f(lens, bs: int):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    t = 0
    for i in range(bs):
        if i == 0:
            continue
        t += cu[i].item()
    return torch.tensor(t)
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2, 3]), 3)
""",
        covered=True,
    ),
    NearMiss(
        "view_bound_then_read_under_a_condition_on_the_index",
        why="`v = cu[i]` is cu[0] at i = 0, but `v.item()` runs only where i > 0.",
        source=r"""
import torch


def f(lens, bs: int):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    t = 0
    for i in range(bs):
        v = cu[i]
        if i > 0:
            t += v.item()
    return torch.tensor(t)
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2, 3]), 3)
""",
        covered=True,
    ),
    NearMiss(
        "lookup_that_may_fail_on_the_first_iteration",
        why="`d[i]` of a dict keyed from 1 raises at i = 0, before `cu[i]` is added.",
        source=r"""
import torch


def f(lens, bs: int, d):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    t = 0
    for i in range(bs):
        t += d[i] + cu[i].item()
    return torch.tensor(t)
""",
    ),
    NearMiss(
        "lookup_in_a_loaded_object",
        why="`torch.load` may return a dict keyed from 1: `table[i]` may raise at i = 0 alone.",
        source=r"""
import torch


def f(lens, bs: int, path):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    table = torch.load(path)
    t = 0
    for i in range(bs):
        t += table[i] + cu[i].item()
    return torch.tensor(t)
""",
    ),
    NearMiss(
        "loop_variable_moved",
        why="`i = i + 1` before the read: the read takes cu[1] first.",
        source=r"""
import torch


def f(lens, bs: int):
    cu = torch.zeros(bs + 1, dtype=torch.int64)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    t = 0
    for i in range(bs):
        i = i + 1
        t += cu[i].item()
    return torch.tensor(t)
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2, 3]), 3)
""",
        covered=True,
    ),
    NearMiss(
        "slice_empty_by_construction",
        why="`zeros(1)[:-1]` is empty: no element is read.",
        source=r"""
import torch


def f(y):
    x = torch.zeros(1)  # <- site
    x[1:] = y
    return x[:-1].sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(0))
""",
        covered=True,
    ),
    NearMiss(
        "last_element_only",
        why="`cu[-1]` is the last element, which `cu[1:]` writes (n >= 1).",
        source=r"""
import torch


def f(lens, n: int):
    cu = torch.zeros(n + 1, dtype=torch.int64)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    return cu[-1] + 1
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2]), 2)
""",
        covered=True,
    ),
    NearMiss(
        "repeat_count_may_skip_it",
        why="`repeat_interleave(..., pages)` copies element 0 only when pages[0] > 0 (here 0).",
        source=r"""
import torch


def f(pages, n: int):
    indptr = torch.zeros(n + 1, dtype=torch.int64)  # <- site
    indptr[1:] = torch.cumsum(pages, dim=0)
    return torch.repeat_interleave(indptr[:-1].to(torch.int32), pages)
""",
        scenario=r"""
def run():
    return f(torch.tensor([0, 2, 1]), 3)
""",
        covered=True,
    ),
    NearMiss(
        "part_of_the_converted_copy",
        why="`cu.long()[1:]` leaves out element 0: its sum reads only written elements.",
        source=r"""
import torch


def f(lens, n: int):
    cu = torch.zeros(n + 1, dtype=torch.int32)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    return cu.long()[1:].sum()
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2]), 2)
""",
        covered=True,
    ),
    NearMiss(
        "type_name_not_the_data",
        why="`cu.type()` with no argument is the type's name, a string: no element is read.",
        source=r"""
import torch


def f(lens, n: int):
    cu = torch.zeros(n + 1, dtype=torch.int32)  # <- site
    cu[1:] = torch.cumsum(lens, 0)
    return torch.tensor(len(cu.type() + "x"))
""",
        scenario=r"""
def run():
    return f(torch.tensor([1, 2]), 2)
""",
        covered=True,
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
