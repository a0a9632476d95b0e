from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from zeroopt.cli.app import app


def test_text_output(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project("pkg/a.py", "import torch\nx = torch.zeros(4)\n")
    project("pkg/b.py", "import torch\ny = torch.empty(2)\n")
    project("pkg/c.py", "def (:\n")
    env = {"COLUMNS": "160"}
    out = CliRunner().invoke(app, ["scan", "pkg", "--no-cache", "--format", "text"], env=env).stdout
    assert "pkg/a.py" in out and "pkg/b.py" in out
    assert "2:5" in out and "ZO001" in out and "safe" in out and "unsafe" in out
    assert "x = torch.zeros(4)" in out  # the source line under the message
    assert "fix: torch.empty(4)" in out
    assert "2 findings: 1 safe, 1 unsafe, 0 unproven in 3 files" in out
    assert "1 fixable with `zeroopt apply`" in out
    assert "alloc" not in out
    evidence = (
        CliRunner()
        .invoke(app, ["scan", "pkg", "--no-cache", "--show-evidence", "-f", "text"], env=env)
        .stdout
    )
    assert "alloc" in evidence
    quiet = CliRunner().invoke(app, ["scan", "pkg", "--no-cache", "-q"], env=env).stdout
    assert "ZO001" in quiet and "findings:" not in quiet


def test_text_output_when_clean(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project("a.py", "x = 1\n")
    result = CliRunner().invoke(app, ["scan", ".", "--no-cache"])
    assert result.exit_code == 0 and "No findings in 1 file" in result.stdout
