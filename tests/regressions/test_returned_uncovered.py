"""`unsafe` where a function writes part of a buffer and returns it to callers the tree does not
show, with an element no write covers (analysis/returned_uncovered.py).

Each case's scenario is a caller reading what the function returns, so poison in the element
no write covers changes the result; it reaches the function by a computed name, as code outside
the tree would (a caller the tree names decides by itself: returned_reads.py). The near misses must not be `unsafe`: every element
written (through an alias, by an `if`'s both arms), nothing written (an allocator whose callers
fill it), a write of unknown extent (a tensor index, an unknown helper, a loop index), a buffer
that may be empty (an `if` testing for 0), and the guard's rule (`torch.empty`, judged with
`judge_empties`), which claims no read it cannot see.
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
from zeroopt.analysis.options import AnalysisOptions
from zeroopt.scan.file_analysis import analyse_source

UNSAFE = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "offsets_with_element_zero_unwritten",
        expect=UNSAFE,
        why="`cu_seqlens[1:]` is the only write: element 0 is handed back as the allocation left it.",
        source=r"""
import torch


def build_cu_seqlens(lens):
    cu_seqlens = torch.zeros(lens.shape[0] + 1, dtype=torch.int64)  # <- site
    cu_seqlens[1:] = torch.cumsum(lens, 0)
    return cu_seqlens
""",
        scenario=r"""
def run():
    return globals()["build_" + "cu_seqlens"](torch.tensor([2, 3, 4]))
""",
    ),
    Case(
        "padding_columns_in_a_tuple",
        expect=UNSAFE,
        why="columns 64..127 of a (4, 128) buffer are never written; it is returned in a tuple.",
        source=r"""
import torch


def pad_features(x):
    padded = torch.zeros(4, 128)  # <- site
    padded[:, :64] = x
    return padded, 64
""",
        scenario=r"""
def run():
    padded, _ = globals()["pad_" + "features"](torch.ones(4, 64))
    return padded
""",
    ),
    Case(
        "dict_slot_after_out_of_a_slice",
        expect=UNSAFE,
        why="the buffer is returned as a dict value after `out=` of a slice from 1 on (PyTorch "
        "may resize it only from its offset on): element 0 stays as allocated.",
        source=r"""
import torch


def metadata(lens):
    indptr = torch.zeros(lens.shape[0] + 1, dtype=torch.int64)  # <- site
    torch.cumsum(lens, 0, out=indptr[1:])
    return {"indptr": indptr, "n": lens.shape[0]}
""",
        scenario=r"""
def run():
    return globals()["meta" + "data"](torch.tensor([1, 2]))["indptr"]
""",
    ),
    Case(
        "returned_as_a_view_of_all_of_it",
        expect=UNSAFE,
        why="`out.unsqueeze(1)` hands back every element; row 0 is never written.",
        source=r"""
import torch


