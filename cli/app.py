"""The `zeroopt` command: a typer app; each command lives in cli/<name>.py."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Annotated

import typer

import zeroopt
from zeroopt.cli import apply as _apply
from zeroopt.cli import rules as _rules
from zeroopt.cli import scan as _scan
from zeroopt.cli import verify as _verify

_HELP_WIDTH = 160


def _wide_help_off_a_terminal() -> None:
    """Help off a terminal (CI logs, pipes, `--help | less`): rich would lay it out for 80
    columns and cut option names and help text with an ellipsis; a wide layout keeps every word.

    typer's help and error renderer (`typer.rich_utils`, with rich's markdown, syntax and
    traceback modules) is a fifth of a second of imports that a scan never uses, so it is loaded
    lazily (importlib's LazyLoader) with the width set: the loader keeps an attribute set before
    the load over the module's own default, as an eager import followed by the assignment."""
    if os.environ.get("TERMINAL_WIDTH") or os.environ.get("COLUMNS") or sys.stdout.isatty():
        return  # typer's own width (from TERMINAL_WIDTH) or the terminal's
    name = "typer.rich_utils"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    elif getattr(module, "MAX_WIDTH", None) is not None:
        return
    setattr(module, "MAX_WIDTH", _HELP_WIDTH)  # noqa: B010 (a module typeshed does not know)


_wide_help_off_a_terminal()

app = typer.Typer(
    name="zeroopt",
    help="Find [bold]torch.zeros[/bold] buffers that are provably overwritten before they are "
    "read, rewrite them to [bold]torch.empty[/bold], and verify the rewrite on a GPU.",
    rich_markup_mode="rich",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"zeroopt {zeroopt.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Find torch.zeros buffers that are provably overwritten before they are read, rewrite
    them to torch.empty, and verify the rewrite on a GPU."""


for _command in (_scan, _rules, _apply, _verify):
    _command.register(app)


def main() -> None:
    """Entry point: usage errors exit 2 (typer), internal errors exit 2 with one clear line."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("zeroopt: interrupted\n")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("ZEROOPT_DEBUG"):
            raise
        sys.stderr.write(
            f"zeroopt: internal error: {type(exc).__name__}: {exc}\n"
            "Set ZEROOPT_DEBUG=1 for the traceback, and please report it.\n"
        )
        sys.exit(2)
