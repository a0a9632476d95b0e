"""Calls whose literal arguments seem to lead a callee's summary to its read, and do not.

A READS summary whose read depends on another parameter is `unsafe` at a call passing a literal
only where the tests of it, evaluated with that literal, lead to the read
(analysis/summary_conditions.py `reached_with`). Each case here passes a literal under which
those tests point at the read, yet the read never runs: the flag is rebound by a nested def, a
list or dict passed is changed before its test, the branch taken `continue`s past the read, or
the read is in an `except` handler only a raise under the other value reaches. They must be
`unproven`, never `unsafe`, and poison changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import (
    Case,
    check_never_read,
    params,
)

# The catalogue's list (test_catalogue.py): no case here claims a verdict other than `unproven`,
# so every one of them is in NOT_READS, executed below.
CASES: list[Case] = []

NOT_READS = [
    Case(
        "flag_rebound_by_a_nested_def_before_the_test",
        why="`g` rebinds `flag` through `nonlocal` before `h` tests it: `h(buf, True)` never "
        "takes the reading branch, so the literal passed is no proof of the read.",
        source=r"""
import torch


def h(x, flag):
    def g():
        nonlocal flag
        flag = False

    g()
    if flag:
        return x.sum()
    x.fill_(1.0)
    return x.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    return h(buf, True)
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "mutable_default_changed_before_the_test",
        why="The default `[]` is appended to before `not seen` is tested: the list is never "
        "empty there, so the reading branch never runs although `[]` evaluates to it.",
        source=r"""
import torch


def h(x, seen=[]):
    seen.append(1)
    if not seen:
        return x.sum()
    x.fill_(1.0)
    return x.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    return h(buf)
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "dict_display_changed_before_the_test",
        why="`h(buf, {})` passes one fixed dict that `h` fills before testing it: `opts == {}` "
        "is false when tested, so `h` writes the buffer before it reads it.",
        source=r"""
import torch


def h(x, opts):
    opts["k"] = 1
    if opts == {}:
        return x.sum()
    x.fill_(1.0)
    return x.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    return h(buf, {})
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "flag_continues_past_the_read",
        why="`if flag: continue` skips the rest of the iteration, the read included: "
        "`h(buf, True)` never reads before the fill, although no `return` is in that branch.",
        source=r"""
import torch


def h(x, flag):
    for _ in range(1):
        if flag:
            continue
        return x.sum()
    x.fill_(1.0)
    return x.sum()


def f(n):
    buf = torch.zeros(n)  # <- site
    return h(buf, True)
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
    Case(
        "read_in_a_handler_only_a_raise_of_the_flag_reaches",
        why="The read is in the `except` handler, reached only by `if flag: raise`: with `flag` "
        "false nothing raises, the handler never runs and `h` fills before it reads.",
        source=r"""
import torch


def h(x, flag):
    try:
        if flag:
            raise ValueError
        y = 1
    except ValueError:
        return x.sum()
    x.fill_(1.0)
    return x.sum() + y


def f(n):
    buf = torch.zeros(n)  # <- site
    return h(buf, False)
""",
        scenario=r"""
def run():
    return f(3)
""",
    ),
]


@pytest.mark.parametrize("case", params(NOT_READS))
def test_excluded_reading_path_is_not_unsafe(case: Case, tmp_path: Path) -> None:
    check_never_read(case, tmp_path)
