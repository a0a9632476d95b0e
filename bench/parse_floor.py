"""The floor under any scan built on the stdlib parser: read, prefilter and `ast.parse` only.

Does exactly the part of a cold `zeroopt scan` that no analysis can skip: every file is read,
zeroopt's own text prefilter (`file_analysis.may_hold_candidate`) drops those that cannot hold an
allocation, and the rest are parsed with `ast.parse`, in as many worker processes as a scan
uses. Nothing is analysed. bench/scan_speed.py times it beside ruff in the same run: if this row
alone is about as slow as ruff, no speed-up of the analysis can bring a cold scan level with
ruff; only a faster parser (or parsing less of each file) could.

    python bench/parse_floor.py [--jobs N] ROOT [ROOT ...]
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from zeroopt.scan.file_analysis import decode_source, may_hold_candidate


def parse_if_candidate(path: str) -> int:
    """1 if the file passed the prefilter and was parsed, else 0 (unreadable or unparsable
    files count as parsed: a scan reads and tries them too)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return 0
    if not may_hold_candidate(data):
        return 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in old files: a scan ignores them
            ast.parse(decode_source(data), filename=path)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError):
        pass
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    files = sorted(str(p) for root in args.roots for p in root.rglob("*.py") if p.is_file())
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        parsed = sum(pool.map(parse_if_candidate, files, chunksize=64))
    print(f"{len(files)} files read, {parsed} passed the prefilter and were parsed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
