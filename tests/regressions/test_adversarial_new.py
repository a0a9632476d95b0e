"""Attacks on three mechanisms: a module `__getattr__` that lists the names it answers
(analysis/module_getattr.py), lists of fresh buffers a collective fills
(analysis/dataflow/gather_lists.py) and reads inside Triton kernels (analysis/triton_reads.py).

Each `__getattr__` case is a package whose `__init__` has a hook that seems to answer only
`Tool`, a submodule `ns/helpers.py` whose `fill` writes its argument in full, and a program
`from pkg import ns` then `ns.helpers.fill(buf)`: what runs is the hook's answer, whose `fill`
writes nothing. None may be `safe`; poisoned, each gives another result. `KNOWN` cases are
wrong `safe`s that rest on a stated assumption (no other module changes the collection the hook
tests); they stay as strict known failures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_CALL = r"""
import torch

from {pkg} import ns


def f(n):
    buf = torch.zeros(n)  # <- site
    ns.helpers.fill(buf)
    return buf
"""
_FULL = "def fill(x):\n    x.fill_(1.0)\n"
_OBJ = "types.SimpleNamespace(helpers=types.SimpleNamespace(fill=lambda x: x))"
_HOOK = r"""
def __getattr__(name):
    if name == "Tool":
        return None
    raise AttributeError(name)
"""
_LISTED = (
    "import types\n\nLAZY = {{'Tool': 1}}\n{extra}\n\n\ndef __getattr__(name):\n"
    f"    if name in LAZY:\n        return {_OBJ}\n    raise AttributeError(name)\n"
)

# name -> (`__init__` text, a module of the package that the program imports first, or "")
_HOOKS = {
    "decorated": (f"import types\n\n\n@(lambda f: (lambda name: {_OBJ}))\n{_HOOK}", ""),
    "bound_by_a_global_statement": (
        "import types\n\n\ndef install():\n    global __getattr__\n\n    def __getattr__(name):\n"
        f"        return {_OBJ}\n\n\n{_HOOK}\n\ninstall()\n",
        "",
    ),
    "stored_through_globals": (
        f"import types\n{_HOOK}\n\nglobals()['__getattr__'] = lambda name: {_OBJ}\n",
        "",
    ),
    "set_on_the_module_object": (
        f"import sys\nimport types\n{_HOOK}\n\n"
        f"setattr(sys.modules[__name__], '__getattr__', lambda name: {_OBJ})\n",
        "",
    ),
    "module_class_replaced": (
        f"import sys\nimport types\n{_HOOK}\n\nclass _M(types.ModuleType):\n"
        f"    def __getattr__(self, name):\n        return {_OBJ}\n\n\n"
        "sys.modules[__name__].__class__ = _M\n",
        "",
    ),
    "redefined_under_a_condition": (
        f"import types\n{_HOOK}\n\nif True:\n    def __getattr__(name):\n        return {_OBJ}\n",
        "",
    ),
    "match_statement": (
        "import types\n\n\ndef __getattr__(name):\n    match name:\n        case 'Tool':\n"
        f"            return None\n        case _:\n            return {_OBJ}\n",
        "",
    ),
    "walrus_rebinds_the_name": (
        "import types\n\n\ndef __getattr__(name):\n    if (name := 'Tool') == 'Tool':\n"
        f"        return {_OBJ}\n    raise AttributeError(name)\n",
        "",
    ),
    "collection_changed_in_a_function": (
        _LISTED.format(extra="\n\ndef _add():\n    LAZY['ns'] = 1\n\n\n_add()"),
        "",
    ),
    "collection_changed_through_globals": (
        _LISTED.format(extra="globals()['LAZY']['ns'] = 1"),
        "",
    ),
    "collection_keys_from_a_double_star": (
        _LISTED.format(extra="").replace("{'Tool': 1}", "{'Tool': 1, **_O}").replace(
            "LAZY =", "_O = {'ns': 1}\nLAZY =", 1
        ),
        "",
    ),
    "collection_deleted_and_bound_again": (
        _LISTED.format(extra="del LAZY\nLAZY = {'ns': 1}"),
        "",
    ),
}
# Wrong `safe`s under the stated assumption that no other module changes the collection.
_KNOWN = {
    "collection_changed_by_another_module": "import {pkg}\n\n{pkg}.LAZY['ns'] = 1\n",
    "collection_imported_and_changed_by_another_module": (
        "from {pkg} import LAZY\n\nLAZY.update(ns=1)\n"
    ),
}


def _case(name: str, init: str, patch: str = "", marks: tuple[object, ...] = ()) -> Case:
    pkg = f"adv_ga_{name}"
    source = _CALL.format(pkg=pkg)
    modules = [(f"{pkg}/__init__", init), (f"{pkg}/ns/helpers", _FULL)]
    if patch:
        modules.append((f"{pkg}/patch", patch.format(pkg=pkg)))
        source = f"import {pkg}.patch  # noqa: F401\n" + source.lstrip("\n")
    return Case(
        f"module_getattr_{name}",
        package=pkg,
        why=f"`{pkg}/__init__.py`'s `__getattr__` answers `ns` ({name.replace('_', ' ')}) with "
        "an object whose `helpers.fill` writes nothing, not the submodule `ns/helpers.py`.",
        source=source,
        scenario="def run():\n    return f(4)\n",
        modules=tuple(modules),
        marks=marks,
    )


_KNOWN_MARK = pytest.mark.xfail(
    strict=True,
    reason="assumed (analysis/module_getattr.py, rule page): no other module changes the "
    "collection a lazy __getattr__ tests the name against",
)
CASES = [
    *(_case(name, init) for name, (init, _) in _HOOKS.items()),
    *(
        _case(name, _LISTED.format(extra=""), patch, (_KNOWN_MARK,))
        for name, patch in _KNOWN.items()
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
