"""Differential soundness at scale: generated programs, every zeros site poisoned, vs the analysis.

    python bench/soundness.py --programs 5000 --seed 0 [--jobs 2] [--unsound-dir DIR]
    python bench/soundness.py --triton --programs 100 --seed 0   # Triton kernels, interpreted
    python bench/soundness.py --multimodule --programs 300 --seed 0   # names from other modules
    python bench/soundness.py --whole-program --programs 500 --seed 0   # buffers crossing calls
    python bench/soundness.py --const-gaps --programs 2000 --seed 0   # constant parts left alone
    python bench/soundness.py --delegation --programs 500 --seed 0   # hooks forwarded by a wrapper
    python bench/soundness.py --whole-program --multimodule --programs 500 --seed 0
    python bench/soundness.py --only-tag gather-list --programs 100000 --seed 0   # one construct

Prints: programs, sites, sites unsafe by execution, the analysis' verdicts, the unsound count (a
`safe` verdict on a site whose poisoning changed the result; must be 0) and recall (the share of
execution-equivalent sites proven safe). With --unsound-dir, each unsound program is minimised
and written there as NNN.py with the observed difference in a comment (a multi-module program:
NNN/ with its package, the main module minimised).

--whole-program draws programs from tests/soundness/whole_program.py: helpers, methods,
decorators, generators, dataclasses and holders that a buffer crosses (tags `wp-*`). The table by
tag then also gives, per construct, the unsound sites and the `unsafe` verdicts on
execution-equivalent sites.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # `tests.soundness` is not installed; it lives beside bench/

from tests.soundness.generator import random_program  # noqa: E402
from tests.soundness.oracle import (  # noqa: E402
    ProgramReport,
    check_program,
    engine_findings,
    minimise,
    set_analysis_options,
)


@dataclass
class Case:
    seed: int
    source: str
    line: int
    col: int
    detail: str
    multimodule: bool = False  # regenerate the package from the seed (whole-program programs)
    among: tuple[str, ...] = ()


@dataclass
class Tally:
    programs: int = 0
    valid: int = 0
    sites: int = 0
    reached: int = 0
    unsafe_exec: int = 0
    equivalent: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    safe_equivalent: int = 0
    unsafe_verdict_equivalent: int = 0
    unsound: list[Case] = field(default_factory=list)
    stray: int = 0
    analysis_errors: list[str] = field(default_factory=list)
    # tag -> [safe, equivalent, unsafe verdicts on equivalent sites, unsound]
    recall_by_tag: dict[str, list[int]] = field(default_factory=dict)
    multimodule: bool = False
    among: tuple[str, ...] = ()  # the whole-program shapes drawn (empty: the default mix)

    def add(
        self,
        seed: int,
        tags: frozenset[str],
        r: ProgramReport,
        site_tags: dict[int, frozenset[str]] | None = None,
    ) -> None:
        """`site_tags`: a site's own constructs by line (else the program's `tags` count)."""
        self.programs += 1
        if not r.valid:
            return
        self.valid += 1
        self.stray += len(r.stray_findings)
        if r.analysis_error:
            self.analysis_errors.append(f"seed {seed}: {r.analysis_error}")
        for s in r.sites:
            own = (site_tags or {}).get(s.site.line, tags)
            self.sites += 1
            self.reached += s.reached
            self.unsafe_exec += s.unsafe
            self.verdicts[str(s.verdict) if s.verdict else "none"] += 1
            if s.equivalent:
                self.equivalent += 1
                self.safe_equivalent += s.verdict == "safe"
                self.unsafe_verdict_equivalent += s.verdict == "unsafe"
                for tag in own:
                    row = self.recall_by_tag.setdefault(tag, [0, 0, 0, 0])
                    row[0] += s.verdict == "safe"
                    row[1] += 1
                    row[2] += s.verdict == "unsafe"
            if s.unsound:
                why = s.detail or f"the fix text itself, poisoned: {s.fix_detail}"
                self.unsound.append(
                    Case(seed, r.source, s.site.line, s.site.col, why, self.multimodule, self.among)
                )
                for tag in own:
                    self.recall_by_tag.setdefault(tag, [0, 0, 0, 0])[3] += 1

    def merge(self, other: Tally) -> None:
        for name in ("programs", "valid", "sites", "reached", "unsafe_exec", "equivalent",
                     "safe_equivalent", "unsafe_verdict_equivalent", "stray"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.verdicts.update(other.verdicts)
        self.unsound += other.unsound
        self.analysis_errors += other.analysis_errors
        for tag, counts in other.recall_by_tag.items():
            row = self.recall_by_tag.setdefault(tag, [0, 0, 0, 0])
            for i, count in enumerate(counts):
                row[i] += count


def run_chunk(seeds: range, only: str = "") -> Tally:
    """`only`: check just the programs whose tags include it (the others are drawn and skipped:
    a construct the generator draws rarely, over many seeds)."""
    tally = Tally()
    for seed in seeds:
        program = random_program(seed)
        if only and only not in program.tags:
            continue
        tally.add(seed, program.tags, check_program(program.source, engine_findings))
    return tally


def run_triton_chunk(seeds: range) -> Tally:
    """Programs launching their own Triton kernels, run by Triton's interpreter on CPU."""
    os.environ["TRITON_INTERPRET"] = "1"
    import triton.language  # noqa: F401  (imported once here: the programs' own import is fast)

    from tests.soundness.triton_programs import random_triton_program, register_source

    tally = Tally()
    for seed in seeds:
        program = random_triton_program(seed)
        register_source(program.source)
        tally.add(seed, program.tags, check_program(program.source, engine_findings))
    return tally


