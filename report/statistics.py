"""`--statistics`: how many findings per rule, verdict and (for unproven ones) reason class.

The reason class says what kept a finding unproven (an opaque kernel, an unknown call, a
buffer passed as an argument, stored in a container, escaping to an attribute, returned, a
lifecycle class the model did not judge, ...): the count that says where a contract or a
`zeroopt verify` run would decide the most findings.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from zeroopt.scan.next_step import reason_class

if TYPE_CHECKING:
    from zeroopt.scan.runner import ScanReport


def statistics(report: ScanReport) -> list[dict[str, Any]]:
    """Rows `{count, rule, verdict, reason}`, most frequent first."""
    counts = Counter((f.rule, str(f.verdict), reason_class(f)) for f in report.findings)
    counts.update((u.rule, "", "unused suppression") for u in report.unused_suppressions)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], *item[0]))
    return [
        {"count": n, "rule": rule, "verdict": verdict, "reason": reason}
        for (rule, verdict, reason), n in ordered
    ]


def render_text(report: ScanReport) -> str:
    rows = statistics(report)
    if not rows:
        return ""
    width = len(str(max(r["count"] for r in rows)))
    lines = [
        f"{r['count']:>{width}}  {r['rule']:<5}  {r['verdict'] or '-':<8}  {r['reason'] or '-'}"
        for r in rows
    ]
    return "".join(line.rstrip() + "\n" for line in lines)


def render_json(report: ScanReport) -> str:
    return json.dumps(statistics(report), indent=2) + "\n"
