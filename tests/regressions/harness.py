"""One harness for every regression case: the verdict at the site, and the run that proves it.

A case is a program where the allocation marked `# <- site` is read before it is written (or,
for a fix case, where the analysis is right to say `safe` and the rewrite must keep the program's
behaviour). Each case is checked twice:

- the analysis must not call the site `safe` (`check_verdict`), on the program alone and with
  its scenario appended (a scenario's own calls must not be what keeps the verdict right);
- the program is EXECUTED (`check_execution`): the scenario's entry function runs once with the
  allocation as written (zeros) and once per poison pattern with exactly that allocation filled
  with the pattern, through `zeroopt.runtime_checks`' interceptor (the one `zeroopt verify`
  uses). At least one poisoned run must give a different result: that is what makes the case a
  real counterexample rather than an opinion.

Fix cases (`kind="fix"`) instead rewrite the program as `zeroopt apply` would and run both.

Every import of zeroopt that the regression tests need lives in this module, so that a renamed
module is a one-line change here.

A file in the old one-file-per-case format (a numbered `NNN.py`: a header of `#` comments saying
`at line N`, then the program, then an `if __name__ == "__main__":` block that prints the result
with zeros and with poison) dropped into `tests/regressions/` is picked up as it is by
`test_numbered.py` (see `numbered_cases`); `python tests/regressions/convert.py NNN.py` prints it as a `Case(...)`
to paste into a grouped module.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import tempfile
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch

from zeroopt.analysis.kernel_contracts import kernel_from_config
from zeroopt.analysis.lifecycles import lifecycles_from_config
from zeroopt.analysis.options import AnalysisOptions, Contract
from zeroopt.analysis.project import ProjectIndex, ProjectView
from zeroopt.patcher.codemod import RewriteSite as PatchSite
from zeroopt.patcher.codemod import rewrite_source
from zeroopt.runtime_checks import PoisonSite as Site
from zeroopt.runtime_checks.compare import flatten_outputs, outputs_difference
from zeroopt.runtime_checks.intercept import Interceptor, Target
from zeroopt.runtime_checks.patterns import DEFAULT_PATTERNS
from zeroopt.scan.config import load_config
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Verdict
from zeroopt.scan.runner import scan

__all__ = [
    "NOT_SAFE",
    "AnalysisOptions",
    "Case",
    "Contract",
    "Verdict",
    "check_case",
    "kernel_from_config",
    "lifecycles_from_config",
    "numbered_cases",
    "rewritten",
]

SITE_MARK = "# <- site"
NOT_SAFE = frozenset({Verdict.UNSAFE, Verdict.UNPROVEN})
HERE = Path(__file__).parent


@dataclass(frozen=True)
class Case:
    """One regression: `source` is the program the analysis judges, `scenario` the code that
    runs it (an entry function returning tensors), `why` the mechanism and why the zeros matter."""

    name: str
    source: str
    scenario: str = ""
    why: str = ""
    entry: str = "run"
    options: AnalysisOptions | None = None
    expect: frozenset[Verdict] = NOT_SAFE
    # "unsound": the site is read unwritten (not safe; poison changes the result);
    # "keep": a rewrite of the site would change the program (not safe; the rewritten text differs);
    # "fix": the site is safe and the program as `zeroopt apply` rewrites it behaves the same.
    kind: str = "unsound"
    gpu: bool = False  # needs CUDA to show the difference
    marks: tuple[Any, ...] = field(default=())
    modules: tuple[tuple[str, str], ...] = ()  # other modules (name, text) the scenario imports
    # The package the program is a module of (its `__init__` among `modules`): other modules of
    # the tree import it by its dotted name `package.name`.
    package: str = ""

    @property
    def program(self) -> str:
        source = self.source.lstrip("\n")
        scenario = self.scenario.strip("\n")
        return source if not scenario else f"{source.rstrip()}\n\n\n{scenario}\n"

    @property
    def sites(self) -> list[int]:
        """1-based lines of the allocations marked `# <- site`."""
        lines = self.source.lstrip("\n").splitlines()
        return [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(SITE_MARK)]

    def param(self) -> Any:
        marks = list(self.marks)
        if self.gpu:
            marks.append(pytest.mark.gpu)
        return pytest.param(self, id=self.name, marks=marks)


def params(cases: Iterable[Case]) -> list[Any]:
    cases = list(cases)
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)
    return [c.param() for c in cases]


# --- the verdict -------------------------------------------------------------------------------


def _analyse(case: Case, text: str) -> Any:
    """With `modules`, the program is judged with them as the rest of the scanned tree."""
    if not case.modules:
        return analyse_source(text, f"{case.name}.py", case.options)
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(case, Path(tmp), text)
        files = [str(p) for p in Path(tmp).rglob("*.py")]
        view = ProjectView(ProjectIndex.build(files, [tmp]))
        return analyse_source(text, f"{case.name}.py", case.options, view, str(path))


def site_verdicts(case: Case, text: str) -> dict[int, list[Verdict]]:
    result = _analyse(case, text)
    assert not result.errors, result.errors
    found: dict[int, list[Verdict]] = {line: [] for line in case.sites}
    for finding in result.findings:
        if finding.line in found:
            found[finding.line].append(finding.verdict)
    return found


def site_findings(case: Case, text: str) -> dict[int, list[Any]]:
    """The findings at each site of the case (their messages and evidence, for checks of what
    decided a verdict)."""
    result = _analyse(case, text)
    assert not result.errors, result.errors
    found: dict[int, list[Any]] = {line: [] for line in case.sites}
    for finding in result.findings:
        if finding.line in found:
            found[finding.line].append(finding)
    return found


def check_verdict(case: Case) -> None:
    """The analysis judges every site, and none is `safe` (fix cases: the site stays `safe`)."""
    assert case.sites, f"{case.name}: no line ends with {SITE_MARK!r}"
    texts = [case.source.lstrip("\n")]
    if case.scenario.strip():
        texts.append(case.program)
    for text in texts:
        for line, verdicts in site_verdicts(case, text).items():
            if case.kind == "keep":  # not even judged (no torch allocation there) is right too
                assert Verdict.SAFE not in verdicts, (line, verdicts)
                continue
            assert verdicts, f"{case.name}: no finding at line {line}"
            if case.kind == "fix":
                assert Verdict.SAFE in verdicts, (line, verdicts)
            else:
                assert all(v in case.expect for v in verdicts), (line, verdicts)


def scanned_verdicts(
    case: Case, folder: Path, named: str, cache: Path | None = None
) -> dict[int, list[Verdict]]:
    """The site verdicts of a scan through the command's pipeline (scan/runner.py), run in
    `folder` with the case's file and its modules written there (what is written is kept):
    `named` is what the command line names: "." (the tree), the case's file alone (as pre-commit
    names the changed files) or "-" (its source on stdin). `cache`: a cache folder (warm scans)."""
    own = f"{case.name}.py"
    path = folder / own
    if not path.exists():
        _write(case, folder, case.source.lstrip("\n"))
    config = load_config([named], cwd=folder, stdin_filename=own if named == "-" else None)
    stdin = path.read_bytes() if named == "-" else None
    cwd = Path.cwd()
    try:
        os.chdir(folder)
        report = scan(
            [named],
            config,
            jobs=1,
            use_cache=cache is not None,
            cache_dir=cache,
            stdin_filename=own if named == "-" else None,
            stdin=stdin,
        )
    finally:
        os.chdir(cwd)
    assert not report.errors, report.errors
    found: dict[int, list[Verdict]] = {line: [] for line in case.sites}
    for finding in report.findings:
        if Path(finding.path).name == own and finding.line in found:
            found[finding.line].append(finding.verdict)
    return found


# --- the run -----------------------------------------------------------------------------------


def _write(case: Case, folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, module in case.modules:  # `pkg/__init__`, `pkg/meta`: a package of the tree
        (folder / f"{name}.py").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.py").write_text(module.lstrip("\n"))
    path = folder / case.package / f"{case.name}.py"
    path.write_text(text)
    return path


_KEEP_LOADED = frozenset({"triton", "numpy", "torch"})


def _run(
    path: Path, text: str, entry: str, targets: list[Target], package: str = ""
) -> tuple[Any, Interceptor]:
    """Execute `text` as module `path.stem` (in the package `package`, when one is named) with
    `targets` intercepted; return entry()'s result."""
    name = f"{package}.{path.stem}" if package else path.stem
    module = types.ModuleType(name)  # dataclasses look their module up in sys.modules
    module.__file__ = str(path)
    before = dict(sys.modules)
    saved_path = list(sys.path)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent.parent if package else path.parent))
    interceptor = Interceptor(targets)
    interceptor.install()
    try:
        exec(
            compile(text, str(path), "exec", dont_inherit=True), module.__dict__
        )  # the test's own program
        result = flatten_outputs(module.__dict__[entry]())
    finally:
        interceptor.uninstall()
        sys.path[:] = saved_path
        for name in set(sys.modules) - set(before):
            # Libraries a case imported stay: Triton's interpreter cannot be imported twice in
            # one process. The case's own modules go.
            if name.split(".")[0] not in _KEEP_LOADED:
                del sys.modules[name]
        sys.modules.update(before)
    return result, interceptor


