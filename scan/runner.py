"""Run the analysis over many files: prefilter, cache, worker processes, filtering.

The pipeline, cheapest first: stat (cache hit without reading), read + prefilter (most
files cannot hold an allocation, so they are never parsed), hash (cache hit after a touch),
and only then analysis in worker processes. Workers receive paths, not file contents, and
return small results, so memory is bounded by the worker count, not the tree size. Any
failure analysing one file becomes an `errors` entry for that file; the scan goes on.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import multiprocessing
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from pathlib import Path
from typing import Any

from zeroopt.analysis.methods import TREE_DEP, tree_digest
from zeroopt.analysis.options import AnalysisOptions
from zeroopt.analysis.project import SELF, ProjectIndex, ProjectView
from zeroopt.scan.cache import CacheEntry, ScanCache
from zeroopt.scan.config import Config
from zeroopt.scan.context_tree import Context, scanned_dirs, tree_around
from zeroopt.scan.discovery import STDIN, Discovered, SourceFile, discover
from zeroopt.scan.findings import FileError, FileResult, Finding, LifecycleReport, Verdict
from zeroopt.scan.site_identity import (
    Def,
    SiteIdentity,
    Span,
    identities,
    identity_in,
    outer_defs,
)
from zeroopt.scan.suppressions import (
    Suppression,
    UnusedSuppression,
    apply_suppressions,
    needs_suppressions,
    parse_suppressions,
)

GENERATED_MARKER = b"@generated"
GENERATED_HEAD_LINES = 10
MAX_FILE_BYTES = 32 * 1024 * 1024  # bigger "source" is data; parsing it could exhaust memory
PROGRESS_MIN_FILES = 100
# Fork where it is safe (Linux): workers start in milliseconds and inherit the loaded analysis.
# Nothing in zeroopt runs threads while a pool starts (the progress bar refreshes by hand).
MP_CONTEXT = multiprocessing.get_context("fork") if sys.platform == "linux" else None


@dataclass
class ScanReport:
    results: list[FileResult] = field(default_factory=list)  # filtered findings per file
    findings: list[Finding] = field(default_factory=list)  # after select/ignore/suppressions
    errors: list[FileError] = field(default_factory=list)
    unused_suppressions: list[UnusedSuppression] = field(default_factory=list)
    files: int = 0  # files scanned (prefiltered ones included; @generated ones not)
    seconds: float = 0.0
    # Bookkeeping for tests, benchmarks and `--verbose`-style output.
    analysed: int = 0  # files actually given to the file analysis
    cache_hits: int = 0
    generated: int = 0  # skipped because of an @generated marker
    stdin_source: str | None = None
    # The absolute directory the finding paths are relative to (the working directory of the
    # scan): a report read from elsewhere resolves its paths against it.
    root: str = field(default_factory=os.getcwd)

    @property
    def lifecycles(self) -> list[LifecycleReport]:
        """Per-class tables of buffers judged across methods under a lifecycle model."""
        return [lc for r in self.results for lc in r.lifecycles]

    def __post_init__(self) -> None:
        self._stdin_display: str | None = None
        self._modules: dict[str, tuple[str, list[_Def]] | None] = {}
        self._by_path: dict[str, FileResult] | None = None

    def identity(self, f: Finding) -> SiteIdentity | None:
        """What `f` judged: the call's source text and its function's fingerprint, from the bytes
        that were analysed (computed in the worker, kept in the cache); for a result without
        them, from the file as it is now, or None when it now differs from the bytes the
        findings come from (a reader of the report then refuses the entry)."""
        if self._by_path is None:
            self._by_path = {r.path: r for r in self.results}
        result = self._by_path.get(f.path)
        known = result.identities.get((f.line, f.col, f.end_line, f.end_col)) if result else None
        if known is not None:
            return SiteIdentity(*known)
        if f.path not in self._modules:
            self._modules[f.path] = self._module(f.path)
        module = self._modules[f.path]
        if module is None:
            return None
        text, defs = module
        return _identity(text, defs, f)

    def _module(self, path: str) -> tuple[str, list[_Def]] | None:
        result = (self._by_path or {}).get(path)
        expected = result.source_hash if result is not None else ""
        if self.stdin_source is not None and path == self._stdin_display:
            data = self.stdin_source.encode("utf-8")
            expected = expected or hashlib.sha256(data).hexdigest()
        else:
            try:
                data = Path(path).read_bytes()
            except OSError:
                return None
        if not expected or hashlib.sha256(data).hexdigest() != expected:
            return None
        try:
            text = data.decode("utf-8")
            tree = ast.parse(data)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            return None
        return text, outer_defs(tree)


_Def = Def


def _identity(text: str, defs: list[_Def], f: Finding) -> SiteIdentity:
    return identity_in(text, defs, (f.line, f.col, f.end_line, f.end_col))


def _identities(data: bytes, findings: Sequence[Finding]) -> dict[Span, tuple[str, str]]:
    """Every finding's identity, from the bytes it was found in ({} when they do not parse)."""
    return identities(data, [(f.line, f.col, f.end_line, f.end_col) for f in findings])


