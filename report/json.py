"""`--format json`: the machine-readable contract of docs/contracts.md (version 1).

Keys beyond the contract are additive only (`unused_suppressions`, `lifecycles`: per-class tables
of buffers judged across methods, with their `coupled_groups`); the contract keys never
change shape, because tests and outside tools parse them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport

JSON_VERSION = 1


def report_to_json(report: ScanReport) -> dict[str, Any]:
    counts = {"safe": 0, "unsafe": 0, "unproven": 0}
    for f in report.findings:
        counts[str(f.verdict)] += 1
    return {
        "version": JSON_VERSION,
        "findings": [f.to_json() for f in report.findings],
        "errors": [e.to_json() for e in report.errors],
        "summary": {
            "files": report.files,
            "findings": len(report.findings),
            **counts,
            "seconds": round(report.seconds, 3),
        },
        "unused_suppressions": [u.to_json() for u in report.unused_suppressions],
        "lifecycles": [lc.to_json() for lc in report.lifecycles],
    }


def render(report: ScanReport) -> str:
    return json.dumps(report_to_json(report), indent=2, ensure_ascii=False) + "\n"
