"""Triton launches that look like a write in full (analysis/triton_cover.py) but are not, because a
name does not hold what its text suggests at the launch.

Each case is a real partial write: executed (TRITON_INTERPRET=1, set by tests/conftest.py; the
list grid on CUDA, which the interpreter does not accept) with the allocation poisoned, the result
differs from the zeros run, so the site must not be `safe`:

- the size's name is an int bound again after the allocation (after it, on one path, in a loop,
  by a `match` capture): the same text `n` at the launch is another value than the buffer's size;
- the row count of a 2-D buffer bound again before the row grid;
- a kernel parameter named `pid0` or `pid1` is an ordinary argument, not a program id;
- a grid list bound once and then changed in place (`grid[0] = 1`);
- a `triton.heuristics` value for the stored pointer itself: the kernel stores another tensor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

KERNELS = r"""
import torch
import triton
import triton.language as tl


@triton.jit
def _flat(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.jit
def _rows(y_ptr, stride, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    tl.store(y_ptr + row * stride + cols, cols.to(tl.float32) + 1.0, mask=cols < N)


@triton.heuristics({"y_ptr": lambda args: args["z_ptr"]})
@triton.jit
def _flat_elsewhere(y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.jit
def _flat_from(y_ptr, pid0, n, BLOCK: tl.constexpr):
    offs = pid0 * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


@triton.jit
def _tiles_from(y_ptr, pid1, N, stride, BN: tl.constexpr):
    row = tl.program_id(0)
    cols = pid1 * BN + tl.arange(0, BN)
    tl.store(y_ptr + row * stride + cols, cols.to(tl.float32) + 1.0, mask=cols < N)
"""

_X = "def run():\n    return f(torch.arange(10.0))\n"


def _case(name: str, body: str, why: str, scenario: str = _X, gpu: bool = False) -> Case:
    return Case(name, KERNELS + body, scenario, why, gpu=gpu)


CASES = [
    _case(
        "size_rebound_after_the_allocation",
        r"""
def f(x, n: int = 10):
    y = torch.zeros(n)  # <- site
    n -= 3
    _flat[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        "`n` is 7 at the launch: elements 7-9 keep the zeros.",
    ),
    _case(
        "size_rebound_on_one_path",
        r"""
def f(x, flag=True):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    if flag:
        n = n - 3
    _flat[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        "On the path through the `if`, `n` is 7 at the launch.",
    ),
    _case(
        "size_rebound_in_a_loop",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    for _ in range(1):
        n = n - 3
    _flat[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        "The loop makes `n` 7 before the launch: the grid covers 7 of 10 elements.",
    ),
    _case(
        "size_rebound_by_a_match_capture",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    match n - 3:
        case n:
            pass
    _flat[(triton.cdiv(n, 4),)](y, n, BLOCK=4)
    return y
""",
        "`case n:` binds `n` to 7 (a capture pattern holds its name as a string, not a `Name`).",
    ),
    _case(
        "row_count_rebound_before_the_grid",
        r"""
def f(x):
    M = 3
    N = x.shape[0]
    y = torch.zeros(M, N)  # <- site
    M = 2
    _rows[(M,)](y, y.stride(0), N, BLOCK_N=triton.next_power_of_2(N))
    return y
""",
        "Two programs for three rows: the last row keeps the zeros.",
    ),
    _case(
        "parameter_named_pid0",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    _flat_from[(triton.cdiv(n, 4),)](y, 0, n, BLOCK=4)
    return y
""",
        "`pid0` is an argument (0), not `tl.program_id(0)`: every program stores block 0.",
    ),
    _case(
        "parameter_named_pid1",
        r"""
def f(x):
    M = 2
    N = x.shape[0]
    y = torch.zeros(M, N)  # <- site
    _tiles_from[(M, triton.cdiv(N, 4))](y, 0, N, N, BN=4)
    return y
""",
        "`pid1` is an argument (0): every program of axis 1 stores columns 0-3.",
    ),
    _case(
        "heuristics_replace_the_stored_pointer",
        r"""
def f(x):
    n = x.shape[0]
    y = torch.zeros(n)  # <- site
    z = torch.empty(n)
    _flat_elsewhere[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](
        y_ptr=y, z_ptr=z, n=n, BLOCK=4
    )
    return y
""",
        "The heuristic replaces `y_ptr` given by keyword with `z`: `y` is never stored.",
    ),
    _case(
        "grid_list_changed_in_place",
        r"""
def f(x):
    n = x.shape[0]
    grid = [triton.cdiv(n, 4)]
    grid[0] = 1
    y = torch.zeros(n, device=x.device)  # <- site
    _flat[grid](y, n, BLOCK=4)
    return y
""",
        "The list bound once is changed in place: one program of 4 for 10 elements.",
        "def run():\n    return f(torch.arange(10.0, device=\"cuda\"))\n",
        gpu=True,
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
