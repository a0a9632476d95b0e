"""Where a cold scan's CPU time goes: each phase of the file analysis timed in one process.

Discovers the pinned wheels' files (bench/corpus.py) as a scan does, keeps those that pass the
prefilter, and analyses them (all, or `--sample N` evenly spaced) one after the other in this
process, as one worker would, with `time.process_time` around each phase. Times are inclusive
(a phase called inside another counts in both: `ProjectView._load` runs inside
`Resolver.build`, `ast.parse` inside several). `--profile FILE` writes a cProfile of the
analysis instead of timing phases (the profiler's overhead distorts the phase times).

    python bench/scan_phases.py [--sample N] [--only PATH_END...] [--profile FILE] [--slowest 20]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import corpus

from zeroopt.analysis import project, resolve
from zeroopt.analysis.cfg import Builder
from zeroopt.scan import file_analysis, runner, tree_facts
from zeroopt.scan.config import load_config
from zeroopt.scan.discovery import discover

SECONDS: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)


def timed(owner: Any, name: str, label: str) -> None:
    """Replace `owner.name` by a wrapper adding its CPU time to `label`."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            SECONDS[label] += time.process_time() - start
            CALLS[label] += 1

    setattr(owner, name, wrapper)


PHASES = (
    (file_analysis.ast, "parse", "ast.parse (analysed files and modules read through)"),
    (resolve.Resolver, "build", "Resolver.build (with the modules it reads)"),
    (project.ProjectView, "_load", "ProjectView._load (other modules: parse + bindings)"),
    (file_analysis, "find_allocations", "find_allocations"),
    (Builder, "build", "CFG build"),
    (file_analysis, "_int_names", "integer names"),
    (file_analysis, "analyse_buffer", "analyse_buffer (per-buffer dataflow)"),
    (file_analysis, "_lifecycle_pass", "lifecycle pass"),
    (file_analysis, "_with_fixes", "_with_fixes (libcst codemod for safe findings)"),
    (file_analysis, "identities", "finding identities"),
    (runner, "parse_suppressions", "suppressions"),
    (file_analysis, "analyse_source", "analyse_source (all of the above)"),
)


def _children_cpu() -> float:
    """CPU seconds of the child processes waited for (the tree-wide facts' parsing helper)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=0, help="files to analyse (0: all)")
    parser.add_argument("--profile", type=Path, help="write a cProfile here instead")
    parser.add_argument("--slowest", type=int, default=20, help="files to list by CPU time")
    parser.add_argument(
        "--only", nargs="+", default=(), help="analyse only files whose path ends so"
    )
    parser.add_argument("--cache-dir", type=Path, default=corpus.DEFAULT_CACHE)
    args = parser.parse_args(argv)
    paths = corpus.enter_corpus(args.cache_dir)
    config = load_config(paths)
    t0 = time.process_time()
    found = discover(paths, config)
    t1 = time.process_time()
    index = project.ProjectIndex.build(
        (sf.path for sf in found.files), [os.path.abspath(p) for p in paths]
    )
    t2 = time.process_time()
    passing = [sf for sf in found.files if file_analysis.may_hold_candidate(runner._read(sf.path))]
    t3 = time.process_time()
    if args.only:
        passing = [sf for sf in passing if sf.display.endswith(tuple(args.only))]
    files = corpus.evenly_spaced(passing, args.sample)
    print(
        f"{len(found.files):,} files, {len(passing):,} pass the prefilter, {len(files):,} analysed"
    )
    print(f"discovery {t1 - t0:.2f} s, index {t2 - t1:.2f} s, read + prefilter {t3 - t2:.2f} s")
    if args.profile is None:
        for owner, name, label in PHASES:
            timed(owner, name, label)
    # The tree-wide facts a scan builds once, in the parent, before its workers fork. Kept
    # shared (and out of the cyclic collector's reach) while the files are analysed, as in a
    # forked worker: unfrozen, every full collection would walk them (seconds a scan never
    # spends).
    t4, w4, c4 = time.process_time(), time.perf_counter(), _children_cpu()
    with tree_facts.shared_with_forks(index, True):
        runner._init_worker(index)
        cpu = time.process_time() - t4 + _children_cpu() - c4
        wall = time.perf_counter() - w4
        print(f"tree-wide facts (once per scan) {cpu:.2f} CPU s, {wall:.2f} s wall")
        _analyse(files, config, args.profile, args.slowest)
    return 0


def _analyse(files: list[Any], config: Any, profile_to: Path | None, slowest: int) -> None:
    """Each file analysed in turn, as one worker would; the times (or a profile) printed."""
    profile = cProfile.Profile() if profile_to else None
    per_file: list[tuple[float, str]] = []
    start = time.process_time()
    if profile is not None:
        profile.enable()
    for sf in files:
        before = time.process_time()
        runner._analyse_path(sf.path, sf.display, config.analysis)
        per_file.append((time.process_time() - before, sf.display))
    if profile is not None:
        profile.disable()
        profile.dump_stats(profile_to)
    print(f"analysis: {time.process_time() - start:.2f} CPU s in one process")
    for label, seconds in sorted(SECONDS.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:8.2f} s  {CALLS[label]:7,} calls  {label}")
    print("slowest files (CPU s):")
    for seconds, display in sorted(per_file, reverse=True)[:slowest]:
        print(f"  {seconds:7.2f}  {display}")


if __name__ == "__main__":
    sys.exit(main())
