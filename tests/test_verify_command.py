"""`zeroopt verify -- CMD`: a project's own pytest suite (and a Triton script) as the oracle.

Every run here is a real subprocess tree started through the installed `zeroopt` command; the
sites are located by the `# expect: ...` markers in fixtures/examples/oracle_project/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zeroopt.cli.app import app
from zeroopt.runtime_checks.checker import Checker
from zeroopt.runtime_checks.command import CommandChecker
from zeroopt.runtime_checks.targets import PoisonSite

REPO = Path(__file__).resolve().parents[1]
PROJECT = REPO / "fixtures" / "examples" / "oracle_project"
EXAMPLES = REPO / "fixtures" / "examples"

pytestmark = pytest.mark.slow  # every test starts trial processes that import torch


def marked(path: Path) -> dict[str, PoisonSite]:
    """marker text -> the site of the torch.zeros/torch.empty call on its line."""
    out = {}
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if "# expect: " not in text:
            continue
        code, marker = text.split("# expect: ", 1)
        found = [i for i in (code.find("torch.zeros"), code.find("torch.empty")) if i >= 0]
        if not found:
            continue  # the docstring's explanation of the markers
        col = min(found)
        out[marker.strip()] = PoisonSite(str(path), number, col + 1)
    return out


def _zeroopt() -> list[str]:
    exe = Path(sys.executable).with_name("zeroopt")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "zeroopt"]


@pytest.fixture(scope="module")
def pytest_oracle(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    project = tmp_path_factory.mktemp("oracle") / "project"
    shutil.copytree(PROJECT, project)
    sites = marked(project / "kernels.py")
    args = [f"--site=kernels.py:{s.line}:{s.col}" for s in sites.values()]
    proc = subprocess.run(
        [
            *_zeroopt(),
            "verify",
            *args,
            "--patterns",
            "nan",
            "--jobs",
            "2",
            "--device",
            "cpu",
            "--format",
            "json",
            "--",
            sys.executable,
            "-m",
            "pytest",
            "-q",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return sites, proc


def test_pytest_suite_is_the_oracle(pytest_oracle) -> None:  # type: ignore[no-untyped-def]
    sites, proc = pytest_oracle
    assert proc.returncode == 1, proc.stderr  # something diverged
    data = json.loads(proc.stdout)
    got = {(s["line"], s["col"]): s for s in data["sites"]}
    for marker, site in sites.items():
        result = got[(site.line, site.col)]
        assert result["verdict"] == marker.split(" (")[0], (marker, result)
    assert data["together"]["verdict"] == "diverged"
    assert data["baseline"] == {"runs": 2, "deterministic": True}  # timings are masked
    assert "pytest" in data["scenario"]


def test_site_reached_only_in_a_spawned_worker_is_poisoned_there(pytest_oracle) -> None:  # type: ignore[no-untyped-def]
    sites, proc = pytest_oracle
    data = json.loads(proc.stdout)
    worker = sites["diverged (worker)"]
    (result,) = [s for s in data["sites"] if s["line"] == worker.line]
    assert result["verdict"] == "diverged"
    assert "exit status 1" in result["trials"][0]["detail"]


def test_unreached_site_names_why(pytest_oracle) -> None:  # type: ignore[no-untyped-def]
    sites, proc = pytest_oracle
    data = json.loads(proc.stdout)
    unused = sites["not-reached"]
    (result,) = [s for s in data["sites"] if s["line"] == unused.line]
    assert result["trials"] == []


def test_triton_kernel_reader_under_the_interpreter_on_cpu(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    sites = marked(PROJECT / "triton_reader.py")
    checker = CommandChecker(
        [sys.executable, str(PROJECT / "triton_reader.py")],
        patterns=("nan", "max"),
        jobs=2,
        timeout=300,
        env={**os.environ, "TRITON_INTERPRET": "1"},
        cwd=tmp_path,
        gpus=[],
    )
    report = checker.verify(list(sites.values()))
    verdicts = {(s.line, s.col): str(s.verdict) for s in report.sites}
    for marker, site in sites.items():
        assert verdicts[(site.line, site.col)] == marker.split(" (")[0], (marker, report)
    assert report.deterministic
    out = next(s for s in report.sites if s.line == sites["diverged (triton)"].line)
    assert "total nan" in out.trials[0].detail


def test_trials_get_one_gpu_each_and_torch_free_processes_stay_torch_free(
    tmp_path: Path,
) -> None:
    """Scheduling with a fake device list: each run sees its own CUDA_VISIBLE_DEVICES."""
    log = tmp_path / "devices"
    log.mkdir()
    script = (
        "import os, sys; "
        "open(os.path.join(sys.argv[1], str(os.getpid())), 'w')"
        ".write(os.environ['CUDA_VISIBLE_DEVICES']); "
        "print('torch' in sys.modules, 'zeroopt.runtime_checks.hook' in sys.modules)"
    )
    target = EXAMPLES / "basic.py"
    checker = CommandChecker(
        [sys.executable, "-c", script, str(log)],
        jobs=3,
        timeout=120,
        gpus=["3", "5", "7"],
        baseline_runs=3,
    )
    assert checker.slots == ["3", "5", "7"]
    report = checker.verify([PoisonSite(str(target), 17)])
    (site,) = report.sites
    assert str(site.verdict) == "not-reached" and "never loaded" in site.note
    seen = sorted(p.read_text() for p in log.iterdir())
    assert len(seen) == 3 and set(seen) <= {"3", "5", "7"}
    assert report.deterministic  # "False True": armed, but torch never imported


def test_trial_runs_from_the_repository_root() -> None:
    """From a checkout's root the trial still imports the installed zeroopt, not a folder."""
    path = EXAMPLES / "basic.py"
    line = next(
        n for n, t in enumerate(path.read_text().splitlines(), 1) if "# expect: diverged" in t
    )
    checker = Checker(f"{path}:scenario", jobs=2, patterns=("nan",), cwd=REPO, gpus=[])
    report = checker.verify([PoisonSite(str(path), line)])
    assert str(report.sites[0].verdict) == "diverged"


