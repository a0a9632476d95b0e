"""Triton kernels of the shapes the summaries decide, with launchers; executed by
tests/test_triton_summary.py under TRITON_INTERPRET=1 on CPU tensors."""

import triton
import triton.language as tl


@triton.jit
def block_1d(x_ptr, y_ptr, unused_ptr, n, BLOCK: tl.constexpr):
    """1-D block tiling, `offs < n` mask, cdiv grid: loads x, stores y."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def row_per_program(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    """One row per program: row sums."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(vals, axis=0))


@triton.jit
def loop_over_k(a_ptr, b_ptr, c_ptr, K, stride_a, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """A loop over a K dimension with pointer increments: c = a @ b (b a vector)."""
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_a + ks[None, :]
    b_ptrs = b_ptr + ks
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(ks[None, :] + k) < K, other=0.0)
        b = tl.load(b_ptrs, mask=(ks + k) < K, other=0.0)
        acc += tl.sum(a * b[None, :], axis=1)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    tl.store(c_ptr + rows, acc)


@triton.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Loads its output, adds and stores it back (a LoRA-style accumulator)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    prev = tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, prev + tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def atomics(idx_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    """Histogram with atomics: counts accumulates."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + idx, 1, mask=mask)


@triton.jit
def indptr_segments(indptr_ptr, src_ptr, dst_ptr, BLOCK: tl.constexpr):
    """Unmasked scalar loads at the top level (definite reads), then a segment copy
    `dst[indptr[b]:indptr[b + 1]] = src[...]`."""
    b = tl.program_id(0)
    start = tl.load(indptr_ptr + b)
    end = tl.load(indptr_ptr + b + 1)
    offs = tl.arange(0, BLOCK)
    vals = tl.load(src_ptr + start + offs, mask=start + offs < end)
    tl.store(dst_ptr + start + offs, vals, mask=start + offs < end)


@triton.jit
def block_pointers(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """make_block_ptr / advance with boundary checks."""
    pid = tl.program_id(0)
    src = tl.make_block_ptr(
        base=x_ptr,
        shape=(M, N),
        strides=(N, 1),
        offsets=(pid * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_N),
        order=(1, 0),
    )
    dst = tl.make_block_ptr(
        base=y_ptr,
        shape=(M, N),
        strides=(N, 1),
        offsets=(pid * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_N),
        order=(1, 0),
    )
    for _ in range(0, N, BLOCK_N):
        tl.store(dst, tl.load(src, boundary_check=(0, 1)) + 1.0, boundary_check=(0, 1))
        src = tl.advance(src, (0, BLOCK_N))
        dst = tl.advance(dst, (0, BLOCK_N))


@triton.jit
def _helper_store(p, offs, v):
    tl.store(p + offs, v)


@triton.jit
def through_helper(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """A pointer handed to another jitted function: not understood (unknown)."""
    offs = tl.arange(0, BLOCK)
    _helper_store(y_ptr, offs, tl.load(x_ptr + offs))


@triton.jit
def early_exit(flag_ptr, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Loads after an early return are possible reads only."""
    if tl.program_id(0) * BLOCK >= n:
        return
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + tl.load(flag_ptr))
