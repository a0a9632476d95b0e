"""verify's pieces without running a command: empty sites, reports, scheduling, output masks."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from pathlib import Path

import pytest
import torch

from zeroopt.runtime_checks.command import crash_text, first_difference, normalise_output
from zeroopt.runtime_checks.intercept import Interceptor, Target
from zeroopt.runtime_checks.schedule import plan_slots, run_in_slots, slot_env, visible_gpus
from zeroopt.runtime_checks.targets import PoisonSite, StaleSitesError, sites_from_report
from zeroopt.scan.site_identity import site_identity

EMPTIES = """\
import torch
def run(x):
    a = torch.empty(3)
    b = torch.empty_like(x)
    c = torch.empty_strided((2, 2), (2, 1))
    d = x.new_empty(4)
    e = torch.empty(5)
    return a, b, c, d, e
"""


def _module(tmp_path: Path, text: str, name: str):  # type: ignore[no-untyped-def]
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_empty_sites_are_zero_filled_in_the_baseline_and_poisoned_in_trials(
    tmp_path: Path,
) -> None:
    path, module = _module(tmp_path, EMPTIES, "empties_under_test")
    lines = EMPTIES.splitlines()
    sites = [
        PoisonSite(str(path), n, lines[n - 1].index("=") + 3) for n in (3, 4, 5, 6)
    ]  # a, b, c, d: the call starts after "= "
    x = torch.ones(2)
    baseline = Interceptor([Target(s) for s in sites])
    baseline.install()
    try:
        a, b, c, d, _ = module.run(x)
    finally:
        baseline.uninstall()
    for t in (a, b, c, d):
        assert bool((t == 0).all()), t
    calls = [baseline.stats[s.key].calls for s in sites]
    assert calls == [
        {"torch.empty"},
        {"torch.empty_like"},
        {"torch.empty_strided"},
        {"Tensor.new_empty"},
    ]
    poisoned = Interceptor([Target(s, "nan") for s in sites])
    poisoned.install()
    try:
        a, b, c, d, _unpoisoned = module.run(x)
    finally:
        poisoned.uninstall()
    for t in (a, b, c, d):
        assert bool(t.isnan().all()), t
    assert poisoned.stats[sites[0].key].hits == 1
    # `e` was no site: left as torch gave it (neither zeroed nor poisoned on purpose).
    assert "wrapper" not in getattr(torch.empty, "__qualname__", "")


def test_interceptor_reports_target_files_that_load(tmp_path: Path) -> None:
    seen: list[str] = []
    target_path = tmp_path / "loaded_later.py"
    interceptor = Interceptor([Target(PoisonSite(str(target_path), 3, 9))], on_load=seen.append)
    interceptor.install()
    try:
        _module(tmp_path, EMPTIES, "loaded_later")
        _module(tmp_path, EMPTIES, "not_a_target")
    finally:
        interceptor.uninstall()
    assert seen == [str(target_path.resolve())]


# -- reports -----------------------------------------------------------------------------------

SOURCE = """\
import torch
def f(n):
    buf = torch.zeros(n)
    return buf
