"""Every rule's documented examples, run through the real engine: the docs cannot drift."""

from __future__ import annotations

import pytest

from zeroopt.rules import ALL_RULES
from zeroopt.rules.rule import Example, Rule
from zeroopt.scan.file_analysis import analyse_source

CASES = [(rule, ex) for rule in ALL_RULES for ex in rule.examples]


def test_every_rule_has_examples_of_each_kind() -> None:
    for rule in ALL_RULES:
        verdicts = {ex.verdict for ex in rule.examples}
        assert len(rule.examples) >= 3 and len(verdicts) >= 2, rule.code


@pytest.mark.parametrize(
    ("rule", "example"), CASES, ids=[f"{r.code}-{i}" for i, (r, _) in enumerate(CASES)]
)
def test_example_gets_its_documented_verdict(rule: type[Rule], example: Example) -> None:
    result = analyse_source(example.source, "example.py")
    assert not result.errors, result.errors
    verdicts = [f.verdict for f in result.findings if f.rule == rule.code]
    expected = [] if example.verdict is None else [example.verdict]
    assert verdicts == expected, f"{example.note or example.source}: {result.findings}"