def run_const_gap_chunk(seeds: range) -> Tally:
    """Writes of literal slices that leave a constant part alone, and reads of it
    (tests/soundness/const_gap_programs.py)."""
    from tests.soundness.const_gap_programs import random_const_gap_program

    tally = Tally()
    for seed in seeds:
        program = random_const_gap_program(seed)
        tally.add(seed, program.tags, check_program(program.source, engine_findings))
    return tally


def run_multimodule_chunk(seeds: range, delegation: bool = False) -> Tally:
    """Programs split over a package: names come from another module (tests/soundness/multimodule.py);
    with `delegation`, a lifecycle backend driven through a wrapper (tests/soundness/delegation.py)."""
    from tests.soundness.delegation import random_delegation_program
    from tests.soundness.multimodule import analyser, materialise, random_multimodule_program

    tally = Tally()
    for seed in seeds:
        program = (random_delegation_program if delegation else random_multimodule_program)(seed)
        main, namespace = materialise(program)
        report = check_program(
            program.main, analyser(program, main), namespace=namespace, assume=program.assume
        )
        tally.add(seed, program.tags, report)
    return tally


def run_wp_chunk(seeds: range, among: tuple[str, ...] = ()) -> Tally:
    """Buffers handed across functions, methods and objects (tests/soundness/whole_program.py)."""
    from tests.soundness.whole_program import DRAWN, random_wp_program

    tally = Tally()
    for seed in seeds:
        wp = random_wp_program(seed, among or DRAWN)
        report = check_program(wp.program.source, engine_findings)
        tally.add(seed, wp.program.tags, report, wp.site_tags)
    return tally


