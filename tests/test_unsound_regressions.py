"""Every wrong `safe` (or wrong fix) ever found stays found.

Each file in tests/regressions/ is a minimised program where replacing one allocation by poisoned
memory changed the result, while the analysis of its day said `safe`; its header says which site
(`at line N`) and why. The analysis must never call that site `safe` again.
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys
import types
from pathlib import Path

import pytest
import torch

from zeroopt.analysis.kernel_contracts import kernel_from_config
from zeroopt.analysis.lifecycles import lifecycles_from_config
from zeroopt.analysis.options import AnalysisOptions, Contract
from zeroopt.patcher.codemod import RewriteSite as PatchSite
from zeroopt.patcher.codemod import rewrite_source
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict

CASES = sorted((Path(__file__).parent / "regressions").glob("*.py"))


def test_there_are_cases() -> None:
    assert len(CASES) >= 99


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_no_safe_at_the_recorded_site(case: Path) -> None:
    source = case.read_text()
    line = int(re.search(r"at line (\d+)", source).group(1))  # type: ignore[union-attr]
    options = CONFIGURED.get(case.name)
    result = analyse_source(source, case.name, options)
    assert not result.errors
    if case.name in FIX_CASES:
        return  # the verdict is right there; the rewrite is tested below
    at_site = [f for f in result.findings if f.line == line]
    assert all(f.verdict is not Verdict.SAFE for f in at_site), at_site
    if case in RUNNABLE:
        # The scenario's own calls (a module function calling the class's methods) keep a class
        # unjudged by themselves: the mechanism must hold without them too.
        without = analyse_source(source[: source.index("\ndef run():")], case.name, options)
        at_site = [f for f in without.findings if f.line == line]
        assert at_site and all(f.verdict is not Verdict.SAFE for f in at_site), at_site


def test_user_contracts_apply_to_their_own_function_only() -> None:
    """Regression 058 needs its configuration: a contract for `my_kernels.fill_metadata` must
    not reach `ref_kernels.fill_metadata` imported as `my_kernels`, and a kernel declared for
    module `kern` must not match `kern_ref`."""
    case = Path(__file__).parent / "regressions" / "058.py"
    options = AnalysisOptions(
        contracts=(Contract("my_kernels.fill_metadata", (0,), "pyproject.toml"),),
        kernels=(
            kernel_from_config("kern.attn", {"params": ["q", "out"], "writes": ["out"]}, "t"),
        ),
    )
    result = analyse_source(case.read_text(), case.name, options)
    by_line = {f.line: f.verdict for f in result.findings}
    assert by_line[48] is not Verdict.SAFE and by_line[54] is not Verdict.SAFE, by_line


# Cases that need their project's configuration.
CONFIGURED = {
    # A user lifecycle whose cycle is named "capture": names carry no meaning, cycles run in any
    # order (a replay before any capture included).
    "094.py": AnalysisOptions(
        lifecycles=lifecycles_from_config(
            {
                "engine": {
                    "requires": ["capture_prepare", "step"],
                    "cycles": [
                        {"name": "capture", "setup": ["capture_prepare"], "runs_forward": False},
                        {"name": "replay", "setup": ["step"], "runs_forward": False},
                    ],
                }
            }
        )
    ),
}

# Cases with a `run()` scenario: executed with torch.zeros and with the allocation poisoned, the
# results must differ (the zeros matter), so each stays a real counterexample.
RUNNABLE = [c for c in CASES if "poisoned = run()" in c.read_text()]


def test_there_are_runnable_cases() -> None:
    assert len(RUNNABLE) >= 18


def _poisoned_zeros(real: object) -> object:
    def zeros(*args: object, **kwargs: object) -> torch.Tensor:
        t = real(*args, **kwargs)  # type: ignore[operator]
        return t.fill_(float("nan") if t.is_floating_point() else 2**30)

    return zeros


@pytest.mark.parametrize("case", RUNNABLE, ids=lambda p: p.stem)
def test_zeros_and_poison_differ(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType(f"regression_{case.stem}")  # dataclasses look their module up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(sys, "path", list(sys.path))
    namespace = module.__dict__
    exec(compile(case.read_text(), case.name, "exec"), namespace)  # the test's own fixture
    real = namespace["run"]()  # type: ignore[operator]
    monkeypatch.setattr(torch, "zeros", _poisoned_zeros(torch.zeros))
    poisoned = namespace["run"]()  # type: ignore[operator]
    monkeypatch.undo()
    same = torch.equal(torch.as_tensor(real), torch.as_tensor(poisoned))
    assert not same, (case.name, real, poisoned)


FIX_CASES = ["064.py", "065.py", "107.py"]  # right verdict, wrong rewrite: run the rewritten code


@pytest.mark.parametrize("name", FIX_CASES)
def test_the_rewrite_of_a_fix_case_runs_like_the_original(name: str) -> None:
    case = Path(__file__).parent / "regressions" / name
    source = case.read_bytes()
    result = analyse_source(source, name)
    sites = [
        PatchSite(f.line, f.col, f.call, f.end_line, f.end_col)
        for f in result.findings
        if f.verdict is Verdict.SAFE and f.fix is not None
    ]
    patched, _ = rewrite_source(source, sites)
    namespace: dict[str, object] = {"__name__": "regression"}
    if name == "107.py":
        return  # a module: tested through its importers below
    exec(compile(patched, name, "exec"), namespace)  # the test's own fixture
    if name == "064.py":
        jobs = namespace["Jobs"]()  # type: ignore[operator]
        assert jobs.empty() is True  # Queue.empty, not a torch function added to the class
    else:
        assert namespace["f"](3).tolist() == [1.0, 1.0, 1.0]  # type: ignore[operator]


def test_a_rewrite_does_not_change_what_a_module_exports(tmp_path: Path) -> None:
    """107: the rewritten module is star-imported by a module that has its own `empty`."""
    case = Path(__file__).parent / "regressions" / "107.py"
    source = case.read_bytes()
    result = analyse_source(source, case.name)
    sites = [
        PatchSite(f.line, f.col, f.call, f.end_line, f.end_col)
        for f in result.findings
        if f.verdict is Verdict.SAFE and f.fix is not None
    ]
    assert len(sites) == 2
    patched, _ = rewrite_source(source, sites)
    assert b"zeros(n)" not in patched
    (tmp_path / "rewritten_lib.py").write_bytes(patched)
    (tmp_path / "star_user.py").write_text(
        "def empty(shape):\n"
        "    return ['mine'] * shape\n"
        "from rewritten_lib import *\n"
        "RESULT = (empty(2), pad(3).tolist())\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        namespace = runpy.run_path(str(tmp_path / "star_user.py"))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("rewritten_lib", None)
    assert namespace["RESULT"] == (["mine", "mine"], [1.0, 1.0, 1.0])


# Cases from 100 on print what the program computes with torch.zeros and with poisoned memory; CI
# runs them (those that need CUDA where it is available) and checks the two differ.
EXECUTED = [c for c in CASES if int(c.stem) >= 100 and c.name not in FIX_CASES]


@pytest.mark.parametrize("case", EXECUTED, ids=lambda p: p.stem)
def test_zeros_and_poison_differ_when_run(case: Path) -> None:
    import torch

    if "Needs CUDA" in case.read_text() and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    out = io.StringIO()
    zeros = torch.zeros
    modules = dict(sys.modules)
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(case), run_name="__main__")
    finally:
        torch.zeros = zeros
        for name in set(sys.modules) - set(modules):
            del sys.modules[name]
    match = re.search(r"torch.zeros: (.*?)\s+poisoned \(what torch.empty may hold\): (.*)", out.getvalue())
    assert match is not None, out.getvalue()
    assert match.group(1) != match.group(2), out.getvalue()
