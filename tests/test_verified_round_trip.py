"""scan -> verify (a CPU scenario) -> `apply --verified`, end to end through the CLI.

The verify report records what it verified (each site's call `source` and function
`fingerprint`, and the `root` its paths are relative to), so apply rewrites a verified site only
while the file still holds that call in that function, and refuses, by name, an entry that no
longer matches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroopt.cli.app import app

pytest.importorskip("torch")

pytestmark = pytest.mark.slow  # verify runs trial processes

PROGRAM = """\
import torch
from helpers import fill


def make(n):
    x = torch.zeros(n)
    fill(x)
    return x


def scenario():
    return make(4)
"""
# Opaque to a scan of main.py alone: the zeros stays unproven; at run time it is fully written.
HELPERS = "def fill(t):\n    t.copy_(t.new_tensor(range(t.numel())))\n"


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "main.py").write_text(PROGRAM)
    (tmp_path / "helpers.py").write_text(HELPERS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _verify(*site_args: str, patterns: str = "nan,large") -> dict:
    code, out, err = _cli(
        "verify", "main.py:scenario", "--device", "cpu", "--jobs", "1", "--format", "json",
        "--patterns", patterns, *site_args,
    )  # fmt: skip
    assert code == 0, out + err
    data: dict = json.loads(out)
    return data


def test_verified_site_is_applied_and_a_stale_one_refused(project: Path) -> None:
    code, _, err = _cli("scan", "main.py", "--format", "json", "--no-cache", "-o", "scan.json")
    (finding,) = json.loads((project / "scan.json").read_text())["findings"]
    assert finding["verdict"] == "unproven" and (finding["line"], finding["col"]) == (6, 9)

    report = _verify("--sites", "scan.json")
    (site,) = report["sites"]
    assert Path(report["root"]) == project.resolve()
    assert site["verdict"] == "equivalent"
    assert (site["source"], site["fingerprint"]) == (finding["source"], finding["fingerprint"])
    (project / "verify.json").write_text(json.dumps(report))

    # A change inside the function, the call where it was: the entry no longer describes it.
    (project / "main.py").write_text(PROGRAM.replace("return x\n", "return x * 1\n"))
    code, out, err = _cli("apply", "main.py", "--no-cache", "--verified", "verify.json")
    assert code == 1, out + err
    assert "torch.zeros(n)" in (project / "main.py").read_text()
    assert "verify.json is stale here" in out + err

    # The file as verified: the site is rewritten.
    (project / "main.py").write_text(PROGRAM)
    code, out, err = _cli("apply", "main.py", "--no-cache", "--verified", "verify.json")
    assert code == 0, out + err
    assert (project / "main.py").read_text() == PROGRAM.replace("torch.zeros", "torch.empty")


def test_a_site_given_by_position_records_its_identity(project: Path) -> None:
    _, out, _ = _cli("scan", "main.py", "--format", "json", "--no-cache")
    (finding,) = json.loads(out)["findings"]
    # The identity comes from the site, not from the trials: one pattern is enough here.
    (site,) = _verify("--site", "main.py:6:9", patterns="nan")["sites"]
    assert site["source"] == "torch.zeros(n)" == finding["source"]
    assert site["fingerprint"] == finding["fingerprint"]
    # A line alone names no single call: no identity, and apply would refuse the entry.
    (line_only,) = _verify("--site", "main.py:6", patterns="nan")["sites"]
    assert line_only["source"] is None and line_only["fingerprint"] is None
