"""`unsafe` shown by one path across functions, with no closed world: a returned buffer read by a
caller before any write (analysis/returned_reads.py), and a buffer stored on `self` unwritten
that another method of the class reads first (analysis/self_reads.py).

Each case reads memory nobody wrote on the path its scenario runs, so poison changes the result.
The near misses must not be `unsafe`: a caller that writes first, a function that wrote the part
read, a subclass overriding the method the call may run, a method of the class (or code of the
module) that writes the attribute, a reader that writes first, a reset by a computed attribute name, a writer in another file.
"""

from __future__ import annotations

from dataclasses import dataclass
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

CASES = [
    Case(
        "public_function_offsets_read_by_a_caller",
        expect=UNSAFE,
        why="`make_offsets` is public (callers outside the tree are unknown), but its caller in "
        "the module writes `o[1:]` and sums all of it: element 0 is read unwritten.",
        source=r"""
import torch


def make_offsets(n):
    out = torch.zeros(n + 1, dtype=torch.int64)  # <- site
    return out


def total(x):
    o = make_offsets(x.shape[0])
    o[1:] = torch.cumsum(x, 0)
    return o.sum()
""",
        scenario=r"""
def run():
    return total(torch.arange(4))
""",
    ),
    Case(
        "public_function_read_by_a_caller_in_another_module",
        expect=UNSAFE,
        package="pcr_pkg",
        why="a caller in another module imports the public `make` and accumulates into it.",
        source=r"""
import torch


def make(n):
    buf = torch.zeros(n)  # <- site
    return buf
""",
        scenario=r"""
def run():
    from pcr_pkg import user

    return user.accumulate(torch.ones(3))
""",
        modules=(
            ("pcr_pkg/__init__", ""),
            (
                "pcr_pkg/user",
                r"""
import torch

from pcr_pkg.public_function_read_by_a_caller_in_another_module import make


def accumulate(x):
    acc = make(x.shape[0])
    acc += x
    return acc
""",
            ),
        ),
    ),
    Case(
        "public_method_returned_to_self_call",
        expect=UNSAFE,
        why="`self.alloc()` runs this def (no subclass overrides it): `run` adds into it.",
        source=r"""
import torch


class Summer:
    def alloc(self, n):
        acc = torch.zeros(n)  # <- site
        return acc

    def run(self, xs):
        acc = self.alloc(xs.shape[1])
        for x in xs:
            acc += x
        return acc
""",
        scenario=r"""
def run():
    return Summer().run(torch.ones(2, 3))
""",
    ),
    Case(
        "public_function_tuple_slot_read_by_a_caller",
        expect=UNSAFE,
        why="returned as element 0 of a tuple; the caller takes it out and reduces it.",
        source=r"""
import torch


def buffers(n):
    out = torch.zeros(n)  # <- site
    return out, n


def use(n):
    a, m = buffers(n)
    return a.max() + m
""",
        scenario=r"""
def run():
    return use(4)
""",
    ),
    Case(
        "accumulator_stored_in_init_read_by_a_public_method",
        expect=UNSAFE,
        why="`__init__` stores the histogram unwritten; `count` adds into it by index; nothing "
        "else in the tree writes `.hist`.",
        source=r"""
import torch


class Histogram:
    def __init__(self, n):
        self.hist = torch.zeros(n)  # <- site

    def count(self, idx):
        self.hist.index_add_(0, idx, torch.ones(idx.shape[0]))

    def total(self):
        return self.hist.sum()
""",
        scenario=r"""
def run():
    h = Histogram(4)
    h.count(torch.tensor([0, 2]))
    return h.total()
""",
    ),
    Case(
        "counter_incremented_by_index",
        expect=UNSAFE,
        why="`__init__` stores the counters and calls a setup helper that never touches them; "
        "`bump` increments one element in place (a read-modify-write), `totals` combines them "
        "with `torch.cat`.",
        source=r"""
import torch


class Counter:
    def __init__(self, n):
        self.counts = torch.zeros(n)  # <- site
        self.setup()

    def setup(self):
        self.ready = True

    def bump(self, i):
        self.counts[i] += 1

    def totals(self):
        return torch.cat([self.counts, torch.ones(1)])
""",
        scenario=r"""
def run():
    c = Counter(3)
    c.bump(1)
    return c.totals()
""",
    ),
    Case(
        "accumulator_of_a_class_whose_init_a_subclass_overrides",
        expect=UNSAFE,
        why="a subclass overrides `__init__` (and calls the base's): an object of the base "
        "itself still runs the allocating method, then `add` reads the sums unwritten.",
        source=r"""
import torch


class Sums:
    def __init__(self, n):
        self.sums = torch.zeros(n)  # <- site

    def add(self, x):
        self.sums.add_(x)
        return self.sums.clone()


class NamedSums(Sums):
    def __init__(self, n, name):
        super().__init__(n)
        self.name = name
""",
        scenario=r"""
def run():
    return Sums(2).add(torch.ones(2))
""",
    ),
    Case(
        "accumulator_read_by_forward",
        expect=UNSAFE,
        why="`forward` adds into `self.total` and hands back a copy: the first call reads "
        "memory nobody wrote.",
        source=r"""
import torch


class Running(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.total = torch.zeros(n)  # <- site

    def forward(self, x):
        self.total += x
        return self.total.clone()
""",
        scenario=r"""
def run():
    return Running(3)(torch.ones(3))
""",
    ),
]


