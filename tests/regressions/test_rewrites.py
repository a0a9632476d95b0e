"""Rewrites: where `torch.empty` is not what the rewritten text would call, or the rewrite changes the program.

Each case is a program whose allocation marked `# <- site` is read before it is written on some
run; `tests/regressions/harness.py` checks the verdict there and executes it with zeros and with
poison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        'receiver_is_not_a_tensor',
        why=(
            'The analysis said `safe` for `pool.new_zeros(8)` at line 11, col 9, with the fix '
            '`pool.new_empty(8)`. But `pool` is an instance of a class defined in this very module '
            'whose `new_zeros` is its own method; it has no `new_empty`. `zeroopt apply` would turn'
            ' working code into an AttributeError. Oracle: the fix text, run in place of the call, '
            'raises "AttributeError: \'Pool\' object has no attribute \'new_empty\'". Like a user\'s own'
            ' `zeros` function (issue 2: "a user\'s own zeros function ... is not [found]"), '
            '`.new_zeros` on a receiver known to be a non-tensor (an instance of a local class, or '
            'any module that defines a `new_zeros` method) should not be a finding, or at least get'
            ' no fix. '
        ),
        source=r"""
import torch


class Pool:
    def new_zeros(self, n):
        return torch.ones(n)


def f(inp, n, k, flag):
    pool = Pool()
    x = pool.new_zeros(8)  # <- site
    x.fill_(1)
    return x


def f_fixed(inp, n, k, flag):  # what `zeroopt apply` writes
    pool = Pool()
    x = pool.new_empty(8)
    x.fill_(1)
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(32.0).reshape(4, 8)
    return f(inp, 0, 0, False)
""",
    ),
    Case(
        'zeros_with_out_in_keyword_arguments',
        why=(
            '`torch.zeros(4, **kw)` where kw holds `out=t` fills the existing tensor t with zeros; '
            'The analysis said `safe` ("`x` is never read") at line 7 and its fix is '
            "`torch.empty(4, **kw)`, which leaves t's old contents in place (empty(out=t) only "
            'resizes). Why: analysis/sites.py _allocation_name skips `out=` calls only when the '
            'keyword is spelled out (`any(k.arg == "out" ...)`); a `**kw` keyword (k.arg is None) '
            'may carry out=. The analysis then follows x, never t, so the read of t at line 8 is '
            'not seen either. Such a site should not be an allocation (or at least never safe) when'
            ' the call has a `**` argument. sum() with the original and with the fix applied '
            '(torch.empty). '
        ),
        source=r"""
import torch


def f():
    t = torch.ones(4)
    kw = {"out": t}
    x = torch.zeros(4, **kw)  # <- site
    return t.sum()
""",
        scenario=r"""
def run():
    return f()
""",
    ),
    Case(
        'class_body_rebinds_torch',
        why=(
            'The analysis said `safe` for the torch.zeros at line 19 ("written in full (line 20)"),'
            ' and `zeroopt apply` rewrites it to `torch.empty(n)`. But `torch` is not the torch '
            "module there. Why: a class body may declare `global torch` and rebind the module's "
            '`torch` (here to a wrapper without `empty`). analysis/resolve.py _ScopeBuilder ignores'
            ' `global`/`nonlocal` in class bodies ("module and class bodies ignore them") and binds'
            " `torch` in the class scope, so the module's `torch` still resolves to `import torch` "
            "alone. (libcst's QualifiedNameProvider, used by patcher/codemod.py, is fooled the same"
            " way, so the rewrite goes through.) A class body's `global` does rebind module names; "
            'it must send the binding to the module scope (and `nonlocal` to the enclosing '
            'function, see 003.py). '
        ),
        source=r"""
import torch


class Counter:
    def __init__(self, real):
        self.real, self.n = real, 0

    def zeros(self, *shape):
        self.n += 1
        return self.real.zeros(*shape)


class Config:
    global torch
    torch = Counter(torch)


