"""Buffers stored on `self` unwritten and read by another method of the class
(analysis/self_reads.py): the last pass over the sites still `unproven`, zeros and empties
alike (as the lifecycle and any-order passes judge them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from zeroopt.analysis.allocations import Allocation
from zeroopt.analysis.dataflow import BufferOutcome
from zeroopt.analysis.options import AnalysisOptions
from zeroopt.analysis.self_reads import SelfRead, read_after_store
from zeroopt.analysis.summaries import Summaries
from zeroopt.rules import rule_for_call
from zeroopt.rules.decision import decide
from zeroopt.scan.findings import Evidence, Finding, Verdict

MakeFinding = Callable[[Allocation, str, Verdict, BufferOutcome, list[str], str], Finding]


def self_read_pass(
    sites: Sequence[Allocation],
    outcomes: dict[int, BufferOutcome],
    by_site: dict[int, Finding],
    decided: dict[int, Verdict],
    summaries: Summaries,
    options: AnalysisOptions,
    lines: list[str],
    path: str,
    make: MakeFinding,
) -> None:
    """Re-judge each `unproven` site that a method stores on `self` unwritten."""
    for site in sites:
        key = id(site.call)
        outcome = outcomes.get(key)
        rule = rule_for_call(site.name)
        if outcome is None or rule is None or decided.get(key) is not Verdict.UNPROVEN:
            continue
        old = by_site.get(key)
        if old is not None and old.verdict is not Verdict.UNPROVEN:
            continue
        found = read_after_store(
            site, outcome, summaries, tuple(options.lifecycles), rule.certain_reads_only
        )
        if not isinstance(found, SelfRead):
            continue
        verdict = rule.report(site.name, found.outcome, options.judge_empties)
        if verdict is None:
            continue
        new = make(site, rule.code, verdict, found.outcome, lines, path)
        notes = [Evidence(site.call.lineno, "assumption", a) for a in found.assumptions]
        by_site[key] = new.explained(
            f"read by `{found.reader}` after the method that stores it", notes
        )
        decided[key] = decide(found.outcome)
