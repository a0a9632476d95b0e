"""Stores `sys.modules[k] = v` whose key the analysis reads (analysis/module_keys.py): a def of
another module is summarised only where no such store may put another object under its
module's name or a package's above it.

The "fix" case stores mock modules only under a top-level name no folder or file of the tree
has: through a private function every call of which passes a literal, and in a finder method
under an `if` that tests the name with `==` and `startswith`. The helper's `fill` is then
summarised and the site is `safe`. Each other case puts an object whose `fill` writes nothing
under the helper's own name, by a way the reading must not take for a foreign name: the
private function also handed on as a value, or called with a computed name; a test that does
not hold around the store; a prefix that is the tree's own package. None may be `safe`; each
runs with the buffer poisoned and gives another result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_CALL = r"""
import torch

import {pkg}.stubs  # noqa: F401
from {pkg}.helpers import fill


def f(n):
    buf = torch.zeros(n)  # <- site
    fill(buf)
    return buf
"""
_RUN = "def run():\n    return f(4)\n"
_FULL = "def fill(x):\n    x.fill_(1.0)\n"
_STUBS = r"""
import sys
import types


def _make_mock(name):
    mod = types.SimpleNamespace(fill=lambda x: x)
    sys.modules[name] = mod
    return mod


class _Finder:
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "{ext}" or fullname.startswith(("{ext}.", "{ext}_")):
            sys.modules[fullname] = _make_mock("{ext}.mock")
        return None


_make_mock("{ext}")
_make_mock("{ext}.language")
_Finder().find_spec("{ext}.runtime")
"""


def _case(name: str, pkg: str, why: str, extra: str, kind: str = "bug") -> Case:
    return Case(
        name,
        kind=kind,
        package=pkg,
        why=why,
        source=_CALL.format(pkg=pkg),
        scenario=_RUN,
        modules=(
            (f"{pkg}/__init__", ""),
            (f"{pkg}/helpers", _FULL),
            (f"{pkg}/stubs", _STUBS.replace("{ext}", f"{pkg}_ext") + extra.format(pkg=pkg)),
        ),
    )


CASES = [
    _case(
        "mock_modules_stored_under_a_foreign_top_level_name",
        "mkfix",
        "`_make_mock` (private, only ever called) gets literal `mkfix_ext...` names, and the "
        "finder stores only where its name is `mkfix_ext` or starts with `mkfix_ext.`/"
        "`mkfix_ext_`: no folder or file of the tree is named `mkfix_ext`, so no import of "
        "`mkfix.helpers` yields a mock; `fill` writes in full.",
        "",
        kind="fix",
    ),
    _case(
        "private_mock_maker_also_handed_on_as_a_value",
        "mkval",
        "`_make_mock` is also bound to another name and called with the helper's own name: the "
        "import of `mkval.helpers` yields the mock, whose `fill` writes nothing.",
        "\nmake = _make_mock\nmake('{pkg}.helpers')\n",
    ),
    _case(
        "private_mock_maker_called_with_a_computed_name",
        "mkcomp",
        "`_make_mock` is called with a name joined at run time, the helper's own.",
        "\n_make_mock('.'.join(['{pkg}', 'helpers']))\n",
    ),
    _case(
        "finder_test_that_does_not_hold_around_the_store",
        "mkguard",
        "The method tests the name but stores after the `if`, whatever the test said: called "
        "with the helper's own name.",
        r"""

class _Loose:
    def find_spec(self, fullname):
        if fullname.startswith("{pkg}_ext."):
            pass
        sys.modules[fullname] = _make_mock("{pkg}_ext.loose")


_Loose().find_spec("{pkg}.helpers")
""",
    ),
    _case(
        "finder_prefix_is_the_tree_package",
        "mkown",
        "The method stores under names starting `mkown.`, the tree's own package: called with "
        "the helper's name.",
        r"""

class _Own:
    def find_spec(self, fullname):
        if fullname.startswith("{pkg}."):
            sys.modules[fullname] = _make_mock("{pkg}_ext.own")


_Own().find_spec("{pkg}.helpers")
""",
    ),
]

_FINDER = r"""

class _Hook:
    def find_spec(self, name, path=None, target=None):
        if name == "{pkg}.helpers":
            import importlib.util

            class _Loader:
                def create_module(self, spec):
                    return types.SimpleNamespace(fill=lambda x: x)

                def exec_module(self, module):
                    pass

            return importlib.util.spec_from_loader(name, _Loader())
        return None


sys.meta_path.insert(0, _Hook())
"""

# The import system may hand another module for the helper's name without any `sys.modules`
# store naming it: an import hook, a folder put first on the package's `__path__`
# (anyorder_stores.import_system_altered, which function summaries ask too).
CASES += [
    _case(
        "import_hook_answers_for_the_helper_module",
        "mkhook",
        "A finder put first in `sys.meta_path` answers `mkhook.helpers` with an object whose "
        "`fill` writes nothing.",
        _FINDER,
    ),
    Case(
        "package_path_puts_another_helper_first",
        package="mkpath",
        why="`mkpath.__path__` gets `alt/` first: `mkpath.helpers` is `alt/helpers.py`, whose "
        "`fill` writes nothing.",
        source=_CALL.format(pkg="mkpath"),
        scenario=_RUN,
        modules=(
            ("mkpath/__init__", ""),
            ("mkpath/helpers", _FULL),
            ("mkpath/alt/helpers", "def fill(x):\n    return x\n"),
            (
                "mkpath/stubs",
                "import os\n\nimport mkpath\n\nmkpath.__path__.insert(0, os.path.join("
                "os.path.dirname(__file__), 'alt'))\n",
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
