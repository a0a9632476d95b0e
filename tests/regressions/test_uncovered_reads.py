"""Reads of an element no write can cover: every write on every path leaves some element alone
(`x[1:]` skips x[0]; `x[:, :, 0]` on a `(b, t, 2)` buffer skips x[0, 0, 1]), and a definite read
of the whole buffer (an operator, a reduction, `torch.cat`, a kernel contract reading in full) or
of a literal slice holding it reads it. And reads through a result that is certainly the
buffer's data (`x.to(...)`, `x[i]`) while nothing was written on any path.

`CASES` must be `unsafe` (ZO001 on a `torch.zeros`, ZO002 on a `torch.empty`), and executed with
zeros and with poison they must differ (`harness.check_execution`). `NEAR_MISSES` must NOT be
`unsafe`: a write that may cover the first element on some path, one of unknown extent, or a
buffer that may have no first element. Those whose `covered` is true write the first element at
run time, so poisoning them changes nothing either.
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
        "offsets_first_element_never_written",
        why=(
            "`kv_indptr[1:] = cumsum(seq_lens)` never writes element 0, and `kv_indptr.sum()` "
            "reads it: the zeros are the offset the code relies on."
        ),
        source=r"""
import torch


def f(seq_lens, bs: int):
    kv_indptr = torch.zeros(bs + 1, dtype=torch.float32)  # <- site
    kv_indptr[1:] = torch.cumsum(seq_lens, 0)
    return kv_indptr.sum()
""",
        scenario=r"""
def run():
    return f(torch.tensor([1.0, 2.0, 3.0]), 3)
""",
        expect=UNSAFE,
    ),
    Case(
        "column_slice_then_concatenated",
        why="`x[:, 1:] = y` leaves column 0; `torch.cat([x, y])` copies every element of x.",
        source=r"""
import torch


