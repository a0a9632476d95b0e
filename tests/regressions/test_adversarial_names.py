"""Lookups by a computed name judged by their names (analysis/lookup_names.py) where the names
are not what the syntax was read to show, and methods of the class replaced where the any-order
pass (analysis/lifecycle_anyorder.py) did not look.

The any-order program inlines `self.m()` as the class's own def of `m`. A store of another
callable under the method's name, on an instance or on the class, makes the call run that
instead: a write the program sees in `m` may never happen. The `method_replaced_*` cases replace
the method that writes the buffer, by a lookup whose names the syntax shows (`setattr(obj, name,
f)` for `name` in `("_fill",)`: none of them an attribute that holds the buffer, but a method's
name) or by a plain store in another file of the tree; the buffer is read unwritten. The others
reach the object's namespace, or a reflective function, under a name the reflection pass did not
count: a literal dunder, a module's attribute, an import under another name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_GRID = r"""
import torch


class Grid:
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def step(self):
        self._fill()
        return self.cells * 2

    def _fill(self):
        self.cells.fill_(1.0)
"""

CASES = [
    Case(
        "method_replaced_on_the_instance_by_a_literal_name",
        why="`setattr(obj, name, f)` with `name` in `('_fill',)` looks up no attribute that "
        "holds the buffer, but replaces the method `step` calls to write it: `step` reads it "
        "unwritten.",
        source=_GRID
        + r"""

def patch(obj):
    for name in ("_fill",):
        setattr(obj, name, lambda: None)
    return obj
""",
        scenario="def run():\n    return patch(Grid(3)).step()\n",
    ),
    Case(
        "method_replaced_on_the_class_by_a_literal_name",
        why="`setattr(cls, name, f)` on the class object Grid, `name` in `('_fill',)`: every "
        "Grid's `self._fill()` then does nothing, and `step` reads the buffer unwritten.",
        source=_GRID
        + r"""

def patch(cls):
    for name in ("_fill",):
        setattr(cls, name, lambda self: None)
""",
        scenario="def run():\n    patch(Grid)\n    return Grid(3).step()\n",
    ),
    Case(
        "method_replaced_on_the_instance_in_another_file",
        why="another file of the tree stores `obj._fill = ...` on a Grid: `step`'s "
        "`self._fill()` runs the stored function, which writes nothing.",
        source=_GRID,
        modules=(
            (
                "grid_patcher",
                "import method_replaced_on_the_instance_in_another_file as m\n\n\n"
                "def patched(n):\n    g = m.Grid(n)\n    g._fill = lambda: None\n    return g\n",
            ),
        ),
        scenario=r"""
def run():
    from grid_patcher import patched

    return patched(3).step()
""",
    ),
    Case(
        "lookup_in_a_comprehension_target_after_a_rebinding_generator",
        why="`getattr(obj, n)` sits in the target of the second generator, where `n` is the "
        "first generator's element of `keys` (the caller passes 'cells'), not the function's "
        "local `n = 'host'`: it reads the buffer unwritten.",
        source=_GRID
        + r"""

def total(obj, keys):
    n = "host"
    seen = {}
    [0 for n in keys for seen[float(getattr(obj, n).sum())] in (1,)]
    return torch.tensor(list(seen))
""",
        scenario='def run():\n    return total(Grid(3), ["ce" + "lls"])\n',
    ),
    Case(
        "namespace_fetched_by_a_literal_dunder_name",
        why="`getattr(obj, '__dict__')` is `obj.__dict__` under a literal name: its values "
        "are every attribute of a Grid, the buffer among them, read unwritten.",
        source=_GRID
        + r"""

def total(obj):
    return sum(v.sum() for v in getattr(obj, "__dict__").values())
""",
        scenario="def run():\n    return total(Grid(3))\n",
    ),
    Case(
        "getattr_fetched_from_the_builtins_module",
        why="`getattr(builtins, 'get' + 'attr')` is the builtin `getattr` taken as a value: a "
        "module's attribute may be a reflective function, and the call through it reads the "
        "buffer by a computed name.",
        source="import builtins\n"
        + _GRID
        + r"""

def peek(obj, name):
    fetch = getattr(builtins, "get" + "attr")
    return fetch(obj, name).sum()
""",
        scenario='def run():\n    return peek(Grid(3), "ce" + "lls")\n',
    ),
    Case(
        "getattr_read_from_the_builtins_namespace",
        why="`vars(builtins)['get' + 'attr']` is the builtin `getattr`: reading a module's "
        "namespace hands out its reflective functions.",
        source="import builtins\n"
        + _GRID
        + r"""

def peek(obj, name):
    fetch = vars(builtins)["get" + "attr"]
    return fetch(obj, name).sum()
""",
        scenario='def run():\n    return peek(Grid(3), "ce" + "lls")\n',
    ),
    Case(
        "getattr_imported_under_another_name",
        why="`from builtins import getattr as fetch`: `fetch(obj, name)` is `getattr` by a "
        "computed name under a name the reflection pass does not know.",
        source="from builtins import getattr as fetch\n"
        + _GRID
        + r"""

def peek(obj, name):
    return fetch(obj, name).sum()
""",
        scenario='def run():\n    return peek(Grid(3), "ce" + "lls")\n',
    ),
    Case(
        "class_made_by_a_metaclass_of_the_tree_with_a_computed_name",
        why="`Maker(label, (Grid,), ns)`, Maker a class deriving from `type`, makes a subclass "
        "of Grid whose `_fill` (bound in `ns` under a computed key) does nothing: its `step` "
        "reads the buffer unwritten. The call has no literal name and its callee is no `...Meta`.",
        source=_GRID,
        modules=(
            (
                "class_maker",
                r"""
import class_made_by_a_metaclass_of_the_tree_with_a_computed_name as m


class Maker(type):
    pass


def skip(self):
    return None


def lazy(n, label):
    ns = {}
    ns["_" + "fill"] = skip
    kind = Maker(label, (m.Grid,), ns)
    return kind(n)
""",
            ),
        ),
        scenario=r"""
def run():
    from class_maker import lazy

    return lazy(3, "Lazy").step()
""",
    ),
    Case(
        "attrgetter_taken_as_a_value",
        why="`make = operator.attrgetter` takes the function as a value: `make(name)(obj)` "
        "reads the attribute the caller names ('ce' + 'lls'), the buffer, unwritten.",
        source="import operator\n"
        + _GRID
        + r"""

def peek(obj, name):
    make = operator.attrgetter
    return make(name)(obj).sum()
""",
        scenario='def run():\n    return peek(Grid(3), "ce" + "lls")\n',
    ),
    Case(
        "class_rebased_onto_the_class_after_its_statement",
        why="`Lazy.__bases__ = (Grid,)` makes Lazy, whose statement derives from Base only, a "
        "subclass of Grid after the fact: its `_fill` overrides Grid's, and `step` on a Lazy "
        "reads the buffer unwritten.",
        source=_GRID
        + r"""

class Base:
    pass


class Lazy(Base):
    def _fill(self):
        return None


def rebase(n):
    Lazy.__bases__ = (Grid,)
    return Lazy(n)
""",
        scenario="def run():\n    return rebase(3).step()\n",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
