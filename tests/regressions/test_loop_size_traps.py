"""Loops over a size of unknown type and empty views, attacked: code that changes the size or
the enumerated list where the text does not show it, and views that reach past an empty one.

`range(n)` after `torch.zeros(n)` (n of unknown type) is a write in full only while no code can
shrink a tensor passed as `n` on the way: an attribute load, a subscript, an f-string, an
operator or `len` on another value run that value's code (analysis/dataflow/loop_sizes.py
`_inert`). `enumerate(xs)` after `torch.zeros(len(xs))` only while the body cannot shrink the
list through another name of it (`del ys[-1]`, `self.ys[:] = []`), a property of an item, a key
function or a torch subpackage that runs callables (`_quiet_body`). An empty view reads nothing,
but `._base` of it is the whole buffer; a full view (`.T`, `.data`) of it is empty too.

`CASES`: "fix" cases are `safe` and behave the same once rewritten; the others are read unwritten
on the run their scenario makes and must not be `safe`. `NOT_READS`: never read unwritten, not
provable: `unproven`, never `unsafe`, and poison changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    check_case,
    check_never_read,
    params,
)

CASES = [
    Case(
        "inert_bindings_between",
        kind="fix",
        why="Between `torch.zeros(n)` and `range(n)` only a second allocation of size `n`, "
        "arithmetic on `n` and a literal: no code other than the size's own runs on the way.",
        source=r"""
import torch


def f(n, xs):
    out = torch.zeros(n, dtype=torch.float32)  # <- site
    idx = torch.zeros(n, dtype=torch.long)
    k = n * 2
    j = 0
    for i in range(n):
        out[i] = xs[i]
    return out.sum(), idx, k, j
""",
        scenario=r"""
def run():
    return f(3, torch.ones(3)), f(torch.tensor(2), torch.ones(2))
""",
    ),
    Case(
        "full_view_of_an_empty_view_reads_nothing",
        kind="fix",
        why="`out[1:1].T` and `out[:0].data` are views of every element of an empty view: "
        "nothing, so their sums read no zero, and the buffer is never read otherwise.",
        source=r"""
import torch


