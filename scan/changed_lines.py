"""`scan --since REF`: keep the findings on lines a change touches, relative to git REF.

A line is changed when `git diff --unified=0 --no-renames REF` (the working tree, staged changes
included, against REF) shows it added or modified; a file git does not track and does not ignore
counts whole, and so does a renamed one (`--no-renames`: a delete and an add). Under a
pre-commit hook the unstaged changes are stashed away first, so `--since HEAD` there is exactly
what is being committed. A repository without any commit yet compares against the empty tree.

A finding is kept when its call expression (lines `line` to `end_line`) overlaps a changed line.
Deleted lines are not lines of the new file: a change that only deletes the write that made an
old empty safe is not seen by this filter (scan without `--since` sees it).

In this mode every `torch.empty*` is judged (`AnalysisOptions.judge_empties`), and each undecided
finding gains a `decide` evidence line: the `zeroopt verify` command over the `--since` report
that decides it at run time, or the kernel contract whose declaration would.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from zeroopt.scan.findings import Evidence, Finding, Verdict

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport

# git's name for the tree with nothing in it: what a first commit is compared against.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
# What the dataflow says when a callee it cannot see is handed the buffer (analysis/dataflow/calls.py).
_OPAQUE_CALLEE = re.compile(r"passed to `([^`]+)`, which is not known to only write it")
# The file `decide` commands write the `--since` report to.
REPORT_FILE = "zeroopt-since.json"


class GitError(Exception):
    """`--since` could not ask git what changed (not a repository, unknown REF, no git)."""


@dataclass(frozen=True)
class ChangedLines:
    ref: str
    # Real path of each changed file -> its changed line numbers (1-based); None: the whole file.
    files: dict[str, frozenset[int] | None]

    def touches(self, path: str, line: int, end_line: int | None = None) -> bool:
        if path not in self.files:
            path = os.path.realpath(path)
        if path not in self.files:
            return False
        lines = self.files[path]
        if lines is None:
            return True
        return any(n in lines for n in range(line, (end_line or line) + 1))

    def touches_file(self, path: str) -> bool:
        return os.path.realpath(path) in self.files


def _git(root: str, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=root,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {' '.join(args)}: {message[-1] if message else 'failed'}")
    return done.stdout


def _toplevel(folder: str) -> str:
    try:
        out = _git(folder, "rev-parse", "--show-toplevel")
    except GitError:
        raise GitError(f"--since needs a git repository: {folder} is not inside one") from None
    return os.path.realpath(out.decode().strip())


def _base(root: str, ref: str) -> str:
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
    except GitError:
        pass
    if ref == "HEAD":
        try:
            _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
        except GitError:
            return EMPTY_TREE  # no commit yet: everything is new
    raise GitError(f"--since {ref}: not a commit in {root}")


def hunk_lines(diff: bytes) -> frozenset[int]:
    """The new-side line numbers of the hunks of one file's `git diff --unified=0`."""
    lines: set[int] = set()
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) or b"1")
        lines.update(range(start, start + count))  # count 0: a pure deletion adds no line
    return frozenset(lines)


def changed_lines(paths: Sequence[str], ref: str) -> ChangedLines:
    """What changed since `ref` in the git repositories holding `paths` (files or folders)."""
    files: dict[str, frozenset[int] | None] = {}
    # One git call per folder, not per file: a hook passes every staged file.
    folders = dict.fromkeys(
        a if os.path.isdir(a) else os.path.dirname(a)
        for a in (os.path.abspath(p) for p in paths if p != "-")
    )
    # A path that does not exist is the scan's error to report, not git's.
    for root in dict.fromkeys(_toplevel(f) for f in folders if os.path.isdir(f)):
        base = _base(root, ref)
        diff = ["diff", "--no-color", "--no-ext-diff", "--no-renames", "--no-textconv"]
        names = _git(root, *diff, "--name-only", "-z", base, "--").split(b"\0")
        for name in filter(None, names):
            rel = os.fsdecode(name)
            real = os.path.realpath(os.path.join(root, rel))
            if not os.path.isfile(real):
                continue  # deleted
            files[real] = hunk_lines(_git(root, *diff, "--unified=0", base, "--", rel))
        untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
        for name in filter(None, untracked.split(b"\0")):
            files[os.path.realpath(os.path.join(root, os.fsdecode(name)))] = None
    return ChangedLines(ref, files)


def decide_hint(finding: Finding, scan_args: Sequence[str], ref: str) -> Evidence:
    """How to decide an `unproven` finding: a runtime check over the `--since` report, or the
    contract of the kernel it was handed to."""
    scan = shlex.join(["zeroopt", "scan", *scan_args, "--since", ref, "--format", "json"])
    verify = (
        f"`{scan} > {REPORT_FILE}` then `zeroopt verify SCENARIO --sites {REPORT_FILE}` "
        f"(SCENARIO: a FILE.py:FUNCTION that runs this code as production does, CUDA-graph "
        f"capture and replay included; this site is {finding.path}:{finding.line}:{finding.col}"
        f"; once it is `equivalent`, `# zeroopt: ignore[{finding.rule}]` on the line records it)"
    )
    for e in finding.evidence:
        m = _OPAQUE_CALLEE.search(e.text)
        if m:
            return Evidence(
                finding.line,
                "decide",
                f"declare what `{m.group(1)}` writes if it writes the buffer in full without "
                f'reading it ([tool.zeroopt.contracts] "<module>.{m.group(1).split(".")[-1]}" '
                f"= {{ writes = [<argument position or keyword>] }}), or run {verify}",
            )
    return Evidence(finding.line, "decide", f"run {verify}")


def filter_report(
    report: ScanReport, changed: ChangedLines, scan_args: Sequence[str] = ()
) -> ScanReport:
    """Keep what lies on changed lines; give each undecided finding its `decide` line."""
    kept: list[Finding] = []
    for f in report.findings:
        if not changed.touches(f.path, f.line, f.end_line):
            continue
        if f.verdict is Verdict.UNPROVEN:
            hint = decide_hint(f, scan_args, changed.ref)
            short = f"zeroopt verify SCENARIO --sites {REPORT_FILE}"
            if hint.text.startswith("declare"):
                short = f"declare the contract of the kernel it is passed to, or {short}"
            f = replace(
                f,
                message=f"{f.message}; to decide: {short} (see the `decide` evidence)",
                evidence=(*f.evidence, hint),
            )
        kept.append(f)
    report.findings = kept
    report.errors = [e for e in report.errors if changed.touches_file(e.path)]
    report.unused_suppressions = [
        u for u in report.unused_suppressions if changed.touches(u.path, u.line)
    ]
    for result in report.results:
        result.findings = [
            f for f in result.findings if changed.touches(f.path, f.line, f.end_line)
        ]
        result.lifecycles = [
            replace(lc, buffers=buffers)
            for lc in result.lifecycles
            if (buffers := tuple(b for b in lc.buffers if changed.touches(lc.path, b.line)))
        ]
    return report
