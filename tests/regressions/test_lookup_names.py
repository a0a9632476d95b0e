"""Lookups by a computed name whose possible names the syntax shows (analysis/lookup_names.py),
and classes made at run time judged by their MRO (anyorder_reach.py, `MAKE`).

"fix" cases: every lookup by a computed name may look up only names that are none of the
attributes that may hold the buffer (a loop over a literal display, `"a b".split()`, a dict
display's keys, an `if`-expression of literals, an f-string whose literal head no such attribute
starts with), and every class made at run time has bases that are not the class nor derive from
it: the buffer is `safe`. The near misses each let a lookup reach the buffer after all (the
literal includes its name, the loop variable is rebound, a concatenation or a prefix spells it,
`vars()` lists it, a dunder hands out the whole object) or make a class that is one (a base that
is the class or derives from it): none may be `safe`.
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

_HEAD = "import torch\n"


def _near(name: str, why: str, body: str, scenario: str) -> Case:
    """A near miss: `body` (after Grid) reads the buffer unwritten through a lookup."""
    return Case(name, why=why, source=_HEAD + _GRID + "\n\n" + body, scenario=scenario)


CASES = [
    Case(
        "lookups_over_literal_names_that_miss_the_buffer",
        kind="fix",
        why="every lookup on the parameter `obj` (any object, a Grid too) may look up only "
        "'host', 'port', 'scale' or a name starting 'cfg_': never `cells`; every method of Grid "
        "writes the buffer before reading it.",
        source=_HEAD
        + r"""

class Settings:
    def __init__(self):
        self.host = 1.0
        self.port = 2.0
        self.scale = 3.0
        self.cfg_a = 4.0


def describe(obj):
    parts = [getattr(obj, name) for name in ("host", "port")]
    for key in "scale port".split():
        parts.append(getattr(obj, key))
    for k, _ in {"host": 1, "port": 2}.items():
        parts.append(getattr(obj, k))
    attr = "scale" if len(parts) > 2 else "port"
    parts.append(getattr(obj, attr))
    parts.append(getattr(obj, f"cfg_{'a' if parts else 'b'}"))
    return parts


def configure(obj, value):
    for name in ("host", "port"):
        setattr(obj, name, value)
    return obj
"""
        + _GRID,
        scenario=r"""
def run():
    s = configure(Settings(), 5.0)
    return torch.tensor(describe(s)), Grid(3).fill(torch.arange(3.0))
""",
    ),
    Case(
        "class_made_from_a_base_of_the_class",
        kind="fix",
        why="`type(name, (Base,), ns)` makes a class whose MRO is itself, Base, object: its "
        "instances are no Grid (Grid derives from Base, not the other way); Grid's methods write "
        "the buffer before reading it.",
        source=r"""
import torch


class Base:
    def label(self):
        return 1.0


def make_kind(name):
    return type(name, (Base,), {"__module__": "kinds"})


class Grid(Base):
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
""",
        scenario=r"""
def run():
    return Grid(3).fill(torch.arange(3.0)), torch.tensor(make_kind("K")().label())
""",
    ),
    Case(
        "class_made_from_a_base_a_subclass_shares",
        kind="fix",
        why="`type(name, (StubBase,), ns)`: a subclass of Grid (`Both`) also derives from "
        "StubBase, but the made class's MRO is itself, StubBase, object: never a Grid (a "
        "subclass of a base is no ancestor of the made class).",
        source=r"""
import torch


class StubBase:
    pass


def make_stub(name):
    return type(name, (StubBase,), {"__module__": "stubs"})
"""
        + _GRID
        + r"""

class Both(Grid, StubBase):
    pass
""",
        scenario=r"""
def run():
    made = make_stub("S")()
    return Both(2).fill(torch.ones(2)), Grid(3).fill(torch.arange(3.0)), torch.tensor(len(type(made).__name__))
""",
    ),
    _near(
        "loop_over_literal_names_including_the_buffer",
        "the literal names include 'cells': `getattr(obj, name)` on a fresh Grid reads the "
        "buffer unwritten.",
        r"""
def total(obj):
    return sum(getattr(obj, name).sum() for name in ("cells", "other") if hasattr(obj, name))
""",
        "def run():\n    return total(Grid(3))\n",
    ),
    _near(
        "loop_variable_rebound_in_the_loop_body",
        "the loop variable is rebound to the parameter `key` in the body: it may be 'cells'.",
        r"""