def f(n: int):
    out = torch.zeros(n, 3)  # <- site
    return out[1:1].T.sum() + out[:0].data.sum()
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "size_tensor_shrunk_by_a_property_between",
        why="An attribute load between `torch.zeros(n)` and `range(n)` runs a property that "
        "shrinks the tensor passed as `n`: the loop writes one row less, which the sum reads.",
        source=r"""
import torch


def f(n, xs, a):
    out = torch.zeros(n)  # <- site
    c = a.foo
    for i in range(n):
        out[i] = xs[i]
    return out.sum() + c
""",
        scenario=r"""
def run():
    n = torch.tensor(3)

    class A:
        @property
        def foo(self):
            n.sub_(1)
            return 1

    return f(n, torch.ones(3), A())
""",
    ),
    Case(
        "size_tensor_shrunk_by_an_operator_between",
        why="`a + 1` between the allocation and the loop runs `a.__add__`, which shrinks the "
        "tensor passed as `n`: the loop's trip count is one row short of the buffer.",
        source=r"""
import torch


def f(n, xs, a):
    out = torch.zeros(n)  # <- site
    c = a + 1
    for i in range(n):
        out[i] = xs[i]
    return out.sum() + c
""",
        scenario=r"""
def run():
    n = torch.tensor(3)

    class A:
        def __add__(self, other):
            n.sub_(1)
            return 1

    return f(n, torch.ones(3), A())
""",
    ),
    Case(
        "size_tensor_shrunk_by_a_format_between",
        why="An f-string between the allocation and the loop runs `__format__` of the value it "
        "formats, here shrinking the tensor passed as `n`: the last row is never written.",
        source=r"""
import torch


def f(n, xs):
    out = torch.zeros(n)  # <- site
    s = f"{xs}"
    for i in range(n):
        out[i] = xs[i]
    return out.sum(), len(s)
""",
        scenario=r"""
def run():
    n = torch.tensor(3)

    class X:
        def __format__(self, spec):
            n.sub_(1)
            return "x"

        def __getitem__(self, i):
            return 1.0

    return f(n, X())
""",
    ),
    Case(
        "size_tensor_shrunk_by_len_of_another_value",
        why="`len(a)` between the allocation and the loop runs `a.__len__`, code that shrinks "
        "the tensor passed as `n`: `len` is quiet only on the size's own sequence.",
        source=r"""
import torch


def f(n, xs, a):
    out = torch.zeros(n)  # <- site
    c = len(a)
    for i in range(n):
        out[i] = xs[i]
    return out.sum() + c
""",
        scenario=r"""
def run():
    n = torch.tensor(3)

    class A:
        def __len__(self):
            n.sub_(1)
            return 1

    return f(n, torch.ones(3), A())
""",
    ),
    Case(
        "sequence_shrunk_by_del_through_an_alias",
        why="`del ys[-1]` in the loop body, `ys` the same list as the enumerated `xs`: no call "
        "runs, yet iteration stops two items early and the sum reads the rows left.",
        source=r"""
import torch


def f(xs):
    ys = xs
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        out[i] = x
        del ys[-1]
    return out.sum()
""",
        scenario=r"""
def run():
    return f([1.0, 2.0, 3.0, 4.0])
""",
    ),
    Case(
        "sequence_cut_by_a_slice_store_on_self",
        why="`self.ys[:] = []` in the body empties the list being enumerated (stored on self "
        "before the allocation): one row written, the others read by the sum.",
        source=r"""
import torch


class M:
    def f(self, xs):
        self.ys = xs
        out = torch.zeros(len(xs))  # <- site
        for i, x in enumerate(xs):
            out[i] = x
            self.ys[:] = []
        return out.sum()
""",
        scenario=r"""
def run():
    return M().f([1.0, 2.0, 3.0])
""",
    ),
    Case(
        "sequence_shrunk_by_a_property_of_its_item",
        why="`x.value` in the body is a property of the item that pops the list being "
        "enumerated: iteration stops early, and the sum reads rows never written.",
        source=r"""
import torch


class V:
    def __init__(self, xs, v):
        self.xs, self.v = xs, v

    @property
    def value(self):
        if len(self.xs) > 1:
            self.xs.pop()
        return self.v


def f(xs):
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        out[i] = x.value
    return out.sum()
""",
        scenario=r"""
def run():
    xs = []
    xs.extend(V(xs, k + 1.0) for k in range(4))
    return f(xs)
""",
    ),
    Case(
        "base_of_an_empty_view",
        why="`out[:0]` holds no element, but its `._base` is the whole buffer: the sum of it "
        "reads every zero, so an attribute of an empty view is no proof that nothing is read.",
        source=r"""
import torch


def f(n: int):
    out = torch.zeros(n)  # <- site
    v = out[:0]
    return v._base.sum()
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "sequence_shrunk_by_a_key_function",
        why="`max(x, 0.0, key=hook)` in the body calls `hook`, which pops the enumerated list: "
        "a builtin taking a callable is no quiet call, and the sum reads the rows left.",
        source=r"""
import torch


def f(xs, hook):
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        out[i] = max(x, 0.0, key=hook)
    return out.sum()
""",
        scenario=r"""
def run():
    xs = [1.0, 2.0, 3.0, 4.0]

    def hook(v):
        if len(xs) > 2:
            xs.pop()
        return v

    return f(xs, hook)
""",
    ),
    Case(
        "sequence_shrunk_by_a_traced_callable",
        why="`torch.fx.symbolic_trace(hook)` runs `hook`, which pops the enumerated list: a "
        "torch subpackage that runs what it is handed is no quiet call.",
        source=r"""
import torch


def f(xs, hook):
    out = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        torch.fx.symbolic_trace(hook)
        out[i] = x
    return out.sum()
""",
        scenario=r"""
def run():
    xs = [1.0, 2.0, 3.0, 4.0]

    def hook(v):
        if len(xs) > 2:
            xs.pop()
        return v

    return f(xs, hook)
""",
    ),
]

NOT_READS = [
    Case(
        "range_of_a_closure_size_in_a_nested_function",
        why="`n` is a cell of the enclosing function: `torch.zeros(n)` and `range(n)` in `g` "
        "read the same value unless code on the way rebinds it, so the zero-trip path is no "
        "read of a buffer with rows (unproven, not the read of a loop over another size).",
        source=r"""
import torch


def f(n, xs):
    def g():
        out = torch.zeros(n)  # <- site
        for i in range(n):
            out[i] = xs[i]
        return out.sum()

    return g()
""",
        scenario=r"""
def run():
    return f(3, torch.ones(3)), f(0, torch.ones(0))
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


@pytest.mark.parametrize("case", params(NOT_READS))
def test_never_read_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    check_never_read(case, tmp_path)
