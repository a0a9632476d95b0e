"""`unsafe` across functions where the allocating function writes PART of the buffer and another
function reads a part it left alone (analysis/partial_reads.py): a caller of a function that
returns the buffer (returned_reads.py), or a public method after the method that stored it on
`self` (self_reads.py). The allocating function's intervals (`State.may_writes`) start the
reader's dataflow; the uncovered-read check there decides.

`CASES` must be `unsafe`, name the allocating function's writes in their evidence, and executed
with zeros and with poison they must differ. `NEAR_MISSES` must NOT be `unsafe`, and poison
changes nothing in their scenario: a write of unknown extent, a reader that writes first, a read
of written elements only, a buffer that may be empty (a test against 0, a negative size), a
view in another layout, a branch that may cover the element, a writer elsewhere in the class,
a caller that writes the padding the allocating function left.
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
    site_findings,
    site_verdicts,
)

UNSAFE = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "returned_offsets_first_element_read_by_a_caller",
        expect=UNSAFE,
        why="`make_offsets` writes `out[1:]` and returns it; its caller doubles every element: "
        "element 0 is the zero start the caller relies on.",
        source=r"""
import torch


def make_offsets(lengths):
    out = torch.zeros(lengths.shape[0] + 1, dtype=torch.int64)  # <- site
    out[1:] = torch.cumsum(lengths, 0)
    return out


def starts(lengths):
    o = make_offsets(lengths)
    return o * 2
""",
        scenario=r"""
def run():
    return starts(torch.tensor([3, 1, 2]))
""",
    ),
    Case(
        "returned_in_a_tuple_column_left_alone",
        expect=UNSAFE,
        why="`pack` writes columns 0 and 1 of a `(n, 4)` buffer and returns it in a tuple; the "
        "caller sums column 3, which only the zeros fill.",
        source=r"""
import torch


def pack(x):
    out = torch.zeros(x.shape[0], 4)  # <- site
    out[:, :2] = x
    return out, x.shape[0]


def tail(x):
    p, n = pack(x)
    return p[:, 3].sum() + n
""",
        scenario=r"""
def run():
    return tail(torch.ones(3, 2))
""",
    ),
    Case(
        "private_function_and_caller_write_different_parts",
        expect=UNSAFE,
        why="`_mk` writes `x[2:]`, its caller writes `y[1:2]`: element 0 is written by neither "
        "and the caller's `cumsum` reads it.",
        source=r"""
import torch


def _mk(n):
    x = torch.zeros(n + 2)  # <- site
    x[2:] = 1.0
    return x


def prefix(n):
    y = _mk(n)
    y[1:2] = 5.0
    return y.cumsum(0)
""",
        scenario=r"""
def run():
    return prefix(3)
""",
    ),
    Case(
        "returned_partly_written_read_in_another_module",
        expect=UNSAFE,
        package="ppr_pkg",
        why="a caller in another module imports `make`, which wrote `buf[1:]`, and adds all of "
        "it into a result.",
        source=r"""
import torch


def make(n):
    buf = torch.zeros(n + 1)  # <- site
    buf[1:] = 2.0
    return buf
""",
        scenario=r"""
def run():
    from ppr_pkg import user

    return user.shifted(torch.ones(4))
""",
        modules=(
            ("ppr_pkg/__init__", ""),
            (
                "ppr_pkg/user",
                r"""
import torch

from ppr_pkg.returned_partly_written_read_in_another_module import make


def shifted(x):
    b = make(x.shape[0] - 1)
    return b + x
""",
            ),
        ),
    ),
    Case(
        "returned_padded_buffer_read_whole_by_a_caller",
        expect=UNSAFE,
        why="`pad` writes `x_padded[:m]` of a buffer rounded up to 8 rows; the caller's `amax` "
        "reads the padding rows, which only the zeros keep out of the maximum.",
        source=r"""
import torch


def cdiv(a, b):
    return (a + b - 1) // b


def pad(x):
    m, n = x.shape
    x_padded = torch.zeros(cdiv(m, 8) * 8, n)  # <- site
    x_padded[:m, :n] = x
    return x_padded


def block_max(x):
    xp = pad(x)
    return xp.abs().amax()
""",
        scenario=r"""
def run():
    return block_max(torch.ones(3, 2))
""",
    ),
    Case(
        "returned_topk_mask_anded_by_a_caller",
        expect=UNSAFE,
        why="`top_mask` sets the positions `topk` picks; the caller ANDs the whole mask with "
        "the valid mask: the unpicked positions must be False.",
        source=r"""
import torch


def top_mask(gate, k):
    mask = torch.zeros_like(gate, dtype=torch.bool)  # <- site
    mask.scatter_(0, gate.topk(k, dim=0).indices, True)
    return mask


def chosen(gate, valid):
    m = top_mask(gate, 1)
    return (valid & m).float()
""",
        scenario=r"""
def run():
    return chosen(torch.tensor([0.5, 2.0, 1.0]), torch.ones(3, dtype=torch.bool))
""",
    ),
    Case(
        "stored_on_self_partly_written_read_by_forward",
        expect=UNSAFE,
        why="`__init__` writes only `self.pos[1:]`; `forward` adds all of it into its input: "
        "position 0 is the zero the module relies on.",
        source=r"""
import torch


