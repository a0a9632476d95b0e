"""Loops whose trip count is the size of the dimension they write, and views with no element.

`for i in range(n): out[i] = ...` after `out = torch.zeros(n)` writes every row once it has
finished; where it runs zero times, `n <= 0` and the buffer has no element to read. That holds
for a parameter `n` of unknown type (`range` and `torch.zeros` both accept a tensor) only while
nothing can change its value in place between the allocation and the loop
(analysis/dataflow/loop_sizes.py), and for `enumerate(xs)` after `torch.zeros(len(xs))` only
while `xs` keeps its length. `x[:0]` and `x[k:k]` (k an int) read nothing.

`CASES`: "fix" cases are `safe` and behave the same once rewritten; the others are read unwritten
on the run their scenario makes (poison changes the result) and must not be `safe` (`UNSAFE`
where the read is certain). `NOT_READS`: programs whose allocation is never read unwritten, yet
which the analysis cannot prove: they must be `unproven`, never `unsafe`, and poison changes
nothing. `GUARD_CASES`: the same shapes on `torch.empty`, where an `unsafe` (ZO002) fails CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_case,
    check_never_read,
    params,
    site_verdicts,
)

UNSAFE = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "range_of_a_size_parameter",
        kind="fix",
        why="`n` is a parameter of unknown type, bound once, and nothing runs between "
        "`torch.zeros(n)` and `range(n)`: the loop writes every row, or n is 0 and there is no "
        "row to read.",
        source=r"""
import torch


def f(n, xs):
    out = torch.zeros(n)  # <- site
    for i in range(n):
        out[i] = xs[i] * 2
    return out.sum()
""",
        scenario=r"""
def run():
    return f(3, torch.ones(3)), f(0, torch.ones(0)), f(torch.tensor(2), torch.ones(2))
""",
    ),
    Case(
        "range_of_the_second_size",
        kind="fix",
        why="`for i in range(p): out[:, i] = w` after `torch.zeros(n, p)` writes every column; "
        "with p of 0 the buffer has no element.",
        source=r"""
import torch


def g(w, p, n):
    out = torch.zeros(n, p)  # <- site
    for i in range(p):
        out[:, i] = w
    return out.sum()
""",
        scenario=r"""
def run():
    return g(torch.ones(2), 3, 2), g(torch.ones(2), 0, 2)
""",
    ),
    Case(
        "enumerate_of_the_sized_sequence",
        kind="fix",
        why="`enumerate(xs)` after `torch.zeros(len(xs))`, with `xs` neither bound again nor "
        "named in the loop: one row per item, every row written (assumed: iterating `xs` "
        "yields `len(xs)` items, which the evidence says).",
        source=r"""
import torch


def f(xs):
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        out[i] = x
    return out.sum()
""",
        scenario=r"""
def run():
    return f([1.0, 2.0, 3.0]), f([])
""",
    ),
    Case(
        "range_of_the_sized_length",
        kind="fix",
        why="`range(len(xs))` after `torch.zeros(len(xs), 3)`: the same length, nothing between "
        "that could change `xs`, every row written.",
        source=r"""
import torch


def f(xs):
    out = torch.zeros(len(xs), 3)  # <- site
    for i in range(len(xs)):
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4, 3)), f(torch.ones(0, 3))
""",
    ),
    Case(
        "empty_slices_read_nothing",
        kind="fix",
        why="`cls[:0]` concatenated and `cls[:, 2:2]` summed are empty views: they read no "
        "element of the buffer, which is never read otherwise.",
        source=r"""
import torch


def f(h, n: int):
    cls = torch.zeros(n, 4)  # <- site
    return torch.cat([h, cls[:0]]), cls[:, 2:2].sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 4), 3)
""",
    ),
    Case(
        "equal_int_bounds_read_nothing",
        kind="fix",
        why="`out[i:i]` with `i` an int parameter is empty: the sum reads nothing, and the "
        "buffer is written in full before the value returned is read.",
        source=r"""