@dataclass
class _Outcome:
    """What one analysis produced, as returned from a worker."""

    result: FileResult
    suppressions: list[Suppression]
    sha256: str
    cacheable: bool  # False for crashes and internal errors: retry them next time


@dataclass
class _Task:
    file: SourceFile
    st: os.stat_result | None
    sha256: str
    generated: bool  # an explicitly named @generated file, analysed anyway


def scan(
    paths: Sequence[str],
    config: Config,
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    cache_dir: Path | None = None,
    progress: bool = False,
    stdin_filename: str | None = None,
    stdin: bytes | None = None,
) -> ScanReport:
    """Scan `paths` (files, directories, "-" for `stdin`) under `config`."""
    started = time.perf_counter()
    report = ScanReport()
    found = discover(paths, config, stdin_filename=stdin_filename)
    report.errors.extend(found.errors)
    # Files named alone (pre-commit's staged files) are judged with their project as context.
    around = tree_around(paths, found, config)
    partial = _partial_tree(paths, found.files, [*found.links, *around.links], around.root)
    if partial and config.analysis.closed_world:
        analysis = replace(config.analysis, closed_world=False, partial_tree=partial)
        config = replace(config, analysis=analysis)
    cache = (
        ScanCache(Path(cache_dir) if cache_dir else config.cache_dir, config.analysis_fingerprint())
        if use_cache
        else None
    )
    # Out of the cyclic collector's passes while the scan runs: the loaded cache.
    with _kept_from_collector(cache is not None):
        sweep = _Sweep(report, config, cache, found, around, paths, stdin)
        workers = jobs or config.jobs
        for tasks in (sweep.pending(), sweep.stale()):
            for task, outcome in _run_analysis(
                tasks, config.analysis, workers, progress, sweep.index
            ):
                sweep.analysed(task, outcome)
        for _path, (sf, outcome) in sorted(sweep.outcomes.items(), key=lambda kv: kv[1][0].display):
            _collect(report, config, sf, outcome)
        if cache is not None:
            cache.save()
        report.findings.sort(key=lambda f: (f.path, f.line, f.col, f.rule))
        report.errors.sort(key=lambda e: e.path)
        report.seconds = time.perf_counter() - started
        return report


