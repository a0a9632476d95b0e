"""Triton launches that write a buffer in full (analysis/triton_cover.py).

`COVERED` must be `safe`, and executed (TRITON_INTERPRET=1, set by tests/conftest.py) with the
allocation poisoned under every pattern they must give the zeros result: flat blocks over a
`cdiv` grid (`triton.cdiv`, `(n + B - 1) // B`, a grid lambda, a grid bound once, a module
constant block, the kernel's default block, a single autotune config, `buf.numel()`), rows of a
2-D buffer (one program per row with `BLOCK_N = triton.next_power_of_2(N)`, or column blocks
over `grid[1]`), and a read after the launch. `NEAR_MISSES` must not be `safe` and are real
partial writes: poison changes the result (the mask `offs < n - 1`, a grid one program short, a
store under `if pid > 0`, a load before the store, a block not provably as wide as the row,
another `n`, a grid over another size, a grid bound before its block is bound again, a view, the
buffer passed twice, a stride narrower than the row, a store in a loop, an early `return`, an
autotuned block the grid does not use, heuristics that replace `n`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    Verdict,
    params,
    poisoned_runs,
    site_findings,
    site_verdicts,
)

KERNELS = r"""
import torch
import triton
import triton.language as tl


@triton.jit
def _flat(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0) + 1.0, mask=mask)


