"""`zeroopt scan PATH...`: find zero-initialised buffers and report a verdict for each."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, TextIO

import typer
from rich.console import Console
from rich.markup import escape

from zeroopt.scan.changed_lines import GitError
from zeroopt.scan.config import ConfigError, load_config
from zeroopt.scan.findings import Verdict

if TYPE_CHECKING:
    from zeroopt.scan import runner

EPILOG = """\
[bold]Examples[/bold]

  [cyan]zeroopt scan src/[/cyan]  (table of findings, grouped by file)

  [cyan]zeroopt scan . --format json > scan.json[/cyan]  (the JSON contract)

  [cyan]zeroopt scan . --verdict safe[/cyan]  (what `zeroopt apply` would rewrite)

  [cyan]zeroopt scan . --format sarif > zeroopt.sarif[/cyan]  (GitHub code scanning)

  [cyan]cat f.py | zeroopt scan - --stdin-filename f.py[/cyan]

  [cyan]zeroopt scan src/ --since origin/main[/cyan]  (the guard: only changed lines; every torch.empty there must prove itself)
  [cyan]zeroopt scan . --statistics[/cyan]  (counts per rule, verdict and reason)

[bold]Exit status[/bold]: 0 nothing to act on; 1 a safe rewrite is available, a torch.empty is read before it is written (with --since: a changed torch.empty that is unsafe or unproven), or a path does not exist or a file cannot be read, decoded or parsed; 2 usage or internal error.

