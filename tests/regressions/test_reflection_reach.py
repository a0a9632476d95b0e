"""The reach of reflection in the any-order pass (analysis/anyorder_reach.py): a computed
`getattr`/`setattr`/`vars`/`__dict__`/copy can touch the buffer only where its receiver may hold
an instance of the class. "fix" cases: every reflective use runs on something that provably is
not one (a module, a class object, `self` of an unrelated class, a local made from an unrelated
class), and the buffer is `safe`. The near misses are each a way such a receiver does hold the
instance after all: none may be `safe`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_GRID = r"""
class Grid:
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
"""

CASES = [
    Case(
        "reflection_on_unrelated_receivers",
        kind="fix",
        why="`getattr(self, k)` runs on a Config (no class relates it to Grid), `getattr(math, "
        "k)` on a module, `setattr(opts, k, v)` on a local made by `Opts()`, `vars(Registry)` on "
        "a class object: none may be a Grid, and every method of Grid writes the buffer first.",
        source=r"""
import math

import torch


class Config:
    def __init__(self):
        self.scale = 2.0

    def get(self, key):
        return getattr(self, key)


class Opts:
    pass


class Registry:
    size = 3


def lookup(key):
    return getattr(math, key)


def options(pairs):
    opts = Opts()
    for k, v in pairs:
        setattr(opts, k, v)
    return opts


def registered():
    return sorted(k for k in vars(Registry) if not k.startswith("_"))
"""
        + _GRID,
        scenario=r"""
def run():
    g = Grid(3)
    out = g.fill(torch.arange(3.0) * Config().get("scale"))
    return out, torch.tensor(lookup("pi")), torch.tensor(options([("a", 1.0)]).a), torch.tensor(len(registered()))
""",
    ),
    Case(
        "getattr_on_self_in_a_subclass",
        why="`Dumping` derives from Grid: its `self` is a Grid, and `getattr(self, name)` may read "
        "the buffer before any `fill`.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Dumping(Grid):
    def dump(self, name):
        return getattr(self, name).sum()
""",
        scenario=r"""
def run():
    return Dumping(3).dump("ce" + "lls")
""",
    ),
    Case(
        "getattr_on_self_of_a_class_sharing_a_subclass",
        why="`Peek` and Grid are unrelated, but `Both(Grid, Peek)` is both: `Peek.peek`'s `self` "
        "may be a Both, whose buffer `getattr` reads unwritten.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Peek:
    def peek(self, name):
        return getattr(self, name).sum()


class Both(Grid, Peek):
    pass
""",
        scenario=r"""
def run():
    return Both(3).peek("ce" + "lls")
""",
    ),
    Case(
        "unrelated_method_called_through_its_class",
        why="`Dumper.dump(g, name)` runs `Dumper.dump` with a Grid as `self`: its `getattr(self, "
        "name)` reads the buffer.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Dumper:
    def dump(self, name):
        return getattr(self, name).sum()


def run_dump(g):
    return Dumper.dump(g, "ce" + "lls")
""",
        scenario=r"""
def run():
    return run_dump(Grid(3))
""",
    ),
    Case(
        "unrelated_method_taken_from_type_of_an_object",
        why="`type(d).dump(g, name)` takes the method from a class object the text does not "
        "name: `self` is a Grid.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Dumper:
    def dump(self, name):
        return getattr(self, name).sum()


def run_dump(d, g):
    return type(d).dump(g, "ce" + "lls")
""",
        scenario=r"""
def run():
    return run_dump(Dumper(), Grid(3))
""",
    ),
    Case(
        "method_fetched_from_a_class_by_a_computed_name",
        why="`getattr(type(d), m)` reads a class object's attribute by a computed name: the "
        "method it returns runs with a Grid as `self`.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Dumper:
    def dump(self, name):
        return getattr(self, name).sum()


def call(d, m, g):
    return getattr(type(d), m)(g, "ce" + "lls")
""",
        scenario=r"""
def run():
    return call(Dumper(), "du" + "mp", Grid(3))
""",
    ),
    Case(
        "self_rebound_in_an_unrelated_method",
        why="`self = other` makes the receiver a parameter of any type: the Grid passed in.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Dumper:
    def dump(self, other, name):
        self = other
        return getattr(self, name).sum()
""",
        scenario=r"""
def run():
    return Dumper().dump(Grid(3), "ce" + "lls")
""",
    ),
    Case(
        "staticmethod_whose_first_parameter_is_called_self",
        why="a staticmethod's first parameter is any value, whatever its name.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Dumper:
    @staticmethod
    def dump(self, name):
        return getattr(self, name).sum()
""",
        scenario=r"""
def run():
    return Dumper.dump(Grid(3), "ce" + "lls")
""",
    ),
    Case(
        "nested_function_shadows_self",
        why="the inner function's own parameter `self` is not the method's: it is the Grid.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Dumper:
    def dumper(self):
        def inner(self, name):
            return getattr(self, name).sum()

        return inner
""",
        scenario=r"""
def run():
    return Dumper().dumper()(Grid(3), "ce" + "lls")
""",
    ),
    Case(
        "local_made_from_the_class_itself",
        why="`g = Grid(n)` is a Grid: `vars(g)` hands its buffer out before any `fill`.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

def total(n):
    g = Grid(n)
    return sum(v.sum() for v in vars(g).values())
""",
        scenario=r"""
def run():
    return total(3)
""",
    ),
    Case(
        "module_object_replaced_by_an_instance",
        why="`sys.modules['grid_holder'] = Grid(3)` makes the 'module' `import_module` returns a "
        "Grid: `getattr(mod, name)` reads its buffer.",
        source=r"""
import importlib
import sys

import torch
"""
        + _GRID
        + r"""

def install():
    sys.modules["grid_holder"] = Grid(3)


def peek(name):
    return getattr(importlib.import_module("grid_holder"), name).sum()
""",
        scenario=r"""
def run():
    install()
    try:
        return peek("ce" + "lls")
    finally:
        del sys.modules["grid_holder"]
""",
    ),
    Case(
        "pickling_an_unrelated_self_holding_the_instance",
        why="`pickle.dumps(self)` of a Holder follows the Grid it holds: the bytes hold the "
        "buffer's contents.",
        source=r"""
import pickle

import torch
"""
        + _GRID
        + r"""

class Holder:
    def __init__(self, g):
        self.g = g

    def snap(self):
        return torch.frombuffer(bytearray(pickle.dumps(self)), dtype=torch.uint8)
""",
        scenario=r"""
def run():
    return Holder(Grid(3)).snap()
""",
    ),