def _wp_multimodule(seed: int, among: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """(program, analyse, namespace) of the whole-program package of this seed, on disk."""
    from tests.soundness.multimodule import analyser, materialise
    from tests.soundness.whole_program import DRAWN, random_wp_multimodule_program

    program = random_wp_multimodule_program(seed, among or DRAWN)
    main, namespace = materialise(program)
    return program, analyser(program, main), namespace


def run_wp_multimodule_chunk(seeds: range, among: tuple[str, ...] = ()) -> Tally:
    """The whole-program pieces with their helpers, bases and dataclasses in another module."""
    tally = Tally(multimodule=True, among=among)
    for seed in seeds:
        program, analyse, namespace = _wp_multimodule(seed, among)
        report = check_program(program.main, analyse, namespace=namespace, assume=program.assume)
        tally.add(seed, program.tags, report, program.site_tags)
    return tally


def chunks(seed: int, programs: int, size: int) -> Iterator[range]:
    for start in range(seed, seed + programs, size):
        yield range(start, min(start + size, seed + programs))


def _unsound_at(line: int, col: int, check: Callable[[str], ProgramReport]):  # type: ignore[no-untyped-def]
    def still(text: str) -> bool:
        r = check(text)
        return r.valid and any(s.unsound for s in r.sites)

    return still


def _checker(case: Case) -> tuple[Callable[[str], ProgramReport], dict[str, str]]:
    """How to re-check a variant of the case's main module, and the package it needs, if any."""
    if not case.multimodule:
        return (lambda text: check_program(text, engine_findings)), {}
    program, analyse, namespace = _wp_multimodule(case.seed, case.among)

    def check(text: str) -> ProgramReport:
        return check_program(text, analyse, namespace=namespace, assume=program.assume)

    return check, program.files


def write_unsound(cases: list[Case], directory: Path, limit: int) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    existing = sorted(p for p in directory.glob("[0-9][0-9][0-9]*") if p.stem[:3].isdigit())
    number = int(existing[-1].stem[:3]) + 1 if existing else 1
    written = []
    for case in cases[:limit]:
        check, files = _checker(case)
        small = minimise(case.source, _unsound_at(case.line, case.col, check))
        r = check(small)
        bad = next(s for s in r.sites if s.unsound)
        why = bad.detail or f"the fix text itself, poisoned: {bad.fix_detail}"
        evidence = (
            "; ".join(f"{e.kind}@{e.line}" for e in bad.finding.evidence) if bad.finding else ""
        )
        header = (
            "# Unsound: the analysis calls the allocation at line {line}, col {col} `safe`,\n"
            f"# yet poisoning it changes the result: {why}\n"
            f"# (found by bench/soundness.py, seed {case.seed}; evidence: {evidence})\n"
            "# Run: f(inp, n, k, flag) on the inputs of tests/soundness/gen_model.py INPUTS.\n\n"
        )
        offset = header.count("\n")
        text = header.format(line=bad.site.line + offset, col=bad.site.col) + small
        if files:
            path = directory / f"{number:03d}"
            path.mkdir(exist_ok=True)
            for name, content in files.items():
                (path / name).write_text(text if name == "main.py" else content)
        else:
            path = directory / f"{number:03d}.py"
            path.write_text(text)
        written.append(path)
        number += 1
    return written


def render(t: Tally, seconds: float, args: argparse.Namespace) -> str:
    recall = t.safe_equivalent / t.equivalent if t.equivalent else 0.0
    rows = [
        ("programs generated", t.programs),
        ("programs valid (zeros version runs, deterministic)", t.valid),
        ("zeros allocation sites", t.sites),
        ("  reached at run time", t.reached),
        ("  unsafe by execution (poison changed the result)", t.unsafe_exec),
        ("  equivalent under every pattern and input", t.equivalent),
        ("verdicts: safe", t.verdicts["safe"]),
        ("verdicts: unsafe", t.verdicts["unsafe"]),
        ("verdicts: unproven", t.verdicts["unproven"]),
        ("sites without a verdict", t.verdicts["none"]),
        ("UNSOUND (safe, yet unsafe by execution)", len(t.unsound)),
        ("recall (safe / equivalent)", f"{recall:.1%} ({t.safe_equivalent}/{t.equivalent})"),
        ("'unsafe' on execution-equivalent sites", t.unsafe_verdict_equivalent),
        ("findings at no allocation site", t.stray),
        ("analysis exceptions", len(t.analysis_errors)),
        ("seconds", f"{seconds:.1f}"),
    ]
    width = max(len(name) for name, _ in rows)
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit = ""
    head = (
        f"zeroopt {commit or '(no git)'} differential soundness, {date.today().isoformat()}:"
        f" --programs {args.programs}"
        f" --seed {args.seed}{' --whole-program' if args.whole_program else ''}"
        f"{' --wp-shapes ' + args.wp_shapes if args.wp_shapes else ''}"
        f"{''.join(' --analysis-option ' + o for o in args.analysis_option)}"
        f"{' --multimodule' if args.multimodule else ''}"
        f"{' --delegation' if getattr(args, 'delegation', False) else ''}"
        f"{' --const-gaps' if args.const_gaps else ''}; python {platform.python_version()}, torch "
        f"{__import__('torch').__version__}, {args.jobs} worker(s)\n"
    )
    out = [head] + [f"{name:<{width}}  {value}" for name, value in rows]
    out.append(
        "\nrecall by construct (of the site, else of its program): safe / equivalent sites;"
        " 'unsafe' verdicts on equivalent sites; unsound sites:"
    )
    for tag, (safe, eq, false_unsafe, unsound) in sorted(
        t.recall_by_tag.items(), key=lambda kv: (kv[1][0] / max(kv[1][1], 1), kv[0])
    ):
        out.append(
            f"  {tag:<36} {safe / max(eq, 1):6.1%}  ({safe}/{eq})"
            f"  unsafe-on-equivalent {false_unsafe}  unsound {unsound}"
        )
    for case in t.unsound[:20]:
        out.append(f"\nunsound: seed {case.seed} line {case.line} col {case.col}: {case.detail}")
    for err in t.analysis_errors[:10]:
        out.append(f"analysis error: {err}")
    return "\n".join(out) + "\n"


def _settings(pairs: list[str]) -> dict[str, Any]:
    """`name=value` pairs as AnalysisOptions fields: true/false, integers, else the text."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise SystemExit(f"--analysis-option {pair!r}: expected NAME=VALUE")
        low = text.lower()
        out[name] = (
            low == "true" if low in ("true", "false") else int(text) if text.isdigit() else text
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--unsound-dir", type=Path, help="minimise and write unsound cases here")
    parser.add_argument("--max-unsound-files", type=int, default=30)
    parser.add_argument(
        "--triton", action="store_true", help="programs with Triton kernels (needs triton)"
    )
    parser.add_argument(
        "--multimodule", action="store_true", help="programs split over several modules"
    )
    parser.add_argument(
        "--whole-program",
        action="store_true",
        help="buffers handed to helpers, methods, decorators, dataclasses and holders",
    )
    parser.add_argument(
        "--delegation",
        action="store_true",
        help="a lifecycle backend driven through a wrapper that forwards its hooks",
    )
    parser.add_argument(
        "--const-gaps",
        action="store_true",
        help="writes of literal slices that leave a constant part alone, and reads of it",
    )
    parser.add_argument(
        "--analysis-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an AnalysisOptions field for every engine run (true/false, an integer, or text)",
    )
    parser.add_argument(
        "--only-tag",
        default="",
        help="plain programs only: check just those with this tag (e.g. gather-list)",
    )
    parser.add_argument(
        "--wp-shapes",
        default="",
        help="with --whole-program: draw only these shapes (comma-separated: helper,method,...)",
    )
    args = parser.parse_args(argv)
    settings = _settings(args.analysis_option)
    set_analysis_options(settings)
    if args.triton:
        os.environ["TRITON_INTERPRET"] = "1"  # before any worker imports triton
    work = run_triton_chunk if args.triton else partial(run_chunk, only=args.only_tag)
    if args.multimodule:
        work = run_multimodule_chunk
    if args.delegation:
        work = partial(run_multimodule_chunk, delegation=True)
    if args.const_gaps:
        work = run_const_gap_chunk
    if args.whole_program:
        among = tuple(s for s in args.wp_shapes.split(",") if s)
        work = partial(run_wp_multimodule_chunk if args.multimodule else run_wp_chunk, among=among)
    start = time.perf_counter()
    total = Tally()
    parts = list(chunks(args.seed, args.programs, 25))
    if args.jobs > 1:
        with ProcessPoolExecutor(
            args.jobs, initializer=set_analysis_options, initargs=(settings,)
        ) as pool:
            for tally in pool.map(work, parts):
                total.merge(tally)
    else:
        for part in parts:
            total.merge(work(part))
    seconds = time.perf_counter() - start
    print(render(total, seconds, args), end="")
    if args.unsound_dir and total.unsound:
        for path in write_unsound(total.unsound, args.unsound_dir, args.max_unsound_files):
            print(f"wrote {path}")
    return 1 if total.unsound else 0


if __name__ == "__main__":
    raise SystemExit(main())
