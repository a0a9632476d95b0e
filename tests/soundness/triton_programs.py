"""Generated programs that hand zeros buffers to Triton kernels (run by Triton's interpreter).

Same program model as generator.py (`f(inp, n, k, flag)` over gen_model.py's INPUTS), with the module's
own `@triton.jit` kernels of every shape the summaries decide (analysis/triton_summary.py):
a 1-D masked copy, an accumulator, an unmasked scalar load, a kernel ignoring a pointer,
atomics, a pointer handed to a helper, an accumulation under a `tl.constexpr` flag (passed
True, False, `flag`, or left at its False default), loads of `x_ptr + pid` and `+ 1` by each
program (analysis/triton_reads.py), and a store under `if pid > 0`; grids that cover the buffer
with the kernel's blocks or not (analysis/triton_cover.py: `cdiv`, `cdiv - 1`, a lambda over
`meta['BLOCK']`, `(n + 3) // 4` with a second axis of 1, literals). Kernels sit at the top of the module so that a
poisoned variant keeps their text and lines; `register_source` makes the text visible to
`inspect` (Triton reads a kernel's source) under the oracle's file name.
"""

from __future__ import annotations

import linecache

from tests.soundness.gen_model import Program, RandomChooser

KERNELS = """\
import torch
import triton
import triton.language as tl


@triton.jit
def k_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


@triton.jit
def k_accumulate(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    prev = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, prev + tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def k_first(x_ptr, y_ptr):
    v = tl.load(x_ptr)
    tl.store(y_ptr + tl.program_id(0), v)


@triton.jit
def k_ignore(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, offs.to(tl.float32), mask=offs < n)


@triton.jit
def k_count(idx_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.atomic_add(y_ptr + idx, 1.0, mask=mask)


@triton.jit
def k_maybe_acc(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ACC: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if ACC:
        v += tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, v, mask=mask)


@triton.jit
def k_segments(x_ptr, y_ptr):
    pid = tl.program_id(0)
    tl.store(y_ptr + pid, tl.load(x_ptr + pid + 1) - tl.load(x_ptr + pid))


@triton.jit
def k_skip_first(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid > 0:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)


@triton.jit
def _put(p, offs, v, mask):
    tl.store(p + offs, v, mask=mask)


@triton.jit
def k_helper(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    _put(y_ptr, offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask)


"""

SIZE = 8  # every buffer has 8 float32 elements, like `inp[1]`
# "8" twice: the buffers' size, which a covering grid needs (analysis/triton_cover.py).
COUNTS = ("8", "8", "min(k, 8)", "n", "4", "7")


def _launch(ch: RandomChooser, bufs: list[str]) -> str:
    kernel = ch.choice(
        ["k_copy", "k_copy", "k_accumulate", "k_first", "k_ignore", "k_ignore", "k_count",
         "k_helper", "k_maybe_acc", "k_segments", "k_skip_first"]
    )  # fmt: skip
    y = ch.choice(bufs)
    src = ch.choice(["inp[1]", *bufs])
    count = ch.choice(COUNTS)
    grid = ch.choice(
        ["(2,)", "(1,)", f"(triton.cdiv({count}, 4),)", f"(triton.cdiv({count}, 4) - 1,)",
         f"lambda meta: (triton.cdiv({count}, meta['BLOCK']),)", f"(({count} + 3) // 4, 1)"]
    )  # fmt: skip
    if kernel == "k_first":
        return f"k_first[{ch.choice(['(1,)', '(3,)'])}]({src}, {y})"
    if kernel == "k_segments":
        return f"k_segments[{ch.choice(['(1,)', '(3,)'])}]({src}, {y})"
    if kernel == "k_maybe_acc":
        acc = ch.choice(["", ", ACC=True", ", ACC=False", ", ACC=flag"])
        return f"k_maybe_acc[{grid}]({src}, {y}, {count}, BLOCK=4{acc})"
    if kernel == "k_count":
        return f"k_count[{grid}](idx, {y}, {ch.choice(['3', 'min(n, 3)'])}, BLOCK=4)"
    return f"{kernel}[{grid}]({src}, {y}, {count}, BLOCK=4)"


def _statement(ch: RandomChooser, bufs: list[str]) -> str:
    b = ch.choice(bufs)
    kind = ch.choice(["launch", "launch", "launch", "write", "part", "read", "branch"])
    if kind == "launch":
        return _launch(ch, bufs)
    if kind == "write":
        return f"{b}.copy_(inp[2])"
    if kind == "part":
        return ch.choice([f"{b}[:k] = 1.5", f"{b}[1:] = 2.5", f"{b}[:1] = 0.5"])
    if kind == "read":
        return f"acc = acc + {b}.sum()"
    return f"if flag:\n        {_launch(ch, bufs)}"


def random_triton_program(seed: int) -> Program:
    ch = RandomChooser(seed)
    bufs = [f"b{i}" for i in range(ch.integer(1, 3))]
    body = ["acc = inp.sum() * 0", "idx = torch.tensor([0, 2, 3, 2], dtype=torch.int32)"]
    for b in bufs:
        body.append(f"{b} = torch.zeros({SIZE})")
        for _ in range(ch.integer(0, 2)):
            body.append(_statement(ch, bufs[: bufs.index(b) + 1]))
    for _ in range(ch.integer(1, 4)):
        body.append(_statement(ch, bufs))
    returned = [b for b in bufs if ch.chance(40)]
    body.append(f"return ({', '.join(['acc', *returned])},)")
    source = KERNELS + "def f(inp, n, k, flag):\n" + "".join(f"    {s}\n" for s in body)
    return Program(source=source, tags=frozenset({"triton"}))


def register_source(source: str, filename: str = "gen.py") -> None:
    """Let `inspect.getsource` (which Triton's JIT calls) find the kernels of exec'd code."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
