"""`--format concise`, and the text output off a terminal: one line per finding, as ruff's.

    path:line:col: CODE [verdict] message

The message is on one line (whitespace collapsed). An unproven finding ends with what would
decide it (`next: ...`); `--show-evidence` adds the deciding lines below, indented. Lifecycle
tables become one line per buffer; errors read `path: error: message`; then the summary.
Nothing is cut to a width: CI logs, pre-commit and pipes keep every character.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeroopt.scan.findings import Finding, LifecycleReport
from zeroopt.scan.next_step import next_step

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport


def _one_line(text: str) -> str:
    return " ".join(text.split())


def finding_line(f: Finding) -> str:
    """`path:line:col: CODE [verdict] message`, exactly."""
    return f"{f.path}:{f.line}:{f.col}: {f.rule} [{f.verdict}] {_one_line(f.message)}"


def _lifecycle_lines(lc: LifecycleReport) -> list[str]:
    lines = []
    for b in lc.buffers:
        written = "; ".join(b.written) or "-"
        read = "; ".join(b.read) or "-"
        text = (
            f"{lc.path}:{b.line}: class {lc.class_name} (lifecycle {lc.model}): {b.target} "
            f"[{b.verdict}] written in: {written}; read in: {read}"
        )
        if b.coupled:
            text += f"; coupled: {'; '.join(b.coupled)}"
        lines.append(_one_line(text))
    for group in lc.coupled_groups:
        members = " + ".join(f"{target} (line {line})" for target, line in group)
        lines.append(
            f"{lc.path}:{lc.line}: class {lc.class_name}: coupled group: {members}: verify them"
            " poisoned together (one alone can pass only because the other stays zero)"
        )
    return lines


def render(report: ScanReport, *, show_evidence: bool = False, quiet: bool = False) -> str:
    from zeroopt.report.table import summary_line

    lines: list[str] = []
    for f in report.findings:
        line = finding_line(f)
        step = next_step(f)
        if step is not None:
            line += f" (next: {step.text})"
        lines.append(line)
        if show_evidence:
            lines.extend(f"    {e.line:>5} {e.kind:<14} {_one_line(e.text)}" for e in f.evidence)
    for lc in report.lifecycles:
        lines.extend(_lifecycle_lines(lc))
    for u in report.unused_suppressions:
        lines.append(f"{u.path}:{u.line}:{u.col}: {u.rule} {_one_line(u.message)}")
    for e in report.errors:
        lines.append(f"{e.path}: error: {_one_line(e.message)}")
    if not quiet:
        lines.append(summary_line(report).plain)
    return "".join(line + "\n" for line in lines)
