"""Persistent scan cache: an unchanged tree rescans without parsing anything.

One JSON file per (tool build, analysis configuration), entries keyed by absolute path and
validated by the SHA-256 of the file's bytes. `(mtime_ns, size)` lets a warm scan skip even
reading a file, as ruff does; an mtime within the last seconds is not trusted (a file written
twice in one timestamp tick), so racy files are hashed. JSON rather than pickle: the cache
directory lives in the user's tree, and loading it must never execute anything. Any problem
reading the cache means a cold scan, never a failure.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import zeroopt
from zeroopt.scan.findings import (
    Evidence,
    FileError,
    FileResult,
    Finding,
    Fix,
    LifecycleReport,
    Verdict,
)
from zeroopt.scan.suppressions import Suppression

FORMAT = 2
_RACY_S = 2.0


# The subpackages whose code decides a scan's result (the CLI and renderers do not).
_ANALYSING_PACKAGES = ("scan", "analysis", "rules")


def tool_fingerprint() -> str:
    """The tool version plus a digest of its own source files' sizes and mtimes, so a changed
    analysis (also an editable install during development) never reuses old results."""
    digest = hashlib.sha256(f"{zeroopt.__version__}/{FORMAT}".encode())
    for name in _ANALYSING_PACKAGES:
        # Found, not imported: a warm scan never loads the rules (nor the analysis they import).
        spec = importlib.util.find_spec(f"zeroopt.{name}")
        root = Path((spec.origin if spec is not None else None) or "").parent
        for file in sorted(root.rglob("*.py")):
            try:
                st = file.stat()
            except OSError:
                continue
            digest.update(
                f"{name}/{file.relative_to(root)}:{st.st_size}:{st.st_mtime_ns};".encode()
            )
    return f"{zeroopt.__version__}-{digest.hexdigest()[:12]}"


@dataclass
class CacheEntry:
    sha256: str
    mtime_ns: int
    size: int
    result: FileResult
    suppressions: list[Suppression]
    generated: bool = False  # has an @generated marker: skipped unless named explicitly


def _finding_to_json(f: Finding) -> dict[str, Any]:
    data = asdict(f)
    data["verdict"] = str(f.verdict)
    data["fix"] = f.fix.to_json() if f.fix else None
    return data


def _finding_from_json(data: dict[str, Any], path: str) -> Finding:
    data = dict(data, path=path)
    data["verdict"] = Verdict(data["verdict"])
    data["evidence"] = tuple(Evidence(**e) for e in data["evidence"])
    data["fix"] = Fix.from_json(data["fix"]) if data["fix"] else None
    data["source_lines"] = tuple((int(n), str(s)) for n, s in data.get("source_lines", ()))
    return Finding(**data)


def _entry_to_json(e: CacheEntry) -> dict[str, Any]:
    return {
        "sha256": e.sha256,
        "mtime_ns": e.mtime_ns,
        "size": e.size,
        "generated": e.generated,
        "findings": [_finding_to_json(f) for f in e.result.findings],
        "errors": [err.message for err in e.result.errors],
        "suppressions": [s.to_json() for s in e.suppressions],
        "lifecycles": [lc.to_json() for lc in e.result.lifecycles],
        "identities": [[*span, *ident] for span, ident in e.result.identities.items()],
        "deps": e.result.deps,
    }


def _entry_from_json(data: dict[str, Any], display: str) -> CacheEntry:
    """Rebuild an entry with paths rewritten to how this run displays the file."""
    findings = [_finding_from_json(f, display) for f in data["findings"]]
    errors = [FileError(display, str(m)) for m in data["errors"]]
    lifecycles = [
        replace(LifecycleReport.from_json(lc), path=display) for lc in data.get("lifecycles", ())
    ]
    identities = {
        (int(i[0]), int(i[1]), int(i[2]), int(i[3])): (str(i[4]), str(i[5]))
        for i in data.get("identities", ())
    }
    deps = data.get("deps") or {}
    if not isinstance(deps, dict):
        raise TypeError("deps is not an object")
    # Taken as read (the largest part of a cache): JSON keys are strings, and a value of another
    # type equals no value the runner compares it with (scan/runner.py `_DepsNow`), so such a
    # result is analysed again.
    deps = dict(deps)
    result = FileResult(
        display, findings, errors, str(data["sha256"]), lifecycles, identities=identities, deps=deps
    )
    sups = [Suppression.from_json(s) for s in data["suppressions"]]
    return CacheEntry(
        str(data["sha256"]),
        int(data["mtime_ns"]),
        int(data["size"]),
        result,
        sups,
        bool(data["generated"]),
    )


class ScanCache:
    def __init__(self, cache_dir: Path, config_fingerprint: str) -> None:
        self.dir = cache_dir / tool_fingerprint()
        self.file = self.dir / f"scan-{config_fingerprint}.json"
        self._raw: dict[str, dict[str, Any]] = {}
        self._new: dict[str, dict[str, Any]] = {}
        self._started = time.time()
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.file.read_bytes())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("format") == FORMAT:
            entries = data.get("entries")
            if isinstance(entries, dict):
                self._raw = entries

    def _get(self, path: str, display: str) -> CacheEntry | None:
        raw = self._raw.get(path)
        if raw is None:
            return None
        try:
            return _entry_from_json(raw, display)
        except (KeyError, TypeError, ValueError, AttributeError):
            self._raw.pop(path, None)  # corrupt entry: ignore it
            return None

    def lookup_stat(self, path: str, display: str, st: os.stat_result) -> CacheEntry | None:
        """A hit without reading the file: same size and mtime, and the mtime is not racy."""
        if self._started - st.st_mtime < _RACY_S:
            return None
        entry = self._get(path, display)
        if entry is None or entry.mtime_ns != st.st_mtime_ns or entry.size != st.st_size:
            return None
        return entry

    def lookup_hash(self, path: str, display: str, sha256: str) -> CacheEntry | None:
        entry = self._get(path, display)
        return entry if entry is not None and entry.sha256 == sha256 else None

    def store(self, path: str, entry: CacheEntry) -> None:
        self._new[path] = _entry_to_json(entry)

    def touch(self, path: str, st: os.stat_result, sha256: str) -> None:
        """Record a fresh stat for an entry that hit by hash (e.g. after `touch` or checkout)."""
        raw = self._raw.get(path)
        if raw is not None and raw.get("sha256") == sha256:
            self._new[path] = {**raw, "mtime_ns": st.st_mtime_ns, "size": st.st_size}

    def save(self) -> None:
        """Merge with what is on disk (another scan may have written) and replace atomically."""
        if not self._new:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _mark_cache_dir(self.dir.parent)
            on_disk: dict[str, Any] = {}
            try:
                data = json.loads(self.file.read_bytes())
                if isinstance(data, dict) and data.get("format") == FORMAT:
                    on_disk = data.get("entries") or {}
            except (OSError, ValueError):
                pass
            # Entries of deleted (or moved) files are dropped, so the file cannot grow forever.
            merged = {k: v for k, v in on_disk.items() if isinstance(v, dict) and os.path.exists(k)}
            merged.update(self._new)
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"format": FORMAT, "entries": merged}, f, separators=(",", ":"))
                os.replace(tmp, self.file)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a read-only tree still scans; it just stays cold


def _mark_cache_dir(root: Path) -> None:
    """Like ruff: keep the cache out of git and out of backups."""
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("# Automatically created by zeroopt.\n*\n")
    tag = root / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
