"""The shape every rule has: a code, a name, a one-page doc, and examples that are also tests.

As in Fixit, VALID/INVALID examples live next to the rule; `tests/test_rule_examples.py` runs each
one through the real analysis, so a rule's documentation cannot drift from its behaviour.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import ClassVar

from zeroopt.analysis.dataflow import BufferOutcome
from zeroopt.scan.findings import Verdict


@dataclass(frozen=True)
class Example:
    """`source` holds one allocation; `verdict` is what the rule must report for it (None: no
    finding at all); `expected_replacement` is the whole source as `zeroopt apply` rewrites it
    (for a fixable rule's `safe` example). Both are written indented, as triple-quoted text."""

    source: str
    verdict: Verdict | None
    note: str = ""
    expected_replacement: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", _code(self.source))
        if self.expected_replacement is not None:
            object.__setattr__(self, "expected_replacement", _code(self.expected_replacement))


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    calls: ClassVar[tuple[str, ...]]  # the allocation calls the rule looks at
    fixable: ClassVar[bool]
    # A read counts as `unsafe` only when no write ran before it on any path (the guard: an
    # empty someone wrote must be shown wrong, not merely not shown right).
    certain_reads_only: ClassVar[bool] = False
    examples: ClassVar[tuple[Example, ...]]

    @classmethod
    def report(cls, call: str, outcome: BufferOutcome, every: bool = False) -> Verdict | None:
        """The verdict to report for this allocation, or None to stay silent. `every`: the
        caller wants a verdict for every allocation the rule looks at (`scan --since`)."""
        raise NotImplementedError

    @classmethod
    def doc(cls) -> str:
        return (cls.__doc__ or "").strip()
