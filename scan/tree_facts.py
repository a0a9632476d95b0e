"""Tree-wide facts: built once per scan, in the parent, and shared with the worker processes.

Soundness needs facts about the whole scanned tree, not only the file analysed: the text of every
file (the closed world of analysis/methods.py), which classes may derive from which, the
attribute names every file stores, the aliases it binds, the names bound under computed
attributes (analysis/dynamic_attributes.py parses every file that may bind one), the words that
name private attributes (analysis/tree_naming.py), the files each word after a `.` or a quote
occurs in (analysis/anyorder_classes.py). Each worker used to build them for itself, on
the first file that asked: with N workers every fact was computed N times, and about a quarter
of a cold scan of a large tree went to that. Here they are built once, before the pool starts
(the parsing half in a forked child while the parent runs the text patterns): the workers are
forked from the parent and read the same objects, copy-on-write (frozen out of the cyclic
collector's reach, so that its passes do not copy the pages either).

The facts are keyed by the digest of the tree (path and SHA-256 of every file), the digest that
cached results relying on the whole tree record (scan/runner.py checks it): a change to any file
makes another digest, and the facts are built again. Where workers are not forked (spawn, or one
process), nothing is built here: each process builds the facts lazily, with the same answers.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager, suppress

from zeroopt.analysis.anyorder_classes import attribute_index
from zeroopt.analysis.methods import ClassWorld, ParsedFacts
from zeroopt.analysis.project import ProjectIndex, ProjectView
from zeroopt.analysis.tree_naming import word_index

# The facts of the last tree prepared in this process: its digest and its world.
_PREPARED: dict[str, ClassWorld] = {}
# The world the workers forked now inherit (None: each builds its own); also the one a child
# forked to parse files reads.
_SHARED: ClassWorld | None = None


def tree_world(index: ProjectIndex, helper: bool = False) -> ClassWorld:
    """The tree's files, read now, with every shared fact built (reused while the tree's digest
    is the same). `helper`: parse in a forked child meanwhile (two processors at work)."""
    global _SHARED
    world = ClassWorld.read({*index.files, *index.names})
    known = _PREPARED.get(world.digest)
    if known is not None:
        return known
    _ = world.index  # built before the fork: the child needs it, and so do the workers
    pool: ProcessPoolExecutor | None = None
    parsed: Future[ParsedFacts] | None = None
    if helper:
        _SHARED = world
        try:
            pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            parsed = pool.submit(_parse_in_child)
        except (OSError, RuntimeError):  # no process to be had: parse here
            parsed = None
    try:
        world.prepare_text()
        word_index(world)
        attribute_index(world)  # the any-order pass's: every worker asks it
        if parsed is not None:
            with suppress(Exception):  # the child died (out of memory...): parse here
                world.adopt_parsed(parsed.result())
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        _SHARED = None
    world.prepare_parsed()  # nothing left to do when the child's facts were adopted
    _PREPARED.clear()
    _PREPARED[world.digest] = world
    return world


def _parse_in_child() -> ParsedFacts:
    assert _SHARED is not None
    _SHARED.prepare_parsed()
    return _SHARED.parsed_facts()


@contextmanager
def shared_with_forks(index: ProjectIndex | None, fork: bool) -> Iterator[ClassWorld | None]:
    """While open, processes forked from this one (`fork`: the workers are) start with the
    tree's facts built."""
    global _SHARED
    if index is None or not fork:
        yield None
        return
    world = tree_world(index, helper=True)
    _SHARED = world
    gc.collect()
    gc.freeze()  # what exists now stays out of the collector's passes, in every process
    try:
        yield world
    finally:
        gc.unfreeze()
        _SHARED = None


def install(view: ProjectView) -> None:
    """Give a worker's whole-program view the facts its parent built, when it has them."""
    if _SHARED is not None:
        view.summary_world = _SHARED
