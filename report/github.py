"""`--format github`: GitHub Actions workflow commands, shown as annotations on the diff.

Severity follows actionability, not the verdict alone: an `unsafe` zeros is information (keep
the zeros), so it is a notice; a rewrite to make is a warning; an `unsafe` empty is an error.
Columns follow ruff's output: 1-based, `endColumn` just after the last character.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeroopt.scan.findings import Finding, Verdict

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def level(f: Finding) -> str:
    if f.actionable:
        return "error" if f.verdict is Verdict.UNSAFE else "warning"
    return "notice"


def render(report: ScanReport) -> str:
    lines: list[str] = []
    for f in report.findings:
        props = (
            f"file={_prop(f.path)},line={f.line},col={f.col},endLine={f.end_line},"
            f"endColumn={f.end_col},title={_prop(f'zeroopt {f.rule} ({f.verdict})')}"
        )
        lines.append(f"::{level(f)} {props}::{_data(f'{f.rule} [{f.verdict}] {f.message}')}")
    for u in report.unused_suppressions:
        props = f"file={_prop(u.path)},line={u.line},col={u.col},title={_prop(f'zeroopt {u.rule}')}"
        lines.append(f"::warning {props}::{_data(f'{u.rule} {u.message}')}")
    for e in report.errors:
        lines.append(f"::error file={_prop(e.path)},title=zeroopt error::{_data(e.message)}")
    return "".join(line + "\n" for line in lines)