def poisoned_runs(
    case: Case, folder: Path
) -> tuple[dict[str, torch.Tensor], dict[str, str | None]]:
    """The zeros result, and per poison pattern how its result differs (None: it does not)."""
    path = _write(case, folder, case.program)
    sites = [Site(str(path), line) for line in case.sites]
    base, counted = _run(path, case.program, case.entry, [Target(s) for s in sites], case.package)
    missed = [k for k, stats in counted.stats.items() if stats.hits == 0]
    assert not missed, f"{case.name}: the scenario never allocates at {missed}"
    differences: dict[str, str | None] = {}
    for pattern in DEFAULT_PATTERNS:
        try:
            out, _ = _run(
                path, case.program, case.entry, [Target(s, pattern) for s in sites], case.package
            )
        except Exception as error:  # the zeros run returned: failing is a different result
            differences[pattern] = f"raises {type(error).__name__}: {error}"
        else:
            differences[pattern] = outputs_difference(base, out)
        if differences[pattern] is not None:
            break  # one differing run proves the read
    return base, differences


def check_never_read(case: Case, folder: Path) -> None:
    """A program that never reads its zeros before writing them, in a shape a mechanism could
    mistake for a read: `unproven` at every site, in the listing and as run, and no poison pattern
    changes its result (so `unsafe` would be a false alarm there)."""
    for text in (case.source.lstrip("\n"), case.program):
        for line, verdicts in site_verdicts(case, text).items():
            assert verdicts == [Verdict.UNPROVEN], (line, verdicts)
    base, differences = poisoned_runs(case, folder)
    assert all(d is None for d in differences.values()), (base, differences)


