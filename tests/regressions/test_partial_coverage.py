"""Whole reads after writes that leave part of the buffer alone by construction (gaps.py): a
slice up to `n` of a dimension allocated as a round-up of `n` (or `n + k`), and writes through
an index, a scatter or a mask that need not pick every position.

`CASES` must be `unsafe` and, executed, differ between zeros and poison. `NEAR_MISSES` must NOT
be `unsafe`: a slice up to the dimension itself, an index that is a permutation or the full
range (`argsort`, `arange`, `randperm`), writes in a loop whose coverage is unknown, two index
writes that together may cover it. Those marked `covered` write every element at run time, so
poisoning changes nothing either.
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
        "round_up_padding_read_whole",
        why=(
            "`xp[:n, :k] = w` on a `(cdiv(n, 128) * 128, k)` buffer leaves rows n.. alone when n "
            "is not a multiple of 128; `xp.abs().amax()` reads them: the zeros are the padding."
        ),
        source=r"""
import torch


def cdiv(a, b):
    return (a + b - 1) // b


def f(w):
    n, k = w.shape
    pn = cdiv(n, 128) * 128
    xp = torch.zeros((pn, k), dtype=torch.float32)  # <- site
    xp[:n, :k] = w
    return xp.abs().amin()
""",
        scenario=r"""
def run():
    return f(torch.ones(3, 4))
""",
        expect=UNSAFE,
    ),
    Case(
        "ceil_div_expression_padding",
        why="`(m + 7) // 8 * 8`-sized rows, `x[:m]` written, `x.sum()` reads the padding rows.",
        source=r"""
import torch


def f(y, m: int):
    x = torch.zeros((m + 8 - 1) // 8 * 8, 2)  # <- site
    x[:m] = y
    return x.sum(0)
""",
        scenario=r"""
def run():
    return f(torch.ones(3, 2), 3)
""",
        expect=UNSAFE,
    ),
    Case(
        "plus_one_padding_last_dim",
        why="`x[..., :n] = y` on `(2, n + 1)`: column n is never written; `torch.cat` copies it.",
        source=r"""
import torch


def f(y, n: int):
    x = torch.zeros(2, n + 1)  # <- site
    x[..., :n] = y
    return torch.cat([x, x])
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 3), 3)
""",
        expect=UNSAFE,
    ),
    Case(
        "bool_mask_from_index_write",
        why="`m[idx] = True` sets only the picked positions; `flat & m` reads the rest as False.",
        source=r"""
import torch


def f(flat, idx):
    m = torch.zeros_like(flat, dtype=torch.bool)  # <- site
    m[idx] = True
    return flat & m
""",
        scenario=r"""
def run():
    return f(torch.ones(5, dtype=torch.bool), torch.tensor([1, 3]))
""",
        expect=UNSAFE,
    ),
    Case(
        "scatter_of_picked_positions",
        why="`mask.scatter_(-1, picked, True)` writes one column per row; `mask.sum()` reads all.",
        source=r"""
import torch


def f(picked):
    mask = torch.zeros(2, 4, dtype=torch.int32)  # <- site
    mask.scatter_(-1, picked, 1)
    return mask.sum()
""",
        scenario=r"""
def run():
    return f(torch.tensor([[0], [2]]))
""",
        expect=UNSAFE,
    ),
    Case(
        "chunk_starts_then_cumsum",
        why="`c[cu[1:-1]] = 1` marks chunk starts; `c.cumsum(0)` counts them over the zeros.",
        source=r"""
import torch


def f(cu, n: int):
    c = torch.zeros(n, dtype=torch.int32)  # <- site
    c[cu[1:-1]] = 1
    return c.cumsum(0)
""",
        scenario=r"""
def run():
    return f(torch.tensor([0, 2, 5, 6]), 6)
""",
        expect=UNSAFE,
    ),
    Case(
        "topk_index_fill",
        why="`index_fill_(0, winners, True)` with `topk(k)` winners leaves the other slots False.",
        source=r"""
import torch


def f(flat, k: int):
    winners = flat.topk(k).indices
    admitted = torch.zeros_like(flat, dtype=torch.bool).index_fill_(0, winners, True)  # <- site
    return torch.sum(admitted)
""",
        scenario=r"""
def run():
    return f(torch.tensor([0.1, 0.9, 0.5, 0.3]), 2)
""",
        expect=UNSAFE,
    ),
    Case(
        "topk_indices_unpacked_then_marked",
        why=(
            "`vals, idx = torch.topk(g, k)`, `m[idx] = True`: k of the positions; `g > 0 & m` "
            "reads the others as False. What `g` depends on does not make `topk` cover."
        ),
        source=r"""
import torch


