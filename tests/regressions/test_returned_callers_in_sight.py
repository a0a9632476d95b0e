"""The calls of the tree checked before a returned buffer with an element no write covers is
called `unsafe` (analysis/returned_uncovered.py): each call that may run the function, resolved
or only spelled with its name, is analysed from the function's writes.

The cases keep the claim where the tree's callers read the element, hand all of it to code out
of sight, return it to callers that do, or store it on an object. The near misses must stay
`unproven`, and are executed to show the zeros never matter there: a caller of the tree reads
only the part that was written (in a module that uses `globals()`, through an object, an alias,
a literal `getattr`, a staticmethod, a property, `forward` run by calling the module, a dunder
run by syntax, a list of its own, an alias imported by another module), writes the element first
(above a function that returns it again), hands only the written part on, hands it to a callable
it was given; a decorator of the tree writes it; or a dimension is 0 whatever its names hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    check_execution,
    check_never_read,
    check_verdict,
    params,
)

UNSAFE = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "handed_to_a_library_call_by_its_caller",
        expect=UNSAFE,
        why="the only caller of the tree hands all of it to `torch.cumsum` (code out of "
        "sight): element 0 reaches the result as the allocation left it.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = lens
    return out


def offsets(lens):
    return torch.cumsum(starts(lens), 0)
""",
        scenario=r"""
def run():
    return offsets(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "returned_again_by_a_private_function",
        expect=UNSAFE,
        why="`_meta` returns it again in a tuple to the public `build`, which returns it: no "
        "caller of the tree writes or reads part of it.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = lens
    return out


def _meta(lens):
    s = starts(lens)
    return s, lens.shape[0]


def build(lens):
    s, _ = _meta(lens)
    return s
""",
        scenario=r"""
def run():
    return build(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "stored_on_the_object_a_caller_builds",
        expect=UNSAFE,
        why="the caller stores it on the batch object it returns (its readers are assumed to read "
        "what it holds); element 0 is never written.",
        source=r"""
import types

import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def make_batch(lens):
    batch = types.SimpleNamespace()
    batch.cu = starts(lens)
    return batch
""",
        scenario=r"""
def run():
    return make_batch(torch.tensor([1.0, 2.0])).cu
""",
    ),
    Case(
        "a_caller_reads_it_before_writing_it",
        expect=UNSAFE,
        why="`peek` sums all of it, element 0 included, before it fills it: one caller of the "
        "tree reads it, whatever another caller writes first.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = lens
    return out


def peek(lens):
    s = starts(lens)
    total = s.sum()
    s.fill_(0.0)
    return total


def head(lens):
    s = starts(lens)
    s[0] = 1.0
    return s
""",
        scenario=r"""
def run():
    return peek(torch.tensor([1.0, 2.0]))
""",
    ),
]

