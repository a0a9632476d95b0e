"""Counterexamples to following a module's private function to its calls in other modules
(analysis/returned_modules.py): a module that re-exports it under another name
(`from .m import _alloc as mk`), whose callers never spell `_alloc`, and a module that looks it
up in another module's namespace by a computed key (`vars(m)["_al" + "loc"]`). Each reads the
buffer unwritten.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_ALLOC = r"""
import torch


def _alloc(n):
    buf = torch.zeros(n)  # <- site
    return buf


def own(n):
    b = _alloc(n)
    b.fill_(1.0)
    return b
"""

CASES = [
    Case(
        "private_function_reexported_under_another_name_by_the_package",
        package="amr_pkg",
        why="the package's `__init__` binds `_alloc` as `mk`; another module imports `mk` from "
        "the package and sums the buffer unwritten, never spelling `_alloc`.",
        source=_ALLOC,
        scenario=r"""
def run():
    from amr_pkg import user

    return own(2), user.a(3)
""",
        modules=(
            (
                "amr_pkg/__init__",
                "from amr_pkg.private_function_reexported_under_another_name_by_the_package "
                "import _alloc as mk  # noqa: F401\n",
            ),
            ("amr_pkg/user", "from amr_pkg import mk\n\n\ndef a(n):\n    return mk(n) + 1\n"),
        ),
    ),
    Case(
        "private_function_aliased_then_reached_through_the_aliasing_module",
        package="ama_pkg",
        why="a module imports `_alloc` as `mk` and never calls it; a third module calls "
        "`alias.mk(n)` and reads the buffer unwritten.",
        source=_ALLOC,
        scenario=r"""
def run():
    from ama_pkg import user

    return own(2), user.a(3)
""",
        modules=(
            ("ama_pkg/__init__", ""),
            (
                "ama_pkg/alias",
                "from ama_pkg.private_function_aliased_then_reached_through_the_aliasing_module "
                "import _alloc as mk  # noqa: F401\n",
            ),
            (
                "ama_pkg/user",
                "from ama_pkg import alias\n\n\ndef a(n):\n    return alias.mk(n) + 1\n",
            ),
        ),
    ),
    Case(
        "private_function_looked_up_in_vars_by_a_joined_key",
        package="amv_pkg",
        why="another module reads `vars(m)['_al' + 'loc']` and calls it: the buffer is summed "
        "unwritten by a file whose text never spells `_alloc`.",
        source=_ALLOC,
        scenario=r"""
def run():
    from amv_pkg import user

    return own(2), user.a(3)
""",
        modules=(
            ("amv_pkg/__init__", ""),
            (
                "amv_pkg/user",
                "from amv_pkg import private_function_looked_up_in_vars_by_a_joined_key as m\n\n\n"
                "def a(n):\n    return vars(m)['_al' + 'loc'](n) + 1\n",
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