import torch


def f(n: int, i: int):
    out = torch.zeros(n)  # <- site
    s = out[i:i].sum()
    out.fill_(2.0)
    return out + s
""",
        scenario=r"""
def run():
    return f(4, 2)
""",
    ),
    Case(
        "range_short_of_the_size",
        expect=UNSAFE,
        why="`range(n - 1)` leaves the last row of `torch.zeros(n)` unwritten (and every row on "
        "the zero-trip path of n = 1): the sum reads it.",
        source=r"""
import torch


def f(n, xs):
    out = torch.zeros(n)  # <- site
    for i in range(n - 1):
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(1, torch.ones(1))
""",
    ),
    Case(
        "range_of_another_size",
        why="`range(m)` with `m` another parameter: m = 0 writes nothing of a buffer of n rows, "
        "which the sum reads. Not `unsafe`: callers usually pass m == n, and the code does not "
        "relate them (analysis/dataflow/zero_trip.py); never `safe`.",
        source=r"""
import torch


def f(n, m, xs):
    out = torch.zeros(n)  # <- site
    for i in range(m):
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(3, 0, torch.ones(3))
""",
    ),
    Case(
        "size_bound_again_before_the_loop",
        expect=UNSAFE,
        why="`n = n - 1` between the allocation and the loop: with n = 1 the loop runs zero "
        "times over a buffer of one element, read by the sum.",
        source=r"""
import torch


def f(n, xs):
    out = torch.zeros(n)  # <- site
    n = n - 1
    for i in range(n):
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(1, torch.ones(1))
""",
    ),
    Case(
        "enumerate_left_by_a_break",
        expect=UNSAFE,
        why="A `break` before the write leaves the loop with rows unwritten (all of them when the "
        "first item breaks): the sum reads them.",
        source=r"""
import torch


def f(xs):
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        if x > 3:
            break
        out[i] = x
    return out.sum()
""",
        scenario=r"""
def run():
    return f([5.0, 1.0])
""",
    ),
    Case(
        "enumerate_of_another_sequence",
        why="The buffer is sized by `xs` but the loop enumerates `ys`: an empty `ys` writes "
        "nothing, and the sum reads every row. Not `unsafe`: the code does not relate the two "
        "lengths (analysis/dataflow/zero_trip.py); never `safe`.",
        source=r"""
import torch


def f(xs, ys):
    out = torch.zeros(len(xs))  # <- site
    for i, y in enumerate(ys):
        out[i] = y
    return out.sum()
""",
        scenario=r"""
def run():
    return f([1.0, 2.0], [])
""",
    ),
    Case(
        "size_tensor_shrunk_in_place",
        why="`n` is a tensor shrunk by `n.sub_(1)` between the allocation and the loop: the "
        "loop's trip count is one less than the rows, and the sum reads the last one.",
        source=r"""
import torch


def f(n, xs):
    out = torch.zeros(n)  # <- site
    n.sub_(1)
    for i in range(n):
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(torch.tensor(3), torch.ones(3))
""",
    ),
    Case(
        "size_tensor_shrunk_by_a_call",
        why="A call between the allocation and the loop shrinks the tensor passed as `n` through "
        "another reference to it: the loop writes one row less than there are.",
        source=r"""
import torch


def f(n, xs, hook):
    out = torch.zeros(n)  # <- site
    hook()
    for i in range(n):
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    size = torch.tensor(3)
    return f(size, torch.ones(3), lambda: size.sub_(1))
""",
    ),
    Case(
        "sequence_shrunk_before_the_loop",
        why="`xs.pop()` between `torch.zeros(len(xs))` and `enumerate(xs)`: one item fewer than "
        "rows, and the sum reads the row left.",
        source=r"""
import torch


def f(xs):
    out = torch.zeros(len(xs))  # <- site
    xs.pop()
    for i, x in enumerate(xs):
        out[i] = x
    return out.sum()
