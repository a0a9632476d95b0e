"""The checker end to end on small programs: every trial is a real subprocess.

The programs live in fixtures/examples/; each allocation's expected verdict is written on its
line (`# expect: ...`), and the tests locate sites by those markers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroopt.runtime_checks.checker import BaselineError, Checker
from zeroopt.runtime_checks.targets import PoisonSite

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples"

pytestmark = pytest.mark.slow  # trial processes that import torch


def marked_sites(path: Path, marker: str) -> list[PoisonSite]:
    """Sites of every zeros call on lines whose comment contains `# expect: <marker>`."""
    sites = []
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if f"# expect: {marker}" not in text:
            continue
        code = text.split("#", 1)[0]
        start = 0
        while True:
            found = [
                i
                for i in (code.find("torch.zeros", start), code.find("x.new_zeros", start))
                if i >= 0
            ]
            if not found:
                break
            col = min(found)
            sites.append(PoisonSite(str(path), number, col + 1))
            start = col + 1
    assert sites, (path, marker)
    return sites


@pytest.fixture(scope="module")
def basic_report():  # type: ignore[no-untyped-def]
    path = EXAMPLES / "basic.py"
    sites = {
        name: marked_sites(path, name)
        for name in ("equivalent", "diverged", "crashed", "not-reached", "col")
    }
    ordered = [s for group in sites.values() for s in group]
    checker = Checker(f"{path}:scenario", jobs=2, patterns=("nan", "max"))
    return sites, checker.verify(ordered)


def test_each_verdict_on_small_programs(basic_report) -> None:  # type: ignore[no-untyped-def]
    sites, report = basic_report
    verdicts = {(s.line, s.col): str(s.verdict) for s in report.sites}
    for name in ("equivalent", "diverged", "crashed", "not-reached"):
        for site in sites[name]:
            assert verdicts[(site.line, site.col)] == name, (name, site)
    assert report.deterministic and report.baseline_runs == 2


def test_zeros_like_and_new_zeros_are_intercepted(basic_report) -> None:  # type: ignore[no-untyped-def]
    sites, report = basic_report
    by_line = {s.line: s for s in report.sites}
    like, new = sites["equivalent"][1], sites["diverged"][1]
    assert str(by_line[like.line].verdict) == "equivalent"
    assert str(by_line[new.line].verdict) == "diverged"


def test_two_calls_on_one_line_are_told_apart_by_column(basic_report) -> None:  # type: ignore[no-untyped-def]
    sites, report = basic_report
    first, second = sites["col"]
    verdicts = {(s.line, s.col): str(s.verdict) for s in report.sites}
    assert verdicts[(first.line, first.col)] == "equivalent"
    assert verdicts[(second.line, second.col)] == "diverged"


def test_crash_detail_and_json_contract(basic_report) -> None:  # type: ignore[no-untyped-def]
    sites, report = basic_report
    data = report.to_json()
    assert set(data) == {"version", "root", "scenario", "device", "baseline", "sites", "together"}
    assert data["baseline"] == {"runs": 2, "deterministic": True}
    for site in data["sites"]:
        assert set(site) == {"path", "line", "col", "source", "fingerprint", "verdict", "trials"}
        for trial in site["trials"]:
            assert set(trial) == {"pattern", "verdict", "detail"}
    crashed = next(s for s in data["sites"] if s["line"] == sites["crashed"][0].line)
    assert any("IndexError" in t["detail"] for t in crashed["trials"])
    unreached = next(s for s in data["sites"] if s["line"] == sites["not-reached"][0].line)
    assert unreached["trials"] == []
    assert data["together"]["verdict"] == "crashed"  # includes the crashing index buffer
    json.dumps(data)


def test_garbage_output_exit_and_hang_are_crashes() -> None:
    path = EXAMPLES / "crash_modes.py"
    exit_site = marked_sites(path, "crashed (exit)")
    hang_site = marked_sites(path, "crashed (timeout)")
    noisy = Checker(f"{path}:noisy_then_exit", jobs=2, patterns=("max",)).verify(exit_site)
    (result,) = noisy.sites
    assert str(result.verdict) == "crashed"
    assert "exit status 7" in result.trials[0].detail
    # The limit holds for the baseline runs too (a fresh interpreter importing torch): room for a
    # loaded machine running other tests beside these.
    hang = Checker(f"{path}:hang_when_poisoned", jobs=2, timeout=15, patterns=("one",))
    (result,) = hang.verify(hang_site).sites
    assert str(result.verdict) == "crashed"
    assert "timeout" in result.trials[0].detail


def test_nondeterministic_baseline_is_reported() -> None:
    path = EXAMPLES / "crash_modes.py"
    sites = marked_sites(path, "equivalent within spread")
    report = Checker(f"{path}:nondeterministic", jobs=2, patterns=("nan",)).verify(sites)
    assert report.deterministic is False
    assert report.to_json()["baseline"]["deterministic"] is False


def test_failing_baseline_raises() -> None:
    path = EXAMPLES / "basic.py"
    with pytest.raises(BaselineError, match="does_not_exist"):
        Checker(f"{path}:does_not_exist", jobs=2).verify([PoisonSite(str(path), 17)])


def test_verify_command_on_coupled_buffers_json_and_exit_codes() -> None:
    """Each buffer alone is harmless; together they diverge: the command's exit status is 1."""
    from zeroopt.cli.app import app

    path = EXAMPLES / "coupled.py"
    args = [f"--site={s.path}:{s.line}:{s.col}" for s in marked_sites(path, "equivalent alone")]
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "verify",
            f"{path}:scenario",
            *args,
            "--format",
            "json",
            "--jobs",
            "2",
            "--device",
            "cpu",
            "--patterns",
            "one,true",
        ],
    )
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["device"] == "cpu"
    assert [s["verdict"] for s in data["sites"]] == ["equivalent", "equivalent"]
    assert data["together"]["verdict"] == "diverged"
    assert [t["pattern"] for t in data["sites"][0]["trials"]] == ["true"]  # bool mask
    assert [t["pattern"] for t in data["sites"][1]["trials"]] == ["one"]
    usage = runner.invoke(app, ["verify", f"{path}:scenario"])
    assert usage.exit_code == 2  # no sites
    bad = runner.invoke(
        app, ["verify", f"{path}:scenario", "--site", "x.py:1", "--patterns", "zzz"]
    )
    assert bad.exit_code == 2