class _Sweep:
    """One pass over the discovered files: each is settled here (an error, a cache hit, a file
    the prefilter drops, a @generated one) or handed to the workers as a task, while the
    workers already analyse the first ones; what they return is remembered."""

    def __init__(
        self,
        report: ScanReport,
        config: Config,
        cache: ScanCache | None,
        found: Discovered,
        around: Context,
        paths: Sequence[str],
        stdin: bytes | None,
    ) -> None:
        self.report = report
        self.config = config
        self.cache = cache
        self.found = found
        self.stdin = stdin
        self.outcomes: dict[str, tuple[SourceFile, _Outcome]] = {}
        # The whole-program view: module names of every discovered file (nothing read for it).
        self.index = ProjectIndex.build(
            (sf.path for sf in chain(found.files, around.files) if sf.path != STDIN),
            [os.path.abspath(p) for p in paths if p != "-"]
            + ([around.root] if around.root else []),
        )
        self.shas: dict[str, str] = {}  # path -> SHA-256 of the bytes this scan saw
        self.shas.update(_context_shas(around.files, cache))
        # Cache hits that resolved names through other modules: reused only once every module
        # they read is known unchanged, i.e. after every file has been seen.
        self.deferred: list[tuple[SourceFile, os.stat_result | None, str, _Outcome]] = []

    def pending(self) -> Iterator[_Task]:
        """The files to analyse; the others are settled on the way."""
        for sf in self.found.files:
            if sf.path == STDIN:
                self._stdin(sf)
                continue
            task = self._settle(sf)
            if task is not None:
                yield task

    def stale(self) -> Iterator[_Task]:
        """The deferred cache hits: reused where their dependencies hold, else analysed again."""
        now = _DepsNow(self.index, self.shas)  # every file has been seen: `shas` is complete
        for sf, st, sha, hit_outcome in self.deferred:
            if now.hold(sf.path, hit_outcome.result.deps):
                self.report.cache_hits += 1
                self.outcomes[sf.path] = (sf, hit_outcome)
            else:
                yield _Task(sf, st, sha, False)

    def analysed(self, task: _Task, outcome: _Outcome) -> None:
        sf = task.file
        self.outcomes[sf.path] = (sf, outcome)
        self.report.analysed += 1
        # Only remember the stat if the worker analysed the bytes we hashed.
        st_seen = task.st if outcome.sha256 == task.sha256 else None
        _remember(self.cache, sf, st_seen, outcome, task.generated)

    def _stdin(self, sf: SourceFile) -> None:
        report = self.report
        data = self.stdin if self.stdin is not None else sys.stdin.buffer.read()
        report.stdin_source = data.decode("utf-8", errors="replace")
        report._stdin_display = sf.display
        report.files += 1
        self.outcomes[sf.path] = (sf, _analyse_bytes(data, sf.display, self.config.analysis))
        report.analysed += 1

    def _hit(self, sf: SourceFile, st: os.stat_result | None, sha: str, hit: CacheEntry) -> None:
        """A cached result for these bytes: kept now, or once its dependencies are known."""
        outcome = _Outcome(hit.result, hit.suppressions, sha, True)
        if hit.result.deps:
            self.deferred.append((sf, st, sha, outcome))
            return
        self.report.cache_hits += 1
        self.outcomes[sf.path] = (sf, outcome)

    def _settle(self, sf: SourceFile) -> _Task | None:
        """Settle one file here, or return the task that analyses it."""
        report, cache = self.report, self.cache
        enforce_generated = self.config.force_exclude
        try:
            st = os.stat(sf.path)
        except OSError as exc:
            report.errors.append(FileError(sf.display, _os_message(exc)))
            return None
        if cache is not None:
            hit = cache.lookup_stat(sf.path, sf.display, st)
            if hit is not None:
                if hit.generated and (enforce_generated or not sf.explicit):
                    report.generated += 1
                    return None
                report.files += 1
                self.shas[sf.path] = hit.sha256
                self._hit(sf, st, hit.sha256, hit)
                return None
        if not stat.S_ISREG(st.st_mode):
            # Opening a named pipe blocks forever; a device can be endless (/dev/zero).
            report.errors.append(FileError(sf.display, _NOT_REGULAR))
            return None
        if st.st_size > MAX_FILE_BYTES:
            report.errors.append(FileError(sf.display, _too_large(st.st_size)))
            return None
        try:
            data = _read(sf.path)
        except OSError as exc:
            report.errors.append(FileError(sf.display, _os_message(exc)))
            return None
        if len(data) > MAX_FILE_BYTES:  # grew since the stat
            report.errors.append(FileError(sf.display, _too_large(len(data))))
            return None
        sha = hashlib.sha256(data).hexdigest()
        self.shas[sf.path] = sha
        generated = _is_generated(data)
        if generated and (enforce_generated or not sf.explicit):
            report.generated += 1  # not cached: the skip is decided from the first lines
            return None
        report.files += 1
        if cache is not None:
            hit = cache.lookup_hash(sf.path, sf.display, sha)
            if hit is not None:
                cache.touch(sf.path, st, sha)
                self._hit(sf, st, sha, hit)
                return None
        from zeroopt.scan import file_analysis  # not loaded while every file is a cache hit

        if not file_analysis.may_hold_candidate(data):
            sups = parse_suppressions(data) if needs_suppressions(data, ()) else []
            outcome = _Outcome(FileResult(sf.display, source_hash=sha), sups, sha, True)
            self.outcomes[sf.path] = (sf, outcome)
            _remember(cache, sf, st, outcome, generated)
            return None
        return _Task(sf, st, sha, generated)