""",
        scenario=r"""
def run():
    return f([1.0, 2.0])
""",
    ),
    Case(
        "sequence_shrunk_by_the_loop",
        why="The loop body pops `xs` while enumerating it: iteration stops early and the sum "
        "reads the rows never written.",
        source=r"""
import torch


def f(xs):
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        out[i] = x
        xs.pop()
    return out.sum()
""",
        scenario=r"""
def run():
    return f([1.0, 2.0, 3.0, 4.0])
""",
    ),
    Case(
        "sequence_shrunk_by_a_call_in_the_loop",
        why="A call in the loop body shrinks the enumerated list through another reference to "
        "it: iteration stops before the last rows, which the sum reads (the body runs code "
        "that may reach the list, so the loop proves nothing).",
        source=r"""
import torch


def f(xs, hook):
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        hook()
        out[i] = x
    return out.sum()
""",
        scenario=r"""
def run():
    xs = [1.0, 2.0, 3.0, 4.0]
    return f(xs, lambda: xs.pop())
""",
    ),
    Case(
        "slice_of_one_element_is_read",
        expect=UNSAFE,
        why="`out[:1]` is not empty (n >= 1 in the run): its sum reads an element never written, "
        "next to the empty `out[:0]` that reads nothing.",
        source=r"""
import torch


def f(n: int):
    out = torch.zeros(n)  # <- site
    return out[:0].sum() + out[:1].sum()
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "equal_bounds_that_may_be_none",
        why="`out[i:i]` with `i` of unknown type: None makes it `out[:]`, every element, read "
        "by the sum (so never `safe`; `unproven` as an int makes it empty).",
        source=r"""
import torch


def f(n, i):
    out = torch.zeros(n)  # <- site
    return out[i:i].sum()
""",
        scenario=r"""
def run():
    return f(3, None)
""",
    ),
]

NOT_READS = [
    Case(
        "size_passed_through_a_call_that_keeps_it",
        why="A call between the allocation and the loop may change a tensor passed as `n`: no "
        "`safe`, but the zero-trip path is no read either (here the call changes nothing).",
        source=r"""
import torch


def f(n, xs, hook):
    out = torch.zeros(n)  # <- site
    hook()
    for i in range(n):
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(3, torch.ones(3), lambda: None), f(0, torch.ones(0), lambda: None)
""",
    ),
    Case(
        "equal_bounds_of_an_int_of_unknown_type",
        why="`out[i:i]` with `i` of unknown type, an int at run time: the view is empty, which "
        "the analysis cannot know (None would make it the whole buffer).",
        source=r"""
import torch


def f(n, i):
    out = torch.zeros(n)  # <- site
    return out[i:i].sum()
""",
        scenario=r"""
def run():
    return f(3, 1)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


@pytest.mark.parametrize("case", params(NOT_READS))
def test_never_read_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    check_never_read(case, tmp_path)


GUARD_CASES = [
    Case(
        "guard_empty_view_of_an_empty",
        why="`torch.empty(n)[:0].sum()` reads no element: the guard (ZO002) must not fail CI on "
        "it, whatever the memory holds.",
        source=r"""
import torch


def f(n: int):
    out = torch.empty(n)  # <- site
    return out[:0].sum() + 1
""",
    ),
    Case(
        "guard_loop_over_a_size_parameter",
        why="`for i in range(n)` over `torch.empty(n)` with `n` a parameter writes every element "
        "before the sum: no ZO002 failure through the loop's zero-trip path.",
        source=r"""
import torch


def f(n, xs):
    out = torch.empty(n)  # <- site
    for i in range(n):
        out[i] = xs[i]
    return out.sum()
""",
    ),
]


@pytest.mark.parametrize("case", params(GUARD_CASES))
def test_guard_does_not_fail(case: Case) -> None:
    for line, verdicts in site_verdicts(case, case.source.lstrip("\n")).items():
        assert Verdict.UNSAFE not in verdicts, (line, verdicts)
