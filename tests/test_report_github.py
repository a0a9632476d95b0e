from __future__ import annotations

from zeroopt.report.github import render
from zeroopt.scan.findings import FileError, Finding, Fix, Verdict
from zeroopt.scan.runner import ScanReport


def test_workflow_commands_and_escaping() -> None:
    report = ScanReport(
        findings=[
            Finding(
                "a,b.py",
                2,
                5,
                3,
                7,
                "torch.zeros",
                "x",
                Verdict.SAFE,
                "ZO001",
                "100% overwritten\nby copy_",
                fix=Fix("torch.empty(4)"),
            ),
            Finding("c.py", 4, 1, 4, 9, "torch.zeros", "y", Verdict.UNSAFE, "ZO001", "read"),
            Finding("c.py", 6, 1, 6, 9, "torch.empty", "z", Verdict.UNSAFE, "ZO002", "read"),
        ],
        errors=[FileError("d.py", "syntax error")],
    )
    assert render(report).splitlines() == [
        "::warning file=a%2Cb.py,line=2,col=5,endLine=3,endColumn=7,"
        "title=zeroopt ZO001 (safe)::ZO001 [safe] 100%25 overwritten%0Aby copy_",
        "::notice file=c.py,line=4,col=1,endLine=4,endColumn=9,"
        "title=zeroopt ZO001 (unsafe)::ZO001 [unsafe] read",
        "::error file=c.py,line=6,col=1,endLine=6,endColumn=9,"
        "title=zeroopt ZO002 (unsafe)::ZO002 [unsafe] read",
        "::error file=d.py,title=zeroopt error::syntax error",
    ]
