"""The rules: a code, a name, a page and examples each; verdicts come from the analysis."""

from __future__ import annotations

from zeroopt.rules.rule import Example, Rule
from zeroopt.rules.zo001_zeros_overwritten import ZerosOverwrittenBeforeRead
from zeroopt.rules.zo002_empty_read_before_write import EmptyReadBeforeWrite

ALL_RULES: tuple[type[Rule], ...] = (ZerosOverwrittenBeforeRead, EmptyReadBeforeWrite)
RULES_BY_CODE: dict[str, type[Rule]] = {r.code: r for r in ALL_RULES}


def rule_for_call(name: str) -> type[Rule] | None:
    """The first rule that judges allocations made by `name` (`torch.zeros`, ...), if any."""
    return next((r for r in ALL_RULES if name in r.calls), None)


__all__ = ["ALL_RULES", "RULES_BY_CODE", "Example", "Rule", "rule_for_call"]
