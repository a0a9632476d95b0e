"""`unsafe` through a def that other code of the tree may replace (summaries.py
`possible_callee`): a `sys.modules[k] = m` store whose key may be any name, or a store of an
attribute of the def's name, keeps the call from being certain to run the def, so no `safe` rests
on its summary; but where nothing replaces it the def runs, and a def that reads its parameter
before writing it (or a caller that reads a returned buffer) shows one execution that reads
memory nobody wrote. The evidence names the store it assumed away.

The near misses must stay `unproven`: a def that writes its parameter in full, or leaves it
alone, proves nothing while the store may replace it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_execution,
    check_verdict,
    params,
    poisoned_runs,
    site_verdicts,
)

UNSAFE = frozenset({Verdict.UNSAFE})
UNPROVEN = frozenset({Verdict.UNPROVEN})

# Another module of the package that may put any object in `sys.modules` under any name.
_STUBS = (
    "rcp_pkg/stubs",
    r"""
import sys


def install(name, module):
    sys.modules[name] = module
""",
)
_HELPERS = (
    "rcp_pkg/helpers",
    r"""
import torch


def add_into(dst, x):
    dst += x
    return dst


def fill_from(dst, x):
    dst.copy_(x)
    return dst


def shape_of(dst):
    return dst.shape[0]
""",
)

_RUN_TOTAL = r"""
def run():
    return total(torch.ones(3))
"""

CASES = [
    Case(
        "helper_of_a_replaceable_module_accumulates",
        expect=UNSAFE,
        package="rcp_pkg",
        why="`add_into` reads `dst` before writing it; `stubs.install` may replace its module, "
        "but where it does not (this run), the zeros are added to.",
        source=r"""
import torch

from rcp_pkg.helpers import add_into


def total(x):
    buf = torch.zeros(3)  # <- site
    return add_into(buf, x)
""",
        scenario=r"""
def run():
    return total(torch.ones(3))
""",
        modules=(("rcp_pkg/__init__", ""), _STUBS, _HELPERS),
    ),
    Case(
        "inline_allocation_handed_to_a_replaceable_helper",
        expect=UNSAFE,
        package="rcp_pkg",
        why="the allocation written as the argument itself: the same read on the same path.",
        source=r"""
import torch

from rcp_pkg import helpers


def total(x):
    return helpers.add_into(torch.zeros(3), x)  # <- site
""",
        scenario=r"""
def run():
    return total(torch.ones(3))
""",
        modules=(("rcp_pkg/__init__", ""), _STUBS, _HELPERS),
    ),
    Case(
        "returned_buffer_read_by_a_caller_in_a_replaceable_module",
        expect=UNSAFE,
        package="rcp_pkg",
        why="`make` returns zeros that its caller in another module accumulates into; the "
        "import of `make` may be replaced by `stubs.install`, not in this run.",
        source=r"""
import torch


def make(n):
    out = torch.zeros(n)  # <- site
    return out
""",
        scenario=r"""
def run():
    from rcp_pkg import user

    return user.accumulate(torch.ones(3))
""",
        modules=(
            ("rcp_pkg/__init__", ""),
            _STUBS,
            (
                "rcp_pkg/user",
                r"""
from rcp_pkg.returned_buffer_read_by_a_caller_in_a_replaceable_module import make


def accumulate(x):
    acc = make(x.shape[0])
    acc += x
    return acc
""",
            ),
        ),
    ),
    Case(
        "installer_run_only_on_another_platform",
        expect=UNSAFE,
        package="rcp_pkg",
        why="the package installs its stubs only under a condition (another platform): where it "
        "does not, the helper that accumulates runs on the zeros.",
        source=r"""
import torch

from rcp_pkg.helpers import add_into


def total(x):
    buf = torch.zeros(3)  # <- site
    return add_into(buf, x)
""",
        scenario=r"""
def run():
    return total(torch.ones(3))
