"""Triton kernels that read memory nobody wrote (analysis/triton_reads.py).

`CASES` must be `unsafe`, and executed with zeros and with poison (TRITON_INTERPRET=1, set by
tests/conftest.py) they must differ: a kernel that accumulates into, or applies an atomic to,
a buffer nothing wrote (on a program whose mask holds: a path-feasibility assumption, as
`if cond: x.sum()` is in plain Python), and a buffer written all but element 0 whose element 0
program 0 loads (`indptr_ptr + pid`). `NEAR_MISSES` must NOT be `unsafe`: the load under a
`tl.constexpr` the launch sets False or leaves at a False default, a flag the host computes
(False exactly when a dummy is passed), a mask that is a constexpr False, the buffer handed to a parameter only stored (another one is loaded), the buffer written
in full before the launch, element 0 written, a load whose mask is false at program 0, a kernel
storing the element before it loads it. Those marked `covered` run the same with poison.
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

KERNELS = r"""
import torch
import triton
import triton.language as tl


@triton.jit
def _accumulate(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc += tl.load(out_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def _accumulate_rows(out_ptr, x_ptr, rows, cols, stride_o, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= rows:
        return
    c = tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + row * stride_x + c, mask=c < cols, other=0.0)
    acc += tl.load(out_ptr + row * stride_o + c, mask=c < cols, other=0.0)
    tl.store(out_ptr + row * stride_o + c, acc, mask=c < cols)


@triton.jit
def _maybe_accumulate(out_ptr, x_ptr, n, BLOCK: tl.constexpr, ACC: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if ACC:
        acc += tl.load(out_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def _masked_by_flag(out_ptr, x_ptr, n, BLOCK: tl.constexpr, HAS_OUT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc += tl.load(out_ptr + offs, mask=HAS_OUT, other=0.0)
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit
def _keep_where(out_ptr, x_ptr, keep_ptr, n, BLOCK: tl.constexpr, HAS_KEEP: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if HAS_KEEP:
        v = tl.where(tl.load(keep_ptr + offs, mask=mask, other=0.0) > 0, v, 0.0)
    tl.store(out_ptr + offs, v, mask=mask)


@triton.jit
def _count(cnt_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(cnt_ptr + idx, 1, mask=offs < n)


@triton.jit
def _segments(indptr_ptr, len_ptr):
    pid = tl.program_id(0)
    start = tl.load(indptr_ptr + pid)
    end = tl.load(indptr_ptr + pid + 1)
    tl.store(len_ptr + pid, end - start)


@triton.jit
def _segments_after_first(indptr_ptr, len_ptr):
    pid = tl.program_id(0)
    start = tl.load(indptr_ptr + pid, mask=pid > 0, other=0)
    end = tl.load(indptr_ptr + pid + 1)
    tl.store(len_ptr + pid, end - start)


@triton.jit
def _pick(out_ptr, x_ptr, n, BLOCK: tl.constexpr, FROM_X: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = x_ptr if FROM_X else out_ptr
    acc = tl.load(src + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, acc * 2, mask=offs < n)


@triton.jit
def _store_then_load(buf_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(buf_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    y = tl.load(buf_ptr + offs, mask=mask)
    tl.store(buf_ptr + offs, y * 2, mask=mask)
"""


def _case(name: str, body: str, scenario: str, why: str) -> Case:
    return Case(name, KERNELS + body, scenario, why, expect=UNSAFE)


CASES = [
    _case(
        "accumulated_into_untouched",
        r"""

def f(x):
    out = torch.zeros(x.numel())  # <- site
    _accumulate[(triton.cdiv(x.numel(), 4),)](out, x, x.numel(), BLOCK=4)
    return out
""",
        "def run():\n    return f(torch.arange(6.0))\n",
        "`acc += tl.load(out_ptr + offs)`: the kernel adds the zeros to its result.",
    ),
    _case(
        "accumulated_rows_after_an_early_return",
        r"""

def f(x):
    out = torch.zeros(x.shape[0], x.shape[1])  # <- site
    _accumulate_rows[(x.shape[0] + 1,)](
        out, x, x.shape[0], x.shape[1], out.stride(0), x.stride(0), BLOCK=4
    )
    return out
""",
        "def run():\n    return f(torch.arange(6.0).reshape(2, 3))\n",
        "`out.stride(0)` hands over an int, not the buffer; past the early `return` each row "
        "adds the zeros of `out`.",
    ),
    _case(
        "accumulated_under_a_true_flag",
        r"""

def f(x):
    out = torch.zeros(x.numel())  # <- site
    _maybe_accumulate[(triton.cdiv(x.numel(), 4),)](out, x, x.numel(), BLOCK=4, ACC=True)
    return out
""",
        "def run():\n    return f(torch.arange(6.0))\n",
        "`if ACC:` with `ACC=True` at the launch: the accumulation runs.",
    ),
    _case(
        "atomic_counter",
        r"""

def f(idx, experts: int):
    counts = torch.zeros(experts, dtype=torch.int32)  # <- site
    _count[(triton.cdiv(idx.numel(), 4),)](counts, idx, idx.numel(), BLOCK=4)
    return counts
""",
        "def run():\n    return f(torch.tensor([0, 2, 2, 1, 0], dtype=torch.int32), 4)\n",
        "`tl.atomic_add` into the counters adds to the zeros they start from.",
    ),
    _case(
        "empty_offsets_first_element_loaded_by_program_0",
        r"""

def f(lens):
    n = lens.numel()
    indptr = torch.empty(n + 1, dtype=torch.int32)  # <- site
    indptr[1:] = torch.cumsum(lens, 0)
    seg = torch.empty(n, dtype=torch.int32)
    _segments[(n,)](indptr, seg)
    return seg
""",
        "def run():\n    return f(torch.tensor([3, 1, 2], dtype=torch.int32))\n",
        "The guard (ZO002): element 0 of the empty is garbage, and program 0 loads it.",
    ),
    _case(
        "offsets_first_element_loaded_by_program_0",
        r"""

def f(lens):
    n = lens.numel()
    indptr = torch.zeros(n + 1, dtype=torch.int32)  # <- site
    torch.cumsum(lens, 0, out=indptr[1:])
    seg = torch.empty(n, dtype=torch.int32)
    _segments[(n,)](indptr, seg)
    return seg
""",
        "def run():\n    return f(torch.tensor([3, 1, 2], dtype=torch.int32))\n",
        "Element 0 is never written; program 0 loads `indptr_ptr + 0` as its start.",
    ),
]


@dataclass
class NearMiss:
    name: str
    body: str
    scenario: str
    why: str
    covered: bool = True  # poison changes nothing at run time

    def case(self) -> Case:
        return Case(self.name, KERNELS + self.body, self.scenario, self.why)


_X = "def run():\n    return f(torch.arange(6.0))\n"
_LENS = "def run():\n    return f(torch.tensor([3, 1, 2], dtype=torch.int32))\n"

NEAR_MISSES = [
    NearMiss(
        "constexpr_flag_false",
        r"""

def f(x):
    out = torch.zeros(x.numel())  # <- site
    _maybe_accumulate[(triton.cdiv(x.numel(), 4),)](out, x, x.numel(), BLOCK=4, ACC=False)
    return out
""",
        _X,
        "`if ACC:` with `ACC=False`: the load never runs; every element is stored.",
    ),
    NearMiss(
        "constexpr_flag_left_at_false_default",
        r"""

def f(x):
    out = torch.zeros(x.numel())  # <- site
    _maybe_accumulate[(triton.cdiv(x.numel(), 4),)](out, x, x.numel(), BLOCK=4)
    return out
""",
        _X,
        "`ACC` keeps its default False: the load never runs.",
    ),
    NearMiss(
        "mask_is_a_constexpr_false",
        r"""

def f(x):
    out = torch.zeros(x.numel())  # <- site
    _masked_by_flag[(triton.cdiv(x.numel(), 4),)](out, x, x.numel(), BLOCK=4, HAS_OUT=False)
    return out
""",
        _X,
        "`mask=HAS_OUT` with `HAS_OUT=False`: the load reads nothing (`other=0.0`).",
    ),
    NearMiss(
        "dummy_under_a_flag_the_host_computes",
        r"""

def f(x, keep=None):
    if keep is None:
        keep = torch.zeros(1)  # <- site
        has_keep = False
    else:
        has_keep = True
    out = torch.empty_like(x)
    _keep_where[(triton.cdiv(x.numel(), 4),)](out, x, keep, x.numel(), BLOCK=4, HAS_KEEP=has_keep)
    return out
""",
        _X,
        "`HAS_KEEP=has_keep` is False exactly when the dummy is passed: a flag the host decides "
        "and the launch does not show as a literal is never assumed to hold.",
    ),
    NearMiss(
        "empty_dummy_accumulated_and_discarded",
        r"""

def f(x):
    dummy = torch.empty(x.numel())  # <- site
    _accumulate[(triton.cdiv(x.numel(), 4),)](dummy, x, x.numel(), BLOCK=4)
    return x * 2
""",
        _X,
        "The guard (ZO002) never rests on a load assumed to run: the dummy's garbage is "
        "read and discarded, no bug.",
    ),
    NearMiss(
        "loaded_pointer_may_be_another_parameter",
        r"""

def f(x):
    out = torch.zeros(x.numel())  # <- site
    _pick[(triton.cdiv(x.numel(), 4),)](out, x, x.numel(), BLOCK=4, FROM_X=True)
    return out
""",
        _X,
        "`src = x_ptr if FROM_X else out_ptr`: the load may read `x_ptr` (it does here).",
    ),
    NearMiss(
        "written_in_full_before_the_launch",
        r"""

def f(x):
    src = torch.zeros(x.numel())  # <- site
    out = x.clone()
    src.copy_(x)
    _accumulate[(triton.cdiv(x.numel(), 4),)](out, src, x.numel(), BLOCK=4)
    return out
""",
        _X,
        "The buffer is written in full before it is loaded through `x_ptr`.",
    ),
    NearMiss(
        "stored_before_loaded_in_its_program",
        r"""

def f(x):
    out = torch.zeros(x.numel())  # <- site
    _store_then_load[(triton.cdiv(x.numel(), 4),)](out, x, x.numel(), BLOCK=4)
    return out
""",
        _X,
        "The kernel stores each element of `buf_ptr` before it loads it back.",
    ),
    NearMiss(
        "first_element_written",
        r"""

def f(lens):
    n = lens.numel()
    indptr = torch.zeros(n + 1, dtype=torch.int32)  # <- site
    indptr[:1] = 0
    torch.cumsum(lens, 0, out=indptr[1:])
    seg = torch.empty(n, dtype=torch.int32)
    _segments[(n,)](indptr, seg)
    return seg
""",
        _LENS,
        "`indptr[:1] = 0` writes element 0 before program 0 loads it.",
    ),
    NearMiss(
        "mask_false_at_program_0",
        r"""

def f(lens):
    n = lens.numel()
    indptr = torch.zeros(n + 1, dtype=torch.int32)  # <- site
    torch.cumsum(lens, 0, out=indptr[1:])
    seg = torch.empty(n, dtype=torch.int32)
    _segments_after_first[(n,)](indptr, seg)
    return seg
""",
        _LENS,
        "`mask=pid > 0`: program 0 takes `other=0` instead of element 0.",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)
    for findings in site_findings(case, case.program).values():
        texts = [f.message for f in findings if f.verdict is Verdict.UNSAFE]
        assert any("Triton kernel" in t and "assuming" in t for t in texts), texts


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)


@pytest.mark.parametrize("miss", [pytest.param(m, id=m.name) for m in NEAR_MISSES])
def test_near_miss_is_not_unsafe(miss: NearMiss, tmp_path: Path) -> None:
    case = miss.case()
    lines = case.program.splitlines()
    for line, verdicts in site_verdicts(case, case.program).items():
        # The guard (ZO002) reports only `unsafe`: no finding on a `torch.empty` is the answer.
        assert verdicts or "torch.empty" in lines[line - 1], f"{case.name}: no finding at {line}"
        assert Verdict.UNSAFE not in verdicts, (line, verdicts)
    if miss.covered:
        base, differences = poisoned_runs(case, tmp_path)
        assert all(d is None for d in differences.values()), (base, differences)
