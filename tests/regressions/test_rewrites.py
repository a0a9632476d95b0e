"""Rewrites: the text `zeroopt apply` writes must mean what the verdict means.

"keep" cases: rewriting the site (`zeros(` -> `empty(`) changes what the program does, so the
site must never be `safe` with a fix; the harness runs the text rewrite and shows the change.
"fix" cases: the site is `safe` and the program as apply rewrites it must behave the same; the
harness rewrites it with the real codemod and runs both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, params

CASES = [
    Case(
        "receiver_is_not_a_tensor",
        why=(
            "`pool.new_zeros(8)` where `pool` is an instance of a class of this module with its "
            "own `new_zeros` and no `new_empty`: the rewrite `pool.new_empty(8)` turns working "
            "code into an AttributeError. A receiver known not to be a tensor is no finding."
        ),
        source=r"""
import torch


class Pool:
    def new_zeros(self, n):
        return torch.ones(n)


def f():
    pool = Pool()
    x = pool.new_zeros(8)  # <- site
    x.fill_(1)
    return x
""",
        scenario=r"""
def run():
    return f()
""",
        kind="keep",
    ),
    Case(
        "zeros_with_out_in_keyword_arguments",
        why=(
            "`torch.zeros(4, **kw)` where kw holds `out=t` fills the existing tensor t with "
            "zeros; `torch.empty(4, **kw)` leaves t's contents in place (empty with out= only "
            "resizes). A call with a `**` argument may carry `out=`: no allocation, never safe."
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
        kind="keep",
    ),
    Case(
        "class_body_rebinds_torch",
        why=(
            "A class body declares `global torch` and rebinds the module's `torch` to a wrapper "
            "without `empty`: a class body's `global` rebinds the module name, so `torch.zeros` "
            "in f is not the torch module's, and `torch.empty(n)` raises AttributeError."
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
        kind="keep",
    ),
    Case(
        "rewrite_in_a_class_body_import",
        why=(
            "`zeros(3)` in a class body is safe, but extending the class body's "
            "`from torch import zeros` with `empty` binds a class attribute `empty` that shadows "
            "the inherited queue.Queue.empty: `Jobs().empty()` would call torch.empty. An import "
            "in a class body is never extended."
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
    return Jobs().empty(), Jobs.weights
""",
        kind="fix",
    ),
    Case(
        "rewrite_reuses_an_import_that_may_not_run",
        why=(
            "`zeros(n)` is safe, but the `from torch import empty` above it runs only in an `if` "
            "branch that returns: reusing it leaves `empty` an unbound local on the path that "
            "reaches the site (UnboundLocalError). An existing import is reused only where it "
            "dominates the call."
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
""",
        scenario=r"""
def run():
    return f(3)
""",
        kind="fix",
    ),
    Case(
        "rewrite_does_not_change_module_exports",
        why=(
            "The zeros is safe, but turning `from torch import zeros` into "
            "`from torch import zeros, empty` adds the public name `empty` to a module without "
            "`__all__`: a module that defines its own `empty` and then star-imports this one gets "
            "torch's. A rewrite must not change what a module exports (an underscore alias, or "
            "the file's own `import torch`)."
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
    import star_user

    return star_user.RESULT
""",
        modules=(
            (
                "star_user",
                r"""
import torch


def empty(shape):
    return torch.full((shape,), 7.0)


from rewrite_does_not_change_module_exports import *  # noqa: E402, F403

RESULT = (empty(2), pad(3))  # noqa: F405
""",
            ),
        ),
        kind="fix",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