@contextmanager
def _kept_from_collector(wanted: bool) -> Iterator[None]:
    """Leave every object alive now out of the cyclic collector's passes until the block ends
    (`gc.freeze`): a large tree's cache decodes into hundreds of thousands of objects, none in
    a reference cycle, and each full pass walked them all again (a tenth of a warm scan).
    Reference counting still frees them. Not where the process has frozen objects of its own,
    which the end of the block would thaw; forked workers inherit the frozen set, as `gc.freeze`
    intends."""
    if not wanted or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _context_shas(files: Sequence[SourceFile], cache: ScanCache | None) -> dict[str, str]:
    """SHA-256 of each context file, for the tree digest that cached results check: from the
    cache where size and mtime match, else read. A file that cannot be read counts as empty."""
    shas: dict[str, str] = {}
    for sf in files:
        try:
            st = os.stat(sf.path)
            hit = cache.lookup_stat(sf.path, sf.display, st) if cache is not None else None
            shas[sf.path] = (
                hit.sha256 if hit is not None else hashlib.sha256(_read(sf.path)).hexdigest()
            )
        except OSError:
            shas[sf.path] = ""
    return shas


def _partial_tree(
    paths: Sequence[str], files: Sequence[SourceFile], links: list[str], context_root: str = ""
) -> str:
    """Why the scanned files are not a whole tree, or "": a file named by itself (pre-commit
    passes only the staged files) or source from stdin, outside every directory scanned and the
    project read as context; a file that is a symbolic link to a file outside them, or a link to
    a directory outside them (discovery does not follow it). The closed world needs every file
    of the tree: a subclass, a caller or a lookup by name in a file left out would go unseen."""
    dirs = scanned_dirs(paths) + ([os.path.join(context_root, "")] if context_root else [])
    real = [os.path.join(os.path.realpath(d), "") for d in dirs]
    unlinked = _Unlinked(dirs)
    for sf in files:
        if sf.path == STDIN:
            return "the source came from stdin: no other file of its tree was scanned"
        target = sf.path if unlinked.file(sf.path) else os.path.realpath(sf.path)
        if target != os.path.abspath(sf.path) and not any(target.startswith(d) for d in real):
            return (
                f"{sf.display} links to {target}, outside the tree scanned: the other files of "
                "its own tree were not read"
            )
        if sf.explicit and not any(sf.path.startswith(d) for d in dirs):
            return (
                f"{sf.display} was named alone (pre-commit names the changed files), and no "
                "project root (pyproject.toml or .git, below the home folder) above it shows the "
                "rest of its tree"
            )
    if links:
        where = os.path.relpath(links[0])
        return f"{where} links to a directory outside the tree, which was not scanned"
    return ""


class _Unlinked:
    """Which paths lie in a scanned directory with no symbolic link below it on the way: such a
    path's real path is that directory's real path plus the same tail, inside the tree, so
    `realpath` (one `lstat` per component of every path) is needed only for the others. One
    `lstat` per file and one per folder."""

    def __init__(self, dirs: Sequence[str]) -> None:
        self._dirs = tuple(dirs)  # absolute, each ending in a separator
        self._folders: dict[str, bool] = {}

    def file(self, path: str) -> bool:
        return not os.path.islink(path) and self.folder(os.path.dirname(path))

    def folder(self, folder: str) -> bool:
        known = self._folders.get(folder)
        if known is None:
            head = os.path.join(folder, "")
            if head in self._dirs:
                known = True
            elif not any(head.startswith(d) for d in self._dirs):
                known = False
            else:  # strictly inside a scanned directory: its parent is at or inside one too
                known = not os.path.islink(folder) and self.folder(os.path.dirname(folder))
            self._folders[folder] = known
        return known


_NO_VALUE = object()  # equal to no recorded value


