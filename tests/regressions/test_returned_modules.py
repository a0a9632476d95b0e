"""A buffer a module's private function returns, judged at its calls in other modules of the
tree (analysis/returned_modules.py): imports, aliases, `from . import m`, re-exports.

The program is a module of a package (`Case.package`), so that the other modules import it by
name. The "fix" cases are a function whose every caller, in its module and in another, writes
the buffer in full before reading it, the module object handed to a helper in another file that
calls only the writing function, and another module calling a function of its own of the same
name. The others read it unwritten through a way the follower
must see: a reader in another module, a star import of a name `__all__` exports, the function
handed on as a value or wrapped by `functools.partial` there, a re-export under another name, a
calling module that reaches it through `builtins`, the module object handed to a helper whose
file spells neither the module nor an import (`mod._alloc(n)`, `getattr(mod, name)`), a module
that rebinds its own `_alloc` to this one; none may be `safe`.
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
        "private_function_filled_by_callers_in_another_module",
        kind="fix",
        package="rmf_pkg",
        why="`_alloc` is called in its module and, in another module, through an alias "
        "(`from ... import _alloc as mk`) and through the module (`from . import m`); every "
        "call writes the buffer in full before any read.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmf_pkg import user

    return own(2), user.a(3), user.b(4)
""",
        modules=(
            ("rmf_pkg/__init__", ""),
            (
                "rmf_pkg/user",
                r"""
import torch

from rmf_pkg.private_function_filled_by_callers_in_another_module import _alloc as mk
from . import private_function_filled_by_callers_in_another_module as m


def a(n):
    t = mk(n)
    t.copy_(torch.arange(n, dtype=t.dtype))
    return t * 2


def b(n):
    u = m._alloc(n)
    u.fill_(5.0)
    return u.sum()
""",
            ),
        ),
    ),
    Case(
        "private_function_read_by_a_caller_in_another_module",
        package="rmr_pkg",
        why="a caller in another module imports `_alloc` under another name and sums the buffer "
        "before writing it.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmr_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rmr_pkg/__init__", ""),
            (
                "rmr_pkg/user",
                r"""
from rmr_pkg.private_function_read_by_a_caller_in_another_module import _alloc as mk


def peek(n):
    return mk(n).sum()
""",
            ),
        ),
    ),
    Case(
        "private_function_exported_by_all_to_a_star_import",
        package="rms_pkg",
        why="`__all__` exports `_alloc`; a star import binds it in another module without "
        "spelling it, and that module reads the buffer first.",
        source=r"""
import torch

__all__ = ["_alloc", "own"]


def _alloc(n):
    buf = torch.zeros(n)  # <- site
    return buf


def own(n):
    b = _alloc(n)
    b.fill_(1.0)
    return b
""",
        scenario=r"""
def run():
    from rms_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rms_pkg/__init__", ""),
            (
                "rms_pkg/user",
                r"""
from rms_pkg.private_function_exported_by_all_to_a_star_import import *


def peek(n):
    return globals()["_alloc"](n).sum()
""",
            ),
        ),
    ),
    Case(
        "private_function_handed_on_by_another_module",
        package="rmh_pkg",
        why="another module passes `_alloc` to a helper that calls it and reads the result.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmh_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rmh_pkg/__init__", ""),
            (
                "rmh_pkg/user",
                r"""
from rmh_pkg.private_function_handed_on_by_another_module import _alloc


def consume(make, n):
    return make(n).sum()


def peek(n):
    return consume(_alloc, n)
""",
            ),
        ),
    ),
    Case(
        "private_function_wrapped_by_partial_in_another_module",
        package="rmp_pkg",
        why="another module wraps `m._alloc` in `functools.partial` and reads what it returns.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmp_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rmp_pkg/__init__", ""),
            (
                "rmp_pkg/user",
                r"""
import functools

from . import private_function_wrapped_by_partial_in_another_module as m


def peek(n):
    return functools.partial(m._alloc, n)().sum()
""",
            ),
        ),
    ),
    Case(
        "private_function_re_exported_by_the_package_under_an_alias",
        package="rmx_pkg",
        why="the package's `__init__` re-exports `_alloc`; a third module imports it from the "
        "package under another name and reads the buffer first.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmx_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            (
                "rmx_pkg/__init__",
                "from .private_function_re_exported_by_the_package_under_an_alias import _alloc\n",
            ),
            (
                "rmx_pkg/user",
                r"""
from rmx_pkg import _alloc as grab


def peek(n):
    return grab(n).sum()
""",
            ),
        ),
    ),
    Case(
        "private_function_reached_through_builtins_in_a_calling_module",
        package="rmb_pkg",
        why="a module that imports `_alloc` and fills the buffer at its one spelled call also "
        "reaches `_alloc` by `builtins.eval` of a joined name and sums it unwritten (the "
        "module's dynamic flag, project.DYNAMIC_PATTERN, names `builtins`; a narrower search "
        "for `eval(` alone missed `builtins.eval` and judged the site `safe`).",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmb_pkg import user

    return own(2), user.go(3), user.peek(4)
""",
        modules=(
            ("rmb_pkg/__init__", ""),
            (
                "rmb_pkg/user",
                r"""
import builtins

from rmb_pkg.private_function_reached_through_builtins_in_a_calling_module import _alloc


def go(n):
    t = _alloc(n)
    t.fill_(2.0)
    return t


def peek(n):
    return builtins.eval("_al" + "loc")(n).sum()
""",
            ),
        ),
    ),
    Case(
        "module_object_handed_to_a_helper_that_calls_the_function",
        package="rmo_pkg",
        why="another module hands the module object to a helper in a third file, which spells "
        "neither the module nor an import of it, and calls `mod._alloc(n)` there: the helper "
        "reads the buffer before any write (the files that spell neither were skipped before).",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmo_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rmo_pkg/__init__", ""),
            (
                "rmo_pkg/user",
                r"""
from . import helper
from . import module_object_handed_to_a_helper_that_calls_the_function as m


def peek(n):
    return helper.call(m, n)
""",
            ),
            (
                "rmo_pkg/helper",
                r"""
def call(mod, n):
    return mod._alloc(n).sum()
""",
            ),
        ),
    ),
    Case(
        "module_object_handed_to_a_lookup_by_a_computed_name",
        package="rml_pkg",
        why="another module hands the module object and a joined name to a helper whose "
        "`getattr(mod, name)` fetches `_alloc`; the helper's file spells neither the module "
        "nor an import of it, and the caller reads the buffer before any write.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rml_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rml_pkg/__init__", ""),
            (
                "rml_pkg/user",
                r"""
from . import helper
from . import module_object_handed_to_a_lookup_by_a_computed_name as m


def peek(n):
    return helper.fetch(m, "_al" + "loc")(n).sum()
""",
            ),
            (
                "rml_pkg/helper",
                r"""
def fetch(mod, name):
    return getattr(mod, name)
""",
            ),
        ),
    ),
    Case(
        "module_object_handed_to_a_helper_that_calls_another_function",
        kind="fix",
        package="rmn_pkg",
        why="the module object reaches a helper in another file, which calls only `own` on it "
        "(it writes the buffer in full before reading it); no file names `_alloc` nor looks a "
        "name up by a computed one, so `own` is its only caller.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmn_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rmn_pkg/__init__", ""),
            (
                "rmn_pkg/user",
                r"""
from . import helper
from . import module_object_handed_to_a_helper_that_calls_another_function as m


def peek(n):
    return helper.call(m, n)
""",
            ),
            (
                "rmn_pkg/helper",
                r"""
def call(mod, n):
    return mod.own(n).sum()
""",
            ),
        ),
    ),
    Case(
        "another_module_calls_its_own_function_of_the_name",
        kind="fix",
        package="rmw_pkg",
        why="another module defines and calls a function `_alloc` of its own, which returns a "
        "fresh tensor: its calls resolve to that def, not to this one, whose only caller "
        "writes the buffer in full.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmw_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rmw_pkg/__init__", ""),
            (
                "rmw_pkg/user",
                r"""
import torch


def _alloc(n):
    return torch.ones(n)


def peek(n):
    return _alloc(n).sum()
""",
            ),
        ),
    ),
    Case(
        "another_module_rebinds_its_own_function_to_this_one",
        package="rmr2_pkg",
        why="another module defines a function `_alloc` of its own and then binds the name to "
        "this module's `_alloc`: the call there runs this def and reads the buffer first.",
        source=_ALLOC,
        scenario=r"""
def run():
    from rmr2_pkg import user

    return own(2), user.peek(3)
""",
        modules=(
            ("rmr2_pkg/__init__", ""),
            (
                "rmr2_pkg/user",
                r"""
import torch

from . import another_module_rebinds_its_own_function_to_this_one as m


def _alloc(n):
    return torch.ones(n)


_alloc = m._alloc


def peek(n):
    return _alloc(n).sum()
""",
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
