"""`--format json`: the machine-readable contract of docs/contracts.md (version 1).

Keys beyond the contract are additive only (`unused_suppressions`, `lifecycles`: per-class tables
of buffers judged across methods, with their `coupled_groups`; `root`: the absolute directory
the finding paths are relative to; per finding `source` and `fingerprint`, what it judged (see
scan/site_identity.py; null when the file changed while it was scanned), and `next_step`, what
would decide an unproven one); the contract keys never change shape, because tests and outside
tools parse them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zeroopt.report.json_text import dumps
from zeroopt.scan.findings import Finding
from zeroopt.scan.next_step import next_step

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport

JSON_VERSION = 1


def finding_to_json(report: ScanReport, f: Finding) -> dict[str, Any]:
    data = f.to_json()
    identity = report.identity(f)
    data["source"] = identity.source if identity is not None else None
    data["fingerprint"] = identity.fingerprint if identity is not None else None
    step = next_step(f)
    data["next_step"] = step.to_json() if step is not None else None
    return data


def report_to_json(report: ScanReport) -> dict[str, Any]:
    counts = {"safe": 0, "unsafe": 0, "unproven": 0}
    for f in report.findings:
        counts[str(f.verdict)] += 1
    return {
        "version": JSON_VERSION,
        "root": report.root,
        "findings": [finding_to_json(report, f) for f in report.findings],
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
    return dumps(report_to_json(report)) + "\n"
