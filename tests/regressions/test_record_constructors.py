"""Constructors of the tree's plain dataclasses (analysis/records.py, record_factories.py): a
buffer handed to `Meta(f=...)` or to `cls(f=...)` in a classmethod lives in the new object's
field, followed in the function and, returned as `return cls(f=buf)`, at the callers
(returned_slots.py). "fix" cases: the field is written in full before any read. Near misses:
each way construction may run other code with the argument (a subclass's `__post_init__` or
`__setattr__`, a class decorator wrapping `__init__`, a `classmethod` the module rebinds, the
undecorated function called with another class), each reading the zeros.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_case, params
from zeroopt.analysis.options import AnalysisOptions

CALLERS_CLOSED = AnalysisOptions(callers_closed=True)

# Cases whose `cls` needs the closed world are judged with the rest of a scanned tree.
_TREE = (("rc_other", "VALUE = 1\n"),)

_META = r"""
import torch
from dataclasses import dataclass, field


@dataclass
class Meta:
    a: torch.Tensor
    n: int = 0
    tags: list = field(default_factory=list)

    @classmethod
    def make(cls, n):
        m = cls(a=torch.zeros(n), n=n)  # <- site
        m.a.fill_(2.0)
        return m

    @staticmethod
    def width():
        return 4
"""

_FACTORY = r"""
import torch
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    lens: torch.Tensor
    n: int = 0

    @classmethod
    def allocate(cls, n):
        return cls(lens=torch.zeros(n, dtype=torch.int64), n=n)  # <- site

    @property
    def size(self):
        return self.n
"""

CASES = [
    Case(
        "classmethod_constructs_then_fills_the_field",
        kind="fix",
        why="`cls` is Meta (no class of the tree derives from it); the generated __init__ only "
        "stores, and `m.a.fill_` writes every element before `m.a` is read.",
        source=_META,
        scenario="def run():\n    return Meta.make(4).a * 3\n",
        modules=_TREE,
    ),
    Case(
        "classmethod_constructs_and_reads_the_field_first",
        expect=frozenset({Verdict.UNSAFE}),
        why="`m.a.sum()` reads the zeros the constructor stored before any write.",
        source=r"""
import torch
from dataclasses import dataclass


@dataclass
class Meta:
    a: torch.Tensor

    @classmethod
    def make(cls, n):
        m = cls(a=torch.zeros(n))  # <- site
        total = m.a.sum()
        m.a.fill_(1.0)
        return total
""",
        scenario="def run():\n    return Meta.make(4)\n",
        modules=_TREE,
    ),
    Case(
        "returned_record_field_filled_at_the_caller",
        kind="fix",
        why="`return cls(lens=...)` hands the caller a new Plan whose field `lens` is the "
        "buffer; the only caller fills it before reading it.",
        source=_FACTORY
        + r"""

def _use(n):
    p = Plan.allocate(n)
    p.lens.copy_(torch.arange(n))
    return p.lens * 2
""",
        scenario="def run():\n    return _use(5)\n",
        modules=_TREE,
        options=CALLERS_CLOSED,
    ),
    Case(
        "returned_record_field_read_at_the_caller",
        why="The caller reads `p.lens` before any write: the zeros are the value.",
        source=_FACTORY
        + r"""

def _use(n):
    p = Plan.allocate(n)
    return p.lens + 1
""",
        scenario="def run():\n    return _use(5)\n",
        modules=_TREE,
        options=CALLERS_CLOSED,
    ),
    Case(
        "returned_namespace_read_at_the_caller",
        why="`types.SimpleNamespace(a=...)` only stores its keywords; returned, the caller "
        "reads `ns.a` before any write.",
        source=r"""
import types

import torch


def _make(n):
    return types.SimpleNamespace(a=torch.zeros(n), n=n)  # <- site


def _use(n):
    ns = _make(n)
    total = ns.a.sum()
    ns.a.fill_(1.0)
    return total
""",
        scenario="def run():\n    return _use(4)\n",
    ),
    Case(
        "returned_namespace_filled_at_the_caller",
        kind="fix",
        why="The caller fills `ns.a` in full before reading it.",
        source=r"""
import types

import torch


def _make(n):
    return types.SimpleNamespace(a=torch.zeros(n), n=n)  # <- site


def _use(n):
    ns = _make(n)
    ns.a.fill_(1.0)
    return ns.a * 2
""",
        scenario="def run():\n    return _use(4)\n",
    ),
    Case(
        "subclass_post_init_reads_the_field",
        why="`Sub.make(4)` runs `make` with `cls` = Sub, whose `__post_init__` sums the zeros "
        "before `make` fills them: a subclass of the tree makes `cls` other than Meta.",
        source=_META
        + r"""

@dataclass
class Sub(Meta):
    def __post_init__(self):
        self.total = self.a.sum()
