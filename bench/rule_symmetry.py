"""ZO001/ZO002 symmetry over real code: each file scanned as written, with every zeros turned
into empty and every empty into zeros; verdicts compared site by site (and coupled groups).

    python bench/rule_symmetry.py [PATH...]   (default: the sglang and vllm wheel trees)

The comparison is `check_both_ways` of tests/test_rule_symmetry.py. A file whose rewrite changes
what a name means (a module that defines its own `new_zeros`) is reported, not hidden.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_rule_symmetry import check_both_ways

DEFAULT = [
    Path("~/.cache/zeroopt-bench/src/sglang-0.5.23").expanduser(),
    Path("~/.cache/zeroopt-bench/src/vllm-0.33.0").expanduser(),
]


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv] or DEFAULT
    files = sorted(f for r in roots for f in ([r] if r.is_file() else r.rglob("*.py")))
    compared = differ = scanned = 0
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        if "torch" not in text or ("zeros" not in text and "empty" not in text):
            continue
        scanned += 1
        try:
            compared += check_both_ways(text, str(f))
        except AssertionError as exc:
            differ += 1
            print(f"DIFFERS {f}: {str(exc).splitlines()[0]}")
    print(f"files {scanned}  sites compared {compared}  files whose verdicts differ {differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
