"""Calls on a receiver of unknown type resolved by method name over the tree (analysis/dispatch.py):
`obj.pour(buf)` runs one of the tree's defs named `pour`, under the closed world. "fix" cases are
calls every such def proves; the others are programs where some run reads the allocation unwritten
because something other than those defs answers `obj.pour`: each obstacle must keep the site from
`safe`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import AnalysisOptions, Case, Verdict, check_case, params

UNSAFE_ONLY = frozenset({Verdict.UNSAFE})

_WRITERS = r"""
import torch


class Full:
    def pour(self, t):
        t.fill_(1.0)


class Also:
    def pour(self, t):
        t[:] = 2.0


def f(obj, n):
    buf = torch.zeros(n)  # <- site
    obj.pour(buf)
    return buf
"""

# `pour(self, t, u)` writes its third parameter: through a class object, `buf` binds `t`.
_SECOND = r"""
import torch


class TwoA:
    def pour(self, t, u):
        u.fill_(1.0)


class TwoB:
    def pour(self, t, u):
        u[:] = 2.0
"""


def _give_up(name: str, why: str, tail: str, scenario: str, base: str = _WRITERS) -> Case:
    return Case(name, why=why, source=base + tail, scenario=scenario)


CASES = [
    Case(
        "every_def_of_the_name_writes_in_full",
        kind="fix",
        why="Full.pour and Also.pour both write their parameter in full: whichever the receiver "
        "is, the buffer is written before it is returned.",
        source=_WRITERS,
        scenario="def run():\n    return f(Full(), 4) + f(Also(), 4)\n",
    ),
    Case(
        "static_class_and_keyword_bindings_write_in_full",
        kind="fix",
        why="A staticmethod (no `self`), a classmethod (`cls`) and a plain method, called with the "
        "buffer as keyword `t`: each binds `t` and writes it in full.",
        source=r"""
import torch


class S:
    @staticmethod
    def stamp(t):
        t.fill_(1.0)


class C:
    @classmethod
    def stamp(cls, t):
        t.copy_(torch.ones_like(t))


class M:
    def stamp(self, t, scale=1.0):
        t[...] = scale


def f(obj, n):
    buf = torch.zeros(n)  # <- site
    obj.stamp(t=buf)
    return buf
""",
        scenario="def run():\n    return f(S(), 4) + f(C(), 4) + f(M(), 4)\n",
    ),
    Case(
        "every_def_of_the_name_reads_only_metadata",
        kind="fix",
        why="Both defs named `rows` read only the shape: the call is neutral and the fill after "
        "it writes the buffer in full.",
        source=r"""
import torch


class A:
    def rows(self, t):
        return t.shape[0]


class B:
    def rows(self, t):
        return t.numel() * 2


def f(obj, n):
    buf = torch.zeros(n)  # <- site
    k = obj.rows(buf)
    buf.fill_(k)
    return buf
""",
        scenario="def run():\n    return f(A(), 4) + f(B(), 4)\n",
    ),
    Case(
        "every_def_of_the_name_reads_first",
        expect=UNSAFE_ONLY,
        why="Both defs named `tally` read the parameter before any write: the zeros are read "
        "whichever the receiver is, and the result shows them.",
        source=r"""
import torch


class A:
    def tally(self, t):
        return t.sum()


class B:
    def tally(self, t):
        return t[0] + 1


def f(obj, n):
    buf = torch.zeros(n)  # <- site
    return obj.tally(buf)
""",
        scenario="def run():\n    return f(A(), 4) + f(B(), 4)\n",
    ),
    _give_up(
        "defs_of_the_name_disagree",
        "Part.pour writes one element only: with a Part receiver the rest stays zeros.",
        "\n\nclass Part:\n    def pour(self, t):\n        t[:1] = 3.0\n",
        "def run():\n    return f(Part(), 4)\n",
    ),
    _give_up(
        "library_method_of_the_same_name",
        "`append` is also a method of list: with a list receiver the buffer is only kept.",
        r"""

class Log:
    def append(self, t):
        t.fill_(1.0)


def g(obj, n):
    buf = torch.zeros(n)  # <- site
    obj.append(buf)
    return buf
""",
        "def run():\n    return g([], 4)\n",
        base="\nimport torch\n",
    ),
    _give_up(
        "class_with_getattr_answers_the_name",
        "Lazy has no `pour` of its own: its `__getattr__` answers it with a function that "
        "writes nothing.",
        "\n\nclass Lazy:\n    def __getattr__(self, name):\n        return lambda t: None\n",
        "def run():\n    return f(Lazy(), 4)\n",
    ),
    _give_up(
        "class_with_getattribute_answers_every_name",
        "Spy's `__getattribute__` answers `pour` before any def is looked up.",
        r"""

class Spy:
    def pour(self, t):
        t.fill_(1.0)

    def __getattribute__(self, name):
        return lambda t: None
