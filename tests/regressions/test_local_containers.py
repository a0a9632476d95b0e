"""Local containers and `vars(obj)`: what a container that never leaves its function proves.

A dict, list or tuple display bound to a name that is only ever subscripted in its own function
(analysis/dataflow/containers.py) is private: storing a buffer in it is no escape, and a lookup
with a plain key (`key = 'a' if flag else 'b'`) is one of its values, maybe the buffer. `vars(obj)`
with an argument is `obj.__dict__`: code handed `obj`, not every local of the frame.

`SAFE` cases are `fix` cases: the site is `safe`, and the program as `zeroopt apply` rewrites it
behaves the same. `CASES` are near misses: the container or the object leaves the function, is
aliased, captured, looked up and read, or the frame is read; each must not be `safe`, and
executed with zeros and with poison it must differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_RUN_FLAGS = r"""
def run():
    return [f(True), f(False)]
"""

SAFE = [
    Case(
        "dict_display_unread_slot_written_by_a_dynamic_key",
        why=(
            "`pv['b']` is stored in a dict display that is only ever subscripted: the write "
            "through `pv[key]` may or may not reach it, and nothing reads it afterwards (only "
            "`pv['a']`), so it is never read."
        ),
        source=r"""
import torch


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    key = "a" if flag else "b"
    pv[key].fill_(2.0)
    return pv["a"].sum()
""",
        scenario=_RUN_FLAGS,
        kind="fix",
    ),
    Case(
        "dict_slot_written_in_full_then_read",
        why="A buffer held by a private dict, written in full through its slot, then read.",
        source=r"""
import torch


def f(flag):
    holder = {}
    holder["t"] = torch.zeros(8)  # <- site
    holder["t"].fill_(3.0)
    if flag:
        holder["u"] = torch.ones(2)
    return holder["t"].sum()
""",
        scenario=_RUN_FLAGS,
        kind="fix",
    ),
    Case(
        "vars_of_an_object_written_buffer",
        why=(
            "`vars(box)` is `box.__dict__`: it reaches what box holds (nothing of the buffer "
            "here), not every local variable of the frame."
        ),
        source=r"""
import torch


class Box:
    pass


def f(flag):
    box = Box()
    box.n = 3
    b = torch.zeros(8)  # <- site
    b.fill_(1.0)
    if flag:
        return vars(box), b.sum()
    return b.sum()
""",
        scenario=_RUN_FLAGS,
        kind="fix",
    ),
]

CASES = [
    Case(
        "dict_display_handed_whole_to_a_reader",
        why="The container is passed to a function that reads the slot never written.",
        source=r"""
import torch


def total(d):
    return d["b"].sum()


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    key = "a" if flag else "a"
    pv[key].fill_(2.0)
    return total(pv)
""",
        scenario=_RUN_FLAGS,
    ),
    Case(
        "dict_display_returned",
        why="The container leaves the function: the caller reads the unwritten slot.",
        source=r"""
import torch


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    pv["a"].fill_(2.0)
    return pv
""",
        scenario=r"""
def run():
    return f(True)["b"]
""",
    ),
    Case(
        "dict_display_aliased_then_read",
        why="`q = pv` uses the container whole: q's slot is the buffer, read unwritten.",
        source=r"""
import torch


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    q = pv
    return q["b"].sum()
""",
        scenario=_RUN_FLAGS,
    ),
    Case(
        "dict_lookup_with_a_dynamic_key_read",
        why="`pv[key]` may be the buffer: reading it reads the unwritten slot when key is 'b'.",
        source=r"""
import torch


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    key = "a" if flag else "b"
    return pv[key].sum()
""",
        scenario=_RUN_FLAGS,
    ),
    Case(
        "dict_display_captured_by_a_lambda",
        why="A lambda holds the container: calling it later reads the unwritten slot.",
        source=r"""
import torch


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    g = lambda: pv["b"].sum()
    pv["a"].fill_(1.0)
    return g()
""",
        scenario=_RUN_FLAGS,
    ),
    Case(
        "dict_display_rebound_by_a_nested_function",
        why="`nonlocal pv` in a nested function shares the name: the container may leave.",
        source=r"""
import torch


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    out = []

    def grab():
        nonlocal pv
        out.append(pv)
        pv = {}

    grab()
    return out[0]["b"].sum()
""",
        scenario=_RUN_FLAGS,
    ),
    Case(
        "dict_display_read_through_the_frame",
        why="`vars()` with no argument is the frame's locals: it reaches the container.",
        source=r"""
import torch


def f(flag):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    pv["a"].fill_(1.0)
    return vars()["pv"]["b"].sum()
""",
        scenario=_RUN_FLAGS,
    ),
    Case(
        "dict_lookup_with_a_parameter_key_read",
        why="A key handed in by the caller: `pv[key]` is the unwritten slot for key 'b'.",
        source=r"""
import torch


def f(key):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    pv["a"].fill_(1.0)
    return pv[key].sum()
""",
        scenario=r"""
def run():
    return f("b")
""",
    ),
    Case(
        "dict_key_rebound_to_a_non_constant",
        why="`key` is bound to a constant and to a parameter: the lookup may reach 'b', read.",
        source=r"""
import torch


def f(flag, other="b"):
    pv = {"a": torch.ones(8), "b": torch.zeros(8)}  # <- site
    key = "a"
    if not flag:
        key = other
    return pv[key].sum()
""",
        scenario=_RUN_FLAGS,
    ),
    Case(
        "vars_of_an_object_holding_the_buffer",
        why="`vars(box)` hands box's attributes on: the buffer stored there leaves unwritten.",
        source=r"""
import torch


class Box:
    pass


def f(flag):
    box = Box()
    b = torch.zeros(8)  # <- site
    box.b = b
    return vars(box)
""",
        scenario=r"""
def run():
    return f(True)["b"]
""",
    ),
    Case(
        "list_display_slot_read",
        why="A list display is private too, but reading its slot reads the buffer.",
        source=r"""
import torch


def f(flag):
    held = [torch.zeros(8)]  # <- site
    if flag:
        held[0].fill_(1.0)
    return held[0].sum()
""",
        scenario=_RUN_FLAGS,
    ),
]


@pytest.mark.parametrize("case", params([*SAFE, *CASES]))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
