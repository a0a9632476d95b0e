"""`zeroopt scan PATH...`: find zero-initialised buffers and report a verdict for each."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from zeroopt.scan.config import ConfigError, load_config
from zeroopt.scan.findings import Verdict

EPILOG = """\
[bold]Examples[/bold]

  [cyan]zeroopt scan src/[/cyan]  (table of findings, grouped by file)

  [cyan]zeroopt scan . --format json > scan.json[/cyan]  (the JSON contract)

  [cyan]zeroopt scan . --verdict safe[/cyan]  (what `zeroopt apply` would rewrite)

  [cyan]zeroopt scan . --format sarif > zeroopt.sarif[/cyan]  (GitHub code scanning)

  [cyan]cat f.py | zeroopt scan - --stdin-filename f.py[/cyan]

[bold]Exit status[/bold]: 0 nothing to act on; 1 a safe rewrite is available or a torch.empty is read before it is written; 2 usage or internal error.
Suppress a line with `# zeroopt: ignore[ZO001]` or `# noqa: ZO001`. Settings live in \\[tool.zeroopt] of pyproject.toml.
"""


class OutputFormat(StrEnum):
    text = "text"
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
        OutputFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
    ] = OutputFormat.text,
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
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only findings: no summary, no progress bar.")
    ] = False,
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
        )
    except ConfigError as exc:
        err.print(
            f"[bold red]zeroopt: configuration error:[/bold red] {escape(str(exc))}",
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


def _run(
    paths: list[str],
    output_format: OutputFormat,
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
) -> int:
    from zeroopt.report import github, json, sarif, table
    from zeroopt.scan import runner

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
    if verdicts:
        wanted = set(verdicts)
        report.findings = [f for f in report.findings if f.verdict in wanted]
    out = sys.stdout
    if output_format is OutputFormat.json:
        out.write(json.render(report))
    elif output_format is OutputFormat.sarif:
        out.write(sarif.render(report))
    elif output_format is OutputFormat.github:
        out.write(github.render(report))
    else:
        table.render(report, Console(), show_evidence=show_evidence, quiet=quiet)
    out.flush()
    return 1 if any(f.actionable for f in report.findings) else 0


def register(app: typer.Typer) -> None:
    app.command(
        "scan",
        epilog=EPILOG,
        no_args_is_help=False,
        short_help="Find torch.zeros that can be torch.empty (and empty that must not be).",
    )(scan_command)