def f(n):
    x = torch.zeros(n)  # <- site
    x.fill_(1)
    return x
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        'rewrite_in_a_class_body_import',
        why=(
            'The analysis said `safe` for `zeros(3)` at line 9 (class body, "written in full (line '
            '10)"), and `zeroopt apply` rewrites it to `empty(3)`, adding `empty` to the import in '
            'the class body: `from torch import zeros, empty`. That import binds `empty` as a class'
            ' attribute of `Jobs`, which shadows the inherited method queue.Queue.empty: '
            '`Jobs().empty()` now calls torch.empty(<the queue>) and raises TypeError. Why: '
            'patcher/codemod.py _via_zeros_import checks only that the name `empty` is unused as a '
            '*Name* anywhere in the module (`self.taken`); an import in a class body creates an '
            'attribute, visible through instances and subclasses, where an inherited `empty` '
            '(spelled only as `q.empty`, an attribute) may live. (The `_torch_empty` alias is '
            'visible there too, only less likely to clash.) Safer: never extend an import that sits'
            ' in a class body. ..)`; with the patched import it raises TypeError. (`zeroopt apply '
            '004.py` writes exactly that: `from torch import zeros, empty` and `weights = '
            'empty(3)`.) '
        ),
        source=r"""
import queue

import torch


class Jobs(queue.Queue):
    from torch import zeros

    weights = zeros(3)  # <- site
    weights.fill_(1)
""",
        scenario=r"""
def run():
    return Jobs.weights
""",
    ),
    Case(
        'rewrite_reuses_an_import_that_may_not_run',
        why=(
            'The analysis said `safe` for `zeros(n)` at line 10 ("written in full (line 11)"), and '
            '`zeroopt apply` rewrites it to `empty(n)`, reusing the `from torch import empty` on '
            'line 7. But that import runs only in the `if` branch, which returns: on the path that '
            'reaches line 10, `empty` is an unbound local, and the patched function raises '
            'UnboundLocalError. Why: patcher/codemod.py _Planner._existing_binding accepts a name '
            "when every assignment of it in the call's scope is an import of torch.empty *on an "
            'earlier line* (`self._start_line(a.node) < before_line`). An earlier line is not an '
            'import that has run: it may sit in a branch, a loop body run later, an `except`, or a '
            '`def`. It should be accepted only where the import dominates the call (or only at the '
            'top level of the module, before any use). A variant: `if TYPE_CHECKING: from torch '
            'import empty` at module level, above a function that calls `zeros`, is taken the same '
            'way; the patched call raises NameError at run time. '
        ),
        source=r"""
import torch
from torch import zeros


def f(n, like=None):
    if like is not None:
        from torch import empty

        return empty(like.shape)
    x = zeros(n)  # <- site
    x.fill_(1)
    return x


def f_patched(n, like=None):  # f as `zeroopt apply` writes it
    if like is not None:
        from torch import empty

        return empty(like.shape)
    x = empty(n)
    x.fill_(1)
    return x
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        'rewrite_does_not_change_module_exports',
        why=(
            'the `safe` zeros at line 11 was right, but apply turned `from torch import zeros` into'
            ' `from torch import zeros, empty`, adding the public name `empty` to a module without '
            '`__all__`. A module that did `from numpy import empty` and then `from <this module> '
            "import *` got torch's `empty` over numpy's and broke with a TypeError. A rewrite must "
            'not change what a module exports: a module-level import gains only an underscore alias'
            " (`empty as _torch_empty`), or the file's own `import torch` is used. "
            'tests/test_unsound_regressions.py rewrites this file and imports it from a star-'
            'importer. '
        ),
        source=r"""
from torch import zeros


def ones_like_first(n):
    buf = zeros(n)
    buf.fill_(1.0)
    return buf


def pad(n):
    out = zeros(n)  # <- site
    out.copy_(ones_like_first(n))
    return out
""",
        scenario=r"""
def run():
    return pad(3)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_the_site_is_not_safe(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_poison_changes_the_result(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
