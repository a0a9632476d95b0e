"""`zeroopt verify`: run a scenario, or the user's own command, with each site poisoned.

Two forms: `zeroopt verify SCENARIO [options]` (a function returning tensors) and
`zeroopt verify [options] -- CMD ARGS...` (any command; its exit status and output are the
oracle). Everything after the first `--` is the command, taken verbatim.

Exit status: 0 when every site is `equivalent`, alone and together; 1 when any site (or the
together set) is `diverged`, `crashed` or `not-reached`; 2 on a usage error (each with its own
one-line message) or when the baseline already fails with every site zeroed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from zeroopt.runtime_checks.patterns import ALL_PATTERNS, DEFAULT_PATTERNS
from zeroopt.runtime_checks.targets import PoisonSite, identify, parse_site, sites_from_report

COMMAND_KEY = "zeroopt_verify_command"


class _VerifyCommand(typer.core.TyperCommand):
    """Splits the arguments at the first `--`: what follows is the command to verify with."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            ctx.meta[COMMAND_KEY] = args[cut + 1 :]
            args = args[:cut]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- CMD ARGS...]"]


def _usage(err: Console, message: str) -> typer.Exit:
    err.print(f"zeroopt verify: {message}", markup=False, highlight=False)
    return typer.Exit(2)


def _check_torch(err: Console) -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise _usage(
            err,
            f"torch is not installed in {sys.executable}; verify runs code that uses it "
            "(install the torch build you use, e.g. `pip install torch`)",
        ) from None