""",
        modules=(
            (
                "rcp_pkg/__init__",
                r"""
import sys

if sys.platform == "no-such-platform":
    from rcp_pkg.stubs import install

    install("rcp_pkg.helpers", object())
""",
            ),
            _STUBS,
            _HELPERS,
        ),
    ),
]


# The package's import runs code that stores into what cannot be the helpers' module: a module
# outside the tree (any name of `json`), a `sys.modules` entry under a name no module of the
# package has. The path where nothing replaces `add_into` stays: the read is real.
_KEEP_USER = r"""
import torch

from rcp_pkg.helpers import add_into


def total(x):
    buf = torch.zeros(3)  # <- site
    return add_into(buf, x)
"""
CASES += [
    Case(
        "package_init_patches_an_outside_module",
        expect=UNSAFE,
        package="rcp_pkg",
        why="the package sets attributes of `json` (names computed at run time): `json` is no "
        "module of the tree, so `add_into` is still the helper that accumulates.",
        source=_KEEP_USER,
        scenario=_RUN_TOTAL,
        modules=(
            (
                "rcp_pkg/__init__",
                r"""
import json

for _name in list(json.__all__):
    setattr(json, _name, getattr(json, _name))
json.JSONDecoder.add_into = None
""",
            ),
            _STUBS,
            _HELPERS,
        ),
    ),
    Case(
        "package_init_stores_a_stub_under_another_name",
        expect=UNSAFE,
        package="rcp_pkg",
        why="the package puts a stub in `sys.modules` under a name that is no module of it.",
        source=_KEEP_USER,
        scenario=_RUN_TOTAL,
        modules=(
            (
                "rcp_pkg/__init__",
                r"""
import sys
import types

sys.modules["rcp_fake_dependency"] = types.ModuleType("rcp_fake_dependency")
""",
            ),
            _STUBS,
            _HELPERS,
        ),
    ),
]

# A def that writes the buffer in full, or never touches it, decides nothing while another
# object may run in its place: these stay `unproven` (never `safe`, never `unsafe`).
NEAR_MISSES = [
    Case(
        "replaceable_helper_writes_in_full",
        expect=UNPROVEN,
        package="rcp_pkg",
        source=r"""
import torch

from rcp_pkg.helpers import fill_from


def copy(x):
    buf = torch.zeros(3)  # <- site
    return fill_from(buf, x)
""",
        modules=(("rcp_pkg/__init__", ""), _STUBS, _HELPERS),
    ),
    Case(
        "replaceable_helper_looks_only_at_the_shape",
        expect=UNPROVEN,
        package="rcp_pkg",
        source=r"""
import torch

from rcp_pkg.helpers import shape_of


def measure(x):
    buf = torch.zeros(3)  # <- site
    n = shape_of(buf)
    buf.copy_(x)
    return buf * n
""",
        modules=(("rcp_pkg/__init__", ""), _STUBS, _HELPERS),
    ),
]

# Replaced at import time: the package above the module (imported before it, always) or a module
# its import runs replaces the def before any call can run it, so no path runs the def that reads
# (every poisoned run gives the zeros result). These must not be `unsafe`.
_REAL_HELPERS = (
    "imp_pkg/real_helpers",
    r"""
def add_into(dst, x):
    dst.copy_(x)
    return dst
""",
)
_READING_HELPERS = (
    "imp_pkg/helpers",
    r"""
def add_into(dst, x):
    dst += x
    return dst
""",
)
_USER = r"""
import torch

from imp_pkg.helpers import add_into


def total(x):
    buf = torch.zeros(3)  # <- site
    return add_into(buf, x)
"""
_RUN = r"""
def run():
    return total(torch.ones(3))
"""
REPLACED_AT_IMPORT = [
    Case(
        "package_init_stores_over_the_def",
        package="imp_pkg",
        why="`imp_pkg/__init__` sets the module's `add_into` to a function that writes in full.",
        source=r"""
import torch