Suppress a line with `# zeroopt: ignore[ZO001]` or `# noqa: ZO001`. Settings live in \\[tool.zeroopt] of pyproject.toml.
"""


class OutputFormat(StrEnum):
    text = "text"
    concise = "concise"
    json = "json"
    sarif = "sarif"
    github = "github"


def _codes(values: list[str] | None) -> list[str] | None:
    """`--select ZO001,ZO002 --select ZO9` -> ["ZO001", "ZO002", "ZO9"]."""
    if values is None:
        return None
    return [c.strip().upper() for v in values for c in v.split(",") if c.strip()]


def scan_command(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files or directories to scan (default: .); `-` reads source from stdin.",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="Output format (default: text on a terminal, concise otherwise: one line per "
            "finding, `path:line:col: CODE \\[verdict] message`).",
            case_sensitive=False,
            show_default=False,
        ),
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option(
            help="Rule codes or prefixes to enable (comma-separated; replaces the configured "
            "selection).",
            show_default=False,
        ),
    ] = None,
    extend_select: Annotated[
        list[str] | None,
        typer.Option(help="Rule codes to enable in addition to the selection.", show_default=False),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            help="Rule codes or prefixes to disable (comma-separated).", show_default=False
        ),
    ] = None,
    verdict: Annotated[
        list[Verdict] | None,
        typer.Option(help="Show only findings with this verdict (repeatable).", show_default=False),
    ] = None,
    exit_zero: Annotated[
        bool, typer.Option(help="Exit 0 even when something needs action.")
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the cache.")
    ] = False,
    cache_dir: Annotated[
        str | None,
        typer.Option(
            help="Cache directory (default: .zeroopt_cache beside the project's pyproject.toml).",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, help="Worker processes (default: all cores).", show_default=False
        ),
    ] = None,
    stdin_filename: Annotated[
        str | None,
        typer.Option(
            help="Path to report (and match settings against) for source read from `-`.",
            show_default=False,
        ),
    ] = None,
    force_exclude: Annotated[
        bool,
        typer.Option(
            help="Apply exclude settings and @generated skipping even to files named explicitly "
            "(for pre-commit)."
        ),
    ] = False,
    show_evidence: Annotated[
        bool, typer.Option(help="Print the lines that decided each verdict.")
    ] = False,
    no_closed_world: Annotated[
        bool,
        typer.Option(
            "--no-closed-world",
            help="Do not assume every subclass is in the scanned tree: `self.m(buf)` stays an "
            "unknown call (as `closed-world = false`).",
        ),
    ] = False,
    callers_closed: Annotated[
        bool,
        typer.Option(
            "--callers-closed",
            help="Assume no code outside the scanned tree calls its public functions: a buffer "
            "one returns is judged at its calls in the tree (as `callers-closed = true`).",
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only findings: no summary, no progress bar.")
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(
            help="Only findings on lines changed since this git ref (working tree and index; "
            "untracked files count whole). Every torch.empty* there gets a verdict, and "
            "unsafe or unproven ones fail the scan.",
            show_default=False,
        ),
    ] = None,
    statistics: Annotated[
        bool,
        typer.Option(
            "--statistics",
            help="Print counts per rule, verdict and reason (of the unproven) instead of the "
            "findings.",
        ),
    ] = False,
    output_file: Annotated[
        str | None,
        typer.Option(
            "--output-file", "-o", help="Write the output to this file.", show_default=False
        ),
    ] = None,
) -> None:
    """Find [bold]torch.zeros[/bold] buffers that are provably overwritten before they are read.

    Every zero-initialised allocation gets a verdict: [green]safe[/green] (can become
    torch.empty, see `zeroopt apply`), [red]unsafe[/red] (the zeros are needed) or
    [yellow]unproven[/yellow] (a candidate for `zeroopt verify`). Reads of `torch.empty`
    before any write are reported as unsafe too.
    """
    err = Console(stderr=True)
    try:
        code = _run(
            paths or ["."],
            output_format,
            _codes(select),
            _codes(extend_select),
            _codes(ignore),
            verdict,
            no_cache,
            cache_dir,
            jobs,
            stdin_filename,
            force_exclude,
            show_evidence,
            quiet,
            err,
            since,
            statistics=statistics,
            output_file=output_file,
            no_closed_world=no_closed_world,
            callers_closed=callers_closed,
        )
    except (ConfigError, GitError) as exc:
        what = "configuration error" if isinstance(exc, ConfigError) else "--since"
        err.print(
            f"[bold red]zeroopt: {what}:[/bold red] {escape(str(exc))}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err.print("zeroopt: interrupted")
        raise typer.Exit(130) from None
    except Exception as exc:
        if os.environ.get("ZEROOPT_DEBUG"):
            raise
        err.print(
            f"[bold red]zeroopt: internal error:[/bold red] {type(exc).__name__}: "
            f"{escape(str(exc))}\n"
            "Set ZEROOPT_DEBUG=1 for the traceback, and please report it.",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2) from None
    raise typer.Exit(0 if exit_zero else code)


def _keep_verdicts(report: runner.ScanReport, wanted: set[Verdict]) -> None:
    """`--verdict`: the findings, and the rows of the lifecycle tables, with those verdicts."""
    report.findings = [f for f in report.findings if f.verdict in wanted]
    results = []
    for result in report.results:
        tables = []
        for lc in result.lifecycles:
            buffers = tuple(b for b in lc.buffers if b.verdict in wanted)
            if buffers:
                kept = {(b.target, b.line) for b in buffers}
                groups = tuple(g for g in lc.coupled_groups if set(g) <= kept)
                tables.append(replace(lc, buffers=buffers, coupled_groups=groups))
        results.append(replace(result, lifecycles=tables))
    report.results = results


def _run(
    paths: list[str],
    output_format: OutputFormat | None,
    select: list[str] | None,
    extend_select: list[str] | None,
    ignore: list[str] | None,
    verdicts: list[Verdict] | None,
    no_cache: bool,
    cache_dir: str | None,
    jobs: int | None,
    stdin_filename: str | None,
    force_exclude: bool,
    show_evidence: bool,
    quiet: bool,
    err: Console,
    since: str | None = None,
    *,
    statistics: bool = False,
    output_file: str | None = None,
    no_closed_world: bool = False,
    callers_closed: bool = False,
) -> int:
    from zeroopt.scan import changed_lines, runner

    config = load_config(
        paths,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        cache_dir=cache_dir,
        jobs=jobs,
        force_exclude=force_exclude or None,
        stdin_filename=stdin_filename,
    )
    changed = None
    if since is not None:
        if "-" in paths:
            raise GitError("source read from `-` has no git history to compare with")
        changed = changed_lines.changed_lines(paths, since)
        config = replace(config, analysis=replace(config.analysis, judge_empties=True))
    if no_closed_world:
        config = replace(config, analysis=replace(config.analysis, closed_world=False))
    if callers_closed:
        config = replace(config, analysis=replace(config.analysis, callers_closed=True))
    stdin: bytes | None = None
    if "-" in paths:
        stream = sys.stdin
        stdin = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()

    report = runner.scan(
        paths,
        config,
        jobs=config.jobs,
        use_cache=not no_cache,
        cache_dir=config.cache_dir,
        progress=not quiet and err.is_terminal,
        stdin_filename=stdin_filename,
        stdin=stdin,
    )
    if changed is not None:
        report = changed_lines.filter_report(report, changed, paths)
    if verdicts:
        _keep_verdicts(report, set(verdicts))
    if report.files == 0 and not report.generated and not report.errors:
        err.print(
            "[yellow]warning:[/yellow] No Python files found under the given path(s)",
            highlight=False,
        )
    out: TextIO = sys.stdout
    if output_file is not None:
        try:
            out = open(output_file, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
        except OSError as exc:
            raise ConfigError(f"--output-file {output_file}: {exc.strerror or exc}") from exc
    try:
        terminal = output_file is None and Console().is_terminal
        if output_format is None:
            output_format = OutputFormat.text if terminal else OutputFormat.concise
        # Each renderer is imported when chosen: the others (rich tables, the rule catalogue of
        # SARIF) cost a scan start-up time for nothing.
        if statistics:
            from zeroopt.report import statistics as stats

            if output_format is OutputFormat.json:
                out.write(stats.render_json(report))
            else:
                out.write(stats.render_text(report))
        elif output_format is OutputFormat.json:
            from zeroopt.report import json

            out.write(json.render(report))
        elif output_format is OutputFormat.sarif:
            from zeroopt.report import sarif

            out.write(sarif.render(report))
        elif output_format is OutputFormat.github:
            from zeroopt.report import github

            out.write(github.render(report))
        elif output_format is OutputFormat.concise:
            from zeroopt.report import concise

            out.write(concise.render(report, show_evidence=show_evidence, quiet=quiet))
        else:
            from zeroopt.report import table

            # Off a terminal, wide enough that no message or location is cut.
            console = Console(file=out, width=None if terminal else 200)
            table.render(report, console, show_evidence=show_evidence, quiet=quiet)
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    # Nothing analysed is not "nothing to act on": a missing path or an unreadable, undecodable
    # or unparsable file fails the run, as in ruff.
    return 1 if report.errors or any(f.actionable for f in report.findings) else 0


def register(app: typer.Typer) -> None:
    app.command(
        "scan",
        epilog=EPILOG,
        no_args_is_help=False,
        short_help="Find torch.zeros that can be torch.empty (and empty that must not be).",
    )(scan_command)
