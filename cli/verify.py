"""`zeroopt verify SCENARIO`: run the scenario with each candidate allocation poisoned.

Exit status: 0 when every site is `equivalent`, alone and together; 1 when any site (or the
together set) is `diverged`, `crashed` or `not-reached`; 2 on a usage error or when the scenario
already fails with every buffer zeroed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from zeroopt.runtime_checks.patterns import ALL_PATTERNS, DEFAULT_PATTERNS
from zeroopt.runtime_checks.sites import Site, parse_site, sites_from_report


def _cuda_default() -> str:
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def verify(
    scenario: Annotated[
        str,
        typer.Argument(
            help="FILE.py:FUNCTION or MODULE:FUNCTION returning the tensors to compare."
        ),
    ],
    site: Annotated[
        list[str] | None,
        typer.Option("--site", help="PATH:LINE[:COL] of an allocation (1-based, repeatable)."),
    ] = None,
    sites: Annotated[
        Path | None,
        typer.Option(
            "--sites", help="A `zeroopt scan --format json` report: its safe/unproven zeros."
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option(
            "--device",
            help="cpu or cuda (default: cuda when available). Passed to the scenario as its `device` argument and $ZEROOPT_DEVICE.",
        ),
    ] = None,
    patterns: Annotated[
        str | None,
        typer.Option(
            "--patterns", help=f"Comma-separated poison patterns from {','.join(ALL_PATTERNS)}."
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", help="Trials in parallel (default: all cores on cpu, 1 on cuda)."
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds before a trial counts as hung.")
    ] = 300.0,
    baseline_runs: Annotated[
        int, typer.Option("--baseline-runs", help="Zeros baseline runs (>= 2).")
    ] = 2,
    output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
) -> None:
    """Poison each candidate allocation at run time and compare outputs with the zeros baseline."""
    from zeroopt.runtime_checks.checker import BaselineError, Checker
    from zeroopt.runtime_checks.report import render_text

    err = Console(stderr=True)
    if output_format not in ("text", "json"):
        err.print(f"--format must be text or json, not {output_format!r}")
        raise typer.Exit(2)
    chosen_device = device or _cuda_default()
    if chosen_device not in ("cpu", "cuda") and not chosen_device.startswith("cuda:"):
        err.print(f"--device must be cpu or cuda, not {chosen_device!r}")
        raise typer.Exit(2)
    chosen_patterns = DEFAULT_PATTERNS
    if patterns:
        chosen_patterns = tuple(p.strip() for p in patterns.split(",") if p.strip())
        unknown = [p for p in chosen_patterns if p not in ALL_PATTERNS]
        if unknown:
            err.print(f"unknown pattern(s) {unknown}; choose from {list(ALL_PATTERNS)}")
            raise typer.Exit(2)
    targets: list[Site] = []
    try:
        targets.extend(parse_site(s) for s in site or ())
        if sites is not None:
            targets.extend(sites_from_report(sites))
    except (ValueError, OSError, KeyError, json.JSONDecodeError) as exc:
        err.print(f"zeroopt verify: {exc}")
        raise typer.Exit(2) from None
    targets = list(dict.fromkeys(targets))
    if not targets:
        err.print("zeroopt verify: no sites: give --site PATH:LINE[:COL] or --sites REPORT.json")
        raise typer.Exit(2)
    if jobs is None:
        jobs = (os.cpu_count() or 1) if chosen_device == "cpu" else 1
    try:
        checker = Checker(
            scenario,
            device=chosen_device,
            patterns=chosen_patterns,
            jobs=jobs,
            timeout=timeout,
            baseline_runs=baseline_runs,
        )
    except ValueError as exc:
        err.print(f"zeroopt verify: {exc}")
        raise typer.Exit(2) from None

    show = not no_progress and err.is_terminal
    try:
        if show:
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                transient=True,
            ) as bar:
                task = bar.add_task("verify", total=checker.plan_size(targets))
                report = checker.verify(
                    targets,
                    progress=lambda label: bar.update(task, advance=1, description=label[:50]),
                    on_planned=lambda n: bar.update(task, total=n),
                )
        else:
            report = checker.verify(targets)
    except BaselineError as exc:
        err.print(f"zeroopt verify: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None

    if output_format == "json":
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        render_text(report, Console())
    raise typer.Exit(0 if report.all_equivalent else 1)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