def add_into(dst, x):
    dst += x
    return dst


def total(x):
    buf = torch.zeros(3)  # <- site
    return add_into(buf, x)
""",
        scenario=r"""
def run():
    import imp_pkg  # noqa: F401  (Python imports the package before any module of it)

    return total(torch.ones(3))
""",
        modules=(
            (
                "imp_pkg/__init__",
                r"""
from imp_pkg import package_init_stores_over_the_def as _m


def _fill(dst, x):
    dst.copy_(x)
    return dst


_m.add_into = _fill
""",
            ),
        ),
    ),
    Case(
        "package_init_puts_another_module_in_sys_modules",
        package="imp_pkg",
        source=_USER,
        scenario=_RUN,
        modules=(
            (
                "imp_pkg/__init__",
                r"""
import sys

from imp_pkg import real_helpers

sys.modules["imp_pkg.helpers"] = real_helpers
""",
            ),
            _REAL_HELPERS,
            _READING_HELPERS,
        ),
    ),
    Case(
        "package_init_calls_an_installer_of_another_module",
        package="imp_pkg",
        source=_USER,
        scenario=_RUN,
        modules=(
            (
                "imp_pkg/__init__",
                r"""
from imp_pkg import real_helpers
from imp_pkg.stubs import install

install("imp_pkg.helpers", real_helpers)
""",
            ),
            (
                "imp_pkg/stubs",
                r"""
import sys


def install(name, module):
    sys.modules[name] = module
""",
            ),
            _REAL_HELPERS,
            _READING_HELPERS,
        ),
    ),
    Case(
        "package_init_loops_over_names_it_replaces",
        package="imp_pkg",
        source=_USER,
        scenario=_RUN,
        modules=(
            (
                "imp_pkg/__init__",
                r"""
import sys

from imp_pkg import real_helpers

for _name in ("imp_pkg.helpers",):
    sys.modules[_name] = real_helpers
""",
            ),
            _REAL_HELPERS,
            _READING_HELPERS,
        ),
    ),
]



def _replacing_init(text: str) -> Case:
    return Case(
        "",
        package="imp_pkg",
        source=_USER,
        scenario=_RUN,
        modules=(("imp_pkg/__init__", text), _REAL_HELPERS, _READING_HELPERS),
    )


def _named(name: str, case: Case, *more: tuple[str, str]) -> Case:
    return Case(
        name,
        package=case.package,
        source=case.source,
        scenario=case.scenario,
        modules=(*case.modules, *more),
    )


REPLACED_AT_IMPORT += [
    _named(
        "package_init_calls_a_function_that_sets_the_def",
        _replacing_init("from imp_pkg.patching import apply\n\napply()\n"),
        (
            "imp_pkg/patching",
            r"""
from imp_pkg import helpers, real_helpers


def apply():
    setattr(helpers, "add_into", real_helpers.add_into)
""",
        ),
    ),
    _named(
        "package_init_loops_over_pairs_that_include_the_def",
        _replacing_init(
            r"""
import json

from imp_pkg import helpers, real_helpers

for _mod, _attr, _fn in [(json, "dumps", json.dumps), (helpers, "add_into", real_helpers.add_into)]:
    setattr(_mod, _attr, _fn)
"""
        ),
    ),
    _named(
        "package_init_patches_a_parameter",
        _replacing_init(
            r"""
from imp_pkg import helpers, real_helpers


def _patch(target, fn):
    target.add_into = fn


_patch(helpers, real_helpers.add_into)
"""
        ),
    ),
    _named(
        "package_init_stores_under_a_computed_key",
        _replacing_init(
            r"""
import sys

from imp_pkg import real_helpers


def _names():
    return ["helpers"]


for _n in _names():
    sys.modules[f"imp_pkg.{_n}"] = real_helpers
"""
        ),
    ),
    _named(
        "package_init_builds_a_patcher",
        _replacing_init(
            r"""
