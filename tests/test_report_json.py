from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from zeroopt.cli.app import app
from zeroopt.report.json import render
from zeroopt.scan.findings import Evidence, FileError, Finding, Fix, Verdict
from zeroopt.scan.runner import ScanReport


def test_shape_of_a_built_report(check_scan_json: Callable[[object], None]) -> None:
    report = ScanReport(
        findings=[
            Finding(
                "a.py",
                3,
                9,
                4,
                2,
                "torch.zeros",
                "self.meta['page_table']",
                Verdict.SAFE,
                "ZO001",
                "overwritten by copy_ before any read",
                (Evidence(5, "write", "x.copy_(y)"),),
                Fix("torch.empty(4, 8)"),
            ),
            Finding(
                "a.py",
                7,
                5,
                7,
                20,
                "torch.empty",
                "buf",
                Verdict.UNSAFE,
                "ZO002",
                "read before written",
                (Evidence(8, "read", "buf.sum()"),),
            ),
            Finding(
                "b.py", 1, 1, 1, 15, "Tensor.new_zeros", "acc", Verdict.UNPROVEN, "ZO001", "escapes"
            ),
        ],
        errors=[FileError("c.py", "syntax error: invalid syntax (line 2)")],
        files=3,
        seconds=0.25,
    )
    data = json.loads(render(report))
    check_scan_json(data)
    assert data["summary"] == {
        "files": 3,
        "findings": 3,
        "safe": 1,
        "unsafe": 1,
        "unproven": 1,
        "seconds": 0.25,
    }
    first = data["findings"][0]
    assert first["fix"] == {"replacement": "torch.empty(4, 8)"}
    assert first["evidence"] == [{"line": 5, "kind": "write", "text": "x.copy_(y)"}]
    assert data["errors"] == [{"path": "c.py", "message": "syntax error: invalid syntax (line 2)"}]
    assert data["unused_suppressions"] == []


def test_cli_json_is_alone_on_stdout(
    project: Callable[..., Path], fake_engine: list[str], check_scan_json: Callable[[object], None]
) -> None:
    project("a.py", "import torch\nx = torch.zeros(4)\ny = torch.empty(2)\n")
    project("b.py", "print(1)\n")
    result = CliRunner().invoke(app, ["scan", ".", "--format", "json", "--no-cache"])
    data = json.loads(result.stdout)  # nothing but the object: no progress or logs mixed in
    check_scan_json(data)
    assert data["summary"]["files"] == 2
    assert [(f["path"], f["line"], f["col"], f["verdict"]) for f in data["findings"]] == [
        ("a.py", 2, 5, "safe"),
        ("a.py", 3, 5, "unsafe"),
    ]