class _DepsNow:
    """What each dependency key of a cached result (analysis/project.py) is now: a result is
    reused only where every key it recorded has the value it recorded. Each key is worked out
    once per scan (a large tree's cached results record hundreds of thousands of keys, a few
    percent of them distinct), and a result is checked by one subset test of its items."""

    def __init__(self, index: ProjectIndex, shas: dict[str, str]) -> None:
        self._index = index
        self._shas = shas
        self._now: dict[str, object] = {}

    def hold(self, path: str, deps: dict[str, str]) -> bool:
        now = self._now
        now[SELF] = self._index.names.get(path, "")  # the one key whose value is per file
        for key in [k for k in deps if k not in now]:
            now[key] = self._value(key)
        return deps.items() <= now.items()

    def _value(self, key: str) -> object:
        index = self._index
        if key.startswith("/"):
            return index.listing(key[1:])
        if key.startswith("?"):
            return "1" if index.has_module(key[1:]) else "0"
        if key == TREE_DEP:
            return self._tree_digest()
        # A module: the SHA-256 of the bytes this scan saw; nothing a result can have recorded
        # where it is no module of the tree or could not be read ("").
        module_path = index.modules.get(key)
        sha = self._shas.get(module_path, "") if module_path is not None else ""
        return sha or _NO_VALUE

    def _tree_digest(self) -> str:
        """The digest methods.py records for a resolution that relied on the whole tree: over
        the files ClassWorld.read digests, every file of the index, also those whose names are
        no module (`run-1.py`), else no cached result would hold."""
        paths = {*self._index.files, *self._index.names}
        return tree_digest([(p, self._shas.get(p, "")) for p in paths])


def _remember(
    cache: ScanCache | None, sf: SourceFile, st: os.stat_result | None, o: _Outcome, gen: bool
) -> None:
    if cache is None or not o.cacheable:
        return
    mtime, size = (st.st_mtime_ns, st.st_size) if st is not None else (-1, -1)
    cache.store(sf.path, CacheEntry(o.sha256, mtime, size, o.result, o.suppressions, gen))


def _collect(report: ScanReport, config: Config, sf: SourceFile, outcome: _Outcome) -> None:
    """Apply rule selection, per-file-ignores and suppressions to one file's raw result."""
    result = outcome.result
    path_for_config = sf.path if sf.path != STDIN else os.path.abspath(sf.display)

    def enabled(code: str) -> bool:
        return config.is_enabled(code, path_for_config)

    selected = [f for f in result.findings if enabled(f.rule)]
    kept, unused = apply_suppressions(sf.display, selected, outcome.suppressions, enabled)
    # `kept` is a subsequence of the findings: of the same length, it is the same list.
    report.results.append(
        result if len(kept) == len(result.findings) else replace(result, findings=kept)
    )
    report.findings.extend(kept)
    report.errors.extend(result.errors)
    report.unused_suppressions.extend(unused)


def _run_analysis(
    tasks: Iterable[_Task],
    options: AnalysisOptions,
    jobs: int | None,
    progress: bool,
    index: ProjectIndex | None = None,
) -> Iterator[tuple[_Task, _Outcome]]:
    """Analyse the tasks as they come: the workers start on the first files while the parent is
    still reading and prefiltering the rest (only a progress bar, which needs the total, waits)."""
    jobs = max(1, jobs or _usable_cpus())
    if progress:
        tasks = list(tasks)
    total = len(tasks) if isinstance(tasks, list) else 0
    rest = iter(tasks)
    head = list(islice(rest, 2 * jobs))
    if not head:
        return
    # The analysis is loaded here, before a pool forks (its workers inherit it), and not with the
    # runner: a scan whose every file is a cache hit never needs it.
    from zeroopt.scan import file_analysis, tree_facts  # noqa: F401 (file_analysis: for the forks)

    bar = _progress_bar(total) if total >= PROGRESS_MIN_FILES else None
    advance: Callable[[int], None] = (lambda n: None) if bar is None else bar[1]
    try:
        if jobs == 1 or len(head) < 2 * jobs:
            _init_worker(index)
            for t in chain(head, rest):
                yield t, _analyse_path(t.file.path, t.file.display, options)
                advance(1)
        else:
            with tree_facts.shared_with_forks(index, MP_CONTEXT is not None):
                yield from _run_pool(chain(head, rest), options, jobs, advance, index)
    finally:
        if bar is not None:
            bar[0].stop()


