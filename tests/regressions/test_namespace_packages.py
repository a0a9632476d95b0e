"""Module names under namespace packages (PEP 420) and the ways a dotted path need not name the
tree's file (analysis/project.py): a folder without `__init__.py` inside a package names its
modules `pkg.ns.mod`, and a function summary of such a module applies at calls in other modules.

Each case calls a function `fill` that writes the buffer in full in the tree's file the dotted
name seems to denote, while what runs is another object that writes nothing: a package that
rewrites its `__path__`, a module-level `__getattr__` (PEP 562) or an `__init__` binding that
answers the name of a submodule, a module that rebinds `fill` through a spelling of `exec` or
of its globals other than the words `exec` and `globals`, the same module name below a
namespace folder put on `sys.path`, and a module file beside a namespace folder. None may be
`safe`; each runs with the buffer poisoned and gives another result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_case,
    check_execution,
    params,
    scanned_verdicts,
)

_CALL = r"""
import torch

from {module} import {name}


def f(n):
    buf = torch.zeros(n)  # <- site
    {call}(buf)
    return buf
"""
_RUN = "def run():\n    return f(4)\n"
_FULL = "def fill(x):\n    x.fill_(1.0)\n"
_NONE = "def fill(x):\n    return x\n"
_GETATTR = r"""
import types


def __getattr__(name):
    if name == "ns":
        return types.SimpleNamespace(helpers=types.SimpleNamespace(fill=lambda x: x))
    raise AttributeError(name)
"""
_BINDS = (
    "import types\n\nns = types.SimpleNamespace(helpers=types.SimpleNamespace(fill=lambda x: x))\n"
)
_PATH = "import os\n\n__path__.insert(0, os.path.join(os.path.dirname(__file__), '..', '{alt}'))\n"
_SPEC = (
    "import os\n\n"
    "__spec__.submodule_search_locations.insert(\n"
    "    0, os.path.join(os.path.dirname(__file__), '..', '{alt}')\n"
    ")\n"
)
# Ways a module rebinds its own `fill` that name neither `exec` nor `globals` as words.
_REBINDS = {
    "compile_single": 'eval(compile("def fill(x):\\n    return x\\n", "<s>", "single"))\n',
    "frame_globals": 'import sys\n\nsys._getframe().f_globals["fill"] = lambda x: x\n',
    "function_globals": 'fill.__globals__["fill"] = lambda x: x\n',
    "builtins_by_name": 'import builtins\n\ngetattr(builtins, "ex" + "ec")("fill = lambda x: x")\n',
    "module_dict_update": (
        "import importlib\n\nimportlib.import_module(__name__).__dict__.update(fill=lambda x: x)\n"
    ),
}


def _path_case(name: str, pkg: str, sub: str, init: str = _PATH) -> Case:
    """`pkg/__init__.py` puts another folder first on its `__path__`: `pkg.<sub>.helpers` is that
    folder's file."""
    alt = f"{pkg}_alt"
    return Case(
        name,
        package=pkg,
        why=f"`{pkg}/__init__.py` inserts `{alt}/` first in `__path__`: `{pkg}.{sub}helpers` is "
        f"`{alt}/{sub.replace('.', '/')}helpers.py`, whose `fill` writes nothing.",
        source=_CALL.format(module=f"{pkg}.{sub}helpers", name="fill", call="fill"),
        scenario=_RUN,
        modules=(
            (f"{pkg}/__init__", init.format(alt=alt)),
            *((f"{d}/{sub[:-1]}/__init__", "") for d in (pkg, alt) if sub == "reg."),
            (f"{pkg}/{sub.replace('.', '/')}helpers", _FULL),
            (f"{alt}/{sub.replace('.', '/')}helpers", _NONE),
        ),
    )


def _attribute_case(name: str, pkg: str, init: str, regular: bool, plain: bool) -> Case:
    """`pkg.ns` as an attribute of `pkg` is the `__init__`'s object, not the package `pkg/ns/`."""
    source = (
        _CALL.format(module=pkg, name="ns", call="ns.helpers.fill")
        if not plain
        else _CALL.format(module="torch", name="nn", call=f"{pkg}.ns.helpers.fill").replace(
            "from torch import nn", f"import {pkg}"
        )
    )
    return Case(
        name,
        package=pkg,
        why=f"`{pkg}/__init__.py` answers the name `ns` itself, so `{pkg}.ns` is not the "
        f"{'package' if regular else 'namespace package'} `{pkg}/ns/`, whose `helpers.fill` "
        "writes in full: the object's `fill` writes nothing.",
        source=source,
        scenario=_RUN,
        modules=(
            (f"{pkg}/__init__", init),
            *(((f"{pkg}/ns/__init__", ""),) if regular else ()),
            (f"{pkg}/ns/helpers", _FULL),
        ),
    )