@triton.jit
def _flat_default(y_ptr, n, BLOCK: tl.constexpr = 4):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 2})], key=["n"])
@triton.jit
def _flat_tuned(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.jit
def _rows(y_ptr, x_ptr, stride, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    v = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(y_ptr + row * stride + cols, v * 2.0 + 1.0, mask=cols < N)


@triton.jit
def _tiles(y_ptr, stride, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    tl.store(y_ptr + row * stride + cols, (cols + row * 100).to(tl.float32), mask=mask)


@triton.heuristics({"n": lambda args: args["n"] - 3})
@triton.jit
def _flat_heuristic_n(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.jit
def _flat_short(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n - 1)


@triton.jit
def _flat_after_first(y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid > 0:
        tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.jit
def _flat_load_first(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(y_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, v + 1.0, mask=offs < n)


@triton.jit
def _flat_loop(y_ptr, n, valid, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for start in range(0, valid, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.jit
def _flat_early_return(y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)
"""

_X = "def run():\n    return f(torch.arange(10.0))\n"
_X2 = "def run():\n    return f(torch.arange(18.0).reshape(3, 6))\n"


def _case(name: str, body: str, scenario: str, why: str) -> Case:
    return Case(name, KERNELS + body, scenario, why, expect=frozenset({Verdict.SAFE}))


COVERED = [
    _case(
        "flat_cdiv",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat[(triton.cdiv(n, 4),)](y, x, n, BLOCK=4)
    return y
""",
        _X,
        "cdiv(10, 4) = 3 programs of 4 elements, masked `offs < 10`: every element stored.",
    ),
    _case(
        "flat_formula_grid_bound_once",
        r"""
def f(x):
    n = x.shape[0]
    BLOCK = 4
    grid = ((n + BLOCK - 1) // BLOCK,)
    y = torch.zeros((n,))  # <- site
    _flat[grid](y, x, n, BLOCK=BLOCK)
    return y
""",
        _X,
        "`(n + B - 1) // B` is cdiv; `grid`, `n` and `BLOCK` are bound once.",
    ),
    _case(
        "flat_lambda_grid",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](y, x, n, BLOCK=8)
    return y
""",
        _X,
        "The grid lambda divides by the kernel's own block.",
    ),
    _case(
        "flat_module_constant_block",
        r"""
_BLOCK_SIZE = 4


def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat[(triton.cdiv(n, _BLOCK_SIZE),)](y, x, n, BLOCK=_BLOCK_SIZE)
    return y
""",
        _X,
        "A module constant bound once is the block of the grid and of the kernel.",
    ),
    _case(
        "flat_default_block",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_default[(triton.cdiv(n, 4),)](y, n)
    return y
""",
        _X,
        "The kernel's literal default block 4 is the grid's divisor.",
    ),
    _case(
        "flat_autotuned_lambda_grid",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_tuned[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](y, n)
    return y
""",
        _X,
        "Autotune picks the block; the grid lambda sees it in `meta`.",
    ),
    _case(
        "flat_numel_of_a_2d_buffer",
        r"""
def f(x):
    y = torch.zeros(x.shape[0], 3)  # <- site
    _flat_default[(triton.cdiv(y.numel(), 4),)](y, y.numel())
    return y
""",
        _X,
        "`y.numel()` is every element of the 2-D buffer, stored as one flat range.",
    ),
    _case(
        "flat_numel_bound_once",
        r"""
def f(x):
    y = torch.zeros(x.shape[0], 2)  # <- site
    total = y.numel()
    _flat_default[(triton.cdiv(total, 4),)](y, total)
    return y
""",
        _X,
        "`total = y.numel()`, both bound once: the buffer's size.",
    ),
    _case(
        "rows_one_program_per_row",
        r"""
def f(x):
    M = x.shape[0]
    N = x.shape[1]
    y = torch.zeros(M, N)  # <- site
    _rows[(M,)](y, x, y.stride(0), N, BLOCK_N=triton.next_power_of_2(N))
    return y
""",
        _X2,
        "One program per row, `BLOCK_N = next_power_of_2(N) >= N`, masked `cols < N`.",
    ),
    _case(
        "rows_stride_is_the_width",
        r"""
def f(x):
    M = x.shape[0]
    N = x.shape[1]
    y = torch.zeros((M, N))  # <- site
    _rows[(M,)](y, x, N, N, BLOCK_N=triton.next_power_of_2(N))
    return y
""",
        _X2,
        "A contiguous `zeros(M, N)` has row stride N.",
    ),
    _case(
        "row_tiles_over_a_second_axis",
        r"""
def f(x):
    M = x.shape[0]
    N = x.shape[1]
    y = torch.zeros(M, N)  # <- site
    _tiles[(M, triton.cdiv(N, 4))](y, y.stride(0), N, BLOCK_N=4)
    return y
""",
        _X2,
        "Column blocks of 4 over cdiv(6, 4) = 2 programs of axis 1, masked `cols < N`.",
    ),
    _case(
        "read_after_the_launch",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat[(triton.cdiv(n, 4), 1)](y, x, n, BLOCK=4)
    return y.sum() + y[0]
""",
        _X,
        "The launch writes every element; the reads come after it.",
    ),
]


@dataclass
class NearMiss:
    name: str
    body: str
    scenario: str
    why: str
    reason: str  # what the evidence says decided it

    def case(self) -> Case:
        return Case(self.name, KERNELS + self.body, self.scenario, self.why)


NEAR_MISSES = [
    NearMiss(
        "heuristics_replace_n",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_heuristic_n[(triton.cdiv(n, 4),)](y, n=n, BLOCK=4)
    return y
""",
        _X,
        "`triton.heuristics` replaces the `n` given by keyword with 7.",
        "a decorator may set `n`",
    ),
    NearMiss(
        "mask_one_short",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_short[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        _X,
        "`offs < n - 1` leaves the last element unstored: it keeps its poison.",
        "is not `p + pid * B + tl.arange(0, B)`",
    ),
    NearMiss(
        "grid_one_short",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat[(triton.cdiv(n, 4) - 1,)](y, x, n, BLOCK=4)
    return y
""",
        _X,
        "Two programs of 4 leave elements 8 and 9.",
        "the grid is not `(cdiv(n, BLOCK),)`",
    ),
    NearMiss(
        "store_under_a_program_test",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_after_first[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        _X,
        "Program 0 stores nothing: elements 0-3 keep the zeros.",
        "every store of it is under an `if` or in a loop",
    ),
    NearMiss(
        "load_before_the_store",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_load_first[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        _X,
        "The kernel adds 1 to what it loads: the zeros.",
        "loaded and stored",
    ),
    NearMiss(
        "block_not_as_wide_as_the_row",
        r"""
def f(x):
    M = x.shape[0]
    N = x.shape[1]
    y = torch.zeros(M, N)  # <- site
    _rows[(M,)](y, x, y.stride(0), N, BLOCK_N=4)
    return y
""",
        _X2,
        "A block of 4 columns of rows of 6: columns 4 and 5 are never stored.",
        "is not `triton.next_power_of_2` of the columns",
    ),
    NearMiss(
        "grid_bound_before_the_block_changes",
        r"""
def f(x):
    n = x.shape[0]
    B = 4
    grid = (triton.cdiv(n, B),)
    B = 2
    y = torch.zeros(n)  # <- site
    _flat[grid](y, x, n, BLOCK=B)
    return y
""",
        _X,
        "Three programs of the new block 2 store 6 of 10 elements.",
        "a name of the grid may change",
    ),
    NearMiss(
        "another_n",
        r"""
def f(x):
    n = x.shape[0]
    m = n - 3
    y = torch.zeros(n)  # <- site
    _flat[(triton.cdiv(m, 4),)](y, x, m, BLOCK=4)
    return y
""",
        _X,
        "The kernel's `n` is 7 of 10 elements: the last 3 keep their poison.",
        "is not the buffer's size",
    ),
    NearMiss(
        "grid_over_another_size",
        r"""
def f(x):
    n = x.shape[0]
    m = n - 6
    y = torch.zeros(n)  # <- site
    _flat[(triton.cdiv(m, 4),)](y, x, n, BLOCK=4)
    return y
""",
        _X,
        "One program of 4 for 10 elements: elements 4 to 9 are never stored.",
        "the grid is not `(cdiv(n, BLOCK),)`",
    ),
    NearMiss(
        "a_view_of_the_buffer",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n + 1)  # <- site
    _flat[(triton.cdiv(n, 4),)](y[1:], x, n, BLOCK=4)
    return y
""",
        _X,
        "Element 0 is before the view the kernel stores into: never written, and handed back.",
        "which no write on any path covers",
    ),
    NearMiss(
        "the_buffer_passed_twice",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat[(triton.cdiv(n, 4),)](y, y, n, BLOCK=4)
    return y
""",
        _X,
        "The kernel loads the buffer it stores: `y + 1` of the zeros.",
        "",
    ),
    NearMiss(
        "a_stride_narrower_than_the_row",
        r"""
def f(x):
    M = x.shape[0]
    N = x.shape[1]
    y = torch.zeros(M, N)  # <- site
    _tiles[(M, triton.cdiv(N, 4))](y, N - 1, N, BLOCK_N=4)
    return y
""",
        _X2,
        "Rows overlap: the last two elements stay zeros.",
        "is not the buffer's row stride",
    ),
    NearMiss(
        "a_store_in_a_loop",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_loop[(1,)](y, n, n - 4, BLOCK=4)
    return y
""",
        _X,
        "The loop stops at `valid` = 6: two blocks of 4 leave elements 8 and 9.",
        "every store of it is under an `if` or in a loop",
    ),
    NearMiss(
        "an_early_return",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_early_return[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        _X,
        "Program 0 returns before its store: elements 0 to 3 keep their poison.",
        "follows a `return`",
    ),
    NearMiss(
        "autotuned_block_not_in_the_grid",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_tuned[(triton.cdiv(n, 4),)](y, n)
    return y
""",
        _X,
        "The config's block 2 over cdiv(10, 4) = 3 programs: 6 elements.",
        "the grid is not `(cdiv(n, BLOCK),)`",
    ),
]


# Every case, by name, for the catalogue (test_catalogue.py).
CASES = [*COVERED, *(m.case() for m in NEAR_MISSES)]


@pytest.mark.parametrize("case", params(COVERED))
def test_covered_is_safe(case: Case) -> None:
    for text in (case.source.lstrip("\n"), case.program):
        for line, verdicts in site_verdicts(case, text).items():
            assert verdicts == [Verdict.SAFE], (line, verdicts)
    for findings in site_findings(case, case.program).values():
        texts = [e.text for f in findings for e in f.evidence]
        assert any("written in full by the store" in t for t in texts), texts


@pytest.mark.parametrize("case", params(COVERED))
def test_covered_runs_the_same_poisoned(case: Case, tmp_path: Path) -> None:
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (base, differences)


@pytest.mark.parametrize("miss", [pytest.param(m, id=m.name) for m in NEAR_MISSES])
def test_near_miss_is_not_safe(miss: NearMiss, tmp_path: Path) -> None:
    case = miss.case()
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts and Verdict.SAFE not in verdicts, (line, verdicts)
    texts = [e.text for fs in site_findings(case, case.program).values() for f in fs
             for e in f.evidence]  # fmt: skip
    assert any(miss.reason in t for t in texts), texts
    base, differences = poisoned_runs(case, tmp_path)
    assert any(d is not None for d in differences.values()), base
