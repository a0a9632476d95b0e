"""The reflective uses of the pinned wheels that no class can pass: what the any-order pass and
returned methods meet once the names of each lookup are read (analysis/lookup_names.py).

A use reached by the search for a class blocks it when its receiver may hold the instance; a
lookup by a computed name on a value of unknown type, an opaque use (`exec`, frames), a deep use
of a non-constant and a class made from unknown bases may hold any class's instance: they block
every class the search reaches, whatever its attributes. This counts them by kind and by file,
and the lookups now passed by their names (a literal set of names, a prefix) unless a class
has an attribute among them, with the file order the search follows (the first ones block).

    python bench/reflection_blockers.py [--top 20]
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter

import corpus

from zeroopt.analysis.anyorder_reach import (
    ALIASES,
    ANY,
    DEEP,
    GET,
    MAKE,
    NOTHING,
    OPAQUE,
    SET,
    uses_of,
)
from zeroopt.analysis.lifecycle_anyorder import _flagged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    kinds: Counter[str] = Counter()
    files: Counter[str] = Counter()
    first: list[str] = []
    roots = [p.root for p in corpus.ensure_corpus()]
    base = roots[0].parent
    for path in sorted(corpus.python_files(roots)):
        data = path.read_bytes()
        if not (_flagged(data) or ALIASES.search(data)):
            continue
        try:
            found = uses_of(ast.parse(data))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            kinds["cannot be parsed"] += 1
            continue
        short = str(path.relative_to(base))
        for use in found:
            r = use.recv
            if use.kind == OPAQUE:
                kind = "opaque (exec, eval, frames, builtins as values)"
            elif use.kind == DEEP and r.kind != NOTHING:
                kind = "deep (deepcopy, pickle, torch.save) of a non-constant"
            elif use.kind == MAKE and not r.name:
                kind = "class made from bases not shown"
            elif use.kind in (GET, SET) and r.kind == ANY:
                if use.names is not None:
                    kinds["lookup on unknown value, names shown: passes unless they match"] += 1
                    continue
                kind = "lookup on unknown value, any name"
            else:
                continue
            kinds[kind] += 1
            files[short] += 1
            if len(first) < args.top:
                first.append(f"{short}:{use.line} `{use.text}` ({kind})")
    width = max(map(len, kinds))
    for kind, n in kinds.most_common():
        print(f"{kind:<{width}}  {n:>6,}")
    print(f"\nfiles holding the most uses no class passes (of {len(files):,}):")
    for name, n in files.most_common(args.top):
        print(f"  {n:>5}  {name}")
    print("\nthe first in file order (the search for a class stops at the first):")
    for line in first:
        print(f"  {line}")


if __name__ == "__main__":
    main()