@dataclass(frozen=True)
class NearMiss:
    name: str
    source: str
    why: str
    scenario: str
    package: str = ""
    modules: tuple[tuple[str, str], ...] = ()

    def case(self) -> Case:
        return Case(
            self.name, self.source, self.scenario, self.why, package=self.package,
            modules=self.modules,
        )  # fmt: skip


NEAR_MISSES = [
    NearMiss(
        "caller_writes_it_first",
        why="the only caller fills the buffer before reading it.",
        source=r"""
import torch


def make(n):
    buf = torch.zeros(n)  # <- site
    return buf


def use(n):
    b = make(n)
    b.fill_(2.0)
    return b.sum()
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    NearMiss(
        "function_wrote_the_part_read",
        why="`make_offsets` writes element 0 itself: the caller's sum reads only written memory.",
        source=r"""
import torch


def make_offsets(n):
    out = torch.zeros(n + 1, dtype=torch.int64)  # <- site
    out[0] = 0
    return out


def total(x):
    o = make_offsets(x.shape[0])
    o[1:] = torch.cumsum(x, 0)
    return o.sum()
""",
        scenario=r"""
def run():
    return total(torch.arange(4))
""",
    ),
    NearMiss(
        "allocated_only_when_empty",
        why="the function allocates only when the input has no row: the caller's in-place "
        "multiply reads no element.",
        source=r"""
import torch


def project(x, w):
    if x.shape[0] == 0:
        return torch.zeros(x.shape[0], w.shape[0])  # <- site
    return x @ w.T


def scaled(x, w):
    return project(x, w).mul_(2.0)
""",
        scenario=r"""
def run():
    return scaled(torch.ones(0, 3), torch.ones(4, 3))
""",
    ),
    NearMiss(
        "method_overridden_in_a_subclass",
        why="`self.alloc()` in `run` may run `Ones.alloc`: the call is not certain to run the "
        "def of the site (the scenario runs `run` on the subclass only).",
        source=r"""
import torch


class Base:
    def alloc(self, n):
        acc = torch.zeros(n)  # <- site
        return acc

    def run(self, x):
        acc = self.alloc(x.shape[0])
        acc += x
        return acc


class Ones(Base):
    def alloc(self, n):
        return torch.ones(n)
""",
        scenario=r"""
def run():
    b = Base().alloc(3)
    b.fill_(1.0)
    return Ones().run(torch.ones(3)), b
""",
    ),
    NearMiss(
        "reset_method_writes_the_attribute",
        why="`reset` zeroes `self.acc` and the driver may always call it before `step`: a "
        "writer of the attribute keeps the read from proving anything.",
        source=r"""
import torch


class Stepper:
    def __init__(self, n):
        self.acc = torch.zeros(n)  # <- site

    def reset(self):
        self.acc.zero_()

    def step(self, x):
        self.acc += x
        return self.acc.clone()
""",
        scenario=r"""
def run():
    s = Stepper(3)
    s.reset()
    return s.step(torch.ones(3))
""",
    ),
    NearMiss(
        "module_code_writes_the_attribute",
        why="a function of the module fills `obj.acc` through any receiver before stepping.",
        source=r"""
import torch


class Stepper:
    def __init__(self, n):
        self.acc = torch.zeros(n)  # <- site

    def step(self, x):
        self.acc += x
        return self.acc.clone()


def drive(x):
    s = Stepper(x.shape[0])
    s.acc.copy_(x)
    return s.step(x)
""",
        scenario=r"""
def run():
    return drive(torch.ones(3))
""",
    ),
    NearMiss(
        "reader_writes_it_first",
        why="`step` copies into `self.acc` before adding: nothing is read unwritten.",
        source=r"""
import torch


class Stepper:
    def __init__(self, n):
        self.acc = torch.zeros(n)  # <- site

    def step(self, x):
        self.acc.copy_(x)
        self.acc += 1
        return self.acc.clone()
""",
        scenario=r"""
def run():
    return Stepper(3).step(torch.ones(3))
""",
    ),
    NearMiss(
        "init_calls_a_filler",
        why="`__init__` calls `_fill` after storing the buffer, which writes it in full.",
        source=r"""
import torch


class Stepper:
    def __init__(self, n):
        self.acc = torch.zeros(n)  # <- site
        self._fill()

    def _fill(self):
        self.acc.copy_(torch.arange(self.acc.shape[0], dtype=torch.float))

    def step(self, x):
        self.acc += x
        return self.acc.clone()
""",
        scenario=r"""
def run():
    return Stepper(3).step(torch.ones(3))
""",
    ),
    NearMiss(
        "counter_rmw_by_index_with_a_writer",
        why="`step` adds by index, but `prepare` writes the counters first (an engine protocol).",
        source=r"""
import torch


class Counter:
    def __init__(self, n):
        self.counts = torch.zeros(n)  # <- site

    def prepare(self):
        self.counts[:] = 0

    def step(self, i):
        self.counts[i] += 1
        return self.counts.clone()
""",
        scenario=r"""
def run():
    c = Counter(3)
    c.prepare()
    return c.step(1)
""",
    ),
    NearMiss(
        "reset_by_a_computed_name",
        why="`reset` zeroes every buffer it names by a computed name: `getattr(self, k)` may "
        "be `self.acc`.",
        source=r"""
import torch


class Stepper:
    names = ("ac" + "c",)

    def __init__(self, n):
        self.acc = torch.zeros(n)  # <- site

    def reset(self):
        for k in self.names:
            getattr(self, k).zero_()

    def step(self, x):
        self.acc += x
        return self.acc.clone()
""",
        scenario=r"""
def run():
    s = Stepper(3)
    s.reset()
    return s.step(torch.ones(3))
""",
    ),
    NearMiss(
        "another_file_writes_the_attribute",
        package="awa_pkg",
        why="another module of the tree writes `.acc` before stepping (an engine's protocol).",
        source=r"""
import torch


class Stepper:
    def __init__(self, n):
        self.acc = torch.zeros(n)  # <- site

    def step(self, x):
        self.acc += x
        return self.acc.clone()
""",
        scenario=r"""
def run():
    from awa_pkg import engine

    return engine.drive(torch.ones(3))
""",
        modules=(
            ("awa_pkg/__init__", ""),
            (
                "awa_pkg/engine",
                r"""
from awa_pkg.another_file_writes_the_attribute import Stepper


def drive(x):
    s = Stepper(x.shape[0])
    s.acc.fill_(0.0)
    return s.step(x)
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


@pytest.mark.parametrize("miss", [pytest.param(m, id=m.name) for m in NEAR_MISSES])
def test_near_miss_is_not_unsafe(miss: NearMiss, tmp_path: Path) -> None:
    case = miss.case()
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts, f"{case.name}: no finding at line {line}"
        assert Verdict.UNSAFE not in verdicts, (line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (base, differences)