class Positions(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.pos = torch.zeros(n + 1)  # <- site
        self.pos[1:] = torch.arange(1, n + 1, dtype=torch.float32)

    def forward(self, x):
        return x + self.pos
""",
        scenario=r"""
def run():
    return Positions(3)(torch.ones(4))
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_evidence_names_the_writes_of_the_allocating_function(case: Case) -> None:
    """The `unsafe` comes from the writes carried out of the allocating function: its evidence
    says which, and which element no write covers (or which part a write leaves alone by
    construction: padding, an index write)."""
    for line, findings in site_findings(case, case.source.lstrip("\n")).items():
        texts = [f"{f.message} {' '.join(e.text for e in f.evidence)}" for f in findings]
        assert any("writes the buffer only through writes of a known extent" in t for t in texts)
        assert any("which no write on any path covers" in t or "leaves part of it alone" in t
                   for t in texts), (line, texts)  # fmt: skip


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@dataclass(frozen=True)
class NearMiss:
    name: str
    source: str
    why: str
    scenario: str

    def case(self) -> Case:
        return Case(self.name, self.source, self.scenario, self.why)


NEAR_MISSES = [
    NearMiss(
        "callee_index_write_of_unknown_extent",
        why="`x[idx] = ...` may write any element (here element 0): no conclusion.",
        source=r"""
import torch


def mk(n):
    x = torch.zeros(n + 1)  # <- site
    x[1:] = 1.0
    x[torch.tensor([0])] = 5.0
    return x


def use(n):
    return mk(n).sum()
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    NearMiss(
        "caller_writes_the_element_first",
        why="the caller writes element 0 before reading all of it.",
        source=r"""
import torch


def mk(n):
    x = torch.zeros(n + 1)  # <- site
    x[1:] = 1.0
    return x


def use(n):
    y = mk(n)
    y[0] = 3.0
    return y.sum()
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    NearMiss(
        "caller_reads_only_written_elements",
        why="the caller reads `y[1:]`, all of which `mk` wrote.",
        source=r"""
import torch


def mk(n):
    x = torch.zeros(n + 1)  # <- site
    x[1:] = 1.0
    return x


def use(n):
    y = mk(n)
    return y[1:].sum()
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    NearMiss(
        "allocated_under_a_test_against_zero",
        why="allocated only when the input is empty: the buffer has no element to read.",
        source=r"""
import torch


def mk(t):
    if t.shape[0] == 0:
        x = torch.zeros(t.shape[0], 3)  # <- site
        x[:, 1:] = 1.0
        return x
    return t


def use(t):
    return mk(t).sum()
""",
        scenario=r"""
def run():
    return use(torch.ones(0, 3))
""",
    ),
    NearMiss(
        "size_named_by_a_negative_literal",
        why="`e = -1` makes `zeros(e + 1)` empty: element 0 does not exist.",
        source=r"""
import torch


def mk():
    e = -1
    x = torch.zeros(e + 1)  # <- site
    x[1:] = 1.0
    return x


def use():
    return mk().sum()
""",
        scenario=r"""
def run():
    return use()
""",
    ),
    NearMiss(
        "returned_as_a_view_in_another_layout",
        why="`x[:, 1:]` of a `(2, 3)` buffer returned as `x.view(-1)`: the caller's `y[1:3]` "
        "is row 0's columns 1 and 2, written; intervals along dimension 1 mean nothing in the "
        "flat view.",
        source=r"""
import torch


def mk():
    x = torch.zeros(2, 3)  # <- site
    x[:, 1:] = 1.0
    return x.view(-1)


def use():
    y = mk()
    return y[1:3].sum()
""",
        scenario=r"""
def run():
    return use()
""",
    ),
    NearMiss(
        "a_branch_may_write_the_element",
        why="`x[:1]` is written on one branch (the one the scenario takes): the union of the "
        "paths covers element 0, so no path is known to leave it alone.",
        source=r"""
import torch


def mk(n, flag):
    x = torch.zeros(n + 1)  # <- site
    x[1:] = 1.0
    if flag:
        x[:1] = 2.0
    return x


def use(n):
    return mk(n, True).sum()
""",
        scenario=r"""
def run():
    return use(3)
""",
    ),
    NearMiss(
        "another_method_writes_the_attribute",
        why="`reset` writes `self.pos[0]`: it may run before `forward` (the scenario runs it).",
        source=r"""
import torch


class Positions(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.pos = torch.zeros(n + 1)  # <- site
        self.pos[1:] = 1.0

    def reset(self):
        self.pos[0] = 7.0

    def forward(self, x):
        return x + self.pos
""",
        scenario=r"""
def run():
    m = Positions(3)
    m.reset()
    return m(torch.ones(4))
""",
    ),
    NearMiss(
        "caller_writes_the_padding",
        why="the caller writes the padding rows before its whole read: the write carries no "
        "gap, so no conclusion.",
        source=r"""
import torch


def cdiv(a, b):
    return (a + b - 1) // b


def pad(x):
    m, n = x.shape
    x_padded = torch.zeros(cdiv(m, 8) * 8, n)  # <- site
    x_padded[:m, :n] = x
    return x_padded


def block_max(x):
    xp = pad(x)
    xp[x.shape[0] :] = 0.0
    return xp.abs().amax()
""",
        scenario=r"""
def run():
    return block_max(torch.ones(3, 2))
""",
    ),
    NearMiss(
        "reader_writes_the_element_first",
        why="`forward` writes `self.pos[:1]` before it reads all of it.",
        source=r"""
import torch


class Positions(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.pos = torch.zeros(n + 1)  # <- site
        self.pos[1:] = 1.0

    def forward(self, x):
        self.pos[:1] = 0.5
        return x + self.pos
""",
        scenario=r"""
def run():
    return Positions(3)(torch.ones(4))
""",
    ),
]


@pytest.mark.parametrize("miss", [pytest.param(m, id=m.name) for m in NEAR_MISSES])
def test_near_miss_is_not_unsafe(miss: NearMiss, tmp_path: Path) -> None:
    case = miss.case()
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts, f"{case.name}: no finding at line {line}"
        assert Verdict.UNSAFE not in verdicts, (line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (base, differences)
