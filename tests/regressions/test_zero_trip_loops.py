"""Reads after a loop that writes the buffer on each pass, on the path where it runs none.

`out = torch.zeros(m); for i in range(n): out[i] = ...; out.sum()` finds nothing written only
where the loop runs no pass. Counting the buffer's own size, its passes would write every
element (analysis/dataflow/loops.py's shape), so that path reads unwritten memory only if the
loop can run none while the buffer has elements: when the code does not relate `n` to `m`, the
read is `unproven`, not `unsafe` (analysis/dataflow/zero_trip.py). Loops that write part of each
row, through a mask or at moving bounds, a loop skipped by a branch or a `continue`, and a count
visibly short of the size (`range(n - 1)` over `n` rows) keep their `unsafe`.

`CASES`: each is read unwritten on the run its scenario makes (poison changes the result) and
must not be `safe` (`UNSAFE` where the read stays certain); "fix" cases are `safe` and behave the
same once rewritten. `NOT_READS`: programs that never
read their zeros unwritten, in the shape the zero-trip path made look like a read: `unproven`,
never `unsafe`, and no poison changes their result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_case, check_never_read, params

UNSAFE = frozenset({Verdict.UNSAFE})

CASES = [
    Case(
        "loop_under_a_branch_not_taken",
        expect=UNSAFE,
        why="The loop writes every row, but only under `if flag:`: with the flag false nothing "
        "writes the buffer and the sum reads its zeros, a path the branch shows.",
        source=r"""
import torch


def f(xs, flag):
    out = torch.zeros(xs.shape[0])  # <- site
    if flag:
        for i in range(xs.shape[0]):
            out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), False)
""",
    ),
    Case(
        "continue_before_the_write",
        expect=UNSAFE,
        why="A `continue` before the write skips it on some passes: rows of negative items keep "
        "their zeros, and the sum reads them.",
        source=r"""
import torch


def f(xs):
    out = torch.zeros(xs.shape[0])  # <- site
    for i in range(xs.shape[0]):
        if xs[i] < 0:
            continue
        out[i] = xs[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(torch.tensor([1.0, -2.0, 3.0]))
""",
    ),
    Case(
        "count_one_short_of_the_size",
        expect=UNSAFE,
        why="`range(n - 1)` over `torch.zeros(n)` never writes the last element, and with n of "
        "1 runs no pass over a buffer that has one: the code shows the unwritten path.",
        source=r"""
import torch


def f(x, n):
    out = torch.zeros(n)  # <- site
    for i in range(n - 1):
        out[i] = x[i]
    return out.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4), 4), f(torch.ones(1), 1)
""",
    ),
    Case(
        "offsets_one_longer_than_the_loop",
        expect=UNSAFE,
        why="`torch.zeros(n + 1)` filled at `[i + 1]` over `range(n)`: element 0 is never "
        "written, and with n of 0 the loop runs no pass over a buffer of one element.",
        source=r"""
import torch


def f(lens):
    n = lens.shape[0]
    out = torch.zeros(n + 1)  # <- site
    for i in range(n):
        out[i + 1] = lens[: i + 1].sum()
    return out.tolist()
""",
        scenario=r"""
def run():
    return torch.tensor(f(torch.ones(3))), torch.tensor(f(torch.ones(0)))
""",
    ),
    Case(
        "part_of_each_row",
        expect=UNSAFE,
        why="Each pass writes only `[b, :k]` of its row (a padded batch): the tail of every "
        "shorter row keeps its zeros, which the sum reads; the zero-trip path stands in for it.",
        source=r"""
import torch


def f(rows, width):
    out = torch.zeros(len(rows), width)  # <- site
    for b in range(len(rows)):
        out[b, : rows[b].shape[0]] = rows[b]
    return out.sum(dim=1)
""",
        scenario=r"""
def run():
    return f([torch.ones(2), torch.ones(4)], 4)
