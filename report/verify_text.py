"""Human-readable verify output: a header, one row per site, the together row, a summary."""

from __future__ import annotations

import linecache
import os
from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zeroopt.runtime_checks.results import RuntimeVerdict, SiteResult, TrialResult, VerifyReport

_STYLE = {
    RuntimeVerdict.EQUIVALENT: "green",
    RuntimeVerdict.DIVERGED: "yellow",
    RuntimeVerdict.CRASHED: "red",
    RuntimeVerdict.NOT_REACHED: "magenta",
}


def _trials_cell(trials: list[TrialResult]) -> str:
    return ", ".join(f"{t.pattern}:{t.verdict}" for t in trials) or "-"


def _first_problem(trials: list[TrialResult]) -> str:
    for verdict in (RuntimeVerdict.CRASHED, RuntimeVerdict.DIVERGED, RuntimeVerdict.NOT_REACHED):
        for t in trials:
            if t.verdict is verdict:
                return escape(f"[{t.pattern}] " + (t.detail.splitlines() or [""])[0][:160])
    return ""


def _display(path: str) -> str:
    """`path` relative to the current directory when it lies under it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _site_label(site: SiteResult) -> str:
    col = f":{site.col}" if site.col is not None else ""
    return f"{_display(site.path)}:{site.line}{col}"


def _problem(site: SiteResult) -> str:
    if not site.reached:
        return site.note or "never executed"
    for verdict in (RuntimeVerdict.CRASHED, RuntimeVerdict.DIVERGED, RuntimeVerdict.NOT_REACHED):
        for t in site.trials:
            if t.verdict is verdict:
                return f"[{t.pattern}] " + (t.detail.splitlines() or [""])[0][:200]
    return ""


def render_lines(report: VerifyReport, console: Console) -> None:
    """One line per site (`path:line:col: verdict ...`), for logs and pipes: nothing is cut."""
    for site in report.sites:
        trials = _trials_cell(site.trials)
        problem = _problem(site)
        console.print(
            f"{_site_label(site)}: {site.verdict} [{site.dtype or '-'}] {trials}"
            + (f" -- {problem}" if problem else ""),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if report.together is not None:
        together = report.together
        first = next(
            (t for t in together.trials if t.verdict is not RuntimeVerdict.EQUIVALENT), None
        )
        extra = f" -- [{first.pattern}] {first.detail.splitlines()[0][:200]}" if first else ""
        console.print(
            f"together ({len(together.sites)} sites): {together.verdict} "
            f"{_trials_cell(together.trials)}{extra}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def render_text(report: VerifyReport, console: Console) -> None:
    det = (
        "deterministic" if report.deterministic else "NOT deterministic: " + report.baseline_detail
    )
    console.print(
        f"scenario {report.scenario} on {report.device}; "
        f"baseline {report.baseline_runs} runs, {det}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if not console.is_terminal:
        render_lines(report, console)
    else:
        _render_table(report, console)
    counts = Counter(str(s.verdict) for s in report.sites)
    parts = [f"{counts[str(v)]} {v}" for v in RuntimeVerdict if counts[str(v)]]
    console.print(
        f"{len(report.sites)} site(s): {', '.join(parts) or 'none'}; "
        f"{report.trials_run} runs in {report.seconds:.1f} s",
        soft_wrap=True,
    )


def _render_table(report: VerifyReport, console: Console) -> None:
    table = Table(show_lines=False)
    # The site is never cut: path:line:col is what a reader acts on; the source text yields.
    keys = [_site_label(s) for s in report.sites]
    table.add_column("site", no_wrap=True, min_width=min(60, max(map(len, keys), default=4)))
    table.add_column("source", max_width=40, overflow="ellipsis", no_wrap=True)
    table.add_column("dtype")
    table.add_column("verdict")
    table.add_column("trials")
    table.add_column("first problem", overflow="fold")
    for site in report.sites:
        source = escape(linecache.getline(site.path, site.line).strip()[:60])
        verdict = site.verdict
        table.add_row(
            escape(_site_label(site)),
            source,
            site.dtype or "-",
            f"[{_STYLE[verdict]}]{verdict}[/]",
            _trials_cell(site.trials),
            _first_problem(site.trials) if site.reached else escape(site.note or "never executed"),
        )
    if report.together is not None:
        verdict = report.together.verdict
        table.add_row(
            f"together ({len(report.together.sites)} sites)",
            "",
            "",
            f"[{_STYLE[verdict]}]{verdict}[/]",
            _trials_cell(report.together.trials),
            _first_problem(report.together.trials),
        )
    console.print(table)
