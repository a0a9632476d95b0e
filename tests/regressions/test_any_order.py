"""Buffers stored on `self` in `__init__` of a class no lifecycle model matches, judged under
"after `__init__`, any method may run, any number of times, in any order"
(analysis/lifecycle_anyorder.py), with the closed world over the scanned tree.

"fix" cases: every method writes the buffer in full before reading it: `safe`, and the program
as `zeroopt apply` rewrites it behaves the same. `unsafe` cases: a method reads it before any
write and no code writes it. The rest are near misses, each a way the buffer is reached other
than by the class's own methods in some order, or read before a write another method makes:
none may be `safe` (and where another method writes it, none may be `unsafe`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_case, params

UNSAFE_ONLY = frozenset({Verdict.UNSAFE})
UNPROVEN_ONLY = frozenset({Verdict.UNPROVEN})

CASES = [
    Case(
        "every_method_fills_before_reading",
        kind="fix",
        why="`step` copies into the whole buffer before reading it; `size` never names it: in "
        "any order of the methods the zeros are never seen.",
        source=r"""
import torch


class Stepper:
    def __init__(self, n):
        self.buf = torch.zeros(n)  # <- site
        self.n = n

    def step(self, x):
        self.buf.copy_(x)
        return self.buf * 2

    def size(self):
        return self.n
""",
        scenario=r"""
def run():
    s = Stepper(3)
    return s.step(torch.arange(3.0)), s.step(torch.ones(3)), torch.tensor(s.size())
""",
    ),
    Case(
        "two_methods_each_fill_first_one_through_a_helper",
        kind="fix",
        why="`a` fills the buffer itself, `b` through `self._fill()` (inlined): each writes all "
        "of it before its read, whichever runs first.",
        source=r"""
import torch


class Pair:
    def __init__(self, n):
        self.scratch = torch.zeros(n, 2)  # <- site

    def _fill(self, v):
        self.scratch.fill_(v)

    def a(self):
        self.scratch[:] = 1.0
        return self.scratch.sum()

    def b(self, v):
        self._fill(v)
        return self.scratch.clone()
""",
        scenario=r"""
def run():
    p = Pair(4)
    return p.b(2.0), p.a(), p.b(3.0)
""",
    ),
    Case(
        "module_subclass_fills_in_forward",
        kind="fix",
        why="a torch.nn.Module whose `forward` writes the scratch buffer in full before reading "
        "it; nn.Module keeps a plain tensor attribute in the instance `__dict__` and its own "
        "code never names it.",
        source=r"""
import torch