def column(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out.unsqueeze(1)
""",
        scenario=r"""
def run():
    return globals()["col" + "umn"](torch.tensor([1.0, 2.0]))
""",
    ),
    Case(
        "method_of_a_class_with_a_base",
        expect=UNSAFE,
        why="a public method of an nn.Module subclass writes rows 1.. only and returns the buffer.",
        source=r"""
import torch


class Starts(torch.nn.Module):
    def starts(self, lens):
        out = torch.zeros(lens.shape[0] + 1, 2)  # <- site
        out[1:, :] = torch.cumsum(lens, 0).unsqueeze(1).float()
        return out
""",
        scenario=r"""
def run():
    return getattr(Starts(), "st" + "arts")(torch.tensor([1, 2, 3]))
""",
    ),
]


@dataclass
class NearMiss:
    name: str
    source: str
    why: str
    scenario: str

    def case(self) -> Case:
        return Case(self.name, self.source, self.scenario, self.why)


NEAR_MISSES = [
    NearMiss(
        "a_caller_in_the_tree_writes_it_first",
        why="the tree's caller writes element 0 before reading: the result is not read as is.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    return out


def total(lens):
    s = starts(lens)
    s[0] = 5.0
    return s.sum()
""",
        scenario=r"""
def run():
    return total(torch.tensor([1.0, 2.0]))
""",
    ),
    NearMiss(
        "element_zero_written_through_an_alias",
        why="`head = out[:1]` then `head.fill_(0)`: every element is written.",
        source=r"""
import torch


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1, dtype=torch.int64)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    head = out[:1]
    head.fill_(0)
    return out
""",
        scenario=r"""
def run():
    return globals()["sta" + "rts"](torch.tensor([1, 2]))
""",
    ),
    NearMiss(
        "both_arms_write_the_rest",
        why="each arm of the `if` writes element 0: no element is left on any path.",
        source=r"""
import torch


def starts(lens, first):
    out = torch.zeros(lens.shape[0] + 1, dtype=torch.int64)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    if first:
        out[0] = 1
    else:
        out[0] = 0
    return out
""",
        scenario=r"""
def run():
    f = globals()["sta" + "rts"]
    return f(torch.tensor([1, 2]), True), f(torch.tensor([1, 2]), False)
""",
    ),
    NearMiss(
        "an_allocator_its_callers_fill",
        why="nothing is written before the return: the callers decide (a caller outside fills it).",
        source=r"""
import torch


def scratch(n):
    return torch.zeros(n)  # <- site
""",
        scenario=r"""
def run():
    s = globals()["scr" + "atch"](3)
    s.copy_(torch.arange(3.0))
    return s
""",
    ),
    NearMiss(
        "written_by_a_tensor_index",
        why="`out[idx] = v` with a tensor index may write any element, element 0 too.",
        source=r"""
import torch


def scatter_rows(idx, v):
    out = torch.zeros(4)  # <- site
    out[1:] = 0.5
    out[idx] = v
    return out
""",
        scenario=r"""
def run():
    return globals()["scatter_" + "rows"](torch.tensor([0]), 2.0)
""",
    ),
    NearMiss(
        "handed_to_a_helper",
        why="a helper is handed the buffer and writes element 0.",
        source=r"""
import torch


def _head(t):
    t[0] = 7


def starts(lens):
    out = torch.zeros(lens.shape[0] + 1)  # <- site
    out[1:] = torch.cumsum(lens, 0)
    _head(out)
    return out
""",
        scenario=r"""
def run():
    return globals()["sta" + "rts"](torch.tensor([1.0, 2.0]))
""",
    ),
    NearMiss(
        "loop_index_writes",
        why="`out[i] = ...` for i in a range from 0: the index is a name, any element may be it.",
        source=r"""
import torch


def fill(n):
    out = torch.zeros(n + 1)  # <- site
    out[1:] = 1.0
    for i in range(1):
        out[i] = 2.0
    return out
""",
        scenario=r"""
def run():
    return globals()["fi" + "ll"](3)
""",
    ),
    NearMiss(
        "may_be_empty_under_a_zero_test",
        why="the allocation runs only when `n == 0`: the buffer has no element to hand back.",
        source=r"""
import torch


def starts(x):
    n = x.shape[0]
    if n == 0:
        out = torch.zeros(n, 2)  # <- site
        out[:, 1:] = 1.0
        return out
    return x
""",
        scenario=r"""
def run():
    f = globals()["sta" + "rts"]
    return f(torch.ones(0, 2)), f(torch.ones(2, 2))
""",
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


def test_the_guard_claims_no_read_at_a_return() -> None:
    """`torch.empty` written in part and returned: the guard sees no read, so no `unsafe`."""
    text = (
        "import torch\n\n\ndef build(lens):\n"
        "    cu = torch.empty(lens.shape[0] + 1, dtype=torch.int64)\n"
        "    cu[1:] = torch.cumsum(lens, 0)\n"
        "    return cu\n"
    )
    found = analyse_source(text, "build.py", AnalysisOptions(judge_empties=True)).findings
    assert [f.rule for f in found] == ["ZO002"]
    assert found[0].verdict is not Verdict.UNSAFE
    zeros = analyse_source(text.replace("empty", "zeros"), "build.py").findings
    assert [f.verdict for f in zeros] == [Verdict.UNSAFE]


def test_a_declined_claim_names_the_element_at_stake() -> None:
    """Where the tree's callers keep the site from `unsafe`, the `unproven` message still says
    which element goes back as allocated, and why no verdict."""
    miss = next(m for m in NEAR_MISSES if m.name == "a_caller_in_the_tree_writes_it_first")
    case = miss.case()
    for findings in site_findings(case, case.program).values():
        (finding,) = findings
        assert finding.verdict is Verdict.UNPROVEN
        assert "it hands back the first element as allocated" in finding.message
        assert "do not all hand the result on unwritten and unread" in finding.message
