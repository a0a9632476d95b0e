"""Which execution-equivalent sites the analysis misses, and which of them are provable.

    python bench/recall_misses.py --programs 600 --seed 12300000 [--jobs 2] [--out misses.jsonl]

For each program of the standard generator (tests/soundness/generator.py) every site that is
equivalent under poisoning yet not `safe` is run again on a STRICT variant of its program: every
function of the generator's prologue (the ones that bind `acc`) also returns `acc`, `store`,
`holder` and `vars(box)`, and the lifecycle driver keeps what `init_cuda_graph_state` and every
setup return. A site equivalent only because its unwritten elements fed a value nobody returned
then differs; one that stays equivalent is a candidate for a mechanism (or reads unwritten memory
whose value is dead: the `unsafe` rows). Prints the strict-equivalent misses grouped by the
finding's message with names, numbers and code elided; `--out` writes every miss as a JSON line
(seed, line, col, verdict, message, evidence, strict: true/false/null for an invalid variant).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # `tests.soundness` lives beside bench/

from tests.soundness.generator import random_program  # noqa: E402
from tests.soundness.oracle import check_program, engine_findings, find_sites  # noqa: E402

EXTRA = "acc, store, holder, vars(box)"
_DRIVER = (
    ("    m.init_cuda_graph_state(inp, n, k, flag)", "    first = m.init_cuda_graph_state(inp, n, k, flag)"),
    ("        setup(inp, n, k, flag)", "        outs.append(setup(inp, n, k, flag))"),
    ("    return outs, m.trace\n", "    return outs, m.trace, first\n"),
)  # fmt: skip


def _returns(fn: ast.FunctionDef) -> list[ast.Return]:
    """The function's own `return` statements, not those of nested scopes."""
    out, stack = [], list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return):
            out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def strict_variant(source: str) -> str:
    """The program with every prologue function returning its accumulators too; line numbers
    are kept (each edit stays on its line)."""
    lines = source.splitlines()
    edits: dict[int, list[tuple[int, int, str]]] = {}
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef) or not any(
            isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "acc" for s in fn.body
        ):
            continue
        for r in _returns(fn):
            value = ast.get_source_segment(source, r.value) if r.value else "None"
            edits.setdefault(r.lineno, []).append(
                (r.col_offset, r.end_col_offset or 0, f"return (({value}), {EXTRA})")
            )
        last = fn.body[-1]
        if isinstance(last, ast.Expr) and last.lineno == last.end_lineno:
            end = last.end_col_offset or 0
            edits.setdefault(last.lineno, []).append((end, end, f"; return (None, {EXTRA})"))
    for number, changes in edits.items():
        text = lines[number - 1].encode()
        for start, end, new in sorted(changes, reverse=True):  # byte offsets, right to left
            text = text[:start] + new.encode() + text[end:]
        lines[number - 1] = text.decode()
    out = "\n".join(lines) + "\n"
    for old, new in _DRIVER:
        out = out.replace(old, new)
    return out


def _nth_on_line(source: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(line, col) of each site -> (line, index among the sites of that line)."""
    seen: Counter[int] = Counter()
    out = {}
    for site in find_sites(source):
        out[site.key] = (site.line, seen[site.line])
        seen[site.line] += 1
    return out


def misses(seeds: range) -> list[dict[str, Any]]:
    rows = []
    for seed in seeds:
        source = random_program(seed).source
        report = check_program(source, engine_findings)
        missed = [s for s in report.sites if s.equivalent and str(s.verdict) != "safe"]
        if not report.valid or not missed:
            continue
        variant = strict_variant(source)
        strict = check_program(variant)
        by_nth = {v: k for k, v in _nth_on_line(variant).items()}
        equivalent = {s.site.key: s.equivalent for s in strict.sites}
        nth = _nth_on_line(source)
        for s in missed:
            key = by_nth.get(nth[s.site.key])
            rows.append(
                {
                    "seed": seed,
                    "line": s.site.line,
                    "col": s.site.col,
                    "verdict": str(s.verdict),
                    "message": s.finding.message if s.finding else "",
                    "evidence": [(e.line, e.kind, e.text) for e in s.finding.evidence]
                    if s.finding
                    else [],
                    "strict": equivalent.get(key) if strict.valid and key else None,
                }
            )
    return rows


def reason(message: str) -> str:
    text = re.sub(r"`[^`]*`", "`X`", message)
    return re.sub(r"\d+", "N", text)[:150]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--programs", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write every miss here as JSON lines")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    end = args.seed + args.programs
    parts = [range(s, min(s + 25, end)) for s in range(args.seed, end, 25)]
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for chunk in pool.map(misses, parts):
            rows += chunk
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept = [r for r in rows if r["strict"]]
    print(
        f"missed equivalent sites: {len(rows)}; equivalent on the strict variant: {len(kept)}; "
        f"differ there: {sum(r['strict'] is False for r in rows)}; "
        f"variant invalid: {sum(r['strict'] is None for r in rows)}"
    )
    for (verdict, text), count in Counter(
        (r["verdict"], reason(r["message"])) for r in kept
    ).most_common(args.top):
        print(f"{count:5d}  {verdict:<8} {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