# -- usage errors: one line each, exit 2 --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([f"{EXAMPLES / 'basic.py'}", "--site", "x.py:1"], "is not FILE.py:FUNCTION"),
        (["no/such/file.py:f", "--site", "x.py:1"], "scenario file no/such/file.py does not"),
        (["no_such_module_zz:f", "--site", "x.py:1"], "scenario module no_such_module_zz"),
        ([f"{EXAMPLES / 'basic.py'}:scenario", "--site", "x.py:1", "--timeout", "-1"], "--timeout"),
        ([f"{EXAMPLES / 'basic.py'}:scenario", "--site", "nofile.py:1"], "no such file"),
        (["--site", f"{EXAMPLES / 'basic.py'}:3", "--", "no-such-cmd-zz"], "not found"),
        (["--site", f"{EXAMPLES / 'basic.py'}:3"], "nothing to run"),
        ([f"{EXAMPLES / 'basic.py'}:scenario", "--site", "x.py:1", "--", "ls"], "not both"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["verify", "--device", "cpu", *args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], lines
    assert "baseline" not in lines[0] and "internal error" not in lines[0]


def test_missing_function_is_a_usage_error_not_a_baseline_failure() -> None:
    path = EXAMPLES / "basic.py"
    result = CliRunner().invoke(
        app, ["verify", f"{path}:no_such_function", "--site", f"{path}:17", "--device", "cpu"]
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"zeroopt verify: scenario '{path}:no_such_function': {path} has no function "
        "no_such_function"
    )


def test_without_torch_verify_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    path = EXAMPLES / "basic.py"
    result = CliRunner().invoke(
        app, ["verify", f"{path}:scenario", "--site", f"{path}:17", "--device", "cpu"]
    )
    assert result.exit_code == 2
    assert "torch is not installed" in result.stderr and "internal error" not in result.stderr


def test_site_in_a_file_the_scenario_never_loads_is_warned_about(tmp_path: Path) -> None:
    other = tmp_path / "other.py"
    other.write_text("import torch\nx = torch.zeros(2)\n")
    path = EXAMPLES / "basic.py"
    result = CliRunner().invoke(
        app,
        ["verify", f"{path}:scenario", "--site", f"{other}:2", "--device", "cpu", "-j", "2"],
    )
    assert result.exit_code == 1, result.output
    assert f"warning: site {other}:2: its file" in result.stderr
    assert "never loaded" in result.stderr


def test_forkserver_worker_and_python_subprocess_are_poisoned(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    main = project / "processes.py"
    fork = marked(main)["diverged (forkserver)"]
    sub = marked(project / "child_script.py")["diverged (subprocess)"]
    checker = CommandChecker(
        [sys.executable, str(main)], patterns=("nan",), jobs=2, timeout=300, cwd=project, gpus=[]
    )
    report = checker.verify([fork, sub])
    verdicts = [str(s.verdict) for s in report.sites]
    assert verdicts == ["diverged", "diverged"], report
    details = [s.trials[0].detail for s in report.sites]
    assert "forkserver nan" in details[0] and "subprocess nan" in details[1]


def _python_with_torch_without_zeroopt() -> str | None:
    """The base interpreter of this virtualenv, when it has torch and lacks zeroopt."""
    base = getattr(sys, "_base_executable", None)
    if not base:
        return None
    probe = "import importlib.util as u; print(bool(u.find_spec('torch')), bool(u.find_spec('zeroopt')))"
    proc = subprocess.run([base, "-c", probe], capture_output=True, text=True, timeout=60)
    return base if proc.stdout.split() == ["True", "False"] else None


def test_a_python_without_zeroopt_is_instrumented_from_the_parents_package(
    tmp_path: Path,
) -> None:
    python = _python_with_torch_without_zeroopt()
    if python is None:
        pytest.skip("no interpreter here has torch but not zeroopt")
    sub = marked(PROJECT / "child_script.py")["diverged (subprocess)"]
    checker = CommandChecker(
        [python, str(PROJECT / "child_script.py")], patterns=("nan",), cwd=tmp_path, gpus=[]
    )
    (result,) = checker.verify([sub]).sites
    assert str(result.verdict) == "diverged"
    assert "subprocess nan" in result.trials[0].detail


def test_signals_and_cuda_errors_are_crashes_even_when_only_exit_status_is_compared(
    tmp_path: Path,
) -> None:
    script = PROJECT / "crashy.py"
    sites = marked(script)
    checker = CommandChecker(
        [sys.executable, str(script)], patterns=("nan",), jobs=2, cwd=tmp_path, gpus=[]
    )
    report = checker.verify(list(sites.values()))
    assert not report.deterministic
    assert "comparing exit status only" in report.baseline_detail
    by_line = {s.line: s for s in report.sites}
    for marker, site in sites.items():
        assert str(by_line[site.line].verdict) == marker.split(" (")[0], (marker, report)
    assert "killed by SIGSEGV" in by_line[sites["crashed (signal)"].line].trials[0].detail
    assert "illegal memory access" in by_line[sites["crashed (cuda error)"].line].trials[0].detail
    quiet = by_line[sites["equivalent (nondeterministic)"].line].trials[0].detail
    assert "output not compared" in quiet
