"""The README shows what the tool does: its lifecycle excerpt is real output, its rules table
lists every rule, and its demo leaves nothing untracked in the repository."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from zeroopt.report import rule_catalog

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _zeroopt(args: list[str], cache: Path) -> str:
    code = "import sys; from zeroopt.cli.app import main; sys.argv[0] = 'zeroopt'; main()"
    env = {**os.environ, "ZEROOPT_CACHE_DIR": str(cache)}
    env.pop("COLUMNS", None)
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _excerpt() -> tuple[list[str], list[str]]:
    """The command the README names before its lifecycle excerpt, and the excerpt's lines."""
    match = re.search(
        r"`(zeroopt scan fixtures/examples/lifecycle_backend\.py[^`]*)` follows.*?\n\n"
        r"((?:    [^\n]*\n)+)",
        README,
        re.S,
    )
    assert match is not None, "the README's lifecycle excerpt is missing"
    command = shlex.split(match.group(1))[1:]
    shown = [line[4:] for line in match.group(2).splitlines()]
    return command, shown


def test_lifecycle_excerpt_is_what_the_command_prints(tmp_path: Path) -> None:
    command, shown = _excerpt()
    assert any("page_table" in line and "[unsafe]" in line for line in shown)
    printed = [line.rstrip() for line in _zeroopt(command, tmp_path).splitlines()]
    # The shown lines are consecutive lines of the real output, character for character.
    start = printed.index(shown[0]) if shown[0] in printed else -1
    assert start >= 0, f"{shown[0]!r} is not printed; the output is:\n" + "\n".join(printed)
    assert printed[start : start + len(shown)] == shown


def test_rules_table_lists_every_rule() -> None:
    table = README[README.index("### Rules") :]
    listed = re.findall(r"^\| (ZO\d{3}) \| ([a-z-]+):", table, re.M)
    assert listed == [(str(r.code), str(r.name)) for r in rule_catalog()]


def test_demo_writes_no_file_into_the_repository() -> None:
    demo = README[README.index("## A 60-second demo") : README.index("## Commands")]
    commands = [line.strip() for line in demo.splitlines() if line.strip().startswith("zeroopt ")]
    assert commands
    for line in commands:
        assert ">" not in line.split("#")[0], line  # no redirection into the working directory
        words = shlex.split(line.split("  #")[0])
        if "--output-file" in words:
            target = words[words.index("--output-file") + 1]
            assert os.path.isabs(target) and not target.startswith(str(ROOT)), line


@pytest.mark.parametrize("flag", ["--format concise", "--statistics"])
def test_demo_commands_run(flag: str, tmp_path: Path) -> None:
    assert f"zeroopt scan fixtures/ {flag}" in README
    assert _zeroopt(["scan", "fixtures/", *flag.split()], tmp_path).strip()
