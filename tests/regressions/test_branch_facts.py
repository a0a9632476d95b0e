"""Reads that run only where the allocation's own test is false.

`if ode: std = torch.zeros(())` then `if ode: return ...` before `std ** 2`: the dataflow joins
branches and follows a path no execution takes (the allocation under `ode`, the read past the
`return` under `ode`). Such a read is `unproven`, never `unsafe`
(analysis/dataflow/branch_facts.py), where the test is made of names, literals and pure
operators whose names nothing rebinds between the two tests; a test whose name is rebound keeps
its `unsafe`.

`NOT_READS`: programs that never read their zeros unwritten: `unproven`, and no poison changes
their result. `CASES`: read unwritten on the run the scenario makes, `unsafe`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, check_case, check_never_read, params

NOT_READS = [
    Case(
        "same_flag_tested_twice",
        why="The zero deviation exists only under `ode`, and under `ode` the function returns "
        "before dividing by it (sglang flow_rollout_controller's shape).",
        source=r"""
import torch


def step(x, ode):
    if ode:
        std = torch.zeros(())  # <- site
    else:
        std = x.abs().mean() + 1.0
    if ode:
        return x.sum()
    return (x / std**2).sum()
""",
        scenario=r"""
def run():
    return step(torch.ones(3), True), step(torch.ones(3), False)
""",
    ),
    Case(
        "elif_branch_and_an_or_exit",
        why="Allocated under `mode == 'ode'` (an `elif`), read only past `if no_const or "
        "mode == 'ode': return`, where that comparison is false.",
        source=r"""
import torch


def step(x, mode, no_const):
    if mode == "sde":
        std = x.abs().mean() + 1.0
    elif mode == "ode":
        std = torch.zeros(())  # <- site
    else:
        raise ValueError(mode)
    if no_const or mode == "ode":
        return x.sum()
    return (x / std**2).sum()
""",
        scenario=r"""
def run():
    return step(torch.ones(3), "ode", False), step(torch.ones(3), "sde", False)
""",
    ),
    Case(
        "is_none_then_is_not_none",
        why="`opt is None` at the allocation, `opt is not None` at the read: one test, two "
        "spellings.",
        source=r"""
import torch


def f(x, opt=None):
    if opt is None:
        buf = torch.zeros(3)  # <- site
    else:
        buf = opt * 1.0
    if opt is not None:
        return buf * 2
    return x
""",
        scenario=r"""
def run():
    return f(torch.ones(3)), f(torch.ones(3), torch.ones(3))
""",
    ),
]


@pytest.mark.parametrize("case", params(NOT_READS))
def test_never_read_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    check_never_read(case, tmp_path)


CASES = [
    Case(
        "flag_rebound_between_the_tests",
        expect=frozenset({Verdict.UNSAFE}),
        why="`ode = not ode` between the two tests: the allocation under `ode`, the read under "
        "the new `not ode` is a real path, and the division reads the zeros.",
        source=r"""
import torch


def step(x, ode):
    if ode:
        std = torch.zeros(())  # <- site
    else:
        std = x.abs().mean() + 1.0
    ode = not ode
    if ode:
        return x.sum()
    return (x / (std + 1.0)).sum()
""",
        scenario=r"""
def run():
    return step(torch.ones(3), True)
""",
    ),
    Case(
        "test_changed_in_place_between",
        expect=frozenset({Verdict.UNSAFE}),
        why="`not items` at the allocation, then `items.append(x)`: the second `not items` is "
        "false, the function goes on, and the sum reads the zeros.",
        source=r"""
import torch


def f(x, items):
    if not items:
        buf = torch.zeros(3)  # <- site
    else:
        buf = x * 1.0
    items.append(x)
    if not items:
        return x
    return buf.sum()
""",
        scenario=r"""
def run():
    return f(torch.ones(3), [])
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
