"""Read the normalised JSON of `bench/wheel_scan.py --out`: counts by rule and verdict, the
non-trivial `safe` sites (no zero-element buffer), and the first obstacle of each `unproven`
finding outside tests, grouped by its message with names and numbers blanked; or, given two
scans, every site whose verdict moved between them:

    python bench/wheel_compare.py SCAN.json [--top 40]
    python bench/wheel_compare.py BEFORE.json AFTER.json
"""

from __future__ import annotations

import argparse
import collections
import json
import re
from pathlib import Path
from typing import Any

Finding = dict[str, Any]


def is_test(path: str) -> bool:
    return "/tests/" in path or "/test_" in path or path.rsplit("/", 1)[-1].startswith("test")


def trivial(f: Finding) -> bool:
    """A `safe` resting on a buffer with no element (its evidence says so)."""
    return "has no elements" in json.dumps(f.get("evidence", [])) + f.get("message", "")


def obstacle(f: Finding) -> str:
    """The first obstacle of an `unproven` finding, names in backticks and numbers blanked."""
    message = f.get("message", "")
    found = re.search(r"read \(line \d+\): (.*)", message)
    text = re.sub(r"`[^`]*`", "`X`", found.group(1) if found else message)
    return re.sub(r"\d+", "N", text)[:110]


def summary(scan: dict[str, Any], top: int) -> None:
    findings: list[Finding] = scan["findings"]
    for (rule, verdict), n in sorted(collections.Counter(
        (f["rule"], f["verdict"]) for f in findings
    ).items()):  # fmt: skip
        print(f"{rule} {verdict:9} {n:6}")
    safe = [f for f in findings if f["rule"] == "ZO001" and f["verdict"] == "safe"]
    print(f"ZO001 safe without a zero-element buffer: {sum(not trivial(f) for f in safe)}")
    unproven = [f for f in findings if f["verdict"] == "unproven" and not is_test(f["path"])]
    print(f"unproven outside tests: {len(unproven)}; first obstacles:")
    for text, n in collections.Counter(obstacle(f) for f in unproven).most_common(top):
        print(f"{n:6} {text}")


def moved(before: dict[str, Any], after: dict[str, Any]) -> None:
    def key(f: Finding) -> tuple[str, int, int, str]:
        return f["path"], f["line"], f["col"], f["rule"]

    old = {key(f): f for f in before["findings"]}
    new = {key(f): f for f in after["findings"]}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for k in sorted(old.keys() | new.keys()):
        a = old[k]["verdict"] if k in old else "-"
        b = new[k]["verdict"] if k in new else "-"
        if a != b:
            counts[(a, b)] += 1
            message = (new.get(k) or old[k])["message"][:150]
            print(f"{a:>8} -> {b:<8} {k[0]}:{k[1]} {k[3]}  {message}")
    print(
        ", ".join(f"{a} -> {b}: {n}" for (a, b), n in sorted(counts.items())) or "no verdict moved"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scans", type=Path, nargs="+", help="one scan, or BEFORE and AFTER")
    parser.add_argument("--top", type=int, default=40, help="obstacle groups shown")
    args = parser.parse_args()
    scans = [json.loads(p.read_text()) for p in args.scans]
    if len(scans) == 1:
        summary(scans[0], args.top)
    elif len(scans) == 2:
        moved(*scans)
    else:
        parser.error("give one scan or two")


if __name__ == "__main__":
    main()