def _cuda_default() -> str:
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def verify(
    ctx: typer.Context,
    scenario: Annotated[
        str | None,
        typer.Argument(
            help="FILE.py:FUNCTION or MODULE:FUNCTION returning the tensors to compare. "
            "Leave it out and put the command to run after `--` instead.",
            show_default=False,
        ),
    ] = None,
    site: Annotated[
        list[str] | None,
        typer.Option("--site", help="PATH:LINE[:COL] of an allocation (1-based, repeatable)."),
    ] = None,
    sites: Annotated[
        Path | None,
        typer.Option(
            "--sites",
            help="A `zeroopt scan --format json` report: its safe/unproven zeros and every "
            "empty (ZO002). Paths resolve against the report's root; stale sites are refused.",
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
            "--jobs",
            "-j",
            help="Trials in parallel. With GPUs visible each trial process sees one GPU "
            "(CUDA_VISIBLE_DEVICES), spread round-robin. Default: one per GPU on cuda; "
            "all cores for a scenario on cpu, 1 for a command on cpu.",
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
    """Poison each candidate allocation at run time and compare with the zeros baseline.

    [bold]zeroopt verify SCENARIO --site PATH:LINE[:COL][/bold] runs FILE.py:FUNCTION (or MODULE:FUNCTION) in a subprocess per trial and compares the tensors it returns.

    [bold]zeroopt verify --site PATH:LINE[:COL] -- CMD ARGS...[/bold] runs your own command instead (e.g. [bold]-- python -m pytest tests/test_attn.py[/bold]) and compares its exit status and output (durations, addresses and temp paths masked; exit status only when two baseline runs still differ). The sites are poisoned in every Python process the command starts: multiprocessing spawn/forkserver/fork workers and Python subprocesses.

    A site is a torch.zeros / zeros_like / new_zeros, or a torch.empty / empty_like / empty_strided / new_empty (zero-filled in the baseline: the runtime check of ZO002). The baseline runs twice, then each site alone and all together, one poison pattern per trial. A site's verdict is the worst of its trials: crashed (exception, signal, CUDA error, timeout), diverged, equivalent; not-reached when no process ran it.

    Exit status: 0 all equivalent; 1 anything else; 2 usage error or a failing baseline.
    """
    from zeroopt.report.verify_text import render_text
    from zeroopt.runtime_checks.checker import BaselineError, Checker, ScenarioUsageError
    from zeroopt.runtime_checks.trial import check_scenario_spec

    err = Console(stderr=True, soft_wrap=True)
    command: list[str] | None = ctx.meta.get(COMMAND_KEY)
    if command is not None and scenario is not None:
        raise _usage(err, f"give a scenario ({scenario}) or a command after --, not both")
    if command is None and scenario is None:
        raise _usage(err, "nothing to run: give SCENARIO (FILE.py:FUNCTION) or -- CMD ARGS...")
    if command is not None and not command:
        raise _usage(err, "nothing to run after --")
    if scenario is not None:
        problem = check_scenario_spec(scenario)
        if problem is not None:
            raise _usage(err, problem)
    if command is not None and shutil.which(command[0]) is None:
        raise _usage(err, f"command {command[0]!r} not found")
    if timeout <= 0:
        raise _usage(err, f"--timeout must be a positive number of seconds, not {timeout:g}")
    if jobs is not None and jobs < 1:
        raise _usage(err, f"--jobs must be at least 1, not {jobs}")
    if baseline_runs < 2:
        raise _usage(err, "--baseline-runs must be at least 2 (two runs measure determinism)")
    if output_format not in ("text", "json"):
        err.print(f"--format must be text or json, not {output_format!r}")
        raise typer.Exit(2)
    chosen_device = device or _cuda_default()
    if chosen_device not in ("cpu", "cuda") and not chosen_device.startswith("cuda:"):
        err.print(f"--device must be cpu or cuda, not {chosen_device!r}")
        raise typer.Exit(2)
    chosen_patterns: tuple[str, ...] = DEFAULT_PATTERNS
    if patterns:
        chosen_patterns = tuple(p.strip() for p in patterns.split(",") if p.strip())
        unknown = [p for p in chosen_patterns if p not in ALL_PATTERNS]
        if unknown:
            err.print(f"unknown pattern(s) {unknown}; choose from {list(ALL_PATTERNS)}")
            raise typer.Exit(2)
    targets: list[PoisonSite] = []
    try:
        targets.extend(identify(parse_site(s)) for s in site or ())
        if sites is not None:
            targets.extend(sites_from_report(sites))
    except (ValueError, OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise _usage(err, str(exc)) from None
    targets = list(dict.fromkeys(targets))
    if not targets:
        raise _usage(err, "no sites: give --site PATH:LINE[:COL] or --sites REPORT.json")
    missing = [t.key for t in targets if not os.path.isfile(t.path)]
    if missing:
        raise _usage(err, f"no such file for site(s): {', '.join(missing)}")
    _check_torch(err)
    from zeroopt.runtime_checks.schedule import visible_gpus

    gpus = visible_gpus() if chosen_device == "cuda" else []
    if jobs is None:
        if gpus:
            jobs = len(gpus)
        else:
            jobs = (os.cpu_count() or 1) if chosen_device == "cpu" and command is None else 1
    options: dict[str, Any] = {
        "device": chosen_device,
        "patterns": chosen_patterns,
        "jobs": jobs,
        "timeout": timeout,
        "baseline_runs": baseline_runs,
        "gpus": gpus,
    }
    checker: Checker
    if command is not None:
        from zeroopt.runtime_checks.command import CommandChecker

        checker = CommandChecker(command, **options)
    else:
        assert scenario is not None
        checker = Checker(scenario, **options)

    show = not no_progress and err.is_terminal
    try:
        if show:
            from rich.progress import (  # here: `zeroopt scan` loads this module too
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

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
    except ScenarioUsageError as exc:
        raise _usage(err, str(exc)) from None
    except BaselineError as exc:
        err.print(f"zeroopt verify: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from None

    for result in report.sites:
        if not result.reached and "never loaded" in result.note:
            err.print(
                f"warning: site {result.path}:{result.line}: {result.note}",
                markup=False,
                highlight=False,
            )
    if not report.deterministic and command is not None:
        err.print(f"note: {report.baseline_detail}", markup=False, highlight=False)

    if output_format == "json":
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        render_text(report, Console())
    raise typer.Exit(0 if report.all_equivalent else 1)


def register(app: typer.Typer) -> None:
    app.command(
        "verify",
        cls=_VerifyCommand,
        context_settings={"allow_interspersed_args": True},
    )(verify)
