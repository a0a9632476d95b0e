"""`zeroopt apply PATH...`: rewrite safe `torch.zeros` to `torch.empty`, in place or as a patch.

Exit status, as ruff's fixing mode and as `zeroopt scan`: 0 when everything actionable was
fixed (or nothing was actionable); 1 with --check/--diff/--patch when anything actionable
remains or would change, and without them when actionable findings remain unfixed (an unsafe
`torch.empty`, a skipped site), when a file could not be read, parsed or written, when a report
entry is stale, or, with --exit-non-zero-on-fix, when a file was changed; 2 on usage, option,
configuration or internal errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from zeroopt.patcher.apply import ApplyReport, VerifiedSites


def _codes(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [code.strip().upper() for value in values for code in value.split(",") if code.strip()]


def apply(
    paths: Annotated[
        list[str] | None, typer.Argument(help="Files or directories (default: the current one).")
    ] = None,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print a unified diff to stdout; change no file.")
    ] = False,
    patch: Annotated[
        Path | None,
        typer.Option("--patch", help="Write the unified diff to FILE; change no source file."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Change nothing; exit 1 if anything would change or remains."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would change; write nothing.")
    ] = False,
    select: Annotated[
        list[str] | None, typer.Option("--select", help="Rule codes to use (comma-separated).")
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", help="Rule codes to leave out (comma-separated)."),
    ] = None,
    verified: Annotated[
        Path | None,
        typer.Option(
            "--verified",
            help="A `zeroopt verify --format json` report: also apply the unproven sites it "
            "shows equivalent in every trial (and together). Never an unsafe one.",
        ),
    ] = None,
    exit_non_zero_on_fix: Annotated[
        bool,
        typer.Option("--exit-non-zero-on-fix", help="Exit 1 when a file was changed (hooks)."),
    ] = False,
    force_exclude: Annotated[
        bool,
        typer.Option("--force-exclude", help="Honour excludes for files named explicitly."),
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the cache.")
    ] = False,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="Cache directory.")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", help="Worker processes.")] = None,
    output_format: Annotated[
        str, typer.Option("--format", help="text or json (json: one object on stdout).")
    ] = "text",
) -> None:
    """Rewrite provably-overwritten torch.zeros / zeros_like / new_zeros to their empty variants."""
    # libcst is imported here, not when the CLI loads: `zeroopt scan` never needs it.
    from zeroopt.patcher.apply import load_verified, plan, repository_root, write
    from zeroopt.scan.config import ConfigError, load_config
    from zeroopt.scan.runner import scan

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if output_format not in ("text", "json"):
        err.print(f"[red]error:[/] --format must be text or json, not {output_format!r}")
        raise typer.Exit(2)
    targets = paths or ["."]
    if "-" in targets:
        err.print("[red]error:[/] apply rewrites files; it cannot read from stdin")
        raise typer.Exit(2)
    try:
        config = load_config(
            targets,
            select=_codes(select),
            ignore=_codes(ignore),
            cache_dir=cache_dir,
            jobs=jobs,
            force_exclude=force_exclude or None,
        )
    except ConfigError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    base = Path.cwd()
    sites: VerifiedSites | None = None
    if verified is not None:
        try:
            sites = load_verified(verified, base)
        except ValueError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from exc
    scanned = scan(targets, config, jobs=jobs, use_cache=not no_cache, cache_dir=cache_dir)
    if scanned.files == 0 and not scanned.generated and not scanned.errors:
        err.print("[yellow]warning:[/] No Python files found under the given path(s)")
    report = plan(
        scanned.results, scanned.findings, base_dir=base, verified=sites, scan_errors=scanned.errors
    )
    root = repository_root(base) or config.project_root
    in_place = not (diff or check or dry_run or patch is not None)
    patch_bytes = b""
    if diff or patch is not None:
        try:
            patch_bytes = report.patch(root)
        except ValueError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from exc
    if patch is not None:
        patch.write_bytes(patch_bytes)
    if in_place:
        write(report)

    mode = "apply" if in_place else "check" if check else "diff" if diff else "dry-run"
    if output_format == "json":
        data = report.to_json(mode)
        if diff:
            data["diff"] = patch_bytes.decode("utf-8", "surrogateescape")
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=True) + "\n")
    else:
        if diff:
            sys.stdout.flush()
            sys.stdout.buffer.write(patch_bytes)
            sys.stdout.buffer.flush()
        _render(report, in_place, Console(stderr=diff, highlight=False, soft_wrap=True), err)
        if patch is not None:
            err.print(f"wrote {len(report.changed_files)} file diff(s) to {escape(str(patch))}")
    raise typer.Exit(
        exit_code(
            report,
            check=check or diff or patch is not None,
            exit_non_zero_on_fix=exit_non_zero_on_fix,
        )
    )


def exit_code(report: ApplyReport, *, check: bool, exit_non_zero_on_fix: bool) -> int:
    """ruff's fixing-mode convention (see the module docstring): a file that could not be
    analysed or rewritten is something to act on (1), as in `zeroopt scan`."""
    if report.errors:
        return 1
    if check:
        return 1 if report.changed_files or any(f.actionable for f in report.findings) else 0
    if report.remaining:
        return 1
    return 1 if exit_non_zero_on_fix and report.changed_files else 0


def _render(report: ApplyReport, in_place: bool, out: Console, err: Console) -> None:
    verb = "rewrote" if in_place else "would rewrite"
    for note in report.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
    for f in report.files:
        for site in f.sites:
            if site.status == "skipped":
                err.print(
                    f"[yellow]skipped[/] {escape(f.path)}:{site.finding.line}:{site.finding.col}: "
                    f"{escape(site.detail)}"
                )
        if f.changed:
            out.print(f"{escape(f.path)}: {verb} {f.fixes} call(s)")
    for error in report.errors:
        err.print(f"[red]error:[/] {escape(error.path)}: {escape(error.message)}")
    for finding in report.remaining:
        err.print(
            f"[yellow]remaining[/] {escape(finding.path)}:{finding.line}:{finding.col}: "
            f"{finding.rule} {finding.verdict} {escape(finding.call)}: "
            f"{escape(' '.join(finding.message.split()))}"
        )
    files = len(report.changed_files)
    out.print(
        f"{verb.capitalize()} {report.fixes} call(s) in {files} file(s); "
        f"{len(report.remaining)} actionable finding(s) remaining; {len(report.errors)} error(s)."
    )


def register(app: typer.Typer) -> None:
    app.command("apply")(apply)
