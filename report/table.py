"""`--format text`: findings grouped by file, one rich table per file, verdicts in colour.

Each row shows where (line:col), the rule, the verdict, the buffer and a short message, with
the source line under the message so the reader need not open the file, and for an unproven
one what would decide it; `--show-evidence` adds the lines that decided the verdict.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from zeroopt.analysis.cost import human_bytes
from zeroopt.scan.findings import Finding, LifecycleReport, Verdict
from zeroopt.scan.next_step import next_step

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport

VERDICT_STYLE = {
    Verdict.SAFE: "bold green",
    Verdict.UNSAFE: "bold red",
    Verdict.UNPROVEN: "bold yellow",
}
_MAX_SOURCE = 120


def _message_cell(report: ScanReport, f: Finding, show_evidence: bool) -> Text:
    cell = Text(f.message)
    source = f.source_line(f.line).strip()
    if source:
        if len(source) > _MAX_SOURCE:
            source = source[: _MAX_SOURCE - 1] + "…"
        cell.append(f"\n{f.line:>5} │ {source}", style="dim")
    if f.fix is not None:
        cell.append(f"\n  fix: {f.fix.replacement}", style="green")
        for edit in f.fix.edits:
            cell.append(f"\n  fix {edit.line:>5}: {edit.replacement}", style="green")
    step = next_step(f)
    if step is not None:
        cell.append(f"\n  next: {step.text}", style="yellow")
    if show_evidence:
        for e in f.evidence:
            cell.append(f"\n  {e.line:>5} {e.kind:<14} {e.text}", style="cyan")
    return cell


def _cost(f: Finding) -> str:
    when = "per step" if f.hot else "once"
    return f"{when}, {human_bytes(f.nbytes)}" if f.nbytes is not None else when


def _render_lifecycle(lc: LifecycleReport, console: Console) -> None:
    """The issue-4 table: per buffer, the phases that write and read it, and the verdict."""
    table = Table(
        title=Text(
            f"{lc.path}:{lc.line} class {lc.class_name} (lifecycle {lc.model})", style="bold"
        ),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("Buffer", overflow="fold")
    table.add_column("Written in", overflow="fold")
    table.add_column("Read in", overflow="fold")
    table.add_column("Verdict", no_wrap=True)
    for b in lc.buffers:
        read = "\n".join(b.read) or "-"
        if b.coupled:
            read += "\ncoupled: " + "; ".join(b.coupled)
        table.add_row(
            f"{b.target} (line {b.line})",
            "\n".join(b.written) or "-",
            read,
            Text(str(b.verdict), style=VERDICT_STYLE.get(b.verdict, "")),
        )
    console.print(table)
    for group in lc.coupled_groups:
        members = " + ".join(f"{target} (line {line})" for target, line in group)
        console.print(
            Text(
                f"coupled group: {members}: a kernel reads rows of one up to the values of"
                " another. Each is judged as read in full; verify them poisoned together (one"
                " alone can pass only because the other stays zero).",
                style="yellow",
            )
        )
    console.print()


def render(
    report: ScanReport, console: Console, *, show_evidence: bool = False, quiet: bool = False
) -> None:
    for path, group in groupby(report.findings, key=lambda f: f.path):
        table = Table(
            title=Text(path, style="bold underline"),
            title_justify="left",
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
        )
        table.add_column("Location", no_wrap=True)
        table.add_column("Rule", no_wrap=True)
        table.add_column("Verdict", no_wrap=True)
        table.add_column("Target", overflow="fold")
        table.add_column("Cost", no_wrap=True)
        table.add_column("Message", ratio=1, overflow="fold")
        # Ranked by what a rewrite saves: per-step allocations first, then the biggest.
        for f in sorted(group, key=lambda f: (not f.hot, -(f.nbytes or -1), f.line, f.col)):
            table.add_row(
                f"{f.line}:{f.col}",
                f.rule,
                Text(str(f.verdict), style=VERDICT_STYLE.get(f.verdict, "")),
                Text(f.target),
                _cost(f),
                _message_cell(report, f, show_evidence),
            )
        console.print(table)
        console.print()
    for lc in report.lifecycles:
        _render_lifecycle(lc, console)
    for u in report.unused_suppressions:
        console.print(
            Text.assemble(
                (f"{u.path}:{u.line}:{u.col}", "bold"), " ", (u.rule, "magenta"), f" {u.message}"
            ),
            soft_wrap=True,
        )
    for e in report.errors:
        console.print(
            Text.assemble((f"{e.path}", "bold"), ": ", ("error", "bold red"), f": {e.message}"),
            soft_wrap=True,
        )
    if not quiet:
        console.print(summary_line(report))


def summary_line(report: ScanReport) -> Text:
    counts = {v: 0 for v in Verdict}
    for f in report.findings:
        counts[f.verdict] += 1
    fixable = sum(1 for f in report.findings if f.verdict is Verdict.SAFE and f.fix is not None)
    text = Text()
    if not report.findings:
        text.append("No findings", style="bold green")
    else:
        text.append(f"{len(report.findings)} finding{'s' * (len(report.findings) != 1)}: ")
        parts = [(f"{counts[v]} {v}", VERDICT_STYLE[v]) for v in Verdict]
        for i, (label, style) in enumerate(parts):
            text.append(label, style=style)
            if i < len(parts) - 1:
                text.append(", ")
    text.append(f" in {report.files} file{'s' * (report.files != 1)}")
    if report.errors:
        text.append(
            f", {len(report.errors)} error{'s' * (len(report.errors) != 1)}", style="bold red"
        )
    if report.unused_suppressions:
        text.append(f", {len(report.unused_suppressions)} unused suppression(s)")
    text.append(f" ({report.seconds:.2f} s)")
    if fixable:
        text.append(f"\n{fixable} fixable with `zeroopt apply`", style="green")
    return text