def check_execution(case: Case, folder: Path) -> None:
    if case.gpu and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    if case.kind == "fix":
        check_rewrite(case, folder)
        return
    if case.kind == "keep":
        check_rewrite_changes(case, folder)
        return
    base, differences = poisoned_runs(case, folder)
    assert any(d is not None for d in differences.values()), (
        f"{case.name}: every poisoned run gives the zeros result {base}"
    )


# --- fix cases: the rewrite ---------------------------------------------------------------------


def rewritten(case: Case) -> str:
    """The program as `zeroopt apply` rewrites it: every safe site with a fix."""
    data = case.program.encode()
    result = _analyse(case, case.program)
    sites = [
        PatchSite(f.line, f.col, f.call, f.end_line, f.end_col)
        for f in result.findings
        if f.verdict is Verdict.SAFE and f.fix is not None
    ]
    patched, _ = rewrite_source(data, sites)
    return patched.decode()


def check_rewrite(case: Case, folder: Path) -> None:
    """The program as apply rewrites it runs and returns what the original returns."""
    patched = rewritten(case)
    if case.kind == "fix":
        assert patched != case.program, f"{case.name}: nothing rewritten"
    before, _ = _run(
        _write(case, folder / "original", case.program), case.program, case.entry, [], case.package
    )
    fixed = _write(case, folder / "rewritten", patched)
    after, _ = _run(fixed, patched, case.entry, [], case.package)
    assert outputs_difference(before, after) is None, (before, after)


