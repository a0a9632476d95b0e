"""Tree-wide facts: built once per scan, in the parent, and shared with the worker processes.

Soundness needs facts about the whole scanned tree, not only the file analysed: the text of every
file (the closed world of analysis/methods.py), which classes may derive from which, the
attribute names every file stores, the aliases it binds, the names bound under computed
attributes (analysis/dynamic_attributes.py parses every file that may bind one), the words that
name private attributes (analysis/returned.py). Each worker used to build them for itself, on
the first file that asked: with N workers every fact was computed N times, and about a quarter
of a cold scan of a large tree went to that. Here they are built once, before the pool starts:
the workers are forked from the parent and read the same objects, copy-on-write (frozen out of
the cyclic collector's reach, so that its passes do not copy the pages either).

The facts are keyed by the digest of the tree (path and SHA-256 of every file), the digest that
cached results relying on the whole tree record (scan/runner.py checks it): a change to any file
makes another digest, and the facts are built again. Where processes are not forked (spawn, one
worker), nothing is shared and each process builds the facts lazily as before, with the same
answers.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from zeroopt.analysis.methods import ClassWorld
from zeroopt.analysis.project import ProjectIndex, ProjectView
from zeroopt.analysis.returned import word_index

# The facts of the last tree prepared in this process: its digest and its world.
_PREPARED: dict[str, ClassWorld] = {}
# The world the workers forked now inherit (None: each builds its own).
_SHARED: ClassWorld | None = None


def tree_world(index: ProjectIndex) -> ClassWorld:
    """The tree's files, read now, with every shared fact built (reused while the tree's digest
    is the same)."""
    world = ClassWorld.read({*index.files, *index.names})
    known = _PREPARED.get(world.digest)
    if known is not None:
        return known
    world.prepare()
    word_index(world)
    _PREPARED.clear()
    _PREPARED[world.digest] = world
    return world


@contextmanager
def shared_with_forks(index: ProjectIndex | None) -> Iterator[ClassWorld | None]:
    """While open, processes forked from this one start with the tree's facts built."""
    global _SHARED
    if index is None:
        yield None
        return
    world = tree_world(index)
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
