"""Slice bounds that are not proven ints: negative literals, and names only known to hold some
value slicing accepts (a parameter `k` that may be an int, None or a 0-dim tensor).

`x[:k]` and `x[k:]` cover the dimension together for ANY such value, provided it is the same at
both writes (analysis/scalars.py `volatile_bounds`): the name is never aliased, stored, called on
or captured, and the dataflow forgets the slices it bounds wherever code runs. `x[:-1]` and
`x[-1]` cover it too: the same negative literal is the same position at every write of a buffer
whose size does not change, and `x[-1]` of an empty dimension raises before writing.

`SAFE` cases are `fix` cases: the site is `safe`, and the program as `zeroopt apply` rewrites it
behaves the same. `CASES` are near misses: the bound changes between the writes without being
rebound (an alias written in place, a call to code that holds it, a store through it), or the
literal slices leave an element; each must not be `safe`, and executed with zeros and with poison
it must differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

SAFE = [
    Case(
        "parameter_bound_of_any_value",
        why=(
            "`x[:k]` then `x[k:]` with k an int of either sign, beyond the size, None or a 0-dim "
            "tensor: the two slices cover the buffer whatever k holds, since nothing between them "
            "can change it."
        ),
        source=r"""
import torch


def f(k):
    x = torch.zeros(8)  # <- site
    x[:k] = 1.5
    if k is not None and k > 4:
        x[0] = 3.0
    x[k:] = 2.5
    return x * 2
""",
        scenario=r"""
def run():
    return [f(3), f(-2), f(20), f(-20), f(None), f(torch.tensor(5)), f(True)]
""",
        kind="fix",
    ),
    Case(
        "parameter_bound_along_the_second_dimension",
        why=(
            "`x[:, :k]` and `x[:, k:]` cover the second dimension; the bound is only compared and "
            "used in arithmetic in between."
        ),
        source=r"""
import torch


def f(inp, k):
    x = torch.zeros_like(inp)  # <- site
    x[:, :k] = 1.0
    j = k + 1 if k is not None else 0
    x[:, k:] = inp[:, :1] * j
    return x
""",
        scenario=r"""
def run():
    inp = torch.arange(12.0).reshape(3, 4)
    return [f(inp, 2), f(inp, -1), f(inp, torch.tensor(3)), f(inp, None)]
""",
        kind="fix",
    ),
    Case(
        "negative_literal_slices_and_indices",
        why=(
            "`x[:-2]`, `x[-2]` and `x[-1]` chain from the start to the end of the dimension; a "
            "dimension shorter than 2 makes `x[-2]` raise before anything is read."
        ),
        source=r"""
import torch


def f(inp):
    x = torch.zeros_like(inp)  # <- site
    x[-1] = 7.0
    x[:-2] = inp[:-2] + 1
    x[-2] = 5.0
    return x.sum(0)
""",
        scenario=r"""
def run():
    return [f(torch.arange(12.0).reshape(4, 3)), f(torch.ones(2, 5))]
""",
        kind="fix",
    ),
]

CASES = [
    Case(
        "tensor_bound_changed_through_an_alias",
        why=(
            "`j = k` makes an alias of a 0-dim tensor bound; `j += 1` adds to it in place, with "
            "no call and no rebinding of k: x[2] is never written."
        ),
        source=r"""
import torch


def f(k):
    j = k
    x = torch.zeros(4)  # <- site
    x[:k] = 1.0
    j += 1
    x[k:] = 2.0
    return x
""",
        scenario=r"""
def run():
    return f(torch.tensor(2))
""",
    ),
    Case(
        "tensor_bound_changed_by_a_call_that_holds_it",
        why=(
            "The caller keeps the 0-dim tensor it passes as k and `step()` adds to it in place: "
            "a call between the writes may change a bound it was never handed."
        ),
        source=r"""
import torch


def f(k, step):
    x = torch.zeros(4)  # <- site
    x[:k] = 1.0
    step()
    x[k:] = 2.0
    return x
""",
        scenario=r"""
def run():
    t = torch.tensor(1)
    return f(t, lambda: t.add_(2))
""",
    ),
    Case(
        "tensor_bound_changed_by_the_value_written",
        why=(
            "The right-hand side of the second write runs code first: it adds to the bound, and "
            "the slice then starts after elements the first write left."
        ),
        source=r"""
import torch


def f(k, value):
    x = torch.zeros(4)  # <- site
    x[:k] = 1.0
    x[k:] = value()
    return x
""",
        scenario=r"""
def run():
    t = torch.tensor(1)
    return f(t, lambda: t.add_(2) * 0 + 2.0)
""",
    ),
    Case(
        "tensor_bound_kept_in_a_dict_and_changed",
        why=(
            "`holder['k'] = k` keeps the bound; `holder['k'] += 1` changes it in place without a "
            "call or a rebinding of k."
        ),
        source=r"""
import torch


def f(k):
    holder = {}
    holder["k"] = k
    x = torch.zeros(4)  # <- site
    x[:k] = 1.0
    holder["k"] += 1
    x[k:] = 2.0
    return x
""",
        scenario=r"""
def run():
    return f(torch.tensor(1))
""",
    ),
    Case(
        "tensor_bound_written_through_an_index",
        why="`k[()] = 3` writes the 0-dim bound in place: it is stored into, not rebound.",
        source=r"""
import torch


def f(k):
    x = torch.zeros(4)  # <- site
    x[:k] = 1.0
    k[()] = 3
    x[k:] = 2.0
    return x
""",
        scenario=r"""
def run():
    return f(torch.tensor(1))
""",
    ),
    Case(
        "negative_literal_leaves_the_last_element",
        why="`x[:-1]` and `x[-2]` never write the last element.",
        source=r"""
import torch


def f(inp):
    x = torch.zeros_like(inp)  # <- site
    x[:-1] = 1.0
    x[-2] = 2.0
    return x
""",
        scenario=r"""
def run():
    return f(torch.ones(4))
""",
    ),
    Case(
        "negative_and_positive_literals_do_not_chain",
        why=(
            "`x[:-1]` and `x[1:]` cover a dimension of 2 or more, but of size 1 both are empty: "
            "different texts never chain."
        ),
        source=r"""
import torch


def f(inp):
    x = torch.zeros_like(inp)  # <- site
    x[:-1] = 1.0
    x[1:] = 2.0
    return x
""",
        scenario=r"""
def run():
    return f(torch.ones(1, 3))
""",
    ),
]


@pytest.mark.parametrize("case", params([*SAFE, *CASES]))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
