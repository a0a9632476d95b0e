"""A buffer allocated again by the same line (in a loop) while the previous one is not fully
written: the previous buffer is unreachable, and so never read, once the statement rebinds every
name that may reach it and its value mentions none of them (analysis/dataflow/effects.py
`_rebinds_holders`).

`SAFE` cases are `fix` cases: the site is `safe`, and the program as `zeroopt apply` rewrites it
behaves the same. `CASES` are near misses: the previous buffer stays reachable (another name, a
list it was appended to) and is read; each must not be `safe`, and executed with zeros and with
poison it must differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

SAFE = [
    Case(
        "loop_allocation_written_only_on_the_first_pass",
        why=(
            "Each pass binds `b` to a new buffer; only the first is written, and only the "
            "written one is read: the unwritten ones are unreachable once `b` is bound again."
        ),
        source=r"""
import torch


def f(n):
    total = torch.zeros(())
    for i in range(n):
        b = torch.zeros(8)  # <- site
        if i == 0:
            b.fill_(1.0)
            total = total + b.sum()
    return total
""",
        scenario=r"""
def run():
    return [f(1), f(3)]
""",
        kind="fix",
    ),
    Case(
        "loop_dict_display_with_an_unread_slot",
        why=(
            "`pv` is bound to a new dict display each pass; `pv['b']` may stay unwritten, is "
            "never read, and the previous pass's one is unreachable once `pv` is bound again."
        ),
        source=r"""
import torch


def f(n, flag):
    acc = torch.zeros(())
    for i in range(n):
        pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
        key = "a" if flag else "b"
        pv[key].fill_(2.0)
        acc = acc + pv["a"].sum()
    return acc
""",
        scenario=r"""
def run():
    return [f(3, True), f(3, False)]
""",
        kind="fix",
    ),
]

CASES = [
    Case(
        "previous_buffer_kept_by_another_name",
        why="`prev = b` keeps the previous pass's buffer, unwritten after the first pass, and reads it.",
        source=r"""
import torch


def f(n):
    prev = None
    out = torch.zeros(())
    for i in range(n):
        b = torch.zeros(4)  # <- site
        if prev is not None:
            out = out + prev.sum()
        if i == 0:
            b.fill_(1.0)
        prev = b
    return out
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "previous_buffer_kept_in_a_list",
        why="Every pass's buffer is appended to a list that is read after the loop.",
        source=r"""
import torch


def f(n):
    store = []
    for i in range(n):
        b = torch.zeros(4)  # <- site
        store.append(b)
        if i == 0:
            b.fill_(1.0)
    return torch.stack(store).sum()
""",
        scenario=r"""
def run():
    return f(2)
""",
    ),
    Case(
        "previous_buffer_handed_to_code_that_keeps_it",
        why=(
            "`keep(b)` stores every pass's buffer in a module list: only `b` names it here, yet "
            "it escaped, so binding `b` again does not make it unreachable."
        ),
        source=r"""
import torch

KEPT = []


def keep(t):
    KEPT.append(t)


def f(n):
    for i in range(n):
        b = torch.zeros(4)  # <- site
        keep(b)
        if i == 0:
            b.fill_(1.0)
    return torch.stack(KEPT).sum()
""",
        scenario=r"""
def run():
    KEPT.clear()
    return f(2)
""",
    ),
    Case(
        "rebinding_that_may_keep_the_previous_buffer",
        why=(
            "`b = torch.zeros(4) if i % 2 == 0 else b` keeps the previous buffer on odd passes: "
            "the value mentions the name it rebinds."
        ),
        source=r"""
import torch


def f(n):
    b = torch.ones(4)
    out = torch.zeros(())
    for i in range(n):
        b = torch.zeros(4) if i % 2 == 0 else b  # <- site
        if i == 0:
            b.fill_(1.0)
        out = out + b.sum()
    return out
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
]


@pytest.mark.parametrize("case", params([*SAFE, *CASES]))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