""",
        "def run():\n    return f(Spy(), 4)\n",
    ),
    _give_up(
        "method_name_assigned_on_an_instance",
        "`obj.pour = ...` gives the instance a `pour` that is no def of a class.",
        "\n\ndef make():\n    o = Full()\n    o.pour = lambda t: None\n    return o\n",
        "def run():\n    return f(make(), 4)\n",
    ),
    _give_up(
        "method_name_stored_by_setattr",
        "`setattr(o, 'pour', ...)` gives the instance its own `pour`.",
        "\n\ndef make():\n    o = Full()\n    setattr(o, 'pour', lambda t: None)\n    return o\n",
        "def run():\n    return f(make(), 4)\n",
    ),
    _give_up(
        "object_built_with_an_attribute_of_the_name",
        "`SimpleNamespace(pour=...)` is an object whose `pour` is a lambda.",
        "\n\nimport types\n\n\ndef make():\n    return types.SimpleNamespace(pour=lambda t: None)\n",
        "def run():\n    return f(make(), 4)\n",
    ),
    _give_up(
        "namedtuple_field_of_the_name",
        "A namedtuple field `pour` holds whatever the tuple was built with.",
        "\n\nimport collections\n\nRec = collections.namedtuple('Rec', 'pour size')\n",
        "def run():\n    return f(Rec(lambda t: None, 1), 4)\n",
    ),
    _give_up(
        "class_made_by_type_with_a_computed_namespace",
        "`type(...)` with a namespace built at run time may bind `pour` to anything.",
        "\n\nns = {}\nns['po' + 'ur'] = lambda self, t: None\nMade = type('Made', (), ns)\n",
        "def run():\n    return f(Made(), 4)\n",
    ),
    _give_up(
        "class_object_held_in_a_local",
        "`k.pour(k(), buf, scratch)` on a class: `buf` binds `t`, which pour never writes; on an "
        "instance it would bind `u`, which pour writes in full.",
        r"""

def f2(flag, n):
    buf = torch.zeros(n)  # <- site
    k = TwoA if flag else TwoB
    k.pour(k(), buf, torch.ones(n))
    return buf
""",
        "def run():\n    return f2(True, 4)\n",
        base=_SECOND,
    ),
    Case(
        "class_object_from_another_module_in_a_local",
        why="`k = two.TwoA if flag else two.TwoB` holds a class of another module: `buf` binds "
        "`t`, which pour never writes.",
        source=r"""
import torch

import tpkg.two as two


def f6(flag, n):
    buf = torch.zeros(n)  # <- site
    k = two.TwoA if flag else two.TwoB
    k.pour(k(), buf, torch.ones(n))
    return buf
""",
        modules=(("tpkg/__init__", ""), ("tpkg/two", _SECOND)),
        scenario="def run():\n    return f6(True, 4)\n",
    ),
    _give_up(
        "class_objects_in_a_loop",
        "`for k in (TwoA, TwoB): k.pour(k(), buf, scratch)`: each `k` is a class.",
        r"""

def f4(n):
    buf = torch.zeros(n)  # <- site
    for k in (TwoA, TwoB):
        k.pour(k(), buf, torch.ones(n))
    return buf
""",
        "def run():\n    return f4(4)\n",
        base=_SECOND,
    ),
    _give_up(
        "class_object_from_type_in_a_local",
        "`k = type(obj)`: `k` is a class, so `buf` binds `t`, which pour never writes.",
        r"""

def f5(obj, n):
    buf = torch.zeros(n)  # <- site
    k = type(obj)
    k.pour(obj, buf, torch.ones(n))
    return buf
""",
        "def run():\n    return f5(TwoA(), 4)\n",
        base=_SECOND,
    ),
    _give_up(
        "class_object_in_a_classmethod",
        "`cls.pour(cls(), buf, scratch)`: `cls` is a class, so `buf` binds `t`.",
        r"""

class Maker(TwoA):
    @classmethod
    def build(cls, n):
        buf = torch.zeros(n)  # <- site
        cls.pour(cls(), buf, torch.ones(n))
        return buf
""",
        "def run():\n    return Maker.build(4)\n",
        base=_SECOND,
    ),
    _give_up(
        "class_object_through_type",
        "`type(obj).pour(obj, buf, scratch)`: the receiver is a class.",
        r"""

def f3(obj, n):
    buf = torch.zeros(n)  # <- site
    type(obj).pour(obj, buf, torch.ones(n))
    return buf
""",
        "def run():\n    return f3(TwoA(), 4)\n",
        base=_SECOND,
    ),
    _give_up(
        "def_under_an_unknown_decorator",
        "`skip` replaces Full2.pour by a function that writes nothing.",
        r"""

def skip(fn):
    return lambda self, t: None


class Full2:
    @skip
    def pour(self, t):
        t.fill_(1.0)
""",
        "def run():\n    return f(Full2(), 4)\n",
    ),
    _give_up(
        "property_of_the_name",
        "A property `pour` returns a function that writes nothing.",
        r"""

class Prop:
    @property
    def pour(self):
        return lambda t: None