""",
    ),
    Case(
        "masked_rows_each_pass",
        expect=UNSAFE,
        why="Each pass writes the entries its mask picks: entries no mask picks keep their "
        "zeros (here the diagonal), and the matrix is read whole.",
        source=r"""
import torch


def f(labels, n):
    c = torch.zeros(n, n)  # <- site
    for i in range(n):
        c[i, labels != labels[i]] = 1.0
    return c @ torch.ones(n)
""",
        scenario=r"""
def run():
    return f(torch.tensor([0, 1, 1]), 3)
""",
    ),
    Case(
        "second_buffer_of_the_loop",
        kind="fix",
        why="One loop over `range(n)` writes row i of two buffers of n rows: each is written in "
        "full once it finishes (the pattern of each buffer, not only the first statement's).",
        source=r"""
import torch


def f(xs, n: int):
    a = torch.zeros(n)  # <- site
    b = torch.zeros(n)  # <- site
    for i in range(n):
        a[i] = xs[i]
        b[i] = xs[i] * 2
    return a + b
""",
        scenario=r"""
def run():
    return f(torch.arange(3.0), 3), f(torch.ones(0), 0)
""",
    ),
    Case(
        "loop_variable_set_back_by_a_callee",
        why="`i` is `nonlocal` to a helper the body calls between the two writes: the helper sets "
        "it back to 0, so `b[i]` writes row 0 on every pass and the other rows keep their zeros.",
        source=r"""
import torch


def fill(n: int):
    a = torch.zeros(n)
    b = torch.zeros(n)  # <- site

    def rewind():
        nonlocal i
        i = 0

    for i in range(n):
        a[i] = 1.0
        rewind()
        b[i] = 2.0
    return a.sum() + b.sum()
""",
        scenario=r"""
def run():
    return fill(4)
""",
    ),
    Case(
        "global_loop_variable_set_back",
        why="The loop variable is a module global that a called function rebinds: the write "
        "after the call lands on row 0 every pass.",
        source=r"""
import torch


def rewind():
    global i
    i = 0


def fill(n: int):
    global i
    a = torch.zeros(n)
    b = torch.zeros(n)  # <- site
    for i in range(n):
        a[i] = 1.0
        rewind()
        b[i] = 2.0
    return a.sum() + b.sum()
""",
        scenario=r"""
def run():
    return fill(4)
""",
    ),
    Case(
        "torch_save_to_a_sink_that_shrinks_the_list",
        why="`torch.save(a, sink)` calls the sink's `write`, which pops the enumerated list: the "
        "loop stops early and the last rows of `b` keep their zeros.",
        source=r"""
import torch


class Sink:
    def __init__(self, queue):
        self.queue = queue

    def write(self, data):
        if self.queue:
            self.queue.pop()
        return len(data)

    def flush(self):
        pass


def snapshot(xs: list, sink):
    a = torch.zeros(len(xs))
    b = torch.zeros(len(xs))  # <- site
    for i, x in enumerate(xs):
        a[i] = x
        torch.save(a, sink)
        b[i] = x
    return b.sum()
""",
        scenario=r"""
def run():
    xs = [1.0] * 4
    return snapshot(xs, Sink(xs))
""",
    ),
    Case(
        "ragged_rows",
        expect=UNSAFE,
        why="The inner count names the outer loop's variable (`range(len(seqs[i]))`): shorter rows "
        "keep their zero padding, which the mean reads; no demotion for the zero-trip path.",
        source=r"""
import torch


def pad_mean(seqs):
    n = len(seqs)
    width = max(len(s) for s in seqs)
    out = torch.zeros(n, width)  # <- site
    for i in range(n):
        for j in range(len(seqs[i])):
            out[i, j] = seqs[i][j]
    return out.mean(dim=1)
""",
        scenario=r"""
def run():
    return pad_mean([[1.0, 2.0, 3.0], [4.0]])
""",
    ),
    Case(
        "half_the_rows",
        expect=UNSAFE,
        why="`range(n // 2)` over `torch.zeros(n)`: count and size are spelled from the same `n`, "
        "and the second half is never written.",
        source=r"""
import torch


