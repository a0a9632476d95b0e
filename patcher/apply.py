"""From analysis results to edited files: choose the sites, rewrite per file, write or diff.

Takes `FileResult`s (what the scan produced) so it does not depend on how they were obtained.
Which findings are applied is a soundness decision, made here in one place:
- a `safe` zeros finding that carries a fix: always;
- an `unproven` zeros finding: only with a runtime-verification report in which that exact site
  came out `equivalent` in every trial, and the all-sites-together run (if present) too;
- an `unsafe` finding: never, whatever a runtime report says (a static read of unwritten memory
  is a counterexample; a passing run only shows the scenario did not hit it).
A report names sites by position, and a position is not an identity: after an edit that moves
code another allocation can sit there. So every report entry apply relies on must carry what it
judged (the call's `source` text and its function's `fingerprint`, scan/site_identity.py), and
an entry that no longer matches the file, or carries no identity, is refused by name: that
site is not rewritten, and the run fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zeroopt.patcher.codemod import (
    Failure,
    RewriteResult,
    RewriteSite,
    Skip,
    Success,
    rewrite_source,
)
from zeroopt.patcher.diff import FileChange, make_patch
from zeroopt.patcher.writer import WriteError, atomic_write, check_unchanged
from zeroopt.scan.findings import ZEROS_CALLS, FileError, FileResult, Finding, Verdict
from zeroopt.scan.site_identity import stale_reason

EQUIVALENT = "equivalent"


@dataclass(frozen=True)
class VerifiedSites:
    """Sites a `zeroopt verify --format json` report shows equivalent, alone and together."""

    sites: frozenset[tuple[str, int, int]]  # (resolved path, line, col)
    note: str = ""  # why the report verifies fewer sites than it lists, if it does
    # What each site judged: (source, fingerprint), None where the entry records no identity.
    identities: dict[tuple[str, int, int], tuple[str, str] | None] = field(default_factory=dict)
    report: str = ""  # the report's path, for messages

    def __contains__(self, key: tuple[str, int, int]) -> bool:
        return key in self.sites

    def stale(self, finding: Finding, key: tuple[str, int, int], text: str) -> str | None:
        """Why the report's entry at `key` does not describe `finding` in `text` (the file as
        it is now), or None when it still does."""
        identity = self.identities.get(key)
        if identity is None:
            return (
                f"the entry in {self.report} records no source text or fingerprint, so "
                "whether it still describes this call cannot be checked; verify again"
            )
        source, fingerprint = identity
        why = stale_reason(
            text, finding.line, finding.col, finding.end_line, finding.end_col, source, fingerprint
        )
        return None if why is None else f"{why} ({self.report} is stale here; verify again)"


def _all_equivalent(entry: dict[str, Any]) -> bool:
    trials = entry.get("trials") or []
    return (
        entry.get("verdict") == EQUIVALENT
        and bool(trials)
        and all(t.get("verdict") == EQUIVALENT for t in trials)
    )


def load_verified(report_path: Path, base_dir: Path) -> VerifiedSites:
    """Parse a verify report (the shape of docs/contracts.md); raises ValueError on anything unexpected."""
    try:
        data = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read verify report {report_path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("version") != 1 or "sites" not in data:
        raise ValueError(
            f"{report_path} is not a `zeroopt verify --format json` report (version 1)"
        )
    together = data.get("together")
    if together is not None and not _all_equivalent(together):
        # Coupled buffers fail only together: one bad combination disqualifies every site.
        return VerifiedSites(
            frozenset(),
            f"{report_path}: the all-sites-together run is {together.get('verdict')!r}, "
            "so no site from it is applied",
        )
    root = data.get("root")
    # Relative paths are relative to the directory the report was made in, when it says so.
    base = Path(root) if isinstance(root, str) and os.path.isabs(root) else base_dir
    identities: dict[tuple[str, int, int], tuple[str, str] | None] = {}
    try:
        for site in data["sites"]:
            if not _all_equivalent(site):
                continue
            key = (_key_path(str(site["path"]), base), int(site["line"]), int(site["col"]))
            source, fingerprint = site.get("source"), site.get("fingerprint")
            if isinstance(source, str) and isinstance(fingerprint, str):
                identities[key] = (source, fingerprint)
            else:
                identities[key] = None
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{report_path}: malformed site entry: {exc}") from exc
    skipped = len(data["sites"]) - len(identities)
    note = f"{report_path}: {skipped} site(s) not equivalent in every trial" if skipped else ""
    return VerifiedSites(frozenset(identities), note, identities, str(report_path))


def _key_path(path: str, base_dir: Path) -> str:
    return os.path.normcase(os.path.realpath(base_dir / path))


def eligible(finding: Finding, verified: VerifiedSites | None, base_dir: Path) -> bool:
    """Whether `apply` may rewrite this finding (see the module docstring)."""
    if finding.call not in ZEROS_CALLS:
        return False
    if finding.verdict is Verdict.SAFE:
        return finding.fix is not None
    if finding.verdict is Verdict.UNPROVEN and verified is not None:
        return (_key_path(finding.path, base_dir), finding.line, finding.col) in verified
    return False


@dataclass
class SiteOutcome:
    finding: Finding
    result: RewriteResult

    @property
    def status(self) -> str:
        return {Success: "applied", Skip: "skipped", Failure: "failed"}[type(self.result)]

    @property
    def detail(self) -> str:
        if isinstance(self.result, Success):
            return self.result.replacement
        return self.result.reason if isinstance(self.result, Skip) else self.result.error


@dataclass
class FileOutcome:
    path: str  # as the findings spell it
    file: Path  # where it is on disk
    source_hash: str
    sites: list[SiteOutcome] = field(default_factory=list)
    refused: list[tuple[Finding, str]] = field(default_factory=list)  # stale report entries
    original: bytes | None = None
    new: bytes | None = None  # set only when the content changes
    error: str | None = None
    written: bool = False

    @property
    def fixes(self) -> int:
        return sum(1 for s in self.sites if isinstance(s.result, Success))

    @property
    def changed(self) -> bool:
        return self.new is not None and self.error is None


@dataclass
class ApplyReport:
    files: list[FileOutcome]
    findings: list[Finding]  # every finding considered (applied or not)
    scan_errors: list[FileError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fixed(self) -> set[int]:
        return {
            id(site.finding)
            for f in self.files
            if f.error is None
            for site in f.sites
            if isinstance(site.result, Success)
        }

    @property
    def fixes(self) -> int:
        return sum(f.fixes for f in self.files if f.error is None)

    @property
    def changed_files(self) -> list[FileOutcome]:
        return [f for f in self.files if f.changed]

    @property
    def remaining(self) -> list[Finding]:
        """Actionable findings this run does not fix (unsafe empties, skipped sites)."""
        fixed = self.fixed
        return [f for f in self.findings if f.actionable and id(f) not in fixed]

    @property
    def errors(self) -> list[FileError]:
        errors = list(self.scan_errors)
        for f in self.files:
            if f.error is not None:
                errors.append(FileError(f.path, f.error))
            errors.extend(
                FileError(f.path, f"{s.finding.line}:{s.finding.col}: {s.detail}")
                for s in f.sites
                if isinstance(s.result, Failure) and f.error is None
            )
            errors.extend(
                FileError(f.path, f"{fd.line}:{fd.col}: refused, not rewritten: {why}")
                for fd, why in f.refused
            )
        return errors

    def changes(self, root: Path) -> list[FileChange]:
        """The edits as patch entries, paths relative to `root` (the repository root)."""
        out = []
        for f in self.changed_files:
            assert f.original is not None and f.new is not None
            out.append(FileChange(_relative(f.file, root), f.original, f.new))
        return out

    def patch(self, root: Path) -> bytes:
        return make_patch(self.changes(root), self.header())

    def header(self) -> list[str]:
        """The comment block of a patch: every rewrite with the evidence that justified it."""
        lines = [f"zeroopt apply: {self.fixes} rewrite(s) in {len(self.changed_files)} file(s)"]
        for f in self.changed_files:
            for site in f.sites:
                if not isinstance(site.result, Success):
                    continue
                fd = site.finding
                lines.append("")
                lines.append(
                    f"{fd.path}:{fd.line}:{fd.col}: {fd.call} -> {site.result.replacement}"
                    f"  [{fd.rule} {fd.verdict}] {fd.target}"
                )
                if fd.message:
                    lines.append(f"  {fd.message}")
                lines.extend(f"  line {e.line} {e.kind}: {e.text}" for e in fd.evidence)
        return lines

    def to_json(self, mode: str) -> dict[str, Any]:
        return {
            "version": 1,
            "mode": mode,
            "files": [
                {
                    "path": f.path,
                    "fixes": f.fixes if f.error is None else 0,
                    "changed": f.changed,
                    "written": f.written,
                    "error": f.error,
                    "sites": [
                        {
                            "line": s.finding.line,
                            "col": s.finding.col,
                            "call": s.finding.call,
                            "verdict": str(s.finding.verdict),
                            "status": s.status,
                            "detail": s.detail,
                        }
                        for s in f.sites
                    ],
                }
                for f in self.files
            ],
            "errors": [e.to_json() for e in self.errors],
            "remaining": [f.to_json() for f in self.remaining],
            "summary": {
                "files_changed": len(self.changed_files),
                "fixes": self.fixes,
                "skipped": sum(
                    1 for f in self.files for s in f.sites if isinstance(s.result, Skip)
                ),
                "remaining": len(self.remaining),
                "errors": len(self.errors),
            },
        }


def _relative(file: Path, root: Path) -> str:
    real, base = os.path.realpath(file), os.path.realpath(root)
    rel = os.path.relpath(real, base)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise ValueError(f"{file} is outside {root}; a patch cannot name it")
    return Path(rel).as_posix()


def _group(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.path, []).append(finding)
    return grouped


def plan(
    results: Sequence[FileResult],
    findings: Sequence[Finding] | None = None,
    *,
    base_dir: Path | None = None,
    verified: VerifiedSites | None = None,
    scan_errors: Sequence[FileError] = (),
) -> ApplyReport:
    """Compute every file's new content; writes nothing.

    `findings` is the list after select/ignore/suppressions (default: all in `results`); `path`s
    are resolved against `base_dir` (default: the current directory).
    """
    base = base_dir or Path.cwd()
    by_path = _group(findings if findings is not None else (f for r in results for f in r.findings))
    report = ApplyReport(
        files=[],
        findings=[f for fs in by_path.values() for f in fs],
        scan_errors=list(scan_errors),
        notes=[verified.note] if verified is not None and verified.note else [],
    )
    for result in results:
        chosen = _dedupe(f for f in by_path.get(result.path, ()) if eligible(f, verified, base))
        if not chosen:
            continue  # files without fixes are never read again, let alone rewritten
        outcome = FileOutcome(result.path, base / result.path, result.source_hash)
        report.files.append(outcome)
        try:
            source = check_unchanged(outcome.file, result.source_hash)
        except WriteError as exc:
            outcome.error = str(exc)
            continue
        if verified is not None:
            text = source.decode("utf-8", errors="surrogateescape")
            kept = []
            for f in chosen:
                key = (_key_path(f.path, base), f.line, f.col)
                why = (
                    verified.stale(f, key, text)
                    if f.verdict is Verdict.UNPROVEN and key in verified
                    else None
                )
                if why is None:
                    kept.append(f)
                else:
                    outcome.refused.append((f, why))
            chosen = kept
        sites = [RewriteSite(f.line, f.col, f.call, f.end_line, f.end_col) for f in chosen]
        new, site_results = rewrite_source(source, sites)
        outcome.sites = [SiteOutcome(f, r) for f, r in zip(chosen, site_results, strict=True)]
        outcome.original = source
        if new != source:
            outcome.new = new
    if verified is not None:
        unproven = {
            (_key_path(f.path, base), f.line, f.col)
            for f in report.findings
            if f.verdict is Verdict.UNPROVEN and f.call in ZEROS_CALLS
        }
        for path, line, col in sorted(verified.sites - unproven):
            report.notes.append(
                f"{verified.report}: {os.path.relpath(path)}:{line}:{col} holds no unproven "
                "zeros now (moved, edited, or decided statically): nothing applied from it"
            )
    return report


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen: dict[tuple[int, int, str], Finding] = {}
    for f in findings:
        seen.setdefault((f.line, f.col, f.call), f)
    return sorted(seen.values(), key=lambda f: (f.line, f.col))


def write(report: ApplyReport) -> None:
    """Write every changed file atomically; a file that cannot be written records an error."""
    for outcome in report.changed_files:
        assert outcome.new is not None
        try:
            atomic_write(outcome.file, outcome.new, outcome.source_hash)
        except WriteError as exc:
            outcome.error = str(exc)
        else:
            outcome.written = True


def repository_root(start: Path) -> Path | None:
    """The git top level containing `start`, found without running git (works without it)."""
    current = start.resolve()
    for directory in (current, *current.parents):
        if (directory / ".git").exists():
            return directory
    return None
