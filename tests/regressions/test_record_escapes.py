"""What can make a plain dataclass's constructor other than the generated one, or its fields
other than the annotated names (analysis/records.py, record_factories.py, outcome.py): each
program below is read by the scanner as `Meta(a=buf)` storing `buf` in `m.a`, and runs other
code with the buffer, or stores it in another field, reading the zeros.

- the class handed to code as a value in its own module (`patch(Meta)`, `C = Meta`,
  `for c in [Meta]`, `type.__setattr__(Meta, ...)`, `put = setattr; put(Meta, ...)`): that code
  may store into it, so records.py reads a class as plain only where its name is called, has an
  attribute read, stands in an annotation, a base list or an `isinstance` test;
- a field annotation whose head may be `typing.ClassVar` under another name (`CV = ClassVar`):
  that name is no field, and positional arguments land one field later;
- a class's namespace reached through an alias (`M.__dict__["make"].__get__(None, Other)`,
  `getattr(Meta, "__dict__")`): the classmethod runs with any `cls`;
- a store of another class's bases that makes it derive from the record (`Sub.__bases__ =
  (Meta,)`): `cls` may be that class;
- the module the record is imported from replaced in `sys.modules`, found by an import hook or
  on a package's `__path__` first: the import yields another class.

The strict xfail cases are the assumptions stated in docs/whole-program.md: no other module
patches the class, and the stdlib `dataclasses` is what the tree imports, unpatched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_TREE = (("re_other", "VALUE = 1\n"),)
_RUN = "def run():\n    return use(3)\n"
_USE = r"""

def use(n):
    m = Meta(a=torch.zeros(n))  # <- site
    m.a.fill_(2.0)
    return m.a * 2, SEEN
"""
_PATCHED = r"""
import torch
from dataclasses import dataclass

SEEN = []


@dataclass
class Meta:
    a: torch.Tensor



def _init(self, a):
    self.a = a
    SEEN.append(a.sum())

"""
# The same with two classmethods: `kind` (read, not called, below) and `me`, which returns `cls`.
_PATCHED_METHODS = _PATCHED.replace(
    "    a: torch.Tensor\n",
    "    a: torch.Tensor\n\n    @classmethod\n    def kind(cls):\n        return 1\n\n"
    "    @classmethod\n    def me(cls):\n        return cls\n",
    1,
)
_FACTORY = r"""
import torch
from dataclasses import dataclass


@dataclass
class Meta:
    a: torch.Tensor

    @classmethod
    def make(cls, n):
        m = cls(a=torch.zeros(n))  # <- site
        m.a.fill_(2.0)
        return m
"""
_OTHER = r"""

class Other:
    def __init__(self, a):
        self.a = a
        self.seen = a.sum()
"""
_IMPORTED = r"""
import torch

import {p}.hook  # noqa: F401
from {p}.meta import Meta


def use(n):
    m = Meta(a=torch.zeros(n))  # <- site
    m.a.fill_(2.0)
    return m.a * 2, getattr(m, "seen", None)
"""
_META = "import torch\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Meta:\n    a: torch.Tensor\n"
_READING_META = _OTHER.replace("Other", "Meta").lstrip("\n")
_FINDER = r'''
import importlib.abc
import importlib.util
import sys

SRC = """
class Meta:
    def __init__(self, a):
        self.a = a
        self.seen = a.sum()
"""


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(SRC, module.__dict__)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "{p}.meta":
            return importlib.util.spec_from_loader(name, _Loader())
        return None


sys.meta_path.insert(0, _Finder())
'''


def _escaped(name: str, how: str, why: str, head: str = _PATCHED) -> Case:
    return Case(name, why=why, source=head + how + _USE, scenario=_RUN)


def _imported(
    name: str, pkg: str, hook: str, why: str, extra: tuple = (), marks: tuple = ()
) -> Case:
    return Case(
        name,
        why=why,
        marks=marks,
        package=pkg,
        source=_IMPORTED.format(p=pkg),
        scenario=_RUN,
        modules=(
            (f"{pkg}/__init__", ""),
            (f"{pkg}/meta", _META),
            (f"{pkg}/hook", hook.replace("{p}", pkg)),
            *extra,
        ),
    )


_ASSUMED_UNPATCHED = pytest.mark.xfail(
    strict=True,
    reason="assumed (docs/whole-program.md, Records): no other module patches a plain "
    "dataclass of the tree",
)
_ASSUMED_STDLIB = pytest.mark.xfail(
    strict=True,
    reason="assumed (docs/whole-program.md, Records): `dataclasses` is the stdlib module, "
    "unpatched and not replaced in `sys.modules`",
)

CASES = [
    Case(
        "positional_fields_with_known_heads_tested_and_annotated",
        kind="fix",
        why="Annotations `torch.Tensor`, `int`, `Optional[...]`: no head may be `ClassVar`, so "
        "`Meta(buf, 3)` stores the buffer in `a`; the class is only called, annotated, "
        "tested by `isinstance` and formatted (`type(x)`), never handed on: the generated "
        "`__init__` runs, and `m.a` is filled before it is read.",
        source=r"""
