"""From what the dataflow saw to a verdict with evidence a reviewer can check in seconds."""

from __future__ import annotations

from zeroopt.analysis.dataflow import UNSAFE, BufferOutcome
from zeroopt.scan.findings import Evidence, Verdict

_MAX_EVIDENCE = 6


def decide(outcome: BufferOutcome) -> Verdict:
    if outcome.gave_up or not outcome.reached:
        return Verdict.UNPROVEN
    if any(i.severity == UNSAFE for i in outcome.issues):
        return Verdict.UNSAFE
    if outcome.issues:
        return Verdict.UNPROVEN
    return Verdict.SAFE


def explain(
    verdict: Verdict, outcome: BufferOutcome, alloc_line: int, alloc_text: str, target: str
) -> tuple[str, tuple[Evidence, ...]]:
    evidence = [Evidence(alloc_line, "alloc", alloc_text)]
    evidence += [Evidence(line, "contract", text) for line, text in outcome.contracts[:2]]
    name = f"`{target}`" if target else "the buffer"
    if outcome.gave_up:
        return f"{name}: not analysed: {outcome.gave_up}", tuple(evidence)
    if not outcome.reached:
        return f"{name}: the allocation is unreachable", tuple(evidence)
    if verdict is Verdict.SAFE:
        evidence += [Evidence(line, "write", text) for line, text in outcome.writes[:3]]
        if outcome.writes:
            first = outcome.writes[0][0]
            message = (
                f"{name} is written in full (line {first}) before any read on every path; "
                "torch.empty is equivalent"
            )
        elif outcome.view_reads:
            evidence += [
                Evidence(line, "view-write", text) for line, text in outcome.view_writes[:3]
            ]
            evidence += [Evidence(line, "view-read", text) for line, text in outcome.view_reads[:3]]
            first = outcome.view_reads[0][0]
            message = (
                f"{name} is read only through views written in full through the same path "
                f"earlier on every path (first read line {first}); torch.empty is equivalent"
            )
            return message, tuple(sorted(evidence, key=lambda e: e.line))
        else:
            message = f"{name} is never read; torch.empty is equivalent"
        return message, tuple(evidence)
    wanted = UNSAFE if verdict is Verdict.UNSAFE else None
    chosen = [i for i in outcome.issues if wanted is None or i.severity == wanted]
    # Evidence from a capture warm-up is the most telling: it is where real runs break first.
    chosen.sort(key=lambda i: ("capture" not in i.text[:40], i.line, i.kind))
    evidence += [Evidence(line, "partial-write", text) for line, text in outcome.partial_writes[:2]]
    evidence += [Evidence(i.line, i.kind, i.text) for i in chosen[:_MAX_EVIDENCE]]
    issue = chosen[0]
    if verdict is Verdict.UNSAFE:
        message = f"{name} may be read before it is written (line {issue.line}): {issue.text}"
    else:
        message = (
            f"cannot prove {name} is written before it is read (line {issue.line}): {issue.text}"
        )
    return message, tuple(sorted(evidence, key=lambda e: e.line))