_LAZY = r"""
import types

LAZY = {{"Tool": "types:SimpleNamespace", "Other": "types:SimpleNamespace"}}
{mutation}

def __getattr__(name):
    if name in LAZY:
        return types.SimpleNamespace(helpers=types.SimpleNamespace(fill=lambda x: x))
    if name == "Extra":
        return None
    raise AttributeError(name)
"""


def _lazy_case(name: str, pkg: str, mutation: str, kind: str, why: str) -> Case:
    """`from pkg import ns` past a lazy `__getattr__` that lists the names it answers. Where it
    does not answer `ns`, the program imports `pkg.ns.helpers` first, so `ns.helpers` exists."""
    preload = f"import torch\n\nimport {pkg}.ns.helpers  # noqa: F401\n" if kind == "fix" else ""
    return Case(
        name,
        kind=kind,
        package=pkg,
        why=why,
        source=_CALL.format(module=pkg, name="ns", call="ns.helpers.fill").replace(
            "import torch\n", preload or "import torch\n", 1
        ),
        scenario=_RUN,
        modules=(
            (f"{pkg}/__init__", _LAZY.format(mutation=mutation)),
            (f"{pkg}/ns/helpers", _FULL),
        ),
    )


CASES = [
    _path_case("path_inserted_before_a_namespace_package", "nspath_a", "ns."),
    _path_case("path_inserted_before_a_regular_subpackage", "nspath_b", "reg."),
    _path_case("path_inserted_before_a_module", "nspath_c", ""),
    _path_case("search_locations_of_the_spec_extended", "nspath_d", "ns.", _SPEC),
    _lazy_case(
        "lazy_getattr_lists_other_names",
        "nslazy_a",
        "",
        "fix",
        "`nslazy_a/__init__.py`'s `__getattr__` answers only `Tool`, `Other` and `Extra` and raises "
        "AttributeError for every other name: `from nslazy_a import ns` is the namespace package "
        "`nslazy_a/ns/`, whose `helpers.fill` writes in full, so zeros -> empty keeps the result.",
    ),
    _lazy_case(
        "lazy_getattr_list_changed_in_the_module",
        "nslazy_b",
        'LAZY["ns"] = "types:SimpleNamespace"\n',
        "keep",
        "`nslazy_b/__init__.py` adds `ns` to the names its `__getattr__` answers: `from nslazy_b "
        "import ns` is an object whose `helpers.fill` writes nothing.",
    ),
    Case(
        "full_module_path_past_a_package_getattr",
        kind="fix",
        package="nsfull_a",
        why="`from nsfull_a.ns.helpers import fill` imports the module `nsfull_a/ns/helpers.py` by "
        "its path: the import system asks no package above it for an attribute, so the "
        "`__getattr__` of `nsfull_a/__init__.py` (which answers `ns`) is never consulted and "
        "`fill` writes in full: zeros -> empty keeps the result.",
        source=_CALL.format(module="nsfull_a.ns.helpers", name="fill", call="fill"),
        scenario=_RUN,
        modules=(("nsfull_a/__init__", _GETATTR), ("nsfull_a/ns/helpers", _FULL)),
    ),
    _attribute_case("module_getattr_answers_a_namespace_name", "nsga_a", _GETATTR, False, False),
    _attribute_case("module_getattr_answers_a_subpackage_name", "nsga_b", _GETATTR, True, False),
    Case(
        "module_getattr_exported_by_a_star_import",
        package="nsga_c",
        why="`nsga_c/__init__.py` gets `__getattr__` by `from ._lazy import *` (`_lazy` lists it "
        "in `__all__`): it answers `ns` with an object whose `helpers.fill` writes nothing.",
        source=_CALL.format(module="nsga_c", name="ns", call="ns.helpers.fill"),
        scenario=_RUN,
        modules=(
            ("nsga_c/__init__", "from ._lazy import *  # noqa: F403\n"),
            ("nsga_c/_lazy", '__all__ = ["__getattr__"]\n' + _GETATTR),
            ("nsga_c/ns/helpers", _FULL),
        ),
    ),
    _attribute_case("init_binds_a_namespace_name", "nsbind_a", _BINDS, False, False),
    _attribute_case("init_binds_a_subpackage_name", "nsbind_b", _BINDS, True, False),
    _attribute_case(
        "init_binds_a_namespace_name_read_as_attribute", "nsbind_c", _BINDS, False, True
    ),
    *(
        Case(
            f"namespace_module_rebinds_fill_by_{how}",
            package=f"nsdyn_{how}",
            why="The namespace-package module defines `fill` once, then rebinds it through "
            f"{how.replace('_', ' ')}: the def its summary reads is not what the call runs.",
            source=_CALL.format(module=f"nsdyn_{how}.ns.helpers", name="fill", call="fill"),
            scenario=_RUN,
            modules=(
                (f"nsdyn_{how}/__init__", ""),
                (f"nsdyn_{how}/ns/helpers", f"{_FULL}\n\n{text}"),
            ),
        )
        for how, text in _REBINDS.items()
    ),
    *(
        Case(
            f"namespace_module_replaced_in_sys_modules_by_{how}",
            package=f"nsmods_{how}",
            why="Another module of the tree puts an object under the namespace-package module's "
            f"name in `sys.modules` ({how.replace('_', ' ')}): the import yields that object, "
            "whose `fill` writes nothing, not the file's def.",
            source=f"import nsmods_{how}.patch  # noqa: F401\n"
            + _CALL.format(module=f"nsmods_{how}.ns.helpers", name="fill", call="fill"),
            scenario=_RUN,
            modules=(
                (f"nsmods_{how}/__init__", ""),
                (f"nsmods_{how}/ns/helpers", _FULL),
                (f"nsmods_{how}/patch", "import sys\nimport types\n\n" + text.format(how=how)),
            ),
        )
        for how, text in {
            "a_store": "sys.modules['nsmods_{how}.ns.helpers'] = "
            "types.SimpleNamespace(fill=lambda x: x)\n",
            "update": "name = 'nsmods_{how}.ns.' + 'helpers'\n"
            "sys.modules.update({{name: types.SimpleNamespace(fill=lambda x: x)}})\n",
        }.items()
    ),
    Case(
        "same_name_below_a_namespace_folder_put_on_sys_path",
        why="`vend/lib/` (a namespace folder of the package `vend`) is put first on `sys.path`: "
        "`pkg.helpers` is then `vend/lib/pkg/helpers.py` (writes nothing), not the top-level "
        "`pkg/helpers.py` of the same name (writes in full).",
        source="import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname("
        "os.path.abspath(__file__)), 'vend', 'lib'))\n"
        + _CALL.format(module="pkg.helpers", name="fill", call="fill"),
        scenario=_RUN,
        modules=(
            ("vend/__init__", ""),
            ("vend/lib/pkg/__init__", ""),
            ("vend/lib/pkg/helpers", _NONE),
            ("pkg/__init__", ""),
            ("pkg/helpers", _FULL),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


BESIDE = Case(
    "module_file_beside_a_namespace_folder_not_scanned",
    package="nsbeside",
    why="`nsbeside/ns.py` (excluded from the scan) wins the import over the folder `nsbeside/ns/`: "
    "`from nsbeside.ns import helpers` is that file's object, whose `fill` writes nothing.",
    source=_CALL.format(module="nsbeside.ns", name="helpers", call="helpers.fill"),
    scenario=_RUN,
    modules=(
        ("nsbeside/__init__", ""),
        (
            "nsbeside/ns",
            "import types\n\nhelpers = types.SimpleNamespace(fill=lambda x: x)\n",
        ),
        ("nsbeside/ns/helpers", _FULL),
    ),
)


def test_module_file_beside_a_namespace_folder_not_scanned(tmp_path: Path) -> None:
    """The file that wins the import is excluded from the scan: the folder still is not a
    namespace package."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pyproject.toml").write_text('[tool.zeroopt]\nexclude = ["nsbeside/ns.py"]\n')
    found = scanned_verdicts(BESIDE, tree, ".")
    assert all(found.values()) and not any(Verdict.SAFE in v for v in found.values()), found
    check_execution(BESIDE, tmp_path / "run")


_INIT_ADDED = r"""
import types

lib = types.SimpleNamespace(torch=types.SimpleNamespace(fill_=lambda *args: None))
"""
ADDED = Case(
    "init_added_to_a_namespace_folder_after_a_cached_scan",
    package="nsadded",
    why="`nsadded/ns/__init__.py`, added after a scan whose cache holds `safe` (then "
    "`lib.torch.fill_` was torch's, through the namespace package `nsadded.ns`), binds `lib` to "
    "an object whose `fill_` writes nothing: the same submodules, another package.",
    source=r"""
import torch

from nsadded.ns import lib


def f(n):
    buf = torch.zeros(n)  # <- site
    lib.torch.fill_(buf, 1.0)
    return buf
""",
    scenario=_RUN,
    modules=(
        ("nsadded/__init__", ""),
        ("nsadded/ns/lib", "import torch\n"),
        ("nsadded/ns/__init__", _INIT_ADDED),
    ),
)


def test_init_added_to_a_namespace_folder_after_a_cached_scan(tmp_path: Path) -> None:
    """A warm scan after `__init__.py` appears in a namespace folder judges the file again."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    before = Case(ADDED.name, ADDED.source, package=ADDED.package, modules=ADDED.modules[:2])
    assert all(Verdict.SAFE in v for v in scanned_verdicts(before, tree, ".", cache).values())
    (tree / "nsadded" / "ns" / "__init__.py").write_text(_INIT_ADDED.lstrip("\n"))
    found = scanned_verdicts(ADDED, tree, ".", cache)
    assert all(found.values()) and not any(Verdict.SAFE in v for v in found.values()), found
    check_execution(ADDED, tmp_path / "run")