""",
        "def run():\n    return f(Prop(), 4)\n",
    ),
    _give_up(
        "class_body_binds_the_name_otherwise",
        "`pour = staticmethod(lambda ...)` in a class body is no def: it writes nothing.",
        "\n\nclass Bound:\n    pour = staticmethod(lambda t: None)\n",
        "def run():\n    return f(Bound(), 4)\n",
    ),
    Case(
        "def_in_a_file_not_importable_by_name",
        why="A def named `pour` in a script of the tree (no package): its summary is not "
        "computed, and its instance is the receiver.",
        source=_WRITERS,
        modules=(("check_pour", "class Lax:\n    def pour(self, t):\n        pass\n"),),
        scenario="from check_pour import Lax\n\n\ndef run():\n    return f(Lax(), 4)\n",
    ),
    Case(
        "module_with_getattr_as_the_receiver",
        why="A module object held as a value is the receiver; its module-level `__getattr__` "
        "(PEP 562) answers `pour` with a function that writes nothing.",
        source=_WRITERS,
        modules=(
            ("lazypkg/__init__", ""),
            ("lazypkg/ops", "def __getattr__(name):\n    return lambda t: None\n"),
        ),
        scenario="import lazypkg.ops\n\n\ndef run():\n    return f(lazypkg.ops, 4)\n",
    ),
    _give_up(
        "getattr_assigned_on_a_class",
        "`Hollow.__getattr__ = ...` makes Hollow answer `pour`.",
        "\n\nclass Hollow:\n    pass\n\n\nHollow.__getattr__ = lambda self, name: (lambda t: None)\n",
        "def run():\n    return f(Hollow(), 4)\n",
    ),
    _give_up(
        "class_defined_by_exec",
        "The class whose `pour` runs is defined by `exec` of a string.",
        "\n\nns = {}\nexec('class Txt:\\n    def pour(self, t):\\n        pass\\n', ns)\n",
        "def run():\n    return f(ns['Txt'](), 4)\n",
    ),
    _give_up(
        "namedtuple_fields_across_lines",
        "`namedtuple(\n    'P', 'other pour')`: a field `pour` named inside a longer string on "
        "another line than the call; `P(None, lambda t: None)` answers `pour` with a lambda.",
        '\n\nimport collections\n\nP = collections.namedtuple(\n    "P", "other pour"\n)\n',
        "def run():\n    return f(P(None, lambda t: None), 4)\n",
    ),
    _give_up(
        "setattr_with_a_computed_name",
        "`setattr(b, name, ...)` over names split from a string: `b.pour` is a lambda that "
        "writes nothing, and no text spells it as a name.",
        r"""

class Box:
    pass


def make():
    b = Box()
    for name in "other pour".split():
        setattr(b, name, lambda t: None)
    return b
""",
        "def run():\n    return f(make(), 4)\n",
    ),
    _give_up(
        "setattr_with_a_joined_string",
        "`setattr(Bare, 'po' 'ur', ...)`: implicit concatenation makes the name `pour` that no "
        "pattern of the text finds.",
        '\n\nclass Bare:\n    pass\n\n\nsetattr(Bare, "po" "ur", lambda self, t: None)\n',
        "def run():\n    return f(Bare(), 4)\n",
    ),
    _give_up(
        "namespace_built_from_locals",
        "`SimpleNamespace(**locals())` makes an attribute of every local: the nested `def "
        "pour` writes nothing.",
        r"""

import types


def make():
    def pour(t):
        return t

    return types.SimpleNamespace(**locals())
""",
        "def run():\n    return f(make(), 4)\n",
    ),
    _give_up(
        "module_function_rebound_through_global",
        "The module itself is the receiver; `patch()` rebinds its `pour` through `global`.",
        r"""

import sys


def pour(t):
    t.fill_(3.0)


def patch():
    global pour
    pour = lambda t: None  # noqa: E731
""",
        "def run():\n    patch()\n    return f(sys.modules[__name__], 4)\n",
    ),
    Case(
        "class_held_as_a_parameter",
        why="`f(Keep, 4)`: the receiver is the class, so `obj.pour(buf, scale)` binds `buf` to "
        "`self` and `scale` to `t`; `u` has a default, so nothing raises and `buf` stays unwritten.",
        source=r"""
import torch


class Keep:
    def pour(self, t, u=None):
        t.fill_(1.0)


def f(obj, n):
    buf = torch.zeros(n)  # <- site
    obj.pour(buf, torch.ones(1))
    return buf
""",
        scenario="def run():\n    return f(Keep, 4)\n",
    ),
    Case(
        "class_held_as_a_parameter_cannot_bind",
        kind="fix",
        why="`pour(self, t)` called with one argument: through the class it would raise (no `t`), "
        "so every run that returns has the instance as receiver and `buf` written.",
        source=r"""
import torch


class Keep:
    def pour(self, t):
        t.fill_(1.0)


def f(obj, n):
    buf = torch.zeros(n)  # <- site
    obj.pour(buf)
    return buf
""",
        scenario="def run():\n    return f(Keep(), 4)\n",
    ),
    Case(
        "closed_world_off",
        options=AnalysisOptions(closed_world=False),
        why="With `closed-world = false` a def outside the scanned code (here, in the scenario) may "
        "answer `pour`: the call stays unknown.",
        source=_WRITERS,
        scenario="class Late:\n    def pour(self, t):\n        pass\n\n\ndef run():\n    return f(Late(), 4)\n",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