""",
        scenario="def run():\n    return Sub.make(4).total\n",
        modules=_TREE,
    ),
    Case(
        "subclass_in_another_module_overrides_setattr",
        why="Sub (another module of the tree) stores a running sum of every tensor assigned: "
        "`cls(a=...)` with `cls` = Sub reads the zeros.",
        source=_META,
        scenario="def run():\n    from rc_sub import Sub\n\n    return Sub.make(4).seen\n",
        modules=(
            (
                "rc_sub",
                "import torch\n\nfrom subclass_in_another_module_overrides_setattr "
                "import Meta\n\n\nclass Sub(Meta):\n    def __setattr__(self, k, v):\n"
                "        object.__setattr__(self, k, v)\n        if isinstance(v, torch.Tensor):\n"
                "            object.__setattr__(self, 'seen', v.sum())\n",
            ),
        ),
    ),
    Case(
        "class_decorator_wraps_init",
        why="`traced` wraps the generated __init__ with one that sums the field: two class "
        "decorators, so the constructor is not only the generated one.",
        source=r"""
import torch
from dataclasses import dataclass


def traced(c):
    init = c.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.first = self.a.sum()

    c.__init__ = __init__
    return c


@traced
@dataclass
class Meta:
    a: torch.Tensor

    @classmethod
    def make(cls, n):
        m = cls(a=torch.zeros(n))  # <- site
        m.a.fill_(1.0)
        return m.first
""",
        scenario="def run():\n    return Meta.make(4)\n",
        modules=_TREE,
    ),
    Case(
        "post_init_with_a_default_factory_reads_the_field",
        why="`__post_init__` (next to a `field(default_factory=list)`) appends the sum of the "
        "field: the generated __init__ calls it, so the constructor reads the zeros.",
        source=r"""
import torch
from dataclasses import dataclass, field


@dataclass
class Meta:
    a: torch.Tensor
    log: list = field(default_factory=list)

    def __post_init__(self):
        self.log.append(self.a.sum())

    @classmethod
    def make(cls, n):
        m = cls(a=torch.zeros(n))  # <- site
        m.a.fill_(1.0)
        return m.log[0]
""",
        scenario="def run():\n    return Meta.make(4)\n",
        modules=_TREE,
    ),
    Case(
        "module_rebinds_classmethod_with_a_set_name_hook",
        why="The module's own `classmethod` puts an `__init__` on the class when the class is "
        "made (`__set_name__`), before `dataclass` runs, which then keeps it: `cls(a=...)` runs "
        "code that sums the field.",
        source=r"""
import builtins

import torch
from dataclasses import dataclass


class classmethod(builtins.classmethod):
    def __set_name__(self, owner, name):
        def __init__(obj, a):
            obj.a = a
            obj.first = a.sum()

        owner.__init__ = __init__


@dataclass
class Meta:
    a: torch.Tensor

    @classmethod
    def make(cls, n):
        m = cls(a=torch.zeros(n))  # <- site
        m.a.fill_(1.0)
        return m.first
""",
        scenario="def run():\n    return Meta.make(4)\n",
        modules=_TREE,
    ),
    Case(
        "undecorated_factory_called_with_another_class",
        why="`Meta.make.__func__(Reader, 4)` runs the factory with `cls` = Reader, a class that "
        "does not derive from Meta and sums its argument.",
        source=_META
        + r"""

class Reader:
    def __init__(self, a, n):
        self.a = a
        self.total = a.sum()


def total(n):
    g = Meta.make
    return g.__func__(Reader, n).total
""",
        scenario="def run():\n    return total(4)\n",
        modules=_TREE,
    ),
    Case(
        "star_import_rebinds_dataclass",
        why="`from rc_star import *` after the import from `dataclasses` binds `dataclass` to "
        "the other module's decorator, whose `__init__` sums the field: a star import may bind "
        "any name, so no class of the module is read as a plain dataclass.",
        source=r"""
from dataclasses import dataclass

import torch

from rc_star import *


@dataclass
class Meta:
    a: torch.Tensor


def f(n):
    m = Meta(a=torch.zeros(n))  # <- site
    m.a.fill_(1.0)
    return m.first
""",
        scenario="def run():\n    return f(4)\n",
        modules=(
            (
                "rc_star",
                "import dataclasses\n\n\ndef dataclass(c):\n    c = dataclasses.dataclass(c)\n"
                "    init = c.__init__\n\n    def __init__(self, *a, **k):\n"
                "        init(self, *a, **k)\n        self.first = self.a.sum()\n\n"
                "    c.__init__ = __init__\n    return c\n",
            ),
        ),
    ),
    Case(
        "field_named_like_a_property",
        why="`a` is both a field and a property whose setter sums what it is given: the "
        "generated __init__'s `self.a = a` runs it.",
        source=r"""
import torch
from dataclasses import dataclass


@dataclass
class Meta:
    a: torch.Tensor

    @property
    def a(self):
        return self._a

    @a.setter
    def a(self, v):
        self._a = v
        self.first = v.sum()

    @classmethod
    def make(cls, n):
        m = cls(a=torch.zeros(n))  # <- site
        m.a.fill_(1.0)
        return m.first
""",
        scenario="def run():\n    return Meta.make(4)\n",
        modules=_TREE,
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
