"""A buffer a function returns to its caller, judged at every call of the function
(analysis/returned.py, closed world over callers).

"fix" cases are allocators whose every caller writes the buffer in full before reading it: the
site is `safe` and the rewritten program behaves the same. The others are programs where some
use of the allocator reads the buffer unwritten: a caller that reads first, a caller of a
partly written buffer, the allocator referenced as a value, named in a string, imported by
another module, bound again by another module's star import over its own def of the name, or
public; none may be `safe`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_case, params

UNSAFE_ONLY = frozenset({Verdict.UNSAFE})

_ENG = r"""
import torch


class Eng:
    def _alloc(self, n):
        buf = torch.zeros(n)  # <- site
        return buf

    def use(self, n):
        b = self._alloc(n)
        b.fill_(1.0)
        return b
"""

CASES = [
    Case(
        "every_caller_fills_the_returned_buffer",
        kind="fix",
        why="`_alloc` returns a fresh zeros buffer; both callers write it in full (`fill_`, "
        "`copy_`) before reading it: the zeros are never seen.",
        source=r"""
import torch


def _alloc(n, dev):
    return torch.zeros(n, device=dev)  # <- site


def ones(n):
    t = _alloc(n, "cpu")
    t.fill_(1.0)
    return t.sum()


def ramp(n):
    t = _alloc(2 * n, "cpu")
    t.copy_(torch.arange(2 * n, dtype=t.dtype))
    return t
""",
        scenario=r"""
def run():
    return ones(4), ramp(3)
""",
    ),
    Case(
        "method_returns_and_the_caller_fills",
        kind="fix",
        why="`self._make(n)` runs Cache._make (closed world: nothing derives from Cache); the "
        "one caller writes the buffer in full before reading it.",
        source=r"""
import torch


class Cache:
    def _make(self, n):
        buf = torch.zeros(n, 2)  # <- site
        return buf

    def build(self, n):
        t = self._make(n)
        t[:] = 3.0
        return t * 2
""",
        scenario=r"""
def run():
    return Cache().build(5)
""",
    ),
    Case(
        "nested_def_returned_through_a_private_function",
        kind="fix",
        why="`_grab` writes one element and returns the buffer to `_through`, which returns it "
        "to `use`, which fills it before reading it; the nested `make` returns one to `outer`, "
        "which fills it.",
        source=r"""
import torch


def _grab(n):
    t = torch.zeros(n)  # <- site
    t[0] = 5.0
    return t


def _through(n):
    return _grab(n)


def use(n):
    r = _through(n)
    r.fill_(2.0)
    return r.sum()


def outer(n):
    def make():
        return torch.zeros(n)  # <- site

    x = make()
    x[:] = 1.0
    return x
""",
        scenario=r"""
def run():
    return use(4), outer(3)
""",
    ),
    Case(
        "a_caller_reads_the_returned_buffer_first",
        expect=UNSAFE_ONLY,
        why="`total` sums the buffer `_alloc` returned before any write: it reads the zeros.",
        source=r"""
