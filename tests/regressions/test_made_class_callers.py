"""`self.m(...)` resolved for a one-path `unsafe` where the tree also makes a class at run time
from a base of unknown class (`type("X", (Mixin, type(obj)), {})`; analysis/loose_lineage.py).

Each case returns a zero mask from a public method; the method of the same class that calls it
unpacks the tuple and hands the mask to a function that sums it first, so poison changes the
result. The near misses must not be `unsafe`: the made class's other base binds the method (its
version writes), that base derives from a class of another module, a subclass overrides it, the
caller never uses the mask, the caller writes it first.
"""

from __future__ import annotations

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
from tests.regressions.test_caller_reads import NearMiss

UNSAFE = frozenset({Verdict.UNSAFE})

_CORE = r"""
import torch
from torch import nn


def build_masks(att):
    if att.ndim != 2:
        raise ValueError("[batch, seq]")
    return torch.cumsum(att, dim=1)


class Core:
    def __init__(self, scale):
        self.scale = scale

    def embed(self, tokens):
        pad = tokens > 0
        att = torch.zeros(tokens.shape, dtype=torch.int64)  # <- site
        return tokens * self.scale, pad, att

    def encode(self, tokens, hint=None):
        embs, pad, att = self.embed(tokens)
        if hint:
            return embs
        return embs, build_masks(att)
"""

_MADE = r"""

class Reshape(nn.Module):
    def forward(self, x):
        return x


def wrap(obj):
    obj.__class__ = type("Reshape", (Reshape, type(obj)), {})
    return obj
"""

CASES = [
    Case(
        "mask_read_beside_a_made_class",
        expect=UNSAFE,
        why="`self.embed` runs `Core.embed` for a `Core`: the made class puts only `Reshape` "
        "(which binds `forward`) before the class it is made from, so `encode` sums the "
        "unwritten mask through `build_masks`.",
        source=_CORE + _MADE,
        scenario=r"""
def run():
    return Core(2).encode(torch.ones(2, 3, dtype=torch.int64))
""",
    ),
    Case(
        "mask_read_beside_a_computed_setattr_elsewhere",
        expect=UNSAFE,
        package="mcs_pkg",
        why="another module binds attributes of its own objects under computed names: assumed "
        "not to reach the `Core` whose `encode` runs (stated in the evidence).",
        source=_CORE,
        scenario=r"""
def run():
    from mcs_pkg import options

    options.apply(options.Options(), {"width": 3})
    return Core(2).encode(torch.ones(2, 3, dtype=torch.int64))
""",
        modules=(
            ("mcs_pkg/__init__", ""),
            (
                "mcs_pkg/options",
                r"""
class Options:
    width = 1


def apply(obj, values):
    for key, value in values.items():
        setattr(obj, key, value)
    return obj
""",
            ),
        ),
    ),
]

NEAR_MISSES = [
    NearMiss(
        "empty_when_a_size_is_false",
        why="the buffer is made only in the `else` of `if self.rope:`, where its last size "
        "`self.rope` is false (0): it holds no element, and the caller reads it only when "
        "`self.rope` is true anyway.",
        source=r"""
import torch


class Attention:
    def __init__(self, rope):
        self.rope = rope

    def prepare(self, x):
        if self.rope:
            r = x[:, : self.rope] * 2
        else:
            r = torch.zeros(x.shape[0], self.rope)  # <- site
        return x, r

    def forward(self, x):
        q, r = self.prepare(x)
        if self.rope:
            q = torch.cat([q, r], dim=-1)
        return q.sum()
""",
        scenario=r"""
def run():
    x = torch.ones(2, 4)
    return Attention(0).forward(x), Attention(2).forward(x)
""",
    ),
    NearMiss(
        "computed_setattr_in_the_class_itself",
        why="`Core.__init__` binds attributes of `self` under names from its caller: one may be "
        "`embed`, and the replacement writes the mask.",
        source=_CORE.replace(
            "    def __init__(self, scale):\n        self.scale = scale\n",
            "    def __init__(self, scale, **hooks):\n        self.scale = scale\n"
            "        for key, value in hooks.items():\n            setattr(self, key, value)\n",
        ),
        scenario=r"""
def run():
    t = torch.ones(2, 3, dtype=torch.int64)
    hooked = Core(2, embed=lambda x: (x, x > 0, torch.ones(x.shape, dtype=torch.int64)))
    return hooked.encode(t), Core(2).embed(t)[:2]
""",
    ),
    NearMiss(
        "made_class_base_binds_the_method",
        why="`Reshape` binds `embed`, and its version writes the mask: for a wrapped object "
        "`self.embed` runs it.",
        source=_CORE
        + _MADE.replace(
            "    def forward(self, x):\n        return x",
            "    def embed(self, tokens):\n"
            "        return tokens, tokens > 0, torch.ones(tokens.shape, dtype=torch.int64)",
        ),
        scenario=r"""
def run():
    t = torch.ones(2, 3, dtype=torch.int64)
    return wrap(Core(2)).encode(t), Core(2).embed(t)[:2]
""",
    ),
    NearMiss(
        "made_class_base_from_another_module",
        package="mcb_pkg",
        why="`Reshape` derives from a class of another module, which binds `embed` and writes.",
        source=_CORE.replace("from torch import nn", "from mcb_pkg.base import Base")
        + _MADE.replace("(nn.Module)", "(Base)"),
        scenario=r"""
def run():
    t = torch.ones(2, 3, dtype=torch.int64)
    return wrap(Core(2)).encode(t), Core(2).embed(t)[:2]
""",
        modules=(
            ("mcb_pkg/__init__", ""),
            (
                "mcb_pkg/base",
                r"""
import torch


class Base:
    def embed(self, tokens):
        return tokens, tokens > 0, torch.ones(tokens.shape, dtype=torch.int64)
""",
            ),
        ),
    ),
    NearMiss(
        "subclass_overrides_beside_a_made_class",
        why="`Wide` overrides `embed` with a version that writes: `self.embed` in `encode` may "
        "run it.",
        source=_CORE
        + _MADE
        + r"""

class Wide(Core):
    def embed(self, tokens):
        return tokens, tokens > 0, torch.ones(tokens.shape, dtype=torch.int64)
""",
        scenario=r"""
def run():
    t = torch.ones(2, 3, dtype=torch.int64)
    return Wide(2).encode(t), Core(2).embed(t)[:2]
""",
    ),
    NearMiss(
        "mask_never_used_beside_a_made_class",
        why="the caller drops the mask.",
        source=_CORE.replace(
            "        embs, pad, att = self.embed(tokens)\n        if hint:\n            return embs\n"
            "        return embs, build_masks(att)",
            "        embs, pad, _ = self.embed(tokens)\n        return embs, pad",
        )
        + _MADE,
        scenario=r"""
def run():
    return Core(2).encode(torch.ones(2, 3, dtype=torch.int64))
""",
    ),
    NearMiss(
        "caller_fills_the_mask_first_beside_a_made_class",
        why="the caller fills the mask before building from it.",
        source=_CORE.replace(
            "        return embs, build_masks(att)",
            "        att.fill_(1)\n        return embs, build_masks(att)",
        )
        + _MADE,
        scenario=r"""
def run():
    return Core(2).encode(torch.ones(2, 3, dtype=torch.int64))
""",
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
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (base, differences)
