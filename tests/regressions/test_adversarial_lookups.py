"""Counterexamples to the any-order pass's reach of reflection (analysis/anyorder_reach.py): an
attribute looked up by a computed name through `__getattribute__` (`object.__getattribute__(o,
name)`, `o.__getattribute__(name)`, `type(o).__getattribute__(o, name)`), the whole object serialised by
`torch.save` or listed by `inspect.getmembers_static`, or every object by `gc.get_objects()`,
in another file of the tree, which names neither the class nor the buffer. Each case executes: the zeros are read before any write.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_case, params

_GRID = r"""
import torch


class Grid:
    def __init__(self, n=3):
        self.cells = torch.zeros(n)  # <- site

    def fill(self, x):
        self.cells.copy_(x)
        return self.cells * 2
"""

_SCENARIO = r"""
def run():
    from inspector import peek

    return peek(Grid(3), "ce" + "lls")
"""


def _case(name: str, lookup: str, why: str) -> Case:
    module = f"\n\ndef peek(obj, name):\n    return {lookup}.sum()\n"
    return Case(name, why=why, source=_GRID, modules=(("inspector", module),), scenario=_SCENARIO)


CASES = [
    _case(
        "object_getattribute_by_a_computed_name",
        "object.__getattribute__(obj, name)",
        "`object.__getattribute__(obj, name)` in another file reads the buffer by a name its "
        "text never spells, before any method wrote it.",
    ),
    _case(
        "bound_getattribute_by_a_computed_name",
        "obj.__getattribute__(name)",
        "`obj.__getattribute__(name)` is `getattr(obj, name)` spelled as a call of the dunder.",
    ),
    _case(
        "type_getattribute_by_a_computed_name",
        "type(obj).__getattribute__(obj, name)",
        "`type(obj).__getattribute__(obj, name)`: the class's lookup called with the instance.",
    ),
]


_SAVED = r"""
import io

{imports}


def dump(obj):
    b = io.BytesIO()
    {save}(obj, b)
    return torch.frombuffer(bytearray(b.getvalue()), dtype=torch.uint8).float().sum()
"""

_DUMPED = r"""
def run():
    from saver import dump

    return dump(Grid(3))
"""

CASES += [
    Case(
        "whole_object_saved_by_torch_save",
        why="`torch.save(obj, b)` pickles the object with its tensors' bytes: the buffer is read "
        "before any method wrote it.",
        source=_GRID,
        modules=(("saver", _SAVED.format(imports="import torch", save="torch.save")),),
        scenario=_DUMPED,
    ),
    Case(
        "whole_object_saved_by_save_imported_from_torch",
        why="`from torch import save`: the same `torch.save`, spelled `save(obj, b)`.",
        source=_GRID,
        modules=(
            ("saver", _SAVED.format(imports="import torch\nfrom torch import save", save="save")),
        ),
        scenario=_DUMPED,
    ),
]


_INSPECTOR = r"""
import gc
import inspect

import torch


def members(obj):
    return [v.sum() for _, v in inspect.getmembers_static(obj) if isinstance(v, torch.Tensor)]


def every_tensor(n):
    return [o.sum() for o in gc.get_objects() if isinstance(o, torch.Tensor) and o.numel() == n]
"""

CASES += [
    Case(
        "members_read_by_inspect_getmembers_static",
        why="`inspect.getmembers_static(obj)` returns every attribute of the object, the buffer "
        "among them, without naming it: it is read before any method wrote it.",
        source=_GRID,
        modules=(("inspector", _INSPECTOR),),
        scenario=r"""
def run():
    from inspector import members

    return members(Grid(3))
""",
    ),
    Case(
        "every_object_reached_by_gc_get_objects",
        why="`gc.get_objects()` hands out every tracked object, the buffer of a live Grid "
        "among them: another file reads it without naming the class or the attribute.",
        source=_GRID,
        modules=(("inspector", _INSPECTOR),),
        scenario=r"""
def run():
    from inspector import every_tensor

    g = Grid(3)
    found = every_tensor(3)
    del g
    return found
""",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
