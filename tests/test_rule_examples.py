"""Every rule's documented examples, run through the real engine: the docs cannot drift.

As Fixit's `Invalid(..., expected_replacement=...)`: each example of a fixable rule that the rule
reports `safe` states the whole source `zeroopt apply` writes for it, and the test rewrites the
example with the real codemod and compares.
"""

from __future__ import annotations

import re

import pytest

from zeroopt.patcher.codemod import RewriteSite as PatchSite
from zeroopt.patcher.codemod import rewrite_source
from zeroopt.rules import ALL_RULES
from zeroopt.rules.rule import Example, Rule
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict


def _id(rule: type[Rule], example: Example, index: int) -> str:
    verdict = example.verdict.value if example.verdict else "silent"
    words = re.sub(r"[^a-z0-9]+", "_", example.note.lower()).strip("_")[:48]
    return f"{rule.code}-{verdict}-{words or index}"


CASES = [(rule, ex) for rule in ALL_RULES for ex in rule.examples]
IDS = [_id(rule, ex, i) for i, (rule, ex) in enumerate(CASES)]


def test_every_rule_has_examples_of_each_kind() -> None:
    for rule in ALL_RULES:
        verdicts = {ex.verdict for ex in rule.examples}
        assert len(rule.examples) >= 3 and len(verdicts) >= 2, rule.code
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize(("rule", "example"), CASES, ids=IDS)
def test_example_gets_its_documented_verdict(rule: type[Rule], example: Example) -> None:
    result = analyse_source(example.source, "example.py")
    assert not result.errors, result.errors
    verdicts = [f.verdict for f in result.findings if f.rule == rule.code]
    expected = [] if example.verdict is None else [example.verdict]
    assert verdicts == expected, f"{example.note or example.source}: {result.findings}"


@pytest.mark.parametrize(("rule", "example"), CASES, ids=IDS)
def test_example_is_rewritten_as_documented(rule: type[Rule], example: Example) -> None:
    fixable = rule.fixable and example.verdict is Verdict.SAFE
    assert (example.expected_replacement is not None) == fixable, "only safe examples are fixed"
    if example.expected_replacement is None:
        return
    data = example.source.encode()
    result = analyse_source(data, "example.py")
    sites = [
        PatchSite(f.line, f.col, f.call, f.end_line, f.end_col)
        for f in result.findings
        if f.rule == rule.code and f.verdict is Verdict.SAFE and f.fix is not None
    ]
    patched, _ = rewrite_source(data, sites)
    assert patched.decode() == example.expected_replacement