NEAR_MISSES = [
    Case(
        "a_caller_in_a_module_that_uses_globals",
        why="the module looks names up through `globals()` (no call is certain to run `starts`), "
        "yet its caller spelled `starts(...)` reads only the part that was written.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def total(lens):
    return starts(lens)[1:].sum()


def lookup(name):
    return globals()[name]
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_caller_through_an_object_reads_the_written_part",
        why="`Starts().starts(lens)` is a call of the public method through an object: it reads "
        "only rows 1 on.",
        source=r"""
import torch


class Starts:
    def starts(self, lens):
        out = torch.zeros(lens.shape[0] + 1)  # <- site
        out[1:] = torch.cumsum(lens, 0)
        return out


def total(lens):
    return Starts().starts(lens)[1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "handed_to_a_callable_parameter",
        why="the caller hands it to `fn`, its own parameter: the tree passes a reader of the "
        "written part.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def use(lens, fn):
    return fn(starts(lens))


def total(lens):
    return use(lens, lambda t: t[1:].sum())
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_caller_hands_on_the_written_part",
        why="the caller hands `t[1:]` (a view of what was written) to code out of sight, not "
        "element 0.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def total(lens):
    t = starts(lens)
    v = t[1:]
    return torch.nn.functional.relu(v)
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "returned_again_to_a_reader_of_the_written_part",
        why="`_mid` returns it again; its caller reads only rows 1 on.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def _mid(lens):
    return starts(lens)


def total(lens):
    return _mid(lens)[1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "returned_again_to_a_writer",
        why="`_mid` returns it again; its caller writes element 0 before reading.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def _mid(lens):
    return starts(lens)


def total(lens):
    t = _mid(lens)
    t[0] = 1.0
    return t
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "called_through_a_local_alias",
        why="`p = starts` then `p(lens)[1:]`: the name is used as a value, the call is not "
        "spelled `starts`.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def total(lens):
    p = starts
    return p(lens)[1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "looked_up_by_a_literal_name",
        why='`getattr(module, "starts")(lens)[1:]` calls it by a name the syntax shows and reads '
        "the written part.",
        source=r"""
import sys

import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def total(lens):
    return getattr(sys.modules[__name__], "starts")(lens)[1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_decorator_of_the_tree_writes_element_zero",
        why="the tree's decorator wraps `starts` and writes element 0 of its result.",
        source=r"""
import torch


def head(fn):
    def wrapper(*args):
        t = fn(*args)
        t[0] = 0.0
        return t

    return wrapper


@head
def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def total(lens):
    return starts(lens)
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_staticmethod_called_through_its_class",
        why="`Starts.starts(lens)[1:]` reads only the written rows.",
        source=r"""
import torch


class Starts:
    @staticmethod
    def starts(lens):
        out = torch.zeros(lens.shape[0] + 1)  # <- site
        out[1:] = torch.cumsum(lens, 0)
        return out


def total(lens):
    return Starts.starts(lens)[1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_property_read_in_part",
        why="the property is read as `obj.starts[1:]`: an attribute, no call spelled, only the "
        "written part.",
        source=r"""
import torch


class Starts:
    def __init__(self, lens):
        self.lens = lens

    @property
    def starts(self):
        out = torch.zeros(self.lens.shape[0] + 1)  # <- site
        out[1:] = torch.cumsum(self.lens, 0)
        return out


def total(lens):
    return Starts(lens).starts[1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "forward_run_by_calling_the_module",
        why="`Starts()(lens)` runs `forward` without spelling it; the caller reads the written "
        "part.",
        source=r"""
import torch


class Starts(torch.nn.Module):
    def forward(self, lens):
        out = torch.zeros(lens.shape[0] + 1)  # <- site
        out[1:] = torch.cumsum(lens, 0)
        return out


def total(lens):
    return Starts()(lens)[1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_dunder_run_by_syntax",
        why="`Starts()[lens]` runs `__getitem__`; the caller reads the written part.",
        source=r"""
import torch


class Starts:
    def __getitem__(self, lens):
        out = torch.zeros(lens.shape[0] + 1)  # <- site
        out[1:] = torch.cumsum(lens, 0)
        return out


def total(lens):
    return Starts()[lens][1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_list_the_caller_reads_back",
        why="the caller appends it to its own list and reads the written part back from there.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def total(lens):
    xs = []
    xs.append(starts(lens))
    return xs[0][1:].sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "a_dimension_that_is_always_zero",
        why="`n - n` rows: the buffer has no element to hand back.",
        source=r"""
import torch


def starts(n):
    out = torch.zeros(n - n, 2)  # <- site
    out[1:] = 1.0
    return out
""",
        scenario=r"""
def run():
    return globals()["sta" + "rts"](3)
""",
    ),
    Case(
        "an_alias_imported_by_a_module_that_uses_globals",
        why="another module imports `starts` as `mk` and looks names up through `globals()` "
        "(no call there is certain to run it), yet reads only the part that was written.",
        package="rcs_pkg",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out
""",
        scenario=r"""
def run():
    from rcs_pkg import user

    return user.total(torch.tensor([1.0, 2.0]))
""",
        modules=(
            ("rcs_pkg/__init__", ""),
            (
                "rcs_pkg/user",
                r"""
from rcs_pkg.an_alias_imported_by_a_module_that_uses_globals import starts as mk


def total(lens):
    return mk(lens)[1:].sum()


def lookup(name):
    return globals()[name]
""",
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("case", params(NEAR_MISSES))
def test_near_miss_is_unproven_and_never_read(case: Case, tmp_path: Path) -> None:
    check_never_read(case, tmp_path)
