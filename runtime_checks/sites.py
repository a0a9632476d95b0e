"""Where to poison: source positions given on the command line or taken from a scan report."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zeroopt.scan.findings import ZEROS_CALLS


@dataclass(frozen=True)
class Site:
    """One allocation, 1-based as in scan output; col None matches every zeros call on the line."""

    path: str
    line: int
    col: int | None = None

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}" + (f":{self.col}" if self.col is not None else "")

    @property
    def realpath(self) -> str:
        return os.path.realpath(self.path)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "col": self.col}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Site:
        col = data.get("col")
        return cls(str(data["path"]), int(data["line"]), None if col is None else int(col))


def parse_site(text: str) -> Site:
    """`PATH:LINE[:COL]`; the path may itself hold colons (split from the right)."""
    parts = text.rsplit(":", 2)
    try:
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            site = Site(parts[0], int(parts[1]), int(parts[2]))
        else:
            path, line = text.rsplit(":", 1)
            site = Site(path, int(line))
    except ValueError:
        raise ValueError(f"site {text!r} is not PATH:LINE[:COL]") from None
    if site.line < 1 or (site.col is not None and site.col < 1) or not site.path:
        raise ValueError(f"site {text!r}: line and column are 1-based")
    return site


def sites_from_report(report_path: Path, base: Path | None = None) -> list[Site]:
    """The zeros findings of a `zeroopt scan --format json` report that may become empty.

    `unsafe` findings are left out: the scan already showed a read of unwritten memory.
    Relative paths are resolved against `base` (default: the current directory), as scan
    reports paths relative to where it ran.
    """
    data = json.loads(report_path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "findings" not in data:
        raise ValueError(f"{report_path}: not a zeroopt scan report (no 'findings')")
    sites: list[Site] = []
    for finding in data["findings"]:
        if finding.get("call") not in ZEROS_CALLS:
            continue
        if finding.get("verdict") not in ("safe", "unproven"):
            continue
        path = finding["path"]
        if base is not None and not os.path.isabs(path):
            path = str(base / path)
        sites.append(Site(path, int(finding["line"]), int(finding["col"])))
    return sites