class Scaler(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.tmp = torch.zeros(n)  # <- site

    def forward(self, x):
        self.tmp.copy_(x * 2.0)
        return self.tmp + 1
""",
        scenario=r"""
def run():
    m = Scaler(3)
    return m(torch.arange(3.0)), m(torch.ones(3))
""",
    ),
    Case(
        "subclass_overrides_a_method_no_method_calls_and_a_shape_property",
        kind="fix",
        why="Sub overrides `describe`, which no method calls through `self`: the override is "
        "one more method that may run at any time and names no buffer. The property `width` "
        "reads only the shape (metadata). `run` writes all of it before reading it.",
        source=r"""
import torch


class Runner:
    def __init__(self, n):
        self.out = torch.zeros(n)  # <- site

    @property
    def width(self):
        return self.out.shape[0]

    def run(self, x):
        self.out.copy_(x * 3)
        return self.out - 1

    def describe(self):
        return "runner"


class FastRunner(Runner):
    def describe(self):
        return "fast"
""",
        scenario=r"""
def run():
    r = FastRunner(3)
    return r.run(torch.ones(3)), torch.tensor(r.width), r.run(torch.arange(3.0))
""",
    ),
    Case(
        "accumulator_read_first",
        expect=UNSAFE_ONLY,
        why="`add` reads the accumulator (`+=`) before anything writes it, and nothing else "
        "writes it: right after `__init__` it sums into the zeros.",
        source=r"""
import torch


class Summer:
    def __init__(self, n):
        self.total = torch.zeros(n)  # <- site

    def add(self, x):
        self.total += x
        return self.total.clone()
""",
        scenario=r"""
def run():
    return Summer(3).add(torch.ones(3))
""",
    ),
    Case(
        "read_by_a_method_nothing_writes",
        expect=UNSAFE_ONLY,
        why="no method writes the table; `lookup` reads rows of it: the zeros are its content.",
        source=r"""
import torch


class Table:
    def __init__(self, n):
        self.rows = torch.zeros(n, 4)  # <- site
        self.count = n

    def lookup(self, i):
        return self.rows[i].sum()

    def __len__(self):
        return self.count
""",
        scenario=r"""
def run():
    return Table(3).lookup(1)
""",
    ),
    Case(
        "one_method_reads_first_another_writes",
        expect=UNPROVEN_ONLY,
        why="`load` writes it in full, `use` reads it: a runner that calls `use` first reads "
        "the zeros, one that always calls `load` first does not. Which one runs first is not "
        "known: `unproven`, never `unsafe` (a write in another method joins at the loop head).",
        source=r"""
import torch


class Loader:
    def __init__(self, n):
        self.stash = torch.zeros(n)  # <- site

    def use(self):
        return self.stash.sum()

    def load(self, x):
        self.stash.copy_(x)
""",
        scenario=r"""
def run():
    return Loader(3).use()
""",
    ),
    Case(
        "partial_write_then_whole_read",
        why="`put` writes the first two elements only, `get` reads all of them: element 2 is "
        "never written by any code.",
        source=r"""
import torch


class Partial:
    def __init__(self):
        self.slots = torch.zeros(4)  # <- site

    def get(self):
        self.slots[:2] = 1.0
        return self.slots.sum()
""",
        scenario=r"""
def run():
    return Partial().get()
""",
    ),
    Case(
        "name_read_by_another_class_of_the_module",
        why="`Reader.peek` reads `holder.cache` of a Holder before any method of Holder wrote "
        "it: an attribute access by another receiver.",
        source=r"""
import torch


class Holder:
    def __init__(self, n):
        self.cache = torch.zeros(n)  # <- site

    def refresh(self, x):
        self.cache.copy_(x)
        return self.cache + 1


class Reader:
    def peek(self, holder):
        return holder.cache.sum()
""",
        scenario=r"""
def run():
    return Reader().peek(Holder(3))
""",
    ),
    Case(
        "name_read_in_another_file",
        why="another module of the tree reads `c.cache2` (any receiver): the closed world sees "
        "it and gives up.",
        source=r"""
import torch


class Holder2:
    def __init__(self, n):
        self.cache2 = torch.zeros(n)  # <- site

    def refresh(self, x):
        self.cache2.copy_(x)
        return self.cache2 + 1
""",
        scenario=r"""
from any_order_peeker import peek


def run():
    return peek(Holder2(3))
""",
        modules=(
            (
                "any_order_peeker",
                r"""
def peek(c):
    return c.cache2.sum()
""",
            ),
        ),
    ),
    Case(
        "alias_returned_by_a_method",
        why="`get` binds the buffer to a local and returns it: the caller reads it unwritten.",
        source=r"""
import torch


class Giver:
    def __init__(self, n):
        self.store = torch.zeros(n)  # <- site

    def fill(self, x):
        self.store.copy_(x)
        return self.store.sum()

    def get(self):
        b = self.store
        return b
""",
        scenario=r"""
def run():
    return Giver(3).get() + 1
""",
    ),
    Case(
        "alias_stored_on_another_attribute",
        why="`keep` stores the buffer as `self.kept`, `peek` reads `self.kept` before any "
        "write of the buffer.",
        source=r"""
import torch


class Keeper:
    def __init__(self, n):
        self.buf3 = torch.zeros(n)  # <- site
        self.kept = None

    def fill(self, x):
        self.buf3.copy_(x)
        return self.buf3.sum()

    def keep(self):
        self.kept = self.buf3

    def peek(self):
        return self.kept.sum()
""",
        scenario=r"""
def run():
    k = Keeper(3)
    k.keep()
    return k.peek()
""",
    ),
    Case(
        "property_returns_a_view",
        why="the property `head` hands out a view of the buffer, read by the caller unwritten.",
        source=r"""
import torch


class Viewer:
    def __init__(self, n):
        self.body = torch.zeros(n)  # <- site

    def fill(self, x):
        self.body.copy_(x)
        return self.body.sum()

    @property
    def head(self):
        return self.body[:2]
""",
        scenario=r"""
def run():
    return Viewer(4).head * 2
""",
    ),
    Case(
        "getattr_with_a_computed_name",
        why="`peek` reads an attribute whose name is computed at run time: it may be the buffer.",
        source=r"""
import torch


class Named:
    def __init__(self, n):
        self.hidden = torch.zeros(n)  # <- site

    def fill(self, x):
        self.hidden.copy_(x)
        return self.hidden.sum()


def peek(obj, name):
    return getattr(obj, name).sum()
""",
        scenario=r"""
def run():
    return peek(Named(3), "hid" + "den")
""",
    ),
    Case(
        "subclass_overrides_the_writing_helper",
        why="`step` writes through `self._fill()`; a subclass overrides `_fill` with one that "
        "writes nothing: on a Sub, `step` reads the zeros.",
        source=r"""
import torch


class Base5:
    def __init__(self, n):
        self.work = torch.zeros(n)  # <- site

    def _fill(self):
        self.work.fill_(3.0)

    def step(self):
        self._fill()
        return self.work.sum()


class Sub5(Base5):
    def _fill(self):
        pass
""",
        scenario=r"""
def run():
    return Sub5(3).step()
""",
    ),
    Case(
        "lambda_captures_self",
        why="`__init__` keeps a lambda that reads the buffer; it may run at any time, before "
        "any write.",
        source=r"""
import torch


class Callback:
    def __init__(self, n):
        self.val = torch.zeros(n)  # <- site
        self.report = lambda: self.val.sum()

    def fill(self, x):
        self.val.copy_(x)
        return self.val * 2
""",
        scenario=r"""
def run():
    return Callback(3).report()
""",
    ),
    Case(
        "base_class_method_reads_it",
        why="a method of the base class reads the buffer the subclass allocates: code of the "
        "object that is not the class's own.",
        source=r"""
import torch


class Peeking:
    def peek(self):
        return self.grid.sum()


class Gridded(Peeking):
    def __init__(self, n):
        self.grid = torch.zeros(n)  # <- site

    def fill(self, x):
        self.grid.copy_(x)
        return self.grid + 1
""",
        scenario=r"""
def run():
    return Gridded(3).peek()
""",
    ),
    Case(
        "deepcopy_of_self",
        why="`snapshot` deep-copies the object, buffer included; the caller reads the copy's "
        "tensors through `vars()` without naming the attribute.",
        source=r"""
import copy

import torch


class Snap:
    def __init__(self, n):
        self.state = torch.zeros(n)  # <- site

    def fill(self, x):
        self.state.copy_(x)
        return self.state.sum()

    def snapshot(self):
        return copy.deepcopy(self)
""",
        scenario=r"""
def run():
    snap = Snap(3).snapshot()
    return [v.sum() for v in snap.__dict__.values() if torch.is_tensor(v)]
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