import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def fill(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t


def total(n):
    t = _alloc(n)
    s = t.sum()
    t.fill_(1.0)
    return s + t.sum()
""",
        scenario=r"""
def run():
    return fill(2), total(3)
""",
    ),
    Case(
        "partly_written_by_the_allocator_then_read",
        why="`_alloc` writes the first element; `head` reads all of it: the rest are the zeros. "
        "The read is not a read of unwritten memory at the first element, so not `unsafe` "
        "either: unproven.",
        source=r"""
import torch


def _alloc(n):
    t = torch.zeros(n)  # <- site
    t[0] = 7.0
    return t


def head(n):
    t = _alloc(n)
    return t.sum()
""",
        scenario=r"""
def run():
    return head(4)
""",
    ),
    Case(
        "returned_through_a_caller_that_reads_it",
        expect=UNSAFE_ONLY,
        why="`_make` returns the buffer to `_through`, which returns it to `use`, which reads it "
        "before any write.",
        source=r"""
import torch


def _make(n):
    return torch.zeros(n)  # <- site


def _through(n):
    return _make(n)


def use(n):
    t = _through(n)
    return t.amax()
""",
        scenario=r"""
def run():
    return use(4)
""",
    ),
    Case(
        "allocator_passed_as_a_value",
        why="`apply(_alloc)` calls the allocator out of sight and reads the zeros it returns; "
        "the direct caller alone would write it in full.",
        source=r"""
import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def apply(fn, n):
    return fn(n).sum()


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t


def both(n):
    return direct(n), apply(_alloc, n)
""",
        scenario=r"""
def run():
    return both(3)
""",
    ),
    Case(
        "allocator_wrapped_by_partial",
        why="`functools.partial(_alloc, n)` is a reference to the allocator, not a call: the "
        "partial's call reads the zeros.",
        source=r"""
import functools

import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t


def later(n):
    return functools.partial(_alloc, n)().sum()
""",
        scenario=r"""
def run():
    return direct(2), later(3)
""",
    ),
    Case(
        "allocator_named_in_a_string",
        why="`getattr(module, '_alloc')` reaches the allocator by a literal name and reads what "
        "it returns.",
        source=r"""
import importlib

import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t


def by_name(n):
    return getattr(importlib.import_module(__name__), "_alloc")(n).sum()
""",
        scenario=r"""
def run():
    return direct(2), by_name(3)
""",
    ),
    Case(
        "private_allocator_imported_by_another_module",
        why="Another module of the tree imports `_alloc` by name and reads what it returns; the "
        "only caller in its own module writes it in full.",
        source=r"""
import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t
""",
        scenario=r"""
def run():
    import reader_of_alloc

    return direct(2), reader_of_alloc.peek(3)
""",
        modules=(
            (
                "reader_of_alloc",
                r"""
from private_allocator_imported_by_another_module import _alloc


def peek(n):
    return _alloc(n).sum()
""",
            ),
        ),
    ),
    Case(
        "same_private_name_in_an_unrelated_module",
        kind="fix",
        why="Another module of the tree has its own `_alloc` and never names this module: it "
        "cannot call this one, whose only caller writes the buffer in full.",
        source=r"""
import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t
""",
        scenario=r"""
def run():
    import unrelated_alloc

    return direct(2), unrelated_alloc.peek(3)
""",
        modules=(
            (
                "unrelated_alloc",
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
        "same_private_name_rebound_by_a_star_import",
        why="Another module defines its own `_alloc`, then star-imports this module, whose "
        "`__all__` exports `_alloc`: the star import binds the name again to this module's def, "
        "and that module reads the zeros.",
        source=r"""
import torch

__all__ = ["_alloc", "direct"]


def _alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t
""",
        scenario=r"""
def run():
    import rebound_alloc

    return direct(2), rebound_alloc.peek(3)
""",
        modules=(
            (
                "rebound_alloc",
                r"""
import torch


def _alloc(n):
    return torch.ones(n)


from same_private_name_rebound_by_a_star_import import *  # noqa: E402


def peek(n):
    return _alloc(n).sum()
""",
            ),
        ),
    ),
    Case(
        "private_allocator_re_exported_under_another_name",
        why="A module imports `_alloc` as `alloc2`; a third module, which names neither, calls "
        "`alloc2` and reads the zeros.",
        source=r"""
import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t
""",
        scenario=r"""
def run():
    import user_of_alias

    return direct(2), user_of_alias.peek(3)
""",
        modules=(
            (
                "reexport_alias",
                r"""
from private_allocator_re_exported_under_another_name import _alloc as alloc2
""",
            ),
            (
                "user_of_alias",
                r"""
from reexport_alias import alloc2


def peek(n):
    return alloc2(n).sum()
""",
            ),
        ),
    ),
    Case(
        "module_namespace_handed_to_another_module",
        why="The module hands its namespace (`direct.__globals__`) to a module that never names "
        "it, which looks `_alloc` up there and reads the zeros.",
        source=r"""
import torch


def _alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = _alloc(n)
    t.fill_(1.0)
    return t


def both(n):
    import namespace_reader

    return direct(n), namespace_reader.peek(direct.__globals__, n)
""",
        scenario=r"""
def run():
    return both(3)
""",
        modules=(
            (
                "namespace_reader",
                r"""
def peek(namespace, n):
    return namespace["_alloc"](n).sum()
""",
            ),
        ),
    ),
    Case(
        "public_allocator",
        why="`alloc` is public: code outside the scanned tree may call it and read the zeros "
        "(here the scenario does); its one caller in the module fills it.",
        source=r"""
import torch


def alloc(n):
    return torch.zeros(n)  # <- site


def direct(n):
    t = alloc(n)
    t.fill_(1.0)
    return t
""",
        scenario=r"""
def run():
    return direct(2), alloc(3).sum()
""",
    ),
    Case(
        "nested_allocator_reached_through_locals",
        why="`locals()` hands the nested `make` out without naming it; the value found there "
        "is called and its zeros read.",
        source=r"""
import torch


def outer(n):
    def make():
        return torch.zeros(n)  # <- site

    x = make()
    x.fill_(1.0)
    fns = [v for k, v in locals().items() if callable(v)]
    return x, fns[0]().sum()
""",
        scenario=r"""
def run():
    return outer(3)
""",
    ),
    Case(
        "returned_as_a_view",
        why="`_alloc` returns a view that starts after the buffer's first element; the caller "
        "fills the view, then reads the whole buffer through `._base`: the first element is "
        "the zeros.",
        source=r"""
import torch


def _alloc(n):
    t = torch.zeros(n)  # <- site
    return t[1:]


def use(n):
    v = _alloc(n)
    v.fill_(1.0)
    return v._base.sum()
""",
        scenario=r"""
def run():
    return use(4)
""",
    ),
    Case(
        "a_caller_stores_it_on_the_instance",
        why="The caller keeps the buffer on `self` before writing it, and a later method reads "
        "it: the caller is not proven, so the allocator is not either.",
        source=r"""
import torch


class Holder:
    def _make(self, n):
        return torch.zeros(n)  # <- site

    def setup(self, n):
        self.buf = self._make(n)

    def read(self):
        return self.buf.sum()
""",
        scenario=r"""
def run():
    h = Holder()
    h.setup(3)
    return h.read()
""",
    ),
    Case(
        "private_method_called_from_a_module_that_never_imports_it",
        why="An instance is handed to another module, which calls `e._alloc(n)` and reads the "
        "result: that module never spells the class's module, yet it calls the method.",
        source=_ENG,
        scenario="def run():\n    import rmo_other\n\n    return rmo_other.peek(Eng(), 4)\n",
        modules=(("rmo_other", "def peek(e, n):\n    return e._alloc(n).sum()\n"),),
    ),
    Case(
        "private_method_fetched_by_a_joined_name_in_another_module",
        why="`getattr(e, '_al' 'loc')`: implicit concatenation makes `_alloc`, which no text of "
        "that module spells.",
        source=_ENG,
        scenario="def run():\n    import rmg_other\n\n    return rmg_other.peek(Eng(), 4)\n",
        modules=(("rmg_other", 'def peek(e, n):\n    return getattr(e, "_al" "loc")(n).sum()\n'),),
    ),
    Case(
        "private_method_called_through_methodcaller",
        why="`operator.methodcaller(nm, n)` with a computed name calls `_alloc` in the "
        "method's own module, and the caller reads the result.",
        source=_ENG
        + r"""

import operator


def peek(e, n, nm):
    return operator.methodcaller(nm, n)(e).sum()
""",
        scenario="def run():\n    return peek(Eng(), 4, '_al' + 'loc')\n",
    ),
    Case(
        "private_function_fetched_by_a_joined_name_in_another_module",
        why="Another module imports this one by a string and fetches `_make` with "
        "`getattr(mod, '_ma' 'ke')`: no text spells `_make` there.",
        source=r"""
import torch


def _make(n):
    buf = torch.zeros(n)  # <- site
    return buf


def use(n):
    b = _make(n)
    b.fill_(1.0)
    return b
""",
        scenario="def run():\n    import rgj_other\n\n    return rgj_other.go(4)\n",
        modules=(
            (
                "rgj_other",
                "import importlib\n\n\ndef go(n):\n"
                "    mod = importlib.import_module("
                "'private_function_fetched_by_a_joined_name_in_another_module')\n"
                "    return getattr(mod, '_ma' 'ke')(n).sum()\n",
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
