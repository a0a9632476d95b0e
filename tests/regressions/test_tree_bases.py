"""Base classes of the tree in the any-order pass (analysis/anyorder_bases.py): a base whose
code never names the buffer, never hands `self` on, and touches on `self` only its own methods
and attributes is code that may run at any time without reaching the buffer. "fix" cases: such
bases, the buffer `safe`. Near misses: a base that reaches the buffer all the same, through a
base of its own, a property setter that takes the buffer in, or a hook that rewrites the class.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

CASES = [
    Case(
        "bases_of_the_tree_that_touch_only_their_own_attributes",
        kind="fix",
        why="`Counter` and its base `Named` keep their own attributes and call only their own "
        "methods; every method of Grid fills the buffer before reading it.",
        source=r"""
from abc import ABC

import torch


class Named(ABC):
    label = "grid"

    def describe(self):
        return self.label


class Counter(Named):
    def __init__(self):
        self.calls = 0

    def tick(self):
        self.calls += 1
        return self.calls

    @staticmethod
    def zero():
        return 0


class Grid(Counter):
    def __init__(self, n):
        super().__init__()
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
""",
        scenario=r"""
def run():
    g = Grid(3)
    return torch.tensor(g.tick()), g.fill(torch.arange(3.0)), torch.tensor(len(g.describe()))
""",
    ),
    Case(
        "a_base_of_the_base_reads_the_buffer",
        why="`Root.peek`, two bases up, reads `self.cells` before any `fill`.",
        source=r"""
import torch


class Root:
    def peek(self):
        return self.cells.sum()


class Middle(Root):
    def tick(self):
        return 1


class Grid(Middle):
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
""",
        scenario=r"""
def run():
    return Grid(3).peek()
""",
    ),
    Case(
        "a_base_property_setter_takes_the_buffer",
        why="the base's `cells` setter stores the buffer under `_kept`, which `dump` reads "
        "before any `fill`: no method of Grid names `_kept`.",
        source=r"""
import torch


class Keeper:
    @property
    def cells(self):
        return self._kept

    @cells.setter
    def cells(self, v):
        self._kept = v

    def dump(self):
        return self._kept.sum()


class Grid(Keeper):
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
""",
        scenario=r"""
def run():
    return Grid(3).dump()
""",
    ),
    Case(
        "a_base_hook_rewrites_the_class",
        why="`__init_subclass__` replaces Grid's `_fill` with one that writes nothing: `step` "
        "then reads the zeros.",
        source=r"""
import torch


class Lazy:
    def __init_subclass__(cls):
        cls._fill = Lazy._skip

    def _skip(self):
        return None


class Grid(Lazy):
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def _fill(self):
        self.cells.fill_(1.0)

    def step(self):
        self._fill()
        return self.cells.sum()
""",
        scenario=r"""
def run():
    return Grid(3).step()
""",
    ),
    Case(
        "a_base_calls_a_method_a_subclass_overrides",
        why="`Base.run` calls `self.prepare()`; the subclass Sub of Grid overrides `prepare` "
        "with a read of the buffer, before any `fill`.",
        source=r"""
import torch


class Base:
    def prepare(self):
        return 0

    def run(self):
        return self.prepare()


class Grid(Base):
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2


class Sub(Grid):
    def prepare(self):
        return self.cells.sum()
""",
        scenario=r"""
def run():
    return Sub(3).run()
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
