"""Where to poison: source positions given on the command line or taken from a scan report."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# Every uninitialised allocation verify can zero-fill (baseline) or poison (trials): the same
# calls the scan judges (analysis/semantics).
from zeroopt.scan.findings import EMPTY_CALLS, ZEROS_CALLS


class StaleSitesError(ValueError):
    """A report names sites whose source changed since it was made."""


@dataclass(frozen=True)
class PoisonSite:
    """One allocation, 1-based as in scan output; col None matches every zeros call on the line.

    `source` and `fingerprint` (scan/site_identity.py) say which call was verified, so that a
    verify report read back later (`apply --verified`) can refuse an entry the file no longer
    matches; None where unknown (a `--site PATH:LINE` without a column names no single call).
    They do not take part in equality: a site is its position."""

    path: str
    line: int
    col: int | None = None
    source: str | None = field(default=None, compare=False)
    fingerprint: str | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}" + (f":{self.col}" if self.col is not None else "")

    @property
    def realpath(self) -> str:
        return os.path.realpath(self.path)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "col": self.col}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PoisonSite:
        col = data.get("col")
        return cls(str(data["path"]), int(data["line"]), None if col is None else int(col))


def parse_site(text: str) -> PoisonSite:
    """`PATH:LINE[:COL]`; the path may itself hold colons (split from the right)."""
    parts = text.rsplit(":", 2)
    try:
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            site = PoisonSite(parts[0], int(parts[1]), int(parts[2]))
        else:
            path, line = text.rsplit(":", 1)
            site = PoisonSite(path, int(line))
    except ValueError:
        raise ValueError(f"site {text!r} is not PATH:LINE[:COL]") from None
    if site.line < 1 or (site.col is not None and site.col < 1) or not site.path:
        raise ValueError(f"site {text!r}: line and column are 1-based")
    return site


def _report_base(report_path: Path, data: dict[str, Any]) -> Path:
    """The directory a report's relative paths are relative to: its recorded `root` (itself
    relative to the report when not absolute), else the report file's own directory."""
    here = report_path.resolve().parent
    root = data.get("root")
    if isinstance(root, str) and root:
        base = Path(root)
        return base if base.is_absolute() else (here / base).resolve()
    return here


def sites_from_report(report_path: Path, base: Path | None = None) -> list[PoisonSite]:
    """The findings of a `zeroopt scan --format json` report that verify can decide.

    Zeros (`safe` or `unproven`; an `unsafe` one already has its read shown) may become empty;
    every empty (ZO002, any verdict) is checked as it stands. Relative paths resolve against
    `base`, else the report's recorded `root`, else the report file's directory (a path that
    exists only relative to the current directory is taken from there). A finding that records
    its call's source and fingerprint is refused when the file no longer matches
    (`StaleSitesError`, naming every such site), so a moved call is never poisoned in its place.
    """
    from zeroopt.scan.site_identity import stale_reason

    data = json.loads(report_path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise ValueError(f"{report_path}: not a zeroopt scan report (no 'findings')")
    root = base if base is not None else _report_base(report_path, data)
    sites: list[PoisonSite] = []
    stale: list[str] = []
    texts: dict[str, str | None] = {}
    for finding in data["findings"]:
        call = finding.get("call")
        if call in ZEROS_CALLS:
            if finding.get("verdict") not in ("safe", "unproven"):
                continue
        elif call not in EMPTY_CALLS:
            continue
        path = str(finding["path"])
        if not os.path.isabs(path):
            resolved = root / path
            if not resolved.exists() and Path(path).exists():
                resolved = Path(path).resolve()
            path = str(resolved)
        line, col = int(finding["line"]), int(finding["col"])
        site = PoisonSite(path, line, col)
        if "source" in finding or "fingerprint" in finding:
            source, fingerprint = finding.get("source"), finding.get("fingerprint")
            if isinstance(source, str) and isinstance(fingerprint, str):
                site = replace(site, source=source, fingerprint=fingerprint)
            if path not in texts:
                try:
                    texts[path] = Path(path).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    texts[path] = None
            text = texts[path]
            if text is None:
                stale.append(f"{site.key}: the file cannot be read")
                continue
            reason = stale_reason(
                text,
                line,
                col,
                int(finding.get("end_line", line)),
                int(finding.get("end_col", col)),
                finding.get("source"),
                finding.get("fingerprint"),
            )
            if reason is not None:
                stale.append(f"{site.key}: {reason}")
                continue
        sites.append(site)
    if stale:
        raise StaleSitesError(
            f"{report_path}: {len(stale)} site(s) changed since the report was made; "
            "scan again: " + "; ".join(stale)
        )
    return sites


def identify(site: PoisonSite) -> PoisonSite:
    """`site` with the identity of the allocation call that starts exactly at its position,
    computed from the file as it is now (`--site PATH:LINE:COL`); unchanged when it already has
    one, has no column, or no single allocation the scan would judge starts there."""
    if site.source is not None or site.col is None:
        return site
    import ast

    from zeroopt.analysis.allocations import find_allocations
    from zeroopt.analysis.resolve import Resolver
    from zeroopt.scan.file_analysis import decode_source
    from zeroopt.scan.findings import char_col
    from zeroopt.scan.site_identity import site_identity

    try:
        text = decode_source(Path(site.path).read_bytes())
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError, LookupError):
        return site
    lines = text.splitlines()

    def col(line: int, offset: int) -> int:
        return char_col(lines[line - 1] if 0 < line <= len(lines) else "", offset)

    spans = [
        (call.end_lineno, col(call.end_lineno, call.end_col_offset))
        for call in (a.call for a in find_allocations(tree, Resolver.build(tree)))
        if call.lineno == site.line
        and call.end_lineno is not None
        and call.end_col_offset is not None
        and col(call.lineno, call.col_offset) == site.col
    ]
    if len(spans) != 1:
        return site
    ((end_line, end_col),) = spans
    identity = site_identity(text, site.line, site.col, end_line, end_col, tree)
    return replace(site, source=identity.source, fingerprint=identity.fingerprint)
