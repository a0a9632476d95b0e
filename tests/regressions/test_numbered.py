"""Cases still in the one-file format (`tests/regressions/NNN.py`), run by the same harness.

`python tests/regressions/convert.py NNN.py NAME` prints such a file as a `Case(...)` for the
grouped module of its mechanism; until then it runs here as it is. A numbered case that needs
its project's configuration, or that is a fix case, says so in the tables below.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.regressions.harness import (
    AnalysisOptions,
    Case,
    check_execution,
    check_verdict,
    numbered_cases,
    params,
)

# "NNN": options (contracts, kernels, lifecycles) the case's analysis needs.
OPTIONS: dict[str, AnalysisOptions] = {}
# "NNN": "fix" (the site is safe; the rewritten program must behave the same) or "keep".
KINDS: dict[str, str] = {}


def _configured(case: Case) -> Case:
    number = case.name.removeprefix("numbered_")
    return dataclasses.replace(
        case, options=OPTIONS.get(number, case.options), kind=KINDS.get(number, case.kind)
    )


CASES = [_configured(c) for c in numbered_cases()]


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