def total(obj, key):
    out = 0
    for name in ("host",):
        name = key
        out = out + getattr(obj, name).sum()
    return out
""",
        "def run():\n    return total(Grid(3), 'cells')\n",
    ),
    _near(
        "concatenated_literals_spell_the_buffer",
        "`'ce' + 'lls'` is 'cells': the lookup reads the buffer unwritten.",
        r"""
def peek(obj):
    return getattr(obj, "ce" + "lls").sum()
""",
        "def run():\n    return peek(Grid(3))\n",
    ),
    _near(
        "fstring_prefix_matches_the_buffer",
        "`f'ce{rest}'` may be any name starting 'ce': 'cells' among them.",
        r"""
def peek(obj, rest):
    return getattr(obj, f"ce{rest}").sum()
""",
        "def run():\n    return peek(Grid(3), 'lls')\n",
    ),
    _near(
        "names_iterated_from_vars",
        "`vars(obj)` lists every attribute of the instance: 'cells' among them.",
        r"""
def total(obj):
    return sum(getattr(obj, k).sum() for k in vars(obj) if k.startswith("c"))
""",
        "def run():\n    return total(Grid(3))\n",
    ),
    _near(
        "literal_dunder_hands_out_the_namespace",
        "the literal names are only '__dict__', but it is the instance's whole namespace: its "
        "'cells' entry is read unwritten.",
        r"""
def total(obj):
    for name in ("__dict__",):
        return getattr(obj, name)["cells"].sum()
""",
        "def run():\n    return total(Grid(3))\n",
    ),
    _near(
        "comprehension_variable_rebound_by_a_later_generator",
        "the second generator rebinds `n` to the elements of the parameter `keys`.",
        r"""
def total(obj, keys):
    return sum(getattr(obj, n).sum() for n in ("host",) for n in keys)
""",
        "def run():\n    return total(Grid(3), ['cells'])\n",
    ),
    _near(
        "class_made_from_the_class_itself",
        "`type('Lazy', (Grid,), ns)` is a Grid whose `fill` reads the buffer without writing it.",
        r"""
def lazy(n):
    kind = type("Lazy", (Grid,), {"fill": lambda self, x: self.cells * 2})
    return kind(n)
""",
        "def run():\n    return lazy(3).fill(torch.ones(3))\n",
    ),
    _near(
        "class_made_from_a_subclass_of_the_class",
        "`Sub` derives from Grid, so `type('Lazy', (Sub,), ns)` has Grid in its MRO: a Grid "
        "whose `fill` reads the buffer without writing it.",
        r"""
class Sub(Grid):
    pass


def lazy(n):
    kind = type("Lazy", (Sub,), {"fill": lambda self, x: self.cells * 2})
    return kind(n)
""",
        "def run():\n    return lazy(3).fill(torch.ones(3))\n",
    ),
    Case(
        "class_made_from_a_name_rebound_to_the_class",
        why="`Stub` names a class statement, but the module rebinds it to Grid before "
        "`type('Lazy', (Stub,), ns)` runs: the made class is a Grid whose `_fill` does nothing, "
        "and `step` reads the buffer unwritten.",
        source=r"""
import torch


class Stub:
    pass


class Grid:
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def step(self):
        self._fill()
        return self.cells * 2

    def _fill(self):
        self.cells.fill_(1.0)


Stub = Grid


def lazy(n):
    kind = type("Lazy", (Stub,), {"_fill": lambda self: None})
    return kind(n)
""",
        scenario="def run():\n    return lazy(3).step()\n",
    ),
    Case(
        "returned_method_beside_lookups_of_other_names",
        kind="fix",
        why="`getattr(obj, name)` looks up only 'host' or 'port', never `_alloc`: the only call "
        "of `_alloc` is `self._alloc(n)`, which fills the buffer.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


class Server:
    host = 1.0
    port = 2.0


def settings(obj):
    return [getattr(obj, name) for name in ("host", "port")]
""",
        scenario="def run():\n    return Eng().run(3), torch.tensor(settings(Server()))\n",
    ),
    Case(
        "returned_method_fetched_by_a_prefix",
        why="`f'_al{rest}'` may be '_alloc': the lookup fetches the method and reads its result "
        "unwritten.",
        source=r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def run(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b


def peek(obj, rest, n):
    return getattr(obj, f"_al{rest}")(n).sum()
""",
        scenario="def run():\n    e = Eng()\n    return e.run(2), peek(e, 'loc', 3)\n",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