def f(y, n: int):
    x = torch.zeros(n, 4)  # <- site
    x[:, 1:] = y[:, 1:]
    return torch.cat([x, y])
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 4), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "row_index_read_after_later_rows",
        why="Only rows 1 and 2 are written (one of them in a branch); `x[0] + 1` reads row 0.",
        source=r"""
import torch


def f(y, flag: bool):
    x = torch.zeros(3, 2)  # <- site
    x[1] = y
    if flag:
        x[2] = y
    return x[0] + 1
""",
        scenario=r"""
def run():
    return f(torch.ones(2), True)
""",
        expect=UNSAFE,
    ),
    Case(
        "accumulated_after_a_skipping_write",
        why="`acc[1:] = y` then `acc += z`: the accumulation reads element 0, never written.",
        source=r"""
import torch


def f(y, z):
    acc = torch.zeros(4)  # <- site
    acc[1:] = y
    acc += z
    return acc
""",
        scenario=r"""
def run():
    return f(torch.ones(3), torch.ones(4))
""",
        expect=UNSAFE,
    ),
    Case(
        "written_through_a_view_that_skips_it",
        why="`v = x[2:]` is written in full through `v.copy_`; `x.max()` still reads x[0], x[1].",
        source=r"""
import torch


def f(y):
    x = torch.zeros(6)  # <- site
    v = x[2:]
    v.copy_(y)
    return x.max()
""",
        scenario=r"""
def run():
    return f(torch.full((4,), -1.0))
""",
        expect=UNSAFE,
    ),
    Case(
        "last_column_never_written",
        why=(
            "`mask[:, :, 0] = 1` on a `(b, t, 2)` buffer never writes column 1 (the literal size "
            "shows it exists); `mask.sum()` reads it."
        ),
        source=r"""
import torch


def f(b: int, t: int):
    mask = torch.zeros(b, t, 2)  # <- site
    mask[:, :, 0] = 1
    return mask.sum()
""",
        scenario=r"""
def run():
    return f(2, 3)
""",
        expect=UNSAFE,
    ),
    Case(
        "gap_between_two_slices",
        why="`x[:2]` and `x[3]` leave x[2] of a 4-element buffer; the cumulative sum reads it.",
        source=r"""
import torch


def f(y):
    x = torch.zeros(4)  # <- site
    x[:2] = y
    x[3] = 1
    return x.cumsum(0)
""",
        scenario=r"""
def run():
    return f(torch.ones(2))
""",
        expect=UNSAFE,
    ),
    Case(
        "flags_after_the_first_read_in_place",
        why=(
            "`change[:1] = True`, then `change[1:] |= ...` reads change[1:], never written (a "
            "read slice that starts at 1 holds index 1 when it is not empty)."
        ),
        source=r"""
import torch


def f(n: int, field):
    change = torch.zeros(n, dtype=torch.bool)  # <- site
    change[:1] = True
    change[1:] |= field[1:] != field[:-1]
    return change
""",
        scenario=r"""
def run():
    return f(4, torch.tensor([1, 1, 2, 2]))
""",
        expect=UNSAFE,
    ),
    Case(
        "flags_accumulated_in_a_loop",
        why=(
            "`changed[1:] |= ...` in a loop: its own earlier iterations read before they wrote, "
            "so the first iteration reads changed[1:] unwritten."
        ),
        source=r"""
import torch


def f(n: int, vectors):
    changed = torch.zeros(n, dtype=torch.bool)  # <- site
    changed[:1] = True
    for vector in vectors:
        changed[1:] |= vector[1:] != vector[:-1]
    return changed
""",
        scenario=r"""
def run():
    return f(4, [torch.tensor([1, 1, 2, 2]), torch.tensor([3, 3, 3, 3])])
""",
        expect=UNSAFE,
    ),
    Case(
        "read_through_a_copy_before_any_write",
        why=(
            "`x.to(dtype)` copies x or is x itself; either way `y.sum()` reads x's unwritten "
            "memory (at the copy, or now)."
        ),
        source=r"""
import torch


def f(n: int):
    x = torch.zeros(n)  # <- site
    y = x.to(torch.float64)
    return y.sum()
""",
        scenario=r"""
def run():
    return f(3)
""",
        expect=UNSAFE,
    ),
    Case(
        "read_through_a_view_or_gather_before_any_write",
        why="`x[i]` is a view (i an int) or a gather (i a tensor): `y + 1` reads unwritten x.",
        source=r"""
import torch


def f(n: int, i):
    x = torch.zeros(n, 4)  # <- site
    y = x[i]
    return y + 1
""",
        scenario=r"""
def run():
    return f(3, 1)
""",
        expect=UNSAFE,
    ),
    Case(
        "guard_empty_offsets_read_whole",
        why=(
            "The guard's case: a `torch.empty` whose element 0 no write covers, then read in full "
            "(`cumsum`): element 0 is whatever the allocator left there."
        ),
        source=r"""
import torch


def f(lens, bs: int):
    starts = torch.empty(bs + 1)  # <- site
    starts[1:] = lens
    return starts.cumsum(0)
""",
        scenario=r"""
def run():
    return f(torch.tensor([2.0, 5.0]), 2)
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
    covered: bool = False  # the first element is written at run time: poison changes nothing

    def case(self) -> Case:
        return Case(self.name, self.source, self.scenario, self.why)


NEAR_MISSES = [
    NearMiss(
        "later_write_covers_it_on_some_path",
        why="`x[0] = 0` in a branch may write element 0: only `unproven`.",
        source=r"""
import torch


def f(y, flag: bool):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    if flag:
        x[0] = 0
    return x.sum()
""",
    ),
    NearMiss(
        "unknown_callee_handed_it",
        why="`fill_head(x)` is handed the buffer: it may write element 0 (here it does).",
        source=r"""
import torch


def fill_head(t):
    t[0] = 0


def f(y):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    fill_head(x)
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3))
""",
        covered=True,
    ),
    NearMiss(
        "write_through_a_maybe_view",
        why="`v` is x itself or a copy: `v[0] = 0` may write element 0 (here it does).",
        source=r"""
import torch


def f(y):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    v = x.contiguous()
    v[0] = 0
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3))
""",
        covered=True,
    ),
    NearMiss(
        "symbolic_start_may_be_zero",
        why="`x[k:]` with k = 0 writes element 0: only literal starts count.",
        source=r"""
import torch


def f(y, k: int):
    x = torch.zeros(4)  # <- site
    x[k:] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4), 0)
""",
        covered=True,
    ),
    NearMiss(
        "flattened_view_write",
        why="`x.view(-1)[1:]` is another layout: its slice may cover the first element.",
        source=r"""
import torch


def f(y):
    x = torch.zeros(2, 3)  # <- site
    x.view(-1)[1:] = y
    return x.sum()