from imp_pkg import helpers, real_helpers


class _Patcher:
    def __init__(self, module):
        self.install(module)

    def install(self, module):
        module.add_into = real_helpers.add_into


_Patcher(helpers)
"""
        ),
    ),
    _named(
        "package_init_decorates_with_a_patcher_factory",
        _replacing_init(
            r"""
from imp_pkg import helpers


def _register(name):
    def deco(fn):
        setattr(helpers, name, fn)
        return fn

    return deco


@_register("add_into")
def _fill(dst, x):
    dst.copy_(x)
    return dst
"""
        ),
    ),
    _named(
        "package_init_makes_an_instance_of_a_patching_base",
        _replacing_init(
            r"""
from imp_pkg import helpers, real_helpers


class _Base:
    def __init__(self):
        helpers.add_into = real_helpers.add_into


class _Sub(_Base):
    pass


_Sub()
"""
        ),
    ),
    _named(
        "package_init_derives_from_a_patching_base",
        _replacing_init(
            r"""
from imp_pkg import helpers, real_helpers


class _Base:
    def __init_subclass__(cls):
        setattr(helpers, "add_into", real_helpers.add_into)


class _Sub(_Base):
    pass
"""
        ),
    ),
    Case(
        "another_module_stores_over_a_re_export",
        package="imp_pkg",
        source=_USER.replace("from imp_pkg.helpers import add_into", "from imp_pkg import add_into"),
        scenario=_RUN,
        modules=(
            (
                "imp_pkg/__init__",
                "from imp_pkg.helpers import add_into\nfrom imp_pkg import rebind  # noqa: F401\n",
            ),
            (
                "imp_pkg/rebind",
                r"""
import imp_pkg
from imp_pkg import real_helpers

imp_pkg.add_into = real_helpers.add_into
""",
            ),
            _REAL_HELPERS,
            _READING_HELPERS,
        ),
    ),
    _named(
        "package_init_hands_setattr_on",
        _replacing_init(
            r"""
import functools

from imp_pkg import helpers, real_helpers

functools.partial(setattr, helpers)("add_into", real_helpers.add_into)
"""
        ),
    ),
    _named(
        "package_init_calls_object_setattr",
        _replacing_init(
            r"""
from imp_pkg import helpers, real_helpers

object.__setattr__(helpers, "add_into", real_helpers.add_into)
"""
        ),
    ),
    _named(
        "package_init_decorates_with_a_patcher",
        _replacing_init(
            r"""
from imp_pkg import helpers


def _install(fn):
    helpers.add_into = fn
    return fn


@_install
def _fill(dst, x):
    dst.copy_(x)
    return dst
"""
        ),
    ),
]


@pytest.mark.parametrize("case", params(REPLACED_AT_IMPORT))
def test_replaced_at_import_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts and Verdict.UNSAFE not in verdicts, (case.name, line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (case.name, base, differences)


def test_source_from_stdin_is_not_unsafe(tmp_path: Path) -> None:
    """From stdin no other file of the tree is read: the package above may replace the def
    at import (it does here), so the call proves no read."""
    case = REPLACED_AT_IMPORT[0]
    for name, text in case.modules:
        (tmp_path / f"{name}.py").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{name}.py").write_text(text.lstrip("\n"))
    source = case.source.lstrip("\n")
    done = subprocess.run(
        [sys.executable, "-m", "zeroopt", "scan", "-", "--stdin-filename",
         f"imp_pkg/{case.name}.py", "--format", "json", "--no-cache", "--exit-zero"],
        input=source, capture_output=True, text=True, cwd=tmp_path, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout)["findings"]
    assert [f["verdict"] for f in found if f["line"] in case.sites] == ["unproven"], found


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("case", params(NEAR_MISSES))
def test_near_miss_stays_unproven(case: Case) -> None:
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts and set(verdicts) == {Verdict.UNPROVEN}, (case.name, line, verdicts)