def f(n: int):
    b = torch.zeros(n)  # <- site
    for i in range(n // 2):
        b[i] = 1.0
    return b.sum()
""",
        scenario=r"""
def run():
    return f(4)
""",
    ),
    Case(
        "count_bound_to_zero",
        expect=UNSAFE,
        why="`k = 0` before `range(k)`: the loop never runs, and the code says so.",
        source=r"""
import torch


def f(n: int):
    k = 0
    b = torch.zeros(n)  # <- site
    for i in range(k):
        b[i] = 1.0
    return b.sum()
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "size_lowered_outside_the_loops_block",
        expect=UNSAFE,
        why="`n = n - 1` after the allocation, the loop inside a `with`: the last row is never "
        "written whatever `n` is.",
        source=r"""
import torch


def f(n: int):
    b = torch.zeros(n)  # <- site
    n = n - 1
    with torch.no_grad():
        for i in range(n):
            b[i] = 1.0
        return b.sum()
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "read_on_the_zero_trip_path_itself",
        expect=UNSAFE,
        why="The read sits under `if k == 0:`, the path on which the loop over `range(k)` wrote "
        "nothing: the code reads exactly there.",
        source=r"""
import torch


def f(n: int, k: int):
    b = torch.zeros(n)  # <- site
    for i in range(k):
        b[i] = 1.0
    if k == 0:
        return b.sum()
    return None
""",
        scenario=r"""
def run():
    return f(3, 0)
""",
    ),
    Case(
        "first_pass_read_is_the_evidence",
        expect=UNSAFE,
        why="The loop reads `sums[i]` before writing it on its first pass: that read, not the "
        "zero-trip path of the later `int(sums[-1])`, is the evidence.",
        source=r"""
import torch


def f(k):
    sums = torch.zeros(k, dtype=torch.long)  # <- site
    for i in range(k):
        sums[i] = sums[i] + i + 1
    return torch.tensor(int(sums[-1]))
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)


NOT_READS = [
    Case(
        "row_per_item_of_another_tensor",
        why="`torch.zeros(seq_len.shape)` filled at `[i]` over `range(x.shape[0])`: callers pass "
        "one length per row of `x`, so every element is written; the zero-trip path is an "
        "empty `x` (vllm cohere_asr normalisation).",
        source=r"""
import torch


def normalize(x, seq_len):
    x_mean = torch.zeros(seq_len.shape, dtype=x.dtype)  # <- site
    for i in range(x.shape[0]):
        x_mean[i] = x[i, :, : int(seq_len[i])].mean()
    return x - x_mean.view(-1, 1, 1)
""",
        scenario=r"""
def run():
    return normalize(torch.arange(30.0).view(2, 3, 5), torch.tensor([5, 3]))
""",
    ),
    Case(
        "nested_loops_over_the_input_shape",
        why="Two nested loops over the input's two sizes write every element of a buffer of the "
        "input's shape; only an empty input would let the loops run no pass.",
        source=r"""
import torch


def f(xs):
    out = torch.zeros(xs.shape)  # <- site
    for i in range(xs.shape[0]):
        for j in range(xs.shape[1]):
            out[i, j] = xs[i, j] * 2
    return out.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 3))
""",
    ),
    Case(
        "strided_nibbles",
        why="`[:, i::p]` over `range(p)` writes every column for any `p >= 1` (an AWQ unpack, p of "
        "8): the zero-trip path needs p of 0, which the caller never passes.",
        source=r"""
import torch


def unpack(packed, n, p):
    out = torch.zeros(packed.shape[0], n, dtype=torch.int32)  # <- site
    for i in range(p):
        out[:, i::p] = (packed >> (4 * i)) & 0xF
    return out.sum(dim=1)
""",
        scenario=r"""
def run():
    return unpack(torch.tensor([[0x21, 0x43]], dtype=torch.int32), 4, 2)
""",
    ),
]


@pytest.mark.parametrize("case", params(NOT_READS))
def test_never_read_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    check_never_read(case, tmp_path)
