"""False `unsafe`s of the constant-gap patterns (analysis/dataflow/gaps.py `_padding`,
analysis/dataflow/const_gaps.py) and of elements no write covers (uncovered.py): a dimension `e + 1` where the function binds `e = -1` has no
position at all, so `x[:-1] = v` leaves nothing alone and a read of the whole buffer reads
nothing unwritten. Each program runs the same with zeros and with poison: the verdict must not
be `unsafe` (nor `safe`: an empty buffer read is no proof of a write).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, Verdict, params, poisoned_runs, site_verdicts

CASES = [
    Case(
        "size_minus_one_plus_one_is_empty",
        why="`e = -1` makes `zeros(e + 1)` empty: index -1 (left alone by `x[:-1]`) does not "
        "exist, and the sum reads nothing.",
        source=r"""
import torch


def f():
    e = -1
    x = torch.zeros(e + 1)  # <- site
    x[:-1] = 1
    return x.sum()
""",
        scenario="def run():\n    return f()\n",
    ),
    Case(
        "size_minus_two_plus_two_with_a_slice_to_minus_two",
        why="`e = -2`: `zeros(e + 2)` is empty; `x[:-2]` leaves the last two positions, which do "
        "not exist.",
        source=r"""
import torch


def f():
    e = -2
    x = torch.zeros(e + 2)  # <- site
    x[:-2] = 1
    return x.sum()
""",
        scenario="def run():\n    return f()\n",
    ),
    Case(
        "size_minus_one_plus_one_with_a_slice_from_one",
        why="`e = -1` makes `zeros(e + 1, 2)` empty: element 0, which `x[1:]` leaves alone and "
        "the literal analysis (uncovered.py) takes to exist when `e >= 0`, does not exist.",
        source=r"""
import torch


def f():
    e = -1
    x = torch.zeros(e + 1, 2)  # <- site
    x[1:] = 1
    return x.sum()
""",
        scenario="def run():\n    return f()\n",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
def test_not_unsafe_and_runs_the_same(case: Case, tmp_path: Path) -> None:
    for text in (case.source.lstrip("\n"), case.program):
        for line, verdicts in site_verdicts(case, text).items():
            assert verdicts, f"{case.name}: no finding at line {line}"
            assert Verdict.UNSAFE not in verdicts, (line, verdicts)
            assert Verdict.SAFE not in verdicts, (line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (base, differences)


_FUNCTION_FORMS = [
    ("fill_by_the_function_form", "torch.fill_(x[:1], 2.0)"),
    ("zero_by_the_function_form", "torch.zero_(x[:1])"),
]


@pytest.mark.parametrize(("name", "write"), _FUNCTION_FORMS)
def test_function_form_of_an_in_place_fill_writes(name: str, write: str, tmp_path: Path) -> None:
    """`torch.fill_(v, s)` and `torch.zero_(v)` (aten `fill_` / `zero_`, `Tensor(a!) self`)
    write every element of `v` as the methods do: after `x[1:] = 1` the buffer is written in
    full, and the sum reads nothing unwritten."""
    case = Case(
        name,
        source=(
            "import torch\n\n\ndef f(n: int):\n    x = torch.zeros(n + 1)  # <- site\n"
            f"    x[1:] = 1\n    {write}\n    return x.sum()\n"
        ),
        scenario="def run():\n    return f(3)\n",
    )
    for line, verdicts in site_verdicts(case, case.program).items():
        assert verdicts, f"{case.name}: no finding at line {line}"
        assert Verdict.UNSAFE not in verdicts, (line, verdicts)
    base, differences = poisoned_runs(case, tmp_path)
    assert all(d is None for d in differences.values()), (base, differences)
