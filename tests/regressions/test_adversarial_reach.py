"""Counterexamples to the any-order pass's reach of reflection (analysis/anyorder_reach.py) and
bases of the tree (analysis/anyorder_bases.py): ways a receiver the pass calls unrelated to the
judged class (`self` of another class, a local made by `K()`, a class object) holds, or hands
out, an instance of it after all, and a base that is not the class statement it names. Each
case executes: the zeros are read before any write.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_GRID = r"""
class Grid:
    def __init__(self, n=3):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
"""

_PEEK = r"""

class Peek:
    def peek(self, name):
        return getattr(self, name).sum()
"""

_DUMPER = r"""

class Dumper:
    def dump(self, name):
        return getattr(self, name).sum()
"""

CASES = [
    Case(
        "class_of_an_instance_reassigned",
        why="`g.__class__ = Peek` turns a Grid into a Peek: `Peek.peek`'s `self`, of a class "
        "unrelated to Grid by name, is the Grid, and `getattr` reads its buffer unwritten.",
        source="import torch\n"
        + _GRID
        + _PEEK
        + r"""

def convert(g):
    g.__class__ = Peek
    return g
""",
        scenario=r"""
def run():
    return convert(Grid(3)).peek("ce" + "lls")
""",
    ),
    Case(
        "class_made_by_calling_a_metaclass",
        why="`abc.ABCMeta(name, (Grid, Peek), ns)` makes a class deriving from both, like "
        "`type(...)` does: `Peek.peek`'s `self` may be a Grid.",
        source="import abc\n\nimport torch\n"
        + _GRID
        + _PEEK
        + r"""

def both():
    return abc.ABCMeta("Both", (Grid, Peek), {})
""",
        scenario=r"""
def run():
    return both()(3).peek("ce" + "lls")
""",
    ),
    Case(
        "plain_class_name_rebound_through_globals",
        why="`globals()['Opts'] = Grid` rebinds the class name without a statement: `Opts()` "
        "makes a Grid, and `getattr` on it reads the fresh buffer.",
        source="import torch\n"
        + _GRID
        + r"""

class Opts:
    pass


def peek(name):
    o = Opts()
    return getattr(o, name).sum()


def swap():
    globals()["Opts"] = Grid
""",
        scenario=r"""
def run():
    swap()
    return peek("ce" + "lls")
""",
    ),
    Case(
        "plain_class_name_rebound_from_another_module",
        why="another module of the tree stores `m.Opts = m.Grid`: `Opts()` in this module then "
        "makes a Grid, and `getattr` on it reads the fresh buffer.",
        source="import torch\n"
        + _GRID
        + r"""

class Opts:
    pass


def peek(name):
    o = Opts()
    return getattr(o, name).sum()
""",
        scenario=r"""
def run():
    import swapper

    swapper.swap()
    return peek("ce" + "lls")
""",
        modules=(
            (
                "swapper",
                "import plain_class_name_rebound_from_another_module as m\n\n\n"
                "def swap():\n    m.Opts = m.Grid\n",
            ),
        ),
    ),
    Case(
        "instance_dict_through_the_class_dict_descriptor",
        why="`Grid.__dict__['__dict__']` is the descriptor of every Grid's own `__dict__`: a "
        "class object's namespace hands out instance state, and `[name]` reads the buffer.",
        source="import torch\n"
        + _GRID
        + r"""

def peek(g, name):
    return Grid.__dict__["__dict__"].__get__(g, Grid)[name].sum()
""",
        scenario=r"""
def run():
    return peek(Grid(3), "ce" + "lls")
""",
    ),
    Case(
        "function_of_a_bound_method_called_with_another_self",
        why="`Dumper().dump.__func__` is the plain function: called with a Grid, its "
        "`getattr(self, name)` reads the buffer (no class object is named).",
        source="import torch\n"
        + _GRID
        + _DUMPER
        + r"""

def run_dump(g):
    return Dumper().dump.__func__(g, "ce" + "lls")
""",
        scenario=r"""
def run():
    return run_dump(Grid(3))
""",
    ),
    Case(
        "function_of_a_bound_method_bound_to_another_object",
        why="`types.MethodType(d.dump.__func__, g)` binds Dumper's method to a Grid.",
        source="import types\n\nimport torch\n"
        + _GRID
        + _DUMPER
        + r"""

def run_dump(g):
    return types.MethodType(Dumper().dump.__func__, g)("ce" + "lls")
""",
        scenario=r"""
def run():
    return run_dump(Grid(3))
""",
    ),
    Case(
        "method_function_read_statically",
        why="`inspect.getattr_static(Peek(), 'peek')` is the plain function of the class, "
        "taken without naming the class: called with a Grid, it reads the buffer.",
        source="import inspect\n\nimport torch\n"
        + _GRID
        + _PEEK
        + r"""

def go(g):
    return inspect.getattr_static(Peek(), "peek")(g, "ce" + "lls")
""",
        scenario=r"""
def run():
    return go(Grid(3))
""",
    ),
    Case(
        "class_made_by_the_class_of_a_class",
        why="`Grid.__class__` is `type`: called with a name, `(Grid, Peek)` and a namespace it "
        "makes a class deriving from both, and `Peek.peek`'s `self` is a Grid.",
        source="import torch\n"
        + _GRID
        + _PEEK
        + r"""

def both():
    return Grid.__class__("Both", (Grid, Peek), dict())
""",
        scenario=r"""
def run():
    return both()(3).peek("ce" + "lls")
""",
    ),
    Case(
        "bases_of_a_class_replaced",
        why="`Both.__bases__ = (Grid, Peek)` makes a class that names only Peek derive from "
        "Grid: `Peek.peek`'s `self` is a Grid.",
        source="import torch\n"
        + _GRID
        + _PEEK
        + r"""

class Both(Peek):
    pass


Both.__bases__ = (Grid, Peek)
""",
        scenario=r"""
def run():
    return Both(3).peek("ce" + "lls")
""",
    ),
    Case(
        "imported_base_rebound_after_its_class_statement",
        why="`basemod` rebinds `Base = wrap(Base)` after its class statement: the Base that Grid "
        "derives from is `Wrapped`, whose `__init_subclass__` replaces Grid's `_fill` with a "
        "method that writes nothing, so `step` reads the zeros.",
        source=r"""
import torch

from basemod import Base


class Grid(Base):
    def __init__(self, n=3):
        super().__init__()
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
        modules=(
            (
                "basemod",
                r"""
class Base:
    def __init__(self):
        self.k = 0


def wrap(b):
    class Wrapped(b):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            cls._fill = cls._skip

        def _skip(self):
            return None

    return Wrapped


Base = wrap(Base)
""",
            ),
        ),
    ),
    Case(
        "builtins_taken_through_their_module",
        why="`builtins.getattr(g, name)` and `builtins.vars(g)` are the builtins called through "
        "their module: `g` may be a Grid, whose buffer they read unwritten.",
        source=r"""
import builtins

import torch
"""
        + _GRID
        + r"""

def peek(g, name):
    return builtins.getattr(g, name).sum() + builtins.vars(g)[name].sum()
""",
        scenario=r"""
def run():
    return peek(Grid(3), "ce" + "lls")
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
