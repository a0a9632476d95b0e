"""`zeroopt rules` (the catalogue) and `zeroopt rule CODE` (one rule's documentation page)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape


def rules_command() -> None:
    """List every rule: code, name, summary and whether `zeroopt apply` can fix it."""
    from rich.table import Table  # here: `zeroopt scan` loads this module too

    from zeroopt.report import rule_catalog, rule_has_fix

    table = Table(title="zeroopt rules", title_justify="left")
    table.add_column("Code", style="bold cyan", no_wrap=True)
    table.add_column("Name", no_wrap=True)
    table.add_column("Summary")
    table.add_column("Fix", no_wrap=True)
    for rule in rule_catalog():
        fix = "[green]yes[/green]" if rule_has_fix(rule) else "no"
        table.add_row(str(rule.code), str(rule.name), str(rule.summary), fix)
    console = Console()
    if not console.is_terminal:  # a pipe or a log: no need to wrap at 80 columns
        console = Console(width=160)
    console.print(table)


def rule_command(
    code: Annotated[str, typer.Argument(help="A rule code, e.g. ZO001.", show_default=False)],
) -> None:
    """Print the documentation page of one rule: what, why, example, fix safety."""
    from rich.markdown import Markdown  # slow to import; only this command needs it

    from zeroopt.report import rule_catalog, rule_doc

    catalog = rule_catalog()
    wanted = code.strip().upper()
    for rule in catalog:
        if str(rule.code) == wanted or str(rule.name) == code.strip():
            Console().print(Markdown(rule_doc(rule)))
            return
    Console(stderr=True).print(
        f"[bold red]zeroopt: unknown rule {escape(repr(code))}.[/bold red] Known rules: "
        + ", ".join(f"{r.code} ({r.name})" for r in catalog),
        highlight=False,
    )
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("rules")(rules_command)
    app.command("rule")(rule_command)
