"""What `zeroopt scan` prints and how it exits, as a ruff user expects: off a terminal one line
per finding, `--format concise`, `--statistics`, `--output-file`, full `--help`, a warning when
nothing was scanned, and exit 1 when a path or a file could not be analysed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroopt.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
ZEROS = "import torch\nx = torch.zeros(4)\n"
CONCISE = re.compile(r"^(?P<path>[^:]+):(\d+):(\d+): (ZO\d{3}) \[(safe|unsafe|unproven)\] (.+)$")
Project = Callable[..., Path]


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_missing_path_exits_1(project: Project, fake_engine: list[str]) -> None:
    project("plain.py", "x = 1\n")
    code, out, _ = _invoke("scan", "plain.py", "nope.py", "--no-cache")
    assert code == 1 and "nope.py: error:" in out
    assert _invoke("scan", "nope.py", "--no-cache", "--exit-zero")[0] == 0


@pytest.mark.parametrize(
    "data",
    [
        b"import torch\ndef f(:\n    return torch.zeros(3)\n",  # a syntax error
        b'import torch\nx = torch.zeros(3)\ny = "\xff"\n',  # not UTF-8
    ],
)
def test_unanalysable_file_exits_1(project: Project, data: bytes) -> None:
    (project.root / "bad.py").write_bytes(data)  # type: ignore[attr-defined]
    code, out, _ = _invoke("scan", "bad.py", "--no-cache", "--format", "json")
    assert code == 1 and [e["path"] for e in json.loads(out)["errors"]] == ["bad.py"]


def test_warns_when_no_python_file_was_found(project: Project) -> None:
    (project.root / "empty").mkdir()  # type: ignore[attr-defined]
    project("docs/notes.txt", "torch.zeros(3)\n")
    for target in ("empty", "docs"):
        code, _, err = _invoke("scan", target, "--no-cache")
        assert code == 0 and "warning: No Python files found" in err, err
    project("docs/ok.py", "x = 1\n")
    assert "warning" not in _invoke("scan", "docs", "--no-cache")[2]


def test_default_output_off_a_terminal_is_one_line_per_finding(
    project: Project, fake_engine: list[str]
) -> None:
    project("pkg/a.py", ZEROS + "y = torch.empty(3)\n")
    code, out, _ = _invoke("scan", ".", "--no-cache", "-q")
    assert code == 1
    assert out.splitlines() == [
        "pkg/a.py:2:5: ZO001 [safe] fake safe",
        "pkg/a.py:3:5: ZO002 [unsafe] fake unsafe",
    ]
    assert _invoke("scan", ".", "--no-cache", "-q", "--format", "concise")[1] == out


def test_concise_lines_on_the_real_fixtures() -> None:
    code, out, _ = _invoke("scan", str(ROOT / "fixtures"), "--no-cache", "--format", "concise")
    assert code == 1
    lines = [line for line in out.splitlines() if CONCISE.match(line)]
    data = json.loads(_invoke("scan", str(ROOT / "fixtures"), "--no-cache", "--format", "json")[1])
    assert len(lines) == len(data["findings"]) > 10
    for line, f in zip(lines, data["findings"], strict=True):
        prefix = f"{f['path']}:{f['line']}:{f['col']}: {f['rule']} [{f['verdict']}] "
        assert line.startswith(prefix + " ".join(f["message"].split()))
        if f["verdict"] == "unproven":
            assert line.endswith(f"(next: {f['next_step']['text']})")


def test_text_table_off_a_terminal_keeps_locations_and_messages(project: Project) -> None:
    name = "buffer_with_a_rather_long_name"
    project("m.py", f"import torch\n\ndef f(n):\n    {name} = torch.zeros(n)\n    return {name}\n")
    _, out, _ = _invoke("scan", "m.py", "--no-cache", "--format", "text")
    data = json.loads(_invoke("scan", "m.py", "--no-cache", "--format", "json")[1])
    (f,) = data["findings"]
    assert f"{f['line']}:{f['col']}" in out and name in out and "…" not in out
    assert " ".join(f["message"].split()) in " ".join(out.split())


def test_statistics_count_rule_verdict_and_reason() -> None:
    target = str(ROOT / "fixtures")
    data = json.loads(_invoke("scan", target, "--no-cache", "--format", "json")[1])
    code, out, _ = _invoke("scan", target, "--no-cache", "--statistics")
    assert code == 1
    rows = [line.split(None, 3) for line in out.splitlines()]
    assert sum(int(r[0]) for r in rows) == len(data["findings"])
    by_verdict = Counter(f["verdict"] for f in data["findings"])
    for verdict, n in by_verdict.items():
        assert sum(int(r[0]) for r in rows if r[2] == verdict) == n
    stats = json.loads(_invoke("scan", target, "--no-cache", "--statistics", "--format", "json")[1])
    assert {(s["rule"], s["verdict"]) for s in stats} == {
        (f["rule"], f["verdict"]) for f in data["findings"]
    }
    assert all(s["reason"] for s in stats if s["verdict"] == "unproven")
    assert all(not s["reason"] for s in stats if s["verdict"] != "unproven")


def test_reason_classes_of_unproven_findings(project: Project) -> None:
    project(
        "m.py",
        "import torch\nfrom helpers import fill\nfrom sgl_kernel import paged\n\n"
        "def a(n):\n    x = torch.zeros(n)\n    fill(x)\n    return x.sum()\n\n"
        "def b(n):\n    y = torch.zeros(n)\n    paged(y)\n    return y.sum()\n\n"
        "def c(n):\n    z = torch.zeros(n)\n    return [z, z]\n\n"
        "def d(self, n):\n    w = torch.zeros(n)\n    self.w = w\n",
    )
    stats = json.loads(_invoke("scan", "m.py", "--no-cache", "--statistics", "-f", "json")[1])
    reasons = {s["reason"] for s in stats if s["verdict"] == "unproven"}
    assert {"opaque kernel", "stored in container"} <= reasons, stats
    assert reasons & {"passed as argument", "unknown call"}, stats
    assert "escapes to attribute" in reasons, stats


def test_output_file(project: Project, fake_engine: list[str]) -> None:
    project("a.py", ZEROS)
    code, out, _ = _invoke("scan", "a.py", "--no-cache", "-q", "--output-file", "out/r.txt")
    assert code == 2  # the folder does not exist: a usage error, nothing written
    (project.root / "out").mkdir()  # type: ignore[attr-defined]
    code, out, _ = _invoke("scan", "a.py", "--no-cache", "-q", "--output-file", "out/r.txt")
    assert code == 1 and out == ""
    written = (project.root / "out/r.txt").read_text()  # type: ignore[attr-defined]
    assert written == "a.py:2:5: ZO001 [safe] fake safe\n"
    _invoke("scan", "a.py", "--no-cache", "-f", "json", "-o", "out/r.json")
    assert json.loads((project.root / "out/r.json").read_text())["findings"]  # type: ignore[attr-defined]


def test_help_is_not_cut_off_a_terminal() -> None:
    exe = Path(sys.executable).with_name("zeroopt")
    if not exe.exists():
        pytest.skip("the zeroopt entry point is not installed beside this interpreter")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    for command in ("scan", "apply", "verify"):
        done = subprocess.run(
            [str(exe), command, "--help"], capture_output=True, text=True, env=env, check=False
        )
        assert done.returncode == 0, done.stderr
        assert "…" not in done.stdout, done.stdout
    assert "(comma-separated; replaces the configured selection)" in " ".join(
        subprocess.run(
            [str(exe), "scan", "--help"], capture_output=True, text=True, env=env, check=False
        )
        .stdout.replace("│", " ")
        .split()
    )


def test_verdict_filters_the_lifecycle_tables_too() -> None:
    target = str(ROOT / "fixtures" / "examples" / "lifecycle_backend.py")
    everything = json.loads(_invoke("scan", target, "--no-cache", "-f", "json")[1])
    assert {b["verdict"] for lc in everything["lifecycles"] for b in lc["buffers"]} > {"safe"}
    for verdict in ("safe", "unsafe"):
        data = json.loads(
            _invoke("scan", target, "--no-cache", "-f", "json", "--verdict", verdict)[1]
        )
        buffers = [b for lc in data["lifecycles"] for b in lc["buffers"]]
        assert buffers and {b["verdict"] for b in buffers} == {verdict}
        _, out, _ = _invoke("scan", target, "--no-cache", "--verdict", verdict)
        others = {"safe", "unsafe", "unproven"} - {verdict}
        assert not any(f"[{v}]" in out for v in others), out