def f(gate, valid, k: int):
    g = torch.where(valid, gate, -float("inf"))
    vals, idx = torch.topk(g, k)
    m = torch.zeros_like(valid, dtype=torch.bool)  # <- site
    m[idx] = True
    return valid & m
""",
        scenario=r"""
def run():
    valid = torch.arange(4) < 3
    return f(torch.tensor([0.3, 0.9, 0.1, 0.5]), valid, 1)
""",
        expect=UNSAFE,
    ),
    Case(
        "padding_inside_a_loop_per_iteration",
        why="Each iteration pads its own block: rows n.. of each padded buffer are read by `amax`.",
        source=r"""
import torch


def f(ws):
    out = []
    for w in ws:
        n, k = w.shape
        n_pad = (n + 3) // 4 * 4
        padded = torch.zeros(n_pad, k)  # <- site
        padded[:n, :k] = w
        out.append(padded.abs().amin())
    return torch.stack(out)
""",
        scenario=r"""
def run():
    return f([torch.ones(3, 2), torch.ones(4, 2)])
""",
        expect=UNSAFE,
    ),
]


@dataclass(frozen=True)
class NearMiss:
    name: str
    source: str
    why: str
    scenario: str = ""
    covered: bool = False  # every element is written at run time: poison changes nothing

    def case(self) -> Case:
        return Case(self.name, self.source, self.scenario, self.why)


NEAR_MISSES = [
    NearMiss(
        "slice_to_the_dimension_itself",
        why="`x[:n] = y` on a buffer of size n writes it all: `safe` or `unproven`, never unsafe.",
        source=r"""
import torch


def f(y, n: int):
    x = torch.zeros(n, 3)  # <- site
    x[:n] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 3), 2)
""",
        covered=True,
    ),
    NearMiss(
        "slice_to_own_shape",
        why="`x[: x.shape[0]]` is all of x.",
        source=r"""
import torch


def f(y, z):
    x = torch.zeros_like(z)  # <- site
    x[: x.shape[0], :] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(2, 3), torch.ones(2, 3))
""",
        covered=True,
    ),
    NearMiss(
        "argsort_permutation_scatter",
        why="`sorted_idx` from `sort` along dim 1 is a permutation: the scatter writes all.",
        source=r"""
import torch


def f(scores):
    sorted_scores, sorted_idx = torch.sort(scores, dim=1)
    sorted_mask = sorted_scores > 0.5
    eb_mask = torch.zeros_like(sorted_mask)  # <- site
    eb_mask.scatter_(1, sorted_idx, sorted_mask)
    return torch.where(eb_mask, 1, 2)
""",
        scenario=r"""
def run():
    return f(torch.tensor([[0.9, 0.1, 0.7], [0.2, 0.6, 0.4]]))
""",
        covered=True,
    ),
    NearMiss(
        "arange_index_of_full_extent",
        why="`idx = torch.arange(n)` picks every row.",
        source=r"""
import torch


def f(y, n: int):
    x = torch.zeros(n)  # <- site
    idx = torch.arange(n)
    x[idx] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 3)
""",
        covered=True,
    ),
    NearMiss(
        "randperm_index",
        why="`randperm(n)` is a permutation of every position.",
        source=r"""
import torch


def f(y, n: int):
    x = torch.zeros(n)  # <- site
    perm = torch.randperm(n)
    x[perm] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4), 4)
""",
        covered=True,
    ),
    NearMiss(
        "index_writes_in_a_loop",
        why="Writes in a loop cover a union the analysis cannot describe: here every row.",
        source=r"""
import torch


def f(y):
    x = torch.zeros(3)  # <- site
    for i in range(3):
        x[torch.tensor([i])] = y[i]
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3))
""",
        covered=True,
    ),
    NearMiss(
        "index_write_then_loop_writes",
        why="One index write, then a loop that may write the rest: the loop's writes are unknown.",
        source=r"""
import torch


def f(y, ids):
    x = torch.zeros(3)  # <- site
    x[ids] = y[0]
    for i in range(3):
        x[torch.tensor([i])] = y[i]
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), torch.tensor([0]))
""",
        covered=True,
    ),
    NearMiss(
        "two_masks_that_may_partition",
        why="Text and image masks may be complementary: together they may write every row.",
        source=r"""
import torch


def f(h, ids):
    text = ids < 10
    image = ids >= 10
    out = torch.zeros_like(h)  # <- site
    out[text] = h[text] * 2
    out[image] = h[image] * 3
    return out + 1
""",
        scenario=r"""
def run():
    return f(torch.ones(4), torch.tensor([1, 20, 3, 40]))
""",
        covered=True,
    ),
    NearMiss(
        "padding_bound_rebound",
        why="`n` is rebound to the padded size before the write: the slice is the whole.",
        source=r"""
