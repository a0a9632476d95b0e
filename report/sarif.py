"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Levels follow actionability: a provable rewrite is a `warning` (with the rewrite as a SARIF
fix), an `unsafe` empty (a read of uninitialised memory) is an `error`, and everything that only
informs (unproven, or an `unsafe` zeros that must stay zeros) is a `note`. Columns are Unicode
code points (`columnKind`), 1-based, `endColumn` exclusive, exactly as in the JSON output.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zeroopt
from zeroopt.report import rule_catalog, rule_doc
from zeroopt.report.json_text import dumps
from zeroopt.scan.findings import Edit, Finding, Verdict

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/zeroopt/zeroopt"


def level(f: Finding) -> str:
    if f.actionable:
        return "error" if f.verdict is Verdict.UNSAFE else "warning"
    return "note"


def _uri(path: str) -> dict[str, str]:
    """Relative paths stay relative to %SRCROOT% (the cwd the scan ran in), as code scanning
    expects; absolute ones become file URIs."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": Path(path).as_posix(), "uriBaseId": "%SRCROOT%"}


def _region(f: Finding | Edit) -> dict[str, int]:
    return {
        "startLine": f.line,
        "startColumn": f.col,
        "endLine": f.end_line,
        "endColumn": f.end_col,
    }


def to_sarif(report: ScanReport) -> dict[str, Any]:
    catalog = rule_catalog()
    index = {str(r.code): i for i, r in enumerate(catalog)}
    rules = [
        {
            "id": str(r.code),
            "name": str(r.name),
            "shortDescription": {"text": str(r.summary)},
            "fullDescription": {"text": str(r.summary)},
            "help": {"text": rule_doc(r), "markdown": rule_doc(r)},
            "defaultConfiguration": {"level": "warning"},
        }
        for r in catalog
    ]
    results: list[dict[str, Any]] = []
    for f in report.findings:
        result: dict[str, Any] = {
            "ruleId": f.rule,
            "level": level(f),
            "message": {"text": f"[{f.verdict}] {f.message}"},
            "locations": [
                {"physicalLocation": {"artifactLocation": _uri(f.path), "region": _region(f)}}
            ],
            "properties": {
                "verdict": str(f.verdict),
                "call": f.call,
                "target": f.target,
                "evidence": [e.to_json() for e in f.evidence],
            },
        }
        if f.rule in index:
            result["ruleIndex"] = index[f.rule]
        if f.fix is not None and f.verdict is Verdict.SAFE:
            result["fixes"] = [
                {
                    "description": {"text": f"Replace {f.call} by {f.fix.replacement}"},
                    "artifactChanges": [
                        {
                            "artifactLocation": _uri(f.path),
                            "replacements": [
                                {
                                    "deletedRegion": _region(f),
                                    "insertedContent": {"text": f.fix.replacement},
                                },
                                *(
                                    {
                                        "deletedRegion": _region(e),
                                        "insertedContent": {"text": e.replacement},
                                    }
                                    for e in f.fix.edits
                                ),
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    for u in report.unused_suppressions:
        results.append(
            {
                "ruleId": u.rule,
                **({"ruleIndex": index[u.rule]} if u.rule in index else {}),
                "level": "note",
                "message": {"text": u.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": _uri(u.path),
                            "region": {"startLine": u.line, "startColumn": u.col},
                        }
                    }
                ],
            }
        )
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [{"physicalLocation": {"artifactLocation": _uri(e.path)}}],
        }
        for e in report.errors
    ]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "zeroopt",
                        "version": zeroopt.__version__,
                        "semanticVersion": zeroopt.__version__,
                        "informationUri": INFO_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [
                    {"executionSuccessful": True, "toolExecutionNotifications": notifications}
                ],
                "results": results,
            }
        ],
    }


def render(report: ScanReport) -> str:
    return dumps(to_sarif(report)) + "\n"
