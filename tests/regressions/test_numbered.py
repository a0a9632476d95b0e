"""Cases still in the one-file format (`tests/regressions/NNN.py`), run by the same harness.

`python tests/regressions/convert.py NNN.py NAME` prints such a file as a `Case(...)` for the
grouped module of its mechanism; until then it runs here as it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.regressions.harness import Case, check_execution, check_verdict, numbered_cases, params

CASES = numbered_cases()


@pytest.mark.parametrize("case", params(CASES))
def test_verdict_at_the_site(case: Case) -> None:
    check_verdict(case)


@pytest.mark.parametrize("case", params(CASES))
def test_executed(case: Case, tmp_path: Path) -> None:
    check_execution(case, tmp_path)