"""


def _finding(text: str, line: int, col: int, end_col: int, **extra: object) -> dict[str, object]:
    return {
        "path": "pkg/m.py",
        "line": line,
        "col": col,
        "end_line": line,
        "end_col": end_col,
        "call": "torch.zeros",
        "target": "buf",
        "verdict": "unproven",
        "rule": "ZO001",
        "message": "",
        "evidence": [],
        "fix": None,
        **extra,
    }


def _project(tmp_path: Path) -> tuple[Path, int, int]:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "m.py").write_text(SOURCE, encoding="utf-8")
    col = SOURCE.splitlines()[2].index("torch") + 1
    return project, col, col + len("torch.zeros(n)")


def test_report_paths_resolve_against_its_root_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, col, end = _project(tmp_path)
    reports = tmp_path / "reports"
    reports.mkdir()
    report = reports / "scan.json"
    report.write_text(
        json.dumps({"root": str(project), "findings": [_finding(SOURCE, 3, col, end)]})
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (site,) = sites_from_report(report)
    assert site.path == str(project / "pkg" / "m.py")
    # No recorded root: relative to the report file's own directory.
    moved = project / "scan.json"
    moved.write_text(json.dumps({"findings": [_finding(SOURCE, 3, col, end)]}))
    (site,) = sites_from_report(moved)
    assert site.path == str(project / "pkg" / "m.py")


def test_stale_report_sites_are_refused_by_name(tmp_path: Path) -> None:
    project, col, end = _project(tmp_path)
    ident = site_identity(SOURCE, 3, col, 3, end)
    finding = _finding(SOURCE, 3, col, end, source=ident.source, fingerprint=ident.fingerprint)
    report = project / "scan.json"
    report.write_text(json.dumps({"root": ".", "findings": [finding]}))
    assert len(sites_from_report(report)) == 1  # unchanged: accepted
    # Another function moves above: a different call now sits at line 3.
    (project / "pkg" / "m.py").write_text(
        "import torch\ndef g(n):\n    acc = torch.ones(n)\n    return acc\n" + SOURCE[13:],
        encoding="utf-8",
    )
    with pytest.raises(StaleSitesError, match=r"m\.py:3:\d+: the report judged `torch.zeros\(n\)`"):
        sites_from_report(report)


# -- scheduling --------------------------------------------------------------------------------


def test_visible_gpus_follow_cuda_visible_devices() -> None:
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0,1, 3"}) == ["0", "1", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-aa,MIG-bb"}) == ["GPU-aa", "MIG-bb"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,-1,3"}) == ["2"]  # CUDA stops at -1


def test_plan_slots_one_gpu_per_trial_any_number() -> None:
    assert plan_slots(3, []) == [None, None, None]
    assert plan_slots(2, ["0", "1"]) == ["0", "1"]  # as many jobs as GPUs: one trial per GPU
    assert plan_slots(5, ["0", "1"]) == ["0", "1", "0", "1", "0"]  # more: spread evenly
    assert plan_slots(2, [str(i) for i in range(16)]) == ["0", "1"]
    assert slot_env({"A": "1"}, "5") == {"A": "1", "CUDA_VISIBLE_DEVICES": "5"}
    assert slot_env({"A": "1"}, None) == {"A": "1"}


@pytest.mark.parametrize("jobs", [3, 6])
def test_run_in_slots_keeps_to_each_gpus_share_and_uses_them_all(jobs: int) -> None:
    gpus = ["0", "1", "2"]
    busy: dict[str, int] = dict.fromkeys(gpus, 0)
    peak: dict[str, int] = dict.fromkeys(gpus, 0)
    lock = threading.Lock()
    used: list[str] = []

    def work(item: int, slot: str | None) -> None:
        assert slot is not None
        with lock:
            busy[slot] += 1
            peak[slot] = max(peak[slot], busy[slot])
            used.append(slot)
        time.sleep(0.02)
        with lock:
            busy[slot] -= 1

    run_in_slots(list(range(12)), plan_slots(jobs, gpus), work)
    assert len(used) == 12 and set(used) == set(gpus)
    assert max(peak.values()) <= jobs // len(gpus)  # 3 jobs: never two trials on one GPU


# -- command output ----------------------------------------------------------------------------


def test_output_masks_timings_addresses_and_temp_paths() -> None:
    a = "4 passed in 0.52s\n<function f at 0x7f48c4f61bc0>\n/tmp/pytest-of-root/pytest-7/x\n"
    b = "4 passed in 11.02s\n<function f at 0x7f0000000000>\n/tmp/pytest-of-root/pytest-9/x\n"
    assert normalise_output(a) == normalise_output(b)
    assert normalise_output("1 passed") != normalise_output("1 failed")
    assert normalise_output("total 552.0") != normalise_output("total nan")
    diff = first_difference("a\nb\n", "a\nc\n", "stdout")
    assert diff is not None and "stdout line 2" in diff and "'c'" in diff


def test_crash_text_counts_only_what_the_baseline_did_not_print() -> None:
    out = "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    assert crash_text(out, "") is not None
    assert crash_text(out, "warning: CUDA error: something known\n") is not None  # new text
    assert crash_text("Segmentation fault (core dumped)\n", "") is not None
    assert crash_text("log: core dumped earlier\n", "log: core dumped earlier\n") is None
    assert crash_text("AssertionError\n", "") is None


def test_text_report_off_a_terminal_keeps_every_site_whole() -> None:
    import io

    from rich.console import Console

    from zeroopt.report.verify_text import render_text
    from zeroopt.runtime_checks.results import (
        RuntimeVerdict,
        SiteResult,
        TrialResult,
        VerifyReport,
    )

    long_path = "/very/long/directory/name/that/would/not/fit/in/a/table/cell/module.py"
    site = SiteResult(long_path, 123, 45, dtype="int32")
    site.trials = [
        TrialResult("max", RuntimeVerdict.CRASHED, "killed by SIGSEGV\ntail"),
        TrialResult("neg1", RuntimeVerdict.EQUIVALENT, "same exit status and output"),
    ]
    report = VerifyReport("python -m pytest", "cpu", 2, True, [site], None, 3, 1.0)
    out = io.StringIO()
    render_text(report, Console(file=out, width=80))
    lines = out.getvalue().splitlines()
    assert (
        f"{long_path}:123:45: crashed [int32] max:crashed, neg1:equivalent -- "
        "[max] killed by SIGSEGV"
    ) in lines
