"""The catalogue as a whole: no case is lost, none is named twice, each says why."""

from __future__ import annotations

import importlib
from pathlib import Path

from tests.regressions.harness import Case

MODULES = sorted(
    p.stem for p in Path(__file__).parent.glob("test_*.py") if p.stem != "test_catalogue"
)


def all_cases() -> list[Case]:
    cases: list[Case] = []
    for name in MODULES:
        cases.extend(importlib.import_module(f"tests.regressions.{name}").CASES)
    return cases


def test_no_case_is_lost_and_names_are_unique() -> None:
    cases = all_cases()
    assert len(cases) >= 109  # every counterexample found so far, kept
    names = [c.name for c in cases]
    assert len(set(names)) == len(names)


def test_every_case_marks_its_sites_and_says_why() -> None:
    for case in all_cases():
        assert case.sites, case.name
        assert len(case.why) > 40, case.name
        assert case.scenario.strip() or case.kind != "unsound", case.name
