"""Renderers: of a ScanReport (text table, concise, json = the contract, sarif, github) and of a
VerifyReport (verify_text)."""

from __future__ import annotations

import inspect
from typing import Any


def rule_catalog() -> list[Any]:
    """Every rule the tool can report, in code order: the registry's rules plus ZO900."""
    # Imported here: the rules load the whole analysis, which rendering a report never needs.
    from zeroopt.rules import ALL_RULES
    from zeroopt.scan.suppressions import UnusedSuppressionRule

    return sorted([*ALL_RULES, UnusedSuppressionRule], key=lambda r: str(r.code))


def rule_doc(rule: Any) -> str:
    """The rule's one-page markdown documentation, starting with a heading."""
    doc = rule.doc() if hasattr(rule, "doc") else inspect.cleandoc(rule.__doc__ or "")
    doc = doc or f"{rule.code} {rule.name}\n\n{rule.summary}"
    return doc if doc.startswith("#") else f"# {doc}"


def rule_has_fix(rule: Any) -> bool:
    """Whether findings of this rule can carry an automatic fix."""
    return bool(getattr(rule, "fixable", False))