from typing import Optional

import torch
from dataclasses import dataclass


@dataclass
class Meta:
    a: torch.Tensor
    n: int = 0
    b: Optional[torch.Tensor] = None


def check(x: Meta) -> bool:
    return isinstance(x, (Meta, int))


def describe(x) -> str:
    return f"{type(x)}" + type(x).__name__ + repr(x.__class__)


def use(k):
    m = Meta(torch.zeros(k), 3)  # <- site
    m.a.fill_(2.0)
    return m.a * m.n
""",
        scenario="def run():\n    return use(3)\n",
    ),
    _escaped(
        "class_handed_to_a_patching_helper",
        "\ndef patch(c):\n    c.__init__ = _init\n\n\npatch(Meta)\n",
        "`patch(Meta)` stores a reading `__init__` on the class through its parameter.",
    ),
    _escaped(
        "class_aliased_then_patched",
        "\nC = Meta\nC.__init__ = _init\n",
        "`C` is Meta: the store into `C.__init__` replaces the generated one.",
    ),
    _escaped(
        "class_patched_by_type_setattr",
        '\ntype.__setattr__(Meta, "__init__", _init)\n',
        "`type.__setattr__` is `setattr` under another spelling.",
    ),
    _escaped(
        "class_patched_by_an_alias_of_setattr",
        '\nput = setattr\nput(Meta, "__init__", _init)\n',
        "`put` is `setattr`: the call stores a reading `__init__` on the class under another "
        "spelling of the builtin.",
    ),
    _escaped(
        "field_made_a_property_in_a_loop",
        '\nfor c in [Meta]:\n    c.a = property(lambda self: self.__dict__["a"], '
        "lambda self, v: (SEEN.append(v.sum()), self.__dict__.update(a=v)))\n",
        "The loop puts a property on the field: the generated `__init__` stores through its "
        "setter, which sums the zeros.",
    ),
    _escaped(
        "generated_init_code_replaced",
        "\nMeta.__init__.__code__ = _init.__code__\n",
        "A store into an attribute of `Meta.__init__` (its `__code__`) replaces what the "
        "generated `__init__` runs: the chain's root is the class.",
    ),
    _escaped(
        "class_reached_through_its_mro",
        "\nfor k in Meta.__mro__[:1]:\n    k.__init__ = _init\n",
        "`Meta.__mro__` holds the class itself: a dunder read of the class hands it on.",
    ),
    _escaped(
        "class_of_an_instance_handed_on",
        "\n_C = type(Meta(a=torch.ones(1)))\n_C.__init__ = _init\n",
        "`type(m)` is the class: bound to a name, a store through that name patches it.",
    ),
    _escaped(
        "class_reached_through_a_bound_classmethod",
        "\n_C = Meta.kind.__self__\n_C.__init__ = _init\n",
        "`Meta.kind` (not called) is a bound method whose `__self__` is the class.",
        _PATCHED_METHODS.replace("return cls", "return 2"),
    ),
    _escaped(
        "classmethod_returns_the_class",
        "\nMeta.me().__init__ = _init\n",
        "`me` returns `cls`: the caller stores a reading `__init__` into what it returns.",
        _PATCHED_METHODS,
    ),
    _escaped(
        "module_name_rebound_through_sys_modules",
        "\nimport sys\n\n\nclass Other:\n    def __init__(self, a):\n        self.a = a\n"
        "        SEEN.append(a.sum())\n\n\nsys.modules[__name__].Meta = Other\n",
        "The store through the module object rebinds the module's `Meta` to a class whose "
        "`__init__` sums the zeros.",
    ),
    _escaped(
        "module_name_rebound_by_setattr_on_the_module",
        "\nimport sys\n\n\nclass Other:\n    def __init__(self, a):\n        self.a = a\n"
        '        SEEN.append(a.sum())\n\n\nsetattr(sys.modules[__name__], "Meta", Other)\n',
        "`setattr` on the module object under the class's name.",
    ),
    _escaped(
        "module_name_rebound_through_its_import",
        "\nimport module_name_rebound_through_its_import as _me\n\n\nclass Other:\n"
        "    def __init__(self, a):\n        self.a = a\n        SEEN.append(a.sum())\n\n\n"
        "_me.Meta = Other\n",
        "The module imports itself and rebinds `Meta` on that object.",
    ),
    _escaped(
        "module_name_rebound_by_a_computed_setattr",
        "\nimport module_name_rebound_by_a_computed_setattr as _me\n\n\nclass Other:\n"
        "    def __init__(self, a):\n        self.a = a\n        SEEN.append(a.sum())\n\n\n"
        'def _bind(obj, k, v):\n    setattr(obj, k, v)\n\n\n_bind(_me, "Me" + "ta", Other)\n',
        "`setattr` with a computed name on the module, which imports itself.",
    ),
    Case(
        "classvar_under_another_name_shifts_positional_arguments",
        why="`CV` is `typing.ClassVar`: `x` is no field, so `Meta(zeros, t)` stores the zeros "
        "in `a` (not `x`) and `m.a.sum()` reads them.",
        source=r"""
