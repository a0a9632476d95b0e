"""Stores of a class's bases and of a module's names, in the any-order pass
(analysis/anyorder_stores.py): `T.__bases__ = T.__bases__ + (E,)` keeps T's bases and adds E,
so it makes a class derive from the class judged only if E may be it or derive from it, and
whatever T is, E's code may come to run on the object; `globals()` rebinds names of the module
that calls it only. "fix" cases: such a store of harmless named classes, `globals()` in another
module or under names that exclude the base's. Near misses: each way the store or the namespace
does reach the class, every one read unwritten when it runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_GRID = r"""
import torch


class Grid(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.cells = torch.zeros(n)  # <- site

    def _fill(self):
        self.cells.fill_(1.0)

    def step(self):
        self._fill()
        return self.cells * 2
"""

# A class statement deriving from a tree base whose name the traps rebind; `Evil` reads the
# object's first tensor through `vars(self)`, which names no attribute.
_EVIL = r"""
class Evil:
    def tick(self):
        return [v for v in vars(self).values() if hasattr(v, "sum")][0].sum()
"""

_BASED = r"""
class Grid(Base):
    def __init__(self, n):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
"""

_BASE = r"""
class Base:
    def tick(self):
        return 1
"""

CASES = [
    Case(
        "bases_store_adds_a_named_class_that_touches_only_its_own_attributes",
        kind="fix",
        why="`extend` adds `Tagged` to any class's bases, maybe Grid's: Tagged's code keeps to "
        "its own attributes and Grid derives from no class of the tree, so Tagged runs as a "
        "harmless base would; no class comes to derive from Grid.",
        source=_GRID
        + r"""

class Tagged:
    def tag(self):
        return 3


def extend(cls):
    cls.__bases__ = cls.__bases__ + (Tagged,)
    return cls
""",
        scenario="def run():\n    g = extend(Grid)(3)\n    return g.step(), torch.tensor(g.tag())\n",
    ),
    Case(
        "bases_store_adds_a_subclass_of_the_class",
        why="`extend(Lazy, 3)` adds SubGrid, a subclass of Grid, to Lazy's bases: Lazy becomes "
        "a Grid whose `_fill` does nothing, and `step` reads the buffer unwritten.",
        source=_GRID
        + r"""

class SubGrid(Grid):
    pass


class Base:
    pass


class Lazy(Base):
    def _fill(self):
        return None


def extend(cls, n):
    cls.__bases__ = cls.__bases__ + (SubGrid,)
    return cls(n)
""",
        scenario="def run():\n    return extend(Lazy, 3).step()\n",
    ),
    Case(
        "bases_store_replaces_a_parameters_bases_with_the_class",
        why="`cls.__bases__ = (Grid,)` (not the added form) makes Lazy a Grid whose `_fill` "
        "does nothing.",
        source=_GRID
        + r"""

class Base:
    pass


class Lazy(Base):
    def _fill(self):
        return None


def rebase(cls, n):
    cls.__bases__ = (Grid,)
    return cls(n)
""",
        scenario="def run():\n    return rebase(Lazy, 3).step()\n",
    ),
    Case(
        "bases_store_adds_a_class_whose_code_reads_the_object",
        why="`extend(Grid)` adds Dumper to Grid's own bases: `dump` reads the buffer through "
        "`vars(self)` before any `step`.",
        source=_GRID
        + r"""

class Dumper:
    def dump(self):
        return [v for v in vars(self).values() if hasattr(v, "sum")][0].sum()


def extend(cls):
    cls.__bases__ = cls.__bases__ + (Dumper,)
    return cls
""",
        scenario="def run():\n    return extend(Grid)(3).dump()\n",
    ),
    Case(
        "bases_store_adds_a_parameter",
        why="the added class is a parameter: any class, here a subclass of Grid.",
        source=_GRID
        + r"""

class SubGrid(Grid):
    pass


class Base:
    pass


class Lazy(Base):
    def _fill(self):
        return None


def extend(cls, extra, n):
    cls.__bases__ = cls.__bases__ + (extra,)
    return cls(n)
""",
        scenario="def run():\n    return extend(Lazy, SubGrid, 3).step()\n",
    ),
    Case(
        "globals_of_another_module_store_any_name",
        kind="fix",
        why="`gn_lazy.__getattr__` stores into its own module's namespace: `Base`, looked up "
        "in Grid's module, stays the class statement; Base's code keeps to its own.",
        source="import torch\n\nimport gn_lazy  # noqa: F401\n" + _BASE + _BASED,
        scenario="def run():\n    g = Grid(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
        modules=(
            (
                "gn_lazy",
                "def __getattr__(name):\n    globals()[name] = 1\n    return 1\n\n\n"
                "def __dir__():\n    return sorted(set(globals()))\n",
            ),
        ),
    ),
    Case(
        "globals_of_the_module_store_names_other_than_the_base",
        kind="fix",
        why="`globals()[k] = v` in Grid's module, with `k` only ever 'helper'.",
        source="import torch\n"
        + _BASE
        + r"""

def _install():
    for k in ("helper",):
        globals()[k] = len


_install()
"""
        + _BASED,
        scenario="def run():\n    g = Grid(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
    ),
    Case(
        "globals_of_the_module_store_the_base_name",
        why="`globals()[k] = Evil` with `k` 'Base' (a concatenation) before Grid's statement: "
        "Grid derives from Evil, whose `tick` reads the buffer unwritten.",
        source="import torch\n"
        + _BASE
        + _EVIL
        + r"""

def _install():
    for k in ("Ba" + "se",):
        globals()[k] = Evil


_install()
"""
        + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
    ),
    Case(
        "globals_handed_to_another_module_that_stores_the_base_name",
        why="Grid's module hands `globals()` to `gh_lib.install`, which stores Evil under "
        "'Base' before Grid's statement.",
        source="import torch\n\nimport gh_lib\n"
        + _BASE
        + "\n\ngh_lib.install(globals())\n"
        + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(("gh_lib", _EVIL + '\n\ndef install(ns):\n    ns["Ba" + "se"] = Evil\n'),),
    ),
    Case(
        "module_dict_of_the_base_module_stored_from_another_module",
        why="`gd_lib` stores Evil under 'Base' in `gd_base.__dict__` before Grid's module "
        "imports Base from it.",
        source="import torch\n\nimport gd_lib  # noqa: F401\nfrom gd_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("gd_base", _BASE),
            (
                "gd_lib",
                "import gd_base\n" + _EVIL + '\n\ngd_base.__dict__["Ba" + "se"] = Evil\n',
            ),
        ),
    ),
    Case(
        "module_of_the_class_rebinds_the_base_through_sys_modules",
        why="`setattr(sys.modules[__name__], k, Evil)` with `k` 'Base' before Grid's statement.",
        source="import sys\n\nimport torch\n"
        + _BASE
        + _EVIL
        + '\n\nsetattr(sys.modules[__name__], "Ba" + "se", Evil)\n'
        + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
    ),
    Case(
        "base_rebound_through_a_functions_globals",
        why="`gf_lib.install` reaches Grid's module's namespace through a function of it "
        "(`hook.__globals__`) and stores Evil under 'Base' before Grid's statement.",
        source="import torch\n\nimport gf_lib\n"
        + _BASE
        + "\n\ndef hook():\n    return 0\n\n\ngf_lib.install(hook)\n"
        + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("gf_lib", _EVIL + '\n\ndef install(f):\n    f.__globals__["Ba" + "se"] = Evil\n'),
        ),
    ),
    Case(
        "base_module_rebound_through_a_local_holding_it",
        why="`gm_lib._patch` holds `gm_base` (from `sys.modules`) in a local and stores Evil "
        "under 'Base' (a concatenation) before Grid's module imports Base from it.",
        source="import torch\n\nimport gm_lib  # noqa: F401\nfrom gm_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("gm_base", _BASE),
            (
                "gm_lib",
                "import sys\n\nimport gm_base  # noqa: F401\n"
                + _EVIL
                + "\n\ndef _patch():\n    m = sys.modules['gm_base']\n"
                "    for k in ('Ba' + 'se',):\n        setattr(m, k, Evil)\n\n\n_patch()\n",
            ),
        ),
    ),
    Case(
        "bases_store_adds_a_reader_to_a_class_with_a_base_of_the_tree",
        why="Grid derives from Base, a class of the tree; `extend(Grid)` adds Dumper, whose "
        "`dump` reads the buffer through `vars(self)`.",
        source="import torch\n"
        + _BASE
        + r"""

class Dumper:
    def dump(self):
        return [v for v in vars(self).values() if hasattr(v, "sum")][0].sum()


def extend(cls):
    cls.__bases__ = cls.__bases__ + (Dumper,)
    return cls
"""
        + _BASED,
        scenario="def run():\n    return extend(Grid)(3).dump()\n",
    ),
    Case(
        "two_class_statements_of_the_base_name_the_import_picks_one",
        kind="fix",
        why="two modules define a class `Base`; Grid's module imports the one from `tc_one`, "
        "whose code keeps to its own attributes (the other's method is decorated).",
        source="import torch\n\nfrom tc_one import Base\n" + _BASED,
        scenario="def run():\n    g = Grid(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
        modules=(
            ("tc_one", _BASE),
            (
                "tc_two",
                "import functools\n\n\nclass Base:\n    @functools.lru_cache\n"
                "    def tick(self):\n        return 2\n",
            ),
        ),
    ),
    Case(
        "two_class_statements_of_the_base_name_the_import_picks_the_reader",
        why="two modules define a class `Base`; Grid's module imports the one from `tr_two`, "
        "whose `tick` reads the buffer through `vars(self)`.",
        source="import torch\n\nfrom tr_two import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(("tr_one", _BASE), ("tr_two", _EVIL.replace("Evil", "Base"))),
    ),
    Case(
        "base_name_rebound_by_a_star_import",
        why="Grid's module imports `Base` from `ts_base`, then `from ts_lib import *` rebinds "
        "it to `ts_lib.Base = Evil` (no class statement of that name) before Grid's statement.",
        source="import torch\n\nfrom ts_base import Base\nfrom ts_lib import *  # noqa: F403\n"
        + _BASED.replace("Base", "Base")
        + "\n\ndef _unused():\n    return Base\n",
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(("ts_base", _BASE), ("ts_lib", _EVIL + "\n\nBase = Evil\n")),
    ),
    Case(
        "two_class_statements_of_the_base_name_a_star_import_picks",
        why="`from tt_base import Base` then `from tt_lib import *`, which defines another class "
        "`Base` reading the object: the star import binds Grid's base.",
        source="import torch\n\nfrom tt_base import Base\nfrom tt_lib import *  # noqa: F403\n"
        + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(("tt_base", _BASE), ("tt_lib", _EVIL.replace("Evil", "Base"))),
    ),
    Case(
        "base_named_in_annotations_and_all_only",
        kind="fix",
        why="the strings naming `Base` are a return annotation, a parameter's and `__all__`'s "
        "elements: none binds a name.",
        source="import torch\n\nfrom sa_base import Base\n"
        + _BASED
        + '\n\ndef make(n: "int") -> "Base":\n    return Grid(n)\n\n\n'
        '__all__ = ["Base", "Grid", "make"]\n',
        scenario="def run():\n    g = make(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
        modules=(("sa_base", _BASE + '\n\n__all__ = ["Base"]\n'),),
    ),
    Case(
        "base_name_stored_by_a_string_through_operator_setitem",
        why="`operator.setitem(vars(so_base), 'Base', Evil)` in another module, before Grid's "
        "module imports Base: the string names the base.",
        source="import torch\n\nimport so_lib  # noqa: F401\nfrom so_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("so_base", _BASE),
            (
                "so_lib",
                "import operator\n\nimport so_base\n"
                + _EVIL
                + '\n\noperator.setitem(vars(so_base), "Base", Evil)\n',
            ),
        ),
    ),
    Case(
        "base_module_replaced_in_sys_modules",
        why="`sm_lib` puts a namespace whose `Base` is Evil in `sys.modules` under 'sm_base' "
        "(the keyword spells no string, no attribute store) before Grid's module imports Base "
        "from it: the import yields Evil, not sm_base's class statement.",
        source="import torch\n\nimport sm_lib  # noqa: F401\nfrom sm_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("sm_base", _BASE),
            (
                "sm_lib",
                "import sys\nimport types\n"
                + _EVIL
                + "\n\nsys.modules['sm_base'] = types.SimpleNamespace(Base=Evil)\n",
            ),
        ),
    ),
    Case(
        "base_module_replaces_itself_in_sys_modules",
        why="`sr_base` ends by putting a namespace whose `Base` is Evil in `sys.modules` under "
        "its own `__name__`: Grid's module's import of Base yields Evil.",
        source="import torch\n\nfrom sr_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            (
                "sr_base",
                "import sys\nimport types\n"
                + _EVIL
                + _BASE
                + "\n\nsys.modules[__name__] = types.SimpleNamespace(Base=Evil)\n",
            ),
        ),
    ),
    Case(
        "sys_modules_stored_under_other_names_only",
        kind="fix",
        why="`su_lib` stores into `sys.modules` only under 'su_other' and reads 'su_base': "
        "the import of Base from su_base yields its class statement.",
        source="import torch\n\nimport su_lib  # noqa: F401\nfrom su_base import Base\n" + _BASED,
        scenario="def run():\n    g = Grid(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
        modules=(
            ("su_base", _BASE),
            (
                "su_lib",
                "import sys\nimport types\n"
                + _EVIL
                + "\n\nsys.modules['su_other'] = types.SimpleNamespace(Base=Evil)\n"
                "seen = sys.modules.get('su_base')\n",
            ),
        ),
    ),
    Case(
        "bases_store_puts_a_harmless_class_first",
        why="`extend(SubGrid)` puts Lazy before SubGrid's bases: SubGrid's method order becomes "
        "SubGrid, Lazy, Grid, so Lazy's `_fill`, which touches nothing, overrides Grid's writer "
        "and `step` reads the buffer unwritten.",
        source=_GRID
        + r"""

class SubGrid(Grid):
    pass


class Lazy:
    def _fill(self):
        return None


def extend(cls):
    cls.__bases__ = (Lazy,) + cls.__bases__
    return cls
""",
        scenario="def run():\n    return extend(SubGrid)(3).step()\n",
    ),
    Case(
        "bases_store_appends_a_class_sharing_a_base_with_a_subclass",
        why="Lazy derives from Y, which SubGrid lists before Grid: appended to Sub2's bases, "
        "Lazy comes before Y and so before Grid in Sub2's method order (Sub2, SubGrid, Lazy, Y, "
        "Grid), and its `_fill` overrides Grid's writer.",
        source=_GRID
        + r"""

class Y:
    pass


class SubGrid(Y, Grid):
    pass


class Sub2(SubGrid):
    pass


class Lazy(Y):
    def _fill(self):
        return None


def extend(cls):
    cls.__bases__ = cls.__bases__ + (Lazy,)
    return cls
""",
        scenario="def run():\n    return extend(Sub2)(3).step()\n",
    ),
    Case(
        "bases_store_appends_a_harmless_class_to_a_class_with_two_bases",
        kind="fix",
        why="Lazy (no base) appended to Mixed(Other, Grid): Mixed's method order is Mixed, "
        "Other, Grid, Lazy, so Grid's `_fill` still runs.",
        source=_GRID
        + r"""

class Lazy:
    def _fill(self):
        return None


class Other:
    pass


class Mixed(Other, Grid):
    pass


def extend(cls):
    cls.__bases__ = cls.__bases__ + (Lazy,)
    return cls
""",
        scenario="def run():\n    return extend(Mixed)(3).step()\n",
    ),
    Case(
        "base_deleted_from_its_module_with_a_module_getattr",
        why="`dl_lib` deletes 'Base' (a concatenation) from `dl_base`, whose module `__getattr__` "
        "answers Evil for any missing name: Grid's module's import of Base yields Evil.",
        source="import torch\n\nimport dl_lib  # noqa: F401\nfrom dl_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("dl_base", _EVIL + "\n\ndef __getattr__(name):\n    return Evil\n" + _BASE),
            ("dl_lib", "import dl_base\n\ndelattr(dl_base, 'Ba' + 'se')\n"),
        ),
    ),
    Case(
        "base_deleted_by_name_from_its_module_with_a_module_getattr",
        why="`dn_lib` runs `del dn_base.Base` (an attribute deletion, no store): `dn_base`'s "
        "module `__getattr__` then answers Evil for the import of Base.",
        source="import torch\n\nimport dn_lib  # noqa: F401\nfrom dn_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("dn_base", _EVIL + "\n\ndef __getattr__(name):\n    return Evil\n" + _BASE),
            ("dn_lib", "import dn_base\n\ndel dn_base.Base\n"),
        ),
    ),
    Case(
        "other_names_deleted_from_the_base_module_with_a_module_getattr",
        kind="fix",
        why="`do_lib` deletes only 'helper' from `do_base` (whose module `__getattr__` answers "
        "any missing name): Base stays its class statement.",
        source="import torch\n\nimport do_lib  # noqa: F401\nfrom do_base import Base\n" + _BASED,
        scenario="def run():\n    g = Grid(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
        modules=(
            (
                "do_base",
                "helper = 1\n\n\ndef __getattr__(name):\n    return 2\n" + _BASE,
            ),
            ("do_lib", "import do_base\n\ndelattr(do_base, 'hel' + 'per')\n"),
        ),
    ),
    Case(
        "base_of_a_package_shadowed_by_its_submodule_of_that_name",
        why="`sp_lib` imports `sppkg.Base`, a submodule, which binds `sppkg.Base` to that module: "
        "Grid's module then imports the module, whose `__mro_entries__` makes Evil Grid's base.",
        source="import torch\n\nimport sp_lib  # noqa: F401\nfrom sppkg import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("sppkg/__init__", _BASE),
            (
                "sppkg/Base",
                "from sp_ev import Evil\n\n\ndef __mro_entries__(bases):\n    return (Evil,)\n",
            ),
            ("sp_ev", _EVIL),
            ("sp_lib", "import sppkg.Base  # noqa: F401\n"),
        ),
    ),
    Case(
        "base_of_a_package_with_submodules_of_other_names",
        kind="fix",
        why="`sqpkg` defines Base and has a submodule `helpers` only: importing it binds "
        "`sqpkg.helpers`, not Base.",
        source="import torch\n\nimport sqpkg.helpers  # noqa: F401\nfrom sqpkg import Base\n"
        + _BASED,
        scenario="def run():\n    g = Grid(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
        modules=(("sqpkg/__init__", _BASE), ("sqpkg/helpers", "X = 1\n")),
    ),
    Case(
        "base_module_supplied_by_an_import_hook",
        why="`mp_lib` puts a finder first on `sys.meta_path` that answers 'mp_base' with a "
        "namespace whose `Base` is Evil: Grid's module's import of Base never runs mp_base.py.",
        source="import torch\n\nimport mp_lib  # noqa: F401\nfrom mp_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("mp_base", _BASE),
            (
                "mp_lib",
                "import importlib.util\nimport sys\nimport types\n"
                + _EVIL
                + """

class Finder:
    def find_spec(self, name, path, target=None):
        if name == "mp_" + "base":
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return types.SimpleNamespace(Base=Evil)

    def exec_module(self, module):
        return None


sys.meta_path.insert(0, Finder())
""",
            ),
        ),
    ),
    Case(
        "base_module_found_first_in_a_folder_put_on_sys_path",
        why="`pp_lib` puts `alt/` first on `sys.path`: Grid's module's import finds "
        "`alt/pp_base.py`, whose module `__getattr__` answers Evil for Base.",
        source="import torch\n\nimport pp_lib  # noqa: F401\nfrom pp_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("pp_base", _BASE),
            (
                "alt/pp_base",
                "def __getattr__(name):\n    from pp_ev import Evil\n\n    return Evil\n",
            ),
            ("pp_ev", _EVIL),
            (
                "pp_lib",
                "import os\nimport sys\n\n"
                "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'alt'))\n",
            ),
        ),
    ),
    Case(
        "base_in_the_class_module_while_the_tree_puts_a_folder_on_sys_path",
        kind="fix",
        why="`pq_lib` puts a folder first on `sys.path`, but Base is the class statement of "
        "Grid's own module: no import yields it.",
        source="import torch\n\nimport pq_lib  # noqa: F401\n" + _BASE + _BASED,
        scenario="def run():\n    g = Grid(3)\n    return g.fill(torch.ones(3)), torch.tensor(g.tick())\n",
        modules=(
            (
                "pq_lib",
                "import os\nimport sys\n\n"
                "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'alt'))\n",
            ),
        ),
    ),
    Case(
        "base_module_shadowed_by_a_package_of_its_name",
        why="`pk_base.py` sits beside a package `pk_base/`: the import finds the package first, "
        "whose module `__getattr__` answers Evil for Base; `pk_base.py` never runs.",
        source="import torch\n\nfrom pk_base import Base\n" + _BASED,
        scenario="def run():\n    return Grid(3).tick()\n",
        modules=(
            ("pk_base", _BASE),
            (
                "pk_base/__init__",
                "def __getattr__(name):\n    from pk_ev import Evil\n\n    return Evil\n",
            ),
            ("pk_ev", _EVIL),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