def _chunks(tasks: Iterator[_Task], jobs: int) -> Iterator[list[_Task]]:
    """One file per chunk at first, so that every worker starts at once; then bigger chunks (up
    to 32 files) as more files are seen, to save round trips."""
    seen = 0
    while chunk := list(islice(tasks, max(1, min(32, seen // (jobs * 8))))):
        seen += len(chunk)
        yield chunk


def _run_pool(
    tasks: Iterator[_Task],
    options: AnalysisOptions,
    jobs: int,
    advance: Callable[[int], None],
    index: ProjectIndex | None = None,
) -> Iterator[tuple[_Task, _Outcome]]:
    """Chunks across a process pool; chunks lost to a dying worker (a crash in the parser, the
    OOM killer) are retried file by file, and a file that kills a worker on its own becomes an
    error entry instead of taking the scan down."""
    failed: list[_Task] = []
    yield from _pool_round(_chunks(tasks, jobs), options, jobs, advance, failed, index)
    if failed:  # Second round: the files of the lost chunks, one by one.
        retry, failed = failed, []
        groups = [[t] for t in retry]
        yield from _pool_round(groups, options, min(jobs, len(groups)), advance, failed, index)
    if failed:  # Last round: every file alone in a fresh single-worker pool.
        retry, failed = failed, []
        for t in retry:
            yield from _pool_round([[t]], options, 1, advance, failed, index)
    for t in failed:
        advance(1)
        yield (
            t,
            _Outcome(
                FileResult(
                    t.file.display,
                    errors=[
                        FileError(
                            t.file.display,
                            "the analysis of this file crashed or failed in its worker process",
                        )
                    ],
                ),
                [],
                t.sha256,
                False,
            ),
        )


def _pool_round(
    groups: Iterable[list[_Task]],
    options: AnalysisOptions,
    workers: int,
    advance: Callable[[int], None],
    failed: list[_Task],
    index: ProjectIndex | None = None,
) -> Iterator[tuple[_Task, _Outcome]]:
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=MP_CONTEXT, initializer=_init_worker, initargs=(index,)
    ) as pool:
        futures: list[tuple[list[_Task], Future[list[_Outcome]] | None]] = []
        for g in groups:  # `groups` may still be reading files: submit each as it comes
            try:
                items = [(t.file.path, t.file.display) for t in g]
                futures.append((g, pool.submit(_analyse_chunk, items, options)))
            except BrokenProcessPool:  # a worker died while files were still being submitted
                futures.append((g, None))
        for group, fut in futures:
            try:
                outcomes = fut.result() if fut is not None else None
            except Exception:  # BrokenProcessPool (a dead worker), or an unpicklable result
                outcomes = None
            if outcomes is None:
                failed.extend(group)
                continue
            for t, o in zip(group, outcomes, strict=True):
                advance(1)
                yield t, o


# The whole-program view of this process (a worker's, or the parent's when it analyses alone).
_VIEW: ProjectView | None = None


def _init_worker(index: ProjectIndex | None) -> None:
    global _VIEW
    _VIEW = ProjectView(index) if index is not None else None
    if _VIEW is not None:
        from zeroopt.scan import tree_facts

        tree_facts.install(_VIEW)


def _analyse_chunk(items: list[tuple[str, str]], options: AnalysisOptions) -> list[_Outcome]:
    return [_analyse_path(path, display, options) for path, display in items]


def _analyse_path(path: str, display: str, options: AnalysisOptions) -> _Outcome:
    """Re-read in the worker (cheap: the page cache has it) rather than ship bytes through a
    pipe; a file swapped for something else meanwhile is refused as in `scan`."""
    try:
        data = _read(path)
    except OSError as exc:
        message = _os_message(exc)
    else:
        if len(data) <= MAX_FILE_BYTES:
            return _analyse_bytes(data, display, options, path)
        message = _too_large(len(data))
    return _Outcome(FileResult(display, errors=[FileError(display, message)]), [], "", False)


def _analyse_bytes(
    data: bytes, display: str, options: AnalysisOptions, path: str | None = None
) -> _Outcome:
    sha = hashlib.sha256(data).hexdigest()
    # The cyclic collector is paused while one file is analysed: the analysis allocates millions
    # of short-lived objects freed by reference counting, and the collector's passes over them
    # were a sixth of a cold scan. What little cyclic garbage one file leaves is collected once
    # the collector runs again.
    from zeroopt.scan import file_analysis

    collecting = gc.isenabled()
    gc.disable()
    try:
        # Looked up at call time so tests (and future plug-ins) can swap the file analysis.
        if path is not None and _VIEW is not None:
            result = file_analysis.analyse_source(data, display, options, _VIEW, path)
        else:
            result = file_analysis.analyse_source(data, display, options)
    except RecursionError:
        msg = "too deeply nested to analyse (recursion limit reached)"
        return _Outcome(FileResult(display, errors=[FileError(display, msg)]), [], sha, True)
    except MemoryError:
        msg = "out of memory while analysing this file"
        return _Outcome(FileResult(display, errors=[FileError(display, msg)]), [], sha, False)
    except Exception as exc:
        msg = f"internal error while analysing this file: {type(exc).__name__}: {exc}"
        return _Outcome(FileResult(display, errors=[FileError(display, msg)]), [], sha, False)
    finally:
        if collecting:
            gc.enable()
    if not result.source_hash:
        result = replace(result, source_hash=sha)
    if result.findings and not result.identities:
        # Here, in the worker, from the bytes analysed; cached with the findings.
        result = replace(result, identities=_identities(data, result.findings))
    sups = parse_suppressions(data) if needs_suppressions(data, result.findings) else []
    return _Outcome(result, sups, sha, True)


_NOT_REGULAR = "not a regular file (a named pipe, device or socket): not read"


def _too_large(size: int) -> str:
    return f"file too large to analyse ({size / 2**20:.1f} MiB > {MAX_FILE_BYTES / 2**20:.0f} MiB)"


def _usable_cpus() -> int:
    """CPUs this process may run on (a container's cpuset, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _NotRegularFileError(OSError):
    pass


def _read(path: str) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of a regular file. O_NONBLOCK so that a named pipe
    swapped in after the stat cannot block the open; it has no effect on regular files."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotRegularFileError(_NOT_REGULAR)
        # Sized by the stat: asking for MAX_FILE_BYTES + 1 at once allocates (and shrinks) a
        # 32 MiB buffer per file, which costs more than the reading itself.
        want = min(st.st_size, MAX_FILE_BYTES) + 1
        data = f.read(want)
        if len(data) == want < MAX_FILE_BYTES + 1:  # it grew since the stat: read on, as before
            data += f.read(MAX_FILE_BYTES + 1 - want)
        return data


def _is_generated(data: bytes) -> bool:
    head = data.split(b"\n", GENERATED_HEAD_LINES)[:GENERATED_HEAD_LINES]
    return any(GENERATED_MARKER in line for line in head)


def _os_message(exc: OSError) -> str:
    import errno

    if isinstance(exc, _NotRegularFileError):
        return _NOT_REGULAR
    if exc.errno == errno.ELOOP:
        return "cannot read: symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT:
        return "cannot read: no such file (a dangling symlink?)"
    if exc.errno == errno.EACCES:
        return "cannot read: permission denied"
    if exc.errno == errno.EISDIR:
        return "cannot read: is a directory"
    return f"cannot read: {exc.strerror or exc}"


def _progress_bar(total: int) -> tuple[Any, Callable[[int], None]]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        auto_refresh=False,
    )
    task = bar.add_task("analysing", total=total)
    bar.start()
    last = [0.0]

    def advance(n: int) -> None:
        bar.advance(task, n)
        now = time.monotonic()
        if now - last[0] > 0.1:
            last[0] = now
            bar.refresh()

    return bar, advance


def count_verdicts(findings: Sequence[Finding]) -> dict[str, int]:
    counts = {str(v): 0 for v in Verdict}
    for f in findings:
        counts[str(f.verdict)] += 1
    return counts