import torch
from typing import ClassVar
from dataclasses import dataclass

CV = ClassVar


@dataclass
class Meta:
    x: CV[int] = 0
    a: torch.Tensor = None
    b: torch.Tensor = None


def use(t, n):
    m = Meta(torch.zeros(n), t)  # <- site
    return m.a.sum()
""",
        scenario="def run():\n    return use(torch.ones(3), 3)\n",
    ),
    Case(
        "classmethod_fetched_through_an_aliased_namespace",
        why="`M.__dict__['make'].__get__(None, Other)` runs `make` with `cls` = Other, whose "
        "`__init__` sums the zeros.",
        source=_FACTORY,
        scenario="def run():\n    from re_refl import go\n\n    return go()\n",
        modules=(
            (
                "re_refl",
                "from classmethod_fetched_through_an_aliased_namespace import Meta as M\n"
                + _OTHER
                + '\n\ndef go():\n    return M.__dict__["make"].__get__(None, Other)(4).seen\n',
            ),
        ),
    ),
    Case(
        "classmethod_fetched_through_getattr_of_the_namespace",
        why="`getattr(Meta, '__dict__')` reaches the classmethod object: `cls` = Other.",
        source=_FACTORY
        + _OTHER
        + '\n\ndef go():\n    return getattr(Meta, "__dict__")["make"].__get__(None, Other)(4).seen\n',
        scenario="def run():\n    return go()\n",
        modules=_TREE,
    ),
    Case(
        "bases_store_makes_another_class_derive_from_the_record",
        why="`Sub.__bases__ = (Meta,)` (another module, Meta by a computed name) makes Sub a "
        "subclass no class statement shows: `Sub.make` runs `cls(...)` with Sub's `__init__`.",
        source=_FACTORY,
        scenario="def run():\n    from re_sub import Sub\n\n    return Sub.make(4).seen\n",
        modules=(
            (
                "re_sub",
                "import bases_store_makes_another_class_derive_from_the_record as mm\n\n\n"
                "class Base:\n    pass\n\n\nclass Sub(Base):\n    def __init__(self, a):\n"
                "        self.a = a\n        self.seen = a.sum()\n\n\n"
                'Sub.__bases__ = (getattr(mm, "Me" + "ta"),)\n',
            ),
        ),
    ),
    _imported(
        "imported_record_module_replaced_in_sys_modules",
        "rek1",
        "import sys\nimport types\n\n"
        + _READING_META
        + "\n\n_f = types.ModuleType('x')\n_f.Meta = Meta\nsys.modules['{p}.meta'] = _f\n",
        "The hook module puts a module whose Meta sums its argument under `rek1.meta`.",
    ),
    _imported(
        "imported_record_found_on_the_package_path_first",
        "rek2",
        "import os\n\nimport {p}\n\n{p}.__path__.insert(0, os.path.join(os.path.dirname("
        "__file__), 'alt'))\n",
        "`rek2.__path__` gets `alt/` first: `rek2.meta` is `alt/meta.py`, whose Meta reads.",
        (("rek2/alt/meta", _READING_META),),
    ),
    _imported(
        "imported_record_found_by_an_import_hook",
        "rek3",
        _FINDER,
        "A finder in `sys.meta_path` answers `rek3.meta` with a Meta that reads.",
    ),
    _imported(
        "imported_record_patched_by_another_module",
        "rek4",
        "import {p}.meta as mm\n\n\ndef _init(self, a):\n    self.a = a\n    self.seen = a.sum()"
        "\n\n\nmm.Meta.__init__ = _init\n",
        "Another module stores a reading `__init__` on the class.",
        marks=(_ASSUMED_UNPATCHED,),
    ),
    Case(
        "dataclasses_replaced_in_sys_modules",
        why="A module of the tree puts a `dataclasses` whose `dataclass` wraps `__init__`.",
        source="import re_fakedc  # noqa: F401\n"
        + _PATCHED.replace("SEEN = []\n", "")
        + "\n\ndef use(n):\n    m = Meta(a=torch.zeros(n))  # <- site\n    m.a.fill_(2.0)\n"
        "    return m.a * 2, m.seen\n",
        scenario=_RUN,
        modules=(
            (
                "re_fakedc",
                "import sys\nimport types\n\n_fake = types.ModuleType('dataclasses')\n\n\n"
                "def dataclass(cls):\n    def __init__(self, a):\n        self.a = a\n"
                "        self.seen = a.sum()\n\n    cls.__init__ = __init__\n    return cls\n\n\n"
                "_fake.dataclass = dataclass\nsys.modules['dataclasses'] = _fake\n",
            ),
        ),
        marks=(_ASSUMED_STDLIB,),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