""",
    ),
    NearMiss(
        "index_write_may_hit_it",
        why="`x[idx] = y` writes what idx picks, maybe element 0 (here it does).",
        source=r"""
import torch


def f(y, idx):
    x = torch.zeros(4)  # <- site
    x[1:] = y[1:]
    x[idx] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4), torch.arange(4))
""",
        covered=True,
    ),
    NearMiss(
        "gather_reads_what_the_index_picks",
        why="`x.index_select(0, idx)` reads only the picked rows: maybe not row 0 (here not).",
        source=r"""
import torch


def f(y, idx):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    return x.index_select(0, idx)
""",
        scenario=r"""
def run():
    return f(torch.ones(3), torch.tensor([1, 2]))
""",
        covered=True,
    ),
    NearMiss(
        "read_in_a_short_circuit",
        why="`flag and x.sum() > 0` may not evaluate the read at all.",
        source=r"""
import torch


def f(y, flag: bool):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    return flag and bool(x.sum() > 0)
""",
    ),
    NearMiss(
        "last_column_of_a_size_not_shown",
        why="`mask[:, :, 0] = 1` on a `(b, t, k)` buffer: with k = 1 every element is written.",
        source=r"""
import torch


def f(b: int, t: int, k: int):
    mask = torch.zeros(b, t, k)  # <- site
    mask[:, :, 0] = 1
    return mask.sum()
""",
        scenario=r"""
def run():
    return f(2, 3, 1)
""",
        covered=True,
    ),
    NearMiss(
        "read_slice_written_before",
        why="`change[:2]` covers index 1, where the read `change[1:]` starts.",
        source=r"""
import torch


def f(n: int, field):
    change = torch.zeros(n, dtype=torch.bool)  # <- site
    change[:2] = True
    change[1:] |= field[1:] != field[:-1]
    return change
""",
    ),
    NearMiss(
        "reduction_that_may_ignore_self",
        why="`scatter_reduce_(..., include_self=False)` writes x[0] without reading it.",
        source=r"""
import torch


def f(y, idx, src):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    x.scatter_reduce_(0, idx, src, "sum", include_self=False)
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), torch.tensor([0]), torch.tensor([5.0]))
""",
        covered=True,
    ),
    NearMiss(
        "view_written_before_the_read",
        why="`y = x[i]` is a view for an int i: `y.fill_(1)` writes what `y + 1` reads.",
        source=r"""
import torch


def f(n: int, i):
    x = torch.zeros(n, 4)  # <- site
    y = x[i]
    y.fill_(1)
    return y + 1
""",
        scenario=r"""
def run():
    return f(3, 1)
""",
        covered=True,
    ),
    NearMiss(
        "copy_after_a_write_on_some_path",
        why="`x.copy_(z)` may have run before the copy: the read is not certain.",
        source=r"""
import torch


def f(n: int, flag: bool, z):
    x = torch.zeros(n)  # <- site
    if flag:
        x.copy_(z)
    y = x.to(torch.float64)
    return y.sum()
""",
    ),
    NearMiss(
        "maybe_the_buffer_maybe_another",
        why="`x if flag else other` may not be x at all.",
        source=r"""
import torch


def f(n: int, flag: bool, other):
    x = torch.zeros(n)  # <- site
    y = x if flag else other
    return y.sum()
""",
        scenario=r"""
def run():
    return f(3, False, torch.ones(3))
""",
        covered=True,
    ),
    NearMiss(
        "copied_to_the_meta_device",
        why="`x.to('meta')` has no data: reading it reads nothing of x.",
        source=r"""
import torch


def f(n: int):
    x = torch.zeros(n)  # <- site
    y = x.to("meta")
    return y.sum()
""",
    ),
    NearMiss(
        "returned_to_a_caller_reading_the_written_part",
        why="`return x` hands x to the caller, no read here; its one caller reads `x[1:]` only.",
        source=r"""
import torch


def f(y):
    x = torch.zeros(4)  # <- site
    x[1:] = y
    return x


def total(y):
    return f(y)[1:].sum()
""",
    ),
    NearMiss(
        "zero_size_along_the_dimension",
        why="A literal 0 in the shape: no first element exists, so none is read.",
        source=r"""
import torch


def f(y):
    x = torch.zeros(0, 4)  # <- site
    x[:, 1:] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(0, 3))
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
