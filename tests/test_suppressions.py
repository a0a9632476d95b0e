from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from zeroopt.cli.app import app
from zeroopt.scan.findings import Finding, Verdict
from zeroopt.scan.suppressions import apply_suppressions, parse_suppressions

SOURCE = """\
a = 1  # noqa: ZO001
b = 2  # NOQA:ZO001,ZO002
c = 3  # noqa
d = 4  # zeroopt: ignore[ZO002, ZO001]
e = 5  # zeroopt: ignore
f = "# noqa: ZO001 inside a string is not a comment"
g = 6  # noqa: E501
"""


def test_parse_directives() -> None:
    got = {(s.line, s.kind, s.codes) for s in parse_suppressions(SOURCE)}
    assert got == {
        (1, "noqa", ("ZO001",)),
        (2, "noqa", ("ZO001", "ZO002")),
        (3, "noqa", None),
        (4, "zeroopt", ("ZO002", "ZO001")),
        (5, "zeroopt", None),
        (7, "noqa", ("E501",)),
    }
    # Untokenizable input never raises; directives before the problem are kept.
    assert [s.line for s in parse_suppressions(b"x = 1  # noqa: ZO001\nf(\n")] == [1]
    assert parse_suppressions(b"\xff\xfe garbage") == []


def _finding(line: int, end_line: int | None = None, rule: str = "ZO001") -> Finding:
    return Finding(
        "m.py", line, 5, end_line or line, 20, "torch.zeros", "x", Verdict.SAFE, rule, "m"
    )


def test_multiline_span_and_unused() -> None:
    source = (
        "x = torch.zeros(\n"
        "    4,  # zeroopt: ignore[ZO001]\n"
        ")\n"
        "y = torch.zeros(4)  # noqa: ZO001, E501\n"
        "z = 1  # zeroopt: ignore\n"
        "w = 1  # noqa\n"
        "v = 1  # noqa: ZO002\n"
    )
    sups = parse_suppressions(source)
    kept, unused = apply_suppressions(
        "m.py", [_finding(1, 3), _finding(4)], sups, lambda code: True
    )
    assert kept == []
    # Line 5 is our blanket and suppressed nothing; line 6 is a blanket noqa (not ours to
    # judge); line 7 names a rule with no finding there.
    assert [(u.line, u.codes) for u in unused] == [(5, ()), (7, ("ZO002",))]
    assert all(u.rule == "ZO900" for u in unused)
    # A disabled rule's code is not reported; with ZO900 disabled nothing is.
    _, unused = apply_suppressions("m.py", [], sups, lambda code: code != "ZO002")
    assert [(u.line, u.codes) for u in unused] == [(2, ("ZO001",)), (4, ("ZO001",)), (5, ())]
    _, unused = apply_suppressions("m.py", [], sups, lambda code: code != "ZO900")
    assert unused == []


def test_other_codes_do_not_suppress() -> None:
    sups = parse_suppressions("x = torch.zeros(4)  # noqa: E501\n")
    kept, unused = apply_suppressions("m.py", [_finding(1)], sups, lambda code: True)
    assert kept == [_finding(1)] and unused == []


def test_end_to_end_json(project: Callable[..., Path], fake_engine: list[str]) -> None:
    project(
        "m.py",
        (
            "import torch\n"
            "a = torch.zeros(4)  # zeroopt: ignore[ZO001]\n"
            "b = torch.zeros(4)\n"
            "c = torch.ones(4)  # noqa: ZO001\n"
        ),
    )
    result = CliRunner().invoke(app, ["scan", "m.py", "--format", "json", "--no-cache"])
    data = json.loads(result.stdout)
    assert [f["line"] for f in data["findings"]] == [3]
    (unused,) = data["unused_suppressions"]
    assert (unused["path"], unused["line"], unused["rule"], unused["codes"]) == (
        "m.py",
        4,
        "ZO900",
        ["ZO001"],
    )
    text = CliRunner().invoke(app, ["scan", "m.py", "--no-cache"]).stdout
    assert "m.py:4:" in text and "ZO900" in text


def test_needs_suppressions_is_cheap_but_never_wrong() -> None:
    from zeroopt.scan.suppressions import needs_suppressions

    other = b"import os  # noqa: F401\nx = torch.zeros(4)\n"
    assert not needs_suppressions(other, [])
    assert not needs_suppressions(other, [_finding(2)])  # the noqa is on another line
    assert needs_suppressions(other, [_finding(1)])
    assert needs_suppressions(b"x = 1\ny = f(  # noqa\n  2)\n", [_finding(1, 3)])
    assert needs_suppressions(b"x = 1  # zeroopt: ignore\n", [])  # may be unused: report it
    assert needs_suppressions(b"x = 1  # NOQA: E501, ZO002\n", [])
    assert needs_suppressions(b"a = 1\rb = 2  # noqa\r", [_finding(1)])