import torch


def f(y, n: int):
    pn = (n + 3) // 4 * 4
    x = torch.zeros(pn)  # <- site
    n = pn
    x[:n] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4), 3)
""",
        covered=True,
    ),
    NearMiss(
        "round_down_is_not_padding",
        why="`align_down(n, 4)` is not larger than n: `x[:n]` may be all of it.",
        source=r"""
import torch


def align_down(a, b):
    return a // b * b


def f(y, n: int):
    x = torch.zeros(align_down(n, 4))  # <- site
    x[:n] = y[:n]
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(8), 8)
""",
        covered=True,
    ),
    NearMiss(
        "all_true_mask_index",
        why="An index that is an all-true mask (`ones(..., dtype=torch.bool)`) picks every row.",
        source=r"""
import torch


def f(y, n: int):
    keep = torch.ones(n, dtype=torch.bool)
    x = torch.zeros(n)  # <- site
    x[keep] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), 3)
""",
        covered=True,
    ),
    NearMiss(
        "padding_bound_asserted_a_multiple",
        why="`assert n % 4 == 0`: the function only runs with no padding, so `x[:n]` is all of x.",
        source=r"""
import torch


def f(y, n: int):
    assert n % 4 == 0
    x = torch.zeros((n + 4 - 1) // 4 * 4)  # <- site
    x[:n] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(8), 8)
""",
        covered=True,
    ),
    NearMiss(
        "index_named_as_a_permutation",
        why="A parameter named `inv_perm` is by its name a permutation: it may write every row.",
        source=r"""
import torch


def f(y, inv_perm):
    x = torch.zeros_like(y)  # <- site
    x[inv_perm] = y
    return x.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), torch.tensor([2, 0, 1]))
""",
        covered=True,
    ),
    NearMiss(
        "scatter_index_shaped_like_the_buffer",
        why=(
            "`zeros_like(order)` scattered by `order` itself: an index as large as the buffer "
            "along the dimension writes every position when it is a permutation, as here."
        ),
        source=r"""
import torch


def f(scores, ranks):
    picked = scores.topk(3, dim=-1).indices
    m = torch.zeros_like(picked)  # <- site
    m.scatter_(-1, picked, ranks)
    return m.sum(-1)
""",
        scenario=r"""
def run():
    return f(torch.tensor([[0.3, 0.1, 0.2]]), torch.tensor([[5, 6, 7]]))
""",
        covered=True,
    ),
    NearMiss(
        "scatter_along_a_dimension_of_one",
        why="`scatter_(1, idx, src)` on a `(b, 1)` buffer: along a dimension of size 1 every row's index is 0, and every element is written.",
        source=r"""
import torch


def f(src):
    b = src.shape[0]
    m = torch.zeros(b, 1)  # <- site
    idx = torch.zeros(b, 1, dtype=torch.long)
    m.scatter_(1, idx, src)
    return m.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(4, 1))
""",
        covered=True,
    ),
    NearMiss(
        "index_tensor_listing_every_position",
        why="`torch.tensor([0, 1, 2])` lists every position of a buffer of 3.",
        source=r"""
import torch


def f(v):
    m = torch.zeros(3)  # <- site
    idx = torch.tensor([0, 1, 2])
    m[idx] = v
    return m.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3))
""",
        covered=True,
    ),
    NearMiss(
        "index_list_listing_every_position",
        why="`m[[0, 1, 2]]` lists every position of a buffer of 3.",
        source=r"""
import torch


def f(v):
    m = torch.zeros(3)  # <- site
    m[[0, 1, 2]] = v
    return m.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3))
""",
        covered=True,
    ),
    NearMiss(
        "round_up_of_a_constant_multiple",
        why="`n = 256` rounded up to a multiple of 128 is 256: `xp[:n]` is all of it.",
        source=r"""
import torch


def cdiv(a, b):
    return (a + b - 1) // b


def f(w):
    n = 256
    xp = torch.zeros((cdiv(n, 128) * 128, 2))  # <- site
    xp[:n] = w
    return xp.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(256, 2))
""",
        covered=True,
    ),
    NearMiss(
        "round_up_of_a_product_with_the_tile",
        why="`n = t * 128` is a multiple of 128: the round-up adds no row.",
        source=r"""
import torch


def cdiv(a, b):
    return (a + b - 1) // b


def f(w, t):
    n = t * 128
    xp = torch.zeros((cdiv(n, 128) * 128, 2))  # <- site
    xp[:n] = w
    return xp.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(256, 2), 2)
""",
        covered=True,
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
    if miss.covered:
        base, differences = poisoned_runs(case, tmp_path)
        assert all(d is None for d in differences.values()), (base, differences)