def check_rewrite_changes(case: Case, folder: Path) -> None:
    """A "keep" case: the text rewrite of the site (`zeros(` -> `empty(`) changes the result,
    so it must never be offered; and what apply does rewrite keeps the program's behaviour."""
    lines = case.program.splitlines(keepends=True)
    for line in case.sites:
        lines[line - 1] = lines[line - 1].replace("zeros(", "empty(", 1)
    naive = "".join(lines)
    base, _ = _run(
        _write(case, folder / "original", case.program), case.program, case.entry, [], case.package
    )
    try:
        out, _ = _run(_write(case, folder / "naive", naive), naive, case.entry, [], case.package)
    except Exception:  # failing where the original returns is a change
        pass
    else:
        assert outputs_difference(base, out) is not None, f"{case.name}: the rewrite is harmless"
    check_rewrite(case, folder)


def check_case(case: Case, folder: Path) -> None:
    """Everything a case asserts: its verdict, then its run (or its rewrite's)."""
    check_verdict(case)
    check_execution(case, folder)


# --- cases in the old one-file format ----------------------------------------------------------

_MAIN = 'if __name__ == "__main__":'
_CUDA = re.compile(r"device=\"cuda\"|torch\.cuda\.(graph|CUDAGraph|Stream)\b")
_ALLOC = re.compile(r"\b(zeros|zeros_like|new_zeros|empty|empty_like|new_empty)\(")


def _header_and_body(text: str) -> tuple[list[str], list[str]]:
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        i += 1
    return lines[:i], lines[i:]


def _entry_from_main(main: list[str]) -> str:
    """`def run():` from a main block: its statements up to the poisoning, returning the value
    printed (or assigned to `real`) with zeros."""
    block = ast.parse("\n".join(line[4:] if line.startswith("    ") else line for line in main))
    keep: list[str] = []
    value = None
    source = "\n".join(line[4:] if line.startswith("    ") else line for line in main)
    for stmt in block.body:
        text = ast.get_source_segment(source, stmt) or ""
        if "torch.zeros" in text and ("_zeros" in text or "= " in text.split("torch.zeros")[0]):
            break
        if "torch.zeros =" in text or text.startswith("_zeros"):
            break
        if isinstance(stmt, ast.If) and "cuda.is_available" in ast.unparse(stmt.test):
            continue  # the harness skips a CUDA case without CUDA
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "print":
            value = ast.get_source_segment(source, call.args[-1])
            break
        if isinstance(stmt, ast.Assign) and getattr(stmt.targets[0], "id", None) == "real":
            value = ast.get_source_segment(source, stmt.value)
            break
        keep.append(text)
    assert value is not None, "no `print(..., result)` or `real = result` before the poisoning"
    body = [*keep, f"return {value}"]
    return "def run():\n" + "\n".join("    " + line for s in body for line in s.splitlines())


def case_from_numbered(path: Path) -> Case:
    """A Case from a file in the old format: header comments, program, `__main__` block."""
    text = path.read_text()
    header, body = _header_and_body(text)
    why = " ".join(line.lstrip("#").strip() for line in header).strip()
    offset = len(header)
    main_at = next((i for i, line in enumerate(body) if line.startswith(_MAIN)), len(body))
    program, main = body[:main_at], body[main_at + 1 :]
    run_at = next((i for i, line in enumerate(program) if line.startswith("def run():")), None)
    if run_at is not None:
        scenario = "\n".join(program[run_at:])
        program = program[:run_at]
    else:
        scenario = _entry_from_main(main) if main else ""
    named = [int(n) - offset for n in re.findall(r"at\s+line\s+(\d+)", why)]
    allocations = [i for i, line in enumerate(program, 1) if _ALLOC.search(line)]
    sites = {n for n in named if n in allocations}
    if not sites:  # a header whose line numbers drifted: the nearest allocation, within 2 lines
        near = [min(allocations, key=lambda a: abs(a - n)) for n in named if allocations]
        sites = {a for a, n in zip(near, named, strict=False) if abs(a - n) <= 2}
    assert sites, f"{path.name}: no `at line N` names an allocation"
    marked = [f"{line}  {SITE_MARK}" if i in sites else line for i, line in enumerate(program, 1)]
    return Case(
        name=f"numbered_{path.stem}",
        source="\n".join(marked).rstrip() + "\n",
        scenario=scenario,
        why=why,
        gpu=bool(_CUDA.search("\n".join(program))),
    )


def numbered_cases(folder: Path = HERE) -> list[Case]:
    """The cases of the numbered files in the old format in `folder`."""
    return [case_from_numbered(p) for p in sorted(folder.glob("[0-9]*.py"))]
