"""Every unproven finding says what would decide it, and the suggested entry really decides it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from zeroopt.cli.app import app

ROOT = Path(__file__).resolve().parents[1]


def _scan(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["scan", *args, "--no-cache", "--format", "json"])
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.parametrize(
    ("call", "written"), [("fill(x)", "0"), ("fill(n, x)", "1"), ("fill(n, out=x)", '"out"')]
)
def test_contract_for_the_opaque_callee_decides_the_finding(
    project: Callable[..., Path], call: str, written: str
) -> None:
    project(
        "m.py",
        f"import torch\nfrom helpers import fill\n\n\ndef f(n):\n    x = torch.zeros(n)\n"
        f"    {call}\n    return x.sum()\n",
    )
    (f,) = _scan("m.py")["findings"]
    assert f["verdict"] == "unproven"
    step = f["next_step"]
    entry = f'"helpers.fill" = {{ writes = [{written}] }}'
    assert step["toml"] == "[tool.zeroopt.contracts]\n" + entry
    assert step["command"] == "zeroopt verify SCENARIO.py:function --site m.py:6:9"
    assert entry in step["text"] and step["command"] in step["text"]
    # Declaring it, as the step says, decides the finding.
    pyproject = Path.cwd() / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n" + step["toml"] + "\n")
    (after,) = _scan("m.py")["findings"]
    assert after["verdict"] == "safe", after


def test_every_unproven_fixture_finding_has_a_verify_command() -> None:
    data = _scan(str(ROOT / "fixtures"))
    unproven = [f for f in data["findings"] if f["verdict"] == "unproven"]
    assert unproven
    for f in unproven:
        site = f"{f['path']}:{f['line']}:{f['col']}"
        assert f["next_step"]["command"].endswith(f"--site {site}")
    assert all(f["next_step"] is None for f in data["findings"] if f["verdict"] != "unproven")


def test_next_step_in_concise_text(project: Callable[..., Path]) -> None:
    project("m.py", "import torch\nfrom helpers import fill\nx = torch.zeros(3)\nfill(x)\n")
    out = CliRunner().invoke(app, ["scan", "m.py", "--no-cache", "-f", "concise", "-q"]).stdout
    assert out.startswith("m.py:3:5: ZO001 [unproven] ")
    assert "(next: if `helpers.fill` writes all of argument 0 without reading it: " in out
    assert "--site m.py:3:5" in out


def test_next_step_in_the_table(project: Callable[..., Path]) -> None:
    project("m.py", "import torch\nfrom helpers import fill\nx = torch.zeros(3)\nfill(x)\n")
    out = CliRunner().invoke(app, ["scan", "m.py", "--no-cache", "-f", "text"]).stdout
    assert "next: if `helpers.fill` writes all of argument 0" in " ".join(out.split())


def test_no_contract_is_suggested_for_torch_functions(project: Callable[..., Path]) -> None:
    project("m.py", "import torch\nx = torch.zeros(3)\np = torch.nn.Parameter(x)\n")
    (f,) = _scan("m.py")["findings"]
    assert f["verdict"] == "unproven" and "torch.nn.Parameter" in f["message"], f
    # the callee is torch's: a verify run, never a contract that would override the analysis
    assert f["next_step"]["toml"] is None
    assert f["next_step"]["text"].startswith("run `zeroopt verify")


def test_renderers_read_no_file(project: Callable[..., Path]) -> None:
    """What the table, concise and JSON outputs show of the source comes from the findings:
    the file may be gone by the time they render."""
    from zeroopt.report import json as json_report
    from zeroopt.report import table
    from zeroopt.scan.config import load_config
    from zeroopt.scan.runner import scan

    source = (
        "import torch\nfrom helpers import fill\n\n\ndef f(n):\n    x = torch.zeros(n)\n"
        "    fill(n, out=x)\n    return x.sum()\n"
    )
    path = project("m.py", source)
    report = scan(["m.py"], load_config(["m.py"]), use_cache=False)
    path.unlink()
    (f,) = report.findings
    assert f.source_line(6) == "    x = torch.zeros(n)"
    step = json_report.report_to_json(report)["findings"][0]["next_step"]
    assert step["toml"] == '[tool.zeroopt.contracts]\n"helpers.fill" = { writes = ["out"] }'
    from rich.console import Console

    console = Console(width=200, record=True, force_terminal=False)
    table.render(report, console, show_evidence=False)
    assert "x = torch.zeros(n)" in console.export_text()