Case(
        "same_attribute_name_on_unrelated_objects",
        kind="fix",
        why="`Other` keeps its own `cells` (`self.cells` in its methods, `o.cells` on a local "
        "made by `Other()`): objects of a class no class relates to Grid, never a Grid.",
        source=r"""
import torch


class Other:
    def __init__(self):
        self.cells = [1.0, 2.0]

    def total(self):
        return sum(self.cells)


def other_total():
    o = Other()
    o.cells = [3.0]
    return o.total() + len(o.cells)
"""
        + _GRID,
        scenario=r"""
def run():
    return Grid(3).fill(torch.ones(3)), torch.tensor(other_total())
""",
    ),
    Case(
        "same_attribute_name_in_another_file_on_unrelated_objects",
        kind="fix",
        why="another module of the tree names `.cells`, only on `self` of its own class and on a "
        "local made from it.",
        source=r"""
import torch
"""
        + _GRID,
        modules=(
            ("names_cells_elsewhere/__init__", ""),
            (
                "names_cells_elsewhere/other",
                r"""
class Other:
    def __init__(self):
        self.cells = [1.0]

    def count(self):
        return len(self.cells)


def make():
    o = Other()
    return o.cells
""",
            ),
        ),
        scenario=r"""
def run():
    return Grid(3).fill(torch.ones(3))
""",
    ),
    Case(
        "attribute_read_on_self_of_a_subclass",
        why="`Peeking` derives from Grid: `self.cells` there is the Grid's buffer, read before any "
        "`fill`.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Peeking(Grid):
    def peek(self):
        return self.cells.sum()
""",
        scenario=r"""
def run():
    return Peeking(3).peek()
""",
    ),
    Case(
        "attribute_read_by_an_unrelated_method_run_through_its_class",
        why="`Other.peek(g)` runs `Other.peek` with a Grid as `self`: `self.cells` is the buffer.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Other:
    def peek(self):
        return self.cells.sum()


def peek_grid(g):
    return Other.peek(g)
""",
        scenario=r"""
def run():
    return peek_grid(Grid(3))
""",
    ),
    Case(
        "attribute_read_on_a_local_made_from_the_class",
        why="`g = Grid(n)` is a Grid: `g.cells` reads the zeros.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

def first(n):
    g = Grid(n)
    return g.cells.sum()
""",
        scenario=r"""
def run():
    return first(3)
""",
    ),
    Case(
        "attribute_read_on_a_local_bound_twice",
        why="`o` is an Other, then the Grid passed in: `o.cells` reads the buffer.",
        source=r"""
import torch
"""
        + _GRID
        + r"""

class Other:
    cells = None


def peek(g):
    o = Other()
    o = g
    return o.cells.sum()
""",
        scenario=r"""
def run():
    return peek(Grid(3))
""",
    ),
    Case(
        "attribute_read_in_another_file_on_self_of_a_subclass",
        why="another module derives from Grid and reads `self.cells` before any `fill`.",
        source=r"""
import torch
"""
        + _GRID,
        modules=(
            ("reads_cells_elsewhere/__init__", ""),
            (
                "reads_cells_elsewhere/sub",
                r"""
import sys


def make(n):
    grid_cls = sys.modules["attribute_read_in_another_file_on_self_of_a_subclass"].Grid

    class Peeking(grid_cls):
        def peek(self):
            return self.cells.sum()

    return Peeking(n)
""",
            ),
        ),
        scenario=r"""
def run():
    from reads_cells_elsewhere.sub import make
    return make(3).peek()
""",
    ),
    Case(
        "class_made_at_run_time_from_the_class",
        why="`type(...)` over three lines makes a subclass of Filled whose `_fill` writes "
        "nothing: `step` on it reads the zeros.",
        source=r"""
import torch


class Filled:
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def _fill(self):
        self.cells.fill_(1.0)

    def step(self):
        self._fill()
        return self.cells.sum()


def make(n):
    lazy = type(
        "Lazy", (Filled,), {"_fill": lambda self: None}
    )
    return lazy(n)
""",
        scenario=r"""
def run():
    return make(3).step()
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
