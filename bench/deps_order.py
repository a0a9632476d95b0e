"""Whether a file's recorded dependencies depend on what its worker analysed before.

A worker keeps its `ProjectView` and the analysis' module-level memos for its whole life; the
per-file cache reuses a result while its `FileResult.deps` hold (scan/runner.py `_DepsNow`).
So the deps a file records must be the same whether it is the worker's first file or its
hundredth: a memo hit must record what the miss recorded, else a change to a module the verdict
relied on would not invalidate the cached result.

The tree-wide facts are built once in this process, as a scan's parent does; then each file is
analysed alone in a child forked from that pristine state (a fresh worker, every module-level
memo empty), and all files are analysed one after the other, twice, in one more forked child
(one worker: the first pass meets the memos the earlier files left, the second meets its own).
Per file, the deps (as sets of key/value pairs) and the findings of both passes are compared
with the fresh ones.

    python bench/deps_order.py [--sample N] [--only PATH_END...] [--all-keys]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import corpus

from zeroopt.analysis import project
from zeroopt.scan import file_analysis, runner, tree_facts
from zeroopt.scan.config import load_config
from zeroopt.scan.discovery import discover

# Files that exercise the summaries, the lifecycle and any-order passes and import-time facts.
FOCUS = (
    "srt/layers/attention/",
    "v1/worker/",
    "model_executor/models/",
    "srt/models/",
    "srt/model_executor/",
    "v1/attention/",
)

Outcome = tuple[dict[str, str], list[str]]  # deps, findings (repr, sorted)


def _outcome(path: str, display: str, options: Any) -> Outcome:
    result = runner._analyse_path(path, display, options).result
    findings = sorted(repr(f) for f in result.findings)
    findings += sorted(repr(e) for e in result.errors)
    findings += sorted(repr(lc) for lc in result.lifecycles)
    return dict(result.deps), findings


def _in_child(work: Callable[[], Any]) -> Any:
    """`work()` run in a child forked from this process' current state; its pickled result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        code = 0
        try:
            data = pickle.dumps(work())
        except BaseException as exc:  # reported, not raised: the child must not return
            data = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
            code = 1
        with os.fdopen(write, "wb") as out:
            out.write(data)
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as inp:
        data = inp.read()
    os.waitpid(pid, 0)
    got = pickle.loads(data)
    if isinstance(got, RuntimeError):
        raise got
    return got


def _pick(passing: list[Any], only: Sequence[str], n: int) -> list[Any]:
    if only:
        chosen = [sf for sf in passing if sf.display.endswith(tuple(only))]
        return chosen if not 0 < n < len(chosen) else chosen[:n]

    spaced = corpus.evenly_spaced
    focus = [sf for sf in passing if any(p in sf.display for p in FOCUS)]
    rest = [sf for sf in passing if not any(p in sf.display for p in FOCUS)]
    return spaced(focus, (n * 3) // 4 or n) + spaced(rest, n - (n * 3) // 4)


def _diff(fresh: dict[str, str], seen: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """Keys the fresh run recorded that `seen` lacks, keys it added, keys with another value."""
    missing = sorted(k for k in fresh if k not in seen)
    extra = sorted(k for k in seen if k not in fresh)
    changed = sorted(k for k in fresh if k in seen and fresh[k] != seen[k])
    return missing, extra, changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=80, help="files to analyse (0: all)")
    parser.add_argument("--only", nargs="+", default=(), help="only files whose path ends so")
    parser.add_argument("--all-keys", action="store_true", help="list every differing key")
    parser.add_argument("--cache-dir", type=Path, default=corpus.DEFAULT_CACHE)
    args = parser.parse_args(argv)
    paths = corpus.enter_corpus(args.cache_dir)
    config = load_config(paths)
    found = discover(paths, config)
    index = project.ProjectIndex.build(
        (sf.path for sf in found.files), [os.path.abspath(p) for p in paths]
    )
    passing = [sf for sf in found.files if file_analysis.may_hold_candidate(runner._read(sf.path))]
    files = _pick(passing, args.only, args.sample)
    options = config.analysis
    print(f"{len(passing):,} files pass the prefilter, {len(files):,} compared")
    start = time.perf_counter()
    with tree_facts.shared_with_forks(index, True):

        def alone(sf: Any) -> Callable[[], Outcome]:
            def work() -> Outcome:
                runner._init_worker(index)
                return _outcome(sf.path, sf.display, options)

            return work

        def in_turn() -> list[list[Outcome]]:
            runner._init_worker(index)
            return [[_outcome(sf.path, sf.display, options) for sf in files] for _ in range(2)]

        fresh = [_in_child(alone(sf)) for sf in files]
        passes = _in_child(in_turn)
    print(f"analysed in {time.perf_counter() - start:.0f} s (each alone, then all in turn twice)")
    return _report(files, fresh, passes, args.all_keys)


def _report(
    files: list[Any], fresh: list[Outcome], passes: list[list[Outcome]], all_keys: bool
) -> int:
    header = (
        f"{'file':<64} {'pass':>4} {'deps':>5} {'missing':>7} {'extra':>5} {'changed':>7} findings"
    )
    print(header)
    differing = 0
    for i, sf in enumerate(files):
        deps, findings = fresh[i]
        for number, outcomes in enumerate(passes, 1):
            seen_deps, seen_findings = outcomes[i]
            missing, extra, changed = _diff(deps, seen_deps)
            same = findings == seen_findings
            if not (missing or extra or changed) and same:
                continue
            differing += 1
            name = sf.display if len(sf.display) <= 64 else "…" + sf.display[-63:]
            print(
                f"{name:<64} {number:>4} {len(deps):>5} {len(missing):>7} {len(extra):>5}"
                f" {len(changed):>7} {'same' if same else 'DIFFER'}"
            )
            for label, keys in (("missing", missing), ("extra", extra), ("changed", changed)):
                if keys:
                    shown = keys if all_keys else keys[:6]
                    more = "" if len(shown) == len(keys) else f" (+{len(keys) - len(shown)})"
                    print(f"    {label}: {', '.join(shown)}{more}")
    print(
        f"{differing} (file, pass) pairs differ from the file analysed alone, of {len(files) * 2}"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
